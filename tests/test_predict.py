"""`predict`'s reading of new rows, as ExampleGen reads them (the served model end to end:
tests/test_zero_code.py)."""

import pytest

from pipeline.cli import main
from pipeline.predict import Refused, ServedModel, read_rows

MODEL = ServedModel(
    version=1,
    path="-",
    columns={
        "x": ("FLOAT", False),
        "n": ("INT", True),
        "city": ("BYTES", False),
        "y": ("BYTES", True),
    },
    label="y",
    transformed_label="y_xf",
    task="binary",
    missing_values=("", "NA"),
)


def _features(serialized):
    import tensorflow as tf

    feature = tf.train.Example.FromString(serialized).features.feature
    return {name: getattr(f, f.WhichOneof("kind")).value[0] for name, f in feature.items()}


def test_rows_become_the_examples_a_client_sends_and_bad_ones_are_set_aside(tmp_path):
    data = tmp_path / "new.csv"
    data.write_text(
        "id,x,n,city,y\n"
        "a,1.5,3,north,yes\n"
        "b,NA,4,,\n"  # missing cells left out; no label
        "c,1.5,3\n"  # ragged
        "d,high,3,north,no\n"  # not a FLOAT
        "e,2,,south,no\n"  # a required value missing
    )
    rows = read_rows(str(data), MODEL, id_column="id")
    assert rows.ids == ["a", "b"]
    assert _features(rows.examples[0]) == {"x": 1.5, "n": 3, "city": b"north"}
    assert _features(rows.examples[1]) == {"n": 4}
    assert _features(rows.labelled[0]) == {"x": 1.5, "n": 3, "city": b"north", "y": b"yes"}
    assert rows.labelled[1] is None
    assert rows.set_aside == [
        (str(data), 4, "", "expected 5 fields, got 3"),
        (str(data), 5, "x", "'high' is not a valid FLOAT"),
        (str(data), 6, "n", "missing value for required feature"),
    ]
    assert rows.ignored_columns == []
    assert read_rows(str(data), MODEL).ids == [2, 3]  # the line numbers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "new.csv: empty file"),
        ("x,city\n1,a\n", "new.csv line 1: no column 'n', which the model needs in every row"),
    ],
)
def test_a_file_it_cannot_read_is_refused_in_one_line(tmp_path, text, message):
    data = tmp_path / "new.csv"
    data.write_text(text)
    with pytest.raises(Refused, match=message):
        read_rows(str(data), MODEL)
    with pytest.raises(Refused, match=r"--data .*nope\.csv: no such file"):
        read_rows(str(tmp_path / "nope.csv"), MODEL)


def test_predict_without_a_pushed_model_exits_2_in_one_line(tmp_path, capsys):
    data = tmp_path / "new.csv"
    data.write_text("x\n1\n")
    argv = ["predict", "--pipeline-name", "p", "--output-dir", str(tmp_path), "--data", str(data)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: No ML Metadata store at "), err


def test_a_folder_s_rows_are_named_file_and_line(tmp_path):
    (tmp_path / "b.csv").write_text("n,y\n5,no\n")
    (tmp_path / "a.csv").write_text("n,y,extra\n3,yes,1\n4,no,2\n")
    rows = read_rows(str(tmp_path), MODEL)
    assert rows.ids == ["a.csv:2", "a.csv:3", "b.csv:2"]
    assert [_features(e) for e in rows.examples] == [{"n": 3}, {"n": 4}, {"n": 5}]
    assert rows.ignored_columns == ["extra"]
