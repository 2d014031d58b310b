"""ExampleValidator component: the stock one needs TFDV, which cannot install here."""

import json
from collections.abc import Iterable

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.example_validator import executor
from components.example_validator.checks import check_kinds
from components.example_validator.drift import check_thresholds


class ExampleValidatorSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # Checked as a label: present in every example, more than one value. "" for none.
        "raw_label_key": component_spec.ExecutionParameter(type=str),
        # JSON list of anomaly kinds (checks.KINDS) that are recorded but do not fail.
        "warn_only": component_spec.ExecutionParameter(type=str),
        # JSON objects {column: threshold} ("*": every column without its own entry): drift of
        # the train split against `baseline_model`'s training statistics, skew of eval
        # against train. "{}" or absent: not checked.
        "drift_thresholds": component_spec.ExecutionParameter(type=str, optional=True),
        "skew_thresholds": component_spec.ExecutionParameter(type=str, optional=True),
    }
    INPUTS = {
        "statistics": component_spec.ChannelParameter(type=standard_artifacts.ExampleStatistics),
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema),
        # The latest blessed model, whose DataStatistics/ the Trainer wrote; none on a first run.
        "baseline_model": component_spec.ChannelParameter(
            type=standard_artifacts.Model, optional=True
        ),
    }
    OUTPUTS = {
        "anomalies": component_spec.ChannelParameter(type=standard_artifacts.ExampleAnomalies),
    }


class ExampleValidator(base_component.BaseComponent):
    """Checks every split's statistics against the schema, the train split for drift against
    `baseline_model`'s training statistics and the eval split for skew against train; fails
    on anomalies not warn-only.

    Failing is the gate: nodes that depend on this one (the Trainer) then never run, on
    LocalDagRunner and on Vertex alike.
    """

    SPEC_CLASS = ExampleValidatorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(
        self,
        statistics: channel.BaseChannel,
        schema: channel.BaseChannel,
        raw_label_key: str = "",
        warn_only: Iterable[str] = (),
        baseline_model: channel.BaseChannel | None = None,
        drift_thresholds=(),
        skew_thresholds=(),
    ):
        super().__init__(
            spec=ExampleValidatorSpec(
                statistics=statistics,
                schema=schema,
                raw_label_key=raw_label_key,
                warn_only=json.dumps(sorted(check_kinds(warn_only))),
                baseline_model=baseline_model,
                drift_thresholds=json.dumps(
                    check_thresholds(drift_thresholds, setting="drift_thresholds"), sort_keys=True
                ),
                skew_thresholds=json.dumps(
                    check_thresholds(skew_thresholds, setting="skew_thresholds"), sort_keys=True
                ),
                anomalies=channel.Channel(type=standard_artifacts.ExampleAnomalies),
            )
        )
