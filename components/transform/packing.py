"""A wide table's raw columns packed into two tensors before tf.Transform sees them, and
again in serving.

tf.Transform traces, checks, saves and loads its graph input by input, and checks every
analyzer against every input: on 2,000 raw columns that work took minutes before a row was
read. With a `Packing`, the Transform hands the preprocessing_fn, instead of the columns it
lists:

- `NUMBERS`: float32 [batch, n], the number columns (INT or FLOAT) side by side in their
  order, NaN where a value is missing;
- `TEXTS`: string [batch, m], the text columns (BYTES, and INT as its decimal text), "" where
  a value is missing;

and every other raw column as before. A packed column holds at most one value a row.

The packing is written beside the transform graph (`PACKING_FILE`); serving parses the raw
examples as before and packs them the same way (`parse_packed`) before the
transform graph runs, so clients still send one feature per column.
"""

import dataclasses
import functools
import json
import os

import numpy as np
import pyarrow as pa

from components.transform.tensors import dense

NUMBERS = "__numbers__"
TEXTS = "__texts__"
PACKING_FILE = "packing.json"


@dataclasses.dataclass(frozen=True)
class Packing:
    """The raw columns packed, as ((name, INT|FLOAT|BYTES), ...) in their packed order."""

    numbers: tuple = ()
    texts: tuple = ()

    def __post_init__(self):
        for name, kind in self.numbers:
            if kind not in ("INT", "FLOAT"):
                raise ValueError(f"packing: number column {name!r} is {kind}, not INT or FLOAT.")
        for name, kind in self.texts:
            if kind not in ("INT", "BYTES"):
                raise ValueError(f"packing: text column {name!r} is {kind}, not BYTES or INT.")

    @functools.cached_property
    def columns(self) -> frozenset:
        # Cached: looked up once per column of every batch.
        return frozenset(name for name, _ in (*self.numbers, *self.texts))

    def write(self, transform_graph_dir: str) -> None:
        import tensorflow as tf

        with tf.io.gfile.GFile(os.path.join(transform_graph_dir, PACKING_FILE), "w") as f:
            f.write(json.dumps({"numbers": self.numbers, "texts": self.texts}, indent=1))

    @classmethod
    def read(cls, transform_graph_dir: str) -> "Packing | None":
        """The packing the transform graph in `transform_graph_dir` was fitted with; None
        when its raw columns were handed over one by one."""
        import tensorflow as tf

        path = os.path.join(transform_graph_dir, PACKING_FILE)
        if not tf.io.gfile.exists(path):
            return None
        with tf.io.gfile.GFile(path) as f:
            found = json.load(f)
        return cls(*(tuple(map(tuple, found[part])) for part in ("numbers", "texts")))


# ---------------------------------------------------------------- the Transform (Arrow)


def _one_value_rows(column: pa.Array, name: str) -> tuple[np.ndarray, pa.Array]:
    """(rows holding a value, the values in row order) of a decoded list column."""
    import pyarrow.compute as pc

    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy()
    if len(lengths) and lengths.max() > 1:
        row = int(np.argmax(lengths > 1))
        raise ValueError(
            f"column {name!r} holds {lengths[row]} values in one example (batch row {row}); "
            "a wide table's columns are read packed, one value a row at most (the schema's "
            "value_count)."
        )
    return lengths == 1, pc.list_flatten(column)


def _fixed_lists(matrix: np.ndarray, value_type) -> pa.Array:
    rows, width = matrix.shape
    offsets = pa.array(np.arange(rows + 1, dtype=np.int64) * width)
    return pa.LargeListArray.from_arrays(offsets, pa.array(matrix.reshape(-1), value_type))


def pack_record_batch(batch: pa.RecordBatch, packing: Packing) -> pa.RecordBatch:
    """`batch` (as tfx_bsl decodes tf.Examples) with `packing`'s columns replaced by
    `NUMBERS` and `TEXTS`."""
    import pyarrow.compute as pc

    columns = {name: batch.column(name) for name in batch.schema.names}
    packed = {}
    if packing.numbers:
        numbers = np.full((batch.num_rows, len(packing.numbers)), np.nan, np.float32)
        for j, (name, _) in enumerate(packing.numbers):
            rows, values = _one_value_rows(columns[name], name)
            numbers[rows, j] = values.to_numpy(zero_copy_only=False)
        packed[NUMBERS] = _fixed_lists(numbers, pa.float32())
    if packing.texts:
        texts = np.full((batch.num_rows, len(packing.texts)), b"", object)
        for j, (name, kind) in enumerate(packing.texts):
            rows, values = _one_value_rows(columns[name], name)
            if kind == "INT":
                values = pc.cast(values, pa.string())
            texts[rows, j] = values.cast(pa.large_binary()).to_numpy(zero_copy_only=False)
        packed[TEXTS] = _fixed_lists(texts, pa.large_binary())
    kept = {name: column for name, column in columns.items() if name not in packing.columns}
    return pa.RecordBatch.from_pydict({**kept, **packed})


def packed_adapter_config(adapter_config, packing: Packing):
    """`adapter_config` (tfx_bsl's TensorAdapterConfig of the raw batches) for the batches
    `pack_record_batch` makes."""
    from tensorflow_metadata.proto.v0 import schema_pb2
    from tfx_bsl.tfxio import tensor_adapter

    fields = [f for f in adapter_config.arrow_schema if f.name not in packing.columns]
    representations = {
        name: representation
        for name, representation in adapter_config.tensor_representations.items()
        if name not in packing.columns
    }
    for key, part, value_type in (
        (NUMBERS, packing.numbers, pa.float32()),
        (TEXTS, packing.texts, pa.large_binary()),
    ):
        if not part:
            continue
        fields.append(pa.field(key, pa.large_list(value_type)))
        representations[key] = schema_pb2.TensorRepresentation(
            dense_tensor=schema_pb2.TensorRepresentation.DenseTensor(
                column_name=key,
                shape=schema_pb2.FixedShape(dim=[schema_pb2.FixedShape.Dim(size=len(part))]),
            )
        )
    return tensor_adapter.TensorAdapterConfig(pa.schema(fields), representations)


# ---------------------------------------------------------------- serving (TensorFlow)


def parse_packed(serialized, raw_spec: dict, packing: Packing | None) -> dict:
    """Serialized raw examples (string [batch]) parsed with `raw_spec` and packed as the
    Transform packed them (`packing`; None: parsed as they are).

    The packed columns are parsed by one ParseExampleV2 op whose defaults (NaN, "") are two
    tensors shared by every column, the values tf.io.parse_example gives them: on 2,000
    columns its graph was 6,000 ops (a default and a reshape a column), traced for two
    seconds and then pruned, saved and loaded again with every serving model."""
    import tensorflow as tf

    if packing is None:
        return tf.io.parse_example(serialized, raw_spec)
    rest = {name: spec for name, spec in raw_spec.items() if name not in packing.columns}
    features = dict(tf.io.parse_example(serialized, rest)) if rest else {}
    columns = (*packing.numbers, *packing.texts)
    # FLOAT numbers and BYTES texts: one value or the default; INT ones as sparse ids.
    fixed = [name for name, kind in columns if kind != "INT"]
    ints = [name for name, kind in columns if kind == "INT"]
    nan, empty = tf.constant(float("nan")), tf.constant(b"")
    defaults = [nan if kind == "FLOAT" else empty for _, kind in columns if kind != "INT"]
    parsed = tf.raw_ops.ParseExampleV2(
        serialized=serialized,
        names=tf.constant([], tf.string),
        sparse_keys=tf.constant(ints, tf.string),
        dense_keys=tf.constant(fixed, tf.string),
        ragged_keys=tf.constant([], tf.string),
        dense_defaults=defaults,
        num_sparse=len(ints),
        sparse_types=[tf.int64] * len(ints),
        ragged_value_types=[],
        ragged_split_types=[],
        dense_shapes=[[]] * len(fixed),
    )
    raw = dict(zip(fixed, parsed.dense_values, strict=True))
    for name, indices, values, shape in zip(
        ints, parsed.sparse_indices, parsed.sparse_values, parsed.sparse_shapes, strict=True
    ):
        raw[name] = tf.SparseTensor(indices, values, shape)
    if packing.numbers:
        features[NUMBERS] = tf.stack(
            [dense(tf.cast(raw[name], tf.float32), float("nan")) for name, _ in packing.numbers],
            axis=1,
        )
    if packing.texts:
        features[TEXTS] = tf.stack(
            [
                dense(
                    tf.sparse.map_values(tf.strings.as_string, raw[name])
                    if kind == "INT"
                    else raw[name],
                    b"",
                )
                for name, kind in packing.texts
            ],
            axis=1,
        )
    return features
