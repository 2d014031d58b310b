"""The pipeline's Beam components on Beam's portable runner: a job service and an external
worker pool on 127.0.0.1, whose worker processes share nothing with the driver but the code on
their PYTHONPATH. What Dataflow, Flink and Spark ask of the components, without a cluster."""

import filecmp
import glob
import math
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from pipeline.config import REPO_ROOT
from tests.conftest import small_pipeline_config

pytestmark = pytest.mark.slow  # a job service, a worker pool and a pipeline run

# Python runs a `sitecustomize` module found on its path at start-up: with this one on the
# PYTHONPATH of the pool (and so of the workers it starts), every process records each of the
# kit's modules it imports, with its process id and its parent's, in $KIT_IMPORT_LOG.
_RECORDER = """
import os
import sys


class _Recorder:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("components", "transforms", "models"):
            with open(os.environ["KIT_IMPORT_LOG"], "a") as log:
                log.write(f"{os.getpid()} {os.getppid()} {name}\\n")


if os.environ.get("KIT_IMPORT_LOG"):
    sys.meta_path.insert(0, _Recorder())
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port, process, log_path, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}: {log_path.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"not listening on {port} after {timeout} s: {log_path.read_text()}")


def _end(process):
    """Ends `process` and what it started (its process group): SIGTERM, then SIGKILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def beam_services(tmp_path_factory):
    """(Beam arguments for the portable runner, worker pool's pid, job service's pid, import
    log): a job service and an external worker pool on free 127.0.0.1 ports, each in a process
    group of its own that teardown ends; the pool's workers import the repository."""
    folder = tmp_path_factory.mktemp("beam_services")
    site = folder / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_RECORDER)
    import_log = folder / "imports.log"
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site), str(REPO_ROOT)]),
        # The pool starts each worker as `python` found on the PATH: this interpreter.
        PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        KIT_IMPORT_LOG=str(import_log),
    )
    job_port, pool_port = _free_port(), _free_port()
    commands = {
        "job_service": [
            "apache_beam.runners.portability.local_job_service_main",
            f"--port={job_port}",
            f"--staging_dir={folder / 'staging'}",
        ],
        "worker_pool": [
            "apache_beam.runners.worker.worker_pool_main",
            f"--service_port={pool_port}",
        ],
    }
    processes = {}
    try:
        for name, (module, *args) in commands.items():
            with open(folder / f"{name}.log", "w") as log:
                processes[name] = subprocess.Popen(
                    [sys.executable, "-m", module, *args],
                    env=env,
                    cwd=folder,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        for name, port in (("job_service", job_port), ("worker_pool", pool_port)):
            _wait_for_port(port, processes[name], folder / f"{name}.log")
        beam_args = (
            "--runner=PortableRunner",
            f"--job_endpoint=127.0.0.1:{job_port}",
            "--environment_type=EXTERNAL",
            f"--environment_config=127.0.0.1:{pool_port}",
        )
        yield beam_args, processes["worker_pool"].pid, processes["job_service"].pid, import_log
    finally:
        for process in processes.values():
            _end(process)


def _records(pattern, reserialize=False):
    """The set of serialized records in the gzipped TFRecord files `pattern` matches; with
    `reserialize`, tf.Examples serialized again with their features in name order."""
    import tensorflow as tf

    files = sorted(glob.glob(pattern))
    assert files, pattern
    records = (r.numpy() for r in tf.data.TFRecordDataset(files, compression_type="GZIP"))
    if reserialize:
        records = (
            tf.train.Example.FromString(r).SerializeToString(deterministic=True) for r in records
        )
    return set(records)


def _one(pattern):
    (path,) = glob.glob(pattern)
    return path


def _assert_close(actual, expected, where, rel=1e-6):
    """`actual` equals `expected` (protos as dicts), floats within `rel`."""
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys(), where
        for key in expected:
            _assert_close(actual[key], expected[key], f"{where}.{key}", rel)
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _assert_close(a, e, f"{where}[{i}]", rel)
    elif isinstance(expected, float):
        assert math.isclose(actual, expected, rel_tol=rel, abs_tol=1e-9), (where, actual, expected)
    else:
        assert actual == expected, (where, actual, expected)


def _statistics(root, split):
    from google.protobuf import json_format
    from tensorflow_metadata.proto.v0 import statistics_pb2

    path = _one(os.path.join(root, "StatisticsGen", "statistics", "*", f"Split-{split}", "*.pb"))
    with open(path, "rb") as f:
        stats = statistics_pb2.DatasetFeatureStatisticsList.FromString(f.read())
    return json_format.MessageToDict(stats)


def _metrics(root):
    from google.protobuf import json_format
    from tensorflow_model_analysis.proto import metrics_for_slice_pb2

    path = _one(os.path.join(root, "Evaluator", "evaluation", "*", "metrics-*"))
    import tensorflow as tf

    return [
        json_format.MessageToDict(metrics_for_slice_pb2.MetricsForSlice.FromString(r.numpy()))
        for r in tf.data.TFRecordDataset([path])
    ]


def _vocabularies(root):
    assets = _one(os.path.join(root, "Transform", "transform_graph", "*", "transform_fn", "assets"))
    vocabularies = {}
    for name in sorted(os.listdir(assets)):
        with open(os.path.join(assets, name), "rb") as f:
            vocabularies[name] = f.read()
    return vocabularies


def test_beam_components_run_out_of_process_with_the_in_memory_runs_outputs(
    beam_services, pipeline_run, small_taxi_csv, tmp_path
):
    from pipeline.runner import run_locally

    beam_args, pool_pid, job_service_pid, import_log = beam_services
    config, summary = pipeline_run
    portable_config = small_pipeline_config(tmp_path, small_taxi_csv, beam_pipeline_args=beam_args)
    portable = run_locally(portable_config)
    assert portable.exit_code == 0, portable

    here, there = config.resolved_pipeline_root, portable_config.resolved_pipeline_root
    for split in ("train", "eval"):
        # tfx_bsl's encoder, which writes the transformed examples, orders each record's
        # features at random: their bytes differ from one run to the next, in memory too.
        for artifact, reserialize in (
            ("ExampleGen/examples", False),
            ("Transform/transformed_examples", True),
        ):
            pattern = os.path.join(artifact, "*", f"Split-{split}", "*.gz")
            assert _records(os.path.join(there, pattern), reserialize) == _records(
                os.path.join(here, pattern), reserialize
            ), (artifact, split)
        _assert_close(_statistics(there, split), _statistics(here, split), f"statistics {split}")
    assert _vocabularies(there) == _vocabularies(here)
    # The Trainer runs in this process both times, with the same seed: on the same transformed
    # examples, read in the same order, it trains the same weights. The Evaluator then scores
    # the same model, so its metrics compare.
    weights = os.path.join("Trainer", "model", "*", "Format-Serving", "variables", "*.data-*")
    assert filecmp.cmp(
        _one(os.path.join(there, weights)), _one(os.path.join(here, weights)), shallow=False
    ), "the Trainer trained other weights"
    _assert_close(_metrics(there), _metrics(here), "metrics")
    assert portable.metrics == pytest.approx(summary.metrics, nan_ok=True)

    # The kit's Beam code ran in the pool's workers: of the processes that record (the pool,
    # the job service and what they start; not this one), only the pool's children imported
    # any of the kit's modules, and between them every Beam component's executor.
    imported = {}
    for line in import_log.read_text().splitlines():
        pid, ppid, module = line.split()
        imported.setdefault((int(pid), int(ppid)), set()).add(module)
    assert {ppid for _, ppid in imported} == {pool_pid}, (imported, pool_pid, job_service_pid)
    by_workers = set().union(*imported.values())
    assert {
        "components.examples_reader",  # the RecordBatch coder the kit registers
        "components.example_gen.executor",
        "components.statistics_gen.executor",
        "components.transform.executor",
        "components.evaluator.executor",
    } <= by_workers, imported
