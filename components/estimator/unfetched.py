"""The effects a model_fn's training graph makes that tf.estimator 2.15 never ran.

2.15 ran each training step as one session run of what it fetched: the train op and the
loss, its hooks' fetches (the global step, the merged summaries on summary steps), after
the session's set-up (initializers, tables).  An op none of those needed never ran: a
Keras BatchNormalization's moving-statistics updates left out of the train op, a
`tf.print` or a `tf.debugging.assert_*` nothing depends on, an assign nothing fetches.
The TF2 path traces model_fn in a `tf.function`, which runs every stateful op of its
trace (automatic control dependencies), so it would run those.  `effects` finds them in a
model_fn's TRAIN graph (`graph_mode.ModeGraph`); the Estimator trains such a model_fn in
that graph, with a session, which runs only what is fetched, as 2.15's did.

Two kinds do not count (`noting`): a non-legacy Keras optimizer's `apply_gradients` in a
graph builds its updates beside the op it returns (only its step counter), so under 2.15
it trained nothing; the TF2 path applies them on purpose (docs/guide/estimator.md).  And
a Keras metric's accumulators updated in training: per-evaluation state, set to zero
when evaluate() starts and never saved, so running their updates changes nothing seen.
"""

import contextlib
import functools
import threading
import weakref

import tensorflow as tf
import tf_keras

from components.estimator import graph_steps
from components.estimator import variables as variables_lib

_KEYS = tf.compat.v1.GraphKeys

# Stateful ops whose run changes nothing another step sees: reads of a variable or a
# table, and the legacy random ops (each keeps its own generator: one run unfetched leaves
# the others' numbers as they were).
_WITHOUT_EFFECT = frozenset(
    {
        "ReadVariableOp",
        "VarIsInitializedOp",
        "IsVariableInitialized",
        "VariableShape",
        "ResourceGather",
        "ResourceGatherNd",
        "LookupTableFindV2",
        "LookupTableSizeV2",
        "LookupTableExportV2",
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "TruncatedNormal",
        "ParameterizedTruncatedNormal",
        "RandomShuffle",
        "Multinomial",
        "RandomGamma",
        "RandomPoisson",
        "RandomPoissonV2",
    }
)
# Reads of a TF1 (ref) variable.
_REF_READS = frozenset({"Identity", "IsVariableInitialized", "RefIdentity"})


def effects(built):
    """The ops with an effect that `built`'s model_fn made and that 2.15's session, fetching
    the train op, the loss and the summaries, would not have run (in the graph's order)."""
    graph, spec = built.graph, built.spec
    fetched = [_as_op(spec.train_op), _as_op(spec.loss)]
    needed = set(graph_steps.closure([op for op in fetched + _set_up(graph) if op is not None]))
    noted = _NOTED.get(graph, ())
    return [
        op
        for op in graph.get_operations()[built.model_ops_from :]
        if op not in needed
        and op.name not in noted
        and not (op.inputs and _handle_op(op.inputs[0]).name in noted)
        and _has_an_effect(op)
    ]


def _handle_op(tensor):
    while tensor.op.type == "Identity" and tensor.op.inputs:
        tensor = tensor.op.inputs[0]
    return tensor.op


_noting = threading.local()
# {graph: the names of the ops a Keras optimizer's apply_gradients made in it, and of the
# handles of Keras metrics' accumulators made in it}
_NOTED = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def noting():
    """Within it, building a graph notes what `effects` leaves out: the ops a non-legacy
    Keras optimizer's `apply_gradients` makes, and Keras metrics' accumulators (ON_READ
    variables summed, `variables.is_metric_variable`)."""
    before = getattr(_noting, "on", False)
    _noting.on = True
    try:
        with tf.variable_creator_scope(_noting_accumulators):
            yield
    finally:
        _noting.on = before


def _noting_accumulators(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    graph = tf.compat.v1.get_default_graph()
    if (
        kwargs.get("synchronization") == tf.VariableSynchronization.ON_READ
        and kwargs.get("aggregation") != tf.VariableAggregation.MEAN
        and not (tf.executing_eagerly() or graph.building_function)
    ):
        for part in variables_lib.parts(variable):
            handle = getattr(part, "handle", None)
            if handle is not None:
                _NOTED.setdefault(graph, set()).add(_handle_op(handle).name)
    return variable


def _noted(apply_gradients):
    @functools.wraps(apply_gradients)
    def noted(self, *args, **kwargs):
        graph = tf.compat.v1.get_default_graph()
        if not getattr(_noting, "on", False) or tf.executing_eagerly() or graph.building_function:
            return apply_gradients(self, *args, **kwargs)
        made_before = len(graph.get_operations())
        try:
            return apply_gradients(self, *args, **kwargs)
        finally:
            _NOTED.setdefault(graph, set()).update(
                op.name for op in graph.get_operations()[made_before:]
            )

    return noted


tf_keras.optimizers.Optimizer.apply_gradients = _noted(
    tf_keras.optimizers.Optimizer.apply_gradients
)


def _as_op(fetch):
    if fetch is None:
        return None
    if isinstance(fetch, tf.Operation):
        return fetch
    return getattr(fetch, "op", None)


def _set_up(graph):
    """What 2.15's session ran besides the steps: the variables' and resources'
    initializers, the tables', the Scaffold's init ops, the summaries (on summary steps)."""
    ops = []
    for key in (_KEYS.GLOBAL_VARIABLES, _KEYS.LOCAL_VARIABLES, _KEYS.METRIC_VARIABLES):
        for variable in graph.get_collection(key):  # (a distributed variable's: its parts')
            parts = variables_lib.parts(variable)
            ops += [getattr(part, "initializer", None) for part in (variable, *parts)]
    for key in (_KEYS.RESOURCES, _KEYS.LOCAL_RESOURCES):
        ops += [getattr(r, "initializer", None) for r in graph.get_collection(key)]
    for key in (
        _KEYS.TABLE_INITIALIZERS,
        _KEYS.INIT_OP,
        _KEYS.LOCAL_INIT_OP,
        _KEYS.READY_OP,
        _KEYS.SUMMARIES,
        _KEYS.SUMMARY_OP,
    ):
        ops += [_as_op(item) for item in graph.get_collection(key)]
    return [op for op in ops if isinstance(op, tf.Operation)]


def _has_an_effect(op):
    if any(t.dtype._is_ref_dtype for t in op.inputs):  # a TF1 variable's assign or apply
        return op.type not in _REF_READS
    if not op._is_stateful or op.type in _WITHOUT_EFFECT:
        return False
    # (Nor does making a variable's or a table's handle.)
    return not (not op.inputs and op.outputs and all(t.dtype == tf.resource for t in op.outputs))


def described(ops):
    """`ops` named for a log line: `type name`, the first few."""
    shown = ", ".join(f"{op.type} {op.name}" for op in ops[:5])
    return shown + (f" and {len(ops) - 5} more" if len(ops) > 5 else "")
