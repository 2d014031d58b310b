"""Vertex AI: the compiled PipelineJob, a run of it here, submit/schedule requests, the image."""

import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest

from kubeflow.local_runner import task_order
from pipeline.cli import main
from pipeline.config import DEFAULT_BEAM_ARGS, REPO_ROOT
from pipeline.vertex import (
    IMAGE_FOLDERS,
    NO_CREDENTIALS,
    NO_PROJECT,
    SetupError,
    beam_args,
    compile_pipeline,
    vertex_config,
)
from tests.conftest import small_pipeline_config, taxi_config

IMAGE = "europe-west4-docker.pkg.dev/proj/kit/taxi:test"
WORKER_IMAGE = "europe-west4-docker.pkg.dev/proj/kit/taxi-beam:test"
SERVICE_ACCOUNT = "pipelines@proj.iam.gserviceaccount.com"
CRON = "0 3 * * 1"
BLESSING_RESOLVER = "latest_blessed_model_resolver-model-blessing-resolver"
MODEL_RESOLVER = "latest_blessed_model_resolver-model-resolver"
EXECUTORS = {
    "SchemaImporter": "components.schema_importer.executor.Executor",
    "ExampleGen": "components.example_gen.executor.Executor",
    "StatisticsGen": "components.statistics_gen.executor.Executor",
    "ExampleValidator": "components.example_validator.executor.Executor",
    "Transform": "components.transform.executor.Executor",
    "Trainer": "components.trainer.executor.Executor",
    "Evaluator": "components.evaluator.executor.Executor",
    "Pusher": "components.pusher.executor.Executor",
}

# The small config's: the label checked, no kind warn-only, no drift or skew thresholds.
VALIDATOR_PARAMETERS = {
    "raw_label_key": "tips",
    "warn_only": "[]",
    "drift_thresholds": "{}",
    "skew_thresholds": "{}",
}


def _config(output_dir, **overrides):
    settings = {
        "pipeline_root": "gs://bucket/root",
        "serving_model_dir": "/gcs/bucket/serving/taxi",
        "image": IMAGE,
        "warm_start": True,
    }
    settings.update(overrides)
    return small_pipeline_config(output_dir, "gs://bucket/data/taxi.csv", **settings)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(config, path, job) of the small pipeline compiled with warm start."""
    folder = tmp_path_factory.mktemp("compiled")
    config = _config(folder)
    path = str(folder / "pipeline.json")
    return config, path, compile_pipeline(config, path)


def _tasks(job):
    return job["pipelineSpec"]["root"]["dag"]["tasks"]


def _executor(job, task):
    spec = job["pipelineSpec"]
    label = spec["components"][_tasks(job)[task]["componentRef"]["name"]]["executorLabel"]
    return spec["deploymentSpec"]["executors"][label]


def _parameters(job, task):
    return {
        key: value["runtimeValue"]["constant"]
        for key, value in _tasks(job)[task]["inputs"]["parameters"].items()
    }


def _producer(job, task, key):
    return _tasks(job)[task]["inputs"]["artifacts"][key]["taskOutputArtifact"]


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))


def test_compiled_json_parses_into_kfp_pipeline_spec(compiled):
    from google.protobuf import json_format
    from kfp.pipeline_spec import pipeline_spec_pb2

    _, path, job = compiled
    with open(path) as f:
        assert json.load(f) == job
    spec = json_format.Parse(json.dumps(job["pipelineSpec"]), pipeline_spec_pb2.PipelineSpec())
    assert spec.schema_version == "2.1.0"
    assert spec.pipeline_info.name == "taxi"
    assert set(spec.root.dag.tasks) == set(EXECUTORS) | {BLESSING_RESOLVER, MODEL_RESOLVER}
    assert job["runtimeConfig"] == {"gcsOutputDirectory": "gs://bucket/root"}


def test_tasks_depend_on_what_they_consume(compiled):
    _, _, job = compiled
    tasks = _tasks(job)
    needs = {
        name: sorted(
            set(task.get("dependentTasks", []))
            | {
                spec["taskOutputArtifact"]["producerTask"]
                for spec in task.get("inputs", {}).get("artifacts", {}).values()
            }
        )
        for name, task in tasks.items()
    }
    assert needs == {
        "SchemaImporter": [],
        "ExampleGen": ["SchemaImporter"],
        "StatisticsGen": ["ExampleGen", "SchemaImporter"],
        "ExampleValidator": ["SchemaImporter", "StatisticsGen"],
        "Transform": ["ExampleGen", "SchemaImporter"],
        BLESSING_RESOLVER: [],
        MODEL_RESOLVER: [BLESSING_RESOLVER],
        # The gate: the Trainer waits for validation, whose failure stops it.
        # It copies the train split's statistics into the model: the later drift baseline.
        "Trainer": ["ExampleValidator", "StatisticsGen", "Transform", MODEL_RESOLVER],
        "Evaluator": ["ExampleGen", "Trainer", MODEL_RESOLVER],
        "Pusher": ["Evaluator", "Trainer"],
    }
    order = task_order(tasks)
    assert [name for name in order if name in EXECUTORS] == list(EXECUTORS)
    assert order.index(MODEL_RESOLVER) < order.index("Trainer")


def test_every_component_runs_in_the_image_with_the_vertex_entrypoint(compiled):
    from tfx.orchestration.kubeflow.v2.kubeflow_v2_dag_runner import KUBEFLOW_TFX_CMD

    _, _, job = compiled
    for task, executor_class in EXECUTORS.items():
        container = _executor(job, task)["container"]
        args = container["args"]
        assert container["image"] == IMAGE
        assert container["command"] == list(KUBEFLOW_TFX_CMD)
        assert args[args.index("--executor_class_path") + 1] == executor_class
        assert args[args.index("--json_serialized_invocation_args") + 1] == "{{$}}"
        assert args[-len(DEFAULT_BEAM_ARGS) :] == list(DEFAULT_BEAM_ARGS)
    for task in (BLESSING_RESOLVER, MODEL_RESOLVER):
        assert list(_executor(job, task)) == ["resolver"]


def test_parameters_come_from_the_config(compiled):
    config, _, job = compiled
    assert _parameters(job, "SchemaImporter") == {"schema_file": "schemas/taxi/schema.pbtxt"}
    assert _parameters(job, "ExampleGen")["input_base"] == "gs://bucket/data/taxi.csv"
    assert _parameters(job, "ExampleValidator") == VALIDATOR_PARAMETERS
    # No drift thresholds: the validator does not wait for the resolver.
    assert "baseline_model" not in _tasks(job)["ExampleValidator"]["inputs"]["artifacts"]
    trainer = _parameters(job, "Trainer")
    assert (trainer["train_steps"], trainer["eval_steps"], trainer["warm_start"]) == (300, 10, 1)
    assert trainer["estimator_fn"] == config.estimator_fn
    assert json.loads(trainer["hparams"]) == {"hidden_units": list(config.hidden_units)}
    assert "candidates" not in trainer  # the definition's own build_estimator: one model
    gate = config.blessing_gate
    assert json.loads(_parameters(job, "Evaluator")["blessing_gate"]) == {
        "metric": "auc",
        "threshold": gate.threshold,
        "max_change": gate.max_change,
        "max_relative_change": None,
    }
    assert (gate.threshold, gate.max_change) == (0.6, 0.01)
    assert _parameters(job, "Pusher") == {"push_destination": "/gcs/bucket/serving/taxi"}
    # Incremental retraining: start from, and compare with, the latest blessed model.
    assert _producer(job, "Trainer", "base_model")["producerTask"] == MODEL_RESOLVER
    assert _producer(job, "Evaluator", "baseline_model")["producerTask"] == MODEL_RESOLVER


def test_drift_baseline_compiles_as_the_latest_blessed_model(tmp_path):
    config = _config(tmp_path, drift_thresholds=(("*", 0.1),), skew_thresholds=(("fare", 0.2),))
    job = compile_pipeline(config, str(tmp_path / "pipeline.json"))
    assert _producer(job, "ExampleValidator", "baseline_model")["producerTask"] == MODEL_RESOLVER
    assert _producer(job, "Trainer", "statistics")["producerTask"] == "StatisticsGen"
    parameters = _parameters(job, "ExampleValidator")
    assert json.loads(parameters["drift_thresholds"]) == {"*": 0.1}
    assert json.loads(parameters["skew_thresholds"]) == {"fare": 0.2}


def test_caching_as_configured_but_never_for_tasks_reading_outside_files(compiled, tmp_path):
    _, _, job = compiled
    cached = {
        task: _tasks(job)[task].get("cachingOptions", {}).get("enableCache", False)
        for task in EXECUTORS
    }
    assert cached == {
        "SchemaImporter": False,
        "ExampleGen": False,
        "StatisticsGen": True,
        "ExampleValidator": True,
        "Transform": True,
        "Trainer": True,
        "Evaluator": True,
        "Pusher": True,
    }

    fresh = compile_pipeline(
        _config(tmp_path, warm_start=False, enable_cache=False), str(tmp_path / "fresh.json")
    )
    assert not any(
        task.get("cachingOptions", {}).get("enableCache") for task in _tasks(fresh).values()
    )
    assert "base_model" not in _tasks(fresh)["Trainer"]["inputs"]["artifacts"]
    assert _parameters(fresh, "Trainer")["warm_start"] == 0
    assert _producer(fresh, "Evaluator", "baseline_model")["producerTask"] == MODEL_RESOLVER


def test_dataflow_arguments_reach_every_beam_step(tmp_path, compiled):
    config = _config(
        tmp_path,
        beam_runner="dataflow",
        gcp_project="proj",
        gcp_region="europe-west4",
        beam_worker_image=WORKER_IMAGE,
        beam_pipeline_args=("--max_num_workers=4",),
    )
    job = compile_pipeline(config, str(tmp_path / "dataflow.json"))
    expected = [
        "--runner=DataflowRunner",
        "--project=proj",
        "--region=europe-west4",
        "--temp_location=gs://bucket/root/beam-tmp",
        f"--sdk_container_image={WORKER_IMAGE}",
        "--max_num_workers=4",
    ]
    for task in ("ExampleGen", "StatisticsGen", "Transform", "Evaluator"):
        assert _executor(job, task)["container"]["args"][-len(expected) :] == expected


def test_portable_runner_arguments_name_the_job_server_and_worker_image():
    config = taxi_config(
        pipeline_root="gs://bucket/root",
        beam_runner="portable",
        beam_job_endpoint="flink-jobserver:8099",
        beam_worker_image=WORKER_IMAGE,
    )
    assert beam_args(config) == [
        "--runner=PortableRunner",
        "--job_endpoint=flink-jobserver:8099",
        "--environment_type=DOCKER",
        f"--environment_config={WORKER_IMAGE}",
    ]


def test_files_in_the_repository_are_compiled_as_paths_in_the_image():
    config = taxi_config(
        pipeline_root="gs://bucket/root", image=IMAGE, serving_model_dir="/gcs/bucket/serving/taxi"
    )
    in_image = vertex_config(config)
    assert (in_image.data_path, in_image.schema_path) == (
        "data/taxi/data.csv",
        "schemas/taxi/schema.pbtxt",
    )
    with pytest.raises(SetupError, match=r"--data .*tests/x.csv is not in the pipeline image"):
        vertex_config(dataclasses.replace(config, data_path=str(REPO_ROOT / "tests" / "x.csv")))


def test_compile_lists_everything_missing(tmp_path, capsys):
    outside = str(tmp_path / "local.csv")
    assert (
        main(["compile", "--out", str(tmp_path / "p.json"), "--data", outside, "--label", "y"]) == 2
    )
    message = capsys.readouterr().err
    for flag in ("--pipeline-root", "--image", "--serving-model-dir", f"--data {outside}"):
        assert flag in message
    assert not os.path.exists(tmp_path / "p.json")

    assert (
        main(
            [
                "compile",
                "--out",
                str(tmp_path / "p.json"),
                "--pipeline-root",
                "gs://b/r",
                "--image",
                IMAGE,
                "--serving-model-dir",
                "/gcs/b/serving",
                "--beam-runner",
                "dataflow",
                "--data",
                "/gcs/b/data.csv",
                "--label",
                "y",
            ]
        )
        == 2
    )
    message = capsys.readouterr().err
    assert "--data /gcs/b/data.csv" in message and "gs://" in message
    assert "--beam-worker-image" in message and "--project" in message


def test_trainer_on_vertex_training_gets_the_cluster_from_the_config(tmp_path, capsys):
    from components.trainer.cluster import TrainingCluster, vertex_worker_pool_specs
    from components.trainer.launcher import REPLICA_COMMAND

    config = _config(
        tmp_path,
        training_backend="vertex",
        strategy="multi_worker_mirrored",
        workers=3,
        machine_type="a2-highgpu-1g",
        accelerator_type="NVIDIA_TESLA_A100",
        accelerator_count=1,
        gcp_project="proj",
        gcp_region="europe-west4",
        training_service_account="trainer@proj.iam.gserviceaccount.com",
    )
    job = compile_pipeline(config, str(tmp_path / "pipeline.json"))
    assert _parameters(job, "ExampleValidator") == VALIDATOR_PARAMETERS
    trainer = _parameters(job, "Trainer")
    assert trainer["strategy"] == "multi_worker_mirrored"
    cluster = TrainingCluster.from_json(trainer["training_cluster"])
    assert cluster == TrainingCluster(
        backend="vertex",
        workers=3,
        machine_type="a2-highgpu-1g",
        accelerator_type="NVIDIA_TESLA_A100",
        accelerator_count=1,
        image=IMAGE,
        project="proj",
        region="europe-west4",
        service_account="trainer@proj.iam.gserviceaccount.com",
    )
    # What the Trainer task then sends to Vertex AI Training: a chief and two
    # workers, each with the GPU, all running the Trainer's replica in the image.
    pools = vertex_worker_pool_specs(trainer["strategy"], cluster, cluster.image, REPLICA_COMMAND)
    assert [p["replicaCount"] for p in pools] == [1, 2]
    assert {p["containerSpec"]["imageUri"] for p in pools} == {IMAGE}
    assert pools[1]["machineSpec"]["acceleratorType"] == "NVIDIA_TESLA_A100"

    assert (
        main(
            [
                "compile",
                "--out",
                str(tmp_path / "p.json"),
                "--pipeline-root",
                "gs://b/r",
                "--image",
                IMAGE,
                "--serving-model-dir",
                "/gcs/b/serving",
                "--training-backend",
                "vertex",
            ]
        )
        == 2
    )
    assert "--project: the Trainer's Vertex AI CustomJob" in capsys.readouterr().err


def test_submit_and_schedule_without_credentials_or_project_fail_saying_what_is_missing(
    compiled, no_credentials, no_network, monkeypatch, tmp_path, capsys
):
    _, path, _ = compiled
    for command in (["submit"], ["schedule", "--cron", CRON]):
        assert main([*command, "--spec", path]) == 2
        message = capsys.readouterr().err
        assert NO_CREDENTIALS in message and NO_PROJECT in message
    missing = str(tmp_path / "missing-key.json")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", missing)
    assert main(["submit", "--spec", path, "--project", "proj"]) == 2
    message = capsys.readouterr().err
    assert f"GOOGLE_APPLICATION_CREDENTIALS names {missing}" in message
    assert NO_PROJECT not in message


def test_missing_setup_fails_before_loading_tensorflow_or_aiplatform(compiled, tmp_path):
    _, path, _ = compiled
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT")
    }
    env["CLOUDSDK_CONFIG"] = str(tmp_path)
    code = (
        "import sys; from pipeline.cli import main; rc = main(sys.argv[1:]); "
        "print(rc, [m for m in ('tensorflow', 'google.cloud.aiplatform') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "submit", "--spec", path],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    assert result.stdout.strip() == "2 []"
    assert NO_CREDENTIALS in result.stderr


@pytest.mark.slow  # loads google-cloud-aiplatform: about 17 s of CPU
def test_dry_runs_print_the_requests_without_credentials(
    compiled, no_credentials, no_network, capsys
):
    _, path, job = compiled
    common = [
        "--spec",
        path,
        "--project",
        "proj",
        "--region",
        "europe-west4",
        "--service-account",
        SERVICE_ACCOUNT,
        "--dry-run",
    ]
    assert main(["submit", "--job-id", "taxi-test", *common]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request["method"] == "POST"
    assert request["url"] == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/"
        "locations/europe-west4/pipelineJobs?pipelineJobId=taxi-test"
    )
    assert request["body"] == {
        "displayName": "taxi",
        "pipelineSpec": job["pipelineSpec"],
        "runtimeConfig": {"gcsOutputDirectory": "gs://bucket/root"},
        "serviceAccount": SERVICE_ACCOUNT,
    }

    assert main(["schedule", "--cron", CRON, *common]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request["url"] == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/"
        "locations/europe-west4/schedules"
    )
    assert request["body"] == {
        "displayName": "taxi-retrain",
        "cron": CRON,
        "maxConcurrentRunCount": 1,
        "createPipelineJobRequest": {
            "parent": "projects/proj/locations/europe-west4",
            "pipelineJob": {
                "pipelineSpec": job["pipelineSpec"],
                "runtimeConfig": {"gcsOutputDirectory": "gs://bucket/root"},
                "serviceAccount": SERVICE_ACCOUNT,
            },
        },
    }

    assert main(["submit", "--no-cache", "--pipeline-root", "gs://other/root", *common]) == 0
    body = json.loads(capsys.readouterr().out)["body"]
    assert body["runtimeConfig"]["gcsOutputDirectory"] == "gs://other/root"
    assert not any(
        task.get("cachingOptions", {}).get("enableCache")
        for task in body["pipelineSpec"]["root"]["dag"]["tasks"].values()
    )


@pytest.mark.slow  # loads google-cloud-aiplatform: about 17 s of CPU
def test_submit_and_schedule_send_exactly_what_the_dry_runs_print(
    compiled, no_credentials, no_network, monkeypatch, tmp_path, capsys
):
    """With a credentials file and the Vertex API client replaced by a recorder, the real
    code path of aiplatform's PipelineJob and PipelineJobSchedule runs."""
    from google.cloud import aiplatform
    from google.cloud.aiplatform.utils import gcs_utils
    from google.protobuf import json_format

    _, path, _ = compiled
    key = tmp_path / "adc.json"
    key.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "id",
                "client_secret": "secret",
                "refresh_token": "token",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
    sent = []

    class Recorder:
        def create_pipeline_job(self, parent, pipeline_job, pipeline_job_id, timeout=None):
            sent.append((f"{parent}/pipelineJobs?pipelineJobId={pipeline_job_id}", pipeline_job))
            created = type(pipeline_job)(pipeline_job)
            created.name = f"{parent}/pipelineJobs/{pipeline_job_id}"
            return created

        def create_schedule(self, parent, schedule, timeout=None):
            sent.append((f"{parent}/schedules", schedule))
            created = type(schedule)(schedule)
            created.name = f"{parent}/schedules/1"
            return created

    for cls in (aiplatform.PipelineJob, aiplatform.PipelineJobSchedule):
        monkeypatch.setattr(
            cls, "_instantiate_client", classmethod(lambda cls, *args, **kwargs: Recorder())
        )
    monkeypatch.setattr(
        gcs_utils,
        "create_gcs_bucket_for_pipeline_artifacts_if_it_does_not_exist",
        lambda **kwargs: None,
    )

    common = [
        "--spec",
        path,
        "--project",
        "proj",
        "--region",
        "europe-west4",
        "--service-account",
        SERVICE_ACCOUNT,
    ]
    for command in (["submit", "--job-id", "taxi-test"], ["schedule", "--cron", CRON]):
        assert main([*command, *common, "--dry-run"]) == 0
        request = json.loads(capsys.readouterr().out)
        assert main([*command, *common]) == 0
        resource = capsys.readouterr().out.strip()
        url, message = sent.pop()
        assert request["url"].endswith(url)
        assert resource.startswith("projects/proj/locations/europe-west4/")
        proto = type(message).pb(message)
        assert json_format.ParseDict(request["body"], type(proto)()) == proto


def test_dockerfile_installs_the_lock_and_the_code_with_the_vertex_entrypoint():
    from tfx.orchestration.kubeflow.v2.kubeflow_v2_dag_runner import KUBEFLOW_TFX_CMD

    text = (REPO_ROOT / "kubeflow" / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert stages[0] == "FROM python:3.11-slim-bookworm AS code"
    assert stages[-1] == "FROM code AS pipeline", "the Vertex image is the default target"
    assert "WORKDIR /pipeline" in lines
    assert "COPY requirements.lock ." in lines
    assert "RUN pip install --no-deps -r requirements.lock" in lines
    assert "RUN pip install --no-deps ." in lines
    # The use cases are not in the wheel: tasks and Beam workers import them from WORKDIR.
    assert "ENV PYTHONPATH=/pipeline" in lines
    # tf.keras is Keras 2 in every task, whatever TFX imports before the executor.
    assert re.search(r"^\s*TF_USE_LEGACY_KERAS=1\b", text, re.MULTILINE)
    copied = {line.split()[1] for line in lines if line.startswith("COPY ")}
    assert set(IMAGE_FOLDERS) <= copied
    entrypoints = [line for line in lines if line.startswith("ENTRYPOINT ")]
    assert json.loads(entrypoints[-1][len("ENTRYPOINT ") :]) == list(KUBEFLOW_TFX_CMD)
    beam = re.search(
        r"^apache-beam==(\S+)$", (REPO_ROOT / "requirements.lock").read_text(), re.MULTILINE
    )[1]
    assert (
        f"COPY --from=apache/beam_python3.11_sdk:{beam} /opt/apache/beam /opt/apache/beam" in lines
    )


def test_cli_help_names_the_vertex_options():
    for command, options in (
        (
            "compile",
            (
                "--target",
                "--out",
                "--pipeline-root",
                "--image",
                "--warm-start",
                "--beam-runner",
                "--serving-model-dir",
            ),
        ),
        ("submit", ("--spec", "--project", "--region", "--dry-run")),
        ("schedule", ("--spec", "--cron", "--dry-run")),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "pipeline", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
        )
        for option in options:
            assert option in result.stdout, (command, option)
