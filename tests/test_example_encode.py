"""ExampleGen's column-at-a-time tf.Example encoder and split hash against protobuf and Python."""

import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf

from components.example_encoding import serialize_examples, serialize_list_columns
from components.example_gen.split_hash import split_indices


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


def test_list_columns_are_protobufs_own_bytes_with_null_and_empty_lists():
    """The Transform's columns: lists of any length, [] a feature with no values, as
    tfx_bsl's encoder writes them (in a feature order not fixed from process to process);
    a null list an absent feature (tfx_bsl writes an empty `Feature {}`: parsed the same)."""
    from tfx_bsl.coders import example_coder

    rng = np.random.default_rng(1)
    rows = 500

    def lists(make):
        out = []
        for _ in range(rows):
            draw = rng.random()
            out.append(None if draw < 0.1 else [] if draw < 0.2 else make(rng.integers(1, 6)))
        return out

    columns = {
        "f": (pa.large_list(pa.float32()), lists(lambda n: rng.normal(size=n).tolist())),
        "i": (
            pa.large_list(pa.int64()),
            lists(lambda n: rng.integers(-(2**63), 2**63 - 1, n).tolist()),
        ),
        "s": (
            pa.large_list(pa.large_binary()),
            lists(lambda n: [("é" * int(k)).encode() for k in rng.integers(0, 90, n)]),
        ),
        "t": (pa.list_(pa.binary()), lists(lambda n: [b"x" * int(k) for k in range(n)])),
        "one": (pa.large_list(pa.float32()), [[float(r)] for r in range(rows)]),
    }
    batch = pa.RecordBatch.from_arrays(
        [pa.array(values, kind) for kind, values in columns.values()], list(columns)
    )

    records = serialize_list_columns(batch).to_pylist()

    theirs = example_coder.RecordBatchToExamplesEncoder().encode(batch)
    assert len(records) == rows
    for row, (record, their) in enumerate(zip(records, theirs, strict=True)):
        expected = tf.train.Example.FromString(their)
        for name in [n for n, f in expected.features.feature.items() if not f.WhichOneof("kind")]:
            del expected.features.feature[name]  # tfx_bsl's null: `Feature {}`, read as absent
        assert record == expected.SerializeToString(deterministic=True), row
    # a slice of a batch (offset buffers) encodes as the same rows did
    assert serialize_list_columns(batch.slice(123, 40)).to_pylist() == records[123:163]
    for other in (pa.list_(pa.list_(pa.int64())), pa.list_(pa.float64()), pa.list_(pa.string())):
        unsupported = pa.RecordBatch.from_arrays([pa.array([None], other)], ["n"])
        assert serialize_list_columns(unsupported) is None


def _reference_split(key: bytes, total: int) -> int:
    """The split hash a byte at a time in Python: Horner's rule, then splitmix64's mix."""
    mask = (1 << 64) - 1
    value = 0
    for byte in key:
        value = (value * 0x100000001B3 + byte) & mask
    value = (value + len(key)) & mask
    value ^= value >> 30
    value = (value * 0xBF58476D1CE4E5B9) & mask
    value ^= value >> 27
    value = (value * 0x94D049BB133111EB) & mask
    value ^= value >> 31
    return value % total


@pytest.mark.parametrize("shape", ["many_short_keys", "few_long_keys"])
def test_split_hash_equals_the_byte_at_a_time_hash(shape):
    """Short keys (a narrow table's rows) and keys longer than the batch has rows (a wide
    table's: 16 KB each) are laid out differently before hashing; the hash is the same."""
    rng = np.random.default_rng(3)
    rows, longest = (3000, 40) if shape == "many_short_keys" else (30, 20000)
    keys = [
        bytes(rng.integers(0, 256, int(n), dtype=np.uint8)) for n in rng.integers(0, longest, rows)
    ]
    keys += [b"", b"\0"]
    total = 1_000_003
    splits = split_indices(pa.array(keys, pa.binary()), np.arange(1, total + 1))
    assert splits.tolist() == [_reference_split(key, total) for key in keys]
