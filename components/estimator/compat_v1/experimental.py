"""`tf.compat.v1.estimator.experimental`: tf.estimator's experimental names but the
RNN estimators (2.15 had them only in V2), plus the V1 logit-fn builders and `KMeans`
(compat_v1.kmeans)."""

from components.estimator.canned.dnn import dnn_logits
from components.estimator.canned.linear import linear_logits
from components.estimator.compat_v1.canned import _note_partitioner
from components.estimator.compat_v1.kmeans import KMeans
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


def dnn_logit_fn_builder(
    units,
    hidden_units,
    feature_columns,
    activation_fn,
    dropout,
    input_layer_partitioner,
    batch_norm,
):
    """A `logit_fn(features, mode)` giving the canned DNN's logits, for a `model_fn`."""
    if not isinstance(units, int):
        raise ValueError(f"units must be an int. Given type: {type(units)}")
    _note_partitioner("input_layer_partitioner", input_layer_partitioner)

    def dnn_logit_fn(features, mode):
        logits, _ = dnn_logits(
            features,
            list(feature_columns),
            list(hidden_units),
            units,
            activation_fn,
            dropout,
            batch_norm,
            mode,
            scope=None,  # 2.15's logit_fn built in the caller's scope (the canned DNN's dnn/)
        )
        return logits

    return dnn_logit_fn


def linear_logit_fn_builder(units, feature_columns, sparse_combiner="sum"):
    """A `logit_fn(features)` giving the canned linear model's logits, for a `model_fn`."""

    def linear_logit_fn(features):
        # 2.15's logit_fn built in the caller's scope (`linear_model/...`; the canned
        # linear model's under `linear/`)
        logits, _ = linear_logits(
            features, list(feature_columns), units, sparse_combiner, scope=None
        )
        return logits

    return linear_logit_fn


__all__ = [
    "InMemoryEvaluatorHook",
    "KMeans",
    "LinearSDCA",
    "build_raw_supervised_input_receiver_fn",
    "call_logit_fn",
    "dnn_logit_fn_builder",
    "linear_logit_fn_builder",
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
