"""The zero-code model choice: the auto candidates, each stopped early on held-out data (or
cross-validated on small data), the lowest validation loss kept; trees win where the signal
is an interaction, a linear model where it is many small linear effects on few rows, and
cross-validation on 500 rows agrees with a large holdout and resists an overfit network."""

import dataclasses

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


class _InMemory:
    """The executor's `_Training` over arrays (`fit`, `labels`, `predict`): the held-out part
    is the last tenth, fold k the rows whose index is k modulo `FOLDS`."""

    classifier = True

    def __init__(self, x, y, max_steps=None):
        self.x, self.y = x, y
        self.max_steps = max_steps  # a cap on each fit stopped early: a quicker test
        self.names = [f"x{i}" for i in range(x.shape[1])]
        self.columns = _numbers(self.names)

    def _rows(self, fold, fit):
        index = np.arange(len(self.y))
        if fold is None:
            held_out = index >= len(self.y) * 9 // 10
        else:
            held_out = index % training_length.FOLDS == fold
        return index[~held_out] if fit else index[held_out]

    def _input(self, rows, batch_size=None, repeat=False):
        features = {n: self.x[rows, i] for i, n in enumerate(self.names)}

        def input_fn():
            data = tf.data.Dataset.from_tensor_slices((features, self.y[rows]))
            if not repeat:
                return data.batch(256)
            if batch_size is None:
                return data.batch(len(rows)).cache().repeat()
            return data.shuffle(len(rows), seed=1).repeat().batch(batch_size)

        return input_fn

    def fit(self, model, model_dir, fold=None, steps=None, restart=None, keep_initial=None):
        rows = np.arange(len(self.y)) if steps else self._rows(fold, True)
        feeding = candidates.feeding(model.build(estimator.RunConfig(), None), len(rows), 32)
        if steps:
            if feeding.batch_size is not None:
                steps = -(-steps * len(rows) // len(self._rows(0, True)))
            length = training_length.TrainingLength(steps)
        else:
            length = training_length.plan(
                None,
                None,
                len(rows),
                feeding.batch_size or len(rows),
                model_steps=feeding.steps,
                round_steps=feeding.round_steps,
            )
            if self.max_steps:
                length = dataclasses.replace(length, steps=min(length.steps, self.max_steps))
        run_config = estimator.RunConfig(
            model_dir=model_dir,
            tf_random_seed=1,
            save_checkpoints_steps=length.round_steps() if length.early_stopping else 10_000,
        )
        if restart is not None:  # an earlier fold's Estimator, fitted afresh
            built, initial = restart
            built.restart(run_config, initial)
        else:
            built = model.build(run_config, None)
        train_input = self._input(rows, feeding.batch_size, True)
        validation = None if steps else self._input(self._rows(fold, False))
        patience = feeding.fold_patience if fold is not None else None
        outcome = stopping.train(
            built,
            train_input,
            length,
            validation,
            None,
            keep_initial,
            patience or stopping.PATIENCE,
        )
        return built, length, outcome, "default"

    def labels(self, fold=None):
        return self.y[self._rows(fold, False)].astype(int)

    def predict(self, model, checkpoint, fold=None):
        batches = model.predict(
            self._input(self._rows(fold, False)),
            checkpoint_path=checkpoint,
            yield_single_examples=False,
        )
        return np.concatenate([b["probabilities"] for b in batches]).astype(np.float64)


def _choose(tmp_path, x, y, names=("linear", "boosted_trees"), folds=0, small=False):
    """The choice among the candidates `names`; `small`: fewer, shallower trees and a narrower
    network, so that cross-validation's many fits stay quick."""
    training = _InMemory(x, y, max_steps=300 if small else None)
    rows_fit = len(y) * 9 // 10
    hparams = {"hidden_units": [16]} if small else {}

    def build(name, config, warm):
        if small and name == "boosted_trees":
            return estimator.BoostedTreesClassifier(
                training.columns,
                1,
                n_trees=30,
                max_depth=3,
                learning_rate=0.3,
                n_classes=2,
                label_vocabulary=["0", "1"],
                train_in_memory=True,
                config=config,
            )
        return candidate_estimator(
            name, "binary", [], training.columns, ["0", "1"], config, hparams, warm, rows_fit
        )

    models = [
        candidates.ModelToFit(name, lambda config, warm, name=name: build(name, config, warm))
        for name in names
    ]
    return candidates.fit_and_choose(models, str(tmp_path), training, folds)


def test_trees_win_on_an_interaction(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(2000, 4)).astype(np.float32)
    y = np.where((x[:, 0] > 0) != (x[:, 1] > 0), "1", "0")  # xor: no line separates it
    choice = _choose(tmp_path, x, y)
    record = choice.record
    assert record["served"] == "boosted_trees", record
    (chosen,) = choice.members
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
    choice = _choose(tmp_path, x, y)
    assert choice.record["served"] == "linear", choice.record


def test_cross_validation_on_500_rows_picks_what_a_large_holdout_picks(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(500, 4)).astype(np.float32)
    y = np.where((x[:, 0] > 0) != (x[:, 1] > 0), "1", "0")  # the interaction trees win above
    record = _choose(tmp_path, x, y, folds=5, small=True).record
    assert record["best_single"] == "boosted_trees", record
    assert record["rows"] == 500 and record["folds"] == 5
    trees = next(c for c in record["candidates"] if c["name"] == "boosted_trees")
    assert len(trees["fold_losses"]) == 5 and trees["loss_spread"] > 0
    # the trivial model (the class shares) beside them, its loss the labels' entropy
    assert trees["validation_loss"] < 0.5 * record["trivial"]["validation_loss"]
    assert "5-fold cross-validation over 500 train rows" in record["reason"]
    # each candidate's step-0 checkpoint, kept for its later folds and refit, is gone
    assert not list(tmp_path.rglob(candidates.INITIAL_DIR))


def test_cross_validation_does_not_pick_an_overfit_network_on_500_rows(tmp_path):
    """A weak linear signal among many noise columns: a network fits the noise, and on a
    tenth held out (50 rows) its loss swings enough to win by chance; over five folds the
    linear model's lower loss shows."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(500, 40)).astype(np.float32)
    logits = 0.8 * x[:, 0] - 0.6 * x[:, 1]
    y = np.where(rng.uniform(size=500) < 1 / (1 + np.exp(-logits)), "1", "0")
    choice = _choose(tmp_path, x, y, names=("linear", "wide_and_deep"), folds=5, small=True)
    record = choice.record
    assert record["best_single"] == "linear", record
    assert choice.weights.get("linear", 0) >= 0.5, record
    # the members served were refit on all 500 rows, for the folds' mean best step
    assert all(m.outcome.validation is None for m in choice.members)
    assert record["served_loss"] <= record["single_losses"]["linear"]


def test_regression_trees_with_ordered_categories_beat_a_linear_model(tmp_path):
    """The zero-code regression trees, their category ids in the order of the fit rows'
    mean label (components/auto/ordered_categories.py), against the linear candidate on a
    price that is an interaction of two numbers plus 40 categories' effects: the trees
    win, and cut the category's order where one id against the rest would take many."""
    from components.auto import model as auto_model
    from components.auto import ordered_categories

    rng = np.random.default_rng(3)
    rows, ids = 3000, 40
    x = rng.uniform(-1, 1, size=(rows, 2)).astype(np.float32)
    cat = rng.integers(0, ids, rows)
    effect = rng.normal(0, 1, ids)
    y = (3 * ((x[:, 0] > 0) != (x[:, 1] > 0)) + effect[cat] + rng.normal(0, 0.3, rows)).astype(
        np.float32
    )
    features = {"x0": x[:, 0], "x1": x[:, 1], "cat": cat}
    fit, test = slice(0, 2500), slice(2500, rows)
    part = {k: v[fit] for k, v in features.items()}
    ids_column = tf.feature_column.categorical_column_with_identity("cat", ids)
    deep = [*_numbers(["x0", "x1"]), tf.feature_column.indicator_column(ids_column)]

    sums = ordered_categories.label_sums([(part, y[fit])], ordered_categories.identity_keys(deep))
    buckets, count = ordered_categories.id_buckets(*sums["cat"])
    assert count == ids and sorted(buckets) == list(range(ids))
    smoothed = (sums["cat"][0] + 10 * y[fit].mean()) / (sums["cat"][1] + 10)
    assert list(np.argsort(buckets)) == list(np.argsort(smoothed, kind="stable"))

    def rmse(name, columns, steps, input_fn):
        config = estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=1)
        model = candidate_estimator(
            name,
            "regression",
            [ids_column],
            columns,
            None,
            config,
            {},
            None,
            2500,
            label_moments=(float(y[fit].mean()), float(y[fit].std())),
        )
        model.train(input_fn, max_steps=steps)
        out = model.predict(
            lambda: tf.data.Dataset.from_tensor_slices(
                {k: v[test] for k, v in features.items()}
            ).batch(500),
            yield_single_examples=False,
        )
        predicted = np.concatenate([b["predictions"].reshape(-1) for b in out])
        return float(np.sqrt(np.mean((predicted - y[test]) ** 2)))

    whole = lambda: tf.data.Dataset.from_tensors((part, y[fit])).repeat()  # noqa: E731
    batches = lambda: (  # noqa: E731
        tf.data.Dataset.from_tensor_slices((part, y[fit])).shuffle(2500, seed=1).repeat().batch(128)
    )
    trees = rmse("boosted_trees", ordered_categories.ordered_columns(deep, sums), 150, whole)
    linear = rmse("linear", deep, 600, batches)
    assert auto_model.orders_categories("boosted_trees", "regression")
    assert trees < 0.6 * linear, (trees, linear)


def _served_probabilities(model, folder, columns, features):
    """The positive class's probabilities of `model` exported through a parsing receiver
    over `columns` and loaded back, for the rows of `features` as tf.Examples."""
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = model.export_saved_model(str(folder), receiver)
    served = tf.saved_model.load(path.decode() if isinstance(path, bytes) else path)
    examples = []
    for row in range(len(features["cat"])):
        feature = {
            "x0": tf.train.Feature(float_list=tf.train.FloatList(value=[features["x0"][row]])),
            "x1": tf.train.Feature(float_list=tf.train.FloatList(value=[features["x1"][row]])),
            "cat": tf.train.Feature(int64_list=tf.train.Int64List(value=[features["cat"][row]])),
        }
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    batch = tf.constant([e.SerializeToString() for e in examples])
    scores = served.signatures["serving_default"](inputs=batch)["scores"]
    return scores.numpy()[:, 1]


def test_binary_trees_read_category_ids_in_the_order_of_their_positive_rate(tmp_path):
    """The zero-code binary trees read a category column's ids in the order of the fit
    rows' positive rate (the label as text, its second class the positive one, as the
    Trainer hands it over): on a label driven by 200 categories' log odds they beat the same
    trees splitting one id against the rest, and a served model reads the same ids (its
    probabilities are predict()'s). A multiclass label keeps one id against the rest."""
    from sklearn.metrics import log_loss

    from components.auto import model as auto_model
    from components.auto import ordered_categories

    rng = np.random.default_rng(5)
    rows, ids = 4000, 200
    x = rng.uniform(-1, 1, size=(rows, 2)).astype(np.float32)
    cat = rng.integers(0, ids, rows)
    logit = 1.5 * ((x[:, 0] > 0) != (x[:, 1] > 0)) + rng.normal(0, 1.5, ids)[cat] - 0.5
    positive = rng.random(rows) < 1 / (1 + np.exp(-logit))
    text = np.where(positive, "yes", "no").astype(object)
    features = {"x0": x[:, 0], "x1": x[:, 1], "cat": cat}
    fit, test = slice(0, 3000), slice(3000, rows)
    part = {k: v[fit] for k, v in features.items()}
    ids_column = tf.feature_column.categorical_column_with_identity("cat", ids)
    deep = [*_numbers(["x0", "x1"]), tf.feature_column.indicator_column(ids_column)]

    batches = [(part, text[fit].astype(bytes))]  # text labels, as the Trainer reads them
    sums = ordered_categories.label_sums(batches, ordered_categories.identity_keys(deep), "yes")
    positives = np.bincount(cat[fit], positive[fit].astype(float), ids)
    np.testing.assert_array_equal(sums["cat"][0], positives)
    np.testing.assert_array_equal(sums["cat"][1], np.bincount(cat[fit], minlength=ids))
    buckets, _ = ordered_categories.id_buckets(*sums["cat"])
    rate = positives / np.maximum(sums["cat"][1], 1)
    assert np.corrcoef(buckets, rate)[0, 1] > 0.95  # the order is the positive rate's

    def trees(name, columns):
        config = estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=1)
        args = ("boosted_trees", "binary", [ids_column], columns, ["no", "yes"], config, {})
        model = candidate_estimator(*args, None, 3000)
        whole = lambda: tf.data.Dataset.from_tensors((part, text[fit].astype(str))).repeat()  # noqa: E731
        model.train(whole, max_steps=80)  # about 10 trees of at most 8 layers
        out = model.predict(
            lambda: tf.data.Dataset.from_tensor_slices(
                {k: v[test] for k, v in features.items()}
            ).batch(1000),
            yield_single_examples=False,
        )
        return model, np.concatenate([b["probabilities"][:, 1] for b in out])

    ordered = ordered_categories.ordered_columns(deep, sums)
    model, p_ordered = trees("ordered", ordered)
    _, p_indicator = trees("indicator", deep)
    truth = positive[test]
    # (0.545 against 0.672, the truth's own 0.476: one id against the rest needs a split an id)
    assert log_loss(truth, p_ordered) < log_loss(truth, p_indicator) - 0.05, (
        log_loss(truth, p_ordered),
        log_loss(truth, p_indicator),
    )
    served = _served_probabilities(
        model, tmp_path / "export", ordered, {k: v[test] for k, v in features.items()}
    )
    np.testing.assert_allclose(served, p_ordered, atol=1e-6)
    assert auto_model.orders_categories("boosted_trees", "binary")
    assert not auto_model.orders_categories("boosted_trees", "multiclass")


def test_trees_on_the_log_of_a_multiplicative_price_beat_trees_on_the_price(tmp_path):
    """`boosted_trees_log` (a regression label above 0: squared error of its log, served as
    exp) against the same trees on the label itself, on a price that is a product of four
    factors: in as many layers the log's additive effects take fewer splits, so its RMSE in
    the price's units is lower; its metrics read the price's units, as the others'."""
    from components.auto import model as auto_model

    rng = np.random.default_rng(5)
    rows = 3000
    x = rng.uniform(-1.5, 1.5, size=(rows, 4)).astype(np.float32)
    y = (100 * np.exp(x @ [0.9, 0.7, 0.5, 0.4] + rng.normal(0, 0.1, rows))).astype(np.float32)
    names = [f"x{i}" for i in range(4)]
    features = {n: x[:, i] for i, n in enumerate(names)}
    fit, test = slice(0, 2500), slice(2500, rows)
    part = {k: v[fit] for k, v in features.items()}
    label_range = (float(y[fit].min()), float(y[fit].max()))
    assert auto_model.fits_the_label("boosted_trees_log", "regression", label_range)

    def fitted(name):
        config = estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=1)
        model = candidate_estimator(
            name,
            "regression",
            [],
            _numbers(names),
            None,
            config,
            {},
            None,
            2500,
            label_range=label_range,
        )
        model.train(lambda: tf.data.Dataset.from_tensors((part, y[fit])).repeat(), max_steps=600)
        return model

    def test_input():
        return tf.data.Dataset.from_tensor_slices(
            ({k: v[test] for k, v in features.items()}, y[test])
        ).batch(500)

    def rmse(model):
        out = model.predict(test_input, yield_single_examples=False)
        predicted = np.concatenate([b["predictions"].reshape(-1) for b in out])
        assert set(next(model.predict(test_input, yield_single_examples=False))) == {"predictions"}
        return float(np.sqrt(np.mean((predicted - y[test]) ** 2)))

    log_trees, trees = fitted("boosted_trees_log"), fitted("boosted_trees")
    log_rmse, rmse_trees = rmse(log_trees), rmse(trees)
    assert log_rmse < 0.8 * rmse_trees, (log_rmse, rmse_trees)
    # its average_loss is the squared error in the price's units (what the choice reads)
    assert log_trees.evaluate(test_input)["average_loss"] == pytest.approx(log_rmse**2, rel=1e-3)


def test_the_log_candidate_fits_only_a_regression_label_above_0():
    from components.auto import model as auto_model
    from components.trainer.executor import _fitting_candidates

    names = ("linear", "boosted_trees_log")
    assert _fitting_candidates(names, "regression", (0.5, 9.0)) == list(names)
    assert _fitting_candidates(names, "regression", (0.0, 9.0)) == ["linear"]
    assert _fitting_candidates(names, "binary", None) == ["linear"]
    with pytest.raises(
        ValueError,
        match=r"none of the candidates boosted_trees_log fits .* \(task regression, train label range \(-1\.0, 9\.0\)\)",
    ):
        _fitting_candidates(("boosted_trees_log",), "regression", (-1.0, 9.0))

    def log_trees(warm_start_from, label_range):
        return auto_model.candidate_estimator(
            "boosted_trees_log",
            "regression",
            [],
            _numbers(["x"]),
            None,
            estimator.RunConfig(),
            {},
            warm_start_from,
            100,
            label_range=label_range,
        )

    with pytest.raises(ValueError, match="boosted_trees_log fits a regression label whose train"):
        log_trees(None, (0.0, 1.0))
    # a warm start is refused, as for the other trees, not dropped
    with pytest.raises(ValueError, match="takes no warm start"):
        log_trees("/some/model", (0.5, 1.0))
