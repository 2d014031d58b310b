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


MIXED = text_format.Parse(
    """
    feature { name: "amount" type: FLOAT }
    feature { name: "row" type: INT }
    feature { name: "tags" type: BYTES }
    """,
    schema_pb2.Schema(),
)


def _mixed(row: int) -> bytes:
    """Examples with one to three values a feature, each feature absent from some, and a
    feature the schema does not name."""
    features = {"unlisted": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}
    if row % 4:
        amounts = [row / 8, -row / 3][: 1 + row % 2]
        features["amount"] = tf.train.Feature(float_list=tf.train.FloatList(value=amounts))
    if row % 5:
        features["row"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[row, -row, 2**40]))
    if row % 3:
        tags = [f"t{row % 7}".encode(), b"\xff\x00bytes"][: 1 + row % 2]
        features["tags"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=tags))
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


@pytest.mark.parametrize("empty_lists", [True, False])
def test_schema_decoder_equals_tfx_bsl_s(empty_lists):
    """Floats, integers and bytes, one value or several, absent features null, an unlisted
    feature left out: what tfx_bsl's decoder gives, columns in the schema's order."""
    records = [_mixed(row) for row in range(500)]

    batch = examples_reader.SchemaDecoder(MIXED, empty_lists)(records)

    stock = example_coder.ExamplesToRecordBatchDecoder(MIXED.SerializeToString())
    assert batch.schema.names == ["amount", "row", "tags"]
    assert batch.equals(stock.DecodeBatch(records).select(batch.schema.names))
    assert batch.column("row").null_count == 100
    assert batch.column("row")[1].as_py() == [1, -1, 2**40]


def test_schema_decoder_tells_an_empty_value_list_from_an_absent_feature():
    """TensorFlow's parser reads a feature present with no values as an absent one; TFDV's
    statistics count the first as present. With `empty_lists` a batch holding one is
    decoded as tfx_bsl decodes it (an empty list there, null where the feature is absent);
    without, both are null, as the serving graph's parser reads them."""
    empty = {
        "amount": tf.train.Feature(float_list=tf.train.FloatList(value=[])),
        "row": tf.train.Feature(int64_list=tf.train.Int64List(value=[])),
        "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[])),
    }
    records = [_mixed(row) for row in range(20)]
    for name, feature in empty.items():
        example = tf.train.Example(features=tf.train.Features(feature={name: feature}))
        records.append(example.SerializeToString())

    exact = examples_reader.SchemaDecoder(MIXED)(records)
    parsed = examples_reader.SchemaDecoder(MIXED, empty_lists=False)(records)

    stock = example_coder.ExamplesToRecordBatchDecoder(MIXED.SerializeToString())
    assert exact.equals(stock.DecodeBatch(records).select(exact.schema.names))
    assert exact.column("amount").to_pylist()[-3:] == [[], None, None]
    assert exact.column("row").to_pylist()[-3:] == [None, [], None]
    assert exact.column("tags").to_pylist()[-3:] == [None, None, []]
    for name in empty:
        assert parsed.column(name).to_pylist()[-3:] == [None, None, None]
        assert parsed.column(name)[:20].equals(exact.column(name)[:20])


def test_a_value_holding_an_empty_list_s_bytes_decodes_the_same():
    """The search for empty lists looks at bytes, values included: a match in a value
    only sends its batch to tfx_bsl's decoder."""
    tags = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"\x12\x02\x12\x00"]))
    example = tf.train.Example(features=tf.train.Features(feature={"tags": tags}))
    records = [_mixed(row) for row in range(5)] + [example.SerializeToString()]

    batch = examples_reader.SchemaDecoder(MIXED)(records)

    stock = example_coder.ExamplesToRecordBatchDecoder(MIXED.SerializeToString())
    assert batch.equals(stock.DecodeBatch(records).select(batch.schema.names))
    assert batch.column("tags").to_pylist()[-1] == [b"\x12\x02\x12\x00"]


def test_a_value_of_the_wrong_type_names_the_file_example_and_feature(tmp_path, monkeypatch):
    """The example is numbered in its file, across batches, from 0."""
    floats = tf.train.Feature(float_list=tf.train.FloatList(value=[2.5]))
    wrong = tf.train.Example(features=tf.train.Features(feature={"row": floats}))
    records = [_mixed(row) for row in range(30)] + [wrong.SerializeToString()]
    path = _write(tmp_path / "data.gz", records, "GZIP")
    monkeypatch.setattr(examples_reader, "READ_BATCH", 8)

    with pytest.raises(
        ValueError,
        match=r"data\.gz: example 30, feature 'row': Data types don't match\. "
        r"Expected type: int64, Actual type: float$",
    ):
        list(examples_reader.record_batches(path, MIXED))


def test_a_record_that_is_no_example_names_the_file_and_its_batch(tmp_path, monkeypatch):
    path = _write(tmp_path / "data", [_mixed(row) for row in range(10)] + [b"\x07garbage"])
    monkeypatch.setattr(examples_reader, "READ_BATCH", 4)

    with pytest.raises(ValueError, match=r"data: examples 8 to 10: Could not parse example input"):
        list(examples_reader.record_batches(path, MIXED))


def test_a_schema_feature_of_no_tf_example_type_is_refused():
    schema = text_format.Parse(
        'feature { name: "row" type: INT } feature { name: "nested" type: STRUCT }',
        schema_pb2.Schema(),
    )

    with pytest.raises(ValueError, match=r"not FLOAT, INT or BYTES\): nested$"):
        examples_reader.SchemaDecoder(schema)


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
