"""StackOverflow's (and GitHub issues') tf.estimator questions, the asker's code and the
answer's (tests/stackoverflow_programs.py): unbatched datasets, weights read by a
variable's `.name`, datasets made outside the input_fn, TPUEstimator(use_tpu=False)
set-ups, the canned estimators' and custom model_fns' usual mistakes, what answers
print, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py stackoverflow_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import stackoverflow_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestStackOverflow(ComparedWithTf215):
    programs = programs
