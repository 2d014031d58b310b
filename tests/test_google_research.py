"""google-research/bleurt's fine-tuning and scoring (tests/google_research_programs.py: a
plain Estimator in train_and_evaluate with a BestExporter on Kendall tau, restarted; a
lazy-mode export of dynamic sequence length fine-tuned from and scored in a session) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py google_research_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

import pytest

from tests import google_research_programs as programs
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
