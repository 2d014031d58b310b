"""Research and production repositories' Estimator code (tests/research_code_programs.py):
tensorflow/ranking 0.x's groupwise ranking model_fn and head in `train_and_evaluate` with
a `LatestExporter` and its Keras `model_to_estimator`, tensorflow/lattice 2.x's canned
calibrated linear classifier (its feature analysis, a Keras functional model with
constrained weights under `BinaryClassHead`, its export read by op name, the internal
modules it imports), object_detection's model_lib and model_main, deep_speech's
model_fn, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py research_code_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import research_code_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestResearchCode(ComparedWithTf215):
    programs = programs
