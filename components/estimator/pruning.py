"""A traced EVAL or PREDICT step that runs only what its outputs need.

tf.estimator 2.15 ran a session and fetched only what a mode reads (EVAL: the loss, the
metrics' update ops, the evaluation hooks' fetches; PREDICT: the predictions), so an op
nothing fetched needed never ran: a `train_op` a model_fn returned in every mode, or an
optimizer's update a model_fn built in EVAL without returning it.  A tf.function runs
every stateful op its trace made (automatic control dependencies, and the function
runtime keeps stateful ops), so the TF2 path would apply those updates and count the
global step up once a batch.  `as_fetched` copies a trace that runs such ops with only
what the step's outputs need, as 2.15's session fetched them: the optimizer's updates
and the step's increment (and any other op nothing fetched needs) are left out.  A trace
whose stateful ops its outputs all need runs as traced.
"""

import logging

import tensorflow as tf
from tensorflow.python.eager import wrap_function
from tensorflow.python.framework import func_graph as func_graph_lib
from tensorflow.python.util import nest

from components.estimator import graph_steps
from components.estimator import variables as variables_lib

log = logging.getLogger(__name__)


def _returned(tensor):
    """The tensor a returned output stands for: tf.function returns an identity of each
    output made to wait for every stateful op of the trace."""
    if tensor.op.type == "Identity" and tensor.op.control_inputs:
        return tensor.op.inputs[0]
    return tensor


def as_fetched(function, concrete, metric_variables=()):
    """`function` (a tf.function), or, when its trace `concrete` runs ops its outputs do
    not need, that trace copied with only what they need (a callable of the same
    arguments). Updates of `metric_variables` alone do not count (2.15 fetched every
    metric's update op). Decided once per trace (a tf.function reuses its traces)."""
    try:
        pruned = concrete._kit_as_fetched
    except AttributeError:
        pruned = concrete._kit_as_fetched = _pruned(concrete, metric_variables)
    return pruned or function


def _unfetched(graph, metric_variables):
    """The ops `graph` runs that its outputs do not need and 2.15 would not have run:
    but reads, and updates of metric variables (a PR AUC's true negatives)."""
    # As 2.15's session fetched them: what the step returns (the loss, the metrics'
    # values, whose reads wait for their updates; the predictions) and what that needs.
    needed = set(graph_steps.closure([_returned(t).op for t in graph.outputs]))
    metric_handles = _handles(metric_variables)
    fetched = {id(inner) for outer, inner in graph.captures if id(outer) in metric_handles}
    return [
        op
        for op in graph.control_outputs
        if op not in needed
        and op.type != "ReadVariableOp"
        and not (op.inputs and id(op.inputs[0]) in fetched)
    ]


def _handles(variables):
    """The ids of `variables`' handles (a distributed variable's: its parts')."""
    found = set()
    for variable in variables:
        for part in variables_lib.parts(variable):
            try:
                found.add(id(part.handle))
            except (AttributeError, ValueError, RuntimeError):
                continue
    return found


def _pruned(concrete, metric_variables):
    graph = concrete.graph
    if not _unfetched(graph, metric_variables):
        return None
    outputs = [_returned(t) for t in graph.outputs]
    try:
        pruned, arguments = _lifted(graph, outputs)
    except Exception:  # (lift_to_graph's limits: the step as traced, all its ops)
        log.warning(
            "Could not leave the ops its outputs do not need (a train_op, an optimizer's "
            "update) out of the %s function: they run there too.",
            graph.name,
            exc_info=True,
        )
        return None
    by_output = {id(t): pruned.outputs[i] for i, t in enumerate(graph.outputs)}
    pruned.structured_outputs = nest.map_structure(
        lambda t: by_output[id(t)] if tf.is_tensor(t) else t,
        concrete.structured_outputs,
        expand_composites=True,
    )
    return _callable(pruned, arguments)


def _callable(pruned, arguments):
    """A callable of the step's (nested) arguments running the FuncGraph `pruned`."""
    wrapped = wrap_function.WrappedFunction(pruned, wrap_function.VariableHolder())
    wrapped._num_positional_args = len(arguments)
    wrapped._arg_keywords = [t.op.name for t in arguments]

    def call(*args):
        return wrapped(*nest.flatten(args, expand_composites=True))

    return call


def reading_only(concrete, outputs):
    """A callable of `concrete`'s arguments returning the list of its `outputs` (some
    of its structured outputs) with only what they need of its trace: the reads of a
    metric's value, none of the updates (2.15 fetched the values once after the last
    batch's updates). Made once per trace and outputs; None where lifting them out fails
    (lift_to_graph's limits)."""
    cache = concrete.__dict__.setdefault("_kit_reading_only", {})
    key = tuple(id(t) for t in outputs)
    if key not in cache:
        try:
            pruned, arguments = _lifted(concrete.graph, [_returned(t) for t in outputs])
        except Exception:  # (then the values as the last batch's step read them)
            log.warning("Could not read the metrics' values apart.", exc_info=True)
            cache[key] = None
        else:
            pruned.structured_outputs = list(pruned.outputs)
            cache[key] = _callable(pruned, arguments)
    return cache[key]


def _lifted(graph, outputs):
    """A FuncGraph of `graph`'s arguments and captures returning `outputs`, with what they
    need of `graph` and nothing else; and its arguments."""
    captured = {id(t) for t in graph.internal_captures}
    inputs = [t for t in graph.inputs if id(t) not in captured]
    with graph.as_default():
        pruned = func_graph_lib.FuncGraph(f"{graph.name}_as_fetched")
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


def as_they_stand(concrete, outputs):
    """A callable of no arguments returning `outputs` (some of `concrete`'s structured
    outputs) computed from the variables as they stand, with none of the trace's
    updates: an evaluation of no batch, whose metrics 2.15 read as they start. Only data
    edges are followed (a metric's read waits for its update by a control edge). None
    where the outputs need the step's arguments."""
    try:
        return _reading_alone(concrete.graph, [_returned(t).name for t in outputs])
    except Exception:  # (then no values: evaluate() says its input gave no batch)
        log.warning("Could not read the metrics' values apart.", exc_info=True)
        return None


def _reading_alone(graph, names):
    graph_def = graph.as_graph_def()
    for node in graph_def.node:
        data = [name for name in node.input if not name.startswith("^")]
        del node.input[:]
        node.input.extend(data)
    kept = tf.compat.v1.graph_util.extract_sub_graph(graph_def, [n.split(":")[0] for n in names])
    kept_nodes = {node.name for node in kept.node}
    arguments = {t.op.name for t in graph.inputs} - {i.op.name for _, i in graph.captures}
    if kept_nodes & arguments:
        return None
    captured = {i.op.name: o for o, i in graph.captures if i.op.name in kept_nodes}

    def read():
        wrapped = tf.compat.v1.get_default_graph()  # (the function being wrapped)
        input_map = {f"{name}:0": wrapped.capture(outer) for name, outer in captured.items()}
        return tf.graph_util.import_graph_def(
            kept, input_map=input_map, return_elements=names, name=""
        )

    return tf.compat.v1.wrap_function(read, [])
