"""tensorflow/models' official/r1 Estimator samples after `tf_upgrade_v2`
(tests/models_official_r1_programs.py: mnist.py's Keras Sequential built in a model_fn
under `RunConfig(train_distribute=...)` and its export; official/r1/utils/logs' hooks,
ExamplesPerSecondHook and the LoggingMetricHook subclass of LoggingTensorHook, writing
to a BenchmarkFileLogger; wide_deep's movielens DNNRegressor logging its loss tensor by
name; transformer_main's model_fn, run loop and export, pared down) here against
tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py models_official_r1_programs`).
Each program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import models_official_r1_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestModelsOfficialR1(ComparedWithTf215):
    programs = programs
