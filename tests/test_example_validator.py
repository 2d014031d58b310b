"""ExampleValidator: each anomaly kind caught and named, the artifact, and the Trainer gate."""

import json
import os

import pytest
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2

from components.example_validator.checks import (
    KINDS,
    anomaly_lines,
    check_kinds,
    find_anomalies,
    has_errors,
    to_proto,
)
from tests.conftest import run_statistics_gen, schema_artifact, small_pipeline_config, taxi_config

_Type = anomalies_pb2.AnomalyInfo
_Stats = statistics_pb2.FeatureNameStatistics
EXAMPLES = 100
SCHEMA = """
feature { name: "amount" type: FLOAT presence { min_fraction: 1.0 }
          float_domain { min: 0 max: 100 } }
feature { name: "count" type: INT presence { min_fraction: 0.5 } domain: "counts" }
feature { name: "color" type: BYTES presence { min_count: 1 }
          string_domain { value: ["red", "green", "blue"] } }
feature { name: "size" type: BYTES domain: "sizes"
          distribution_constraints { min_domain_mass: 0.9 } }
feature { name: "label" type: INT presence { min_fraction: 1.0 } }
feature { name: "retired" type: FLOAT lifecycle_stage: DEPRECATED }
feature { name: "rare" type: FLOAT presence { min_count: 0 } }
int_domain { name: "counts" min: 0 max: 10 }
string_domain { name: "sizes" value: ["S", "M", "L"] }
"""


def _schema(text=SCHEMA):
    return text_format.Parse(text, schema_pb2.Schema())


def _numbers(name, low, high, present=EXAMPLES, kind=_Stats.FLOAT):
    feature = _Stats(type=kind)
    feature.path.step.append(name)
    feature.num_stats.common_stats.num_non_missing = present
    feature.num_stats.common_stats.num_missing = EXAMPLES - present
    feature.num_stats.common_stats.tot_num_values = present
    feature.num_stats.min, feature.num_stats.max = low, high
    return feature


def _strings(name, counts, present=EXAMPLES, top=None):
    """`counts` in the rank histogram; `top` of them in top_values only, when given."""
    feature = _Stats(type=_Stats.STRING)
    feature.path.step.append(name)
    stats = feature.string_stats
    stats.common_stats.num_non_missing = present
    stats.common_stats.num_missing = EXAMPLES - present
    stats.common_stats.tot_num_values = sum(counts.values())
    stats.unique = len(counts)
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    for rank, (value, count) in enumerate(ranked):
        stats.top_values.add(value=value, frequency=count)
        if top is None:
            stats.rank_histogram.buckets.add(
                low_rank=rank, high_rank=rank, label=value, sample_count=count
            )
    del stats.top_values[top or len(ranked) :]
    return feature


def _clean():
    return {
        "amount": _numbers("amount", 0.5, 99.0),
        "count": _numbers("count", 0, 10, present=60, kind=_Stats.INT),
        "color": _strings("color", {"red": 50, "green": 30, "blue": 20}),
        "size": _strings("size", {"S": 40, "M": 40, "L": 15, "XL": 5}),
        "label": _numbers("label", 0, 1, kind=_Stats.INT),
    }


def _dataset(features):
    dataset = statistics_pb2.DatasetFeatureStatistics(num_examples=EXAMPLES)
    dataset.features.extend(features.values())
    return dataset


def _found(**changes):
    """(column, kind, type) of every anomaly when `changes` replace clean features."""
    features = _clean()
    for name, feature in changes.items():
        if feature is None:
            del features[name]
        else:
            features[name] = feature
    return sorted(
        (a.column, a.kind, a.type) for a in find_anomalies(_dataset(features), _schema(), "label")
    )


def test_clean_statistics_have_no_anomaly():
    # XL is 5% of `size`, under its 10% allowance; the deprecated column is absent unchecked,
    # and so is `rare`, which presence { min_count: 0 } lets have no value.
    assert _found() == []


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"amount": None}, ("amount", "missing_column", _Type.SCHEMA_MISSING_COLUMN)),
        (
            {"amount": _numbers("amount", 0, 1, present=0)},
            ("amount", "missing_column", _Type.SCHEMA_MISSING_COLUMN),
        ),
        ({"extra": _numbers("extra", 0, 1)}, ("extra", "new_column", _Type.SCHEMA_NEW_COLUMN)),
        (
            {"count": _strings("count", {"3": 60}, present=60)},
            ("count", "type_change", _Type.UNEXPECTED_DATA_TYPE),
        ),
        (
            {"amount": _numbers("amount", 1, 2, present=97)},
            ("amount", "low_presence", _Type.FEATURE_TYPE_LOW_FRACTION_PRESENT),
        ),
        (
            {"count": _numbers("count", 0, 10, present=40, kind=_Stats.INT)},
            ("count", "low_presence", _Type.FEATURE_TYPE_LOW_FRACTION_PRESENT),
        ),
        (
            {"color": _strings("color", {"red": 90, "purple": 10})},
            ("color", "out_of_domain", _Type.ENUM_TYPE_UNEXPECTED_STRING_VALUES),
        ),
        (
            {"size": _strings("size", {"S": 40, "M": 40, "XL": 20})},
            ("size", "out_of_domain", _Type.ENUM_TYPE_UNEXPECTED_STRING_VALUES),
        ),
        (
            {"amount": _numbers("amount", -3.5, 50)},
            ("amount", "out_of_range", _Type.FLOAT_TYPE_SMALL_FLOAT),
        ),
        (
            {"count": _numbers("count", 0, 11, present=60, kind=_Stats.INT)},
            ("count", "out_of_range", _Type.INT_TYPE_BIG_INT),
        ),
        ({"label": None}, ("label", "label_missing", _Type.FEATURE_TYPE_NOT_PRESENT)),
        (
            {"label": _numbers("label", 0, 1, present=99, kind=_Stats.INT)},
            ("label", "label_missing", _Type.FEATURE_TYPE_LOW_FRACTION_PRESENT),
        ),
        (
            {"label": _numbers("label", 1, 1, kind=_Stats.INT)},
            ("label", "label_constant", _Type.FEATURE_TYPE_LOW_UNIQUE),
        ),
    ],
    ids=lambda value: value[1] if isinstance(value, tuple) else None,
)
def test_each_anomaly_kind_is_caught_with_tfdv_type(changes, expected):
    assert _found(**changes) == [expected]


def test_every_kind_is_tested():
    assert set(KINDS) == {
        "missing_column",
        "new_column",
        "type_change",
        "low_presence",
        "out_of_domain",
        "out_of_range",
        "label_missing",
        "label_constant",
        "drift",  # these two: tests/test_drift.py
        "skew",
    }


def test_a_constant_string_label_and_a_label_the_schema_lacks_are_checked():
    schema = _schema('feature { name: "x" type: FLOAT }')
    dataset = _dataset({"x": _numbers("x", 0, 1), "y": _strings("y", {"yes": EXAMPLES})})
    assert [(a.column, a.kind) for a in find_anomalies(dataset, schema, "y")] == [
        ("y", "label_constant")
    ]
    assert [(a.column, a.kind) for a in find_anomalies(dataset, schema, "z")] == [
        ("z", "label_missing"),
        ("y", "new_column"),
    ]


def test_out_of_domain_mass_counts_values_the_statistics_do_not_list_as_outside():
    # Only the top two values are listed (no rank histogram): the unlisted 20% may be anything,
    # so they count as outside; the description says so.
    truncated = _strings("color", {"red": 50, "green": 30, "blue": 20}, top=2)
    (anomaly,) = find_anomalies(_dataset({**_clean(), "color": truncated}), _schema(), "label")
    assert (anomaly.kind, anomaly.observed) == (
        "out_of_domain",
        "20% outside ( and values not listed)",
    )


def test_descriptions_name_column_kind_observed_and_expected():
    features = {
        **_clean(),
        "color": _strings("color", {"red": 90, "purple": 7, "pink": 3}),
        "amount": _numbers("amount", 1, 2, present=97),
    }
    proto = to_proto(find_anomalies(_dataset(features), _schema(), "label"), _schema())
    assert anomaly_lines(proto, "eval") == [
        "eval: amount: low_presence (error): fewer examples hold the column than "
        "presence.min_fraction or min_count: observed 97% of 100 examples, expected at least "
        "100%",
        "eval: color: out_of_domain (error): less than min_domain_mass of the values in the "
        "column's string_domain: observed 10% outside ('purple' 7, 'pink' 3), expected at most "
        "0% outside {blue, green, red}",
    ]
    info = proto.anomaly_info["color"]
    assert list(info.path.step) == ["color"] and info.short_description == "out_of_domain"
    assert proto.baseline == _schema()


def test_warn_only_kinds_are_warnings_and_do_not_fail():
    anomalies = find_anomalies(
        _dataset(
            {
                **_clean(),
                "extra": _numbers("extra", 0, 1),
                "label": _numbers("label", 1, 1, kind=_Stats.INT),
            }
        ),
        _schema(),
        "label",
    )
    assert has_errors(to_proto(anomalies, _schema(), ["new_column"]))
    proto = to_proto(anomalies, _schema(), ["new_column", "label_constant"])
    assert not has_errors(proto)
    assert {info.severity for info in proto.anomaly_info.values()} == {_Type.WARNING}
    with pytest.raises(ValueError, match=r"unknown anomaly kind.*no_such_kind"):
        check_kinds(["no_such_kind"])


# The executor on real statistics: StatisticsGen's executor over generated TFRecords.


def _artifacts(tmp_path, rows_by_split, schema_text):
    """Examples from {split: [feature dict]}, the schema, and their StatisticsGen statistics."""
    import tensorflow as tf
    from tfx.types import artifact_utils, standard_artifacts

    def feature(value):
        if isinstance(value, str):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
        if isinstance(value, int):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))

    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    examples.split_names = artifact_utils.encode_split_names(list(rows_by_split))
    for split, rows in rows_by_split.items():
        os.makedirs(os.path.join(examples.uri, f"Split-{split}"))
        with tf.io.TFRecordWriter(
            os.path.join(examples.uri, f"Split-{split}", "data.gz"), "GZIP"
        ) as writer:
            for row in rows:
                writer.write(
                    tf.train.Example(
                        features=tf.train.Features(
                            feature={key: feature(value) for key, value in row.items()}
                        )
                    ).SerializeToString()
                )
    # No schema for StatisticsGen: the statistics type columns by what the examples hold.
    return run_statistics_gen(tmp_path, examples), schema_artifact(tmp_path / "schema", schema_text)


def _validate(statistics, schema, tmp_path, **exec_properties):
    from tfx.types import standard_artifacts

    from components.example_validator.executor import Executor

    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(tmp_path / "anomalies")
    properties = {"raw_label_key": "label", "warn_only": "[]"}
    properties.update(exec_properties)
    error = None
    try:
        Executor().Do(
            {"statistics": [statistics], "schema": [schema]}, {"anomalies": [anomalies]}, properties
        )
    except RuntimeError as e:
        error = e
    return anomalies, error


VALIDATOR_SCHEMA = """
feature { name: "city" type: BYTES string_domain { value: ["Oslo", "Rome"] } }
feature { name: "age" type: INT int_domain { min: 0 max: 120 } }
feature { name: "label" type: INT }
"""


def test_executor_writes_tfx_layout_and_fails_naming_each_anomaly(tmp_path):
    from tfx.types import artifact_utils

    from components.example_validator.layout import load_anomaly_lines

    good = [{"city": "Oslo", "age": 30 + i % 40, "label": i % 2} for i in range(60)]
    bad = [
        {"city": "Paris" if i % 4 == 0 else "Rome", "age": "thirty", "label": 1, "note": "new"}
        for i in range(40)
    ]
    statistics, schema = _artifacts(tmp_path, {"train": good, "eval": bad}, VALIDATOR_SCHEMA)
    anomalies, error = _validate(statistics, schema, tmp_path)
    assert artifact_utils.decode_split_names(anomalies.split_names) == ["train", "eval"]
    for split in ("train", "eval"):
        assert os.listdir(os.path.join(anomalies.uri, f"Split-{split}")) == ["SchemaDiff.pb"]
    lines = load_anomaly_lines(anomalies.uri, ["train", "eval"])
    assert [line.split(" (")[0] for line in lines] == [
        "eval: age: type_change",
        "eval: city: out_of_domain",
        "eval: label: label_constant",
        "eval: note: new_column",
    ]
    assert "observed BYTES, expected INT" in lines[0]
    assert "observed 25% outside ('Paris' 10)" in lines[1]
    message = str(error)
    assert "Data validation failed; the Trainer does not run" in message
    assert all(line in message for line in lines)

    _, error = _validate(
        statistics,
        schema,
        tmp_path,
        warn_only=json.dumps(["type_change", "out_of_domain", "label_constant", "new_column"]),
    )
    assert error is None


@pytest.mark.slow
def test_bad_data_stops_the_pipeline_before_the_trainer(tmp_path, small_taxi_csv):
    from components.example_validator.executor import DataValidationError
    from pipeline.runner import run_locally

    lines = small_taxi_csv.read_text().splitlines()
    tips = lines[0].split(",").index("tips")
    rows = [line.split(",") for line in lines[1:]]
    for row in rows:
        row[tips] = "0.0"  # a label that holds one value: nothing to learn
    bad = tmp_path / "constant_tips.csv"
    bad.write_text("\n".join([lines[0]] + [",".join(row) for row in rows]) + "\n")
    config = small_pipeline_config(tmp_path / "out", bad)
    with pytest.raises(DataValidationError) as failure:
        run_locally(config)
    message = str(failure.value)
    assert (
        "train: tips: label_constant (error): the label column holds a single value: "
        "observed every value 0, expected at least 2 distinct values"
    ) in message
    assert not os.path.exists(os.path.join(config.resolved_pipeline_root, "Trainer"))
    assert not os.path.exists(config.resolved_serving_model_dir)


def test_warn_only_kinds_come_from_the_config_and_command_line():
    from pipeline.cli import config_from_argv

    config = config_from_argv(
        ["run", "--warn-only-anomaly", "new_column", "--warn-only-anomaly", "out_of_domain"]
    )
    assert config.warn_only_anomalies == ("new_column", "out_of_domain")
    assert taxi_config(warn_only_anomalies=("drift", "skew")).warn_only_anomalies == (
        "drift",
        "skew",
    )
    with pytest.raises(ValueError, match=r"unknown anomaly kind.*drfit"):
        taxi_config(warn_only_anomalies=("drfit",))
