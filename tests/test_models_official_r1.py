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

import pytest

from tests import models_official_r1_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    assert_exact(ours[name]["exact"], RECORDED[name]["exact"], name)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
