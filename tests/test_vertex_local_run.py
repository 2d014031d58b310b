"""A compiled Vertex pipeline run here as Vertex would run it (kubeflow/local_runner.py):
every task in its own process, twice, the second warm-starting from the first's model; and
the pipeline compiled without a schema file."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from kubeflow.local_runner import LocalVertexRunner
from pipeline.vertex import compile_pipeline
from tests.test_kubeflow import (
    BLESSING_RESOLVER,
    MODEL_RESOLVER,
    _config,
    _executor,
    _parameters,
    _producer,
    _tasks,
)

# A fresh interpreter with nothing but TensorFlow, as a serving client has.
_SERVE_SCRIPT = textwrap.dedent(r"""
    import csv, json, sys
    import tensorflow as tf

    model_dirs, csv_path, types = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])

    def feature(kind, text):
        if kind == "INT":
            return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(text)]))
        if kind == "FLOAT":
            return tf.train.Feature(float_list=tf.train.FloatList(value=[float(text)]))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()]))

    def example(row):  # raw columns, label left out
        features = {k: feature(types[k], v) for k, v in row.items() if k != "tips" and v != ""}
        return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()

    with open(csv_path) as f:
        rows = list(csv.DictReader(f))[:20]
    results = []
    for model_dir in model_dirs:
        serve = tf.saved_model.load(model_dir).signatures["serving_default"]
        scores = serve(inputs=tf.constant([example(r) for r in rows]))["scores"].numpy()
        results.append({"shape": list(scores.shape), "min": float(scores.min()),
                        "max": float(scores.max()),
                        "modules": sorted(m for m in sys.modules if m.split(".")[0] in
                                          ("tfx", "tensorflow_transform", "components"))})
    print(json.dumps(results))
""")


def _schema_types():
    from tensorflow_metadata.proto.v0 import schema_pb2

    from components.schema_file import load_schema
    from schemas import TAXI_SCHEMA_PATH

    return {
        f.name: schema_pb2.FeatureType.Name(f.type) for f in load_schema(TAXI_SCHEMA_PATH).feature
    }


def _serve(model_dirs, csv_path):
    """What serving each of `model_dirs` returns, all in one fresh interpreter."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _SERVE_SCRIPT,
            json.dumps(model_dirs),
            str(csv_path),
            json.dumps(_schema_types()),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _only(result, key):
    (artifact,) = result["outputs"][key]
    return artifact


@pytest.mark.slow
# About 14 min alone (three runs of every task in its own process); next to the other
# xdist worker it has taken over 15, the suite-wide limit.
@pytest.mark.timeout(1800)
def test_compiled_spec_runs_here_as_on_vertex_and_retrains_incrementally(tmp_path, small_taxi_csv):
    from components.estimator import checkpoints

    # The second run is compared with the first's model and must be blessed and pushed:
    # with any AUC decrease allowed, its blessing depends only on --min-auc, which the
    # first run's model passes and the warm-started one (trained further) passes too.
    # 100 steps are enough for the first (tests/test_pipeline_e2e.py blesses such models too).
    path = str(tmp_path / "pipeline.json")
    compile_pipeline(
        _config(tmp_path, blessing_max_change=1.0, train_steps=100, save_checkpoints_steps=50), path
    )
    gcs = tmp_path / "gcs"
    (gcs / "bucket" / "data").mkdir(parents=True)
    shutil.copy(small_taxi_csv, gcs / "bucket" / "data" / "taxi.csv")
    serving_dir = gcs / "bucket" / "serving" / "taxi"
    runner = LocalVertexRunner(gcs)

    # First run: no blessed model yet, so both resolvers return nothing.
    first = runner.run(path, job_id="run-1")
    assert first[BLESSING_RESOLVER]["outputs"] == {"model_blessing": []}
    assert first[MODEL_RESOLVER]["outputs"] == {"model": []}
    assert "base_model" not in first["Trainer"]["inputs"]
    assert "baseline_model" not in first["Evaluator"]["inputs"]
    examples = _only(first["ExampleGen"], "examples")
    assert examples["uri"] == str(gcs / "bucket" / "root" / "run-1" / "ExampleGen" / "examples")
    assert os.path.isdir(os.path.join(examples["uri"], "Split-train"))
    statistics = _only(first["StatisticsGen"], "statistics")
    assert json.loads(statistics["metadata"]["split_names"]) == ["train", "eval"]
    assert os.path.isfile(os.path.join(statistics["uri"], "Split-eval", "FeatureStats.pb"))
    anomalies = _only(first["ExampleValidator"], "anomalies")
    assert json.loads(anomalies["metadata"]["split_names"]) == ["train", "eval"]
    assert os.path.isfile(os.path.join(anomalies["uri"], "Split-eval", "SchemaDiff.pb"))
    model = _only(first["Trainer"], "model")
    blessing = _only(first["Evaluator"], "blessing")["metadata"]
    assert blessing["blessed"] == 1 and blessing["current_model_id"] == model["name"]
    pushed = _only(first["Pusher"], "pushed_model")["metadata"]
    assert pushed["pushed"] == 1
    assert os.path.dirname(pushed["pushed_destination"]) == str(serving_dir)

    # Second run of the same spec (what a schedule does): it starts from, and is
    # compared with, the first run's blessed model, and is pushed only if blessed.
    second = runner.run(path, job_id="run-2")
    assert (
        _only(second[BLESSING_RESOLVER], "model_blessing")["name"]
        == _only(first["Evaluator"], "blessing")["name"]
    )
    assert second["Trainer"]["inputs"]["base_model"] == [
        {key: model[key] for key in ("name", "type", "uri", "metadata")}
    ]
    step0 = os.path.join(_only(second["Trainer"], "model_run")["uri"], "model.ckpt-0")
    blessed_checkpoint = checkpoints.resolve_checkpoint(pushed["pushed_destination"])
    for name in ("dnn/hiddenlayer_0/kernel", "linear/linear_model/bias_weights"):
        assert (
            checkpoints.read_variable(step0, name)
            == checkpoints.read_variable(blessed_checkpoint, name)
        ).all(), name
    blessing = _only(second["Evaluator"], "blessing")["metadata"]
    assert blessing["baseline_model_id"] == model["name"]
    assert blessing["blessed"] == 1
    pushed_again = _only(second["Pusher"], "pushed_model")["metadata"]
    assert pushed_again["pushed"] == 1
    assert sorted(os.listdir(serving_dir)) == sorted(
        os.path.basename(p["pushed_destination"]) for p in (pushed, pushed_again)
    )
    # Both pushed versions serve, in one fresh interpreter with nothing but TensorFlow.
    for served in _serve(
        [pushed["pushed_destination"], pushed_again["pushed_destination"]], small_taxi_csv
    ):
        assert served["modules"] == [], "serving must need nothing but TensorFlow"
        assert served["shape"] == [20, 2] and 0.0 <= served["min"] <= served["max"] <= 1.0


def test_without_a_schema_file_schema_gen_feeds_every_schema_consumer(tmp_path):
    job = compile_pipeline(_config(tmp_path, schema_path=None), str(tmp_path / "infer.json"))
    tasks = _tasks(job)
    assert "SchemaImporter" not in tasks
    args = _executor(job, "SchemaGen")["container"]["args"]
    assert (
        args[args.index("--executor_class_path") + 1] == "components.schema_gen.executor.Executor"
    )
    assert _parameters(job, "SchemaGen") == {"infer_split": "train"}
    assert _producer(job, "SchemaGen", "statistics")["producerTask"] == "StatisticsGen"
    for consumer in ("ExampleValidator", "Transform"):
        assert _producer(job, consumer, "schema")["producerTask"] == "SchemaGen"
    # ExampleGen and StatisticsGen take no schema: they type the columns from the data.
    for task in ("ExampleGen", "StatisticsGen"):
        assert "schema" not in tasks[task].get("inputs", {}).get("artifacts", {})
    # ExampleGen still reads an outside file; SchemaGen caches on its input like the rest.
    assert tasks["ExampleGen"]["cachingOptions"] == {"enableCache": False}
    assert tasks["SchemaGen"]["cachingOptions"] == {"enableCache": True}
