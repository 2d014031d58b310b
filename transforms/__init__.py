"""Preprocessing functions for the Transform component, referenced by dotted path.

A dotted path (not a function object) keeps pipeline definitions serializable and
lets the executor import the code where it runs.
"""

import importlib


def load_preprocessing_fn(dotted_path: str):
    """Imports `package.module.function` and returns the function."""
    module_name, _, attr = dotted_path.rpartition(".")
    if not module_name or not attr:
        raise ValueError(
            f"preprocessing_fn {dotted_path!r} is not a dotted path like "
            '"transforms.taxi.preprocessing_fn"'
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only a missing target module is the caller's mistake; a missing
        # dependency inside it should surface unchanged.
        if e.name is None or not module_name.startswith(e.name):
            raise
        raise ValueError(
            f"preprocessing_fn {dotted_path!r}: module {module_name!r} not found"
        ) from e
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(
            f"preprocessing_fn {dotted_path!r}: module {module_name!r} has no callable {attr!r}"
        )
    return fn


def dense(x, default):
    """A raw column as a dense [batch] tensor.

    Optional features arrive as SparseTensor [batch, <=1] (missing rows get `default`);
    required ones as dense [batch] or [batch, 1].
    """
    import tensorflow as tf  # here: this package is imported where TensorFlow is not needed

    if isinstance(x, tf.SparseTensor):
        x = tf.sparse.to_dense(
            tf.SparseTensor(x.indices, x.values, [x.dense_shape[0], 1]), default_value=default
        )
    if x.shape.rank == 2:
        x = tf.squeeze(x, axis=1)
    return x
