"""The zero-code pre-check (components/auto/data.py) reads the CSV as ExampleGen reads it:
what ExampleGen refuses it refuses first, with ExampleGen's message (file, line, cause), and
what ExampleGen reads (rows of several MB) it reads. Called as pipeline/config.py's
`resolve_from_data` calls it; no pipeline runs."""

import gzip
import pathlib

import pytest

from components.auto.data import check_column, csv_files, read_header, read_label, resolve_task
from components.example_gen import csv_text
from components.example_gen.kinds import infer_column_kinds
from components.example_gen.missing import DEFAULT_MISSING_VALUES

ROWS = [f"{i},{i * 0.5},{'yes' if i % 3 else 'no'}" for i in range(30)]


def _resolve(path, task="auto"):
    """What `resolve_from_data` asks of the data with the auto preprocessing."""
    for column in ("a", "b"):
        check_column(str(path), column, "feature")
    return resolve_task(str(path), "y", task, None, DEFAULT_MISSING_VALUES)


def _example_gen_error(path) -> str:
    """ExampleGen's own reader's error on `path`: its records, header and rows, read whole."""
    with pytest.raises(ValueError) as error:
        files, header = csv_text.headed_files([str(path)])
        infer_column_kinds(files, header, engine="csv")
    return str(error.value)


@pytest.fixture
def gzip_csv(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(gzip.compress("\n".join(["a,b,y", *ROWS]).encode()))
    return path


@pytest.fixture
def bad_utf8_on_line_3(tmp_path):
    path = tmp_path / "data.csv"
    lines = ["a,b,y", ROWS[0], ROWS[1], *ROWS[2:]]
    data = "\n".join(lines).encode()
    line_3 = data.index(ROWS[1].encode())
    path.write_bytes(data[:line_3] + b"\xff" + data[line_3:])  # "\xff1,0.5,yes"
    return path


@pytest.fixture
def duplicate_header(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("\n".join(["a,y,b,y", *(f"{row},x" for row in ROWS)]) + "\n")
    return path


def _long_row_csv(path, megabytes):
    long_text = "z" * (megabytes << 20)
    path.write_text("\n".join(["a,b,y", ROWS[0], f'1,"{long_text}",no', *ROWS[1:]]) + "\n")
    return path


@pytest.mark.parametrize(("data", "line"), [("gzip_csv", 1), ("bad_utf8_on_line_3", 3)])
def test_bytes_that_are_not_utf8_are_refused_naming_file_and_line(request, data, line):
    """A gzip file named .csv fails at line 1, a stray byte at its line: as in ExampleGen."""
    path = request.getfixturevalue(data)
    with pytest.raises(ValueError) as error:
        _resolve(path)
    message = str(error.value)
    assert message.startswith(f"{path} line {line}: not valid UTF-8 (")
    assert message == _example_gen_error(path)


def test_the_columns_listed_for_a_gzip_file_named_csv_are_its_error(gzip_csv):
    """What `python -m pipeline run` lists the columns with fails as ExampleGen does."""
    with pytest.raises(ValueError, match="line 1: not valid UTF-8"):
        read_header(str(gzip_csv))


def test_a_header_naming_a_column_twice_is_refused_with_both_positions(duplicate_header):
    with pytest.raises(ValueError) as error:
        check_column(str(duplicate_header), "a", "feature")
    message = str(error.value)
    assert message == (
        f"{duplicate_header} line 1: column 'y' appears twice in the header, as column 2 "
        "and column 4"
    )
    assert message == _example_gen_error(duplicate_header)


@pytest.mark.parametrize("scan_block", [csv_text.SCAN_BLOCK, 1 << 20])
def test_a_row_of_several_megabytes_is_read(tmp_path, monkeypatch, scan_block):
    """Read by pyarrow; and when the row is longer than pyarrow's block (a small one here),
    by the csv module, as ExampleGen's row-at-a-time path reads it."""
    monkeypatch.setattr(csv_text, "SCAN_BLOCK", scan_block)
    path = _long_row_csv(tmp_path / "long.csv", 3)
    assert _resolve(path) == ("binary", None)
    label = read_label(str(path), "y", DEFAULT_MISSING_VALUES)
    assert (label.values, label.rows, label.missing) == (("no", "yes"), len(ROWS) + 1, 0)
    header = csv_text.read_header(str(path))
    assert infer_column_kinds([str(path)], header)["y"] == label.kind == "BYTES"


def test_every_file_is_read_as_example_gen_reads_a_folder(tmp_path):
    """Hidden files too, and a file with no lines is skipped; headers must agree."""
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / ".hidden.csv").write_text("a,b,y\n1,2.5,maybe\n")
    (tmp_path / "data.csv").write_text("\n".join(["b,a,y", *ROWS]) + "\n")
    assert [pathlib.Path(p).name for p in csv_files(str(tmp_path))] == [
        ".hidden.csv",
        "data.csv",
        "empty.csv",
    ]
    assert _resolve(tmp_path) == ("multiclass", 3)
    (tmp_path / "other.csv").write_text("a,b,z\n1,2,3\n")
    with pytest.raises(ValueError, match=r"other\.csv line 1: column 'z' is not in the header"):
        _resolve(tmp_path, task="binary")


def test_example_gen_refuses_the_same_files_with_the_same_messages(
    tmp_path, gzip_csv, bad_utf8_on_line_3, duplicate_header
):
    """ExampleGen's executor, up to its refusal (before Beam starts)."""
    from tfx.types import standard_artifacts

    from components.example_gen.executor import Executor

    for path in (gzip_csv, bad_utf8_on_line_3, duplicate_header):
        examples = standard_artifacts.Examples()
        examples.uri = str(tmp_path / "examples")
        with pytest.raises(ValueError) as example_gen:
            Executor().Do({}, {"examples": [examples]}, {"input_base": str(path)})
        with pytest.raises(ValueError) as precheck:
            _resolve(path)
        assert str(precheck.value) == str(example_gen.value)
