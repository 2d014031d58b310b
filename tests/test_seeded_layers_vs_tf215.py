"""Layers' default initializers in a model_fn under `tf_random_seed`, and a program's own
`random` and `numpy.random` after training (tests/seeded_layers_programs.py), here against
tf.estimator 2.15: the Keras seeds drawn from the program's `random` as 2.15 drew them,
and that state left where 2.15 left it. Recorded once under 2.15
(`tests/tf215/record_family.py seeded_layers_programs`)."""

from tests import seeded_layers_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestSeededLayers(ComparedWithTf215):
    programs = programs
    tolerances = {"close": (1e-5, 1e-6)}
