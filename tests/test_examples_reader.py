"""The examples reader: a TFRecord file's records, and its examples as RecordBatches decoded
on threads."""

import pathlib

import pyarrow as pa
import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.coders import example_coder

from components import examples_reader
from components.tfrecord_files import GzipTFRecordWriter, read_records

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
    path = _write(tmp_path / "data.gz", records, "GZIP")
    monkeypatch.setattr(examples_reader, "READ_BATCH", 37)
    monkeypatch.setattr(examples_reader, "DECODE_THREADS", 3)

    batches = list(examples_reader.record_batches(path, SCHEMA))

    assert len(batches) == 28 and all(b.num_rows <= 37 for b in batches)
    one_decoder = example_coder.ExamplesToRecordBatchDecoder(SCHEMA.SerializeToString())
    table = pa.Table.from_batches(batches)
    assert table.equals(pa.Table.from_batches([one_decoder.DecodeBatch(records)]))
    assert table.column("row").to_pylist() == [[r] for r in range(1000)]
    assert table.column("word").null_count == 334


def test_a_heavy_batch_is_decoded_in_parts_and_put_back_together_in_order(tmp_path, monkeypatch):
    """A batch of more bytes than DECODE_PART_BYTES (a wide table's) is decoded in parts
    on the threads: one batch per file's batch as before, equal to one decoder's."""
    records = [_example(row) for row in range(1000)]
    path = _write(tmp_path / "data.gz", records, "GZIP")
    monkeypatch.setattr(examples_reader, "READ_BATCH", 400)
    monkeypatch.setattr(examples_reader, "DECODE_PART_BYTES", 1000)
    decoded = []
    decode_batch = example_coder.ExamplesToRecordBatchDecoder.DecodeBatch
    monkeypatch.setattr(
        example_coder.ExamplesToRecordBatchDecoder,
        "DecodeBatch",
        lambda self, batch: decoded.append(len(batch)) or decode_batch(self, batch),
    )

    batches = list(examples_reader.record_batches(path, SCHEMA))

    assert [b.num_rows for b in batches] == [400, 400, 200]
    assert len(decoded) > 3 and max(decoded) < 400  # each batch in parts
    one_decoder = example_coder.ExamplesToRecordBatchDecoder(SCHEMA.SerializeToString())
    assert pa.Table.from_batches(batches).equals(
        pa.Table.from_batches([one_decoder.DecodeBatch(records)])
    )


def _write(path: pathlib.Path, records: list[bytes], compression: str = "") -> str:
    with tf.io.TFRecordWriter(str(path), compression) as writer:
        for record in records:
            writer.write(record)
    return str(path)


@pytest.mark.parametrize("name, compression", [("data.gz", "GZIP"), ("data", "")])
def test_read_records_gives_what_tensorflow_reads(tmp_path, name, compression):
    """Batches of `batch_size`, in order, the same bytes as tf.data; records larger than
    the read chunk and empty ones included."""
    records = [_example(row) for row in range(300)] + [b"", b"x" * (3 << 20), b"tail"]
    path = _write(tmp_path / name, records, compression)

    batches = list(read_records(path, 64))

    assert [len(b) for b in batches] == [64, 64, 64, 64, 47]
    expected = [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]
    assert [record for batch in batches for record in batch] == expected == records


def test_read_records_reads_gzip_members_one_after_another(tmp_path):
    """A gzipped file made of two gzip streams (two writers appended) reads as gzip does."""
    first = _write(tmp_path / "first.gz", [b"a", b"b"], "GZIP")
    second = _write(tmp_path / "second.gz", [b"c"], "GZIP")
    joined = tmp_path / "joined.gz"
    joined.write_bytes(pathlib.Path(first).read_bytes() + pathlib.Path(second).read_bytes())

    assert list(read_records(str(joined), 10)) == [[b"a", b"b", b"c"]]


def test_read_records_names_the_file_and_byte_of_damage(tmp_path):
    records = [_example(row) for row in range(20)]
    plain = _write(tmp_path / "plain", records)
    data = bytearray(pathlib.Path(plain).read_bytes())
    second = 16 + len(records[0])  # where the second record starts
    data[second + 12 + 5] ^= 0xFF  # a byte of the second record's data
    (tmp_path / "flipped").write_bytes(bytes(data))
    (tmp_path / "cut").write_bytes(bytes(data[: second + 20]))
    gzipped = pathlib.Path(_write(tmp_path / "data.gz", records, "GZIP")).read_bytes()
    (tmp_path / "cut.gz").write_bytes(gzipped[:-10])

    with pytest.raises(
        ValueError,
        match=f"flipped: corrupt TFRecord file: the data CRC of the record at byte {second} ",
    ):
        list(read_records(str(tmp_path / "flipped"), 8))
    with pytest.raises(
        ValueError,
        match=f"cut: truncated TFRecord file: the record at byte {second} is cut off after 20 bytes",
    ):
        list(read_records(str(tmp_path / "cut"), 8))
    with pytest.raises(ValueError, match=r"cut\.gz: truncated gzip file"):
        list(read_records(str(tmp_path / "cut.gz"), 8))


def test_read_records_reads_any_tensorflow_file_system(tmp_path):
    """Paths go through tf.io.gfile, as tf.data's did: here TensorFlow's in-memory one."""
    records = [_example(row) for row in range(5)]
    local = _write(tmp_path / "data.gz", records, "GZIP")
    tf.io.gfile.copy(local, "ram://reader/data.gz", overwrite=True)

    assert list(read_records("ram://reader/data.gz", 10)) == [records]


def test_record_batches_cross_beam_workers_whole_and_are_sized_by_their_buffers():
    """The coder Beam uses for ReadSplit's output (registered for pa.RecordBatch): a batch
    comes back equal, and its size estimate is its buffers' size, not a pickling."""
    import apache_beam as beam

    batch = example_coder.ExamplesToRecordBatchDecoder(SCHEMA.SerializeToString()).DecodeBatch(
        [_example(row) for row in range(50)]
    )
    coder = beam.coders.registry.get_coder(pa.RecordBatch)

    assert coder.decode(coder.encode(batch)).equals(batch)
    assert coder.estimate_size(batch) == batch.nbytes


def test_the_kit_s_gzipped_tfrecords_read_as_tensorflow_s(tmp_path):
    """What ExampleGen and Transform write (ISA-L's gzip, our framing) is what
    TensorFlow's reader, and so the Trainer and stock TFX tooling, read."""
    records = [_example(row) for row in range(100)]
    path = tmp_path / "data.gz"
    with path.open("wb") as file:
        writer = GzipTFRecordWriter(file)
        writer.write(records[:60])
        writer.write(records[60:])
        writer.finish()

    read = [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type="GZIP")]
    assert read == records == next(read_records(str(path), 1000))
