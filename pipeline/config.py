"""All pipeline settings in one place, passed down explicitly.

Only the data and the label column are required: every other setting defaults to zero
code (schema inferred, preprocessing and model built from it, task from the label's values)
on one machine (SQLite ML Metadata, local folders, Beam's in-memory runner).  A pipeline
definition (pipeline/definition.py, definitions/*.toml) sets any of them per model.
"""

import dataclasses
import json
import os
import re
from pathlib import Path

from components.auto import AUTO, transformed_name
from components.example_gen.missing import DEFAULT_MISSING_VALUES
from components.model_registry import (
    DEFAULT_MACHINE_TYPE,
    DEFAULT_SERVING_CONTAINER,
    RegistryDestination,
    resource_name,
)

REPO_ROOT = Path(__file__).resolve().parent.parent

# FnApiRunner is the DirectRunner's own batch engine, named directly: the
# DirectRunner of Beam 2.77 first tries to download the Prism runner.
DEFAULT_BEAM_ARGS = (
    "--runner=FnApiRunner",
    "--direct_running_mode=in_memory",
    "--direct_num_workers=1",
)
# Added to ExampleGen's Beam arguments when the pipeline's are the defaults and its input is
# more than one range (components/example_gen/executor.py RANGE_BYTES): its ranges then run
# on two threads. 1M rows on 2 cores: 16 s against 23 s. The other components keep one
# worker: threads made Transform 1.3x slower and the Evaluator ran out of 24 GB of memory,
# and worker processes each import TensorFlow again (ExampleGen on 1M rows: 90 s).
EXAMPLE_GEN_THREADS_BEAM_ARGS = ("--direct_running_mode=multi_threading", "--direct_num_workers=2")
BEAM_RUNNERS = ("direct", "dataflow", "portable")
DEFAULT_TRAIN_STEPS = 2000
# Training backends a local run can use; the others need artifacts on gs://.
LOCAL_BACKENDS = ("in_process", "local")


def _name_of(data_path):
    """A pipeline name from the data file's (or folder's) name."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(str(data_path).rstrip("/")).stem).strip("_")
    return name or "data"


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    # A CSV file, or a folder of them.
    data_path: str
    # The CSV column to predict.
    raw_label_key: str
    # "": named after the data file (or folder).
    pipeline_name: str = ""
    # A tensorflow_metadata Schema text proto; it types the CSV columns and is what the data
    # is validated against. None: ExampleGen types the columns from the data and SchemaGen
    # infers the schema from the train split's statistics (components/schema_gen).
    schema_path: str | None = None
    # Generated output; each folder defaults to one under `output_dir`.
    output_dir: str = "."
    pipeline_root: str | None = None
    metadata_path: str | None = None
    serving_model_dir: str | None = None

    # ExampleGen
    split_key: str = ""
    split_ratios: str = '{"train": 2, "eval": 1}'
    max_bad_row_fraction: float = 0.0
    # CSV cells that mean "no value" (an absent feature), in every column, with or without a
    # schema; exact texts. Without "" an empty cell is an empty string (a bad number).
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES
    # ExampleValidator: anomaly kinds (components/example_validator/checks.py KINDS) that are
    # recorded and shown in the summary but do not stop the run before the Trainer.
    warn_only_anomalies: tuple[str, ...] = ()
    # Drift of the train split against the training data of the latest blessed model, and
    # skew of the eval split against the train split: (column, threshold) pairs, a column
    # "*" for every schema column without its own pair. String columns are measured by the
    # L-infinity distance of value shares, numeric ones by the Jensen-Shannon divergence
    # (components/example_validator/drift.py); both lie in [0, 1]. Empty: not checked.
    drift_thresholds: tuple[tuple[str, float], ...] = ()
    skew_thresholds: tuple[tuple[str, float], ...] = ()
    # Transform: a code reference (components/user_code.py: `package.module.function` or
    # `file.py:function`), or "auto": built from the schema (components/auto), every output
    # `<column>_xf`; label_key is then `<raw_label_key>_xf` whatever is given.
    preprocessing_fn: str = AUTO
    # With the auto preprocessing: the raw columns it makes features of (empty: every
    # column but the label), or those it leaves out; one of the two at most.
    features: tuple[str, ...] = ()
    exclude_features: tuple[str, ...] = ()
    # Trainer: a code reference to a build_estimator, or "auto": wide and deep over the
    # transform output, by task.
    estimator_fn: str = AUTO
    # With estimator_fn "auto": another canned Estimator by class name
    # (components/auto/model.py CANNED), and its keyword arguments as a JSON object.
    canned_estimator: str | None = None
    canned_args: str = "{}"
    # The label among the preprocessing_fn's outputs; "": `<raw_label_key>_xf`.
    label_key: str = ""
    # Training length, one of the two: steps (None: DEFAULT_TRAIN_STEPS unless epochs are
    # given), or passes over the train split, as many steps as that takes at the global
    # batch size (the summary shows the count).
    train_steps: int | None = None
    train_epochs: float | None = None
    eval_steps: int = 50
    train_batch_size: int = 64
    eval_batch_size: int = 128
    save_checkpoints_steps: int = 500
    hidden_units: tuple[int, ...] = (64, 32)
    random_seed: int = 42
    warm_start: bool = False
    # tf.distribute strategy by name (components/trainer/strategy.py); "auto"
    # decides from TF_CONFIG and the visible devices.
    strategy: str = "auto"
    # Where the Trainer trains (components/trainer/cluster.py): "in_process",
    # "local" (chief, workers and ps as processes on 127.0.0.1), "vertex"
    # (a Vertex AI CustomJob) or "kubeflow" (a TFJob).  The machines below
    # apply to the last three, laid out as the strategy needs.
    training_backend: str = "in_process"
    workers: int = 2  # training machines, chief included
    parameter_servers: int = 1
    machine_type: str = "n1-standard-8"
    accelerator_type: str | None = None
    accelerator_count: int = 0
    ps_machine_type: str = "n1-standard-4"
    training_service_account: str | None = None  # vertex: what the CustomJob runs as
    # Evaluator (components/evaluator/tasks.py): the task sets the metrics and the
    # default blessing gate; each blessing_* setting given replaces the default's.
    # binary, multiclass, regression, or auto: decided from the label column's values when
    # the pipeline is built (components/auto/data.py, `resolve_from_data`).
    task: str = AUTO
    # multiclass only; None: the label column's distinct values, counted when it is built.
    num_classes: int | None = None
    slice_features: tuple[str, ...] = ()
    blessing_metric: str | None = None
    blessing_threshold: float | None = None  # worst acceptable value; inf: no check
    blessing_max_change: float | None = None  # vs the latest blessed model; inf: no check
    blessing_max_relative_change: float | None = None
    # Orchestration
    beam_pipeline_args: tuple[str, ...] = DEFAULT_BEAM_ARGS
    enable_cache: bool = True
    # Vertex AI (`python -m pipeline compile/submit/schedule`, pipeline/vertex.py)
    gcp_project: str | None = None
    gcp_region: str = "us-central1"
    # The pipeline image built from kubeflow/Dockerfile; every task runs in it.
    image: str | None = None
    # Where Beam steps run: "direct" in the task's container (beam_pipeline_args
    # as given), "dataflow" or "portable" (a Flink or Spark job server at
    # beam_job_endpoint), whose workers run beam_worker_image; for those two,
    # beam_pipeline_args other than the local defaults are appended.
    beam_runner: str = "direct"
    beam_worker_image: str | None = None
    beam_temp_location: str | None = None  # Dataflow; default <pipeline_root>/beam-tmp
    beam_job_endpoint: str | None = None
    # Vertex AI Model Registry (components/model_registry.py): a model, as
    # projects/P/locations/R/models/ID or an ID in gcp_project and gcp_region. The Pusher
    # uploads each model it pushes (to serving_model_dir on /gcs/) as that model's new
    # default version, served by serving_container_image, and deploys it to vertex_endpoint
    # (an endpoint's resource name or ID), if given, on one endpoint_machine_type replica
    # with all of its traffic; `rollback` moves the default version (and the traffic) back.
    model_registry: str | None = None
    serving_container_image: str = DEFAULT_SERVING_CONTAINER
    vertex_endpoint: str | None = None
    endpoint_machine_type: str = DEFAULT_MACHINE_TYPE
    # The pipeline definition these settings came from, if any (build_config sets it): a
    # local run records its path and sha256 in ML Metadata (`python -m pipeline runs`).
    # Not a setting: configs from the same settings compare equal whatever their source.
    definition_path: str | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self):
        if self.train_epochs is None:
            if self.train_steps is None:
                object.__setattr__(self, "train_steps", DEFAULT_TRAIN_STEPS)
        elif self.train_steps is not None:
            raise ValueError("train_steps and train_epochs: give one of the two.")
        elif not self.train_epochs > 0:
            raise ValueError(f"train_epochs must be positive, got {self.train_epochs}.")
        if (self.train_steps is not None and self.train_steps <= 0) or self.eval_steps <= 0:
            raise ValueError("train_steps and eval_steps must be positive.")
        if not 0.0 <= self.max_bad_row_fraction <= 1.0:
            raise ValueError(
                f"max_bad_row_fraction must be in [0, 1], got {self.max_bad_row_fraction}."
            )
        from components.example_validator.checks import check_kinds

        check_kinds(self.warn_only_anomalies)
        self._check_thresholds()
        object.__setattr__(self, "missing_values", tuple(self.missing_values))
        if not self.raw_label_key:
            raise ValueError("raw_label_key: name the CSV column to predict.")
        if not self.pipeline_name:
            object.__setattr__(self, "pipeline_name", _name_of(self.data_path))
        if self.preprocessing_fn == AUTO or not self.label_key:
            object.__setattr__(self, "label_key", transformed_name(self.raw_label_key))
        from components.evaluator.tasks import check_classes

        if self.task == AUTO:
            if self.num_classes is not None:
                raise ValueError("num_classes is for task 'multiclass', not 'auto'.")
        elif not (self.task == "multiclass" and self.num_classes is None):
            check_classes(self.task, self.num_classes)
        if self.task != AUTO:
            _ = self.blessing_gate  # raises for a metric the task does not report
        from components.trainer.strategy import NAMES

        if self.strategy not in NAMES:
            raise ValueError(f"strategy must be one of {', '.join(NAMES)}; got {self.strategy!r}.")
        cluster = self.training_cluster  # raises for an unknown backend
        if self.training_backend != "in_process":
            from components.trainer.cluster import replica_counts

            replica_counts(self.strategy, cluster)  # raises for a layout that cannot work
        if not self.hidden_units:
            raise ValueError("hidden_units must name at least one layer.")
        self._check_features()
        self._check_canned()
        if self.beam_runner not in BEAM_RUNNERS:
            raise ValueError(
                f"beam_runner must be one of {', '.join(BEAM_RUNNERS)}; got {self.beam_runner!r}."
            )
        _ = self.registry_destination  # raises for a model or endpoint it cannot name

    def resolve_from_data(self):
        """This configuration with what only the data can say filled in: task "auto" and a
        multiclass class count from the label column (components/auto/data.py). Raises
        ValueError, naming the columns and the closest one, when the label is not a column
        (of data readable here), and, with the auto preprocessing, when a row lacks a label."""
        from components.auto.data import check_column, resolve_task

        for column in self.features or self.exclude_features:
            check_column(self.data_path, column, "feature")
        task, num_classes = resolve_task(
            self.data_path,
            self.raw_label_key,
            self.task,
            self.num_classes,
            self.missing_values,
            require_labels=self.preprocessing_fn == AUTO,
        )
        if (task, num_classes) == (self.task, self.num_classes):
            return self
        return dataclasses.replace(self, task=task, num_classes=num_classes)

    def _check_features(self):
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "exclude_features", tuple(self.exclude_features))
        chosen = self.features or self.exclude_features
        if self.features and self.exclude_features:
            raise ValueError("features and exclude_features: give one of the two.")
        if chosen and self.preprocessing_fn != AUTO:
            raise ValueError(
                "features/exclude_features choose the auto preprocessing's inputs; a "
                "preprocessing_fn of your own decides which columns it reads."
            )
        if self.raw_label_key in chosen:
            raise ValueError(f"features/exclude_features: {self.raw_label_key!r} is the label.")

    def _check_canned(self):
        if isinstance(self.canned_args, dict):  # as Python callers give it
            object.__setattr__(self, "canned_args", json.dumps(self.canned_args, sort_keys=True))
        args = json.loads(self.canned_args)
        if not isinstance(args, dict):
            raise ValueError(f"canned_args must be a JSON object, got {self.canned_args!r}.")
        if self.canned_estimator is None:
            if args:
                raise ValueError("canned_args needs canned_estimator.")
            return
        if self.estimator_fn != AUTO:
            raise ValueError(
                "canned_estimator builds the model: leave estimator_fn 'auto' (or build the "
                "canned estimator in your build_estimator)."
            )
        from components.auto.model import check_canned

        check_canned(self.canned_estimator, args, self.task)

    def _check_thresholds(self):
        """Values in (0, 1], columns the schema has (when the schema file is readable here;
        the ExampleValidator checks them against the schema artifact in any case)."""
        from components.example_validator.drift import check_thresholds

        for name in ("drift_thresholds", "skew_thresholds"):  # a dict is taken too, as pairs
            pairs = tuple(check_thresholds(getattr(self, name), None, name).items())
            object.__setattr__(self, name, pairs)
        if (
            (self.drift_thresholds or self.skew_thresholds)
            and self.schema_path
            and os.path.isfile(self.schema_path)
        ):
            from google.protobuf import text_format
            from tensorflow_metadata.proto.v0 import schema_pb2

            with open(self.schema_path) as f:
                schema = text_format.Parse(f.read(), schema_pb2.Schema())
            columns = [feature.name for feature in schema.feature]
            check_thresholds(self.drift_thresholds, columns, "drift_thresholds")
            check_thresholds(self.skew_thresholds, columns, "skew_thresholds")

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

    @property
    def training_cluster(self):
        from components.trainer.cluster import TrainingCluster

        return TrainingCluster(
            backend=self.training_backend,
            machine_type=self.machine_type,
            accelerator_type=self.accelerator_type,
            accelerator_count=self.accelerator_count,
            workers=self.workers,
            parameter_servers=self.parameter_servers,
            ps_machine_type=self.ps_machine_type,
            image=self.image,
            project=self.gcp_project,
            region=self.gcp_region,
            service_account=self.training_service_account,
        )

    @property
    def registry_destination(self):
        """Where the Pusher uploads (components/model_registry.py), or None."""
        if self.model_registry is None:
            if self.vertex_endpoint is not None:
                raise ValueError("vertex_endpoint: deploys a model_registry version; give both.")
            return None
        try:
            return RegistryDestination(
                model=resource_name(
                    self.model_registry, "models", self.gcp_project, self.gcp_region
                ),
                pipeline_name=self.pipeline_name,
                serving_container_image=self.serving_container_image,
                endpoint=self.vertex_endpoint
                and resource_name(
                    self.vertex_endpoint, "endpoints", self.gcp_project, self.gcp_region
                ),
                machine_type=self.endpoint_machine_type,
            )
        except ValueError as e:
            raise ValueError(f"model_registry/vertex_endpoint: {e}") from None

    @property
    def blessing_gate(self):
        from components.evaluator.tasks import resolve_gate

        return resolve_gate(
            self.task,
            self.blessing_metric,
            self.blessing_threshold,
            self.blessing_max_change,
            self.blessing_max_relative_change,
        )

    @property
    def feature_selection_json(self):
        """The auto preprocessing's column choice for the Transform; None: every column."""
        if self.features:
            return json.dumps({"features": list(self.features)})
        if self.exclude_features:
            return json.dumps({"exclude": list(self.exclude_features)})
        return None

    @property
    def hparams_json(self):
        hparams = {"hidden_units": list(self.hidden_units)}
        if self.canned_estimator:
            hparams.update(canned=self.canned_estimator, canned_args=json.loads(self.canned_args))
        return json.dumps(hparams, sort_keys=True)
