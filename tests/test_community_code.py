"""Tutorial-, book-, course- and StackOverflow-grade tf.estimator code the other families
have not tried (tests/community_code_programs.py): the label mistakes StackOverflow asks
about, "NaN loss during training" (a canned V2 and V1 model, a TF1 model_fn),
numpy_input_fn's and pandas_input_fn's misuse, and TF1 optimizers and decays in a model_fn,
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py community_code_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import community_code_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs


def _with_a_short_stop_grace(program, folder):
    """`tf1_optimizers`' SyncReplicasOptimizer leaves its chief queue runner waiting for
    gradients that never come: the end of its train() waits `STOP_GRACE_PERIOD_SECS` (120 s,
    as 2.15 waited) for that thread; 1 s here, with the same results."""
    import tensorflow as tf

    from components.estimator import graph_mode

    waited = graph_mode.STOP_GRACE_PERIOD_SECS
    graph_mode.STOP_GRACE_PERIOD_SECS = 1
    try:
        return program(tf, folder)
    finally:
        graph_mode.STOP_GRACE_PERIOD_SECS = waited


ours = program_runs(programs, _with_a_short_stop_grace)


class TestCommunityCode(ComparedWithTf215):
    programs = programs
