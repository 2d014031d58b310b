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
for 'saver' (`hidden/kernel`, `training/Adam/hidden/kernel/m`, with its `.meta`).  The
checkpoints training writes, `model.ckpt-<step>`, are in the same format as 2.15's: keyed
by that object graph for 'checkpoint' (the graph naming each variable by its 2.15 graph
name, as TF1 read such checkpoints by name), by those names for 'saver'.

A model compiled with a `tf.compat.v1.train` optimizer trains with a fresh copy of it,
as 2.15 did: its state has TF1's graph names (`hidden/kernel/Adam`, `training/beta1_power`).
"""

import contextlib
import copy
import functools
import json
import logging
import os
import zipfile

import numpy as np
import tensorflow as tf
import tf_keras
from tf_keras.src import backend as keras_backend
from tf_keras.src.optimizers.optimizer_v1 import TFOptimizer

from components.estimator import checkpoints as ckpt_lib
from components.estimator import estimator_v1, graph_seeds, optimizers, tf_logging
from components.estimator import export as export_lib
from components.estimator.estimator import Estimator, temporary_model_dir
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


def _output_names(model, outputs):
    """The model's output names; a subclassed model has none here, and 2.15's Keras named
    its outputs `output_1`, `output_2`, ..."""
    return model.output_names or [f"output_{i + 1}" for i in range(len(tf.nest.flatten(outputs)))]


def _as_dict(model, outputs):
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return dict(zip(_output_names(model, outputs), outputs, strict=True))


def _tf1_optimizer(keras_model):
    """The `tf.compat.v1.train` optimizer the model was compiled with (tf_keras wraps one
    in a `TFOptimizer`), or None."""
    wrapped = getattr(keras_model.optimizer, "optimizer", None)
    return wrapped if isinstance(wrapped, tf.compat.v1.train.Optimizer) else None


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


def _fresh_tf1_optimizer(optimizer):
    """A copy of a `tf.compat.v1.train` optimizer (its class and hyperparameters) holding
    no state: 2.15 used the user's instance in a new graph each time, where it made its
    slots and its `beta1_power` afresh (eagerly TF1 keeps one of those per optimizer)."""
    fresh = copy.copy(optimizer)
    for name in [n for n in vars(fresh) if n.startswith("_self_")]:
        delattr(fresh, name)  # (its tracking state: made anew on first use)
    fresh._slots, fresh._non_slot_dict, fresh._deferred_slot_restorations = {}, {}, {}
    return fresh


def _optimizer_maker(keras_model):
    """What makes a new optimizer of the model's kind, to compile with: a legacy Keras
    optimizer from its config, or a fresh copy of a `tf.compat.v1.train` one (which
    tf_keras wraps in its `TFOptimizer` when compiling, as 2.15's Keras did; 2.15
    trained it)."""
    tf1 = _tf1_optimizer(keras_model)
    if tf1 is not None:
        return functools.partial(_fresh_tf1_optimizer, tf1)
    legacy = _legacy_optimizer(keras_model)
    return functools.partial(type(legacy).from_config, legacy.get_config())


def _train_op(optimizer, loss, variables):
    """The train op of a compiled optimizer: a TF1 one's updates in the `training` scope
    2.15's Keras built them in (its state `hidden/kernel/Adam`, `training/beta1_power`)."""
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        with tf.name_scope("training"):
            return optimizers.apply(optimizer, loss, variables)
    return optimizers.apply(optimizer, loss, variables)


# Variables Keras makes for its own loops (batch counters when a model is built,
# steps per execution when it is compiled): not model state, and 2.15's checkpoints
# held none (unnamed, they would be saved as `Variable`, `Variable_1`, ...).
_KERAS_BOOKKEEPING = ("_train_counter", "_test_counter", "_predict_counter", "_steps_per_execution")


def _forget_bookkeeping(store, model):
    bookkeeping = {id(getattr(model, name, None)) for name in _KERAS_BOOKKEEPING}
    if isinstance(model.optimizer, TFOptimizer):  # (its own counter; 2.15's was the step)
        bookkeeping.add(id(model.optimizer.iterations))
    for name in [n for n, v in store.variables.items() if id(v) in bookkeeping]:
        del store.variables[name]


def _fresh_optimizer(make_optimizer, variables):
    """A new optimizer with its state for `variables` made, and a step counter of 0 as
    its iterations (2.15's was the global step, so no `iter` of its own was saved)."""
    step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
    optimizer = make_optimizer()
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        with tf.name_scope("training"):
            optimizer._create_slots(variables)
        return TFOptimizer(optimizer, iterations=step), step
    optimizer.iterations = step
    optimizer._create_all_weights(variables)
    return optimizer, step


def _clone(keras_model, custom_objects):
    """The model rebuilt from its config: as in 2.15, `custom_objects` (a custom
    activation, layer or initializer) are in scope, or it fails naming the missing one.
    A subclassed model's clone (a new instance of its class) keeps the model's name, its
    layers named afresh, as 2.15 rebuilt the model itself in each new graph (its variables
    `my_model/dense/kernel`)."""
    if not _subclassed(keras_model):
        with tf_keras.utils.custom_object_scope(custom_objects or {}):
            return tf_keras.models.clone_model(keras_model)
    with tf_keras.utils.custom_object_scope(custom_objects or {}), _fresh_layer_names():
        clone = tf_keras.models.clone_model(keras_model)
    clone._name = keras_model.name
    return clone


@contextlib.contextmanager
def _fresh_layer_names():
    """Within: layers are named as in a new graph of 2.15's (`dense`, `dense_1`, ...,
    whatever the program made before); Keras's counts are back afterwards."""
    uids = keras_backend.PER_GRAPH_OBJECT_NAME_UIDS
    before = dict(uids)
    uids.clear()
    try:
        yield
    finally:
        uids.clear()
        uids.update(before)


def _object_template(keras_model, make_optimizer, custom_objects, built_like=None):
    """The objects 2.15's 'checkpoint' format saved: a clone of the model with a fresh
    optimizer (its state made), and the global step tracked as `estimator_global_step`;
    (clone, optimizer, step). A Sequential model given no input shape is built as
    `built_like` (the Estimator's, built by its first call)."""
    clone = _clone(keras_model, custom_objects)
    if not clone.built and built_like is not None:
        clone.build(built_like.input_shape)
    optimizer, step = _fresh_optimizer(make_optimizer, clone.trainable_weights)
    clone.optimizer = optimizer
    clone._track_trackable(step, "estimator_global_step")
    return clone, optimizer, step


def _save_object_based(keras_model, make_optimizer, prefix, custom_objects):
    """2.15's 'checkpoint' format's warm start: the template given the model's weights,
    saved by `Model.save_weights` (object-based keys, a `checkpoint` file naming it
    relatively)."""
    clone, _, _ = _object_template(keras_model, make_optimizer, custom_objects)
    clone.set_weights(keras_model.get_weights())
    with tf_logging.root_logger_untouched():  # (TF 2.21's saver logs through absl)
        clone.save_weights(prefix)


def _tf1_counterparts(template, ours, theirs_weights, our_weights):
    """{id(template state variable): ours} of two `tf.compat.v1.train` optimizers' state:
    slots by variable and slot name, the rest (`beta1_power`) by name."""
    pairs = {}
    for theirs, mine in zip(theirs_weights, our_weights, strict=True):
        for slot in template.get_slot_names():
            pairs[id(template.get_slot(theirs, slot))] = ours.get_slot(mine, slot)
    made = {name: variable for (name, _), variable in ours._non_slot_dict.items()}
    for (name, _), variable in template._non_slot_dict.items():
        pairs[id(variable)] = made.get(name)
    return pairs


def _name_based_values(store, model, keras_model, make_optimizer):
    """{2.15's graph name: value} of the 'saver' format's checkpoint: the model's
    variables under the Estimator's names, the global step, and a fresh optimizer's
    state (a Keras one's as `training/<optimizer>/...`, a TF1 one's as TF1 named it)."""
    names = {id(v): name for name, v in store.variables.items()}
    values = {"global_step": np.int64(0)}
    primaries = {}
    for ours, theirs in zip(model.weights, keras_model.weights, strict=True):
        values[store.checkpoint_name(names[id(ours)])] = theirs.numpy()
        primaries[id(theirs)] = tf_estimator_name(names[id(ours)])
    trainable = keras_model.trainable_weights
    optimizer = make_optimizer()
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        trained = {primaries[id(v)]: v.numpy() for v in trainable}
        return {**values, **_tf1_state_values(optimizer, trained)}
    optimizer, _ = _fresh_optimizer(make_optimizer, trainable)
    primary_name = lambda variable: primaries[id(variable)]  # noqa: E731
    for state, name in optimizer_state_names(optimizer, optimizer._name, trainable, primary_name):
        values[name] = state.numpy()
    return values


def _tf1_state_values(optimizer, primaries):
    """{name: initial value} of a fresh TF1 `optimizer`'s state for the variables
    {name: value}, made in a graph as 2.15 made them there (`hidden/kernel/Adam`,
    `hidden/kernel/Adam_1`, `training/beta1_power`)."""
    with tf.Graph().as_default():
        variables = [
            tf.compat.v1.get_variable(name, initializer=value, use_resource=True)
            for name, value in primaries.items()
        ]
        with tf.compat.v1.name_scope("training"):
            optimizer._create_slots(variables)
        state = [v for v in tf.compat.v1.global_variables() if v.op.name not in primaries]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            return dict(zip([v.op.name for v in state], session.run(state), strict=True))


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


def _sample_weights(features):
    """(features, sample weights) of what an input_fn gave: 2.15 took features given as
    {'features': ..., 'sample_weights': ...} as weighted examples."""
    if isinstance(features, dict) and set(features) == {"features", "sample_weights"}:
        return features["features"], features["sample_weights"]
    return features, None


def _loss(model, labels, outputs, weights):
    return model.compiled_loss(
        labels, outputs, sample_weight=weights, regularization_losses=model.losses
    )


def _metric_specs(keras_model):
    """{'metrics': ..., 'weighted_metrics': ...} as the model was compiled, each metric
    object as what makes a fresh one (metric objects hold state: each trace gets its own)."""
    compiled = keras_model.compiled_metrics
    return {
        "metrics": tf.nest.map_structure(_metric_maker, compiled._user_metrics),
        "weighted_metrics": tf.nest.map_structure(_metric_maker, compiled._user_weighted_metrics),
    }


def _tf215_names(container):
    """The compiled metrics' names as 2.15's (TF1) Keras gave them, in their order: a name
    already taken (by `loss`, an output's loss or an earlier metric) gets `_1`, `_2`, ...
    (where Keras 2 names a weighted metric `weighted_<name>`)."""
    outputs = container._output_names
    taken = ["loss"] + ([f"{o}_loss" for o in outputs] if len(outputs) > 1 else [])
    for output, plain, weighted in zip(
        outputs, container._metrics, container._weighted_metrics, strict=True
    ):
        plain = [m.name for m in tf.nest.flatten(plain) if m is not None]
        weighted = [m.name for m in tf.nest.flatten(weighted) if m is not None]
        for base in plain + [_unweighted_name(n, output, plain, len(outputs)) for n in weighted]:
            name, suffix = base, 1
            while name in taken:
                name, suffix = f"{base}_{suffix}", suffix + 1
            taken.append(name)
    return taken[len(taken) - len(container.metrics) :]


def _unweighted_name(name, output, plain_names, outputs):
    """A weighted metric's name without the `weighted_` Keras 2 put in to tell it apart."""
    if outputs > 1 and name.startswith(f"{output}_weighted_"):
        return f"{output}_{name[len(output) + 10 :]}"
    if outputs == 1 and name.startswith("weighted_") and name[9:] in plain_names:
        return name[9:]
    return name


def _renamed(container, metric_names_map):
    """{name: metric} of the compiled metrics, named as 2.15 named them, each renamed by
    `metric_names_map`: as in 2.15, a map given must name every metric of the model and
    nothing else (a ValueError says which)."""
    metrics = container.metrics
    names = _tf215_names(container)
    if not metric_names_map:
        return dict(zip(names, metrics, strict=True))
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
    return {metric_names_map[n]: m for n, m in zip(names, metrics, strict=True)}


def _metric_maker(metric):
    """What makes a fresh `metric` as compiled (a name, a function), or a copy of a
    metric object, for each trace; in the structure the model was compiled with (a
    dict by output, a list per output), as 2.15 compiled its clone."""
    if isinstance(metric, tf_keras.metrics.Metric):
        # (a fresh copy of the config each time: `from_config` pops from it)
        return functools.partial(_from_config, type(metric), metric.get_config())
    return metric


def _from_config(cls, config):
    return cls.from_config(dict(config))


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


def _refuse_wide_deep(keras_model):
    """Refuses a premade `WideDeepModel` (or a model compiled with several optimizers),
    saying what tf.estimator 2.15 did with it, which the kit does not reproduce."""
    optimizer = keras_model.optimizer
    several = isinstance(optimizer, (list, tuple))
    if not several and not isinstance(keras_model, tf_keras.experimental.WideDeepModel):
        return
    names = [type(o).__name__ for o in (optimizer if several else [optimizer])]
    raise ValueError(
        f"model_to_estimator: {type(keras_model).__name__} compiled with {', '.join(names)} "
        "is not trained by this kit's model_to_estimator. tf.estimator 2.15 trained a "
        "WideDeepModel only with checkpoint_format='saver', each of its linear and DNN "
        "updates adding one to the global step (a step counted two: steps=5 ran 3), and "
        "failed on two optimizers given by name. Train it with "
        "`model.fit`, or use the canned estimator.DNNLinearCombinedRegressor (or "
        "Classifier)."
    )


def _subclassed(model):
    """A model subclassed from `Model` (the premade `LinearModel`, `WideDeepModel`), which
    2.15 rebuilt from its class in each graph: not functional, not Sequential."""
    return not model._is_graph_network and not isinstance(model, tf_keras.Sequential)


_SUBCLASSED_BUILT = (
    "You are creating an Estimator from a Keras model manually subclassed from `Model`, that "
    "was already called on some inputs (and thus already had weights). We are currently "
    "unable to preserve the model's state (its weights) as part of the estimator in this "
    "case. Be warned that the estimator has been created using a freshly initialized "
    "version of your model.\nNote that this doesn't affect the state of the model instance "
    "you passed as `keras_model` argument."
)


# (2.15's 'checkpoint' format saved through a Saver of its own, made with TF1's defaults,
# not the RunConfig's keep_checkpoint_max and keep_checkpoint_every_n_hours.)
_SAVER_MAX_TO_KEEP = 5
_SAVER_KEEP_HOURS = 10000.0


class _KerasEstimator(Estimator):
    # Its clone of the Keras model holds the variables, and its model_dir the Keras
    # weights' checkpoint it starts from (without which 2.15 failed to train).
    _forgets_variables_without_a_checkpoint = False

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
        make_optimizer = _optimizer_maker(keras_model)
        # A TF1 optimizer trains through one copy, whose state _train makes once.
        tf1 = _tf1_optimizer(keras_model)
        self._tf1_training = None if tf1 is None else _fresh_tf1_optimizer(tf1)
        metric_specs = _metric_specs(keras_model)

        def model_fn(features, labels, mode):
            model = self._model
            features, weights = _sample_weights(features)
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
                _require_keys(labels, _output_names(model, outputs), "labels", "outputs")
            if mode == ModeKeys.TRAIN and _in_a_replica():  # (compiled by _train)
                loss = _loss(model, labels, outputs, weights)
                training = self._tf1_training or model.optimizer
                train_op = _train_op(training, loss, model.trainable_weights)
                return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)
            optimizer = _compiled(
                model,
                optimizer=make_optimizer(),
                loss=keras_model.loss,
                **tf.nest.map_structure(_made, metric_specs),
                loss_weights=keras_model.compiled_loss._user_loss_weights,
            )
            _forget_bookkeeping(self._store, model)
            loss = _loss(model, labels, outputs, weights)
            if mode == ModeKeys.EVAL:  # (2.15 weighted the loss only, not weighted_metrics)
                model.compiled_metrics.update_state(labels, outputs)
                metrics = _renamed(model.compiled_metrics, metric_names_map)
                return EstimatorSpec(
                    mode, predictions=predictions, loss=loss, eval_metric_ops=metrics
                )
            training = self._tf1_training or optimizer
            train_op = _train_op(training, loss, model.trainable_weights)
            return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)

        super().__init__(model_fn, model_dir=model_dir, config=config)
        seed = self._user_config.tf_random_seed
        # (The clone's dropout layers draw their seeds as they are made.)
        seeded = graph_seeds.keras_seeded(seed) if seed is not None else contextlib.nullcontext()
        with seeded, _training_scope(self._user_config), self._store.scope():
            self._model = _clone(keras_model, custom_objects)
        _forget_bookkeeping(self._store, self._model)
        self._start_from(keras_model, make_optimizer, object_based, custom_objects)
        self._training_compile = lambda: self._model.compile(
            optimizer=make_optimizer(),
            loss=keras_model.loss,
            loss_weights=keras_model.compiled_loss._user_loss_weights,
        )
        # 2.15's 'checkpoint' format: model.ckpt-<step> keyed as the template's objects.
        self._object_based = object_based
        self._template = functools.partial(
            _object_template, keras_model, make_optimizer, custom_objects
        )

    def _start_from(self, keras_model, make_optimizer, object_based, custom_objects):
        """The clone's first weights, as 2.15's: a fresh model_dir warm-starts the
        trainable variables from the weights saved there (so batch norm's moving
        statistics start afresh); a subclassed model, or a Sequential one given no input
        shape, starts from its initial values."""
        if not keras_model._is_graph_network:  # (subclassed, or Sequential not yet built)
            if keras_model.built:
                logging.getLogger(__name__).warning(_SUBCLASSED_BUILT)
        elif self._user_config.is_chief:
            self._warm_start_from = self._first_checkpoint(
                keras_model, make_optimizer, object_based, custom_objects
            )
        else:  # (2.15's other workers started from initializers, then the chief's saves)
            self._model.set_weights(keras_model.get_weights())

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
        if self._tf1_training is not None:
            self._make_tf1_state()
        return super()._train(input_fn, hooks, steps, max_steps, saving_listeners)

    def _max_steps_reached(self, max_steps):
        """2.15 read the step a train() starts from by the name `global_step`, which its
        'checkpoint' format does not hold (`estimator_global_step/...`): it read 0, never
        skipped, and trained a step past a reached `max_steps`."""
        latest = tf.train.latest_checkpoint(self._model_dir) if self._model_dir else None
        if self._object_based and latest and "global_step" not in ckpt_lib.variable_names(latest):
            return False
        return super()._max_steps_reached(max_steps)

    def _checkpoint(self, mode):
        if not self._object_based:
            return lambda prefix: ckpt_lib.write(self._saved_by_name(), prefix)
        return self._write_object_based

    def _saved_by_name(self):
        """{2.15 graph name: variable} of what 2.15 saved: the model variables but the
        optimizer's step counter (2.15's counted in the global step)."""
        return {
            self._store.checkpoint_name(name): variable
            for name, variable in self._store.model_variables().items()
            if self._store.optimizer_role(name) != "iterations"
        }

    def _checkpoint_manager(self, directory):
        """2.15's 'checkpoint' format saved through its model_fn's own Saver: the newest 5
        checkpoints kept whatever the RunConfig says, the state file naming them as written
        (absolute paths under an absolute model_dir)."""
        if not self._object_based:
            return super()._checkpoint_manager(directory)
        return ckpt_lib.CheckpointManager(
            directory,
            self._write_object_based,
            max_to_keep=_SAVER_MAX_TO_KEEP,
            keep_checkpoint_every_n_hours=_SAVER_KEEP_HOURS,
            save_relative_paths=False,
        )

    def _write_object_based(self, prefix):
        """Saves the Estimator's variables at `prefix` as 2.15's 'checkpoint' format did:
        keyed by the model's object graph (`layer_with_weights-0/kernel/.ATTRIBUTES/
        VARIABLE_VALUE`, `.../.OPTIMIZER_SLOT/optimizer/m/...`, `optimizer/learning_rate/...`,
        `estimator_global_step/...`), that graph naming each by its 2.15 graph name
        (`hidden/kernel`, `training/Adam/hidden/kernel/m`)."""
        graph, keyed = self._object_keyed()
        names = {id(v): name for name, v in self._store.checkpoint_names().items()}
        variables = {}
        for attribute, variable in keyed:
            if variable is None or id(variable) not in names:
                raise ValueError(
                    f"model_to_estimator: the checkpoint key {attribute.checkpoint_key} "
                    "has no variable in this Estimator; use checkpoint_format='saver'."
                )
            attribute.full_name = names[id(variable)]
            variables[attribute.checkpoint_key] = variable
        saved = {id(v) for v in variables.values()}
        for name, variable in self._saved_by_name().items():  # (an early stop's signal)
            if id(variable) not in saved:
                variables[name] = variable
        return ckpt_lib.write(variables, prefix, object_graph=graph)

    def _object_keyed(self):
        """The template's object graph, and [(its attribute, the Estimator's variable it
        stands for, or None)]: an object-based checkpoint's key of each variable."""
        if isinstance(self._template, functools.partial):  # (made once, when first needed)
            self._template = self._template(built_like=self._model)
        clone, optimizer, step = self._template
        ours = self._counterparts(clone, optimizer, step)
        graph, nodes = ckpt_lib.object_graph(clone)
        keyed = [
            (attribute, ours.get(id(template)))
            for node, template in zip(graph.nodes, nodes, strict=True)
            for attribute in node.attributes
        ]
        return graph, keyed

    def _checkpoint_keys(self, checkpoint_path):
        """{variable name: key} of an object-based checkpoint in 2.15's 'checkpoint' format:
        its variables read by their place in the model's object graph (as 2.15's Saver of
        the graph's saveables read them), whatever the layers are named now (a model built
        again in the same process: `dense_2`, not `dense`)."""
        if not self._object_based or not ckpt_lib.is_object_based(checkpoint_path):
            return None
        names = {id(v): name for name, v in self._store.variables.items()}
        _, keyed = self._object_keyed()
        return {
            names[id(variable)]: attribute.checkpoint_key
            for attribute, variable in keyed
            if variable is not None and id(variable) in names
        }

    def _counterparts(self, clone, optimizer, step):
        """{id(template variable): the Estimator's variable it stands for}."""
        pairs = {id(step): self._store.global_step}
        pairs.update({id(t): v for t, v in zip(clone.weights, self._model.weights, strict=True)})
        theirs, mine = clone.trainable_weights, self._model.trainable_weights
        if isinstance(optimizer, TFOptimizer):
            pairs.update(_tf1_counterparts(optimizer.optimizer, self._tf1_training, theirs, mine))
            return pairs
        names = {id(v): name for name, v in self._store.variables.items()}
        primaries = {
            id(t): tf_estimator_name(names[id(v)]) for t, v in zip(theirs, mine, strict=True)
        }
        by_name = self._store.checkpoint_names()
        for state, name in optimizer_state_names(
            optimizer, optimizer._name, theirs, lambda v: primaries[id(v)]
        ):
            pairs[id(state)] = by_name.get(name)
        return pairs

    def _make_tf1_state(self):
        """Makes the TF1 optimizer's state eagerly (once: TF1 keeps what it made), under
        the training strategy if any (in a replica's step TF1 makes it where the variable
        store sees none), and names it in checkpoints as 2.15's graph did:
        `hidden/kernel/Adam`, `training/beta1_power`."""
        weights = self._model.trainable_weights
        with self._store.scope(), tf.name_scope("training"):
            self._tf1_training._create_slots(weights)
        self._store.name_tf1_slots(self._tf1_training, weights)

    def _first_checkpoint(self, keras_model, make_optimizer, object_based, custom_objects):
        """`<model_dir>/keras/keras_model.ckpt`, saved unless the folder has a checkpoint
        (then that one is the warm start's, as in 2.15)."""
        directory = os.path.join(self.model_dir, KERAS_DIR)
        latest = tf.train.latest_checkpoint(directory)
        if latest is not None:
            return latest
        tf.io.gfile.makedirs(directory)
        prefix = os.path.join(directory, KERAS_CHECKPOINT)
        if object_based:
            _save_object_based(keras_model, make_optimizer, prefix, custom_objects)
        else:
            values = _name_based_values(self._store, self._model, keras_model, make_optimizer)
            _save_name_based(values, prefix)
        return prefix


class KerasEstimatorV1(_KerasEstimator, estimator_v1.Estimator):
    """tf.compat.v1.keras.estimator's: 2.15's V1 `Estimator`, with `export_savedmodel`."""


# What `type(est).__name__` and `repr` showed of 2.15's: the Estimator classes themselves.
_KerasEstimator.__name__ = _KerasEstimator.__qualname__ = "EstimatorV2"
KerasEstimatorV1.__name__ = KerasEstimatorV1.__qualname__ = "Estimator"


def _refuse_a_keras_3_file(path):
    """A `.keras` file Keras 3 saved (TF 2.21's `tf.keras` unless TF_USE_LEGACY_KERAS=1)
    refused, saying so: tf_keras fails on it deserializing its first layer."""
    path = os.fspath(path)
    if not zipfile.is_zipfile(path):
        return
    with zipfile.ZipFile(path) as saved:
        if "metadata.json" not in saved.namelist():
            return
        version = json.loads(saved.read("metadata.json")).get("keras_version", "")
    if version.startswith("3."):
        raise ValueError(
            f"model_to_estimator: {path} was saved by Keras {version} (Keras 3); "
            "model_to_estimator takes tf_keras (Keras 2) models. Build and save the model "
            "with tf_keras (or set TF_USE_LEGACY_KERAS=1 before the first use of tf.keras), "
            "or give the model itself, built with tf_keras."
        )


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
    return converted(_KerasEstimator, **locals())


def converted(
    estimator_class,
    *,
    keras_model,
    keras_model_path,
    custom_objects,
    model_dir,
    config,
    checkpoint_format,
    metric_names_map,
    export_outputs,
):
    """`model_to_estimator`'s work, its Estimator of `estimator_class`: tf.keras's or
    tf.compat.v1.keras's (2.15 returned its `EstimatorV2` from one, `Estimator` from the
    other)."""
    if keras_model is None and keras_model_path is None:  # (2.15's words, typo and all)
        raise ValueError("Either `keras_model` or `keras_model_path` needs to be provided.")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError("Please specity either `keras_model` or `keras_model_path`, but not both.")
    if config is None:  # (2.15 said so first, then which model it used)
        logging.getLogger(__name__).info("Using default config.")
        config = RunConfig()
    if (
        model_dir is None and config.model_dir is None
    ):  # (2.15 made it first, then said which model)
        model_dir = temporary_model_dir()
    # (2.15 logged which of the two it used, before its Estimator's 'Using config:'.)
    if keras_model is None:
        logging.getLogger(__name__).info("Loading models from %s", keras_model_path)
        _refuse_a_keras_3_file(keras_model_path)
        keras_model = tf_keras.models.load_model(keras_model_path, custom_objects=custom_objects)
    else:
        logging.getLogger(__name__).info("Using the Keras model provided.")
    if not isinstance(keras_model, tf_keras.Model):
        raise ValueError(
            f"model_to_estimator needs a tf_keras (Keras 2) model, got {type(keras_model)}. "
            "Build it with `tf_keras`, or import the estimator before the first use of "
            "tf.keras, which then is tf_keras."
        )
    if checkpoint_format in (None, "checkpoint") and _subclassed(keras_model):  # (2.15's words)
        raise ValueError(
            "Object-based checkpoints are currently not supported with subclassed models."
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
    _refuse_wide_deep(keras_model)
    if checkpoint_format not in ("checkpoint", "saver"):
        raise ValueError(
            "model_to_estimator: checkpoint_format must be 'checkpoint' or 'saver', got "
            f"{checkpoint_format!r}."
        )
    return estimator_class(
        keras_model,
        model_dir,
        config,
        metric_names_map,
        export_outputs,
        object_based=checkpoint_format == "checkpoint",
        custom_objects=custom_objects,
    )
