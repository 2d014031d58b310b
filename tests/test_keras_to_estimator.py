"""Keras models made Estimators (tests/keras_to_estimator_programs.py): `model_to_estimator`
of Sequential, functional, subclassed and saved (.h5, SavedModel) models, compiled with
losses, optimizers and metrics by name and object; evaluate()'s names and values, predict()'s
keys, the export's signatures, the warm start's lines, train_and_evaluate, batch norm and
dropout, errors, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py keras_to_estimator_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import keras_to_estimator_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestKerasToEstimator(ComparedWithTf215):
    programs = programs
