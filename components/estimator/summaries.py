"""Scalar summaries as tf.estimator wrote them, and reading them back.

tf.estimator wrote `simple_value` scalars, which TensorBoard, EventAccumulator's
`Scalars()` and `summary_iterator` loops all read; TF2's `tf.summary.scalar`
writes tensors instead, which only TensorBoard's newer readers see.  So the
Estimator writes `simple_value`s through a TF2 summary writer.
"""

import collections
import contextlib
import logging
import re
import threading
import time

import numpy as np
import tensorflow as tf
from tensorboard.backend.event_processing import event_file_loader
from tensorflow.python.ops import summary_ops_v2

_log = logging.getLogger(__name__)


def write_scalars(writer, values, step, before=b""):
    """Writes {tag: number} at `step` as one event of `simple_value` scalars, after the
    values of `before` (a serialized `Summary`: the model's own, which 2.15's summaries
    collection held before the Estimator's `loss`)."""
    summary = tf.compat.v1.Summary.FromString(before)
    summary.value.extend(
        tf.compat.v1.Summary.Value(tag=tag, simple_value=float(value))
        for tag, value in values.items()
    )
    write_summary(writer, summary, step)


def text_summary(tag, text):
    """A `Summary` of one string tensor (tf.estimator's `checkpoint_path`)."""
    return tf.compat.v1.Summary(
        value=[tf.compat.v1.Summary.Value(tag=tag, tensor=tf.make_tensor_proto(text))]
    )


def eval_summary(results):
    """The `Summary` evaluate() writes of its results (all but `global_step`), by their
    types as tf.estimator 2.15 took them: a float or a numpy float32 or int32 / int64 as a
    `simple_value`; an array (a vector metric: `precision_at_thresholds`, `mean_tensor`)
    as a tensor; bytes as a serialized `Summary` (an image summary returned as a metric),
    its values tagged `<key>/<i>`; anything else (a numpy bool, an int16) skipped. In the
    keys' order, as 2.15's evaluation dict had them (its metrics sorted)."""
    summary = tf.compat.v1.Summary()
    for key, value in sorted(results.items()):
        if key == "global_step" or value is None:
            continue
        if isinstance(value, (float, int, np.float32, np.int32, np.int64)):
            summary.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, bytes):
            _add_serialized(summary, key, value)
        elif isinstance(value, np.ndarray):
            summary.value.add(tag=key, node_name=key, tensor=tf.make_tensor_proto(value))
            _log.debug("The summary of %s, an array, shows in TensorBoard's plugins only.", key)
        else:
            _log.warning(
                "Skipping summary for %s: a %s is no float, np.float32, int, np.int32, "
                "np.int64, np.ndarray or serialized Summary.",
                key,
                type(value).__name__,
            )
    return summary


def _add_serialized(summary, key, value):
    try:
        parsed = tf.compat.v1.Summary.FromString(value)
    except Exception:  # (protobuf's DecodeError: bytes that are no Summary)
        _log.warning("Skipping summary for %s: its bytes are no serialized Summary.", key)
        return
    for i, item in enumerate(parsed.value):
        item.tag = f"{key}/{i}"
    summary.value.extend(parsed.value)


def cached_file_writer(folder, made=False):
    """tf.compat.v1's FileWriterCache writer of `folder`, made (where nothing is eager,
    with no graph of its own) when it has none: as 2.15's summary and checkpoint saver
    hooks shared it, every train() call of a process into a folder (any Estimator's, on
    either path) writes one events file there, not one a call. It stays open, as 2.15's
    did: flush it, never close it. `made`: (the writer, whether this call made it)."""
    cache = tf.compat.v1.summary.FileWriterCache
    with cache._lock:
        writer = cache._cache.get(folder)
        new = writer is None
        if new:
            with tf.Graph().as_default():
                writer = cache._cache[folder] = tf.compat.v1.summary.FileWriter(folder)
    return (writer, new) if made else writer


def write_summary(writer, summary, step):
    """Writes `summary` (a `Summary`) at `step` as one event, through a tf.compat.v1
    FileWriter or a TF2 summary writer."""
    if isinstance(writer, tf.compat.v1.summary.FileWriter):
        writer.add_summary(summary, int(step))
        return
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=int(step))


def write_graph(writer, graph_def):
    """Writes `graph_def` as tf.estimator 2.15's checkpoint saver wrote the training graph
    into a train() call's events file: a `graph_def` event, then a `meta_graph_def` event
    of a MetaGraph holding it, both at step 0 (TensorBoard's Graphs tab shows them)."""
    now = time.time()
    meta_graph_def = tf.compat.v1.MetaGraphDef(graph_def=graph_def)
    events = [
        tf.compat.v1.Event(wall_time=now, graph_def=graph_def.SerializeToString()),
        tf.compat.v1.Event(wall_time=now, meta_graph_def=meta_graph_def.SerializeToString()),
    ]
    if isinstance(writer, tf.compat.v1.summary.FileWriter):
        for event in events:
            writer.add_event(event)
        return
    with writer.as_default():
        for event in events:
            summary_ops_v2.import_event(tf.constant(event.SerializeToString()))


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
# training; each is computed where it is asked for, in a branch taken on summary steps
# only (so a variable's summary reads it before the step's update, as 2.15's read it
# beside the train op: `bias` 0.0 at a zero-initialised model's step 1), and the
# training step hands them out as one serialized `Summary` for the host to write.
_collecting = threading.local()


@contextlib.contextmanager
def collecting(condition):
    """Gathers, for one trace, the serialized summaries model code asks for inside (each
    b"" where `condition`, a boolean tensor, does not hold)."""
    stack = _collecting.__dict__.setdefault("stack", [])
    requested = []
    stack.append((condition, requested))
    try:
        yield requested
    finally:
        stack.pop()


def _request(tag, kind, compute, v1_scope=None, v1_only=False):
    stack = getattr(_collecting, "stack", None)
    if stack:  # a training trace on the TF2 path
        condition, requested = stack[-1]
        if not v1_only and condition is not None:
            requested.append(_summary_if(condition, tag, kind, compute))
        return
    graph_kind = getattr(_collecting, "graph", None)
    if graph_kind is None or (v1_only and graph_kind != "v1"):
        return  # (evaluation, prediction, export: nothing)
    if graph_kind == "v1" and v1_scope:
        tag = f"{v1_scope}/{tag}"
    _add_to_graph(tag, kind, compute())


def _summary_if(condition, tag, kind, compute):
    """A serialized `Summary` of `compute()` under `tag` where `condition` holds, else b"";
    what `compute()` asks for in turn is left out (as before: asked while building the
    summary of another)."""

    def build():
        _collecting.stack.append((None, []))
        try:
            value = compute()
        finally:
            _collecting.stack.pop()
        if kind == "scalar":
            return tf.raw_ops.ScalarSummary(tags=tag, values=tf.cast(value, tf.float32))
        return tf.raw_ops.HistogramSummary(tag=tag, values=value)

    return tf.cond(condition, build, lambda: tf.constant(b""))


def _add_to_graph(tag, kind, value):
    """A TF1 summary op of `value` under exactly `tag`, which the training session's
    summary saver merges with the others on summary steps."""
    # Named as its tag, from the top (as tf.compat.v1.summary named the op its tag came
    # from): an error in it names `dnn/dnn/logits/activation`, as 2.15's did.
    with tf.compat.v1.get_default_graph().name_scope(None):
        if kind == "scalar":
            op = tf.raw_ops.ScalarSummary(
                tags=tag, values=tf.cast(value, tf.float32), name=_op_name(tag)
            )
        else:
            op = tf.raw_ops.HistogramSummary(tag=tag, values=value, name=_op_name(tag))
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SUMMARIES, op)


def _op_name(tag):
    """`tag` as an op's name (what an op's name cannot hold made `_`)."""
    return re.sub(r"[^A-Za-z0-9_.\-/]", "_", tag).lstrip("_-/") or None


@contextlib.contextmanager
def in_training_graph(v1):
    """Model code inside adds its summaries to the TF1 training graph being built: as
    2.15's V1 classes tagged them (`v1`: each under its part's scope, `dnn/dnn/...`,
    `linear/bias`, with the V1 heads' `average_loss`) or as its V2 classes did."""
    before = getattr(_collecting, "graph", None)
    _collecting.graph = "v1" if v1 else "v2"
    try:
        yield
    finally:
        _collecting.graph = before


def scalar(tag, compute, v1_scope=None, v1_only=False):
    """Asks for a `simple_value` scalar `compute()` under `tag` on summary steps (under
    `v1_scope/tag` for a V1 class; `v1_only`: a V1 class's alone)."""
    _request(tag, "scalar", compute, v1_scope, v1_only)


def histogram(tag, compute, v1_scope=None):
    """Asks for a histogram of `compute()` under `tag` on summary steps."""
    _request(tag, "histogram", compute, v1_scope)


def fraction_of_zero(tensors):
    """The share of zero entries over all `tensors` together."""
    zeros = tf.add_n([tf.reduce_sum(tf.cast(tf.equal(t, 0), tf.float32)) for t in tensors])
    sizes = tf.add_n([tf.cast(tf.size(t), tf.float32) for t in tensors])
    return zeros / sizes


def layer(tag, output, v1_scope=None):
    """A layer's output as 2.15 summarized it: its share of zeros and its histogram."""
    scalar(f"{tag}/fraction_of_zero_values", lambda: tf.math.zero_fraction(output), v1_scope)
    histogram(f"{tag}/activation", lambda: output, v1_scope)


def serialized_if(condition, requested):
    """One serialized `Summary` of the `requested` summaries where `condition` holds, else b""."""
    if not requested:
        return tf.constant(b"")
    return tf.cond(
        condition, lambda: tf.raw_ops.MergeSummary(inputs=requested), lambda: tf.constant(b"")
    )
