"""SchemaGen component: the stock one needs TFDV, which cannot install here."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.schema_gen import executor


class SchemaGenSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # The split whose statistics the schema describes; the others only loosen presence.
        "infer_split": component_spec.ExecutionParameter(type=str),
    }
    INPUTS = {
        "statistics": component_spec.ChannelParameter(type=standard_artifacts.ExampleStatistics),
    }
    OUTPUTS = {
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema),
    }


class SchemaGen(base_component.BaseComponent):
    """Infers a `Schema` (`<uri>/schema.pbtxt`, as TFX's) from `statistics`; see executor.py."""

    SPEC_CLASS = SchemaGenSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, statistics: channel.BaseChannel, infer_split: str = "train"):
        super().__init__(
            spec=SchemaGenSpec(
                statistics=statistics,
                infer_split=infer_split,
                schema=channel.Channel(type=standard_artifacts.Schema),
            )
        )
