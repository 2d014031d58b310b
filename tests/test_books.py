"""Books' companion code of the tf.estimator era (tests/book_programs.py): the flights wide
and deep model of "Data Science on the Google Cloud Platform", "Learning TensorFlow"'s CNN
model_fn and linear regressor, "Mastering TensorFlow 1.x"'s linear classifier, here against
tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py book_programs`). Each program runs
once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import book_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestBooks(ComparedWithTf215):
    programs = programs
