"""Scalar summaries as tf.estimator wrote them, and reading them back.

tf.estimator wrote `simple_value` scalars, which TensorBoard, EventAccumulator's
`Scalars()` and `summary_iterator` loops all read; TF2's `tf.summary.scalar`
writes tensors instead, which only TensorBoard's newer readers see.  So the
Estimator writes `simple_value`s through a TF2 summary writer.
"""

import collections

import tensorflow as tf
from tensorboard.backend.event_processing import event_file_loader


def write_scalars(writer, values, step):
    """Writes {tag: number} at `step` as one event of `simple_value` scalars."""
    summary = tf.compat.v1.Summary(
        value=[
            tf.compat.v1.Summary.Value(tag=tag, simple_value=float(value))
            for tag, value in values.items()
        ]
    )
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=int(step))


def write_text(writer, tag, text, step):
    """Writes one string tensor summary at `step` (tf.estimator's `checkpoint_path`)."""
    summary = tf.compat.v1.Summary(
        value=[tf.compat.v1.Summary.Value(tag=tag, tensor=tf.make_tensor_proto(text))]
    )
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=int(step))


def read_scalars_by_step(event_files):
    """{step: {tag: value}} from the numeric scalar summaries in `event_files`, of either kind."""
    by_step = collections.defaultdict(dict)
    for path in sorted(event_files):
        for event in event_file_loader.EventFileLoader(path).Load():
            for value in event.summary.value:
                if value.HasField("tensor"):
                    array = tf.make_ndarray(value.tensor)
                    if array.dtype.kind in "biuf":  # (not `checkpoint_path`, a string)
                        by_step[event.step][value.tag] = float(array)
                elif value.HasField("simple_value"):
                    by_step[event.step][value.tag] = value.simple_value
    return dict(by_step)
