"""Kaggle kernels and book notebooks of the tf.estimator era (tests/kaggle_notebook_programs.py):
pandas and numpy input_fns into canned classifiers and a tf.layers model_fn, submissions
built from predict(), train/evaluate loops, string labels with a weight column, and the
mistakes such notebooks made (arrays handed to the calls, labels as a DataFrame), here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py kaggle_notebook_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import kaggle_notebook_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestKaggleNotebooks(ComparedWithTf215):
    programs = programs
