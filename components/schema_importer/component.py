"""SchemaImporter component: the stock ImportSchemaGen needs TFDV, which cannot install here."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.input_fingerprint import InputFingerprintDriver
from components.schema_importer import executor


class SchemaImporterSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        "schema_file": component_spec.ExecutionParameter(type=str),
    }
    INPUTS = {}
    OUTPUTS = {
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema),
    }


class SchemaImporterDriver(InputFingerprintDriver):
    """Fingerprints the schema file, so a rerun after it changed is not served from cache."""

    def input_files(self, exec_properties):
        return [exec_properties["schema_file"]]


class SchemaImporter(base_component.BaseComponent):
    """Publishes `schema_file` (a tensorflow_metadata Schema text proto) as a Schema artifact."""

    SPEC_CLASS = SchemaImporterSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)
    DRIVER_CLASS = SchemaImporterDriver

    def __init__(self, schema_file: str):
        super().__init__(
            spec=SchemaImporterSpec(
                schema_file=str(schema_file), schema=channel.Channel(type=standard_artifacts.Schema)
            )
        )
