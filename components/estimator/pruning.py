"""A traced EVAL or PREDICT step without the `train_op` its `model_fn` returned.

tf.estimator 2.15 ran a session and fetched only what a mode reads (EVAL: the loss, the
metrics' update ops, the evaluation hooks' fetches; PREDICT: the predictions), so a
`train_op` a model_fn returned in every mode never ran outside TRAIN. A tf.function runs
every stateful op its trace made (automatic control dependencies, and the function
runtime keeps stateful ops), so the TF2 path would apply the optimizer's updates and
count the global step up once a batch.  For a model_fn that returned a train_op there,
`without_train_op` copies the trace's graph with only what the step's outputs need, as
2.15's session fetched them: the optimizer's updates and the step's increment (and any
other op nothing fetched needs) are left out, as 2.15 left them unfetched.  A trace
without a train_op keeps running as traced (its automatic control dependencies).
"""

import logging
import weakref

import tensorflow as tf
from tensorflow.python.eager import wrap_function
from tensorflow.python.framework import func_graph as func_graph_lib
from tensorflow.python.util import nest

from components.estimator import graph_steps

log = logging.getLogger(__name__)

# The graph a model_fn was traced in -> the train_op it returned there (a tf.function's
# trace is reused by later calls, after other modes' traces have been made).
_TRAIN_OPS = weakref.WeakKeyDictionary()


def note_train_op(train_op):
    """Remembers the train_op a model_fn returned in the graph being traced."""
    graph = tf.compat.v1.get_default_graph()
    if train_op is not None and isinstance(graph, func_graph_lib.FuncGraph):
        _TRAIN_OPS[graph] = train_op


def _ops_of(value):
    """The graph operations behind a train_op: an op, a tensor, the variable an
    `assign_add` returns in a trace (its assign op), a nest of them."""
    found = []
    for item in nest.flatten(value, expand_composites=True):
        if not isinstance(item, tf.Operation):
            try:
                item = item.op
            except (AttributeError, ValueError):  # (an eager variable's)
                continue
        if isinstance(item, tf.Operation):
            found.append(item)
    return found


def _returned(tensor):
    """The tensor a returned output stands for: tf.function returns an identity of each
    output made to wait for every stateful op of the trace."""
    if tensor.op.type == "Identity" and tensor.op.control_inputs:
        return tensor.op.inputs[0]
    return tensor


def without_train_op(function, concrete):
    """`function` (a tf.function), or, when the model_fn traced in it returned a train_op
    and the trace runs ops its outputs do not need, its trace `concrete` copied with only
    what they need (a callable of the same arguments)."""
    graph = concrete.graph
    roots = [op for op in _ops_of(_TRAIN_OPS.get(graph)) if op.graph is graph]
    if not roots:
        return function
    # As 2.15's session fetched them: what the step returns (the loss, the metrics'
    # values, whose reads wait for their updates; the predictions) and what that needs.
    needed = set(graph_steps.closure([_returned(t).op for t in graph.outputs]))
    if all(op in needed for op in graph.control_outputs):
        return function
    outputs = [_returned(t) for t in graph.outputs]
    try:
        pruned, arguments = _lifted(graph, outputs)
    except Exception:  # (lift_to_graph's limits: the step as traced, train_op and all)
        log.warning(
            "Could not leave the train_op model_fn returned out of its %s function: "
            "it runs there too.",
            graph.name,
            exc_info=True,
        )
        return function
    by_output = {id(t): pruned.outputs[i] for i, t in enumerate(graph.outputs)}
    pruned.structured_outputs = nest.map_structure(
        lambda t: by_output[id(t)] if tf.is_tensor(t) else t,
        concrete.structured_outputs,
        expand_composites=True,
    )
    wrapped = wrap_function.WrappedFunction(pruned, wrap_function.VariableHolder())
    wrapped._num_positional_args = len(arguments)
    wrapped._arg_keywords = [t.op.name for t in arguments]

    def call(*args):
        return wrapped(*nest.flatten(args, expand_composites=True))

    return call


def _lifted(graph, outputs):
    """A FuncGraph of `graph`'s arguments and captures returning `outputs`, with what they
    need of `graph` and nothing else; and its arguments."""
    captured = {id(t) for t in graph.internal_captures}
    inputs = [t for t in graph.inputs if id(t) not in captured]
    with graph.as_default():
        pruned = func_graph_lib.FuncGraph(f"{graph.name}_without_train_op")
    lifted = tf.__internal__.lift_to_graph(
        outputs, pruned, sources=inputs + list(graph.internal_captures), base_graph=graph
    )
    pruned.inputs.extend(lifted[t] for t in inputs)
    pruned.outputs.extend(lifted[t] for t in outputs)
    for external, internal in graph.captures:
        pruned.add_capture(external, lifted[internal])
    for library_function in graph._functions.values():
        pruned._add_function(library_function)
    pruned.variables = graph.variables
    return pruned, [lifted[t] for t in inputs]
