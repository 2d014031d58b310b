"""Transform: fits a preprocessing_fn on some splits and applies it to all."""

from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import channel, component_spec, standard_artifacts

from components.transform import executor


class TransformSpec(component_spec.ComponentSpec):
    PARAMETERS = {
        # A code reference (components/user_code.py), e.g.
        # 'my_package.preprocessing.preprocessing_fn', or "auto": built from the
        # schema (components/auto/preprocessing.py) for `raw_label_key` and `task`.
        "preprocessing_fn": component_spec.ExecutionParameter(type=str),
        # The hash of preprocessing_fn's module (components/user_code.py): part of the
        # cache key, so that an edited module runs again instead of reusing old output.
        "code_fingerprint": component_spec.ExecutionParameter(type=str, optional=True),
        "raw_label_key": component_spec.ExecutionParameter(type=str, optional=True),
        "task": component_spec.ExecutionParameter(type=str, optional=True),
        # "auto" only: JSON {"features": [...]} or {"exclude": [...]}, raw columns.
        "feature_selection": component_spec.ExecutionParameter(type=str, optional=True),
        # "auto" only: a category value's fewest occurrences for an id of its own.
        "vocabulary_min_count": component_spec.ExecutionParameter(type=int, optional=True),
        # JSON lists of split names.
        "analyze_splits": component_spec.ExecutionParameter(type=str),
        "transform_splits": component_spec.ExecutionParameter(type=str, optional=True),
    }
    INPUTS = {
        "examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
        "schema": component_spec.ChannelParameter(type=standard_artifacts.Schema),
    }
    OUTPUTS = {
        "transform_graph": component_spec.ChannelParameter(type=standard_artifacts.TransformGraph),
        "transformed_examples": component_spec.ChannelParameter(type=standard_artifacts.Examples),
    }


class Transform(base_component.BaseComponent):
    """Analyzes `analyze_splits` (default train) and transforms
    `transform_splits` (default: every split of `examples`). With `preprocessing_fn="auto"`,
    the raw label column `raw_label_key` and the `task` say what the label becomes."""

    SPEC_CLASS = TransformSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(
        self,
        examples: channel.BaseChannel,
        schema: channel.BaseChannel,
        preprocessing_fn: str,
        analyze_splits: str = '["train"]',
        transform_splits: str | None = None,
        raw_label_key: str | None = None,
        task: str | None = None,
        code_fingerprint: str | None = None,
        feature_selection: str | None = None,
        vocabulary_min_count: int | None = None,
    ):
        super().__init__(
            spec=TransformSpec(
                examples=examples,
                schema=schema,
                preprocessing_fn=preprocessing_fn,
                code_fingerprint=code_fingerprint,
                feature_selection=feature_selection,
                vocabulary_min_count=vocabulary_min_count,
                analyze_splits=analyze_splits,
                transform_splits=transform_splits,
                raw_label_key=raw_label_key,
                task=task,
                transform_graph=channel.Channel(type=standard_artifacts.TransformGraph),
                transformed_examples=channel.Channel(type=standard_artifacts.Examples),
            )
        )
