"""The training length's one rule (components/trainer/length.py): steps or epochs, else
early stopping up to a cap that follows the rows; never across a cluster."""

import pytest

from components.trainer import length
from components.trainer.length import TrainingLength


def test_the_plan_follows_the_rows_and_explicit_settings_win():
    # Neither steps nor epochs: stop early, capped at epochs that shrink as rows grow.
    small = length.plan(None, None, 2_000, 64)
    big = length.plan(None, None, 1_000_000, 64)
    assert small.early_stopping and small.epochs == length.MAX_CAP_EPOCHS
    assert big.epochs == length.MIN_CAP_EPOCHS and big.steps == 15_625
    assert big.round_steps() == length.MAX_ROUND_STEPS
    assert small.round_steps() == length.MIN_ROUND_STEPS  # an epoch is 32 steps
    assert small.describe() == (
        "at most 3,125 steps (100 epochs of 2,000 train rows at a global batch of 64), "
        "stopping early"
    )
    # Explicit steps or epochs: exactly that, no early stop.
    assert length.plan(500, None, 2_000, 64) == TrainingLength(500)
    epochs = length.plan(None, 2, 2_000, 64)
    assert (epochs.steps, epochs.early_stopping) == (63, False)
    # A model with its own end (boosted trees' last tree) trains up to it, stopping early.
    trees = length.plan(None, None, 2_000, 2_000, model_steps=1200, round_steps=60)
    assert (trees.steps, trees.round_steps(), trees.early_stopping) == (1200, 60, True)
    with pytest.raises(ValueError, match="train row count"):
        length.plan(None, None, None, 64)


def test_across_a_cluster_nothing_stops_early():
    capped = length.plan(None, None, 2_000, 64, in_a_cluster=True)
    assert (capped.steps, capped.early_stopping) == (3_125, False)
    assert not length.stops_early(None, None, in_a_cluster=True)
    assert length.stops_early(None, None) and not length.stops_early(10, None)
    assert not length.stops_early(None, 0.5)


@pytest.mark.parametrize(
    "steps, epochs, message",
    [
        (10, 2.0, "train_steps and train_epochs: give one of the two"),
        (0, None, "train_steps must be positive, got 0"),
        (None, -1.0, "train_epochs must be positive, got -1.0"),
    ],
)
def test_a_length_that_cannot_work_is_refused_naming_the_setting(steps, epochs, message):
    with pytest.raises(ValueError, match=message):
        length.check(steps, epochs)
    with pytest.raises(ValueError, match=message):
        length.plan(steps, epochs, 2_000, 64)


def test_an_override_of_either_length_replaces_both():
    assert length.overriding({"train_epochs": 3.0}) == {"train_epochs": 3.0, "train_steps": None}
    assert length.overriding({"train_steps": 9}) == {"train_steps": 9, "train_epochs": None}
    assert length.overriding({"train_steps": None, "eval_steps": 5}) == {
        "train_steps": None,
        "eval_steps": 5,
    }
    assert length.overriding(None) == {}


def test_the_held_out_part_is_a_tenth_and_validation_reads_at_most_its_cap():
    assert length.fit_rows(1_000, holds_out=True) == 900
    assert length.fit_rows(1_000, holds_out=False) == 1_000
    assert length.fit_rows(None, holds_out=True) is None
    assert length.validation_rows(1_000) == 100
    assert length.validation_rows(5) == 1
    assert length.validation_rows(10_000_000) == length.MAX_VALIDATION_EXAMPLES
    assert length.validation_rows(None) == length.MAX_VALIDATION_EXAMPLES


def test_the_model_choice_cross_validates_below_ten_thousand_train_rows_by_default():
    from pipeline.config import PipelineConfig

    below = PipelineConfig("rows.csv", "label").cross_validation_below_rows
    assert below == 10_000  # docs/benchmarks/2026-12-05-zero-code-split.md chose it
    assert length.folds(9_999, 3, None, None, False, below) == length.FOLDS == 5
    assert length.folds(10_000, 3, None, None, False, below) == 0  # a tenth held out
    # Nothing to choose, a length set, or a cluster: no folds; 0 turns them off.
    assert length.folds(500, 1, None, None, False, below) == 0
    assert length.folds(500, 3, 200, None, False, below) == 0
    assert length.folds(500, 3, None, None, True, below) == 0
    assert length.folds(500, 3, None, None, False, 0) == 0
