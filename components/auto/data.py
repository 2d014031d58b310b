"""What the pipeline reads of the CSV before it is built: the label column is there, and what
it holds decides the task and the class count when the configuration does not give them.

Needed at construction time because the Evaluator's configuration is fixed then (per-class
metrics name class ids 0 .. num_classes - 1). No TensorFlow: the files are read as ExampleGen
reads them (`components.example_gen.csv_text`: pyarrow, and where it refuses a file the csv
module), so what ExampleGen would refuse (bytes that are not UTF-8, a header naming a column
twice, files whose headers differ) is refused here with its message, before any component
runs; values are typed as ExampleGen types them, with its missing-value tokens.

Task "auto" from the label's values (missing ones left out):

- exactly 2 distinct values: binary (whatever their type);
- text, or integers, with 3 to `MAX_CLASSES` distinct values (integers: up to
  `MAX_INT_CLASSES`): multiclass;
- other numbers (decimals, or integers with more distinct values): regression;
- one value, or text with more than `MAX_CLASSES` values: refused, naming what was seen.
"""

import dataclasses
import difflib
import glob
import itertools
import os

import pyarrow as pa
import pyarrow.compute as pc

from components.example_gen.csv_text import data_rows, headed_files, text_batches
from components.example_gen.kinds import narrowest_kind

MAX_CLASSES = 100
MAX_INT_CLASSES = 10
_CSV_CHUNK = 1 << 16  # rows per batch where the csv module reads a file


@dataclasses.dataclass(frozen=True)
class LabelColumn:
    """The label column of the CSV files: its distinct values (up to `MAX_CLASSES` + 1 of
    them), how many there are (capped the same), its kind and its missing cells."""

    name: str
    values: tuple[str, ...]
    kind: str  # INT, FLOAT or BYTES, as ExampleGen types it from the data
    missing: int
    rows: int

    @property
    def distinct(self) -> int:
        return len(self.values)


def csv_files(data_path: str | list[str]) -> list[str] | None:
    """The CSV files ExampleGen reads, or None when `data_path` is not readable here; a list
    is the files a span pattern's window holds (components/example_gen/spans.py)."""
    if isinstance(data_path, list):
        return data_path or None
    if os.path.isdir(data_path):
        pattern = os.path.join(data_path, "*.csv")
        return sorted(glob.glob(pattern, include_hidden=True)) or None
    return [data_path] if os.path.isfile(data_path) else None


def read_header(path: str) -> list[str]:
    """The header of `path` as ExampleGen reads it; [] for a file with no lines."""
    return headed_files([path])[1] or []


def check_column(data_path: str, column: str, what: str = "label") -> list[str] | None:
    """Raises ValueError naming the columns there are, and the closest one, when `column`
    is not in the header, and ExampleGen's error when it would refuse a header; the
    header, or None when the data is not readable here."""
    files = csv_files(data_path)
    if not files:
        return None
    headed, header = headed_files(files)
    if header is None:
        return None  # no lines at all: ExampleGen says so
    if column not in header:
        close = difflib.get_close_matches(column, header, n=1, cutoff=0.0)
        hint = f" (closest: {close[0]!r})" if close else ""
        raise ValueError(
            f"{what} {column!r} is not a column of {headed[0]}{hint}; its columns are "
            + ", ".join(header)
            + "."
        )
    return header


def text_batches_of(path: str, header: list[str]):
    """The rows of `path` ExampleGen parses (its columns are `header`'s), in batches of every
    column as text: read by pyarrow, or where it refuses the file by the csv module, which
    raises naming the file and line of what it cannot read (from the row pyarrow stopped at)."""
    done = 0
    try:
        for batch in text_batches(path, header):
            yield batch
            done += batch.num_rows
        return
    except (pa.ArrowInvalid, UnicodeDecodeError):
        pass
    file_header, rows = data_rows(path)
    rows = itertools.islice(rows, done, None)
    while chunk := list(itertools.islice(rows, _CSV_CHUNK)):
        columns = zip(*chunk, strict=True)
        yield pa.record_batch([pa.array(c, pa.string()) for c in columns], names=file_header)


def read_label(data_path: str, label: str, missing_values=("",)) -> LabelColumn:
    """The label column of every CSV file of `data_path` (see `LabelColumn`)."""
    files = csv_files(data_path)
    if not files:
        raise ValueError(
            f"the data {data_path!r} is not readable here, so its label cannot decide the "
            "task: give the task (and num_classes for multiclass)."
        )
    header = check_column(data_path, label)
    missing_set = pa.array(list(missing_values), pa.string())
    distinct, missing, rows = set(), 0, 0
    for path in headed_files(files)[0]:
        for column in (batch.column(label) for batch in text_batches_of(path, header)):
            rows += len(column)
            is_missing = pc.is_in(column, value_set=missing_set)
            missing += pc.sum(is_missing).as_py() or 0
            if len(distinct) <= MAX_CLASSES:
                present = column.filter(pc.invert(is_missing))
                distinct.update(pc.unique(present).to_pylist())
    values = sorted(distinct)[: MAX_CLASSES + 1]
    kind = narrowest_kind("INT", pa.array(values, pa.string()))
    return LabelColumn(label, tuple(values), kind, missing, rows)


def infer_task(column: LabelColumn) -> str:
    """binary, multiclass or regression from the label's values (module doc); ValueError
    when none fits."""
    seen = ", ".join(repr(v) for v in column.values[:5]) + (", ..." if column.distinct > 5 else "")
    if column.distinct < 2:
        raise ValueError(
            f"label {column.name!r} has {column.distinct} distinct value(s) ({seen}): "
            "nothing to learn."
        )
    if column.distinct == 2:
        return "binary"
    if column.kind == "BYTES":
        if column.distinct > MAX_CLASSES:
            raise ValueError(
                f"label {column.name!r} is text with more than {MAX_CLASSES} distinct values "
                f"({seen}): too many for classes; give the task if it is one."
            )
        return "multiclass"
    if column.kind == "INT" and column.distinct <= MAX_INT_CLASSES:
        return "multiclass"
    return "regression"


def resolve_task(data_path, label, task, num_classes, missing_values):
    """(task, num_classes) with "auto" and a missing multiclass class count filled in from
    the label column. Rows without a label do not count (ExampleGen sets them aside); a label
    column with no value at all is refused."""
    if task != "auto" and not (task == "multiclass" and num_classes is None):
        check_column(data_path, label)
        return task, num_classes
    column = read_label(data_path, label, missing_values)
    if column.rows and column.missing == column.rows:
        raise ValueError(
            f"label {column.name!r} is missing in every one of the {column.rows} rows of "
            f"{data_path} (empty or one of {', '.join(repr(v) for v in missing_values if v)})"
            ": nothing to learn from."
        )
    if task == "auto":
        task = infer_task(column)
    if task == "multiclass" and num_classes is None:
        num_classes = column.distinct
        if num_classes > MAX_CLASSES:
            raise ValueError(
                f"label {column.name!r} has more than {MAX_CLASSES} distinct values: give "
                "num_classes."
            )
    return task, num_classes
