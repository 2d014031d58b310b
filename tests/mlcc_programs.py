"""Programs in the shape of Google's Machine Learning Crash Course (MLCC) programming
exercises, as teams have them after `tf_upgrade_v2`, on small made-up California housing
data (a seeded numpy generator) and made-up 28x28 digits.

`tf_upgrade_v2` turns `tf.estimator.LinearRegressor(..., optimizer=...)` (and the
classifier and DNN classes) into `tf.compat.v1.estimator.*` with
`loss_reduction=tf.keras.losses.Reduction.SUM` inserted, `tf.train.*Optimizer` into
`tf.compat.v1.train.*Optimizer` and `ds.make_one_shot_iterator()` into
`tf.compat.v1.data.make_one_shot_iterator(ds)`. Two hand fixes follow, and these programs
carry them (after recording what the converted lines raise):
- the inserted reduction is a Keras one (`'sum'`), which 2.15's V1 classes refuse
  ("Invalid loss_reduction: sum"): the user writes `tf.compat.v1.losses.Reduction.SUM`
  (`'weighted_sum'`, the V1 default, which the conversion meant to keep);
- it stops at `tf.contrib.estimator.clip_gradients_by_norm(my_optimizer, 5.0)` ("cannot
  be converted automatically") and leaves the line, which then raises (tf has no
  `contrib`). tf.estimator 2.15 has no replacement (neither `tf.estimator` nor
  `tf.compat.v1.estimator` clips gradients), so the user writes a
  `clip_gradients_by_norm` of their own: a TF1 optimizer that clips the wrapped one's
  gradients by their global norm before applying them.

The exercises: first_steps_with_tensor_flow (one feature, training in periods, RMSE
computed from `predict`), validation_and_test_sets / feature_sets (several features, a
synthetic one, training and validation RMSE), feature_crosses (Ftrl, quantile buckets,
a hashed cross), logistic_regression (log loss from `predict`'s probabilities,
`evaluate`'s metrics), sparsity_and_l1_regularization (Ftrl with an L1 strength and the
model's size counted from `get_variable_names`/`get_variable_value`),
intro_to_neural_nets / improving_neural_net_performance (DNNRegressor [10, 2], features
scaled in pandas; GradientDescent, Adagrad, Adam) and multi-class_classification_of_
handwritten_digits (DNNClassifier with 10 classes over 784 pixels, `class_ids`, a look
at `dnn/hiddenlayer_0/kernel`).

Kept deterministic, so that the values compare to 1e-4: every training batch is the
whole training set (shuffling the batches of a repeated full batch changes nothing), a
training input_fn repeats for the period's steps only (`shuffle(buffer_size=10000)` of
an endless dataset fills 10000 batches first: seconds a call), and the DNNs are
warm-started from fixed weights the program writes (their initializers are random). The
exercises' crosses take a `set` of two columns, whose order (and so the hashed bucket of
each pair) changes with PYTHONHASHSEED; on this data no two pairs share a bucket in
either order, and the cross's weights are compared sorted.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder,
and returns what the exercise's user sees: `exact` (printed lines without their
numbers, keys, variable names and shapes, counts, class ids, errors) and `close`
(losses per period, RMSEs, evaluate's metrics, predictions, weights).
`tests/test_mlcc_samples.py` compares them with 2.15's recording
(`tests/tf215/record_family.py mlcc_programs`, into `tests/data/tf215/mlcc.json`).
"""

import contextlib
import glob
import io
import math
import os
import shutil
import tempfile

import numpy as np
import pandas as pd

from tests.feature_column_programs import write_checkpoint
from tests.program_registry import registry
from tests.r1_sample_programs import _dense_shapes, _without_numbers
from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import listing, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "mlcc.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
PERIODS = 2


@contextlib.contextmanager
def _printed_lines():
    """Collects what the block prints, line by line (without blank lines)."""
    out, lines = io.StringIO(), []
    with contextlib.redirect_stdout(out):
        yield lines
    lines.extend(line for line in out.getvalue().splitlines() if line.strip())


def _first_sentence(call):
    """[type, the message's first sentence] of what `call()` raises (the kit's messages
    go on to say what to do), or None."""
    raised = _raised(call)
    return raised and [raised[0], raised[1].split(". ")[0]]


def _floats(values, prefix=""):
    return {f"{prefix}{k}": float(v) for k, v in sorted(values.items())}


# ------------------------------------------------------------ the data
def california_housing_dataframe(n=60, seed=7):
    """A frame shaped like california_housing_train.csv: its columns (float64), values in
    its ranges, the house value (dollars) growing with the income."""
    rng = np.random.RandomState(seed)
    households = rng.gamma(4.0, 110.0, n).round() + 3
    total_rooms = (households * rng.uniform(3.5, 7.0, n)).round()
    median_income = rng.gamma(4.0, 0.9, n).round(4) + 0.5
    latitude = rng.uniform(32.6, 41.9, n).round(2)
    housing_median_age = rng.randint(2, 52, n).astype(float)
    value = 45.0 * median_income + 0.6 * housing_median_age - 6.0 * (latitude - 34.0)
    value = np.clip(value + rng.normal(0, 25, n) + 30, 15, 500) * 1000
    return pd.DataFrame(
        {
            "longitude": (-114.5 - (latitude - 32.5) * 0.9 - rng.uniform(0, 2.5, n)).round(2),
            "latitude": latitude,
            "housing_median_age": housing_median_age,
            "total_rooms": total_rooms,
            "total_bedrooms": (total_rooms * rng.uniform(0.15, 0.25, n)).round(),
            "population": (households * rng.uniform(2.0, 4.0, n)).round(),
            "households": households,
            "median_income": median_income,
            "median_house_value": value.round(),
        }
    )


def preprocess_features(california_housing_dataframe):
    """The exercises' preprocess_features: the inputs, and a synthetic rooms_per_person."""
    selected_features = california_housing_dataframe[
        [
            "latitude",
            "longitude",
            "housing_median_age",
            "total_rooms",
            "total_bedrooms",
            "population",
            "households",
            "median_income",
        ]
    ]
    processed_features = selected_features.copy()
    processed_features["rooms_per_person"] = (
        california_housing_dataframe["total_rooms"] / california_housing_dataframe["population"]
    )
    return processed_features


def preprocess_targets(california_housing_dataframe):
    output_targets = pd.DataFrame()
    output_targets["median_house_value"] = (
        california_housing_dataframe["median_house_value"] / 1000.0
    )
    return output_targets


def _housing_split(n_train=45, n_valid=15):
    """The exercises' head/tail split of the (already shuffled) frame."""
    df = california_housing_dataframe(n_train + n_valid)
    return (
        preprocess_features(df.head(n_train)),
        preprocess_targets(df.head(n_train)),
        preprocess_features(df.tail(n_valid)),
        preprocess_targets(df.tail(n_valid)),
    )


# ------------------------------------------------------------ the exercises' helpers
def my_input_fn(tf, features, targets, batch_size=1, shuffle=True, num_epochs=None):
    """The exercises' my_input_fn, after tf_upgrade_v2."""
    # Convert pandas data into a dict of np arrays.
    features = {key: np.array(value) for key, value in dict(features).items()}
    # Construct a dataset, and configure batching/repeating.
    ds = tf.data.Dataset.from_tensor_slices((features, targets))  # warning: 2GB limit
    ds = ds.batch(batch_size).repeat(num_epochs)
    # Shuffle the data, if specified.
    if shuffle:
        ds = ds.shuffle(buffer_size=10000)
    # Return the next batch of data.
    features, labels = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
    return features, labels


def clip_gradients_by_norm(tf, optimizer, clip_norm):
    """The hand fix for `tf.contrib.estimator.clip_gradients_by_norm`, which
    tf_upgrade_v2 cannot convert: `optimizer`, its gradients clipped by their global
    norm before it applies them."""

    class ClipByNorm(tf.compat.v1.train.Optimizer):
        def __init__(self):
            super().__init__(use_locking=False, name="ClipByNorm" + optimizer.get_name())

        def compute_gradients(self, *args, **kwargs):
            grads_and_vars = optimizer.compute_gradients(*args, **kwargs)
            gradients, variables = zip(*grads_and_vars, strict=True)
            gradients, _ = tf.clip_by_global_norm(gradients, clip_norm)
            return list(zip(gradients, variables, strict=True))

        def apply_gradients(self, *args, **kwargs):
            return optimizer.apply_gradients(*args, **kwargs)

    return ClipByNorm()


def construct_feature_columns(tf, input_features):
    """The exercises' construct_feature_columns: a set of numeric columns."""
    return {tf.feature_column.numeric_column(my_feature) for my_feature in input_features}


def mean_squared_error(y_true, y_pred):
    """sklearn.metrics.mean_squared_error, as the exercises call it."""
    y_true, y_pred = np.asarray(y_true, float).ravel(), np.asarray(y_pred, float).ravel()
    return float(np.mean((y_true - y_pred) ** 2))


def log_loss(y_true, y_pred, eps=1e-15):
    """sklearn.metrics.log_loss over binary labels and P(1) or one row of
    probabilities per example, as the exercises call it."""
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred, float)
    if y_pred.ndim == 1:
        y_pred = np.stack([1 - y_pred, y_pred], axis=1)
    y_pred = np.clip(y_pred, eps, 1 - eps)
    y_pred /= y_pred.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(y_pred[np.arange(len(y_true)), y_true.astype(int)])))


def _predict_values(estimator, input_fn, key="predictions"):
    """`np.array([item['predictions'][0] for item in ...])`, as the exercises wrote it."""
    return np.array([item[key][0] for item in estimator.predict(input_fn=input_fn)])


def _training_rmse_loop(tf, regressor, inputs, steps):
    """The exercises' loop: `train(steps=steps / periods)`, then the training and
    validation RMSE from predict; prints each period as they did. Returns the RMSEs
    and the last validation predictions."""
    training_examples, training_targets, validation_examples, validation_targets = inputs
    steps_per_period = steps / PERIODS  # a float, as in the exercises
    batch_size = len(training_examples)

    def training_input_fn():
        return my_input_fn(
            tf,
            training_examples,
            training_targets["median_house_value"],
            batch_size=batch_size,
            num_epochs=int(steps_per_period),
        )

    def predict_training_input_fn():
        return my_input_fn(
            tf, training_examples, training_targets["median_house_value"],
            num_epochs=1, shuffle=False,
        )  # fmt: skip

    def predict_validation_input_fn():
        return my_input_fn(
            tf, validation_examples, validation_targets["median_house_value"],
            num_epochs=1, shuffle=False,
        )  # fmt: skip

    print("Training model...")
    print("RMSE (on training data):")
    training_rmse, validation_rmse = [], []
    for period in range(0, PERIODS):
        regressor.train(input_fn=training_input_fn, steps=steps_per_period)
        training_predictions = _predict_values(regressor, predict_training_input_fn)
        validation_predictions = _predict_values(regressor, predict_validation_input_fn)
        training_root_mean_squared_error = math.sqrt(
            mean_squared_error(training_predictions, training_targets)
        )
        validation_root_mean_squared_error = math.sqrt(
            mean_squared_error(validation_predictions, validation_targets)
        )
        print(f"  period {period:02d} : {training_root_mean_squared_error:0.2f}")
        training_rmse.append(training_root_mean_squared_error)
        validation_rmse.append(validation_root_mean_squared_error)
    print("Model training finished.")
    return {
        "training_rmse": training_rmse,
        "validation_rmse": validation_rmse,
        "validation_predictions": validation_predictions.astype(float).tolist(),
    }


# ------------------------------------------------------------ first_steps_with_tensor_flow
@program
def first_steps_with_tensor_flow(tf, workdir):
    """One feature (total_rooms) into a compat.v1 LinearRegressor (GradientDescent at
    MLCC's tiny learning rate, clipped at 5.0), no model_dir (a temporary one), trained
    in periods with a float `steps`; the RMSE per period from predict, the calibration
    frame, the weight and bias read back; the unconverted tf.contrib line."""
    df = california_housing_dataframe()
    df["median_house_value"] /= 1000.0
    my_feature = df[["total_rooms"]]
    feature_columns = [tf.feature_column.numeric_column("total_rooms")]
    targets = df["median_house_value"]
    my_optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.00002)
    unconverted = _raised(lambda: tf.contrib.estimator.clip_gradients_by_norm(my_optimizer, 5.0))
    as_converted = _first_sentence(
        lambda: tf.compat.v1.estimator.LinearRegressor(
            feature_columns=feature_columns,
            optimizer=my_optimizer,
            loss_reduction=tf.keras.losses.Reduction.SUM,
        )
    )
    my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
    linear_regressor = tf.compat.v1.estimator.LinearRegressor(
        feature_columns=feature_columns,
        optimizer=my_optimizer,
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
    )
    steps_per_period = 20 / PERIODS
    rmses, weights, biases = [], [], []
    with _printed_lines() as lines:
        print("Training model...")
        print("RMSE (on training data):")
        for period in range(0, PERIODS):
            linear_regressor.train(
                input_fn=lambda: my_input_fn(
                    tf, my_feature, targets, batch_size=len(df), num_epochs=int(steps_per_period)
                ),
                steps=steps_per_period,
            )
            predictions = _predict_values(
                linear_regressor,
                lambda: my_input_fn(tf, my_feature, targets, num_epochs=1, shuffle=False),
            )
            root_mean_squared_error = math.sqrt(mean_squared_error(predictions, targets))
            print(f"  period {period:02d} : {root_mean_squared_error:0.2f}")
            rmses.append(root_mean_squared_error)
            weights.append(
                linear_regressor.get_variable_value("linear/linear_model/total_rooms/weights")[0]
            )
            biases.append(linear_regressor.get_variable_value("linear/linear_model/bias_weights"))
        print("Model training finished.")
    calibration_data = pd.DataFrame()
    calibration_data["predictions"] = pd.Series(predictions)
    calibration_data["targets"] = pd.Series(targets)
    described = calibration_data.describe()
    model_dir = linear_regressor.model_dir
    in_temp = os.path.dirname(os.path.abspath(model_dir)) == os.path.abspath(tempfile.gettempdir())
    files, variables = listing(model_dir), sorted(linear_regressor.get_variable_names())
    shutil.rmtree(model_dir, ignore_errors=True)
    return {
        "exact": {
            "unconverted": unconverted,
            "as_converted": as_converted,
            "printed": _without_numbers(lines),
            "model_dir_in_temp": in_temp,
            "files": files,
            "variables": variables,
            "describe_index": list(described.index),
        },
        "close": {
            "rmse": rmses,
            "weight": np.ravel(weights).astype(float).tolist(),
            "bias": np.ravel(biases).astype(float).tolist(),
            "predictions_head": predictions[:5].astype(float).tolist(),
            **{f"describe/{k}": v.astype(float).tolist() for k, v in described.items()},
        },
    }


# ------------------------------------------------------------ validation and feature sets
@program
def validation_and_feature_sets(tf, workdir):
    """Every feature (and the synthetic rooms_per_person) as a set of numeric columns
    into a compat.v1 LinearRegressor (clipped GradientDescent); training and validation
    RMSE per period."""
    inputs = _housing_split()
    training_examples, _, validation_examples, _ = inputs
    results = {"exact": {}, "close": {}}
    for name, selected in (("all", list(training_examples)),):
        my_optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.000003)
        my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
        linear_regressor = tf.compat.v1.estimator.LinearRegressor(
            feature_columns=construct_feature_columns(tf, training_examples[selected]),
            optimizer=my_optimizer,
            model_dir=os.path.join(workdir, name),
            loss_reduction=tf.compat.v1.losses.Reduction.SUM,
        )
        selected_inputs = (
            training_examples[selected],
            inputs[1],
            validation_examples[selected],
            inputs[3],
        )
        with _printed_lines() as lines:
            rmse = _training_rmse_loop(tf, linear_regressor, selected_inputs, 30)
        results["exact"][name] = {
            "printed": _without_numbers(lines),
            "variables": sorted(linear_regressor.get_variable_names()),
            "files": listing(os.path.join(workdir, name)),
        }
        results["close"].update({f"{name}/{k}": v for k, v in rmse.items()})
    return results


# ------------------------------------------------------------ feature_crosses
def get_quantile_based_boundaries(feature_values, num_buckets):
    boundaries = np.arange(1.0, num_buckets) / num_buckets
    quantiles = feature_values.quantile(boundaries)
    return [quantiles[q] for q in quantiles.index]


def _crossed_housing_columns(tf, training_examples, num_buckets=5, hash_bucket_size=1000):
    """feature_crosses' construct_feature_columns: households, longitude, latitude,
    age, income and rooms per person in quantile buckets, and a hashed cross of the
    longitude and latitude buckets (given as a set, as the exercise did)."""
    fc = tf.feature_column
    bucketized = {}
    for key in [
        "households",
        "longitude",
        "latitude",
        "housing_median_age",
        "median_income",
        "rooms_per_person",
    ]:
        bucketized[key] = fc.bucketized_column(
            fc.numeric_column(key),
            boundaries=get_quantile_based_boundaries(training_examples[key], num_buckets),
        )
    long_x_lat = fc.crossed_column(
        {bucketized["longitude"], bucketized["latitude"]}, hash_bucket_size=hash_bucket_size
    )
    return {*bucketized.values(), long_x_lat}


@program
def feature_crosses(tf, workdir):
    """The bucketized and crossed columns into a compat.v1 LinearRegressor with a
    clipped FtrlOptimizer; RMSE per period; the weights' shapes and values."""
    inputs = _housing_split()
    my_optimizer = tf.compat.v1.train.FtrlOptimizer(learning_rate=1.0)
    my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
    linear_regressor = tf.compat.v1.estimator.LinearRegressor(
        feature_columns=_crossed_housing_columns(tf, inputs[0]),
        optimizer=my_optimizer,
        model_dir=os.path.join(workdir, "model"),
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
    )
    with _printed_lines() as lines:
        rmse = _training_rmse_loop(tf, linear_regressor, inputs, 12)
    names = linear_regressor.get_variable_names()
    (cross,) = [n for n in names if "_X_" in n and "Ftrl" not in n]
    weights = {
        n: linear_regressor.get_variable_value(n)
        for n in names
        if n.startswith("linear/linear_model/") and "Ftrl" not in n
    }
    return {
        "exact": {
            "printed": _without_numbers(lines),
            "variables": {n: list(np.shape(linear_regressor.get_variable_value(n))) for n in names},
            "nonzero_cross": int(np.count_nonzero(weights[cross])),
        },
        "close": {
            **rmse,
            **{
                f"weights/{n}": sorted(np.ravel(v).astype(float).tolist())
                for n, v in weights.items()
            },
        },
    }


# ------------------------------------------------------------ logistic_regression
def _high_value_targets(targets):
    output_targets = pd.DataFrame()
    output_targets["median_house_value_is_high"] = (
        targets["median_house_value"] > 265000 / 1000.0
    ).astype(float)
    return output_targets


def _classifier_loop(tf, classifier, examples, targets, steps, periods=PERIODS):
    """logistic_regression's loop: training and validation log loss from predict's
    probabilities, each period; returns the losses and the last probabilities."""
    training_examples, validation_examples = examples
    training_targets, validation_targets = targets
    label = "median_house_value_is_high"
    steps_per_period = steps / periods

    def training_input_fn():
        return my_input_fn(
            tf, training_examples, training_targets[label],
            batch_size=len(training_examples), num_epochs=int(steps_per_period),
        )  # fmt: skip

    def probabilities(features, frame):
        rows = classifier.predict(
            input_fn=lambda: my_input_fn(tf, features, frame[label], num_epochs=1, shuffle=False)
        )
        return np.array([item["probabilities"] for item in rows])

    losses = {"training": [], "validation": []}
    print("Training model...")
    print("LogLoss (on training data):")
    for period in range(0, periods):
        classifier.train(input_fn=training_input_fn, steps=steps_per_period)
        training_probabilities = probabilities(training_examples, training_targets)
        validation_probabilities = probabilities(validation_examples, validation_targets)
        training_log_loss = log_loss(training_targets, training_probabilities)
        validation_log_loss = log_loss(validation_targets, validation_probabilities)
        print(f"  period {period:02d} : {training_log_loss:0.2f}")
        losses["training"].append(training_log_loss)
        losses["validation"].append(validation_log_loss)
    print("Model training finished.")
    return losses, validation_probabilities


@program
def logistic_regression(tf, workdir):
    """A compat.v1 LinearClassifier (clipped GradientDescent) for the high-value label:
    log loss per period from predict, then evaluate's accuracy, AUC and the rest on the
    validation set, printed as the exercise printed them."""
    training_examples, training_targets, validation_examples, validation_targets = _housing_split()
    training_targets = _high_value_targets(training_targets)
    validation_targets = _high_value_targets(validation_targets)
    my_optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.000005)
    my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
    linear_classifier = tf.compat.v1.estimator.LinearClassifier(
        feature_columns=construct_feature_columns(tf, training_examples),
        optimizer=my_optimizer,
        model_dir=os.path.join(workdir, "model"),
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
    )
    with _printed_lines() as lines:
        losses, validation_probabilities = _classifier_loop(
            tf,
            linear_classifier,
            (training_examples, validation_examples),
            (training_targets, validation_targets),
            30,
        )
        predict_validation_input_fn = lambda: my_input_fn(  # noqa: E731  (the exercise's)
            tf,
            validation_examples,
            validation_targets["median_house_value_is_high"],
            num_epochs=1,
            shuffle=False,
        )
        evaluation_metrics = linear_classifier.evaluate(input_fn=predict_validation_input_fn)
        print(f"AUC on the validation set: {evaluation_metrics['auc']:0.2f}")
        print(f"Accuracy on the validation set: {evaluation_metrics['accuracy']:0.2f}")
    rows = list(linear_classifier.predict(input_fn=predict_validation_input_fn))
    return {
        "exact": {
            "printed": _without_numbers(lines),
            "evaluate_keys": sorted(evaluation_metrics),
            "global_step": int(evaluation_metrics["global_step"]),
            "predictions": structure(rows),
            "class_ids": [int(row["class_ids"][0]) for row in rows],
            "variables": sorted(linear_classifier.get_variable_names()),
        },
        "close": {
            "training_log_loss": losses["training"],
            "validation_log_loss": losses["validation"],
            "probabilities": validation_probabilities[:, 1].astype(float).tolist(),
            **_floats(evaluation_metrics, "evaluate/"),
        },
    }


# ------------------------------------------------------------ sparsity_and_l1_regularization
def model_size(estimator):
    """sparsity_and_l1_regularization's model_size: the nonzero weights."""
    variables = estimator.get_variable_names()
    size = 0
    for variable in variables:
        if not any(
            x in variable for x in ["global_step", "centered_bias_weight", "bias_weight", "Ftrl"]
        ):
            size += np.count_nonzero(estimator.get_variable_value(variable))
    return size


@program
def sparsity_and_l1_regularization(tf, workdir):
    """A compat.v1 LinearClassifier over the bucketized and crossed columns with a
    clipped FtrlOptimizer, without and with an L1 strength: log losses, evaluate, and
    the model's size counted over get_variable_names()."""
    training_examples, training_targets, validation_examples, validation_targets = _housing_split()
    training_targets = _high_value_targets(training_targets)
    validation_targets = _high_value_targets(validation_targets)
    results = {"exact": {}, "close": {}}
    for regularization_strength in (0.0, 0.5):
        name = f"l1_{regularization_strength}"
        my_optimizer = tf.compat.v1.train.FtrlOptimizer(
            learning_rate=0.1, l1_regularization_strength=regularization_strength
        )
        my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
        linear_classifier = tf.compat.v1.estimator.LinearClassifier(
            feature_columns=_crossed_housing_columns(tf, training_examples),
            optimizer=my_optimizer,
            model_dir=os.path.join(workdir, name),
            loss_reduction=tf.compat.v1.losses.Reduction.SUM,
        )
        with _printed_lines() as lines:
            losses, _ = _classifier_loop(
                tf,
                linear_classifier,
                (training_examples, validation_examples),
                (training_targets, validation_targets),
                6,
                periods=1,
            )
            print("Model size:", model_size(linear_classifier))
        results["exact"][name] = {
            "printed": _without_numbers(lines[:-1]) + lines[-1:],
            "variables": sorted(linear_classifier.get_variable_names()),
        }
        results["close"].update(
            {
                f"{name}/training_log_loss": losses["training"],
                f"{name}/validation_log_loss": losses["validation"],
            }
        )
    return results


# ------------------------------------------------------------ intro / improving neural nets
def linear_scale(series):
    min_val = series.min()
    max_val = series.max()
    scale = (max_val - min_val) / 2.0
    return series.apply(lambda x: ((x - min_val) / scale) - 1.0)


def normalize_linear_scale(examples_dataframe):
    """improving_neural_net_performance's normalization, done in pandas."""
    processed_features = pd.DataFrame()
    for column in examples_dataframe:
        processed_features[column] = linear_scale(examples_dataframe[column])
    return processed_features


@program
def neural_nets(tf, workdir):
    """intro_to_neural_nets' DNNRegressor [10, 2] over every feature scaled to [-1, 1] in
    pandas, with clipped Adagrad and Adam (improving_neural_net_performance), warm-started from fixed weights; RMSE per period; the variables."""
    df = california_housing_dataframe(60)
    normalized = normalize_linear_scale(preprocess_features(df))
    targets = preprocess_targets(df)
    inputs = (normalized.head(45), targets.head(45), normalized.tail(15), targets.tail(15))
    shapes = _dense_shapes(
        "dnn/", ["hiddenlayer_0", "hiddenlayer_1", "logits"], [len(normalized.columns), 10, 2, 1]
    )
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    results = {"exact": {}, "close": {}}
    for name, my_optimizer in (
        ("adagrad", tf.compat.v1.train.AdagradOptimizer(learning_rate=0.5)),
        ("adam", tf.compat.v1.train.AdamOptimizer(learning_rate=0.009)),
    ):
        my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
        dnn_regressor = tf.compat.v1.estimator.DNNRegressor(
            feature_columns=construct_feature_columns(tf, inputs[0]),
            hidden_units=[10, 2],
            optimizer=my_optimizer,
            model_dir=os.path.join(workdir, name),
            loss_reduction=tf.compat.v1.losses.Reduction.SUM,
            warm_start_from=start,
        )
        with _printed_lines() as lines:
            rmse = _training_rmse_loop(tf, dnn_regressor, inputs, 14)
        names = dnn_regressor.get_variable_names()
        results["exact"][name] = {
            "printed": _without_numbers(lines),
            "variables": {n: list(np.shape(dnn_regressor.get_variable_value(n))) for n in names},
        }
        results["close"].update(
            {
                **{f"{name}/{k}": v for k, v in rmse.items()},
                f"{name}/logits_kernel": np.ravel(
                    dnn_regressor.get_variable_value("dnn/logits/kernel")
                ).tolist(),
            }
        )
    return results


# ------------------------------------------------------------ multi-class MNIST
def _digits(n, seed):
    """A frame like mnist_train_small.csv: the label, then 784 pixel columns (0-255)
    where each digit class lights its own band of rows."""
    rng = np.random.RandomState(seed)
    labels = np.arange(n) % 10
    images = rng.randint(0, 60, (n, 28, 28))
    for i, label in enumerate(labels):
        images[i, 2 + 2 * label : 6 + 2 * label, 4:24] += 180
    return pd.DataFrame(np.column_stack([labels, images.reshape(n, 784)]))


def parse_labels_and_features(dataset):
    labels = dataset[0]
    # DataFrame.loc index ranges are inclusive at both ends.
    features = dataset.loc[:, 1:784]
    # Scale the data to [0, 1] by dividing out the max value, 255.
    features = features / 255
    return labels, features


def construct_pixel_columns(tf):
    return {tf.feature_column.numeric_column("pixels", shape=784)}


def create_training_input_fn(tf, features, labels, batch_size, num_epochs=None, shuffle=True):
    """The exercise's create_training_input_fn (its inner function takes the outer
    arguments: called with none, the exercise's own repeated endlessly)."""

    def _input_fn(num_epochs=num_epochs, shuffle=shuffle):
        # Input is the whole frame, already in a fixed order here.
        idx = features.index
        raw_features = {"pixels": features.reindex(idx)}
        raw_targets = np.array(labels[idx])
        ds = tf.data.Dataset.from_tensor_slices((raw_features, raw_targets))  # warning: 2GB limit
        ds = ds.batch(batch_size).repeat(num_epochs)
        if shuffle:
            ds = ds.shuffle(10000)
        # Return the next batch of data.
        feature_batch, label_batch = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        return feature_batch, label_batch

    return _input_fn


def create_predict_input_fn(tf, features, labels, batch_size):
    def _input_fn():
        raw_features = {"pixels": features.values}
        raw_targets = np.array(labels)
        ds = tf.data.Dataset.from_tensor_slices((raw_features, raw_targets))  # warning: 2GB limit
        ds = ds.batch(batch_size)
        # Return the next batch of data.
        feature_batch, label_batch = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        return feature_batch, label_batch

    return _input_fn


@program
def multi_class_mnist(tf, workdir):
    """A compat.v1 DNNClassifier (10 classes, [100, 100], clipped Adagrad,
    keep_checkpoint_max=1) warm-started from fixed weights: per period the log loss
    from predict's probabilities and the class_ids, then evaluate, the model_dir and
    the first hidden layer's kernel, as the exercise looks at it."""
    training_targets, training_examples = parse_labels_and_features(_digits(30, 11))
    validation_targets, validation_examples = parse_labels_and_features(_digits(20, 12))
    shapes = _dense_shapes(
        "dnn/", ["hiddenlayer_0", "hiddenlayer_1", "logits"], [784, 100, 100, 10]
    )
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    steps, batch_size = 6, 30
    steps_per_period = steps / PERIODS
    training_input_fn = create_training_input_fn(
        tf, training_examples, training_targets, batch_size, num_epochs=int(steps_per_period)
    )
    predict_training_input_fn = create_predict_input_fn(
        tf, training_examples, training_targets, batch_size
    )
    predict_validation_input_fn = create_predict_input_fn(
        tf, validation_examples, validation_targets, batch_size
    )
    my_optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.05)
    my_optimizer = clip_gradients_by_norm(tf, my_optimizer, 5.0)
    model_dir = os.path.join(workdir, "model")
    as_converted = _first_sentence(
        lambda: tf.compat.v1.estimator.DNNClassifier(
            feature_columns=construct_pixel_columns(tf),
            n_classes=10,
            hidden_units=[100, 100],
            optimizer=my_optimizer,
            config=tf.estimator.RunConfig(keep_checkpoint_max=1),
            loss_reduction=tf.keras.losses.Reduction.SUM,
        )
    )
    classifier = tf.compat.v1.estimator.DNNClassifier(
        feature_columns=construct_pixel_columns(tf),
        n_classes=10,
        hidden_units=[100, 100],
        optimizer=my_optimizer,
        config=tf.estimator.RunConfig(keep_checkpoint_max=1, model_dir=model_dir),
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
        warm_start_from=start,
    )
    training_errors, validation_errors, class_ids = [], [], []
    with _printed_lines() as lines:
        print("Training model...")
        print("LogLoss error (on validation data):")
        for period in range(0, PERIODS):
            classifier.train(input_fn=training_input_fn, steps=steps_per_period)
            training_predictions = list(classifier.predict(input_fn=predict_training_input_fn))
            training_probabilities = np.array(
                [item["probabilities"] for item in training_predictions]
            )
            validation_predictions = list(classifier.predict(input_fn=predict_validation_input_fn))
            validation_probabilities = np.array(
                [item["probabilities"] for item in validation_predictions]
            )
            validation_pred_class_id = np.array(
                [item["class_ids"][0] for item in validation_predictions]
            )
            training_errors.append(log_loss(training_targets, training_probabilities))
            validation_errors.append(log_loss(validation_targets, validation_probabilities))
            class_ids.append(validation_pred_class_id.tolist())
            print(f"  period {period:02d} : {validation_errors[-1]:0.2f}")
        print("Model training finished.")
        # Remove event files to save disk space (a lazy map: it removes nothing).
        _ = map(os.remove, glob.glob(os.path.join(classifier.model_dir, "events.out.tfevents*")))
        accuracy = float(np.mean(validation_pred_class_id == np.array(validation_targets)))
        print(f"Final accuracy (on validation data): {accuracy:0.2f}")
    evaluated = classifier.evaluate(input_fn=predict_validation_input_fn)
    weights0 = classifier.get_variable_value("dnn/hiddenlayer_0/kernel")
    return {
        "exact": {
            "as_converted": as_converted,
            "printed": _without_numbers(lines),
            "class_ids": class_ids,
            "predictions": structure(validation_predictions),
            "evaluate_keys": sorted(evaluated),
            "variables": sorted(classifier.get_variable_names()),
            "weights0_shape": list(weights0.shape),
            "files": listing(model_dir),
        },
        "close": {
            "training_log_loss": training_errors,
            "validation_log_loss": validation_errors,
            "accuracy": accuracy,
            **_floats(evaluated, "evaluate/"),
            "weights0/first_unit": weights0[:, 0][::37].astype(float).tolist(),
            "weights0/norms": np.linalg.norm(weights0, axis=0).astype(float).tolist(),
        },
    }
