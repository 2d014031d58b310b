"""Canned estimators given options beyond their defaults and one-liners, and bad input
(tests/canned_options_programs.py), here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py canned_options_programs`): an
optimizer given as a class, optimizer arguments 2.15 refused (where and in which
words), label vocabularies of other than `n_classes` words. Each program runs once
here (a module fixture); `exact` parts must be equal, `close` ones (linear and baseline
values) within 1e-4; DNNs draw their start, so their names, keys and shapes only."""

from tests import canned_options_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestCannedOptions(ComparedWithTf215):
    programs = programs
