"""StatisticsGen on generated data with known figures, with real Beam; `pipeline stats`."""

import json
import os
import pickle

import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import statistics_pb2
from tfx.types import artifact_utils, standard_artifacts

from components.statistics_gen.executor import (
    PENDING_VALUES,
    QUANTILES_EPSILON,
    _StatisticsCombineFn,
)
from components.statistics_gen.layout import STATS_FILE
from pipeline.cli import main
from pipeline.stats import feature_rows, format_report
from tests.conftest import run_statistics_gen, schema_artifact

SCHEMA = """
feature { name: "amount" type: FLOAT }
feature { name: "count" type: INT }
feature { name: "color" type: BYTES }
feature { name: "readings" type: FLOAT }
"""
COLORS = ["red", "green", "blue", "grey"]


def _columns(rng, rows):
    """Known values; `count` is missing in about a tenth of the rows."""
    amount = rng.normal(5.0, 2.0, rows).astype(np.float32)
    amount[::97] = 0.0
    return {
        "amount": amount,
        "count": np.where(rng.random(rows) < 0.1, None, rng.integers(-50, 51, rows)).tolist(),
        "color": rng.choice(COLORS, rows, p=[0.5, 0.3, 0.15, 0.05]).tolist(),
        "readings": [rng.random(rng.integers(1, 4)).astype(np.float32) for _ in range(rows)],
    }


def _write_split(folder, columns, files=3):
    """Gzipped TFRecords of tf.Example, laid out as ExampleGen writes them."""
    os.makedirs(folder)
    rows = len(columns["amount"])
    writers = [
        tf.io.TFRecordWriter(os.path.join(folder, f"data_tfrecord-{i}.gz"), "GZIP")
        for i in range(files)
    ]
    for row in range(rows):
        feature = {
            "amount": tf.train.Feature(
                float_list=tf.train.FloatList(value=[columns["amount"][row]])
            ),
            "color": tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[columns["color"][row].encode()])
            ),
            "readings": tf.train.Feature(
                float_list=tf.train.FloatList(value=columns["readings"][row])
            ),
        }
        if columns["count"][row] is not None:
            feature["count"] = tf.train.Feature(
                int64_list=tf.train.Int64List(value=[columns["count"][row]])
            )
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        writers[row % files].write(example.SerializeToString())
    for writer in writers:
        writer.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("statistics_gen")
    rng = np.random.default_rng(7)
    data = {"train": _columns(rng, 3000), "eval": _columns(rng, 400)}
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp / "examples")
    examples.split_names = artifact_utils.encode_split_names(list(data))
    for split, columns in data.items():
        _write_split(os.path.join(examples.uri, f"Split-{split}"), columns)
    statistics = run_statistics_gen(tmp, examples, schema_artifact(tmp / "schema", SCHEMA))
    return data, statistics


def _split_stats(statistics, split):
    with open(os.path.join(statistics.uri, f"Split-{split}", STATS_FILE), "rb") as f:
        (dataset,) = statistics_pb2.DatasetFeatureStatisticsList.FromString(f.read()).datasets
    return dataset, {feature.path.step[0]: feature for feature in dataset.features}


def _assert_quantile(values, estimate, rank):
    """`estimate` is a `rank` quantile of `values` up to the sketch's rank error."""
    error = QUANTILES_EPSILON * len(values) + 1
    assert np.sum(values < estimate) <= rank * len(values) + error
    assert np.sum(values <= estimate) >= rank * len(values) - error


def test_artifact_is_laid_out_as_tfx_lays_it_out(run):
    _, statistics = run
    assert artifact_utils.decode_split_names(statistics.split_names) == ["train", "eval"]
    assert sorted(os.listdir(statistics.uri)) == ["Split-eval", "Split-train"]
    for split in ("train", "eval"):
        assert os.listdir(os.path.join(statistics.uri, f"Split-{split}")) == [STATS_FILE]


@pytest.mark.parametrize("split", ["train", "eval"])
def test_numeric_statistics_match_numpy(run, split):
    data, statistics = run
    dataset, features = _split_stats(statistics, split)
    amount = data[split]["amount"].astype(np.float64)
    assert dataset.num_examples == len(amount)
    feature = features["amount"]
    assert feature.type == statistics_pb2.FeatureNameStatistics.FLOAT
    stats = feature.num_stats
    common = stats.common_stats
    assert (common.num_non_missing, common.num_missing) == (len(amount), 0)
    assert (common.min_num_values, common.max_num_values, common.avg_num_values) == (1, 1, 1)
    assert common.tot_num_values == len(amount)
    assert stats.mean == pytest.approx(amount.mean(), rel=1e-6)
    assert stats.std_dev == pytest.approx(amount.std(), rel=1e-6)
    assert (stats.min, stats.max) == (amount.min(), amount.max())
    assert stats.num_zeros == np.sum(amount == 0)
    _assert_quantile(amount, stats.median, 0.5)

    standard, quantiles = stats.histograms
    assert standard.type == statistics_pb2.Histogram.STANDARD
    expected, edges = np.histogram(amount, bins=10)
    assert [b.low_value for b in standard.buckets] == pytest.approx(edges[:-1])
    assert [b.high_value for b in standard.buckets] == pytest.approx(edges[1:])
    counts = np.array([b.sample_count for b in standard.buckets])
    assert counts.sum() == pytest.approx(len(amount))
    assert np.abs(counts - expected).max() <= 0.01 * len(amount) + 2
    assert quantiles.type == statistics_pb2.Histogram.QUANTILES
    assert len(quantiles.buckets) == 10
    for index, bucket in enumerate(quantiles.buckets):
        assert bucket.sample_count == pytest.approx(len(amount) / 10)
        _assert_quantile(amount, bucket.low_value, index / 10)
        _assert_quantile(amount, bucket.high_value, (index + 1) / 10)


def test_missing_values_and_integers(run):
    data, statistics = run
    _, features = _split_stats(statistics, "train")
    present = np.array([v for v in data["train"]["count"] if v is not None], dtype=np.float64)
    feature = features["count"]
    assert feature.type == statistics_pb2.FeatureNameStatistics.INT
    common = feature.num_stats.common_stats
    assert common.num_non_missing == len(present)
    assert common.num_missing == len(data["train"]["count"]) - len(present) > 0
    assert feature.num_stats.mean == pytest.approx(present.mean(), rel=1e-6)
    assert feature.num_stats.std_dev == pytest.approx(present.std(), rel=1e-6)
    assert (feature.num_stats.min, feature.num_stats.max) == (present.min(), present.max())
    assert feature.num_stats.num_zeros == np.sum(present == 0)


def test_multivalent_feature_counts_values_per_example(run):
    data, statistics = run
    _, features = _split_stats(statistics, "train")
    lengths = np.array([len(r) for r in data["train"]["readings"]])
    values = np.concatenate(data["train"]["readings"]).astype(np.float64)
    common = features["readings"].num_stats.common_stats
    assert (common.min_num_values, common.max_num_values) == (lengths.min(), lengths.max())
    assert common.avg_num_values == pytest.approx(lengths.mean())
    assert common.tot_num_values == lengths.sum()
    assert sum(b.sample_count for b in common.num_values_histogram.buckets) == pytest.approx(
        len(lengths)
    )
    assert features["readings"].num_stats.mean == pytest.approx(values.mean(), rel=1e-6)


def test_string_statistics_are_exact_on_small_data(run):
    data, statistics = run
    _, features = _split_stats(statistics, "train")
    colors = data["train"]["color"]
    feature = features["color"]
    assert feature.type == statistics_pb2.FeatureNameStatistics.STRING
    stats = feature.string_stats
    assert stats.unique == len(set(colors))
    expected = sorted(((colors.count(c), c) for c in set(colors)), reverse=True)
    assert [(t.frequency, t.value) for t in stats.top_values] == expected
    assert [
        (b.low_rank, b.high_rank, b.label, b.sample_count) for b in stats.rank_histogram.buckets
    ] == [(rank, rank, value, count) for rank, (count, value) in enumerate(expected)]
    assert stats.avg_length == pytest.approx(np.mean([len(c) for c in colors]))
    assert stats.common_stats.num_missing == 0


def test_partial_statistics_merge_to_those_of_the_whole():
    """What Beam does across bundles and workers: pickled accumulators, merged."""
    rng = np.random.default_rng(3)
    batches = [
        pa.RecordBatch.from_arrays(
            [
                pa.array(
                    [[float(v)] for v in rng.normal(size=500)], type=pa.large_list(pa.float32())
                ),
                pa.array(
                    [[c.encode()] if c != "grey" else None for c in rng.choice(COLORS, 500)],
                    type=pa.large_list(pa.large_binary()),
                ),
            ],
            ["amount", "color"],
        )
        for _ in range(4)
    ]
    combine = _StatisticsCombineFn({})
    whole, halves = combine.create_accumulator(), []
    for part in (batches[:1], batches[1:]):
        accumulator = combine.create_accumulator()
        for batch in part:
            combine.add_input(accumulator, batch)
            combine.add_input(whole, batch)
        halves.append(pickle.loads(pickle.dumps(accumulator)))
    merged = combine.extract_output(combine.merge_accumulators(halves))
    expected = combine.extract_output(whole)
    assert merged.datasets[0].num_examples == 2000
    for got, want in zip(merged.datasets[0].features, expected.datasets[0].features, strict=True):
        assert got.type == want.type
        if got.HasField("string_stats"):
            assert got.string_stats == want.string_stats
            continue
        assert got.num_stats.common_stats == want.num_stats.common_stats
        assert got.num_stats.mean == pytest.approx(want.num_stats.mean, rel=1e-9)
        assert got.num_stats.std_dev == pytest.approx(want.num_stats.std_dev, rel=1e-9)
        assert (got.num_stats.min, got.num_stats.max) == (want.num_stats.min, want.num_stats.max)


def _amount_batches(rng, batches, rows):
    return [
        pa.RecordBatch.from_arrays(
            [
                pa.array(
                    list(rng.normal(size=(rows, 1)).astype(np.float32)),
                    type=pa.large_list(pa.float32()),
                )
            ],
            ["amount"],
        )
        for _ in range(batches)
    ]


def test_numbers_travel_raw_up_to_pending_values_then_in_the_sketch():
    """An accumulator crosses Beam's stages pickled: below PENDING_VALUES a feature's numbers
    go as decoded (4 bytes a float32), not as the sketch's 16; past it the sketch takes them,
    and its quantiles stay within the rank error of the exact ones."""
    rng = np.random.default_rng(5)
    combine = _StatisticsCombineFn({})
    small = combine.create_accumulator()
    for batch in _amount_batches(rng, 5, 2000):
        combine.add_input(small, batch)
    assert len(pickle.dumps(small)) < 6 * 10000

    batches = _amount_batches(rng, 12, 4000)  # 48,000 values: flushed into the sketch
    parts = [combine.create_accumulator() for _ in range(3)]
    for index, batch in enumerate(batches):
        combine.add_input(parts[index % 3], batch)
    merged = combine.merge_accumulators([pickle.loads(pickle.dumps(p)) for p in parts])
    stats = combine.extract_output(merged).datasets[0].features[0].num_stats
    values = np.sort(np.concatenate([b.column(0).flatten().to_numpy() for b in batches]))
    assert len(values) > 2 * PENDING_VALUES
    quantiles = stats.histograms[1]
    assert quantiles.type == statistics_pb2.Histogram.QUANTILES
    for k, bucket in enumerate(quantiles.buckets[1:], start=1):
        rank = np.searchsorted(values, bucket.low_value)
        assert abs(rank - k * len(values) / 10) <= 2 * QUANTILES_EPSILON * len(values) + 1
    assert stats.mean == pytest.approx(values.astype(np.float64).mean(), rel=1e-9)
    assert (stats.min, stats.max) == (values[0], values[-1])


def test_cli_prints_a_table_and_json_for_an_artifact(run, capsys):
    data, statistics = run
    assert main(["stats", "--artifact", statistics.uri, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["splits"]) == ["eval", "train"]
    train = report["splits"]["train"]
    assert train["num_examples"] == 3000
    rows = {row["name"]: row for row in train["features"]}
    present = [v for v in data["train"]["count"] if v is not None]
    assert rows["count"]["missing_pct"] == pytest.approx(100 * (1 - len(present) / 3000))
    assert rows["amount"]["mean"] == pytest.approx(float(np.mean(data["train"]["amount"])))
    assert rows["color"]["unique"] == 4 and rows["color"]["top_values"][0]["value"] == "red"

    one_file = os.path.join(statistics.uri, "Split-eval", STATS_FILE)
    assert main(["stats", "--artifact", one_file]) == 0
    table = capsys.readouterr().out.splitlines()
    header = next(line for line in table if line.strip().startswith("feature"))
    assert header.split()[:4] == ["feature", "type", "count", "missing"]
    color = next(line for line in table if line.strip().startswith("color"))
    assert "STRING" in color and "'red'" in color
    assert any(line.strip().startswith("amount") and "FLOAT" in line for line in table)

    assert main(["stats", "--artifact", os.path.join(statistics.uri, "nothing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_feature_with_no_values_shows_no_figures():
    dataset = statistics_pb2.DatasetFeatureStatistics(num_examples=5)
    feature = dataset.features.add(type=statistics_pb2.FeatureNameStatistics.INT)
    feature.path.step.append("empty")
    feature.num_stats.common_stats.num_missing = 5
    (row,) = feature_rows(dataset)
    assert row == {
        "name": "empty",
        "type": "INT",
        "count": 0,
        "missing_pct": 100.0,
        "mean": None,
        "std_dev": None,
        "min": None,
        "max": None,
    }
    table = format_report(
        {"artifact": "a", "splits": {"train": {"num_examples": 5, "features": [row]}}}
    )
    assert table.splitlines()[-1].split() == ["empty", "INT", "0", "100.0%"]


@pytest.mark.slow
def test_pipeline_run_records_statistics_in_ml_metadata(pipeline_run, capsys):
    from pipeline.metadata import latest_output

    config, summary = pipeline_run
    artifact = latest_output(
        config.resolved_metadata_path, config.pipeline_name, "ExampleStatistics"
    )
    assert artifact is not None and artifact.uri == summary.statistics_uri
    assert artifact.properties["split_names"].string_value == '["train", "eval"]'
    for split in ("train", "eval"):
        assert os.path.isfile(os.path.join(artifact.uri, f"Split-{split}", STATS_FILE))
    assert f"data statistics: {artifact.uri}" in summary.format()

    assert main(["stats", "--output-dir", config.output_dir, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["artifact"] == artifact.uri
    train = {row["name"]: row for row in report["splits"]["train"]["features"]}
    assert train["fare"]["type"] == "FLOAT" and train["company"]["type"] == "STRING"
    assert sum(s["num_examples"] for s in report["splits"].values()) == 1500


def test_a_column_empty_in_every_row_is_a_string_feature_every_example_misses():
    """TFX's CsvExampleGen writes a CSV column empty in every row as a feature of no kind
    in each example, which decodes (without a schema) as a null column. TFDV made it a
    STRING feature, all missing, and its SchemaGen an optional BYTES feature; TFX 1.15's
    taxi module reads such a column (pickup_census_tract on a small sample), so leaving
    it out failed the Transform with KeyError."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    from components.schema_gen.inference import infer_schema

    combine = _StatisticsCombineFn({})
    accumulator = combine.create_accumulator()
    for rows in (3, 2):
        batch = pa.RecordBatch.from_arrays(
            [pa.array([[1]] * rows, type=pa.large_list(pa.int64())), pa.nulls(rows)],
            ["fare", "census_tract"],
        )
        combine.add_input(accumulator, batch)
    (dataset,) = combine.extract_output(accumulator).datasets
    empty = {feature.path.step[0]: feature for feature in dataset.features}["census_tract"]
    assert empty.type == statistics_pb2.FeatureNameStatistics.STRING
    assert empty.string_stats.common_stats.num_missing == 5
    assert empty.string_stats.common_stats.num_non_missing == 0
    schema = infer_schema({"train": dataset}, "train")
    assert {f.name: f for f in schema.feature}["census_tract"] == text_format.Parse(
        'name: "census_tract" type: BYTES presence { min_count: 0 }', schema_pb2.Feature()
    )
