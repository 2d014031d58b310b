"""Evaluator component: TFX's Evaluator interface (examples, model, baseline_model in;
evaluation and blessing out, in TFMA's format), with the metrics computed a batch at a time."""

import dataclasses
import json

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.evaluator import executor
from components.evaluator.tasks import TASKS, BlessingGate, check_classes


class EvaluatorSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        "task": component_spec.ExecutionParameter(type=str),
        "num_classes": component_spec.ExecutionParameter(type=int, optional=True),
        # The transformed label, as the model's `transform_features` signature names it.
        "transformed_label_key": component_spec.ExecutionParameter(type=str),
        # JSON list of raw features to slice the metrics by, besides the overall slice.
        "slice_features": component_spec.ExecutionParameter(type=str),
        # JSON of a `BlessingGate` (components/evaluator/tasks.py).
        "blessing_gate": component_spec.ExecutionParameter(type=str),
    }
    INPUTS = {
        "examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
        "model": component_spec.ChannelParameter(type=standard_artifacts.Model),
        "baseline_model": component_spec.ChannelParameter(
            type=standard_artifacts.Model, optional=True
        ),
    }
    OUTPUTS = {
        "evaluation": component_spec.ChannelParameter(type=standard_artifacts.ModelEvaluation),
        "blessing": component_spec.ChannelParameter(type=standard_artifacts.ModelBlessing),
    }


class Evaluator(base_component.BaseComponent):
    """Scores the eval split with `model` and `baseline_model`; blesses `model` by `gate`."""

    SPEC_CLASS = EvaluatorSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(
        self,
        examples: channel.BaseChannel,
        model: channel.BaseChannel,
        task: str,
        transformed_label_key: str,
        gate: BlessingGate,
        slice_features: tuple[str, ...] = (),
        num_classes: int | None = None,
        baseline_model: channel.BaseChannel | None = None,
    ):
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}.")
        check_classes(task, num_classes)
        super().__init__(
            spec=EvaluatorSpec(
                examples=examples,
                model=model,
                baseline_model=baseline_model,
                task=task,
                num_classes=num_classes,
                transformed_label_key=transformed_label_key,
                slice_features=json.dumps(list(slice_features)),
                blessing_gate=json.dumps(dataclasses.asdict(gate)),
                evaluation=channel.Channel(type=standard_artifacts.ModelEvaluation),
                blessing=channel.Channel(type=standard_artifacts.ModelBlessing),
            )
        )
