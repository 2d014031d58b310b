"""Google Cloud's Estimator trainers the other families leave out, after `tf_upgrade_v2`
(tests/gcp_trainer_programs.py: 08_image's flowersmodel, 10_recommend's hybrid
recommender and its eval metrics named `loss` or `global_step`, cloudml-samples'
molecules `DNNRegressor` and a TF2-era model_fn of it) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py gcp_trainer_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import gcp_trainer_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestGcpTrainers(ComparedWithTf215):
    programs = programs
