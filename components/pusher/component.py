"""Pusher spec: a blessed `Model` becomes `<push_destination>/<version>`, and with
`model_registry` also a version in the Vertex AI Model Registry."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.model_registry import PIPELINE_JOB_NAME
from components.pusher import executor


class PusherSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # Base folder; each push adds a numeric version folder under it.
        "push_destination": component_spec.ExecutionParameter(type=str),
        # A components.model_registry.RegistryDestination as JSON: upload each pushed
        # version folder (on Cloud Storage) to that registry model, and deploy it.
        "model_registry": component_spec.ExecutionParameter(type=str, optional=True),
        # The run's ID for the registry's labels where the runner gives the executor none
        # (Vertex AI replaces components.model_registry.PIPELINE_JOB_NAME with it).
        "run_id": component_spec.ExecutionParameter(type=str, optional=True),
    }
    INPUTS = {
        "model": component_spec.ChannelParameter(type=standard_artifacts.Model),
        "model_blessing": component_spec.ChannelParameter(type=standard_artifacts.ModelBlessing),
        # ExampleGen's output, for the input fingerprint the registry's labels carry, and
        # for the spans it read: none newer than the served version's, no push.
        "examples": component_spec.ChannelParameter(
            type=standard_artifacts.Examples, optional=True
        ),
    }
    OUTPUTS = {
        "pushed_model": component_spec.ChannelParameter(type=standard_artifacts.PushedModel),
    }


class Pusher(base_component.BaseComponent):
    """Pushes only blessed models, and of span data only those trained on a span newer than
    the served version's; the `pushed` property records what happened and why."""

    SPEC_CLASS = PusherSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model, model_blessing, push_destination, model_registry=None, examples=None):
        super().__init__(
            spec=PusherSpec(
                model=model,
                model_blessing=model_blessing,
                push_destination=push_destination,
                model_registry=model_registry,
                run_id=None if model_registry is None else PIPELINE_JOB_NAME,
                examples=examples,
                pushed_model=channel.Channel(type=standard_artifacts.PushedModel),
            )
        )
