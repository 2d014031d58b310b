"""`model_to_estimator`: a compiled `tf_keras` model as an Estimator.

The Estimator clones the model once, eagerly, into its variable store (a
clone built while tracing the serving graph would be built in a TF1-style
graph, where tf_keras cannot build a model).  Each mode's `model_fn` calls that
clone, compiles it like the original, and uses its compiled loss and metrics.

As tf.estimator 2.15 did, the chief first saves the original model's weights, with
a fresh optimizer's state and a global step of 0, as `<model_dir>/keras/keras_model.ckpt`
(unless that folder already holds a checkpoint), and the Estimator warm-starts its
trainable variables from it: object-based (`layer_with_weights-0/kernel/...`, as
`Model.save_weights` writes) for `checkpoint_format='checkpoint'`, `tf.compat.v1.train.Saver`'s
for 'saver' (`hidden/kernel`, `training/Adam/hidden/kernel/m`, with its `.meta`).
"""

import contextlib
import functools
import logging
import os

import numpy as np
import tensorflow as tf
import tf_keras

from components.estimator import export as export_lib
from components.estimator import optimizers, tf_logging
from components.estimator.estimator import Estimator
from components.estimator.model_fn import EstimatorSpec, ModeKeys
from components.estimator.run_config import RunConfig
from components.estimator.variables import optimizer_state_names, tf_estimator_name

# Where 2.15's model_to_estimator saved the Keras model's weights to warm-start from.
KERAS_DIR = "keras"
KERAS_CHECKPOINT = "keras_model.ckpt"


class FormattedKeyError(KeyError):
    """A KeyError whose message prints as written (KeyError's own quotes it), as 2.15's."""

    def __str__(self):
        return self.args[0]


def _require_keys(given, expected, what, kind):
    """2.15's FormattedKeyError when a features (labels) dict lacks a model input (output)."""
    missing = set(expected) - set(given)
    if missing:
        raise FormattedKeyError(
            f"The dictionary passed into {what} does not cover requested {kind} keys "
            f"defined in the keras model.\n\tExpected keys: {set(expected)}\n\t{what} keys: "
            f"{set(given)}\n\tMissed keys: {missing}"
        )


def _inputs_for(model, features):
    if not isinstance(features, dict):
        return features
    names = list(model.input_names)
    _require_keys(features, names, "features", "inputs")
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
    wrapped = getattr(optimizer, "optimizer", None)  # (Keras' wrapper of a TF1 optimizer)
    if isinstance(wrapped, tf.compat.v1.train.Optimizer):
        raise ValueError(
            f"model_to_estimator: the model is compiled with {type(wrapped).__name__}, a "
            "tf.compat.v1.train optimizer, which this kit's model_to_estimator does not train "
            "(tf.estimator 2.15 did). Compile it with the Keras optimizer of that algorithm "
            "and rate (tf_keras.optimizers.legacy.Adam(learning_rate=...), .SGD, .Adagrad, "
            ".RMSprop, .Ftrl), or train the TF1 optimizer from a model_fn."
        )
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


def _fresh_optimizer(optimizer_class, optimizer_config, variables):
    """A new optimizer with its state for `variables` made, and a step counter of 0 as
    its iterations (2.15's was the global step, so no `iter` of its own was saved)."""
    optimizer = optimizer_class.from_config(optimizer_config)
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
    optimizer.iterations = step
    optimizer._create_all_weights(variables)
    return optimizer, step


def _clone(keras_model, custom_objects):
    """The model rebuilt from its config: as in 2.15, `custom_objects` (a custom
    activation, layer or initializer) are in scope, or it fails naming the missing one."""
    with tf_keras.utils.custom_object_scope(custom_objects or {}):
        return tf_keras.models.clone_model(keras_model)


def _save_object_based(keras_model, optimizer_class, optimizer_config, prefix, custom_objects):
    """2.15's 'checkpoint' format: a clone given the model's weights and a fresh
    optimizer, with the global step tracked as `estimator_global_step`, saved by
    `Model.save_weights` (object-based keys, a `checkpoint` file naming it relatively)."""
    clone = _clone(keras_model, custom_objects)
    clone.set_weights(keras_model.get_weights())
    optimizer, step = _fresh_optimizer(optimizer_class, optimizer_config, clone.trainable_weights)
    clone.optimizer = optimizer
    clone._track_trackable(step, "estimator_global_step")
    with tf_logging.root_logger_untouched():  # (TF 2.21's saver logs through absl)
        clone.save_weights(prefix)


def _name_based_values(store, model, keras_model, optimizer_class, optimizer_config):
    """{2.15's graph name: value} of the 'saver' format's checkpoint: the model's
    variables under the Estimator's names, the global step, and a fresh optimizer's
    state as `training/<optimizer>/...`."""
    names = {id(v): name for name, v in store.variables.items()}
    values = {"global_step": np.int64(0)}
    primaries = {}
    for ours, theirs in zip(model.weights, keras_model.weights, strict=True):
        values[store.checkpoint_name(names[id(ours)])] = theirs.numpy()
        primaries[id(theirs)] = tf_estimator_name(names[id(ours)])
    trainable = keras_model.trainable_weights
    optimizer, _ = _fresh_optimizer(optimizer_class, optimizer_config, trainable)
    primary_name = lambda variable: primaries[id(variable)]  # noqa: E731
    for state, name in optimizer_state_names(optimizer, optimizer._name, trainable, primary_name):
        values[name] = state.numpy()
    return values


def _save_name_based(values, prefix):
    """Saves {name: value} as a `tf.compat.v1.train.Saver` of a graph holding those
    variables (its `.meta` too, and a `checkpoint` file naming the prefix as given)."""
    with tf.Graph().as_default():
        feeds = {}
        for name, value in sorted(values.items()):
            collections = [tf.compat.v1.GraphKeys.GLOBAL_VARIABLES]
            if name == "global_step":
                collections.append(tf.compat.v1.GraphKeys.GLOBAL_STEP)
            variable = tf.compat.v1.get_variable(
                name,
                shape=np.shape(value),
                dtype=tf.as_dtype(np.asarray(value).dtype),
                initializer=tf.compat.v1.zeros_initializer(),
                trainable=False,
                use_resource=True,
                collections=collections,
            )
            feeds[variable.initial_value] = value  # (values fed, not kept in the .meta)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer(), feeds)
            saver.save(session, prefix)


def _renamed(metrics, metric_names_map):
    """{name: metric}, each renamed by `metric_names_map`: as in 2.15, a map given must
    name every metric of the model and nothing else (a ValueError says which)."""
    if not metric_names_map:
        return {m.name: m for m in metrics}
    names = [m.name for m in metrics]
    unnamed = [n for n in names if n not in metric_names_map]
    if unnamed:
        raise ValueError(
            "Invalid `metric_names_map`. The following keras model metric names:"
            f'"{unnamed}" do not exist in the `metric_names_map` dictionary'
        )
    unexpected = [k for k in metric_names_map if k not in names]
    if unexpected:
        raise ValueError(
            "Invalid `metric_names_map`. There are unexpected keys in the `metric_names_map` "
            f"dictionary. Expected keys: {names}, Received: {unexpected}"
        )
    return {metric_names_map[m.name]: m for m in metrics}


def _metric_maker(metric):
    """What makes a fresh `metric` as compiled (a name, a function), or a copy of a
    metric object, for each trace; in the structure the model was compiled with (a
    dict by output, a list per output), as 2.15 compiled its clone."""
    if isinstance(metric, tf_keras.metrics.Metric):
        return functools.partial(type(metric).from_config, metric.get_config())
    return metric


def _made(maker):
    return maker() if isinstance(maker, functools.partial) else maker


def _training_scope(config):
    """The scope the clone's variables are made in: the strategy it trains under on one
    machine (RunConfig(train_distribute=MirroredStrategy(...)), as 2.15 built its clone
    under it), so its replicas share them; elsewhere none."""
    strategy = config.train_distribute
    if strategy is None or config.num_worker_replicas > 1 or config.num_ps_replicas:
        return contextlib.nullcontext()
    return strategy.scope()


def _compiled(model, **kwargs):
    """Compiles `model` and returns its optimizer. A clone made under the training
    strategy evaluates and predicts outside it, as 2.15's did: its metrics are made
    there, and Keras compiles it as a model of no strategy then (its variables are read
    as they are)."""
    strategy, model._distribution_strategy = model._distribution_strategy, None
    try:
        model.compile(**kwargs)
    finally:
        model._distribution_strategy = strategy
    return kwargs["optimizer"]


def _in_a_replica():
    """Whether model_fn runs in a strategy's replica (a step under train_distribute)."""
    return tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context() is False


class _KerasEstimator(Estimator):
    def __init__(
        self,
        keras_model,
        model_dir,
        config,
        metric_names_map,
        export_outputs,
        object_based,
        custom_objects=None,
    ):
        metric_names_map = dict(metric_names_map or {})
        legacy = _legacy_optimizer(keras_model)
        optimizer_class = type(legacy)
        optimizer_config = legacy.get_config()
        # Metric objects hold state: each trace gets fresh ones built from configs.
        metric_specs = tf.nest.map_structure(
            _metric_maker, keras_model.compiled_metrics._user_metrics
        )

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
            if isinstance(labels, dict):
                _require_keys(labels, model.output_names, "labels", "outputs")
            if mode == ModeKeys.TRAIN and _in_a_replica():  # (compiled by _train)
                loss = model.compiled_loss(labels, outputs, regularization_losses=model.losses)
                train_op = optimizers.apply(model.optimizer, loss, model.trainable_weights)
                return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)
            optimizer = _compiled(
                model,
                optimizer=optimizer_class.from_config(optimizer_config),
                loss=keras_model.loss,
                metrics=tf.nest.map_structure(_made, metric_specs),
                loss_weights=keras_model.compiled_loss._user_loss_weights,
            )
            _forget_bookkeeping(self._store, model)
            loss = model.compiled_loss(labels, outputs, regularization_losses=model.losses)
            if mode == ModeKeys.EVAL:
                model.compiled_metrics.update_state(labels, outputs)
                metrics = _renamed(model.compiled_metrics.metrics, metric_names_map)
                return EstimatorSpec(
                    mode, predictions=predictions, loss=loss, eval_metric_ops=metrics
                )
            train_op = optimizers.apply(optimizer, loss, model.trainable_weights)
            return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

        super().__init__(model_fn, model_dir=model_dir, config=config)
        if self.config.tf_random_seed is not None:
            # Before cloning: the clone's dropout layers draw their seeds now.
            tf_keras.utils.set_random_seed(self.config.tf_random_seed)
        with _training_scope(self.config), self._store.scope():
            self._model = _clone(keras_model, custom_objects)
        _forget_bookkeeping(self._store, self._model)
        if self.config.is_chief:
            # As 2.15: a fresh model_dir warm-starts the trainable variables from the
            # weights saved there (so batch norm's moving statistics start afresh).
            self._warm_start_from = self._first_checkpoint(
                keras_model, optimizer_class, optimizer_config, object_based, custom_objects
            )
        else:  # (2.15's other workers started from initializers, then the chief's saves)
            self._model.set_weights(keras_model.get_weights())
        self._training_compile = lambda: self._model.compile(
            optimizer=optimizer_class.from_config(optimizer_config),
            loss=keras_model.loss,
            loss_weights=keras_model.compiled_loss._user_loss_weights,
        )

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        """Under train_distribute (whose scope train() entered), the clone is compiled
        once, here, eagerly: the strategy's replicas then share its optimizer and its
        loss's metric (2.15 compiled it under the strategy; model_fn compiling it in a
        replica's step raised)."""
        if tf.distribute.has_strategy() and self._training_compile is not None:
            compile_model, self._training_compile = self._training_compile, None
            with self._store.scope():
                compile_model()
            _forget_bookkeeping(self._store, self._model)
        return super()._train(input_fn, hooks, steps, max_steps, saving_listeners)

    def _first_checkpoint(
        self, keras_model, optimizer_class, optimizer_config, object_based, custom_objects
    ):
        """`<model_dir>/keras/keras_model.ckpt`, saved unless the folder has a checkpoint
        (then that one is the warm start's, as in 2.15)."""
        directory = os.path.join(self.model_dir, KERAS_DIR)
        latest = tf.train.latest_checkpoint(directory)
        if latest is not None:
            return latest
        tf.io.gfile.makedirs(directory)
        prefix = os.path.join(directory, KERAS_CHECKPOINT)
        if object_based:
            _save_object_based(
                keras_model, optimizer_class, optimizer_config, prefix, custom_objects
            )
        else:
            values = _name_based_values(
                self._store, self._model, keras_model, optimizer_class, optimizer_config
            )
            _save_name_based(values, prefix)
        return prefix


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
    if keras_model is None and keras_model_path is None:  # (2.15's words, typo and all)
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError("Please specity either `keras_model` or `keras_model_path`, but not both.")
    if config is None:  # (2.15 said so first, then which model it used)
        logging.getLogger(__name__).info("Using default config.")
        config = RunConfig()
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
        raise ValueError(
            "The given keras model has not been compiled yet. Please compile the model with "
            "`model.compile()` before calling `model_to_estimator()`."
        )
    # Checkpoints are tf.estimator's name-based ones (its 'saver' format) either way;
    # 2.15's default 'checkpoint' (object-based) is not written (docs/guide/estimator.md,
    # "Differences to know").
    if checkpoint_format not in ("checkpoint", "saver"):
        raise ValueError(
            "model_to_estimator: checkpoint_format must be 'checkpoint' or 'saver', got "
            f"{checkpoint_format!r}."
        )
    return _KerasEstimator(
        keras_model,
        model_dir,
        config,
        metric_names_map,
        export_outputs,
        object_based=checkpoint_format == "checkpoint",
        custom_objects=custom_objects,
    )
