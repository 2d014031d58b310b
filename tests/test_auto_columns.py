"""Columns without signal (components/auto/columns.py): which zero code leaves out, why, and
how `features`, `exclude_features`, the summary and `init`'s definition follow. No pipeline
runs."""

import re

import pytest

from components.auto import columns
from components.auto.columns import columns_without_signal
from components.example_gen import csv_text
from components.example_gen.missing import DEFAULT_MISSING_VALUES
from pipeline.cli import config_from_argv
from pipeline.init import left_out_comments
from pipeline.runner import RunSummary

ROWS = 40
STATES = ["CA", "NY", "TX", "WA", "OR"]


def _csv(path, header, rows):
    path.write_text("\n".join([",".join(header), *(",".join(map(str, r)) for r in rows)]) + "\n")
    return str(path)


@pytest.fixture
def data(tmp_path):
    """One column of each kind, and columns that must stay."""
    header = [
        "",  # an R export's row names
        "rank",  # 1..n in file order
        "name",  # unique text: an ID
        "country",  # constant, a missing cell aside
        "empty",  # no value at all
        "state",  # a text category: stays
        "age",  # numbers, all distinct: stay
        "shuffled",  # integers 0..n-1 out of order: stay
        "y",
    ]
    rows = [
        [
            f'"{i + 1}"',
            i + 1,
            f"person {i}",
            "" if i == 3 else "US",
            "NA",
            STATES[i % 5],
            20 + i * 1.5,
            (i * 7) % ROWS,
            i % 2,
        ]
        for i in range(ROWS)
    ]
    return _csv(tmp_path / "data.csv", header, rows)


def test_columns_without_signal_are_named_with_why(data):
    assert columns_without_signal(data, "y", DEFAULT_MISSING_VALUES) == (
        ("", f"row numbers 1..{ROWS}"),
        ("rank", f"row numbers 1..{ROWS}"),
        ("name", f"text, {ROWS} distinct in {ROWS} rows: an ID"),
        ("country", "constant 'US'"),
        ("empty", "entirely missing"),
    )


def test_the_label_is_never_left_out(tmp_path):
    path = _csv(tmp_path / "d.csv", ["x", "y"], [[i % 3, "same"] for i in range(ROWS)])
    assert columns_without_signal(path, "y", DEFAULT_MISSING_VALUES) == ()


@pytest.mark.parametrize(
    ("values", "why"),
    [
        # Row numbers from 0, and text row names under an export's index header.
        ([str(i) for i in range(ROWS)], f"row numbers 0..{ROWS - 1}"),
        ([f"car {i}" for i in range(ROWS)], "row names: an export's index column"),
    ],
)
def test_an_unnamed_first_column_is_the_row_index(tmp_path, values, why):
    path = _csv(
        tmp_path / "d.csv",
        ["Unnamed: 0", "x", "y"],
        [[v, i % 4, i % 2] for i, v in enumerate(values)],
    )
    assert columns_without_signal(path, "y", DEFAULT_MISSING_VALUES) == (("Unnamed: 0", why),)


def test_small_or_repeating_columns_stay(tmp_path):
    """Below MIN_ROWS a 1..n column may be a feature; 20 distinct texts are a category set
    however few the rows; a text column repeating its values is a category."""
    small = _csv(
        tmp_path / "s.csv", ["n", "word", "y"], [[i + 1, f"w{i}", i % 2] for i in range(10)]
    )
    assert columns_without_signal(small, "y", DEFAULT_MISSING_VALUES) == ()
    half = [[f"v{i % (ROWS // 2)}", i % 2] for i in range(ROWS)]  # 50% distinct: stays
    assert columns_without_signal(_csv(tmp_path / "h.csv", ["v", "y"], half), "y", ()) == ()


def test_a_column_reaching_the_distinct_cap_is_judged_on_the_rows_read(tmp_path, monkeypatch):
    """Counted a batch at a time (about 9 rows here): past 25 distinct in as many rows is an
    ID, whatever the rows after them; a column below the cap is judged on every row."""
    monkeypatch.setattr(columns, "DISTINCT_CAP", 25)
    monkeypatch.setattr(csv_text, "SCAN_BLOCK", 100)
    rows = [[f"id{i:03}", f"c{i % 10}", i % 2] for i in range(ROWS)]
    path = _csv(tmp_path / "d.csv", ["id", "category", "y"], rows)
    ((name, why),) = columns_without_signal(path, "y", DEFAULT_MISSING_VALUES)
    counted = re.fullmatch(r"text, (\d+) distinct in its first \1 values: an ID", why)
    assert name == "id" and counted and 25 <= int(counted[1]) < ROWS


def _config(*flags, data):
    return config_from_argv(["run", "--data", data, "--label", "y", *flags]).resolve_from_data()


def test_features_override_and_exclude_features_add(data):
    inferred = _config(data=data)
    assert inferred.exclude_features == ("", "rank", "name", "country", "empty")
    assert inferred.left_out[2] == ("name", f"text, {ROWS} distinct in {ROWS} rows: an ID")
    assert inferred.resolve_from_data() is inferred  # read once

    chosen = _config("--feature", "name", "--feature", "age", data=data)
    assert (chosen.features, chosen.exclude_features, chosen.left_out) == (
        ("name", "age"),
        (),
        (),
    )
    added = _config("--exclude-feature", "age", "--exclude-feature", "name", data=data)
    assert added.exclude_features == ("age", "name", "", "rank", "country", "empty")
    assert "name" not in dict(added.left_out)  # the user's own choice, not inferred

    own = _config("--preprocessing-fn", "transforms.taxi.preprocessing_fn", data=data)
    assert (own.exclude_features, own.left_out) == ((), ())


def test_a_file_with_no_signal_at_all_is_refused(tmp_path):
    path = _csv(tmp_path / "d.csv", ["country", "y"], [["US", i % 2] for i in range(ROWS)])
    with pytest.raises(ValueError, match=r"no column but the label carries a signal: country"):
        _config(data=path)


def test_the_summary_lists_what_was_left_out():
    summary = RunSummary(
        metrics={},
        blessed=True,
        pushed_to="/serving/1",
        not_pushed_reason=None,
        cached_components=[],
        evaluation_uri=None,
        left_out=(
            ("name", "text, 1,998 distinct in 2,000 rows: an ID"),
            ("Unnamed: 0", "row numbers 1..2000"),
            ("country", "constant 'US'"),
        ),
    )
    assert (
        "  left out (no signal): name (text, 1,998 distinct in 2,000 rows: an ID), "
        "Unnamed: 0 (row numbers 1..2000), country (constant 'US')"
    ) in summary.format().splitlines()


def test_init_writes_them_into_the_definition(data):
    config = _config(data=data)
    assert left_out_comments(config.left_out) == (
        "# Left out, as zero code leaves them out (no signal; preprocessing.py does not read\n"
        "# them: add one to its NUMBERS or CATEGORIES to use it):\n"
        '#   "": row numbers 1..40\n'
        '#   "rank": row numbers 1..40\n'
        '#   "name": text, 40 distinct in 40 rows: an ID\n'
        "#   \"country\": constant 'US'\n"
        '#   "empty": entirely missing\n'
    )
