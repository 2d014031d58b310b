"""Trainer: an Estimator trained on transformed examples, exported for serving."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.trainer import executor


class TrainerSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # A code reference (components/user_code.py) to `build_estimator(run_config,
        # hparams, warm_start_from)`, which may also declare keywords tft_output,
        # transformed_label_key, task and train_rows (executor.build_estimator), or "auto": the best of the auto
        # candidates over the transform output, head by `task` (components/auto/model.py,
        # components/trainer/candidates.py).
        "estimator_fn": component_spec.ExecutionParameter(type=str),
        # The hash of estimator_fn's module: part of the cache key (see Transform's).
        "code_fingerprint": component_spec.ExecutionParameter(type=str, optional=True),
        "task": component_spec.ExecutionParameter(type=str, optional=True),
        # The label as the model sees it, and the raw feature it comes from
        # (left out of the serving signature's input).
        "transformed_label_key": component_spec.ExecutionParameter(type=str),
        "raw_label_key": component_spec.ExecutionParameter(type=str),
        # Neither steps nor epochs: stop early on a held-out part of the train split
        # (components/trainer/length.py).
        "train_steps": component_spec.ExecutionParameter(type=int, optional=True),
        # When given, replaces train_steps: passes over the train split (its row count from
        # `statistics`), as steps at the global batch size.
        "train_epochs": component_spec.ExecutionParameter(type=float, optional=True),
        "eval_steps": component_spec.ExecutionParameter(type=int),
        "train_batch_size": component_spec.ExecutionParameter(type=int),
        "eval_batch_size": component_spec.ExecutionParameter(type=int),
        "save_checkpoints_steps": component_spec.ExecutionParameter(type=int),
        "random_seed": component_spec.ExecutionParameter(type=int),
        # JSON object handed to `estimator_fn` as `hparams`.
        "hparams": component_spec.ExecutionParameter(type=str),
        # JSON list of the auto candidates to fit and choose among on the held-out part
        # (components/auto/model.py CANDIDATES); empty or none: the one model estimator_fn
        # builds.
        "candidates": component_spec.ExecutionParameter(type=str, optional=True),
        # Below this many train rows the candidates are compared by cross-validation
        # (components/trainer/length.py); none: CROSS_VALIDATION_BELOW_ROWS.
        "cross_validation_below_rows": component_spec.ExecutionParameter(type=int, optional=True),
        # 1: initialize from `base_model` when one is given.
        "warm_start": component_spec.ExecutionParameter(type=int),
        # A name from components.trainer.strategy.NAMES; "auto" decides from
        # TF_CONFIG and the devices the Trainer sees.
        "strategy": component_spec.ExecutionParameter(type=str),
        # components.trainer.cluster.TrainingCluster as JSON: where training
        # runs (this process, local processes, Vertex AI, a TFJob) and on what.
        "training_cluster": component_spec.ExecutionParameter(type=str, optional=True),
    }
    INPUTS = {
        "examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
        "transform_graph": component_spec.ChannelParameter(type=standard_artifacts.TransformGraph),
        "base_model": component_spec.ChannelParameter(type=standard_artifacts.Model, optional=True),
        # StatisticsGen's output: the train split's statistics are copied into the Model
        # artifact (DataStatistics/), so a model carries the statistics of its training data
        # and the ExampleValidator of a later run measures drift against them.
        "statistics": component_spec.ChannelParameter(
            type=standard_artifacts.ExampleStatistics, optional=True
        ),
    }
    OUTPUTS = {
        "model": component_spec.ChannelParameter(type=standard_artifacts.Model),
        "model_run": component_spec.ChannelParameter(type=standard_artifacts.ModelRun),
    }


class Trainer(base_component.BaseComponent):
    """Trains `estimator_fn`'s Estimator; checkpoints and TensorBoard events go to
    `model_run`, the serving SavedModel to `model` (Format-Serving/), next to the training
    data's statistics (DataStatistics/) when `statistics` is given."""

    SPEC_CLASS = TrainerSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(
        self,
        examples,
        transform_graph,
        estimator_fn,
        transformed_label_key,
        raw_label_key,
        train_steps,
        eval_steps,
        *,
        # No defaults of its own: the pipeline passes its settings' (pipeline/config.py).
        train_batch_size,
        eval_batch_size,
        save_checkpoints_steps,
        random_seed,
        hparams,
        warm_start,
        strategy,
        training_cluster=None,
        base_model=None,
        statistics=None,
        task=None,
        code_fingerprint=None,
        train_epochs=None,
        candidates=None,
        cross_validation_below_rows=None,
    ):
        super().__init__(
            spec=TrainerSpec(
                examples=examples,
                transform_graph=transform_graph,
                base_model=base_model,
                statistics=statistics,
                estimator_fn=estimator_fn,
                code_fingerprint=code_fingerprint,
                task=task,
                transformed_label_key=transformed_label_key,
                raw_label_key=raw_label_key,
                train_steps=train_steps,
                train_epochs=train_epochs,
                eval_steps=eval_steps,
                train_batch_size=train_batch_size,
                eval_batch_size=eval_batch_size,
                save_checkpoints_steps=save_checkpoints_steps,
                random_seed=random_seed,
                hparams=hparams,
                candidates=candidates,
                cross_validation_below_rows=cross_validation_below_rows,
                warm_start=warm_start,
                strategy=strategy,
                training_cluster=training_cluster,
                model=channel.Channel(type=standard_artifacts.Model),
                model_run=channel.Channel(type=standard_artifacts.ModelRun),
            )
        )
