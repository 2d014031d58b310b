"""Early stopping, as `tf.estimator.experimental.stop_if_*` and `make_*_hook`.

Each `stop_if_*` hook periodically reads the eval metrics the Estimator wrote
to `eval_dir` (through `tf.io.gfile`, so a `gs://` model_dir works too) and
asks training to stop when its condition holds; `make_early_stopping_hook`
asks a function of the user's instead.
"""

import collections
import logging
import operator
import os
import time

import tensorflow as tf

from components.estimator import checkpoints as ckpt_lib
from components.estimator import summaries
from components.estimator.hooks import Hook, StopAtStepHook
from components.estimator.model_fn import ModeKeys

log = logging.getLogger(__name__)
STOP_SIGNAL = ckpt_lib.STOP_SIGNAL


def _steps_to_check(last_step, every_steps, step):
    """Steps to run before a hook's next check, so that it falls on its step (as 2.15's
    timer checked after every step) rather than at a chunk's end; None: by time."""
    if every_steps is None:
        return None
    if last_step is None or step is None:
        return 1
    return max(1, last_step + every_steps - step)


def read_eval_metrics(eval_dir):
    """{global step: {metric: value}} of the eval events in `eval_dir`, steps in order
    (through `tf.io.gfile`, so a `gs://` model_dir works too): an `OrderedDict` of int
    steps to dicts of Python floats, as 2.15's `early_stopping.read_eval_metrics` gave."""
    files = tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))
    return collections.OrderedDict(sorted(summaries.read_scalars_by_step(files).items()))


def _eval_dir(estimator, eval_dir):
    return eval_dir or estimator.eval_dir()


def _threshold_hook(estimator, metric_name, threshold, higher, eval_dir, min_steps, every):
    """Stops once an evaluation from `min_steps` on is past `threshold`.  As 2.15, every
    evaluation must hold `metric_name` (a KeyError names it otherwise)."""
    eval_dir = _eval_dir(estimator, eval_dir)
    past = operator.gt if higher else operator.lt

    def should_stop():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if past(value, threshold):
                log.info(
                    'At step %s, metric "%s" has value %s which is %s the configured '
                    "threshold (%s) for early stopping.",
                    step,
                    metric_name,
                    value,
                    "greater than" if higher else "less than",
                    threshold,
                )
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, *every)


def _no_improvement_hook(estimator, metric_name, max_steps, higher, eval_dir, min_steps, every):
    """Stops once the best evaluation from `min_steps` on (the evaluations before it
    ignored, as 2.15 ignored them) is `max_steps` or more behind a later one."""
    eval_dir = _eval_dir(estimator, eval_dir)
    better = operator.gt if higher else operator.lt

    def should_stop():
        best = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best is None or better(value, best):
                best, best_step = value, step
            if step - best_step >= max_steps:
                log.info(
                    'No %s in metric "%s" for %s steps, which is greater than or equal to '
                    "max steps (%s) configured for early stopping.",
                    "increase" if higher else "decrease",
                    metric_name,
                    step - best_step,
                    max_steps,
                )
                return True
        return False

    return make_early_stopping_hook(estimator, should_stop, *every)


def stop_if_higher_hook(
    estimator,
    metric_name,
    threshold,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    every = (run_every_secs, run_every_steps)
    return _threshold_hook(estimator, metric_name, threshold, True, eval_dir, min_steps, every)


def stop_if_lower_hook(
    estimator,
    metric_name,
    threshold,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    every = (run_every_secs, run_every_steps)
    return _threshold_hook(estimator, metric_name, threshold, False, eval_dir, min_steps, every)


def stop_if_no_decrease_hook(
    estimator,
    metric_name,
    max_steps_without_decrease,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    every = (run_every_secs, run_every_steps)
    return _no_improvement_hook(
        estimator, metric_name, max_steps_without_decrease, False, eval_dir, min_steps, every
    )


def stop_if_no_increase_hook(
    estimator,
    metric_name,
    max_steps_without_increase,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    every = (run_every_secs, run_every_steps)
    return _no_improvement_hook(
        estimator, metric_name, max_steps_without_increase, True, eval_dir, min_steps, every
    )


class _StopSignal:
    """2.15's `signal_early_stopping/STOP`: a bool the chief's hook sets when it stops
    training and other workers' hooks read; a variable of the checkpoints the hooked
    train() calls write (False until a stop, kept from the checkpoint training resumes)."""

    def __init__(self, estimator):
        self._estimator = estimator
        self.variable = None
        self._raised = False

    def begin(self):
        """On the TF2 path: the variable, in the Estimator's store for this call's saves."""
        store = self._estimator._store
        self.variable = store.variables.get(STOP_SIGNAL)
        if self.variable is None:
            with tf.init_scope():
                self.variable = tf.Variable(False, trainable=False, name=STOP_SIGNAL)
            store.variables[STOP_SIGNAL] = self.variable
        latest = self._estimator._model_dir_checkpoint()
        if latest is not None and STOP_SIGNAL in ckpt_lib.variable_names(latest):
            self.variable.assign(bool(ckpt_lib.read_variable(latest, STOP_SIGNAL)))

    def raise_(self):
        self.variable.assign(True)
        self._raised = True

    def end(self):
        """A later call without such a hook saves no such variable (2.15's graph had none).
        Under the chief's ParameterServerStrategy the workers wait for the signal in a
        checkpoint: a stop raised just after its step's save is written into that one."""
        if self._raised and isinstance(
            self._estimator._config.train_distribute,
            tf.distribute.experimental.ParameterServerStrategy,
        ):
            latest = self._estimator._model_dir_checkpoint()
            if latest is not None and not ckpt_lib.read_variable(latest, STOP_SIGNAL):
                self._estimator._checkpoint(ModeKeys.TRAIN)(latest)
        self._estimator._store.variables.pop(STOP_SIGNAL, None)

    @staticmethod
    def in_graph(config):
        """The graph path's variable, made once per graph; on a cluster with ps tasks, on
        a ps task (the training graph's device function), shared by chief and workers."""
        from components.estimator import graph_mode

        with (
            tf.compat.v1.get_default_graph().device(graph_mode._device_fn(config, ModeKeys.TRAIN)),
            tf.compat.v1.variable_scope("signal_early_stopping", reuse=tf.compat.v1.AUTO_REUSE),
        ):
            return tf.compat.v1.get_variable(
                "STOP",
                shape=[],
                dtype=tf.bool,
                initializer=tf.compat.v1.constant_initializer(False),
                collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES],
                trainable=False,
            )


class _PredicateStopHook(Hook, tf.compat.v1.train.SessionRunHook):
    """Calls `should_stop_fn()` on a schedule and stops training when it returns True.

    As tf.estimator's timer, the schedule is on the global step a step starts
    from: the first step, then every `run_every_steps` (or `run_every_secs`).
    Under a MultiWorkerMirroredStrategy every worker asks at the same steps and
    all stop when any says so (`agree` sums their answers).  Elsewhere the stop
    is also signalled in `signal_early_stopping/STOP` (`_StopSignal`).

    As 2.15's, it is a TF1 `SessionRunHook` too: in a graph for a session (a program's
    own `MonitoredTrainingSession`) it runs as the graph path's hook."""

    _in_session = None  # the graph path's hook, in a program's own session

    def __init__(
        self, should_stop_fn, run_every_secs, run_every_steps, agree=None, signal=None, config=None
    ):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._config = config
        self._should_stop_fn = should_stop_fn
        self._every_secs = run_every_secs
        self._every_steps = run_every_steps
        self._agree = agree
        self._signal = signal
        self._last_step = None  # the start step of the last asked-at step
        self._last_time = None
        self._step = None

    @property
    def max_steps_per_call(self):
        last = None if self._last_step is None else self._last_step + 1  # a step's end
        return _steps_to_check(last, self._every_steps, self._step)

    def begin(self):
        self._in_session = None
        if not tf.executing_eagerly():  # (in a graph, for a session: TF1's hook)
            global_step = tf.compat.v1.train.get_global_step()
            self._in_session = _GraphPredicateStopHook(self, global_step, self._config)
            self._in_session.begin()
        elif self._signal is not None:
            self._signal.begin()

    def after_run(self, run_context, run_values):
        if self._in_session is not None:
            self._in_session.after_run(run_context, run_values)

    def end(self, session):  # (the logs, named as 2.15's hook named its parameter)
        if self._signal is not None and self._in_session is None:
            self._signal.end()

    def _due(self, start_step):
        if self._last_step is None:
            return True
        if start_step == self._last_step:
            return False
        if self._every_steps is not None:
            return start_step >= self._last_step + self._every_steps
        return time.time() - self._last_time >= (self._every_secs or 0)

    def asks_to_stop(self, step):
        """Asks `should_stop_fn` if due after a step that ended at global step `step`."""
        self._step = step
        start_step = step - 1
        if not self._due(start_step):
            return False
        self._last_step, self._last_time = start_step, time.time()
        stop = bool(self._should_stop_fn())
        if self._agree is not None:
            stop = self._agree(stop)
        if stop:
            log.info("Requesting early stopping at global step %d", start_step)
        return stop

    def after_step(self, context, logs):
        if self.asks_to_stop(logs["global_step"]):
            if self._signal is not None:
                self._signal.raise_()
            context.request_stop()

    def session_run_hook(self, built, tensors):
        return _GraphPredicateStopHook(self, tensors["global_step"], built.estimator._config)


class _GraphPredicateStopHook(tf.compat.v1.train.SessionRunHook):
    """The graph path's: the same questions, the stop signalled in the graph's variable."""

    def __init__(self, hook, global_step, config):
        self._hook, self._global_step, self._config = hook, global_step, config

    def begin(self):
        self._raise = tf.compat.v1.assign(_StopSignal.in_graph(self._config), True)

    def after_run(self, run_context, run_values):
        # The step the run ended at (a fetch in the run itself may read it before the
        # train op moved it).
        step = int(run_context.session.run(self._global_step))
        if self._hook.asks_to_stop(step):
            run_context.session.run(self._raise)
            run_context.request_stop()


class _StopSignalled(Hook, tf.compat.v1.train.SessionRunHook):
    """What a non-chief task outside MultiWorkerMirroredStrategy gets: in a graph (shared
    on the ps tasks) it stops once the chief's hook signalled a stop.  (On the TF2 path
    such a worker serves the chief's ParameterServerStrategy until a checkpoint carries
    the signal, `Estimator._take_cluster_role`.) A TF1 `SessionRunHook` too, as 2.15's:
    a program's own session runs it as the graph path's."""

    max_steps_per_call = None
    reads_stop_signal = True  # (the Estimator's TF2-path worker watches checkpoints for it)
    _in_session = None

    def __init__(self, config=None):
        self._config = config

    def begin(self):
        self._in_session = None
        if not tf.executing_eagerly():  # (in a graph, for a session: TF1's hook)
            self._in_session = self.session_run_hook(None, None)
            self._in_session.begin()

    def before_run(self, run_context):
        if self._in_session is not None:
            return self._in_session.before_run(run_context)
        return None

    def after_run(self, run_context, run_values):
        if self._in_session is not None:
            self._in_session.after_run(run_context, run_values)

    def session_run_hook(self, built, tensors):
        return _GraphStopSignalled(self._config if built is None else built.estimator._config)


class _GraphStopSignalled(tf.compat.v1.train.SessionRunHook):
    def __init__(self, config):
        self._config = config

    def begin(self):
        self._signal = _StopSignal.in_graph(self._config)

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._signal)

    def after_run(self, run_context, run_values):
        if run_values.results:
            log.info("Early stopping requested, suspending run.")
            run_context.request_stop()


def _is_multi_worker_mirrored(strategy):
    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def _any_worker(strategy):
    def agree(stop):
        votes = strategy.run(lambda: tf.constant(int(stop), tf.int32))
        return int(strategy.reduce(tf.distribute.ReduceOp.SUM, votes, axis=None)) > 0

    return agree


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """A training hook that stops when `should_stop_fn()` returns True.

    The chief asks; under a MultiWorkerMirroredStrategy every worker asks (at
    the same steps: `run_every_steps` is then required) and all stop together.
    Another non-chief task stops when the chief's hook signals it (2.15's
    `signal_early_stopping/STOP`, shared through the ps tasks)."""
    from components.estimator.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}"
        )
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    config = estimator._config
    strategy = estimator._user_config.train_distribute
    if _is_multi_worker_mirrored(strategy):
        if run_every_secs is not None:
            raise ValueError(
                "run_every_secs should not be set when using MultiWorkerMirroredStrategy: "
                "the workers must ask at the same steps; set run_every_steps."
            )
        agree = _any_worker(strategy)
        return _PredicateStopHook(should_stop_fn, None, run_every_steps, agree, config=config)
    if estimator._config.is_chief:
        signal = _StopSignal(estimator)
        return _PredicateStopHook(
            should_stop_fn, run_every_secs, run_every_steps, signal=signal, config=config
        )
    return _StopSignalled(config)


class _StopAtCheckpointStepHook(Hook, tf.compat.v1.train.SessionRunHook):
    """A non-chief's stop at `last_step`: once there, it waits for the chief's checkpoint
    of that step (reading it at most every `wait_after_file_check_secs`). A TF1
    `SessionRunHook` too, as 2.15's: a program's own session runs it, its runs counted by
    the graph's global step."""

    _global_step = None  # in a program's own session, the graph's

    def __init__(self, estimator, last_step, wait_after_file_check_secs):
        self._estimator = estimator
        self._last_step = last_step
        self._wait = wait_after_file_check_secs

    def begin(self):
        self._global_step = None
        if not tf.executing_eagerly():  # (in a graph, for a session: TF1's hook)
            self._global_step = tf.compat.v1.train.get_global_step()

    def after_run(self, run_context, run_values):
        if self._global_step is not None:
            self.after_step(
                run_context, {"global_step": run_context.session.run(self._global_step)}
            )

    def after_step(self, context, logs):
        if logs["global_step"] < self._last_step:
            return
        latest = self._estimator._model_dir_checkpoint()
        saved = 0 if latest is None else int(self._estimator.get_variable_value("global_step"))
        if saved >= self._last_step:
            context.request_stop()
        else:
            time.sleep(self._wait)


def make_stop_at_checkpoint_step_hook(estimator, last_step, wait_after_file_check_secs=30):
    """Stops at global step `last_step`: the chief by its own step, another worker once
    the chief's checkpoint has reached it."""
    if last_step is None:
        raise ValueError("last_step must be specified.")
    if estimator._config.is_chief:
        return StopAtStepHook(last_step=last_step)
    return _StopAtCheckpointStepHook(estimator, last_step, wait_after_file_check_secs)
