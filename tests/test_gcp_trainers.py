"""Google Cloud's Estimator trainers the other families leave out, after `tf_upgrade_v2`
(tests/gcp_trainer_programs.py: 08_image's flowersmodel, 10_recommend's hybrid
recommender and its eval metrics named `loss` or `global_step`, cloudml-samples'
molecules `DNNRegressor` and a TF2-era model_fn of it) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py gcp_trainer_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

import pytest

from tests import gcp_trainer_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    assert_exact(ours[name]["exact"], RECORDED[name]["exact"], name)


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_sample_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
