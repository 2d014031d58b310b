"""`tf.compat.v1.estimator.experimental.KMeans`: k-means clustering as an Estimator.

TF 2.21 still ships TF1's clustering ops (`tensorflow.python.ops.clustering_ops`:
random and k-means++ starts, full-batch Lloyd iterations and mini-batch updates),
so this is 2.15's estimator on them: a TF1 `model_fn` on the graph-mode path,
`input_fn` giving the points (a Tensor, a dict of them, or what `feature_columns`
read), and 2.15's methods and prediction keys.
"""

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import clustering_ops

from components.estimator.compat_v1.canned import Estimator
from components.estimator.export import PredictOutput
from components.estimator.model_fn import EstimatorSpec, ModeKeys

_V1 = tf.compat.v1


class _InitializeClustersHook(_V1.train.SessionRunHook):
    """Runs the op that picks the initial centers until they are all picked: the
    chief runs it (k-means++ may take several runs); other workers wait for it."""

    def __init__(self, init_op, is_initialized, is_chief):
        self._init_op = init_op
        self._is_initialized = is_initialized
        self._is_chief = is_chief

    def after_create_session(self, session, coord):
        import time

        while not session.run(self._is_initialized):
            if self._is_chief:
                session.run(self._init_op)
            else:
                time.sleep(1)


class _LossRelativeChangeHook(_V1.train.SessionRunHook):
    """Stops training once the loss changes by less than `tolerance` of itself."""

    def __init__(self, loss, tolerance):
        self._loss = loss
        self._tolerance = tolerance
        self._previous = None

    def before_run(self, run_context):
        return _V1.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        loss = run_values.results
        if self._previous is not None:
            change = abs(loss - self._previous) / (1 + abs(self._previous))
            if change < self._tolerance:
                run_context.request_stop()
        self._previous = loss


def _points(features, feature_columns):
    """The points as one float matrix: the feature columns' input layer, else the
    features themselves (a dict's values side by side, in key order)."""
    if feature_columns is not None:
        return _V1.feature_column.input_layer(features, feature_columns)
    if isinstance(features, dict):
        values = [tf.cast(features[key], tf.float32) for key in sorted(features)]
        values = [v if v.shape.rank == 2 else tf.reshape(v, [-1, 1]) for v in values]
        return tf.concat(values, axis=1)
    return tf.cast(features, tf.float32)


class KMeans(Estimator):
    """2.15's KMeans estimator: `train` clusters, `predict` yields `cluster_index` and
    `all_distances`, `score` is the sum of squared distances to the nearest center."""

    RANDOM_INIT = clustering_ops.RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = clustering_ops.KMEANS_PLUS_PLUS_INIT
    SQUARED_EUCLIDEAN_DISTANCE = clustering_ops.SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = clustering_ops.COSINE_DISTANCE
    ALL_DISTANCES = "all_distances"
    CLUSTER_CENTERS_VAR_NAME = clustering_ops.CLUSTERS_VAR_NAME
    CLUSTER_INDEX = "cluster_index"
    SCORE = "score"

    _runs_in_a_graph = True  # TF1 ops and a hook that runs an op until it is done

    def __init__(
        self,
        num_clusters,
        model_dir=None,
        initial_clusters=RANDOM_INIT,
        distance_metric=SQUARED_EUCLIDEAN_DISTANCE,
        seed=None,
        use_mini_batch=True,
        mini_batch_steps_per_iteration=1,
        kmeans_plus_plus_num_retries=2,
        relative_tolerance=None,
        config=None,
        feature_columns=None,
    ):
        if distance_metric not in (self.SQUARED_EUCLIDEAN_DISTANCE, self.COSINE_DISTANCE):
            raise ValueError(
                f"Unsupported distance metric {distance_metric!r}; use "
                f"{self.SQUARED_EUCLIDEAN_DISTANCE!r} or {self.COSINE_DISTANCE!r}."
            )
        settings = {
            "num_clusters": num_clusters,
            "initial_clusters": initial_clusters,
            "distance_metric": distance_metric,
            "use_mini_batch": use_mini_batch,
            "mini_batch_steps_per_iteration": mini_batch_steps_per_iteration,
            "random_seed": 0 if seed is None else seed,
            "kmeans_plus_plus_num_retries": kmeans_plus_plus_num_retries,
        }
        columns = None if feature_columns is None else list(feature_columns)
        self._squared = distance_metric == self.SQUARED_EUCLIDEAN_DISTANCE

        def model_fn(features, mode, config):
            return _kmeans_spec(features, mode, config, settings, columns, relative_tolerance)

        super().__init__(model_fn, model_dir=model_dir, config=config)

    def predict_cluster_index(self, input_fn):
        for prediction in self.predict(input_fn, predict_keys=[self.CLUSTER_INDEX]):
            yield prediction[self.CLUSTER_INDEX]

    def score(self, input_fn):
        """The sum of squared distances of one batch's points to their nearest center."""
        return self.evaluate(input_fn=input_fn, steps=1)[self.SCORE]

    def transform(self, input_fn):
        """Each point's distance to every center: Euclidean (the root of what the
        squared metric predicts, as 2.15 gave) or the cosine distance."""
        for prediction in self.predict(input_fn, predict_keys=[self.ALL_DISTANCES]):
            distances = prediction[self.ALL_DISTANCES]
            yield np.sqrt(distances) if self._squared else distances

    def cluster_centers(self):
        return self.get_variable_value(self.CLUSTER_CENTERS_VAR_NAME)


def _kmeans_spec(features, mode, config, settings, feature_columns, relative_tolerance):
    points = _points(features, feature_columns)
    (all_distances, cluster_index, scores, is_initialized, init_op, training_op) = (
        clustering_ops.KMeans(points, **settings).training_graph()
    )
    loss = tf.reduce_sum(scores[0])
    _V1.summary.scalar("loss/raw", loss)
    predictions = {KMeans.ALL_DISTANCES: all_distances[0], KMeans.CLUSTER_INDEX: cluster_index[0]}
    if mode != ModeKeys.TRAIN:
        return EstimatorSpec(
            mode,
            predictions=predictions,
            loss=loss,
            eval_metric_ops={KMeans.SCORE: _V1.metrics.mean(loss)},
            export_outputs={  # one signature per key, the index also the default, as 2.15
                KMeans.ALL_DISTANCES: PredictOutput(all_distances[0]),
                KMeans.CLUSTER_INDEX: PredictOutput(cluster_index[0]),
                "serving_default": PredictOutput(cluster_index[0]),
            },
        )
    step = _V1.assign_add(_V1.train.get_global_step(), 1)
    hooks = [_InitializeClustersHook(init_op, is_initialized, config.is_chief)]
    if relative_tolerance is not None:
        hooks.append(_LossRelativeChangeHook(loss, relative_tolerance))
    return EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=tf.group(training_op, step),
        training_hooks=hooks,
    )
