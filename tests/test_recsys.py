"""Recommender and click-through-rate Estimator code (tests/recsys_programs.py): lambdaji's
DeepFM over libsvm lines, DeepCTR's DeepFMEstimator (feature columns' linear model and
input layer, Keras layers, two TF1 optimizers over variable scopes), a YouTube-DNN
candidate generator with sampled softmax, and microsoft/recommenders' wide & deep
regressor with its evaluation hook, item embeddings warm-started over a new vocabulary,
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py recsys_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import recsys_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestRecsys(ComparedWithTf215):
    programs = programs
