"""`train_and_evaluate` with `TrainSpec`/`EvalSpec`, on one machine.

Training runs in this process; after a checkpoint is saved, if `throttle_secs`
have passed since the last evaluation and `start_delay_secs` since training
started, that checkpoint is evaluated and the exporters run.  A final
evaluation and export follow the last step.
"""

import collections
import logging
import os
import time

from components.trainer.estimator.exporter import Exporter
from components.trainer.estimator.hooks import CheckpointSaverListener

log = logging.getLogger(__name__)


class TrainSpec(collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError("TrainSpec: input_fn must be callable.")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"TrainSpec: max_steps must be positive, given {max_steps}.")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()),
                               tuple(saving_listeners or ()))


class EvalSpec(collections.namedtuple(
        "EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
                     "throttle_secs"])):

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("EvalSpec: input_fn must be callable.")
        if steps is not None and steps <= 0:
            raise ValueError(f"EvalSpec: steps must be positive or None, given {steps}.")
        if exporters is None:
            exporters = ()
        elif isinstance(exporters, Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters)
        names = [e.name for e in exporters]
        if len(set(names)) != len(names):
            raise ValueError(f"EvalSpec: exporter names must be unique, got {names}.")
        if start_delay_secs < 0 or throttle_secs < 0:
            raise ValueError("EvalSpec: start_delay_secs and throttle_secs must be >= 0.")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()), exporters,
                               start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates a checkpoint and runs the exporters on the result."""

    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._spec = eval_spec
        self._last_evaluated_step = None
        self.last_result = None
        self.last_exports = []

    def evaluate_and_export(self, is_final):
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None:
            return
        step = int(checkpoint.rsplit("-", 1)[1])
        if step == self._last_evaluated_step and not is_final:
            return
        if step != self._last_evaluated_step:
            self.last_result = self._estimator.evaluate(
                self._spec.input_fn, steps=self._spec.steps, hooks=self._spec.hooks,
                checkpoint_path=checkpoint, name=self._spec.name)
            self._last_evaluated_step = step
        self.last_exports = []
        for exporter in self._spec.exporters:
            path = exporter.export(
                self._estimator, os.path.join(self._estimator.model_dir, "export", exporter.name),
                checkpoint, self.last_result, is_final)
            if path is not None:
                self.last_exports.append(path)


class _EvaluateAfterSave(CheckpointSaverListener):

    def __init__(self, evaluator, start_delay_secs, throttle_secs):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._last_time = time.time()
        self._first_time = self._last_time + start_delay_secs

    def after_save(self, global_step_value):
        now = time.time()
        if now >= self._first_time and now - self._last_time >= self._throttle_secs:
            self._evaluator.evaluate_and_export(is_final=False)
            self._last_time = time.time()


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains, evaluating and exporting along the way; returns (eval result, export paths)."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("train_spec must be a TrainSpec.")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("eval_spec must be an EvalSpec.")
    if not estimator.config.is_chief:
        estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                        max_steps=train_spec.max_steps)
        return None, []
    evaluator = _Evaluator(estimator, eval_spec)
    listener = _EvaluateAfterSave(evaluator, eval_spec.start_delay_secs, eval_spec.throttle_secs)
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                    saving_listeners=list(train_spec.saving_listeners) + [listener])
    evaluator.evaluate_and_export(is_final=True)
    return evaluator.last_result, evaluator.last_exports
