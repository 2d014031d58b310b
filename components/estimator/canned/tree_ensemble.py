"""The tensors behind the boosted trees estimators: features as bucket ids, the
ensemble in plain variables, split finding and tree growth.

Trees are complete binary heaps (node i has children 2i+1 and 2i+2) held in
`[n_trees, nodes]` variables, so checkpoints, warm starts and SavedModels treat
them as any other variables, and serving needs only gathers.  Node values are
cumulative along a path, as in tf.estimator's ensembles: a child holds its
parent's value plus the learning rate times its Newton step.
"""

import itertools

import numpy as np
import tensorflow as tf
from tensorflow.python.feature_column import feature_column_v2 as fc_lib

NUMERIC, BUCKETIZED, CATEGORICAL = "numeric", "bucketized", "categorical"
# tf.estimator's rule: stop centering the bias once a Newton step moves it by
# less than 1% of its value.
MIN_CENTER_BIAS_DELTA = 0.01
_EPS = 1e-15
# Over this many heap nodes in all trees the variables would take gigabytes.
MAX_TOTAL_NODES = 1 << 25


def _raw_keys(column):
    parents = getattr(column, "parents", None)
    if not parents:
        return [column.key] if hasattr(column, "key") else []
    return [key for parent in parents for key in _raw_keys(parent)]


class FeatureLayout:
    """Every feature column dimension as one integer feature with `num_buckets` buckets.

    Numeric columns are cut at quantile boundaries learnt in training, bucketized
    columns keep their buckets, categorical columns (bare or in an indicator column)
    keep their ids, with one more bucket for a missing or out-of-range id.  Global
    feature ids are ordered numeric, bucketized, categorical, by size within a kind: the
    categorical ones (equality splits) are the tail from `equality_from`, and before it
    each run of one size is a "group" (first feature, count, num_buckets) that the
    histogram and the split search take as one block.
    """

    def __init__(self, feature_columns, num_quantiles):
        columns = sorted(feature_columns, key=lambda c: c.name)
        if not columns:
            raise ValueError("feature_columns must not be empty.")
        entries = []  # (kind, num_buckets, column name, column, dimension)
        for column in columns:
            entries.extend(self._entries(column, num_quantiles))
        entries.sort(key=lambda e: (e[0] != NUMERIC, e[0], e[1], e[2], e[4]))
        self.columns = columns
        self.entries = entries
        self.names = [e[2] for e in entries]
        self.num_features = len(entries)
        self.num_numeric = sum(e[0] == NUMERIC for e in entries)
        self.num_quantiles = num_quantiles
        self.num_buckets = np.array([e[1] for e in entries], np.int32)
        self.offsets = np.concatenate([[0], np.cumsum(self.num_buckets)[:-1]]).astype(np.int32)
        self.total_buckets = int(self.num_buckets.sum())
        # Training keeps each bucket id in a byte where every feature has at most 256
        # buckets (`Columns`), else in an int32.
        self.bucket_dtype = tf.uint8 if self.num_buckets.max() <= 256 else tf.int32
        self.is_equality = np.array([e[0] == CATEGORICAL for e in entries])
        self.equality_from = (
            int(np.argmax(self.is_equality)) if self.is_equality.any() else len(entries)
        )
        self.groups = []  # of the inequality features: (first feature, count, num_buckets)
        for i, buckets in enumerate(self.num_buckets[: self.equality_from].tolist()):
            if self.groups and self.groups[-1][2] == buckets:
                first, count, _ = self.groups[-1]
                self.groups[-1] = (first, count + 1, buckets)
            else:
                self.groups.append((i, 1, buckets))

    @staticmethod
    def _entries(column, num_quantiles):
        if isinstance(column, fc_lib.IndicatorColumn):
            return FeatureLayout._categorical(column.categorical_column, column)
        if isinstance(column, fc_lib.BucketizedColumn):
            dims = int(np.prod(column.source_column.shape))
            return [
                (BUCKETIZED, len(column.boundaries) + 1, column.name, column, d)
                for d in range(dims)
            ]
        if isinstance(column, fc_lib.NumericColumn):
            if len(column.shape) > 1:
                raise ValueError(
                    f"Boosted trees take numeric columns of rank 1; column {column.name!r} has "
                    f"shape {column.shape}."
                )
            dims = int(np.prod(column.shape))
            return [(NUMERIC, num_quantiles, column.name, column, d) for d in range(dims)]
        if isinstance(column, fc_lib.CategoricalColumn):
            return FeatureLayout._categorical(column, column)
        raise ValueError(
            f"Boosted trees take numeric, bucketized, indicator and categorical columns; "
            f"column {getattr(column, 'name', column)!r} is a {type(column).__name__}."
        )

    @staticmethod
    def _categorical(categorical, outer):
        if isinstance(
            categorical, (fc_lib.WeightedCategoricalColumn, fc_lib.CrossedColumn)
        ) or not hasattr(categorical, "num_buckets"):
            raise ValueError(
                f"Boosted trees split on one category id per example; column {outer.name!r} "
                f"is over a {type(categorical).__name__}, which they do not take."
            )
        # tf.estimator named an indicator column's features after its categorical column.
        return [(CATEGORICAL, categorical.num_buckets + 1, categorical.name, outer, 0)]

    def check_features(self, features):
        for column in self.columns:
            for key in _raw_keys(column):
                if key not in features:
                    raise ValueError(
                        f"Feature {key!r} (needed by column {column.name!r}) is not in the "
                        f"input features {sorted(features)}."
                    )

    def numeric_values(self, features, cache):
        """float32 [batch, num_numeric], in global feature order: a column's dimensions are
        contiguous there, in order (the entries sort by column name, then dimension), so
        each column goes in whole."""
        columns = [
            next(group)[3]
            for _, group in itertools.groupby(self.entries[: self.num_numeric], lambda e: e[2])
        ]
        plain = _plain_numbers(columns, features)
        if plain is not None:
            return plain
        values = []
        for column in columns:
            tensor = column.get_dense_tensor(cache, None)
            values.append(tf.reshape(tf.cast(tensor, tf.float32), [-1, column.shape[0]]))
        return tf.concat(values, axis=1)

    def bucket_ids(self, features, boundaries):
        """int32 [batch, num_features]: each feature's bucket, in global feature order."""
        cache = fc_lib.FeatureTransformationCache(features)
        parts = []
        if self.num_numeric:
            values = self.numeric_values(features, cache)
            ids = tf.searchsorted(boundaries, tf.transpose(values), side="right")
            parts.append(tf.transpose(tf.cast(ids, tf.int32)))
        rest = self.entries[self.num_numeric :]
        # Dense integer ids of identity columns (the auto model's category columns), all
        # at once: one id per feature, a few ops a feature in every graph traced (train,
        # evaluation, serving) made the tracing of 200 of them seconds each time.
        identity = [i for i, entry in enumerate(rest) if _dense_identity(entry, features)]
        if identity:
            parts.append(self._identity_ids(features, [rest[i] for i in identity]))
        read_together = set(identity)
        others = [i for i in range(len(rest)) if i not in read_together]
        bucketized = {}
        for kind, buckets, _, column, dim in (rest[i] for i in others):
            if kind == BUCKETIZED:
                if column.name not in bucketized:
                    ids = cache.get(column, None)
                    bucketized[column.name] = tf.reshape(
                        tf.cast(ids, tf.int32), [tf.shape(ids)[0], -1]
                    )
                parts.append(bucketized[column.name][:, dim : dim + 1])
            else:
                parts.append(self._category_ids(features, cache, column, buckets - 1)[:, None])
        ids = tf.concat(parts, axis=1)
        if not identity or len(identity) == len(rest):
            return ids
        # Back to feature order: numbers, the identity block, then the others as computed.
        position = np.empty(len(rest), np.int64)
        position[identity + others] = np.arange(len(rest))
        order = np.concatenate([np.arange(self.num_numeric), self.num_numeric + position])
        return tf.gather(ids, order, axis=1)

    @staticmethod
    def _identity_ids(features, entries):
        """The ids of dense identity columns (`_dense_identity`) side by side, [batch,
        len(entries)]: `num_buckets` where one is missing or out of range, the column's
        default_value (when it has one) for an out-of-range id but -1."""
        raw = [features[_categorical_of(entry[3]).key] for entry in entries]
        if len({r.dtype for r in raw}) > 1:
            raw = [tf.cast(r, tf.int64) for r in raw]
        if all(r.shape.rank == 1 for r in raw):  # one op for them all, as parsed
            raw = tf.stack(raw, axis=1)
        else:
            raw = tf.concat([tf.reshape(r, [-1, 1]) for r in raw], axis=1)
        raw = tf.cast(raw, tf.int32)
        num_buckets = np.array([entry[1] - 1 for entry in entries], np.int32)
        defaults = [_categorical_of(entry[3]).default_value for entry in entries]
        outside = (raw < 0) | (raw >= num_buckets)
        if any(default is not None for default in defaults):
            has_default = np.array([d is not None for d in defaults])
            default = np.array([d or 0 for d in defaults], np.int32)
            replaced = tf.where(raw == -1, num_buckets, default)
            raw = tf.where(outside & has_default, replaced, raw)
            outside = (raw < 0) | (raw >= num_buckets)
        return tf.where(outside, num_buckets, raw)

    @staticmethod
    def _category_ids(features, cache, column, num_buckets):
        """One id per example, `num_buckets` where it is missing or out of range: a column
        of sparse ids, or not of identity ids (the dense identity ones: `_identity_ids`)."""
        categorical = _categorical_of(column)
        sparse = categorical.get_sparse_tensors(cache, None).id_tensor
        dense = tf.sparse.to_dense(sparse, default_value=-1)
        check = tf.debugging.assert_less_equal(
            tf.shape(dense)[1],
            1,
            message=f"Boosted trees split on one category id per example; column "
            f"{column.name!r} got several ids in one example.",
        )
        with tf.control_dependencies([check]):
            ids = tf.cast(tf.concat([dense, -tf.ones_like(dense[:, :1])], axis=1)[:, 0], tf.int32)
        return tf.where((ids < 0) | (ids >= num_buckets), num_buckets, ids)


def _plain_numbers(columns, features):
    """float32 [batch, columns] of numeric columns without a normalizer, one number each, all
    read from dense features of one dtype, one number per example: in two ops (a stack and
    a cast, the same values as each column's cast), where the columns' own transformations
    are four ops each, traced twice in a training step (the quantile sketch, the bucket ids)
    and optimized in its first call. None where any column is otherwise."""
    raw = [features.get(getattr(column, "key", None)) for column in columns]
    if not all(
        type(column) is fc_lib.NumericColumn
        and column.normalizer_fn is None
        and column.shape == (1,)
        and isinstance(tensor, tf.Tensor)
        and (tensor.dtype.is_floating or tensor.dtype.is_integer)
        and tensor.shape.rank == 1
        for column, tensor in zip(columns, raw, strict=True)
    ):
        return None
    if len({tensor.dtype for tensor in raw}) > 1:
        return None
    return tf.cast(tf.stack(raw, axis=1), tf.float32)


def _categorical_of(column):
    return column.categorical_column if hasattr(column, "categorical_column") else column


def _dense_identity(entry, features):
    """Whether `entry` is a categorical column of identity ids read from a dense integer
    feature of one id per example ([batch] or [batch, 1])."""
    kind, _, _, column, _ = entry
    if kind != CATEGORICAL:
        return False
    categorical = _categorical_of(column)
    raw = features.get(getattr(categorical, "key", None))
    return (
        isinstance(categorical, fc_lib.IdentityCategoricalColumn)
        and isinstance(raw, tf.Tensor)
        and raw.dtype.is_integer
        and (raw.shape.rank == 1 or (raw.shape.rank == 2 and raw.shape[1] == 1))
    )


# ----------------------------------------------------------------- quantiles
def batch_quantile_sketch(values, weights, size):
    """`size` points per feature at evenly spaced weighted ranks of this batch:
    together with the batch's weight, a summary whose rank error is below
    1/(2*size) of that weight.  values [batch, F], weights [batch] -> [F, size]."""
    order = tf.argsort(tf.transpose(values), axis=1)
    sorted_values = tf.gather(tf.transpose(values), order, batch_dims=1)
    cumulative = tf.cumsum(tf.gather(weights, order), axis=1)
    total = cumulative[:, -1:]
    ranks = (tf.range(size, dtype=tf.float32)[None, :] + 0.5) / size * total
    positions = tf.searchsorted(cumulative, ranks, side="left")
    positions = tf.minimum(positions, tf.shape(values)[0] - 1)
    return tf.gather(sorted_values, positions, batch_dims=1)


def merged_boundaries(sketches, batch_weights, num_quantiles):
    """Bucket boundaries [F, num_quantiles - 1] at ranks k/num_quantiles of the
    union of the batches' sketches [n, F, size], each point weighing its batch's
    weight over `size`."""
    n, num_features, size = sketches.shape
    points = tf.reshape(tf.transpose(sketches, [1, 0, 2]), [num_features, n * size])
    point_weights = tf.repeat(batch_weights / size, size)
    order = tf.argsort(points, axis=1)
    sorted_points = tf.gather(points, order, batch_dims=1)
    cumulative = tf.cumsum(tf.gather(point_weights, order), axis=1)
    total = cumulative[:, -1:]
    ranks = tf.range(1, num_quantiles, dtype=tf.float32)[None, :] / num_quantiles * total
    positions = tf.minimum(tf.searchsorted(cumulative, ranks, side="left"), n * size - 1)
    return tf.gather(sorted_points, positions, batch_dims=1)


# ------------------------------------------------------------- traversals
def descend(feature, threshold, node, ids, is_equality):
    """One level down from `node` (heap ids; -1-featured nodes are leaves).

    feature/threshold: a tree's [nodes] arrays gathered at `node`'s shape; ids: the
    training step's bucket ids feature by feature (`Columns`)."""
    f = tf.gather(feature, node)
    leaf = f < 0
    safe_f = tf.maximum(f, 0)
    x = ids.at(safe_f)
    t = tf.gather(threshold, node)
    left = tf.where(tf.gather(is_equality, safe_f), tf.equal(x, t), x <= t)
    child = 2 * node + tf.where(left, 1, 2)
    return tf.where(leaf, node, child), f, leaf


class Columns:
    """Training's bucket ids feature by feature, [features, batch], of the layout's
    `bucket_dtype`: in a byte each where they fit, a quarter of the memory the histogram
    loop reads every layer (and of the cache kept between steps when training in memory)."""

    def __init__(self, buckets):
        self.values = buckets
        self._flat = tf.reshape(buckets, [-1])
        self._batch = tf.shape(buckets)[1]
        self.examples = tf.range(self._batch)

    @classmethod
    def of(cls, x, layout):
        """From bucket ids example by example, [batch, features], of `layout`
        (`FeatureLayout`)."""
        return cls(tf.cast(tf.transpose(x), layout.bucket_dtype))

    def at(self, feature):
        """Each example's bucket id of `feature` [batch] (one feature per example)."""
        bucket = tf.gather(self._flat, feature * self._batch + self.examples)
        return tf.cast(bucket, tf.int32)


def traverse_tree(feature, threshold, ids, is_equality, depth):
    """The heap node each example of `ids` (`Columns`) reaches in one tree after
    `depth` levels."""
    node = tf.zeros_like(ids.examples)
    for _ in range(depth):
        node, _, _ = descend(feature, threshold, node, ids, is_equality)
    return node


def traverse_trees(features, thresholds, x, is_equality, depth):
    """[trees, batch] leaves, and per level the (node before, split feature, moved)."""
    x_flat = tf.reshape(x, [-1])
    rows = tf.range(tf.shape(x)[0]) * tf.shape(x)[1]
    num_trees = features.shape[0]
    nodes_per_tree = features.shape[1]
    # Trees flattened: tree t's node i is t * nodes + i.
    tree_base = tf.range(num_trees)[:, None] * nodes_per_tree
    flat_feature = tf.reshape(features, [-1])
    flat_threshold = tf.reshape(thresholds, [-1])
    node = tf.zeros([num_trees, tf.shape(x)[0]], tf.int32)
    path = []
    for _ in range(depth):
        f = tf.gather(flat_feature, tree_base + node)
        leaf = f < 0
        safe_f = tf.maximum(f, 0)
        xv = tf.gather(x_flat, rows[None, :] + safe_f)
        t = tf.gather(flat_threshold, tree_base + node)
        left = tf.where(tf.gather(is_equality, safe_f), tf.equal(xv, t), xv <= t)
        child = tf.where(leaf, node, 2 * node + tf.where(left, 1, 2))
        path.append((node, safe_f, tf.logical_not(leaf)))
        node = child
    return node, path


# ----------------------------------------------------------- split finding
def _weight_and_gain(g, h, l1, l2, max_step=0.0):
    """tf.estimator's leaf weight and gain for one logit: -g'/(h+l2) and g'^2/(h+l2),
    g' being g shrunk by l1 (zero within [-l1, l1]). A `max_step` (the kit's
    `max_delta_step`) bounds the weight and scores it as it is: -(2 g' w + (h+l2) w^2)."""
    shrunk = tf.sign(g) * tf.maximum(tf.abs(g) - l1, 0.0) if l1 else g  # (the same for 0)
    denom = h + l2 if l2 else h
    ok = denom > _EPS
    weight = tf.where(ok, -shrunk / tf.where(ok, denom, 1.0), 0.0)
    if not max_step:
        return weight, -shrunk * weight
    weight = tf.clip_by_value(weight, -max_step, max_step)
    return weight, -(2.0 * shrunk * weight + denom * weight * weight)


def _weights_and_gains(g, h, params, scale=None):
    """Leaf weights [..., L] and gains [...] from gradient sums [..., L] and Hessian sums
    [..., L] (one logit, or a diagonal Hessian: each logit on its own) or [..., L*L] (full):
    -(H + l2)^-1 g and g' (H + l2)^-1 g.  The full softmax Hessian is singular; a ridge of
    1e-5 of `scale` (the node's mean Hessian diagonal, [nodes]) stands in for the pivoted QR
    tf.estimator solved it with (g lies in its range: the gains agree), and keeps a child's
    sums, differences of the node's, clear of rounding."""
    dimension = g.shape[-1]
    if h.shape[-1] == dimension:
        weight, gain = _weight_and_gain(g, h, *_l1_l2(params), params.max_delta_step)
        return weight, _sum_in_order(gain)
    matrix = tf.reshape(h, tf.concat([tf.shape(h)[:-1], [dimension, dimension]], axis=0))
    scale = tf.reshape(
        scale, tf.concat([tf.shape(scale), [1] * (matrix.shape.rank - scale.shape.rank)], axis=0)
    )
    ridge = params.l2_regularization + 1e-5 * scale + 1e-30
    matrix = matrix + ridge * tf.eye(dimension)
    weight = -tf.linalg.solve(matrix, g[..., None])[..., 0]
    return weight, -tf.reduce_sum(g * weight, axis=-1)


def _sum_in_order(x):
    """`x` [..., L] summed over its last axis from the first logit to the last: the order
    the compiled search (`tree_histogram.DiagonalSplitSearch`) adds them in, which
    TensorFlow's reduction does not promise (the same trees either way)."""
    total = x[..., 0]
    for j in range(1, x.shape[-1]):
        total = total + x[..., j]
    return total


def _l1_l2(params):
    return params.l1_regularization, params.l2_regularization


class _Statistics:
    """Where a histogram row's statistics are: gradients [:dim], Hessians [dim:dim + hess]
    (L, or L*L for a full one), then an example count where `min_samples_leaf` asks for
    one; and the count a side of a split needs (in the row's units: a mean over
    `n_batches_per_layer` batches)."""

    def __init__(self, params, dim, k):
        self.params, self.dim = params, dim
        self.counted = params.min_samples_leaf > 0
        self.hess = k - dim - int(self.counted)
        self.min_count = params.min_samples_leaf / params.n_batches_per_layer

    def weights_and_gains(self, sums, scale):
        d = self.dim
        return _weights_and_gains(sums[..., :d], sums[..., d : d + self.hess], self.params, scale)

    def scores(self, left, totals, scale):
        """Gain of the left side plus the right side's, for left sums [..., k] under node
        `totals` (broadcast to them); -inf where a side has fewer examples than asked."""
        right = totals - left
        score = self.weights_and_gains(left, scale)[1] + self.weights_and_gains(right, scale)[1]
        if not self.counted:
            return score
        small = tf.minimum(left[..., -1], right[..., -1]) < self.min_count - 0.5
        return tf.where(small, -np.inf, score)

    def node_scale(self, totals):
        """Each node's mean Hessian diagonal [nodes] (the full Hessian's ridge)."""
        d = self.dim
        hess = totals[:, d : d + self.hess]
        diagonal = hess[:, :: d + 1] if self.hess > d else hess
        return tf.reduce_mean(tf.abs(diagonal), axis=1)


def node_totals(hist, nodes, layout):
    """Each node's sums [nodes, k] from the layer's histogram: every example is in one of
    feature 0's buckets, so their sum is the node's."""
    sums = tf.reshape(hist, [nodes, layout.total_buckets, hist.shape[-1]])
    buckets = int(layout.num_buckets[0])
    if layout.equality_from > 0:
        return sums[:, buckets - 1]  # the last running sum
    return tf.reduce_sum(sums[:, :buckets], axis=1)


def best_splits(hist, nodes, layout, params, logits_dimension):
    """Best split of every node from the layer's histogram (`tree_histogram`, [nodes * total
    buckets, k], an inequality feature's buckets summed running), as tf.estimator's
    BoostedTreesCalculateBestFeatureSplitV2 found it (inequality splits send buckets <=
    threshold left, equality splits the threshold's bucket), vectorized over nodes, features
    and buckets.  (TF 2.21 ships that op without a kernel.)  Returns (gain, feature,
    threshold, left weight, right weight, ok)."""
    k, total = hist.shape[-1], layout.total_buckets
    stats = _Statistics(params, logits_dimension, k)
    sums = tf.reshape(hist, [nodes, total, k])
    totals = node_totals(hist, nodes, layout)
    node_scale = stats.node_scale(totals)
    # Each group of same-size inequality features is one block [nodes, features, buckets,
    # k] of what a split at each bucket sends left.  Scores come out in position order.
    scores = []
    for first, count, buckets in layout.groups:
        begin = int(layout.offsets[first])
        left = tf.reshape(sums[:, begin : begin + count * buckets], [nodes, count, buckets, k])
        score = stats.scores(left, totals[:, None, None, :], node_scale[:, None, None])
        scores.append(tf.reshape(score, [nodes, count * buckets]))
    if layout.equality_from < layout.num_features:
        # The categorical features together, whatever their sizes (as many sizes as
        # columns, often: a block each would be a graph, and an XLA compilation, that
        # grows with them); a split sends one bucket left.
        left = sums[:, int(layout.offsets[layout.equality_from]) :]
        scores.append(stats.scores(left, totals[:, None, :], node_scale[:, None]))
    score = tf.concat(scores, axis=1) if len(scores) > 1 else scores[0]
    best = tf.argmax(score, axis=1, output_type=tf.int32)
    _, parent = stats.weights_and_gains(totals, node_scale)
    position_feature = np.repeat(np.arange(layout.num_features), layout.num_buckets)
    feature = tf.gather(position_feature.astype(np.int32), best)
    start = tf.gather(layout.offsets, feature)
    threshold = best - start
    # The chosen split's left sums: its bucket's (a running sum for an inequality split).
    best_left = tf.gather(sums, best, batch_dims=1)
    left_weight, _ = stats.weights_and_gains(best_left, node_scale)
    right_weight, _ = stats.weights_and_gains(totals - best_left, node_scale)
    best_score = tf.reduce_max(score, axis=1)
    hessians = totals[:, stats.dim : stats.dim + stats.hess]
    if stats.hess == stats.dim:  # (one logit, or a Hessian per logit: as the compiled search)
        norm = tf.sqrt(_sum_in_order(hessians * hessians))
    else:
        norm = tf.norm(hessians, axis=1)
    ok = norm >= params.min_node_weight
    ok &= best_score > -np.inf  # some split leaves both sides min_samples_leaf examples
    gain = best_score - parent - params.tree_complexity
    return gain, feature, threshold, left_weight, right_weight, ok


def center_bias_step(mean_g, mean_h, params):
    """tf.estimator's bias centering step for one logit: the Newton step on the mean
    gradient and Hessian, l1 and l2 applied (and `max_delta_step`: several logits' diagonal
    steps, all taken at once, overshoot to a softmax of exact 0s and 1s otherwise)."""
    weight, _ = _weight_and_gain(mean_g, mean_h, *_l1_l2(params), params.max_delta_step)
    return weight


def post_prune(feature, gain, depth):
    """Collapses, bottom up, splits with negative gain whose children are leaves
    (tf.estimator's post-pruning).  feature/gain: one tree's [nodes] arrays."""
    for level in reversed(range(depth)):
        first, last = (1 << level) - 1, (1 << (level + 1)) - 1
        ids = tf.range(first, last)
        split = tf.gather(feature, ids) >= 0
        children_leaves = (tf.gather(feature, 2 * ids + 1) < 0) & (
            tf.gather(feature, 2 * ids + 2) < 0
        )
        prune = split & children_leaves & (tf.gather(gain, ids) < 0)
        feature = tf.tensor_scatter_nd_update(
            feature, ids[:, None], tf.where(prune, -1, tf.gather(feature, ids))
        )
        gain = tf.tensor_scatter_nd_update(
            gain, ids[:, None], tf.where(prune, 0.0, tf.gather(gain, ids))
        )
    return feature, gain
