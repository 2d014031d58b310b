"""ExampleValidator component: the stock one needs TFDV, which cannot install here."""

import json
from collections.abc import Iterable

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.example_validator import executor
from components.example_validator.checks import check_kinds


class ExampleValidatorSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # Checked as a label: present in every example, more than one value. "" for none.
        "label_key": component_spec.ExecutionParameter(type=str),
        # JSON list of anomaly kinds (checks.KINDS) that are recorded but do not fail.
        "warn_only": component_spec.ExecutionParameter(type=str),
    }
    INPUTS = {
        "statistics": component_spec.ChannelParameter(type=standard_artifacts.ExampleStatistics),
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema),
    }
    OUTPUTS = {
        "anomalies": component_spec.ChannelParameter(type=standard_artifacts.ExampleAnomalies),
    }


class ExampleValidator(base_component.BaseComponent):
    """Checks every split's statistics against the schema; fails on anomalies not warn-only.

    Failing is the gate: nodes that depend on this one (the Trainer) then never run, on
    LocalDagRunner and on Vertex alike.
    """

    SPEC_CLASS = ExampleValidatorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(
        self,
        statistics: channel.BaseChannel,
        schema: channel.BaseChannel,
        label_key: str = "",
        warn_only: Iterable[str] = (),
    ):
        super().__init__(
            spec=ExampleValidatorSpec(
                statistics=statistics,
                schema=schema,
                label_key=label_key,
                warn_only=json.dumps(sorted(check_kinds(warn_only))),
                anomalies=channel.Channel(type=standard_artifacts.ExampleAnomalies),
            )
        )
