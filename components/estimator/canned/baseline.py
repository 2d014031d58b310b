"""`BaselineEstimator` (any head), `BaselineClassifier`, `BaselineRegressor`: a learned
bias only, Ftrl by default.

They predict the label distribution (or mean) seen in training, which is the
number any real model has to beat.
"""

import tensorflow as tf
import tf_keras

from components.estimator import head as head_lib
from components.estimator import optimizers
from components.estimator.estimator import Estimator
from components.estimator.model_fn import ModeKeys

LEARNING_RATE = 0.3


def _batch_size(features):
    tensors = features.values() if isinstance(features, dict) else [features]
    for tensor in tensors:
        if isinstance(tensor, tf.SparseTensor):
            return tensor.dense_shape[0]
        return tf.shape(tensor)[0]
    raise ValueError("Baseline estimators need at least one feature to size the batch.")


class BaselineEstimator(Estimator):
    """A learned bias under any head (`BaselineClassifier` and `BaselineRegressor` pick theirs)."""

    _exports_a_graph = True  # (2.15's export: a TF1 graph, its tensor names)

    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        def model_fn(features, labels, mode):
            batch_size = _batch_size(features)
            with tf.name_scope("baseline"):
                bias = tf.Variable(
                    tf_keras.initializers.Zeros()([head.logits_dimension], tf.float32), name="bias"
                )
                # 2.15's logits, `baseline/Mul:0` in an export (TF1-era serving code
                # fetches that name): the bias times ones of the batch's shape.
                logits = tf.math.multiply(bias, tf.ones([batch_size, head.logits_dimension]))

            training = mode == ModeKeys.TRAIN
            opt = optimizers.made_for_training(training, optimizer, LEARNING_RATE)

            def train_op_fn(loss):
                with optimizers.stepping_the_global_step(opt):
                    return optimizers.apply(opt, loss, [bias])

            return head.create_estimator_spec(
                features=features, mode=mode, logits=logits, labels=labels, train_op_fn=train_op_fn
            )

        super().__init__(model_fn, model_dir=model_dir, config=config)


class BaselineClassifier(BaselineEstimator):
    def __init__(
        self,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Ftrl",
        config=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
    ):
        head = head_lib.binary_or_multi_class_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(BaselineEstimator):
    def __init__(
        self,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Ftrl",
        config=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
    ):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)
