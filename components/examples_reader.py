"""An Examples artifact's split as Arrow RecordBatches, in Beam, a TFRecord file at a time.

Each file is read by `components.tfrecord_files.read_records` and decoded by tfx_bsl
`READ_BATCH` examples at a time, so the Beam pipeline handles one element per batch.
TFXIO's `BeamSource`, which StatisticsGen and Transform used before, passes every record
through Beam on its own: on a million rows StatisticsGen took 52 s with it. tfx_bsl's
decoder releases the GIL, so a file's batches are decoded on `DECODE_THREADS` threads while
the next are read: decoding is most of StatisticsGen's time, and the Beam workers these
components run with are single threads.
"""

import collections
import os
import pickle
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
# Threads decoding one file's batches. A few at most: a Beam runner may run several
# files' DoFns at once already.
DECODE_THREADS = min(4, os.cpu_count() or 1)
# With a schema, a batch of at least twice this many serialized bytes is decoded in parts
# of at least this many, on up to DECODE_THREADS threads, and put back together: a wide
# table's file is one batch of a few thousand examples, which one thread decoded alone (a
# millisecond an example at 2,000 columns).
DECODE_PART_BYTES = 1 << 20


def split_files(examples: types.Artifact, split: str) -> list[str]:
    import tensorflow as tf  # not at module import

    pattern = os.path.join(artifact_utils.get_split_uri([examples], split), "*")
    return sorted(tf.io.gfile.glob(pattern))


def record_batches(path: str, schema: schema_pb2.Schema | None):
    """The examples of one TFRecord file (gzipped when named *.gz) as RecordBatches of the
    schema's features (without a schema, of every feature, typed by the values)."""
    from tfx_bsl.coders import example_coder

    serialized_schema = schema.SerializeToString() if schema else None
    decoders = threading.local()  # a decoder is not thread-safe: one per thread

    def decode(batch):
        if not hasattr(decoders, "decoder"):
            decoders.decoder = example_coder.ExamplesToRecordBatchDecoder(serialized_schema)
        return decoders.decoder.DecodeBatch(batch)

    def submitted(pool, batch):
        # Parts decoded with one schema have one Arrow schema: they concatenate. (Without
        # one, each part's columns and types follow its own examples.)
        parts = (
            1 if schema is None else min(DECODE_THREADS, sum(map(len, batch)) // DECODE_PART_BYTES)
        )
        size = -(-len(batch) // max(parts, 1))
        return [pool.submit(decode, batch[i : i + size]) for i in range(0, len(batch), size)]

    def joined(futures):
        parts = [future.result() for future in futures]
        if len(parts) == 1:
            return parts[0]
        return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]

    # In order, with at most one batch per thread waiting beyond those being decoded.
    with ThreadPoolExecutor(DECODE_THREADS) as pool:
        pending = collections.deque()
        for batch in serialized_batches(path):
            pending.append(submitted(pool, batch))
            if len(pending) > DECODE_THREADS:
                yield joined(pending.popleft())
        while pending:
            yield joined(pending.popleft())


def serialized_batches(path: str) -> Iterator[list[bytes]]:
    """The records of one TFRecord file (gzipped when named *.gz), `READ_BATCH` at a time."""
    return read_records(path, READ_BATCH)


class ReadSplit(beam.PTransform):
    """PCollection[pa.RecordBatch] of one split's `files` (`split_files`); the rows read
    are reported as `progress` says (components/progress.py)."""

    def __init__(self, files: list[str], schema: schema_pb2.Schema | None, progress: str):
        super().__init__()
        self._files = files
        self._schema = schema
        self._progress = progress

    def expand(self, pipeline):
        return (
            pipeline
            | "Files" >> beam.Create(self._files)
            | "Spread" >> beam.Reshuffle()
            | "Decode"
            >> beam.FlatMap(record_batches, self._schema).with_output_types(pa.RecordBatch)
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
