"""Boosted trees' layer histogram: the sums of each example's statistics per (node in the
layer, feature, bucket), the input of the split search (`tree_ensemble.best_splits`).

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
    `buckets`."""
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
    block = np.empty((k, nodes * widest), np.float32)  # one feature's bins, in every node
    bins = np.empty(batch, np.int32)
    carried = np.empty(k, np.float32)
    for f in range(begin, end):
        size, start = sizes[f], offsets[f]
        outside = False
        for i in range(batch):
            bucket = np.int32(buckets[f, i])
            outside |= (bucket < 0) | (bucket >= size)
            bins[i] = node_of[i] * size + bucket
        if outside:
            raise IndexError("a bucket id outside its feature's buckets")
        for j in range(k):
            sums, weights = block[j], by_statistic[j]
            sums[: nodes * size] = 0.0
            for i in range(batch):
                sums[bins[i]] += weights[i]
        for n in range(nodes):
            row = n * total + start
            carried[:] = 0.0
            for b in range(size):
                for j in range(k):
                    value = block[j, n * size + b]
                    if running[f]:
                        carried[j] += value
                        value = carried[j]
                    out[row + b, j] = value


@functools.cache
def _compiled():
    """`_sum_features` compiled, out of the GIL, cached on disk; numba is imported here, on
    first use, not by every import of the estimators (0.7 s)."""
    import numba

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
        if compiled is None:
            compiled = not tf.config.list_logical_devices("GPU")
        self.compiled = compiled

    def __call__(self, ids, node_in_layer, stats, nodes_in_layer):
        if not self.compiled:
            return self._bincounts(ids, node_in_layer, stats, nodes_in_layer)
        hist = tf.numpy_function(
            self._sums,
            [ids.values, node_in_layer, stats, tf.convert_to_tensor(nodes_in_layer, tf.int32)],
            tf.float32,
            name="layer_histogram",
        )
        hist.set_shape([None, stats.shape[-1]])
        return hist

    def _sums(self, buckets, node, stats, nodes):
        rows, k = int(nodes) * self._total, stats.shape[1]
        # A fresh array each layer: tf.numpy_function may keep an aligned one as its tensor.
        out = np.empty((rows, k), np.float32)
        args = (buckets, node, np.ascontiguousarray(stats), self._offsets, self._sizes)
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
        per thread."""
        work = np.cumsum(batch + nodes * self._sizes.astype(np.int64))
        cuts = np.searchsorted(work, work[-1] * np.arange(1, _THREADS) / _THREADS)
        bounds = np.unique(np.concatenate([[0], cuts, [len(self._sizes)]]))
        return [(int(b), int(e)) for b, e in itertools.pairwise(bounds)]

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
