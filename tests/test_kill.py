"""A run SIGKILLed in any component leaves nothing half-written visible; the next one pushes.

One pipeline output folder, small data, the schema inferred (so SchemaGen runs too). For
each component in pipeline order, `python -m pipeline run` starts in a process group of its
own and the whole group gets SIGKILL as soon as that component's executor has written its
first file (under its output or temporary folders; for the Pusher, in the serving folder):
mid-write. Each run reuses from the cache what the earlier ones completed, so the sequence
costs about one full run. After each kill: ML Metadata shows the component's execution
still RUNNING (killed mid-component) with nothing published, every LIVE artifact is on disk
with no staging folder in it, the serving folder holds only complete versions, `runs` shows
the run incomplete and the run before it (cleared by this one) failed in the component it
was killed in. Then a normal run pushes; `runs`, `models` and the serving folder agree, and
no folder a killed run was writing is left.
"""

import contextlib
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from pipeline import exit_codes
from pipeline.config import REPO_ROOT
from pipeline.recovery import owned_temp_dir
from tests.conftest import TAXI_DEFINITION

NODES = (
    "ExampleGen",
    "StatisticsGen",
    "SchemaGen",
    "ExampleValidator",
    "Transform",
    "Trainer",
    "Evaluator",
    "Pusher",
)
_SETTINGS = ("--train-steps", "100", "--eval-steps", "5")
_RUNNING = 2  # ml_metadata Execution.State
_COMPLETE = 3
_LIVE = 2  # ml_metadata Artifact.State


class Pipeline:
    """One pipeline's folders, and its commands as subprocesses with their own TMPDIR."""

    def __init__(self, out, csv):
        self.out = str(out)
        self.csv = str(csv)
        self.root = os.path.join(self.out, "pipelines", "taxi", "root")
        self.store = os.path.join(self.out, "pipelines", "taxi", "metadata.sqlite")
        self.serving = os.path.join(self.out, "serving_model", "taxi")
        self.tmp = os.path.join(self.out, "tmp")
        os.makedirs(self.tmp)
        self.env = {**os.environ, "TMPDIR": self.tmp}
        self.runs = 0

    def _args(self, *args):
        return [sys.executable, "-m", "pipeline", *args, "--definition", TAXI_DEFINITION,
                "--output-dir", self.out]  # fmt: skip

    def start_run(self):
        """`run` in a new session, so that killing its group kills everything it started;
        its output goes to a file (a pipe nobody reads while polling could fill and block it)."""
        self.runs += 1
        log = open(os.path.join(self.out, f"run-{self.runs}.log"), "w+")  # noqa: SIM115 (_kill, _output close it)
        process = subprocess.Popen(
            self._args("run", "--infer-schema", "--data", self.csv, *_SETTINGS),
            cwd=REPO_ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        process.log = log
        return process

    def listing(self, command):
        """`runs --json` or `models --json`, parsed."""
        done = subprocess.run(
            self._args(command, "--json"), cwd=REPO_ROOT, env=self.env, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def output_dirs(self, node="*"):
        """The output folders `<root>/<node>/<key>/<execution id>` there are now."""
        return set(glob.glob(os.path.join(self.root, node, "*", "[0-9]*")))

    def serving_entries(self):
        return set(os.listdir(self.serving)) if os.path.isdir(self.serving) else set()


def _files(folder):
    return [os.path.join(parent, name) for parent, _, names in os.walk(folder) for name in names]


def _written(pipeline, node, outputs, serving_before):
    """What `node`'s new execution (its output folders `outputs`) has written so far."""
    if node == "Pusher":  # it writes into the serving folder only
        return sorted(pipeline.serving_entries() - serving_before)
    temp = [
        os.path.join(pipeline.root, node, ".system", "executor_execution", execution, ".temp")
        for execution in {os.path.basename(folder) for folder in outputs}
    ]
    return [path for folder in [*outputs, *temp] for path in _files(folder)]


def _wait_until(process, found, what, interval, timeout=300):
    """Polls `found()` until it returns something; fails if `process` ends first."""
    deadline = time.monotonic() + timeout
    while not (result := found()):
        if process.poll() is not None:
            output = _output(process)
            pytest.fail(f"the run ended (status {process.returncode}) before {what}:\n{output}")
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(interval)
    return result


def _output(process):
    """Everything `process` printed, once it has ended."""
    process.log.seek(0)
    output = process.log.read()
    process.log.close()
    return output


def _kill(process):
    with contextlib.suppress(ProcessLookupError):  # the group is gone already
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    process.log.close()


def _kill_in(pipeline, node):
    """Runs the pipeline and SIGKILLs its process group once `node`'s executor has written
    something; returns (seconds the run lived, what had been written)."""
    before, serving_before = pipeline.output_dirs(node), pipeline.serving_entries()
    began = time.monotonic()
    process = pipeline.start_run()
    try:
        outputs = _wait_until(
            process, lambda: pipeline.output_dirs(node) - before, f"{node} started", 0.005
        )
        written = _wait_until(
            process,
            lambda: _written(pipeline, node, outputs, serving_before),
            f"{node} wrote anything",
            0.001,
        )
    finally:
        _kill(process)
    return time.monotonic() - began, written


def _tree(folder):
    """{relative path: sha256} of the files under `folder`."""
    files = {}
    for path in _files(folder):
        with open(path, "rb") as f:
            files[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return files


def _check_store(pipeline, node, written):
    """The killed node's execution is RUNNING with no output published; every LIVE artifact
    was output by a completed execution and is on disk, no staging folder in it."""
    from ml_metadata.proto import metadata_store_pb2

    from pipeline.metadata import open_store

    store = open_store(pipeline.store)
    context = store.get_context_by_type_and_name("node", f"taxi.{node}")
    assert context is not None, f"{node} never registered an execution"
    newest = max(store.get_executions_by_context(context.id), key=lambda e: e.id)
    assert newest.last_known_state == _RUNNING, (
        f"{node} was not killed mid-execution (it had written {written}): its newest "
        f"execution is {metadata_store_pb2.Execution.State.Name(newest.last_known_state)}"
    )
    events = store.get_events_by_execution_ids([newest.id])
    outputs = [e for e in events if e.type == metadata_store_pb2.Event.OUTPUT]
    assert not outputs, f"the killed {node} execution published {outputs}"

    executions = {e.id: e for e in store.get_executions()}
    live = [a for a in store.get_artifacts() if a.state == _LIVE]
    producers = {}
    for event in store.get_events_by_artifact_ids([a.id for a in live]):
        if event.type == metadata_store_pb2.Event.OUTPUT:
            producers.setdefault(event.artifact_id, []).append(executions[event.execution_id])
    for artifact in live:
        states = {e.last_known_state for e in producers.get(artifact.id, [])}
        assert _COMPLETE in states and _RUNNING not in states, (artifact.uri, states)
        assert os.path.exists(artifact.uri), f"LIVE artifact with no files: {artifact.uri}"
        if os.path.isdir(artifact.uri):
            hidden = [n for n in os.listdir(artifact.uri) if n.startswith(".")]
            assert not hidden, f"LIVE artifact {artifact.uri} holds {hidden}"


def _check_serving(pipeline):
    """Every name in the serving folder not hidden is a version: a complete copy of a model
    the Trainer exported."""
    exports = glob.glob(os.path.join(pipeline.root, "Trainer", "model", "*", "Format-Serving"))
    trained = [_tree(path) for path in exports]
    for name in pipeline.serving_entries():
        if name.startswith("."):
            continue  # a staging folder: not a version to TensorFlow Serving or `models`
        assert name.isdigit(), f"{name} in the serving folder is not a version"
        copy = _tree(os.path.join(pipeline.serving, name))
        assert copy in trained, f"version {name} is not a complete copy of a trained model"


@pytest.mark.slow
def test_a_run_killed_in_any_component_leaves_nothing_half_written(tmp_path, small_taxi_csv):
    began = time.monotonic()
    pipeline = Pipeline(tmp_path / "out", small_taxi_csv)

    lived = []
    for done, node in enumerate(NODES, start=1):
        seconds, written = _kill_in(pipeline, node)
        lived.append(seconds)
        print(f"killed in {node} after {seconds:.1f} s, it had written {written[:3]}")
        _check_store(pipeline, node, written)
        _check_serving(pipeline)
        runs = pipeline.listing("runs")
        assert len(runs) == done
        assert runs[0]["outcome"] == "incomplete", (node, runs[0])
        assert runs[0]["pushed_version"] is None
        if done > 1:  # this run found the one before killed, and said so in ML Metadata
            assert (runs[1]["outcome"], runs[1]["failed_component"]) == ("failed", NODES[done - 2])
        assert not [m for m in pipeline.listing("models") if m["source"] == "pipeline"]

    versions_before = {n for n in pipeline.serving_entries() if n.isdigit()}
    process = pipeline.start_run()
    process.wait(timeout=600)
    output = _output(process)
    assert process.returncode == exit_codes.OK, output
    assert "was interrupted in Pusher (its process ended mid-run)" in output
    reused = output.split("reused from cache: ")[1].splitlines()[0].split(", ")
    assert {"ExampleGen", "StatisticsGen", "SchemaGen", "Transform", "Trainer"} <= set(reused)

    versions = {n for n in pipeline.serving_entries() if n.isdigit()}
    pushed = max(versions, key=int)
    assert f"pushed model: {os.path.join(pipeline.serving, pushed)}" in output
    assert versions_before <= versions
    assert pipeline.serving_entries() == versions, "a staging folder was left behind"
    _check_serving(pipeline)
    runs, models = pipeline.listing("runs"), pipeline.listing("models")
    assert (runs[0]["outcome"], runs[0]["pushed_version"]) == ("pushed", int(pushed))
    killed = list(reversed(runs[1:]))
    assert [(r["outcome"], r["failed_component"]) for r in killed] == [
        ("failed", node) for node in NODES
    ]
    for run, seconds in zip(killed, lived, strict=True):
        assert 0 <= run["duration_s"] < seconds, (run, seconds)  # not up to the next run
    assert models[0]["version"] == int(pushed) and models[0]["serving"]
    assert models[0]["run_id"] == runs[0]["run_id"]
    assert {str(m["version"]) for m in models} == versions

    # Nothing the killed runs were writing is left: no output folder ML Metadata does not
    # name, no executor or stateful working folder of theirs, no temporary folder.
    from pipeline.metadata import open_store

    uris = {a.uri for a in open_store(pipeline.store).get_artifacts()}
    assert pipeline.output_dirs() <= uris, sorted(pipeline.output_dirs() - uris)
    published = {tuple(os.path.relpath(u, pipeline.root).split(os.sep)[::2]) for u in uris}
    for folder in glob.glob(os.path.join(pipeline.root, "*", ".system", "executor_execution", "*")):
        node, *_, execution = os.path.relpath(folder, pipeline.root).split(os.sep)
        assert (node, execution) in published, f"{folder}: no artifact of that execution"
    assert not glob.glob(os.path.join(pipeline.root, "*", ".system", "stateful_working_dir", "*"))
    leftovers = [n for n in os.listdir(pipeline.tmp) if n.startswith("tfx-kit-")]
    assert not leftovers, f"killed runs left their temporary folders: {leftovers}"
    print(f"kill sequence and recovery: {time.monotonic() - began:.0f} s")


# Holds a run's temporary folder (pipeline/recovery.py) until its stdin closes.
_HOLD_TEMP = """
import sys
from pipeline.recovery import owned_temp_dir
with owned_temp_dir() as folder:
    print(folder, flush=True)
    sys.stdin.read()
"""


def _hold_temp(parent):
    """A process holding a temporary folder under `parent`: (process, folder)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD_TEMP],
        cwd=REPO_ROOT,
        env={**os.environ, "TMPDIR": str(parent)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, process.stdout.readline().strip()


def test_the_next_run_removes_a_killed_runs_temporary_folder_not_a_live_ones(tmp_path, monkeypatch):
    """TFX stages a 50 MB copy of itself there per Beam component: a killed run's must go."""
    (killed, killed_folder), (live, live_folder) = _hold_temp(tmp_path), _hold_temp(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert os.path.isdir(killed_folder)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    with owned_temp_dir() as mine:
        assert not os.path.exists(killed_folder)
        assert os.path.isdir(live_folder) and os.path.isdir(mine)
    live.communicate()  # closes its stdin: it ends, removing its folder
    assert os.listdir(tmp_path) == []
