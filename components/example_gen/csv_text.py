"""How ExampleGen reads CSV text: records with the file and line they start on, headers,
and pyarrow's streaming reader over the same bytes.

No TensorFlow (a URL such as gs://... is opened with it, imported then): the pipeline's
pre-check (components/auto/data.py) reads the data with this module before any component
runs, so that it reads what ExampleGen reads and fails with ExampleGen's messages.
"""

import csv
import io
from collections.abc import Iterator

import pyarrow as pa

# Rows as long as Arrow reads (several MB) must parse a row at a time too; the csv module's
# default limit (128 KiB a field) would refuse them.
csv.field_size_limit(2**31 - 1)
# Bytes of CSV per Arrow batch when a whole file is read for what its values are.
SCAN_BLOCK = 16 << 20
# A wide table's blocks grow by one base block per this many columns, up to WIDE_BLOCK_MAX.
COLUMNS_PER_BLOCK = 200
WIDE_BLOCK_MAX = 64 << 20


def block_bytes(base: int, columns: int) -> int:
    """Bytes of CSV per Arrow batch for a table of `columns` columns: `base`, more on a wide
    table. Reading a batch costs a few Arrow calls per column besides the work per cell: on
    2,000 columns a 4 MB block is about 300 rows, and those calls were most of the time."""
    return max(base, min(base * (columns // COLUMNS_PER_BLOCK), WIDE_BLOCK_MAX))


def open_binary(path: str):
    """`path` opened for reading bytes; a URL with TensorFlow's file systems."""
    if "://" in path:
        import tensorflow as tf

        return tf.io.gfile.GFile(path, "rb")
    return open(path, "rb")


def read_records(
    path: str, start: int = 0, end: int | None = None, first_line: int = 1
) -> Iterator[tuple[int, list[str], str]]:
    """Yields (line where the record starts, fields, raw text) for each non-blank CSV record
    of `path` from byte `start` (a record's first byte, on line `first_line`) to `end`."""
    consumed = []

    def lines():
        with open_binary(path) as f:
            f.seek(start)
            position = start
            for number, data in enumerate(f, start=first_line):
                if end is not None and position >= end:
                    return
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"{path} line {number}: not valid UTF-8 ({e})") from e
                consumed.append(text.removeprefix("\ufeff") if position == 0 else text)
                position += len(data)
                yield consumed[-1]

    reader = csv.reader(lines())
    line = first_line
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
        line = first_line + reader.line_num


def read_header(path: str) -> list[str] | None:
    """The first record of `path`; None for a file with no lines."""
    first = next(read_records(path), None)
    return None if first is None else first[1]


def check_header(path: str, header: list[str], expected, source: str = "") -> None:
    """`header` must name each of `expected`'s columns once and no other; `expected` comes
    from the schema, or from the header of the file `source`."""
    for position, column in enumerate(header):
        if header.count(column) > 1:
            raise ValueError(
                f"{path} line 1: column {column!r} appears twice in the header, as column "
                f"{position + 1} and column {header.index(column, position + 1) + 1}"
            )
        if column not in expected:
            where = f"the header of {source}" if source else "the schema"
            raise ValueError(f"{path} line 1: column {column!r} is not in {where}")
    missing = [name for name in expected if name not in header]
    if missing:
        what = f"column(s) of {source}" if source else "schema column(s)"
        raise ValueError(
            f"{path} line 1: header lacks {what} " + ", ".join(repr(name) for name in missing)
        )


def headed_files(paths: list[str]) -> tuple[list[str], list[str] | None]:
    """The files of `paths` with lines, and the header of the first, which every other one
    must repeat (`check_header`); ([], None) when none has a line."""
    files, header = [], None
    for path in paths:
        this_header = read_header(path)
        if this_header is None:
            continue
        check_header(path, this_header, header or this_header, files[0] if files else path)
        header = header or this_header
        files.append(path)
    return files, header


def data_rows(path: str) -> tuple[list[str], Iterator[list[str]]]:
    """The header of `path`, and the fields of each record after it with as many fields
    (ExampleGen's parsing pass rejects the others)."""
    records = read_records(path)
    _, header, _ = next(records)
    return header, (fields for _, fields, _ in records if len(fields) == len(header))


class RawReader(io.RawIOBase):
    """A binary file (or `tf.io.gfile.GFile`, which has no `closed`) as a raw stream pyarrow
    can read, ending after `limit` bytes when given."""

    def __init__(self, file, limit: int | None = None):
        super().__init__()
        self._file = file
        self._left = limit

    def readable(self):
        return True

    def readinto(self, buffer):
        size = len(buffer) if self._left is None else min(len(buffer), self._left)
        data = self._file.read(size)
        buffer[: len(data)] = data
        if self._left is not None:
            self._left -= len(data)
        return len(data)


def open_text_csv(source, columns, block_size: int, column_names=None, skip_bad_rows=False):
    """pyarrow's streaming CSV reader over `source`, a raw stream or a pyarrow one, every
    one of `columns` as text exactly as written (an empty cell is "", not null; a line
    break may be quoted)."""
    import pyarrow.csv as pa_csv

    if not isinstance(source, pa.NativeFile):
        source = io.BufferedReader(source, buffer_size=1 << 20)
    return pa_csv.open_csv(
        source,
        read_options=pa_csv.ReadOptions(block_size=block_size, column_names=column_names),
        parse_options=pa_csv.ParseOptions(
            newlines_in_values=True,
            invalid_row_handler=(lambda _: "skip") if skip_bad_rows else None,
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types=dict.fromkeys(columns, pa.string()),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def text_batches(path: str, columns) -> Iterator[pa.RecordBatch]:
    """The rows of `path` with as many fields as its header, in batches of `columns` as text,
    by pyarrow's reader: pa.ArrowInvalid (or UnicodeDecodeError) where it refuses the file,
    e.g. bytes that are not UTF-8, which `data_rows` reports with the file and line.

    A local file is opened by pyarrow itself: reading a Python file object from its threads
    can abort the interpreter at exit ("terminate called without an active exception")."""
    columns = list(columns)
    block = block_bytes(SCAN_BLOCK, len(columns))
    if "://" not in path:
        with pa.input_stream(path, compression=None) as f:
            yield from open_text_csv(f, columns, block, skip_bad_rows=True)
        return
    with open_binary(path) as f:
        yield from open_text_csv(RawReader(f), columns, block, skip_bad_rows=True)
