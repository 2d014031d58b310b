"""The task's metrics from per-slice totals that are summed a batch at a time with numpy.

TFMA's metric combiners take each example on its own in Python, which made the stock
Evaluator the slowest step of a run (1,000 rows/s). Here a batch of labels and predictions
becomes, for every slice it touches, a dict of sums (`Totals`); totals of any two parts of
the data merge by adding them, so Beam can combine them in any order on any worker; the
metric values come from the merged totals at the end. The definitions are TFMA's, so the
numbers agree with the stock Evaluator (tests/test_evaluator.py compares them):

- binary: as TFMA does, a prediction is first rounded down to a multiple of 1/10,000 (its
  calibration histogram's bucket); AUC comes from the counts above each of TFMA's 10,000
  thresholds, summed by the midpoint rule; accuracy, precision and recall count the rounded
  prediction > 0.5 as positive; calibration is mean prediction / mean label;
- multiclass: accuracy of the most probable class, log loss of the true class's probability,
  precision and recall per class with the most probable class as the prediction;
- regression: root mean squared and mean absolute error.

A ratio with a zero denominator is NaN, as in TFMA.

The same totals give TFMA's plots (components/evaluator/plots.py): the binary counts per
threshold bucket are its confusion matrices at thresholds; `Buckets` of predictions (the
weight, label and prediction summed per bucket of the prediction) its calibration plot, for
regression too (predicted against actual); multiclass counts its confusion matrix.
"""

import numpy as np

AUC_THRESHOLDS = 10_000  # TFMA's default for AUC, so the values agree with it
_EDGE = 1e-7  # TFMA's fence posts below 0 and above 1
# Thresholds t_j; a prediction p counts as positive at t_j when p > t_j.
THRESHOLDS = np.concatenate(
    [
        [-_EDGE],
        np.arange(1, AUC_THRESHOLDS - 1, dtype=np.float64) / (AUC_THRESHOLDS - 1),
        [1.0 + _EDGE],
    ]
)
# "p > t_j" as TFMA decides it for a binned p: p >= t_j + _EDGE (it nudges each threshold
# up). So a p in (t_j, t_j + _EDGE) is not above t_j: the binned predictions 0.9991 to
# 0.9999 are not above the threshold just below each, where 1.0 is (a saturated model's).
_ABOVE_FROM = THRESHOLDS + _EDGE
HISTOGRAM_BUCKETS = 10_000  # TFMA's calibration histogram, which predictions are binned by
DECISION_THRESHOLD = 0.5  # a binary prediction is positive when it is > 0.5 once binned
LOG_LOSS_EPSILON = 1e-15  # probabilities are clipped so one confident miss costs a finite loss

# Totals: {name: float, numpy array or Histogram}, merged by adding entry by entry.
Totals = dict


class Histogram:
    """Sparse weights of positives and negatives per threshold bucket: a slice with few
    examples stays small however many slices there are."""

    def __init__(self, buckets, positives, negatives):
        self.buckets = buckets  # sorted unique bucket ids
        self.positives = positives
        self.negatives = negatives

    def __add__(self, other):
        buckets, index = np.unique(
            np.concatenate([self.buckets, other.buckets]), return_inverse=True
        )
        n = len(buckets)
        return Histogram(
            buckets,
            np.bincount(index, np.concatenate([self.positives, other.positives]), n),
            np.bincount(index, np.concatenate([self.negatives, other.negatives]), n),
        )

    def dense(self, weights):
        full = np.zeros(len(THRESHOLDS) + 1)
        full[self.buckets] = weights
        return full


CALIBRATION_BUCKETS = 1_000  # TFMA's CalibrationPlot default: [i/1000, (i+1)/1000) on [0, 1]


class Buckets:
    """Sparse sums per bucket of the prediction (`ids`, sorted): the examples' weight, their
    weighted label and weighted prediction; what a calibration plot draws."""

    def __init__(self, ids, weights, labels, predictions):
        self.ids = ids
        self.weights = weights
        self.labels = labels
        self.predictions = predictions

    def __add__(self, other):
        ids, index = np.unique(np.concatenate([self.ids, other.ids]), return_inverse=True)
        return Buckets(
            ids,
            *(
                np.bincount(index, np.concatenate([mine, theirs]), len(ids))
                for mine, theirs in (
                    (self.weights, other.weights),
                    (self.labels, other.labels),
                    (self.predictions, other.predictions),
                )
            ),
        )


def _sparse_sums(groups, ids, n_ids, n_groups, columns):
    """[(ids, [column sums])] per group: each column summed per (group, id) cell, only the
    cells that occur."""
    cells, index = np.unique(groups * n_ids + ids, return_inverse=True)
    sums = [np.bincount(index, weights=column, minlength=len(cells)) for column in columns]
    # The cells are sorted by group: group g's are those between these bounds.
    bounds = np.searchsorted(cells // n_ids, np.arange(n_groups + 1))
    return [
        (cells[bounds[g] : bounds[g + 1]] % n_ids, [c[bounds[g] : bounds[g + 1]] for c in sums])
        for g in range(n_groups)
    ]


def probability_bucket_ids(predictions):
    """A probability's calibration bucket: i for [i/1000, (i+1)/1000), 0 below 0 is bucket
    -1 and 1 and above 1000, shifted by one so that ids start at 0."""
    ids = np.floor(predictions * CALIBRATION_BUCKETS).astype(np.int64)
    return np.clip(ids, -1, CALIBRATION_BUCKETS) + 1


def probability_bucket_bounds(bucket_id):
    """[low, high) of `probability_bucket_ids`'s bucket."""
    i = bucket_id - 1
    low = -np.inf if i < 0 else i / CALIBRATION_BUCKETS
    high = np.inf if i >= CALIBRATION_BUCKETS else (i + 1) / CALIBRATION_BUCKETS
    return low, high


_EXPONENT_SPAN = 700  # decimal exponents -350..349: every finite float64
_VALUE_BUCKETS = 2 * _EXPONENT_SPAN * 1000


def value_bucket_ids(values):
    """A number's bucket on a scale that needs no range known in advance: its two leading
    significant digits (width 1 in 10..99 times its power of ten), so that buckets merge
    across batches whatever the label's units; 0 and non-finite values are bucket 0."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values) & (values != 0)
    magnitude = np.where(finite, np.abs(values), 1.0)
    exponent = np.floor(np.log10(magnitude)) - 1
    digits = np.floor(np.where(finite, values, 0.0) / 10.0**exponent)
    ids = (exponent + _EXPONENT_SPAN / 2) * 1000 + np.clip(digits, -100, 100) + 500
    return np.where(finite, ids, 0).astype(np.int64)


def value_bucket_bounds(bucket_id):
    """[low, high) of `value_bucket_ids`'s bucket."""
    if bucket_id == 0:
        return 0.0, 0.0
    exponent, digits = divmod(int(bucket_id), 1000)
    scale = 10.0 ** (exponent - _EXPONENT_SPAN / 2)
    return (digits - 500) * scale, (digits - 499) * scale


def calibration_buckets(bucket_ids, n_ids, labels, predictions, weights, groups, n_groups):
    """`Buckets` per group of the predictions by `bucket_ids` (ids below `n_ids`)."""
    columns = (weights, weights * labels, weights * predictions)
    return [
        Buckets(ids, *sums)
        for ids, sums in _sparse_sums(groups, bucket_ids, n_ids, n_groups, columns)
    ]


def merge(totals: list[Totals]) -> Totals:
    """The sum of `totals`, entry by entry."""
    merged = dict(totals[0])
    for other in totals[1:]:
        for name, value in other.items():
            merged[name] = merged[name] + value
    return merged


def _per_group(values, groups, n_groups):
    """Sum of `values` per group id."""
    return np.bincount(groups, weights=values, minlength=n_groups)


def _ratio(numerator, denominator):
    return float(numerator / denominator) if denominator > 0 else float("nan")


def _rates(numerator, denominator):
    """numerator / denominator element-wise, 0 where the denominator is 0 (TFMA's curves)."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)


class BinaryTask:
    """Labels 0/1 (or a probability of the positive class); predictions P(positive)."""

    name = "binary"

    @staticmethod
    def totals(labels, predictions, weights, groups, n_groups) -> list[Totals]:
        binned = np.floor(np.clip(predictions, 0.0, 1.0) * HISTOGRAM_BUCKETS) / HISTOGRAM_BUCKETS
        buckets = np.searchsorted(_ABOVE_FROM, binned, side="right")  # thresholds it is above
        n_buckets = len(THRESHOLDS) + 1
        positive = weights * labels
        negative = weights * (1.0 - labels)
        histograms = _sparse_sums(groups, buckets, n_buckets, n_groups, (positive, negative))
        calibration = calibration_buckets(
            probability_bucket_ids(predictions),
            CALIBRATION_BUCKETS + 2,
            labels,
            predictions,
            weights,
            groups,
            n_groups,
        )
        predicted = (binned > DECISION_THRESHOLD).astype(np.float64)
        sums = {
            "count": _per_group(np.ones_like(weights), groups, n_groups),
            "weight": _per_group(weights, groups, n_groups),
            "label": _per_group(positive, groups, n_groups),
            "prediction": _per_group(weights * predictions, groups, n_groups),
            "tp": _per_group(positive * predicted, groups, n_groups),
            "fp": _per_group(negative * predicted, groups, n_groups),
            "fn": _per_group(positive * (1.0 - predicted), groups, n_groups),
            "tn": _per_group(negative * (1.0 - predicted), groups, n_groups),
        }
        return [
            {
                **{name: float(column[g]) for name, column in sums.items()},
                "histogram": Histogram(histograms[g][0], *histograms[g][1]),
                "calibration": calibration[g],
            }
            for g in range(n_groups)
        ]

    @staticmethod
    def values(t: Totals) -> dict[str, float]:
        # Positives and negatives above threshold j: those in buckets past j.
        histogram = t["histogram"]
        positives = histogram.dense(histogram.positives)
        negatives = histogram.dense(histogram.negatives)
        tp = np.cumsum(positives[::-1])[::-1][1:]
        fp = np.cumsum(negatives[::-1])[::-1][1:]
        recall = _rates(tp, np.full_like(tp, positives.sum()))
        fall_out = _rates(fp, np.full_like(fp, negatives.sum()))
        auc = np.nansum((fall_out[:-1] - fall_out[1:]) * (recall[:-1] + recall[1:]) / 2.0)
        return {
            "example_count": t["count"],
            "auc": float(auc),
            "binary_accuracy": _ratio(t["tp"] + t["tn"], t["weight"]),
            "precision": _ratio(t["tp"], t["tp"] + t["fp"]),
            "recall": _ratio(t["tp"], t["tp"] + t["fn"]),
            "calibration": _ratio(t["prediction"], t["label"]),
            "mean_label": _ratio(t["label"], t["weight"]),
            "mean_prediction": _ratio(t["prediction"], t["weight"]),
        }


class MulticlassTask:
    """Labels are class ids; predictions a probability per class."""

    name = "multiclass"

    def __init__(self, num_classes: int):
        self.num_classes = num_classes

    def totals(self, labels, predictions, weights, groups, n_groups) -> list[Totals]:
        labels = labels.astype(np.int64)
        rows = np.arange(len(labels))
        predicted = np.argmax(predictions, axis=1)
        hit = (predicted == labels).astype(np.float64)
        true_probability = np.clip(predictions[rows, labels], LOG_LOSS_EPSILON, 1.0)
        k = self.num_classes

        def per_class(classes, values):
            return np.bincount(groups * k + classes, weights=values, minlength=n_groups * k)

        hits = per_class(labels, weights * hit).reshape(n_groups, k)
        by_label = per_class(labels, weights).reshape(n_groups, k)
        by_prediction = per_class(predicted, weights).reshape(n_groups, k)
        # Row: the label, column: the most probable class (TFMA's at threshold 0).
        confusion = np.bincount(
            (groups * k + labels) * k + predicted, weights=weights, minlength=n_groups * k * k
        ).reshape(n_groups, k, k)
        sums = {
            "count": _per_group(np.ones_like(weights), groups, n_groups),
            "weight": _per_group(weights, groups, n_groups),
            "log_loss": _per_group(-weights * np.log(true_probability), groups, n_groups),
        }
        return [
            {
                **{name: float(column[g]) for name, column in sums.items()},
                "hits": hits[g],
                "labelled": by_label[g],
                "predicted": by_prediction[g],
                "confusion": confusion[g],
            }
            for g in range(n_groups)
        ]

    def values(self, t: Totals) -> dict[str, float]:
        values = {
            "example_count": t["count"],
            "accuracy": _ratio(t["hits"].sum(), t["weight"]),
            "log_loss": _ratio(t["log_loss"], t["weight"]),
        }
        for c in range(self.num_classes):
            values[f"precision/class_{c}"] = _ratio(t["hits"][c], t["predicted"][c])
            values[f"recall/class_{c}"] = _ratio(t["hits"][c], t["labelled"][c])
        return values


class RegressionTask:
    """Labels and predictions are numbers."""

    name = "regression"

    @staticmethod
    def totals(labels, predictions, weights, groups, n_groups) -> list[Totals]:
        error = predictions - labels
        sums = {
            "count": _per_group(np.ones_like(weights), groups, n_groups),
            "weight": _per_group(weights, groups, n_groups),
            "squared_error": _per_group(weights * error * error, groups, n_groups),
            "absolute_error": _per_group(weights * np.abs(error), groups, n_groups),
            "label": _per_group(weights * labels, groups, n_groups),
            "prediction": _per_group(weights * predictions, groups, n_groups),
        }
        calibration = calibration_buckets(
            value_bucket_ids(predictions),
            _VALUE_BUCKETS,
            labels,
            predictions,
            weights,
            groups,
            n_groups,
        )
        return [
            {
                **{name: float(column[g]) for name, column in sums.items()},
                "calibration": calibration[g],
            }
            for g in range(n_groups)
        ]

    @staticmethod
    def values(t: Totals) -> dict[str, float]:
        mean_squared_error = _ratio(t["squared_error"], t["weight"])
        return {
            "example_count": t["count"],
            "root_mean_squared_error": float(np.sqrt(mean_squared_error)),
            "mean_absolute_error": _ratio(t["absolute_error"], t["weight"]),
            "mean_label": _ratio(t["label"], t["weight"]),
            "mean_prediction": _ratio(t["prediction"], t["weight"]),
        }


def task_for(task: str, num_classes: int | None = None):
    """The metric maker for `task` ('binary', 'multiclass' or 'regression')."""
    if task == "binary":
        return BinaryTask()
    if task == "multiclass":
        return MulticlassTask(num_classes)
    if task == "regression":
        return RegressionTask()
    raise ValueError(f"task must be binary, multiclass or regression; got {task!r}.")
