"""cloudml-samples' census trainers after `tf_upgrade_v2` (tests/cloudml_census_programs.py:
a custom model_fn that summarizes its own loss, with ModeKeys from TF 2.15's
`tensorflow.python.estimator` stub; a canned wide-and-deep export in a program that never
configured logging; the stub modules' public names) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py cloudml_census_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

import pytest

from tests import cloudml_census_programs as programs
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
