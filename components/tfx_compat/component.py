"""TFX 1.15's StatisticsGen, SchemaGen, ExampleValidator, Transform, Trainer and
ImportSchemaGen: TFX's own component specs (so their parameters and outputs are keyed
as TFX keys them) and TFX 1.15's constructors, run by this kit's executors, since
TFX's import TensorFlow Data Validation, which cannot install here.

An argument that cannot be honoured here is refused, naming it; what is honoured only
in part gets a warning: a Transform module's `stats_options_updater_fn` (never called),
a `custom_config` its `preprocessing_fn` does not take (executor.py), and a Trainer's
`custom_executor_spec` (used, though a `trainer_fn` does not need it).
"""

import logging

from tfx.dsl.components.base import base_beam_component, base_component, executor_spec
from tfx.proto import trainer_pb2, transform_pb2
from tfx.types import channel, component_spec, standard_artifacts, standard_component_specs
from tfx.utils import json_utils

from components import user_code
from components.schema_gen import executor as schema_gen_executor
from components.schema_importer import executor as schema_importer_executor
from components.schema_importer.component import SchemaImporterDriver
from components.statistics_gen import executor as statistics_gen_executor
from components.tfx_compat import executor

log = logging.getLogger(__name__)


def _refuse(component, **given):
    """ValueError naming the first argument in `given` that was set."""
    for name, value in given.items():
        if value:
            raise ValueError(f"{component}({name}=...) is not supported here: {_UNSUPPORTED[name]}")


_UNSUPPORTED = {
    "stats_options": "it is a TFDV StatsOptions, and TFDV cannot install on this stack; "
    "this StatisticsGen computes TFDV's default statistics.",
    "analyzer_cache": "this Transform keeps no analyzer cache; leave it out (every run "
    "analyzes its data afresh).",
}


def _exclude(exclude_splits):
    return json_utils.dumps(list(exclude_splits or []))


def _code_fingerprint(module_file, function_name):
    """The hash of the user's code: part of the cache key, so an edited module runs again."""
    if module_file:
        return user_code.fingerprint(f"{module_file}:{function_name}")
    return user_code.fingerprint(function_name) if function_name else None


class StatisticsGen(base_beam_component.BaseBeamComponent):
    """TFDV-format statistics of each split of `examples` but `exclude_splits`."""

    SPEC_CLASS = standard_component_specs.StatisticsGenSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(statistics_gen_executor.Executor)

    def __init__(self, examples, schema=None, stats_options=None, exclude_splits=None):
        _refuse("StatisticsGen", stats_options=stats_options)
        super().__init__(
            spec=standard_component_specs.StatisticsGenSpec(
                examples=examples,
                schema=schema,
                exclude_splits=_exclude(exclude_splits),
                statistics=channel.Channel(type=standard_artifacts.ExampleStatistics),
            )
        )


class SchemaGen(base_component.BaseComponent):
    """A schema inferred from the train statistics, loosened by the other splits'
    (components/schema_gen/inference.py); required single-valued features get the shape
    [1] with `infer_feature_shape`, as TFDV gives them."""

    SPEC_CLASS = standard_component_specs.SchemaGenSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(schema_gen_executor.Executor)

    def __init__(self, statistics, infer_feature_shape=True, exclude_splits=None):
        super().__init__(
            spec=standard_component_specs.SchemaGenSpec(
                statistics=statistics,
                infer_feature_shape=int(bool(infer_feature_shape)),
                exclude_splits=_exclude(exclude_splits),
                schema=channel.Channel(type=standard_artifacts.Schema),
            )
        )


class ExampleValidator(base_component.BaseComponent):
    """Records each split's anomalies against `schema` in TFDV's format and, as TFX's,
    lets the pipeline go on (the kit's own ExampleValidator gates)."""

    SPEC_CLASS = standard_component_specs.ExampleValidatorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.ExampleValidatorExecutor)

    def __init__(self, statistics, schema, exclude_splits=None):
        super().__init__(
            spec=standard_component_specs.ExampleValidatorSpec(
                statistics=statistics,
                schema=schema,
                exclude_splits=_exclude(exclude_splits),
                anomalies=channel.Channel(type=standard_artifacts.ExampleAnomalies),
            )
        )


class TransformSpec(standard_component_specs.TransformSpec):
    PARAMETERS = {
        **standard_component_specs.TransformSpec.PARAMETERS,
        "code_fingerprint": component_spec.ExecutionParameter(type=str, optional=True),
    }


class Transform(base_beam_component.BaseBeamComponent):
    """Fits `preprocessing_fn` (from `module_file`, or a dotted path) on the analyze
    splits and transforms the others; the schema's shapes decide which features come
    dense, as in TFX.  No statistics of the data before and after (TFDV's)."""

    SPEC_CLASS = TransformSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.TransformExecutor)

    def __init__(
        self,
        examples,
        schema,
        module_file=None,
        preprocessing_fn=None,
        splits_config=None,
        analyzer_cache=None,
        materialize=True,
        force_tf_compat_v1=False,
        custom_config=None,
    ):
        if bool(module_file) == bool(preprocessing_fn):
            raise ValueError(
                "Transform: exactly one of module_file and preprocessing_fn must be given."
            )
        _refuse("Transform", analyzer_cache=analyzer_cache)
        if splits_config is not None and not isinstance(splits_config, transform_pb2.SplitsConfig):
            raise TypeError("Transform(splits_config=...) must be a tfx.proto.SplitsConfig.")
        super().__init__(
            spec=TransformSpec(
                examples=examples,
                schema=schema,
                module_file=module_file,
                preprocessing_fn=preprocessing_fn,
                force_tf_compat_v1=int(bool(force_tf_compat_v1)),
                custom_config=json_utils.dumps(custom_config),
                splits_config=splits_config,
                disable_statistics=1,
                code_fingerprint=_code_fingerprint(
                    module_file, "preprocessing_fn" if module_file else preprocessing_fn
                ),
                transform_graph=channel.Channel(type=standard_artifacts.TransformGraph),
                transformed_examples=(
                    channel.Channel(type=standard_artifacts.Examples) if materialize else None
                ),
            )
        )


class TrainerSpec(standard_component_specs.TrainerSpec):
    PARAMETERS = {
        **standard_component_specs.TrainerSpec.PARAMETERS,
        # TFX 1.15's: the Estimator contract (removed from TFX's spec in 1.16).
        "trainer_fn": component_spec.ExecutionParameter(type=str, optional=True),
        "code_fingerprint": component_spec.ExecutionParameter(type=str, optional=True),
    }


class Trainer(base_component.BaseComponent):
    """Runs the module's `run_fn(fn_args)` or `trainer_fn(fn_args, schema)` (executor.py)
    on this kit's Estimator: the serving model goes to `model` (Format-Serving/), the
    checkpoints and TensorBoard events to `model_run`."""

    SPEC_CLASS = TrainerSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.TrainerExecutor)

    def __init__(
        self,
        examples=None,
        transformed_examples=None,
        transform_graph=None,
        schema=None,
        base_model=None,
        hyperparameters=None,
        module_file=None,
        run_fn=None,
        trainer_fn=None,
        train_args=None,
        eval_args=None,
        custom_config=None,
        custom_executor_spec=None,
    ):
        if [bool(module_file), bool(run_fn), bool(trainer_fn)].count(True) != 1:
            raise ValueError(
                "Trainer: exactly one of module_file, run_fn and trainer_fn must be given."
            )
        if (examples is None) == (transformed_examples is None):
            raise ValueError(
                "Trainer: exactly one of examples and transformed_examples must be given."
            )
        if transformed_examples is not None:
            # TFX 1.15's older name for `examples`, then valid only with a transform graph.
            if transform_graph is None:
                raise ValueError("Trainer: transformed_examples needs transform_graph as well.")
            log.warning("Trainer: transformed_examples is TFX's old name for examples.")
            examples = transformed_examples
        if custom_executor_spec is not None and (
            getattr(custom_executor_spec, "executor_class", None) is not executor.TrainerExecutor
        ):
            log.warning(
                "Trainer(custom_executor_spec=...) replaces this kit's Trainer executor: the "
                "Estimator executor of TFX <= 1.15 is not needed for a trainer_fn here."
            )
        for name, value in (("train_args", train_args), ("eval_args", eval_args)):
            expected = trainer_pb2.TrainArgs if name == "train_args" else trainer_pb2.EvalArgs
            if value is not None and not isinstance(value, expected):
                raise TypeError(f"Trainer({name}=...) must be a tfx.proto.{expected.__name__}.")
        super().__init__(
            spec=TrainerSpec(
                examples=examples,
                transform_graph=transform_graph,
                schema=schema,
                base_model=base_model,
                hyperparameters=hyperparameters,
                module_file=module_file,
                run_fn=run_fn,
                trainer_fn=trainer_fn,
                train_args=train_args or trainer_pb2.TrainArgs(),
                eval_args=eval_args or trainer_pb2.EvalArgs(),
                custom_config=json_utils.dumps(custom_config),
                code_fingerprint=_code_fingerprint(module_file, run_fn or trainer_fn),
                model=channel.Channel(type=standard_artifacts.Model),
                model_run=channel.Channel(type=standard_artifacts.ModelRun),
            ),
            custom_executor_spec=custom_executor_spec,
        )


class ImportSchemaGen(base_component.BaseComponent):
    """Publishes `schema_file` (a Schema text proto) as a Schema artifact."""

    SPEC_CLASS = standard_component_specs.ImportSchemaGenSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(schema_importer_executor.Executor)
    DRIVER_CLASS = SchemaImporterDriver

    def __init__(self, schema_file):
        super().__init__(
            spec=standard_component_specs.ImportSchemaGenSpec(
                schema_file=str(schema_file),
                schema=channel.Channel(type=standard_artifacts.Schema),
            )
        )


# (TFX's module, name): the stand-in for each TFX component whose import fails here.
STAND_INS = {
    ("tfx.components.statistics_gen.component", "StatisticsGen"): StatisticsGen,
    ("tfx.components.schema_gen.component", "SchemaGen"): SchemaGen,
    ("tfx.components.example_validator.component", "ExampleValidator"): ExampleValidator,
    ("tfx.components.transform.component", "Transform"): Transform,
    ("tfx.components.trainer.component", "Trainer"): Trainer,
    ("tfx.components.schema_gen.import_schema_gen.component", "ImportSchemaGen"): ImportSchemaGen,
}
