"""`model_to_estimator`: a compiled `tf_keras` model as an Estimator.

The Estimator clones the model once, eagerly, into its variable store (a
clone built while tracing the serving graph would be built in a TF1-style
graph, where tf_keras cannot build a model), starting from the original
model's weights.  Each mode's `model_fn` calls that clone, compiles it like
the original, and uses its compiled loss and metrics.
"""

import logging

import tensorflow as tf
import tf_keras

from components.estimator import export as export_lib
from components.estimator import optimizers
from components.estimator.estimator import Estimator
from components.estimator.model_fn import EstimatorSpec, ModeKeys


def _inputs_for(model, features):
    if not isinstance(features, dict):
        return features
    names = list(model.input_names)
    missing = [n for n in names if n not in features]
    if missing:
        raise ValueError(
            f"Keras model inputs {missing} are not in the features {sorted(features)}."
        )
    if len(names) == 1:
        return features[names[0]]
    return {n: features[n] for n in names}


def _as_dict(model, outputs):
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return dict(zip(model.output_names, outputs, strict=True))


def _legacy_optimizer(keras_model):
    """The model's optimizer as a `tf_keras` legacy one, as tf.estimator 2.15 converted
    it (with its warning): its state is then checkpointed under 2.15's names
    (`training/Adam/hidden/kernel/m`, `training/Adam/beta_1`)."""
    optimizer = keras_model.optimizer
    if isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer):
        return optimizer
    logging.getLogger(__name__).warning(
        "You are using `tf.keras.optimizers.experimental.Optimizer` in TF estimator, which "
        "only supports `tf.keras.optimizers.legacy.Optimizer`. Automatically converting "
        "your optimizer to `tf.keras.optimizers.legacy.Optimizer`."
    )
    keras_model.optimizer = tf_keras.__internal__.optimizers.convert_to_legacy_optimizer(optimizer)
    return keras_model.optimizer


# Variables Keras makes for its own loops (batch counters when a model is built,
# steps per execution when it is compiled): not model state, and 2.15's checkpoints
# held none (unnamed, they would be saved as `Variable`, `Variable_1`, ...).
_KERAS_BOOKKEEPING = ("_train_counter", "_test_counter", "_predict_counter", "_steps_per_execution")


def _forget_bookkeeping(store, model):
    bookkeeping = {id(getattr(model, name, None)) for name in _KERAS_BOOKKEEPING}
    for name in [n for n, v in store.variables.items() if id(v) in bookkeeping]:
        del store.variables[name]


class _KerasEstimator(Estimator):
    def __init__(self, keras_model, model_dir, config, metric_names_map, export_outputs):
        metric_names_map = dict(metric_names_map or {})
        legacy = _legacy_optimizer(keras_model)
        optimizer_class = type(legacy)
        optimizer_config = legacy.get_config()
        # Metric objects hold state: each trace gets fresh ones built from configs.
        metric_specs = [
            m if isinstance(m, str) else (type(m), m.get_config())
            for m in tf.nest.flatten(keras_model.compiled_metrics._user_metrics or [])
        ]

        def model_fn(features, labels, mode):
            model = self._model
            outputs = model(_inputs_for(model, features), training=mode == ModeKeys.TRAIN)
            predictions = _as_dict(model, outputs)
            if mode == ModeKeys.PREDICT:
                outputs_for_export = export_outputs or {
                    export_lib.SERVING_DEFAULT: export_lib.PredictOutput(predictions)
                }
                return EstimatorSpec(
                    mode, predictions=predictions, export_outputs=outputs_for_export
                )
            optimizer = optimizer_class.from_config(optimizer_config)
            model.compile(
                optimizer=optimizer,
                loss=keras_model.loss,
                metrics=[m if isinstance(m, str) else m[0].from_config(m[1]) for m in metric_specs],
                loss_weights=keras_model.compiled_loss._user_loss_weights,
            )
            _forget_bookkeeping(self._store, model)
            loss = model.compiled_loss(labels, outputs, regularization_losses=model.losses)
            if mode == ModeKeys.EVAL:
                model.compiled_metrics.update_state(labels, outputs)
                metrics = {
                    metric_names_map.get(m.name, m.name): m for m in model.compiled_metrics.metrics
                }
                return EstimatorSpec(
                    mode, predictions=predictions, loss=loss, eval_metric_ops=metrics
                )
            train_op = optimizers.apply(optimizer, loss, model.trainable_weights)
            return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

        super().__init__(model_fn, model_dir=model_dir, config=config)
        if self.config.tf_random_seed is not None:
            # Before cloning: the clone's dropout layers draw their seeds now.
            tf_keras.utils.set_random_seed(self.config.tf_random_seed)
        with self._store.scope():
            self._model = tf_keras.models.clone_model(keras_model)
        _forget_bookkeeping(self._store, self._model)
        # A fresh model_dir starts from the original's weights; a checkpoint
        # or warm start overwrites them.
        self._model.set_weights(keras_model.get_weights())


def model_to_estimator(
    keras_model=None,
    keras_model_path=None,
    custom_objects=None,
    model_dir=None,
    config=None,
    checkpoint_format="checkpoint",
    metric_names_map=None,
    export_outputs=None,
):
    """An Estimator that trains, evaluates and serves a compiled `tf_keras` model."""
    if (keras_model is None) == (keras_model_path is None):
        raise ValueError("Give exactly one of keras_model and keras_model_path.")
    # (2.15 logged which of the two it used, before its Estimator's 'Using config:'.)
    if keras_model is None:
        logging.getLogger(__name__).info("Loading models from %s", keras_model_path)
        keras_model = tf_keras.models.load_model(keras_model_path, custom_objects=custom_objects)
    else:
        logging.getLogger(__name__).info("Using the Keras model provided.")
    if not isinstance(keras_model, tf_keras.Model):
        raise ValueError(
            f"model_to_estimator needs a tf_keras (Keras 2) model, got {type(keras_model)}. "
            "Build it with `tf_keras`, or import the estimator before the first use of "
            "tf.keras, which then is tf_keras."
        )
    if keras_model.optimizer is None or getattr(keras_model, "compiled_loss", None) is None:
        if getattr(keras_model, "_is_compiled", False):  # (TF1 Keras: no compiled_loss)
            raise ValueError(
                "The Keras model was compiled with eager execution off (after "
                "tf.compat.v1.disable_eager_execution() or disable_v2_behavior()): "
                "model_to_estimator here takes a model compiled with eager execution on."
            )
        raise ValueError("The Keras model must be compiled (optimizer and loss) first.")
    # Checkpoints are tf.estimator's name-based ones (its 'saver' format) either way;
    # 2.15's default 'checkpoint' (object-based) is not written (docs/guide/estimator.md,
    # "Differences to know").
    if checkpoint_format not in ("checkpoint", "saver"):
        raise ValueError(
            "model_to_estimator: checkpoint_format must be 'checkpoint' or 'saver', got "
            f"{checkpoint_format!r}."
        )
    return _KerasEstimator(keras_model, model_dir, config, metric_names_map, export_outputs)
