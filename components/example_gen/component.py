"""ExampleGen component: enforces the schema's types, or infers them from the data without one."""

import json

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.example_gen import executor, spans
from components.example_gen.missing import (
    DEFAULT_MAX_UNLABELED_ROW_FRACTION,
    DEFAULT_MISSING_VALUES,
)
from components.example_gen.splits import DEFAULT_SPLIT_RATIOS, parse_split_ratios
from components.input_fingerprint import InputFingerprintDriver


class ExampleGenSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # A CSV file, or a folder whose *.csv files are all read; or a span pattern
        # (spans.py), resolved when the component runs.
        "input_base": component_spec.ExecutionParameter(type=str),
        # Which spans of a span pattern are read: N newest, or FIRST..LAST (spans.py).
        "data_spans": component_spec.ExecutionParameter(type=str, optional=True),
        # Column whose text decides the split; '' hashes the whole line.
        "split_key": component_spec.ExecutionParameter(type=str, optional=True),
        # JSON object {split name: integer weight}.
        "split_ratios": component_spec.ExecutionParameter(type=str, optional=True),
        # Bad rows tolerated, as a fraction of all rows; 0 fails on the first.
        "max_bad_row_fraction": component_spec.ExecutionParameter(type=float, optional=True),
        # JSON list of the cell texts that mean "no value" (missing.DEFAULT_MISSING_VALUES).
        "missing_values": component_spec.ExecutionParameter(type=str, optional=True),
        # The label's CSV column: a row where it is missing is set aside (not a bad row).
        "raw_label_key": component_spec.ExecutionParameter(type=str, optional=True),
        # Rows without a label tolerated, as a fraction of all rows.
        "max_unlabeled_row_fraction": component_spec.ExecutionParameter(type=float, optional=True),
    }
    INPUTS = {
        # Types the columns; without it each column is typed from its values.
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema, optional=True),
    }
    OUTPUTS = {
        "examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
    }


class ExampleGenDriver(InputFingerprintDriver):
    """Fingerprints the CSV files, so a rerun on changed data is not served from cache; a span
    pattern is resolved here, and the executor reads the spans the fingerprint is of."""

    def input_files(self, exec_properties):
        try:
            window = executor.resolve_window(exec_properties)
            self._window = window
            return (
                window.files() if window else executor.list_csv_files(exec_properties["input_base"])
            )
        except ValueError:
            return [exec_properties["input_base"]]  # the executor fails saying why

    def run(self, execution_info):
        self._window = None
        output = super().run(execution_info)
        if self._window is not None:
            output.exec_properties[spans.RESOLVED_KEY].string_value = spans.to_json(self._window)
        return output


class ExampleGen(base_component.BaseComponent):
    """Reads CSV rows, types them by `schema` (or by their values), writes split tf.Examples.

    A cell whose text is one of `missing_values` is a missing value (an absent feature).
    A row whose `raw_label_key` cell is missing is set aside (listed with the bad rows, counted
    as `num_unlabeled`), never written to a split. The column types used are recorded on the
    Examples artifact as `column_types`.
    """

    SPEC_CLASS = ExampleGenSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
    DRIVER_CLASS = ExampleGenDriver

    def __init__(
        self,
        input_base: str,
        schema: channel.BaseChannel | None = None,
        split_key: str = "",
        split_ratios: str = DEFAULT_SPLIT_RATIOS,
        max_bad_row_fraction: float = 0.0,
        missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES,
        raw_label_key: str = "",
        max_unlabeled_row_fraction: float = DEFAULT_MAX_UNLABELED_ROW_FRACTION,
        data_spans: str = spans.DEFAULT_WINDOW,
    ):
        parse_split_ratios(split_ratios)
        spans.parse_window(data_spans, str(input_base))
        for name, value in [
            ("max_bad_row_fraction", max_bad_row_fraction),
            ("max_unlabeled_row_fraction", max_unlabeled_row_fraction),
        ]:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        super().__init__(
            spec=ExampleGenSpec(
                input_base=str(input_base),
                data_spans=str(data_spans),
                split_key=split_key,
                split_ratios=split_ratios,
                max_bad_row_fraction=float(max_bad_row_fraction),
                missing_values=json.dumps(list(missing_values)),
                raw_label_key=raw_label_key,
                max_unlabeled_row_fraction=float(max_unlabeled_row_fraction),
                schema=schema,
                examples=channel.Channel(type=standard_artifacts.Examples),
            )
        )
