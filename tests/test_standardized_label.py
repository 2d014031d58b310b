"""A regression label far from unit scale (a price of about 1e5): the zero-code linear
candidate fits it standardized, as well as scikit-learn's Ridge does, and serves predictions
in the label's units from a fresh process; the Trainer reads the label's mean and std from
the train split's statistics."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from sklearn.linear_model import Ridge
from tensorflow_metadata.proto.v0 import statistics_pb2
from tfx.types import standard_artifacts

from components import estimator
from components.auto.model import candidate_estimator
from components.statistics_gen.layout import split_statistics_path
from components.trainer import executor, stopping
from components.trainer import length as training_length

ROWS, COLUMNS, HELD_OUT = 2400, 8, 600
NAMES = [f"x{i}" for i in range(COLUMNS)]


def _price_data():
    """Standardized numbers (as the auto preprocessing writes them) and a price: 180,000
    plus linear effects of tens of thousands and noise of 20,000."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(ROWS, COLUMNS)).astype(np.float32)
    y = 180_000 + x @ rng.uniform(5_000, 40_000, size=COLUMNS) + rng.normal(0, 20_000, ROWS)
    return x, y.astype(np.float32)


def _input(x, y, repeat):
    features = {n: x[:, i] for i, n in enumerate(NAMES)}

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices((features, y))
        if repeat:
            return data.shuffle(len(y), seed=1).repeat().batch(64)
        return data.batch(256)

    return input_fn


def _fit_linear(model_dir, x, y, label_moments):
    """The zero-code linear candidate trained as the Trainer trains it: stopped early on a
    tenth held out; returns the Estimator and its best checkpoint."""
    columns = [tf.feature_column.numeric_column(n) for n in NAMES]
    fit = len(y) * 9 // 10
    length = training_length.plan(None, None, fit, 64)
    config = estimator.RunConfig(
        model_dir=model_dir, tf_random_seed=1, save_checkpoints_steps=length.round_steps()
    )
    model = candidate_estimator(
        "linear",
        "regression",
        [],
        columns,
        None,
        config,
        {},
        None,
        fit,
        label_moments=label_moments,
    )
    outcome = stopping.train(
        model, _input(x[:fit], y[:fit], True), length, _input(x[fit:], y[fit:], False)
    )
    return model, outcome.checkpoint


def _predict(model, checkpoint, x, y):
    batches = model.predict(_input(x, y, False), checkpoint_path=checkpoint)
    return np.array([p["predictions"][0] for p in batches], dtype=np.float64)


def _rmse(prediction, truth):
    return float(np.sqrt(np.mean((prediction - truth) ** 2)))


_SERVE = """
import json, sys
import numpy as np
import tensorflow as tf
path, names, rows = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
examples = [
    tf.train.Example(features=tf.train.Features(feature={
        n: tf.train.Feature(float_list=tf.train.FloatList(value=[v])) for n, v in zip(names, row)
    })).SerializeToString()
    for row in rows
]
outputs = tf.saved_model.load(path).signatures["serving_default"](inputs=tf.constant(examples))
print(json.dumps(sorted(outputs)), json.dumps(np.reshape(outputs["outputs"].numpy(), -1).tolist()))
"""


@pytest.mark.slow  # trains two linear models, then serves one in a fresh process
def test_the_linear_candidate_fits_a_price_as_ridge_does_and_serves_it_in_its_units(tmp_path):
    x, y = _price_data()
    x_train, y_train, x_test, y_test = x[:-HELD_OUT], y[:-HELD_OUT], x[-HELD_OUT:], y[-HELD_OUT:]
    ridge = _rmse(Ridge(alpha=1.0).fit(x_train, y_train).predict(x_test), y_test)

    moments = (float(np.mean(y_train)), float(np.std(y_train)))
    model, checkpoint = _fit_linear(str(tmp_path / "scaled"), x_train, y_train, moments)
    scaled = _predict(model, checkpoint, x_test, y_test)
    assert _rmse(scaled, y_test) <= 1.05 * ridge, (_rmse(scaled, y_test), ridge)
    # The head's average_loss (what early stopping and the model choice read) is in the
    # label's units squared.
    metrics = model.evaluate(_input(x_test, y_test, False), checkpoint_path=checkpoint)
    assert np.sqrt(metrics["average_loss"]) == pytest.approx(_rmse(scaled, y_test), rel=1e-3)

    # Without the moments, the canned LinearRegressor with the same optimizer never gets
    # near the price in as many epochs (what the zero-code linear candidate did on ames).
    unscaled_model, unscaled_checkpoint = _fit_linear(str(tmp_path / "raw"), x_train, y_train, None)
    unscaled = _predict(unscaled_model, unscaled_checkpoint, x_test, y_test)
    assert _rmse(unscaled, y_test) > 3 * ridge, (_rmse(unscaled, y_test), ridge)

    # Served: stock ops only, predictions in the label's units, loaded in a fresh process.
    spec = {n: tf.io.FixedLenFeature([1], tf.float32) for n in NAMES}
    export = model.export_saved_model(
        str(tmp_path / "export"),
        estimator.export.build_parsing_serving_input_receiver_fn(spec),
        checkpoint_path=checkpoint,
    )
    rows = x_test[:50].tolist()
    served = subprocess.run(
        [sys.executable, "-c", _SERVE, export, json.dumps(NAMES), json.dumps(rows)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    ).stdout.split("\n")[-2]
    keys, values = (json.loads(part) for part in served.split(" ", 1))
    assert keys == ["outputs"]
    np.testing.assert_allclose(values, scaled[:50], rtol=1e-5)
    assert abs(np.mean(values) - 180_000) < 30_000


def _statistics_artifact(folder, label, values):
    """A statistics artifact whose train split describes `label` (numbers: `values`)."""
    dataset = statistics_pb2.DatasetFeatureStatistics(num_examples=len(values))
    feature = dataset.features.add(type=statistics_pb2.FeatureNameStatistics.FLOAT)
    feature.path.step.append(label)
    feature.num_stats.mean, feature.num_stats.std_dev = np.mean(values), np.std(values)
    feature.num_stats.min, feature.num_stats.max = min(values), max(values)
    text = dataset.features.add(type=statistics_pb2.FeatureNameStatistics.STRING)
    text.path.step.append("town")
    path = split_statistics_path(str(folder), "train")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(statistics_pb2.DatasetFeatureStatisticsList(datasets=[dataset]).SerializeToString())
    artifact = standard_artifacts.ExampleStatistics()
    artifact.uri, artifact.split_names = str(folder), '["train"]'
    return artifact


def test_the_trainer_reads_the_labels_mean_and_std_from_the_statistics(tmp_path):
    statistics = {"statistics": [_statistics_artifact(tmp_path, "price", [100.0, 300.0])]}
    assert executor.label_moments(executor.train_statistics(statistics), "price") == pytest.approx(
        (200.0, 100.0)
    )
    assert (
        executor.label_moments(executor.train_statistics(statistics), "town") is None
    )  # text: no moments
    assert (
        executor.label_moments(executor.train_statistics({}), "price") is None
    )  # no statistics input
    # the range a chosen regressor's served predictions are bounded to
    train = executor.train_statistics(statistics)
    assert executor.label_range(train, "price") == (100.0, 300.0)
    assert executor.label_range(train, "town") is None


@pytest.mark.slow  # a tf.Transform Beam job
def test_init_s_model_py_standardizes_a_regression_label_as_zero_code_does(tmp_path):
    """The linear and wide-and-deep model.py `init` writes for a regression label take the
    label's moments and predict in its units (an untrained linear model: the mean)."""
    from pipeline.init import model_text
    from tests.test_auto import ROWS, _schema, _transform

    int_rows = [dict(row, y=[label]) for row, label in zip(ROWS, [3, 1, 2, 3], strict=True)]
    rows, tft_output = _transform(tmp_path, _schema("INT"), int_rows, "y", "regression")
    features = {k: [row[k] for row in rows] for k in rows[0] if k != "y_xf"}
    for winner in ("linear", "wide_and_deep"):
        text = model_text("prices", "regression", winner, "why", len(rows))
        assert "label_moments" in text
        namespace = {}
        exec(compile(text, f"{winner}/model.py", "exec"), namespace)
        model = namespace["build_estimator"](
            estimator.RunConfig(model_dir=str(tmp_path / winner), tf_random_seed=1),
            {"hidden_units": [4]},
            tft_output=tft_output,
            transformed_label_key="y_xf",
            label_moments=(200_000.0, 50_000.0),
        )
        predicted = [
            p["predictions"][0]
            for p in model.predict(lambda: tf.data.Dataset.from_tensors(features))
        ]
        if winner == "linear":  # its weights start at zero
            np.testing.assert_allclose(predicted, 200_000.0, rtol=1e-6)
        else:  # a few standard deviations at most from the mean, untrained
            assert all(abs(p - 200_000.0) < 5 * 50_000.0 for p in predicted), predicted
