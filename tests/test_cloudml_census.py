"""cloudml-samples' census trainers after `tf_upgrade_v2` (tests/cloudml_census_programs.py:
a custom model_fn that summarizes its own loss, with ModeKeys from TF 2.15's
`tensorflow.python.estimator` stub; a canned wide-and-deep export in a program that never
configured logging; the stub modules' public names) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py cloudml_census_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import cloudml_census_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestCloudmlCensus(ComparedWithTf215):
    programs = programs
