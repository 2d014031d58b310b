"""Runs a TFX component's executor under the open-source Kubeflow Pipelines launcher.

Why: KFP's launcher copies each input artifact from the object store (minio://, s3://,
gs://) to a local path before the task's command runs, and uploads each output artifact
from its local path afterwards (/minio/..., /s3/..., /gcs/...).  TFX's entry point
(`tfx.orchestration.kubeflow.v2.container.kubeflow_v2_run_executor`, what Vertex runs)
reads and writes the artifact URIs themselves, which TensorFlow's file system cannot do
for minio:// or s3://.  So this gives TFX the launcher's local paths, and the launcher its
URIs back in the executor output.  Same arguments as TFX's entry point:

    python -m kubeflow.kfp_executor --executor_class_path M.Executor \
        --json_serialized_invocation_args '{{$}}' [...]
"""

import json
import subprocess
import sys

TFX_ENTRYPOINT = "tfx.orchestration.kubeflow.v2.container.kubeflow_v2_run_executor"
INVOCATION_FLAG = "--json_serialized_invocation_args"
# The KFP launcher's local path of an artifact URI, by scheme (its LocalPathForURI).
LOCAL_PREFIXES = {"gs://": "/gcs/", "minio://": "/minio/", "s3://": "/s3/"}


def local_path(uri):
    """Where the launcher keeps the artifact at `uri`; other URIs unchanged."""
    for scheme, prefix in LOCAL_PREFIXES.items():
        if uri.startswith(scheme):
            return prefix + uri[len(scheme) :]
    return uri


def remote_uri(path):
    """The artifact URI of a launcher's local path; other paths unchanged."""
    for scheme, prefix in LOCAL_PREFIXES.items():
        if path.startswith(prefix):
            return scheme + path[len(prefix) :]
    return path


def _map_uris(artifact_lists, convert):
    for artifact_list in (artifact_lists or {}).values():
        for artifact in artifact_list.get("artifacts", []):
            if "uri" in artifact:
                artifact["uri"] = convert(artifact["uri"])


def localize(argv):
    """(argv with the executor input's artifact URIs as local paths, the output file)."""
    argv = list(argv)
    for i, arg in enumerate(argv):
        if arg == INVOCATION_FLAG and i + 1 < len(argv):
            index, prefix = i + 1, ""
        elif arg.startswith(INVOCATION_FLAG + "="):
            index, prefix = i, INVOCATION_FLAG + "="
        else:
            continue
        executor_input = json.loads(argv[index][len(prefix) :])
        _map_uris(executor_input.get("inputs", {}).get("artifacts"), local_path)
        _map_uris(executor_input.get("outputs", {}).get("artifacts"), local_path)
        argv[index] = prefix + json.dumps(executor_input)
        return argv, executor_input.get("outputs", {}).get("outputFile")
    raise ValueError(f"no {INVOCATION_FLAG} among the arguments")


def restore(output_file):
    """Puts the artifact URIs back into the executor output TFX wrote at `output_file`."""
    with open(output_file) as f:
        executor_output = json.load(f)
    _map_uris(executor_output.get("artifacts"), remote_uri)
    with open(output_file, "w") as f:
        json.dump(executor_output, f)


def main(argv=None):
    argv, output_file = localize(sys.argv[1:] if argv is None else argv)
    # A process of its own: TFX's entry point parses its flags with absl at start-up.
    returncode = subprocess.call([sys.executable, "-m", TFX_ENTRYPOINT, *argv])
    if returncode == 0 and output_file:
        restore(output_file)
    return returncode


if __name__ == "__main__":
    sys.exit(main())
