"""How long the Trainer trains: the one rule that the definition, the config and the Trainer
read.

`train_steps` or `train_epochs`, one of the two, fixes the length: that many steps, or as
many as that many passes over the train split take at the global batch size; an option for
either replaces both. Given neither, the length follows the data: the Trainer holds out
every `VALIDATION_EVERY`-th train example and stops early on it (components/trainer/
stopping.py), at most at a cap in epochs that shrinks as the row count grows, or at the
model's own end (boosted trees after their last tree). Across a cluster nothing stops early:
only the chief saves checkpoints, so only it could validate them.

No TensorFlow import: the definition and the config read it on the command line.
"""

import dataclasses
import math

VALIDATION_EVERY = 10  # one train example in ten is held out for validation
# Below this many train rows the candidates are compared by cross-validation over FOLDS
# folds, fold k the examples whose validation hash bucket is k modulo FOLDS (so fold 0
# holds today's held-out tenth): below 1,000 held-out rows (a tenth of 10,000) the spread of
# a log loss over them swamps the gaps between candidates where a class is rare (a binary
# label of 3% positives: 633 held-out rows, 20 positives, chose a model of AUC 0.9615 where
# 5-fold cross-validation chose one of 0.9663: docs/benchmarks/2026-12-05-zero-code-split.md).
CROSS_VALIDATION_BELOW_ROWS = 10_000
FOLDS = 5
# The cap: this many examples seen, in whole epochs, at least 1 epoch and at most 100.
CAP_EXAMPLES = 640_000
MIN_CAP_EPOCHS, MAX_CAP_EPOCHS = 1, 100
# A round is an epoch, but at least this many steps (tiny data) and at most that many (big).
MIN_ROUND_STEPS, MAX_ROUND_STEPS = 50, 1000
# Validation examples read per round, at most: enough for a steady loss, cheap on big data.
MAX_VALIDATION_EXAMPLES = 20_000


def check(train_steps, train_epochs):
    """ValueError, naming the setting, for a length that cannot work."""
    if train_epochs is not None and train_steps is not None:
        raise ValueError("train_steps and train_epochs: give one of the two.")
    if train_epochs is not None and not train_epochs > 0:
        raise ValueError(f"train_epochs must be positive, got {train_epochs}.")
    if train_steps is not None and train_steps <= 0:
        raise ValueError(f"train_steps must be positive, got {train_steps}.")


def overriding(overrides):
    """`overrides` (settings by field) where one that sets either length replaces the other
    too: a definition's `[training] steps` gives way to `--train-epochs`."""
    overrides = dict(overrides or {})
    for given, other in (("train_steps", "train_epochs"), ("train_epochs", "train_steps")):
        if overrides.get(given) is not None:
            overrides.setdefault(other, None)
    return overrides


def stops_early(train_steps, train_epochs, in_a_cluster=False):
    """Whether training stops on a held-out part of the train split (module doc)."""
    return not (train_steps or train_epochs) and not in_a_cluster


def folds(train_rows, candidates, train_steps, train_epochs, in_a_cluster, below_rows):
    """FOLDS when the model choice cross-validates: several `candidates`, stopping early (no
    steps or epochs set, not in a cluster) and fewer than `below_rows` train rows; else 0."""
    if candidates < 2 or not stops_early(train_steps, train_epochs, in_a_cluster):
        return 0
    return FOLDS if train_rows and train_rows < below_rows else 0


def fold_fit_rows(train_rows):
    """About the train rows a model fits on beside one fold held out."""
    return train_rows - train_rows // FOLDS


def fit_rows(train_rows, holds_out):
    """The train rows a model fits on: all of them, or all but the held-out part."""
    if not holds_out or not train_rows:
        return train_rows
    return train_rows - train_rows // VALIDATION_EVERY


def validation_rows(train_rows):
    """Held-out examples each validation reads: the held-out part, at most (and, the row
    count unknown, up to) `MAX_VALIDATION_EXAMPLES`."""
    held_out = max(train_rows // VALIDATION_EVERY, 1) if train_rows else math.inf
    return min(held_out, MAX_VALIDATION_EXAMPLES)


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
    in_a_cluster=False,
    model_steps=None,
    round_steps=None,
):
    """The `TrainingLength` for the settings (module doc): explicit steps or epochs win; with
    neither, the model's own end (`model_steps`, boosted trees) or the cap in epochs that
    follows `train_rows`, stopping early unless `in_a_cluster`."""
    check(train_steps, train_epochs)
    if train_steps:
        return TrainingLength(int(train_steps))
    if train_rows is None:
        raise ValueError("Trainer: train_epochs or early stopping needs the train row count.")
    early = stops_early(train_steps, train_epochs, in_a_cluster)
    if not train_epochs and model_steps:
        return TrainingLength(model_steps, early_stopping=early, round=round_steps)
    epochs = float(train_epochs) if train_epochs else float(cap_epochs(train_rows))
    steps = max(1, math.ceil(epochs * train_rows / global_batch))
    return TrainingLength(steps, epochs, train_rows, global_batch, early, round_steps)
