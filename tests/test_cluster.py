"""Training clusters: worker pools and replica specs follow the strategy; the
launcher runs pools on 127.0.0.1 as Vertex would, and reads TFJob outcomes."""

import json
import textwrap

import pytest

from components.trainer import launcher
from components.trainer.cluster import (
    TrainingCluster,
    tfjob_replica_specs,
    vertex_worker_pool_specs,
)

IMAGE = "us-docker.pkg.dev/p/r/pipeline:1"
COMMAND = ["python", "-m", "trainer"]


def test_single_machine_strategies_get_one_pool_with_the_accelerators():
    cluster = TrainingCluster(accelerator_type="NVIDIA_TESLA_T4", accelerator_count=4)
    pools = vertex_worker_pool_specs("mirrored", cluster, IMAGE, COMMAND)
    assert len(pools) == 1
    assert pools[0]["replicaCount"] == 1
    assert pools[0]["machineSpec"] == {
        "machineType": "n1-standard-8",
        "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 4,
    }
    assert pools[0]["containerSpec"]["imageUri"] == IMAGE


def test_multi_worker_mirrored_gets_a_chief_and_the_other_workers():
    pools = vertex_worker_pool_specs(
        "multi_worker_mirrored", TrainingCluster(workers=3), IMAGE, COMMAND
    )
    assert [p["replicaCount"] for p in pools] == [1, 2]
    specs = tfjob_replica_specs("multi_worker_mirrored", TrainingCluster(workers=3), IMAGE, COMMAND)
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
        vertex_worker_pool_specs(
            "multi_worker_mirrored", TrainingCluster(workers=1), IMAGE, COMMAND
        )
    with pytest.raises(ValueError, match="No cluster layout for strategy 'nccl'"):
        tfjob_replica_specs("nccl", TrainingCluster(), IMAGE, COMMAND)
    with pytest.raises(ValueError, match="training backend must be one of"):
        TrainingCluster(backend="slurm")
    with pytest.raises(ValueError, match="unknown keys \\['worker_count'\\]"):
        TrainingCluster.from_json('{"worker_count": 3}')


def test_auto_gets_one_machine_and_picks_from_its_devices():
    cluster = TrainingCluster(accelerator_type="NVIDIA_L4", accelerator_count=2)
    assert [
        p["replicaCount"] for p in vertex_worker_pool_specs("auto", cluster, IMAGE, COMMAND)
    ] == [1]


def test_cluster_settings_survive_the_trainer_parameter():
    cluster = TrainingCluster(
        backend="vertex",
        workers=4,
        accelerator_type="NVIDIA_L4",
        accelerator_count=1,
        image=IMAGE,
        project="proj",
    )
    assert TrainingCluster.from_json(cluster.to_json()) == cluster
    assert TrainingCluster.from_json(None) == TrainingCluster()


# Each task writes what it was told and exits; worker 1 fails when asked to.
_TASK = textwrap.dedent("""
    import json, os, sys
    config = json.loads(os.environ["TF_CONFIG"])
    task = config["task"]
    with open(os.path.join(sys.argv[1], f"{task['type']}-{task['index']}.json"), "w") as f:
        json.dump(config, f)
    if task["type"] == "ps" or (task["type"] == "worker" and sys.argv[2] == "serve"):
        import time
        time.sleep(600)  # serves until the launcher stops it
    sys.exit(3 if task == {"type": "worker", "index": 1} and sys.argv[2] == "fail" else 0)
""")


def _pools(strategy, cluster, out, mode):
    return vertex_worker_pool_specs(
        strategy, cluster, IMAGE, ["python", "-c", _TASK], [str(out), mode]
    )


@pytest.mark.slow  # a cluster of processes
def test_local_pools_get_the_tf_config_vertex_would_give(tmp_path):
    pools = _pools("multi_worker_mirrored", TrainingCluster(workers=3), tmp_path, "ok")
    launcher.run_local_pools(pools, str(tmp_path / "logs"))
    configs = {p.stem: json.loads(p.read_text()) for p in tmp_path.glob("*.json")}
    assert sorted(configs) == ["chief-0", "worker-0", "worker-1"]
    cluster = configs["chief-0"]["cluster"]
    assert {k: len(v) for k, v in cluster.items()} == {"chief": 1, "worker": 2}
    assert all(address.startswith("127.0.0.1:") for v in cluster.values() for address in v)
    assert len({a for v in cluster.values() for a in v}) == 3
    assert all(c["cluster"] == cluster for c in configs.values())
    assert configs["worker-1"]["task"] == {"type": "worker", "index": 1}
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        "chief-0.log",
        "worker-0.log",
        "worker-1.log",
    ]


@pytest.mark.slow  # a cluster of processes
def test_local_pools_stop_serving_tasks_once_the_chief_is_done(tmp_path):
    pools = _pools(
        "parameter_server", TrainingCluster(workers=2, parameter_servers=1), tmp_path, "serve"
    )
    launcher.run_local_pools(pools, str(tmp_path / "logs"), serving_task_types=("worker", "ps"))
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == [
        "chief-0",
        "ps-0",
        "worker-0",
        "worker-1",
    ]


@pytest.mark.slow  # a cluster of processes
def test_a_failed_training_task_stops_the_job_naming_the_task_and_its_log(tmp_path):
    pools = _pools("multi_worker_mirrored", TrainingCluster(workers=3), tmp_path, "fail")
    with pytest.raises(RuntimeError) as failure:
        launcher.run_local_pools(pools, str(tmp_path / "logs"))
    message = str(failure.value)
    assert "Training task worker 1 exited with code 3" in message
    assert str(tmp_path / "logs" / "worker-1.log") in message


@pytest.mark.slow  # loads google-cloud-aiplatform: about 17 s of CPU
def test_vertex_custom_job_is_built_from_the_pools_without_google_cloud():
    from google.auth.credentials import AnonymousCredentials

    cluster = TrainingCluster(
        backend="vertex",
        workers=2,
        parameter_servers=1,
        image=IMAGE,
        project="proj",
        region="europe-west4",
        accelerator_type="NVIDIA_TESLA_T4",
        accelerator_count=1,
    )
    pools = vertex_worker_pool_specs(
        "parameter_server", cluster, IMAGE, launcher.REPLICA_COMMAND, ["--inputs", "{}"]
    )
    job = launcher.vertex_custom_job(
        "trainer-abc", pools, cluster, "gs://bucket/run", credentials=AnonymousCredentials()
    )
    body = job.to_dict()
    sent = body["jobSpec"]["workerPoolSpecs"]
    assert [int(p["replicaCount"]) for p in sent] == [1, 2, 1]
    assert sent[0]["machineSpec"]["acceleratorType"] == "NVIDIA_TESLA_T4"
    assert sent[2]["machineSpec"] == {"machineType": "n1-standard-4"}
    assert sent[1]["containerSpec"] == {
        "imageUri": IMAGE,
        "command": ["python", "-m", launcher.REPLICA_MODULE],
        "args": ["--inputs", "{}"],
    }
    assert body["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"].startswith("gs://bucket/run/")
    assert (job.project, job.location) == ("proj", "europe-west4")


def test_tfjob_manifest_and_outcomes():
    specs = tfjob_replica_specs(
        "multi_worker_mirrored", TrainingCluster(workers=2), IMAGE, launcher.REPLICA_COMMAND
    )
    manifest = launcher.tfjob_manifest("trainer-abc", "team", specs)
    assert manifest["apiVersion"] == "kubeflow.org/v1" and manifest["kind"] == "TFJob"
    assert manifest["metadata"] == {"name": "trainer-abc", "namespace": "team"}
    assert sorted(manifest["spec"]["tfReplicaSpecs"]) == ["Chief", "Worker"]
    running = {
        "conditions": [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}]
    }
    assert launcher.tfjob_outcome(running) == (None, "")
    assert launcher.tfjob_outcome(None) == (None, "")
    failed = {
        "conditions": running["conditions"]
        + [
            {
                "type": "Failed",
                "status": "True",
                "message": "TFJob trainer-abc has failed because 1 Worker replica(s) failed.",
            }
        ]
    }
    assert launcher.tfjob_outcome(failed)[0] == "Failed"
    assert "Worker replica" in launcher.tfjob_outcome(failed)[1]
    done = {"conditions": running["conditions"] + [{"type": "Succeeded", "status": "True"}]}
    assert launcher.tfjob_outcome(done) == ("Succeeded", "")
