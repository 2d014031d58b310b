"""How long the Trainer trains, and why it stopped.

Given `train_steps` or `train_epochs` it trains exactly that long. Given neither, the length
follows the data: the Trainer holds out every `VALIDATION_EVERY`-th train example, trains in
rounds and evaluates each round's checkpoint on that held-out part; it stops when the
validation loss has not improved for `PATIENCE` rounds (a plateau), when the model says it is
complete (boosted trees after their last tree), or at a cap in epochs that shrinks as the row
count grows. The best round's checkpoint is the one exported. The summary carries the reason.

The loss is the head's `average_loss` (log loss for classifiers, squared error for
regressors): the proper score for probabilities, so stopping on it keeps them calibrated.
"""

import dataclasses
import math
import os
import time

import tensorflow as tf

from components import progress

VALIDATION_EVERY = 10  # one train example in ten is held out for validation
PATIENCE = 4  # rounds without a better validation loss before stopping
MIN_DELTA = 1e-4  # relative improvement that counts as better
# The cap: this many examples seen, in whole epochs, at least 1 epoch and at most 100.
CAP_EXAMPLES = 640_000
MIN_CAP_EPOCHS, MAX_CAP_EPOCHS = 1, 100
# A round is an epoch, but at least this many steps (tiny data) and at most that many (big).
MIN_ROUND_STEPS, MAX_ROUND_STEPS = 50, 1000
# Validation examples read per round, at most: enough for a steady loss, cheap on big data.
MAX_VALIDATION_EXAMPLES = 20_000
BEST_CHECKPOINT_DIR = "best_checkpoint"


@dataclasses.dataclass(frozen=True)
class TrainingLength:
    """How long the Trainer trains: `steps` (with early stopping, the most), the epochs they
    came from, if any; `early_stopping` when it stops on the validation loss, validating
    every `round` steps (None: an epoch, within bounds)."""

    steps: int
    epochs: float | None = None
    train_rows: int | None = None
    global_batch_size: int | None = None
    early_stopping: bool = False
    round: int | None = None

    def describe(self):
        text = f"{self.steps:,} steps"
        if self.epochs is not None:
            text += (
                f" ({self.epochs:g} epochs of {self.train_rows:,} train rows "
                f"at a global batch of {self.global_batch_size:,})"
            )
        return f"at most {text}, stopping early" if self.early_stopping else text

    def round_steps(self):
        """Steps between two validations (module doc)."""
        if self.round is not None:
            return min(self.round, self.steps)
        epoch = math.ceil(self.train_rows / self.global_batch_size)
        return min(max(epoch, MIN_ROUND_STEPS), MAX_ROUND_STEPS, self.steps)


def cap_epochs(train_rows):
    """Epochs the early-stopping cap allows for `train_rows` rows (module doc)."""
    return min(max(math.ceil(CAP_EXAMPLES / max(train_rows, 1)), MIN_CAP_EPOCHS), MAX_CAP_EPOCHS)


def plan(
    train_steps,
    train_epochs,
    train_rows,
    global_batch,
    early_stopping,
    model_steps=None,
    round_steps=None,
):
    """The `TrainingLength` for the settings. Explicit steps or epochs win. With neither: the
    model's own end (`model_steps`, boosted trees) or the cap in epochs that follows
    `train_rows`, stopping early when `early_stopping` (a validation part is held out)."""
    if train_steps:
        return TrainingLength(int(train_steps))
    if train_rows is None:
        raise ValueError("Trainer: train_epochs or early stopping needs the train row count.")
    if not train_epochs and model_steps:
        return TrainingLength(model_steps, early_stopping=early_stopping, round=round_steps)
    epochs = float(train_epochs) if train_epochs else float(cap_epochs(train_rows))
    steps = max(1, math.ceil(epochs * train_rows / global_batch))
    stop_early = early_stopping and not train_epochs
    return TrainingLength(steps, epochs, train_rows, global_batch, stop_early, round_steps)


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


def validation_loss(metrics):
    """The loss early stopping and the model choice compare (module doc)."""
    return float(metrics.get("average_loss", metrics["loss"]))


def _keep(checkpoint, model_dir):
    """A copy of `checkpoint`'s files in `<model_dir>/best_checkpoint/`, out of reach of the
    rotation that deletes old checkpoints; returns the copy's path."""
    target = os.path.join(model_dir, BEST_CHECKPOINT_DIR)
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
    asks training to stop after `PATIENCE` rounds without a better validation loss."""

    def __init__(self, model, validation_input, validation_steps):
        self._model = model
        self._input = validation_input
        self._steps = validation_steps
        self.best = None  # (checkpoint copy, metrics, step, loss)
        self.stale = 0
        self.last_step = None

    def after_save(self, session, global_step_value):
        if global_step_value == 0:
            return False  # the untrained model: nothing to compare with yet
        checkpoint = self._model.latest_checkpoint()
        metrics = self._model.evaluate(
            self._input, steps=self._steps, checkpoint_path=checkpoint, name="validation"
        )
        loss = validation_loss(metrics)
        self.last_step = global_step_value
        if self.best is None or loss < self.best[3] - MIN_DELTA * abs(self.best[3]):
            kept = _keep(checkpoint, self._model.model_dir)
            self.best = (kept, metrics, global_step_value, loss)
            self.stale = 0
        elif math.isfinite(loss) or not math.isfinite(self.best[3]):
            self.stale += 1
        progress.report(
            f"step {global_step_value:,}: validation loss {loss:.4g}"
            + (" (best so far)" if not self.stale else f" ({self.stale} of {PATIENCE} not better)")
        )
        return self.stale >= PATIENCE


def train(model, train_input, length, validation_input=None, validation_steps=None):
    """Trains `model` for `length` and returns the `Outcome`.

    Without early stopping: `length.steps` steps, then (when `validation_input` is given) one
    validation of the final checkpoint. With it: `model`'s RunConfig must save a checkpoint
    every `length.round_steps()` steps; each one is validated and the best kept (module doc)."""
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
    listener = _ValidateEachCheckpoint(model, validation_input, validation_steps)
    model.train(train_input, max_steps=length.steps, saving_listeners=[listener])
    step = _step(model)
    if listener.best is None or not math.isfinite(listener.best[3]):
        raise ValueError(
            f"Trainer: the validation loss is not a finite number at any checkpoint "
            f"(steps {first:,} to {step:,}): training diverged."
        )
    kept, metrics, best_step, best_loss = listener.best
    if listener.stale >= PATIENCE:
        reason = (
            f"validation loss stopped improving: best {best_loss:.4g} at step {best_step:,}, "
            f"none better in the {PATIENCE} rounds after it"
        )
    elif step < length.steps:
        reason = f"model complete at step {step:,}, best validation loss at step {best_step:,}"
    else:
        cap = f"{length.steps:,} steps"
        if length.epochs is not None:
            cap = f"{length.epochs:g} epochs ({cap})"
        reason = f"reached the cap of {cap}, best validation loss at step {best_step:,}"
    elapsed = time.monotonic() - started
    return Outcome(kept, best_step, metrics, step - first, reason, elapsed)
