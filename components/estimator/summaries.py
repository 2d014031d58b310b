"""Scalar summaries as tf.estimator wrote them, and reading them back.

tf.estimator wrote `simple_value` scalars, which TensorBoard, EventAccumulator's
`Scalars()` and `summary_iterator` loops all read; TF2's `tf.summary.scalar`
writes tensors instead, which only TensorBoard's newer readers see.  So the
Estimator writes `simple_value`s through a TF2 summary writer.
"""

import collections
import contextlib
import threading

import tensorflow as tf
from tensorboard.backend.event_processing import event_file_loader


def write_scalars(writer, values, step, more=b""):
    """Writes {tag: number} at `step` as one event of `simple_value` scalars, with the
    values of `more` (a serialized `Summary`) after them."""
    summary = tf.compat.v1.Summary(
        value=[
            tf.compat.v1.Summary.Value(tag=tag, simple_value=float(value))
            for tag, value in values.items()
        ]
    )
    if more:
        summary.MergeFromString(more)
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
                    # (Not `checkpoint_path`, a string, nor a histogram.)
                    if array.dtype.kind in "biuf" and array.ndim == 0:
                        by_step[event.step][value.tag] = float(array)
                elif value.HasField("simple_value"):
                    by_step[event.step][value.tag] = value.simple_value
    return dict(by_step)


# ------------------------------------------------------- the canned models' own summaries
# tf.estimator 2.15's canned models summarized their layers on each summary step
# (`dnn/hiddenlayer_0/fraction_of_zero_values`, `.../activation`, `bias`,
# `fraction_of_zero_weights`).  Here the model asks for them while it is traced for
# training; the training step computes them in a branch taken on summary steps only,
# and hands them out as one serialized `Summary` for the host to write.
_collecting = threading.local()


@contextlib.contextmanager
def collecting():
    """Gathers [(tag, kind, compute)] that model code asks for inside, for one trace."""
    stack = _collecting.__dict__.setdefault("stack", [])
    requested = []
    stack.append(requested)
    try:
        yield requested
    finally:
        stack.pop()


def _request(tag, kind, compute):
    stack = getattr(_collecting, "stack", None)
    if stack:  # (outside a training trace, as in evaluation or a TF1 graph: nothing)
        stack[-1].append((tag, kind, compute))


def scalar(tag, compute):
    """Asks for a `simple_value` scalar `compute()` under `tag` on summary steps."""
    _request(tag, "scalar", compute)


def histogram(tag, compute):
    """Asks for a histogram of `compute()` under `tag` on summary steps."""
    _request(tag, "histogram", compute)


def fraction_of_zero(tensors):
    """The share of zero entries over all `tensors` together."""
    zeros = tf.add_n([tf.reduce_sum(tf.cast(tf.equal(t, 0), tf.float32)) for t in tensors])
    sizes = tf.add_n([tf.cast(tf.size(t), tf.float32) for t in tensors])
    return zeros / sizes


def layer(tag, output):
    """A layer's output as 2.15 summarized it: its share of zeros and its histogram."""
    scalar(f"{tag}/fraction_of_zero_values", lambda: fraction_of_zero([output]))
    histogram(f"{tag}/activation", lambda: output)


def serialized_if(condition, requested):
    """One serialized `Summary` of `requested` where `condition` holds, else b""; built
    only in the branch taken, so steps that save no summary do not compute them."""
    if not requested:
        return tf.constant(b"")

    def build():
        parts = []
        for tag, kind, compute in requested:
            value = compute()
            if kind == "scalar":
                parts.append(tf.raw_ops.ScalarSummary(tags=tag, values=tf.cast(value, tf.float32)))
            else:
                parts.append(tf.raw_ops.HistogramSummary(tag=tag, values=value))
        return tf.raw_ops.MergeSummary(inputs=parts)

    return tf.cond(condition, build, lambda: tf.constant(b""))
