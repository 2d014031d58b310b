"""Command line: `python -m pipeline
run|compile|submit|schedule|stats|schema|init|runs|models|rollback|report [options]`.

Heavy imports (TensorFlow, TFX) happen only once a command runs, so
`--help` answers at once.
"""

import argparse
import dataclasses
import json
import logging
import os
import sys
import types

from components.auto.model import CANNED
from components.evaluator.tasks import DEFAULT_GATES, TASKS
from components.example_validator.checks import KINDS as ANOMALY_KINDS
from components.trainer.cluster import BACKENDS as TRAINING_BACKENDS
from components.trainer.strategy import NAMES as STRATEGY_NAMES
from pipeline import exit_codes
from pipeline.config import (
    BEAM_RUNNERS,
    DEFAULT_BEAM_ARGS,
    DEFAULT_TRAIN_STEPS,
    LOCAL_BACKENDS,
    PipelineConfig,
)
from pipeline.definition import DEFAULT_DEFINITION

# PipelineConfig's defaults, for the options' help (data and label have none).
_DEFAULTS = types.SimpleNamespace(
    **{
        field.name: field.default
        for field in dataclasses.fields(PipelineConfig)
        if field.default is not dataclasses.MISSING
    }
)
_DEFINITION_NOTE = (
    " Without --definition and --data, the default definition "
    f"({os.path.relpath(DEFAULT_DEFINITION)}). A definition's keys replace the defaults "
    "shown; options given here replace the definition's keys."
)


def _add_definition_option(p, reads):
    p.add_argument(
        "--definition",
        default=None,
        metavar="FILE.toml",
        help=f"Pipeline definition (TOML, e.g. definitions/<name>.toml) to take {reads} "
        "from; options given override it.",
    )


def _add_input_options(p):
    p.add_argument(
        "--pipeline-name",
        default=argparse.SUPPRESS,
        help="Name of the pipeline; also names its output folders (default: the "
        "definition's name, or the data file's).",
    )
    p.add_argument(
        "--data",
        dest="data_path",
        default=None,
        help="CSV file, or folder of *.csv files, to ingest. Without --definition this runs "
        "zero code: with --label, every setting not given is inferred (the schema by "
        "SchemaGen, preprocessing_fn and estimator_fn auto, the task from the label).",
    )
    schema = p.add_mutually_exclusive_group()
    schema.add_argument(
        "--schema",
        dest="schema_path",
        default=argparse.SUPPRESS,
        help="tensorflow_metadata Schema text proto that types the CSV columns and that the "
        "data is validated against (default: the definition's; without one, inferred).",
    )
    schema.add_argument(
        "--infer-schema",
        action="store_true",
        help="No schema file: type the CSV columns from the data and infer the schema from "
        "the train split's statistics (SchemaGen).",
    )


def _add_output_options(p):
    p.add_argument(
        "--output-dir",
        default=_DEFAULTS.output_dir,
        help="Base folder for pipelines/<name>/ (root and metadata) and serving_model/<name>/.",
    )
    p.add_argument(
        "--metadata-path",
        default=None,
        help="SQLite ML Metadata file (default: <output-dir>/pipelines/<name>/metadata.sqlite).",
    )


def _add_serving_dir_option(p):
    p.add_argument(
        "--serving-model-dir",
        default=None,
        help="Where blessed models are pushed, one numeric version folder each "
        "(default: <output-dir>/serving_model/<name>).",
    )


def _threshold_pair(text):
    column, sep, value = text.rpartition("=")
    if not sep or not column:
        raise argparse.ArgumentTypeError(f"{text!r} is not COLUMN=VALUE")
    try:
        return column, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number") from None


def _add_run_parser(subparsers):
    p = subparsers.add_parser(
        "run",
        help="Run the whole pipeline locally (LocalDagRunner, SQLite metadata, "
        "Beam in memory) and print a summary.",
        description="Run ExampleGen, Transform, Trainer, Evaluator and Pusher on this "
        "machine. Outputs go under --output-dir unless given one by one." + _DEFINITION_NOTE,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _add_definition_option(p, "the settings")
    _add_input_options(p)
    _add_output_options(p)
    p.add_argument(
        "--pipeline-root",
        default=None,
        help="Where artifacts go (default: <output-dir>/pipelines/<name>/root).",
    )
    _add_serving_dir_option(p)
    _add_component_options(p)
    p.add_argument(
        "--verbose", action="store_true", help="Show TFX's, Beam's and TensorFlow's own INFO logs."
    )
    p.add_argument("--json", action="store_true", help="Print the summary as JSON on stdout.")
    _add_wait_option(p)


def _add_component_options(p):
    p.add_argument(
        "--split-key",
        default=_DEFAULTS.split_key,
        help="CSV column whose value decides train/eval; empty hashes the whole row.",
    )
    p.add_argument(
        "--split-ratios",
        default=_DEFAULTS.split_ratios,
        help="JSON object of split name to weight.",
    )
    p.add_argument(
        "--max-bad-row-fraction",
        type=float,
        default=_DEFAULTS.max_bad_row_fraction,
        help="Fraction of malformed rows tolerated (written to a rejected file); "
        "0 fails on the first one.",
    )
    p.add_argument(
        "--warn-only-anomaly",
        dest="warn_only_anomalies",
        action="append",
        default=None,
        choices=list(ANOMALY_KINDS),
        metavar="KIND",
        help="An anomaly kind that is shown in the summary but does not stop the "
        "run before the Trainer; repeatable. Kinds: " + ", ".join(ANOMALY_KINDS) + ".",
    )
    for kind, what in (
        ("drift", "drift of the train split against the latest blessed model's training data"),
        ("skew", "skew of the eval split against the train split"),
    ):
        p.add_argument(
            f"--{kind}-threshold",
            dest=f"{kind}_thresholds",
            action="append",
            default=None,
            type=_threshold_pair,
            metavar="COLUMN=VALUE",
            help=f"Check {what} for COLUMN (a schema column, or * for every column without "
            "its own value): an anomaly when the L-infinity distance (string columns) or the "
            "Jensen-Shannon divergence (numeric ones) is above VALUE, in (0, 1]; repeatable. "
            "None given: not checked.",
        )
    p.add_argument(
        "--missing-value",
        dest="missing_values",
        action="append",
        default=argparse.SUPPRESS,
        metavar="TEXT",
        help="A CSV cell text that means a missing value, in every column; repeatable, "
        "replaces the defaults ("
        + ", ".join(repr(v) for v in _DEFAULTS.missing_values)
        + "). --missing-value= alone: only empty cells.",
    )
    p.add_argument(
        "--preprocessing-fn",
        default=argparse.SUPPRESS,
        help="The tf.Transform preprocessing_fn, as package.module.function or "
        "file.py:function, or auto: built from the schema (numbers z-scored, strings and "
        "small-integer columns to vocabulary ids, the label as the task needs) "
        f"(default: {_DEFAULTS.preprocessing_fn}).",
    )
    p.add_argument(
        "--estimator-fn",
        default=argparse.SUPPRESS,
        help="build_estimator(run_config, hparams, warm_start_from, [tft_output=, label_key=, "
        "task=]) as package.module.function or file.py:function, or auto: a wide-and-deep "
        f"canned Estimator over the transform output, head by task (default: "
        f"{_DEFAULTS.estimator_fn}).",
    )
    features = p.add_mutually_exclusive_group()
    features.add_argument(
        "--feature",
        dest="features",
        action="append",
        default=None,
        metavar="COLUMN",
        help="With the auto preprocessing: a column to make a feature of, repeatable "
        "(default: every column but the label).",
    )
    features.add_argument(
        "--exclude-feature",
        dest="exclude_features",
        action="append",
        default=None,
        metavar="COLUMN",
        help="With the auto preprocessing: a column to leave out, repeatable.",
    )
    p.add_argument(
        "--canned",
        dest="canned_estimator",
        choices=CANNED,
        default=None,
        help="With --estimator-fn auto: this canned Estimator over the same columns instead "
        "of the wide and deep one (its head must fit the task; arguments: the definition's "
        "[model] args).",
    )
    p.add_argument(
        "--train-steps",
        type=int,
        default=None,
        help=f"Training steps (default: {DEFAULT_TRAIN_STEPS}, unless --train-epochs).",
    )
    p.add_argument(
        "--train-epochs",
        type=float,
        default=None,
        help="Passes over the train split instead of --train-steps: as many steps as that "
        "takes at the global batch size (the summary shows how many).",
    )
    p.add_argument(
        "--eval-steps",
        type=int,
        default=_DEFAULTS.eval_steps,
        help="Evaluation batches the Trainer runs after training.",
    )
    p.add_argument(
        "--train-batch-size",
        type=int,
        default=_DEFAULTS.train_batch_size,
        help="Examples per training batch.",
    )
    p.add_argument(
        "--eval-batch-size",
        type=int,
        default=_DEFAULTS.eval_batch_size,
        help="Examples per evaluation batch.",
    )
    p.add_argument(
        "--hidden-units",
        type=lambda s: tuple(int(x) for x in s.split(",")),
        default=argparse.SUPPRESS,
        help="Widths of the DNN layers, comma-separated (default: "
        f"{','.join(map(str, _DEFAULTS.hidden_units))}).",
    )
    p.add_argument(
        "--strategy",
        default=_DEFAULTS.strategy,
        choices=STRATEGY_NAMES,
        help="tf.distribute strategy for the Trainer. 'auto': parameter_server if "
        "TF_CONFIG lists ps tasks, multi_worker_mirrored if it lists several "
        "workers, else mirrored with several GPUs, one_device with one, "
        "default on the CPU.",
    )
    p.add_argument(
        "--training-backend",
        default=_DEFAULTS.training_backend,
        choices=TRAINING_BACKENDS,
        help="Where the Trainer trains: in_process (its own process), local (chief, "
        "workers and ps as processes on 127.0.0.1, as a cluster would run "
        "them), vertex (a Vertex AI CustomJob) or kubeflow (a TFJob); the last "
        "two only in a compiled pipeline. The machines below are laid out as "
        "--strategy needs: one for single-machine strategies, a chief and "
        "workers for multi_worker_mirrored, plus ps tasks for parameter_server.",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=_DEFAULTS.workers,
        help="Training machines, chief included (multi_worker_mirrored); workers "
        "besides the coordinating chief (parameter_server).",
    )
    p.add_argument(
        "--parameter-servers",
        type=int,
        default=_DEFAULTS.parameter_servers,
        help="ps tasks (parameter_server).",
    )
    p.add_argument(
        "--machine-type",
        default=_DEFAULTS.machine_type,
        help="Machine type of the chief and workers (vertex).",
    )
    p.add_argument(
        "--accelerator-type",
        default=None,
        help="Accelerator of the chief and workers, e.g. NVIDIA_TESLA_T4 (vertex; "
        "for kubeflow, --accelerator-count GPUs are requested).",
    )
    p.add_argument(
        "--accelerator-count",
        type=int,
        default=_DEFAULTS.accelerator_count,
        help="Accelerators per chief or worker machine.",
    )
    p.add_argument(
        "--ps-machine-type",
        default=_DEFAULTS.ps_machine_type,
        help="Machine type of the ps tasks (vertex).",
    )
    p.add_argument(
        "--warm-start",
        action="store_true",
        help="Initialize the model from the latest blessed model, if any.",
    )
    p.add_argument(
        "--label",
        dest="raw_label_key",
        default=argparse.SUPPRESS,
        help="The label's CSV column (default: the definition's; needed with --data alone).",
    )
    p.add_argument(
        "--transformed-label",
        dest="label_key",
        default=argparse.SUPPRESS,
        help="The label's name among the preprocessing_fn's outputs (what the model trains "
        "on; default: <label>_xf).",
    )
    p.add_argument(
        "--task",
        choices=(*TASKS, "auto"),
        default=argparse.SUPPRESS,
        help="What the label is: the Evaluator's metrics and default blessing gate follow it; "
        "auto decides from the label's values (2 distinct: binary; text, or integers with at "
        "most 10 values: multiclass; other numbers: regression) "
        f"(default: {_DEFAULTS.task}).",
    )
    p.add_argument(
        "--num-classes",
        type=int,
        default=None,
        help="Number of label classes (multiclass; default: the label's distinct values).",
    )
    p.add_argument(
        "--slice",
        dest="slice_features",
        action="append",
        default=None,
        help="A raw feature to slice the evaluation by, repeatable (default: none).",
    )
    p.add_argument(
        "--blessing-metric",
        default=None,
        help="Metric the blessing gate checks (default per task: "
        + ", ".join(f"{t} {g.metric}" for t, g in DEFAULT_GATES.items())
        + ").",
    )
    p.add_argument(
        "--blessing-threshold",
        type=float,
        default=None,
        help="Worst acceptable value of the metric on the eval split (a floor, or a ceiling "
        "for lower-is-better metrics such as RMSE); inf drops the check.",
    )
    p.add_argument(
        "--blessing-max-change",
        type=float,
        default=None,
        help="How much worse than the latest blessed model the metric may be; inf drops it.",
    )
    p.add_argument(
        "--blessing-max-relative-change",
        type=float,
        default=None,
        help="The same as a fraction of the latest blessed model's value (0.02 = 2%%).",
    )
    p.add_argument(
        "--beam-arg",
        dest="beam_pipeline_args",
        action="append",
        default=None,
        help="A Beam pipeline argument, repeatable; passed unchanged to every "
        f"Beam component (default: {' '.join(DEFAULT_BEAM_ARGS)}). Example: "
        "--beam-arg=--direct_running_mode=multi_processing "
        "--beam-arg=--direct_num_workers=2.",
    )
    p.add_argument(
        "--no-cache",
        dest="enable_cache",
        action="store_false",
        help="Run every component even if its inputs are unchanged.",
    )


def _add_compile_parser(subparsers):
    p = subparsers.add_parser(
        "compile",
        help="Compile the pipeline for Vertex AI Pipelines (a PipelineJob JSON) or a "
        "self-hosted Kubeflow Pipelines (a pipeline YAML).",
        description="Compile the same pipeline with TFX's KubeflowV2DagRunner: every component "
        "a task in --image, Beam steps in the task's container or on "
        "--beam-runner. Nothing is sent anywhere; `submit` and `schedule` do that."
        + _DEFINITION_NOTE
        + " Its [vertex] pipeline_root and serving_dir replace [output] pipeline_root and "
        "[serving] dir here.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _add_definition_option(p, "the settings")
    _add_target_option(p, "Orchestrator to compile for.")
    p.add_argument(
        "--out",
        required=True,
        help="The file to write: a PipelineJob JSON (vertex), a pipeline .yaml (kubeflow).",
    )
    _add_input_options(p)
    p.add_argument(
        "--pipeline-root",
        default=None,
        help="Where the artifacts go: a gs:// folder (vertex); a minio://, s3:// or gs:// "
        "folder (kubeflow).",
    )
    p.add_argument(
        "--serving-model-dir",
        default=None,
        help="Where blessed models are pushed, one numeric version folder each: a "
        "/gcs/<bucket>/... folder, Vertex's Cloud Storage mount (vertex); a folder under "
        "--serving-volume's mount (kubeflow; default: <mount>/<pipeline name>).",
    )
    _add_kubeflow_cluster_options(p)
    p.add_argument(
        "--image",
        default=None,
        help="Pipeline image built from kubeflow/Dockerfile; every task runs in it.",
    )
    p.add_argument(
        "--project",
        dest="gcp_project",
        default=None,
        help="Google Cloud project of the Trainer's CustomJob (--training-backend "
        "vertex) and of the Dataflow jobs (--beam-runner dataflow).",
    )
    p.add_argument(
        "--region",
        dest="gcp_region",
        default=_DEFAULTS.gcp_region,
        help="Region of the Trainer's CustomJob and of the Dataflow jobs.",
    )
    p.add_argument(
        "--training-service-account",
        default=None,
        help="Service account the Trainer's CustomJob runs as (--training-backend "
        "vertex; default: the project's Compute Engine default service "
        "account).",
    )
    p.add_argument(
        "--beam-runner",
        default=_DEFAULTS.beam_runner,
        choices=BEAM_RUNNERS,
        help="Where Beam steps run: direct (in the task's container, with the "
        "--beam-arg values or the in-memory defaults), dataflow, or portable (a "
        "Flink or Spark job server). For the last two, --beam-arg values are "
        "added to the runner's own arguments.",
    )
    p.add_argument(
        "--beam-worker-image",
        default=None,
        help="Image of the Dataflow or portable-runner workers (the beam-worker "
        "target of kubeflow/Dockerfile).",
    )
    p.add_argument(
        "--beam-temp-location",
        default=None,
        help="Dataflow temp_location; none means <pipeline-root>/beam-tmp.",
    )
    p.add_argument(
        "--beam-job-endpoint",
        default=None,
        help="host:port of the Flink or Spark Beam job server (--beam-runner portable).",
    )
    _add_registry_options(p)
    _add_component_options(p)


def _add_registry_options(p, upload=True):
    """The Vertex AI Model Registry: where `compile`'s Pusher uploads, what `rollback` moves."""
    p.add_argument(
        "--model-registry",
        default=None,
        metavar="MODEL",
        help="Vertex AI Model Registry model, projects/P/locations/R/models/ID or an ID in "
        "--project and --region: "
        + (
            "the Pusher also uploads each model it pushes as its new default version (the "
            "first push creates it), pointing at the pushed folder on Cloud Storage."
            if upload
            else "roll back there, moving its default version alias, instead of in the "
            "serving folder (as a definition's [vertex] model_registry does)."
        ),
    )
    if upload:
        p.add_argument(
            "--serving-container-image",
            default=_DEFAULTS.serving_container_image,
            help="The uploaded model's serving container (--model-registry).",
        )
    p.add_argument(
        "--vertex-endpoint",
        default=None,
        metavar="ENDPOINT",
        help="Vertex AI endpoint, projects/P/locations/R/endpoints/ID or an ID: deploy "
        + ("each uploaded version" if upload else "the version rolled back to")
        + " there with all of its traffic (--model-registry; the models deployed before "
        "stay deployed, with none).",
    )
    p.add_argument(
        "--endpoint-machine-type",
        default=_DEFAULTS.endpoint_machine_type,
        help="Machine type of the deployed model's one replica (--vertex-endpoint).",
    )


def _add_target_option(p, help):
    p.add_argument(
        "--target",
        choices=("vertex", "kubeflow"),
        default="vertex",
        help=help + " kubeflow: a self-hosted (open-source) Kubeflow Pipelines 2.x.",
    )


def _add_kubeflow_cluster_options(p):
    """What a file compiled for a self-hosted Kubeflow Pipelines asks of the cluster."""
    p.add_argument(
        "--serving-volume",
        default=None,
        metavar="PVC:MOUNTPATH",
        help="kubeflow: the PersistentVolumeClaim the Pusher writes blessed models to, and "
        "where it is mounted in the Pusher's pod.",
    )
    p.add_argument(
        "--image-pull-policy",
        default=None,
        choices=("Always", "IfNotPresent", "Never"),
        help="kubeflow: when the tasks' pods pull --image (default: the cluster's).",
    )
    p.add_argument(
        "--image-pull-secret",
        action="append",
        default=None,
        metavar="SECRET",
        help="kubeflow: a Secret (kubernetes.io/dockerconfigjson) in the run's namespace to "
        "pull --image with; repeatable.",
    )


def _add_kubeflow_host_options(p):
    p.add_argument(
        "--host",
        default=None,
        help="kubeflow: URL of the Kubeflow Pipelines API (default: $KF_PIPELINES_ENDPOINT).",
    )
    p.add_argument(
        "--namespace",
        default=None,
        help="kubeflow: your profile's namespace on a multi-user deployment (default: the "
        "kfp client's context, ~/.config/kfp/context.json).",
    )
    p.add_argument(
        "--experiment",
        default=None,
        help="kubeflow: the experiment the runs go to, created if new (default: the "
        "pipeline's name).",
    )
    p.add_argument(
        "--token",
        default=None,
        help="kubeflow: bearer token for the host (default: $KF_PIPELINES_TOKEN, else the "
        "service-account token of a pod in the cluster, $KF_PIPELINES_SA_TOKEN_PATH).",
    )


def _add_vertex_job_options(p):
    p.add_argument(
        "--spec",
        required=True,
        help="File written by `python -m pipeline compile`: a PipelineJob JSON (vertex), a "
        "pipeline YAML (kubeflow).",
    )
    _add_target_option(p, "Where to run it.")
    _add_kubeflow_host_options(p)
    _add_definition_option(
        p,
        "[vertex] project and region (the rest of the pipeline is in --spec: compile it "
        "from the same definition)",
    )
    p.add_argument(
        "--project",
        default=None,
        help="Google Cloud project (default: the definition's [vertex] project, then "
        "$GOOGLE_CLOUD_PROJECT, then the credentials file's project).",
    )
    p.add_argument(
        "--region",
        default=_DEFAULTS.gcp_region,
        help="Vertex AI region (with --definition, default: its [vertex] region).",
    )
    p.add_argument(
        "--pipeline-root",
        default=None,
        help="Folder for the artifacts, gs:// (vertex) or minio://, s3://, gs:// (kubeflow) "
        "(default: the one compiled in).",
    )
    p.add_argument(
        "--service-account",
        default=None,
        help="Service account the tasks run as (default: vertex, the project's Compute "
        "Engine default service account; kubeflow, the namespace's pipeline runner).",
    )
    p.add_argument(
        "--no-cache",
        dest="enable_caching",
        action="store_const",
        const=False,
        default=None,
        help="Run every task (default: the caching compiled into the spec).",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="Print the requests as JSON (method, url, body) instead of sending them; needs "
        "no credentials.",
    )


def _add_submit_parser(subparsers):
    p = subparsers.add_parser(
        "submit",
        help="Run a compiled pipeline on Vertex AI Pipelines or Kubeflow Pipelines.",
        description="vertex: create a Vertex AI PipelineJob from a compiled spec; credentials "
        "come from GOOGLE_APPLICATION_CREDENTIALS or gcloud's application-default file. "
        "kubeflow: create a run in --experiment with the kfp client, after checking that "
        "--host answers.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _add_vertex_job_options(p)
    p.add_argument(
        "--job-id",
        default=None,
        help="vertex: ID of the run (default: <pipeline name>-<timestamp>).",
    )
    p.add_argument(
        "--display-name",
        default=None,
        help="kubeflow: name of the run (default: the pipeline's name).",
    )


def _add_schedule_parser(subparsers):
    p = subparsers.add_parser(
        "schedule",
        help="Schedule a compiled pipeline on Vertex AI Pipelines or Kubeflow Pipelines "
        "(retraining).",
        description="Create a schedule (vertex) or recurring run (kubeflow) that runs the "
        "compiled spec at each --cron time. On Vertex, compile with --warm-start for "
        "incremental retraining.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _add_vertex_job_options(p)
    p.add_argument(
        "--cron",
        required=True,
        help='Cron expression, e.g. "0 3 * * 1" (Mondays 03:00 UTC); vertex: prefix '
        '"TZ=Europe/Berlin " for another time zone; kubeflow: always UTC, and six fields '
        "(seconds first) are taken as they are.",
    )
    p.add_argument(
        "--display-name",
        default=None,
        help="Name of the schedule (default: <pipeline name>-retrain).",
    )
    p.add_argument(
        "--max-concurrent-runs",
        type=int,
        default=1,
        help="Runs of this schedule that may be in progress at once.",
    )


def _add_stats_parser(subparsers):
    p = subparsers.add_parser(
        "stats",
        help="Print the data statistics of the latest local run, or of an artifact.",
        description="Per split, a table of every feature: type, count, missing %, mean, std, "
        "min and max for numbers, unique count and top values for strings; with a baseline, "
        "a drift column (L-infinity distance for strings, Jensen-Shannon divergence for "
        "numbers).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--artifact",
        default=None,
        help="A statistics artifact folder (Split-*/FeatureStats.pb) or one "
        "FeatureStats.pb file; default: the latest run's, from ML Metadata.",
    )
    p.add_argument(
        "--baseline",
        default=None,
        help="Statistics to show drift against: a statistics artifact folder, one "
        "FeatureStats.pb, or a Model artifact folder (its training statistics); default: for "
        "the latest run, the training statistics of the blessed model it was compared with, "
        "if any; none with --artifact.",
    )
    _add_definition_option(p, "the pipeline name and output folders")
    p.add_argument(
        "--pipeline-name",
        default=None,
        help="Pipeline whose latest run is shown (default: the definition's).",
    )
    _add_output_options(p)
    p.add_argument("--json", action="store_true", help="Print the statistics as JSON.")


def _add_init_parser(subparsers):
    p = subparsers.add_parser(
        "init",
        help="Write a pipeline project to edit: definition, inferred schema, preprocessing "
        "and model.",
        description="Infers the schema of --data (ExampleGen, StatisticsGen and SchemaGen run "
        "on it) and writes DIR/pipeline.toml, DIR/schema.pbtxt, DIR/preprocessing.py and "
        "DIR/model.py: what `run --data ... --label ...` would run, as files to edit. Then "
        "`run --definition DIR/pipeline.toml`. For `compile`, DIR must be in the pipeline "
        "image: under definitions/, for example.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("dir", help="Folder to write the project to (created if needed).")
    p.add_argument("--data", dest="data_path", required=True, help="CSV file, or folder of them.")
    p.add_argument("--label", dest="raw_label_key", required=True, help="The column to predict.")
    p.add_argument(
        "--pipeline-name", default=None, help="Name of the pipeline (default: DIR's name)."
    )
    p.add_argument(
        "--task",
        choices=(*TASKS, "auto"),
        default=_DEFAULTS.task,
        help="What the label is; auto decides from its values.",
    )
    p.add_argument("--num-classes", type=int, default=None, help="Classes (multiclass).")
    p.add_argument(
        "--missing-value",
        dest="missing_values",
        action="append",
        default=None,
        metavar="TEXT",
        help="A CSV cell text that means a missing value; repeatable, replaces the defaults ("
        + ", ".join(repr(v) for v in _DEFAULTS.missing_values)
        + ").",
    )


def _add_history_parsers(subparsers):
    """`runs`, `models`, `rollback` and `report`: a pipeline found as `run` finds it."""

    def command(name, summary, description):
        p = subparsers.add_parser(
            name,
            help=summary,
            description=description,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        _add_definition_option(p, "the pipeline name and output folders")
        p.add_argument(
            "--data",
            dest="data_path",
            default=None,
            help="The data `run --data` ran on, without --definition: names the pipeline "
            "after the file, as run does (no --label needed here).",
        )
        p.add_argument(
            "--pipeline-name",
            default=argparse.SUPPRESS,
            help="Name of the pipeline (default: the definition's, or the data file's).",
        )
        _add_output_options(p)
        _add_serving_dir_option(p)
        return p

    for name, summary, description in (
        (
            "runs",
            "List the pipeline's local runs, newest first, from ML Metadata.",
            "Each run: id, start, duration, outcome (pushed, not blessed, failed with the "
            "failing component, incomplete), input rows and fingerprint, overall metrics, "
            "blessed, pushed version, definition and code version.",
        ),
        (
            "models",
            "List the pushed model versions, highest first, with their lineage and which "
            "one is served.",
            "Each version in the serving folder or recorded as pushed: metrics, the run, data "
            "fingerprint, definition and code version behind it, whether it is a rollback, "
            "and whether it is served now (the highest version number).",
        ),
    ):
        p = command(name, summary, description + " JSON keys: README, Operating retraining.")
        p.add_argument("--json", action="store_true", help="Print a JSON list of objects.")
    p = command(
        "rollback",
        "Serve an earlier pushed model again, as a new highest version.",
        "Copies the chosen version into a hidden staging folder in the serving folder and "
        "publishes it as a new, highest version with one rename (the served model changes "
        "atomically), and records the push in ML Metadata. With a Model Registry "
        "(--model-registry, or the definition's [vertex] model_registry), moves its default "
        "version alias to the chosen version instead (and, with an endpoint, deploys it there "
        "with all of the traffic). Exit status 0 when done (or nothing to do), 2 when "
        "refused: a version never pushed, or never blessed without --force; 1 when a Model "
        "Registry call failed; 4 when a run of the pipeline holds its lock.",
    )
    p.add_argument(
        "--to", dest="version", type=int, required=True, help="The version to serve again."
    )
    p.add_argument("--dry-run", action="store_true", help="Say what would be done; change nothing.")
    p.add_argument("--force", action="store_true", help="Serve a version that was never blessed.")
    p.add_argument(
        "--reason", default=None, help="Why, recorded in ML Metadata (not with a registry)."
    )
    _add_wait_option(p)
    _add_registry_options(p, upload=False)
    for flag, field, what in (
        ("--project", "gcp_project", "project"),
        ("--region", "gcp_region", "region"),
    ):
        p.add_argument(
            flag,
            dest=field,
            default=getattr(_DEFAULTS, field),
            help=f"Google Cloud {what} of a --model-registry or --vertex-endpoint given as an ID.",
        )
    p = command(
        "report",
        "Write one self-contained HTML report of a run: data, training, evaluation, blessing, "
        "push and lineage.",
        "One HTML file with everything inline (no server, no network): data statistics per "
        "split as charts and the data anomalies, training curves from the Trainer's event "
        "files, the evaluation overall and per slice beside the baseline model, the blessing "
        "decision against its gate, what was pushed where, and the run's lineage. Prints the "
        "file's path. Exit status 2 when there is no such run.",
    )
    p.add_argument(
        "run_id",
        nargs="?",
        default=None,
        metavar="RUN",
        help="A run id as `runs` lists it (default: the latest run).",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE.html",
        help="Where to write it (default: <the ML Metadata store's folder>/reports/<run>.html, "
        "e.g. pipelines/<name>/reports/).",
    )


def _add_wait_option(p):
    p.add_argument(
        "--wait",
        action="store_true",
        help="When another run or rollback of this pipeline holds its lock, wait for it "
        "(default: exit at once with status 4, naming the holder).",
    )


def _history_config(args, explicit):
    """The config `runs`, `models` and `rollback` read the pipeline name and folders of: as
    `run` resolves them, with --data alone needing no --label."""
    if not args.definition and args.data_path and "raw_label_key" not in explicit:
        explicit = {**explicit, "raw_label_key": "-"}  # only the name and folders are read
    return config_from_args(args, explicit)


def _quiet_tensorflow():
    """TFMA and TensorBoard's readers print TensorFlow warnings that ask nothing of the user."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    logging.getLogger("tensorflow").setLevel(logging.ERROR)


def _report_command(args, config):
    _quiet_tensorflow()
    from pipeline.report import write_report

    try:
        path = write_report(config, args.run_id, args.out)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    print(path)
    return 0


def _run_with_report(config, verbose):
    """`run`'s summary, with the run's report written at the end (also when a component
    failed: its path is printed before the error). Writing the report never changes the
    run's outcome: a failure there is a warning."""
    from pipeline.history import run_ids
    from pipeline.runner import run_locally

    known = run_ids(config)
    try:
        summary = run_locally(config, verbose=verbose)
    except Exception:
        path = _new_run_report(config, known)
        if path:
            print(f"Run report: {path}", file=sys.stderr)
        raise
    summary.report_path = _new_run_report(config, known)
    return summary


def _new_run_report(config, known):
    try:
        from pipeline.report import write_new_run_report

        return write_new_run_report(config, known)
    except Exception as e:  # the run's outcome matters more than its report
        print(f"warning: could not write the run report: {e}", file=sys.stderr)
        return None


def _history_command(args, config):
    if args.command == "report":
        return _report_command(args, config)
    if args.command == "rollback":
        from pipeline.lock import Locked, pipeline_lock
        from pipeline.rollback import rollback

        try:
            with pipeline_lock(config.resolved_metadata_path, "rollback", wait=args.wait):
                return rollback(
                    config,
                    args.version,
                    dry_run=args.dry_run,
                    force=args.force,
                    reason=args.reason,
                )
        except Locked as e:
            print(f"Not rolled back: {e}", file=sys.stderr)
            return exit_codes.LOCKED
    _quiet_tensorflow()  # the metrics are read with TFMA
    from pipeline import history

    try:
        past = history.load(config)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    if args.command == "runs":
        records, keys, table = past.runs(), history.RUN_KEYS, history.format_runs
    else:
        records = past.models(config.resolved_serving_model_dir)
        keys, table = history.MODEL_KEYS, history.format_models
    if args.json:
        print(json.dumps([history.public(r, keys) for r in records], indent=2))
    else:
        print(table(records))
    return 0


def _init_command(args):
    from pipeline.init import init_project

    folder = os.path.abspath(args.dir)
    config = PipelineConfig(
        data_path=os.path.abspath(args.data_path),
        raw_label_key=args.raw_label_key,
        pipeline_name=args.pipeline_name or os.path.basename(folder),
        task=args.task,
        num_classes=args.num_classes,
        **({"missing_values": tuple(args.missing_values)} if args.missing_values else {}),
    )
    paths = init_project(folder, config)
    definition = os.path.relpath(paths[0])
    print("Wrote " + ", ".join(os.path.relpath(p) for p in paths) + ".")
    print(f"Edit them, then: python -m pipeline run --definition {definition}")
    return 0


def _add_schema_parser(subparsers):
    p = subparsers.add_parser(
        "schema",
        help="Print or save the schema the latest local run used (inferred or imported).",
        description="Prints the Schema text proto of the latest run (with --infer-schema, the "
        "one SchemaGen inferred), or writes it to --out: a file to edit and pass as --schema, "
        "so later runs validate against it.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    _add_definition_option(p, "the pipeline name and output folders")
    p.add_argument(
        "--pipeline-name",
        default=None,
        help="Pipeline whose latest run is read (default: the definition's).",
    )
    _add_output_options(p)
    p.add_argument("--out", default=None, help="Write the schema to this file instead.")


def _schema_command(args, metadata_path):
    from components.schema_file import SCHEMA_FILE_NAME
    from pipeline.runner import latest_output, latest_run_executions, open_store

    try:
        store = open_store(metadata_path)
        artifact = latest_output(store, latest_run_executions(store, metadata_path), "Schema")
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    if artifact is None:
        print(f"The latest run in {metadata_path} has no schema.", file=sys.stderr)
        return 2
    with open(os.path.join(artifact.uri, SCHEMA_FILE_NAME)) as f:
        text = f.read()
    if args.out is None:
        print(text, end="")
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"{args.out}: the schema of {artifact.uri}", file=sys.stderr)
    return 0


def _stats_command(args, metadata_path):
    from pipeline import stats

    try:
        baseline = stats.baseline_path(args.baseline) if args.baseline else None
        if args.artifact:
            path = args.artifact
        else:
            path = stats.latest_statistics_uri(metadata_path)
            baseline = baseline or stats.latest_baseline_uri(metadata_path)
        report = stats.statistics_report(path, baseline)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else stats.format_report(report))
    return 0


def _compile_command(args, config):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from kubeflow.local_runner import task_order

    if args.target == "kubeflow":
        from pipeline.kubeflow_pipelines import Cluster, compile_pipeline

        cluster = Cluster(
            args.image_pull_policy, tuple(args.image_pull_secret or ()), args.serving_volume
        )
        spec, _ = compile_pipeline(config, args.out, cluster)
    else:
        from pipeline.vertex import compile_pipeline

        spec = compile_pipeline(config, args.out)["pipelineSpec"]
    tasks = task_order(spec["root"]["dag"]["tasks"])
    print(
        f"{args.out}: {len(tasks)} tasks ({', '.join(tasks)}); "
        f"image {config.image}, pipeline root {config.pipeline_root}"
    )
    if args.target == "kubeflow":
        print(
            "No latest blessed model on Kubeflow Pipelines (it runs no resolver task): the "
            "Evaluator blesses by the absolute thresholds alone.",
            file=sys.stderr,
        )
    return 0


def _kubeflow_command(args):
    from pipeline import kubeflow_pipelines

    host = kubeflow_pipelines.find_host(args.host, args.namespace, args.token)
    submission = kubeflow_pipelines.Submission(
        spec_path=args.spec,
        experiment=args.experiment,
        name=args.display_name,
        pipeline_root=args.pipeline_root,
        enable_caching=args.enable_caching,
        service_account=args.service_account,
        cron=getattr(args, "cron", None),
        max_concurrent_runs=getattr(args, "max_concurrent_runs", 1),
    )
    if args.dry_run:
        return kubeflow_pipelines.plan(host, submission)
    return kubeflow_pipelines.send(host, submission)


# Options that mean something for one --target only (their dests), by command.
_TARGET_ONLY = {
    "kubeflow": {
        "compile": ("serving_volume", "image_pull_policy", "image_pull_secret"),
        "submit": ("host", "namespace", "experiment", "token", "display_name"),
        "schedule": ("host", "namespace", "experiment", "token"),
    },
    "vertex": {
        "submit": ("definition", "project", "region", "job_id"),
        "schedule": ("definition", "project", "region"),
    },
}


def _check_target_options(parser, args, explicit):
    for target, by_command in _TARGET_ONLY.items():
        if args.target == target:
            continue
        wrong = [name for name in by_command.get(args.command, ()) if name in explicit]
        if wrong:
            flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
            parser.error(f"{flags}: only with --target {target}")


def _vertex_command(args, explicit):
    from pipeline import vertex

    project, region = args.project, args.region
    if args.definition:  # its [vertex] project and region, under the options given
        from pipeline.definition import load

        values = load(args.definition, args.command).values
        project = explicit.get("project", values.get("gcp_project"))
        region = explicit.get("region", values.get("gcp_region", _DEFAULTS.gcp_region))
    job = vertex.prepare_job(
        args.spec,
        project=project,
        region=region,
        pipeline_root=args.pipeline_root,
        job_id=getattr(args, "job_id", None),
        enable_caching=args.enable_caching,
        dry_run=args.dry_run,
    )
    if args.command == "submit":
        if args.dry_run:
            return vertex.submit_request(job, args.service_account)
        return vertex.submit(job, args.service_account)
    display_name = args.display_name or f"{job.to_dict()['displayName']}-retrain"
    settings = {
        "cron": args.cron,
        "display_name": display_name,
        "max_concurrent_runs": args.max_concurrent_runs,
        "service_account": args.service_account,
    }
    if args.dry_run:
        return vertex.schedule_request(job, **settings)
    return vertex.schedule(job, **settings)


def _config_fields(options):
    """The `PipelineConfig` fields among parsed options (a dict), as the config takes them."""
    fields = {f.name for f in dataclasses.fields(PipelineConfig)}
    values = {k: v for k, v in options.items() if k in fields and v is not None}
    for name in (
        "beam_pipeline_args",
        "warn_only_anomalies",
        "slice_features",
        "features",
        "exclude_features",
        "drift_thresholds",
        "skew_thresholds",
        "missing_values",
    ):
        if name in values:
            values[name] = tuple(values[name])
    if options.get("infer_schema"):
        values["schema_path"] = None
    return values


def config_from_args(args, explicit=None):
    """The `PipelineConfig` of parsed `args`: the options in `explicit` (those given on the
    command line; default: every option in `args`) over `--definition`'s keys, if any, over
    PipelineConfig's defaults."""
    overrides = _config_fields(vars(args) if explicit is None else explicit)
    from pipeline.definition import build_config

    definition = getattr(args, "definition", None)
    if definition or "data_path" not in overrides:
        return build_config(definition or DEFAULT_DEFINITION, args.command, overrides)
    # Zero code: every setting not given is inferred.
    if "raw_label_key" not in overrides:
        from components.auto.data import csv_files, read_header

        files = csv_files(overrides["data_path"])
        columns = f": one of {', '.join(read_header(files[0]))}" if files else ""
        raise ValueError(f"--label: name the column to predict{columns}.")
    return PipelineConfig(**overrides)


def explicit_options(argv):
    """The options `argv` gives, without argparse's defaults (which must not override a
    definition's keys)."""
    parser = build_parser()
    parsers = [parser]
    while parsers:
        for action in parsers.pop()._actions:
            action.default = argparse.SUPPRESS
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return vars(parser.parse_args(argv))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        description="TFX pipeline kit: CSV to a pushed, serving-ready SavedModel with an "
        "Estimator-based Trainer.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(subparsers)
    _add_compile_parser(subparsers)
    _add_submit_parser(subparsers)
    _add_schedule_parser(subparsers)
    _add_stats_parser(subparsers)
    _add_schema_parser(subparsers)
    _add_init_parser(subparsers)
    _add_history_parsers(subparsers)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    explicit = explicit_options(sys.argv[1:] if argv is None else argv)
    if args.command == "init":
        try:
            return _init_command(args)
        except (ValueError, FileExistsError) as e:
            parser.error(str(e))
    if args.command in ("stats", "schema"):
        try:
            metadata_path = config_from_args(args, explicit).resolved_metadata_path
        except ValueError as e:
            parser.error(str(e))
        command = _stats_command if args.command == "stats" else _schema_command
        return command(args, metadata_path)
    if args.command in ("runs", "models", "rollback", "report"):
        try:
            config = _history_config(args, explicit)
        except ValueError as e:
            parser.error(str(e))
        return _history_command(args, config)
    if args.command in ("run", "compile"):
        try:
            config = config_from_args(args, explicit)
            if args.command == "run":
                # Before any component runs: a wrong label names the columns there are.
                # (`compile` does it after checking its own settings.)
                config = config.resolve_from_data()
        except ValueError as e:
            parser.error(str(e))
    if args.command == "run":
        if config.training_backend not in LOCAL_BACKENDS:
            parser.error(
                f"--training-backend {config.training_backend} needs the artifacts on "
                "gs://, where its machines can read them: use it with `compile`."
            )
        if not args.verbose:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        from pipeline.lock import Locked, pipeline_lock

        try:
            with pipeline_lock(config.resolved_metadata_path, "run", wait=args.wait):
                summary = _run_with_report(config, args.verbose)
        except Locked as e:
            print(f"Not run: {e}", file=sys.stderr)
            return exit_codes.LOCKED
        if args.json:
            print(json.dumps(dataclasses.asdict(summary), indent=2, sort_keys=True))
        else:
            print(summary.format())
        return summary.exit_code
    _check_target_options(parser, args, explicit)
    from pipeline.definition import DefinitionError
    from pipeline.vertex import SetupError

    try:
        if args.command == "compile":
            return _compile_command(args, config)
        if args.target == "kubeflow":
            result = _kubeflow_command(args)
        else:
            result = _vertex_command(args, explicit)
    except DefinitionError as e:
        parser.error(str(e))
    except (SetupError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2, sort_keys=True) if args.dry_run else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
