"""Evaluation metrics as others' tf.estimator code writes them
(tests/eval_metric_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py eval_metric_programs`): weighted
binary and multi-class tf.compat.v1.metrics in a TF1 model_fn under tf.estimator's and
tf.compat.v1.estimator's Estimator, (value, update_op) pairs beside Keras metric
objects, slash names, a string-valued metric, the eval_metric_ops 2.15 refused,
`tf.estimator.add_metrics` on a canned classifier, a loss-only evaluation and
`evaluate(name=...)`. Each program runs once here (a module fixture); `exact` parts must
be equal, `close` ones within 1e-4.
"""

from tests import eval_metric_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestEvalMetrics(ComparedWithTf215):
    programs = programs
