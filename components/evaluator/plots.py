"""TFMA's plots of one slice from its merged totals (totals.py), as TFMA's `PlotData` protos
under TFMA's plot names, so that `tfma.load_plots` and the run report read them:

- binary: `confusion_matrix_plot` (the confusion matrix, precision, recall, false positive
  rate, F1 and accuracy at 1,001 thresholds: every tenth of the 10,000 the AUC sums over, so
  the matrices are exact for the binned predictions) and `calibration_plot` (buckets of
  1/1,000 of the probability, as TFMA's default; only the buckets that hold examples);
- multiclass: `multi_class_confusion_matrix_plot` at threshold 0 (the most probable class);
- regression: `calibration_plot` over the predictions' range (buckets of two significant
  digits): per bucket, the mean prediction against the mean label, so predicted against
  actual and the residual by predicted value.

Undefined ratios are TFMA's: precision 1 with nothing predicted positive, the others 0.
"""

import numpy as np
from tensorflow_model_analysis.proto import metrics_for_slice_pb2

from components.evaluator import totals as totals_lib

CONFUSION_MATRIX_PLOT = "confusion_matrix_plot"
CALIBRATION_PLOT = "calibration_plot"
MULTI_CLASS_CONFUSION_MATRIX_PLOT = "multi_class_confusion_matrix_plot"
_THRESHOLD_STRIDE = 10  # of the AUC's thresholds, the plot's: 1,001 as TFMA's default


def _divide(numerator, denominator, undefined):
    out = np.full_like(numerator, undefined)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


def confusion_matrices(histogram):
    """`ConfusionMatrixAtThresholds` of a binary slice's threshold histogram."""
    positives = histogram.dense(histogram.positives)
    negatives = histogram.dense(histogram.negatives)
    # Above threshold j: the buckets past j (as BinaryTask.values counts them).
    tp = np.cumsum(positives[::-1])[::-1][1:]
    fp = np.cumsum(negatives[::-1])[::-1][1:]
    fn, tn = positives.sum() - tp, negatives.sum() - fp
    chosen = np.unique(
        np.append(np.arange(0, len(totals_lib.THRESHOLDS), _THRESHOLD_STRIDE), -1)
        % len(totals_lib.THRESHOLDS)
    )
    tp, fp, fn, tn = tp[chosen], fp[chosen], fn[chosen], tn[chosen]
    precision = _divide(tp, tp + fp, 1.0)
    recall = _divide(tp, tp + fn, 0.0)
    columns = {
        "threshold": totals_lib.THRESHOLDS[chosen],
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "true_negatives": tn,
        "precision": precision,
        "recall": recall,
        "false_positive_rate": _divide(fp, fp + tn, 0.0),
        "f1": _divide(2 * precision * recall, precision + recall, 0.0),
        "accuracy": _divide(tp + tn, tp + tn + fp + fn, 0.0),
        "false_omission_rate": _divide(fn, fn + tn, 0.0),
    }
    plot = metrics_for_slice_pb2.ConfusionMatrixAtThresholds()
    for i in range(len(chosen)):
        plot.matrices.add(**{name: float(column[i]) for name, column in columns.items()})
    return plot


def calibration(buckets, bounds):
    """`CalibrationHistogramBuckets` of `Buckets`, each bucket's [low, high) by `bounds(id)`."""
    plot = metrics_for_slice_pb2.CalibrationHistogramBuckets()
    for i, bucket_id in enumerate(buckets.ids):
        low, high = bounds(int(bucket_id))
        bucket = plot.buckets.add(lower_threshold_inclusive=low, upper_threshold_exclusive=high)
        bucket.num_weighted_examples.value = float(buckets.weights[i])
        bucket.total_weighted_label.value = float(buckets.labels[i])
        bucket.total_weighted_refined_prediction.value = float(buckets.predictions[i])
    return plot


def multi_class_confusion(confusion):
    """`MultiClassConfusionMatrixAtThresholds` of a k x k count matrix (row: label)."""
    plot = metrics_for_slice_pb2.MultiClassConfusionMatrixAtThresholds()
    matrix = plot.matrices.add(threshold=0.0)
    for actual, row in enumerate(confusion):
        for predicted, count in enumerate(row):
            matrix.entries.add(
                actual_class_id=actual, predicted_class_id=predicted, num_weighted_examples=count
            )
    return plot


def plot_data(task, totals):
    """{plot name: PlotData} of one slice's merged `totals` for `task`."""
    data = {}
    if task == "binary":
        data[CONFUSION_MATRIX_PLOT] = metrics_for_slice_pb2.PlotData(
            confusion_matrix_at_thresholds=confusion_matrices(totals["histogram"])
        )
        buckets = calibration(totals["calibration"], totals_lib.probability_bucket_bounds)
        data[CALIBRATION_PLOT] = metrics_for_slice_pb2.PlotData(
            calibration_histogram_buckets=buckets
        )
    elif task == "multiclass":
        data[MULTI_CLASS_CONFUSION_MATRIX_PLOT] = metrics_for_slice_pb2.PlotData(
            multi_class_confusion_matrix_at_thresholds=multi_class_confusion(totals["confusion"])
        )
    else:
        buckets = calibration(totals["calibration"], totals_lib.value_bucket_bounds)
        data[CALIBRATION_PLOT] = metrics_for_slice_pb2.PlotData(
            calibration_histogram_buckets=buckets
        )
    return data
