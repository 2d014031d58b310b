"""One layer of a tree grown by one op (`LayerStep`, on CPUs): the histogram, the split
search, the splits written into the tree, and the bookkeeping after them (the layer and
tree counters, the leaf cap, post-pruning, a finished tree's logits and each example's
next node), where `tree_growing.Grower._split` builds some eighty TensorFlow ops a layer
and four branches. A small table's layer is mostly those ops' dispatch (2 ms a layer on
the taxi sample, of which the compiled loops 0.6 ms) and their graph a part of every
trace. It computes what they compute, in the same float32 operations: the same trees.

It applies where `DiagonalSplitSearch` does (one logit or a Hessian per logit, the
compiled loops, fewer than `tree_growing.XLA_FROM_BUCKETS` buckets), one batch a layer, and
at least one inequality feature (a node's totals are then its first feature's last running sum, read as
`tree_ensemble.node_totals` reads it; it sums the buckets otherwise, in an order
TensorFlow's reduction does not promise).
"""

import numpy as np
import tensorflow as tf

from components.estimator.canned import tree_histogram


def post_pruned(feature, gain, depth):
    """`tree_ensemble.post_prune` on numpy arrays (one tree's [nodes]): new arrays."""
    feature, gain = feature.copy(), gain.copy()
    for level in reversed(range(depth)):
        ids = np.arange((1 << level) - 1, (1 << (level + 1)) - 1)
        children_leaves = (feature[2 * ids + 1] < 0) & (feature[2 * ids + 2] < 0)
        prune = ids[(feature[ids] >= 0) & children_leaves & (gain[ids] < 0)]
        feature[prune] = -1
        gain[prune] = 0.0
    return feature, gain


def within_leaf_cap(split, gain, leaves, cap):
    """`Grower._within_leaf_cap` in numpy: the splits of most gain (ties in node order)
    that keep the tree within `cap` leaves."""
    if cap is None:
        return split
    order = np.argsort(-np.where(split, gain, -np.inf), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return split & (rank < cap - leaves)


class LayerStep:
    """`(ensemble, ids, stats, nodes, base)` -> the ops that grow one layer (see the module
    docstring); `base` None when nothing is cached between steps (not in memory)."""

    def __init__(self, layout, params, histogram, search):
        self._params = params
        self._histogram, self._search = histogram, search
        self._total = layout.total_buckets
        self._first_buckets = int(layout.num_buckets[0])
        self._is_equality = np.asarray(layout.is_equality, bool)
        self._rate = np.float32(params.learning_rate)

    @staticmethod
    def applies(layout, params, search):
        return (
            isinstance(search, tree_histogram.DiagonalSplitSearch)
            and params.n_batches_per_layer == 1
            and layout.equality_from > 0
        )

    def __call__(self, e, ids, stats, nodes, base):
        in_memory = base is not None
        if not in_memory:
            base = tf.zeros([0, e.logits_dimension])
        tree = e.tree.read_value()
        rows = [e.feature[tree], e.threshold[tree], e.gain[tree], e.value[tree]]
        # Two outputs, the ints and the floats side by side (`_packed`): each output of a
        # numpy_function costs more than the slices that take them apart.
        ints, floats = tf.numpy_function(
            self._step,
            [ids.values, nodes, base, tree, e.layer, *rows, *stats],
            [tf.int32, tf.float32],
            name="grow_layer",
        )
        ints.set_shape([None])
        floats.set_shape([None])
        width, dim = e.nodes, e.logits_dimension
        scalars = ints[2 * width : 2 * width + 3]
        updates = [
            e.feature[tree].assign(ints[:width]),
            e.threshold[tree].assign(ints[width : 2 * width]),
            e.gain[tree].assign(floats[:width]),
            e.value[tree].assign(tf.reshape(floats[width : width * (1 + dim)], [width, dim])),
            e.layer.assign(scalars[0]),
            e.tree.assign(scalars[1]),
            e.finished.assign(tf.cast(scalars[2], tf.bool)),
        ]
        if in_memory:
            new_nodes = tf.ensure_shape(ints[2 * width + 3 :], nodes.shape)
            new_base = tf.reshape(floats[width * (1 + dim) :], [-1, dim])
            updates += [e.cached_nodes.assign(new_nodes), e.cached_base.assign(new_base)]
        with tf.control_dependencies(updates):
            return tf.constant(0)

    def _step(self, buckets, nodes, base, tree, layer, feature, threshold, gain, value, *stats):
        """One layer from the current tree's rows (`feature`, `threshold`, `gain` [nodes],
        `value` [nodes, L]): the new rows, counters, and each example's node and finished
        trees' logits, `_packed`."""
        tree, layer = int(tree), int(layer)
        first = (1 << layer) - 1
        count = first + 1
        # Each example's node in the layer, negative where it is in a leaf above it (the
        # histogram leaves those out; no example is below the layer grown).
        relative = nodes - np.int32(first)
        feature, threshold, gain, value = (np.array(a) for a in (feature, threshold, gain, value))
        absolute = first + np.arange(count)
        exists = (layer == 0) | (feature[np.maximum(absolute - 1, 0) // 2] >= 0)
        found = self._found(buckets, relative, stats, exists)
        leaves = 1 + int(np.count_nonzero(feature >= 0))
        chosen = self._chosen(found, exists, leaves)
        at = first + chosen
        feature[at], threshold[at], gain[at] = (found[i][chosen] for i in (1, 2, 0))
        parent = value[at]
        value[2 * at + 1] = parent + self._rate * found[3][chosen]
        value[2 * at + 2] = parent + self._rate * found[4][chosen]
        action = self._action(chosen.size, layer, leaves + chosen.size)
        rows = (feature, threshold, gain, value)
        return _packed(*self._after(action, rows, buckets, nodes, base, tree, layer))

    def _found(self, buckets, relative, stats, exists):
        """The search's six results for each node of the layer (`relative`: each example's,
        or negative), searched in the nodes that `exists` only (their parent split): a
        leaf-capped tree's deep layers have a few of their 2^layer nodes. The others get ok
        False (they cannot split: `Grower._split` masks them so)."""
        live = np.flatnonzero(exists)
        compact = relative
        if live.size < exists.size:
            position = np.full(exists.size, -1, np.int32)
            position[live] = np.arange(live.size, dtype=np.int32)
            compact = np.where(relative >= 0, position[np.maximum(relative, 0)], -1)
            compact = compact.astype(np.int32)
        hist = self._histogram._sums(buckets, compact, live.size, *stats)
        totals = hist.reshape(live.size, self._total, -1)[:, self._first_buckets - 1]
        found = self._search._search(hist, np.ascontiguousarray(totals))
        if live.size == exists.size:
            return found
        full = tuple(np.zeros((exists.size, *part.shape[1:]), part.dtype) for part in found)
        for whole, part in zip(full, found, strict=True):
            whole[live] = part
        return full

    def _chosen(self, found, exists, leaves):
        """The layer's nodes (0 to count - 1) that split: `Grower._split`'s rule."""
        gain, ok, params = found[0], found[5], self._params
        split = ok & exists
        if params.pruning_mode == "pre":
            split &= gain >= 0
        return np.flatnonzero(within_leaf_cap(split, gain, leaves, params.max_leaf_nodes))

    def _action(self, chosen, layer, leaves_after):
        """'advance' (to the next layer), 'finalize' (the tree) or 'stop' (training), as
        `Grower._split` chooses them; `leaves_after`: the tree's leaves with the new splits."""
        params = self._params
        if chosen:
            complete = layer + 1 >= params.max_depth
            if params.max_leaf_nodes is not None:
                complete |= leaves_after >= params.max_leaf_nodes
            return "finalize" if complete else "advance"
        if params.max_leaf_nodes is None and params.min_samples_leaf == 0:
            return "stop"
        return "finalize" if layer > 0 else "stop"

    def _after(self, action, rows, buckets, nodes, base, tree, layer):
        feature, threshold, gain, value = rows
        finished = False
        if action == "advance":
            layer += 1
            if base.shape[0]:
                nodes = self._descend(feature, threshold, buckets, nodes, 1)
        elif action == "finalize":
            # Each example's leaf: one level below its node in this layer, the tree above
            # it as it was; from the root where post-pruning took splits out.
            start, levels = nodes, 1
            if self._params.pruning_mode == "post":
                feature, gain = post_pruned(feature, gain, self._params.max_depth)
                start, levels = np.zeros_like(nodes), self._params.max_depth
            if base.shape[0]:
                leaves = self._descend(feature, threshold, buckets, start, levels)
                base = base + value[leaves]
                nodes = np.zeros_like(nodes)
            tree, layer = tree + 1, 0
            finished = tree >= self._params.n_trees
        else:
            finished = True
        return (feature, threshold, gain, value), (layer, tree, finished), nodes, base

    def _descend(self, feature, threshold, buckets, start, levels):
        out = np.empty(start.shape[0], np.int32)
        descend = tree_histogram._compiled_walk()[0]
        descend(feature, threshold, buckets, self._is_equality, start, levels, out)
        return out


def _packed(rows, scalars, nodes, base):
    """`LayerStep`'s op's two outputs: int32 [feature row, threshold row, layer, tree,
    finished, nodes...] and float32 [gain row, value row (flat), base (flat)...]."""
    feature, threshold, gain, value = rows
    ints = np.concatenate([feature, threshold, np.array(scalars, np.int32), nodes])
    floats = np.concatenate([gain, value.ravel(), base.ravel()])
    return ints.astype(np.int32, copy=False), floats.astype(np.float32, copy=False)
