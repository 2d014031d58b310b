"""Helpers for preprocessing_fn code: raw columns as the tensors TFT hands over."""


def dense(x, default):
    """A raw column as a dense [batch] tensor.

    Optional features arrive as SparseTensor [batch, <=1] (missing rows get `default`);
    required ones as dense [batch] or [batch, 1].
    """
    import tensorflow as tf  # here: modules importing this may not need TensorFlow

    if isinstance(x, tf.SparseTensor):
        x = tf.sparse.to_dense(
            tf.SparseTensor(x.indices, x.values, [x.dense_shape[0], 1]), default_value=default
        )
    if x.shape.rank == 2:
        x = tf.squeeze(x, axis=1)
    return x
