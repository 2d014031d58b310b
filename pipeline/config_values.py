"""What a `PipelineConfig`'s values mean: their checks and normalisations, run as it is
made, and the objects the components take (training cluster, registry destination, gate).

Each error names the setting (the field) at fault; pipeline/definition.py turns the field
into the definition key that set it.  No TensorFlow import.
"""

import dataclasses
import json
import os
import re
from pathlib import Path

from components.auto import AUTO, transformed_name
from components.example_gen import spans
from components.model_registry import RegistryDestination, resource_name

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
# Training backends a local run can use; the others need artifacts on gs://.
LOCAL_BACKENDS = ("in_process", "local")
BEAM_RUNNERS = ("direct", "dataflow", "portable")

# A pipeline name names folders under the output folder: no separators, no "..".
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
NAME_RULE = "letters, digits, '-', '_' and '.', starting with a letter, digit or '_', no '..'"


def _set(config, name, value):
    object.__setattr__(config, name, value)


def name_of(data_path):
    """A pipeline name from the data file's (or folder's) name, a span pattern's from the
    folder above its first spec ('landing/span-{SPAN}/*.csv' names "landing"); always a
    name by `check_pipeline_name`'s rule (a leading '-' dropped: "-x.csv" names "x")."""
    data_path = str(data_path)
    if spans.is_pattern(data_path):
        data_path = spans.fixed_folder(data_path) or data_path
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(data_path.rstrip("/")).stem)
    return name.strip("_").lstrip("-") or "data"


def check_pipeline_name(name):
    """Raises ValueError, with the rule, for a name that is not a single folder name."""
    if not _NAME.fullmatch(name) or ".." in name:
        raise ValueError(f"pipeline_name {name!r} is not a name: {NAME_RULE}.")


def check(config):
    """Normalises `config`'s values in place (tuples, defaults worked out) and raises
    ValueError for one that cannot work."""
    from components.trainer import length

    length.check(config.train_steps, config.train_epochs)
    if config.eval_steps <= 0:
        raise ValueError(f"eval_steps must be positive, got {config.eval_steps}.")
    if config.vocabulary_min_count < 1:
        raise ValueError(
            f"vocabulary_min_count must be at least 1, got {config.vocabulary_min_count}."
        )
    for name in ("max_bad_row_fraction", "max_unlabeled_row_fraction"):
        if not 0.0 <= getattr(config, name) <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {getattr(config, name)}.")
    from components.example_validator.checks import check_kinds

    check_kinds(config.warn_only_anomalies)
    _check_thresholds(config)
    _set(config, "missing_values", tuple(config.missing_values))
    spans.parse_window(config.data_spans, config.data_path)
    if not config.raw_label_key:
        raise ValueError("raw_label_key: name the CSV column to predict.")
    if not config.pipeline_name:
        _set(config, "pipeline_name", name_of(config.data_path))
    check_pipeline_name(config.pipeline_name)
    if config.preprocessing_fn == AUTO or not config.transformed_label_key:
        _set(config, "transformed_label_key", transformed_name(config.raw_label_key))
    from components.evaluator.tasks import check_classes

    if config.task == AUTO:
        if config.num_classes is not None:
            raise ValueError("num_classes is for task 'multiclass', not 'auto'.")
    elif not (config.task == "multiclass" and config.num_classes is None):
        check_classes(config.task, config.num_classes)
    if config.task != AUTO:
        _ = config.blessing_gate  # raises for a metric the task does not report
    from components.trainer.strategy import NAMES

    if config.strategy not in NAMES:
        raise ValueError(f"strategy must be one of {', '.join(NAMES)}; got {config.strategy!r}.")
    cluster = config.training_cluster  # raises for an unknown backend
    if config.training_backend != "in_process":
        from components.trainer.cluster import replica_counts

        replica_counts(config.strategy, cluster)  # raises for a layout that cannot work
    if not config.hidden_units:
        raise ValueError("hidden_units must name at least one layer.")
    _check_features(config)
    _check_candidates(config)
    _check_canned(config)
    if config.beam_runner not in BEAM_RUNNERS:
        raise ValueError(
            f"beam_runner must be one of {', '.join(BEAM_RUNNERS)}; got {config.beam_runner!r}."
        )
    _ = config.registry_destination  # raises for a model or endpoint it cannot name


def _check_features(config):
    _set(config, "features", tuple(config.features))
    _set(config, "exclude_features", tuple(config.exclude_features))
    chosen = config.features or config.exclude_features
    if config.features and config.exclude_features:
        raise ValueError("features and exclude_features: give one of the two.")
    if chosen and config.preprocessing_fn != AUTO:
        raise ValueError(
            "features/exclude_features choose the auto preprocessing's inputs; a "
            "preprocessing_fn of your own decides which columns it reads."
        )
    if config.raw_label_key in chosen:
        raise ValueError(f"features/exclude_features: {config.raw_label_key!r} is the label.")


def _chooses_a_candidate(config):
    """Whether the Trainer chooses among the auto candidates: the auto build_estimator
    builds the model, and no canned Estimator is named."""
    return config.estimator_fn == AUTO and not config.canned_estimator


def trainer_candidates(config):
    """The candidates the Trainer fits, () when it builds one model: as set (boosted trees
    for every task: a multiclass label's take a Hessian per class, so their cost grows with
    the class count, not its square as with tf.estimator's full Hessian)."""
    if not _chooses_a_candidate(config):
        return ()
    return tuple(config.candidates)


def _check_candidates(config):
    from components.auto.model import CANDIDATES

    _set(config, "candidates", tuple(config.candidates))
    unknown = [c for c in config.candidates if c not in CANDIDATES]
    if unknown or not config.candidates:
        raise ValueError(
            f"candidates must name one or more of {', '.join(CANDIDATES)}; got "
            f"{list(config.candidates)!r}."
        )
    if config.candidates != CANDIDATES and not _chooses_a_candidate(config):
        raise ValueError(
            "candidates choose among the auto models; with canned_estimator or an estimator_fn "
            "of your own there is one model: leave candidates out."
        )
    if len(config.candidates) > 1 and config.warm_start and _chooses_a_candidate(config):
        raise ValueError(
            "warm_start starts one model from the last blessed one; with several candidates "
            "there is no one model: name one candidate (candidates) or a canned estimator."
        )


def _check_canned(config):
    if isinstance(config.canned_args, dict):  # as Python callers give it
        _set(config, "canned_args", json.dumps(config.canned_args, sort_keys=True))
    args = json.loads(config.canned_args)
    if not isinstance(args, dict):
        raise ValueError(f"canned_args must be a JSON object, got {config.canned_args!r}.")
    if config.canned_estimator is None:
        if args:
            raise ValueError("canned_args needs canned_estimator.")
        return
    if config.estimator_fn != AUTO:
        raise ValueError(
            "canned_estimator builds the model: leave estimator_fn 'auto' (or build the "
            "canned estimator in your build_estimator)."
        )
    from components.auto.model import check_canned

    check_canned(config.canned_estimator, args, config.task)


def _check_thresholds(config):
    """Values in (0, 1], columns the schema has (when the schema file is readable here;
    the ExampleValidator checks them against the schema artifact in any case)."""
    from components.example_validator.drift import check_thresholds

    for name in ("drift_thresholds", "skew_thresholds"):  # a dict is taken too, as pairs
        pairs = tuple(check_thresholds(getattr(config, name), None, name).items())
        _set(config, name, pairs)
    if (
        (config.drift_thresholds or config.skew_thresholds)
        and config.schema_path
        and os.path.isfile(config.schema_path)
    ):
        from google.protobuf import text_format
        from tensorflow_metadata.proto.v0 import schema_pb2

        with open(config.schema_path) as f:
            schema = text_format.Parse(f.read(), schema_pb2.Schema())
        columns = [feature.name for feature in schema.feature]
        check_thresholds(config.drift_thresholds, columns, "drift_thresholds")
        check_thresholds(config.skew_thresholds, columns, "skew_thresholds")


def resolve_from_data(config):
    """This configuration with what only the data can say filled in: task "auto" and a
    multiclass class count from the label column (components/auto/data.py); with the auto
    preprocessing and no `features`, the columns without signal added to `exclude_features`
    and named with why in `left_out` (components/auto/columns.py). Raises ValueError,
    naming the columns and the closest one, when the label is not a column (of data readable
    here), and when the label has no value at all."""
    from components.auto.data import check_column, resolve_task

    data = spans.resolved_files(config.data_path, config.data_spans)  # a span pattern's window now
    for column in config.features or config.exclude_features:
        check_column(data, column, "feature")
    task, num_classes = resolve_task(
        data,
        config.raw_label_key,
        config.task,
        config.num_classes,
        config.missing_values,
    )
    changes = {}
    if (task, num_classes) != (config.task, config.num_classes):
        changes.update(task=task, num_classes=num_classes)
    if config.left_out is None:
        changes.update(_left_out(config, data))
    return dataclasses.replace(config, **changes) if changes else config


def _left_out(config, data):
    """`left_out` and `exclude_features` with the columns without signal in `data` (the
    data path, or the files of its window) (none when the user chose the features, or the
    preprocessing is theirs)."""
    if config.preprocessing_fn != AUTO or config.features:
        return {"left_out": ()}
    from components.auto.columns import columns_without_signal
    from components.auto.data import check_column

    found = columns_without_signal(data, config.raw_label_key, config.missing_values)
    left_out = tuple((name, why) for name, why in found if name not in config.exclude_features)
    excluded = (*config.exclude_features, *(name for name, _ in left_out))
    if left_out and len(excluded) == len(check_column(data, config.raw_label_key)) - 1:
        raise ValueError(
            "no column but the label carries a signal: "
            + ", ".join(f"{name} ({why})" for name, why in left_out)
            + "; name the columns to use anyway (features)."
        )
    return {"left_out": left_out, "exclude_features": excluded}


def training_cluster(config):
    from components.trainer.cluster import TrainingCluster

    return TrainingCluster(
        backend=config.training_backend,
        machine_type=config.machine_type,
        accelerator_type=config.accelerator_type,
        accelerator_count=config.accelerator_count,
        workers=config.workers,
        parameter_servers=config.parameter_servers,
        ps_machine_type=config.ps_machine_type,
        image=config.image,
        project=config.gcp_project,
        region=config.gcp_region,
        service_account=config.training_service_account,
    )


def registry_destination(config):
    """Where the Pusher uploads (components/model_registry.py), or None."""
    if config.model_registry is None:
        if config.vertex_endpoint is not None:
            raise ValueError("vertex_endpoint: deploys a model_registry version; give both.")
        return None
    try:
        return RegistryDestination(
            model=resource_name(
                config.model_registry, "models", config.gcp_project, config.gcp_region
            ),
            pipeline_name=config.pipeline_name,
            serving_container_image=config.serving_container_image,
            endpoint=config.vertex_endpoint
            and resource_name(
                config.vertex_endpoint, "endpoints", config.gcp_project, config.gcp_region
            ),
            machine_type=config.endpoint_machine_type,
        )
    except ValueError as e:
        raise ValueError(f"model_registry/vertex_endpoint: {e}") from None


def blessing_gate(config):
    from components.evaluator.tasks import resolve_gate

    return resolve_gate(
        config.task,
        config.blessing_metric,
        config.blessing_threshold,
        config.blessing_max_change,
        config.blessing_max_relative_change,
    )


def feature_selection_json(config):
    """The auto preprocessing's column choice for the Transform; None: every column."""
    if config.features:
        return json.dumps({"features": list(config.features)})
    if config.exclude_features:
        return json.dumps({"exclude": list(config.exclude_features)})
    return None


def hparams_json(config):
    """The `hparams` a build_estimator receives: the hidden units, and the canned Estimator
    the auto one builds, when one is named."""
    hparams = {"hidden_units": list(config.hidden_units)}
    if config.canned_estimator:
        hparams.update(canned=config.canned_estimator, canned_args=json.loads(config.canned_args))
    return json.dumps(hparams, sort_keys=True)


def trainer_candidates_json(config):
    """`trainer_candidates` as the Trainer's `candidates` parameter (None: one model)."""
    return json.dumps(list(trainer_candidates(config))) if trainer_candidates(config) else None
