"""SchemaGen on statistics the real StatisticsGen computed over examples the real ExampleGen
wrote from a generated CSV (no schema anywhere), and the inference rules on their own."""

import csv
import os

import numpy as np
import pytest
from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

from components.example_validator.checks import find_anomalies
from components.schema_gen.inference import DOMAIN_MIN_MASS, infer_schema
from pipeline.config import DEFAULT_BEAM_ARGS
from tests.conftest import run_statistics_gen

ROWS = 400
COLORS = ["red", "green", "blue", "cyan", "magenta"]


def _write_csv(path):
    rng = np.random.default_rng(7)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "price", "color", "name", "rare", "label"])
        for i in range(ROWS):
            writer.writerow(
                [
                    i,  # INT, every row
                    "" if i % 10 == 0 else f"{rng.uniform(1, 100):.2f}",  # FLOAT, some missing
                    COLORS[i % len(COLORS)],  # low-cardinality string
                    f"user-{i}",  # one value per row
                    "",  # never a value
                    int(rng.integers(0, 2)),
                ]
            )


def _run_example_gen(folder, csv_path):
    import apache_beam as beam
    from tfx.dsl.components.base import base_beam_executor
    from tfx.types import standard_artifacts

    from components.example_gen import executor

    examples = standard_artifacts.Examples()
    examples.uri = str(folder / "examples")
    executor.Executor(
        base_beam_executor.BaseBeamExecutor.Context(
            tmp_dir=str(folder / "tmp"),
            unique_id="x",
            make_beam_pipeline_fn=lambda: beam.Pipeline(argv=list(DEFAULT_BEAM_ARGS)),
        )
    ).Do({}, {"examples": [examples]}, {"input_base": str(csv_path)})
    return examples


def _run_schema_gen(folder, statistics):
    from tfx.types import standard_artifacts

    from components.schema_gen.executor import Executor

    schema = standard_artifacts.Schema()
    schema.uri = str(folder / "schema")
    Executor().Do({"statistics": [statistics]}, {"schema": [schema]}, {"infer_split": "train"})
    return schema


@pytest.fixture(scope="module")
def inferred(tmp_path_factory):
    """(Schema artifact, {split: statistics}) from a generated CSV, no schema given."""
    from components.statistics_gen.layout import load_statistics

    folder = tmp_path_factory.mktemp("schema_gen")
    csv_path = folder / "data.csv"
    _write_csv(csv_path)
    statistics = run_statistics_gen(folder, _run_example_gen(folder, csv_path))
    stats = {split: s.datasets[0] for split, s in load_statistics(statistics.uri).items()}
    return _run_schema_gen(folder, statistics), stats


def _features(schema):
    return {feature.name: feature for feature in schema.feature}


def test_output_is_a_schema_artifact_as_tfx_lays_it_out(inferred):
    from components.schema_importer.executor import load_schema_artifact

    artifact, _ = inferred
    assert os.listdir(artifact.uri) == ["schema.pbtxt"]
    schema = load_schema_artifact([artifact])
    assert sorted(_features(schema)) == ["color", "id", "label", "name", "price", "rare"]


def test_types_presence_and_value_counts(inferred):
    from components.schema_importer.executor import load_schema_artifact

    features = _features(load_schema_artifact([inferred[0]]))
    types = {name: schema_pb2.FeatureType.Name(f.type) for name, f in features.items()}
    assert types == {
        "id": "INT",
        "price": "FLOAT",
        "color": "BYTES",
        "name": "BYTES",
        "rare": "INT",  # ExampleGen's type for a column without values, kept by StatisticsGen
        "label": "INT",
    }
    required = schema_pb2.FeaturePresence(min_fraction=1.0, min_count=1)
    assert features["id"].presence == required
    assert features["label"].presence == required
    assert features["price"].presence == schema_pb2.FeaturePresence(min_count=1)
    assert features["rare"].HasField("presence") and features["rare"].presence.min_count == 0
    for name in ("id", "price", "color", "name", "label"):
        assert (features[name].value_count.min, features[name].value_count.max) == (1, 1)
    assert not features["rare"].HasField("value_count")


def test_domains_only_for_low_cardinality_columns_and_no_numeric_ranges(inferred):
    from components.schema_importer.executor import load_schema_artifact

    features = _features(load_schema_artifact([inferred[0]]))
    color = features["color"]
    assert color.WhichOneof("domain_info") == "string_domain"
    assert sorted(color.string_domain.value) == sorted(COLORS)
    assert color.distribution_constraints.min_domain_mass == DOMAIN_MIN_MASS
    # An integer column with two possible values is a category, without a range.
    assert features["label"].int_domain == schema_pb2.IntDomain(is_categorical=True)
    for name in ("id", "price", "name", "rare"):
        assert features[name].WhichOneof("domain_info") is None, name


def test_the_inferred_schema_finds_no_anomaly_in_the_data_it_came_from(inferred):
    from components.schema_importer.executor import load_schema_artifact

    schema = load_schema_artifact([inferred[0]])
    for split, dataset in inferred[1].items():
        assert find_anomalies(dataset, schema, raw_label_key="label") == [], split


def _dataset(examples, **columns):
    """DatasetFeatureStatistics; columns are (type, examples holding one value, {value: count}
    for strings)."""
    dataset = statistics_pb2.DatasetFeatureStatistics(num_examples=examples)
    for name, (kind, present, listed) in columns.items():
        feature = dataset.features.add(type=kind)
        feature.path.step.append(name)
        is_string = kind == statistics_pb2.FeatureNameStatistics.STRING
        stats = feature.string_stats if is_string else feature.num_stats
        stats.common_stats.num_non_missing = present
        stats.common_stats.num_missing = examples - present
        stats.common_stats.tot_num_values = present
        if present:
            stats.common_stats.min_num_values = stats.common_stats.max_num_values = 1
        if is_string:
            stats.unique = len(listed)
            for rank, (value, count) in enumerate(listed.items()):
                stats.rank_histogram.buckets.add(
                    low_rank=rank, high_rank=rank, label=value, sample_count=count
                )
    return dataset


_INT = statistics_pb2.FeatureNameStatistics.INT
_STRING = statistics_pb2.FeatureNameStatistics.STRING


def test_other_splits_only_loosen_presence():
    train = _dataset(100, a=(_INT, 100, None), b=(_INT, 100, None), c=(_INT, 90, None))
    eval_ = _dataset(50, a=(_INT, 50, None), b=(_INT, 49, None), d=(_INT, 5, None))
    features = _features(infer_schema({"train": train, "eval": eval_}, "train"))
    assert list(features) == ["a", "b", "c", "d"]
    assert features["a"].presence.min_fraction == 1.0
    assert features["b"].presence == schema_pb2.FeaturePresence(min_count=1)  # eval lacks some
    # c has no value in eval, d none in train: either may be empty in a split.
    assert features["c"].HasField("presence") and features["c"].presence.min_count == 0
    assert features["d"].HasField("presence") and features["d"].presence.min_count == 0
    for split, dataset in (("train", train), ("eval", eval_)):
        schema = infer_schema({"train": train, "eval": eval_}, "train")
        assert find_anomalies(dataset, schema) == [], split


def test_string_domain_cutoffs():
    common = {f"v{i}": 10 for i in range(100)}
    stats = _dataset(
        1010,
        at_limit=(_STRING, 1000, common),  # 100 values, 10 each: a domain
        too_many=(_STRING, 1010, {**common, "extra": 10}),  # 101 values
        too_rare=(_STRING, 999, {**common, "v0": 9}),  # fewer than 10 per value on average
    )
    features = _features(infer_schema({"train": stats}, "train"))
    assert len(features["at_limit"].string_domain.value) == 100
    assert features["too_many"].WhichOneof("domain_info") is None
    assert features["too_rare"].WhichOneof("domain_info") is None


def test_out_of_domain_values_in_another_split_are_tolerated_up_to_the_mass():
    train = _dataset(100, color=(_STRING, 100, {"red": 60, "blue": 40}))
    schema = infer_schema({"train": train}, "train")
    few_new = _dataset(100, color=(_STRING, 100, {"red": 57, "blue": 40, "teal": 3}))
    many_new = _dataset(100, color=(_STRING, 100, {"red": 50, "blue": 40, "teal": 10}))
    assert find_anomalies(few_new, schema) == []
    assert [a.kind for a in find_anomalies(many_new, schema)] == ["out_of_domain"]


def test_a_missing_inference_split_fails_naming_the_splits():
    with pytest.raises(ValueError, match=r"no statistics for split 'train'.*have eval, test"):
        infer_schema({"eval": _dataset(1), "test": _dataset(1)}, "train")
