"""The machines a strategy needs, as Vertex AI and Kubeflow describe them.

`vertex_worker_pool_specs` gives a Vertex AI CustomJob's `workerPoolSpecs`
(pool 0 chief, 1 workers, 2 parameter servers; Vertex sets `TF_CONFIG` from
them); `tfjob_replica_specs` gives a Kubeflow TFJob's `tfReplicaSpecs`.
Both follow from the strategy: one machine for single-machine strategies, a
chief plus workers for multi-worker mirrored, and ps tasks on top for
parameter server.
"""

import dataclasses
from typing import List, Optional

SINGLE_MACHINE = ("default", "one_device", "mirrored", "central_storage", "tpu")


@dataclasses.dataclass(frozen=True)
class TrainingCluster:
    machine_type: str = "n1-standard-8"
    accelerator_type: Optional[str] = None  # e.g. NVIDIA_TESLA_T4
    accelerator_count: int = 0
    workers: int = 2  # training machines in all, chief included
    parameter_servers: int = 1
    ps_machine_type: str = "n1-standard-4"


def _replica_counts(strategy, cluster):
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
    raise ValueError(f"No cluster layout for strategy {strategy!r} (resolve 'auto' first).")


def _machine(machine_type, accelerator_type=None, accelerator_count=0):
    spec = {"machineType": machine_type}
    if accelerator_type and accelerator_count:
        spec.update(acceleratorType=accelerator_type, acceleratorCount=accelerator_count)
    return spec


def vertex_worker_pool_specs(strategy, cluster, image, command, args=()) -> List[dict]:
    chiefs, workers, ps = _replica_counts(strategy, cluster)
    container = {"imageUri": image, "command": list(command), "args": list(args)}
    trainer = _machine(cluster.machine_type, cluster.accelerator_type, cluster.accelerator_count)
    pools = [{"machineSpec": trainer, "replicaCount": chiefs, "containerSpec": container}]
    if workers or ps:
        pools.append({"machineSpec": trainer, "replicaCount": workers,
                      "containerSpec": container} if workers else {})
    if ps:
        pools.append({"machineSpec": _machine(cluster.ps_machine_type), "replicaCount": ps,
                      "containerSpec": container})
    return pools


def tfjob_replica_specs(strategy, cluster, image, command, args=()) -> dict:
    chiefs, workers, ps = _replica_counts(strategy, cluster)

    def replica(count, gpus):
        resources = {"limits": {"nvidia.com/gpu": gpus}} if gpus else {}
        return {"replicas": count, "restartPolicy": "OnFailure", "template": {"spec": {
            "containers": [{"name": "tensorflow", "image": image, "command": list(command),
                            "args": list(args), "resources": resources}]}}}

    gpus = cluster.accelerator_count if cluster.accelerator_type else 0
    specs = {"Chief": replica(chiefs, gpus)}
    if workers:
        specs["Worker"] = replica(workers, gpus)
    if ps:
        specs["PS"] = replica(ps, 0)
    return specs
