"""Boosted trees' layer histogram on a wide table: the kit's (a weighted bincount, feature
by feature) against the two ways it was computed before (a segment sum per statistic; a
weighted bincount in node order), on 2,000 features (1,800 numbers of 100 buckets, 200
categories of 34) and 6,714 examples, at 1, 8 and 32 nodes in the layer. Prints seconds
per layer, the best of `--repeats`, and checks the three agree.

    .venv/bin/python bench/boosted_trees_histogram.py [--repeats 5]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

from components.trainer.estimator.canned import tree_ensemble

NUMBERS, QUANTILES, CATEGORIES, IDS, EXAMPLES = 1800, 100, 200, 34, 6714


class Layout:
    """What `tree_ensemble.histogram` reads of a FeatureLayout."""

    num_buckets = np.array([QUANTILES] * NUMBERS + [IDS] * CATEGORIES, np.int32)
    offsets = np.concatenate([[0], np.cumsum(num_buckets)[:-1]]).astype(np.int32)
    total_buckets = int(num_buckets.sum())
    num_features = NUMBERS + CATEGORIES


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
    stats = tf.constant(rng.normal(size=(EXAMPLES, 2)).astype(np.float32))
    ways = {
        "segment sums (before)": segment_sums,
        "bincount, node order (before)": node_order_bincount,
        "bincount, feature by feature (now)": tree_ensemble.histogram,
    }
    print(f"{'nodes':>5}  " + "  ".join(f"{name:>36}" for name in ways))
    for nodes in (1, 8, 32):
        node = tf.constant(rng.integers(0, nodes, EXAMPLES), tf.int32)
        results, times = [], []
        for way in ways.values():
            run = tf.function(
                lambda x, node, stats, way=way, nodes=nodes: way(x, node, stats, layout, nodes)
            )
            results.append(run(x, node, stats).numpy())
            best = float("inf")
            for _ in range(args.repeats):
                began = time.perf_counter()
                run(x, node, stats).numpy()
                best = min(best, time.perf_counter() - began)
            times.append(best)
        for other in results[1:]:
            np.testing.assert_allclose(other, results[0], rtol=1e-4, atol=1e-3)
        print(f"{nodes:5d}  " + "  ".join(f"{t:35.3f}s" for t in times))


if __name__ == "__main__":
    main()
