"""An Examples artifact's split as Arrow RecordBatches, in Beam, a TFRecord file at a time.

Each file is read by `components.tfrecord_files.read_records` and decoded `READ_BATCH`
examples at a time (`SchemaDecoder`, TensorFlow's parser, where there is a schema), so the
Beam pipeline handles one element per batch. TFXIO's `BeamSource`, which StatisticsGen and
Transform used before, passes every record through Beam on its own: on a million rows
StatisticsGen took 52 s with it. The decoders release the GIL, so a file's batches are
decoded on `DECODE_THREADS` threads while the next are read: the Beam workers these
components run with are single threads.
"""

import collections
import os
import pickle
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import apache_beam as beam
import pyarrow as pa
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import types
from tfx.types import artifact_utils

from components.progress import CountRows
from components.tfrecord_files import read_records

READ_BATCH = 4096  # examples decoded at once
# Threads decoding one file's batches while the next are read. A few at most: a Beam runner
# may run several files' DoFns at once already.
DECODE_THREADS = min(4, os.cpu_count() or 1)


def split_files(examples: types.Artifact, split: str) -> list[str]:
    import tensorflow as tf  # not at module import

    pattern = os.path.join(artifact_utils.get_split_uri([examples], split), "*")
    return sorted(tf.io.gfile.glob(pattern))


# A feature present with no values, as protobuf writes one into an Example's map: the entry's
# value (field 2) of 2 bytes, an empty bytes, float or int64 list, or of 4, the list with an
# empty packed field. Values can hold these bytes too: a batch that does is only decoded
# the slower way.
_EMPTY_FEATURE = re.compile(rb"\x12(?:\x02[\x0a\x12\x1a]\x00|\x04[\x0a\x12\x1a]\x02\x0a\x00)")


class SchemaDecoder:
    """Serialized tf.Examples -> a RecordBatch of the schema's features, in its order: each a
    large_list of float32, int64 or large_binary values, null where the example lacks the
    feature, as tfx_bsl's decoder gives them. Thread-safe.

    TensorFlow's example parser reads the wire format without building a message per
    example: 3.3x to 4.6x tfx_bsl's speed on 2,000 columns, 1.5x to 2x on 18
    (bench/decode_examples.py). It reads a feature present with no values (an empty list)
    as an absent one. With `empty_lists`, as StatisticsGen needs (TFDV counts an empty list
    as present), a batch in which a record may hold one (`_EMPTY_FEATURE`; the kit's
    ExampleGen and tfx_bsl's encoder write none) is decoded by tfx_bsl's decoder instead;
    the search costs about half of what the parser saves on 18 columns, under a tenth on
    2,000. Without, an empty list is null, as the serving graph's `tf.io.parse_example`
    reads it (the Transform's tensors are the same, a FixedLen feature's default where an
    empty list failed)."""

    _TYPES = {
        schema_pb2.FLOAT: ("float32", pa.float32()),
        schema_pb2.INT: ("int64", pa.int64()),
        schema_pb2.BYTES: ("string", pa.large_binary()),
    }

    def __init__(self, schema: schema_pb2.Schema, empty_lists: bool = True):
        unknown = [f.name for f in schema.feature if f.type not in self._TYPES]
        if unknown:
            raise ValueError(
                "schema features of a type tf.Example does not hold (not FLOAT, INT or "
                "BYTES): " + ", ".join(unknown)
            )
        self._names = [f.name for f in schema.feature]
        self._keys = None  # the names as a tensor, on the first call (TensorFlow loads late)
        self._dtypes = [self._TYPES[f.type][0] for f in schema.feature]
        self._arrow_types = [self._TYPES[f.type][1] for f in schema.feature]
        self._stock = TfxBslDecoder(schema) if empty_lists else None

    def __call__(self, serialized: list[bytes]) -> pa.RecordBatch:
        import tensorflow as tf

        if self._stock is not None and _EMPTY_FEATURE.search(b"".join(serialized)):
            return self._stock(serialized).select(self._names)
        count = len(self._names)
        if self._keys is None:  # made once: 2,000 names took 17 ms a batch to convert
            self._keys = tf.constant(self._names)
        parsed = tf.raw_ops.ParseExampleV2(
            serialized=serialized,
            names=[],
            sparse_keys=[],
            dense_keys=[],
            ragged_keys=self._keys,
            dense_defaults=[],
            num_sparse=0,
            sparse_types=[],
            ragged_value_types=self._dtypes,
            ragged_split_types=["int64"] * count,
            dense_shapes=[],
        )
        values, splits = parsed[-2], parsed[-1]
        columns = []
        for value, split, arrow_type in zip(values, splits, self._arrow_types, strict=True):
            offsets = split.numpy()
            empty = offsets[1:] == offsets[:-1]
            columns.append(
                pa.LargeListArray.from_arrays(
                    offsets,
                    pa.array(value.numpy(), arrow_type),
                    mask=pa.array(empty) if empty.any() else None,
                )
            )
        return pa.RecordBatch.from_arrays(columns, self._names)


class TfxBslDecoder:
    """tfx_bsl's decoder, of the schema's features or (without one) of every feature, typed
    by the values; one per thread, which it needs, so this one is thread-safe."""

    def __init__(self, schema: schema_pb2.Schema | None):
        self._schema = schema.SerializeToString() if schema is not None else None
        self._local = threading.local()

    def __call__(self, serialized: list[bytes]) -> pa.RecordBatch:
        from tfx_bsl.coders import example_coder

        if not hasattr(self._local, "decoder"):
            self._local.decoder = example_coder.ExamplesToRecordBatchDecoder(self._schema)
        return self._local.decoder.DecodeBatch(serialized)


def record_batches(path: str, schema: schema_pb2.Schema | None, empty_lists: bool = True):
    """The examples of one TFRecord file (gzipped when named *.gz) as RecordBatches of the
    schema's features (`SchemaDecoder`, which `empty_lists` goes to); without a schema, of
    every feature, typed by the values (`TfxBslDecoder`)."""
    decode = SchemaDecoder(schema, empty_lists) if schema is not None else TfxBslDecoder(None)

    def decoded(batch, first):
        try:
            return decode(batch)
        except Exception as error:  # tf.errors.InvalidArgumentError, tfx_bsl's RuntimeError
            raise ValueError(f"{path}: {_decode_error(error, first, len(batch))}") from error

    # In order, with at most one batch per thread waiting beyond those being decoded.
    with ThreadPoolExecutor(DECODE_THREADS) as pool:
        pending, first = collections.deque(), 0
        for batch in serialized_batches(path):
            pending.append(pool.submit(decoded, batch, first))
            first += len(batch)
            if len(pending) > DECODE_THREADS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _decode_error(error: Exception, first: int, count: int) -> str:
    """The decoder's message on the `count` examples from the file's `first` (from 0), with
    the example at fault numbered in the file, not in its batch, where the message names it."""
    text = getattr(error, "message", None) or str(error)
    text = re.sub(r"^\{\{.*?\}\}\s*|\s*\[Op:\w+\]$", "", text)
    where = re.match(r"Name: [^,]*, Key: (.*), Index: (\d+)\.\s*", text)
    if where is None:
        return f"examples {first:,} to {first + count - 1:,}: {text}"
    key, index = where.groups()
    return f"example {first + int(index):,}, feature {key!r}: {text[where.end() :]}"


def serialized_batches(path: str) -> Iterator[list[bytes]]:
    """The records of one TFRecord file (gzipped when named *.gz), `READ_BATCH` at a time."""
    return read_records(path, READ_BATCH)


class ReadSplit(beam.PTransform):
    """PCollection[pa.RecordBatch] of one split's `files` (`split_files`), decoded as
    `record_batches` decodes them; the rows read are reported as `progress` says
    (components/progress.py)."""

    def __init__(
        self,
        files: list[str],
        schema: schema_pb2.Schema | None,
        progress: str,
        empty_lists: bool = True,
    ):
        super().__init__()
        self._files = files
        self._schema = schema
        self._progress = progress
        self._empty_lists = empty_lists

    def expand(self, pipeline):
        return (
            pipeline
            | "Files" >> beam.Create(self._files)
            | "Spread" >> beam.Reshuffle()
            | "Decode"
            >> beam.FlatMap(record_batches, self._schema, self._empty_lists).with_output_types(
                pa.RecordBatch
            )
            | "Progress" >> beam.ParDo(CountRows(self._progress)).with_output_types(pa.RecordBatch)
        )


class RecordBatchCoder(beam.coders.Coder):
    """RecordBatches pickled (Arrow's IPC format) where they cross workers, and sized by their
    buffers. Beam's counters estimate the size of a sample of each PCollection's elements
    with its coder; with the default one, pickling each sampled batch whole cost 0.65 s of
    StatisticsGen's CPU on a million rows."""

    def encode(self, batch: pa.RecordBatch) -> bytes:
        return pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)

    def decode(self, encoded: bytes) -> pa.RecordBatch:
        return pickle.loads(encoded)

    def estimate_size(self, batch: pa.RecordBatch) -> int:
        return batch.nbytes

    def to_type_hint(self):
        return pa.RecordBatch


beam.coders.registry.register_coder(pa.RecordBatch, RecordBatchCoder)
