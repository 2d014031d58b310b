"""The host side of `Estimator.train`: restore, run chunks of steps, save, summarize.

Each `run_chunk` call runs up to the next point where the host
has work: a summary, a log line, a step-based checkpoint, the end of
training, or (with hooks) every step.
"""

import logging
import math
import os
import time

import tensorflow as tf

from components.estimator import checkpoints as ckpt_lib
from components.estimator import run_config, summaries
from components.estimator.hooks import (
    NO_SAVER_FOR_LISTENERS,
    HookRunner,
    NanLossDuringTrainingError,
)
from components.estimator.model_fn import ModeKeys
from components.estimator.tf_logging import as_printed

log = logging.getLogger(__name__)

# Upper bound on steps per tf.function call, so that time-based checkpoints
# and a finite input are noticed reasonably soon.
_MAX_STEPS_PER_CALL = 200


def _steps_to_next(step, last, every):
    """Steps to the next of a timer's steps, as TF1's SecondOrStepTimer set them: the
    first step of a train() call, then every `every` from the last (None: not due)."""
    if not every:
        return None
    return 1 if last is None else max(1, last + every - step)


def output_dir(config, model_dir):
    """Where this task writes checkpoints, summaries and graph.pbtxt: model_dir on the
    chief; under a multi-worker strategy, model_dir/tmp_<type>_<index> on the others (as
    2.15's workers there, which all saved and summarized); None elsewhere."""
    if config.is_chief:
        return model_dir
    if isinstance(config.train_distribute, tf.distribute.MultiWorkerMirroredStrategy):
        return os.path.join(model_dir, f"tmp_{config.task_type}_{config.task_id}")
    return None


def run(
    estimator, run_chunk, global_step, latest_checkpoint, steps, max_steps, hooks, saving_listeners
):
    """`run_chunk(n, summarize)` runs up to n steps and returns (steps run, last loss,
    the model's own summaries of step n as a serialized `Summary` when `summarize`)."""
    loop = _TrainingLoop(estimator, global_step, hooks, saving_listeners)
    loop.restore_or_initialize(latest_checkpoint)
    untrained = _values_to_go_back_to(loop, latest_checkpoint)
    # (Estimator.train returns before this when max_steps is already reached; past it
    # here, 2.15's StopAtStepHook stopped after one step.)
    start_step = int(global_step.numpy())
    target = start_step + steps if steps is not None else max_steps
    if steps is None and max_steps is not None:
        target = max(max_steps, start_step + 1)
    loop.begin(start_step)
    loop.save_start()
    loop.train(run_chunk, start_step, target)
    loop.end()
    for variable, value in untrained:
        variable.assign(value)


def _values_to_go_back_to(loop, latest_checkpoint):
    """[(variable, value)] to set once the call is over.  2.15 trained in a session that
    ended with the call: under a RunConfig that saves no checkpoint
    (`save_checkpoints_steps=None, save_checkpoints_secs=None`), and with none to start
    from, what it trained was gone, and the next call started from the initial values
    again (evaluate and predict said so, 'running initialization to evaluate')."""
    if loop.saves or latest_checkpoint is not None:
        return []
    return [(variable, variable.numpy()) for variable in loop.variables.values()]


class _TrainingLoop:
    """The state one `train()` call carries between chunks: writer, hooks, last save and log."""

    def __init__(self, estimator, global_step, hooks, saving_listeners):
        self.estimator = estimator
        self.config = estimator._config
        self.global_step = global_step
        self.hooks = hooks
        self.saving_listeners = saving_listeners
        self.variables = estimator._store.model_variables()
        self.output_dir = output_dir(self.config, estimator.model_dir)
        self.manager = estimator._checkpoint_manager(self.output_dir or estimator.model_dir)
        self.is_chief = self.config.is_chief
        self.saves = run_config.saves_checkpoints(self.config)
        if saving_listeners and not self.saves:
            raise ValueError(NO_SAVER_FOR_LISTENERS)
        self.step = None
        self.loss = float("nan")

    def save(self):
        """Saves a checkpoint around the listeners' calls; True when one asks to stop."""
        step = int(self.global_step.numpy())
        # 2.15's CheckpointSaverHook's lines, which scripts grep for progress.
        log.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self.saving_listeners:
            listener.before_save(None, step)
        prefix = os.path.join(self.output_dir, ckpt_lib.CHECKPOINT_NAME)
        log.info("Saving checkpoints for %d into %s.", step, prefix)
        self.manager.save(step)
        if self.writer is not None and self.is_chief:  # (2.15's saver hook's record of it)
            checkpointed = tf.compat.v1.SessionLog.CHECKPOINT
            log_entry = tf.compat.v1.SessionLog(status=checkpointed, checkpoint_path=prefix)
            self.writer.add_session_log(log_entry, step)
        log.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        stop = False
        for listener in self.saving_listeners:
            stop = bool(listener.after_save(None, step)) or stop
        return stop

    def restore_or_initialize(self, latest_checkpoint):
        if latest_checkpoint is not None:
            self.estimator._restore(latest_checkpoint, ModeKeys.TRAIN)
        else:
            self.estimator._initialize_fresh_variables(self.variables)

    def save_start(self):
        """As 2.15's CheckpointSaverHook, each call saves the step it starts from (its
        listeners called, after every hook's and listener's `begin`), resumed or not.
        With several workers the step-0 save is skipped: a worker starting later must
        not find (and restore) a checkpoint its peers did not."""
        if self.saves and self.is_chief and self.config.num_worker_replicas == 1:
            self.save()

    def begin(self, start_step):
        # (2.15's order: the user's hooks, then the saver's listeners.)
        self.runner = HookRunner(self.estimator, self.hooks, start_step)
        for listener in self.saving_listeners:
            listener.begin()
        self.writer = self._events_writer()
        self.step = start_step
        self.last_save_time = time.time()
        # (step, time) of the last summary and step-rate line; None until the call's first.
        self.last_summary_step = None
        self.last_log = None
        self.last_saved_step = start_step

    def _events_writer(self):
        """The writer of this call's events (None where 2.15 opened none: no checkpoints,
        summaries nor step rate), with the training graph written as 2.15's hooks wrote it:
        once when the process opened the folder's events file (FileWriterCache made its
        writer with the graph), then each call as its checkpoint saver began."""
        config = self.config
        if not self.output_dir or not (
            self.saves or config.save_summary_steps or config.log_step_count_steps
        ):
            return None
        writer, made = summaries.cached_file_writer(self.output_dir, made=True)
        graph = getattr(self.estimator, "_graph_for_events", None)
        if graph is not None:
            graph_def = graph.as_graph_def()
            for _ in range(int(made) + int(self.saves)):
                summaries.write_graph(writer, graph_def)
        return writer

    def train(self, run_chunk, start_step, target):
        stop = False
        while not stop and (target is None or self.step < target):
            # As tf.estimator's SummarySaverHook: the first step of a train() call
            # is summarized too, so a run shorter than save_summary_steps shows a loss.
            first_call = self.step == start_step
            chunk = self._chunk_size(first_call, target)
            if self.hooks and self.runner.before_step(self.step):
                break
            done, loss, model_summary = run_chunk(chunk, self._summary_due(chunk))
            if done == 0:  # (the loss stays the last step's: this chunk ran none)
                log.debug("Input exhausted at step %d.", self.step)
                break
            self.loss = loss
            self.step = int(self.global_step.numpy())
            # 2.15's order within a step: the checkpoint (and its listeners, which may
            # evaluate it), the hooks (an early-stopping hook sees that evaluation), the
            # step rate, then the loss line.
            stop = self._save_if_due()
            stop = self.runner.after_step({"loss": self.loss, "global_step": self.step}) or stop
            self._summarize(first_call, model_summary)
            if math.isnan(self.loss):
                self._diverged()
            self._log_rate()
            if done < int(chunk):
                log.debug("Input exhausted at step %d.", self.step)
                break

    def _diverged(self):
        """As the NanTensorHook tf.estimator 2.15 gave every train() call: a step whose
        loss is NaN ends training with its error, after the checkpoint, hooks and summary
        due at that step, before its loss line (and no checkpoint at the end)."""
        log.error("Model diverged with loss = NaN.")
        if self.writer is not None:
            self.writer.flush()
        raise NanLossDuringTrainingError

    def _chunk_size(self, first_call, target):
        """Steps up to the next point where the host has work."""
        config = self.config
        limit = [_MAX_STEPS_PER_CALL]
        if first_call and config.save_summary_steps:
            limit.append(1)
        if target is not None:
            limit.append(target - self.step)
        last_log_step = None if self.last_log is None else self.last_log[0]
        for boundary in (
            _steps_to_next(self.step, self.last_summary_step, config.save_summary_steps),
            _steps_to_next(self.step, last_log_step, config.log_step_count_steps),
            _steps_to_next(self.step, self.last_saved_step, config.save_checkpoints_steps),
        ):
            if boundary:
                limit.append(boundary)
        if self.hooks:
            limit += [h.max_steps_per_call for h in self.hooks if h.max_steps_per_call]
        return min(limit)

    def _due(self, step):
        """As tf.estimator's SummarySaverHook: the call's first step, then every
        `save_summary_steps` from it (1, 101, 201, ... in a fresh model_dir)."""
        every = self.config.save_summary_steps
        last = self.last_summary_step
        return bool(every) and (last is None or step >= last + every)

    def _summary_due(self, chunk):
        """Whether the chunk's last step will be summarized here (so the model's own
        summaries are computed then, on the chief)."""
        return self.writer is not None and self._due(self.step + chunk)

    def _summarize(self, first_call, model_summary):
        due = first_call or (self.last_summary_step is not None and self._due(self.step))
        if not self.config.save_summary_steps or not due:
            return
        self.last_summary_step = self.step  # on every worker: it paces the chunks
        if self.writer is None:
            return
        if first_call:  # (2.15's summary saver's mark of a session's start)
            started = tf.compat.v1.SessionLog(status=tf.compat.v1.SessionLog.START)
            self.writer.add_session_log(started, self.step)
        # The model's own (2.15's canned models' layer summaries), when it has any.
        summaries.write_scalars(self.writer, {"loss": self.loss}, self.step, model_summary)

    def _log_rate(self):
        """As tf.estimator's loss line and StepCounterHook: the call's first step starts
        the clock (a loss line, no rate), then every `log_step_count_steps` from it.  The
        step shown is the one the step started from, as 2.15's graph read it beside the
        train op (`step = 0` for a fresh model's first step)."""
        every = self.config.log_step_count_steps
        if not every:
            return
        now = time.time()
        if self.last_log is None:
            log.info("loss = %s, step = %d", as_printed(self.loss), self.step - 1)
            self.last_log = (self.step, now)
            return
        if self.step < self.last_log[0] + every:
            return
        elapsed = max(now - self.last_log[1], 1e-9)
        rate = (self.step - self.last_log[0]) / elapsed
        log.info("global_step/sec: %g", rate)
        log.info("loss = %s, step = %d (%.3f sec)", as_printed(self.loss), self.step - 1, elapsed)
        if self.writer is not None:
            summaries.write_scalars(self.writer, {"global_step/sec": rate}, self.step)
        self.last_log = (self.step, now)

    def _save_if_due(self):
        """Saves on the chief when a step or time interval is due; True when asked to stop."""
        config = self.config
        # As tf.estimator's CheckpointSaverHook: every `save_checkpoints_steps` from the
        # call's first step (0, 5, 7, 12 for 7 steps then 9 more, every 5), not multiples.
        every = config.save_checkpoints_steps
        due_by_steps = bool(every) and self.step >= self.last_saved_step + every
        if not self.is_chief:
            if due_by_steps:  # each worker keeps the chief's pace: the same chunks
                self.last_saved_step = self.step
                if self.output_dir is not None:
                    self.save()
            return False
        due_by_secs = (
            config.save_checkpoints_secs
            and time.time() - self.last_save_time >= config.save_checkpoints_secs
        )
        if not (due_by_steps or due_by_secs):
            return False
        stop = self.save()
        self.last_save_time, self.last_saved_step = time.time(), self.step
        return stop

    def end(self):
        if self.saves and self.output_dir is not None and self.step != self.last_saved_step:
            self.save()
        if self.writer is not None:
            self.writer.flush()
        self.runner.end({"loss": self.loss, "global_step": self.step})
        for listener in self.saving_listeners:
            listener.end(None, self.step)
        log.info("Loss for final step: %s.", as_printed(self.loss))
