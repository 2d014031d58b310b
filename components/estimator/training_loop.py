"""The host side of `Estimator.train`: restore, run chunks of steps, save, summarize.

Each `run_chunk` call runs up to the next point where the host
has work: a summary, a log line, a step-based checkpoint, the end of
training, or (with hooks) every step.
"""

import logging
import time

import tensorflow as tf

from components.estimator import checkpoints as ckpt_lib
from components.estimator import summaries
from components.estimator.hooks import HookRunner
from components.estimator.model_fn import ModeKeys

log = logging.getLogger(__name__)

# Upper bound on steps per tf.function call, so that time-based checkpoints
# and a finite input are noticed reasonably soon.
_MAX_STEPS_PER_CALL = 200


def _steps_to_boundary(step, every):
    if not every:
        return None
    return every - step % every


def run(
    estimator, run_chunk, global_step, latest_checkpoint, steps, max_steps, hooks, saving_listeners
):
    """`run_chunk(n)` runs up to n steps and returns (steps run, last loss)."""
    config = estimator.config
    model_dir = estimator.model_dir
    variables = estimator._store.model_variables()
    manager = ckpt_lib.CheckpointManager(
        model_dir,
        estimator._checkpoint(ModeKeys.TRAIN),
        max_to_keep=config.keep_checkpoint_max or None,
        keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
    )
    is_chief = config.is_chief

    def save():
        step = int(global_step.numpy())
        for listener in saving_listeners:
            listener.before_save(None, step)
        manager.save(step)
        stop = False
        for listener in saving_listeners:
            stop = bool(listener.after_save(None, step)) or stop
        return stop

    if latest_checkpoint is not None:
        estimator._restore(latest_checkpoint, ModeKeys.TRAIN)
        log.info("Restored from %s", latest_checkpoint)
    else:
        estimator._initialize_fresh_variables(variables)
        # With several workers the step-0 save is skipped: a worker starting
        # later must not find (and restore) a checkpoint its peers did not.
        if is_chief and config.num_worker_replicas == 1:
            save()

    # (Estimator.train returns before this when max_steps is already reached.)
    start_step = int(global_step.numpy())
    target = start_step + steps if steps is not None else max_steps

    for listener in saving_listeners:
        listener.begin()
    runner = HookRunner(estimator, hooks, start_step)
    writer = tf.summary.create_file_writer(model_dir) if is_chief else None
    # Keras optimizers keep their rate in a `learning_rate` variable: chart it.
    learning_rates = {
        name: v
        for name, v in variables.items()
        if name.split("/")[-1].startswith("learning_rate") and v.shape.rank == 0
    }
    step = start_step
    last_save_time = time.time()
    last_log = (step, time.time())
    last_saved_step = step
    loss = float("nan")
    stop = False
    while not stop and (target is None or step < target):
        # As tf.estimator's SummarySaverHook: the first step of a train() call
        # is summarized too, so a run shorter than save_summary_steps shows a loss.
        first_call = step == start_step
        limit = [_MAX_STEPS_PER_CALL]
        if first_call and config.save_summary_steps:
            limit.append(1)
        if target is not None:
            limit.append(target - step)
        for every in (
            config.save_summary_steps,
            config.log_step_count_steps,
            config.save_checkpoints_steps,
        ):
            boundary = _steps_to_boundary(step, every)
            if boundary:
                limit.append(boundary)
        if hooks:
            limit += [h.max_steps_per_call for h in hooks if h.max_steps_per_call]
            if runner.before_step(step):
                break
        done, loss = run_chunk(min(limit))
        if done == 0:
            log.info("Input exhausted at step %d.", step)
            break
        step = int(global_step.numpy())
        stop = runner.after_step({"loss": loss, "global_step": step})
        if (
            writer is not None
            and config.save_summary_steps
            and (first_call or step % config.save_summary_steps == 0)
        ):
            summaries.write_scalars(
                writer,
                {"loss": loss, **{name: rate.numpy() for name, rate in learning_rates.items()}},
                step,
            )
        if config.log_step_count_steps and step % config.log_step_count_steps == 0:
            now = time.time()
            rate = (step - last_log[0]) / max(now - last_log[1], 1e-9)
            log.info("loss = %g, step = %d (%.1f global_step/sec)", loss, step, rate)
            if writer is not None:
                summaries.write_scalars(writer, {"global_step/sec": rate}, step)
            last_log = (step, now)
        if is_chief:
            due_by_steps = (
                config.save_checkpoints_steps and step % config.save_checkpoints_steps == 0
            )
            due_by_secs = (
                config.save_checkpoints_secs
                and time.time() - last_save_time >= config.save_checkpoints_secs
            )
            if due_by_steps or due_by_secs:
                stop = save() or stop
                last_save_time, last_saved_step = time.time(), step
        if done < int(min(limit)):
            log.info("Input exhausted at step %d.", step)
            break

    if is_chief and step != last_saved_step:
        save()
    if writer is not None:
        writer.close()
    runner.end({"loss": loss, "global_step": step})
    for listener in saving_listeners:
        listener.end(None, step)
    log.info("Loss for final step: %g.", loss)
