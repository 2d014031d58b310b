"""Columns to serialized `tf.Example`s and split indices, a batch at a time, in Arrow and numpy.

The bytes are exactly what `tf.train.Example.SerializeToString(deterministic=True)` writes
for the same values (features in name order, packed lists, one value per present cell), so
the row-at-a-time path for files with bad rows and this one write identical records. Every
protobuf message is "tag, varint size, payload": the sizes of every row are computed first
as numpy arrays, then each piece is written for all rows at once into one buffer.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Field tags (field number << 3 | wire type 2, length-delimited) of the tf.Example protos.
_PAYLOAD_TAG = 0x0A  # BytesList / FloatList / Int64List: `value`, packed for numbers
_FEATURE_TAG = {"BYTES": 0x0A, "FLOAT": 0x12, "INT": 0x1A}  # Feature: the kind's list
_MAP_KEY_TAG, _MAP_VALUE_TAG = 0x0A, 0x12  # Features.feature map entry: key, value
_ENTRY_TAG = 0x0A  # Features: `feature` (one map entry)
_FEATURES_TAG = 0x0A  # Example: `features`
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], np.uint64)

# Split hashing: a polynomial hash of the key's UTF-8 bytes, mixed by splitmix64's finalizer.
_HASH_BASE = np.uint64(0x100000001B3)


def _varint(value: int) -> bytes:
    """The varint encoding of one non-negative int."""
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes in the varint of each uint64 of `values`."""
    return 1 + np.searchsorted(_VARINT_LIMITS, values.astype(np.uint64), side="right")


def _put(out: np.ndarray, at: np.ndarray, pieces: np.ndarray) -> None:
    """Writes row i of the (rows, width) uint8 `pieces` at `out[at[i]:]`, a byte column at a
    time (an index per byte of every row would cost more than the copy)."""
    for column in range(pieces.shape[1]):
        out[at + column] = pieces[:, column]


def _put_varints(out: np.ndarray, at: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> None:
    """Writes each uint64 of `values` as a varint of `sizes` bytes at `out[at:]`."""
    values = values.astype(np.uint64)
    for position in range(int(sizes.max(initial=0))):
        rows = sizes > position
        digit = ((values[rows] >> np.uint64(7 * position)) & np.uint64(0x7F)).astype(np.uint8)
        digit[sizes[rows] > position + 1] |= 0x80
        out[at[rows] + position] = digit


class _Field:
    """A column's `Features.feature` entries for its present rows: their sizes, then their
    bytes. Each entry is (tag, size) before every nested message and one value."""

    def __init__(self, name: str, kind: str, rows: np.ndarray, values: pa.Array):
        self.kind, self.rows, self.values = kind, rows, values
        if kind == "FLOAT":
            self.payload = np.full(len(rows), 4, np.int64)
        elif kind == "INT":
            self.numbers = values.to_numpy(zero_copy_only=False).view(np.uint64)
            self.payload = _varint_sizes(self.numbers)
        else:
            self.payload = pc.binary_length(values).to_numpy(zero_copy_only=False).astype(np.int64)
        key = name.encode("utf-8")
        self.key = bytes([_MAP_KEY_TAG]) + _varint(len(key)) + key + bytes([_MAP_VALUE_TAG])
        self.list_size = 1 + _varint_sizes(self.payload) + self.payload
        self.feature_size = 1 + _varint_sizes(self.list_size) + self.list_size
        self.entry_size = len(self.key) + _varint_sizes(self.feature_size) + self.feature_size
        self.size = 1 + _varint_sizes(self.entry_size) + self.entry_size

    def write(self, out: np.ndarray, at: np.ndarray) -> None:
        """Writes row i's entry at `out[at[i]:]`."""
        constant = bytearray([_ENTRY_TAG])
        for size, then in (
            (self.entry_size, self.key),
            (self.feature_size, bytes([_FEATURE_TAG[self.kind]])),
            (self.list_size, bytes([_PAYLOAD_TAG])),
            (self.payload, b""),
        ):
            if (size == size[0]).all():  # the same size in every row: part of the constant
                constant += _varint(int(size[0]))
            else:
                _put(out, at, np.frombuffer(bytes(constant), np.uint8)[None, :])
                at = at + len(constant)
                sizes = _varint_sizes(size)
                _put_varints(out, at, size, sizes)
                at = at + sizes
                constant = bytearray()
            constant += then
        _put(out, at, np.frombuffer(bytes(constant), np.uint8)[None, :])
        at = at + len(constant)
        if self.kind == "FLOAT":
            data = np.ascontiguousarray(self.values.to_numpy(zero_copy_only=False), "<f4")
            _put(out, at, data.view(np.uint8).reshape(-1, 4))
        elif self.kind == "INT":
            _put_varints(out, at, self.numbers, self.payload)
        else:
            values = self.values.cast(pa.large_binary())
            offsets = np.frombuffer(values.buffers()[1], np.int64)[
                values.offset : values.offset + len(values) + 1
            ]
            data = np.frombuffer(values.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
            out[
                np.repeat(at - (offsets[:-1] - offsets[0]), self.payload) + np.arange(len(data))
            ] = data


def serialize_examples(rows: int, columns: dict[str, tuple[str, pa.Array, pa.Array]]) -> pa.Array:
    """Serialized `tf.Example`s of `rows` rows, as a binary array.

    `columns` maps each feature name to (INT|FLOAT|BYTES, present: boolean array of `rows`,
    values: one int64 / float32 / binary value per present row, in row order). An absent
    cell is an absent feature.
    """
    fields = []
    features_size = np.zeros(rows, np.int64)
    for name in sorted(columns):
        kind, present, values = columns[name]
        where = np.flatnonzero(present.to_numpy(zero_copy_only=False))
        if len(where):
            fields.append(_Field(name, kind, where, values))
            features_size[where] += fields[-1].size
    written = features_size > 0  # an Example with no feature writes no `features` at all
    header = _varint_sizes(features_size) + 1
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(np.where(written, header + features_size, 0), out=offsets[1:])
    out = np.empty(offsets[-1], np.uint8)
    at = offsets[:-1][written]
    out[at] = _FEATURES_TAG
    _put_varints(out, at + 1, features_size[written], header[written] - 1)
    cursor = offsets[:-1] + header
    for field in fields:
        field.write(out, cursor[field.rows])
        cursor[field.rows] += field.size
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(out)]
    )


def split_indices(keys: pa.Array, bounds: np.ndarray) -> np.ndarray:
    """Index of the split each key falls in: its hash modulo the total weight, placed among
    the cumulative weights `bounds` (e.g. [2, 3] for train 2, eval 1). Stable across runs,
    machines and batchings."""
    keys = keys.cast(pa.large_binary())
    offsets = np.frombuffer(keys.buffers()[1], np.int64)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(keys.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
    starts = offsets[:-1] - offsets[0]
    lengths = np.diff(offsets)
    # byte j of a key of length n weighs BASE ** (n - 1 - j): Horner's rule, vectorized
    from_end = np.repeat(starts + lengths, lengths) - np.arange(len(data)) - 1
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(max(int(lengths.max(initial=0)), 1), _HASH_BASE))
        powers = np.concatenate([[np.uint64(1)], powers[:-1]])
        weighted = data.astype(np.uint64) * powers[from_end]
        sums = np.zeros(len(keys), np.uint64)
        nonempty = lengths > 0
        sums[nonempty] = np.add.reduceat(weighted, starts[nonempty])
        sums += lengths.astype(np.uint64)  # "" and "\0" differ
        sums ^= sums >> np.uint64(30)
        sums *= np.uint64(0xBF58476D1CE4E5B9)
        sums ^= sums >> np.uint64(27)
        sums *= np.uint64(0x94D049BB133111EB)
        sums ^= sums >> np.uint64(31)
    return np.searchsorted(bounds, sums % np.uint64(bounds[-1]), side="right")
