"""Runs a compiled Vertex AI PipelineJob JSON on this machine, as Vertex would.

Why: the compiled spec, not the TFX DSL, is what Vertex runs; this runs that
spec's own task commands.  Each container task is a subprocess (this Python
instead of the image's), given the executor input Vertex builds: parameter
values, input artifacts (name, type, URI, metadata), output artifacts with URIs
under the pipeline root, and the file where the task writes its output metadata.

A local folder stands in for Cloud Storage: gs://B/... and /gcs/B/... (Vertex's
mount) both become <gcs_dir>/B/....  A JSON file there stands in for Vertex ML
Metadata: it keeps every artifact across runs, and resolver tasks query it, so
a second run finds the first run's blessed model.  There are no cache lookups:
every container task runs.

    python -m kubeflow.local_runner pipeline.json --gcs-dir /tmp/gcs
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

WORKDIR = Path(__file__).resolve().parent.parent  # the image's WORKDIR holds the same tree
EXECUTOR_INPUT = "{{$}}"
_INPUT_METADATA = re.compile(r"\{\{\$\.inputs\.artifacts\['([^']+)'\]\.metadata\['([^']+)'\]\}\}")
_METADATA_CLAUSE = re.compile(r"metadata\.(\w+)\.(number_value|string_value)")
_TITLE = re.compile(r"^title:\s*(\S+)", re.MULTILINE)
_RUNTIME_ARTIFACT_FIELDS = ("name", "type", "uri", "metadata")


class TaskFailed(RuntimeError):
    pass


def load_job(path):
    """The PipelineJob dict; a bare PipelineSpec gets an empty runtimeConfig."""
    with open(path) as f:
        job = json.load(f)
    return job if "pipelineSpec" in job else {"pipelineSpec": job, "runtimeConfig": {}}


def _producers(task):
    inputs = task.get("inputs", {})
    return {
        spec["taskOutputArtifact"]["producerTask"]
        for spec in inputs.get("artifacts", {}).values()
        if "taskOutputArtifact" in spec
    }


def task_order(tasks):
    """Topological order of the DAG's tasks; ties in name order, so runs repeat exactly."""
    waiting = {
        name: set(task.get("dependentTasks", [])) | _producers(task) for name, task in tasks.items()
    }
    order = []
    while waiting:
        ready = sorted(name for name, needs in waiting.items() if not needs - set(order))
        if not ready:
            raise ValueError(f"the DAG has a cycle among {sorted(waiting)}")
        order.append(ready[0])
        del waiting[ready[0]]
    return order


def schema_title(artifact_type):
    return artifact_type.get("schemaTitle") or _TITLE.search(artifact_type["instanceSchema"])[1]


class ArtifactStore:
    """Stands in for Vertex ML Metadata: every artifact a task produced, oldest first."""

    def __init__(self, path):
        self._path = path
        self.artifacts = []
        if os.path.exists(path):
            with open(path) as f:
                self.artifacts = json.load(f)

    def new_name(self):
        """A resource name like Vertex's, unique across runs."""
        return f"projects/local/locations/local/metadataStores/default/artifacts/{uuid.uuid4().hex}"

    def add(self, artifact):
        self.artifacts.append(artifact)
        os.makedirs(os.path.dirname(self._path), exist_ok=True)
        with open(self._path, "w") as f:
            json.dump(self.artifacts, f, indent=1)

    def latest(self, query):
        """The newest LIVE artifact matching a resolver filter (clauses joined by AND)."""
        clauses = [clause.strip() for clause in query.split(" AND ")]
        for artifact in reversed(self.artifacts):
            if all(_matches(artifact, clause) for clause in clauses):
                return artifact
        return None


def _matches(artifact, clause):
    key, _, want = clause.partition("=")
    want = want.strip('"')
    if key == "schema_title":
        return schema_title(artifact["type"]) == want
    if key == "state":
        return want == "LIVE"  # nothing here is ever deleted
    if key == "name":
        return artifact["name"] == want
    field = _METADATA_CLAUSE.fullmatch(key)
    if field:
        value = artifact["metadata"].get(field[1])
        return value == (float(want) if field[2] == "number_value" else want)
    raise ValueError(f"resolver filter clause {clause!r} is not supported here")


class LocalVertexRunner:
    """Runs compiled PipelineJobs here; `gcs_dir` stands in for Cloud Storage."""

    def __init__(self, gcs_dir, python=sys.executable, workdir=WORKDIR, stream=sys.stderr):
        self.gcs_dir = os.path.abspath(gcs_dir)
        self.python = python
        self.workdir = str(workdir)
        self.stream = stream
        self.store = ArtifactStore(os.path.join(self.gcs_dir, "_vertex_metadata.json"))

    def local(self, value):
        """Where a gs:// or /gcs/ path lies in the stand-in folder; other values unchanged."""
        if isinstance(value, str):
            for prefix in ("gs://", "/gcs/"):
                if value.startswith(prefix):
                    return os.path.join(self.gcs_dir, value[len(prefix) :])
        return value

    def _local_parameter(self, key, value):
        """`local(value)`; for TFX's own Pusher, whose destination is a PushDestination
        proto (as JSON), the folder inside it."""
        if key == "push_destination" and isinstance(value, str) and value.startswith("{"):
            destination = json.loads(value)
            filesystem = destination.get("filesystem", {})
            if "base_directory" in filesystem:
                filesystem["base_directory"] = self.local(filesystem["base_directory"])
            return json.dumps(destination)
        return self.local(value)

    def run(self, job, job_id=None):
        """Runs every task of `job` (a dict or a file); returns {task: {"inputs", "outputs"}}."""
        if not isinstance(job, dict):
            job = load_job(job)
        spec = job["pipelineSpec"]
        if spec.get("schemaVersion") != "2.1.0":
            raise ValueError(
                f"PipelineSpec schema {spec.get('schemaVersion')} is not supported "
                "here; compile with use_pipeline_spec_2_1"
            )
        root = job["runtimeConfig"].get("gcsOutputDirectory") or spec["defaultPipelineRoot"]
        job_id = job_id or f"{spec['pipelineInfo']['name']}-{time.strftime('%Y%m%d%H%M%S')}"
        job_root = os.path.join(self.local(root), job_id)
        tasks = spec["root"]["dag"]["tasks"]
        results = {}
        start = time.monotonic()
        for name in task_order(tasks):
            task = tasks[name]
            component = spec["components"][task["componentRef"]["name"]]
            executor = spec["deploymentSpec"]["executors"][component["executorLabel"]]
            inputs = self._input_artifacts(task, results)
            began = time.monotonic()
            print(f"[{began - start:7.1f}s] {name} ...", file=self.stream, flush=True)
            if "container" in executor:
                outputs = self._run_container(
                    name,
                    task,
                    component,
                    executor["container"],
                    inputs,
                    os.path.join(job_root, name),
                )
            elif "resolver" in executor:
                outputs = self._resolve(executor["resolver"], inputs)
            else:
                raise ValueError(
                    f"task {name}: executor kinds {sorted(executor)} are not supported here"
                )
            results[name] = {"inputs": inputs, "outputs": outputs}
            print(
                f"[{time.monotonic() - start:7.1f}s] {name} done in "
                f"{time.monotonic() - began:.1f}s",
                file=self.stream,
                flush=True,
            )
        return results

    def _input_artifacts(self, task, results):
        """Each input's artifacts from its producer; a key with none is left out, as on Vertex."""
        inputs = {}
        for key, spec in task.get("inputs", {}).get("artifacts", {}).items():
            source = spec["taskOutputArtifact"]
            artifacts = results[source["producerTask"]]["outputs"][source["outputArtifactKey"]]
            if artifacts:
                inputs[key] = [
                    {field: a[field] for field in _RUNTIME_ARTIFACT_FIELDS} for a in artifacts
                ]
        return inputs

    def _parameters(self, name, task):
        values = {}
        for key, spec in task.get("inputs", {}).get("parameters", {}).items():
            if "runtimeValue" not in spec:
                raise ValueError(f"task {name}: parameter {key} is not a constant: {spec}")
            values[key] = self._local_parameter(key, spec["runtimeValue"]["constant"])
        return values

    def _run_container(self, name, task, component, container, inputs, task_root):
        outputs = {
            key: [
                {
                    "name": self.store.new_name(),
                    "type": spec["artifactType"],
                    "uri": os.path.join(task_root, key),
                    "metadata": {},
                }
            ]
            for key, spec in component.get("outputDefinitions", {}).get("artifacts", {}).items()
        }
        output_file = os.path.join(task_root, "executor_output.json")
        executor_input = {
            "inputs": {
                "parameterValues": self._parameters(name, task),
                "artifacts": {k: {"artifacts": v} for k, v in inputs.items()},
            },
            "outputs": {
                "artifacts": {k: {"artifacts": v} for k, v in outputs.items()},
                "outputFile": output_file,
            },
        }
        args = [
            json.dumps(executor_input) if arg == EXECUTOR_INPUT else arg
            for arg in container.get("args", [])
        ]
        unresolved = [arg for arg in args if arg.startswith("{{$")]
        if unresolved:
            raise ValueError(f"task {name}: placeholders {unresolved} are not supported here")
        command = list(container["command"])
        if command[0] == "python":
            command[0] = self.python
        os.makedirs(task_root, exist_ok=True)  # as the KFP launcher does for local paths
        log_path = os.path.join(task_root, "log.txt")
        with open(log_path, "w") as log:
            returncode = subprocess.call(
                command + args, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT
            )
        if returncode:
            with open(log_path) as log:
                tail = "".join(log.readlines()[-40:])
            raise TaskFailed(f"task {name} exited with {returncode}; end of {log_path}:\n{tail}")
        with open(output_file) as f:
            produced = json.load(f).get("artifacts", {})
        for key, artifacts in outputs.items():
            for artifact, written in zip(
                artifacts, produced.get(key, {}).get("artifacts", []), strict=False
            ):
                artifact["metadata"] = written.get("metadata", {})
            for artifact in artifacts:
                self.store.add(artifact)
        return outputs

    def _resolve(self, resolver, inputs):
        """Each query's newest match; none while an input it refers to is empty."""
        outputs = {}
        for key, query in resolver["outputArtifactQueries"].items():
            condition = query["filter"]
            if any(name not in inputs for name, _ in _INPUT_METADATA.findall(condition)):
                outputs[key] = []
                continue
            condition = _INPUT_METADATA.sub(
                lambda m: str(inputs[m[1]][0]["metadata"].get(m[2], "")), condition
            )
            found = self.store.latest(condition)
            outputs[key] = [found] if found else []
        return outputs


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kubeflow.local_runner", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("spec", help="PipelineJob JSON from `python -m pipeline compile`.")
    parser.add_argument(
        "--gcs-dir", required=True, help="Local folder standing in for Cloud Storage."
    )
    parser.add_argument("--job-id", default=None, help="Run ID (default: <name>-<timestamp>).")
    args = parser.parse_args(argv)
    results = LocalVertexRunner(args.gcs_dir).run(args.spec, job_id=args.job_id)
    print(json.dumps({task: result["outputs"] for task, result in results.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
