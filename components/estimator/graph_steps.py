"""The graph-mode path's training steps that no hook needs, gathered and run past the hooks.

tf.estimator 2.15 ran one `Session.run` per step, calling every hook's
`before_run`/`after_run` around it; on a small model the call and the hooks
cost about as much as the step's kernels.  Here the steps no hook needs are
gathered and run without them, one lean session call a step (a callable of the
train op and the loss, made once), on whichever executor the `session_config` names
(see `asks_single_threaded`).  With `LOOP_IN_GRAPH`, the train step's ops are instead
copied into a `tf.while_loop` that runs the gathered steps in one call.  The hooks
still see every step they saw:

* TensorFlow's own hooks that fetch the global step on every step only to see
  whether their step or time has come (`StopAtStepHook`, `CheckpointSaverHook`,
  `SummarySaverHook`, `StepCounterHook`, `LoggingTensorHook` counting
  iterations, the Estimator's `NanTensorHook` on the loss) are asked through
  their timers which step they act on; that step runs alone, as before.  A
  timer in seconds is checked between calls of at most `MAX_STEPS_PER_CALL` steps.
* Any other hook is called for every step, in order: a step for which its
  `before_run` returns fetches, feeds or options runs alone with them.  Steps it
  asks nothing of gather into the next loop call; its `after_run` then comes
  before the step runs, and any use of `run_context.session` first runs the
  steps gathered so far, so that what it reads is what 2.15 showed it.

Steps are only gathered where it changes nothing else: one machine, an input
from a `tf.data.Dataset` that repeats forever, resource variables, no TF1
control flow or placeholders among the step's ops, a global step that the step
moves by exactly one, a train() call of at least `MIN_STEPS_FOR_A_LOOP` steps.
Otherwise (and with `ENABLED` false) every step runs alone.
"""

import logging

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2, graph_pb2
from tensorflow.python.training import basic_session_run_hooks as basic_hooks

log = logging.getLogger(__name__)

_V1 = tf.compat.v1
ENABLED = True
MAX_STEPS_PER_CALL = 100
# Shorter train() calls run every step alone (gathering costs a compile of the step's
# own callable, and with `LOOP_IN_GRAPH` a copy of the step as long as building the model).
MIN_STEPS_FOR_A_LOOP = 1000
# The gathered steps in a TF1 while loop (`build_step_loop`) rather than session calls:
# off. On TF 2.21 the loop cost more than the calls it saves: its copy of the step
# (0.2 s of Python) and its compile (0.5 s) on every call, and more CPU a step in the
# loop's frame than a lean call a step (docs/benchmarks/2026-12-07-tf1-call-cost.md).
LOOP_IN_GRAPH = False
_V1_CONTROL_FLOW = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}
# A session_config asking for this executor (`experimental.executor_type`) gets the
# gathered steps as session calls on it, never in a TF1 while loop (which that executor
# refuses): a step's ~900 small kernels cost it less than the default executor's
# hand-offs between threads. It is not the default: it runs unordered
# stateful ops in another order than the default executor (TF1's mini-batch k-means
# read its centers before they were set), and code written for 2.15 relies on that order.
_SINGLE_THREADED_EXECUTOR = "SINGLE_THREADED_EXECUTOR"


# ------------------------------------------------------------ the loop op
def closure(fetch_ops):
    """The ops `fetch_ops` need, inputs before the ops that read them."""
    ordered, seen, stack = [], set(), [(op, False) for op in fetch_ops]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            ordered.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        stack.append((op, True))
        stack.extend((t.op, False) for t in op.inputs)
        stack.extend((c, False) for c in op.control_inputs)
    return ordered


def _creates_a_handle(op):
    """A variable's, iterator's or table's handle: made once, shared by every step."""
    return (
        not op.inputs
        and op.outputs
        and op.type != "Placeholder"
        and all(t.dtype == tf.resource for t in op.outputs)
    )


def _why_not_loopable(ops, global_step):
    """Why these ops cannot be copied into a loop, or None."""
    for op in ops:
        if op.type in _V1_CONTROL_FLOW or op._get_control_flow_context() is not None:
            return f"TF1 control flow ({op.name})"
        if op.type.startswith("Placeholder"):
            return f"a placeholder ({op.name})"
        if any(t.dtype._is_ref_dtype for t in (*op.inputs, *op.outputs)):
            return f"a reference variable ({op.name})"
    handle = global_step.handle
    writes = [
        op for op in ops if op.type != "ReadVariableOp" and any(t is handle for t in op.inputs)
    ]
    steps_by_one = (
        len(writes) == 1
        and writes[0].type == "AssignAddVariableOp"
        and tf.get_static_value(writes[0].inputs[1]) == 1
    )
    if not steps_by_one:
        return "a train op that does not add exactly 1 to the global step"
    return None


_FRAME = "steps_per_call_loop"
_CONTROL = "steps_per_call_loop_control/"  # the loop's own nodes (graph names have no "_")


def _node(graph_def, name, op, inputs=(), **attrs):
    """Adds a NodeDef to `graph_def`; attrs are AttrValue keyword arguments by name."""
    node = graph_def.node.add(name=name, op=op, input=list(inputs))
    for key, value in attrs.items():
        node.attr[key].CopyFrom(value)
    return name


def _attr(**kwargs):
    return attr_value_pb2.AttrValue(**kwargs)


class _LoopGraphDef:
    """The loop as a GraphDef, imported in one call (creating its ~2,000 ops one by one
    in Python took longer than building the model).  A TF1 while loop's frame, as
    `tf.compat.v1.while_loop` lays it out: Enter, Merge, LoopCond, Switch, the body,
    NextIteration, Exit; the step's ops are the body."""

    def __init__(self):
        self.graph_def = graph_pb2.GraphDef()
        self.input_map = {}  # placeholder in graph_def -> tensor of the graph
        self._entered = {}  # tensor name -> its Enter node

    def enter(self, tensor, constant=True, dtype=None):
        """`tensor` (of the graph, or the name of a node here, of `dtype`) inside the
        loop's frame."""
        key = tensor if isinstance(tensor, str) else tensor.name
        if key in self._entered:
            return self._entered[key]
        source = key
        if not isinstance(tensor, str):
            source = _CONTROL + f"outside_{len(self.input_map)}"
            _node(
                self.graph_def,
                source,
                "Placeholder",
                dtype=_attr(type=tensor.dtype.as_datatype_enum),
            )
            self.input_map[source + ":0"] = tensor
            dtype = tensor.dtype
        enter = _node(
            self.graph_def,
            _CONTROL + f"enter_{len(self._entered)}",
            "Enter",
            [source],
            T=_attr(type=dtype.as_datatype_enum),
            frame_name=_attr(s=_FRAME.encode()),
            is_constant=_attr(b=constant),
            parallel_iterations=_attr(i=1),
        )
        self._entered[key] = enter
        return enter

    def constant(self, name, value, dtype):
        proto = tf.make_tensor_proto(value, dtype=dtype)
        return _node(
            self.graph_def,
            _CONTROL + name,
            "Const",
            dtype=_attr(type=dtype.as_datatype_enum),
            value=_attr(tensor=proto),
        )


def _tensor_input(tensor, varying, loop, pivot):
    if tensor.op.name in varying:
        return (
            tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"
        )
    return loop.enter(tensor)


def _copy_step(loop, ordered, varying, pivot):
    """The varying ops as nodes of the loop's body; the others entered as constants."""
    for op in ordered:
        if op.name not in varying:
            continue
        node = loop.graph_def.node.add()
        node.CopyFrom(op.node_def)
        node.ClearField("input")
        node.attr.pop("_class", None)
        inside = False
        for tensor in op.inputs:
            node.input.append(_tensor_input(tensor, varying, loop, pivot))
            inside = inside or tensor.op.name in varying
        for control in op.control_inputs:
            if control.name in varying:
                node.input.append("^" + control.name)
                inside = True
        if not inside:  # only loop invariants in: run it once per step all the same
            node.input.append("^" + pivot)


def why_not_stepped(train_op, loss, global_step):
    """Why the steps of this train op cannot be gathered into loop calls, or None."""
    train_op = getattr(train_op, "op", train_op)
    loss = tf.convert_to_tensor(loss)
    why = _why_not_loopable(closure([train_op, loss.op]), global_step)
    if why is None and (not loss.dtype.is_floating or loss.shape.rank != 0):
        why = f"a loss of {loss.dtype.name} {loss.shape}, not a float scalar"
    return why


def asks_single_threaded(session_config):
    """Whether `session_config` asks for TensorFlow's single-threaded executor."""
    return (
        session_config is not None
        and session_config.experimental.executor_type == _SINGLE_THREADED_EXECUTOR
    )


def build_step_loop(train_op, loss):
    """`(steps, (steps_run, last_loss))` in the current graph: a loop that runs up to
    `steps` (an int32 placeholder) training steps, stopping after one whose loss is not
    finite. For a train op `why_not_stepped` found nothing against."""
    train_op = getattr(train_op, "op", train_op)
    loss = tf.convert_to_tensor(loss)
    ordered = closure([train_op, loss.op])
    varying = set()
    for op in ordered:
        depends = any(t.op.name in varying for t in op.inputs) or any(
            c.name in varying for c in op.control_inputs
        )
        if depends or (op._is_stateful and not _creates_a_handle(op)):
            varying.add(op.name)
    steps = _V1.placeholder(tf.int32, [], name="steps_per_call")
    loop = _LoopGraphDef()
    exits = _loop_frame(loop, steps, loss, ordered, varying, train_op)
    done, last_loss = tf.graph_util.import_graph_def(
        loop.graph_def, input_map=loop.input_map, return_elements=exits, name=_FRAME
    )
    return steps, (done, last_loss)


def _loop_frame(loop, steps, loss, ordered, varying, train_op):
    """Lays the loop's control nodes and body into `loop`; returns its exits' names."""
    c, gd, int32 = _CONTROL, loop.graph_def, tf.int32
    entered = {
        "done": loop.enter(loop.constant("zero", 0, int32), constant=False, dtype=int32),
        "loss": loop.enter(
            loop.constant("no_loss", 0, loss.dtype), constant=False, dtype=loss.dtype
        ),
    }
    dtypes = {"done": int32, "loss": loss.dtype}
    merged, switched = {}, {}
    for key, dtype in dtypes.items():
        merged[key] = _node(
            gd,
            c + f"merge_{key}",
            "Merge",
            [entered[key], c + f"next_{key}"],
            T=_attr(type=dtype.as_datatype_enum),
            N=_attr(i=2),
        )
    more = _node(
        gd,
        c + "more",
        "Less",
        [merged["done"], loop.enter(steps)],
        T=_attr(type=int32.as_datatype_enum),
    )
    finite = _node(
        gd, c + "finite", "IsFinite", [merged["loss"]], T=_attr(type=loss.dtype.as_datatype_enum)
    )
    both = _node(gd, c + "go_on", "LogicalAnd", [more, finite])
    cond = _node(gd, c + "loop_cond", "LoopCond", [both])
    exits = []
    for key, dtype in dtypes.items():
        t = _attr(type=dtype.as_datatype_enum)
        switched[key] = _node(gd, c + f"switch_{key}", "Switch", [merged[key], cond], T=t)
        exits.append(_node(gd, c + f"exit_{key}", "Exit", [switched[key]], T=t) + ":0")
    pivot = _node(
        gd, c + "pivot", "Identity", [switched["done"] + ":1"], T=_attr(type=int32.as_datatype_enum)
    )
    _copy_step(loop, ordered, varying, pivot)
    one = _node(
        gd,
        c + "one",
        "Const",
        ["^" + pivot],
        dtype=_attr(type=int32.as_datatype_enum),
        value=_attr(tensor=tf.make_tensor_proto(1, dtype=int32)),
    )
    after = "^" + train_op.name
    body = {
        "done": _node(
            gd, c + "add_one", "AddV2", [pivot, one, after], T=_attr(type=int32.as_datatype_enum)
        ),
        "loss": _node(
            gd,
            c + "step_loss",
            "Identity",
            [_tensor_input(loss, varying, loop, pivot), after],
            T=_attr(type=loss.dtype.as_datatype_enum),
        ),
    }
    for key, dtype in dtypes.items():
        _node(
            gd,
            c + f"next_{key}",
            "NextIteration",
            [body[key]],
            T=_attr(type=dtype.as_datatype_enum),
        )
    return exits


# ------------------------------------------------------- the hooks' schedules
def _never_runs_per_step(hook):
    base = _V1.train.SessionRunHook
    kind = type(hook)
    return kind.before_run is base.before_run and kind.after_run is base.after_run


_SCHEDULED = (
    basic_hooks.StopAtStepHook,
    basic_hooks.CheckpointSaverHook,
    basic_hooks.StepCounterHook,
    basic_hooks.SummarySaverHook,
    basic_hooks.LoggingTensorHook,
)


def _kind(hook):
    """The hook's class, or the stock hook whose steps it acts on (the Estimator's own
    CheckpointSaverHook says so in `graph_steps_schedule_as`)."""
    return getattr(type(hook), "graph_steps_schedule_as", type(hook))


def _is_scheduled(hook, loss):
    """One of TensorFlow's own hooks (not a subclass) whose steps `_scheduled_need` knows."""
    kind = _kind(hook)
    return kind in _SCHEDULED or (kind is basic_hooks.NanTensorHook and hook._loss_tensor is loss)


def _scheduled_need(hook, step, ahead, loss):
    """For TensorFlow's own hooks whose per-step fetch only watches a timer: whether the
    step from global step `step` (`ahead` steps after the next) is one it acts on.
    None for any other hook."""
    kind = _kind(hook)
    if kind is basic_hooks.StopAtStepHook:
        return hook._last_step is None or step + 1 >= hook._last_step
    if kind in (basic_hooks.CheckpointSaverHook, basic_hooks.StepCounterHook):
        return hook._timer.should_trigger_for_step(step + 1)
    if kind is basic_hooks.SummarySaverHook:
        return hook._next_step is None or hook._timer.should_trigger_for_step(step + 1)
    if kind is basic_hooks.LoggingTensorHook:
        return hook._timer.should_trigger_for_step(hook._iter_count + ahead)
    if kind is basic_hooks.NanTensorHook and hook._loss_tensor is loss:
        return False  # the loop stops at a loss that is not finite; see _ran
    return None


def _catch_up(hook, steps_run, step):
    """What the skipped calls of a scheduled hook would have left in it."""
    kind = type(hook)
    if kind is basic_hooks.LoggingTensorHook:
        hook._iter_count += steps_run
    elif kind is basic_hooks.SummarySaverHook and hook._next_step is not None:
        hook._next_step = step + 1


def _asks(args):
    """Whether a `before_run` result asks anything of its step."""
    if args is None:
        return False
    fetches = args.fetches
    empty_fetches = fetches is None or (isinstance(fetches, (list, tuple, dict)) and not fetches)
    return not empty_fetches or bool(args.feed_dict) or args.options is not None


def _merged_options(merged, options):
    merged.trace_level = max(merged.trace_level, options.trace_level)
    if options.timeout_in_ms and (
        not merged.timeout_in_ms or options.timeout_in_ms < merged.timeout_in_ms
    ):
        merged.timeout_in_ms = options.timeout_in_ms
    merged.debug_options.MergeFrom(options.debug_options)
    merged.report_tensor_allocations_upon_oom |= options.report_tensor_allocations_upon_oom


def _steps_one_call_each(step):
    """A loop's stand-in of session calls: `count` steps -> (steps run, the last loss),
    stopping after a step whose loss is not finite."""

    def run(count):
        loss = None
        for done in range(1, count + 1):
            loss = step()[1]
            if not np.isfinite(loss):
                return done, loss
        return count, loss

    return run


class _CatchingUpSession:
    """`run_context.session` for the hooks of gathered steps: any use of it runs the
    gathered steps first, so the hook reads what it would have after them."""

    def __init__(self, stepped):
        self._stepped = stepped

    def __getattr__(self, name):
        self._stepped.run_gathered()
        return getattr(self._stepped.session, name)


class SteppedHooks(_V1.train.SessionRunHook):
    """A train() call's hooks as one `MonitoredSession` hook that can gather the steps
    none of them needs into loop calls (`run_until_needed`).  On a step run alone it
    calls them as `MonitoredSession` does: every `before_run` in order, the run with
    their fetches merged, every `after_run`."""

    def __init__(self, hooks, loop, step, global_step, input_cardinality, session_source):
        """`loop`: `build_step_loop`'s result, or None to run the gathered steps one
        session call each; `step`: (train op, loss)."""
        self._hooks = list(hooks)
        self._steps, self._loop_fetches = loop or (None, None)
        self._step_fetches = list(step)
        loss = step[1]
        self._loss, self._global_step = loss, global_step
        self._cardinality = input_cardinality
        self._session_source = session_source  # () -> the raw session
        self._scheduled = [h for h in self._hooks if _is_scheduled(h, loss)]
        self._called = [
            h for h in self._hooks if h not in self._scheduled and not _never_runs_per_step(h)
        ]
        self._gathered, self._asked, self._asked_context = 0, {}, None
        self.stop_requested, self.loop_calls, self.looped_steps = False, 0, 0
        self._loop_fn = self._step_read = None
        self._step_tensor = global_step.read_value()

    @property
    def session(self):
        return self._session_source()

    def begin(self):
        for hook in self._hooks:
            hook.begin()

    def after_create_session(self, session, coord):
        for hook in self._hooks:
            hook.after_create_session(session, coord)
        raw = self.session
        repeats = raw.run(self._cardinality) == tf.data.INFINITE_CARDINALITY
        if not repeats:
            self._loop_fn = None
        elif self._steps is None:
            self._loop_fn = _steps_one_call_each(raw.make_callable(self._step_fetches))
        else:
            self._loop_fn = raw.make_callable(self._loop_fetches, [self._steps])
        self._step_read = raw.make_callable(self._step_tensor)
        if not repeats:
            log.debug("One step per session call: the input does not repeat forever.")

    def end(self, session):
        self.run_gathered()
        for hook in self._hooks:
            hook.end(session)
        how = "session calls" if self._steps is not None else "runs of one session call a step"
        log.debug("Looped %d steps in %d %s.", self.looped_steps, self.loop_calls, how)

    # ----------------------------------------------------------- gathered steps
    def _needed_by_a_scheduled_hook(self, step, ahead):
        return any(_scheduled_need(h, step, ahead, self._loss) for h in self._scheduled)

    def run_until_needed(self):
        """Calls the hooks of the coming steps that no hook needs and runs those steps
        in loop calls, up to the first step a hook needs (its `before_run` answers kept
        for `MonitoredSession.run`) or a stop request."""
        if self._loop_fn is None:
            return
        step = int(self._step_read())
        original = _V1.train.SessionRunArgs([])
        while self._gathered < MAX_STEPS_PER_CALL and not self.stop_requested:
            ahead = self._gathered
            if self._needed_by_a_scheduled_hook(step + ahead, ahead):
                break
            context = _V1.train.SessionRunContext(original, _CatchingUpSession(self))
            answers = {id(h): h.before_run(context) for h in self._called}
            if any(_asks(a) for a in answers.values()):
                self._asked, self._asked_context = answers, context
                break
            for hook in self._called:
                nothing = _V1.train.SessionRunValues(None, _V1.RunOptions(), _V1.RunMetadata())
                hook.after_run(context, nothing)
            self._gathered += 1
            self.stop_requested = self.stop_requested or context.stop_requested
        self.run_gathered()

    def run_gathered(self):
        """Runs the steps whose hooks have been called, in one loop call."""
        count, self._gathered = self._gathered, 0
        if not count:
            return
        step = int(self._step_read())
        ran, loss = self._loop_fn(count)
        self.loop_calls += 1
        self.looped_steps += int(ran)
        for hook in self._scheduled:
            _catch_up(hook, int(ran), step + int(ran))
        if int(ran) < count or not np.isfinite(loss):
            self._ran_into_nan(loss)

    def _ran_into_nan(self, loss):
        """The loop stopped after a step whose loss is not finite: the Estimator's
        NanTensorHook sees it, as it saw every step's loss."""
        context = _V1.train.SessionRunContext(_V1.train.SessionRunArgs([]), self.session)
        for hook in self._scheduled:
            if type(hook) is basic_hooks.NanTensorHook:
                values = _V1.train.SessionRunValues(loss, _V1.RunOptions(), _V1.RunMetadata())
                hook.after_run(context, values)
        self.stop_requested = self.stop_requested or context.stop_requested

    # ------------------------------------------------------- a step run alone
    def before_run(self, run_context):
        if self._asked_context is not None and self._asked_context.stop_requested:
            run_context.request_stop()
        fetches, feeds, options, any_options = {}, {}, _V1.RunOptions(), False
        for index, hook in enumerate(self._hooks):
            if id(hook) in self._asked:
                args = self._asked[id(hook)]
            else:
                args = hook.before_run(run_context)
            if args is None:
                continue
            if args.fetches is not None:
                fetches[index] = args.fetches
            if args.feed_dict:
                clash = set(feeds) & set(args.feed_dict)
                if clash:
                    raise RuntimeError(
                        f"Same tensor is fed by two hooks: {sorted(map(str, clash))}"
                    )
                feeds.update(args.feed_dict)
            if args.options is not None:
                _merged_options(options, args.options)
                any_options = True
        return _V1.train.SessionRunArgs(fetches, feeds or None, options if any_options else None)

    def after_run(self, run_context, run_values):
        results = run_values.results or {}
        asked, context = self._asked, self._asked_context
        self._asked, self._asked_context = {}, None
        for index, hook in enumerate(self._hooks):
            hook_context = context if id(hook) in asked else run_context
            values = _V1.train.SessionRunValues(
                results.get(index), run_values.options, run_values.run_metadata
            )
            hook.after_run(hook_context, values)
        if context is not None and context.stop_requested:
            run_context.request_stop()
