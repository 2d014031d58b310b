"""Vertex AI Pipelines: compile the pipeline to a PipelineJob JSON, submit it, schedule it.

Compiling imports TFX; submitting and scheduling need only the compiled file,
google-auth and google-cloud-aiplatform.  Nothing here contacts Google Cloud
but `submit` and `schedule` without `dry_run`, and those check first, without
the network, that they have a project and credentials.
"""

import dataclasses
import importlib.util
import json
import os
import posixpath
from pathlib import Path

from components import user_code
from components.auto import AUTO
from components.model_registry import api_url
from pipeline.config import DEFAULT_BEAM_ARGS, REPO_ROOT

# Repository folders kubeflow/Dockerfile copies into the image's WORKDIR.
IMAGE_FOLDERS = (
    "pipeline",
    "components",
    "transforms",
    "schemas",
    "models",
    "kubeflow",
    "data",
    "definitions",
)
# The packages among them: the framework, which the image installs (pyproject.toml, the
# wheel), and the use cases', which it imports from its WORKDIR (PYTHONPATH), so that Beam
# workers outside the task container import them too. User modules (preprocessing_fn,
# build_estimator) must be in one of these.
FRAMEWORK_PACKAGES = ("pipeline", "components", "kubeflow")
USE_CASE_PACKAGES = ("transforms", "schemas", "models")
IMAGE_PACKAGES = FRAMEWORK_PACKAGES + USE_CASE_PACKAGES
# These read files from outside the pipeline (the CSV, the schema file): a
# cache key cannot see those change, so a cached run would retrain on old data.
ALWAYS_RUN = ("SchemaImporter", "ExampleGen")
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
NO_CREDENTIALS = (
    "no Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS to a "
    "service-account key file, or run `gcloud auth application-default login`"
)
NO_PROJECT = "no Google Cloud project: pass --project or set GOOGLE_CLOUD_PROJECT"


class SetupError(Exception):
    """Something a command needs is missing or wrong; the message lists every such thing."""

    def __init__(self, action, problems):
        super().__init__(f"cannot {action}:\n" + "\n".join(f"  - {p}" for p in problems))


def _path_in_image(path, flag, problems, beam_workers_read_it, mounts=("/gcs/",)):
    """`path` as a task container sees it.

    Files in IMAGE_FOLDERS are in the image, so they become paths relative to
    its WORKDIR; `mounts` are folders the orchestrator mounts into every task
    (Vertex: its Cloud Storage mount).  Dataflow or Flink/Spark workers see
    neither the image's files nor the mounts.
    """
    if path.startswith("gs://"):
        return path
    path = posixpath.normpath(path)  # a mount's "/gcs/../x" is not under it
    if not beam_workers_read_it:
        if mounts and path.startswith(mounts):
            return path
        if _in_image(path):
            return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
        forms = " or ".join(("gs://", *mounts))
        problems.append(
            f"{flag} {path} is not in the pipeline image: give a {forms} "
            f"path, or one under {', '.join(IMAGE_FOLDERS)} in {REPO_ROOT}"
        )
    else:
        problems.append(
            f"{flag} {path}: Beam workers outside the task container read it, "
            "so it must be a gs:// path"
        )
    return path


def _in_image(path, folders=IMAGE_FOLDERS):
    resolved = Path(path).resolve()
    return resolved.is_relative_to(REPO_ROOT) and (
        resolved.relative_to(REPO_ROOT).parts[0] in folders
    )


def _code_in_image(reference, flag, problems):
    """`reference` (components/user_code.py) as the pipeline image sees it; adds a problem
    unless its code is in the image: a file under IMAGE_FOLDERS, or a module in a package
    the image installs."""
    if reference == AUTO:
        return reference
    if user_code.is_file_reference(reference):
        path, function = user_code.split_file_reference(reference)
        if not os.path.isfile(path):
            problems.append(f"{flag} {reference}: no file {path}")
        elif not _in_image(path):
            problems.append(
                f"{flag} {reference}: {path} is not in the pipeline image: put it under "
                f"{', '.join(IMAGE_FOLDERS)} in {REPO_ROOT} (e.g. python -m pipeline init "
                "definitions/<name>)"
            )
        else:
            return f"{Path(path).resolve().relative_to(REPO_ROOT).as_posix()}:{function}"
        return reference
    _module_in_image(reference, flag, problems)
    return reference


def _module_in_image(dotted_path, flag, problems):
    """Adds a problem unless the module of `dotted_path` is in a package the image installs."""
    module_name = dotted_path.rpartition(".")[0]
    try:
        spec = importlib.util.find_spec(module_name) if module_name else None
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        problems.append(f"{flag} {dotted_path}: no module {module_name!r} here to compile in")
    elif not (spec.origin and _in_image(spec.origin, IMAGE_PACKAGES)):
        problems.append(
            f"{flag} {dotted_path}: {spec.origin or module_name} is not in the pipeline image: "
            f"put the module in one of its packages, {', '.join(IMAGE_PACKAGES)} "
            f"(e.g. transforms/ or models/ in {REPO_ROOT})"
        )


def image_paths(config, problems, mounts=("/gcs/",)):
    """The settings of `config` that name files or code, as the pipeline image sees them
    (a dict of replacements); adds a problem for each one a task could not reach, and
    for a missing image."""
    if not config.image:
        problems.append("--image: the pipeline image built from kubeflow/Dockerfile")
    remote_beam = config.beam_runner != "direct"
    return {
        "data_path": _path_in_image(config.data_path, "--data", problems, remote_beam, mounts),
        "schema_path": config.schema_path
        and _path_in_image(config.schema_path, "--schema", problems, False, mounts),
        "preprocessing_fn": _code_in_image(config.preprocessing_fn, "--preprocessing-fn", problems),
        "estimator_fn": _code_in_image(config.estimator_fn, "--estimator-fn", problems),
    }


def vertex_config(config):
    """`config` with paths as the pipeline image sees them; SetupError lists every problem."""
    problems = []
    if not (config.pipeline_root or "").startswith("gs://"):
        problems.append(
            "--pipeline-root must be a gs:// folder: Vertex writes every artifact under it"
        )
    # Checked as the Pusher will see it: /gcs/../etc is /etc.
    serving_dir = posixpath.normpath(config.serving_model_dir or ".")
    if not serving_dir.startswith("/gcs/"):
        problems.append(
            "--serving-model-dir must be a /gcs/<bucket>/... folder: the Pusher "
            "copies with file-system calls, which reach Cloud Storage through "
            "the /gcs mount of Vertex AI Pipelines"
        )
    in_image = image_paths(config, problems)
    remote_beam = config.beam_runner != "direct"
    if remote_beam and not config.beam_worker_image:
        problems.append(
            f"--beam-worker-image: {config.beam_runner} workers run the "
            "beam-worker target of kubeflow/Dockerfile"
        )
    if config.training_backend == "vertex" and not config.gcp_project:
        problems.append(
            "--project: the Trainer's Vertex AI CustomJob runs in a Google Cloud project"
        )
    if config.beam_runner == "dataflow" and not config.gcp_project:
        problems.append("--project: Dataflow jobs run in a Google Cloud project")
    if config.beam_runner == "portable" and not config.beam_job_endpoint:
        problems.append("--beam-job-endpoint: host:port of the Flink or Spark Beam job server")
    if problems:
        raise SetupError("compile for Vertex AI", problems)
    return dataclasses.replace(config, serving_model_dir=serving_dir, **in_image)


def beam_args(config):
    """Arguments for every Beam step; `config.beam_pipeline_args` other than the local
    defaults follow the runner's own."""
    if config.beam_runner == "direct":
        return list(config.beam_pipeline_args)
    extra = (
        []
        if tuple(config.beam_pipeline_args) == DEFAULT_BEAM_ARGS
        else list(config.beam_pipeline_args)
    )
    if config.beam_runner == "dataflow":
        temp = config.beam_temp_location or f"{config.pipeline_root.rstrip('/')}/beam-tmp"
        runner = [
            "--runner=DataflowRunner",
            f"--project={config.gcp_project}",
            f"--region={config.gcp_region}",
            f"--temp_location={temp}",
            f"--sdk_container_image={config.beam_worker_image}",
        ]
    else:
        runner = [
            "--runner=PortableRunner",
            f"--job_endpoint={config.beam_job_endpoint}",
            "--environment_type=DOCKER",
            f"--environment_config={config.beam_worker_image}",
        ]
    return runner + extra


def compile_job(config, target_config=vertex_config, resolver=True, command=None):
    """The PipelineJob dict (`pipelineSpec`, `runtimeConfig`) of `config`, compiled by TFX's
    KubeflowV2DagRunner for an orchestrator whose settings `target_config` checks (a
    SetupError listing every problem) and puts as its tasks see them.  `resolver`: whether
    the orchestrator runs the latest-blessed-model resolver tasks; `command`: what each task
    runs (default: TFX's entry point, as Vertex runs it)."""
    target_config(config)  # SetupError listing every problem of the settings, first
    from tfx.orchestration import pipeline as tfx_pipeline
    from tfx.orchestration.kubeflow.v2 import kubeflow_v2_dag_runner

    from pipeline.pipeline import create_components

    config = config.resolve_from_data()  # ValueError for a wrong label or an unknown task
    image_config = target_config(config)
    pipeline = tfx_pipeline.Pipeline(
        pipeline_name=config.pipeline_name,
        pipeline_root=config.pipeline_root,
        components=create_components(image_config, resolver=resolver),
        enable_cache=config.enable_cache,
        beam_pipeline_args=beam_args(image_config),
    )
    runner = kubeflow_v2_dag_runner.KubeflowV2DagRunner(
        kubeflow_v2_dag_runner.KubeflowV2DagRunnerConfig(
            default_image=config.image, default_commands=command, use_pipeline_spec_2_1=True
        )
    )
    job = runner.run(pipeline, write_out=False)
    tasks = job["pipelineSpec"]["root"]["dag"]["tasks"]
    for name in ALWAYS_RUN:
        if name in tasks:  # no SchemaImporter when SchemaGen infers the schema
            tasks[name]["cachingOptions"] = {"enableCache": False}
    return job


def write_file(out_path, write):
    """Calls `write(f)` on `out_path` opened for text, its folder made first."""
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        write(f)


def compile_pipeline(config, out_path):
    """Writes the PipelineJob JSON (`pipelineSpec`, `runtimeConfig`) for `config`; returns it."""
    job = compile_job(config)
    write_file(out_path, lambda f: json.dump(job, f, indent=2, sort_keys=True))
    return job


def _gcloud_credentials_path():
    config_dir = os.environ.get("CLOUDSDK_CONFIG") or os.path.join(
        os.path.expanduser("~"), ".config", "gcloud"
    )
    return os.path.join(config_dir, "application_default_credentials.json")


def find_credentials():
    """(credentials, project or None, problem or None) from a credentials file.

    Application Default Credentials without google.auth.default(), which would
    ask the metadata server (a network call) when no file is there.
    """
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path and not os.path.isfile(path):
        return None, None, f"GOOGLE_APPLICATION_CREDENTIALS names {path}, which is not a file"
    path = path or _gcloud_credentials_path()
    if not os.path.isfile(path):
        return None, None, NO_CREDENTIALS
    import google.auth
    from google.auth import exceptions

    try:
        credentials, project = google.auth.load_credentials_from_file(
            path, scopes=[CLOUD_PLATFORM_SCOPE]
        )
    except exceptions.DefaultCredentialsError as e:
        return None, None, f"the credentials in {path} cannot be used: {e}"
    return credentials, project, None


def prepare_job(
    spec_path,
    project=None,
    region="us-central1",
    pipeline_root=None,
    job_id=None,
    enable_caching=None,
    dry_run=False,
):
    """The aiplatform `PipelineJob` for a compiled spec, once everything it needs is there.

    A dry run needs no credentials: its job is built with anonymous ones and never sent.
    """
    problems = []
    project = (
        project or os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("CLOUDSDK_CORE_PROJECT")
    )
    if dry_run:
        from google.auth.credentials import AnonymousCredentials

        credentials = AnonymousCredentials()
    else:
        credentials, file_project, problem = find_credentials()
        project = project or file_project
        if problem:
            problems.append(problem)
    if not project:
        problems.append(NO_PROJECT)
    if not os.path.isfile(spec_path):
        problems.append(
            f"--spec {spec_path} is not a file (write it with "
            "`python -m pipeline compile --target vertex --out FILE.json`)"
        )
    if pipeline_root is not None and not pipeline_root.startswith("gs://"):
        problems.append(f"--pipeline-root {pipeline_root} must be a gs:// folder")
    if problems:
        raise SetupError("reach Vertex AI", problems)

    from google.cloud import aiplatform

    with open(spec_path) as f:
        spec = json.load(f)
    name = spec.get("pipelineSpec", spec)["pipelineInfo"]["name"]
    return aiplatform.PipelineJob(
        display_name=name,
        template_path=spec_path,
        job_id=job_id,
        pipeline_root=pipeline_root,
        enable_caching=enable_caching,
        credentials=credentials,
        project=project,
        location=region,
    )


def _endpoint(job):
    return api_url(job.location, f"projects/{job.project}/locations/{job.location}")


def submit_request(job, service_account=None):
    """The CreatePipelineJob call `job.submit(service_account)` makes, as REST JSON."""
    body = job.to_dict()
    if service_account:
        body["serviceAccount"] = service_account
    return {
        "method": "POST",
        "url": f"{_endpoint(job)}/pipelineJobs?pipelineJobId={job.job_id}",
        "body": body,
    }


def schedule_request(job, cron, display_name, max_concurrent_runs=1, service_account=None):
    """The CreateSchedule call `PipelineJobSchedule(job).create(...)` makes, as REST JSON."""
    body = job.to_dict()
    pipeline_job = {"pipelineSpec": body["pipelineSpec"], "runtimeConfig": body["runtimeConfig"]}
    if service_account:
        pipeline_job["serviceAccount"] = service_account
    return {
        "method": "POST",
        "url": f"{_endpoint(job)}/schedules",
        "body": {
            "displayName": display_name,
            "cron": cron,
            "maxConcurrentRunCount": max_concurrent_runs,
            "createPipelineJobRequest": {
                "parent": f"projects/{job.project}/locations/{job.location}",
                "pipelineJob": pipeline_job,
            },
        },
    }


def submit(job, service_account=None):
    """Starts the run on Vertex AI; returns its resource name."""
    job.submit(service_account=service_account)
    return job.resource_name


def schedule(job, cron, display_name, max_concurrent_runs=1, service_account=None):
    """Creates a schedule that starts a run of `job`'s pipeline at each `cron` time."""
    from google.cloud import aiplatform

    created = aiplatform.PipelineJobSchedule(
        pipeline_job=job,
        display_name=display_name,
        credentials=job.credentials,
        project=job.project,
        location=job.location,
    )
    created.create(
        cron=cron, max_concurrent_run_count=max_concurrent_runs, service_account=service_account
    )
    return created.resource_name
