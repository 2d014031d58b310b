"""Boosted trees' layer on a wide table: the histogram the kit's ways (on CPUs a compiled loop
per feature, its bins summed in a block that stays in cache and written out as running sums
for an inequality feature; where a GPU is visible a weighted bincount over the examples
feature by feature, into node rows, from each example's bucket position, then a cumulative
sum) against the ways it was computed before (a segment sum per statistic; a weighted
bincount over the examples one by one; feature by feature into feature blocks, sliced from
the bucket ids each layer), and the split search as the kit runs it (compiled by XLA, on the
running sums) against the search before 2026-12-04 (the running sums taken under XLA as a
product with a triangle of ones) and against XLA's own cumulative sum, on 2,000 features
(1,800 numbers of 100 buckets, 200 categories of 34) and 6,714 examples, at 1, 8 and 32
nodes in the layer. Prints milliseconds per layer, the best of `--repeats`, and checks the
histograms agree.

    .venv/bin/python bench/boosted_trees_histogram.py [--repeats 5]
"""

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

from components.estimator.canned import tree_ensemble, tree_histogram
from components.estimator.canned.tree_growing import TreeParams

NUMBERS, QUANTILES, CATEGORIES, IDS, EXAMPLES = 1800, 100, 200, 34, 6714


class Layout:
    """What `tree_histogram.LayerHistogram` and `best_splits` read of a FeatureLayout."""

    num_buckets = np.array([QUANTILES] * NUMBERS + [IDS] * CATEGORIES, np.int32)
    offsets = np.concatenate([[0], np.cumsum(num_buckets)[:-1]]).astype(np.int32)
    total_buckets = int(num_buckets.sum())
    num_features = NUMBERS + CATEGORIES
    is_equality = np.array([False] * NUMBERS + [True] * CATEGORIES)
    groups = [(0, NUMBERS, QUANTILES)]  # the inequality features' runs of one size
    equality_from = NUMBERS
    bucket_dtype = tf.uint8


def segment_sums(x, node, stats, layout, nodes):
    """Before: one segment sum per statistic."""
    total = layout.total_buckets
    segment = tf.reshape(node[:, None] * total + layout.offsets[None, :] + x, [-1])
    return [
        tf.math.unsorted_segment_sum(
            tf.reshape(tf.broadcast_to(stats[:, None, j], tf.shape(x)), [-1]),
            segment,
            nodes * total,
        )
        for j in range(stats.shape[-1])
    ]


def examples_bincount(x, node, stats, layout, nodes):
    """Before: a weighted bincount per statistic over the examples one by one."""
    total = layout.total_buckets
    segment = tf.reshape(node[:, None] * total + layout.offsets[None, :] + x, [-1])
    return [
        tf.math.bincount(
            segment,
            weights=tf.reshape(tf.broadcast_to(stats[:, None, j], tf.shape(x)), [-1]),
            minlength=nodes * total,
            maxlength=nodes * total,
        )
        for j in range(stats.shape[-1])
    ]


def feature_blocks(ids, node, stats, layout, nodes):
    """Before (to stop 39): feature by feature into a [nodes, buckets] block per feature,
    the bins of each group of one size from the bucket ids kept feature by feature
    ([features, batch]), sliced from all of them each layer; gathered here to node rows to
    compare."""
    parts = []
    for first, count, buckets in layout.groups:
        starts = tf.range(count)[:, None] * (buckets * nodes)
        parts.append((first, count, starts + (node * buckets)[None, :], count * buckets))
    equality = layout.equality_from
    offsets = layout.offsets[equality:] - layout.offsets[equality]
    sizes = tf.constant(layout.num_buckets[equality:])
    starts = tf.constant(offsets)[:, None] * nodes + node[None, :] * sizes[:, None]
    size = layout.total_buckets - int(layout.offsets[equality])
    parts.append((equality, layout.num_features - equality, starts, size))
    blocks = []
    for first, count, starts, size in parts:
        columns = ids[first : first + count]
        bins = tf.reshape(columns + starts, [-1])
        sums = [
            tf.raw_ops.DenseBincount(
                input=bins,
                size=size * nodes,
                weights=tf.reshape(tf.broadcast_to(stats[None, :, j], tf.shape(columns)), [-1]),
            )
            for j in range(stats.shape[-1])
        ]
        blocks.append(tf.stack(sums, axis=1))
    sums = tf.concat(blocks, axis=0)
    return tf.unstack(tf.gather(sums, block_to_node_rows(layout, nodes)), axis=1)


def block_to_node_rows(layout, nodes):
    """Where each (node, position) of node rows is in feature blocks, [nodes * total]."""
    feature = np.repeat(np.arange(layout.num_features), layout.num_buckets)
    within = np.arange(len(feature)) - layout.offsets[feature]
    node = np.arange(nodes)[:, None]
    rows = layout.offsets[feature][None, :] * nodes + node * layout.num_buckets[feature] + within
    return rows.reshape(-1)


def kit_compiled(ids, node, stats, layout, nodes):
    """The kit's on CPUs (`tree_histogram.LayerHistogram`), from `Columns`."""
    return tree_histogram.LayerHistogram(layout, compiled=True)(ids, node, stats, nodes)


def kit_bincount(ids, node, stats, layout, nodes):
    """The kit's where a GPU is visible (on CPUs too until 2026-12-03), from `Columns`."""
    return tree_histogram.LayerHistogram(layout, compiled=False)(ids, node, stats, nodes)


def running_sums_by_product(plain, layout, nodes):
    """`plain` [nodes * total, k] with each inequality feature's buckets summed running, as
    the split search did until 2026-12-04: a product with a triangle of ones."""
    k = plain.shape[-1]
    sums = tf.reshape(plain, [nodes, layout.total_buckets, k])
    parts = []
    for first, count, buckets in layout.groups:
        begin = int(layout.offsets[first])
        block = tf.reshape(sums[:, begin : begin + count * buckets], [nodes, count, buckets, k])
        block = tf.reshape(tf.transpose(block, [0, 1, 3, 2]), [-1, buckets])
        block = block @ np.triu(np.ones((buckets, buckets), np.float32))
        block = tf.transpose(tf.reshape(block, [nodes, count, k, buckets]), [0, 1, 3, 2])
        parts.append(tf.reshape(block, [nodes, -1, k]))
    parts.append(sums[:, begin + count * buckets :])
    return tf.reshape(tf.concat(parts, axis=1), [-1, k])


def running_sums_by_cumsum(plain, layout, nodes):
    """The same with XLA's cumulative sum (a sum over a window per element)."""
    return tree_histogram.LayerHistogram(layout, compiled=False)._running_sums(plain, nodes)


def best_of(repeats, run):
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    layout = Layout()
    x = tf.constant(
        np.minimum(
            rng.integers(0, QUANTILES, (EXAMPLES, layout.num_features)), layout.num_buckets - 1
        ),
        tf.int32,
    )
    probability = rng.uniform(0.05, 0.95, EXAMPLES)
    label = rng.uniform(size=EXAMPLES) < 0.8
    stats = tf.constant(
        np.stack([probability - label, probability * (1 - probability)], 1) / EXAMPLES,
        tf.float32,
    )
    params = TreeParams(200, 6, 0.1, 0.0, 1.0, 0.0, 0.0, False, "none", 0.01, 1, True)
    # Each way with the ids as it keeps them between layers: example by example; feature by
    # feature; the kit's (`Columns`, a byte an id), computed once per train() call.
    columns = tree_ensemble.Columns.of(x, layout)
    int32_columns = tree_ensemble.Columns(tf.cast(tf.transpose(x), tf.int32))
    ways = {
        "segment sums": (segment_sums, x),
        "bincount, examples": (examples_bincount, x),
        "bincount, feature blocks": (feature_blocks, tf.transpose(x)),
        "kit, GPU: bincount, node rows": (kit_bincount, columns),
        "kit, CPU: loop, int32 ids (before)": (kit_compiled, int32_columns),
        "kit, CPU: compiled loop": (kit_compiled, columns),
    }
    # Each search from the histogram its way takes: running sums (the kit's), or plain.
    searches = {
        "before: product + search, XLA": running_sums_by_product,
        "XLA's cumsum + search, XLA": running_sums_by_cumsum,
        "kit: search, XLA": None,
    }
    names = [*ways, *searches]
    print("ms per layer")
    print(f"{'nodes':>5}  " + "  ".join(f"{name:>30}" for name in names))
    for nodes in (1, 8, 32):
        node = tf.constant(rng.integers(0, nodes, EXAMPLES), tf.int32)
        times, results = [], []
        for way, ids in ways.values():
            run = functools.partial(way, layout=layout)
            run = functools.partial(tf.function(run), ids, node, stats, nodes=nodes)
            result = run()  # [nodes * total, k], or (the ways before) k [nodes * total]
            results.append(np.stack(result, axis=-1) if isinstance(result, list) else result)
            times.append(best_of(args.repeats, run))
        plain = tf.constant(results[0])
        running = running_sums_by_cumsum(plain, layout, nodes).numpy()
        for name, other in zip(ways, results, strict=True):
            expected = running if name.startswith("kit") else results[0]
            np.testing.assert_allclose(other, expected, rtol=1e-4, atol=1e-6)
        hist = kit_compiled(columns, node, stats, layout, nodes)
        for running_sums in searches.values():

            def search(hist, nodes, running_sums=running_sums):
                if running_sums is not None:
                    hist = running_sums(hist, layout, nodes)
                return tree_ensemble.best_splits(hist, nodes, layout, params, 1)

            search = tf.function(search, jit_compile=True)
            source = hist if running_sums is None else plain
            search(source, nodes)
            times.append(best_of(args.repeats, functools.partial(search, source, nodes)))
        print(f"{nodes:5d}  " + "  ".join(f"{1000 * t:30.1f}" for t in times))


if __name__ == "__main__":
    main()
