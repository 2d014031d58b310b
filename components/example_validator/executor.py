"""ExampleValidator executor: writes `<uri>/Split-<split>/SchemaDiff.pb`, then gates."""

import json
from typing import Any

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import io_utils

from components.example_validator.checks import anomaly_lines, find_anomalies, has_errors, to_proto
from components.example_validator.layout import split_anomalies_path
from components.schema_importer.executor import load_schema_artifact
from components.statistics_gen.layout import read_split_statistics


class DataValidationError(RuntimeError):
    """Anomalies not marked warn-only: the data must not reach the Trainer."""


class Executor(base_executor.BaseExecutor):
    """Records every anomaly of every split before failing, so the artifact shows them all."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        statistics = artifact_utils.get_single_instance(input_dict["statistics"])
        schema = load_schema_artifact(input_dict["schema"])
        output = artifact_utils.get_single_instance(output_dict["anomalies"])
        warn_only = json.loads(exec_properties.get("warn_only") or "[]")
        splits = artifact_utils.decode_split_names(statistics.split_names)
        lines, failed = [], False
        for split in splits:
            dataset = read_split_statistics(statistics.uri, split)
            anomalies = to_proto(
                find_anomalies(dataset, schema, exec_properties.get("label_key") or ""),
                schema,
                warn_only,
            )
            io_utils.write_bytes_file(
                split_anomalies_path(output.uri, split), anomalies.SerializeToString()
            )
            lines += anomaly_lines(anomalies, split)
            failed = failed or has_errors(anomalies)
        output.split_names = artifact_utils.encode_split_names(splits)
        if failed:
            raise DataValidationError(
                "Data validation failed; the Trainer does not run on this data. Anomalies "
                "(split: column: kind (severity): what, observed vs expected):\n  "
                + "\n  ".join(lines)
                + f"\nThey are recorded in {output.uri}. If the data changed on purpose, update "
                "the schema; to record a kind without failing, list it in warn_only_anomalies "
                "(--warn-only-anomaly)."
            )
