"""`train_and_evaluate` with `TrainSpec`/`EvalSpec`: training with evaluations on the chief.

Training runs in this process (on a cluster, in every worker's).  On the
chief, each checkpoint saved after training started is evaluated, if
`throttle_secs` have passed since the last evaluation, and the exporters
run on the result; the evaluation of the checkpoint at `max_steps` is the
final one (`is_the_final_export`).  This is tf.estimator's local mode: there
is no separate evaluator task, so `start_delay_secs` has no use.
"""

import collections
import logging
import os
import time

from components.estimator import checkpoints as ckpt_lib
from components.estimator.exporter import Exporter
from components.estimator.hooks import CheckpointSaverListener
from components.estimator.ignored import warn_once

log = logging.getLogger(__name__)

_DEFAULT_START_DELAY_SECS = 120


def _check_input_fn(input_fn):
    if not callable(input_fn):
        raise TypeError(f"`input_fn` must be callable, given: {input_fn}")


def _checked_exporters(exporters):
    """`exporters` as a tuple; 2.15's errors for what is not an Exporter or a name that is
    missing, not a string, or repeated."""
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    try:
        listed = list(exporters)
    except TypeError:
        listed = [None]
    if not all(isinstance(e, Exporter) for e in listed):
        raise TypeError(
            "`exporters` must be an Exporter, an iterable of Exporter, or `None`, "
            f"found {exporters}."
        )
    names = [e.name for e in listed]
    for i, name in enumerate(names):
        if not name:
            raise ValueError(
                f"An Exporter cannot have a name that is `None` or empty. All exporter names: {names}"
            )
        if not isinstance(name, str):
            raise ValueError(f"An Exporter must have a string name. Given: {type(name)}")
        if name in names[:i]:
            raise ValueError(
                "`exporters` must have unique names. Such a name cannot be `None`. All "
                f"exporter names: {names}"
            )
    return tuple(listed)


class TrainSpec(
    collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])
):
    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        _check_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(
            cls, input_fn, max_steps, tuple(hooks or ()), tuple(saving_listeners or ())
        )


class EvalSpec(
    collections.namedtuple(
        "EvalSpec",
        ["input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs"],
    )
):
    def __new__(
        cls,
        input_fn,
        steps=100,
        name=None,
        hooks=None,
        exporters=None,
        start_delay_secs=_DEFAULT_START_DELAY_SECS,
        throttle_secs=600,
    ):
        _check_input_fn(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        exporters = _checked_exporters(exporters)
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(
            cls,
            input_fn,
            steps,
            name,
            tuple(hooks or ()),
            exporters,
            start_delay_secs,
            throttle_secs,
        )


class _Evaluator:
    """Evaluates a checkpoint and runs the exporters on the result."""

    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._spec = eval_spec
        self._last_evaluated_step = None
        self._final_exported = False
        self.last_result = None
        self.last_exports = []

    def evaluate_and_export(self, is_final):
        """Evaluates the latest checkpoint unless done already; exports unless done already."""
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None or self._final_exported:
            return
        step = ckpt_lib.checkpoint_step(checkpoint)
        if step == self._last_evaluated_step and not is_final:
            return
        if step != self._last_evaluated_step:
            self.last_result = self._estimator.evaluate(
                self._spec.input_fn,
                steps=self._spec.steps,
                hooks=self._spec.hooks,
                checkpoint_path=checkpoint,
                name=self._spec.name,
            )
            self._last_evaluated_step = step
        self.last_exports = []
        for exporter in self._spec.exporters:
            path = exporter.export(
                self._estimator,
                os.path.join(self._estimator.model_dir, "export", exporter.name),
                checkpoint,
                self.last_result,
                is_final,
            )
            if path is not None:
                self.last_exports.append(path)
        self._final_exported = is_final


class _EvaluateAfterSave(CheckpointSaverListener):
    """Evaluates checkpoints as they are saved, skipping the one training started from."""

    def __init__(self, evaluator, throttle_secs, start_step, max_steps):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._start_step = start_step
        self._max_steps = max_steps
        self._last_time = None

    def after_save(self, session, global_step_value):
        if global_step_value <= self._start_step:
            return  # nothing trained since
        is_final = self._max_steps is not None and global_step_value >= self._max_steps
        due = self._last_time is None or time.time() - self._last_time >= self._throttle_secs
        if not due:  # (2.15 said so at the final checkpoint too, then evaluated it)
            log.info(
                "Skip the current checkpoint eval due to throttle secs (%s secs).",
                self._throttle_secs,
            )
        if due or is_final:
            self._evaluator.evaluate_and_export(is_final=is_final)
            self._last_time = time.time()


def warn_if_start_delay_unused(config, eval_spec):
    """On a cluster 2.15's evaluator task waited `start_delay_secs`; the kit has none.
    On one machine 2.15 did not use it either (its local mode): no warning there, so a
    program run with warnings as errors runs as it did."""
    if eval_spec.start_delay_secs != _DEFAULT_START_DELAY_SECS and config.cluster_spec:
        warn_once(
            "EvalSpec.start_delay_secs",
            "EvalSpec: start_delay_secs is not used: the chief evaluates each new "
            "checkpoint, at most once every throttle_secs, rather than an evaluator task "
            "starting after start_delay_secs.",
        )


def _log_how_it_runs(config):
    """2.15's first lines of train_and_evaluate (no distribute coordinator here; on one
    machine, training and evaluation in turn)."""
    log.info("Not using Distribute Coordinator.")
    if not config.cluster_spec and config.task_type != "evaluator":
        log.info("Running training and evaluation locally (non-distributed).")


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains, evaluating and exporting along the way; returns (eval result, export paths)."""
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("train_spec must be a TrainSpec.")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("eval_spec must be an EvalSpec.")
    warn_if_start_delay_unused(estimator.config, eval_spec)
    _log_how_it_runs(estimator.config)
    if not estimator.config.is_chief:
        estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps)
        return None, []
    config = estimator.config
    log.info(
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps %s or save_checkpoints_secs %s.",
        config.save_checkpoints_steps,
        config.save_checkpoints_secs,
    )
    if estimator._max_steps_reached(train_spec.max_steps):
        # 2.15 evaluated and exported after the checkpoints train() saved: a job run
        # again on a model_dir already at max_steps saves none, so gets (None, None).
        return None, None
    evaluator = _Evaluator(estimator, eval_spec)
    latest = estimator.latest_checkpoint()
    start_step = ckpt_lib.checkpoint_step(latest) if latest else 0
    listener = _EvaluateAfterSave(
        evaluator, eval_spec.throttle_secs, start_step, train_spec.max_steps
    )
    estimator.train(
        train_spec.input_fn,
        hooks=train_spec.hooks,
        max_steps=train_spec.max_steps,
        saving_listeners=[*list(train_spec.saving_listeners), listener],
    )
    evaluator.evaluate_and_export(is_final=True)
    return evaluator.last_result, evaluator.last_exports
