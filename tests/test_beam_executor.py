"""The kit's Beam executors take the Beam arguments as given: no package of TFX is built."""

import tempfile

import pytest
from tfx.dsl.components.base import base_beam_executor

from components.evaluator.executor import Executor as EvaluatorExecutor
from components.example_gen.executor import Executor as ExampleGenExecutor
from components.statistics_gen.executor import Executor as StatisticsGenExecutor
from components.transform.executor import Executor as TransformExecutor
from pipeline.config import DEFAULT_BEAM_ARGS


@pytest.mark.parametrize(
    "executor_class",
    [ExampleGenExecutor, StatisticsGenExecutor, TransformExecutor, EvaluatorExecutor],
)
def test_a_beam_executor_leaves_no_copy_of_tfx_behind(executor_class, tmp_path, monkeypatch):
    """TFX's own base class copies its installation into a new temporary folder and builds
    an sdist of it for Beam's workers (seconds, and the 51 MB copy stays), which a local
    runner never uses."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where mkdtemp would put it
    context = base_beam_executor.BaseBeamExecutor.Context(
        beam_pipeline_args=list(DEFAULT_BEAM_ARGS), tmp_dir=str(tmp_path / "tmp"), unique_id="1"
    )

    executor = executor_class(context)

    assert list(tmp_path.iterdir()) == []
    pipeline = executor._make_beam_pipeline()
    assert not pipeline.options.get_all_options()["extra_packages"]
    assert pipeline.options.get_all_options()["direct_running_mode"] == "in_memory"
