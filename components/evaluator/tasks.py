"""What each task reports and what blessing needs by default; no TFMA import, so the
pipeline's configuration can validate against it cheaply."""

import dataclasses
import math

TASKS = ("binary", "multiclass", "regression")
OWN_METRICS_MODULE = "components.evaluator.metrics"

# Per task: (TFMA metric class, module or None for TFMA's own, the key it reports under).
TASK_METRICS = {
    "binary": (
        ("AUC", None, "auc"),
        ("BinaryAccuracy", None, "binary_accuracy"),
        ("Precision", None, "precision"),
        ("Recall", None, "recall"),
        ("Calibration", None, "calibration"),
        ("MeanLabel", None, "mean_label"),
        ("MeanPrediction", None, "mean_prediction"),
    ),
    # Plus precision and recall per class (class ids 0 .. num_classes - 1).
    "multiclass": (
        ("MultiClassAccuracy", OWN_METRICS_MODULE, "accuracy"),
        ("SparseLogLoss", OWN_METRICS_MODULE, "log_loss"),
    ),
    "regression": (
        ("RootMeanSquaredError", OWN_METRICS_MODULE, "root_mean_squared_error"),
        ("MeanAbsoluteError", None, "mean_absolute_error"),
        ("MeanLabel", None, "mean_label"),
        ("MeanPrediction", None, "mean_prediction"),
    ),
}
# Metrics whose smaller values are better; every other one is higher-is-better.
LOWER_IS_BETTER = frozenset({"root_mean_squared_error", "mean_absolute_error", "log_loss"})


@dataclasses.dataclass(frozen=True)
class BlessingGate:
    """What blessing needs, on the overall slice.

    `threshold` is the worst acceptable value of `metric` (a floor when higher is better,
    a ceiling when lower is); `max_change` is how much worse than the latest blessed model
    it may be, in the metric's units, and `max_relative_change` the same as a fraction of
    the baseline's value. None (or an infinite limit) leaves that check out.
    """

    metric: str
    threshold: float | None = None
    max_change: float | None = None
    max_relative_change: float | None = None

    @property
    def higher_is_better(self):
        return self.metric not in LOWER_IS_BETTER

    def describe(self):
        """One line, e.g. 'auc >= 0.6 and at most 0.01 below the latest blessed model'."""
        checks = " and ".join(c.text for c in gate_checks(self))
        checks = checks or "no check (every model is blessed)"
        return checks if self.threshold is not None else f"{self.metric}: {checks}"


VALUE_CHECK, CHANGE_CHECK = "value_threshold", "change_threshold"  # TFMA's threshold kinds


@dataclasses.dataclass(frozen=True)
class GateCheck:
    """One check of a gate: `kind` is VALUE_CHECK (the value against `limit`) or CHANGE_CHECK
    (how much worse than the baseline it may be: `limit` in the metric's units, or, when
    `relative`, as a fraction of the baseline's value); `worse` says which side fails."""

    kind: str
    limit: float
    relative: bool
    worse: str  # "below" or "above"
    text: str  # e.g. "auc >= 0.6", "at most 0.01 below the latest blessed model"


def gate_checks(gate, baseline="the latest blessed model"):
    """The checks `gate` makes, in the order the Evaluator applies them, each with its words
    (`baseline`: what the change checks compare with): the one description of a gate that
    the Evaluator, the run summary and the run report share."""
    worse = "below" if gate.higher_is_better else "above"
    checks = []
    if gate.threshold is not None:
        sign = ">=" if gate.higher_is_better else "<="
        text = f"{gate.metric} {sign} {gate.threshold:g}"
        checks.append(GateCheck(VALUE_CHECK, gate.threshold, False, worse, text))
    if gate.max_change is not None:
        text = f"at most {gate.max_change:g} {worse} {baseline}"
        checks.append(GateCheck(CHANGE_CHECK, gate.max_change, False, worse, text))
    if gate.max_relative_change is not None:
        text = f"at most {100 * gate.max_relative_change:g}% {worse} {baseline}"  # 2.5%, not 2%
        checks.append(GateCheck(CHANGE_CHECK, gate.max_relative_change, True, worse, text))
    return checks


# The gate a task gets unless the configuration says otherwise.  Regression has no
# absolute ceiling (the label's scale is the user's) and compares with the baseline.
DEFAULT_GATES = {
    "binary": BlessingGate("auc", threshold=0.6, max_change=0.01),
    "multiclass": BlessingGate("accuracy", max_change=0.01),
    "regression": BlessingGate("root_mean_squared_error", max_relative_change=0.02),
}


def _finite(value):
    return None if value is None or math.isinf(value) else value


def check_classes(task, num_classes):
    """Multiclass needs its class count (per-class metrics); the other tasks take none."""
    if task == "multiclass" and (num_classes is None or num_classes < 3):
        raise ValueError(f"task 'multiclass' needs num_classes >= 3, got {num_classes}.")
    if task != "multiclass" and num_classes is not None:
        raise ValueError(f"num_classes is for task 'multiclass', not {task!r}.")


def resolve_gate(task, metric=None, threshold=None, max_change=None, max_relative_change=None):
    """The task's default gate with the given settings over it; an infinite limit drops a check.

    Naming another metric than the default starts from no checks: the default limits are
    in the default metric's units.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}.")
    reported = [key for _, _, key in TASK_METRICS[task]]
    default = DEFAULT_GATES[task]
    if metric is not None and metric not in reported:
        raise ValueError(
            f"blessing_metric {metric!r} is not reported for task {task!r}: "
            f"choose one of {', '.join(reported)}."
        )
    base = default if metric in (None, default.metric) else BlessingGate(metric)
    for name, value in (("max_change", max_change), ("max_relative_change", max_relative_change)):
        if value is not None and value < 0:
            raise ValueError(f"blessing_{name} must be >= 0, got {value}.")
    return dataclasses.replace(
        base,
        threshold=_finite(base.threshold if threshold is None else threshold),
        max_change=_finite(base.max_change if max_change is None else max_change),
        max_relative_change=_finite(
            base.max_relative_change if max_relative_change is None else max_relative_change
        ),
    )
