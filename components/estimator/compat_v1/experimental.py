"""`tf.compat.v1.estimator.experimental`: tf.estimator's experimental names but the
RNN estimators (2.15 had them only in V2), plus the V1 logit-fn builders and `KMeans`."""

from components.estimator.canned.dnn import dnn_logits
from components.estimator.canned.linear import linear_logits
from components.estimator.compat_v1.canned import _note_partitioner
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
        )
        return logits

    return dnn_logit_fn


def linear_logit_fn_builder(units, feature_columns, sparse_combiner="sum"):
    """A `logit_fn(features)` giving the canned linear model's logits, for a `model_fn`."""

    def linear_logit_fn(features):
        logits, _ = linear_logits(features, list(feature_columns), units, sparse_combiner)
        return logits

    return linear_logit_fn


class KMeans:
    """2.15's `tf.compat.v1.estimator.experimental.KMeans`, refused when built: the kit
    does not re-implement it."""

    def __init__(
        self,
        num_clusters,
        model_dir=None,
        initial_clusters="random",
        distance_metric="squared_euclidean",
        seed=None,
        use_mini_batch=True,
        mini_batch_steps_per_iteration=1,
        kmeans_plus_plus_num_retries=2,
        relative_tolerance=None,
        config=None,
        feature_columns=None,
    ):
        raise NotImplementedError(
            "tf.compat.v1.estimator.experimental.KMeans is not in this kit (it has the "
            "supervised estimators only). Cluster with sklearn.cluster.KMeans or "
            "MiniBatchKMeans (k-means++ or random start, as 2.15's) on the features your "
            "input_fn reads."
        )


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
