"""Early stopping, as `tf.estimator.experimental.stop_if_*` and `make_*_hook`.

Each `stop_if_*` hook periodically reads the eval metrics the Estimator wrote
to `eval_dir` (through `tf.io.gfile`, so a `gs://` model_dir works too) and
asks training to stop when its condition holds; `make_early_stopping_hook`
asks a function of the user's instead.
"""

import logging
import operator
import os
import time

import tensorflow as tf

from components.estimator import summaries
from components.estimator.hooks import Hook, StopAtStepHook

log = logging.getLogger(__name__)


def _steps_to_check(last_step, every_steps, step):
    """Steps to run before a hook's next check, so that it falls on its step (as 2.15's
    timer checked after every step) rather than at a chunk's end; None: by time."""
    if every_steps is None:
        return None
    if last_step is None or step is None:
        return 1
    return max(1, last_step + every_steps - step)


class _EvalMetricStopHook(Hook):
    """Checks the eval results at 2.15's steps: the first step of the call, then every
    `run_every_steps` from it (by time: between chunks of steps, no per-step cost)."""

    def __init__(self, eval_dir, should_stop, run_every_secs, run_every_steps):
        if run_every_secs is not None and run_every_steps is not None:
            raise ValueError("Set at most one of run_every_secs and run_every_steps.")
        self._eval_dir = eval_dir
        self._should_stop = should_stop
        self._every_secs = run_every_secs
        self._every_steps = run_every_steps
        self._last_time = time.time()
        self._last_step = None
        self._step = None

    @property
    def max_steps_per_call(self):
        return _steps_to_check(self._last_step, self._every_steps, self._step)

    def _due(self, step):
        if self._every_steps is not None:
            due = self._last_step is None or step - self._last_step >= self._every_steps
        else:
            due = time.time() - self._last_time >= (self._every_secs or 0)
        return due

    def after_step(self, context, logs):
        step = self._step = logs["global_step"]
        if not self._due(step):
            return
        self._last_time, self._last_step = time.time(), step
        results = summaries.read_scalars_by_step(
            tf.io.gfile.glob(os.path.join(self._eval_dir, "*.tfevents.*"))
        )
        if results and self._should_stop(results):
            log.info("Early stopping at step %d.", step)
            context.request_stop()


def _eval_dir(estimator, eval_dir):
    return eval_dir or estimator.eval_dir()


def _threshold_hook(
    estimator, metric_name, threshold, compare, eval_dir, min_steps, run_every_secs, run_every_steps
):
    def should_stop(results):
        for step in sorted(results):
            value = results[step].get(metric_name)
            if step >= min_steps and value is not None and compare(value, threshold):
                return True
        return False

    return _EvalMetricStopHook(
        _eval_dir(estimator, eval_dir), should_stop, run_every_secs, run_every_steps
    )


def _no_improvement_hook(
    estimator,
    metric_name,
    max_steps_without_improvement,
    better,
    eval_dir,
    min_steps,
    run_every_secs,
    run_every_steps,
):
    def should_stop(results):
        steps = sorted(s for s in results if metric_name in results[s])
        if not steps:
            return False
        best_step, best = steps[0], results[steps[0]][metric_name]
        for step in steps[1:]:
            value = results[step][metric_name]
            if better(value, best):
                best_step, best = step, value
            if step >= min_steps and step - best_step >= max_steps_without_improvement:
                return True
        return False

    return _EvalMetricStopHook(
        _eval_dir(estimator, eval_dir), should_stop, run_every_secs, run_every_steps
    )


def stop_if_higher_hook(
    estimator,
    metric_name,
    threshold,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    return _threshold_hook(
        estimator,
        metric_name,
        threshold,
        operator.gt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def stop_if_lower_hook(
    estimator,
    metric_name,
    threshold,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    return _threshold_hook(
        estimator,
        metric_name,
        threshold,
        operator.lt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def stop_if_no_decrease_hook(
    estimator,
    metric_name,
    max_steps_without_decrease,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_decrease,
        operator.lt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
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
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_increase,
        operator.gt,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


class _PredicateStopHook(Hook):
    """Calls `should_stop_fn()` on a schedule and stops training when it returns True.

    As tf.estimator's timer, the schedule is on the global step a step starts
    from: the first step, then every `run_every_steps` (or `run_every_secs`).
    Under a MultiWorkerMirroredStrategy every worker asks at the same steps and
    all stop when any says so (`agree` sums their answers)."""

    def __init__(self, should_stop_fn, run_every_secs, run_every_steps, agree=None):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._every_secs = run_every_secs
        self._every_steps = run_every_steps
        self._agree = agree
        self._last_step = None  # the start step of the last asked-at step
        self._last_time = None
        self._step = None

    @property
    def max_steps_per_call(self):
        last = None if self._last_step is None else self._last_step + 1  # a step's end
        return _steps_to_check(last, self._every_steps, self._step)

    def _due(self, start_step):
        if self._last_step is None:
            return True
        if start_step == self._last_step:
            return False
        if self._every_steps is not None:
            return start_step >= self._last_step + self._every_steps
        return time.time() - self._last_time >= (self._every_secs or 0)

    def after_step(self, context, logs):
        self._step = logs["global_step"]
        start_step = self._step - 1
        if not self._due(start_step):
            return
        self._last_step, self._last_time = start_step, time.time()
        stop = bool(self._should_stop_fn())
        if self._agree is not None:
            stop = self._agree(stop)
        if stop:
            log.info("Requesting early stopping at global step %d", start_step)
            context.request_stop()


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
    Another non-chief task trains its own copy of the model here (this kit
    shares variables only through a strategy), so it is not asked."""
    from components.estimator.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}"
        )
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    strategy = estimator.config.train_distribute
    if _is_multi_worker_mirrored(strategy):
        if run_every_secs is not None:
            raise ValueError(
                "run_every_secs should not be set when using MultiWorkerMirroredStrategy: "
                "the workers must ask at the same steps; set run_every_steps."
            )
        return _PredicateStopHook(should_stop_fn, None, run_every_steps, _any_worker(strategy))
    if estimator._config.is_chief:
        return _PredicateStopHook(should_stop_fn, run_every_secs, run_every_steps)
    return _NotAsked()


class _NotAsked(Hook):
    """What a non-chief outside MultiWorkerMirroredStrategy gets: no question, no stop."""

    max_steps_per_call = None


class _StopAtCheckpointStepHook(Hook):
    """A non-chief's stop at `last_step`: once there, it waits for the chief's checkpoint
    of that step (reading it at most every `wait_after_file_check_secs`)."""

    def __init__(self, estimator, last_step, wait_after_file_check_secs):
        self._estimator = estimator
        self._last_step = last_step
        self._wait = wait_after_file_check_secs

    def after_step(self, context, logs):
        if logs["global_step"] < self._last_step:
            return
        latest = self._estimator.latest_checkpoint()
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
