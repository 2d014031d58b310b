"""Rows without a label: ExampleGen sets them aside (counted, listed with file, line and
reason, in neither split), refuses only above `max_unlabeled_row_fraction`; the zero-code
pre-check no longer refuses them. Real Beam on tiny CSVs, no pipeline run."""

import csv
import glob
import os
import re

import pytest
import tensorflow as tf

from components.auto.data import resolve_task
from components.example_gen.missing import DEFAULT_MISSING_VALUES
from pipeline.runner import RunSummary
from tests.test_example_gen import HEADER, TAXI_ROWS, _read, _row, _run, _splits_left, _write
from tests.test_example_gen import schema as schema

# Taxi rows 2, 6 and 10 without their label (tips): "", "NA" and "null".
UNLABELED = {2: "", 6: "NA", 10: "null"}


def _unlabeled_csv(tmp_path, rows=40):
    lines = list(TAXI_ROWS[:rows])
    for index, token in UNLABELED.items():
        fields = lines[index].split(",")
        fields[HEADER.index("tips")] = token
        lines[index] = ",".join(fields)
    return _write(tmp_path / "in" / "data.csv", lines), lines


def _rejected(examples):
    found = []
    for path in sorted(glob.glob(os.path.join(examples.uri, "rejected", "rejected-*.csv"))):
        with open(path, newline="") as f:
            found += list(csv.DictReader(f))
    return sorted(found, key=lambda row: int(row["line"]))


def _tips(examples):
    values = []
    for split in ("train", "eval"):
        for record in _read(examples, split):
            feature = tf.train.Example.FromString(record).features.feature
            values.append("tips" in feature)
    return values


@pytest.mark.parametrize("with_schema", [True, False], ids=["schema", "no_schema"])
def test_rows_without_a_label_are_set_aside_and_listed(tmp_path, request, with_schema):
    schema = request.getfixturevalue("schema") if with_schema else None
    csv_path, lines = _unlabeled_csv(tmp_path)
    examples = _run(tmp_path, schema, csv_path, raw_label_key="tips")

    assert examples.get_int_custom_property("num_rows") == len(lines) - len(UNLABELED)
    assert examples.get_int_custom_property("num_unlabeled") == len(UNLABELED)
    assert examples.get_int_custom_property("num_rejected") == 0
    # Neither split holds them: every example written has its label.
    assert _tips(examples) == [True] * (len(lines) - len(UNLABELED))
    assert _rejected(examples) == [
        {
            "file": str(csv_path),
            "line": str(index + 2),  # the header is line 1
            "column": "tips",
            "reason": "label missing",
            "raw": lines[index],
        }
        for index in sorted(UNLABELED)
    ]


def test_without_a_raw_label_key_nothing_is_set_aside(tmp_path):
    csv_path, lines = _unlabeled_csv(tmp_path)
    examples = _run(tmp_path, None, csv_path)
    assert examples.get_int_custom_property("num_rows") == len(lines)
    assert examples.get_int_custom_property("num_unlabeled") == 0
    assert _tips(examples).count(False) == len(UNLABELED)  # absent features, as before
    assert not os.path.exists(os.path.join(examples.uri, "rejected"))


def test_unlabeled_rows_and_bad_rows_are_counted_apart(tmp_path, schema):
    lines = [*TAXI_ROWS[:30], _row(fare="abc"), _row(tips="")]
    csv_path = _write(tmp_path / "in" / "data.csv", lines)
    examples = _run(tmp_path, schema, csv_path, raw_label_key="tips", max_bad_row_fraction=0.1)
    assert examples.get_int_custom_property("num_rejected") == 1
    assert examples.get_int_custom_property("num_unlabeled") == 1
    assert [(r["line"], r["column"], r["reason"]) for r in _rejected(examples)] == [
        ("32", "fare", "'abc' is not a valid FLOAT"),
        ("33", "tips", "label missing"),
    ]


def test_above_the_fraction_the_input_is_refused_naming_file_and_counts(tmp_path):
    csv_path, _ = _unlabeled_csv(tmp_path, rows=20)
    rejected_dir = os.path.join(tmp_path, "examples", "rejected")
    with pytest.raises(
        ValueError,
        match=re.escape(
            "label 'tips' is missing in 3 of 20 rows (0.15 > max_unlabeled_row_fraction 0.1); "
            f"first: {csv_path} line 4; the rows are listed in {rejected_dir}"
        ),
    ):
        _run(tmp_path, None, csv_path, raw_label_key="tips", max_unlabeled_row_fraction=0.1)
    assert glob.glob(os.path.join(rejected_dir, "rejected-*.csv"))
    assert not _splits_left(tmp_path)


def test_the_precheck_no_longer_refuses_them_but_an_empty_label_column(tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("x,label\n1,a\n2,NA\n3,b\n4,\n")
    assert resolve_task(str(path), "label", "auto", None, DEFAULT_MISSING_VALUES) == (
        "binary",
        None,
    )
    empty = tmp_path / "empty.csv"
    empty.write_text("x,label\n1,\n2,NA\n")
    with pytest.raises(ValueError, match=r"label 'label' is missing in every one of the 2 rows"):
        resolve_task(str(empty), "label", "auto", None, DEFAULT_MISSING_VALUES)


def test_the_summary_says_what_was_set_aside():
    def line(unlabeled, bad):
        summary = RunSummary(
            metrics={},
            blessed=True,
            pushed_to="/serving/1",
            not_pushed_reason=None,
            cached_components=[],
            evaluation_uri=None,
            input_rows=333,
            unlabeled_rows=unlabeled,
            bad_rows=bad,
            rejected_dir="/root/ExampleGen/examples/1/rejected",
        )
        return [s for s in summary.format().splitlines() if "set aside" in s]

    listed = "never trained or evaluated on; listed with file, line and reason in "
    assert line(11, 0) == [
        f"  set aside: 11 of 344 rows without a label: {listed}/root/ExampleGen/examples/1/rejected"
    ]
    assert line(11, 2) == [
        "  set aside: 11 of 346 rows without a label; 2 of 346 rows malformed: "
        f"{listed}/root/ExampleGen/examples/1/rejected"
    ]
    assert line(0, 0) == []
