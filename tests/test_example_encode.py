"""ExampleGen's column-at-a-time tf.Example encoder and split hash against protobuf and Python."""

import numpy as np
import pyarrow as pa
import tensorflow as tf

from components.example_gen.encode import serialize_examples, split_indices


def test_serialized_examples_are_protobufs_own_bytes():
    rng = np.random.default_rng(0)
    rows = 2000
    ints = rng.integers(-(2**63), 2**63 - 1, rows)
    ints[:10] = [0, 1, 127, 128, 300, -1, -300, 2**62, 5, 16384]
    floats = rng.normal(size=rows).astype(np.float32)
    texts = ["é" * int(n) for n in rng.integers(0, 200, rows)]  # sizes past one varint byte
    present = {
        name: rng.random(rows) < share for name, share in (("i", 0.7), ("f", 0.5), ("s", 0.9))
    }
    long_key = "k" * 200
    columns = {
        "i": ("INT", pa.array(present["i"]), pa.array(ints[present["i"]])),
        "f": ("FLOAT", pa.array(present["f"]), pa.array(floats[present["f"]])),
        long_key: (
            "BYTES",
            pa.array(present["s"]),
            pa.array(
                [t.encode() for t, p in zip(texts, present["s"], strict=True) if p], pa.binary()
            ),
        ),
    }

    records = serialize_examples(rows, columns).to_pylist()

    assert len(records) == rows
    for row, record in enumerate(records):
        example = tf.train.Example()
        if present["i"][row]:
            example.features.feature["i"].int64_list.value.append(int(ints[row]))
        if present["f"][row]:
            example.features.feature["f"].float_list.value.append(float(floats[row]))
        if present["s"][row]:
            example.features.feature[long_key].bytes_list.value.append(texts[row].encode())
        assert record == example.SerializeToString(deterministic=True), row
    assert b"" in records  # a row with no value at all is an empty Example
    assert serialize_examples(2, {}).to_pylist() == [b"", b""]


def test_split_hash_is_stable_and_keeps_the_weights():
    keys = pa.array([f"row {i}" for i in range(30000)] + ["", "\0"])
    splits = split_indices(keys, np.array([2, 3]))

    assert set(splits.tolist()) == {0, 1}
    assert 0.65 < (splits[:30000] == 0).mean() < 0.68
    assert (split_indices(keys.slice(100, 50), np.array([2, 3])) == splits[100:150]).all()
    # the hash of a key is fixed: a change here would move rows between splits on rerun
    buckets = np.arange(1, 1001)  # one bucket per value of the hash modulo 1000
    assert split_indices(pa.array(["a", "b", "taxi"]), buckets).tolist() == [215, 441, 533]
