"""`experimental.RNNEstimator` and `experimental.RNNClassifier`: a Keras RNN over sequence
feature columns, on this kit's heads.

As in tf.estimator 2.15: the sequence columns (`tf.feature_column.sequence_*`,
or embeddings of them) are read by `SequenceFeatures`, context columns are
repeated at every step, the RNN (`units` and `cell_type`, or `rnn_cell_fn`)
is masked by the sequence lengths and a dense `logits` layer follows, all in a
Keras model named `rnn_model` (so variables are `rnn_model/rnn/lstm_cell/kernel`
and so on).  An optimizer given by name (Adagrad by default) gets learning
rate 0.05 and gradients clipped to norm 5.  With `return_sequences` every step is predicted
and the loss and metrics count the unmasked steps only.
"""

import functools

import tensorflow as tf
import tf_keras
from tensorflow.python.feature_column import sequence_feature_column

from components.estimator import export as export_lib
from components.estimator import head as head_lib
from components.estimator import optimizers, summaries
from components.estimator.estimator import Estimator, tf1_export_savedmodel
from components.estimator.model_fn import EstimatorSpec, ModeKeys

LEARNING_RATE = 0.05
CLIP_NORM = 5.0
USE_DEFAULT = object()

_CELLS = {
    "simple_rnn": tf_keras.layers.SimpleRNNCell,
    "lstm": tf_keras.layers.LSTMCell,
    "gru": tf_keras.layers.GRUCell,
}
_LAYERS = {
    "simple_rnn": tf_keras.layers.SimpleRNN,
    "lstm": tf_keras.layers.LSTM,
    "gru": tf_keras.layers.GRU,
}


def _check_cell_arguments(rnn_cell_fn, units, cell_type):
    if rnn_cell_fn:
        if units or cell_type is not USE_DEFAULT:
            raise ValueError("units and cell_type must not be specified when using rnn_cell_fn")
        return
    if not units:
        raise ValueError("units (the width of each RNN layer) must be given, or rnn_cell_fn.")
    if cell_type is not USE_DEFAULT and not callable(_CELLS.get(cell_type, cell_type)):
        raise ValueError(
            "`cell_type` should be a class producing a RNN cell, or a string specifying the "
            f"cell type. Supported strings are: {list(_CELLS)}."
        )


def _rnn_layer(rnn_cell_fn, units, cell_type, return_sequences):
    """One Keras RNN layer: a fused one for a known `cell_type` and an int `units`."""
    if cell_type in _LAYERS and isinstance(units, int):
        return _LAYERS[cell_type](units=units, return_sequences=return_sequences)
    if rnn_cell_fn is not None:
        cell = rnn_cell_fn()
    else:
        make_cell = (
            _CELLS["simple_rnn"] if cell_type is USE_DEFAULT else _CELLS.get(cell_type, cell_type)
        )
        cells = [make_cell(units=n) for n in units]
        cell = cells[0] if len(cells) == 1 else cells
    return tf_keras.layers.RNN(cell=cell, return_sequences=return_sequences)


class RNNModel(tf_keras.Model):
    """Sequence (and context) features -> masked RNN -> `logits` Dense layer.

    Returns the logits and the sequence mask ([batch, steps], True on real steps)."""

    def __init__(self, rnn_layer, units, sequence_feature_columns, context_feature_columns=None):
        super().__init__(name="rnn_model")
        self._sequence_features = tf_keras.experimental.SequenceFeatures(sequence_feature_columns)
        self._context_features = (
            tf_keras.layers.DenseFeatures(context_feature_columns)
            if context_feature_columns
            else None
        )
        self._rnn = rnn_layer
        self._logits = tf_keras.layers.Dense(units, name="logits")

    # As the linear model's: no AutoGraph conversion (it branches on Python values only).
    @tf.autograph.experimental.do_not_convert
    def call(self, features, training=None):
        if not isinstance(features, dict):
            raise ValueError(
                f"inputs should be a dictionary of `Tensor`s. Given type: {type(features)}"
            )
        sequence_input, sequence_length = self._sequence_features(features, training=training)
        # 2.15's one summary of the model: the batch's sequence lengths.
        summaries.histogram(
            f"{self.name}/sequence_input_layer/sequence_length", lambda: sequence_length
        )
        if self._context_features is not None:
            context = self._context_features(features, training=training)
            sequence_input = sequence_feature_column.concatenate_context_input(
                context, sequence_input
            )
        mask = tf.sequence_mask(sequence_length, maxlen=tf.shape(sequence_input)[1])
        outputs = self._rnn(sequence_input, mask=mask, training=training)
        return self._logits(outputs), mask


class SequentialHead:
    """A head over every step of a sequence: the steps `features[sequence_mask]` marks
    are flattened into one batch for `static_head`'s loss and metrics; predictions
    keep the [batch, steps, ...] shape and add the mask under its key.

    `feature_columns` names the per-step features (a weight column) to flatten too."""

    def __init__(self, static_head, sequence_mask="sequence_mask", feature_columns=None):
        if not isinstance(sequence_mask, str):
            raise TypeError(f"sequence_mask must be a string. Given type: {type(sequence_mask)}.")
        if isinstance(feature_columns, str):
            feature_columns = [feature_columns]
        for column in feature_columns or []:
            if not isinstance(column, str):
                raise TypeError(
                    f"A per-step feature must be named by a string (return_sequences takes the "
                    f"weight column as a name). Given type: {type(column)}."
                )
        self._static_head = static_head
        self.input_sequence_mask_key = sequence_mask
        self._per_step_keys = list(feature_columns or [])

    name = property(lambda self: self._static_head.name)
    logits_dimension = property(lambda self: self._static_head.logits_dimension)
    loss_reduction = property(lambda self: self._static_head.loss_reduction)

    def create_estimator_spec(self, features, mode, logits, labels=None, **train_args):
        """As `Head.create_estimator_spec`; `train_args` (optimizer, trainable_variables,
        train_op_fn, update_ops, regularization_losses) go to the static head."""
        mask = features[self.input_sequence_mask_key]
        if mode == ModeKeys.PREDICT:
            return self._predict_spec(logits, mask)
        flat_features = dict(features)
        for key in self._per_step_keys:
            flat_features[key] = tf.boolean_mask(features[key], mask)
        return self._static_head.create_estimator_spec(
            features=flat_features,
            mode=mode,
            logits=tf.boolean_mask(logits, mask),
            labels=None if labels is None else tf.boolean_mask(labels, mask),
            **train_args,
        )

    def _predict_spec(self, logits, mask):
        batch_and_steps = tf.shape(logits)[:2]
        flat = self._static_head.predictions(tf.reshape(logits, [-1, self.logits_dimension]))
        predictions = {}
        for key, value in flat.items():
            per_step = tf.reshape(value, tf.concat([batch_and_steps, tf.shape(value)[1:]], 0))
            # `all_classes` and `all_class_ids` are the same at every step: one per example.
            predictions[key] = per_step[:, 0] if key.startswith("all_") else per_step
        # As 2.15: the static head's signatures, of its predictions alone (a binary
        # head's serving_default classifies; the mask is not among the outputs).
        export_outputs = self._static_head._export_outputs(predictions)
        if export_lib.PREDICT not in export_outputs:
            export_outputs[export_lib.PREDICT] = export_lib.PredictOutput(predictions)
        predictions = dict(predictions, **{self.input_sequence_mask_key: mask})
        return EstimatorSpec(
            ModeKeys.PREDICT, predictions=predictions, export_outputs=export_outputs
        )


def _model_fn(
    features,
    labels,
    mode,
    *,
    head,
    sequence_feature_columns,
    context_feature_columns,
    rnn_layer,
    return_sequences,
    optimizer,
):
    """`rnn_layer()` makes the RNN layer (each trace builds the model afresh)."""
    model = RNNModel(
        rnn_layer(), head.logits_dimension, sequence_feature_columns, context_feature_columns
    )
    logits, mask = model(features, training=mode == ModeKeys.TRAIN)
    if return_sequences and head.input_sequence_mask_key not in features:
        features = dict(features, **{head.input_sequence_mask_key: mask})

    if mode != ModeKeys.TRAIN:
        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels
        )
    opt = optimizers.get_optimizer(optimizer, LEARNING_RATE)
    if isinstance(optimizer, str):
        opt.clipnorm = CLIP_NORM
    with optimizers.stepping_the_global_step(opt):  # (no iter of its own, as in 2.15)
        return head.create_estimator_spec(
            features=features,
            mode=mode,
            logits=logits,
            labels=labels,
            optimizer=opt,
            trainable_variables=model.trainable_weights,
        )


class RNNEstimator(Estimator):
    """An RNN over sequence features with a head of the user's (its loss and outputs)."""

    # (2.15's RNN classes subclassed its V1 Estimator: TF1's name is theirs too.)
    export_savedmodel = tf1_export_savedmodel

    def __init__(
        self,
        head,
        sequence_feature_columns,
        context_feature_columns=None,
        units=None,
        cell_type=USE_DEFAULT,
        rnn_cell_fn=None,
        return_sequences=False,
        model_dir=None,
        optimizer="Adagrad",
        config=None,
    ):
        if return_sequences and not isinstance(head, SequentialHead):
            raise ValueError(
                "Provided head must be a `_SequentialHead` object when `return_sequences` is "
                "set to True."
            )
        _check_cell_arguments(rnn_cell_fn, units, cell_type)

        model_fn = functools.partial(
            _model_fn,
            head=head,
            sequence_feature_columns=list(sequence_feature_columns),
            context_feature_columns=list(context_feature_columns or []),
            rnn_layer=functools.partial(
                _rnn_layer, rnn_cell_fn, units, cell_type, return_sequences
            ),
            return_sequences=return_sequences,
            optimizer=optimizer,
        )
        super().__init__(model_fn, model_dir=model_dir, config=config)


class RNNClassifier(RNNEstimator):
    """An RNN classifier: a binary head for `n_classes=2`, a softmax one above."""

    def __init__(
        self,
        sequence_feature_columns,
        context_feature_columns=None,
        units=None,
        cell_type=USE_DEFAULT,
        rnn_cell_fn=None,
        return_sequences=False,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Adagrad",
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        sequence_mask="sequence_mask",
        config=None,
    ):
        head = head_lib.binary_or_multi_class_head(
            n_classes, weight_column, label_vocabulary, loss_reduction
        )
        if return_sequences:
            head = SequentialHead(head, sequence_mask=sequence_mask, feature_columns=weight_column)
        super().__init__(
            head,
            sequence_feature_columns,
            context_feature_columns=context_feature_columns,
            units=units,
            cell_type=cell_type,
            rnn_cell_fn=rnn_cell_fn,
            return_sequences=return_sequences,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
        )
