"""The Evaluator's TFMA plots (components/evaluator/plots.py, or stock TFMA's under the same
names) of the overall slice, as the few numbers the report's charts draw: the ROC and
precision-recall curves, the confusion matrix at the 0.5 threshold, the calibration curve
(binary: ten buckets of the probability; regression: predicted against actual in about
twenty buckets of equal weight) and the multiclass confusion matrix. Read per model
(candidate, baseline)."""

import math

CALIBRATION_BINS = 10
PREDICTED_ACTUAL_BINS = 20
_DECISION_THRESHOLD = 0.5


def read_plots(uri):
    """{model name: plain data of its overall slice's plots} ("" when there is no baseline:
    the candidate); {} when the evaluation holds no plots."""
    import tensorflow_model_analysis as tfma

    found = {}
    try:
        plots = list(tfma.load_plots(uri))
    except (OSError, ValueError):  # an evaluation written before the Evaluator drew plots
        return found
    for plots_for_slice in plots:
        if plots_for_slice.slice_key.single_slice_keys or plots_for_slice.HasField(
            "cross_slice_key"
        ):
            continue
        for entry in plots_for_slice.plot_keys_and_values:
            model = "baseline" if entry.key.model_name == "baseline" else "candidate"
            found.setdefault(model, {}).update(_plain(entry.key.name, entry.value))
    return found


def _plain(name, data):
    """The chart data of one plot, by the kind of data it holds (`name` is TFMA's plot name:
    a stock TFMA calibration plot of a classifier's probability reads the same)."""
    if data.HasField("confusion_matrix_at_thresholds"):
        return _binary_curves(data.confusion_matrix_at_thresholds.matrices)
    if data.HasField("calibration_histogram_buckets"):
        return {"calibration": _buckets(data.calibration_histogram_buckets.buckets)}
    if data.HasField("multi_class_confusion_matrix_at_thresholds"):
        matrices = data.multi_class_confusion_matrix_at_thresholds.matrices
        return {"multiclass_confusion": _multiclass(matrices[0])} if matrices else {}
    return {}


def _binary_curves(matrices):
    """ROC points (false positive rate, recall), precision-recall points (recall,
    precision: only where something is predicted positive) and the matrix nearest 0.5."""
    roc, pr = [], []
    for m in matrices:
        roc.append((m.false_positive_rate, m.recall))
        if m.true_positives + m.false_positives > 0:
            pr.append((m.recall, m.precision))
    at = min(matrices, key=lambda m: abs(m.threshold - _DECISION_THRESHOLD), default=None)
    confusion = None
    if at is not None:
        confusion = {
            "threshold": at.threshold,
            "cells": [
                [at.true_negatives, at.false_positives],
                [at.false_negatives, at.true_positives],
            ],
        }
    return {"roc": _distinct(roc), "pr": _distinct(pr), "confusion": confusion}


def _distinct(points):
    """The points without repeats in a row (a curve's flat stretches)."""
    kept = []
    for point in points:
        if not kept or point != kept[-1]:
            kept.append(point)
    return kept


def _buckets(buckets):
    """[(low, high, weight, label sum, prediction sum)] of the buckets that hold examples."""
    return [
        (
            b.lower_threshold_inclusive,
            b.upper_threshold_exclusive,
            b.num_weighted_examples.value,
            b.total_weighted_label.value,
            b.total_weighted_refined_prediction.value,
        )
        for b in buckets
        if b.num_weighted_examples.value > 0
    ]


def _multiclass(matrix):
    k = 1 + max((max(e.actual_class_id, e.predicted_class_id) for e in matrix.entries), default=-1)
    cells = [[0.0] * k for _ in range(k)]
    for e in matrix.entries:
        if e.actual_class_id >= 0 and e.predicted_class_id >= 0:
            cells[e.actual_class_id][e.predicted_class_id] += e.num_weighted_examples
    return cells


def calibration_bins(buckets, probability):
    """[(mean prediction, mean label, weight)] of the calibration buckets merged: for a
    probability, into CALIBRATION_BINS equal-width bins of [0, 1]; otherwise (regression)
    into about PREDICTED_ACTUAL_BINS bins of equal weight, in order of prediction."""
    if not buckets:
        return []
    sums = {}
    if probability:
        for low, _, weight, label, prediction in buckets:
            at = min(max(math.floor(max(low, 0.0) * CALIBRATION_BINS), 0), CALIBRATION_BINS - 1)
            _add(sums, at, weight, label, prediction)
    else:
        total = sum(b[2] for b in buckets)
        seen = 0.0
        for _, _, weight, label, prediction in sorted(buckets):
            at = min(int(seen / total * PREDICTED_ACTUAL_BINS), PREDICTED_ACTUAL_BINS - 1)
            _add(sums, at, weight, label, prediction)
            seen += weight
    return [(p / w, lab / w, w) for w, lab, p in (sums[k] for k in sorted(sums)) if w > 0]


def _add(sums, at, weight, label, prediction):
    w, lab, p = sums.get(at, (0.0, 0.0, 0.0))
    sums[at] = (w + weight, lab + label, p + prediction)
