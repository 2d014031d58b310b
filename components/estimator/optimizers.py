"""Optimizer arguments as tf.estimator took them: a name, an instance or a factory."""

import contextlib
import re

import tf_keras

from components.estimator import variables as variables_lib

# tf_keras's legacy optimizers, as tf.estimator 2.15's canned estimators used:
# each update is one fused kernel, and Ftrl keeps sparse gradients sparse.
_BY_NAME = {  # (2.15's names, in their case)
    "Adagrad": tf_keras.optimizers.legacy.Adagrad,
    "Adam": tf_keras.optimizers.legacy.Adam,
    "Ftrl": tf_keras.optimizers.legacy.Ftrl,
    "RMSProp": tf_keras.optimizers.legacy.RMSprop,
    "SGD": tf_keras.optimizers.legacy.SGD,
}


def get_optimizer(optimizer, learning_rate=None):
    """An optimizer instance; a name gets the canned `learning_rate`, or with none the
    Keras class's own default, as tf.estimator 2.15's `get_optimizer_instance_v2` did
    (its DNN estimators pass none: Adagrad then trains at 0.001). Anything callable, a
    factory or an optimizer class (`optimizer=tf.keras.optimizers.legacy.SGD`), is
    called for the instance, as 2.15 called it; names and refusals are 2.15's, in its
    words."""
    if isinstance(optimizer, str):
        factory = _BY_NAME.get(optimizer)
        if factory is None:
            raise ValueError(
                f"Unsupported optimizer name: {optimizer}. Supported names are: "
                f"{tuple(sorted(_BY_NAME))}"
            )
        return factory() if learning_rate is None else factory(learning_rate=learning_rate)
    takes_tf1 = getattr(optimizer, "takes_tf1_optimizer", False)  # (a V1 class's factory)
    if isinstance(optimizer, type) or (
        callable(optimizer) and not hasattr(optimizer, "apply_gradients")
    ):
        optimizer = optimizer()
    if not hasattr(optimizer, "apply_gradients"):
        raise ValueError(
            f"The given object is not a tf.keras.optimizers.Optimizer instance. Given: {optimizer}"
        )
    if not takes_tf1 and _is_tf1_optimizer(optimizer):
        # 2.15's V2 classes took Keras optimizers only (a TF1 one: their V1 twins).
        raise ValueError(
            f"The given object is not a tf.keras.optimizers.Optimizer instance. Given: {optimizer}"
        )
    return optimizer


def made_for_training(training, optimizer, learning_rate=None):
    """`get_optimizer`'s instance when `training` (else None), for a canned model_fn to
    make before its head: 2.15's made theirs past the logits and ahead of the head, so
    an optimizer it refuses is the first error `train()` shows, before any about the
    labels."""
    return get_optimizer(optimizer, learning_rate) if training else None


def _is_tf1_optimizer(optimizer):
    import tensorflow as tf

    return isinstance(optimizer, tf.compat.v1.train.Optimizer)


def apply(optimizer, loss, variables):
    """The train op: gradients of `loss` applied to `variables`."""
    import tensorflow as tf

    variables = list(variables)
    if tf.executing_eagerly() or tf.inside_function():
        train_op = _update(optimizer, loss, variables)
    else:
        _require_graph_optimizer(optimizer)
        # In a graph (a run with TF1 hooks, see graph_mode) the variables keep their
        # graph names: the optimizer's state lands under tf.estimator 2.15's scope.
        with tf.compat.v1.name_scope(_graph_training_scope()):
            train_op = _update(optimizer, loss, variables)
    # Checkpoints then name the slots as tf.estimator 2.15 did, so it resumes either way.
    variables_lib.name_optimizer_state(optimizer, variables)
    return train_op


def _graph_training_scope():
    """The name scope a canned model's optimizer state takes in a graph: 2.15's `training/`,
    or the head's own `training_<n>/` when models before it in the graph took `training`
    (AdaNet's AutoEnsemble candidates: `training_1/SGD/learning_rate`)."""
    import tensorflow as tf

    current = tf.compat.v1.get_default_graph().get_name_scope()
    if re.fullmatch(variables_lib.CANNED_TRAINING_SCOPE + r"_\d+", current):
        return current + "/"
    return variables_lib.CANNED_TRAINING_SCOPE + "/"


def _update(optimizer, loss, variables):
    import tensorflow as tf

    if _overrides_get_updates(optimizer):
        # 2.15's V2 heads trained with `optimizer.get_updates(loss, variables)[0]`: a
        # subclass overriding it (to clip, to check the loss) had it called so.
        return optimizer.get_updates(loss, variables)[0]
    pairs = _gradients_and_variables(optimizer, loss, variables)
    if (
        tf.distribute.get_replica_context() is not None
        and tf.distribute.get_replica_context().num_replicas_in_sync > 1
    ):
        # Replicas' sparse gradients touch different rows, and the collective
        # that sums them needs equal shapes: sum them dense.
        pairs = [
            (tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g, v) for g, v in pairs
        ]
    return optimizer.apply_gradients([(g, v) for g, v in pairs if g is not None])


def _overrides_get_updates(optimizer):
    """Whether `optimizer` is a Keras optimizer whose class has its own `get_updates`: a
    legacy one's override, or any on a newer Keras optimizer (which has none of its own:
    2.15's heads called a subclass's in a graph too)."""
    legacy = tf_keras.optimizers.legacy.Optimizer
    if isinstance(optimizer, legacy):
        return type(optimizer).get_updates is not legacy.get_updates
    return not _is_tf1_optimizer(optimizer) and callable(getattr(optimizer, "get_updates", None))


@contextlib.contextmanager
def stepping_the_global_step(optimizer):
    """Within it, a legacy Keras `optimizer` counts its steps in the global step, as
    tf.estimator 2.15's V2 canned model_fns had it (their
    `optimizer.iterations = get_or_create_global_step()`): its update steps the global
    step, a learning-rate schedule reads the global step, and no `training/<name>/iter`
    of its own is made, so a checkpoint holds none (in a graph and in the TF2 path's
    trace alike) and 2.15's model_dirs, which hold none, resume with their schedule's
    step. The optimizer's own counter is put back on leaving (the graph's or the
    function's ops keep the global step)."""
    import tensorflow as tf

    step = None
    if isinstance(optimizer, tf_keras.optimizers.legacy.Optimizer) and not tf.executing_eagerly():
        if tf.inside_function():
            step = variables_lib.get_global_step()
        else:
            step = tf.compat.v1.train.get_or_create_global_step()
    if step is None:
        yield
        return
    own = optimizer._iterations
    optimizer._iterations = step
    try:
        yield
    finally:
        optimizer._iterations = own


def _gradients_and_variables(optimizer, loss, variables):
    """[(gradient, variable)] of `loss`. A TF1 optimizer computes them itself, as
    2.15's `optimizer.minimize(loss)` had it do: a subclass's `compute_gradients` (one
    clipping them, as users wrote for tf.contrib's `clip_gradients_by_norm`) counts."""
    import tensorflow as tf

    if variables and _is_tf1_optimizer(optimizer) and not tf.executing_eagerly():
        return optimizer.compute_gradients(loss, var_list=variables)
    return list(zip(tf.gradients(loss, variables), variables, strict=True))


def _require_graph_optimizer(optimizer):
    """Refuses a non-legacy Keras optimizer in a TF1 graph: its `apply_gradients` there
    builds updates that no op of the train op runs (only its step counter would move),
    so nothing would train; tf.estimator 2.15 refused it too."""
    import tensorflow as tf

    if isinstance(optimizer, (tf.compat.v1.train.Optimizer, tf_keras.optimizers.legacy.Optimizer)):
        return
    if _overrides_get_updates(optimizer):
        return  # (its own get_updates builds the train op, as 2.15 called it)
    name = type(optimizer).__name__
    raise ValueError(
        f"A non-legacy Keras optimizer ({type(optimizer)}) cannot train this model: it "
        "trains in a TF1 graph (a TF1 hook was passed, the input_fn reads queues or a TF1 "
        "iterator, or model_fn uses TF1 ops), where "
        "such an optimizer's updates would never run. Use "
        f"`tf.keras.optimizers.legacy.{name}` (as tf.estimator 2.15 required) or a "
        "tf.compat.v1.train optimizer."
    )
