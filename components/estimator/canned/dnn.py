"""`DNNEstimator` (any head), `DNNClassifier`, `DNNRegressor`: a feed-forward net, Adagrad by default."""

import contextlib
import re

import tensorflow as tf
import tf_keras
from tensorflow.python.feature_column import feature_column_v2 as fc_lib
from tf_keras.src.feature_column.dense_features import DenseFeatures as V1DenseFeatures

from components.estimator import graph_seeds, optimizers, summaries
from components.estimator import head as head_lib
from components.estimator.canned import indicator
from components.estimator.canned.linear import (
    check_features,
    check_v2_columns,
    read_in_user_code,
    reading_v1_columns,
    reads_v1_columns,
    tf1_hub_columns,
)
from components.estimator.estimator import Estimator
from components.estimator.model_fn import ModeKeys

# A TF1 Hub module's variable as 2.15's V1 DNN named it (under its column, or not).
_MODULE_VARIABLE = re.compile(r"dnn/input_from_feature_columns/(input_layer/[^/]+/)?module(_\d+)?/")


def _input_layer(features, feature_columns):
    """(The DNN's input, the trainable variables it made) under 2.15's names,
    `dnn/input_from_feature_columns/input_layer/...`.

    V2 columns go through Keras's DenseFeatures. A V1-only column (compat.v1's
    `shared_embedding_columns`), which only tf.compat.v1.estimator's classes take and
    always in a graph, goes through TF1's `input_layer`, as 2.15's V1 DNN read it: its
    variables are the graph's (shared ones made once, under the first column's scope).
    So do a V1 class's columns with a TF1 Hub module's among them: 2.15's V1 DNN imported
    the module under the column's scope (`.../input_layer/<column>/module/...`) and
    trained it when the column is trainable; its V2 class, through DenseFeatures, under
    `module/...` and never trained it. (Its V1 class read V2 columns through compat.v1's
    DenseFeatures: `sparse_text_embedding_column`, which imports its module when read,
    had it under `dnn/input_from_feature_columns/module/`.)"""
    v1_with_hub = reads_v1_columns() and tf1_hub_columns(feature_columns)
    if fc_lib.is_feature_column_v2(feature_columns) and not v1_with_hub:
        layer = tf_keras.layers.DenseFeatures(
            indicator.counted(feature_columns), name="input_layer"
        )
        with read_in_user_code():
            net = layer(features)
        _load_tables_before_the_first_step(layer, feature_columns)
        return net, layer.trainable_weights
    trainable = tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES
    before = {id(v) for v in tf.compat.v1.get_collection(trainable)}
    with tf.compat.v1.variable_scope("dnn/input_from_feature_columns", auxiliary_name_scope=False):
        if v1_with_hub and fc_lib.is_feature_column_v2(feature_columns):
            net = V1DenseFeatures(feature_columns, name="input_layer")(features)
        else:
            net = tf.compat.v1.feature_column.input_layer(features, feature_columns)
    made = [v for v in tf.compat.v1.get_collection(trainable) if id(v) not in before]
    for variable in made:
        # A module's variables were imported whole, never split by the input layer's
        # partitioner: their slots are keyed as an unsplit variable's (compat_v1.canned).
        variable._kit_never_partitioned = bool(v1_with_hub) and bool(
            _MODULE_VARIABLE.match(variable.op.name)
        )
    return net, made


def _load_tables_before_the_first_step(layer, feature_columns):
    """Sets each embedding table read from a checkpoint (`ckpt_to_load_from`) now, eagerly.

    In a TF1 graph the table's initializer was that restore. Traced in a function, TF's
    column assigns it inside each step instead, and a first step could read the table's
    own initial values (a run in a few, on 2 cores): loaded before any step runs, every
    step reads the checkpoint's values."""
    if not tf.compat.v1.executing_eagerly_outside_functions():
        return  # (a TF1 graph: the table's initializer restores it)
    for column in feature_columns:
        if isinstance(column, fc_lib.EmbeddingColumn) and column.ckpt_to_load_from:
            table = layer._state_manager.get_variable(column, "embedding_weights")
            value = tf.train.load_variable(column.ckpt_to_load_from, column.tensor_name_in_ckpt)
            with tf.init_scope():
                table.assign(value)


def _outer_name_scope(scope):
    """The name scope a tf.estimator DNN's layers are built in, in a graph, as the prefix
    of their names: 2.15's V2 model named each layer after its full name scope, so that
    under a caller's scope (AdaNet's subestimators, a model_fn in a variable scope) its
    variables were `<outer>/dnn/<outer>/hiddenlayer_0/kernel`. ("" at the top, and for the
    tf.compat.v1.estimator classes, whose layers 2.15 named in their variable scopes; and
    on the TF2 path, whose traced functions add scopes of their own, such as the steps
    loop's `while/cond`.)"""
    if not scope or reads_v1_columns() or tf.compat.v1.executing_eagerly_outside_functions():
        return ""
    outer = tf.compat.v1.get_default_graph().get_name_scope()
    return f"{outer}/" if outer else ""


def dnn_logits(
    features,
    feature_columns,
    hidden_units,
    units,
    activation_fn,
    dropout,
    batch_norm,
    mode,
    scope="dnn",
):
    """Logits and the trainable weights they depend on, under `scope` (the canned DNN's
    `dnn`; None: the caller's, where 2.15's V1 `dnn_logit_fn_builder` made its variables,
    its layers' summaries still tagged `dnn/...`)."""
    training = mode == ModeKeys.TRAIN
    outer = _outer_name_scope(scope)
    with tf.name_scope(scope) if scope else contextlib.nullcontext():
        # tf.estimator 2.15's names: `dnn/input_from_feature_columns/input_layer/...`,
        # in a graph (where a Saver or TF1's warm start reads them) as in a function.
        with tf.name_scope("input_from_feature_columns"):
            net, trainable = _input_layer(features, feature_columns)
        layers = []
        for i, width in enumerate(hidden_units):
            hidden = tf_keras.layers.Dense(
                width,
                activation=activation_fn,
                kernel_initializer=graph_seeds.kernel_initializer(),
                name=f"{outer}hiddenlayer_{i}",
            )
            layers.append(hidden)
            net = hidden(net)
            if dropout:
                net = _dropout(net, dropout, training)
            if batch_norm:
                norm = tf_keras.layers.BatchNormalization(
                    momentum=0.999, name=f"{outer}hiddenlayer_{i}/batchnorm_{i}"
                )
                layers.append(norm)
                net = norm(net, training=training)
                if training and not (tf.executing_eagerly() or tf.inside_function()):
                    # In a TF1 graph (tf.compat.v1.estimator's, or a run with TF1 hooks)
                    # nothing else runs the moving averages' updates.
                    with tf.control_dependencies(norm.updates):
                        net = tf.identity(net)
            summaries.layer(f"dnn/hiddenlayer_{i}", net, v1_scope=scope)
        output = tf_keras.layers.Dense(
            units, kernel_initializer=graph_seeds.kernel_initializer(), name=f"{outer}logits"
        )
        layers.append(output)
        logits = output(net)
        summaries.layer("dnn/logits", logits, v1_scope=scope)
    return logits, trainable + [w for layer in layers for w in layer.trainable_weights]


def _dropout(net, rate, training):
    """Dropout in training: with `tf_random_seed`, 2.15's draws (`graph_seeds.dropout`)."""
    if training:
        dropped = graph_seeds.dropout(net, rate)
        if dropped is not None:
            return dropped
    return tf_keras.layers.Dropout(rate)(net, training=training)


def _model_fn(
    features,
    labels,
    mode,
    head,
    hidden_units,
    feature_columns,
    optimizer,
    activation_fn,
    dropout,
    batch_norm,
):
    check_features(features, feature_columns)
    logits, trainable = dnn_logits(
        features,
        feature_columns,
        hidden_units,
        head.logits_dimension,
        activation_fn,
        dropout,
        batch_norm,
        mode,
    )

    # No canned learning rate: a name gets its Keras class's default, as in 2.15.
    opt = optimizers.made_for_training(mode == ModeKeys.TRAIN, optimizer)

    def train_op_fn(loss):
        with optimizers.stepping_the_global_step(opt):
            return optimizers.apply(opt, loss, trainable)

    return head.create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels, train_op_fn=train_op_fn
    )


class DNNEstimator(Estimator):
    """A feed-forward net under any head (`DNNClassifier` and `DNNRegressor` pick theirs)."""

    # tf.compat.v1.estimator's classes take tf.compat.v1.feature_column's columns too.
    _takes_v1_feature_columns = False
    _exports_a_graph = True  # (2.15's export: a TF1 graph, its tensor names)

    def __init__(
        self,
        head,
        hidden_units,
        feature_columns,
        model_dir=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        config=None,
        warm_start_from=None,
        batch_norm=False,
    ):
        feature_columns = list(feature_columns)
        takes_v1_columns = self._takes_v1_feature_columns

        def model_fn(features, labels, mode):
            if not takes_v1_columns:
                check_v2_columns(feature_columns)
            with reading_v1_columns(takes_v1_columns):
                return _model_fn(
                    features,
                    labels,
                    mode,
                    head,
                    list(hidden_units),
                    feature_columns,
                    optimizer,
                    activation_fn,
                    dropout,
                    batch_norm,
                )

        super().__init__(
            model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from
        )
        if tf1_hub_columns(feature_columns):
            self._runs_in_a_graph = True  # (as 2.15 built every call, in a tf.Graph)


class DNNClassifier(DNNEstimator):
    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        batch_norm=False,
    ):
        super().__init__(
            head_lib.binary_or_multi_class_head(
                n_classes, weight_column, label_vocabulary, loss_reduction
            ),
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


class DNNRegressor(DNNEstimator):
    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        batch_norm=False,
    ):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            activation_fn=activation_fn,
            dropout=dropout,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )
