"""Zero code, piece by piece: the auto preprocessing_fn on a tiny in-memory dataset (real
tf.Transform on Beam), the auto model over its output, task inference from the label column,
the wrong-label message, missing-value tokens in ExampleGen, and the zero-code defaults."""

import os

import pytest
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from components.auto import LABEL_VOCABULARY, feature_vocabulary, transformed_name
from components.auto.data import check_column, infer_task, read_label, resolve_task
from pipeline.config import PipelineConfig
from tests.conftest import taxi_config

SCHEMA = """
feature { name: "x" type: FLOAT presence { min_count: 1 } value_count { min: 1 max: 1 } }
feature { name: "n" type: INT presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
feature { name: "rooms" type: INT int_domain { is_categorical: true } presence { min_count: 1 }
          value_count { min: 1 max: 1 } }
feature { name: "city" type: BYTES presence { min_count: 1 } value_count { min: 1 max: 1 } }
feature { name: "y" type: %s presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
"""
ROWS = [
    {"x": [1.0], "n": [3], "rooms": [1], "city": [b"north"], "y": [b"red"]},
    {"x": [], "n": [5], "rooms": [], "city": [], "y": [b"blue"]},
    {"x": [3.0], "n": [7], "rooms": [2], "city": [b"south"], "y": [b"green"]},
    {"x": [5.0], "n": [9], "rooms": [2], "city": [b"north"], "y": [b"red"]},
]


def _schema(label_type="BYTES"):
    return text_format.Parse(SCHEMA % label_type, schema_pb2.Schema())


def _transform(tmp_path, schema, rows, label, task):
    """(transformed rows, TFTransformOutput) of the auto preprocessing over `rows`."""
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata

    from components.auto.preprocessing import build_preprocessing_fn
    from components.schema_gen.inference import with_fixed_shapes

    metadata = dataset_metadata.DatasetMetadata(with_fixed_shapes(schema))
    out_dir = str(tmp_path / "transform")
    with tft_beam.Context(temp_dir=str(tmp_path / "tmp"), force_tf_compat_v1=False):
        (transformed, _), transform_fn = (
            rows,
            metadata,
        ) | tft_beam.AnalyzeAndTransformDataset(build_preprocessing_fn(schema, label, task))
        _ = transform_fn | tft_beam.WriteTransformFn(out_dir)
    return transformed, tft.TFTransformOutput(out_dir)


@pytest.fixture(scope="module")
def multiclass(tmp_path_factory):
    return _transform(tmp_path_factory.mktemp("auto"), _schema(), ROWS, "y", "multiclass")


@pytest.mark.slow  # a tf.Transform Beam job
def test_numbers_are_z_scored_with_missing_values_at_the_mean(multiclass):
    import numpy as np

    rows, _ = multiclass
    x = [row["x_xf"] for row in rows]
    assert x[1] == 0.0  # missing: the mean, 0 after scaling
    present = np.array([x[0], x[2], x[3]])
    assert present.mean() == pytest.approx(0.0, abs=1e-6)
    assert present.std() == pytest.approx(1.0, abs=1e-5)
    n = np.array([row["n_xf"] for row in rows])  # an INT column not marked categorical
    assert n.mean() == pytest.approx(0.0, abs=1e-6) and n.std() == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow  # a tf.Transform Beam job
def test_strings_and_categorical_ints_are_vocabulary_ids_with_oov_buckets(multiclass):
    rows, output = multiclass
    city_vocab = [v.decode() for v in output.vocabulary_by_name(feature_vocabulary("city"))]
    assert city_vocab == ["north", "south"]
    ids = [row["city_xf"] for row in rows]
    assert ids[0] == ids[3] == 0 and ids[2] == 1
    assert 2 <= ids[1] < 12  # missing: one of the OOV ids after the vocabulary
    rooms_vocab = [v.decode() for v in output.vocabulary_by_name(feature_vocabulary("rooms"))]
    assert sorted(rooms_vocab) == ["1", "2"]
    schema = {f.name: f for f in output.transformed_metadata.schema.feature}
    # The id range TFT annotates: vocabulary size + 10 OOV buckets.
    assert schema["city_xf"].int_domain.max == 2 + 10 - 1
    assert schema["rooms_xf"].int_domain.is_categorical


@pytest.mark.slow  # a tf.Transform Beam job
def test_a_classification_label_stays_text_with_its_classes_in_a_vocabulary(multiclass):
    rows, output = multiclass
    assert [row["y_xf"] for row in rows] == [b"red", b"blue", b"green", b"red"]
    assert sorted(output.vocabulary_by_name(LABEL_VOCABULARY)) == [b"blue", b"green", b"red"]
    assert set(output.transformed_feature_spec()) == {
        transformed_name(name) for name in ("x", "n", "rooms", "city", "y")
    }


@pytest.mark.slow  # a tf.Transform Beam job
def test_the_auto_model_reads_ids_wide_numbers_deep_and_sorted_classes(
    multiclass, tmp_path, monkeypatch
):
    from components import estimator
    from components.auto import model

    _, output = multiclass
    wide, deep = model.feature_columns(output, "y_xf")
    assert sorted(c.name for c in wide) == ["city_xf", "rooms_xf"]
    assert {c.name for c in deep} == {"x_xf", "n_xf", "city_xf_indicator", "rooms_xf_indicator"}
    # the numbers as one column, side by side, for a linear model or a DNN on a wide table
    _, apart = model.feature_columns(output, "y_xf", numbers_together=True)
    assert {c.name for c in apart} == {c.name for c in deep}  # 2 numbers: not wide
    monkeypatch.setattr(model, "NUMBERS_TOGETHER_FROM", 2)
    _, together = model.feature_columns(output, "y_xf", numbers_together=True)
    assert {c.name for c in together} == {
        "all_numbers",
        "city_xf_indicator",
        "rooms_xf_indicator",
    }
    (numbers,) = [c for c in together if c.name == "all_numbers"]
    assert [c.name for c in numbers.columns] == ["n_xf", "x_xf"]
    assert model.label_classes(output) == ["blue", "green", "red"]
    classifier = model.build_estimator(
        estimator.RunConfig(model_dir=str(tmp_path)),
        {"hidden_units": [4]},
        tft_output=output,
        transformed_label_key="y_xf",
        task="multiclass",
    )
    assert isinstance(classifier, estimator.DNNLinearCombinedClassifier)
    with pytest.raises(ValueError, match="task binary but the train split's label has 3"):
        model.build_estimator(
            estimator.RunConfig(model_dir=str(tmp_path)),
            {},
            tft_output=output,
            transformed_label_key="y_xf",
            task="binary",
        )
    assert model.sort_classes(["10", "9", "-1"]) == ["-1", "9", "10"]


@pytest.mark.slow  # a tf.Transform Beam job
def test_a_canned_estimator_by_name_trains_over_the_columns_its_kind_reads(multiclass, tmp_path):
    import tensorflow as tf

    from components import estimator as canned
    from components.auto import model

    transformed, output = multiclass
    spec = output.transformed_feature_spec()

    def input_fn():
        columns = {name: [row[name] for row in transformed] for name in spec}
        label = columns.pop("y_xf")
        return tf.data.Dataset.from_tensors((columns, label)).repeat()

    built = {}
    for name, args in (
        ("DNNClassifier", {"hidden_units": [3], "dropout": 0.1}),
        ("LinearClassifier", {"optimizer": "Adam"}),
    ):
        model_dir = str(tmp_path / name)
        estimator = model.build_estimator(
            _run_config(model_dir),
            {"hidden_units": [4], "canned": name, "canned_args": args},
            tft_output=output,
            transformed_label_key="y_xf",
            task="multiclass",
        )
        assert type(estimator) is getattr(canned, name)  # (2.15's V2 name: DNNClassifierV2)
        estimator.train(input_fn, steps=2)
        built[name] = dict(tf.train.list_variables(model_dir))

    def variable(name, key):
        return built[name].get(key)

    # hidden_units come from canned_args (not hparams); the DNN reads the two numbers and
    # the indicators of the two id columns (12 ids each); the linear model reads ids and
    # numbers, no hidden layer, with the optimizer canned_args named.
    assert variable("DNNClassifier", "dnn/hiddenlayer_0/kernel") == [26, 3]
    assert variable("DNNClassifier", "dnn/hiddenlayer_1/kernel") is None
    assert variable("LinearClassifier", "linear/linear_model/city_xf/weights") == [12, 3]
    assert variable("LinearClassifier", "linear/linear_model/x_xf/weights") == [1, 3]
    # (Adam counts its steps in global_step, as 2.15's canned optimizers did: no iter.)
    assert variable("LinearClassifier", "training/Adam/iter") is None
    assert variable("LinearClassifier", "training/Adam/learning_rate") == []
    assert not any("hiddenlayer" in key for key in built["LinearClassifier"])


def _run_config(model_dir):
    from components import estimator

    return estimator.RunConfig(model_dir=model_dir)


def test_the_auto_preprocessing_takes_the_chosen_columns():
    from components.auto.preprocessing import plan

    def names(**choice):
        return [name for name, _, _ in plan(_schema(), "y", "multiclass", **choice)[0]]

    assert names() == ["x", "n", "rooms", "city"]
    assert names(features=("city", "x")) == ["x", "city"]
    assert names(exclude=("n",)) == ["x", "rooms", "city"]
    with pytest.raises(ValueError, match=r"features \['citty'\] are not schema columns"):
        names(exclude=("citty",))


@pytest.mark.slow  # a tf.Transform Beam job
def test_integer_labels_become_class_names_and_regression_labels_floats(tmp_path):
    int_rows = [dict(row, y=[label]) for row, label in zip(ROWS, [3, 1, 2, 3], strict=True)]
    rows, output = _transform(tmp_path / "c", _schema("INT"), int_rows, "y", "multiclass")
    assert [row["y_xf"] for row in rows] == [b"3", b"1", b"2", b"3"]
    rows, output = _transform(tmp_path / "r", _schema("INT"), int_rows, "y", "regression")
    assert [row["y_xf"] for row in rows] == [3.0, 1.0, 2.0, 3.0]
    assert LABEL_VOCABULARY not in os.listdir(
        os.path.join(output.transform_savedmodel_dir, "assets")
    )


def test_the_plan_refuses_an_optional_label_and_a_text_regression_label():
    from components.auto.preprocessing import plan

    schema = _schema()
    with pytest.raises(ValueError, match="needs the task"):
        plan(schema, "y", "auto")
    with pytest.raises(ValueError, match="regression needs a numeric label; 'y' is text"):
        plan(schema, "y", "regression")
    with pytest.raises(ValueError, match="label 'z' is not a schema column: x, n, rooms"):
        plan(schema, "z", "binary")
    schema.feature[4].presence.min_fraction = 0.5
    with pytest.raises(ValueError, match="not required by the schema"):
        plan(schema, "y", "binary")


def _csv(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_wrong_label_names_the_columns_and_the_closest_one(tmp_path, capsys):
    from pipeline.cli import main

    path = _csv(tmp_path, "age,city,target\n1,a,yes\n2,b,no\n")
    with pytest.raises(ValueError) as e:
        check_column(path, "tagret")
    assert str(e.value) == (
        f"label 'tagret' is not a column of {path} (closest: 'target'); its columns are "
        "age, city, target."
    )
    # On the command line: refused before anything runs, exit status 2.
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--data", path, "--label", "Target", "--output-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "label 'Target' is not a column" in capsys.readouterr().err
    assert not (tmp_path / "pipelines").exists()
    with pytest.raises(SystemExit):
        main(["run", "--data", path])
    assert "--label: name the column to predict: one of age, city, target" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("values", "task", "classes"),
    [
        (["yes", "no", "yes"], "binary", 2),
        (["0", "1", "1"], "binary", 2),
        (["0.5", "2.5", "0.5"], "binary", 2),
        (["a", "b", "c", "a"], "multiclass", 3),
        (["1", "2", "3", "4"], "multiclass", 4),
        ([str(i) for i in range(30)], "regression", None),
        (["0.1", "0.2", "0.35"], "regression", None),
    ],
)
def test_the_task_follows_the_label_values(tmp_path, values, task, classes):
    path = _csv(tmp_path, "x,label\n" + "".join(f"{i},{v}\n" for i, v in enumerate(values)))
    assert infer_task(read_label(path, "label", ("", "NA"))) == task
    assert resolve_task(path, "label", "auto", None, ("",)) == (
        task,
        classes if task == "multiclass" else None,
    )


def test_task_inference_refuses_what_it_cannot_decide(tmp_path):
    one = _csv(tmp_path, "x,label\n1,a\n2,a\n", "one.csv")
    with pytest.raises(ValueError, match="1 distinct value"):
        resolve_task(one, "label", "auto", None, ("",))
    many = _csv(tmp_path, "x,label\n" + "".join(f"{i},v{i}\n" for i in range(120)), "many.csv")
    with pytest.raises(ValueError, match="text with more than 100 distinct values"):
        resolve_task(many, "label", "auto", None, ("",))
    holes = _csv(tmp_path, "x,label\n1,a\n2,NA\n3,b\n4,\n", "holes.csv")
    # A given task needs no reading beyond the header, and a multiclass count is counted.
    assert resolve_task(holes, "label", "binary", None, ("",)) == ("binary", None)
    with pytest.raises(ValueError, match="more than 100 distinct values: give num_classes"):
        resolve_task(many, "label", "multiclass", None, ("",))
    three = _csv(tmp_path, "x,label\n1,a\n2,b\n3,c\n", "three.csv")
    assert resolve_task(three, "label", "multiclass", None, ("",)) == ("multiclass", 3)


def test_zero_code_defaults_and_the_taxi_default_unchanged(tmp_path):
    from pipeline.cli import config_from_argv

    path = _csv(tmp_path, "age,city,target\n1,a,x\n2,b,y\n3,a,z\n", "My Data.csv")
    assert config_from_argv(["run"]) == taxi_config()
    config = config_from_argv(["run", "--data", path, "--label", "target"])
    assert (config.pipeline_name, config.schema_path, config.transformed_label_key) == (
        "My_Data",
        None,
        "target_xf",
    )
    assert (config.preprocessing_fn, config.estimator_fn, config.task) == ("auto", "auto", "auto")
    assert config.resolve_from_data().task == "multiclass"
    assert config.resolve_from_data().num_classes == 3
    given = config_from_argv(
        ["run", "--data", path, "--label", "target", "--task", "multiclass",
         "--missing-value=", "--missing-value=?", "--pipeline-name", "p"]
    )  # fmt: skip
    assert (given.task, given.missing_values, given.pipeline_name) == ("multiclass", ("", "?"), "p")
    with pytest.raises(ValueError, match="num_classes is for task 'multiclass', not 'auto'"):
        PipelineConfig(data_path=path, raw_label_key="target", num_classes=3)


def test_the_vocabulary_min_count_reaches_the_auto_transform_and_is_checked(tmp_path):
    from pipeline.cli import config_from_argv
    from pipeline.pipeline import create_components

    path = _csv(tmp_path, "age,city,target\n1,a,x\n2,b,y\n3,a,z\n")
    argv = ["run", "--data", path, "--label", "target", "--task", "multiclass"]
    assert config_from_argv(argv).vocabulary_min_count == 1
    config = config_from_argv([*argv, "--vocabulary-min-count", "3"])
    (transform,) = [c for c in create_components(config) if c.id == "Transform"]
    assert transform.exec_properties["vocabulary_min_count"] == 3
    with pytest.raises(ValueError, match="vocabulary_min_count must be at least 1, got 0"):
        PipelineConfig(data_path=path, raw_label_key="target", vocabulary_min_count=0)
    from components.auto.preprocessing import build_preprocessing_fn
    from components.transform.executor import _auto_preprocessing_fn

    with pytest.raises(ValueError, match="vocabulary_min_count must be an integer of at least 1"):
        build_preprocessing_fn(_schema(), "y", "multiclass", vocabulary_min_count=0)
    # the Transform's executor hands it on; unset (None, or 0 from a pipeline IR): the default
    for given, used in ((3, 3), (None, 1), (0, 1)):
        properties = {"raw_label_key": "y", "task": "multiclass", "vocabulary_min_count": given}
        function, _ = _auto_preprocessing_fn(properties, _schema())
        assert function.keywords["min_count"] == used, given


def test_example_gen_reads_missing_value_tokens_as_absent_features(tmp_path):
    from components.example_gen.executor import _ParseCsvRange, infer_column_kinds

    path = _csv(tmp_path, "a,b,c\n1,2.5,x\nNA,NaN,null\n3,,y\n")
    assert infer_column_kinds([path], ["a", "b", "c"], missing=("", "NA", "NaN", "null")) == {
        "a": "INT",
        "b": "FLOAT",
        "c": "BYTES",
    }
    assert infer_column_kinds([path], ["a", "b", "c"], missing=("",)) == {
        "a": "BYTES",
        "b": "BYTES",
        "c": "BYTES",
    }
    parse = _ParseCsvRange(
        {"a": ("INT", False), "b": ("FLOAT", False), "c": ("BYTES", False)},
        "",
        [1],
        [],
        ("", "NA", "NaN", "null"),
    )
    header = ("a", "b", "c")
    assert parse._parse_row(header, ["NA", "NaN", "null"]) == [None, None, None]
    assert parse._parse_row(header, ["7", "1.5", "NA "]) == [7, 1.5, b"NA "]  # exact tokens
