"""Wide & deep: a linear part and a DNN part whose logits are added, under any head."""

import contextlib
import math

import tensorflow as tf

from components.estimator import head as head_lib
from components.estimator import optimizers, summaries
from components.estimator.canned.dnn import dnn_logits
from components.estimator.canned.linear import (
    check_features,
    check_v2_columns,
    linear_logits,
    reading_v1_columns,
    tf1_hub_columns,
)
from components.estimator.estimator import Estimator
from components.estimator.model_fn import ModeKeys

DNN_LEARNING_RATE = 0.001
LINEAR_LEARNING_RATE = 0.005


def linear_learning_rate(num_linear_feature_columns):
    return min(LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_feature_columns))


def _reading_columns(model_fn, v1):
    """`model_fn` reading its columns as a V1 class's (`v1`) or a V2 one's: 2.15's V1 class
    read a TF1 Hub column through input_layer on the DNN's side and linear_model on the
    linear one's, and trained a module on each; its V2 class trained neither."""

    def reading(features, labels, mode):
        with reading_v1_columns(v1):
            return model_fn(features, labels, mode)

    return reading


def _train_op(parts, loss):
    """Each part's optimizer applied to its variables' gradients. 2.15 counted the
    global step in the first part's optimizer only (the DNN's; with no DNN columns the
    linear one's)."""
    ops = []
    for i, (optimizer, variables) in enumerate(parts):
        counting = optimizers.stepping_the_global_step(optimizer) if i == 0 else None
        with counting or contextlib.nullcontext():
            ops.append(optimizers.apply(optimizer, loss, variables))
    return tf.group(ops)


class DNNLinearCombinedEstimator(Estimator):
    """Wide & deep under any head (`DNNLinearCombinedClassifier` and `...Regressor` pick theirs).

    `warm_start_from` is the kit's addition: tf.estimator 2.15 gave it only to the
    classifier and the regressor.
    """

    # tf.compat.v1.estimator's classes take tf.compat.v1.feature_column's columns too.
    _takes_v1_feature_columns = False
    _exports_a_graph = True  # (2.15's export: a TF1 graph, its tensor names)

    def __init__(
        self,
        head,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        config=None,
        batch_norm=False,
        linear_sparse_combiner="sum",
        warm_start_from=None,
    ):
        linear_columns = list(linear_feature_columns or [])
        dnn_columns = list(dnn_feature_columns or [])
        if not linear_columns and not dnn_columns:
            raise ValueError(
                "Either linear_feature_columns or dnn_feature_columns must be defined."
            )

        takes_v1_columns = self._takes_v1_feature_columns

        def model_fn(features, labels, mode):
            if not takes_v1_columns:
                check_v2_columns(linear_columns + dnn_columns)
            check_features(features, linear_columns + dnn_columns)
            outs, parts = [], []
            if dnn_columns:
                if not dnn_hidden_units:  # (2.15 took them when made and refused them here)
                    raise ValueError(
                        "dnn_hidden_units must be defined when dnn_feature_columns is specified."
                    )
                dnn_out, dnn_vars = dnn_logits(
                    features,
                    dnn_columns,
                    list(dnn_hidden_units),
                    head.logits_dimension,
                    dnn_activation_fn,
                    dnn_dropout,
                    batch_norm,
                    mode,
                )
                outs.append(dnn_out)
                parts.append((dnn_optimizer, DNN_LEARNING_RATE, dnn_vars))
            if linear_columns:
                linear_out, layer = linear_logits(
                    features, linear_columns, head.logits_dimension, linear_sparse_combiner
                )
                summaries.layer("linear", linear_out, v1_scope="linear")  # (2.15's own)
                outs.append(linear_out)
                parts.append(
                    (
                        linear_optimizer,
                        linear_learning_rate(len(linear_columns)),
                        layer.trained_weights,
                    )
                )
            logits = sum(outs[1:], outs[0])  # (2.15's: dnn's + linear's, an op named `add`)
            training = mode == ModeKeys.TRAIN
            parts = [(optimizers.made_for_training(training, o, r), v) for o, r, v in parts]

            return head.create_estimator_spec(
                features=features,
                mode=mode,
                logits=logits,
                labels=labels,
                train_op_fn=lambda loss: _train_op(parts, loss),
            )

        model_fn = _reading_columns(model_fn, takes_v1_columns)
        super().__init__(
            model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from
        )
        if tf1_hub_columns(linear_columns + dnn_columns):
            self._runs_in_a_graph = True  # (as 2.15 built every call, in a tf.Graph)


class DNNLinearCombinedClassifier(DNNLinearCombinedEstimator):
    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        super().__init__(
            head_lib.binary_or_multi_class_head(
                n_classes, weight_column, label_vocabulary, loss_reduction
            ),
            model_dir,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            config,
            batch_norm,
            linear_sparse_combiner,
            warm_start_from,
        )


class DNNLinearCombinedRegressor(DNNLinearCombinedEstimator):
    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        label_dimension=1,
        weight_column=None,
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            model_dir,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            config,
            batch_norm,
            linear_sparse_combiner,
            warm_start_from,
        )
