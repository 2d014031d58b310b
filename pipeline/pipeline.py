"""`create_pipeline`: the one place where components are wired together."""

import os

from tfx.dsl.components.common.resolver import Resolver
from tfx.dsl.input_resolution.strategies.latest_blessed_model_strategy import (
    LatestBlessedModelStrategy,
)
from tfx.orchestration import metadata
from tfx.orchestration import pipeline as tfx_pipeline
from tfx.types import channel, standard_artifacts

from components import user_code
from components.auto import AUTO
from components.evaluator.component import Evaluator
from components.example_gen import ExampleGen
from components.example_gen.executor import RANGE_BYTES
from components.example_gen.spans import is_pattern
from components.example_validator.component import ExampleValidator
from components.model_registry import gcs_uri
from components.pusher import Pusher
from components.schema_gen import SchemaGen
from components.schema_importer import SchemaImporter
from components.statistics_gen.component import StatisticsGen
from components.trainer.component import Trainer
from components.transform import Transform
from pipeline.config import (
    DEFAULT_BEAM_ARGS,
    EXAMPLE_GEN_THREADS_BEAM_ARGS,
    LOCAL_BACKENDS,
    REPO_ROOT,
)


def _code_fingerprint(reference):
    """The hash of the code `reference` names, so that a changed module is not served from
    the cache. A relative file reference is one in the pipeline image, relative to the
    repository root (pipeline/vertex.py)."""
    if user_code.is_file_reference(reference) and not os.path.isabs(reference):
        reference = str(REPO_ROOT / reference)
    return user_code.fingerprint(reference)


def _local_input_bytes(path):
    """Bytes of the CSV input at `path` when it is on this machine, else None."""
    if os.path.isdir(path):
        return sum(
            entry.stat().st_size for entry in os.scandir(path) if entry.name.endswith(".csv")
        )
    return os.path.getsize(path) if os.path.isfile(path) else None


def data_components(config):
    """(SchemaImporter or None, ExampleGen, StatisticsGen, SchemaGen or None) for `config`.

    A given schema file types the CSV columns and is the contract; without one, ExampleGen
    types the columns from the data and SchemaGen infers the schema from the train
    statistics."""
    schema_importer = SchemaImporter(schema_file=config.schema_path) if config.schema_path else None
    given_schema = schema_importer.outputs["schema"] if schema_importer else None
    example_gen = ExampleGen(
        input_base=config.data_path,
        data_spans=config.data_spans,
        schema=given_schema,
        split_key=config.split_key,
        split_ratios=config.split_ratios,
        max_bad_row_fraction=config.max_bad_row_fraction,
        missing_values=config.missing_values,
        raw_label_key=config.raw_label_key,
        max_unlabeled_row_fraction=config.max_unlabeled_row_fraction,
    )
    default_beam = tuple(config.beam_pipeline_args) == DEFAULT_BEAM_ARGS
    if default_beam and (_local_input_bytes(config.data_path) or 0) > RANGE_BYTES:
        example_gen.executor_spec.add_beam_pipeline_args(list(EXAMPLE_GEN_THREADS_BEAM_ARGS))
    statistics_gen = StatisticsGen(examples=example_gen.outputs["examples"], schema=given_schema)
    schema_gen = (
        None if schema_importer else SchemaGen(statistics=statistics_gen.outputs["statistics"])
    )
    return schema_importer, example_gen, statistics_gen, schema_gen


def _latest_blessed_model_resolver():
    return Resolver(
        strategy_class=LatestBlessedModelStrategy,
        model=channel.Channel(type=standard_artifacts.Model),
        model_blessing=channel.Channel(type=standard_artifacts.ModelBlessing),
    ).with_id("latest_blessed_model_resolver")


def _validation_and_transform(config, example_gen, statistics_gen, schema, latest_blessed):
    """(ExampleValidator, Transform) over the data components' outputs."""
    auto_transform = config.preprocessing_fn == AUTO
    # Drift baseline: the training statistics the latest blessed model carries (the Trainer
    # copies them into its Model artifact), which works wherever the stock resolver does.
    example_validator = ExampleValidator(
        statistics=statistics_gen.outputs["statistics"],
        schema=schema,
        raw_label_key=config.raw_label_key,
        warn_only=config.warn_only_anomalies,
        baseline_model=latest_blessed.outputs["model"] if config.drift_thresholds else None,
        drift_thresholds=config.drift_thresholds,
        skew_thresholds=config.skew_thresholds,
    )
    transform = Transform(
        examples=example_gen.outputs["examples"],
        schema=schema,
        preprocessing_fn=config.preprocessing_fn,
        code_fingerprint=_code_fingerprint(config.preprocessing_fn),
        raw_label_key=config.raw_label_key if auto_transform else None,
        task=config.task if auto_transform else None,
        feature_selection=config.feature_selection_json if auto_transform else None,
        vocabulary_min_count=config.vocabulary_min_count if auto_transform else None,
    )
    return example_validator, transform


def _trainer(config, transform, statistics_gen, latest_blessed):
    return Trainer(
        examples=transform.outputs["transformed_examples"],
        transform_graph=transform.outputs["transform_graph"],
        base_model=latest_blessed.outputs["model"] if config.warm_start else None,
        statistics=statistics_gen.outputs["statistics"],
        estimator_fn=config.estimator_fn,
        code_fingerprint=_code_fingerprint(config.estimator_fn),
        task=config.task,
        transformed_label_key=config.transformed_label_key,
        raw_label_key=config.raw_label_key,
        train_steps=config.train_steps,
        train_epochs=config.train_epochs,
        eval_steps=config.eval_steps,
        train_batch_size=config.train_batch_size,
        eval_batch_size=config.eval_batch_size,
        save_checkpoints_steps=config.save_checkpoints_steps,
        random_seed=config.random_seed,
        hparams=config.hparams_json,
        candidates=config.trainer_candidates_json,
        cross_validation_below_rows=config.cross_validation_below_rows,
        warm_start=int(config.warm_start),
        strategy=config.strategy,
        training_cluster=config.training_cluster.to_json(),
    )


def _evaluator_and_pusher(config, example_gen, trainer, latest_blessed):
    """(Evaluator, Pusher) of the trained model; no baseline without `latest_blessed`."""
    evaluator = Evaluator(
        examples=example_gen.outputs["examples"],
        model=trainer.outputs["model"],
        baseline_model=latest_blessed.outputs["model"] if latest_blessed is not None else None,
        task=config.task,
        transformed_label_key=config.transformed_label_key,
        gate=config.blessing_gate,
        slice_features=tuple(config.slice_features),
        num_classes=config.num_classes,
    )
    registry = config.registry_destination
    if registry is not None:
        gcs_uri(config.resolved_serving_model_dir)  # the registry reads only Cloud Storage
    # The examples: their fingerprint labels a registry version; their spans say whether
    # there is anything newer than the served model's to push (components/pusher).
    spans_read = is_pattern(config.data_path)
    pusher = Pusher(
        model=trainer.outputs["model"],
        model_blessing=evaluator.outputs["blessing"],
        push_destination=config.resolved_serving_model_dir,
        model_registry=registry and registry.to_json(),
        examples=example_gen.outputs["examples"] if registry or spans_read else None,
    )
    return evaluator, pusher


def create_components(config, resolver=True):
    """Fresh component objects (a `Pipeline` cannot share them with another).

    `resolver=False` is for orchestrators that cannot run TFX's resolver (open-source
    Kubeflow Pipelines): no latest blessed model, so no warm start, no drift baseline and
    an Evaluator without a baseline, whose change thresholds then do not apply."""
    # The task and class count the Evaluator's configuration needs, when only the data says.
    config = config.resolve_from_data()
    schema_importer, example_gen, statistics_gen, schema_gen = data_components(config)
    schema = (schema_importer or schema_gen).outputs["schema"]
    if not resolver and (config.warm_start or config.drift_thresholds):
        raise ValueError("warm_start and drift_thresholds need the latest blessed model.")
    latest_blessed = _latest_blessed_model_resolver() if resolver else None
    example_validator, transform = _validation_and_transform(
        config, example_gen, statistics_gen, schema, latest_blessed
    )
    trainer = _trainer(config, transform, statistics_gen, latest_blessed)
    # The gate: a failed validation fails the run before the Trainer, which uses no output of it.
    trainer.add_upstream_node(example_validator)
    evaluator, pusher = _evaluator_and_pusher(config, example_gen, trainer, latest_blessed)
    nodes = [
        schema_importer,
        example_gen,
        statistics_gen,
        schema_gen,
        example_validator,
        transform,
        latest_blessed,
        trainer,
        evaluator,
        pusher,
    ]
    return [node for node in nodes if node is not None]


def create_pipeline(config, metadata_connection_config=None, components=None):
    """The pipeline `config` describes (or of only `components`, made for it); SQLite
    metadata unless a connection is given."""
    if config.training_backend not in LOCAL_BACKENDS:
        raise ValueError(
            f"training_backend {config.training_backend!r} runs tasks on other machines, "
            "which cannot read this run's local artifacts: compile the pipeline for Vertex "
            "AI instead (`python -m pipeline compile`)."
        )
    if metadata_connection_config is None:
        metadata_connection_config = metadata.sqlite_metadata_connection_config(
            config.resolved_metadata_path
        )
    return tfx_pipeline.Pipeline(
        pipeline_name=config.pipeline_name,
        pipeline_root=config.resolved_pipeline_root,
        components=create_components(config) if components is None else components,
        enable_cache=config.enable_cache,
        metadata_connection_config=metadata_connection_config,
        beam_pipeline_args=list(config.beam_pipeline_args),
    )
