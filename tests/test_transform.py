"""Transform executor on a few hundred real taxi rows, with real Beam."""

import csv
import glob
import json
import os
import subprocess
import sys

import apache_beam as beam
import numpy as np
import pytest
import tensorflow as tf
import tfx
from tfx.dsl.components.base import base_beam_executor
from tfx.types import artifact_utils, standard_artifacts

from components.transform.executor import Executor

# Every test runs the Transform executor (a Beam pipeline with tensorflow_transform) or
# loads tensorflow_transform, which no other fast test needs.
pytestmark = pytest.mark.slow

# tensorflow_transform (also behind transforms.taxi) is imported inside the
# tests: importing it sets TF_USE_LEGACY_KERAS=1 process-wide, which merely
# collecting this file should not do to other test files.

CSV = os.path.join(
    os.path.dirname(tfx.__file__), "examples", "chicago_taxi_pipeline", "data", "simple", "data.csv"
)
BEAM_ARGS = ["--runner=DirectRunner", "--direct_running_mode=in_memory"]
TYPES = {
    "pickup_community_area": "INT",
    "fare": "FLOAT",
    "trip_start_month": "INT",
    "trip_start_hour": "INT",
    "trip_start_day": "INT",
    "trip_start_timestamp": "INT",
    "pickup_latitude": "FLOAT",
    "pickup_longitude": "FLOAT",
    "dropoff_latitude": "FLOAT",
    "dropoff_longitude": "FLOAT",
    "trip_miles": "FLOAT",
    "pickup_census_tract": "INT",
    "dropoff_census_tract": "INT",
    "payment_type": "BYTES",
    "company": "BYTES",
    "trip_seconds": "INT",
    "dropoff_community_area": "INT",
    "tips": "FLOAT",
}
OPTIONAL = {
    "pickup_community_area",
    "pickup_latitude",
    "pickup_longitude",
    "dropoff_latitude",
    "dropoff_longitude",
    "pickup_census_tract",
    "dropoff_census_tract",
    "company",
    "trip_seconds",
    "dropoff_community_area",
}
SPLITS = {"train": slice(0, 300), "eval": slice(300, 400)}


def _schema_text():
    """The contract's schema: optional columns have no min_fraction."""
    parts = []
    for name, type_ in TYPES.items():
        presence = "min_count: 1" if name in OPTIONAL else "min_fraction: 1.0 min_count: 1"
        parts.append(
            f'feature {{ name: "{name}" type: {type_} '
            f"value_count {{ min: 1 max: 1 }} "
            f"presence {{ {presence} }} }}\n"
        )
    return "".join(parts)


def _example(row):
    feature = {}
    for name, type_ in TYPES.items():
        if row[name] == "":
            continue  # An optional value that is missing: absent feature.
        if type_ == "INT":
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(row[name])]))
        elif type_ == "FLOAT":
            feature[name] = tf.train.Feature(
                float_list=tf.train.FloatList(value=[float(row[name])])
            )
        else:
            feature[name] = tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[row[name].encode()])
            )
    return tf.train.Example(features=tf.train.Features(feature=feature))


def _read_examples(pattern):
    files = sorted(glob.glob(pattern))
    assert files, pattern
    return [r.numpy() for r in tf.data.TFRecordDataset(files, "GZIP")]


def _transformed_rows(run, split):
    import tensorflow_transform as tft

    spec = tft.TFTransformOutput(run["graph"]).transformed_feature_spec()
    records = _read_examples(os.path.join(run["transformed"], f"Split-{split}", "*.gz"))
    return {k: v.numpy() for k, v in tf.io.parse_example(records, spec).items()}


def _artifacts(tmp):
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp / "examples")
    examples.split_names = artifact_utils.encode_split_names(list(SPLITS))
    schema = standard_artifacts.Schema()
    schema.uri = str(tmp / "schema")
    graph = standard_artifacts.TransformGraph()
    graph.uri = str(tmp / "transform_graph")
    transformed = standard_artifacts.Examples()
    transformed.uri = str(tmp / "transformed_examples")
    return (
        {"examples": [examples], "schema": [schema]},
        {"transform_graph": [graph], "transformed_examples": [transformed]},
    )


def _executor(tmp):
    return Executor(
        base_beam_executor.BaseBeamExecutor.Context(
            # not beam_pipeline_args: TFX would leave a staged copy of itself in /tmp
            make_beam_pipeline_fn=lambda: beam.Pipeline(argv=BEAM_ARGS),
            tmp_dir=str(tmp / "tmp"),
            unique_id="x",
        )
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("transform")
    with open(CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    inputs, outputs = _artifacts(tmp)
    for split, rows_slice in SPLITS.items():
        split_dir = tmp / "examples" / f"Split-{split}"
        split_dir.mkdir(parents=True)
        with tf.io.TFRecordWriter(str(split_dir / "data_tfrecord-00000.gz"), "GZIP") as w:
            for row in rows[rows_slice]:
                w.write(_example(row).SerializeToString())
    (tmp / "schema").mkdir()
    (tmp / "schema" / "schema.pbtxt").write_text(_schema_text())
    _executor(tmp).Do(
        inputs,
        outputs,
        {
            "preprocessing_fn": "transforms.taxi.preprocessing_fn",
            "analyze_splits": '["train"]',
        },
    )
    return {
        "rows": rows,
        "raw": str(tmp / "examples"),
        "graph": outputs["transform_graph"][0].uri,
        "transformed": outputs["transformed_examples"][0].uri,
        "artifact": outputs["transformed_examples"][0],
    }


def test_fixture_has_missing_optional_values(run):
    train = run["rows"][SPLITS["train"]]
    for key in ("company", "dropoff_latitude", "pickup_census_tract"):
        assert any(r[key] == "" for r in train), key


def test_transformed_feature_spec(run):
    import tensorflow_transform as tft

    from transforms import taxi

    spec = tft.TFTransformOutput(run["graph"]).transformed_feature_spec()
    expected = {taxi.transformed_name(k): tf.float32 for k in taxi.DENSE_FLOAT_FEATURE_KEYS}
    for k in (
        taxi.VOCAB_FEATURE_KEYS
        + taxi.BUCKET_FEATURE_KEYS
        + taxi.CATEGORICAL_FEATURE_KEYS
        + [taxi.LABEL_KEY]
    ):
        expected[taxi.transformed_name(k)] = tf.int64
    assert {k: v.dtype for k, v in spec.items()} == expected
    for v in spec.values():
        assert isinstance(v, tf.io.FixedLenFeature) and v.shape == []


def test_output_artifact_and_raw_metadata(run):
    assert artifact_utils.decode_split_names(run["artifact"].split_names) == ["train", "eval"]
    assert os.path.isfile(os.path.join(run["graph"], "metadata", "schema.pbtxt"))


def test_both_splits_parse(run):
    for split, rows_slice in SPLITS.items():
        rows = _transformed_rows(run, split)
        n = rows_slice.stop - rows_slice.start
        assert all(len(v) == n for v in rows.values()), split


def test_records_are_the_same_bytes_in_every_process(run):
    """Protobuf's deterministic bytes (features in name order), not tfx_bsl's encoder's,
    whose order changes from process to process: the Trainer holds out its validation
    part by a hash of these bytes, so a rerun must write the same ones."""
    for split in SPLITS:
        records = _read_examples(os.path.join(run["transformed"], f"Split-{split}", "*.gz"))
        for record in records:
            canonical = tf.train.Example.FromString(record).SerializeToString(deterministic=True)
            assert record == canonical, split


def test_ragged_outputs_are_written_as_tfx_bsl_lays_them_out_in_a_fixed_order():
    """A ragged output is written as its component features, which the schema names."""
    import pyarrow as pa
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2
    from tfx_bsl.coders import example_coder

    from components.transform.executor import TransformedExamplesEncoder

    schema = text_format.Parse(
        'feature { name: "words$values" type: BYTES } '
        + "".join(f'feature {{ name: "x{i}" type: FLOAT }} ' for i in range(30))
        + 'tensor_representation_group { key: "" value { tensor_representation { key: "words" '
        'value { ragged_tensor { feature_path { step: "words$values" } } } } } }',
        schema_pb2.Schema(),
    )
    batch = pa.RecordBatch.from_arrays(
        [pa.array([[b"a", b"b"], []], pa.large_list(pa.large_binary()))]
        + [pa.array([[float(i)], [1.0]], pa.large_list(pa.float32())) for i in range(30)],
        ["words"] + [f"x{i}" for i in range(30)],
    )

    records = TransformedExamplesEncoder(schema).encode(batch)

    theirs = example_coder.RecordBatchToExamplesEncoder(schema).encode(batch)
    for record, their in zip(records, theirs, strict=True):
        example = tf.train.Example.FromString(record)
        assert example == tf.train.Example.FromString(their)
        assert record == example.SerializeToString(deterministic=True)
    assert list(
        tf.train.Example.FromString(records[0]).features.feature["words$values"].bytes_list.value
    ) == [b"a", b"b"]


def test_values(run):
    from transforms import taxi

    train = _transformed_rows(run, "train")
    for k in taxi.DENSE_FLOAT_FEATURE_KEYS:
        assert abs(train[taxi.transformed_name(k)].mean()) < 1e-3, k
    for k in taxi.VOCAB_FEATURE_KEYS:
        v = train[taxi.transformed_name(k)]
        assert v.min() >= 0 and v.max() < taxi.VOCAB_SIZE + taxi.OOV_SIZE
    raw_train = run["rows"][SPLITS["train"]]
    for k in taxi.BUCKET_FEATURE_KEYS:
        v = train[taxi.transformed_name(k)]
        assert v.min() >= 0 and v.max() <= taxi.MISSING_BUCKET
        assert len(np.unique(v)) > 3, k
        # Exactly the rows without the coordinate land in the missing bucket.
        missing = sum(r[k] == "" for r in raw_train)
        assert (v == taxi.MISSING_BUCKET).sum() == missing, k
    for k, m in zip(
        taxi.CATEGORICAL_FEATURE_KEYS, taxi.MAX_CATEGORICAL_FEATURE_VALUES, strict=True
    ):
        v = train[taxi.transformed_name(k)]
        assert v.min() >= 0 and v.max() < m
    labels = train["tips_xf"]
    assert set(np.unique(labels)) == {0, 1}
    # z-scoring keeps the order of fares, so sorting (fare, label) pairs lines
    # the output rows up with the raw ones. Compare in float32, as the graph.
    raw = run["rows"][SPLITS["train"]]
    fare = np.array([r["fare"] for r in raw], np.float32)
    tips = np.array([r["tips"] for r in raw], np.float32)
    expected = sorted(
        zip(fare.tolist(), (tips > np.float32(0.2) * fare).astype(int).tolist(), strict=True)
    )
    got = sorted(zip(train["fare_xf"].tolist(), labels.tolist(), strict=True))
    assert [e[1] for e in expected] == [g[1] for g in got]


_SERVE = r"""
import glob, json, sys
import numpy as np
import tensorflow as tf
import tensorflow_transform as tft

graph, pattern = sys.argv[1:]
out = tft.TFTransformOutput(graph)
layer = out.transform_features_layer()
records = [r.numpy() for r in
           tf.data.TFRecordDataset(sorted(glob.glob(pattern)), 'GZIP')]

def serving(record):
    ex = tf.train.Example.FromString(record)
    del ex.features.feature['tips']
    return ex.SerializeToString()

spec = out.raw_feature_spec()
no_label = dict(spec)
del no_label['tips']
result = {}
for name, recs, s in [('full', records, spec),
                      ('serving', [serving(r) for r in records], no_label)]:
    feats = layer(tf.io.parse_example(tf.constant(recs), s))
    result[name] = {k: np.asarray(v).tolist() for k, v in feats.items()}
print('RESULT' + json.dumps(result))
"""


def test_transform_layer_in_fresh_process(run):
    """The saved graph alone serves raw examples, with or without the label."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _SERVE,
            run["graph"],
            os.path.join(run["raw"], "Split-eval", "*.gz"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")][-1]
    result = json.loads(line[len("RESULT") :])
    beam = _transformed_rows(run, "eval")
    assert set(result["full"]) == set(beam)
    assert set(result["serving"]) == set(beam) - {"tips_xf"}

    def row_set(cols, keys):
        return sorted(zip(*[[round(x, 4) for x in cols[k]] for k in keys], strict=True))

    keys = sorted(beam)
    assert row_set(result["full"], keys) == row_set({k: v.tolist() for k, v in beam.items()}, keys)
    serving_keys = sorted(result["serving"])
    assert row_set(result["serving"], serving_keys) == row_set(result["full"], serving_keys)


def test_bad_parameters_fail_before_running(tmp_path):
    inputs, outputs = _artifacts(tmp_path)
    cases = [
        (
            {"preprocessing_fn": "transforms.nope.preprocessing_fn"},
            "transforms.nope.preprocessing_fn",
        ),
        ({"preprocessing_fn": "transforms.taxi.nope"}, "transforms.taxi.nope"),
        (
            {"preprocessing_fn": "transforms.taxi.preprocessing_fn", "analyze_splits": '["test"]'},
            r"splits \['test'\]",
        ),
    ]
    for props, message in cases:
        with pytest.raises(ValueError, match=message):
            _executor(tmp_path).Do(inputs, outputs, props)
