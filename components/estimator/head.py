"""Heads own what depends on the problem type: loss, predictions, metrics, export.

A model computes logits and hands them to its head, which returns the
`EstimatorSpec`: canned estimators do, and so can a user's `model_fn`.  The
public heads are tf.estimator 2.15's, with its keys, dtypes and shapes:
metric keys carry a named head's name (`accuracy/<name>`), and `MultiHead`
keys predictions by `(head name, key)`.
"""

import abc
import contextlib
import inspect

import numpy as np
import tensorflow as tf
import tf_keras
from tensorflow.python.feature_column import feature_column_v2 as fc_lib

from components.estimator import export as export_lib
from components.estimator import optimizers, summaries
from components.estimator.model_fn import EstimatorSpec, ModeKeys

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
# tf.losses.Reduction's AUTO means SUM_OVER_BATCH_SIZE here, as in tf.estimator.
_REDUCTIONS = (SUM_OVER_BATCH_SIZE, SUM, "auto")

# Metric keys (tf.estimator's MetricKeys).
AVERAGE_LOSS = "average_loss"
LOSS = "loss"
REGULARIZATION_LOSS = "regularization_loss"
ACCURACY = "accuracy"
LABEL_MEAN = "label/mean"
PREDICTION_MEAN = "prediction/mean"


class MetricKeys:
    """The keys of the heads' metrics, by 2.15's names for them (its `canned.metric_keys`
    module's `MetricKeys`, which public code imports by that internal path); a `%g`,
    `%d` or `%s` key is formatted with the threshold, class id or class name."""

    LOSS = "loss"
    LOSS_MEAN = AVERAGE_LOSS
    LOSS_REGULARIZATION = REGULARIZATION_LOSS
    ACCURACY = ACCURACY
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = LABEL_MEAN
    PREDICTION_MEAN = PREDICTION_MEAN
    ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
    PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
    RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"
    PRECISION_AT_RECALL = "precision_at_recall_%g"
    RECALL_AT_PRECISION = "recall_at_precision_%g"
    SENSITIVITY_AT_SPECIFICITY = "sensitivity_at_specificity_%g"
    SPECIFICITY_AT_SENSITIVITY = "specificity_at_sensitivity_%g"
    PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
    AUC_AT_CLASS = "auc/class%d"
    AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
    PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
    AUC_AT_NAME = "auc/%s"
    AUC_PR_AT_NAME = "auc_precision_recall/%s"


class PredictionKeys:
    """The keys of the heads' predictions, by 2.15's names for them (its
    `canned.prediction_keys` module's `PredictionKeys`)."""

    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"
    TOP_K = "top_k"


# 2.15's words for labels a head cannot take, by whether the head is a V1 class's
# (tf.compat.v1.estimator's canned classes: `_v1_words`); its V1 heads worded them apart.
_LABELS_NONE = {
    False: "You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: "
    "Check that your data contains your label feature. Check that your input_fn properly "
    "parses and returns labels.",
    True: "You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: "
    "Check that your data contain your label feature. Check that your input_fn properly "
    "parses and returns labels.",
}
_SPARSE_LABELS = {
    v1: f"SparseTensor labels are not supported. {'labels' if v1 else 'Labels'} must be a "
    "Tensor of shape [D0, D1, ..., DN, {0}], e.g. [batch_size, {0}]."
    f"{' ' if v1 else ''}Suggested Fix (1): Check the label feature in your data. Each "
    "example must contain {0} value(s). If not, your choice of label was probably "
    "incorrect. Suggested Fix (2): In your input_fn, use tf.sparse_tensor_to_dense() to "
    "turn labels into a Tensor."
    for v1 in (False, True)
}


class V1Reduction(str):
    """A `tf.compat.v1.losses.Reduction` that divides by the weights (`weighted_mean`,
    `weighted_sum_by_nonzero_weights`), which only tf.compat.v1.estimator's canned
    classes give their heads, as 2.15's V1 heads took them."""


V1_MEAN = V1Reduction("weighted_mean")
V1_SUM_BY_NONZERO_WEIGHTS = V1Reduction("weighted_sum_by_nonzero_weights")


def _validate_reduction(loss_reduction):
    if isinstance(loss_reduction, V1Reduction):
        return loss_reduction
    reduction = getattr(loss_reduction, "value", loss_reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(
            # 2.15's words, the value as str() gives it.
            f"Invalid loss_reduction: {loss_reduction}. "
            "See `tf.losses.Reduction` for valid options."
        )
    return reduction


def _validate_loss_fn(loss_fn):
    if loss_fn is None:
        return None
    names = tuple(inspect.signature(loss_fn).parameters)
    args = set(names)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(f"loss_fn must contain argument: {required}. Given arguments: {names}")
    unexpected = args - {"labels", "logits", "features", "loss_reduction"}
    if unexpected:
        raise ValueError(f"loss_fn has unexpected args: {sorted(unexpected)}")
    return loss_fn


def _call_loss_fn(loss_fn, labels, logits, features, loss_dimension):
    kwargs = {"features": features} if "features" in inspect.signature(loss_fn).parameters else {}
    loss = tf.convert_to_tensor(loss_fn(labels=labels, logits=logits, **kwargs))
    expected = logits.shape[:-1].concatenate([loss_dimension])
    if not loss.shape.is_compatible_with(expected):
        # 2.15's ValueError, its arguments as it gave them (its graphs asserted it at
        # run time in the same words).
        raise ValueError(
            f"loss_fn must return Tensor of shape [D0, D1, ... DN, {loss_dimension}]. ",
            "logits_shape: ",
            _as_tuple(logits.shape),
            "loss_shape: ",
            _as_tuple(loss.shape),
        )
    return loss


def _as_tuple(shape):
    return tuple(shape.as_list()) if shape.rank is not None else shape


def _logits(logits, dimension, keep_rank=False):
    """Float32 logits [batch_size, dimension]; [batch_size] is taken for dimension 1.
    `keep_rank`: logits [D0, ..., DN, dimension] (a sequence's) stay so, as 2.15's heads
    predicted them (each position's probabilities, class ids, ...)."""
    logits = tf.cast(logits, tf.float32)
    rank = logits.shape.rank
    if keep_rank and rank is not None and rank > 2 and logits.shape[-1] == dimension:
        return logits
    if rank is not None and (
        (rank < 2 and dimension != 1) or (rank >= 2 and logits.shape[-1] not in (None, dimension))
    ):
        raise ValueError(
            f"logits shape must be [D0, D1, ... DN, logits_dimension], got {_as_tuple(logits.shape)}."
        )
    if rank == 2 and logits.shape[-1] == dimension and not tf.inside_function():
        # In a TF1 graph, as given: the export's `logits` output is the model's own
        # tensor (`dnn/logits/BiasAdd:0`), as 2.15's. A traced function's serving
        # signature keeps its static shape from the reshape.
        return logits
    if (rank is None or logits.shape[-1] is None) and not tf.executing_eagerly():
        # A last dimension the graph does not know: 2.15's check at run time, its words.
        shape = tf.shape(logits)
        check = tf.compat.v1.debugging.assert_equal(
            shape[-1],
            dimension,
            data=[shape],
            message="logits shape must be [D0, D1, ... DN, logits_dimension]",
        )
        with tf.control_dependencies([check]):
            logits = tf.identity(logits)
    return tf.reshape(logits, [-1, dimension])


def _dense_labels(labels, dimension, v1=False):
    """Labels as a [batch_size, dimension] tensor; [batch_size] is taken for dimension 1.
    (`v1`: refused in 2.15's V1 heads' words.)"""
    if labels is None:
        raise ValueError(_LABELS_NONE[v1])
    if isinstance(labels, tf.SparseTensor):
        raise ValueError(_SPARSE_LABELS[v1].format(dimension))
    labels = tf.convert_to_tensor(labels)
    rank = labels.shape.rank
    if rank is not None and rank >= 2 and labels.shape[-1] not in (None, dimension):
        raise ValueError(_MISMATCHED_LABEL_DIMENSION[v1].format(dimension, labels.shape[-1]))
    return tf.reshape(labels, [-1, dimension])


_MISMATCHED_LABEL_DIMENSION = {
    v1: "Mismatched label shape. Expected labels dimension={}.  Received {}. Suggested "
    f"Fix:{'' if v1 else ' '}If your classifier expects one-hot encoding label,"
    f"{'' if v1 else ' '}check your n_classes argument to the estimator and/or the shape of "
    "your label. Otherwise, check the shape of your label."
    for v1 in (False, True)
}


def _check_labels_shape(labels, logits_shape, dimension, v1=False):
    """2.15's checks of dense labels against logits [D0, ..., DN, n], in its words, where
    the shapes tell: labels [D0, ..., DN, dimension] (or [D0, ..., DN])."""
    if isinstance(labels, dict):  # (2.15's first line: its tensor conversion's words)
        raise TypeError(
            "Expected any non-tensor type, but got a tensor instead.\nThis head takes one "
            f"tensor of labels, not a dict (keys {sorted(labels)}); pandas_input_fn's y given "
            "as a DataFrame gives such a dict: give it a Series (one column) instead."
        )
    if labels is None or isinstance(labels, (tf.SparseTensor, tf.compat.v1.SparseTensorValue)):
        return
    shape = tf.TensorShape(labels.shape if hasattr(labels, "shape") else np.shape(labels))
    if shape.rank is None or logits_shape.rank is None or logits_shape.rank < 2:
        return  # (the kit takes logits [batch_size] for one dimension)
    if shape.rank == logits_shape.rank - 1:
        shape = shape.concatenate([1])
    if shape.rank < 2:
        raise ValueError(
            f"labels must have rank at least 2.  Received rank {shape.rank}, "
            f"shape {_as_tuple(shape)}"
        )
    if shape[-1] is not None and shape[-1] != dimension:
        raise ValueError(_MISMATCHED_LABEL_DIMENSION[v1].format(dimension, shape[-1]))
    expected = logits_shape[:-1].concatenate([dimension])
    if not shape.is_compatible_with(expected):
        raise ValueError(
            f"labels shape must be [D0, D1, ... DN, {dimension}]. Suggested Fix: check your "
            "n_classes argument to the head and/or the shape of your label., "
            f"expected_labels_shape: {_as_tuple(expected)}. labels_shape: {_as_tuple(shape)}."
        )


def _check_range(labels, n_classes, message=None, v1=False):
    """`labels`, asserted to lie in [0, n_classes) (in 2.15's V1 heads' words if `v1`).
    (The asserts are control dependencies, so that a graph-mode run, see graph_mode,
    checks them too.)"""
    if tf.executing_eagerly():
        # 2.15's eager check: ValueErrors, the upper bound first.
        if not bool(tf.reduce_all(labels <= tf.constant(n_classes - 1, labels.dtype))):
            raise ValueError(message or f"Labels must be <= {n_classes} - 1")
        if not bool(tf.reduce_all(labels >= tf.zeros([], labels.dtype))):
            raise ValueError(message or "Labels must be >= 0")
        return labels
    verb = "must" if v1 else "must be"  # (2.15's V1 heads left out the "be")
    checks = [
        # (2.15's words: TF1's assert_non_negative, whose message ends ".  ")
        tf.compat.v1.debugging.assert_non_negative(
            labels, message=message or f"Labels {verb} >= 0"
        ),
        tf.debugging.assert_less_equal(
            labels,
            tf.constant(n_classes - 1, labels.dtype),
            message=message or f"Labels {verb} <= n_classes - 1",
        ),
    ]
    with tf.control_dependencies([c for c in checks if c is not None]):
        return tf.identity(labels)


def _vocabulary_ids(values, vocabulary):
    """int64 ids of string `values` (any shape) in `vocabulary`, -1 for a string not in
    it (the default of 2.15's table lookup, which its range check then refused)."""
    flat = tf.reshape(values, [-1, 1])
    matches = tf.equal(flat, tf.constant(list(vocabulary))[None, :])
    found = tf.argmax(tf.cast(matches, tf.int32), axis=1)
    ids = tf.where(tf.reduce_any(matches, axis=1), found, tf.constant(-1, tf.int64))
    return tf.reshape(ids, tf.shape(values, out_type=tf.int64))


def _check_vocabulary(label_vocabulary, n_classes, multi_label=False, sized=True):
    """2.15's checks, in the words of its multi-label head or of its other heads; a
    vocabulary not `sized` may hold other than `n_classes` strings (2.15's binary head
    took any: its classes beyond the second are never predicted)."""
    if label_vocabulary is None:
        return None
    if not isinstance(label_vocabulary, (list, tuple)):
        kind = "must be a list or tuple" if multi_label else "should be a list or a tuple"
        raise ValueError(f"label_vocabulary {kind}. Given type: {type(label_vocabulary)}")
    if sized and len(label_vocabulary) != n_classes:
        if multi_label:
            raise ValueError(
                f"Length of label_vocabulary must be n_classes ({n_classes}). "
                f"Given: {len(label_vocabulary)}"
            )
        raise ValueError(
            '"label_vocabulary" does not have "n_classes" items. '
            f"len(label_vocabulary)={len(label_vocabulary)}, n_classes={n_classes}, "
            f"label_vocabulary={label_vocabulary}"
        )
    return list(label_vocabulary)


def _check_thresholds(thresholds, multi_label=False):
    thresholds = tuple(thresholds or ())
    for threshold in thresholds:
        if not 0.0 < threshold < 1.0:
            # 2.15's words: the multi-label head names the first bad threshold,
            # the binary head the tuple of them all.
            if multi_label:
                raise ValueError(f"thresholds must be in (0, 1) range. Given: {threshold}")
            raise ValueError(f"thresholds not in (0, 1): {(thresholds,)}.")
    return thresholds


def _weights(features, weight_column, logits, per_logit=False, logits_shape=None):
    """Example weights, [batch_size, 1] (or [batch_size, logits_dimension] if `per_logit`)."""
    if weight_column is None:
        return tf.ones_like(logits[:, :1])
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column, shape=(1,))
    if not isinstance(weight_column, fc_lib.NumericColumn):
        raise TypeError(  # (2.15's words)
            "Weight column must be either a string or NumericColumn. "
            f"Given type: {type(weight_column)}."
        )
    if weight_column.key not in (features or {}):
        # (2.15's words: its feature-column cache's, reading the weight column)
        raise ValueError(f"Feature {weight_column.key} is not in features dictionary.")
    weights = weight_column.get_dense_tensor(fc_lib.FeatureTransformationCache(features), None)
    weights = tf.cast(weights, tf.float32)
    if logits_shape is None or logits_shape.rank is None or logits_shape.rank <= 2:
        logits_shape = logits.shape
    width = _check_weights_shape(weights.shape, logits_shape, per_logit)
    if weights.shape.rank == 2 and logits_shape.rank == 2:
        return weights
    # Logits [D0, ..., DN, n] (a sequence's, say) are flattened to [-1, n]: so are weights
    # [D0, ..., DN] or [D0, ..., DN, 1 or n], as 2.15 weighted each position.
    return tf.reshape(weights, [-1, width])


def _check_weights_shape(weights_shape, logits_shape, per_logit):
    """The weights' last width (1 or the logits'), for the shapes 2.15 accepted."""
    lead = logits_shape[:-1]
    allowed = [lead, lead.concatenate([1])] + ([logits_shape] if per_logit else [])
    for shape in allowed:
        if weights_shape.is_compatible_with(shape):
            return 1 if shape is not logits_shape else logits_shape[-1]
    kinds = (
        "[D0, D1, ... DN], [D0, D1, ... DN, 1] or [D0, D1, ... DN, logits_dimension]"
        if per_logit
        else "[D0, D1, ... DN] or [D0, D1, ... DN, 1]"
    )
    raise ValueError(
        f"weights shape must be {kinds}, logits_shape: {logits_shape}. "
        f"weights_shape: {weights_shape}."
    )


def _reduce(unreduced, weights, reduction):
    # Named as tf.estimator 2.15's heads' compute_weighted_loss named it: in a TF1 graph
    # a V1 canned estimator's training loss is <scope>/head/weighted_loss/Sum (SUM) or
    # .../weighted_loss/value (the means), the tensors official/r1's wide_deep samples
    # log by name; a mean of no elements is 0, as its div_no_nan made it.
    with tf.name_scope("weighted_loss"):
        weighted = unreduced * weights
        total = tf.reduce_sum(weighted, name="Sum")
        if reduction != SUM:
            total = tf.math.divide_no_nan(
                total, _denominator(weights, weighted, reduction), name="value"
            )
    if tf.distribute.in_cross_replica_context():
        return total
    # One replica's share: optimizers sum gradients over replicas, so the
    # global loss is the sum of these.
    replicas = tf.distribute.get_replica_context().num_replicas_in_sync
    return total / replicas if replicas > 1 else total


def _denominator(weights, weighted, reduction):
    """What a mean loss divides by: the number of losses, or (V1) their weights' sum or
    the number of nonzero weights, as TF1's compute_weighted_loss counted them."""
    if reduction == V1_MEAN:
        return tf.reduce_sum(weights * tf.ones_like(weighted))
    if reduction == V1_SUM_BY_NONZERO_WEIGHTS:
        return tf.cast(tf.math.count_nonzero(weights * tf.ones_like(weighted)), tf.float32)
    return tf.cast(tf.size(weighted), tf.float32)


def _with_regularization(loss, regularization_losses):
    if regularization_losses is None:
        return loss
    return loss + tf.math.add_n(list(regularization_losses))


def _regularization_summary(tag, regularization_losses):
    if regularization_losses is not None:
        summaries.scalar(tag, lambda: tf.math.add_n(list(regularization_losses)))


@contextlib.contextmanager
def _training_scope(v1_scope):
    """2.15's V2 heads built the train op in a top-level `training` name scope, so a
    `train_op_fn`'s TF1 Adam named its state `training/beta1_power`; its V1 heads
    (`v1_scope`) did not."""
    if v1_scope:
        yield
        return
    with tf.compat.v1.name_scope(""), tf.compat.v1.name_scope("training"):
        yield


def _train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops):
    """The TRAIN spec's op: `optimizer` on `trainable_variables`, or `train_op_fn(loss)`."""
    if update_ops is not None and not isinstance(update_ops, (list, tuple)):
        raise ValueError(f"update_ops should be a list or a tuple. Given type: {type(update_ops)}.")
    if optimizer is not None:
        if train_op_fn is not None:
            raise ValueError("train_op_fn and optimizer cannot both be set.")
        if not hasattr(optimizer, "apply_gradients"):
            raise ValueError(
                f"The given optimizer is not a Keras optimizer instance. Received {type(optimizer)}."
            )
        if not isinstance(trainable_variables, (list, tuple)):
            if trainable_variables is None:
                raise ValueError("trainable_variables cannot be None. Given None")
            raise ValueError(
                "trainable_variables should be a list or a tuple. "
                f"Given type: {type(trainable_variables)}."
            )
        train_op = optimizers.apply(optimizer, loss, trainable_variables)
    elif train_op_fn is not None:
        train_op = train_op_fn(loss)
    else:
        raise ValueError("train_op_fn and optimizer cannot both be None.")
    if update_ops:
        train_op = tf.group(train_op, *update_ops)
    return train_op


class _AccuracyBaseline(tf_keras.metrics.Mean):
    """The accuracy of always predicting the majority class: max(mean, 1 - mean) of the labels."""

    def result(self):  # (0 before any example, as 2.15's total / count)
        return tf.math.divide_no_nan(tf.maximum(self.total, self.count - self.total), self.count)


class Head(abc.ABC):
    """tf.estimator's `Head`: loss, predictions and metrics from logits.

    A subclass implements the properties and the four methods; this base then
    builds the `EstimatorSpec` for each mode from them (tf.estimator 2.15 left
    `create_estimator_spec` to each subclass), exporting the predictions under
    `serving_default` unless `_export_outputs` says otherwise.
    """

    @property
    @abc.abstractmethod
    def name(self):
        """The head's name, or None; it suffixes the head's metric keys."""

    @property
    @abc.abstractmethod
    def logits_dimension(self):
        """The size of the logits' last dimension."""

    @property
    @abc.abstractmethod
    def loss_reduction(self):
        """How the training loss is reduced over the batch (a tf.losses.Reduction)."""

    @abc.abstractmethod
    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The scalar training loss, regularization included."""

    @abc.abstractmethod
    def predictions(self, logits, keys=None):
        """A dict of prediction tensors, all of them or those in `keys`."""

    @abc.abstractmethod
    def metrics(self, regularization_losses=None):
        """A dict of fresh metric objects, by metric key."""

    @abc.abstractmethod
    def update_metrics(
        self, eval_metrics, features, logits, labels, regularization_losses=None, mode=None
    ):
        """Updates `eval_metrics` (from `metrics()`) with one batch; returns them."""

    def _summary_key(self, key):
        return f"{key}/{self.name}" if self.name else key

    def _export_outputs(self, predictions):
        return {export_lib.SERVING_DEFAULT: export_lib.PredictOutput(predictions)}

    def _predict_spec(self, features, logits):
        predictions = self.predictions(logits)
        return EstimatorSpec(
            ModeKeys.PREDICT,
            predictions=predictions,
            export_outputs=self._export_outputs(predictions),
        )

    def create_estimator_spec(
        self,
        features,
        mode,
        logits,
        labels=None,
        optimizer=None,
        trainable_variables=None,
        train_op_fn=None,
        update_ops=None,
        regularization_losses=None,
    ):
        """The `EstimatorSpec` a `model_fn` returns.  In TRAIN mode, `optimizer` (with
        `trainable_variables`) or `train_op_fn(loss)` makes the train op.

        The head's ops are built in a name scope of its own, as in tf.estimator: an
        export output fetched from an unscoped op named like another (a `strided_slice`)
        can be saved with that op's shape and then fail to load.  The train op is built
        outside it, so the optimizer's slots are named after the variables alone.
        (tf.compat.v1's canned DNN and linear models build theirs under `dnn/head/` and
        `linear/head/`, as 2.15's V1 heads were: `_scope`.)
        """
        with tf.name_scope(getattr(self, "_scope", None) or self.name or "head"):
            if mode == ModeKeys.PREDICT:
                return self._predict_spec(features, logits)
            predictions = self.predictions(logits)
            loss = self.loss(
                labels,
                logits,
                features=features,
                mode=mode,
                regularization_losses=regularization_losses,
            )
            if mode == ModeKeys.EVAL:
                eval_metrics = self.update_metrics(
                    self.metrics(regularization_losses=regularization_losses),
                    features,
                    logits,
                    labels,
                    regularization_losses=regularization_losses,
                )
                return EstimatorSpec(
                    mode, predictions=predictions, loss=loss, eval_metric_ops=eval_metrics
                )
        self._train_summaries(features, logits, labels, loss, regularization_losses)
        with _training_scope(getattr(self, "_scope", None)):
            train_op = _train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops)
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

    def _train_summaries(self, features, logits, labels, loss, regularization_losses):
        """The training summaries 2.15's heads wrote: a named head's loss as
        `loss/<name>` (an unnamed head's `loss` is the Estimator's own) and the sum of
        `regularization_losses` as `regularization_loss[/<name>]`."""
        del features, logits, labels
        if self.name:
            summaries.scalar(self._summary_key(LOSS), lambda: loss)
        _regularization_summary(self._summary_key(REGULARIZATION_LOSS), regularization_losses)


class _SingleHead(Head):
    """What the stock heads share: weights, reduction, an optional `loss_fn`, the loss."""

    # Whether a weight column may give one weight per logit (regression only).
    _per_logit_weights = False
    # Whether a V1 canned class made it (labels it cannot take are refused in the V1 words).
    _v1_words = False

    def __init__(self, logits_dimension, weight_column, loss_reduction, loss_fn, name):
        self._logits_dimension = logits_dimension
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._reduction = _validate_reduction(loss_reduction)
        self._loss_fn = _validate_loss_fn(loss_fn)
        self._name = name

    name = property(lambda self: self._name)
    logits_dimension = property(lambda self: self._logits_dimension)
    loss_reduction = property(lambda self: self._loss_reduction)

    @abc.abstractmethod
    def _processed_labels(self, labels):
        """Labels as the loss and the metrics take them, [batch_size, ...]."""

    @abc.abstractmethod
    def _default_loss(self, labels, logits):
        """The unweighted loss per example when no `loss_fn` is given."""

    @abc.abstractmethod
    def _metric_objects(self):
        """Fresh metrics by unsuffixed key (`metrics` appends the head's name)."""

    @abc.abstractmethod
    def _update(self, metric, labels, logits, unweighted_loss, weights):
        """Updates the head's metrics with one batch; `metric(key)` is the one for `key`."""

    def _loss_dimension(self):
        return 1

    def _label_dimension(self):
        """The last dimension of dense labels: one class id, or one value per logit."""
        return 1

    def _unweighted_loss_and_weights(self, labels, logits, features, logits_shape=None):
        if self._loss_fn is not None:
            unweighted = _call_loss_fn(
                self._loss_fn, labels, logits, features, self._loss_dimension()
            )
        else:
            unweighted = self._default_loss(labels, logits)
        weights = _weights(
            features, self._weight_column, logits, self._per_logit_weights, logits_shape
        )
        return unweighted, weights

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        shape = tf.TensorShape(getattr(logits, "shape", None))
        # 2.15's V2 heads computed it under `losses` (`head/losses/weighted_loss/value` in
        # a TF1 graph, which hooks fetch by name); its V1 heads in their own scope.
        with contextlib.nullcontext() if self._v1_words else tf.name_scope("losses"):
            logits = _logits(logits, self.logits_dimension)
            _check_labels_shape(labels, shape, self._label_dimension(), self._v1_words)
            labels = self._processed_labels(labels)
            unweighted, weights = self._unweighted_loss_and_weights(labels, logits, features, shape)
            reduced = _reduce(unweighted, weights, self._reduction)
            total = _with_regularization(reduced, regularization_losses)
        if self._v1_words and not tf.executing_eagerly():
            # 2.15's V1 heads reduced it with tf.compat.v1.losses, which collects it.
            tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.LOSSES, reduced)
        if mode == ModeKeys.TRAIN and self._reduction == SUM:
            # 2.15's V1 heads summarized the loss themselves (so the Estimator added no
            # `loss` of its own), then a summed loss's mean over the examples' weights.
            if not self.name:
                summaries.scalar("loss", lambda: total, v1_only=True)
            summaries.scalar(
                "average_loss",
                lambda: reduced / tf.reduce_sum(weights * tf.ones_like(unweighted)),
                v1_only=True,
            )
        return total

    def metrics(self, regularization_losses=None):
        metrics = {self._summary_key(key): metric for key, metric in self._metric_objects().items()}
        if regularization_losses is not None:
            metrics[self._summary_key(REGULARIZATION_LOSS)] = tf_keras.metrics.Mean(
                name=REGULARIZATION_LOSS
            )
        return metrics

    def update_metrics(
        self, eval_metrics, features, logits, labels, regularization_losses=None, mode=None
    ):
        shape = tf.TensorShape(getattr(logits, "shape", None))
        logits = _logits(logits, self.logits_dimension)
        _check_labels_shape(labels, shape, self._label_dimension(), self._v1_words)
        labels = self._processed_labels(labels)
        unweighted, weights = self._unweighted_loss_and_weights(labels, logits, features, shape)
        if self._weight_column is None:
            # Unweighted updates give the same sums as weights of ones, without each metric's
            # dynamic check that the weights broadcast (two conds apiece to trace).
            weights = None
        self._update(
            lambda key: eval_metrics[self._summary_key(key)], labels, logits, unweighted, weights
        )
        if regularization_losses is not None:
            eval_metrics[self._summary_key(REGULARIZATION_LOSS)].update_state(
                tf.math.add_n(list(regularization_losses))
            )
        return eval_metrics


def _threshold_metrics(thresholds):
    metrics = {}
    for t in thresholds:
        metrics[f"accuracy/positive_threshold_{t:g}"] = tf_keras.metrics.BinaryAccuracy(threshold=t)
        metrics[f"precision/positive_threshold_{t:g}"] = tf_keras.metrics.Precision(thresholds=t)
        metrics[f"recall/positive_threshold_{t:g}"] = tf_keras.metrics.Recall(thresholds=t)
    return metrics


def _broadcast(weights, values):
    return None if weights is None else tf.broadcast_to(weights, tf.shape(values))


def _update_threshold_metrics(metric, thresholds, labels, probabilities, weights):
    for t in thresholds:
        for kind in ("accuracy", "precision", "recall"):
            metric(f"{kind}/positive_threshold_{t:g}").update_state(
                labels, probabilities, sample_weight=weights
            )


def _auc_metrics():
    return {
        "auc": tf_keras.metrics.AUC(name="auc"),
        "auc_precision_recall": tf_keras.metrics.AUC(curve="PR", name="auc_precision_recall"),
    }


class _ClassHead(_SingleHead):
    """Class ids from integer labels, or from strings through `label_vocabulary`."""

    _MULTI_LABEL = False  # 2.15's multi-label head words its argument errors its own way
    _SIZED_VOCABULARY = True  # a label_vocabulary of n_classes strings only

    def __init__(
        self,
        n_classes,
        logits_dimension,
        weight_column,
        label_vocabulary,
        loss_reduction,
        loss_fn,
        name,
    ):
        super().__init__(logits_dimension, weight_column, loss_reduction, loss_fn, name)
        self._n_classes = n_classes
        self._vocabulary = _check_vocabulary(
            label_vocabulary, n_classes, self._MULTI_LABEL, self._SIZED_VOCABULARY
        )

    def _class_ids(self, labels, dtype=tf.int64):
        """Labels as class ids [batch_size, 1] of `dtype`, checked to lie in range."""
        labels = _dense_labels(labels, 1, self._v1_words)
        if self._vocabulary is not None:
            if labels.dtype != tf.string:
                raise self._not_strings_error(labels.dtype)
            labels = _vocabulary_ids(labels, self._vocabulary)
        elif labels.dtype == tf.string:
            raise self._strings_without_vocabulary_error()
        return _check_range(tf.cast(labels, dtype), self._n_classes, v1=self._v1_words)

    @staticmethod
    def _not_strings_error(dtype):
        return ValueError(
            f"Labels dtype should be string if there is a vocabulary. Instead got {dtype}"
        )

    @staticmethod
    def _strings_without_vocabulary_error():
        return ValueError("String labels need label_vocabulary.")

    def _all_classes(self, logits):
        """Every class's string: the whole vocabulary's, as 2.15 listed it (a binary
        head's may hold more than two)."""
        batch = tf.shape(logits)[0]
        count = self._n_classes if self._vocabulary is None else len(self._vocabulary)
        return tf.tile(self._class_strings(tf.range(count))[None, :], [batch, 1])

    def _class_strings(self, class_ids, name=None):
        """The classes' strings: the vocabulary's, else the ids' as 2.15 made them
        (`tf.strings.as_string`)."""
        if self._vocabulary is None:
            return tf.strings.as_string(class_ids, name=name)
        return tf.gather(tf.constant(self._vocabulary), class_ids, name=name)

    def _predicted_class_strings(self, class_ids):
        """The `classes` prediction: looked up in a table in a TF1 graph (an export's),
        as 2.15's heads did; else `_class_strings`, named `str_classes`."""
        graph = tf.compat.v1.get_default_graph()
        if self._vocabulary is None or tf.executing_eagerly() or graph.building_function:
            return self._class_strings(class_ids, name="str_classes")
        return self._looked_up_classes(class_ids)

    def _looked_up_classes(self, class_ids):
        """The predicted classes' strings in a TF1 graph (an export's) as 2.15's heads
        looked them up: a `class_string_lookup` table, so the tensor is
        `.../predictions/hash_table_Lookup/LookupTableFindV2:0`, the name TF1 serving
        code fetches."""
        table = tf.compat.v1.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.range(len(self._vocabulary), dtype=tf.int64),
                tf.constant(self._vocabulary),
                name="class_string_lookup",
            ),
            default_value="UNK",
        )
        return table.lookup(tf.cast(class_ids, tf.int64))

    def _class_predictions(self, logits, scores):
        """The predictions from `scores` (softmax'd, and the class ids their argmax), in the
        head's `predictions` scope; the tensors are named as 2.15's heads named them
        (`head/predictions/probabilities`, `.../class_ids`, `.../str_classes`, `.../Tile`
        and `.../Tile_1`), which TF1 serving code fetches by name."""
        batch = tf.shape(logits)[0]
        if self._every_class_first:
            all_class_ids, all_classes = self._every_class(batch)
        probabilities = tf.nn.softmax(scores, name="probabilities")
        class_ids = tf.expand_dims(tf.argmax(scores, axis=-1, name="class_ids"), -1)
        classes = self._predicted_class_strings(class_ids)
        if not self._every_class_first:
            all_class_ids = tf.tile(tf.range(self._n_classes, dtype=tf.int32)[None, :], [batch, 1])
            all_classes = self._all_classes(logits)
        return {
            "logits": logits,
            "probabilities": probabilities,
            "class_ids": class_ids,
            "classes": classes,
            "all_class_ids": all_class_ids,
            "all_classes": all_classes,
        }

    # 2.15's V1 multi-class head made every class's ids and strings before the argmax, so
    # its class ids were `.../predictions/ExpandDims_2` (compat_v1's classifiers set it).
    _every_class_first = False

    def _every_class(self, batch):
        """(all class ids, all class strings) as 2.15's V1 multi-class head made them."""
        ids = tf.range(self._n_classes)
        return (
            tf.tile(tf.expand_dims(ids, 0), [batch, 1]),
            tf.tile(tf.expand_dims(self._class_strings(ids), 0), [batch, 1]),
        )

    def _export_outputs(self, predictions):
        # The classes of its own, in the head's scope (`head/Tile`), as 2.15's.
        classification = export_lib.ClassificationOutput(
            scores=predictions["probabilities"],
            classes=self._all_classes(predictions["probabilities"]),
        )
        return {
            export_lib.SERVING_DEFAULT: classification,
            export_lib.CLASSIFY: classification,
            export_lib.PREDICT: export_lib.PredictOutput(predictions),
        }


def _selected(predictions, keys):
    if not keys:
        return predictions
    for key in keys:
        if key not in predictions:
            raise ValueError(
                f"Prediction key must be in PredictionKeys, given: {key}. "
                f"Valid prediction keys include {sorted(predictions)}."
            )
    return {key: predictions[key] for key in keys}


class BinaryClassHead(_ClassHead):
    """Two classes: sigmoid cross-entropy over one logit."""

    _SIZED_VOCABULARY = False  # (2.15's binary heads took a vocabulary of any length)

    def __init__(
        self,
        weight_column=None,
        thresholds=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        loss_fn=None,
        name=None,
    ):
        super().__init__(2, 1, weight_column, label_vocabulary, loss_reduction, loss_fn, name)
        self._thresholds = _check_thresholds(thresholds)

    def _processed_labels(self, labels):
        # Float labels stay as they are (in [0, 1]), as tf.estimator took them.
        return self._class_ids(labels, tf.float32)

    # 2.15's two-class head refused labels of the wrong type where TensorFlow did: its
    # vocabulary's table (a TypeError) and, for strings without one, the cast to float
    # when the step ran (an UnimplementedError); the same types and first lines here.
    @staticmethod
    def _not_strings_error(dtype):
        return TypeError(
            f"Dtype of argument `keys` must be {tf.string}, received: {dtype}\n"
            "Labels dtype should be string if there is a vocabulary."
        )

    @staticmethod
    def _strings_without_vocabulary_error():
        return tf.errors.UnimplementedError(
            None,
            None,
            "Graph execution error:\n\nCast string to float is not supported: string labels "
            "need label_vocabulary.",
        )

    def _default_loss(self, labels, logits):
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, logits, keys=None):
        logits = _logits(logits, 1, keep_rank=True)
        with tf.name_scope("predictions"):
            logistic = tf.sigmoid(logits, name="logistic")
            two_class_logits = tf.concat(
                [tf.zeros_like(logits), logits], axis=-1, name="two_class_logits"
            )
            made = self._class_predictions(logits, two_class_logits)
        # (in 2.15's order, which a printed prediction and predict_keys' error show)
        predictions = {"logits": made.pop("logits"), "logistic": logistic, **made}
        return _selected(predictions, keys)

    def _metric_objects(self):
        return {
            AVERAGE_LOSS: tf_keras.metrics.Mean(name=AVERAGE_LOSS),
            ACCURACY: tf_keras.metrics.Accuracy(name=ACCURACY),
            "precision": tf_keras.metrics.Precision(name="precision"),
            "recall": tf_keras.metrics.Recall(name="recall"),
            PREDICTION_MEAN: tf_keras.metrics.Mean(name=PREDICTION_MEAN),
            LABEL_MEAN: tf_keras.metrics.Mean(name=LABEL_MEAN),
            "accuracy_baseline": _AccuracyBaseline(name="accuracy_baseline"),
            **_auc_metrics(),
            **_threshold_metrics(self._thresholds),
        }

    def _update(self, metric, labels, logits, unweighted_loss, weights):
        logistic = tf.sigmoid(logits)
        class_ids = tf.cast(logits > 0.0, tf.float32)
        metric(AVERAGE_LOSS).update_state(unweighted_loss, sample_weight=weights)
        for key in (ACCURACY, "precision", "recall"):
            metric(key).update_state(labels, class_ids, sample_weight=weights)
        metric(PREDICTION_MEAN).update_state(logistic, sample_weight=weights)
        for key in (LABEL_MEAN, "accuracy_baseline"):
            metric(key).update_state(labels, sample_weight=weights)
        for key in ("auc", "auc_precision_recall"):
            metric(key).update_state(labels, logistic, sample_weight=weights)
        _update_threshold_metrics(metric, self._thresholds, labels, logistic, weights)

    def _export_outputs(self, predictions):
        outputs = super()._export_outputs(predictions)
        outputs[export_lib.REGRESS] = export_lib.RegressionOutput(predictions["logistic"])
        return outputs


class MultiClassHead(_ClassHead):
    """More than two classes: softmax cross-entropy over `n_classes` logits."""

    def __init__(
        self,
        n_classes,
        weight_column=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        loss_fn=None,
        name=None,
    ):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        if n_classes <= 2:
            raise ValueError(f"n_classes must be > 2: {n_classes}.")
        super().__init__(
            n_classes, n_classes, weight_column, label_vocabulary, loss_reduction, loss_fn, name
        )

    def _processed_labels(self, labels):
        sparse = isinstance(labels, (tf.SparseTensor, tf.compat.v1.SparseTensorValue))
        if self._vocabulary is None and labels is not None and not sparse:
            dtype = tf.as_dtype(getattr(labels, "dtype", None) or np.asarray(labels).dtype)
            if not dtype.is_integer:
                raise ValueError(f"Labels dtype should be integer. Instead got {dtype}.")
        return self._class_ids(labels)

    def _default_loss(self, labels, logits):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[:, 0], logits=logits)[
            :, None
        ]

    def predictions(self, logits, keys=None):
        logits = _logits(logits, self.logits_dimension, keep_rank=True)
        with tf.name_scope("predictions"):
            predictions = self._class_predictions(logits, logits)
        return _selected(predictions, keys)

    def _metric_objects(self):
        return {
            AVERAGE_LOSS: tf_keras.metrics.Mean(name=AVERAGE_LOSS),
            ACCURACY: tf_keras.metrics.Accuracy(name=ACCURACY),
        }

    def _update(self, metric, labels, logits, unweighted_loss, weights):
        metric(AVERAGE_LOSS).update_state(unweighted_loss, sample_weight=weights)
        metric(ACCURACY).update_state(
            labels, tf.argmax(logits, axis=-1)[:, None], sample_weight=weights
        )


class MultiLabelHead(_ClassHead):
    """Any subset of `n_classes` labels per example: a sigmoid cross-entropy per class.

    Labels are multi-hot [batch_size, n_classes], or a SparseTensor of class ids
    (strings with `label_vocabulary`).
    """

    _MULTI_LABEL = True

    def __init__(
        self,
        n_classes,
        weight_column=None,
        thresholds=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        loss_fn=None,
        classes_for_class_based_metrics=None,
        name=None,
    ):
        if n_classes is None or n_classes < 2:
            raise ValueError(
                f"n_classes must be > 1 for multi-label classification. Given: {n_classes}"
            )
        super().__init__(
            n_classes, n_classes, weight_column, label_vocabulary, loss_reduction, loss_fn, name
        )
        self._thresholds = _check_thresholds(thresholds, multi_label=True)
        self._metric_classes = self._class_ids_for_metrics(classes_for_class_based_metrics)

    def _label_dimension(self):
        return self.logits_dimension

    def _class_ids_for_metrics(self, classes):
        ids = []
        for cls in classes or ():
            if isinstance(cls, str):
                if self._vocabulary is None:
                    raise ValueError(
                        "label_vocabulary must be provided when classes_for_class_based_metrics "
                        "are strings."
                    )
                ids.append(self._vocabulary.index(cls))
            elif not 0 <= cls < self._n_classes:
                raise ValueError(
                    f"All classes_for_class_based_metrics must be in range "
                    f"[0, {self._n_classes - 1}]. Given: {cls}"
                )
            else:
                ids.append(int(cls))
        return tuple(ids)

    def _processed_labels(self, labels):
        """Multi-hot int64 labels [batch_size, n_classes]."""
        if labels is None:
            raise ValueError(_LABELS_NONE[self._v1_words])
        if isinstance(labels, tf.compat.v1.SparseTensorValue):
            labels = tf.SparseTensor.from_value(labels)
        if isinstance(labels, tf.SparseTensor):
            if labels.dtype == tf.string:
                if self._vocabulary is None:
                    raise ValueError("String labels need label_vocabulary.")
                # (unchecked, as in 2.15: a -1 fails to_indicator's bounds)
                ids = _vocabulary_ids(labels.values, self._vocabulary)
            elif labels.dtype.is_integer:
                ids = _check_range(
                    tf.cast(labels.values, tf.int64),
                    self._n_classes,
                    f"labels must be an integer SparseTensor with values in [0, {self._n_classes})",
                )
            else:
                raise ValueError(f"Labels dtype should be integer. Instead got {labels.dtype}.")
            indicator = tf.sparse.to_indicator(
                tf.SparseTensor(labels.indices, ids, labels.dense_shape), self._n_classes
            )
            return tf.reshape(tf.cast(indicator, tf.int64), [-1, self._n_classes])
        labels = _dense_labels(labels, self._n_classes)
        if labels.dtype == tf.string:
            raise ValueError(
                "String labels must come as a SparseTensor of class names (with label_vocabulary)."
            )
        return _check_range(
            labels, 2, "labels must be an integer indicator Tensor with values in [0, 1]"
        )

    def _default_loss(self, labels, logits):
        per_class = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(labels, tf.float32), logits=logits
        )
        return tf.reduce_mean(per_class, axis=-1, keepdims=True)

    def predictions(self, logits, keys=None):
        logits = _logits(logits, self.logits_dimension, keep_rank=True)
        predictions = {
            "logits": logits,
            "probabilities": tf.sigmoid(logits),
            "classes": self._all_classes(logits),
        }
        return _selected(predictions, keys)

    def _class_key(self, pattern, class_id):
        name = f"class{class_id}" if self._vocabulary is None else self._vocabulary[class_id]
        return f"{pattern}/{name}"

    def _metric_objects(self):
        metrics = {AVERAGE_LOSS: tf_keras.metrics.Mean(name=AVERAGE_LOSS), **_auc_metrics()}
        metrics.update(_threshold_metrics(self._thresholds))
        for class_id in self._metric_classes:
            metrics[self._class_key("probability_mean", class_id)] = tf_keras.metrics.Mean()
            metrics[self._class_key("auc", class_id)] = tf_keras.metrics.AUC()
            metrics[self._class_key("auc_precision_recall", class_id)] = tf_keras.metrics.AUC(
                curve="PR"
            )
        return metrics

    def _update(self, metric, labels, logits, unweighted_loss, weights):
        probabilities = tf.sigmoid(logits)
        metric(AVERAGE_LOSS).update_state(unweighted_loss, sample_weight=weights)
        for key in ("auc", "auc_precision_recall"):
            metric(key).update_state(labels, probabilities, sample_weight=weights)
        _update_threshold_metrics(metric, self._thresholds, labels, probabilities, weights)
        for class_id in self._metric_classes:
            class_probabilities = probabilities[:, class_id : class_id + 1]
            class_labels = labels[:, class_id : class_id + 1]
            metric(self._class_key("probability_mean", class_id)).update_state(
                class_probabilities, sample_weight=weights
            )
            for pattern in ("auc", "auc_precision_recall"):
                metric(self._class_key(pattern, class_id)).update_state(
                    class_labels, class_probabilities, sample_weight=weights
                )

    def _export_outputs(self, predictions):
        classification = export_lib.ClassificationOutput(
            scores=predictions["probabilities"], classes=predictions["classes"]
        )
        return {
            export_lib.SERVING_DEFAULT: classification,
            export_lib.CLASSIFY: classification,
            export_lib.PREDICT: export_lib.PredictOutput(predictions),
        }


class RegressionHead(_SingleHead):
    """Real-valued labels, `label_dimension` of them: squared error by default.

    With `inverse_link_fn`, `predictions` is that function of the logits and the
    logits are predicted too (a generalized linear model's mean).
    """

    _per_logit_weights = True

    def __init__(
        self,
        label_dimension=1,
        weight_column=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        loss_fn=None,
        inverse_link_fn=None,
        name=None,
    ):
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}.")
        super().__init__(label_dimension, weight_column, loss_reduction, loss_fn, name)
        self._inverse_link_fn = inverse_link_fn

    def _loss_dimension(self):
        return self.logits_dimension

    _label_dimension = _loss_dimension

    def _processed_labels(self, labels):
        labels = _dense_labels(labels, self.logits_dimension, self._v1_words)
        if labels.dtype == tf.string:  # (2.15: its cast's error, as the step ran)
            raise tf.errors.UnimplementedError(
                None,
                None,
                "Graph execution error:\n\nCast string to float is not supported: regression "
                "labels must be numeric.",
            )
        return tf.cast(labels, tf.float32)

    def _default_loss(self, labels, logits):
        return tf.square(logits - labels)

    def predictions(self, logits, keys=None):
        logits = _logits(logits, self.logits_dimension, keep_rank=True)
        if self._inverse_link_fn is None:
            return _selected({"predictions": logits}, keys)
        return _selected({"predictions": self._inverse_link_fn(logits), "logits": logits}, keys)

    def _metric_objects(self):
        return {
            AVERAGE_LOSS: tf_keras.metrics.Mean(name=AVERAGE_LOSS),
            PREDICTION_MEAN: tf_keras.metrics.Mean(name=PREDICTION_MEAN),
            LABEL_MEAN: tf_keras.metrics.Mean(name=LABEL_MEAN),
        }

    def _update(self, metric, labels, logits, unweighted_loss, weights):
        predicted = self.predictions(logits)["predictions"]
        metric(AVERAGE_LOSS).update_state(
            unweighted_loss, sample_weight=_broadcast(weights, unweighted_loss)
        )
        full_weights = _broadcast(weights, labels)
        metric(LABEL_MEAN).update_state(labels, sample_weight=full_weights)
        metric(PREDICTION_MEAN).update_state(predicted, sample_weight=full_weights)

    def _export_outputs(self, predictions):
        regression = export_lib.RegressionOutput(predictions["predictions"])
        return {
            export_lib.SERVING_DEFAULT: regression,
            export_lib.REGRESS: regression,
            export_lib.PREDICT: export_lib.PredictOutput(predictions),
        }


class PoissonRegressionHead(RegressionHead):
    """Counts: Poisson loss on log-rate logits; `predictions` is the rate exp(logits)."""

    def __init__(
        self,
        label_dimension=1,
        weight_column=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        compute_full_loss=True,
        name=None,
    ):
        super().__init__(
            label_dimension,
            weight_column,
            loss_reduction,
            inverse_link_fn=tf.math.exp,
            name=name,
        )
        self._compute_full_loss = compute_full_loss

    def _default_loss(self, labels, logits):
        return tf.nn.log_poisson_loss(
            targets=labels, log_input=logits, compute_full_loss=self._compute_full_loss
        )


class LogisticRegressionHead(RegressionHead):
    """Labels in [0, 1]: sigmoid cross-entropy; `predictions` is sigmoid(logits)."""

    def __init__(self, weight_column=None, loss_reduction=SUM_OVER_BATCH_SIZE, name=None):
        super().__init__(
            1, weight_column, loss_reduction, inverse_link_fn=tf.math.sigmoid, name=name
        )

    def _default_loss(self, labels, logits):
        labels = _check_range(labels, 2, "Labels must be in range [0, 1]")
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)


class MultiHead(Head):
    """Several named heads over one model: one logits slice and one label per head.

    Logits come as a dict by head name or as one tensor, split in head order;
    labels as a dict by head name.  The loss is the (`head_weights`-weighted) sum
    of the heads' losses.  Predictions are keyed `(head name, key)`; metric keys
    are the heads' own (suffixed by their names) plus `loss/<head name>`.  The
    first head's default export output is the default one; each head's outputs
    are exported as `<head name>` and `<head name>/<output>`, and `predict`
    merges all the heads' predictions as `<head name>/<key>`.
    """

    def __init__(self, heads, head_weights=None):
        if not heads:
            raise ValueError(f"Must specify heads. Given: {heads}")
        if head_weights and len(head_weights) != len(heads):
            raise ValueError(
                f"heads and head_weights must have the same size. Given len(heads): "
                f"{len(heads)}. Given len(head_weights): {len(head_weights)}."
            )
        for head in heads:
            if head.name is None:
                raise ValueError(f"All given heads must have name specified. Given: {head}")
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights) if head_weights else ()

    @property
    def name(self):
        return "_".join(head.name for head in self._heads)

    @property
    def logits_dimension(self):
        return sum(head.logits_dimension for head in self._heads)

    @property
    def loss_reduction(self):
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError(
                f"The loss_reduction must be the same for different heads. Given: {reductions}"
            )
        return reductions[0]

    def _split_logits(self, logits):
        if isinstance(logits, dict):
            missing = sorted({head.name for head in self._heads} - set(logits))
            if missing:
                raise ValueError(f"logits has missing values for head(s): {missing}")
            return logits
        logits = tf.convert_to_tensor(logits)
        dimensions = [head.logits_dimension for head in self._heads]
        if logits.shape[-1] is not None and logits.shape[-1] != sum(dimensions):
            raise ValueError(
                f"Could not split logits of shape {logits.shape} among the heads with logits "
                f"dimensions {dimensions}: the last dimension should be {sum(dimensions)}."
            )
        parts = tf.split(logits, dimensions, axis=-1)
        return {head.name: part for head, part in zip(self._heads, parts, strict=True)}

    def _check_labels(self, labels):
        if not isinstance(labels, dict):
            raise ValueError(f"labels must be a dict. Given: {labels}")
        missing = sorted({head.name for head in self._heads} - set(labels))
        if missing:
            raise ValueError(f"labels has missing values for head(s): {missing}")
        return labels

    def _head_losses(self, labels, logits, features, mode):
        logits = self._split_logits(logits)
        labels = self._check_labels(labels)
        return [
            head.loss(labels[head.name], logits[head.name], features=features, mode=mode)
            for head in self._heads
        ]

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        losses = self._head_losses(labels, logits, features, mode)
        if self._head_weights:
            losses = [
                loss * weight for loss, weight in zip(losses, self._head_weights, strict=True)
            ]
        return _with_regularization(tf.math.add_n(losses), regularization_losses)

    def predictions(self, logits, keys=None):
        logits = self._split_logits(logits)
        return {
            (head.name, key): value
            for head in self._heads
            for key, value in head.predictions(logits[head.name]).items()
        }

    def metrics(self, regularization_losses=None):
        """The multi-head metrics only: `update_metrics` adds each head's own."""
        metrics = {f"loss/{head.name}": tf_keras.metrics.Mean() for head in self._heads}
        if regularization_losses is not None:
            metrics[self._summary_key(REGULARIZATION_LOSS)] = tf_keras.metrics.Mean()
        return metrics

    def update_metrics(
        self, eval_metrics, features, logits, labels, regularization_losses=None, mode=None
    ):
        head_losses = self._head_losses(labels, logits, features, mode)
        logits = self._split_logits(logits)
        if regularization_losses is not None:
            eval_metrics[self._summary_key(REGULARIZATION_LOSS)].update_state(
                tf.math.add_n(list(regularization_losses))
            )
        for head, head_loss in zip(self._heads, head_losses, strict=True):
            eval_metrics[f"loss/{head.name}"].update_state(head_loss)
            eval_metrics.update(
                head.update_metrics(head.metrics(), features, logits[head.name], labels[head.name])
            )
        return eval_metrics

    def _train_summaries(self, features, logits, labels, loss, regularization_losses):
        """As 2.15's multi-head training wrote them: each head's own loss as
        `loss/<head name>`, and the regularization as `regularization_loss`."""
        del loss
        logits, labels = self._split_logits(logits), self._check_labels(labels)
        for head in self._heads:
            summaries.scalar(
                f"{LOSS}/{head.name}",
                lambda head=head: head.loss(labels[head.name], logits[head.name], features),
            )
        _regularization_summary(REGULARIZATION_LOSS, regularization_losses)

    def _predict_spec(self, features, logits):
        """Each head's PREDICT spec, merged: the heads may be anyone's subclasses."""
        logits = self._split_logits(logits)
        specs = [
            head.create_estimator_spec(features, ModeKeys.PREDICT, logits[head.name])
            for head in self._heads
        ]
        predictions = {
            (head.name, key): value
            for head, spec in zip(self._heads, specs, strict=True)
            for key, value in spec.predictions.items()
        }
        return EstimatorSpec(
            ModeKeys.PREDICT,
            predictions=predictions,
            export_outputs=self._merged_export_outputs(specs),
        )

    def _merged_export_outputs(self, specs):
        first = dict(specs[0].export_outputs or {})
        if len(first) != 1 and export_lib.SERVING_DEFAULT not in first:
            raise ValueError(
                f"Head {self._heads[0].name!r} did not specify a default export output "
                f"({export_lib.SERVING_DEFAULT!r}); given {sorted(first)}."
            )
        outputs = {
            export_lib.SERVING_DEFAULT: first.get(export_lib.SERVING_DEFAULT)
            or next(iter(first.values()))
        }
        merged_predictions = {}
        for head, spec in zip(self._heads, specs, strict=True):
            for key, output in (spec.export_outputs or {}).items():
                outputs[
                    head.name if key == export_lib.SERVING_DEFAULT else f"{head.name}/{key}"
                ] = output
                if key == export_lib.PREDICT and isinstance(output, export_lib.PredictOutput):
                    for name, tensor in output.outputs.items():
                        merged_predictions[f"{head.name}/{name}"] = tensor
        outputs[export_lib.PREDICT] = export_lib.PredictOutput(merged_predictions)
        return outputs


def binary_or_multi_class_head(
    n_classes, weight_column=None, label_vocabulary=None, loss_reduction=SUM_OVER_BATCH_SIZE
):
    """The head of a canned classifier with `n_classes`."""
    if n_classes == 2:
        return BinaryClassHead(
            weight_column, label_vocabulary=label_vocabulary, loss_reduction=loss_reduction
        )
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
