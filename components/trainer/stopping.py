"""Early stopping: training in rounds on a held-out part of the train split, and why it
stopped.

How long to train, and whether to stop early, is components/trainer/length.py's rule; this
module trains for the `TrainingLength` it gives. Stopping early, each round's checkpoint is
evaluated on the held-out part; training stops when the validation loss has not improved
for `PATIENCE` rounds (a plateau), when the model says it is complete (boosted trees after
their last tree), or at the length's cap. The best round's checkpoint is the one exported.
The summary carries the reason.

The loss is the head's `average_loss` (log loss for classifiers, squared error for
regressors): the proper score for probabilities, so stopping on it keeps them calibrated.
"""

import dataclasses
import math
import os
import time

import tensorflow as tf

from components import progress

PATIENCE = 4  # rounds without a better validation loss before stopping
MIN_DELTA = 1e-4  # relative improvement that counts as better
BEST_CHECKPOINT_DIR = "best_checkpoint"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What training did: the checkpoint to export, its step, the validation metrics of that
    checkpoint (None when nothing was held out), the steps run and why it stopped."""

    checkpoint: str
    step: int
    validation: dict | None
    steps_run: int
    reason: str
    seconds: float
    initial: str | None = None  # a copy of the step-0 checkpoint, when asked for (`train`)


def validation_loss(metrics):
    """The loss early stopping and the model choice compare (module doc)."""
    return float(metrics.get("average_loss", metrics["loss"]))


def _keep(checkpoint, target):
    """A copy of `checkpoint`'s files in the folder `target`, out of reach of the rotation
    that deletes old checkpoints; returns the copy's path."""
    if tf.io.gfile.exists(target):
        tf.io.gfile.rmtree(target)
    tf.io.gfile.makedirs(target)
    for path in tf.io.gfile.glob(checkpoint + ".*"):
        tf.io.gfile.copy(path, os.path.join(target, os.path.basename(path)))
    return os.path.join(target, os.path.basename(checkpoint))


def _step(model):
    latest = model.latest_checkpoint()
    return 0 if latest is None else int(latest.rsplit("-", 1)[1])


class _ValidateEachCheckpoint(tf.compat.v1.train.CheckpointSaverListener):
    """Validates every checkpoint training saves (one per round), keeps the best one and
    asks training to stop after `patience` rounds without a better validation loss."""

    def __init__(self, model, validation_input, validation_steps, keep_initial, patience):
        self._model = model
        self._patience = patience
        self._keep_initial = keep_initial
        self.initial = None  # the step-0 checkpoint's copy in `keep_initial`
        self._input = validation_input
        self._steps = validation_steps
        self.best = None  # (checkpoint copy, metrics, step, loss)
        self.stale = 0
        self.last_step = None

    def after_save(self, session, global_step_value):
        if global_step_value == 0:  # the untrained model: nothing to compare with yet
            if self._keep_initial:
                self.initial = _keep(self._model.latest_checkpoint(), self._keep_initial)
            return False
        checkpoint = self._model.latest_checkpoint()
        metrics = self._model.evaluate(
            self._input, steps=self._steps, checkpoint_path=checkpoint, name="validation"
        )
        loss = validation_loss(metrics)
        self.last_step = global_step_value
        if self.best is None or loss < self.best[3] - MIN_DELTA * abs(self.best[3]):
            kept = _keep(checkpoint, os.path.join(self._model.model_dir, BEST_CHECKPOINT_DIR))
            self.best = (kept, metrics, global_step_value, loss)
            self.stale = 0
        elif math.isfinite(loss) or not math.isfinite(self.best[3]):
            self.stale += 1
        progress.report(
            f"step {global_step_value:,}: validation loss {loss:.4g}"
            + (
                " (best so far)"
                if not self.stale
                else f" ({self.stale} of {self._patience} not better)"
            )
        )
        return self.stale >= self._patience


def train(
    model,
    train_input,
    length,
    validation_input=None,
    validation_steps=None,
    keep_initial=None,
    patience=PATIENCE,
):
    """Trains `model` for `length` and returns the `Outcome`.

    Without early stopping: `length.steps` steps, then (when `validation_input` is given) one
    validation of the final checkpoint. With it: `model`'s RunConfig must save a checkpoint
    every `length.round_steps()` steps; each one is validated and the best kept, training
    stopped after `patience` rounds without a better one (module doc); with `keep_initial` (a folder) the step-0 one copied there (`Outcome.initial`: what
    `Estimator.restart` fits the same model afresh from)."""
    started = time.monotonic()
    first = _step(model)
    if not length.early_stopping:
        model.train(train_input, max_steps=length.steps)
        step = _step(model)
        validation = None
        if validation_input is not None:
            validation = model.evaluate(validation_input, steps=validation_steps, name="validation")
        reason = f"{length.steps:,} steps as set" if step >= length.steps else "model complete"
        elapsed = time.monotonic() - started
        return Outcome(model.latest_checkpoint(), step, validation, step - first, reason, elapsed)
    listener = _ValidateEachCheckpoint(
        model, validation_input, validation_steps, keep_initial, patience
    )
    model.train(train_input, max_steps=length.steps, saving_listeners=[listener])
    step = _step(model)
    if listener.best is None or not math.isfinite(listener.best[3]):
        raise ValueError(
            f"Trainer: the validation loss is not a finite number at any checkpoint "
            f"(steps {first:,} to {step:,}): training diverged."
        )
    kept, metrics, best_step, best_loss = listener.best
    if listener.stale >= patience:
        reason = (
            f"validation loss stopped improving: best {best_loss:.4g} at step {best_step:,}, "
            f"none better in the {patience} round{'s' * (patience != 1)} after it"
        )
    elif step < length.steps:
        reason = f"model complete at step {step:,}, best validation loss at step {best_step:,}"
    else:
        cap = f"{length.steps:,} steps"
        if length.epochs is not None:
            cap = f"{length.epochs:g} epochs ({cap})"
        reason = f"reached the cap of {cap}, best validation loss at step {best_step:,}"
    elapsed = time.monotonic() - started
    return Outcome(kept, best_step, metrics, step - first, reason, elapsed, listener.initial)
