"""Category ids in the order of their mean label, as the zero-code regression and binary
trees read them.

A tree splits a category column of ids (an indicator column) on one id against the rest.
HistGradientBoosting and LightGBM sort a column's categories by their gradient over Hessian
and cut that order as a number, so one split groups the cheap grades from the dear ones; for
squared error at the start of boosting that order is the categories' mean label. On ames's
40 text columns and its integer codes (rooms, garage cars), read as category ids, the kit's
trees alone scored RMSE 27,559 against HGB's 25,864 on the same rows, and 26,227 with the
ids in this order (docs/benchmarks/2026-12-06-zero-code-trees.md).

`label_sums` reads each category column's label sum and row count per id from the rows the
trees fit; `ordered_columns` replaces the trees' indicator columns by a bucketized column of
the id's place in the order of the smoothed means ((sum + SMOOTHING * mean) / (count +
SMOOTHING): a rare id stays near the label's mean, LightGBM's `cat_smooth`), ids of equal
means one bucket, at most `MAX_BUCKETS` buckets. The order is a constant of the graph, so a
served model reads the same ids as ever. The order is fixed at the root (HGB sorts again in
every node); ids never seen in the rows sit at the mean.

A binary label's mean is the positive class's rate (`label_sums`' `positive`): for log loss
from the constant start p of `center_bias` every row has the same Hessian p(1 - p) and the
gradient p - y, so an id's gradient sum over its Hessian sum is (p - its positive rate) /
(p(1 - p)): the root's order is its positive rate's, as for squared error it is the mean
label's. A
multiclass label has no one order: each class's logit orders the ids its own way (LightGBM
and HGB sort per class, a tree each), while the kit's diagonal-Hessian trees share one
tree among the classes; the ids stay one against the rest there.
"""

import functools

import numpy as np

SMOOTHING = 10.0  # pseudo-rows at the label's mean added to each id's mean
MAX_BUCKETS = 255  # HistGradientBoosting's bins


def identity_keys(deep):
    """{feature key: number of ids} of the indicator columns over identity ids in `deep`."""
    from tensorflow.python.feature_column import feature_column_v2 as fc_lib

    keys = {}
    for column in deep:
        ids = getattr(column, "categorical_column", None)
        if isinstance(ids, fc_lib.IdentityCategoricalColumn):
            keys[ids.key] = ids.num_buckets
    return keys


def label_numbers(labels, positive=None):
    """`labels` as float64 numbers: 1 where a label is the class `positive` (text) and 0
    elsewhere, or the labels themselves (a regression label, or class ids 0/1) without it."""
    labels = np.reshape(np.asarray(labels), -1)
    if positive is None:
        return labels.astype(np.float64)
    text = str(positive)
    raw = text.encode("utf-8")
    return np.fromiter((v in (raw, text) for v in labels), np.float64, len(labels))


def label_sums(batches, keys, positive=None):
    """{key: (label sum per id, rows per id)} over `batches` ((features, labels) of numpy
    arrays, or tensors) for `keys` ({feature key: number of ids}), a binary label's rows of
    the class `positive` counted as 1, others 0 (`label_numbers`); an id outside the range
    is left out."""
    sums = {key: (np.zeros(n), np.zeros(n)) for key, n in keys.items()}
    for features, labels in batches:
        labels = label_numbers(labels, positive)
        for key, (total, count) in sums.items():
            ids = np.reshape(np.asarray(features[key]), -1).astype(np.int64)
            inside = (ids >= 0) & (ids < len(total))
            total += np.bincount(ids[inside], labels[inside], len(total))
            count += np.bincount(ids[inside], minlength=len(total))
    return sums


def id_buckets(total, count):
    """Each id's bucket: its place among the ids' smoothed mean labels (module doc)."""
    rows = count.sum()
    mean = total.sum() / rows if rows else 0.0
    smoothed = (total + SMOOTHING * mean) / (count + SMOOTHING)
    distinct, place = np.unique(smoothed, return_inverse=True)
    buckets = min(len(distinct), MAX_BUCKETS)
    return (place * buckets // len(distinct)).astype(np.int64), buckets


def _bucket_of(ids, table):
    import tensorflow as tf

    last = len(table) - 1
    return tf.gather(
        tf.constant(table, tf.int64), tf.clip_by_value(tf.cast(ids, tf.int64), 0, last)
    )


def ordered_columns(deep, sums):
    """`deep` with each indicator column over identity ids of a key in `sums` (`label_sums`)
    replaced by the bucketized column of its ids' order."""
    import tensorflow as tf

    columns = []
    for column in deep:
        ids = getattr(column, "categorical_column", None)
        key = getattr(ids, "key", None)
        if key not in sums or not hasattr(ids, "num_buckets"):
            columns.append(column)
            continue
        table, buckets = id_buckets(*sums[key])
        source = tf.feature_column.numeric_column(
            key,
            dtype=tf.int64,
            normalizer_fn=functools.partial(_bucket_of, table=tuple(table.tolist())),
        )
        boundaries = [b + 0.5 for b in range(buckets - 1)] or [0.5]
        columns.append(tf.feature_column.bucketized_column(source, boundaries))
    return columns
