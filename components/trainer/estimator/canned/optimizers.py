"""Optimizer arguments as tf.estimator took them: a name, an instance or a factory."""

import tf_keras

_BY_NAME = {
    "adagrad": tf_keras.optimizers.Adagrad,
    "adam": tf_keras.optimizers.Adam,
    "ftrl": tf_keras.optimizers.Ftrl,
    "rmsprop": tf_keras.optimizers.RMSprop,
    "sgd": tf_keras.optimizers.SGD,
}


def get_optimizer(optimizer, learning_rate):
    """An optimizer instance; a name gets the canned `learning_rate`."""
    if isinstance(optimizer, str):
        factory = _BY_NAME.get(optimizer.lower())
        if factory is None:
            raise ValueError(
                f"Unsupported optimizer name {optimizer!r}; use one of "
                f"{sorted(['Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD'])} or an optimizer instance.")
        return factory(learning_rate=learning_rate)
    if callable(optimizer) and not hasattr(optimizer, "apply_gradients"):
        optimizer = optimizer()
    if not hasattr(optimizer, "apply_gradients"):
        raise ValueError(f"optimizer must be a name or an optimizer, got {optimizer!r}.")
    return optimizer


def apply(optimizer, loss, variables):
    """The train op: gradients of `loss` applied to `variables`."""
    import tensorflow as tf
    variables = list(variables)
    gradients = tf.gradients(loss, variables)
    pairs = [(g, v) for g, v in zip(gradients, variables) if g is not None]
    return optimizer.apply_gradients(pairs)
