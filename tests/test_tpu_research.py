"""Research code's TPUEstimator programs with use_tpu=False (tests/tpu_research_programs.py:
tensor2tensor's HParams params and RunConfig attributes, tensorflow/tpu's DCGAN with two
optimizers, bigbird's dict host_call, ELECTRA's fine-tuning with its ETAHook, amoeba_net's
LoadEMAHook evaluations and timed predictions, an InMemoryEvaluatorHook given a
TPUEstimator, a Keras-layer model started from a checkpoint by init_from_checkpoint) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py tpu_research_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4, `loose` ones (the DCGAN's, whose Adam steps magnify the releases'
convolution rounding) within 5%; the in-memory evaluator's calls and lines, equal.
"""

from tests import tpu_research_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs, recorded

ours = program_runs(programs)


class TestTpuResearch(ComparedWithTf215):
    programs = programs
    tolerances = {"close": (1e-4, 1e-5), "loose": (0.05, 1e-3)}


def test_in_memory_evaluations_call_model_fn_once_as_under_tf215(ours):
    """2.15's InMemoryEvaluatorHook built its evaluation graph once, in begin(), and ran it
    in a session of its own each time: input_fn and model_fn called once, and no
    evaluate() call's lines (`evaluation_loop marked as finished`) per evaluation."""
    name = "in_memory_evaluator"
    assert ours[name]["calls"] == recorded(programs)[name]["calls"]
