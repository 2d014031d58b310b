"""ExampleGen executor: CSV rows typed by the schema, split by a stable hash, bad rows accounted.

A file is cut at line breaks into ranges of about 32 MB that Beam parses in parallel, unless
it has a quote character (a line break may then be inside a field): it is one range. A range
is read in batches by pyarrow's CSV reader and checked and encoded a column at a time with
Arrow and numpy kernels; from the first batch with a bad row on, the rest of the range is
parsed a row at a time, which names the file, line and column of each bad row. Each range
writes one gzipped TFRecord file per split under a staging folder that becomes the splits
only when the whole input was read and the bad rows are within bounds.

Without a schema, each column is typed from the data before the Beam pipeline starts
(`infer_column_kinds`, `kinds.py`), so typing never makes a row bad. A cell whose text is one
of the `missing_values` tokens (default: empty, NA, NaN, null; `missing.py`) is missing, with
or without a schema: an absent feature. A row whose label (`raw_label_key`) is missing is set
aside as a bad row is, with the reason "label missing", but counted apart (`num_unlabeled`)
and bounded by its own fraction (`max_unlabeled_row_fraction`): a model can neither train nor
be evaluated on it. How the text is read (records, headers, pyarrow's
reader) is `csv_text.py`, which the pipeline's pre-check shares.
"""

import csv
import io
import itertools
import json
import logging
import os
from typing import Any, NamedTuple

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import types
from tfx.components.util import examples_utils
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils

from components.beam_executor import BeamExecutor
from components.example_encoding import serialize_examples
from components.example_gen import spans
from components.example_gen.csv_text import (
    RawReader,
    block_bytes,
    check_header,
    headed_files,
    open_text_csv,
    read_header,
    read_records,
)
from components.example_gen.kinds import arrow_numbers, infer_column_kinds, parse_value
from components.example_gen.layout import REJECTED_DIR, REJECTED_HEADER, UNLABELED_REASON
from components.example_gen.missing import (
    DEFAULT_MAX_UNLABELED_ROW_FRACTION,
    parse_missing_values,
)
from components.example_gen.split_hash import split_indices
from components.example_gen.splits import DEFAULT_SPLIT_RATIOS, parse_split_ratios
from components.input_fingerprint import FINGERPRINT_KEY, files_fingerprint
from components.schema_importer.executor import load_schema_artifact
from components.tfrecord_files import GzipTFRecordWriter

_KINDS = {schema_pb2.INT: "INT", schema_pb2.FLOAT: "FLOAT", schema_pb2.BYTES: "BYTES"}
_REJECTED = "rejected"
# A CSV file is read in ranges of about RANGE_BYTES, in parallel (see `plan_ranges`).
RANGE_BYTES = 32 << 20
_PLAN_BLOCK = 8 << 20
_ARROW_BLOCK = 4 << 20  # bytes of CSV per Arrow batch
_ROW_BATCH = 4096  # rows the row-at-a-time path encodes at once
# The split key of a row without --split-key: its fields joined by the unit separator.
_KEY_SEPARATOR = "\x1f"
_ARROW_TYPES = {"INT": pa.int64(), "FLOAT": pa.float32(), "BYTES": pa.binary()}
# Examples custom property: JSON {column: INT|FLOAT|BYTES}, every CSV column, as written.
COLUMN_TYPES_PROPERTY = "column_types"
KIND_TYPES = {kind: schema_type for schema_type, kind in _KINDS.items()}

# (file, line, column, reason, raw text); column is '' when the whole row is wrong.
BadRow = tuple[str, int, str, str, str]


class _BadRowError(Exception):
    def __init__(self, column: str, reason: str):
        super().__init__(reason)
        self.column = column
        self.reason = reason


class _Unlabeled(Exception):
    """A row whose label cell is missing: set aside, not trained or evaluated on."""


class _NotClean(Exception):
    """A batch the Arrow path does not take: the row-at-a-time path parses it instead."""


class CsvRange(NamedTuple):
    """Bytes [start, end) of input file number `file` (end None: to its end), starting on
    line `line` (start 0: with the header); `header` is the file's."""

    path: str
    file: int
    part: int
    start: int
    end: int | None
    line: int
    header: tuple[str, ...]


def plan_ranges(file: int, path: str, target: int | None = None) -> list[CsvRange]:
    """Cuts `path` at line breaks into ranges of about `target` (default RANGE_BYTES) bytes,
    counting lines.

    Only a file with no quote character is cut: in one with quotes a line break may be
    inside a field, which only reading from the start can tell, so it is one range.
    """
    target = target or RANGE_BYTES
    header = tuple(read_header(path) or ())
    starts = [(0, 1)]  # (byte offset, line number) where each range starts
    offset = lines = 0
    wanted = target
    with tf.io.gfile.GFile(path, "rb") as f:
        while block := f.read(_PLAN_BLOCK):
            if b'"' in block:
                return [CsvRange(path, file, 0, 0, None, 1, header)]
            while offset + len(block) > wanted:
                newline = block.find(b"\n", max(wanted - offset, 0))
                if newline == -1:
                    break
                starts.append(
                    (offset + newline + 1, lines + block.count(b"\n", 0, newline + 1) + 1)
                )
                wanted = starts[-1][0] + target
            lines += block.count(b"\n")
            offset += len(block)
    starts = [start for start in starts if start[0] < offset or start[0] == 0]
    ends = [start for start, _ in starts[1:]] + [None]
    return [
        CsvRange(path, file, part, start, end, line, header)
        for part, ((start, line), end) in enumerate(zip(starts, ends, strict=True))
    ]


class _SplitWriters:
    """One gzipped TFRecord file per split, `name` in each split's folder, opened on first use."""

    def __init__(self, split_dirs: list[str], name: str):
        self._paths = [os.path.join(split_dir, name) for split_dir in split_dirs]
        self._files = {}  # split -> (open file, its GzipTFRecordWriter)

    def write(self, records: pa.Array, splits: np.ndarray) -> None:
        for split in np.unique(splits).tolist():
            if split not in self._files:
                tf.io.gfile.makedirs(os.path.dirname(self._paths[split]))
                file = tf.io.gfile.GFile(self._paths[split], "wb")
                self._files[split] = (file, GzipTFRecordWriter(file))
            self._files[split][1].write(records.filter(pa.array(splits == split)).to_pylist())

    def close(self) -> None:
        for file, writer in self._files.values():
            writer.finish()
            file.close()


class _ParseCsvRange(beam.DoFn):
    """Writes a `CsvRange`'s rows as serialized tf.Examples, one file per split under the
    given split folders; yields a JSON summary, and each bad row tagged `rejected`.

    Batches of rows go through Arrow's kernels while every row in them is good; from the
    first batch that is not, the rest of the range is parsed a row at a time, which names
    the line and column of each bad row. Both paths encode with `serialize_examples` and
    hash with `split_indices`, so they write the same bytes to the same split.
    """

    def __init__(
        self,
        features: dict[str, tuple[str, bool]],
        split_key: str,
        weights: list[int],
        split_dirs: list[str],
        missing_values: tuple[str, ...] = ("",),
        label: str = "",
    ):
        self._features = features
        self._label = label
        self._split_key = split_key
        self._bounds = np.array(list(itertools.accumulate(weights)))
        self._split_dirs = split_dirs
        self._missing = frozenset(missing_values)

    def _parse_row(self, header: tuple[str, ...], fields: list[str]) -> list:
        """The row's values in `header` order, None where missing."""
        if len(fields) != len(header):
            raise _BadRowError("", f"expected {len(header)} fields, got {len(fields)}")
        if self._label and fields[header.index(self._label)] in self._missing:
            raise _Unlabeled()
        values = []
        for name, text in zip(header, fields, strict=True):
            kind, required = self._features[name]
            if text in self._missing:
                if required:
                    raise _BadRowError(name, "missing value for required feature")
                values.append(None)
                continue
            try:
                values.append(parse_value(kind, text))
            except ValueError as e:
                raise _BadRowError(name, str(e)) from None
        return values

    def _encode_rows(self, header, rows: list[list], keys: list[str]):
        """`_parse_row` results and their split keys as (records, split indices)."""
        columns = {}
        for name, values in zip(header, zip(*rows, strict=True), strict=True):
            kind = self._features[name][0]
            present = [value is not None for value in values]
            columns[name] = (
                kind,
                pa.array(present, pa.bool_()),
                pa.array([value for value in values if value is not None], _ARROW_TYPES[kind]),
            )
        return (
            serialize_examples(len(rows), columns),
            split_indices(pa.array(keys, pa.string()), self._bounds),
        )

    def _arrow_columns(self, batch: pa.RecordBatch) -> dict:
        """`serialize_examples`' columns of a batch of text columns; _NotClean unless every
        value parses exactly as `parse_value` would parse it."""
        missing = pa.array(sorted(self._missing), pa.string())
        columns = {}
        for name, text in zip(batch.schema.names, batch.columns, strict=True):
            kind, required = self._features[name]
            present = pc.invert(pc.is_in(text, value_set=missing))
            if (required or name == self._label) and not pc.all(present).as_py():
                raise _NotClean(name)
            values = text.filter(present)
            if kind == "BYTES":
                values = values.cast(pa.binary())
            else:
                values = arrow_numbers(kind, values)
                if values is None:
                    raise _NotClean(name)
                if kind == "FLOAT":
                    values = pc.cast(values, pa.float32(), safe=False)
            columns[name] = (kind, present, values)
        return columns

    def _arrow_batches(self, part: CsvRange, key: int | None):
        """Yields (records, split indices, rows) for each Arrow batch of `part` (split key:
        column `key`, or the whole row), until one is not clean (_NotClean) or Arrow cannot
        read on (pa.ArrowException)."""
        with tf.io.gfile.GFile(part.path, "rb") as f:
            f.seek(part.start)
            limit = None if part.end is None else part.end - part.start
            reader = open_text_csv(
                RawReader(f, limit),
                part.header,
                block_bytes(_ARROW_BLOCK, len(part.header)),
                column_names=None if part.start == 0 else list(part.header),
            )
            for batch in reader:
                if tuple(batch.schema.names) != part.header:
                    raise _NotClean("header")
                columns = self._arrow_columns(batch)
                keys = (
                    batch.column(key)
                    if key is not None
                    else pc.binary_join_element_wise(*batch.columns, _KEY_SEPARATOR)
                )
                yield (
                    serialize_examples(batch.num_rows, columns),
                    split_indices(keys, self._bounds),
                    batch.num_rows,
                )

    def process(self, part: CsvRange):
        writers = _SplitWriters(
            self._split_dirs, f"data_tfrecord-{part.file:05d}-{part.part:05d}.gz"
        )
        key = None if not self._split_key else part.header.index(self._split_key)
        rows = rejected = unlabeled = 0
        first_bad = first_unlabeled = None
        try:
            try:
                for records, splits, count in self._arrow_batches(part, key):
                    writers.write(records, splits)
                    rows += count
                clean = True
            except (_NotClean, pa.ArrowException):
                clean = False
            if not clean:  # the rest of the range, a row at a time
                records = read_records(part.path, part.start, part.end, part.line)
                good, keys = [], []
                skip = rows + (1 if part.start == 0 else 0)  # the header
                for line, fields, raw in itertools.islice(records, skip, None):
                    try:
                        good.append(self._parse_row(part.header, fields))
                    except _BadRowError as bad:
                        rejected += 1
                        record = (part.path, line, bad.column, bad.reason, raw)
                        first_bad = first_bad or record
                        yield beam.pvalue.TaggedOutput(_REJECTED, record)
                        continue
                    except _Unlabeled:
                        unlabeled += 1
                        record = (part.path, line, self._label, UNLABELED_REASON, raw)
                        first_unlabeled = first_unlabeled or record
                        yield beam.pvalue.TaggedOutput(_REJECTED, record)
                        continue
                    keys.append(_KEY_SEPARATOR.join(fields) if key is None else fields[key])
                    if len(good) == _ROW_BATCH:
                        writers.write(*self._encode_rows(part.header, good, keys))
                        rows += len(good)
                        good, keys = [], []
                if good:
                    writers.write(*self._encode_rows(part.header, good, keys))
                    rows += len(good)
        finally:
            writers.close()
        yield json.dumps(
            {
                "rows": rows,
                "rejected": rejected,
                "first_bad": first_bad,
                "unlabeled": unlabeled,
                "first_unlabeled": first_unlabeled,
            }
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


def resolve_window(exec_properties) -> "spans.Window | None":
    """The spans a span pattern's run reads (as its driver resolved them, else now); None
    for a file or folder."""
    input_base = exec_properties["input_base"]
    if not spans.is_pattern(input_base):
        return None
    if exec_properties.get(spans.RESOLVED_KEY):
        return spans.from_json(exec_properties[spans.RESOLVED_KEY])
    window = spans.resolve(input_base, exec_properties.get("data_spans") or spans.DEFAULT_WINDOW)
    logging.info("ExampleGen: %s reads %s", input_base, window.describe())
    return window


def list_csv_files(input_base: str) -> list[str]:
    if tf.io.gfile.isdir(input_base):
        files = sorted(tf.io.gfile.glob(os.path.join(input_base, "*.csv")))
        if not files:
            raise ValueError(f"input_base {input_base!r} is a folder with no *.csv files")
        return files
    if not tf.io.gfile.exists(input_base):
        raise ValueError(f"input_base {input_base!r} does not exist")
    return [input_base]


def _has_header(path: str, features: dict[str, tuple[str, bool]]) -> bool:
    """Checks the header against the schema before any work; False for a file with no lines."""
    header = read_header(path)
    if header is None:
        return False
    check_header(path, header, features)
    return True


def _describe(bad: BadRow) -> str:
    path, line, column, reason, _ = bad
    where = f"{path} line {line}" + (f", column {column!r}" if column else "")
    return f"{where}: {reason}"


def _to_csv_line(bad: BadRow) -> str:
    out = io.StringIO()
    csv.writer(out).writerow(bad)
    return out.getvalue().removesuffix("\r\n")


def _no_rows(input_base: str) -> str:
    return f"input_base {input_base!r} has no data rows (every CSV file is empty or header-only)"


class _Counts(NamedTuple):
    """What the ranges' summaries add up to: rows written, rows set aside and the first of
    each kind (smallest file and line)."""

    rows: int
    rejected: int
    first_bad: BadRow | None
    unlabeled: int
    first_unlabeled: BadRow | None

    @property
    def total(self) -> int:
        return self.rows + self.rejected + self.unlabeled


def _check_bad_rows(input_base, counts, max_bad, rejected_dir) -> None:
    """Fails on empty input, or on more bad rows than `max_bad` (a fraction) tolerates."""
    total, rejected, first_bad = counts.total, counts.rejected, counts.first_bad
    if total == 0:
        raise ValueError(_no_rows(input_base))
    if rejected and max_bad == 0:
        raise ValueError(
            f"{_describe(first_bad)} ({rejected} bad row(s) of {total}; "
            "set max_bad_row_fraction to tolerate some)"
        )
    if rejected / total > max_bad:
        raise ValueError(
            f"{rejected} of {total} rows are bad ({rejected / total:.4g} > "
            f"max_bad_row_fraction {max_bad}); first: {_describe(first_bad)}; "
            f"rejected rows are in {rejected_dir}"
        )


def _check_unlabeled(label, counts, max_unlabeled, rejected_dir) -> None:
    """Fails when more rows lack the label than `max_unlabeled` (a fraction) tolerates, or
    when no row is left to train on."""
    unlabeled, total = counts.unlabeled, counts.total
    if not unlabeled:
        return
    first = counts.first_unlabeled
    where = f"first: {first[0]} line {first[1]}; the rows are listed in {rejected_dir}"
    if unlabeled / total > max_unlabeled:
        raise ValueError(
            f"label {label!r} is missing in {unlabeled} of {total} rows "
            f"({unlabeled / total:.4g} > max_unlabeled_row_fraction {max_unlabeled}); {where}"
        )
    if counts.rows == 0:
        raise ValueError(f"label {label!r} is missing in every row ({unlabeled}); {where}")


def _read_summary(path: str) -> _Counts:
    """Adds up the per-file summaries; the first of each kind is the smallest (file, line)."""
    with tf.io.gfile.GFile(path) as f:
        summaries = [json.loads(line) for line in f.read().splitlines()]

    def first(key):
        found = [tuple(s[key]) for s in summaries if s[key]]
        return min(found, key=lambda bad: bad[:2], default=None)

    return _Counts(
        sum(s["rows"] for s in summaries),
        sum(s["rejected"] for s in summaries),
        first("first_bad"),
        sum(s["unlabeled"] for s in summaries),
        first("first_unlabeled"),
    )


class Executor(BeamExecutor):
    """Reads `input_base`, writes `<uri>/Split-<name>/data_tfrecord-*.gz` (and `<uri>/rejected/`).

    The whole input is read before deciding to fail, so the error always names the same first
    bad row however Beam schedules the ranges; on failure no split folder appears.
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
        label = exec_properties.get("raw_label_key") or ""
        max_unlabeled = exec_properties.get("max_unlabeled_row_fraction")
        if max_unlabeled is None:
            max_unlabeled = DEFAULT_MAX_UNLABELED_ROW_FRACTION
        window = resolve_window(exec_properties)
        input_files = window.files() if window else list_csv_files(input_base)
        features, files = _columns_and_files(input_dict, input_base, input_files, missing)
        if split_key and split_key not in features:
            raise ValueError(f"split_key {split_key!r} is not a column of the CSV files")
        if label and label not in features:
            raise ValueError(f"raw_label_key {label!r} is not a column of the CSV files")
        examples = artifact_utils.get_single_instance(output_dict["examples"])
        # The local runner's driver sets it; on Vertex, which runs no driver, the same here.
        examples.set_string_custom_property(
            FINGERPRINT_KEY,
            exec_properties.get(FINGERPRINT_KEY) or files_fingerprint(input_files),
        )
        _record_spans(examples, window, exec_properties.get("data_spans"))
        split_dirs = [os.path.join(examples.uri, f"Split-{name}") for name in ratios]
        rejected_dir = os.path.join(examples.uri, REJECTED_DIR)
        summary_path = os.path.join(self._get_tmp_dir(), "example_gen_summary.jsonl")

        # Splits are written under `staging` and moved into place only when the run succeeds.
        staging = os.path.join(examples.uri, ".staging")
        staged_dirs = [os.path.join(staging, os.path.basename(path)) for path in split_dirs]
        try:
            with self._make_beam_pipeline() as pipeline:
                parse = _ParseCsvRange(
                    features, split_key, list(ratios.values()), staged_dirs, missing, label
                )
                parsed = _add_parse_stages(pipeline, files, parse, summary_path)
                if max_bad > 0 or label:
                    _add_rejected_stage(parsed, rejected_dir)
            counts = _read_summary(summary_path)
            _check_bad_rows(input_base, counts, max_bad, rejected_dir)
            _check_unlabeled(label, counts, float(max_unlabeled), rejected_dir)
            if not counts.rejected + counts.unlabeled and tf.io.gfile.exists(rejected_dir):
                tf.io.gfile.rmtree(rejected_dir)  # nothing set aside: no header-only file
            _move_splits_into_place(staged_dirs, split_dirs)
        finally:
            if tf.io.gfile.exists(staging):
                tf.io.gfile.rmtree(staging)
        _describe_examples(examples, list(ratios), counts, features)


def _record_spans(examples, window: "spans.Window | None", data_spans) -> None:
    """`span` and `version` as TFX's ExampleGen records them (the newest span read; span 0
    for data with no span), `spans`, every span read, and `span_window`, the window."""
    span = window.newest.number if window else 0
    examples.span = span
    examples.set_int_custom_property(spans.SPAN_PROPERTY, span)
    if window is None:
        return
    if window.newest.version is not None:
        examples.version = window.newest.version
        examples.set_int_custom_property(spans.VERSION_PROPERTY, window.newest.version)
    examples.set_string_custom_property(spans.SPANS_PROPERTY, json.dumps(window.record()))
    examples.set_string_custom_property(spans.WINDOW_PROPERTY, data_spans or spans.DEFAULT_WINDOW)


def _columns_and_files(input_dict, input_base: str, input_files, missing) -> tuple[dict, list]:
    """(each column's (kind, required), the CSV files to read) of `input_files`: the schema's
    columns and the files with its header when a schema is given, else the columns inferred
    from the files whose header they share."""
    if input_dict.get("schema"):
        features = _feature_specs(load_schema_artifact(input_dict["schema"]))
        files = [path for path in input_files if _has_header(path, features)]
    else:
        files, header = headed_files(input_files)
        kinds = infer_column_kinds(files, header, missing=missing) if files else {}
        logging.info("ExampleGen: column types inferred from the data: %s", kinds)
        features = {name: (kind, False) for name, kind in kinds.items()}
    if not files:
        raise ValueError(_no_rows(input_base))
    return features, files


def _add_parse_stages(pipeline, files: list[str], parse: "_ParseCsvRange", summary_path: str):
    """Files cut into byte ranges, parsed and written by split; each range's counts to
    `summary_path`. Returns the parsed outputs (summary and rejected rows)."""
    parsed = (
        pipeline
        | "Files" >> beam.Create(list(enumerate(files)))
        | "PlanRanges" >> beam.FlatMapTuple(plan_ranges)
        | "Spread" >> beam.Reshuffle()
        | "ParseCsv" >> beam.ParDo(parse).with_outputs(_REJECTED, main="summary")
    )
    _ = parsed.summary | "WriteSummary" >> beam.io.WriteToText(summary_path, shard_name_template="")
    return parsed


def _add_rejected_stage(parsed, rejected_dir: str) -> None:
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


def _move_splits_into_place(staged_dirs: list[str], split_dirs: list[str]) -> None:
    """Each staged split renamed to its final folder; a split with no rows gets one
    empty file, so that readers find a file to open."""
    for staged, split_dir in zip(staged_dirs, split_dirs, strict=True):
        if not tf.io.gfile.glob(os.path.join(staged, "*")):  # a split with no rows
            tf.io.gfile.makedirs(staged)
            empty = os.path.join(staged, "data_tfrecord-00000-00000.gz")
            with tf.io.gfile.GFile(empty, "wb") as file:
                GzipTFRecordWriter(file).finish()
        tf.io.gfile.rename(staged, split_dir, overwrite=True)


def _describe_examples(examples, split_names: list[str], counts: "_Counts", features) -> None:
    examples.split_names = artifact_utils.encode_split_names(split_names)
    examples_utils.set_file_format(examples, "tfrecords_gzip")
    examples_utils.set_payload_format(examples, example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE)
    examples.set_int_custom_property("num_rows", counts.rows)
    examples.set_int_custom_property("num_rejected", counts.rejected)
    examples.set_int_custom_property("num_unlabeled", counts.unlabeled)
    examples.set_string_custom_property(
        COLUMN_TYPES_PROPERTY,
        json.dumps({name: kind for name, (kind, _) in features.items()}, sort_keys=True),
    )
