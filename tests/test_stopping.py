"""Early stopping on the held-out part (the length's rule: tests/test_training_length.py)."""

import logging

import numpy as np
import pytest
import tensorflow as tf

from components import estimator, progress
from components.trainer import stopping
from components.trainer.length import TrainingLength

X = tf.feature_column.numeric_column("x")


def _data(seed, rows=512):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows).astype(np.float32)
    y = (3.0 * x + 1.0 + rng.normal(scale=0.5, size=rows)).astype(np.float32)
    return x, y


def _input(seed, repeat):
    x, y = _data(seed)

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if repeat:
            dataset = dataset.shuffle(512, seed=seed).repeat()
        return dataset.batch(32)

    return input_fn


def _regressor(tmp_path, optimizer, round_steps):
    config = estimator.RunConfig(
        model_dir=str(tmp_path), tf_random_seed=1, save_checkpoints_steps=round_steps
    )
    return estimator.LinearRegressor([X], optimizer=optimizer, config=config)


def test_a_plateau_stops_training_and_the_best_checkpoint_is_kept(tmp_path, caplog):
    # Adam at 0.5 fits y = 3x + 1 in a few dozen steps: then the loss only wanders.
    model = _regressor(tmp_path, lambda: tf.keras.optimizers.Adam(0.5), 20)
    length = TrainingLength(2000, early_stopping=True, round=20)
    with caplog.at_level(logging.INFO, logger=progress.LOGGER):
        outcome = stopping.train(model, _input(1, True), length, _input(2, False), None)

    assert outcome.reason.startswith("validation loss stopped improving"), outcome.reason
    assert outcome.steps_run < 2000
    assert outcome.steps_run == outcome.step + stopping.PATIENCE * 20
    # What is exported is the best checkpoint, kept apart from the rotation.
    assert outcome.checkpoint.startswith(str(tmp_path / stopping.BEST_CHECKPOINT_DIR))
    best = model.evaluate(_input(2, False), checkpoint_path=outcome.checkpoint)
    assert best["average_loss"] == pytest.approx(outcome.validation["average_loss"])
    assert outcome.validation["average_loss"] < 0.4  # the noise's variance is 0.25
    # each round is a progress line, the last the one that stopped it
    rounds = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
    assert len(rounds) == outcome.steps_run // 20
    assert rounds[0].startswith("step 20: validation loss ") and "(best so far)" in rounds[0]
    assert rounds[-1].endswith(f"({stopping.PATIENCE} of {stopping.PATIENCE} not better)")


def test_patience_is_the_rounds_without_a_better_loss_before_stopping(tmp_path):
    model = _regressor(tmp_path, lambda: tf.keras.optimizers.Adam(0.5), 20)
    length = TrainingLength(2000, early_stopping=True, round=20)
    outcome = stopping.train(model, _input(1, True), length, _input(2, False), None, patience=1)
    assert outcome.steps_run == outcome.step + 20
    assert outcome.reason.endswith("none better in the 1 round after it"), outcome.reason


def test_a_falling_loss_trains_to_the_cap(tmp_path):
    # Plain SGD at 0.002 is still improving after 300 steps: no stop before the cap.
    model = _regressor(tmp_path, lambda: tf.keras.optimizers.SGD(0.002), 50)
    length = TrainingLength(
        300, epochs=18.75, train_rows=512, global_batch_size=32, early_stopping=True, round=50
    )
    outcome = stopping.train(model, _input(1, True), length, _input(2, False), None)

    assert outcome.reason.startswith("reached the cap of 18.75 epochs (300 steps)"), outcome.reason
    assert (outcome.steps_run, outcome.step) == (300, 300)


def test_explicit_steps_train_exactly_that_long(tmp_path):
    model = _regressor(tmp_path, "Ftrl", 100)
    outcome = stopping.train(model, _input(1, True), TrainingLength(120), _input(2, False), None)
    assert (outcome.step, outcome.reason) == (120, "120 steps as set")
    assert "average_loss" in outcome.validation


def test_a_restarted_model_fits_as_a_fresh_one_without_tracing_again(tmp_path):
    """Cross-validation's later folds: the first fit's step-0 checkpoint kept, the same
    Estimator restarted in another model_dir fits exactly as a new one would there, with
    the train and eval functions it traced the first time."""
    length = TrainingLength(400, early_stopping=True, round=40)
    sgd = lambda: tf.keras.optimizers.SGD(0.05)  # noqa: E731
    model = _regressor(tmp_path / "first", sgd, 40)
    first = stopping.train(
        model, _input(1, True), length, _input(2, False), None, keep_initial=str(tmp_path / "init")
    )
    assert first.initial.startswith(str(tmp_path / "init"))
    assert model.get_variable_value("linear/linear_model/x/weights") != 0
    traced = dict(model._functions)

    config = estimator.RunConfig(
        model_dir=str(tmp_path / "again"), tf_random_seed=1, save_checkpoints_steps=40
    )
    model.restart(config, first.initial)
    again = stopping.train(model, _input(3, True), length, _input(4, False), None)
    fresh_model = _regressor(tmp_path / "fresh", sgd, 40)
    fresh = stopping.train(fresh_model, _input(3, True), length, _input(4, False), None)

    assert model.model_dir == str(tmp_path / "again") and model._functions == traced
    assert again.step == fresh.step and again.reason == fresh.reason
    assert again.validation["average_loss"] == pytest.approx(fresh.validation["average_loss"])
    for name in fresh_model.get_variable_names():
        np.testing.assert_allclose(
            model.get_variable_value(name), fresh_model.get_variable_value(name), rtol=1e-6
        )
    with pytest.raises(ValueError, match="without a checkpoint"):
        model.restart(config, first.initial)  # "again" holds checkpoints now
