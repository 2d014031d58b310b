"""Columns that carry no signal, which zero code leaves out of the auto preprocessing.

Read before the pipeline is built, as ExampleGen reads the files (`components.auto.data`):
values typed as ExampleGen types them, its missing-value tokens aside. A column is left out
when it is (the label never):

- entirely missing: no value in any row;
- constant: one distinct value;
- row numbers: named as exports name their row index ("", "rownames", "Unnamed: 0"), or
  an integer column with no missing cell whose values are exactly 1..n or 0..n-1 in file
  order (files in ExampleGen's order), from `MIN_ROWS` rows on;
- an ID: a text column whose distinct values are more than `ID_SHARE` of its non-missing
  rows, and more than `MIN_ID_DISTINCT`. Most of its values are then seen once or twice, so
  the vocabulary learns a weight per value from a row or two (memorised, not learnt), and an
  unseen value at serving time says nothing. A text category repeats its values: 50 states
  in 2,000 rows is 2.5%, kept.

One pass with pyarrow's kernels; memory is bounded: the distinct values of a column are
counted up to `DISTINCT_CAP`. A column reaching it is judged on the rows read until then
(e.g. 100,000 distinct in the first 120,000 rows: an ID).
"""

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from components.auto.data import csv_files, text_batches_of
from components.example_gen.csv_text import headed_files
from components.example_gen.kinds import arrow_numbers, narrowest_kind

ID_SHARE = 0.5
MIN_ID_DISTINCT = 20
MIN_ROWS = 20
DISTINCT_CAP = 100_000
ROW_NUMBER_NAMES = ("", "rownames", "Unnamed: 0")


@dataclasses.dataclass
class _Profile:
    """What one pass learns of a column."""

    kind: str = "INT"  # narrowed as ExampleGen narrows it
    present: int = 0  # non-missing cells
    # Its distinct values, up to DISTINCT_CAP, as the distinct values of each batch: merged
    # when they add up to the cap (re-merging every batch cost a wide table's pre-pass a
    # quarter of its time).
    distinct_parts: list = dataclasses.field(default_factory=list)
    capped_at: int | None = None  # non-missing rows read when the cap was reached
    first: int | None = None  # the first value, as a row number: 0 or 1, else None
    row_numbers: bool = True  # every value so far is first + its row index

    def distinct(self) -> pa.Array:
        """The distinct values read so far (up to the cap)."""
        if len(self.distinct_parts) > 1:
            self.distinct_parts = [pc.unique(pa.concat_arrays(self.distinct_parts))]
        return self.distinct_parts[0] if self.distinct_parts else pa.array([], pa.string())


def _update(profile: _Profile, column: pa.Array, missing: pa.Array, offset: int) -> None:
    """Adds a batch of `column` (text) whose first row is row `offset` of the data."""
    is_missing = pc.is_in(column, value_set=missing)
    values = column.filter(pc.invert(is_missing))
    if len(values) < len(column):
        profile.row_numbers = False
    if len(values):
        if profile.kind != "BYTES":
            profile.kind = narrowest_kind(profile.kind, values)
        if profile.capped_at is None:
            profile.distinct_parts.append(pc.unique(values))
            could_reach = sum(map(len, profile.distinct_parts)) >= DISTINCT_CAP
            if could_reach and len(profile.distinct()) >= DISTINCT_CAP:
                profile.capped_at = profile.present + len(values)
        profile.present += len(values)
    if profile.row_numbers:
        numbers = arrow_numbers("INT", values) if profile.kind == "INT" else None
        if numbers is None or not len(numbers):
            profile.row_numbers = numbers is not None
            return
        if profile.first is None:
            profile.first = numbers[0].as_py()
        expected = np.arange(offset, offset + len(numbers)) + profile.first
        profile.row_numbers = profile.first in (0, 1) and bool(
            pc.all(pc.equal(numbers, pa.array(expected))).as_py()
        )


def _reason(name: str, profile: _Profile, rows: int) -> str | None:
    """Why the column carries no signal, or None to keep it."""
    if profile.present == 0:
        return "entirely missing"
    distinct = len(profile.distinct())
    if distinct == 1:
        return f"constant {profile.distinct()[0].as_py()!r}"
    if profile.row_numbers and (rows >= MIN_ROWS or name in ROW_NUMBER_NAMES):
        return f"row numbers {profile.first}..{profile.first + rows - 1}"
    if name in ROW_NUMBER_NAMES:
        return "row names: an export's index column"
    if profile.kind != "BYTES" or distinct <= MIN_ID_DISTINCT:
        return None
    if profile.capped_at is not None:
        if distinct > ID_SHARE * profile.capped_at:
            return f"text, {distinct:,} distinct in its first {profile.capped_at:,} values: an ID"
        return None
    if distinct > ID_SHARE * profile.present:
        return f"text, {distinct:,} distinct in {profile.present:,} rows: an ID"
    return None


def columns_without_signal(data_path: str, label: str, missing_values) -> tuple:
    """((column, why), ...) of the columns of `data_path` to leave out (module doc), in
    header order; () when the data is not readable here."""
    files = csv_files(data_path)
    if not files:
        return ()
    files, header = headed_files(files)
    if header is None:
        return ()
    missing = pa.array(list(missing_values), pa.string())
    profiles = {name: _Profile() for name in header if name != label}
    rows = 0
    for path in files:
        for batch in text_batches_of(path, header):
            for name, profile in profiles.items():
                _update(profile, batch.column(name), missing, rows)
            rows += batch.num_rows
    found = ((name, _reason(name, profile, rows)) for name, profile in profiles.items())
    return tuple((name, why) for name, why in found if why)
