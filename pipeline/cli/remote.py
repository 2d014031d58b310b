"""`compile`, `submit` and `schedule`: the pipeline for Vertex AI Pipelines or a
self-hosted Kubeflow Pipelines, compiled here and sent there."""

import json
import sys

import click

from pipeline import exit_codes
from pipeline.cli.options import (
    config_for,
    definition_option,
    given,
    only_for_target,
    setting_options,
    target_option,
)
from pipeline.cli.quiet import import_tensorflow
from pipeline.config import PipelineConfig

# Options that mean something for one --target only, by command.
_KUBEFLOW_ONLY = {
    "compile": ("serving_volume", "image_pull_policy", "image_pull_secret"),
    "submit": ("host", "namespace", "experiment", "token", "display_name"),
    "schedule": ("host", "namespace", "experiment", "token"),
}
_VERTEX_ONLY = {
    "submit": ("definition", "project", "region", "job_id"),
    "schedule": ("definition", "project", "region"),
}


@click.command(
    "compile",
    help="Compile the same pipeline with TFX's KubeflowV2DagRunner: every component a task "
    "in --image, Beam steps in the task's container or on --beam-runner. Nothing is sent "
    "anywhere; `submit` and `schedule` do that. A definition's keys replace the defaults "
    "shown; options given here replace the definition's keys; its [vertex] pipeline_root "
    "and serving_dir replace [output] pipeline_root and [serving] dir here.",
    short_help="Compile the pipeline for Vertex AI Pipelines (a PipelineJob JSON) or a "
    "self-hosted Kubeflow Pipelines (a pipeline YAML).",
)
@definition_option("the settings")
@target_option("Orchestrator to compile for.")
@click.option(
    "--out",
    required=True,
    help="The file to write: a PipelineJob JSON (vertex), a pipeline .yaml (kubeflow).",
)
@click.option(
    "--serving-volume",
    metavar="PVC:MOUNTPATH",
    help="kubeflow: the PersistentVolumeClaim the Pusher writes blessed models to, and where "
    "it is mounted in the Pusher's pod.",
)
@click.option(
    "--image-pull-policy",
    type=click.Choice(("Always", "IfNotPresent", "Never")),
    help="kubeflow: when the tasks' pods pull --image (default: the cluster's).",
)
@click.option(
    "--image-pull-secret",
    multiple=True,
    metavar="SECRET",
    help="kubeflow: a Secret (kubernetes.io/dockerconfigjson) in the run's namespace to pull "
    "--image with; repeatable.",
)
@setting_options("compile")
@click.pass_context
def compile_command(ctx, target, out, serving_volume, image_pull_policy, image_pull_secret, **_):
    config = config_for(ctx)
    only_for_target(ctx, "kubeflow", _KUBEFLOW_ONLY["compile"])
    import_tensorflow()
    from kubeflow.local_runner import task_order
    from pipeline.vertex import SetupError

    try:
        if target == "kubeflow":
            from pipeline.kubeflow_pipelines import Cluster, compile_pipeline

            cluster = Cluster(image_pull_policy, tuple(image_pull_secret), serving_volume)
            spec, _ = compile_pipeline(config, out, cluster)
        else:
            from pipeline.vertex import compile_pipeline

            spec = compile_pipeline(config, out)["pipelineSpec"]
    except (SetupError, ValueError) as e:
        return _refused(e, ctx)
    tasks = task_order(spec["root"]["dag"]["tasks"])
    print(
        f"{out}: {len(tasks)} tasks ({', '.join(tasks)}); "
        f"image {config.image}, pipeline root {config.pipeline_root}"
    )
    if target == "kubeflow":
        print(
            "No latest blessed model on Kubeflow Pipelines (it runs no resolver task): the "
            "Evaluator blesses by the absolute thresholds alone.",
            file=sys.stderr,
        )
    return exit_codes.OK


def _refused(error, ctx):
    from pipeline.definition import DefinitionError

    if isinstance(error, DefinitionError):
        raise click.UsageError(str(error), ctx)
    print(error, file=sys.stderr)
    return exit_codes.REFUSED


def _job_options(function):
    """The options `submit` and `schedule` share: the spec, where it goes, how it runs."""
    region = PipelineConfig.__dataclass_fields__["gcp_region"].default
    for decorator in reversed(
        (
            click.option(
                "--spec",
                required=True,
                help="File written by `python -m pipeline compile`: a PipelineJob JSON "
                "(vertex), a pipeline YAML (kubeflow).",
            ),
            target_option("Where to run it."),
            click.option(
                "--host",
                help="kubeflow: URL of the Kubeflow Pipelines API (default: "
                "$KF_PIPELINES_ENDPOINT).",
            ),
            click.option(
                "--namespace",
                help="kubeflow: your profile's namespace on a multi-user deployment (default: "
                "the kfp client's context, ~/.config/kfp/context.json).",
            ),
            click.option(
                "--experiment",
                help="kubeflow: the experiment the runs go to, created if new (default: the "
                "pipeline's name).",
            ),
            click.option(
                "--token",
                help="kubeflow: bearer token for the host (default: $KF_PIPELINES_TOKEN, else "
                "the service-account token of a pod in the cluster, "
                "$KF_PIPELINES_SA_TOKEN_PATH).",
            ),
            definition_option(
                "[vertex] project and region (the rest of the pipeline is in --spec: compile "
                "it from the same definition)"
            ),
            click.option(
                "--project",
                help="Google Cloud project (default: the definition's [vertex] project, then "
                "$GOOGLE_CLOUD_PROJECT, then the credentials file's project).",
            ),
            click.option(
                "--region",
                default=region,
                show_default=True,
                help="Vertex AI region (with --definition, default: its [vertex] region).",
            ),
            click.option(
                "--pipeline-root",
                help="Folder for the artifacts, gs:// (vertex) or minio://, s3://, gs:// "
                "(kubeflow) (default: the one compiled in).",
            ),
            click.option(
                "--service-account",
                help="Service account the tasks run as (default: vertex, the project's "
                "Compute Engine default service account; kubeflow, the namespace's pipeline "
                "runner).",
            ),
            click.option(
                "--no-cache",
                "enable_cache",
                flag_value=False,
                default=None,
                help="Run every task (default: the caching compiled into the spec).",
            ),
            click.option(
                "--dry-run",
                is_flag=True,
                help="Print the requests as JSON (method, url, body) instead of sending them; "
                "needs no credentials.",
            ),
        )
    ):
        function = decorator(function)
    return function


@click.command(
    help="vertex: create a Vertex AI PipelineJob from a compiled spec; credentials come from "
    "GOOGLE_APPLICATION_CREDENTIALS or gcloud's application-default file. kubeflow: create a "
    "run in --experiment with the kfp client, after checking that --host answers.",
    short_help="Run a compiled pipeline on Vertex AI Pipelines or Kubeflow Pipelines.",
)
@_job_options
@click.option("--job-id", help="vertex: ID of the run (default: <pipeline name>-<timestamp>).")
@click.option("--display-name", help="kubeflow: name of the run (default: the pipeline's name).")
@click.pass_context
def submit(ctx, **options):
    return _send(ctx, options)


@click.command(
    help="Create a schedule (vertex) or recurring run (kubeflow) that runs the compiled spec "
    "at each --cron time. On Vertex, compile with --warm-start for incremental retraining.",
    short_help="Schedule a compiled pipeline on Vertex AI Pipelines or Kubeflow Pipelines "
    "(retraining).",
)
@_job_options
@click.option(
    "--cron",
    required=True,
    help='Cron expression, e.g. "0 3 * * 1" (Mondays 03:00 UTC); vertex: prefix '
    '"TZ=Europe/Berlin " for another time zone; kubeflow: always UTC, and six fields '
    "(seconds first) are taken as they are.",
)
@click.option("--display-name", help="Name of the schedule (default: <pipeline name>-retrain).")
@click.option(
    "--max-concurrent-runs",
    type=int,
    default=1,
    show_default=True,
    help="Runs of this schedule that may be in progress at once.",
)
@click.pass_context
def schedule(ctx, **options):
    return _send(ctx, options)


def _send(ctx, options):
    command = ctx.info_name
    only_for_target(ctx, "kubeflow", _KUBEFLOW_ONLY[command])
    only_for_target(ctx, "vertex", _VERTEX_ONLY[command])
    from pipeline.definition import DefinitionError
    from pipeline.vertex import SetupError

    try:
        if options["target"] == "kubeflow":
            result = _kubeflow(command, options)
        else:
            result = _vertex(ctx, command, options)
    except DefinitionError as e:
        raise click.UsageError(str(e), ctx) from None
    except (SetupError, ValueError) as e:
        print(e, file=sys.stderr)
        return exit_codes.REFUSED
    print(json.dumps(result, indent=2, sort_keys=True) if options["dry_run"] else result)
    return exit_codes.OK


def _kubeflow(command, options):
    from pipeline import kubeflow_pipelines

    host = kubeflow_pipelines.find_host(options["host"], options["namespace"], options["token"])
    submission = kubeflow_pipelines.Submission(
        spec_path=options["spec"],
        experiment=options["experiment"],
        name=options["display_name"],
        pipeline_root=options["pipeline_root"],
        enable_caching=options["enable_cache"],
        service_account=options["service_account"],
        cron=options.get("cron"),
        max_concurrent_runs=options.get("max_concurrent_runs", 1),
    )
    if options["dry_run"]:
        return kubeflow_pipelines.plan(host, submission)
    return kubeflow_pipelines.send(host, submission)


def _vertex(ctx, command, options):
    from pipeline import vertex

    project, region = options["project"], options["region"]
    if options["definition"]:  # its [vertex] project and region, under the options given
        from pipeline.definition import load

        values = load(options["definition"], command).values
        if not given(ctx, "project"):
            project = values.get("gcp_project")
        if not given(ctx, "region"):
            region = values.get("gcp_region", region)
    job = vertex.prepare_job(
        options["spec"],
        project=project,
        region=region,
        pipeline_root=options["pipeline_root"],
        job_id=options.get("job_id"),
        enable_caching=options["enable_cache"],
        dry_run=options["dry_run"],
    )
    if command == "submit":
        if options["dry_run"]:
            return vertex.submit_request(job, options["service_account"])
        return vertex.submit(job, options["service_account"])
    settings = {
        "cron": options["cron"],
        "display_name": options["display_name"] or f"{job.to_dict()['displayName']}-retrain",
        "max_concurrent_runs": options["max_concurrent_runs"],
        "service_account": options["service_account"],
    }
    if options["dry_run"]:
        return vertex.schedule_request(job, **settings)
    return vertex.schedule(job, **settings)
