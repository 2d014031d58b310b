"""Estimator code written for other clouds' ML services (tests/other_cloud_programs.py):
Amazon SageMaker's legacy TensorFlow container driving the users' `model_fn` /
`estimator_fn` / `keras_model_fn` modules into `export/Servo`, script mode's argparse over
`SM_*` variables, pipe mode's TFRecord channels, the TF_CONFIG SageMaker and Azure ML
build, and Azure ML's evaluating log hook, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py other_cloud_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import other_cloud_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestOtherCloud(ComparedWithTf215):
    programs = programs
