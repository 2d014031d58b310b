"""`train_and_evaluate` with `TrainSpec`/`EvalSpec`, as tf.estimator 2.15 ran it.

On one machine, each checkpoint saved after training started is evaluated, if
`throttle_secs` have passed since the last evaluation, and the exporters run on
the result; the evaluation of the checkpoint at `max_steps` is the final one
(`is_the_final_export`).  On a `TF_CONFIG` cluster the chief and workers only
train, ps tasks serve, and an `evaluator` task (after `start_delay_secs`)
evaluates and exports each new checkpoint until the one at `max_steps`.
"""

import collections
import logging
import os
import time

from components.estimator import checkpoints as ckpt_lib
from components.estimator import server
from components.estimator.exporter import Exporter
from components.estimator.hooks import CheckpointSaverListener, check_listeners, is_hook

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


def _checked_spec_hooks(hooks):
    """A spec's hooks as a tuple, refusing what is not a hook when the spec is made, as
    2.15's TrainSpec and EvalSpec did (rather than when training reaches it)."""
    for hook in hooks or ():
        if not is_hook(hook):
            raise TypeError(f"All hooks must be `SessionRunHook` instances, given: {hook!r}")
    return tuple(hooks or ())


class TrainSpec(
    collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])
):
    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        _check_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        hooks = _checked_spec_hooks(hooks)
        check_listeners(
            saving_listeners, "All saving_listeners must be `CheckpointSaverListener` instances"
        )
        return super().__new__(cls, input_fn, max_steps, hooks, tuple(saving_listeners or ()))


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
            _checked_spec_hooks(hooks),
            exporters,
            start_delay_secs,
            throttle_secs,
        )


class _Evaluator:
    """Evaluates the latest checkpoint, once per checkpoint, and runs the exporters on the
    result; as 2.15's, the export is the final one when the evaluated step reaches the
    training's `max_steps` (never without one)."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self._last_evaluated_checkpoint = None
        self._last_warning_time = 0.0
        self.last_result = None
        self.last_exports = None

    def _warn_at_most_every_10_minutes(self, message):
        """As 2.15's: an evaluator task polling for a checkpoint says so once in a while."""
        if time.time() - self._last_warning_time > 600:
            log.warning(message)
            self._last_warning_time = time.time()

    def evaluate_and_export(self):
        """The step evaluated, or None when there is no checkpoint or no new one."""
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None:
            self._warn_at_most_every_10_minutes(
                "Estimator is not trained yet. Will start an evaluation when a checkpoint is ready."
            )
            return None
        if checkpoint == self._last_evaluated_checkpoint:
            self._warn_at_most_every_10_minutes(
                "No new checkpoint ready for evaluation. Skip the current evaluation pass "
                "as evaluation results are expected to be same for the same checkpoint."
            )
            return None
        self.last_result = self._estimator.evaluate(
            self._spec.input_fn,
            steps=self._spec.steps,
            hooks=self._spec.hooks,
            checkpoint_path=checkpoint,
            name=self._spec.name,
        )
        self._last_evaluated_checkpoint = checkpoint
        step = int(self.last_result["global_step"])
        # As 2.15: the step's numpy comparison (a numpy bool), False without max_steps;
        # the exporter called by keyword.
        is_final = self.last_result["global_step"] >= self._max_steps if self._max_steps else False
        if is_final:
            log.debug("Calling exporter with the `is_the_final_export=True`.")
        self.last_exports = [
            # (None where it did not export, as in 2.15)
            exporter.export(
                estimator=self._estimator,
                export_path=os.path.join(self._estimator.model_dir, "export", exporter.name),
                checkpoint_path=checkpoint,
                eval_result=self.last_result,
                is_the_final_export=is_final,
            )
            for exporter in self._spec.exporters
        ]
        self._last_warning_time = 0.0
        return step


class _EvaluateAfterSave(CheckpointSaverListener):
    """2.15's listener: evaluates checkpoints as they are saved, skipping the one training
    started from, at most once every `throttle_secs` (counted from an evaluation's start),
    and at the end the last step saved unless it was evaluated already."""

    def __init__(self, evaluator, throttle_secs, start_step):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._start_step = start_step
        self._last_step = None
        self._last_time = None

    def after_save(self, session, global_step_value):
        if global_step_value <= self._start_step:
            return  # nothing trained since
        if global_step_value == self._last_step or (
            self._last_time is not None and time.time() - self._last_time < self._throttle_secs
        ):
            log.info(
                "Skip the current checkpoint eval due to throttle secs (%s secs).",
                self._throttle_secs,
            )
            return
        self._evaluate(global_step_value)

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluate(global_step_value)

    def _evaluate(self, step):
        self._last_step, self._last_time = step, time.time()
        self._evaluator.evaluate_and_export()


def _log_how_it_runs(estimator):
    """2.15's first lines of train_and_evaluate: whether its distribute coordinator ran
    the task (given a strategy and a cluster); on one machine, training and evaluation
    in turn."""
    if getattr(estimator._user_config, "_worker_fields", None) is not None:
        log.info("Running `train_and_evaluate` with Distribute Coordinator.")
        return
    log.info("Not using Distribute Coordinator.")
    config = estimator._config
    if not config.cluster_spec and config.task_type != "evaluator":
        log.info("Running training and evaluation locally (non-distributed).")


def _check_arguments(estimator, train_spec, eval_spec):
    """2.15's checks, in its order and words (the eval_spec first: specs given the wrong
    way round name it)."""
    from components.estimator.estimator import Estimator

    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(
            f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}"
        )
    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}"
        )
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(
            f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}"
        )


# The task types of a TF_CONFIG cluster train_and_evaluate runs, as 2.15 named them.
_TASK_TYPES = ["chief", "evaluator", "master", "ps", "worker"]


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains, evaluating and exporting along the way; returns (eval result, export paths).

    On a TF_CONFIG cluster each task does its part, as in 2.15: the chief and the workers
    train, ps tasks serve, the evaluator evaluates and exports each new checkpoint (a
    legacy `master` trains and evaluates); each returns None."""
    _check_arguments(estimator, train_spec, eval_spec)
    config = estimator._config  # (under a strategy's cluster: this task's role in it)
    _log_how_it_runs(estimator)
    if not config.cluster_spec and config.task_type != "evaluator":
        return _train_and_evaluate_here(estimator, train_spec, eval_spec)
    if config.task_type == "evaluator" and config.task_id > 0:
        raise ValueError(
            "For distributed training, there can only be one `evaluator` task (with task id "
            f"0).  Given task id {config.task_id}"
        )
    if config.task_type not in _TASK_TYPES:
        raise ValueError(
            f"Task type {config.task_type} is not supported. Supported task types are {_TASK_TYPES}"
        )
    if config.task_type in ("master", "chief", "worker"):
        _log_lone_node(config)
    if config.task_type == "master":  # (2.15's master: no "Start train and evaluate" line)
        _train_and_evaluate_here(estimator, train_spec, eval_spec, announce=False)
    elif config.task_type == "ps":
        task = {"type": "ps", "index": config.task_id}
        server.run_server({"cluster": config.cluster_spec.as_dict(), "task": task})
    elif config.task_type == "evaluator":
        _evaluate_continuously(estimator, train_spec, eval_spec)
    else:
        estimator.train(
            train_spec.input_fn,
            hooks=train_spec.hooks,
            max_steps=train_spec.max_steps,
            saving_listeners=train_spec.saving_listeners,
        )
    return None  # (as 2.15's: nothing to unpack)


def _log_lone_node(config):
    """2.15 started a training task's server before training, but said it skipped it for
    a cluster of one node (a lone `master` or `chief`), outside Google's environment."""
    jobs = config.cluster_spec.jobs
    alone = len(jobs) == 1 and len(config.cluster_spec.job_tasks(jobs[0])) == 1
    if alone and not config.master and server.tf_config_from_env().get("environment") != "google":
        log.info("Skip starting Tensorflow server as there is only one node in the cluster.")


def _evaluate_continuously(estimator, train_spec, eval_spec):
    """2.15's evaluator task: after `start_delay_secs`, each new checkpoint evaluated and
    exported, at most once every `throttle_secs`, until one at `max_steps` (forever
    without it)."""
    if eval_spec.start_delay_secs:
        log.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    max_steps = train_spec.max_steps
    evaluator = _Evaluator(estimator, eval_spec, max_steps)
    while True:
        started = time.time()
        step = evaluator.evaluate_and_export()
        if step is not None and max_steps is not None and step >= max_steps:
            log.info("Exiting evaluation, global_step=%s >= train max_steps=%s", step, max_steps)
            return
        wait = eval_spec.throttle_secs - (time.time() - started)
        if wait > 0:
            log.info("Waiting %f secs before starting next eval run.", wait)
        # (2.15 polled without a pause at throttle_secs=0 while no new checkpoint came.)
        time.sleep(max(wait, _POLL_SECS if step is None else 0))


_POLL_SECS = 0.5


def _train_and_evaluate_here(estimator, train_spec, eval_spec, announce=True):
    """2.15's local train_and_evaluate (and a master's, which does not `announce` it):
    evaluations after checkpoints as they are saved."""
    config = estimator._user_config
    if announce:
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
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    latest = estimator._model_dir_checkpoint()
    start_step = ckpt_lib.checkpoint_step(latest) if latest else 0
    listener = _EvaluateAfterSave(evaluator, eval_spec.throttle_secs, start_step)
    estimator.train(
        train_spec.input_fn,
        hooks=train_spec.hooks,
        max_steps=train_spec.max_steps,
        saving_listeners=[*list(train_spec.saving_listeners), listener],
    )
    return evaluator.last_result, evaluator.last_exports
