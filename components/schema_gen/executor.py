"""SchemaGen executor: infers the schema from the statistics, writes `<uri>/schema.pbtxt`."""

import os
from typing import Any

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import io_utils

from components.schema_file import SCHEMA_FILE_NAME
from components.schema_gen.inference import infer_schema, with_fixed_shapes
from components.statistics_gen.layout import kept_splits, read_artifact_statistics


class Executor(base_executor.BaseExecutor):
    """Writes the Schema artifact as TFX's SchemaGen lays it out (read by load_schema_artifact)."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        statistics = artifact_utils.get_single_instance(input_dict["statistics"])
        by_split = read_artifact_statistics(statistics)
        by_split = {
            split: by_split[split] for split in kept_splits(list(by_split), exec_properties)
        }
        infer_split = exec_properties.get("infer_split") or "train"
        schema = infer_schema(by_split, infer_split)
        if exec_properties.get("infer_feature_shape"):
            schema = with_fixed_shapes(schema)
        if not schema.feature:
            raise ValueError(
                f"the {infer_split!r} statistics in {statistics.uri} have no feature to infer "
                "a schema from"
            )
        output_uri = artifact_utils.get_single_uri(output_dict["schema"])
        io_utils.write_pbtxt_file(os.path.join(output_uri, SCHEMA_FILE_NAME), schema)
