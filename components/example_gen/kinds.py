"""Column kinds (INT, FLOAT, BYTES): how ExampleGen parses a value strictly, and types a
column from the data when there is no schema.

`infer_column_kinds` types a column INT if every value that is not missing is an integer,
else FLOAT if every one is a number, else BYTES, exactly as `parse_value` would parse them,
so typing never makes a row bad. It reads the files with pyarrow's C++ CSV reader and checks
whole columns with Arrow's kernels: a cast where it decides alone (FLOAT), the patterns'
regexes elsewhere (`_numbers`). No TensorFlow: the pipeline's pre-check types the label with
`narrowest_kind` too.
"""

import logging
import re

import pyarrow as pa
import pyarrow.compute as pc

from components.example_gen.csv_text import data_rows, text_batches

INT_PATTERN = r"[+-]?[0-9]+"
FLOAT_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INT = re.compile(INT_PATTERN)
_FLOAT = re.compile(FLOAT_PATTERN)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FLOAT32_MAX = 3.4028234663852886e38
_NARROWING = ("INT", "FLOAT", "BYTES")  # each kind accepts every value of the ones before it


def parse_value(kind: str, text: str):
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


def arrow_numbers(kind: str, values: pa.Array) -> pa.Array | None:
    """`values` (text, none of it missing) as int64 for INT or float64 for FLOAT when
    `parse_value` accepts every one of them, else None; checked by Arrow kernels on the
    whole array: the same patterns, the int64 and float32 ranges."""
    return _numbers(kind, pc.utf8_trim_whitespace(values))


def _numbers(kind: str, stripped: pa.Array) -> pa.Array | None:
    """`arrow_numbers` of values stripped of surrounding blanks.

    A FLOAT column is cast first: Arrow's float grammar is the pattern's, plus 'nan' and
    'inf', which the float32 range check refuses as it refuses overflows; the cast alone
    costs less than the match, the '+' strip and the cast it replaces (a wide table's
    typing was mostly those). Only where the cast fails does the pattern decide (and a
    failing cast costs ten times a match: INT, which most numbers fail, is matched first)."""
    numbers = _cast(stripped, kind) if kind == "FLOAT" else None
    if numbers is None:
        pattern = INT_PATTERN if kind == "INT" else FLOAT_PATTERN
        # min_count=0: a batch where the column has no value at all is clean (Arrow's
        # default would say null, and send the rest of the range a row at a time).
        matches = pc.match_substring_regex(stripped, f"^{pattern}$")
        if not pc.all(matches, min_count=0).as_py():
            return None
        if pc.any(pc.starts_with(stripped, "+"), min_count=0).as_py():
            stripped = pc.replace_substring_regex(stripped, r"^\+", "")  # int casts refuse it
        numbers = _cast(stripped, kind)  # None: an integer out of the int64 range
    # NaN compares false: 'nan' and 'inf' fail here as numbers beyond float32 do.
    if numbers is None or kind == "INT":
        return numbers
    in_range = pc.all(pc.less_equal(pc.abs(numbers), _FLOAT32_MAX), min_count=0).as_py()
    return numbers if in_range else None


def _cast(stripped: pa.Array, kind: str) -> pa.Array | None:
    try:
        return pc.cast(stripped, pa.int64() if kind == "INT" else pa.float64())
    except pa.ArrowInvalid:
        return None


def narrowest_kind(kind: str, values: pa.Array) -> str:
    """The first kind from `kind` on (INT, FLOAT, BYTES) that `parse_value` accepts for
    every one of `values` (non-empty strings)."""
    stripped = pc.utf8_trim_whitespace(values)
    for candidate in _NARROWING[_NARROWING.index(kind) : -1]:
        if _numbers(candidate, stripped) is not None:
            return candidate
    return "BYTES"


def _infer_kinds_arrow(path: str, kinds: dict[str, str], missing: tuple[str, ...]) -> None:
    """Narrows `kinds` by every value of `path` that is not a `missing` token, read in blocks
    by pyarrow's CSV reader.

    Rows with the wrong number of fields are skipped here; the parsing pass rejects them.
    """
    missing_set = pa.array(list(missing), pa.string())
    for batch in text_batches(path, kinds):
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            if kinds[name] != "BYTES":
                values = column.filter(pc.invert(pc.is_in(column, value_set=missing_set)))
                if len(values):
                    kinds[name] = narrowest_kind(kinds[name], values)


def _infer_kinds_csv(path: str, kinds: dict[str, str], missing: tuple[str, ...]) -> None:
    """`_infer_kinds_arrow` with the csv module: slower, but fails as the parsing pass does
    (file and line) on what pyarrow refuses, e.g. bytes that are not UTF-8."""
    header, rows = data_rows(path)
    for fields in rows:
        for name, text in zip(header, fields, strict=True):
            kind = kinds[name]
            while text not in missing and kind != "BYTES":
                try:
                    parse_value(kind, text)
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
