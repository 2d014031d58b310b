"""The TFMA `EvalConfig` of what the Evaluator computes, per task, from explicit settings.

The Evaluator writes it as its `eval_config.json`, as TFMA does, so TFMA's readers find the
metrics' configuration and stock TFMA can compute the same evaluation again
(tests/tfma_parity.py). The model is scored through its `predict` signature and the label comes out of the
model's own `transform_features` signature, so TFMA sees exactly what training saw.
No prediction key is named: TFMA picks the head's output (`logistic`, `probabilities`
or `predictions`) and maps string labels to class ids through `all_classes`.
"""

import math

from tensorflow_model_analysis.proto import config_pb2

from components.evaluator.tasks import TASK_METRICS


def task_metrics(task, num_classes=None):
    """The task's `MetricConfig`s, and a `MetricsSpec` of per-class ones for multiclass."""
    metrics = [
        config_pb2.MetricConfig(class_name=class_name, module=module or "")
        for class_name, module, _ in TASK_METRICS[task]
    ]
    if task != "multiclass":
        return metrics, None
    per_class = config_pb2.MetricsSpec(
        # top_k 1: a class is predicted when it is the most probable one (not when p > 0.5).
        metrics=[
            config_pb2.MetricConfig(class_name=name, config='"top_k": 1')
            for name in ("Precision", "Recall")
        ],
        binarize=config_pb2.BinarizationOptions(class_ids={"values": list(range(num_classes))}),
    )
    return metrics, per_class


def gate_threshold(gate):
    """The TFMA `MetricThreshold` of `gate`."""
    direction = (
        config_pb2.MetricDirection.HIGHER_IS_BETTER
        if gate.higher_is_better
        else config_pb2.MetricDirection.LOWER_IS_BETTER
    )
    # TFMA's change is candidate - baseline; "worse by at most m" bounds it on the bad side.
    worse = -1.0 if gate.higher_is_better else 1.0
    threshold = config_pb2.MetricThreshold()
    compares = gate.max_change is not None or gate.max_relative_change is not None
    if gate.threshold is not None or compares:
        # A first model has no baseline: TFMA then drops the change checks and, with no
        # value check left, would refuse to bless it. An infinite bound blesses it.
        value = gate.threshold if gate.threshold is not None else worse * math.inf
        bound = "lower_bound" if gate.higher_is_better else "upper_bound"
        threshold.value_threshold.CopyFrom(
            config_pb2.GenericValueThreshold(**{bound: {"value": value}})
        )
    if compares:
        change = config_pb2.GenericChangeThreshold(direction=direction)
        if gate.max_change is not None:
            change.absolute.value = worse * gate.max_change
        if gate.max_relative_change is not None:
            change.relative.value = worse * gate.max_relative_change
        threshold.change_threshold.CopyFrom(change)
    return threshold


def build_eval_config(task, transformed_label_key, slice_features, gate, num_classes=None):
    """The task's metrics overall and per slice; blessing by `gate` on the overall slice
    (small slices can hold one class)."""
    metrics, per_class = task_metrics(task, num_classes)
    threshold = gate_threshold(gate)
    for metric, (_, _, key) in zip(metrics, TASK_METRICS[task], strict=True):
        if key == gate.metric and threshold.ByteSize():
            metric.per_slice_thresholds.append(
                config_pb2.PerSliceMetricThreshold(
                    slicing_specs=[config_pb2.SlicingSpec()], threshold=threshold
                )
            )
    specs = [
        config_pb2.MetricsSpec(
            metrics=[config_pb2.MetricConfig(class_name="ExampleCount"), *metrics]
        )
    ]
    if per_class is not None:
        specs.append(per_class)
    return config_pb2.EvalConfig(
        model_specs=[
            config_pb2.ModelSpec(
                signature_name="predict",
                label_key=transformed_label_key,
                preprocessing_function_names=["transform_features"],
            )
        ],
        slicing_specs=[config_pb2.SlicingSpec()]
        + [config_pb2.SlicingSpec(feature_keys=[feature]) for feature in slice_features],
        metrics_specs=specs,
    )
