"""Boosted trees' compiled loops (numba, on CPUs): the layer histogram, the sums of each
example's statistics per (node in the layer, feature, bucket), the input of the split
search (`tree_ensemble.best_splits`); that search for one logit or a Hessian per logit
(`DiagonalSplitSearch`); and where the examples are in the trees (`TreeWalk`). Each is one op in the training step
where TensorFlow's took dozens (the steps of a small table are mostly op dispatch, and the
ops' graph most of the step's trace), and each gives the same numbers, to the bit.

On CPUs it is a compiled loop (numba) over each feature's examples: a feature's bins in
every node of the layer (its buckets times the nodes, a few KB) are summed in a block that
stays in cache, one statistic at a time, and the block is written once into the node-major
histogram; features are split across threads (the loop releases the GIL). TensorFlow's
weighted bincount, the way kept where a GPU is visible, needs every (feature, example)
cell's bin and weights as tensors of their own (three tensors of 54 MB a layer on 2,000
features and 6,700 examples) and sums into a copy of the whole histogram per thread: two to
three times the loop's time (bench/boosted_trees_histogram.py).
"""

import functools
import itertools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorflow as tf

# The cores this process may run on (a container's or `taskset`'s, not the machine's).
_THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _sum_features(buckets, node, stats, offsets, sizes, running, total, out, begin, end):
    """Writes the rows of features `begin` to `end` - 1 into `out` [nodes * total, k], a
    feature's bucket sums running (each bucket's with those below it added) where
    `running[f]`.

    buckets [features, batch]: each example's bucket id (feature f's `sizes[f]` buckets
    at `offsets[f]` in a node's row); node [batch]: each example's node in the layer, -1
    to leave it out; stats [batch, k]. Run compiled (`_compiled`), once per type of
    `buckets`.

    Features are summed `_GROUP` at a time in one pass over the examples, each into its
    own bins (a small table's bins stay in cache): a bucket's sum is still its examples'
    weights added in their order, the same float32 sums, but one feature's additions no
    longer wait on the one before (an example's bucket is often the previous example's)."""
    batch, k = stats.shape
    nodes = out.shape[0] // total
    node_of = np.empty(batch, np.int32)
    by_statistic = np.zeros((k, batch), np.float32)
    for i in range(batch):
        if node[i] >= nodes:
            raise IndexError("a node outside the histogram")
        node_of[i] = max(node[i], 0)
        if node[i] >= 0:
            for j in range(k):
                by_statistic[j, i] = stats[i, j]
    widest = 0
    for f in range(begin, end):
        widest = max(widest, sizes[f])
    span = nodes * widest
    # Bins of up to _GROUP features at once, within about _GROUP_BYTES per statistic.
    group = max(1, min(_GROUP, _GROUP_BYTES // (4 * span)))
    block = np.empty((k, group * span), np.float32)
    bins = np.empty((group, batch), np.int32)
    first = begin
    while first < end:
        count = min(group, end - first)
        _group_bins(buckets, node_of, sizes, first, count, span, bins)
        for j in range(k):
            _group_sums(bins, count, by_statistic[j], block[j], count * span)
        for q in range(count):
            f = first + q
            _write_feature(block, q * span, sizes[f], offsets[f], running[f], nodes, total, out)
        first += count


_GROUP, _GROUP_BYTES = 4, 1 << 17


def _group_bins(buckets, node_of, sizes, first, count, span, bins):
    """`bins[q, i]`: example i's bin for feature `first + q`, in that feature's `span`."""
    outside = False
    for q in range(count):
        f = first + q
        size = sizes[f]
        for i in range(node_of.shape[0]):
            bucket = np.int32(buckets[f, i])
            outside |= (bucket < 0) | (bucket >= size)
            bins[q, i] = q * span + node_of[i] * size + bucket
    if outside:
        raise IndexError("a bucket id outside its feature's buckets")


def _group_sums(bins, count, weights, sums, width):
    """Each example's weight added to its bin in each of `count` features, in example
    order (four features a pass: their additions are independent)."""
    sums[:width] = 0.0
    if count == _GROUP:
        b0, b1, b2, b3 = bins[0], bins[1], bins[2], bins[3]
        for i in range(weights.shape[0]):
            w = weights[i]
            sums[b0[i]] += w
            sums[b1[i]] += w
            sums[b2[i]] += w
            sums[b3[i]] += w
        return
    for q in range(count):
        feature_bins = bins[q]
        for i in range(weights.shape[0]):
            sums[feature_bins[i]] += weights[i]


def _write_feature(block, at, size, start, running, nodes, total, out):
    """One feature's bins (at `at` in each statistic's `block` row, node-major) into its
    columns of `out`, running sums where `running`."""
    for j in range(block.shape[0]):
        sums = block[j]
        for n in range(nodes):
            row, first = n * total + start, at + n * size
            if running:
                carried = np.float32(0.0)
                for b in range(size):
                    carried += sums[first + b]
                    out[row + b, j] = carried
            else:
                for b in range(size):
                    out[row + b, j] = sums[first + b]


@functools.cache
def _compiled():
    """`_sum_features` compiled, out of the GIL, cached on disk; numba is imported here, on
    first use, not by every import of the estimators (0.7 s)."""
    import numba

    global _group_bins, _group_sums, _write_feature
    _group_bins = numba.njit(nogil=True, cache=True)(_group_bins)
    _group_sums = numba.njit(nogil=True, cache=True)(_group_sums)
    _write_feature = numba.njit(nogil=True, cache=True)(_write_feature)
    return numba.njit(nogil=True, cache=True)(_sum_features)


@functools.cache
def _threads():
    """The threads that sum features beside the calling one (created on first use)."""
    return ThreadPoolExecutor(max(_THREADS - 1, 1), thread_name_prefix="tree-histogram")


class LayerHistogram:
    """`(ids, node_in_layer, stats, nodes_in_layer)` -> the layer's histogram, [nodes_in_layer *
    total_buckets, k]: node n's row at n * total_buckets, feature f's buckets at offsets[f] in
    it. ids: the bucket ids (`tree_ensemble.Columns`); node_in_layer [batch] (-1: left
    out); stats [batch, k].

    An inequality feature's buckets hold running sums (bucket b: the sums of buckets 0 to b,
    what a split at b sends left), added up as the loop writes them out; an equality
    feature's hold its own. The split search took them with a product by a triangle of ones
    under XLA, a third of its time on 2,000 features.

    `compiled` (None: where no GPU is visible) chooses the compiled loop over TensorFlow's
    bincount."""

    def __init__(self, layout, compiled=None):
        self._layout = layout
        self._offsets = np.asarray(layout.offsets, np.int32)
        self._sizes = np.asarray(layout.num_buckets, np.int32)
        self._running = ~np.asarray(layout.is_equality, bool)
        self._total = layout.total_buckets
        self._runs = {}  # `_parts`' by (batch, nodes)
        if compiled is None:
            compiled = not tf.config.list_logical_devices("GPU")
        self.compiled = compiled

    def __call__(self, ids, node_in_layer, stats, nodes_in_layer):
        """`stats`: [batch, k], or a list of [batch, k_i] parts (the statistics side by
        side: TensorFlow's concat of columns this narrow takes longer than the loop)."""
        parts = list(stats) if isinstance(stats, (list, tuple)) else [stats]
        if not self.compiled:
            stats = tf.concat(parts, axis=1) if len(parts) > 1 else parts[0]
            return self._bincounts(ids, node_in_layer, stats, nodes_in_layer)
        hist = tf.numpy_function(
            self._sums,
            [ids.values, node_in_layer, tf.convert_to_tensor(nodes_in_layer, tf.int32), *parts],
            tf.float32,
            name="layer_histogram",
        )
        hist.set_shape([None, sum(part.shape[-1] for part in parts)])
        return hist

    def _sums(self, buckets, node, nodes, *parts):
        stats = np.concatenate(parts, axis=1) if len(parts) > 1 else np.ascontiguousarray(parts[0])
        rows, k = int(nodes) * self._total, stats.shape[1]
        # A fresh array each layer: tf.numpy_function may keep an aligned one as its tensor.
        out = np.empty((rows, k), np.float32)
        args = (buckets, node, stats, self._offsets, self._sizes)
        args += (self._running, self._total, out)
        parts = self._parts(buckets.shape[1], int(nodes))
        loop = _compiled()
        others = [_threads().submit(loop, *args, *part) for part in parts[1:]]
        loop(*args, *parts[0])  # this thread's share
        for future in others:
            future.result()
        return out

    def _parts(self, batch, nodes):
        """Runs of features of about equal work (each example, and each bin written), one
        per thread; kept by (batch, nodes), which repeat from layer to layer (working them
        out took a fifth of a small table's layer op)."""
        key = (batch, nodes)
        if key not in self._runs:
            work = np.cumsum(batch + nodes * self._sizes.astype(np.int64))
            cuts = np.searchsorted(work, work[-1] * np.arange(1, _THREADS) / _THREADS)
            bounds = np.unique(np.concatenate([[0], cuts, [len(self._sizes)]]))
            self._runs[key] = [(int(b), int(e)) for b, e in itertools.pairwise(bounds)]
        return self._runs[key]

    def _bincounts(self, ids, node_in_layer, stats, nodes_in_layer):
        """One weighted bincount per statistic over every (feature, example) cell: a cell's
        bin is its position plus its node's row, one broadcast addition."""
        kept = node_in_layer >= 0
        node = tf.where(kept, node_in_layer, 0)
        stats = tf.where(kept[:, None], stats, tf.zeros_like(stats))
        positions = tf.cast(ids.values, tf.int32) + self._offsets[:, None]
        bins = tf.reshape(positions + (node * self._total)[None, :], [-1])
        shape = tf.shape(ids.values)
        sums = [
            tf.raw_ops.DenseBincount(
                input=bins,
                size=nodes_in_layer * self._total,
                weights=tf.reshape(tf.broadcast_to(stats[None, :, j], shape), [-1]),
            )
            for j in range(stats.shape[-1])
        ]
        return self._running_sums(tf.stack(sums, axis=1), nodes_in_layer)

    def _running_sums(self, hist, nodes_in_layer):
        """`hist` with its inequality features' buckets summed running, a cumulative sum per
        group of features of one size (`FeatureLayout.groups`)."""
        layout, k = self._layout, hist.shape[-1]
        if not layout.groups:
            return hist
        sums = tf.reshape(hist, [nodes_in_layer, self._total, k])
        parts = []
        for first, count, buckets in layout.groups:
            begin = int(layout.offsets[first])
            block = tf.reshape(
                sums[:, begin : begin + count * buckets], [nodes_in_layer, count, buckets, k]
            )
            parts.append(tf.reshape(tf.cumsum(block, axis=2), [nodes_in_layer, -1, k]))
        parts.append(sums[:, begin + count * buckets :])  # the equality features
        return tf.reshape(tf.concat(parts, axis=1), [-1, k])


# ----------------------------------------------------- the split search, one logit
def _leaf(g, h, c):
    """(leaf weight, gain) of gradient sum `g` and Hessian sum `h` under `c` (`_constants`),
    in float32 as `tree_ensemble._weight_and_gain` computes them, operation for operation."""
    l1, l2, eps = c[0], c[1], c[2]
    shrunk = g
    if l1 != 0:
        shrunk = np.sign(g) * max(abs(g) - l1, np.float32(0.0))
    denom = h + l2 if l2 != 0 else h
    weight = -shrunk / denom if denom > eps else np.float32(0.0)
    max_step = c[6]
    if max_step == 0:
        return weight, -shrunk * weight
    weight = min(max(weight, -max_step), max_step)
    return weight, -(np.float32(2.0) * shrunk * weight + denom * weight * weight)


def _best_diagonal_splits(hist, totals, position_feature, offsets, c, counted, dim, out):
    """Each node's best split from the layer's histogram [nodes * positions, k] (as
    `tree_ensemble.best_splits` finds it for `dim` logits, each with its own Hessian: scores
    in position order, the first of the highest; a side's gain summed over the logits in
    their order); `totals` [nodes, k] the nodes' sums; `out` (gain, feature, threshold,
    left weights, right weights, ok), one row per node. Run compiled (`_compiled_search`)."""
    gain, feature, threshold, left_weight, right_weight, ok = out
    nodes, positions = totals.shape[0], position_feature.shape[0]
    minus_inf = np.float32(-np.inf)
    for n in range(nodes):
        best, best_score = 0, minus_inf
        zero_seen = False
        for p in range(positions):
            row = n * positions + p
            # A row equal to one already scored scores the same, and only a higher score
            # replaces the best: skipped (a feature's empty buckets, each an equal running
            # sum, or an empty left side; most of a deep node's buckets).
            if _all_zero(hist[row]):
                if zero_seen:
                    continue
                zero_seen = True
            elif (
                p > 0
                and position_feature[p] == position_feature[p - 1]
                and _same(hist[row], hist[row - 1])
            ):
                continue
            left, right = _sides(hist[row], totals[n], c, dim)
            score = left + right
            if counted:
                left_count = hist[row, 2 * dim]
                if min(left_count, totals[n, 2 * dim] - left_count) < c[3]:
                    score = minus_inf
            if p == 0 or score > best_score:
                best, best_score = p, score
        f = position_feature[best]
        feature[n], threshold[n] = f, best - offsets[f]
        row = n * positions + best
        parent = np.float32(0.0)
        squares = np.float32(0.0)
        for j in range(dim):
            lg, lh = hist[row, j], hist[row, dim + j]
            tg, th = totals[n, j], totals[n, dim + j]
            left_weight[n, j] = _leaf(lg, lh, c)[0]
            right_weight[n, j] = _leaf(tg - lg, th - lh, c)[0]
            node_gain = _leaf(tg, th, c)[1]
            parent = node_gain if j == 0 else parent + node_gain
            squares = th * th if j == 0 else squares + th * th
        ok[n] = (np.sqrt(squares) >= c[4]) & (best_score > minus_inf)
        gain[n] = best_score - parent - c[5]


def _all_zero(row):
    for value in row:  # noqa: SIM110 (a loop numba compiles, not a generator)
        if value != 0:
            return False
    return True


def _same(row, other):
    for j in range(row.shape[0]):  # noqa: SIM110 (as _all_zero)
        if row[j] != other[j]:
            return False
    return True


def _sides(row, totals, c, dim):
    """(left gain, right gain) of one histogram row under a node's `totals`, each summed
    over the logits in order, from the first (as `tree_ensemble._sum_in_order`)."""
    left = right = np.float32(0.0)
    for j in range(dim):
        lg, lh = row[j], row[dim + j]
        left_gain = _leaf(lg, lh, c)[1]
        right_gain = _leaf(totals[j] - lg, totals[dim + j] - lh, c)[1]
        left = left_gain if j == 0 else left + left_gain
        right = right_gain if j == 0 else right + right_gain
    return left, right


@functools.cache
def _compiled_search():
    """`_best_diagonal_splits` compiled, with the functions it calls compiled for it."""
    import numba

    global _leaf, _sides, _all_zero, _same
    _leaf = numba.njit(cache=True)(_leaf)
    _sides = numba.njit(cache=True)(_sides)
    _all_zero = numba.njit(cache=True)(_all_zero)
    _same = numba.njit(cache=True)(_same)
    return numba.njit(nogil=True, cache=True)(_best_diagonal_splits)


def _constants(params):
    """The float32 scalars of the search, as TensorFlow converts the Python ones: l1, l2,
    the smallest denominator, the count below which a side is refused, min_node_weight,
    tree_complexity, max_delta_step."""
    min_count = params.min_samples_leaf / params.n_batches_per_layer - 0.5
    values = (params.l1_regularization, params.l2_regularization, 1e-15, min_count)
    rest = (params.min_node_weight, params.tree_complexity, params.max_delta_step)
    return np.array((*values, *rest), np.float32)


class DiagonalSplitSearch:
    """`(hist, nodes)` -> `tree_ensemble.best_splits`' six results for `dim` logits, each with
    its own Hessian (one logit: a binary classifier, a one-dimensional regressor; several
    with `multi_class_hessian="diagonal"`), searched by a compiled loop: the same floats,
    operation for operation, from one op where TensorFlow's takes some sixty per layer (the
    steps of a small table are mostly op dispatch) and its graph a fifth of the training
    step's trace."""

    def __init__(self, layout, params, dim=1):
        self._layout, self._params, self._dim = layout, params, dim
        self._features = np.repeat(
            np.arange(layout.num_features, dtype=np.int32), layout.num_buckets
        )
        self._offsets = np.asarray(layout.offsets, np.int32)
        self._constants = _constants(params)
        self._counted = params.min_samples_leaf > 0

    def __call__(self, hist, nodes):
        from components.estimator.canned import tree_ensemble as te

        totals = te.node_totals(hist, nodes, self._layout)
        kinds = [tf.float32, tf.int32, tf.int32, tf.float32, tf.float32, tf.bool]
        results = tf.numpy_function(self._search, [hist, totals], kinds, name="split_search")
        shapes = [[None]] * 3 + [[None, self._dim]] * 2 + [[None]]
        for result, shape in zip(results, shapes, strict=True):
            result.set_shape(shape)
        return tuple(results)

    def _search(self, hist, totals):
        nodes = totals.shape[0]
        out = (
            np.empty(nodes, np.float32),
            np.empty(nodes, np.int32),
            np.empty(nodes, np.int32),
            np.empty((nodes, self._dim), np.float32),
            np.empty((nodes, self._dim), np.float32),
            np.empty(nodes, np.bool_),
        )
        args = (hist, totals, self._features, self._offsets, self._constants, self._counted)
        _compiled_search()(*args, self._dim, out)
        return out


# ------------------------------------------------------------------ the trees' walk
def _descend(feature, threshold, buckets, is_equality, start, levels, out):
    """`out[i]`: the heap node example i reaches from node `start[i]` of one tree going down
    at most `levels` levels (`tree_ensemble.descend`'s rule: a node of feature -1 is a leaf;
    an inequality split sends ids <= threshold left, an equality split the threshold's id)."""
    for i in range(start.shape[0]):
        node = start[i]
        for _ in range(levels):
            f = feature[node]
            if f < 0:
                break
            x, t = np.int32(buckets[f, i]), threshold[node]
            node = 2 * node + (1 if (x == t if is_equality[f] else x <= t) else 2)
        out[i] = node


def _trees_logits(features, thresholds, values, trees, bias, buckets, is_equality, depth, out):
    """`out` [batch, L]: `bias` plus the leaf values of the first `trees` trees, added one tree
    at a time in float32 (as `tree_growing.Grower` adds them in TensorFlow)."""
    batch = buckets.shape[1]
    leaves = np.empty(batch, np.int32)
    start = np.zeros(batch, np.int32)
    base = np.float32(0.0) + bias
    for i in range(batch):
        out[i, :] = base
    for t in range(trees):
        _descend(features[t], thresholds[t], buckets, is_equality, start, depth, leaves)
        for i in range(batch):
            for j in range(base.shape[0]):
                out[i, j] += values[t, leaves[i], j]


@functools.cache
def _compiled_walk():
    """(`_descend`, `_trees_logits`) compiled, the second calling the first compiled."""
    import numba

    global _descend
    _descend = numba.njit(nogil=True, cache=True)(_descend)
    return _descend, numba.njit(nogil=True, cache=True)(_trees_logits)


class TreeWalk:
    """Where training's examples are in the trees, by a compiled loop (on CPUs): one op
    where `tree_ensemble.traverse_tree` is some eight per level, and the same nodes.
    `buckets`: `tree_ensemble.Columns.values`, [features, batch]."""

    def __init__(self, layout, depth):
        self._is_equality = np.asarray(layout.is_equality, bool)
        self._depth = depth

    def descend(self, feature, threshold, buckets, start, levels):
        """The node each example reaches from `start` [batch] in the tree of `feature` and
        `threshold` [nodes], at most `levels` (a Python int) levels down."""

        def walk(feature, threshold, buckets, start):
            out = np.empty(start.shape[0], np.int32)
            args = (feature, threshold, buckets, self._is_equality, start, levels, out)
            _compiled_walk()[0](*args)
            return out

        nodes = tf.numpy_function(
            walk, [feature, threshold, buckets, start], tf.int32, name="tree_walk"
        )
        nodes.set_shape(start.shape)
        return nodes

    def leaves(self, feature, threshold, buckets):
        """Each example's leaf in one tree, from the root."""
        start = tf.zeros(tf.shape(buckets)[1:], tf.int32)
        return self.descend(feature, threshold, buckets, start, self._depth)

    def logits(self, features, thresholds, values, trees, bias, buckets):
        """[batch, L]: `bias` plus the first `trees` (a scalar tensor) trees' leaf values."""

        def add(features, thresholds, values, trees, bias, buckets):
            out = np.empty((buckets.shape[1], bias.shape[0]), np.float32)
            args = (features, thresholds, values, int(trees), bias, buckets, self._is_equality)
            _compiled_walk()[1](*args, self._depth, out)
            return out

        inputs = [features, thresholds, values, trees, bias, buckets]
        total = tf.numpy_function(add, inputs, tf.float32, name="trees_logits")
        total.set_shape([None, values.shape[-1]])
        return total
