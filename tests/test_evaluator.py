"""The Evaluator's metrics against numpy, a batch at a time and per slice, and its gate.

Whole runs compare every metric with stock TFMA's (tests/tfma_parity.py, used by
test_zero_code.py for each task and test_pipeline_e2e.py with a baseline and slices)."""

import math

import numpy as np
import pyarrow as pa
import pytest

from components.evaluator import totals as totals_lib
from components.evaluator.executor import (
    CHANGE_CHECK,
    VALUE_CHECK,
    gate_failures,
    slice_groups,
    validation_result,
)
from components.evaluator.plots import (
    CALIBRATION_PLOT,
    CONFUSION_MATRIX_PLOT,
    MULTI_CLASS_CONFUSION_MATRIX_PLOT,
    plot_data,
)
from components.evaluator.tasks import BlessingGate


def _merged(task, labels, predictions, batches=3):
    """The overall totals with the rows cut into `batches` parts merged afterwards, as Beam
    merges them."""
    parts = []
    for rows in np.array_split(np.arange(len(labels)), batches):
        n = len(rows)
        (part,) = task.totals(labels[rows], predictions[rows], np.ones(n), np.zeros(n, int), 1)
        parts.append(part)
    return totals_lib.merge(parts)


def _values(task, labels, predictions, batches=3):
    """The overall metrics, from `_merged` totals."""
    return task.values(_merged(task, labels, predictions, batches))


def _exact_auc(labels, scores):
    """P(score of a positive > score of a negative), ties counted half."""
    positives, negatives = scores[labels == 1], scores[labels == 0]
    above = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return (above + 0.5 * ties) / (len(positives) * len(negatives))


def test_binary_metrics_equal_numpy_s_and_auc_the_exact_one_to_the_bucket_width():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 3000).astype(float)
    scores = np.clip(0.35 * labels + rng.uniform(0, 0.65, 3000), 0, 1)
    values = _values(totals_lib.BinaryTask(), labels, scores)
    predicted = scores > 0.5
    assert values["example_count"] == 3000
    assert values["auc"] == pytest.approx(_exact_auc(labels, scores), abs=1e-3)
    assert values["binary_accuracy"] == pytest.approx(np.mean(predicted == labels))
    assert values["precision"] == pytest.approx(labels[predicted].mean())
    assert values["recall"] == pytest.approx(predicted[labels == 1].mean())
    assert values["calibration"] == pytest.approx(scores.sum() / labels.sum())
    assert values["mean_label"] == pytest.approx(labels.mean())
    assert values["mean_prediction"] == pytest.approx(scores.mean())


def _tfma_auc(labels, predictions):
    """TFMA's own AUC (its histogram, rebinning and curve) over one slice, unweighted."""
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.metrics import metric_types

    metrics = {}
    for computation in tfma.metrics.AUC().computations(example_weighted=False):
        if isinstance(computation, metric_types.DerivedMetricComputation):
            metrics.update(computation.result(metrics))
            continue
        combiner = computation.combiner
        combiner.setup()
        accumulator = combiner.create_accumulator()
        for label, prediction in zip(labels, predictions, strict=True):
            inputs = metric_types.StandardMetricInputs(
                label=np.array([label]), prediction=np.array([prediction]), example_weight=None
            )
            accumulator = combiner.add_input(accumulator, inputs)
        metrics.update(combiner.extract_output(accumulator))
    (auc,) = [value for key, value in metrics.items() if key.name == "auc"]
    return auc


@pytest.mark.parametrize(
    "case", ["saturated", "top_buckets", "bucket_edges", "tiny", "spread", "out_of_range"]
)
def test_binary_auc_equals_tfma_s_where_predictions_crowd_the_ends_and_edges(case):
    """A saturated model predicts exactly 1.0 for many rows and 0.9991 to 0.9999 for some:
    TFMA does not count those as above the threshold just below them (it nudges thresholds
    up by 1e-7), so 1.0 ranks above them; a zero-code wide-and-deep model's AUC was 0.9428
    against TFMA's 0.9443 before the Evaluator ranked them so too."""
    rng = np.random.default_rng(7)
    n = 400
    predictions = (
        {
            "saturated": rng.choice([0.0, 1.0, 0.99991, 0.9995, 0.99999905, 3e-8], n),
            "top_buckets": 0.999 + rng.integers(0, 11, n) / 10_000,
            "bucket_edges": rng.integers(0, 10_001, n) / 10_000,
            "tiny": rng.choice([0.0, 1e-9, 1e-4, 2e-4, 9.99e-5, 0.5], n),
            "spread": 1 / (1 + np.exp(-rng.normal(0, 8, n))),
            "out_of_range": rng.choice([-0.5, 0.0, 0.5, 1.0, 1.5], n),
        }[case]
        .astype(np.float32)
        .astype(np.float64)
    )  # a model's float32 outputs
    labels = (rng.uniform(size=n) < np.clip(predictions, 0.2, 0.8)).astype(np.float64)
    values = _values(totals_lib.BinaryTask(), labels, predictions)
    assert values["auc"] == pytest.approx(_tfma_auc(labels, predictions), abs=1e-12)


def test_binary_with_no_predicted_positive_has_nan_precision_as_tfma():
    values = _values(totals_lib.BinaryTask(), np.array([0.0, 1.0]), np.array([0.1, 0.2]), 1)
    assert math.isnan(values["precision"]) and values["recall"] == 0.0


def test_multiclass_metrics_equal_numpy_s():
    rng = np.random.default_rng(1)
    probabilities = rng.dirichlet([1.0, 1.0, 1.0], size=600)
    labels = np.array([rng.choice(3, p=p) for p in probabilities])
    values = _values(totals_lib.MulticlassTask(3), labels.astype(float), probabilities)
    predicted = probabilities.argmax(axis=1)
    assert values["accuracy"] == pytest.approx(np.mean(predicted == labels))
    log_loss = -np.mean(np.log(probabilities[np.arange(600), labels]))
    assert values["log_loss"] == pytest.approx(log_loss, rel=1e-12)
    for c in range(3):
        assert values[f"precision/class_{c}"] == pytest.approx(np.mean(labels[predicted == c] == c))
        assert values[f"recall/class_{c}"] == pytest.approx(np.mean(predicted[labels == c] == c))


def test_regression_metrics_equal_numpy_s():
    rng = np.random.default_rng(2)
    labels = rng.normal(150.0, 50.0, size=500)
    predictions = labels + rng.normal(0.0, 20.0, size=500)
    values = _values(totals_lib.RegressionTask(), labels, predictions)
    rmse = math.sqrt(np.mean((labels - predictions) ** 2))
    assert values["root_mean_squared_error"] == pytest.approx(rmse, rel=1e-12)
    assert values["mean_absolute_error"] == pytest.approx(np.mean(abs(labels - predictions)))
    assert values["mean_label"] == pytest.approx(labels.mean())
    assert values["mean_prediction"] == pytest.approx(predictions.mean())


def test_slices_are_one_per_value_held_and_skip_examples_without_one():
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([[b"a"], [b"b"], None, [b"a", b"b"]], pa.list_(pa.binary())),
            pa.array([[7], [7], [8], [8]], pa.list_(pa.int64())),
        ],
        ["company", "hour"],
    )
    rows, groups, keys = slice_groups(batch.num_rows, batch, ["company", "hour", "absent"])
    members = {keys[g]: sorted(rows[groups == g].tolist()) for g in range(len(keys))}
    assert members == {
        (): [0, 1, 2, 3],
        (("company", b"a"),): [0, 3],
        (("company", b"b"),): [1, 3],
        (("hour", 7),): [0, 1],
        (("hour", 8),): [2, 3],
    }


def test_without_slice_features_every_example_is_in_the_overall_slice_undecoded():
    rows, groups, keys = slice_groups(3, None, [])
    assert rows.tolist() == [0, 1, 2] and groups.tolist() == [0, 0, 0] and keys == [()]


def test_per_slice_totals_equal_each_slice_scored_alone():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 400).astype(float)
    scores = rng.uniform(0, 1, 400)
    groups = rng.integers(0, 5, 400)
    task = totals_lib.BinaryTask()
    per_slice = task.totals(labels, scores, np.ones(400), groups, 5)
    for g in range(5):
        alone = _values(task, labels[groups == g], scores[groups == g], 1)
        assert task.values(per_slice[g]) == pytest.approx(alone)


def test_binary_plots_count_the_examples_above_each_threshold_and_per_probability_bucket():
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 2000).astype(float)
    scores = np.round(np.clip(0.3 * labels + rng.uniform(0, 0.7, 2000), 0, 1), 3)
    data = plot_data("binary", _merged(totals_lib.BinaryTask(), labels, scores))
    matrices = data[CONFUSION_MATRIX_PLOT].confusion_matrix_at_thresholds.matrices
    assert len(matrices) == 1001 and matrices[0].threshold < 0 < 1 < matrices[-1].threshold
    for matrix in matrices[1::97]:
        positive = scores > matrix.threshold + 1e-6  # clear of the bucket edges
        assert matrix.true_positives == pytest.approx(np.sum(positive & (labels == 1)), abs=3)
        assert matrix.false_positives == pytest.approx(np.sum(positive & (labels == 0)), abs=3)
        assert matrix.true_positives + matrix.false_negatives == labels.sum()
    assert matrices[0].recall == 1 and matrices[-1].recall == 0 and matrices[-1].precision == 1
    buckets = data[CALIBRATION_PLOT].calibration_histogram_buckets.buckets
    assert sum(b.num_weighted_examples.value for b in buckets) == 2000
    for b in buckets:
        inside = (scores >= b.lower_threshold_inclusive) & (scores < b.upper_threshold_exclusive)
        assert b.num_weighted_examples.value == inside.sum()
        assert b.total_weighted_label.value == labels[inside].sum()
        assert b.total_weighted_refined_prediction.value == pytest.approx(scores[inside].sum())


def test_multiclass_plot_is_the_confusion_of_label_and_most_probable_class():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 500)
    probabilities = rng.dirichlet([1, 1, 1], 500)
    data = plot_data(
        "multiclass", _merged(totals_lib.MulticlassTask(3), labels.astype(float), probabilities)
    )
    (matrix,) = data[
        MULTI_CLASS_CONFUSION_MATRIX_PLOT
    ].multi_class_confusion_matrix_at_thresholds.matrices
    predicted = probabilities.argmax(axis=1)
    assert len(matrix.entries) == 9
    for entry in matrix.entries:
        expected = np.sum(
            (labels == entry.actual_class_id) & (predicted == entry.predicted_class_id)
        )
        assert entry.num_weighted_examples == expected


def test_regression_plot_buckets_predictions_by_two_significant_digits_in_any_units():
    rng = np.random.default_rng(6)
    predictions = np.concatenate([rng.normal(0, 3, 300), rng.uniform(1e5, 3e5, 300), [0.0]])
    labels = predictions + rng.normal(0, 1, len(predictions))
    data = plot_data("regression", _merged(totals_lib.RegressionTask(), labels, predictions))
    buckets = data[CALIBRATION_PLOT].calibration_histogram_buckets.buckets
    assert sum(b.num_weighted_examples.value for b in buckets) == len(predictions)
    for b in buckets:
        low, high = b.lower_threshold_inclusive, b.upper_threshold_exclusive
        inside = (predictions >= low) & (predictions < high) if high > low else predictions == low
        assert b.num_weighted_examples.value == inside.sum()
        assert b.total_weighted_label.value == pytest.approx(labels[inside].sum())
        if low != 0:  # two significant digits: a bucket is a tenth to a hundredth of its value
            assert 0.0099 <= (high - low) / abs(low) <= 0.1001


@pytest.mark.parametrize(
    ("gate", "candidate", "baseline", "failures"),
    [
        (BlessingGate("auc", threshold=0.6), 0.7, None, []),
        (
            BlessingGate("auc", threshold=0.6),
            0.55,
            None,
            [(VALUE_CHECK, "auc = 0.55 is below the threshold 0.6")],
        ),
        # A first model: the change check needs a baseline and is left out.
        (BlessingGate("auc", max_change=0.01), 0.5, None, []),
        (BlessingGate("auc", max_change=0.01), 0.795, 0.8, []),
        (
            BlessingGate("auc", max_change=0.01),
            0.78,
            0.8,
            [(CHANGE_CHECK, "auc = 0.78 is 0.02 below the baseline's 0.8 (at most 0.01 allowed)")],
        ),
        (
            BlessingGate("root_mean_squared_error", max_relative_change=0.02),
            10.5,
            10.0,
            [
                (
                    CHANGE_CHECK,
                    "root_mean_squared_error = 10.5 is 5.00% above the baseline's 10 "
                    "(at most 2.00% allowed)",
                )
            ],
        ),
        (BlessingGate("root_mean_squared_error", max_relative_change=0.02), 9.0, 10.0, []),
        (
            BlessingGate("auc", threshold=0.6),
            float("nan"),
            None,
            [(VALUE_CHECK, "auc = nan is below the threshold 0.6")],
        ),
        # No check at all: every model is blessed.
        (BlessingGate("auc"), float("nan"), 0.8, []),
    ],
)
def test_the_gate_judges_the_metric_in_its_direction(gate, candidate, baseline, failures):
    assert gate_failures(gate, candidate, baseline) == failures


def test_a_failed_gate_is_a_validation_result_naming_metric_value_and_reason():
    gate = BlessingGate("auc", threshold=0.6, max_change=0.01)
    result = validation_result(gate, {"candidate": {"auc": 0.5}, "baseline": {"auc": 0.7}})
    assert not result.validation_ok
    (per_slice,) = result.metric_validations_per_slice
    value, change = per_slice.failures
    assert (value.metric_key.model_name, value.metric_key.is_diff) == ("candidate", False)
    assert value.metric_value.double_value.value == 0.5
    assert value.metric_threshold.value_threshold.lower_bound.value == 0.6
    assert not value.metric_threshold.HasField("change_threshold")
    # A change check fails on the difference, as TFMA reports it.
    assert (change.metric_key.model_name, change.metric_key.is_diff) == ("candidate", True)
    assert change.metric_value.double_value.value == pytest.approx(-0.2)
    assert change.metric_threshold.change_threshold.absolute.value == -0.01
    assert change.message == ("auc = 0.5 is 0.2 below the baseline's 0.7 (at most 0.01 allowed)")
    assert validation_result(gate, {"": {"auc": 0.9}}).validation_ok
