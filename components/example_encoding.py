"""Columns to serialized `tf.Example`s, a batch at a time, in Arrow and numpy.

The bytes are exactly what `tf.train.Example.SerializeToString(deterministic=True)` writes
for the same values (features in name order, packed number lists), so the same rows give
the same records in every process; tfx_bsl's encoder writes a process-dependent feature
order. ExampleGen writes one value per present cell (`serialize_examples`; its row-at-a-time
path for files with bad rows writes the same bytes); the Transform writes its list columns
(`serialize_list_columns`). Every protobuf message is "tag, varint size, payload": the
sizes of every row are computed first as numpy arrays, then each piece is written for all
rows at once into one buffer.
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


def _row_sums(per_value: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sum of each row's run of `per_value` (rows of `lengths` values from `starts`)."""
    cumulative = np.concatenate([[0], np.cumsum(per_value)])
    return cumulative[starts + lengths] - cumulative[starts]


def _offsets_in_row(per_value: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
    """Where each value begins within its row when a row's values take `per_value` bytes."""
    before = np.cumsum(per_value) - per_value
    return before - np.repeat(before[starts[lengths > 0]], lengths[lengths > 0])


class _Field:
    """A column's `Features.feature` entries for its present rows: their sizes, then their
    bytes. `rows` are the present rows, `lengths` their numbers of values (None: one each,
    which skips the bookkeeping of lists) and `values` all of them in row order; an entry
    is (tag, size) before every nested message and value."""

    def __init__(self, name, kind, rows, lengths, values):
        self.kind, self.rows, self.lengths, self.values = kind, rows, lengths, values
        if kind == "FLOAT":
            self.value_sizes = np.full(len(values), 4, np.int64)
        elif kind == "INT":
            self.numbers = values.to_numpy(zero_copy_only=False).view(np.uint64)
            self.value_sizes = _varint_sizes(self.numbers)
        else:
            self.bytes_sizes = pc.binary_length(values).to_numpy(zero_copy_only=False)
            self.bytes_sizes = self.bytes_sizes.astype(np.int64)
            self.value_sizes = 1 + _varint_sizes(self.bytes_sizes) + self.bytes_sizes
        if lengths is None:
            self.data = self.value_sizes
        else:
            self.starts = np.cumsum(lengths) - lengths  # each row's first value
            self.data = _row_sums(self.value_sizes, self.starts, lengths)
        # A number list is one packed field, left out when empty; bytes are a field each.
        self.packed = kind != "BYTES" and (lengths is None or bool((lengths > 0).all()))
        if kind == "BYTES":
            self.list_size = self.data
        elif self.packed:
            self.list_size = 1 + _varint_sizes(self.data) + self.data
        else:
            self.list_size = np.where(lengths > 0, 1 + _varint_sizes(self.data) + self.data, 0)
        key = name.encode("utf-8")
        self.key = bytes([_MAP_KEY_TAG]) + _varint(len(key)) + key + bytes([_MAP_VALUE_TAG])
        self.feature_size = 1 + _varint_sizes(self.list_size) + self.list_size
        self.entry_size = len(self.key) + _varint_sizes(self.feature_size) + self.feature_size
        self.size = 1 + _varint_sizes(self.entry_size) + self.entry_size

    def write(self, out: np.ndarray, at: np.ndarray) -> None:
        """Writes row i's entry at `out[at[i]:]`."""
        chain = [
            (self.entry_size, self.key),
            (self.feature_size, bytes([_FEATURE_TAG[self.kind]])),
            (self.list_size, bytes([_PAYLOAD_TAG]) if self.packed else b""),
        ]
        if self.packed:
            chain.append((self.data, b""))
        at = self._write_chain(out, at, chain)
        if self.kind != "BYTES" and not self.packed:  # the packed header where non-empty
            some = self.lengths > 0
            at = at.copy()
            at[some] = self._write_chain(out, at[some], [(self.data[some], b"")], _PAYLOAD_TAG)
        if self.lengths is None:
            value_at = at
        else:
            value_at = np.repeat(at, self.lengths) + _offsets_in_row(
                self.value_sizes, self.starts, self.lengths
            )
        if self.kind == "FLOAT":
            data = np.ascontiguousarray(self.values.to_numpy(zero_copy_only=False), "<f4")
            _put(out, value_at, data.view(np.uint8).reshape(-1, 4))
        elif self.kind == "INT":
            _put_varints(out, value_at, self.numbers, self.value_sizes)
        else:
            out[value_at] = _PAYLOAD_TAG
            sizes = _varint_sizes(self.bytes_sizes)
            _put_varints(out, value_at + 1, self.bytes_sizes, sizes)
            self._write_bytes(out, value_at + 1 + sizes)

    @staticmethod
    def _write_chain(out, at, chain, first=None):
        """Writes `first` (a tag) then, for each (sizes, then) of `chain`, each row's size as
        a varint and the bytes `then`; sizes equal in every row are written as constants.
        Returns where each row's writing ended."""
        constant = bytearray([_ENTRY_TAG if first is None else first])
        for size, then in chain:
            if len(size) and (size == size[0]).all():  # one size for all: part of the constant
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
        return at + len(constant)

    def _write_bytes(self, out, at):
        """Copies each bytes value to `out[at[i]:]`."""
        values = self.values.cast(pa.large_binary())
        offsets = np.frombuffer(values.buffers()[1], np.int64)[
            values.offset : values.offset + len(values) + 1
        ]
        data = np.frombuffer(values.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
        out[
            np.repeat(at - (offsets[:-1] - offsets[0]), self.bytes_sizes) + np.arange(len(data))
        ] = data


def _serialize(rows: int, fields: dict) -> pa.Array:
    """Serialized tf.Examples of `rows` rows from {name: (kind, present rows, lengths or
    None, values)} (`_Field`'s), features in name order."""
    built = []
    features_size = np.zeros(rows, np.int64)
    for name in sorted(fields):
        kind, where, lengths, values = fields[name]
        if len(where):
            built.append(_Field(name, kind, where, lengths, values))
            features_size[where] += built[-1].size
    written = features_size > 0  # an Example with no feature writes no `features` at all
    header = _varint_sizes(features_size) + 1
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(np.where(written, header + features_size, 0), out=offsets[1:])
    out = np.empty(offsets[-1], np.uint8)
    at = offsets[:-1][written]
    out[at] = _FEATURES_TAG
    _put_varints(out, at + 1, features_size[written], header[written] - 1)
    cursor = offsets[:-1] + header
    for field in built:
        field.write(out, cursor[field.rows])
        cursor[field.rows] += field.size
    return pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(out)]
    )


def serialize_examples(rows: int, columns: dict[str, tuple[str, pa.Array, pa.Array]]) -> pa.Array:
    """Serialized `tf.Example`s of `rows` rows, as a binary array.

    `columns` maps each feature name to (INT|FLOAT|BYTES, present: boolean array of `rows`,
    values: one int64 / float32 / binary value per present row, in row order). An absent
    cell is an absent feature.
    """
    fields = {}
    for name, (kind, present, values) in columns.items():
        where = np.flatnonzero(present.to_numpy(zero_copy_only=False))
        fields[name] = (kind, where, None, values)
    return _serialize(rows, fields)


# The list value types tfx_bsl's encoder takes, by kind.
_KINDS = {
    pa.int64(): "INT",
    pa.float32(): "FLOAT",
    pa.binary(): "BYTES",
    pa.large_binary(): "BYTES",
}


def serialize_list_columns(batch: pa.RecordBatch) -> pa.Array | None:
    """Serialized `tf.Example`s of a batch whose columns are lists of numbers or bytes (a
    null list is an absent feature, an empty one a feature with no values), as a binary
    array; None when a column is anything else (nested lists; values of another type,
    which tfx_bsl's encoder refuses too)."""
    fields = {}
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
            return None
        kind = _KINDS.get(column.type.value_type)
        if kind is None:
            return None
        where = np.flatnonzero(column.is_valid().to_numpy(zero_copy_only=False))
        lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)[where]
        lengths = None if (lengths == 1).all() else lengths.astype(np.int64)
        fields[name] = (kind, where, lengths, pc.list_flatten(column))
    return _serialize(batch.num_rows, fields)
