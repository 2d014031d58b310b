"""Task settings: each task's default blessing gate, the TFMA config written beside the
metrics, and bad settings refused by name."""

import math

import pytest

from components.evaluator.tasks import BlessingGate, resolve_gate
from tests.conftest import taxi_config


def test_each_task_has_a_default_gate_and_settings_replace_its_parts():
    assert resolve_gate("binary") == BlessingGate("auc", threshold=0.6, max_change=0.01)
    assert resolve_gate("multiclass") == BlessingGate("accuracy", max_change=0.01)
    assert resolve_gate("regression") == BlessingGate(
        "root_mean_squared_error", max_relative_change=0.02
    )
    assert resolve_gate("binary", threshold=0.8) == BlessingGate(
        "auc", threshold=0.8, max_change=0.01
    )
    # Another metric starts from no checks: the default limits are in AUC's units.
    assert resolve_gate("binary", metric="recall", threshold=0.5) == BlessingGate(
        "recall", threshold=0.5
    )
    assert resolve_gate("binary", max_change=math.inf).max_change is None
    gate = resolve_gate("regression", threshold=60.0)
    assert gate.describe() == (
        "root_mean_squared_error <= 60 and at most 2% above the latest blessed model"
    )


def test_a_first_model_with_only_change_checks_is_blessed_by_an_infinite_bound():
    """TFMA drops change checks when there is no baseline; a value check must remain."""
    from tensorflow_model_analysis.proto import config_pb2

    from components.evaluator.eval_config import build_eval_config

    config = build_eval_config("regression", "y", [], resolve_gate("regression"))
    rmse = next(
        m for m in config.metrics_specs[0].metrics if m.class_name == "RootMeanSquaredError"
    )
    threshold = rmse.per_slice_thresholds[0].threshold
    assert threshold.value_threshold.upper_bound.value == math.inf
    assert threshold.change_threshold.relative.value == pytest.approx(0.02)
    assert threshold.change_threshold.direction == config_pb2.MetricDirection.LOWER_IS_BETTER


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"task": "ranking"}, "task must be one of binary, multiclass, regression"),
        ({"task": "multiclass", "num_classes": 2}, "needs num_classes >= 3"),
        ({"num_classes": 4}, "num_classes is for task 'multiclass'"),
        (
            {"task": "regression", "blessing_metric": "auc"},
            "'auc' is not reported for task 'regression': choose one of root_mean_squared_error",
        ),
        ({"blessing_max_change": -0.1}, "blessing_max_change must be >= 0"),
    ],
)
def test_bad_task_settings_are_refused_naming_the_setting(settings, message):
    with pytest.raises(ValueError, match=message):
        taxi_config(**settings)
