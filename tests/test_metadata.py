"""pipeline/metadata.py: each reader answers for the pipeline asked about in a store that
pipelines share, and the metrics are TFMA's, read without TensorFlow."""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from pipeline import history, metadata, stats
from pipeline.config import REPO_ROOT
from tests.conftest import copy_of_run, small_pipeline_config


def _new_store(path):
    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(path)
    config.sqlite.connection_mode = (
        metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    )
    return metadata_store.MetadataStore(config)


def record_run(store, pipeline_name, outputs, baseline=None):
    """One run of `pipeline_name`, newer than those recorded so far, as TFX's local runner
    records it: a StatisticsGen execution that output `outputs` ({type name: uri}) and took
    the Model at `baseline` as its `baseline_model`."""
    from ml_metadata.proto import metadata_store_pb2 as pb

    def context(kind, name):
        type_id = store.put_context_type(pb.ContextType(name=kind))
        found = store.get_context_by_type_and_name(kind, name)
        return (
            found
            or store.get_contexts_by_id(
                store.put_contexts([pb.Context(type_id=type_id, name=name)])
            )[0]
        )

    pipeline = context("pipeline", pipeline_name)
    run = context("pipeline_run", f"{pipeline_name}-run-{len(store.get_contexts())}")
    store.put_parent_contexts([pb.ParentContext(child_id=run.id, parent_id=pipeline.id)])
    node = context("node", f"{pipeline_name}.StatisticsGen")

    def event(kind, key):
        return pb.Event(type=kind, path=pb.Event.Path(steps=[pb.Event.Path.Step(key=key)]))

    def artifact(type_name, uri):
        type_id = store.put_artifact_type(pb.ArtifactType(name=type_name))
        return pb.Artifact(type_id=type_id, uri=uri, state=pb.Artifact.LIVE)

    pairs = [(artifact(t, uri), event(pb.Event.OUTPUT, t)) for t, uri in outputs.items()]
    if baseline:
        pairs.append((artifact("Model", baseline), event(pb.Event.INPUT, "baseline_model")))
    execution = pb.Execution(
        type_id=store.put_execution_type(pb.ExecutionType(name="StatisticsGen")),
        last_known_state=pb.Execution.COMPLETE,
    )
    store.put_execution(execution, pairs, [pipeline, run, node])
    return run


def _model_with_statistics(folder):
    """A Model artifact folder that carries its training statistics."""
    from components.statistics_gen.layout import model_statistics_uri, split_statistics_path

    path = split_statistics_path(model_statistics_uri(str(folder)), "train")
    os.makedirs(os.path.dirname(path))
    open(path, "wb").close()
    return str(folder)


@pytest.fixture
def shared_store(tmp_path):
    """A store holding two runs of pipeline `a`, then a newer run of pipeline `b`."""
    path = tmp_path / "metadata.sqlite"
    store = _new_store(path)
    runs = {}
    for pipeline_name, name in (("a", "a1"), ("a", "a2"), ("b", "b1")):
        outputs = {"ExampleStatistics": f"/stats/{name}", "Schema": f"/schema/{name}"}
        model = _model_with_statistics(tmp_path / f"model-{name}")
        runs[name] = record_run(store, pipeline_name, outputs, baseline=model)
    return str(path), runs, tmp_path


def test_latest_readers_answer_for_the_pipeline_asked_about(shared_store):
    path, _, folder = shared_store
    assert metadata.latest_output(path, "a", "Schema").uri == "/schema/a2"
    assert metadata.latest_output(path, "b", "Schema").uri == "/schema/b1"
    assert stats.latest_statistics_uri(path, "a") == "/stats/a2"
    assert stats.latest_statistics_uri(path, "b") == "/stats/b1"
    assert stats.latest_baseline_uri(path, "a").startswith(str(folder / "model-a2"))
    assert metadata.latest_output(path, "a", "PushedModel") is None


def test_runs_are_the_pipelines_own_newest_first(shared_store):
    path, runs, _ = shared_store
    store = metadata.open_store(path)
    assert [r.id for r in metadata.run_contexts(store, "a")] == [runs["a2"].id, runs["a1"].id]
    assert metadata.latest_run(store, "b").id == runs["b1"].id
    assert [r.id for r in history.History(store, "a").run_contexts] == [
        runs["a2"].id,
        runs["a1"].id,
    ]
    assert metadata.run_contexts(store, "c") == []
    with pytest.raises(RuntimeError, match="No run of pipeline 'c'"):
        metadata.latest_run(store, "c")


def test_an_execution_left_running_is_found_for_its_pipeline_and_canceled(shared_store):
    """What recovery of a killed run reads and writes (pipeline/recovery.py)."""
    from ml_metadata.proto import metadata_store_pb2

    path, runs, _ = shared_store
    store = metadata.open_store(path, writable=True)
    ((execution, node),) = metadata.run_nodes(store, "a", runs["a2"])
    assert (node, metadata.execution_state(execution)) == ("StatisticsGen", "complete")
    assert metadata.newest_output(store, [execution], "Schema").uri == "/schema/a2"
    assert metadata.unfinished_executions(store, "a") == []
    execution.last_known_state = metadata_store_pb2.Execution.RUNNING  # as a killed run left it
    store.put_executions([execution])

    found = metadata.unfinished_executions(store, "a")
    assert [(e.id, node, run) for e, node, run in found] == [
        (execution.id, "StatisticsGen", runs["a2"].name)
    ]
    assert metadata.unfinished_executions(store, "b") == []
    metadata.cancel_execution(store, found[0][0], {"interrupted": "its process ended"})
    assert metadata.unfinished_executions(store, "a") == []
    ((canceled, _),) = metadata.run_nodes(store, "a", runs["a2"])
    assert metadata.execution_state(canceled) == "canceled"
    assert metadata.custom_property(canceled, "interrupted") == "its process ended"


def test_a_reader_opens_the_store_read_only(shared_store, tmp_path):
    from ml_metadata.proto import metadata_store_pb2

    path, _, _ = shared_store
    new_type = metadata_store_pb2.ExecutionType(name="Written")
    with pytest.raises(Exception, match="readonly"):
        metadata.open_store(path).put_execution_type(new_type)
    assert metadata.open_store(path, writable=True).put_execution_type(new_type)
    with pytest.raises(RuntimeError, match="No ML Metadata store at"):
        metadata.open_store(str(tmp_path / "none.sqlite"))


def test_metrics_files_cut_short_are_refused(tmp_path):
    from components.tfrecord_files import framed

    message = metadata._metrics_for_slice_type()
    overall = message()
    entry = overall.metric_keys_and_values.add()
    entry.key.name = "auc"
    entry.value.double_value.value = 0.75
    sliced = message()
    sliced.slice_key.single_slice_keys.add(column="hour", int64_value=3)
    sliced.metric_keys_and_values.add().CopyFrom(entry)
    data = framed([sliced.SerializeToString(), overall.SerializeToString()])
    (tmp_path / "metrics-00000-of-00001.tfrecord").write_bytes(data)
    assert metadata.overall_metrics(str(tmp_path)) == {"auc": 0.75}
    (tmp_path / "metrics-00000-of-00001.tfrecord").write_bytes(data[:-3])
    with pytest.raises(ValueError, match="truncated TFRecord file"):
        metadata.overall_metrics(str(tmp_path))
    assert metadata.overall_metrics(str(tmp_path / "empty")) == {}


@pytest.mark.slow
def test_a_second_pipeline_in_the_store_leaves_the_first_ones_readers_alone(pipeline_run, tmp_path):
    """A real run of another pipeline, newer, in the same store."""
    from pipeline.pipeline import data_components
    from pipeline.runner import run_pipeline, summarize

    config, summary = pipeline_run
    taxi = copy_of_run(config, tmp_path / "taxi")
    path = taxi.resolved_metadata_path
    other = small_pipeline_config(
        tmp_path / "other", config.data_path, pipeline_name="other", metadata_path=path
    )
    run_pipeline(other, [c for c in data_components(other) if c is not None])

    assert stats.latest_statistics_uri(path, "taxi") == summary.statistics_uri
    assert stats.latest_statistics_uri(path, "other").startswith(other.resolved_pipeline_root)
    schema = metadata.latest_output(path, "taxi", "Schema")
    assert os.path.join(schema.uri, "schema.pbtxt") == summary.schema_path
    again = summarize(taxi)
    assert again.evaluation_uri == summary.evaluation_uri
    assert again.statistics_uri == summary.statistics_uri
    assert [r["run_id"] for r in history.load(other).runs()] == [
        metadata.latest_run(metadata.open_store(path), "other").name
    ]


# What `python -m pipeline runs` and `models` do, and rollback's dry run, in a process of
# their own; prints the records, rollback's exit status and whether it imported TensorFlow.
_COMMANDS = """
import json, sys
from pipeline import history, rollback
from tests.conftest import small_pipeline_config

output_dir, data_path, version = sys.argv[1:]
config = small_pipeline_config(output_dir, data_path)
past = history.load(config)
runs = past.runs()
models = past.models(config.resolved_serving_model_dir)
code = rollback.rollback(config, int(version), dry_run=True, out=sys.stderr)
json.dump({
    "runs": [history.public(r, history.RUN_KEYS) for r in runs],
    "models": [history.public(r, history.MODEL_KEYS) for r in models],
    "rollback": code,
    "imported": [m for m in ("tensorflow", "tensorflow_model_analysis") if m in sys.modules],
}, sys.stdout)
"""


@pytest.mark.slow
def test_runs_models_and_rollback_read_tfmas_metrics_without_tensorflow(pipeline_run, tmp_path):
    import tensorflow_model_analysis as tfma

    config, summary = pipeline_run
    copy = copy_of_run(config, tmp_path / "copy")
    serving = copy.resolved_serving_model_dir
    pushed = int(os.path.basename(summary.pushed_to))
    # A newer, other model put there by hand: the rollback to the pushed one has work to plan.
    newer = os.path.join(serving, str(pushed + 1))
    shutil.copytree(os.path.join(serving, str(pushed)), newer)
    with open(os.path.join(newer, "fingerprint.pb"), "ab") as f:
        f.write(b"other")

    done = subprocess.run(
        [sys.executable, "-c", _COMMANDS, copy.output_dir, str(copy.data_path), str(pushed)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["imported"] == []
    assert found["rollback"] == 0 and "Dry run: nothing changed." in done.stderr, done.stderr

    def nullable(metrics):
        return {k: None if math.isnan(v) else v for k, v in metrics.items()}

    assert found["runs"][0]["metrics"] == nullable(summary.metrics)
    (model,) = [m for m in found["models"] if m["version"] == pushed]
    assert model["metrics"] == nullable(summary.metrics) and model["metrics"]
    # The same protos, slice by slice, as TFMA's own reader.
    read = [m.SerializeToString() for m in metadata.load_metrics(summary.evaluation_uri)]
    assert read == [m.SerializeToString() for m in tfma.load_metrics(summary.evaluation_uri)]
