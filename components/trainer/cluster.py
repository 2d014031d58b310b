"""Where the Trainer trains, and the machines a strategy needs there.

`TrainingCluster` is the Trainer's `training_cluster` parameter: the backend
(`in_process`: the Trainer's own process; `local`: a cluster of processes on
127.0.0.1; `vertex`: a Vertex AI CustomJob; `kubeflow`: a Kubeflow TFJob) and
the machines.  The layout follows the strategy: one machine for
single-machine strategies (and `auto`, which then picks from that machine's
devices), a chief plus workers for multi-worker mirrored, ps tasks on top for
parameter server.

`vertex_worker_pool_specs` gives a CustomJob's `workerPoolSpecs` (pool 0
chief, 1 workers, 2 parameter servers; Vertex sets `TF_CONFIG` from them);
`tfjob_replica_specs` gives a TFJob's `tfReplicaSpecs`.
"""

import dataclasses
import json

BACKENDS = ("in_process", "local", "vertex", "kubeflow")
SINGLE_MACHINE = ("auto", "default", "one_device", "mirrored", "central_storage", "tpu")
# The task type of each Vertex worker pool, in pool order.
POOL_TASK_TYPES = ("chief", "worker", "ps")


@dataclasses.dataclass(frozen=True)
class TrainingCluster:
    backend: str = "in_process"
    machine_type: str = "n1-standard-8"
    accelerator_type: str | None = None  # e.g. NVIDIA_TESLA_T4
    accelerator_count: int = 0
    workers: int = 2  # training machines in all, chief included
    parameter_servers: int = 1
    ps_machine_type: str = "n1-standard-4"
    # The image every task runs (vertex, kubeflow): the pipeline image.
    image: str | None = None
    # Vertex AI project and region of the CustomJob, and the service account it
    # runs as (None: the project's Compute Engine default service account).
    project: str | None = None
    region: str = "us-central1"
    service_account: str | None = None

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(
                f"training backend must be one of {', '.join(BACKENDS)}; got {self.backend!r}."
            )
        if self.accelerator_count < 0 or (self.accelerator_count and not self.accelerator_type):
            raise ValueError("accelerator_count needs an accelerator_type, and cannot be negative.")

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        values = json.loads(text or "{}")
        unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"training_cluster has unknown keys {unknown}.")
        return cls(**values)


def replica_counts(strategy, cluster):
    """(chiefs, workers, parameter servers) that `strategy` needs on `cluster`."""
    if strategy in SINGLE_MACHINE:
        return 1, 0, 0
    if strategy == "multi_worker_mirrored":
        if cluster.workers < 2:
            raise ValueError("multi_worker_mirrored needs at least 2 workers.")
        return 1, cluster.workers - 1, 0
    if strategy == "parameter_server":
        if cluster.workers < 1 or cluster.parameter_servers < 1:
            raise ValueError("parameter_server needs at least 1 worker and 1 parameter server.")
        # The chief only coordinates; `workers` machines train.
        return 1, cluster.workers, cluster.parameter_servers
    raise ValueError(f"No cluster layout for strategy {strategy!r}.")


def _machine(machine_type, accelerator_type=None, accelerator_count=0):
    spec = {"machineType": machine_type}
    if accelerator_type and accelerator_count:
        spec.update(acceleratorType=accelerator_type, acceleratorCount=accelerator_count)
    return spec


def vertex_worker_pool_specs(strategy, cluster, image, command, args=()) -> list[dict]:
    counts = replica_counts(strategy, cluster)
    container = {"imageUri": image, "command": list(command), "args": list(args)}
    trainer = _machine(cluster.machine_type, cluster.accelerator_type, cluster.accelerator_count)
    machines = (trainer, trainer, _machine(cluster.ps_machine_type))
    return [
        {"machineSpec": machine, "replicaCount": count, "containerSpec": container}
        for machine, count in zip(machines, counts, strict=True)
        if count
    ]


def tfjob_replica_specs(strategy, cluster, image, command, args=()) -> dict:
    chiefs, workers, ps = replica_counts(strategy, cluster)

    def replica(count, gpus):
        resources = {"limits": {"nvidia.com/gpu": gpus}} if gpus else {}
        return {
            "replicas": count,
            "restartPolicy": "OnFailure",
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "tensorflow",
                            "image": image,
                            "command": list(command),
                            "args": list(args),
                            "resources": resources,
                        }
                    ]
                }
            },
        }

    gpus = cluster.accelerator_count if cluster.accelerator_type else 0
    specs = {"Chief": replica(chiefs, gpus)}
    if workers:
        specs["Worker"] = replica(workers, gpus)
    if ps:
        specs["PS"] = replica(ps, 0)
    return specs
