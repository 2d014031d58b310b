"""AdaNet's Estimator subclasses in its shape (tests/adanet_programs.py): iterations of a
temporary Estimator trained to max_steps, candidate ensembles evaluated and reported in
sessions of their own, the graph grown by overwriting the model_dir's checkpoint, then
evaluate, predict and export of the chosen ensemble, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py adanet_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import adanet_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestAdaNet(ComparedWithTf215):
    programs = programs
