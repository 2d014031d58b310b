"""Runs the Trainer as a cluster of tasks: on 127.0.0.1, on Vertex AI, or as a TFJob.

Every task runs `python -m components.trainer.replica` with the Trainer's own
inputs, outputs and parameters, and finds its role in `TF_CONFIG`, which the
backend sets: Vertex AI from the worker pools, the Kubeflow training operator
from the replica specs, `run_local_pools` as Vertex would.  The chief writes
the model and the run record; the Trainer executor checks both are there
once the job has ended.
"""

import json
import logging
import os
import socket
import subprocess
import sys
import time

from components.trainer import cluster as cluster_lib

log = logging.getLogger(__name__)

REPLICA_MODULE = "components.trainer.replica"
# The command of every task in the pipeline image, whose WORKDIR holds the code.
REPLICA_COMMAND = ("python", "-m", REPLICA_MODULE)
TFJOB_API = ("kubeflow.org", "v1", "tfjobs")
_CODE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def replica_args(input_dict, output_dict, exec_properties):
    from tfx.types import artifact_utils

    return [
        "--inputs",
        artifact_utils.jsonify_artifact_dict(input_dict),
        "--outputs",
        artifact_utils.jsonify_artifact_dict(output_dict),
        "--exec-properties",
        json.dumps(exec_properties, sort_keys=True),
    ]


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _tail(path, lines=30):
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-lines:])


def run_local_pools(pools, log_dir, serving_task_types=(), poll_seconds=0.2):
    """Runs Vertex-style worker pools as processes on 127.0.0.1; returns when the job is done.

    Each pool's tasks get the `TF_CONFIG` Vertex would give them.  The job is
    done when every task not of a `serving_task_types` type has exited 0 (the
    others serve the chief until then, and are stopped).  The first training
    task to fail stops them all and raises RuntimeError naming it, with the end
    of its log; each task logs to `log_dir/<type>-<index>.log`.
    """
    task_types = cluster_lib.POOL_TASK_TYPES
    ports = iter(free_ports(sum(pool["replicaCount"] for pool in pools)))
    spec = {
        task_types[i]: [f"127.0.0.1:{next(ports)}" for _ in range(pool["replicaCount"])]
        for i, pool in enumerate(pools)
    }
    os.makedirs(log_dir, exist_ok=True)
    env = dict(os.environ)
    # The tasks import this very code, wherever this process found it.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_CODE_ROOT, env.get("PYTHONPATH")]))
    tasks = {}
    try:
        for i, pool in enumerate(pools):
            container = pool["containerSpec"]
            command = [sys.executable, *container["command"][1:], *container.get("args", [])]
            for index in range(pool["replicaCount"]):
                task = (task_types[i], index)
                tf_config = {
                    "cluster": spec,
                    "task": {"type": task[0], "index": index},
                    "environment": "cloud",
                }
                path = os.path.join(log_dir, f"{task[0]}-{index}.log")
                with open(path, "w") as task_log:
                    tasks[task] = (
                        subprocess.Popen(
                            command,
                            stdout=task_log,
                            stderr=subprocess.STDOUT,
                            env=dict(env, TF_CONFIG=json.dumps(tf_config)),
                        ),
                        path,
                    )
        training = {task for task in tasks if task[0] not in serving_task_types}
        while training:
            for task in sorted(training):
                process, path = tasks[task]
                code = process.poll()
                if code is None:
                    continue
                if code != 0:
                    raise RuntimeError(
                        f"Training task {task[0]} {task[1]} exited with code {code}; "
                        f"the job is stopped. Its log, {path}, ends:\n{_tail(path)}"
                    )
                training.discard(task)
            time.sleep(poll_seconds)
    finally:
        for process, _ in tasks.values():
            if process.poll() is None:
                process.kill()
            process.wait()


def vertex_custom_job(display_name, pools, cluster, staging_bucket, credentials=None):
    """The aiplatform CustomJob for `pools`; built without contacting Google Cloud."""
    from google.cloud import aiplatform
    from google.cloud.aiplatform_v1.types import custom_job

    return aiplatform.CustomJob(
        display_name=display_name,
        worker_pool_specs=[custom_job.WorkerPoolSpec.from_json(json.dumps(pool)) for pool in pools],
        project=cluster.project,
        location=cluster.region,
        staging_bucket=staging_bucket,
        credentials=credentials,
    )


def run_vertex_job(job, restart_all_on_failure, service_account=None):
    """Runs the CustomJob to its end; raises if it fails.

    With `restart_all_on_failure` (multi-worker mirrored), Vertex restarts
    every task when one restarts, and training resumes from the last checkpoint.
    """
    job.run(
        service_account=service_account,
        restart_job_on_worker_restart=restart_all_on_failure,
        sync=True,
    )


def tfjob_manifest(name, namespace, replica_specs):
    group, version, _ = TFJOB_API
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": replica_specs},
    }


def tfjob_outcome(status):
    """ "Succeeded", "Failed" (with the operator's message) or None while the TFJob runs."""
    for condition in reversed((status or {}).get("conditions") or []):
        if condition.get("status") == "True" and condition.get("type") in ("Succeeded", "Failed"):
            return condition["type"], condition.get("message", "")
    return None, ""


def pod_namespace():
    """The namespace of the pod this runs in (Kubeflow Pipelines tasks run in pods)."""
    try:
        with open(_SERVICE_ACCOUNT_NAMESPACE) as f:
            return f.read().strip()
    except OSError:
        return "default"


def run_tfjob(manifest, poll_seconds=30):
    """Creates the TFJob through the Kubernetes API and waits for its end; raises if it fails."""
    from kubernetes import client, config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    api = client.CustomObjectsApi()
    group, version, plural = TFJOB_API
    namespace, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
    api.create_namespaced_custom_object(group, version, namespace, plural, manifest)
    log.info("Trainer: TFJob %s/%s created", namespace, name)
    while True:
        job = api.get_namespaced_custom_object(group, version, namespace, plural, name)
        outcome, message = tfjob_outcome(job.get("status"))
        if outcome == "Succeeded":
            return
        if outcome == "Failed":
            raise RuntimeError(f"TFJob {namespace}/{name} failed: {message}")
        time.sleep(poll_seconds)
