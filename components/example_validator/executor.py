"""ExampleValidator executor: writes `<uri>/Split-<split>/SchemaDiff.pb`, then gates."""

import json
import logging
from typing import Any

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.dsl.io import fileio
from tfx.types import artifact_utils
from tfx.utils import io_utils

from components.example_gen import spans
from components.example_validator.checks import (
    anomaly_lines,
    find_anomalies,
    has_errors,
    measure,
    to_proto,
)
from components.example_validator.drift import check_thresholds
from components.example_validator.layout import split_anomalies_path
from components.schema_importer.executor import load_schema_artifact
from components.statistics_gen.layout import (
    kept_splits,
    model_statistics_uri,
    read_artifact_statistics,
    read_split_statistics,
    split_statistics_path,
)

log = logging.getLogger(__name__)
TRAIN, EVAL = "train", "eval"  # the splits the Trainer trains and evaluates on


def baseline_statistics(models: list[types.Artifact]):
    """The training statistics the baseline model carries, or None (and why, logged)."""
    if not models:
        log.info("ExampleValidator: no blessed model yet, so no drift check in this run.")
        return None
    uri = model_statistics_uri(models[0].uri)
    if not fileio.exists(split_statistics_path(uri, TRAIN)):
        log.warning(
            "ExampleValidator: the latest blessed model %s carries no training statistics "
            "(%s; trained before models carried them?): no drift check in this run.",
            models[0].uri,
            uri,
        )
        return None
    return read_split_statistics(uri, TRAIN)


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
        columns = [feature.name for feature in schema.feature]
        drift_thresholds, skew_thresholds = (
            check_thresholds(json.loads(exec_properties.get(name) or "{}"), columns, name)
            for name in ("drift_thresholds", "skew_thresholds")
        )
        datasets = read_artifact_statistics(statistics)
        splits = kept_splits(list(datasets), exec_properties)
        measured = {split: [] for split in splits}
        if drift_thresholds and TRAIN in datasets:
            baseline = baseline_statistics(input_dict.get("baseline_model") or [])
            if baseline is not None:
                measured[TRAIN] += measure(
                    "drift", baseline, datasets[TRAIN], schema, drift_thresholds
                )
        if skew_thresholds and TRAIN in datasets and EVAL in datasets:
            measured[EVAL] += measure(
                "skew", datasets[TRAIN], datasets[EVAL], schema, skew_thresholds
            )
        lines, failed = [], False
        for split in splits:
            found = find_anomalies(
                datasets[split], schema, exec_properties.get("raw_label_key") or ""
            )
            found += [m.anomaly() for m in measured[split] if m.anomalous]
            anomalies = to_proto(found, schema, warn_only, measured[split])
            io_utils.write_bytes_file(
                split_anomalies_path(output.uri, split), anomalies.SerializeToString()
            )
            lines += anomaly_lines(anomalies, split)
            failed = failed or has_errors(anomalies)
        output.split_names = artifact_utils.encode_split_names(splits)
        if failed:
            checked = spans.describe_recorded(statistics)
            raise DataValidationError(
                f"Data validation failed{' on ' + checked if checked else ''}; the Trainer "
                "does not run on this data. Anomalies "
                "(split: column: kind (severity): what, observed vs expected):\n  "
                + "\n  ".join(lines)
                + f"\nThey are recorded in {output.uri}. If the data changed on purpose, update "
                "the schema (for drift or skew, raise the column's drift_thresholds or "
                "skew_thresholds: --drift-threshold, --skew-threshold); to record a kind without "
                "failing, list it in warn_only_anomalies (--warn-only-anomaly)."
            )
