"""Pusher spec: a blessed `Model` becomes `<push_destination>/<version>`."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.pusher import executor


class PusherSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # Base folder; each push adds a numeric version folder under it.
        "push_destination": component_spec.ExecutionParameter(type=str),
    }
    INPUTS = {
        "model": component_spec.ChannelParameter(type=standard_artifacts.Model),
        "model_blessing": component_spec.ChannelParameter(type=standard_artifacts.ModelBlessing),
    }
    OUTPUTS = {
        "pushed_model": component_spec.ChannelParameter(type=standard_artifacts.PushedModel),
    }


class Pusher(base_component.BaseComponent):
    """Pushes only blessed models; the `pushed` property records what happened and why."""

    SPEC_CLASS = PusherSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model, model_blessing, push_destination):
        super().__init__(
            spec=PusherSpec(
                model=model,
                model_blessing=model_blessing,
                push_destination=push_destination,
                pushed_model=channel.Channel(type=standard_artifacts.PushedModel),
            )
        )
