"""tensorflow/minigo's dual_net Estimators (Estimator and TPUEstimator(use_tpu=False), a
TPUEstimatorSpec with eval_metrics and a tf.compat.v2.summary host_call, a bootstrap
checkpoint, session hooks, export) and official/r1 transformer's TPU branch
(tests/minigo_transformer_programs.py), against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py minigo_transformer_programs`).
Each program runs once here (a module fixture).
"""

from tests import minigo_transformer_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestMinigoTransformer(ComparedWithTf215):
    programs = programs
