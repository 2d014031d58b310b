"""Drift and skew on statistics StatisticsGen's executor computes over generated data.

Every split below is 4,000 rows drawn with a fixed seed, so each figure is deterministic; the
sizes and thresholds leave a wide margin all the same. Measured over 200 seeds with the same
method on 2,000 rows, a fresh sample of N(0, 1) stayed under a Jensen-Shannon divergence of
0.015 and a one-standard-deviation shift stayed above 0.14; at 4,000 rows a value share's
sampling error has a standard deviation of about 0.011. Thresholds: 0.1 for both distances.
"""

import itertools
import json
import os
import shutil

import numpy as np
import pytest
from tensorflow_metadata.proto.v0 import anomalies_pb2, statistics_pb2

from components.example_validator import drift
from components.example_validator.checks import KINDS, measure
from components.statistics_gen.layout import STATS_FILE, model_statistics_uri
from tests.conftest import run_statistics_gen, schema_artifact, taxi_config

ROWS = 4000
THRESHOLD = 0.1
COLORS = ["red", "green", "blue", "grey"]
SHARES = [0.5, 0.3, 0.15, 0.05]
SCHEMA = """
feature { name: "amount" type: FLOAT }
feature { name: "color" type: BYTES }
feature { name: "label" type: INT }
"""
_Type = anomalies_pb2.AnomalyInfo


def _rows(seed, mean=0.0, shares=SHARES, outlier=None):
    rng = np.random.default_rng(seed)
    amount = rng.normal(mean, 1.0, ROWS)
    if outlier is not None:
        amount[0] = outlier
    color = rng.choice(COLORS, ROWS, p=shares)
    return [
        {"amount": float(a), "color": str(c), "label": int(i % 2)}
        for i, (a, c) in enumerate(zip(amount, color, strict=True))
    ]


# name -> rows: the baseline, samples of the same distributions, and changed ones.
SAMPLES = {
    "base": lambda: _rows(1),
    "fresh": lambda: _rows(2),
    "outlier": lambda: _rows(3, outlier=1e6),  # one extreme value, the rest as the base
    "shifted": lambda: _rows(4, mean=1.0),  # amount moved by one standard deviation
    "recolored": lambda: _rows(5, shares=[0.3, 0.5, 0.15, 0.05]),  # red's share 50% -> 30%
    "nudged": lambda: _rows(6, shares=[0.47, 0.33, 0.15, 0.05]),  # red's share 50% -> 47%
}


@pytest.fixture(scope="module")
def statistics(tmp_path_factory):
    """{sample: DatasetFeatureStatistics} and the artifact folder, from one StatisticsGen run."""
    import tensorflow as tf
    from tfx.types import artifact_utils, standard_artifacts

    tmp = tmp_path_factory.mktemp("drift")
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp / "examples")
    examples.split_names = artifact_utils.encode_split_names(list(SAMPLES))
    for split, make in SAMPLES.items():
        folder = os.path.join(examples.uri, f"Split-{split}")
        os.makedirs(folder)
        with tf.io.TFRecordWriter(os.path.join(folder, "data.gz"), "GZIP") as writer:
            for row in make():
                feature = {
                    "amount": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[row["amount"]])
                    ),
                    "color": tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[row["color"].encode()])
                    ),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[row["label"]])),
                }
                writer.write(
                    tf.train.Example(
                        features=tf.train.Features(feature=feature)
                    ).SerializeToString()
                )
    artifact = run_statistics_gen(tmp, examples, schema_artifact(tmp / "schema", SCHEMA))
    datasets = {}
    for split in SAMPLES:
        with open(os.path.join(artifact.uri, f"Split-{split}", STATS_FILE), "rb") as f:
            datasets[split] = statistics_pb2.DatasetFeatureStatisticsList.FromString(
                f.read()
            ).datasets[0]
    return datasets, artifact.uri


def _distances(datasets, sample, baseline="base"):
    return {d.column: d for d in drift.distances(datasets[baseline], datasets[sample])}


def test_a_one_std_shift_of_a_numeric_column_is_drift_and_a_fresh_sample_is_not(statistics):
    datasets, _ = statistics
    shifted = _distances(datasets, "shifted")["amount"]
    assert shifted.metric == drift.JENSEN_SHANNON
    assert shifted.value > 1.3 * THRESHOLD
    assert "mean 1.0" in shifted.detail  # what moved, for people
    for sample in ("fresh", "outlier"):  # an extreme value does not move the figure
        assert _distances(datasets, sample)["amount"].value < THRESHOLD / 4, sample
    assert _distances(datasets, "base")["amount"].value == pytest.approx(0.0, abs=1e-9)


def test_a_category_share_change_over_the_threshold_is_drift_and_under_it_is_not(statistics):
    datasets, _ = statistics
    recolored = _distances(datasets, "recolored")["color"]
    assert recolored.metric == drift.L_INFTY
    assert recolored.value == pytest.approx(0.2, abs=0.04)
    assert recolored.detail.startswith(("'red'", "'green'"))
    assert _distances(datasets, "nudged")["color"].value < THRESHOLD * 0.8
    assert _distances(datasets, "fresh")["color"].value < THRESHOLD / 2
    # A changed category share does not show up in the numeric column, nor the reverse.
    assert _distances(datasets, "recolored")["amount"].value < THRESHOLD / 4
    assert _distances(datasets, "shifted")["color"].value < THRESHOLD / 2


def test_shares_of_values_the_statistics_do_not_list_are_pooled():
    stats = statistics_pb2.StringStatistics()
    stats.common_stats.tot_num_values = 100
    stats.top_values.add(value="a", frequency=60)
    stats.top_values.add(value="b", frequency=30)
    assert drift.value_shares(stats) == pytest.approx({"a": 0.6, "b": 0.3, drift.OTHER_VALUES: 0.1})
    value, detail = drift.l_infinity({"a": 0.55, "b": 0.45}, drift.value_shares(stats))
    assert value == pytest.approx(0.15) and detail.startswith("'b' 30% vs 45%")


def test_point_masses_and_constant_columns_compare_as_such():
    def numbers(values):
        histogram = statistics_pb2.Histogram(type=statistics_pb2.Histogram.QUANTILES)
        quantiles = np.quantile(values, np.linspace(0, 1, 11))
        for low, high in itertools.pairwise(quantiles):
            histogram.buckets.add(low_value=low, high_value=high, sample_count=len(values) / 10)
        stats = statistics_pb2.NumericStatistics()
        stats.histograms.append(histogram)
        return stats

    hours = np.arange(1000) % 24
    assert drift.numeric_divergence(numbers(hours), numbers(hours))[0] == pytest.approx(0.0)
    assert drift.numeric_divergence(numbers(np.zeros(10)), numbers(np.ones(10)))[0] == 1.0
    assert drift.numeric_divergence(numbers(np.zeros(10)), numbers(np.zeros(10)))[0] == 0.0


def _schema():
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    return text_format.Parse(SCHEMA, schema_pb2.Schema())


def test_thresholds_are_per_column_with_a_default_for_the_others(statistics):
    datasets, _ = statistics
    found = measure("drift", datasets["base"], datasets["shifted"], _schema(), {"amount": 0.1})
    assert [(m.distance.column, m.anomalous) for m in found] == [("amount", True)]
    found = measure(
        "drift", datasets["base"], datasets["recolored"], _schema(), {"*": 0.1, "color": 0.5}
    )
    assert {m.distance.column: (m.threshold, m.anomalous) for m in found} == {
        "amount": (0.1, False),
        "color": (0.5, False),  # its own threshold, over the 0.2 change
        "label": (0.1, False),
    }
    with pytest.raises(ValueError, match=r"drift_thresholds: no column 'colour' in the schema"):
        drift.check_thresholds({"colour": 0.1}, ["amount", "color"], "drift_thresholds")
    with pytest.raises(ValueError, match=r"skew_thresholds\['amount'\]: 0.0 is outside"):
        drift.check_thresholds([("amount", 0)], None, "skew_thresholds")


def _statistics_artifact(folder, datasets_folder, splits):
    """A statistics artifact whose {split: sample} files are StatisticsGen's outputs above."""
    from tfx.types import artifact_utils, standard_artifacts

    artifact = standard_artifacts.ExampleStatistics()
    artifact.uri = str(folder)
    for split, sample in splits.items():
        os.makedirs(os.path.join(folder, f"Split-{split}"))
        shutil.copy(
            os.path.join(datasets_folder, f"Split-{sample}", STATS_FILE),
            os.path.join(folder, f"Split-{split}", STATS_FILE),
        )
    artifact.split_names = artifact_utils.encode_split_names(list(splits))
    return artifact


def _model(folder, datasets_folder, sample):
    """A Model artifact carrying `sample` as its training statistics, as the Trainer writes."""
    from tfx.types import standard_artifacts

    model = standard_artifacts.Model()
    model.uri = str(folder)
    _statistics_artifact(model_statistics_uri(model.uri), datasets_folder, {"train": sample})
    return model


def _schema_artifact(tmp_path):
    from tfx.types import standard_artifacts

    if not (tmp_path / "schema").exists():
        return schema_artifact(tmp_path / "schema", SCHEMA)
    schema = standard_artifacts.Schema()
    schema.uri = str(tmp_path / "schema")
    return schema


def _validate(tmp_path, statistics, baseline=None, **properties):
    from tfx.types import standard_artifacts

    from components.example_validator.executor import DataValidationError, Executor

    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(tmp_path / "anomalies")
    shutil.rmtree(anomalies.uri, ignore_errors=True)
    exec_properties = {"raw_label_key": "label", "warn_only": "[]"}
    exec_properties.update({k: json.dumps(v) for k, v in properties.items()})
    inputs = {
        "statistics": [statistics],
        "schema": [_schema_artifact(tmp_path)],
        "baseline_model": [baseline] if baseline else [],
    }
    try:
        Executor().Do(inputs, {"anomalies": [anomalies]}, exec_properties)
    except DataValidationError as e:
        return anomalies, str(e)
    return anomalies, None


def _proto(anomalies, split):
    with open(os.path.join(anomalies.uri, f"Split-{split}", "SchemaDiff.pb"), "rb") as f:
        return anomalies_pb2.Anomalies.FromString(f.read())


def test_executor_fails_on_drift_naming_column_kind_observed_and_threshold(tmp_path, statistics):
    _, folder = statistics
    current = _statistics_artifact(tmp_path / "now", folder, {"train": "shifted", "eval": "base"})
    baseline = _model(tmp_path / "model", folder, "base")
    thresholds = {"amount": THRESHOLD, "color": THRESHOLD}
    anomalies, error = _validate(tmp_path, current, baseline, drift_thresholds=thresholds)
    (line,) = [line for line in error.splitlines() if "drift" in line and "amount" in line]
    assert line.strip().startswith(
        "train: amount: drift (error): the train split moved away from the latest blessed "
        "model's training data: observed Jensen-Shannon divergence 0."
    )
    assert line.endswith("expected at most 0.1")
    assert "color" not in error  # measured, under its threshold
    proto = _proto(anomalies, "train")
    (reason,) = proto.anomaly_info["amount"].reason
    assert reason.type == _Type.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH
    measured = {
        info.path.step[0]: (m.type, m.threshold, m.value > m.threshold)
        for info in proto.drift_skew_info
        for m in info.drift_measurements
    }
    Measurement = anomalies_pb2.DriftSkewInfo.Measurement
    assert measured == {
        "amount": (Measurement.JENSEN_SHANNON_DIVERGENCE, THRESHOLD, True),
        "color": (Measurement.L_INFTY, THRESHOLD, False),
    }
    assert not _proto(anomalies, "eval").drift_skew_info  # drift is the train split's

    # Warn-only drift is recorded, and the run goes on.
    anomalies, error = _validate(
        tmp_path, current, baseline, drift_thresholds=thresholds, warn_only=["drift"]
    )
    assert error is None
    assert _proto(anomalies, "train").anomaly_info["amount"].severity == _Type.WARNING

    # The same data as the baseline's, or no baseline (a first run): no drift.
    same = _statistics_artifact(tmp_path / "same", folder, {"train": "fresh", "eval": "base"})
    assert _validate(tmp_path, same, baseline, drift_thresholds={"*": THRESHOLD})[1] is None
    assert _validate(tmp_path, current, None, drift_thresholds=thresholds)[1] is None


def test_executor_finds_skew_between_train_and_eval(tmp_path, statistics):
    _, folder = statistics
    skewed = _statistics_artifact(
        tmp_path / "skewed", folder, {"train": "base", "eval": "recolored"}
    )
    anomalies, error = _validate(tmp_path, skewed, skew_thresholds={"*": THRESHOLD})
    lines = [line.strip() for line in error.splitlines() if ": skew (" in line]
    assert len(lines) == 1 and lines[0].startswith(
        "eval: color: skew (error): the eval split differs from the train split: observed "
        "L-infinity distance 0."
    )
    assert lines[0].endswith("expected at most 0.1")
    (reason,) = _proto(anomalies, "eval").anomaly_info["color"].reason
    assert reason.type == _Type.COMPARATOR_L_INFTY_HIGH
    assert {info.path.step[0] for info in _proto(anomalies, "eval").drift_skew_info} == {
        "amount",
        "color",
        "label",
    }
    fine = _statistics_artifact(tmp_path / "fine", folder, {"train": "base", "eval": "fresh"})
    assert _validate(tmp_path, fine, skew_thresholds={"*": THRESHOLD})[1] is None
    # A threshold for a column the schema lacks fails, naming it.
    with pytest.raises(ValueError, match=r"skew_thresholds: no column 'size'"):
        _validate(tmp_path, fine, skew_thresholds={"size": THRESHOLD})


def test_drift_and_skew_are_kinds_and_thresholds_come_from_config_and_command_line():
    from pipeline.cli import config_from_argv

    assert {"drift", "skew"} <= set(KINDS)
    config = config_from_argv(
        [
            "run",
            "--drift-threshold",
            "fare=0.1",
            "--drift-threshold",
            "*=0.2",
            "--skew-threshold",
            "payment_type=0.05",
            "--warn-only-anomaly",
            "skew",
        ]
    )
    assert config.drift_thresholds == (("fare", 0.1), ("*", 0.2))
    assert config.skew_thresholds == (("payment_type", 0.05),)
    assert config.warn_only_anomalies == ("skew",)
    assert taxi_config(drift_thresholds={"fare": 0.1}).drift_thresholds == (("fare", 0.1),)
    with pytest.raises(ValueError, match=r"drift_thresholds: no column 'fair' in the schema"):
        taxi_config(drift_thresholds=(("fair", 0.1),))
    with pytest.raises(ValueError, match=r"skew_thresholds\['fare'\]: 2.0 is outside"):
        taxi_config(skew_thresholds=(("fare", 2),))
    with pytest.raises(SystemExit):
        config_from_argv(["run", "--drift-threshold", "fare"])


def test_stats_command_shows_drift_against_a_baseline(statistics, tmp_path, capsys):
    from pipeline.cli import main

    _, folder = statistics
    current = _statistics_artifact(tmp_path / "now", folder, {"train": "shifted", "eval": "fresh"})
    model = _model(tmp_path / "model", folder, "base")
    assert main(["stats", "--artifact", current.uri, "--baseline", model.uri, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["baseline"] == model_statistics_uri(model.uri)
    train = {row["name"]: row for row in report["splits"]["train"]["features"]}
    assert train["amount"]["drift"]["metric"] == drift.JENSEN_SHANNON
    assert train["amount"]["drift"]["value"] > THRESHOLD
    assert report["splits"]["eval"]["baseline_split"] == "train"

    assert main(["stats", "--artifact", current.uri, "--baseline", model.uri]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].startswith("Drift vs baseline: ")
    header = next(line for line in table if line.strip().startswith("feature"))
    assert header.split()[4:10] == ["mean", "std", "min", "max", "drift", "unique"]
    amount = next(line for line in table if line.strip().startswith("amount"))
    assert amount.split()[-1] == "JSD"
    color = next(line for line in table if line.strip().startswith("color"))
    assert "L-inf" in color

    assert main(["stats", "--artifact", current.uri]) == 0  # no baseline: no column
    table = capsys.readouterr().out.splitlines()
    header = next(line for line in table if line.strip().startswith("feature"))
    assert "drift" not in header.split() and not table[1].startswith("Drift")


@pytest.mark.slow
def test_drifted_data_stops_the_next_run_before_the_trainer(pipeline_run, tmp_path, capsys):
    """A second run, against the shared run's blessed model, on data whose fare moved by one
    standard deviation and where half the cash payments became card payments."""
    import csv

    from components.example_validator.executor import DataValidationError
    from pipeline.cli import main
    from pipeline.runner import run_locally
    from tests.conftest import copy_of_run

    first, summary = pipeline_run
    assert summary.blessed
    with open(first.data_path) as f:
        rows = list(csv.DictReader(f))
    fares = np.array([float(row["fare"]) for row in rows])
    cash = 0
    for row in rows:
        row["fare"] = f"{float(row['fare']) + fares.std():.2f}"
        if row["payment_type"] == "Cash":
            cash += 1
            if cash % 2:
                row["payment_type"] = "Credit Card"
    drifted = tmp_path / "drifted.csv"
    with open(drifted, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # On a copy of the shared run: this run sees its blessed model, other tests not this run.
    config = copy_of_run(
        first,
        tmp_path / "out",
        data_path=drifted,
        drift_thresholds=(("fare", 0.1), ("payment_type", 0.1), ("trip_miles", 0.1)),
    )
    with pytest.raises(DataValidationError) as failure:
        run_locally(config)
    lines = [line.strip() for line in str(failure.value).splitlines() if ": drift (" in line]
    assert [line.split(":")[1].strip() for line in lines] == ["fare", "payment_type"]
    assert lines[0].startswith(
        "train: fare: drift (error): the train split moved away from the latest blessed "
        "model's training data: observed Jensen-Shannon divergence "
    )
    # the payments that left Cash went to Credit Card: both moved by the same share, and
    # the message names one of the two
    assert "L-infinity distance" in lines[1]
    assert "'Cash'" in lines[1] or "'Credit Card'" in lines[1]
    assert all(line.endswith("expected at most 0.1") for line in lines)
    assert not os.path.exists(os.path.join(config.resolved_pipeline_root, "Trainer"))

    assert main(["stats", "--output-dir", config.output_dir, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # The baseline: the statistics the shared run's blessed model carries, of its train split.
    baseline = report["baseline"]
    assert baseline.startswith(os.path.join(first.resolved_pipeline_root, "Trainer", "model"))
    assert baseline.endswith("DataStatistics")
    assert os.listdir(baseline) == ["Split-train"]
    train = {row["name"]: row for row in report["splits"]["train"]["features"]}
    assert train["fare"]["drift"]["value"] > 0.1
    assert train["trip_miles"]["drift"]["value"] < 0.1
    assert main(["stats", "--output-dir", config.output_dir]) == 0
    assert "Drift vs baseline: " in capsys.readouterr().out
