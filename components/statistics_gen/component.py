"""StatisticsGen component: the stock one needs TFDV, which cannot install here."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.statistics_gen import executor


class StatisticsGenSpec(component_spec.ComponentSpec):
    PARAMETERS = {}
    INPUTS = {
        "examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
        # Types the features; without it they are typed by what the examples hold.
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema, optional=True),
    }
    OUTPUTS = {
        "statistics": component_spec.ChannelParameter(type=standard_artifacts.ExampleStatistics),
    }


class StatisticsGen(base_component.BaseComponent):
    """Computes a `DatasetFeatureStatisticsList` per split of `examples`, laid out as TFX's."""

    SPEC_CLASS = StatisticsGenSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(self, examples: channel.BaseChannel, schema: channel.BaseChannel | None = None):
        super().__init__(
            spec=StatisticsGenSpec(
                examples=examples,
                schema=schema,
                statistics=channel.Channel(type=standard_artifacts.ExampleStatistics),
            )
        )
