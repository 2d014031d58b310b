"""SchemaImporter executor: validates the schema file, then writes `<uri>/schema.pbtxt`."""

import os
from typing import Any

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import io_utils

from components.schema_file import SCHEMA_FILE_NAME, load_schema

__all__ = ["SCHEMA_FILE_NAME", "Executor", "load_schema_artifact"]


def load_schema_artifact(artifacts: list[types.Artifact]):
    """The Schema proto of a (single) Schema artifact, as this executor writes it."""
    return load_schema(os.path.join(artifact_utils.get_single_uri(artifacts), SCHEMA_FILE_NAME))


class Executor(base_executor.BaseExecutor):
    """Parses before writing, so a broken schema fails here and not in a later component."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        schema = load_schema(exec_properties["schema_file"])
        output_uri = artifact_utils.get_single_uri(output_dict["schema"])
        io_utils.write_pbtxt_file(os.path.join(output_uri, SCHEMA_FILE_NAME), schema)
