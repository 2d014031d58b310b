"""Early stopping from evaluation results, as `tf.estimator.experimental.stop_if_*`.

Each hook periodically reads the eval metrics the Estimator wrote to
`eval_dir` (through `tf.io.gfile`, so a `gs://` model_dir works too) and asks
training to stop when its condition holds.
"""

import logging
import operator
import os
import time

import tensorflow as tf

from components.trainer.estimator import summaries
from components.trainer.estimator.hooks import Hook

log = logging.getLogger(__name__)


class _EvalMetricStopHook(Hook):
    # Checked between chunks of steps, not every step: no per-step cost.
    max_steps_per_call = None

    def __init__(self, eval_dir, should_stop, run_every_secs, run_every_steps):
        if run_every_secs is not None and run_every_steps is not None:
            raise ValueError("Set at most one of run_every_secs and run_every_steps.")
        self._eval_dir = eval_dir
        self._should_stop = should_stop
        self._every_secs = run_every_secs
        self._every_steps = run_every_steps
        self._last_time = time.time()
        self._last_step = None
        if run_every_steps is not None:
            self.max_steps_per_call = run_every_steps

    def _due(self, step):
        if self._every_steps is not None:
            due = self._last_step is None or step - self._last_step >= self._every_steps
        else:
            due = time.time() - self._last_time >= (self._every_secs or 0)
        return due

    def after_step(self, context, logs):
        step = logs["global_step"]
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
