"""Worker pools and replica specs follow the chosen strategy."""

import pytest

from components.trainer.cluster import (
    TrainingCluster, tfjob_replica_specs, vertex_worker_pool_specs)

IMAGE = "us-docker.pkg.dev/p/r/pipeline:1"
COMMAND = ["python", "-m", "trainer"]


def test_single_machine_strategies_get_one_pool_with_the_accelerators():
    cluster = TrainingCluster(accelerator_type="NVIDIA_TESLA_T4", accelerator_count=4)
    pools = vertex_worker_pool_specs("mirrored", cluster, IMAGE, COMMAND)
    assert len(pools) == 1
    assert pools[0]["replicaCount"] == 1
    assert pools[0]["machineSpec"] == {"machineType": "n1-standard-8",
                                       "acceleratorType": "NVIDIA_TESLA_T4",
                                       "acceleratorCount": 4}
    assert pools[0]["containerSpec"]["imageUri"] == IMAGE


def test_multi_worker_mirrored_gets_a_chief_and_the_other_workers():
    pools = vertex_worker_pool_specs("multi_worker_mirrored", TrainingCluster(workers=3),
                                     IMAGE, COMMAND)
    assert [p["replicaCount"] for p in pools] == [1, 2]
    specs = tfjob_replica_specs("multi_worker_mirrored", TrainingCluster(workers=3), IMAGE,
                                COMMAND)
    assert {k: v["replicas"] for k, v in specs.items()} == {"Chief": 1, "Worker": 2}


def test_parameter_server_gets_chief_workers_and_ps_pools():
    cluster = TrainingCluster(workers=2, parameter_servers=1, ps_machine_type="n1-highmem-4")
    pools = vertex_worker_pool_specs("parameter_server", cluster, IMAGE, COMMAND, ["--x"])
    assert [p["replicaCount"] for p in pools] == [1, 2, 1]
    assert pools[2]["machineSpec"] == {"machineType": "n1-highmem-4"}
    assert pools[1]["containerSpec"]["args"] == ["--x"]
    specs = tfjob_replica_specs("parameter_server", cluster, IMAGE, COMMAND)
    assert {k: v["replicas"] for k, v in specs.items()} == {"Chief": 1, "Worker": 2, "PS": 1}


def test_impossible_layouts_fail_saying_why():
    with pytest.raises(ValueError, match="at least 2 workers"):
        vertex_worker_pool_specs("multi_worker_mirrored", TrainingCluster(workers=1), IMAGE,
                                 COMMAND)
    with pytest.raises(ValueError, match="resolve 'auto'"):
        tfjob_replica_specs("auto", TrainingCluster(), IMAGE, COMMAND)
