"""TF-GAN's Estimators (tests/gan_estimator_programs.py): `GANEstimator` written out in its
shape (generator and discriminator scopes, Wasserstein losses and their summaries, variable
histograms, two Adam optimizers, `gan_train_ops` with the global step's increment as the
train op, `RunTrainOpsHook`s from the sequential and joint hook builders, its eval metrics,
predict of generated samples), `TPUGANEstimator(use_tpu=False)`, a WGAN-GP with image
summaries and a conditional GAN's tuple features, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py gan_estimator_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import gan_estimator_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestGanEstimators(ComparedWithTf215):
    programs = programs
