"""All pipeline settings in one place, each declared once (pipeline/settings.py).

Only the data and the label column are required: every other setting defaults to zero code
on one machine. A definition (definitions/*.toml) or a flag sets any of them per model.
"""

import dataclasses
import os
from pathlib import Path

from components.auto import AUTO, CATEGORY_IDS, OOV_BUCKETS, VOCAB_FLOOR, VOCAB_MIN_COUNT
from components.auto.model import CANDIDATES, CANNED, HIDDEN_UNITS
from components.evaluator.tasks import DEFAULT_GATES, TASKS
from components.example_gen.missing import (
    DEFAULT_MAX_UNLABELED_ROW_FRACTION,
    DEFAULT_MISSING_VALUES,
)
from components.example_gen.splits import DEFAULT_SPLIT_RATIOS
from components.example_validator.checks import KINDS as ANOMALY_KINDS
from components.model_registry import (
    DEFAULT_MACHINE_TYPE,
    DEFAULT_SERVING_CONTAINER,
)
from components.trainer.cluster import BACKENDS as TRAINING_BACKENDS
from components.trainer.cluster import TrainingCluster
from components.trainer.length import CROSS_VALIDATION_BELOW_ROWS
from components.trainer.strategy import NAMES as STRATEGY_NAMES
from pipeline import config_values
from pipeline.config_values import (  # noqa: F401 (for the components and the CLI)
    BEAM_RUNNERS,
    DEFAULT_BEAM_ARGS,
    EXAMPLE_GEN_THREADS_BEAM_ARGS,
    LOCAL_BACKENDS,
)
from pipeline.settings import BUILD, LOCAL, REGISTRY, STORE, setting

REPO_ROOT = Path(__file__).resolve().parent.parent
# The training machines' defaults are the Trainer's own (components/trainer/cluster.py).
_CLUSTER = TrainingCluster()


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    """Every setting of a pipeline; each field's `Setting` is its key, flag and docs."""

    data_path: str = setting(
        key="data.path",
        kind="path",
        flag="--data",
        commands=(*BUILD, "init", *STORE),
        help="CSV file, or folder of *.csv files, to ingest; or a span pattern such as "
        "'landing/span-{SPAN}/*.csv' (data.spans says which spans). Without a definition "
        "this runs "
        "zero code: with --label, every setting not given is inferred (the schema by "
        "SchemaGen, preprocessing_fn and estimator_fn auto, the task from the label). For "
        "stats, schema, runs, models, rollback and report: the data `run --data` ran on, "
        "which names the "
        "pipeline as run names it (no --label needed there).",
    )
    raw_label_key: str = setting(
        key="label.column",
        flag="--label",
        commands=(*BUILD, "init"),
        help="The label's CSV column: what the model predicts.",
    )
    pipeline_name: str = setting(
        "",
        key="name",
        commands=(*BUILD, "init", *STORE, "predict"),
        default_text="the definition's name, else the data file's (or folder's); init: DIR's",
        help="Name of the pipeline; also names its output folders. A name: letters, digits, "
        "'-', '_' and '.', starting with a letter, digit or '_'.",
    )
    schema_path: str | None = setting(
        None,
        key="data.schema",
        kind="schema",
        flag="--schema",
        default_text='"infer": SchemaGen infers it',
        help="tensorflow_metadata Schema text proto that types the CSV columns and that the "
        'data is validated against; --infer-schema (a definition\'s "infer"): none, the '
        "columns typed from the data and the schema inferred from the train split's "
        "statistics (SchemaGen).",
    )
    # Generated output; each folder defaults to one under `output_dir`.
    output_dir: str = setting(
        ".",
        key="output.dir",
        kind="path",
        commands=(*LOCAL, "predict"),
        default_text="the current folder",
        help="Base folder for pipelines/<name>/ (root, metadata and reports) and "
        "serving_model/<name>/.",
    )
    pipeline_root: str | None = setting(
        None,
        key="output.pipeline_root",
        kind="path",
        command_key=("vertex.pipeline_root", ("compile",)),
        default_text="<output-dir>/pipelines/<name>/root",
        help="Where the artifacts go: a local folder (run); a gs:// folder (compile for "
        "vertex), a minio://, s3:// or gs:// folder (kubeflow).",
    )
    metadata_path: str | None = setting(
        None,
        key="output.metadata_path",
        kind="path",
        commands=(*LOCAL, "predict"),
        default_text="<output-dir>/pipelines/<name>/metadata.sqlite",
        help="SQLite ML Metadata file.",
    )
    serving_model_dir: str | None = setting(
        None,
        key="serving.dir",
        kind="path",
        commands=(*BUILD, "models", "rollback", "predict"),
        command_key=("vertex.serving_dir", ("compile",)),
        default_text="<output-dir>/serving_model/<name>",
        help="Where blessed models are pushed, one numeric version folder each: a local "
        "folder (run); a /gcs/<bucket>/... folder, Vertex's Cloud Storage mount (compile for "
        "vertex); a folder under --serving-volume's mount (kubeflow; default "
        "<mount>/<pipeline name>).",
    )

    # ExampleGen
    data_spans: str = setting(
        "1",
        key="data.spans",
        flag="--spans",
        metavar="N|FIRST..LAST",
        help="With a span pattern in data.path ({SPAN}, or {YYYY}{MM}{DD}, and {VERSION}, "
        "as TFX's): N reads the newest N spans (1: the latest; more: a rolling window), "
        "FIRST..LAST the spans of a fixed range (numbers, or dates YYYY-MM-DD). Resolved "
        "when the run reads the data (docs/guide/retraining.md).",
    )
    split_key: str = setting(
        "",
        key="data.split_key",
        default_text='"": the whole row',
        help="CSV column whose value decides train/eval; empty hashes the whole row.",
    )
    split_ratios: str = setting(
        DEFAULT_SPLIT_RATIOS,
        key="data.split_ratios",
        kind="ratios",
        default_text="{ train = 4, eval = 1 }",
        help="Split name to weight (a JSON object on the command line).",
    )
    max_bad_row_fraction: float = setting(
        0.0,
        key="data.max_bad_row_fraction",
        kind="float",
        help="Fraction of malformed rows tolerated (written to a rejected file); 0 fails on "
        "the first one.",
    )
    max_unlabeled_row_fraction: float = setting(
        DEFAULT_MAX_UNLABELED_ROW_FRACTION,
        key="data.max_unlabeled_row_fraction",
        kind="float",
        help="Fraction of rows without a label tolerated: they are set aside (listed in the "
        "rejected file, reason 'label missing'; never trained or evaluated on), and the run "
        "fails above it; counted apart from malformed rows.",
    )
    missing_values: tuple[str, ...] = setting(
        DEFAULT_MISSING_VALUES,
        key="data.missing_values",
        kind="str_list",
        flag="--missing-value",
        commands=(*BUILD, "init"),
        metavar="TEXT",
        help="A CSV cell text that means a missing value (an absent feature), in every "
        "column, with or without a schema; exact texts; repeatable, replaces the defaults "
        '(--missing-value= alone: only empty cells). Without "" an empty cell is an empty '
        "string (a bad number).",
    )
    warn_only_anomalies: tuple[str, ...] = setting(
        (),
        key="validation.warn_only",
        kind="str_list",
        flag="--warn-only-anomaly",
        choices=tuple(ANOMALY_KINDS),
        metavar="KIND",
        help="An anomaly kind (docs: data validation) that is recorded and shown in the "
        "summary but does not stop the run before the Trainer; repeatable.",
    )
    drift_thresholds: tuple[tuple[str, float], ...] = setting(
        (),
        key="validation.drift_thresholds",
        kind="thresholds",
        flag="--drift-threshold",
        metavar="COLUMN=VALUE",
        help="Check drift of the train split against the latest blessed model's training "
        "data for COLUMN (a schema column, or * for every column without its own value): an "
        "anomaly when the L-infinity distance (string columns) or the Jensen-Shannon "
        "divergence (numeric ones) is above VALUE, in (0, 1]; repeatable.",
    )
    skew_thresholds: tuple[tuple[str, float], ...] = setting(
        (),
        key="validation.skew_thresholds",
        kind="thresholds",
        flag="--skew-threshold",
        metavar="COLUMN=VALUE",
        help="Check skew of the eval split against the train split, as --drift-threshold "
        "checks drift; repeatable.",
    )
    # Transform
    preprocessing_fn: str = setting(
        AUTO,
        key="preprocessing.fn",
        kind="code",
        help="The tf.Transform preprocessing_fn, as package.module.function or "
        "file.py:function, or auto: built from the schema (numbers z-scored, strings and "
        "small-integer columns to vocabulary ids, the label as the task needs, every output "
        "<column>_xf; from 100 feature columns on, the numbers as one all_numbers output and "
        "the ids also side by side as all_categories).",
    )
    features: tuple[str, ...] = setting(
        (),
        key="data.features",
        kind="str_list",
        flag="--feature",
        metavar="COLUMN",
        default_text="none: every column but the label",
        help="With the auto preprocessing: a column to make a feature of, repeatable.",
    )
    exclude_features: tuple[str, ...] = setting(
        (),
        key="data.exclude_features",
        kind="str_list",
        flag="--exclude-feature",
        metavar="COLUMN",
        help="With the auto preprocessing: a column to leave out, repeatable; not with --feature.",
    )
    vocabulary_min_count: int = setting(
        VOCAB_MIN_COUNT,
        key="preprocessing.vocabulary_min_count",
        kind="int",
        help="With the auto preprocessing: a text or small-integer column's values seen at "
        "least this many times in the train split get ids of their own, most frequent first "
        f"(a table's columns share {CATEGORY_IDS:,} ids, and each keeps up to {VOCAB_FLOOR:,} "
        f"however many there are); the other values share {OOV_BUCKETS} out-of-vocabulary ids.",
    )
    # Trainer
    estimator_fn: str = setting(
        AUTO,
        key="model.build_estimator",
        kind="code",
        help="build_estimator(run_config, hparams, warm_start_from, [tft_output=, "
        "transformed_label_key=, task=, train_rows=, label_moments=, label_range=]) as package.module.function or "
        "file.py:function, or auto: the best of the candidates on held-out data (or the canned Estimator named), head by task.",
    )
    candidates: tuple[str, ...] = setting(
        CANDIDATES,
        key="model.candidates",
        kind="str_list",
        flag="--candidate",
        commands=(*BUILD, "init"),
        choices=CANDIDATES,
        metavar="NAME",
        help="With the auto build_estimator and no canned Estimator: the models trained on "
        "nine tenths of the train split, the one with the lowest loss on the other tenth "
        "pushed (log loss for classes, squared error for regression), or a weighted "
        "ensemble of them when it is lower still; repeatable.",
    )
    cross_validation_below_rows: int = setting(
        CROSS_VALIDATION_BELOW_ROWS,
        key="model.cross_validation_below_rows",
        kind="int",
        flag=None,
        help="Below this many train rows, stopping early, the candidates are compared by "
        "5-fold cross-validation over the whole train split instead of on a tenth of it, "
        "and the models served trained again on all of it (0: never).",
    )
    canned_estimator: str | None = setting(
        None,
        key="model.canned",
        flag="--canned",
        choices=CANNED,
        default_text="none: the best candidate",
        help="With the auto build_estimator: this canned Estimator over the same columns "
        "instead of the best of the candidates (its head must fit the task; its arguments: "
        "[model] args).",
    )
    canned_args: str = setting(
        "{}",
        key="model.args",
        kind="table",
        flag=None,
        help="The canned Estimator's keyword arguments.",
    )
    transformed_label_key: str = setting(
        "",
        key="label.transformed",
        flag="--transformed-label",
        default_text="<label>_xf",
        help="The label's name among the preprocessing_fn's outputs (what the model trains "
        "on); with the auto preprocessing always <label>_xf.",
    )
    train_steps: int | None = setting(
        None,
        key="training.steps",
        kind="int",
        default_text="none: stop early",
        help="Training steps. Without steps or epochs the Trainer holds out a tenth of the "
        "train split and stops when the loss there stops improving (at most a number of "
        "epochs that shrinks as rows grow), exporting the best checkpoint; the summary says "
        "why it stopped.",
    )
    train_epochs: float | None = setting(
        None,
        key="training.epochs",
        kind="float",
        help="Passes over the train split instead of steps: as many steps as that takes at "
        "the global batch size (the summary shows how many); an option for either replaces "
        "both keys.",
    )
    eval_steps: int = setting(
        50,
        key="training.eval_steps",
        kind="int",
        help="Evaluation batches the Trainer runs after training.",
    )
    train_batch_size: int = setting(
        64,
        key="training.batch_size",
        kind="int",
        help="Examples per training batch.",
    )
    eval_batch_size: int = setting(
        128,
        key="training.eval_batch_size",
        kind="int",
        help="Examples per evaluation batch.",
    )
    save_checkpoints_steps: int = setting(
        500,
        key="training.save_checkpoints_steps",
        kind="int",
        flag=None,
        help="Steps between the Trainer's checkpoints.",
    )
    hidden_units: tuple[int, ...] = setting(
        HIDDEN_UNITS,
        key="model.hidden_units",
        kind="int_list",
        help='Widths of the DNN layers (hparams["hidden_units"]; comma-separated on the '
        "command line).",
    )
    random_seed: int = setting(
        42, key="training.random_seed", kind="int", flag=None, help="The Trainer's random seed."
    )
    warm_start: bool = setting(
        False,
        key="training.warm_start",
        kind="bool",
        help="Initialize the model from the latest blessed model, if any.",
    )
    strategy: str = setting(
        "auto",
        key="training.strategy",
        choices=STRATEGY_NAMES,
        help="tf.distribute strategy for the Trainer. auto: parameter_server if TF_CONFIG "
        "lists ps tasks, multi_worker_mirrored if it lists several workers, else mirrored "
        "with several GPUs, one_device with one, default on the CPU.",
    )
    training_backend: str = setting(
        _CLUSTER.backend,
        key="training.backend",
        choices=TRAINING_BACKENDS,
        help="Where the Trainer trains: in_process (its own process), local (chief, workers "
        "and ps as processes on 127.0.0.1, as a cluster would run them), vertex (a Vertex AI "
        "CustomJob) or kubeflow (a TFJob); the last two only in a compiled pipeline. The "
        "machines below are laid out as the strategy needs: one for single-machine "
        "strategies, a chief and workers for multi_worker_mirrored, plus ps tasks for "
        "parameter_server.",
    )
    workers: int = setting(
        _CLUSTER.workers,
        key="training.workers",
        kind="int",
        help="Training machines, chief included (multi_worker_mirrored); workers besides the "
        "coordinating chief (parameter_server).",
    )
    parameter_servers: int = setting(
        _CLUSTER.parameter_servers,
        key="training.parameter_servers",
        kind="int",
        help="ps tasks (parameter_server).",
    )
    machine_type: str = setting(
        _CLUSTER.machine_type,
        key="training.machine_type",
        commands=("compile",),
        help="Machine type of the chief and workers (vertex).",
    )
    accelerator_type: str | None = setting(
        None,
        key="training.accelerator_type",
        commands=("compile",),
        help="Accelerator of the chief and workers, e.g. NVIDIA_TESLA_T4 (vertex; for "
        "kubeflow, --accelerator-count GPUs are requested).",
    )
    accelerator_count: int = setting(
        _CLUSTER.accelerator_count,
        key="training.accelerator_count",
        kind="int",
        commands=("compile",),
        help="Accelerators per chief or worker machine.",
    )
    ps_machine_type: str = setting(
        _CLUSTER.ps_machine_type,
        key="training.ps_machine_type",
        commands=("compile",),
        help="Machine type of the ps tasks (vertex).",
    )
    training_service_account: str | None = setting(
        None,
        key="training.service_account",
        commands=("compile",),
        default_text="the project's Compute Engine default service account",
        help="Service account the Trainer's CustomJob runs as (training backend vertex).",
    )
    # Evaluator: the task sets the metrics and gate; each blessing_* given replaces the gate's.
    task: str = setting(
        AUTO,
        key="label.task",
        commands=(*BUILD, "init"),
        choices=(*TASKS, AUTO),
        help="What the label is: the Evaluator's metrics and default blessing gate follow "
        "it; auto decides from the label's values (2 distinct: binary; text, or integers "
        "with at most 10 values: multiclass; other numbers: regression) when the pipeline "
        "is built.",
    )
    num_classes: int | None = setting(
        None,
        key="label.num_classes",
        kind="int",
        commands=(*BUILD, "init"),
        default_text="the label's distinct values",
        help="Number of label classes (multiclass).",
    )
    slice_features: tuple[str, ...] = setting(
        (),
        key="evaluation.slices",
        kind="str_list",
        flag="--slice",
        metavar="FEATURE",
        help="A raw feature to slice the evaluation by, repeatable.",
    )
    blessing_metric: str | None = setting(
        None,
        key="blessing.metric",
        default_text="per task: "
        + ", ".join(f"{task} {gate.metric}" for task, gate in DEFAULT_GATES.items()),
        help="Metric the blessing gate checks (a metric the task reports).",
    )
    blessing_threshold: float | None = setting(
        None,
        key="blessing.threshold",
        kind="float",
        default_text="the task's",
        help="Worst acceptable value of the metric on the eval split (a floor, or a ceiling "
        "for lower-is-better metrics such as RMSE); inf drops the check.",
    )
    blessing_max_change: float | None = setting(
        None,
        key="blessing.max_change",
        kind="float",
        default_text="the task's",
        help="How much worse than the latest blessed model the metric may be; inf drops it.",
    )
    blessing_max_relative_change: float | None = setting(
        None,
        key="blessing.max_relative_change",
        kind="float",
        default_text="the task's",
        help="The same as a fraction of the latest blessed model's value (0.02 = 2%); inf "
        "drops it.",
    )
    # Orchestration
    beam_pipeline_args: tuple[str, ...] = setting(
        DEFAULT_BEAM_ARGS,
        key="beam.args",
        kind="str_list",
        flag="--beam-arg",
        metavar="ARG",
        help="A Beam pipeline argument, repeatable; passed unchanged to every Beam "
        "component. Example: --beam-arg=--direct_running_mode=multi_processing "
        "--beam-arg=--direct_num_workers=2.",
    )
    enable_cache: bool = setting(
        True,
        key="enable_cache",
        kind="bool",
        flag="--no-cache",
        help="Reuse a component's outputs when its inputs are unchanged; --no-cache runs "
        "every component.",
    )
    # Vertex AI and Kubeflow Pipelines (`compile`, pipeline/vertex.py)
    gcp_project: str | None = setting(
        None,
        key="vertex.project",
        flag="--project",
        commands=REGISTRY,
        help="Google Cloud project of the Trainer's CustomJob (training backend vertex), of "
        "the Dataflow jobs (--beam-runner dataflow), and of a --model-registry or "
        "--vertex-endpoint given as an ID.",
    )
    gcp_region: str = setting(
        _CLUSTER.region,
        key="vertex.region",
        flag="--region",
        commands=REGISTRY,
        help="Region of the Trainer's CustomJob, of the Dataflow jobs, and of a "
        "--model-registry or --vertex-endpoint given as an ID.",
    )
    image: str | None = setting(
        None,
        key="vertex.image",
        commands=("compile",),
        help="Pipeline image built from kubeflow/Dockerfile; every task runs in it.",
    )
    beam_runner: str = setting(
        "direct",
        key="beam.runner",
        commands=("compile",),
        choices=BEAM_RUNNERS,
        help="Where Beam steps run: direct (in the task's container, with the --beam-arg "
        "values or the in-memory defaults), dataflow, or portable (a Flink or Spark job "
        "server). For the last two, --beam-arg values are added to the runner's own "
        "arguments.",
    )
    beam_worker_image: str | None = setting(
        None,
        key="beam.worker_image",
        commands=("compile",),
        help="Image of the Dataflow or portable-runner workers (the beam-worker target of "
        "kubeflow/Dockerfile).",
    )
    beam_temp_location: str | None = setting(
        None,
        key="beam.temp_location",
        commands=("compile",),
        default_text="<pipeline-root>/beam-tmp",
        help="Dataflow temp_location.",
    )
    beam_job_endpoint: str | None = setting(
        None,
        key="beam.job_endpoint",
        commands=("compile",),
        help="host:port of the Flink or Spark Beam job server (--beam-runner portable).",
    )
    # The Vertex AI Model Registry (components/model_registry.py)
    model_registry: str | None = setting(
        None,
        key="vertex.model_registry",
        key_commands=REGISTRY,
        commands=REGISTRY,
        metavar="MODEL",
        help="Vertex AI Model Registry model, projects/P/locations/R/models/ID or an ID in "
        "the project and region: compile's Pusher also uploads each model it pushes as its "
        "new default version (the first push creates it), pointing at the pushed folder on "
        "Cloud Storage; rollback moves its default version alias instead of the serving "
        "folder's versions.",
    )
    serving_container_image: str = setting(
        DEFAULT_SERVING_CONTAINER,
        key="vertex.serving_container_image",
        key_commands=REGISTRY,
        commands=("compile",),
        help="The uploaded model's serving container (--model-registry).",
    )
    vertex_endpoint: str | None = setting(
        None,
        key="vertex.endpoint",
        key_commands=REGISTRY,
        commands=REGISTRY,
        metavar="ENDPOINT",
        help="Vertex AI endpoint, projects/P/locations/R/endpoints/ID or an ID: deploy each "
        "uploaded version (compile), or the version rolled back to (rollback), there with "
        "all of its traffic (--model-registry; the models deployed before stay deployed, "
        "with none).",
    )
    endpoint_machine_type: str = setting(
        DEFAULT_MACHINE_TYPE,
        key="vertex.endpoint_machine_type",
        key_commands=REGISTRY,
        commands=REGISTRY,
        help="Machine type of the deployed model's one replica (--vertex-endpoint).",
    )
    # Not a setting: the definition these came from (a run records it in ML Metadata);
    # configs from the same settings compare equal whatever their source.
    definition_path: str | None = dataclasses.field(default=None, compare=False)
    # Not a setting: the columns the auto preprocessing leaves out as carrying no signal,
    # ((column, why), ...), also in exclude_features, once `resolve_from_data` read the data.
    left_out: tuple[tuple[str, str], ...] | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self):
        config_values.check(self)

    def _under_output(self, given, *parts):
        return os.path.abspath(given or os.path.join(self.output_dir, *parts))

    @property
    def resolved_pipeline_root(self):
        return self._under_output(self.pipeline_root, "pipelines", self.pipeline_name, "root")

    @property
    def resolved_metadata_path(self):
        return self._under_output(
            self.metadata_path, "pipelines", self.pipeline_name, "metadata.sqlite"
        )

    @property
    def resolved_serving_model_dir(self):
        return self._under_output(self.serving_model_dir, "serving_model", self.pipeline_name)

    resolve_from_data = config_values.resolve_from_data
    training_cluster = property(config_values.training_cluster)
    registry_destination = property(config_values.registry_destination)
    blessing_gate = property(config_values.blessing_gate)
    feature_selection_json = property(config_values.feature_selection_json)
    hparams_json = property(config_values.hparams_json)
    trainer_candidates_json = property(config_values.trainer_candidates_json)
