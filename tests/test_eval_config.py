"""Task-aware evaluation: each task's metrics match numpy, and blessing gates follow the
metric's direction. TFMA runs for real on labels and predictions (`analyze_raw_data`)."""

import math

import numpy as np
import pandas as pd
import pytest

from components.evaluator.tasks import BlessingGate, resolve_gate
from pipeline.runner import overall_metrics
from tests.conftest import taxi_config


def _analyze(task, labels, predictions, gate, tmp_path, num_classes=None):
    """(overall metrics, validation failures {metric: value}) of TFMA on raw columns."""
    import tensorflow_model_analysis as tfma

    from components.evaluator.eval_config import build_eval_config

    config = build_eval_config(task, "label", [], gate, num_classes=num_classes)
    spec = config.model_specs[0]
    spec.prediction_key = "prediction"  # a raw column here; the model's output in the pipeline
    spec.ClearField("signature_name")
    spec.ClearField("preprocessing_function_names")
    frame = pd.DataFrame({"label": labels, "prediction": list(predictions)})
    tfma.analyze_raw_data(frame, config, output_path=str(tmp_path))
    metrics = overall_metrics(str(tmp_path))
    validation = tfma.load_validation_result(str(tmp_path))
    failures = {
        failure.metric_key.name: failure.metric_value.double_value.value
        for per_slice in validation.metric_validations_per_slice
        for failure in per_slice.failures
    }
    return metrics, failures


@pytest.mark.slow  # a TFMA Beam job
def test_regression_reports_rmse_and_mae_and_a_ceiling_on_rmse_fails_above_it(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.normal(150.0, 50.0, size=500)
    predictions = labels + rng.normal(0.0, 20.0, size=500)
    rmse = math.sqrt(np.mean((labels - predictions) ** 2))
    gate = BlessingGate("root_mean_squared_error", threshold=rmse - 0.5)
    metrics, failures = _analyze("regression", labels, predictions, gate, tmp_path)
    assert metrics["root_mean_squared_error"] == pytest.approx(rmse, rel=1e-9)
    assert metrics["mean_absolute_error"] == pytest.approx(np.mean(abs(labels - predictions)))
    assert metrics["mean_label"] == pytest.approx(labels.mean())
    assert metrics["mean_prediction"] == pytest.approx(predictions.mean())
    # Lower is better: a ceiling just under the model's RMSE refuses it.
    assert failures == {"root_mean_squared_error": pytest.approx(rmse, rel=1e-9)}


@pytest.mark.slow  # a TFMA Beam job
def test_multiclass_reports_accuracy_log_loss_and_per_class_precision_recall(tmp_path):
    rng = np.random.default_rng(1)
    probabilities = rng.dirichlet([1.0, 1.0, 1.0], size=600)
    labels = np.array([rng.choice(3, p=p) for p in probabilities])
    predicted = probabilities.argmax(axis=1)
    accuracy = np.mean(predicted == labels)
    gate = BlessingGate("accuracy", threshold=accuracy + 0.01)
    metrics, failures = _analyze("multiclass", labels, probabilities, gate, tmp_path, 3)
    assert metrics["accuracy"] == pytest.approx(accuracy)
    log_loss = -np.mean(np.log(probabilities[np.arange(len(labels)), labels]))
    assert metrics["log_loss"] == pytest.approx(log_loss, rel=1e-9)
    for c in range(3):
        precision = np.mean(labels[predicted == c] == c)
        recall = np.mean(predicted[labels == c] == c)
        assert metrics[f"precision/class_{c}"] == pytest.approx(precision)
        assert metrics[f"recall/class_{c}"] == pytest.approx(recall)
    # Higher is better: a floor just over the model's accuracy refuses it.
    assert failures == {"accuracy": pytest.approx(accuracy)}


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
