"""Public tf.estimator code the other families have not tried (tests/public_code_programs.py):
`tf.data.experimental.CheckpointInputPipelineHook` (its docstring's loop, in a TrainSpec of a
canned estimator, its external-state policies, with a TPUEstimator and a V1 Estimator),
google-research/exoplanet-ml's AstroNet trainer, runner and predictor, an iterator saved in
the model's checkpoint through `make_saveable_from_iterator`, an input_fn's own queue
filled by a `QueueRunner`, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py public_code_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import public_code_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestPublicCode(ComparedWithTf215):
    programs = programs
