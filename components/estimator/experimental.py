"""`estimator.experimental`: what tf.estimator 2.15 had under `tf.estimator.experimental`."""

from components.estimator.canned.rnn import RNNClassifier, RNNEstimator
from components.estimator.early_stopping import (
    make_early_stopping_hook,
    make_stop_at_checkpoint_step_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from components.estimator.evaluator_hook import InMemoryEvaluatorHook
from components.estimator.export import build_raw_supervised_input_receiver_fn
from components.estimator.extenders import call_logit_fn
from components.estimator.sdca import LinearSDCA

__all__ = [
    "InMemoryEvaluatorHook",
    "LinearSDCA",
    "RNNClassifier",
    "RNNEstimator",
    "build_raw_supervised_input_receiver_fn",
    "call_logit_fn",
    "make_early_stopping_hook",
    "make_stop_at_checkpoint_step_hook",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
]


def __dir__():
    # The public API, as tf.estimator 2.15 listed it (not this package's modules).
    return sorted(__all__)
