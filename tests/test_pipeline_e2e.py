"""The whole pipeline on LocalDagRunner: pushed model, cache reuse, blessing gate."""

import glob
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from pipeline.config import REPO_ROOT
from pipeline.runner import _drop_known_noise
from tests.conftest import copy_of_run, small_pipeline_config
from tests.tfma_parity import assert_agrees_with_stock_tfma

pytestmark = pytest.mark.slow

# Runs in a fresh interpreter that imports only TensorFlow: what a serving
# client has.  Scores raw CSV rows (label dropped) and the eval split.
_SCORE_SCRIPT = textwrap.dedent(r"""
    import csv, glob, json, sys
    import numpy as np
    import tensorflow as tf

    model_dir, csv_path, schema_types, eval_glob = sys.argv[1:5]
    types = json.loads(schema_types)
    model = tf.saved_model.load(model_dir)
    serve = model.signatures["serving_default"]

    def example(row):
        feature = {}
        for key, text in row.items():
            if key == "tips" or text == "":
                continue
            if types[key] == "INT":
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(text)]))
            elif types[key] == "FLOAT":
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(text)]))
            else:
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()]))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    with open(csv_path) as f:
        rows = list(csv.DictReader(f))[:200]
    scores = serve(inputs=tf.constant([example(r) for r in rows]))["scores"].numpy()

    eval_examples, labels = [], []
    for record in tf.data.TFRecordDataset(sorted(glob.glob(eval_glob)), compression_type="GZIP"):
        parsed = tf.train.Example.FromString(record.numpy())
        values = parsed.features.feature
        tips = values["tips"].float_list.value[0]
        fare = values["fare"].float_list.value[0]
        labels.append(1 if tips > 0.2 * fare else 0)
        del values["tips"]
        eval_examples.append(parsed.SerializeToString())
    positive = serve(inputs=tf.constant(eval_examples))["scores"].numpy()[:, 1]
    labels = np.array(labels)
    pos, neg = positive[labels == 1], positive[labels == 0]
    auc = float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())
    print(json.dumps({"min": float(scores.min()), "max": float(scores.max()),
                      "rows": len(scores), "auc": auc, "eval_rows": len(labels),
                      "modules": sorted(m for m in sys.modules if m.split(".")[0] in
                                        ("tfx", "tensorflow_transform", "components"))}))
""")


def _schema_types():
    from tensorflow_metadata.proto.v0 import schema_pb2

    from components.schema_file import load_schema
    from schemas import TAXI_SCHEMA_PATH

    schema = load_schema(TAXI_SCHEMA_PATH)
    return {f.name: schema_pb2.FeatureType.Name(f.type) for f in schema.feature}


def _tree_digest(root):
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def test_pipeline_pushes_a_model_a_fresh_process_can_serve(pipeline_run, small_taxi_csv):
    config, summary = pipeline_run
    assert summary.blessed is True
    assert summary.pushed_to and os.path.isdir(summary.pushed_to)
    assert os.path.dirname(summary.pushed_to) == config.resolved_serving_model_dir
    assert os.path.basename(summary.pushed_to).isdigit()
    assert summary.metrics["auc"] > 0.85  # 0.91 on this slice after 300 steps
    assert summary.strategy.startswith("default (")
    assert summary.training_length == "300 steps"
    assert summary.exit_code == 0
    assert summary.anomalies == []  # the taxi sample passes its schema

    examples_root = os.path.join(config.resolved_pipeline_root, "ExampleGen", "examples")
    eval_glob = os.path.join(examples_root, "*", "Split-eval", "*.gz")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _SCORE_SCRIPT,
            summary.pushed_to,
            str(small_taxi_csv),
            json.dumps(_schema_types()),
            eval_glob,
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    scored = json.loads(result.stdout.strip().splitlines()[-1])
    assert scored["modules"] == [], "the serving process must need nothing but TensorFlow"
    assert scored["rows"] == 200
    assert 0.0 <= scored["min"] <= scored["max"] <= 1.0
    # The Evaluator scored every example of the eval split, a fifth of the 1,500 rows.
    assert summary.metrics["example_count"] == scored["eval_rows"]
    assert 240 < scored["eval_rows"] < 360
    # The served model ranks the eval split as the Evaluator measured (its AUC sums over
    # 10,000 thresholds; this one is exact): 0.910 and 0.907 here.
    assert scored["auc"] == pytest.approx(summary.metrics["auc"], abs=0.01)


def test_second_run_with_nothing_changed_reuses_cached_outputs(pipeline_run, tmp_path):
    from pipeline.runner import run_locally

    config, first = pipeline_run
    rerun = copy_of_run(config, tmp_path)
    versions_before = sorted(os.listdir(rerun.resolved_serving_model_dir))
    second = run_locally(rerun)
    # Nothing upstream of the Evaluator runs again.  The Evaluator does: the first run's
    # model is now the blessed baseline it compares against, a new input.
    assert set(second.cached_components) >= {
        "SchemaImporter",
        "ExampleGen",
        "StatisticsGen",
        "ExampleValidator",
        "Transform",
        "Trainer",
    }
    assert "Evaluator" not in second.cached_components
    # Same model and data; a rerun Evaluator may sum in another order (Beam sizes batches by
    # elapsed time), so the last digits can differ.
    assert second.metrics == pytest.approx(first.metrics, rel=1e-6, nan_ok=True)
    # Candidate, baseline and their difference, per hour of the day, as stock TFMA has them.
    # The examples are the first run's, reused from the cache.
    (examples,) = glob.glob(
        os.path.join(config.resolved_pipeline_root, "ExampleGen", "examples", "*")
    )
    assert_agrees_with_stock_tfma(second.evaluation_uri, examples, tmp_path / "tfma")
    # The same model is not pushed twice: the version already there is the pushed one.
    assert second.pushed_to == os.path.join(
        rerun.resolved_serving_model_dir, os.path.basename(first.pushed_to)
    )
    assert sorted(os.listdir(rerun.resolved_serving_model_dir)) == versions_before
    third = run_locally(rerun)
    assert {"SchemaImporter", "ExampleGen", "Transform", "Trainer", "Evaluator", "Pusher"} <= set(
        third.cached_components
    )


def test_model_below_threshold_is_not_blessed_and_serving_dir_is_untouched(
    pipeline_run, tmp_path, monkeypatch
):
    from pipeline.runner import run_locally

    config, _ = pipeline_run
    strict = copy_of_run(config, tmp_path, blessing_threshold=1.01)
    serving_dir = strict.resolved_serving_model_dir
    before = (sorted(os.listdir(serving_dir)), _tree_digest(serving_dir))
    # A temp folder of this test's own: other xdist workers' runs write to the system one.
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_temp))
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    summary = run_locally(strict)
    # The Beam jobs copied TFX into temp folders (40 MB each); they went with the run.
    assert os.listdir(system_temp) == []
    assert summary.blessed is False
    assert summary.pushed_to is None
    assert summary.exit_code == 3  # what `python -m pipeline run` exits with
    assert "not bless" in summary.not_pushed_reason
    assert summary.blessing_gate == "auc >= 1.01 and at most 0.01 below the latest blessed model"
    assert (sorted(os.listdir(serving_dir)), _tree_digest(serving_dir)) == before


def test_malformed_csv_fails_the_run_naming_file_line_and_column(tmp_path, small_taxi_csv):
    from pipeline.runner import run_locally

    lines = small_taxi_csv.read_text().splitlines()
    fields = lines[5].split(",")
    header = lines[0].split(",")
    fields[header.index("fare")] = "not-a-number"
    lines[5] = ",".join(fields)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    config = small_pipeline_config(tmp_path / "out", bad)
    tensorflow_logger = logging.getLogger("tensorflow")
    level = tensorflow_logger.level
    tensorflow_logger.setLevel(logging.INFO)  # as a notebook's set_verbosity(INFO) leaves it
    try:
        with pytest.raises(Exception) as failure:
            run_locally(config)
        # The quiet run held TensorFlow's INFO lines back while it ran, not after.
        assert tensorflow_logger.level == logging.INFO
        assert _drop_known_noise not in logging.getLogger("absl").filters
    finally:
        tensorflow_logger.setLevel(level)
    message = str(failure.value)
    assert str(bad) in message and "line 6" in message and "fare" in message
    assert not os.path.exists(config.resolved_serving_model_dir)


@pytest.mark.parametrize(
    "strategy, tasks",
    [
        ("multi_worker_mirrored", ["chief-0", "worker-0"]),
        ("parameter_server", ["chief-0", "ps-0", "worker-0", "worker-1"]),
    ],
)
def test_trainer_runs_its_strategy_on_a_local_cluster_of_processes(
    pipeline_run, tmp_path, small_taxi_csv, strategy, tasks
):
    from pipeline.runner import run_locally

    # On a copy of the shared run: only the Trainer and what follows it run again.  The
    # shared run's 300-step model is the Evaluator's baseline; this 100-step one may score
    # below it, and is still blessed (what is checked here is the cluster's training).
    config = copy_of_run(
        pipeline_run[0],
        tmp_path,
        strategy=strategy,
        training_backend="local",
        workers=2,
        parameter_servers=1,
        train_steps=100,
        save_checkpoints_steps=50,
        blessing_max_change=1.0,
    )
    summary = run_locally(config)
    assert "Transform" in summary.cached_components
    assert "Trainer" not in summary.cached_components
    assert summary.strategy == f"{strategy} (requested)"
    assert summary.blessed and os.path.isdir(summary.pushed_to)
    (model_run,) = [
        os.path.join(root, name)
        for root in [os.path.join(config.resolved_pipeline_root, "Trainer", "model_run")]
        for name in os.listdir(root)
    ]
    logs = sorted(
        name[: -len(".log")] for name in os.listdir(os.path.join(model_run, "cluster_logs"))
    )
    assert logs == tasks
    with open(os.path.join(model_run, "trainer_run.json")) as f:
        record = json.load(f)
    assert record["strategy"] == strategy and record["eval_metrics"]["global_step"] == 100
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _SCORE_SCRIPT,
            summary.pushed_to,
            str(small_taxi_csv),
            json.dumps(_schema_types()),
            os.path.join(
                pipeline_run[0].resolved_pipeline_root,
                "ExampleGen",
                "examples",
                "*",
                "Split-eval",
                "*.gz",
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    assert json.loads(result.stdout.strip().splitlines()[-1])["rows"] == 200


def test_a_failed_cluster_task_fails_the_trainer_naming_the_task_and_pushes_nothing(
    pipeline_run, tmp_path
):
    from pipeline.runner import run_locally

    config = copy_of_run(
        pipeline_run[0],
        tmp_path,
        training_backend="local",
        strategy="default",
        estimator_fn="taxi.no_such_model",
    )
    versions_before = sorted(os.listdir(config.resolved_serving_model_dir))
    with pytest.raises(RuntimeError) as failure:
        run_locally(config)
    message = str(failure.value)
    assert "Training task chief 0 exited with code 1" in message
    assert "cannot load estimator_fn 'taxi.no_such_model'" in message  # the end of its log
    assert sorted(os.listdir(config.resolved_serving_model_dir)) == versions_before


def test_run_refuses_a_backend_whose_machines_cannot_read_local_artifacts(capsys):
    from pipeline.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["run", "--training-backend", "vertex"])
    assert exit_.value.code == 2
    assert "--training-backend vertex needs the artifacts on gs://" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [
                "run",
                "--training-backend",
                "local",
                "--strategy",
                "multi_worker_mirrored",
                "--workers",
                "1",
            ]
        )
    assert "multi_worker_mirrored needs at least 2 workers" in capsys.readouterr().err


def test_cli_help_explains_every_option():
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    for option in (
        "--data",
        "--train-steps",
        "--eval-steps",
        "--beam-arg",
        "--task",
        "--blessing-threshold",
        "--max-bad-row-fraction",
        "--warm-start",
        "--output-dir",
        "--training-backend",
        "--workers",
        "--parameter-servers",
    ):
        assert option in result.stdout
    assert "tensorflow" not in result.stderr.lower()


def test_warm_start_begins_from_the_latest_blessed_model(pipeline_run, tmp_path):
    from components.estimator import checkpoints
    from pipeline.runner import run_locally

    config, first = pipeline_run
    shared_versions = sorted(os.listdir(config.resolved_serving_model_dir))
    warm = copy_of_run(config, tmp_path, warm_start=True, train_steps=50)
    summary = run_locally(warm)
    assert "Trainer" not in summary.cached_components
    (model_run,) = glob.glob(os.path.join(warm.resolved_pipeline_root, "Trainer", "model_run", "*"))
    step0 = os.path.join(model_run, "model.ckpt-0")
    blessed = checkpoints.resolve_checkpoint(first.pushed_to)
    for name in ("dnn/hiddenlayer_0/kernel", "linear/linear_model/bias_weights"):
        assert (
            checkpoints.read_variable(step0, name) == checkpoints.read_variable(blessed, name)
        ).all(), name
    # The shared run is left as it was, so other tests may run after this one.
    assert sorted(os.listdir(config.resolved_serving_model_dir)) == shared_versions


def test_without_a_schema_file_the_inferred_schema_is_used_end_to_end(
    tmp_path, small_taxi_csv, capsys
):
    from tensorflow_metadata.proto.v0 import schema_pb2

    from components.schema_file import load_schema
    from pipeline.cli import main
    from pipeline.runner import run_locally

    config = small_pipeline_config(
        tmp_path, small_taxi_csv, schema_path=None, train_steps=200, blessing_threshold=0.0
    )
    summary = run_locally(config)
    assert summary.schema_inferred
    schema_root = os.path.join(config.resolved_pipeline_root, "SchemaGen", "schema", "")
    assert summary.schema_path.startswith(schema_root)
    assert summary.schema_path.endswith("/schema.pbtxt")
    assert "inferred from the train statistics" in summary.format()
    assert summary.metrics["example_count"] > 0  # trained and evaluated on the inferred schema
    assert summary.blessed is True and summary.pushed_to
    assert summary.anomalies == []  # and it passed validation against that schema
    assert not os.path.exists(os.path.join(config.resolved_pipeline_root, "SchemaImporter"))

    schema = load_schema(summary.schema_path)
    features = {f.name: f for f in schema.feature}
    assert set(features) == set(_schema_types())  # every CSV column
    # The label as the taxi schema file has it: a required FLOAT.
    assert features["tips"].type == schema_pb2.FLOAT
    assert features["tips"].presence.min_fraction == 1.0
    # No value in the slice: typed INT, may be empty, still a Transform input.
    assert features["pickup_census_tract"].type == schema_pb2.INT
    assert features["pickup_census_tract"].presence.min_count == 0
    assert set(features["payment_type"].string_domain.value) >= {"Cash", "Credit Card"}
    # No numeric ranges; small-range integer columns (the hour, day, month) are categories.
    assert not any(f.HasField("float_domain") for f in schema.feature)
    assert not any(
        f.int_domain.HasField("min") or f.int_domain.HasField("max") for f in schema.feature
    )
    assert features["trip_start_day"].int_domain.is_categorical
    # The Transform used it: its raw metadata is the inferred schema, dense where required.
    transform_graph = glob.glob(
        os.path.join(config.resolved_pipeline_root, "Transform", "transform_graph", "*")
    )[0]
    raw = load_schema(os.path.join(transform_graph, "metadata", "schema.pbtxt"))
    assert {f.name for f in raw.feature} == set(features)

    # `python -m pipeline schema --out FILE` saves it as a schema file to edit and keep.
    out = tmp_path / "kept" / "schema.pbtxt"
    assert main(["schema", "--output-dir", str(tmp_path), "--out", str(out)]) == 0
    assert load_schema(out) == schema
    capsys.readouterr()
    assert main(["schema", "--output-dir", str(tmp_path)]) == 0
    assert 'name: "pickup_census_tract"' in capsys.readouterr().out


def test_summary_says_why_a_metric_is_undefined():
    """A model that predicts no positive has no precision: 'undefined', with the reason,
    not a bare nan next to the other metrics."""
    from pipeline.runner import RunSummary

    summary = RunSummary(
        metrics={"auc": 0.93, "precision": float("nan"), "recall": 0.0},
        blessed=True,
        pushed_to=None,
        not_pushed_reason=None,
        cached_components=[],
        evaluation_uri=None,
    )

    lines = summary.format().splitlines()
    assert "  eval metrics (overall slice): auc = 0.93, precision = undefined, recall = 0" in lines
    assert any("precision when no example is predicted positive" in line for line in lines)
    assert "nan" not in summary.format()
