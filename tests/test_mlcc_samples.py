"""Google's Machine Learning Crash Course programming exercises after `tf_upgrade_v2`
(tests/mlcc_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py mlcc_programs`): compat.v1
LinearRegressor, LinearClassifier, DNNRegressor and DNNClassifier with TF1 optimizers
(GradientDescent, Ftrl with L1, Adagrad, Adam) wrapped in the users' own
`clip_gradients_by_norm` (tf.contrib's, which the conversion cannot carry), pandas frames
through one-shot iterators, training in periods with RMSE and log loss from `predict`,
`evaluate`'s metrics, quantile buckets and a hashed cross, nonzero weights counted over
the checkpoint, MNIST-like class ids; and what the converted lines raise as they are (a
Keras `loss_reduction` given to a V1 class, `tf.contrib`). Each program runs once here (a
module fixture); `exact` parts must be equal, `close` ones within 1e-4 (every run is
deterministic: full batches, fixed starting weights).
"""

import math

from tests import mlcc_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestMlccSamples(ComparedWithTf215):
    programs = programs


def test_clipping_the_users_way_reaches_the_gradients(ours):
    """The hand-written clip_gradients_by_norm's `compute_gradients` is what trains (as
    2.15's `minimize` called it): each GradientDescent step moves the weights by at
    most learning_rate * 5.0, where one unclipped step of the summed loss would have
    moved the weight by hundreds."""
    close = ours["first_steps_with_tensor_flow"]["close"]
    steps_per_period, bound = 20 / programs.PERIODS, 0.00002 * 5.0
    for period, (weight, bias) in enumerate(zip(close["weight"], close["bias"], strict=True)):
        assert math.hypot(weight, bias) <= (period + 1) * steps_per_period * bound * 1.0001
