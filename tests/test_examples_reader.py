"""The examples reader: a TFRecord file's examples as RecordBatches, decoded on threads."""

import pyarrow as pa
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.coders import example_coder

from components import examples_reader

SCHEMA = text_format.Parse(
    """
    feature { name: "row" type: INT }
    feature { name: "word" type: BYTES }
    """,
    schema_pb2.Schema(),
)


def _example(row: int) -> bytes:
    features = {"row": tf.train.Feature(int64_list=tf.train.Int64List(value=[row]))}
    if row % 3:  # every third example has no word
        word = f"w{row % 7}".encode()
        features["word"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[word]))
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def test_batches_come_in_file_order_and_equal_one_decoder(tmp_path, monkeypatch):
    """Many batches over several threads: the same table, row for row, as one decoder
    over the whole file, with absent features null."""
    records = [_example(row) for row in range(1000)]
    path = str(tmp_path / "data.gz")
    with tf.io.TFRecordWriter(path, "GZIP") as writer:
        for record in records:
            writer.write(record)
    monkeypatch.setattr(examples_reader, "READ_BATCH", 37)
    monkeypatch.setattr(examples_reader, "DECODE_THREADS", 3)

    batches = list(examples_reader.record_batches(path, SCHEMA))

    assert len(batches) == 28 and all(b.num_rows <= 37 for b in batches)
    one_decoder = example_coder.ExamplesToRecordBatchDecoder(SCHEMA.SerializeToString())
    table = pa.Table.from_batches(batches)
    assert table.equals(pa.Table.from_batches([one_decoder.DecodeBatch(records)]))
    assert table.column("row").to_pylist() == [[r] for r in range(1000)]
    assert table.column("word").null_count == 334
