"""The Trainer's input_fn gives each worker its own share, however many files there are."""

import numpy as np
import tensorflow as tf

from components.trainer.executor import make_input_fn

SPEC = {
    "x_xf": tf.io.FixedLenFeature([], tf.int64),
    "label_xf": tf.io.FixedLenFeature([], tf.int64),
}


def _write(path, values):
    with tf.io.TFRecordWriter(str(path), options="GZIP") as writer:
        for v in values:
            writer.write(
                tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "x_xf": tf.train.Feature(int64_list=tf.train.Int64List(value=[v])),
                            "label_xf": tf.train.Feature(
                                int64_list=tf.train.Int64List(value=[v % 2])
                            ),
                        }
                    )
                ).SerializeToString()
            )


def _values(input_fn, context=None):
    out = []
    for features, labels in input_fn(context):
        out.extend(features["x_xf"].numpy().tolist())
        assert np.array_equal(labels.numpy(), features["x_xf"].numpy() % 2)
    return sorted(out)


def _shares(tmp_path):
    pattern = str(tmp_path / "*.gz")
    input_fn = make_input_fn(pattern, SPEC, "label_xf", batch_size=4, repeat=False, seed=1)
    shares = [_values(input_fn, tf.distribute.InputContext(2, i, 1)) for i in range(2)]
    return _values(input_fn), shares


def test_one_file_two_workers_split_the_records(tmp_path):
    _write(tmp_path / "a.gz", range(10))
    everything, (first, second) = _shares(tmp_path)
    assert first and second and not set(first) & set(second)
    assert sorted(first + second) == everything == list(range(10))


def test_several_files_two_workers_split_the_files(tmp_path):
    _write(tmp_path / "a.gz", range(5))
    _write(tmp_path / "b.gz", range(5, 10))
    everything, (first, second) = _shares(tmp_path)
    assert {tuple(first), tuple(second)} == {tuple(range(5)), tuple(range(5, 10))}
    assert everything == list(range(10))
