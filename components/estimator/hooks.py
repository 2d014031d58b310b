"""A small TF2 hook protocol for `Estimator.train`, `evaluate` and `predict`, and the
hooks users relied on.

A hook sees the run at four points: `begin()`, `before_step(context)`,
`after_step(context, logs)` with the step's logs, and `end(logs)`.  Any hook
may call `context.request_stop()`.  The logs are `loss` and `global_step` in
training, the running metric values and `global_step` in evaluation, and the
batch's `predictions` and `global_step` in prediction.  By default a hook sees
every training step (the Estimator then runs one step per `tf.function`
call); a hook that needs less sets `max_steps_per_call`.
"""

import logging
import math
import time

import numpy as np
import tensorflow as tf

from components.estimator import summaries, tf_logging
from components.estimator.ignored import warn_once

log = logging.getLogger(__name__)


class StepContext:
    """What a hook may read and ask for between steps."""

    def __init__(self, estimator, global_step):
        self.estimator = estimator
        self.global_step = global_step
        self.stop_requested = False

    def request_stop(self):
        self.stop_requested = True


class Hook:
    """Base class: every method is optional.

    `max_steps_per_call` bounds how many steps run between `after_step`
    calls (their logs are those of the last step); None means any number.
    """

    max_steps_per_call = 1

    def begin(self):
        pass

    def before_step(self, context):
        pass

    def after_step(self, context, logs):
        pass

    def end(self, logs):
        pass


def is_hook(value):
    """Whether `value` is a hook the Estimator runs: TF1's SessionRunHook or this kit's."""
    return isinstance(value, (tf.compat.v1.train.SessionRunHook, Hook))


# TF1's hook protocol, as tf.estimator exported it: such hooks run the Estimator in
# a graph with a session (graph_mode), where this kit's own hooks run too.
SessionRunHook = tf.compat.v1.train.SessionRunHook
SessionRunArgs = tf.compat.v1.train.SessionRunArgs
SessionRunContext = tf.compat.v1.train.SessionRunContext
SessionRunValues = tf.compat.v1.train.SessionRunValues
CheckpointSaverHook = tf.compat.v1.train.CheckpointSaverHook
SummarySaverHook = tf.compat.v1.train.SummarySaverHook
ProfilerHook = tf.compat.v1.train.ProfilerHook
FeedFnHook = tf.compat.v1.train.FeedFnHook
FinalOpsHook = tf.compat.v1.train.FinalOpsHook
GlobalStepWaiterHook = tf.compat.v1.train.GlobalStepWaiterHook
SecondOrStepTimer = tf.compat.v1.train.SecondOrStepTimer
# Called as tf.estimator called them, `before_save(session, global_step_value)` and so
# on; on the TF2 path `session` is None.
CheckpointSaverListener = tf.compat.v1.train.CheckpointSaverListener
NanLossDuringTrainingError = tf.compat.v1.train.NanLossDuringTrainingError


# 2.15's refusal of saving listeners without a checkpoint saver (both paths).
NO_SAVER_FOR_LISTENERS = (
    "There should be a CheckpointSaverHook to use saving_listeners. Please set one of the "
    "RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs."
)


def check_listeners(listeners, refusal):
    """A TypeError, `refusal` and the culprit, for a saving listener that is not a
    CheckpointSaverListener (2.15 refused it before training; duck types too)."""
    for listener in listeners or ():
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError(f"{refusal}, given: {listener!r}")


class HookRunner:
    """Takes hooks through one run: `begin` now, then each step, then `end`."""

    def __init__(self, estimator, hooks, global_step):
        self.hooks = list(hooks)
        for hook in self.hooks:
            hook.begin()
        self.context = StepContext(estimator, global_step)

    def before_step(self, global_step):
        """Returns True when a hook asked to stop."""
        self.context.global_step = global_step
        for hook in self.hooks:
            hook.before_step(self.context)
        return self.context.stop_requested

    def after_step(self, logs):
        """Returns True when a hook asked to stop."""
        for hook in self.hooks:
            hook.after_step(self.context, logs)
        return self.context.stop_requested

    def end(self, logs):
        for hook in self.hooks:
            hook.end(logs)


class _AlsoTF1(Hook):
    """A hook of this kit that is also TF1's hook of its name, as tf.estimator 2.15's
    were TF1's own classes: `isinstance(hook, tf.compat.v1.train.SessionRunHook)` holds,
    and in a TF1 `MonitoredSession` (TF1 code passing it to `MonitoredTrainingSession`,
    as tf_upgrade_v2 leaves `tf.estimator.StopAtStepHook` there) it runs as that hook:
    `begin()` in a graph, then `end(session)`. The Estimator's TF2 path runs it by this
    kit's protocol (`begin()` eagerly, then `end(logs)`, the logs given as `session`)."""

    _tf1_hook = tf.compat.v1.train.SessionRunHook  # (each class's TF1 twin)
    _in_session = False

    def begin(self):
        self._in_session = not tf.executing_eagerly()
        if self._in_session:
            self._tf1_hook.begin(self)
        else:
            self._begin_steps()

    def end(self, session):
        # (`session` as 2.15's, TF1's, named it, for a subclass's `super().end(session=...)`;
        # on the TF2 path it is the last step's logs.)
        if self._in_session:
            self._tf1_hook.end(self, session)
        else:
            self._end_steps(session)

    def _begin_steps(self):
        pass

    def _end_steps(self, logs):
        pass


class StopAtStepHook(_AlsoTF1, tf.compat.v1.train.StopAtStepHook):
    """Stops after `num_steps` more steps, or at global step `last_step` (refusing
    neither or both in 2.15's words, TF1's)."""

    _tf1_hook = tf.compat.v1.train.StopAtStepHook

    def before_step(self, context):
        # (Never a stop before a step: 2.15's hook asked after a step's run only, so a
        # call starting at or past `last_step` trained, or evaluated, one step.)
        if self._last_step is None:
            self._last_step = context.global_step + self._num_steps

    def after_step(self, context, logs):
        if logs["global_step"] >= self._last_step:
            context.request_stop()

    def session_run_hook(self, built, tensors):
        if needs_a_session(self):  # (2.15's subclass, itself in the session)
            return self
        return tf.compat.v1.train.StopAtStepHook(self._num_steps, self._last_step)


class NanTensorHook(_AlsoTF1, tf.compat.v1.train.NanTensorHook):
    """Stops (or fails) the run when the training loss (`loss` in the step logs) becomes NaN.

    Only that loss is checked: a `loss_tensor` other than the `model_fn`'s loss
    is ignored with a warning (in a TF1 `MonitoredSession`, `loss_tensor` is checked).
    """

    _tf1_hook = tf.compat.v1.train.NanTensorHook

    def __init__(self, loss_tensor=None, fail_on_nan_loss=True):
        tf.compat.v1.train.NanTensorHook.__init__(self, loss_tensor, fail_on_nan_loss)
        self._checked_tensor = loss_tensor is None

    def after_step(self, context, logs):
        if not self._checked_tensor:
            self._checked_tensor = True
            spec = context.estimator.traced_train_spec()
            if spec is None or self._loss_tensor is not spec.loss:
                warn_once(
                    "NanTensorHook.loss_tensor",
                    "NanTensorHook: loss_tensor is ignored: it is not the model_fn's "
                    "loss, and the hook checks that loss (`loss` in the step logs).",
                )
        if math.isnan(logs["loss"]):
            message = f"Model diverged with loss = NaN at step {logs['global_step']}."
            if self._fail_on_nan_loss:
                raise NanLossDuringTrainingError(message)
            log.error(message)
            context.request_stop()

    def session_run_hook(self, built, tensors):
        loss = self._loss_tensor
        if not (tf.is_tensor(loss) and getattr(loss, "graph", None) is built.graph):
            loss = tensors["loss"]
        return tf.compat.v1.train.NanTensorHook(loss, self._fail_on_nan_loss)


_V1LoggingTensorHook = tf.compat.v1.train.LoggingTensorHook
# What a subclass written for tf.estimator 2.15's LoggingTensorHook (TF1's) overrides.
_TF1_LOGGING_METHODS = ("after_create_session", "before_run", "after_run", "_log_tensors", "end")


class LoggingTensorHook(_AlsoTF1, _V1LoggingTensorHook):
    """Logs named values every `every_n_iter` steps or `every_n_secs` seconds, and/or
    `at_end`, in tf.estimator 2.15's lines: `tag = value` joined by commas (a dict's
    keys are the tags, in sorted order; a list's names in its order), NumPy's
    scientific notation suppressed, the seconds since the last line appended, or
    `formatter({tag: value})` instead.

    tf.estimator 2.15's LoggingTensorHook was TF1's: a subclass overriding its session
    methods (`before_run`, `after_run`, `after_create_session`, `_log_tensors`) and
    reading its state (`_current_tensors`, `_should_trigger`, `_iter_count`, `_timer`,
    `_tag_order`, `_log_at_end`), as official/r1's LoggingMetricHook does, runs in a
    graph with a session as TF1's hook, its own methods called (see `speaks_tf1`)."""

    _tf1 = False  # True once a subclass speaking TF1's protocol runs as TF1's hook
    _tf1_hook = _V1LoggingTensorHook

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        # (TF1's state and refusals, in its words, as 2.15's; its timer times both paths)
        _V1LoggingTensorHook.__init__(self, tensors, every_n_iter, every_n_secs, at_end, formatter)
        if isinstance(tensors, dict):
            self._tags, self._names = sorted(tensors), dict(tensors)
        else:
            self._tags = list(tensors)
            self._names = {tag: tag for tag in self._tags}
        self._args = (every_n_iter, every_n_secs, at_end, formatter)
        self._at_end = at_end
        self._iter_count = 0
        self.logged = []

    @classmethod
    def _speaks_tf1(cls):
        return _overrides(cls, LoggingTensorHook, _TF1_LOGGING_METHODS)

    def session_run_hook(self, built, tensors):
        """TF1's LoggingTensorHook: a name is a log's (`loss`, `global_step`) or a graph
        tensor's, as tf.estimator's hook took it. A subclass speaking TF1's protocol is
        made that hook itself: TF1's state set on it, its own methods run."""
        named = {tag: tensors.get(name, name) for tag, name in self._names.items()}
        every_n_iter, every_n_secs, at_end, formatter = self._args
        if type(self)._speaks_tf1():
            _V1LoggingTensorHook.__init__(
                self, named, every_n_iter, every_n_secs, at_end=at_end, formatter=formatter
            )
            self._tag_order, self._tf1 = list(self._tags), True
            return _SessionRunView(self)
        hook = _V1LoggingTensorHook(
            named, every_n_iter, every_n_secs, at_end=at_end, formatter=formatter
        )
        hook._tag_order = list(self._tags)  # a list's order, as its own hook keeps it
        return hook

    def begin(self):
        if self._tf1:  # (TF1's begin for a subclass's super() call in a session)
            self._in_session = True
            _V1LoggingTensorHook.begin(self)
        else:
            super().begin()

    def _values(self, logs):
        missing = [name for name in self._names.values() if name not in logs]
        if missing:
            raise KeyError(f"LoggingTensorHook: {missing} not in step logs {sorted(logs)}.")
        return {tag: logs[name] for tag, name in self._names.items()}

    def _log(self, values):
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        self.logged.append(values)
        if self._formatter:
            log.info(self._formatter(values))
            return
        with np.printoptions(suppress=True), tf_logging.printed_as_numpy_1():
            line = ", ".join(f"{tag} = {np.asarray(values[tag])}" for tag in self._tags)
        if elapsed is None:
            log.info("%s", line)
        else:
            log.info("%s (%.3f sec)", line, elapsed)

    def after_step(self, context, logs):
        if self._timer.should_trigger_for_step(self._iter_count):
            self._log(self._values(logs))
        self._iter_count += 1

    def _end_steps(self, logs):
        if self._at_end:
            self._log(self._values(logs))


# The logs a LoggingTensorHook names on the TF2 path, every mode's.
_STEP_LOGS = ("loss", "global_step")


def speaks_tf1(hook):
    """Whether `hook` is a LoggingTensorHook that runs in a graph with a session, as
    tf.estimator 2.15's (TF1's) ran: a subclass written for 2.15's, or one given what only
    a graph has, a model_fn's tensor (`{"loss": loss}` in the spec's training_hooks) or a
    graph tensor's name (`"softmax_tensor"`, `"my_loss:0"`), not a log's name."""
    if not isinstance(hook, LoggingTensorHook):
        return False
    named = hook._names.values()
    return type(hook)._speaks_tf1() or any(
        not isinstance(name, str) or name not in _STEP_LOGS for name in named
    )


class _SessionRunView(tf.compat.v1.train.SessionRunHook):
    """A LoggingTensorHook subclass speaking TF1's protocol, in a session: its methods."""

    def __init__(self, hook):
        self._hook = hook

    def begin(self):
        self._hook.begin()

    def after_create_session(self, session, coord):
        self._hook.after_create_session(session, coord)

    def before_run(self, run_context):
        return self._hook.before_run(run_context)

    def after_run(self, run_context, run_values):
        self._hook.after_run(run_context, run_values)

    def end(self, session):
        self._hook.end(session)


# What a subclass written for tf.estimator 2.15's StepCounterHook (TF1's) overrides: in a
# graph-mode run it runs itself, as TF1's hook.
_TF1_STEP_COUNTER_METHODS = (
    "begin",
    "end",
    "after_create_session",
    "before_run",
    "after_run",
    "_log_and_record",
)


class StepCounterHook(_AlsoTF1, tf.compat.v1.train.StepCounterHook):
    """Logs `global_step/sec` every `every_n_steps` steps or `every_n_secs` seconds.

    The rate is also written as a `global_step/sec` summary to `summary_writer`
    (a `tf.summary` writer) or else to a writer on `output_dir`.

    As tf.estimator 2.15's (TF1's), each rate goes through
    `_log_and_record(elapsed_steps, elapsed_time, global_step)`, under the tag
    `_summary_tag` (set in `begin()`), and `_last_global_step` is the step before the
    last one: a subclass overriding them (an examples-per-second hook) runs as there.
    """

    _tf1_hook = tf.compat.v1.train.StepCounterHook

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        tf.compat.v1.train.StepCounterHook.__init__(
            self, every_n_steps, every_n_secs, output_dir, summary_writer
        )
        self._every_n_steps = every_n_steps
        self._every_n_secs = every_n_secs
        self._writer = None
        self.rates = []

    _last = None  # (step, time) of the last rate (or of the call's first step)
    _seen = None  # the last step seen

    @property
    def max_steps_per_call(self):
        """Steps to the next rate, as 2.15's timer took them: the call's first step, then
        every `every_n_steps` from it (any number with `every_n_secs`)."""
        if not self._every_n_steps:
            return None
        if self._last is None or self._seen is None:
            return 1
        return max(1, self._last[0] + self._every_n_steps - self._seen)

    def session_run_hook(self, built, tensors):
        if self._summary_writer is not None:
            warn_once(
                "StepCounterHook.summary_writer",
                "StepCounterHook: in a graph-mode run summary_writer (a tf.summary writer) "
                "is not used; the rate goes to output_dir, else model_dir.",
            )
        output_dir = self._output_dir or built.estimator.model_dir
        if _overrides(type(self), StepCounterHook, _TF1_STEP_COUNTER_METHODS):
            # (2.15's subclass, itself in the session: TF1's state for this run)
            tf.compat.v1.train.StepCounterHook.__init__(
                self, self._every_n_steps, self._every_n_secs, output_dir
            )
            return self
        return tf.compat.v1.train.StepCounterHook(
            self._every_n_steps, self._every_n_secs, output_dir=output_dir
        )

    def _begin_steps(self):
        self._last = self._seen = self._last_global_step = None
        self._summary_tag = "global_step/sec"  # (2.15's: the global step's name + /sec)
        self._writer = self._summary_writer
        if self._writer is None and self._output_dir:
            self._writer = summaries.cached_file_writer(self._output_dir)

    def after_step(self, context, logs):
        step, now = logs["global_step"], time.time()
        self._seen, self._last_global_step = step, step - 1  # (2.15's: read before the step)
        if self._last is None:
            self._last = (step, now)
            return
        last_step, last_time = self._last
        due = (
            step - last_step >= self._every_n_steps
            if self._every_n_steps
            else now - last_time >= self._every_n_secs
        )
        if due and step > last_step and now > last_time:
            self._log_and_record(step - last_step, now - last_time, step)
            self._last = (step, now)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        if self._in_session:
            tf.compat.v1.train.StepCounterHook._log_and_record(
                self, elapsed_steps, elapsed_time, global_step
            )
            return
        rate = elapsed_steps / elapsed_time
        self.rates.append(rate)
        log.info("%s: %g", self._summary_tag, rate)
        if self._writer is not None:
            summaries.write_scalars(self._writer, {self._summary_tag: rate}, global_step)

    def _end_steps(self, logs):
        if self._writer is not None:  # (a user's, or FileWriterCache's: kept open)
            self._writer.flush()


# Methods only a session calls: a StepCounterHook subclass overriding one needs a session.
_SESSION_METHODS = ("after_create_session", "before_run", "after_run")


def needs_a_session(hook):
    """Whether `hook` is a subclass of this kit's StepCounterHook, StopAtStepHook (or
    InMemoryEvaluatorHook) written for tf.estimator 2.15's (TF1's) that overrides a method
    only a session calls
    (`after_run`, timing its own count with `_timer`, as tensornets' evaluation hook does;
    or, but for StepCounterHook's, `end(session)`): it runs in a graph with a session, as
    itself, as there."""
    if isinstance(hook, StepCounterHook):
        methods, base = _SESSION_METHODS, StepCounterHook
    elif isinstance(hook, StopAtStepHook):
        methods, base = (*_SESSION_METHODS, "end"), StopAtStepHook
    elif getattr(hook, "_overridden_in_a_session", None) is not None:
        # (another class of the kit's that is TF1's hook too: InMemoryEvaluatorHook)
        methods, base = (*_SESSION_METHODS, "end"), hook._overridden_in_a_session
    else:
        return False
    return _overrides(type(hook), base, methods)


def _overrides(subclass, base, methods):
    """Whether `subclass` of `base` defines any of `methods` anew."""
    return any(getattr(subclass, name) is not getattr(base, name) for name in methods)


class _SessionAdapter(tf.compat.v1.train.SessionRunHook):
    """Runs one of this kit's hooks in a session: its logs are fetched with every step."""

    def __init__(self, hook, estimator, tensors):
        self._hook = hook
        self._estimator = estimator
        self._fetches = tensors
        self._last = {}

    def begin(self):
        self._hook.begin()
        self._context = StepContext(self._estimator, None)

    def after_create_session(self, session, coord):
        self._context.global_step = int(session.run(self._fetches["global_step"]))

    def before_run(self, run_context):
        self._hook.before_step(self._context)
        if self._context.stop_requested:
            run_context.request_stop()
        return tf.compat.v1.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        logs = {
            k: v if isinstance(v, dict) else (v.item() if getattr(v, "ndim", 1) == 0 else v)
            for k, v in run_values.results.items()
        }
        # The step the run ended at (a fetch in the run itself may read it before the
        # train op moved it), as this protocol's logs give it.
        logs["global_step"] = int(run_context.session.run(self._fetches["global_step"]))
        self._last = logs
        self._context.global_step = int(logs["global_step"])
        self._hook.after_step(self._context, logs)
        if self._context.stop_requested:
            run_context.request_stop()

    def end(self, session):
        self._hook.end(self._last)


def as_session_run_hook(hook, built, tensors):
    """`hook` (this kit's protocol) for a graph-mode run; its logs (`loss`,
    `global_step`, ...) are fetched from `tensors`, by log name."""
    convert = getattr(hook, "session_run_hook", None)
    if convert is not None:
        return convert(built, tensors)
    return _SessionAdapter(hook, built.estimator, tensors)
