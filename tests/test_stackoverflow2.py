"""A second sweep of StackOverflow's tf.estimator questions (tests/stackoverflow2_programs.py):
initializable iterators and their hook, `from_generator` input_fns, metrics askers build
(per-class accuracy, at thresholds, F1, Keras metric objects, a py_func's), partial
restores, predict's options, multi-output model_fns, `params`, summaries, train/evaluate
loops, RunConfig's options, string labels and class weights, here against tf.estimator
2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py stackoverflow2_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import stackoverflow2_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestStackOverflow2(ComparedWithTf215):
    programs = programs
