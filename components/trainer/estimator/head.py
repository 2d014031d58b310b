"""Heads own what depends on the problem type: loss, predictions, metrics, export.

A canned estimator computes logits and hands them to its head, which returns
the `EstimatorSpec`.  Keys, dtypes and shapes follow tf.estimator 2.15.
"""

import tensorflow as tf
import tf_keras

from components.trainer.estimator import export as export_lib
from components.trainer.estimator.model_fn import EstimatorSpec, ModeKeys

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
_REDUCTIONS = (SUM_OVER_BATCH_SIZE, SUM)


def _weights(features, weight_column, batch_like):
    if weight_column is None:
        return tf.ones_like(batch_like[:, :1], dtype=tf.float32)
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if key not in features:
        raise ValueError(f"Weight column {key!r} is not among the features {sorted(features)}.")
    weights = tf.cast(features[key], tf.float32)
    return tf.reshape(weights, [-1, 1])


def _reduce(unreduced, weights, reduction):
    weighted = unreduced * weights
    total = tf.reduce_sum(weighted)
    if reduction != SUM:
        total = total / tf.cast(tf.size(weighted), tf.float32)
    if tf.distribute.in_cross_replica_context():
        return total
    # One replica's share: optimizers sum gradients over replicas, so the
    # global loss is the sum of these.
    replicas = tf.distribute.get_replica_context().num_replicas_in_sync
    return total / replicas if replicas > 1 else total


class _Head:
    """Shared plumbing: the spec for each mode from logits and labels."""

    logits_dimension = 1

    def __init__(self, weight_column=None, loss_reduction=SUM_OVER_BATCH_SIZE, name=None):
        reduction = getattr(loss_reduction, "value", loss_reduction)
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"loss_reduction must be one of {_REDUCTIONS}, got {loss_reduction!r}."
            )
        self._weight_column = weight_column
        self._reduction = reduction
        self.name = name

    def create_estimator_spec(self, features, mode, logits, labels=None, train_op_fn=None):
        logits = tf.reshape(tf.cast(logits, tf.float32), [-1, self.logits_dimension])
        predictions = self.predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(
                mode, predictions=predictions, export_outputs=self.export_outputs(predictions)
            )
        if labels is None:
            raise ValueError(f"Labels are required in {mode} mode but input_fn gave none.")
        label_ids = self.prepare_labels(labels)
        unreduced = self.unreduced_loss(logits, label_ids)
        weights = _weights(features, self._weight_column, logits)
        loss = _reduce(unreduced, weights, self._reduction)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(
                mode,
                predictions=predictions,
                loss=loss,
                eval_metric_ops=self.metrics(label_ids, predictions, unreduced, weights),
            )
        if train_op_fn is None:
            raise ValueError("train_op_fn is required in TRAIN mode.")
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op_fn(loss))


class _ClassHead(_Head):
    def __init__(
        self,
        n_classes,
        weight_column=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        name=None,
    ):
        super().__init__(weight_column, loss_reduction, name)
        if label_vocabulary is not None:
            label_vocabulary = list(label_vocabulary)
            if len(label_vocabulary) != n_classes:
                raise ValueError(
                    f"label_vocabulary has {len(label_vocabulary)} entries; n_classes is {n_classes}."
                )
        self._n_classes = n_classes
        self._vocabulary = label_vocabulary
        self._class_names = label_vocabulary or [str(i) for i in range(n_classes)]

    def prepare_labels(self, labels):
        """Labels as int64 class ids [batch, 1], checked to lie in range."""
        labels = tf.reshape(labels, [-1, 1])
        if self._vocabulary is not None:
            if labels.dtype != tf.string:
                raise ValueError("With label_vocabulary, labels must be strings.")
            matches = tf.equal(labels, tf.constant(self._vocabulary))
            tf.debugging.assert_equal(
                tf.reduce_any(matches, axis=1),
                True,
                message=f"Labels must be in label_vocabulary {self._vocabulary}",
            )
            return tf.reshape(tf.argmax(tf.cast(matches, tf.int32), axis=1), [-1, 1])
        if labels.dtype == tf.string:
            raise ValueError("String labels need label_vocabulary.")
        ids = tf.cast(labels, tf.int64)
        tf.debugging.assert_greater_equal(
            ids, tf.constant(0, tf.int64), message="Labels must be >= 0"
        )
        tf.debugging.assert_less(
            ids,
            tf.constant(self._n_classes, tf.int64),
            message=f"Labels must be <= n_classes - 1 ({self._n_classes - 1})",
        )
        return ids

    def _class_predictions(self, logits, probabilities):
        class_ids = tf.argmax(probabilities, axis=1)[:, None]
        names = tf.constant(self._class_names)
        batch = tf.shape(logits)[0]
        return {
            "logits": logits,
            "probabilities": probabilities,
            "class_ids": class_ids,
            "classes": tf.gather(names, class_ids),
            "all_class_ids": tf.tile(
                tf.range(self._n_classes, dtype=tf.int32)[None, :], [batch, 1]
            ),
            "all_classes": tf.tile(names[None, :], [batch, 1]),
        }

    def export_outputs(self, predictions):
        classification = export_lib.ClassificationOutput(
            scores=predictions["probabilities"], classes=predictions["all_classes"]
        )
        return {
            export_lib.SERVING_DEFAULT: classification,
            export_lib.CLASSIFY: classification,
            export_lib.PREDICT: export_lib.PredictOutput(predictions),
        }


class BinaryClassHead(_ClassHead):
    """Sigmoid cross-entropy over one logit."""

    def __init__(
        self,
        weight_column=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        name=None,
    ):
        super().__init__(2, weight_column, label_vocabulary, loss_reduction, name)

    def predictions(self, logits):
        logistic = tf.sigmoid(logits)
        probabilities = tf.concat([1.0 - logistic, logistic], axis=1)
        result = self._class_predictions(logits, probabilities)
        result["logistic"] = logistic
        return result

    def unreduced_loss(self, logits, label_ids):
        return tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(label_ids, tf.float32), logits=logits
        )

    def metrics(self, label_ids, predictions, unreduced, weights):
        labels = tf.cast(label_ids, tf.float32)
        logistic = predictions["logistic"]
        accuracy = tf_keras.metrics.Accuracy(name="accuracy")
        accuracy.update_state(label_ids, predictions["class_ids"], sample_weight=weights)
        average_loss = tf_keras.metrics.Mean(name="average_loss")
        average_loss.update_state(unreduced, sample_weight=weights)
        label_mean = tf_keras.metrics.Mean(name="label/mean")
        label_mean.update_state(labels, sample_weight=weights)
        prediction_mean = tf_keras.metrics.Mean(name="prediction/mean")
        prediction_mean.update_state(logistic, sample_weight=weights)
        auc = tf_keras.metrics.AUC(num_thresholds=200, curve="ROC", name="auc")
        auc.update_state(labels, logistic, sample_weight=weights)
        auc_pr = tf_keras.metrics.AUC(
            num_thresholds=200,
            curve="PR",
            summation_method="interpolation",
            name="auc_precision_recall",
        )
        auc_pr.update_state(labels, logistic, sample_weight=weights)
        precision = tf_keras.metrics.Precision(name="precision")
        precision.update_state(
            labels, tf.cast(predictions["class_ids"], tf.float32), sample_weight=weights
        )
        recall = tf_keras.metrics.Recall(name="recall")
        recall.update_state(
            labels, tf.cast(predictions["class_ids"], tf.float32), sample_weight=weights
        )
        mean = label_mean.result()
        baseline = tf.maximum(mean, 1.0 - mean)
        return {
            "accuracy": accuracy,
            "accuracy_baseline": (baseline, baseline),
            "auc": auc,
            "auc_precision_recall": auc_pr,
            "average_loss": average_loss,
            "label/mean": label_mean,
            "precision": precision,
            "prediction/mean": prediction_mean,
            "recall": recall,
        }

    def export_outputs(self, predictions):
        outputs = super().export_outputs(predictions)
        outputs[export_lib.REGRESS] = export_lib.RegressionOutput(predictions["logistic"])
        return outputs


class MultiClassHead(_ClassHead):
    """Softmax cross-entropy over `n_classes` logits."""

    def __init__(
        self,
        n_classes,
        weight_column=None,
        label_vocabulary=None,
        loss_reduction=SUM_OVER_BATCH_SIZE,
        name=None,
    ):
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"MultiClassHead needs n_classes > 2, got {n_classes}.")
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction, name)
        self.logits_dimension = n_classes

    def predictions(self, logits):
        return self._class_predictions(logits, tf.nn.softmax(logits))

    def unreduced_loss(self, logits, label_ids):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=label_ids[:, 0], logits=logits
        )[:, None]

    def metrics(self, label_ids, predictions, unreduced, weights):
        accuracy = tf_keras.metrics.Accuracy(name="accuracy")
        accuracy.update_state(label_ids, predictions["class_ids"], sample_weight=weights)
        average_loss = tf_keras.metrics.Mean(name="average_loss")
        average_loss.update_state(unreduced, sample_weight=weights)
        return {"accuracy": accuracy, "average_loss": average_loss}


class RegressionHead(_Head):
    """Squared error over `label_dimension` outputs."""

    def __init__(
        self, label_dimension=1, weight_column=None, loss_reduction=SUM_OVER_BATCH_SIZE, name=None
    ):
        super().__init__(weight_column, loss_reduction, name)
        if label_dimension < 1:
            raise ValueError(f"label_dimension must be >= 1, got {label_dimension}.")
        self.logits_dimension = label_dimension

    def prepare_labels(self, labels):
        if labels.dtype == tf.string:
            raise ValueError("Regression labels must be numeric.")
        return tf.reshape(tf.cast(labels, tf.float32), [-1, self.logits_dimension])

    def predictions(self, logits):
        return {"predictions": logits}

    def unreduced_loss(self, logits, labels):
        return tf.square(logits - labels)

    def metrics(self, labels, predictions, unreduced, weights):
        average_loss = tf_keras.metrics.Mean(name="average_loss")
        average_loss.update_state(
            unreduced, sample_weight=tf.broadcast_to(weights, tf.shape(unreduced))
        )
        label_mean = tf_keras.metrics.Mean(name="label/mean")
        label_mean.update_state(labels, sample_weight=tf.broadcast_to(weights, tf.shape(labels)))
        prediction_mean = tf_keras.metrics.Mean(name="prediction/mean")
        prediction_mean.update_state(
            predictions["predictions"], sample_weight=tf.broadcast_to(weights, tf.shape(labels))
        )
        return {
            "average_loss": average_loss,
            "label/mean": label_mean,
            "prediction/mean": prediction_mean,
        }

    def export_outputs(self, predictions):
        regression = export_lib.RegressionOutput(predictions["predictions"])
        return {
            export_lib.SERVING_DEFAULT: regression,
            export_lib.REGRESS: regression,
            export_lib.PREDICT: export_lib.PredictOutput(predictions),
        }


def classification_head(
    n_classes, weight_column=None, label_vocabulary=None, loss_reduction=SUM_OVER_BATCH_SIZE
):
    if n_classes == 2:
        return BinaryClassHead(weight_column, label_vocabulary, loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
