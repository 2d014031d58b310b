"""ExampleGen executor on small real CSVs (taxi rows plus hand-made bad rows), real Beam."""

import csv
import glob
import itertools
import json
import os
import pathlib
import re
import shutil

import apache_beam as beam
import pyarrow as pa
import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.dsl.components.base import base_beam_executor
from tfx.types import artifact_utils, channel, standard_artifacts

from components.example_gen import ExampleGen, executor
from components.input_fingerprint import files_fingerprint
from components.schema_file import load_schema
from pipeline.config import EXAMPLE_GEN_THREADS_BEAM_ARGS
from schemas import TAXI_SCHEMA_PATH

TAXI_CSV = pathlib.Path(__file__).resolve().parents[1] / "data" / "taxi" / "data.csv"
# FnApiRunner: the DirectRunner of Beam 2.77 tries to download Prism first, even in_memory.
BEAM_ARGS = ["--runner=FnApiRunner"]
N_ROWS = 300

with open(TAXI_CSV, newline="") as _f:
    _LINES = _f.read().splitlines()
HEADER = _LINES[0].split(",")
TAXI_ROWS = _LINES[1 : N_ROWS + 1]


def _row(**values) -> str:
    """A CSV line: the first taxi row with some columns replaced."""
    fields = TAXI_ROWS[0].split(",")
    for name, value in values.items():
        fields[HEADER.index(name)] = value
    return ",".join(fields)


BAD_ROWS = {  # name: (line text, column, reason)
    "wrong_field_count": (
        ",".join(TAXI_ROWS[0].split(",")[:-1]),
        None,
        "expected 18 fields, got 17",
    ),
    "bad_float": (_row(fare="abc"), "fare", "'abc' is not a valid FLOAT"),
    "bad_int": (_row(trip_start_hour="7.5"), "trip_start_hour", "'7.5' is not a valid INT"),
    "missing_required": (_row(tips=""), "tips", "missing value for required feature"),
}


def _write(path, lines, header=HEADER) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([",".join(header), *lines]) + "\n")
    return path


@pytest.fixture
def schema(tmp_path):
    artifact = standard_artifacts.Schema()
    artifact.uri = str(tmp_path / "schema")
    os.makedirs(artifact.uri)
    shutil.copy(TAXI_SCHEMA_PATH, os.path.join(artifact.uri, "schema.pbtxt"))
    return artifact


@pytest.fixture
def taxi_csv(tmp_path):
    return _write(tmp_path / "in" / "taxi.csv", TAXI_ROWS)


def _run(tmp_path, schema, input_base, name="examples", beam_args=BEAM_ARGS, **exec_properties):
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / name)
    # make_beam_pipeline_fn instead of beam_pipeline_args: with the latter, TFX's
    # BaseBeamExecutor builds (and leaves in /tmp) a 40 MB sdist of TFX per executor.
    context = base_beam_executor.BaseBeamExecutor.Context(
        tmp_dir=str(tmp_path / "tmp" / name),
        unique_id="x",
        make_beam_pipeline_fn=lambda: beam.Pipeline(argv=beam_args),
    )
    executor.Executor(context).Do(
        {"schema": [schema] if schema else []},
        {"examples": [examples]},
        {"input_base": str(input_base), **exec_properties},
    )
    return examples


def _read(examples, split):
    pattern = os.path.join(artifact_utils.get_split_uri([examples], split), "data_tfrecord-*.gz")
    files = sorted(glob.glob(pattern))
    assert files, pattern
    return list(tf.data.TFRecordDataset(files, compression_type="GZIP").as_numpy_iterator())


def _splits_left(tmp_path, name="examples"):
    return glob.glob(str(tmp_path / name / "Split-*"))


def test_splits_are_about_four_to_one_and_deterministic(tmp_path, schema, taxi_csv):
    first = _run(tmp_path, schema, taxi_csv, "first")
    second = _run(tmp_path, schema, taxi_csv, "second")

    assert artifact_utils.decode_split_names(first.split_names) == ["train", "eval"]
    train, eval_ = _read(first, "train"), _read(first, "eval")
    assert len(train) + len(eval_) == N_ROWS
    assert 0.72 < len(train) / N_ROWS < 0.88
    assert sorted(train) == sorted(_read(second, "train"))
    assert sorted(eval_) == sorted(_read(second, "eval"))
    assert first.get_string_custom_property("file_format") == "tfrecords_gzip"
    assert first.get_string_custom_property("payload_format") == "FORMAT_TF_EXAMPLE"
    assert first.get_int_custom_property("num_rows") == N_ROWS
    assert first.get_int_custom_property("num_rejected") == 0
    assert not os.path.exists(os.path.join(first.uri, "rejected"))
    # No driver ran, as on Vertex: the executor fingerprints the input files itself.
    assert first.get_string_custom_property("input_fingerprint") == files_fingerprint(
        [str(taxi_csv)]
    )


def test_typed_values_round_trip_and_missing_optionals_are_absent(tmp_path, schema):
    full = _row(
        trip_start_timestamp="1",
        fare="12.5",
        trip_seconds="-3",
        company='"Taxi, Inc."',
        pickup_census_tract="17031081500",
        dropoff_latitude="41.5",
    )
    sparse = _row(
        trip_start_timestamp="2",
        company="",
        pickup_census_tract="",
        dropoff_latitude="",
        trip_seconds="",
    )
    csv_path = _write(tmp_path / "typed.csv", [full, sparse])
    examples = _run(tmp_path, schema, csv_path, split_ratios='{"all": 1}')

    serialized = sorted(
        _read(examples, "all"),
        key=lambda s: (
            tf.train.Example.FromString(s)
            .features.feature["trip_start_timestamp"]
            .int64_list.value[0]
        ),
    )
    spec = {}
    for feature in load_schema(TAXI_SCHEMA_PATH).feature:
        dtype = {
            schema_pb2.INT: tf.int64,
            schema_pb2.FLOAT: tf.float32,
            schema_pb2.BYTES: tf.string,
        }[feature.type]
        spec[feature.name] = (
            tf.io.FixedLenFeature([], dtype)
            if feature.presence.min_fraction == 1
            else tf.io.VarLenFeature(dtype)
        )
    parsed = tf.io.parse_example(serialized, spec)

    assert parsed["trip_start_timestamp"].numpy().tolist() == [1, 2]
    assert parsed["fare"].numpy()[0] == pytest.approx(12.5)
    assert (
        parsed["payment_type"].numpy()[0]
        == TAXI_ROWS[0].split(",")[HEADER.index("payment_type")].encode()
    )
    assert tf.sparse.to_dense(parsed["company"], b"").numpy().tolist() == [[b"Taxi, Inc."], [b""]]
    assert parsed["pickup_census_tract"].values.numpy().tolist() == [17031081500]
    assert parsed["trip_seconds"].values.numpy().tolist() == [-3]
    assert parsed["dropoff_latitude"].values.numpy() == pytest.approx([41.5])

    absent = set(tf.train.Example.FromString(serialized[1]).features.feature)
    assert absent.isdisjoint({"company", "pickup_census_tract", "dropoff_latitude", "trip_seconds"})


def test_split_key_keeps_equal_keys_in_one_split(tmp_path, schema, taxi_csv):
    examples = _run(
        tmp_path,
        schema,
        taxi_csv,
        split_key="company",
        split_ratios='{"train": 1, "eval": 1, "test": 1}',
    )
    companies = {}
    for split in ("train", "eval", "test"):
        features = [tf.train.Example.FromString(r).features.feature for r in _read(examples, split)]
        assert features, split
        companies[split] = {f["company"].bytes_list.value[0] for f in features if "company" in f}
    assert not companies["train"] & companies["eval"]
    assert not companies["train"] & companies["test"]
    assert not companies["eval"] & companies["test"]


@pytest.mark.parametrize("kind", sorted(BAD_ROWS))
def test_bad_row_fails_naming_file_line_and_column(tmp_path, schema, kind):
    text, column, reason = BAD_ROWS[kind]
    csv_path = _write(tmp_path / "in" / "data.csv", [*TAXI_ROWS[:15], text, *TAXI_ROWS[15:40]])
    where = f"{csv_path} line 17" + (f", column '{column}'" if column else "")
    with pytest.raises(ValueError, match=re.escape(f"{where}: {reason}")):
        _run(tmp_path, schema, csv_path)
    assert not _splits_left(tmp_path)


def test_line_numbers_count_lines_inside_quoted_fields(tmp_path, schema):
    multiline = _row(trip_start_timestamp="1", company='"Two\nLines"')
    csv_path = _write(tmp_path / "quoted.csv", [multiline, TAXI_ROWS[1], _row(fare="x")])
    with pytest.raises(ValueError, match=re.escape(f"{csv_path} line 5, column 'fare'")):
        _run(tmp_path, schema, csv_path)

    good = _write(tmp_path / "good" / "quoted.csv", [multiline])
    examples = _run(tmp_path, schema, good, split_ratios='{"all": 1}')
    example = tf.train.Example.FromString(_read(examples, "all")[0])
    assert example.features.feature["company"].bytes_list.value == [b"Two\nLines"]


def test_first_bad_row_is_the_smallest_file_and_line(tmp_path, schema):
    folder = tmp_path / "in"
    _write(folder / "b.csv", [TAXI_ROWS[0], _row(fare="bad")])
    _write(folder / "a.csv", [*TAXI_ROWS[:8], _row(tips=""), *TAXI_ROWS[8:17], _row(fare="bad")])
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"{folder / 'a.csv'} line 10, column 'tips': missing value for required feature "
            "(3 bad row(s) of 21;"
        ),
    ):
        _run(tmp_path, schema, folder)


def _with_bad_rows(tmp_path):
    """300 good rows with the four kinds of bad row spread among them (lines 51, 102, ...)."""
    lines = list(TAXI_ROWS)
    expected = {}
    for i, kind in enumerate(sorted(BAD_ROWS)):
        position = 50 * (i + 1) + i
        lines.insert(position, BAD_ROWS[kind][0])
        expected[position + 2] = BAD_ROWS[kind]
    return _write(tmp_path / "in" / "data.csv", lines), expected


def test_bad_rows_within_fraction_go_to_rejected_file(tmp_path, schema):
    csv_path, expected = _with_bad_rows(tmp_path)
    examples = _run(tmp_path, schema, csv_path, max_bad_row_fraction=0.02)

    assert examples.get_int_custom_property("num_rows") == N_ROWS
    assert examples.get_int_custom_property("num_rejected") == len(BAD_ROWS)
    assert len(_read(examples, "train")) + len(_read(examples, "eval")) == N_ROWS
    rejected = []
    for path in sorted(glob.glob(os.path.join(examples.uri, "rejected", "rejected-*.csv"))):
        with open(path, newline="") as f:
            rejected += list(csv.DictReader(f))
    assert len(rejected) == len(BAD_ROWS)
    for row in rejected:
        text, column, reason = expected[int(row["line"])]
        assert row == {
            "file": str(csv_path),
            "line": row["line"],
            "column": column or "",
            "reason": reason,
            "raw": text,
        }


def test_bad_rows_above_fraction_fail(tmp_path, schema):
    csv_path, _ = _with_bad_rows(tmp_path)
    rejected_dir = os.path.join(tmp_path, "examples", "rejected")
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"4 of 304 rows are bad (0.01316 > max_bad_row_fraction 0.01); first: {csv_path} line 52"
        ),
    ) as error:
        _run(tmp_path, schema, csv_path, max_bad_row_fraction=0.01)
    assert rejected_dir in str(error.value)
    assert glob.glob(os.path.join(rejected_dir, "rejected-*.csv"))
    assert not _splits_left(tmp_path)


@pytest.mark.parametrize("layout", ["header_only", "zero_bytes", "empty_folder", "missing"])
def test_empty_input_fails_naming_it(tmp_path, schema, layout):
    folder = tmp_path / "in"
    folder.mkdir()
    input_base = {
        "header_only": _write(folder / "h.csv", []),
        "zero_bytes": folder / "z.csv",
        "empty_folder": folder,
        "missing": folder / "missing.csv",
    }[layout]
    if layout == "zero_bytes":
        input_base.touch()
    with pytest.raises(ValueError, match=re.escape(f"input_base {str(input_base)!r}")):
        _run(tmp_path, schema, input_base)
    assert not _splits_left(tmp_path)


@pytest.mark.parametrize(
    "header, message",
    [
        ([c for c in HEADER if c != "tips"], "header lacks schema column(s) 'tips'"),
        ([*HEADER, "driver"], "column 'driver' is not in the schema"),
    ],
)
def test_header_mismatch_fails_naming_the_column(tmp_path, schema, header, message):
    csv_path = _write(tmp_path / "in" / "data.csv", [], header=header)
    with pytest.raises(ValueError, match=re.escape(f"{csv_path} line 1: {message}")):
        _run(tmp_path, schema, csv_path)


def test_component_checks_parameters_early():
    schema = channel.Channel(type=standard_artifacts.Schema)
    component = ExampleGen(input_base="data/taxi/data.csv", schema=schema, max_bad_row_fraction=0)
    assert component.outputs["examples"].type is standard_artifacts.Examples
    assert component.exec_properties["split_ratios"] == '{"train": 4, "eval": 1}'
    assert component.exec_properties["max_bad_row_fraction"] == 0.0
    with pytest.raises(ValueError, match="positive integer"):
        ExampleGen(input_base="x.csv", schema=schema, split_ratios='{"train": 0}')
    with pytest.raises(ValueError, match="max_bad_row_fraction"):
        ExampleGen(input_base="x.csv", schema=schema, max_bad_row_fraction=1.5)


def _ingest(root, csv_path, schema_path):
    """Runs SchemaImporter and ExampleGen with LocalDagRunner and SQLite metadata;
    returns ({component: ran or cached}, the Examples artifact's uri)."""
    from tfx.orchestration import metadata, pipeline
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner

    from components.schema_importer import SchemaImporter
    from pipeline.runner import run_temp_dir, summarize
    from tests.conftest import taxi_config

    schema_importer = SchemaImporter(schema_file=str(schema_path))
    example_gen = ExampleGen(input_base=str(csv_path), schema=schema_importer.outputs["schema"])
    config = metadata.sqlite_metadata_connection_config(str(root / "metadata.sqlite"))
    with run_temp_dir():  # where TFX's staged copy of itself goes; removed after
        LocalDagRunner().run(
            pipeline.Pipeline(
                pipeline_name="ingest",
                pipeline_root=str(root / "root"),
                components=[schema_importer, example_gen],
                enable_cache=True,
                metadata_connection_config=config,
                beam_pipeline_args=BEAM_ARGS,
            )
        )
    with metadata.Metadata(config) as store:
        examples = max(store.store.get_artifacts_by_type("Examples"), key=lambda a: a.id)
    cached = set(
        summarize(
            taxi_config(pipeline_name="ingest", metadata_path=str(root / "metadata.sqlite"))
        ).cached_components
    )
    return cached, examples


@pytest.mark.slow  # runs a pipeline (LocalDagRunner) four times
def test_rerun_notices_changed_csv_and_schema_files_at_the_same_paths(tmp_path):
    csv_path, schema_path = tmp_path / "data.csv", tmp_path / "schema.pbtxt"
    csv_path.write_text("\n".join([_LINES[0], *TAXI_ROWS[:100]]) + "\n")
    shutil.copy(TAXI_SCHEMA_PATH, schema_path)
    _, first = _ingest(tmp_path, csv_path, schema_path)
    assert "input_fingerprint" in first.custom_properties

    cached, again = _ingest(tmp_path, csv_path, schema_path)
    assert cached == {"SchemaImporter", "ExampleGen"} and again.id == first.id

    csv_path.write_text("\n".join([_LINES[0], *TAXI_ROWS[:150]]) + "\n")
    cached, changed = _ingest(tmp_path, csv_path, schema_path)
    assert cached == {"SchemaImporter"} and changed.id != first.id
    records = sum(
        1
        for path in glob.glob(os.path.join(changed.uri, "Split-*", "*.gz"))
        for _ in tf.data.TFRecordDataset(path, compression_type="GZIP")
    )
    assert records == 150

    schema_path.write_text(schema_path.read_text() + "\n# reviewed\n")
    cached, _ = _ingest(tmp_path, csv_path, schema_path)
    assert "SchemaImporter" not in cached


# Without a schema: columns typed from the data.

_TYPING_HEADER = ["count", "price", "word", "empty", "mixed", "spaced", "huge", "nan", "note"]
_TYPING_ROWS = [
    '1,1.5,a,,7,  3 ,1,1.0,"two\nlines"',
    "-2,,b,,7.5,+4,99999999999999999999,nan,x",
    ",3,,,1e3,5,3,2.5,",
    '+4,-.5e-3,"c, d",,8,6,4,,y',
]


def _examples_by_count(examples):
    found = {}
    for split in ("train", "eval"):
        for record in _read(examples, split):
            example = tf.train.Example.FromString(record)
            feature = example.features.feature
            key = feature["count"].int64_list.value[0] if "count" in feature else None
            found[key] = feature
    return found


def test_without_a_schema_columns_are_typed_from_the_data(tmp_path):
    csv_path = _write(tmp_path / "in" / "data.csv", _TYPING_ROWS, header=_TYPING_HEADER)
    examples = _run(tmp_path, None, csv_path)

    kinds = {
        "count": "INT",  # signs allowed, an empty cell is no evidence
        "price": "FLOAT",
        "word": "BYTES",
        "empty": "INT",  # no value contradicts INT
        "mixed": "FLOAT",  # integers and decimals
        "spaced": "INT",  # surrounding blanks are stripped, as when a schema says INT
        "huge": "FLOAT",  # beyond int64
        "nan": "BYTES",  # 'nan' is not a number ExampleGen parses
        "note": "BYTES",
    }
    assert json.loads(examples.get_string_custom_property("column_types")) == kinds
    assert examples.get_int_custom_property("num_rows") == 4
    assert examples.get_int_custom_property("num_rejected") == 0
    rows = _examples_by_count(examples)
    assert set(rows) == {1, -2, 4, None}
    assert rows[1]["price"].float_list.value == [1.5]
    assert rows[1]["spaced"].int64_list.value == [3]
    assert rows[1]["note"].bytes_list.value == [b"two\nlines"]
    assert rows[4]["word"].bytes_list.value == [b"c, d"]
    assert rows[4]["price"].float_list.value == pytest.approx([-0.0005])
    assert rows[-2]["mixed"].float_list.value == [7.5]
    assert rows[-2]["huge"].float_list.value == pytest.approx([1e20])
    assert rows[None]["mixed"].float_list.value == [1000.0]
    # Empty cells are absent features, in every column: nothing is required without a schema.
    assert "price" not in rows[-2] and "word" not in rows[None]
    assert not any("empty" in row for row in rows.values())


def test_typing_engines_agree_and_fall_back_on_bytes_pyarrow_refuses(tmp_path):
    csv_path = _write(tmp_path / "in" / "data.csv", _TYPING_ROWS, header=_TYPING_HEADER)
    arrow = executor.infer_column_kinds([str(csv_path)], _TYPING_HEADER, engine="arrow")
    assert arrow == executor.infer_column_kinds([str(csv_path)], _TYPING_HEADER, engine="csv")

    latin1 = tmp_path / "in" / "latin1.csv"
    latin1.write_bytes(b"count,word\n1,caf\xe9\n")
    with pytest.raises(ValueError, match=re.escape(f"{latin1} line 2: not valid UTF-8")):
        executor.infer_column_kinds([str(latin1)], ["count", "word"])


def test_without_a_schema_a_bad_row_fails_naming_file_and_line(tmp_path):
    text, _, reason = BAD_ROWS["wrong_field_count"]
    csv_path = _write(tmp_path / "in" / "taxi.csv", [*TAXI_ROWS[:5], text])
    with pytest.raises(ValueError, match=re.escape(f"{csv_path} line 7: {reason}")):
        _run(tmp_path, None, csv_path)
    assert not _splits_left(tmp_path)

    # Values never make a row bad (the types come from them); tolerated bad rows are recorded.
    examples = _run(tmp_path, None, csv_path, "tolerant", max_bad_row_fraction=0.5)
    assert examples.get_int_custom_property("num_rejected") == 1
    kinds = json.loads(examples.get_string_custom_property("column_types"))
    assert kinds["fare"] == "FLOAT" and kinds["trip_start_hour"] == "INT"
    assert kinds["company"] == "BYTES"


def test_without_a_schema_every_file_needs_the_same_columns(tmp_path):
    first = _write(tmp_path / "in" / "a.csv", TAXI_ROWS[:3])
    second = _write(tmp_path / "in" / "b.csv", [], header=[*HEADER, "driver"])
    with pytest.raises(
        ValueError,
        match=re.escape(f"{second} line 1: column 'driver' is not in the header of {first}"),
    ):
        _run(tmp_path, None, tmp_path / "in")
    second.unlink()
    reversed_rows = [",".join(reversed(row.split(","))) for row in TAXI_ROWS[3:6]]
    _write(tmp_path / "in" / "b.csv", reversed_rows, header=list(reversed(HEADER)))
    examples = _run(tmp_path, None, tmp_path / "in", "reordered")
    assert examples.get_int_custom_property("num_rows") == 6
    kinds = json.loads(examples.get_string_custom_property("column_types"))
    assert kinds["fare"] == "FLOAT" and kinds["payment_type"] == "BYTES"


def test_ranges_start_at_line_breaks_with_their_line_numbers(tmp_path):
    path = _write(tmp_path / "in" / "taxi.csv", TAXI_ROWS)
    data = path.read_bytes()
    ranges = executor.plan_ranges(3, str(path), target=1000)

    assert len(ranges) > 10
    assert (ranges[0].start, ranges[0].line, ranges[-1].end) == (0, 1, None)
    for before, after in itertools.pairwise(ranges):
        assert before.end == after.start and data[after.start - 1 : after.start] == b"\n"
        assert after.line == data[: after.start].count(b"\n") + 1
    assert {(r.file, r.header) for r in ranges} == {(3, tuple(HEADER))}
    assert [r.part for r in ranges] == list(range(len(ranges)))
    # a quote may hide a line break inside a field: such a file is read whole
    quoted = _write(tmp_path / "in" / "quoted.csv", [_row(company='"A, B"'), *TAXI_ROWS])
    assert [(r.start, r.end) for r in executor.plan_ranges(0, str(quoted), 1000)] == [(0, None)]


def test_ranges_threads_and_the_row_at_a_time_path_write_the_same_records(
    tmp_path, schema, monkeypatch
):
    """Arrow batches over one range, over many small ranges on one worker and on the two
    threads a large input gets by default (pipeline.config.EXAMPLE_GEN_THREADS_BEAM_ARGS),
    and the row-at-a-time path that takes over after a bad row all write the same bytes to
    the same splits."""
    whole = _run(tmp_path, schema, _write(tmp_path / "in" / "a.csv", TAXI_ROWS), "whole")
    with_bad = _write(tmp_path / "in2" / "b.csv", [BAD_ROWS["bad_float"][0], *TAXI_ROWS])
    row_at_a_time = _run(tmp_path, schema, with_bad, "bad", max_bad_row_fraction=0.5)
    monkeypatch.setattr(executor, "RANGE_BYTES", 2000)
    ranged = _run(tmp_path, schema, tmp_path / "in" / "a.csv", "ranged")
    threads = [*BEAM_ARGS, *EXAMPLE_GEN_THREADS_BEAM_ARGS]
    threaded = _run(tmp_path, schema, tmp_path / "in" / "a.csv", "threaded", threads)

    shards = sorted(os.listdir(os.path.join(ranged.uri, "Split-train")))
    assert len(shards) > 10
    for split in ("Split-train", "Split-eval"):  # the same files, byte for byte
        names = sorted(os.listdir(os.path.join(ranged.uri, split)))
        assert sorted(os.listdir(os.path.join(threaded.uri, split))) == names
        for shard in names:
            ours = pathlib.Path(ranged.uri, split, shard).read_bytes()
            assert pathlib.Path(threaded.uri, split, shard).read_bytes() == ours
    for split in ("train", "eval"):
        expected = sorted(_read(whole, split))
        assert expected and sorted(_read(ranged, split)) == expected
        assert sorted(_read(row_at_a_time, split)) == expected
    assert row_at_a_time.get_int_custom_property("num_rejected") == 1


def test_clean_batches_stay_on_the_arrow_path_when_a_column_has_no_value(tmp_path, monkeypatch):
    """A batch where an optional column is missing in every row is clean: the whole range
    goes through Arrow's kernels (`_arrow_batches` reads on to its end), none of it through
    the row-at-a-time parser."""
    rows = [_row(pickup_census_tract="", trip_start_hour=str(i % 24)) for i in range(50)]
    path = _write(tmp_path / "in" / "sparse.csv", [*rows, _row(pickup_census_tract="17031")])
    monkeypatch.setattr(executor, "_ARROW_BLOCK", 2000)  # batches of a few rows
    features = executor._feature_specs(load_schema(TAXI_SCHEMA_PATH))
    parse = executor._ParseCsvRange(features, "", [2, 1], [str(tmp_path / "out")] * 2)
    (whole,) = executor.plan_ranges(0, str(path))
    counts = [count for _, _, count in parse._arrow_batches(whole, None)]
    assert len(counts) > 1 and sum(counts) == 51


# Texts where Arrow's casts and the strict parser's patterns part ways, and their neighbours.
_NUMBER_TEXTS = [
    *("1", "-1", "+1", "01", "00", "-0", " 7 ", "1.", ".5", "-.5", "+.5", "1.e5", "1e5"),
    *("1E+5", "1e-5", "1e", "e5", ".", "-", "+", "+-1", "--1", "1e+", "nan", "NaN", "inf"),
    *("-inf", "Infinity", "1e400", "1e-400", "3.5e38", "3.4e38", "0x10", "0X1f", "1_000"),
    *("1,5", "1.5.5", "1d", "1f", "١٢", "9223372036854775807", "9223372036854775808"),
    *("-9223372036854775808", "-9223372036854775809", "+9223372036854775808", "+0x1"),
]


@pytest.mark.parametrize("kind", ["INT", "FLOAT"])
def test_arrow_typing_agrees_with_the_strict_parser(kind):
    """A column is numbers exactly when `parse_value` takes every cell, alone and beside
    plain numbers, with the values it parses."""
    from components.example_gen.kinds import arrow_numbers, parse_value

    def parsed(texts):
        try:
            return [parse_value(kind, text) for text in texts]
        except ValueError:
            return None

    for text in _NUMBER_TEXTS:
        for texts in ([text], ["2", text, "3"]):
            numbers = arrow_numbers(kind, pa.array(texts))
            expected = parsed(texts)
            assert (numbers is None) == (expected is None), texts
            if expected is not None:
                assert numbers.to_pylist() == expected, texts
