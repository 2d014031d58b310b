"""ExampleGen executor: CSV rows typed by the schema, split by a stable hash, bad rows accounted.

Each CSV file is parsed whole by one DoFn call: that is what keeps line numbers exact
(quoted fields may span lines), at the cost of no parallelism inside a file.

Without a schema, each column is typed from the data before the Beam pipeline starts
(`infer_column_kinds`): INT if every value that is not missing is an integer, else FLOAT if
every one is a number, else BYTES, exactly as `_parse_value` would parse them, so typing never
makes a row bad. A cell whose text is one of the `missing_values` tokens (default: empty, NA,
NaN, null; `missing.py`) is missing, with or without a schema: an absent feature. That pass reads the files with pyarrow's C++ CSV reader and checks whole columns with
Arrow's regex kernels; with a schema it does not run at all.
"""

import bisect
import csv
import hashlib
import io
import itertools
import json
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
import pyarrow as pa
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import types
from tfx.components.util import examples_utils
from tfx.dsl.components.base import base_beam_executor
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils

from components.example_gen.missing import parse_missing_values
from components.input_fingerprint import FINGERPRINT_KEY
from components.schema_importer.executor import load_schema_artifact

DEFAULT_SPLIT_RATIOS = '{"train": 2, "eval": 1}'
REJECTED_DIR = "rejected"
REJECTED_HEADER = "file,line,column,reason,raw"

_SPLIT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_INT_PATTERN = r"[+-]?[0-9]+"
_FLOAT_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INT = re.compile(_INT_PATTERN)
_FLOAT = re.compile(_FLOAT_PATTERN)
_SAFE_INT_DIGITS = 18  # an integer of at most this many digits always fits int64
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FLOAT32_MAX = 3.4028234663852886e38
_KINDS = {schema_pb2.INT: "INT", schema_pb2.FLOAT: "FLOAT", schema_pb2.BYTES: "BYTES"}
_LIST_FIELD = {"INT": "int64_list", "FLOAT": "float_list", "BYTES": "bytes_list"}
_REJECTED = "rejected"
_SUMMARY = "summary"
# Examples custom property: JSON {column: INT|FLOAT|BYTES}, every CSV column, as written.
COLUMN_TYPES_PROPERTY = "column_types"
KIND_TYPES = {kind: schema_type for schema_type, kind in _KINDS.items()}
_NARROWING = ("INT", "FLOAT", "BYTES")  # each kind accepts every value of the ones before it

# (file, line, column, reason, raw text); column is '' when the whole row is wrong.
BadRow = tuple[str, int, str, str, str]


def parse_split_ratios(text: str) -> dict[str, int]:
    """Parses '{"train": 2, "eval": 1}' into an ordered {split: weight} dict."""
    try:
        ratios = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"split_ratios {text!r} is not valid JSON: {e}") from e
    if not isinstance(ratios, dict) or not ratios:
        raise ValueError(f"split_ratios {text!r} must be a non-empty JSON object")
    for name, weight in ratios.items():
        if not _SPLIT_NAME.fullmatch(name):
            raise ValueError(f"split_ratios {text!r}: bad split name {name!r}")
        if type(weight) is not int or weight <= 0:
            raise ValueError(
                f"split_ratios {text!r}: weight of {name!r} must be a positive integer"
            )
    return ratios


def _read_records(path: str) -> Iterator[tuple[int, list[str], str]]:
    """Yields (line where the record starts, fields, raw text) for each non-blank CSV record."""
    consumed = []

    def lines():
        with tf.io.gfile.GFile(path, "rb") as f:
            for number, data in enumerate(f, start=1):
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"{path} line {number}: not valid UTF-8 ({e})") from e
                consumed.append(text.removeprefix("\ufeff") if number == 1 else text)
                yield consumed[-1]

    reader = csv.reader(lines())
    line = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ValueError(f"{path} line {line}: {e}") from e
        raw = "".join(consumed).rstrip("\r\n")
        consumed.clear()
        if fields:
            yield line, fields, raw
        line = reader.line_num + 1


def _parse_value(kind: str, text: str):
    """Strict parsing: a value TF would silently round or wrap is a bad value, not a number."""
    if kind == "BYTES":
        return text.encode("utf-8")
    stripped = text.strip()
    if kind == "INT":
        if not _INT.fullmatch(stripped):
            raise ValueError(f"{text!r} is not a valid INT")
        value = int(stripped)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError(f"{text!r} is out of the int64 range")
        return value
    if not _FLOAT.fullmatch(stripped):
        raise ValueError(f"{text!r} is not a valid FLOAT")
    value = float(stripped)
    if abs(value) > _FLOAT32_MAX:
        raise ValueError(f"{text!r} is out of the float32 range")
    return value


class _BadRowError(Exception):
    def __init__(self, column: str, reason: str):
        super().__init__(reason)
        self.column = column
        self.reason = reason


class _ParseCsvFile(beam.DoFn):
    """Turns one CSV file into (split index, serialized tf.Example), rejected rows and a summary."""

    def __init__(
        self,
        features: dict[str, tuple[str, bool]],
        split_key: str,
        weights: list[int],
        missing_values: tuple[str, ...] = ("",),
    ):
        self._features = features
        self._split_key = split_key
        self._bounds = list(itertools.accumulate(weights))
        self._missing = frozenset(missing_values)

    def _to_example(self, header: list[str], fields: list[str]) -> tf.train.Example:
        if len(fields) != len(header):
            raise _BadRowError("", f"expected {len(header)} fields, got {len(fields)}")
        example = tf.train.Example()
        for name, text in zip(header, fields, strict=True):
            kind, required = self._features[name]
            if text in self._missing:
                if required:
                    raise _BadRowError(name, "missing value for required feature")
                continue
            try:
                value = _parse_value(kind, text)
            except ValueError as e:
                raise _BadRowError(name, str(e)) from None
            getattr(example.features.feature[name], _LIST_FIELD[kind]).value.append(value)
        return example

    def _split_index(self, key: str) -> int:
        digest = hashlib.md5(key.encode("utf-8")).digest()
        return bisect.bisect_right(
            self._bounds, int.from_bytes(digest[:8], "big") % self._bounds[-1]
        )

    def process(self, path: str):
        records = _read_records(path)
        _, header, _ = next(records)
        key_column = header.index(self._split_key) if self._split_key else None
        rows = rejected = 0
        first_bad = None
        for line, fields, raw in records:
            try:
                example = self._to_example(header, fields)
            except _BadRowError as bad:
                rejected += 1
                record = (path, line, bad.column, bad.reason, raw)
                first_bad = first_bad or record
                yield beam.pvalue.TaggedOutput(_REJECTED, record)
                continue
            rows += 1
            key = raw if key_column is None else fields[key_column]
            yield self._split_index(key), example.SerializeToString(deterministic=True)
        yield beam.pvalue.TaggedOutput(
            _SUMMARY, json.dumps({"rows": rows, "rejected": rejected, "first_bad": first_bad})
        )


def _feature_specs(schema: schema_pb2.Schema) -> dict[str, tuple[str, bool]]:
    """{name: (INT|FLOAT|BYTES, required)}; required means presence.min_fraction 1.0."""
    specs = {}
    for feature in schema.feature:
        if feature.type not in _KINDS:
            raise ValueError(
                f"schema feature {feature.name!r} has type "
                f"{schema_pb2.FeatureType.Name(feature.type)}; CSV needs INT, FLOAT or BYTES"
            )
        specs[feature.name] = (_KINDS[feature.type], feature.presence.min_fraction >= 1.0)
    return specs


def list_csv_files(input_base: str) -> list[str]:
    if tf.io.gfile.isdir(input_base):
        files = sorted(tf.io.gfile.glob(os.path.join(input_base, "*.csv")))
        if not files:
            raise ValueError(f"input_base {input_base!r} is a folder with no *.csv files")
        return files
    if not tf.io.gfile.exists(input_base):
        raise ValueError(f"input_base {input_base!r} does not exist")
    return [input_base]


def _check_header(path: str, header: list[str], expected, source: str = "") -> None:
    """`header` must name each of `expected`'s columns once and no other; `expected` comes
    from the schema, or from the header of the file `source`."""
    for column in header:
        if header.count(column) > 1:
            raise ValueError(f"{path} line 1: column {column!r} appears more than once")
        if column not in expected:
            where = f"the header of {source}" if source else "the schema"
            raise ValueError(f"{path} line 1: column {column!r} is not in {where}")
    missing = [name for name in expected if name not in header]
    if missing:
        what = f"column(s) of {source}" if source else "schema column(s)"
        raise ValueError(
            f"{path} line 1: header lacks {what} " + ", ".join(repr(name) for name in missing)
        )


def _read_header(path: str) -> list[str] | None:
    """The first record of `path`; None for a file with no lines."""
    first = next(_read_records(path), None)
    return None if first is None else first[1]


def _has_header(path: str, features: dict[str, tuple[str, bool]]) -> bool:
    """Checks the header against the schema before any work; False for a file with no lines."""
    header = _read_header(path)
    if header is None:
        return False
    _check_header(path, header, features)
    return True


def _narrowest_kind(kind: str, values: pa.Array) -> str:
    """The first kind from `kind` on (INT, FLOAT, BYTES) that `_parse_value` accepts for
    every one of `values` (non-empty strings), checked by Arrow kernels on the whole array."""
    import pyarrow.compute as pc

    stripped = pc.utf8_trim_whitespace(values)
    if kind == "INT":
        if pc.all(pc.match_substring_regex(stripped, f"^{_INT_PATTERN}$")).as_py():
            long = stripped.filter(pc.greater(pc.utf8_length(stripped), _SAFE_INT_DIGITS))
            if all(_INT64_MIN <= int(text) <= _INT64_MAX for text in long.to_pylist()):
                return "INT"
        kind = "FLOAT"
    if (
        kind == "FLOAT"
        and pc.all(pc.match_substring_regex(stripped, f"^{_FLOAT_PATTERN}$")).as_py()
        and pc.max(pc.abs(pc.cast(stripped, pa.float64()))).as_py() <= _FLOAT32_MAX
    ):
        return "FLOAT"
    return "BYTES"


class _GFileReader(io.RawIOBase):
    """A `tf.io.gfile.GFile` as a raw stream pyarrow can read (GFile has no `closed`)."""

    def __init__(self, gfile):
        super().__init__()
        self._gfile = gfile

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self._gfile.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _infer_kinds_arrow(path: str, kinds: dict[str, str], missing: tuple[str, ...]) -> None:
    """Narrows `kinds` by every value of `path` that is not a `missing` token, read in blocks
    by pyarrow's CSV reader.

    Rows with the wrong number of fields are skipped here; the parsing pass rejects them.
    """
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    missing_set = pa.array(list(missing), pa.string())
    with tf.io.gfile.GFile(path, "rb") as f:
        reader = pa_csv.open_csv(
            io.BufferedReader(_GFileReader(f), buffer_size=1 << 20),
            read_options=pa_csv.ReadOptions(block_size=16 << 20),
            parse_options=pa_csv.ParseOptions(
                newlines_in_values=True, invalid_row_handler=lambda _: "skip"
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(kinds, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
        for batch in reader:
            for name, column in zip(batch.schema.names, batch.columns, strict=True):
                if kinds[name] != "BYTES":
                    values = column.filter(pc.invert(pc.is_in(column, value_set=missing_set)))
                    if len(values):
                        kinds[name] = _narrowest_kind(kinds[name], values)


def _infer_kinds_csv(path: str, kinds: dict[str, str], missing: tuple[str, ...]) -> None:
    """`_infer_kinds_arrow` with the csv module: slower, but fails as the parsing pass does
    (file and line) on what pyarrow refuses, e.g. bytes that are not UTF-8."""
    records = _read_records(path)
    _, header, _ = next(records)
    for _, fields, _ in records:
        if len(fields) != len(header):
            continue  # a bad row: the parsing pass rejects it
        for name, text in zip(header, fields, strict=True):
            kind = kinds[name]
            while text not in missing and kind != "BYTES":
                try:
                    _parse_value(kind, text)
                    break
                except ValueError:
                    kind = _NARROWING[_NARROWING.index(kind) + 1]
            kinds[name] = kind


def infer_column_kinds(
    paths: list[str], header: list[str], engine: str = "arrow", missing: tuple[str, ...] = ("",)
) -> dict:
    """{column: INT|FLOAT|BYTES} over every value of every file in `paths`.

    INT when every value that is not a `missing` token is an integer in the int64 range, else
    FLOAT when every one is a number in the float32 range, else BYTES. A column with no value
    at all is INT (no value contradicts it), so it stays a number; missing cells are absent
    features anyway.
    """
    if engine == "arrow":
        kinds = dict.fromkeys(header, "INT")
        try:
            for path in paths:
                _infer_kinds_arrow(path, kinds, missing)
            return kinds
        except (pa.ArrowInvalid, UnicodeDecodeError) as e:
            logging.info("ExampleGen: pyarrow cannot read the CSV (%s); typing with csv", e)
    kinds = dict.fromkeys(header, "INT")
    for path in paths:
        _infer_kinds_csv(path, kinds, missing)
    return kinds


def _describe(bad: BadRow) -> str:
    path, line, column, reason, _ = bad
    where = f"{path} line {line}" + (f", column {column!r}" if column else "")
    return f"{where}: {reason}"


def _to_csv_line(bad: BadRow) -> str:
    out = io.StringIO()
    csv.writer(out).writerow(bad)
    return out.getvalue().removesuffix("\r\n")


def _read_summary(path: str) -> tuple[int, int, BadRow | None]:
    """Adds up the per-file summaries; the first bad row is the smallest (file, line)."""
    with tf.io.gfile.GFile(path) as f:
        summaries = [json.loads(line) for line in f.read().splitlines()]
    bad_rows = [tuple(s["first_bad"]) for s in summaries if s["first_bad"]]
    return (
        sum(s["rows"] for s in summaries),
        sum(s["rejected"] for s in summaries),
        min(bad_rows, key=lambda bad: bad[:2], default=None),
    )


class Executor(base_beam_executor.BaseBeamExecutor):
    """Reads `input_base`, writes `<uri>/Split-<name>/data_tfrecord-*.gz` (and `<uri>/rejected/`).

    The whole input is read before deciding to fail, so the error always names the same first
    bad row however Beam schedules the files; on failure the split folders are removed.
    """

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        input_base = exec_properties["input_base"]
        split_key = exec_properties.get("split_key") or ""
        ratios = parse_split_ratios(exec_properties.get("split_ratios") or DEFAULT_SPLIT_RATIOS)
        max_bad = float(exec_properties.get("max_bad_row_fraction") or 0.0)
        missing = parse_missing_values(exec_properties.get("missing_values"))
        no_rows = (
            f"input_base {input_base!r} has no data rows (every CSV file is empty or header-only)"
        )
        if input_dict.get("schema"):
            features = _feature_specs(load_schema_artifact(input_dict["schema"]))
            files = [path for path in list_csv_files(input_base) if _has_header(path, features)]
        else:
            files, header = [], None
            for path in list_csv_files(input_base):
                this_header = _read_header(path)
                if this_header is None:
                    continue
                _check_header(path, this_header, header or this_header, files[0] if files else path)
                header = header or this_header
                files.append(path)
            kinds = infer_column_kinds(files, header, missing=missing) if files else {}
            logging.info("ExampleGen: column types inferred from the data: %s", kinds)
            features = {name: (kind, False) for name, kind in kinds.items()}
        if not files:
            raise ValueError(no_rows)
        if split_key and split_key not in features:
            raise ValueError(f"split_key {split_key!r} is not a column of the CSV files")
        examples = artifact_utils.get_single_instance(output_dict["examples"])
        if exec_properties.get(FINGERPRINT_KEY):  # set by the local runner's driver
            examples.set_string_custom_property(FINGERPRINT_KEY, exec_properties[FINGERPRINT_KEY])
        split_dirs = [os.path.join(examples.uri, f"Split-{name}") for name in ratios]
        rejected_dir = os.path.join(examples.uri, REJECTED_DIR)
        summary_path = os.path.join(self._get_tmp_dir(), "example_gen_summary.jsonl")

        with self._make_beam_pipeline() as pipeline:
            parsed = (
                pipeline
                | "Files" >> beam.Create(files)
                | "ParseCsv"
                >> beam.ParDo(
                    _ParseCsvFile(features, split_key, list(ratios.values()), missing)
                ).with_outputs(_REJECTED, _SUMMARY, main="examples")
            )
            splits = (
                parsed.examples
                | "Reshuffle" >> beam.Reshuffle()
                | "Split" >> beam.Partition(lambda item, _: item[0], len(ratios))
            )
            for name, split, split_dir in zip(ratios, splits, split_dirs, strict=True):
                _ = (
                    split
                    | f"Serialized[{name}]" >> beam.Values()
                    | f"Write[{name}]"
                    >> beam.io.WriteToTFRecord(
                        os.path.join(split_dir, "data_tfrecord"), file_name_suffix=".gz"
                    )
                )
            _ = parsed[_SUMMARY] | "WriteSummary" >> beam.io.WriteToText(
                summary_path, shard_name_template=""
            )
            if max_bad > 0:
                _ = (
                    parsed[_REJECTED]
                    | "RejectedCsv" >> beam.Map(_to_csv_line)
                    | "WriteRejected"
                    >> beam.io.WriteToText(
                        os.path.join(rejected_dir, "rejected"),
                        file_name_suffix=".csv",
                        header=REJECTED_HEADER,
                    )
                )

        rows, rejected, first_bad = _read_summary(summary_path)
        total = rows + rejected
        error = None
        if total == 0:
            error = no_rows
        elif rejected and max_bad == 0:
            error = (
                f"{_describe(first_bad)} ({rejected} bad row(s) of {total}; "
                "set max_bad_row_fraction to tolerate some)"
            )
        elif rejected / total > max_bad:
            error = (
                f"{rejected} of {total} rows are bad ({rejected / total:.4g} > "
                f"max_bad_row_fraction {max_bad}); first: {_describe(first_bad)}; "
                f"rejected rows are in {rejected_dir}"
            )
        if error:
            for split_dir in split_dirs:
                if tf.io.gfile.exists(split_dir):
                    tf.io.gfile.rmtree(split_dir)
            raise ValueError(error)

        examples.split_names = artifact_utils.encode_split_names(list(ratios))
        examples_utils.set_file_format(examples, "tfrecords_gzip")
        examples_utils.set_payload_format(examples, example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE)
        examples.set_int_custom_property("num_rows", rows)
        examples.set_int_custom_property("num_rejected", rejected)
        examples.set_string_custom_property(
            COLUMN_TYPES_PROPERTY,
            json.dumps({name: kind for name, (kind, _) in features.items()}, sort_keys=True),
        )
