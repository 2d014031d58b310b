"""The zero-code model choice: the auto candidates, each stopped early on held-out data, the
lowest validation loss kept; trees win where the signal is an interaction, a linear model
where it is many small linear effects on few rows."""

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from components.auto.model import candidate_estimator
from components.trainer import candidates, stopping
from components.trainer import length as training_length

pytestmark = pytest.mark.slow  # trains real models, a few seconds each


def _numbers(names):
    return [tf.feature_column.numeric_column(n) for n in names]


def _inputs(x, y, rows_fit):
    """(fit input_fn for a batch size, or None for the whole part, validation input_fn)."""
    names = [f"x{i}" for i in range(x.shape[1])]

    def features(part):
        return {n: x[part, i] for i, n in enumerate(names)}, y[part]

    fit, validation = slice(0, rows_fit), slice(rows_fit, len(y))

    def fit_input(batch_size):
        def input_fn():
            data = tf.data.Dataset.from_tensor_slices(features(fit))
            if batch_size is None:
                return data.batch(rows_fit).cache().repeat()
            return data.shuffle(rows_fit, seed=1).repeat().batch(batch_size)

        return input_fn

    def validation_input():
        return tf.data.Dataset.from_tensor_slices(features(validation)).batch(256)

    return names, fit_input, validation_input


def _choose(tmp_path, x, y, names=("linear", "boosted_trees")):
    rows_fit = len(y) * 9 // 10
    columns, fit_input, validation_input = _inputs(x, y, rows_fit)
    deep = _numbers(columns)

    def fit(model, model_dir):
        feeding = candidates.feeding(model.build(estimator.RunConfig(), None), rows_fit, 32)
        length = training_length.plan(
            None,
            None,
            rows_fit,
            feeding.batch_size or rows_fit,
            model_steps=feeding.steps,
            round_steps=feeding.round_steps,
        )
        run_config = estimator.RunConfig(
            model_dir=model_dir, tf_random_seed=1, save_checkpoints_steps=length.round_steps()
        )
        built = model.build(run_config, None)
        train_input = fit_input(feeding.batch_size)
        return (
            built,
            length,
            stopping.train(built, train_input, length, validation_input),
            "default",
        )

    models = [
        candidates.ModelToFit(
            name,
            lambda config, warm, name=name: candidate_estimator(
                name, "binary", [], deep, ["0", "1"], config, {}, warm, rows_fit
            ),
        )
        for name in names
    ]
    return candidates.fit_and_choose(models, str(tmp_path), fit)


def test_trees_win_on_an_interaction(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(2000, 4)).astype(np.float32)
    y = np.where((x[:, 0] > 0) != (x[:, 1] > 0), "1", "0")  # xor: no line separates it
    chosen = _choose(tmp_path, x, y)
    assert chosen.name == "boosted_trees"
    record = candidates.record(chosen)
    assert [c["name"] for c in record["candidates"]] == ["boosted_trees", "linear"]
    trees, linear = record["candidates"]
    assert trees["chosen"] and not linear["chosen"]
    assert trees["validation_metrics"]["auc"] > 0.95 > 0.7 > linear["validation_metrics"]["auc"]
    assert record["reason"].startswith("lowest validation loss of 2 candidates")
    # Of the loser's folder only its event files stay (its curves); the winner's best
    # checkpoint stays.
    kept = [p.name for p in (tmp_path / "candidates" / "linear").rglob("*") if p.is_file()]
    assert kept and all(name.startswith("events.out.tfevents") for name in kept), kept
    assert tf.io.gfile.exists(chosen.outcome.checkpoint + ".index")


def test_a_linear_model_wins_on_many_small_linear_effects(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3000, 30)).astype(np.float32)
    logits = x @ rng.normal(scale=0.3, size=30)
    y = np.where(rng.uniform(size=3000) < 1 / (1 + np.exp(-logits)), "1", "0")
    chosen = _choose(tmp_path, x, y)
    assert chosen.name == "linear", candidates.record(chosen)
