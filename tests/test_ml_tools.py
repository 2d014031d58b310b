"""Experiment-tracking and tuning tools around an Estimator (tests/ml_tool_programs.py):
MLflow 1.x's autolog patches, tfdbg-shaped hooks and tfdbg's DumpingDebugHook, Optuna's
pruning hook with a hypertune-style exporter, W&B's hook and TensorBoard's HParams
summaries, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py ml_tool_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import ml_tool_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestMlTools(ComparedWithTf215):
    programs = programs
