"""The Trainer's input_fn gives each worker its own share, however many files there are;
the held-out validation part is copied once, in order, as the filter reads it."""

import numpy as np
import pytest
import tensorflow as tf

from components.trainer import executor
from components.trainer.executor import held_out_copy, make_input_fn

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


def test_the_held_out_copy_is_the_validation_part_in_order_up_to_the_limit(tmp_path):
    _write(tmp_path / "a.gz", range(0, 300))
    _write(tmp_path / "b.gz", range(300, 600))
    pattern = str(tmp_path / "*.gz")

    def read(pattern, part):
        input_fn = make_input_fn(pattern, SPEC, "label_xf", 7, repeat=False, seed=1, part=part)
        return [v for features, _ in input_fn() for v in features["x_xf"].numpy().tolist()]

    validation = read(pattern, "validation")
    assert 30 < len(validation) < 90  # about one in ten, from both files
    assert validation[0] < 300 < validation[-1]
    copies = tmp_path / "copies"
    copies.mkdir()
    path = held_out_copy(pattern, 1000, str(copies))
    assert read(path, None) == validation
    (copies / "validation.gz").unlink()
    assert read(held_out_copy(pattern, 20, str(copies)), None) == validation[:20]


def test_the_folds_partition_the_split_and_fold_0_holds_the_held_out_tenth(tmp_path):
    from components.trainer import length

    _write(tmp_path / "a.gz", range(0, 500))
    pattern = str(tmp_path / "*.gz")

    def read(pattern, part):
        input_fn = make_input_fn(pattern, SPEC, "label_xf", 7, repeat=False, seed=1, part=part)
        return [v for features, _ in input_fn() for v in features["x_xf"].numpy().tolist()]

    folds = [read(pattern, ("validation", k)) for k in range(length.FOLDS)]
    assert sorted(v for fold in folds for v in fold) == list(range(500))  # each in one fold
    assert all(60 < len(fold) < 140 for fold in folds), [len(f) for f in folds]
    assert set(read(pattern, "validation")) <= set(folds[0])
    assert sorted(read(pattern, ("fit", 2)) + folds[2]) == list(range(500))
    copy = held_out_copy(pattern, None, str(tmp_path), fold=3)
    assert read(copy, None) == folds[3]


def test_the_estimator_builds_the_trainers_input_once_a_call(tmp_path):
    """The Trainer's input_fn says it returns a Dataset: the estimator takes the Dataset
    it returns (made before the call or not) without building it in a scratch graph to see
    whether it reads a TF1 iterator.  Unsaid, a Dataset made in the call tells as much:
    input_fn is still called once a call, as tf.estimator 2.15 called it."""
    from components import estimator

    _write(tmp_path / "a.gz", range(10))
    input_fn = make_input_fn(str(tmp_path / "*.gz"), SPEC, "label_xf", 4, repeat=True, seed=1)
    calls = []

    def counted(input_context=None):
        calls.append(input_context)
        return input_fn(input_context)

    counted.returns_dataset = input_fn.returns_dataset
    model = estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x_xf")], model_dir=str(tmp_path / "model")
    )
    model.train(counted, steps=3)
    assert len(calls) == 1
    del counted.returns_dataset
    model.train(counted, steps=3)
    assert len(calls) == 2


def test_a_split_read_again_is_built_once_and_a_cached_one_read_once(tmp_path):
    """Each round calls input_fn again: the whole split, or a split read without repeat,
    comes back as the same dataset (its parse not traced again); a cached one is read from
    memory after the first pass (the file can be gone); a shuffled one is built again, so
    every round reads in the order its seed gives."""
    _write(tmp_path / "a.gz", range(10))
    pattern = str(tmp_path / "*.gz")
    whole = make_input_fn(pattern, SPEC, "label_xf", None, repeat=True, seed=1)
    assert whole() is whole()
    kept = make_input_fn(pattern, SPEC, "label_xf", 4, repeat=False, seed=1, cache=True)
    assert kept() is kept()
    assert _values(kept) == list(range(10))
    (tmp_path / "a.gz").unlink()
    assert _values(kept) == list(range(10))
    assert kept(tf.distribute.InputContext(2, 0, 1)) is not kept()  # a worker's share


def test_a_shuffled_split_is_built_on_every_call_in_its_seeds_order(tmp_path):
    _write(tmp_path / "a.gz", range(40))
    shuffled = make_input_fn(str(tmp_path / "*.gz"), SPEC, "label_xf", 40, repeat=True, seed=1)
    first, second = shuffled(), shuffled()
    assert first is not second

    def batch(dataset):
        return next(iter(dataset))[0]["x_xf"].numpy().tolist()

    assert batch(first) == batch(second) != list(range(40))


def test_a_small_shuffled_split_is_read_once_in_the_same_order(tmp_path, monkeypatch):
    """Read epoch after epoch, a split under MEMORY_SPLIT_BYTES keeps its records in memory
    after the first pass (the file can be gone) and gives the batches it gave from disk."""
    _write(tmp_path / "a.gz", range(40))
    pattern = str(tmp_path / "*.gz")

    def batches(dataset, count):
        return [features["x_xf"].numpy().tolist() for features, _ in dataset.take(count)]

    monkeypatch.setattr(executor, "MEMORY_SPLIT_BYTES", 0)
    from_disk = batches(make_input_fn(pattern, SPEC, "label_xf", 6, repeat=True, seed=1)(), 30)
    monkeypatch.undo()
    in_memory = iter(make_input_fn(pattern, SPEC, "label_xf", 6, repeat=True, seed=1)())
    first = next(in_memory)  # the shuffle buffer holds the whole split: its pass is done
    (tmp_path / "a.gz").unlink()

    rest = [
        features["x_xf"].numpy().tolist() for features, _ in (next(in_memory) for _ in range(29))
    ]
    assert [first[0]["x_xf"].numpy().tolist(), *rest] == from_disk
    assert from_disk[0] != list(range(6))  # shuffled; 30 batches of 6: four and a half epochs


def test_a_build_estimator_declaring_label_key_is_told_the_new_name(tmp_path):
    """The transformed label is offered as transformed_label_key; an old model.py that
    declares label_key fails naming the rename, not with a missing-argument TypeError."""
    old, new = tmp_path / "old_model.py", tmp_path / "new_model.py"
    old.write_text(
        "def build_estimator(run_config, hparams, warm_start_from=None, *, label_key):\n"
        "    return label_key\n"
    )
    new.write_text(
        "def build_estimator(run_config, hparams, warm_start_from=None, *, "
        "transformed_label_key):\n    return transformed_label_key\n"
    )
    offered = {"transformed_label_key": "y_xf", "task": "binary"}
    with pytest.raises(ValueError, match=r"declares label_key; .* transformed_label_key"):
        executor.build_estimator(f"{old}:build_estimator", None, {}, None, offered)
    assert executor.build_estimator(f"{new}:build_estimator", None, {}, None, offered) == "y_xf"
