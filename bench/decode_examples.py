"""Decoding serialized tf.Examples into RecordBatches of a schema's features: the kit's
`SchemaDecoder` (TensorFlow's example parser) against tfx_bsl's decoder, which the kit's
StatisticsGen and Transform used before, on one thread, a wide and a narrow table; the
kit's as StatisticsGen reads (`empty_lists`: a search for empty value lists first) and as
the Transform reads (without).

Each table is random numbers (a few missing) and short strings, encoded by tfx_bsl; both
decoders read the same batches, and their tables are checked equal before the figures.

    PYTHONPATH=. .venv/bin/python bench/decode_examples.py --wide-rows 10000 --narrow-rows 1000000
"""

import argparse
import time

import numpy as np
import pyarrow as pa
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.coders import example_coder

from components.examples_reader import READ_BATCH, SchemaDecoder


def _table(rows: int, numbers: int, words: int, seed: int = 0):
    """Serialized examples in batches of READ_BATCH, and their schema: `numbers` float
    columns (1% missing) and `words` bytes columns."""
    rng = np.random.default_rng(seed)
    schema = schema_pb2.Schema()
    columns, names = [], []
    for i in range(numbers):
        values = rng.normal(size=rows).astype(np.float32)
        offsets = np.arange(rows + 1, dtype=np.int64)
        missing = pa.array(rng.random(rows) < 0.01)
        array = pa.LargeListArray.from_arrays(offsets, pa.array(values), mask=missing)
        columns.append(array)
        names.append(f"n{i}")
        schema.feature.add(name=names[-1], type=schema_pb2.FLOAT)
    for i in range(words):
        words_of = np.array([b"alpha", b"beta", b"gamma", b"delta"], dtype=object)
        values = pa.array(words_of[rng.integers(0, 4, rows)], pa.large_binary())
        columns.append(pa.LargeListArray.from_arrays(np.arange(rows + 1, dtype=np.int64), values))
        names.append(f"w{i}")
        schema.feature.add(name=names[-1], type=schema_pb2.BYTES)
    batch = pa.RecordBatch.from_arrays(columns, names)
    serialized = example_coder.RecordBatchToExamples(batch)
    return [serialized[i : i + READ_BATCH] for i in range(0, rows, READ_BATCH)], schema


def _timed(decode, batches):
    began = time.perf_counter()
    decoded = [decode(batch) for batch in batches]
    return time.perf_counter() - began, pa.Table.from_batches(decoded)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wide-rows", type=int, default=10_000)
    parser.add_argument("--narrow-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    shapes = [
        ("wide: 1,800 numbers + 200 words", args.wide_rows, 1800, 200),
        ("narrow: 15 numbers + 3 words", args.narrow_rows, 15, 3),
    ]
    print(
        f"{'table':34} {'rows':>10} {'tfx_bsl s':>10} {'statistics s':>13} {'speed-up':>9}"
        f" {'transform s':>12} {'speed-up':>9}"
    )
    for label, rows, numbers, words in shapes:
        batches, schema = _table(rows, numbers, words)
        tfx_bsl = example_coder.ExamplesToRecordBatchDecoder(schema.SerializeToString())
        stock_s, stock = _timed(tfx_bsl.DecodeBatch, batches)
        line = f"{label:34} {rows:>10,} {stock_s:>10.2f}"
        for empty_lists, width in ((True, 13), (False, 12)):
            kit = SchemaDecoder(schema, empty_lists)
            kit(batches[0])  # TensorFlow's first op run loads its kernels
            kit_s, ours = _timed(kit, batches)
            if not stock.select(ours.column_names).equals(ours):
                raise SystemExit(f"{label}: the decoders' tables differ")
            line += f" {kit_s:>{width}.2f} {stock_s / kit_s:>8.1f}x"
        print(line)


if __name__ == "__main__":
    main()
