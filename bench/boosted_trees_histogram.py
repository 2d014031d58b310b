"""Boosted trees' layer on a wide table: the histogram the kit's way (a weighted bincount,
feature by feature, kept in that order) against the ways it was computed before (a segment
sum per statistic; a weighted bincount in node order; feature by feature, then gathered
back to node order), and the split search compiled by XLA against the same without it, on
2,000 features (1,800 numbers of 100 buckets, 200 categories of 34) and 6,714 examples, at
1, 8 and 32 nodes in the layer. Prints seconds per layer, the best of `--repeats`, and
checks the histograms agree.

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

from components.trainer.estimator.canned import tree_ensemble
from components.trainer.estimator.canned.tree_growing import TreeParams

NUMBERS, QUANTILES, CATEGORIES, IDS, EXAMPLES = 1800, 100, 200, 34, 6714


class Layout:
    """What `tree_ensemble.histogram` and `best_splits` read of a FeatureLayout."""

    num_buckets = np.array([QUANTILES] * NUMBERS + [IDS] * CATEGORIES, np.int32)
    offsets = np.concatenate([[0], np.cumsum(num_buckets)[:-1]]).astype(np.int32)
    total_buckets = int(num_buckets.sum())
    num_features = NUMBERS + CATEGORIES
    is_equality = np.array([False] * NUMBERS + [True] * CATEGORIES)
    groups = [(0, NUMBERS, QUANTILES)]  # the inequality features' runs of one size
    equality_from = NUMBERS


def segment_sums(x, node, stats, layout, nodes):
    """Before: one segment sum per statistic, bins in node order."""
    total = layout.total_buckets
    segment = tf.reshape(node[:, None] * total + layout.offsets[None, :] + x, [-1])
    columns = [
        tf.math.unsorted_segment_sum(
            tf.reshape(tf.broadcast_to(stats[:, None, j], tf.shape(x)), [-1]),
            segment,
            nodes * total,
        )
        for j in range(stats.shape[-1])
    ]
    return tf.reshape(tf.stack(columns, axis=1), [nodes, total, -1])


def node_order_bincount(x, node, stats, layout, nodes):
    """Before: a weighted bincount per statistic, bins in node order."""
    total = layout.total_buckets
    segment = tf.reshape(node[:, None] * total + layout.offsets[None, :] + x, [-1])
    bins, size = tf.maximum(segment + 1, 0), nodes * total + 1
    columns = [
        tf.math.bincount(
            bins,
            weights=tf.reshape(tf.broadcast_to(stats[:, None, j], tf.shape(x)), [-1]),
            minlength=size,
            maxlength=size,
        )[1:]
        for j in range(stats.shape[-1])
    ]
    return tf.reshape(tf.stack(columns, axis=1), [nodes, total, -1])


def feature_order_gathered(x, node, stats, layout, nodes):
    """Before: bins feature by feature, the ids transposed each layer, the sums gathered
    back to node order."""
    sums = tree_ensemble.histogram(tree_ensemble.Columns.of(x), node, stats, layout, nodes)
    return node_order(sums, layout, nodes)


def node_order(sums, layout, nodes):
    """A feature-by-feature histogram [nodes * total, k] as [nodes, total, k]."""
    return tf.gather(sums, tree_ensemble.node_order(layout, 0, nodes))


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
    columns = tree_ensemble.Columns.of(x)
    probability = rng.uniform(0.05, 0.95, EXAMPLES)
    label = rng.uniform(size=EXAMPLES) < 0.8
    stats = tf.constant(
        np.stack([probability - label, probability * (1 - probability)], 1) / EXAMPLES,
        tf.float32,
    )
    params = TreeParams(200, 6, 0.1, 0.0, 1.0, 0.0, 0.0, False, "none", 0.01, 1, True)
    before = {
        "segment sums": segment_sums,
        "bincount, node order": node_order_bincount,
        "bincount, gathered to node order": feature_order_gathered,
    }
    names = [*before, "kit (feature order)", "split search", "split search, XLA"]
    print(f"{'nodes':>5}  " + "  ".join(f"{name:>32}" for name in names))
    for nodes in (1, 8, 32):
        node = tf.constant(rng.integers(0, nodes, EXAMPLES), tf.int32)
        times, results = [], []
        for way in before.values():
            run = tf.function(functools.partial(way, layout=layout, nodes=nodes))
            run = functools.partial(run, x, node, stats)
            results.append(np.asarray(run()))
            times.append(best_of(args.repeats, run))
        kit = tf.function(
            functools.partial(tree_ensemble.histogram, layout=layout, nodes_in_layer=nodes)
        )
        hist = kit(columns, node, stats)
        results.append(node_order(hist, layout, nodes).numpy())
        times.append(best_of(args.repeats, functools.partial(kit, columns, node, stats)))
        for other in results[1:]:
            np.testing.assert_allclose(other, results[0], rtol=1e-4, atol=1e-6)
        for jit in (False, True):
            search = tf.function(
                functools.partial(
                    tree_ensemble.best_splits, layout=layout, params=params, logits_dimension=1
                ),
                jit_compile=jit,
            )
            search(hist, nodes)
            times.append(best_of(args.repeats, functools.partial(search, hist, nodes)))
        print(f"{nodes:5d}  " + "  ".join(f"{t:31.3f}s" for t in times))


if __name__ == "__main__":
    main()
