"""Programs shaped like well-known public tf.estimator samples, run on 2.15 and on this kit.

Each is what a user gets from the sample after `tf_upgrade_v2`, on tiny synthetic data:

- `mnist_tpu`: tensorflow/tpu's `models/official/mnist/mnist_tpu.py` with `use_tpu=False`
  (TPU RunConfig and TPUConfig, `params["batch_size"]`, `eval_metrics`, predict, export);
- `boosted_trees_titanic`, `boosted_trees_regression`: the "Boosted trees using Estimators"
  and "Gradient Boosted Trees: Model understanding" tutorials (the linear models they
  compare against; the trees where the TensorFlow has them: 2.15 has none);
- `wide_deep_census_r1`: tensorflow/models' `official/r1/wide_deep` census sample (CSV
  through `TextLineDataset` and `decode_csv`, a train/evaluate loop, a parsing export);
- `cloud_ml_train_and_evaluate`: Cloud ML Engine samples' `train_and_evaluate` (a
  LatestExporter given alone, a FinalExporter of a CSV receiver, a named EvalSpec,
  `add_metrics`, `keep_checkpoint_max`, a TrainSpec hook);
- `tpu_misuse`: what TPUEstimator says to its common misuses.

A program returns what its user sees, in parts compared differently by
`tests/test_public_samples.py`: `exact` (keys, dtypes, shapes, listings, signatures,
event tags, log lines, errors), `close` (deterministic values, 1e-4) and `loose` (values
that hang on random draws, 35%); `trees` holds what only a TensorFlow with boosted trees
gives.  `tests/tf215/record_public_samples.py` records them under tf.estimator 2.15 into
`tests/data/tf215/public_samples.json`.
"""

import contextlib
import glob
import logging
import os
import re

import numpy as np
import pandas as pd
import tensorflow as tf

from tests.program_registry import registry
from tests.tpu_programs import _export_layout as meta_graphs
from tests.tutorial_programs import (
    DATA_DIR,
    error_of,
    event_tags,
    floats,
    listing,
    seen,
    served,
    signatures,
    structure,
)

RECORDED = os.path.join(DATA_DIR, "public_samples.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


# ------------------------------------------------------------------ what a user sees
# The INFO lines users grep in a sample's output once it set the verbosity to INFO.
_GREPPED = re.compile(
    r"^(Loss for final step|Saving dict for global step|loss = |Skipping training|"
    r"Saving checkpoints for|Calling checkpoint listeners|global_step/sec|"
    r"Starting evaluation|Finished evaluation|Skip the current checkpoint eval|"
    r"Start train and evaluate loop|Evaluation \[|Inference Time|SavedModel written to)"
)
# An export's temporary folder (2.15: temp-<seconds>; the kit: .tmp-<seconds>-<us>).
_TEMPORARY_EXPORT = re.compile(r"\S*/(temp|\.tmp)-[\d-]+/")
# A float as 2.15 printed one (a float32's str, up to 9 significant digits); a nan, or a
# float64's repr of a float32 (33.16270446777344), stays: they are news.
_NUMBER = re.compile(r"-?\d+\.\d{1,12}(?!\d)(e[-+]?\d+)?")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T-]\d\d:\d\d:\d\d")
_CHECKPOINT_PREFIX = re.compile(r"\S*/model\.ckpt")


class _Lines(logging.Handler):
    def __init__(self, grepped):
        super().__init__()
        self.lines = []
        self.grepped = grepped

    def emit(self, record):
        message = record.getMessage()
        if self.grepped.search(message):
            message = _CHECKPOINT_PREFIX.sub("<model_dir>/model.ckpt", _TIME.sub("<time>", message))
            message = _TEMPORARY_EXPORT.sub("<export_dir_base>/<temp>/", message)
            self.lines.append(f"{record.levelname}:{record.name}:{_NUMBER.sub('<f>', message)}")


@contextlib.contextmanager
def info_lines(grepped=_GREPPED):
    """What TensorFlow's logger shows once a program called
    `tf.compat.v1.logging.set_verbosity(INFO)` (as every sample here does): the lines
    users grep (`grepped`), floats as `<f>`."""
    logger = tf.get_logger()
    level = logger.level
    handler = _Lines(grepped)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def as_text(path):
    return path.decode() if isinstance(path, bytes) else path


# ------------------------------------------------------------------ mnist_tpu.py
IMAGE = 8  # pixels a side (MNIST's 28, smaller)
MNIST_BATCH = 16


def mnist_model():
    """mnist.create_model's layers, smaller."""
    layers = tf.keras.layers
    return tf.keras.Sequential(
        [
            layers.Reshape(target_shape=(IMAGE, IMAGE, 1), input_shape=(IMAGE * IMAGE,)),
            layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu),
            layers.MaxPooling2D((2, 2), (2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(16, activation=tf.nn.relu),
            layers.Dropout(0.4),
            layers.Dense(10),
        ]
    )


def mnist_metric_fn(labels, logits):
    accuracy = tf.compat.v1.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
    return {"accuracy": accuracy}


def mnist_model_fn(features, labels, mode, params):
    """mnist_tpu.py's model_fn, as tf_upgrade_v2 leaves it."""
    del params
    image = features
    if isinstance(image, dict):
        image = features["image"]
    model = mnist_model()
    if mode == tf.estimator.ModeKeys.PREDICT:
        logits = model(image, training=False)
        predictions = {
            "class_ids": tf.argmax(logits, axis=1),
            "probabilities": tf.nn.softmax(logits),
        }
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, predictions=predictions)
    logits = model(image, training=(mode == tf.estimator.ModeKeys.TRAIN))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        learning_rate = tf.compat.v1.train.exponential_decay(
            0.05, tf.compat.v1.train.get_global_step(), decay_steps=100000, decay_rate=0.96
        )
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=learning_rate)
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode,
            loss=loss,
            train_op=optimizer.minimize(loss, tf.compat.v1.train.get_global_step()),
        )
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode=mode, loss=loss, eval_metrics=(mnist_metric_fn, [labels, logits])
    )


def mnist_data(n, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n).astype(np.int32)
    images = rng.uniform(0, 0.3, (n, IMAGE * IMAGE)).astype(np.float32)
    images[np.arange(n), labels * 6] = 1.0  # a bright pixel says the digit
    return tf.data.Dataset.from_tensor_slices((images, labels))


def mnist_train_input_fn(params):
    batch_size = params["batch_size"]
    return (
        mnist_data(96, 0)
        .cache()
        .repeat()
        .shuffle(buffer_size=96, seed=1)
        .batch(batch_size, drop_remainder=True)
    )


def mnist_eval_input_fn(params):
    return mnist_data(48, 1).batch(params["batch_size"], drop_remainder=True)


def mnist_predict_input_fn(params):
    return mnist_data(48, 1).take(10).batch(params["batch_size"])


def mnist_serving_input_receiver_fn():
    image = tf.compat.v1.placeholder(tf.float32, [None, IMAGE * IMAGE], name="image")
    return tf.estimator.export.ServingInputReceiver({"image": image}, {"image": image})


def mnist_estimator(model_dir, **kwargs):
    tpu = tf.compat.v1.estimator.tpu
    run_config = tpu.RunConfig(
        model_dir=model_dir,
        session_config=tf.compat.v1.ConfigProto(
            allow_soft_placement=True, log_device_placement=False
        ),
        tpu_config=tpu.TPUConfig(5, 8),
        tf_random_seed=3,
        save_checkpoints_steps=10,
    )
    settings = {
        "model_fn": mnist_model_fn,
        "use_tpu": False,
        "train_batch_size": MNIST_BATCH,
        "eval_batch_size": MNIST_BATCH,
        "predict_batch_size": MNIST_BATCH,
        "params": {"data_dir": model_dir},
        "config": run_config,
    }
    return tpu.TPUEstimator(**{**settings, **kwargs})


@program
def mnist_tpu(workdir):
    """Train, evaluate, predict the top 10, export: mnist_tpu.py's main with use_tpu=False."""
    estimator = mnist_estimator(os.path.join(workdir, "model"))
    with info_lines() as lines:
        estimator.train(input_fn=mnist_train_input_fn, max_steps=25)
        result = estimator.evaluate(input_fn=mnist_eval_input_fn, steps=2)
        rows = list(estimator.predict(input_fn=mnist_predict_input_fn))
    printed = [
        'Prediction is "{}" ({:.1f}%).'.format(
            row["class_ids"], 100 * row["probabilities"][row["class_ids"]]
        )
        for row in rows
    ]
    export_dir = as_text(
        estimator.export_saved_model(
            os.path.join(workdir, "export"), mnist_serving_input_receiver_fn
        )
    )
    images = np.zeros((3, IMAGE * IMAGE), np.float32)
    served_shapes, _ = served(export_dir, "serving_default", tags=["serve"], image=images)
    return {
        "exact": {
            **seen(result, rows),
            "evaluate_dtypes": {k: type(v).__name__ for k, v in sorted(result.items())},
            "printed": len(printed),
            "model_dir": listing(estimator.model_dir),
            "variables": estimator.get_variable_names(),
            "train_tags": sorted(event_tags(estimator.model_dir)),
            "eval_tags": event_tags(estimator.eval_dir()),
            "export": meta_graphs(export_dir),
            "export_files": listing(export_dir),
            "served": served_shapes,
            "lines": lines,
        },
        # Random starts and dropout: the loss of a barely trained model, its probabilities.
        "loose": {
            "loss": float(result["loss"]),
            "probabilities": [float(p) for p in rows[0]["probabilities"]],
        },
    }


@program
def tpu_misuse(workdir):
    """What TPUEstimator(use_tpu=False) says to the slips its users make."""
    model_dir = os.path.join(workdir, "model")
    estimator = mnist_estimator(model_dir)

    def no_params_input_fn():
        return mnist_data(32, 0).batch(8)

    def evaluate_without_steps():
        estimator.train(mnist_train_input_fn, max_steps=2)
        return int(estimator.evaluate(mnist_eval_input_fn)["global_step"])

    def estimator_spec_model_fn(features, labels, mode, params):
        spec = mnist_model_fn(features, labels, mode, params)
        return tf.estimator.EstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op)

    errors = {
        "batch_size_in_params": lambda: mnist_estimator(model_dir, params={"batch_size": 4}),
        "no_train_batch_size": lambda: mnist_estimator(model_dir, train_batch_size=None),
        "input_fn_without_params": lambda: estimator.train(no_params_input_fn, max_steps=1),
        "estimator_spec": lambda: mnist_estimator(
            os.path.join(workdir, "spec"), model_fn=estimator_spec_model_fn
        ).train(mnist_train_input_fn, max_steps=1),
        "bad_mode_predictions": lambda: list(
            mnist_estimator(model_dir).predict(mnist_predict_input_fn, predict_keys=["nope"])
        ),
    }
    found = {name: error_of(call) for name, call in errors.items()}
    return {
        "exact": {
            **{name: error[:1] if error else None for name, error in found.items()},
            "evaluate_without_steps": evaluate_without_steps(),
        },
        "messages": {name: error[1] for name, error in found.items() if error},
    }


# ------------------------------------------------------------------ the lines users grep
@program
def linear_to_end_of_input(workdir):
    """A canned model trained to the end of its input, as the linear tutorial does, under
    a RunConfig that logs and saves often: the INFO lines in their order."""
    rng = np.random.RandomState(0)
    x = rng.rand(64, 2).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16).repeat(3)

    model = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=[2])],
        model_dir=os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(log_step_count_steps=5, save_checkpoints_steps=6),
    )
    with info_lines() as lines:
        model.train(input_fn)
        result = model.evaluate(input_fn, steps=2)
    return {
        "exact": {"global_step": int(result["global_step"]), "lines": lines},
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


# ------------------------------------------------------------------ boosted trees tutorials
CATEGORICAL_COLUMNS = [
    "sex",
    "n_siblings_spouses",
    "parch",
    "class",
    "deck",
    "embark_town",
    "alone",
]
NUMERIC_COLUMNS = ["age", "fare"]


def titanic_frame(n, seed):
    """The titanic CSV's columns and dtypes (pandas reads its counts as int64, age and
    fare as float64); `survived` popped off as the label."""
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["male", "female"], n, p=[0.65, 0.35]),
            "age": rng.uniform(1, 70, n).round(1),
            "n_siblings_spouses": rng.choice([0, 1, 2, 3, 4, 5, 8], n),
            "parch": rng.choice([0, 1, 2, 3, 4, 5], n),
            "fare": rng.exponential(30, n).round(2),
            "class": rng.choice(["Third", "First", "Second"], n),
            "deck": rng.choice(["unknown", "C", "G", "A", "B", "D", "F", "E"], n),
            "embark_town": rng.choice(["Southampton", "Cherbourg", "Queenstown", "unknown"], n),
            "alone": rng.choice(["n", "y"], n),
        }
    )
    score = (frame.sex == "female") * 1.5 + (frame["class"] == "First") - frame.age / 40
    frame["survived"] = (score + rng.normal(0, 0.5, n) > 0.3).astype(np.int64)
    return frame, frame.pop("survived")


def one_hot_cat_column(feature_name, vocab):
    return tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_vocabulary_list(feature_name, vocab)
    )


def titanic_feature_columns(dftrain):
    feature_columns = []
    for feature_name in CATEGORICAL_COLUMNS:
        vocabulary = dftrain[feature_name].unique()  # int64 for the counts
        feature_columns.append(one_hot_cat_column(feature_name, vocabulary))
    for feature_name in NUMERIC_COLUMNS:
        feature_columns.append(tf.feature_column.numeric_column(feature_name, dtype=tf.float32))
    return feature_columns


def make_input_fn(X, y, n_epochs=None, shuffle=True):
    """The tutorials' input_fn: the whole data set in each batch."""
    num_examples = len(y)

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((dict(X), y))
        if shuffle:
            dataset = dataset.shuffle(num_examples)
        dataset = dataset.repeat(n_epochs)
        return dataset.batch(num_examples)

    return input_fn


def make_inmemory_train_input_fn(X, y):
    y = np.expand_dims(y, axis=1)

    def input_fn():
        return dict(X), y

    return input_fn


def _trees_titanic(workdir, feature_columns, dftrain, y_train, eval_input_fn):
    """The trees of both tutorials: evaluate, explanations, importances."""
    est = tf.estimator.BoostedTreesClassifier(
        feature_columns, n_batches_per_layer=1, model_dir=os.path.join(workdir, "bt")
    )
    est.train(make_input_fn(dftrain, y_train), max_steps=30)  # the tutorial: 100
    result = est.evaluate(eval_input_fn)
    params = {
        "n_trees": 10,  # the tutorial: 50
        "max_depth": 3,
        "n_batches_per_layer": 1,
        "center_bias": True,
    }
    understood = tf.estimator.BoostedTreesClassifier(
        feature_columns,
        train_in_memory=True,
        model_dir=os.path.join(workdir, "bt_in_memory"),
        **params,
    )
    understood.train(make_inmemory_train_input_fn(dftrain, y_train))
    explained = understood.evaluate(eval_input_fn)
    pred_dicts = list(understood.experimental_predict_with_explanations(eval_input_fn))
    probs = np.array([pred["probabilities"][1] for pred in pred_dicts])
    df_dfc = pd.DataFrame([pred["dfc"] for pred in pred_dicts])
    importances = understood.experimental_feature_importances(normalize=True)
    return {
        "evaluate": floats({k: v for k, v in result.items() if k != "global_step"}),
        "global_step": int(result["global_step"]),
        "in_memory_evaluate": floats({k: v for k, v in explained.items() if k != "global_step"}),
        "in_memory_global_step": int(explained["global_step"]),
        "explanation_keys": sorted(pred_dicts[0]),
        "dfc_keys": sorted(df_dfc.columns),
        "biases": sorted({float(pred["bias"]) for pred in pred_dicts}),
        "dfc_gap": float(np.max(np.abs(df_dfc.sum(axis=1).values + pred_dicts[0]["bias"] - probs))),
        "importances": {k: float(v) for k, v in importances.items()},
    }


@program
def boosted_trees_titanic(workdir):
    """The titanic tutorials: the linear model they compare against, and their trees."""
    dftrain, y_train = titanic_frame(160, 0)
    dfeval, y_eval = titanic_frame(60, 1)
    feature_columns = titanic_feature_columns(dftrain)
    train_input_fn = make_input_fn(dftrain, y_train)
    eval_input_fn = make_input_fn(dfeval, y_eval, shuffle=False, n_epochs=1)
    linear_est = tf.estimator.LinearClassifier(
        feature_columns, model_dir=os.path.join(workdir, "linear")
    )
    linear_est.train(train_input_fn, max_steps=100)
    result = linear_est.evaluate(eval_input_fn)
    rows = list(linear_est.predict(eval_input_fn))
    in_memory = tf.estimator.LinearClassifier(
        feature_columns, model_dir=os.path.join(workdir, "linear_in_memory")
    )
    in_memory.train(make_inmemory_train_input_fn(dftrain, y_train), max_steps=5)
    in_memory_result = in_memory.evaluate(eval_input_fn)
    out = {
        "exact": {
            **seen(result, rows),
            "evaluate_dtypes": {k: type(v).__name__ for k, v in sorted(result.items())},
            "variables": linear_est.get_variable_names(),
            "in_memory_global_step": int(in_memory_result["global_step"]),
            "has_boosted_trees": hasattr(tf.estimator, "BoostedTreesClassifier"),
        },
        "close": {
            **floats({k: v for k, v in result.items() if k != "global_step"}),
            "probabilities": [float(row["probabilities"][1]) for row in rows[:8]],
            "in_memory_loss": float(in_memory_result["loss"]),
        },
    }
    if out["exact"]["has_boosted_trees"]:
        out["trees"] = _trees_titanic(workdir, feature_columns, dftrain, y_train, eval_input_fn)
    return out


def _surface(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-2, 2, n)
    y = rng.uniform(-2, 2, n)
    return pd.DataFrame({"x": x, "y": y, "z": x * np.exp(-(x**2) - y**2)})


@program
def boosted_trees_regression(workdir):
    """Model understanding's fitted surface: z = x exp(-x^2 - y^2), a LinearRegressor and
    BoostedTreesRegressor, predicted over a grid given as one tensor per column."""
    df = _surface(300, 0)
    xi, yi = np.meshgrid(np.linspace(-2.0, 2.0, 8), np.linspace(-2.1, 2.1, 9))
    df_predict = pd.DataFrame({"x": xi.flatten(), "y": yi.flatten()})

    def predict(est):
        predict_input_fn = lambda: tf.data.Dataset.from_tensors(dict(df_predict))  # noqa: E731
        return np.array([p["predictions"][0] for p in est.predict(predict_input_fn)])

    fc = [tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("y")]
    train_input_fn = make_input_fn(df, df.z)
    est = tf.estimator.LinearRegressor(fc, model_dir=os.path.join(workdir, "linear"))
    est.train(train_input_fn, max_steps=50)
    linear = predict(est)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensors(dict(df_predict))))
    out = {
        "exact": {"predictions": structure(rows), "count": len(rows)},
        "close": {"linear": linear.tolist()},
    }
    if hasattr(tf.estimator, "BoostedTreesRegressor"):
        trees = tf.estimator.BoostedTreesRegressor(
            fc, n_batches_per_layer=1, n_trees=5, model_dir=os.path.join(workdir, "bt")
        )
        trees.train(train_input_fn, max_steps=500)
        fitted = predict(trees)
        truth = xi.flatten() * np.exp(-(xi.flatten() ** 2) - yi.flatten() ** 2)
        out["trees"] = {
            "global_step": int(trees.get_variable_value("global_step")),
            "count": len(fitted),
            "trees_error": float(np.mean((fitted - truth) ** 2)),
            "linear_error": float(np.mean((linear - truth) ** 2)),
        }
    return out


# ------------------------------------------------------------------ official/r1 wide_deep
_CSV_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "gender", "capital_gain", "capital_loss",
    "hours_per_week", "native_country", "income_bracket",
]  # fmt: skip
_CSV_COLUMN_DEFAULTS = [[0], [""], [0], [""], [0], [""], [""], [""], [""], [""], [0], [0], [0], [""], [""]]  # fmt: skip
_HASH_BUCKET_SIZE = 1000
_EDUCATION = [
    "Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college", "Assoc-acdm",
    "Assoc-voc", "7th-8th", "Doctorate", "Prof-school", "5th-6th", "10th", "1st-4th",
    "Preschool", "12th",
]  # fmt: skip
_MARITAL = [
    "Married-civ-spouse", "Divorced", "Married-spouse-absent", "Never-married",
    "Separated", "Married-AF-spouse", "Widowed",
]  # fmt: skip
_RELATIONSHIP = ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried", "Other-relative"]
_WORKCLASS = [
    "Self-emp-not-inc", "Private", "State-gov", "Federal-gov", "Local-gov", "?",
    "Self-emp-inc", "Without-pay", "Never-worked",
]  # fmt: skip


def build_model_columns():
    """census_dataset.build_model_columns, as the sample wrote it."""
    fc = tf.feature_column
    age = fc.numeric_column("age")
    education_num = fc.numeric_column("education_num")
    capital_gain = fc.numeric_column("capital_gain")
    capital_loss = fc.numeric_column("capital_loss")
    hours_per_week = fc.numeric_column("hours_per_week")
    education = fc.categorical_column_with_vocabulary_list("education", _EDUCATION)
    marital_status = fc.categorical_column_with_vocabulary_list("marital_status", _MARITAL)
    relationship = fc.categorical_column_with_vocabulary_list("relationship", _RELATIONSHIP)
    workclass = fc.categorical_column_with_vocabulary_list("workclass", _WORKCLASS)
    occupation = fc.categorical_column_with_hash_bucket(
        "occupation", hash_bucket_size=_HASH_BUCKET_SIZE
    )
    age_buckets = fc.bucketized_column(age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])
    base_columns = [education, marital_status, relationship, workclass, occupation, age_buckets]
    crossed_columns = [
        fc.crossed_column(["education", "occupation"], hash_bucket_size=_HASH_BUCKET_SIZE),
        fc.crossed_column(
            [age_buckets, "education", "occupation"], hash_bucket_size=_HASH_BUCKET_SIZE
        ),
    ]
    deep_columns = [
        age, education_num, capital_gain, capital_loss, hours_per_week,
        fc.indicator_column(workclass), fc.indicator_column(education),
        fc.indicator_column(marital_status), fc.indicator_column(relationship),
        fc.embedding_column(occupation, dimension=8),
    ]  # fmt: skip
    return base_columns + crossed_columns, deep_columns


def write_census_csv(path, n, seed):
    """Rows in adult.data's layout (census_dataset.py strips the spaces after commas)."""
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        for _ in range(n):
            age = int(rng.randint(17, 80))
            education_num = int(rng.randint(1, 17))
            hours = int(rng.randint(10, 70))
            rich = education_num * 3 + hours / 2 + age / 3 + rng.normal(0, 8) > 60
            row = [
                age, rng.choice(_WORKCLASS), int(rng.randint(20000, 400000)),
                rng.choice(_EDUCATION), education_num, rng.choice(_MARITAL),
                rng.choice(["Tech-support", "Craft-repair", "Sales", "Exec-managerial"]),
                rng.choice(_RELATIONSHIP), rng.choice(["White", "Black", "Other"]),
                rng.choice(["Male", "Female"]), int(rng.choice([0, 0, 0, 5000])),
                int(rng.choice([0, 0, 1500])), hours, "United-States",
                ">50K" if rich else "<=50K",
            ]  # fmt: skip
            f.write(",".join(str(v) for v in row) + "\n")


def census_input_fn(data_file, num_epochs, shuffle, batch_size):
    """census_dataset.input_fn: CSV lines to (features, bool labels)."""

    def parse_csv(value):
        tf.compat.v1.logging.info(f"Parsing {data_file}")
        columns = tf.io.decode_csv(value, record_defaults=_CSV_COLUMN_DEFAULTS)
        features = dict(zip(_CSV_COLUMNS, columns, strict=True))
        labels = features.pop("income_bracket")
        classes = tf.equal(labels, ">50K")  # binary classification
        return features, classes

    dataset = tf.data.TextLineDataset(data_file)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=100)
    dataset = dataset.map(parse_csv, num_parallel_calls=5)
    dataset = dataset.repeat(num_epochs)
    return dataset.batch(batch_size)


def build_estimator(model_dir, model_column_fn, inter_op, intra_op, **kwargs):
    """census_main.build_estimator (model_type 'wide_deep'), as tf_upgrade_v2 leaves it."""
    wide_columns, deep_columns = model_column_fn()
    hidden_units = [100, 75, 50, 25]
    run_config = tf.estimator.RunConfig().replace(
        session_config=tf.compat.v1.ConfigProto(
            device_count={"GPU": 0},
            inter_op_parallelism_threads=inter_op,
            intra_op_parallelism_threads=intra_op,
        ),
        tf_random_seed=5,
    )
    return tf.estimator.DNNLinearCombinedClassifier(
        model_dir=model_dir,
        linear_feature_columns=wide_columns,
        dnn_feature_columns=deep_columns,
        dnn_hidden_units=hidden_units,
        config=run_config,
        **kwargs,
    )


def census_examples(path, count, feature_spec):
    """The first `count` rows of a census CSV as the serialized tf.Examples a client of
    the parsing export sends (numbers as floats, as the spec says), label dropped."""
    examples = []
    with open(path) as f:
        for line in list(f)[:count]:
            values = dict(zip(_CSV_COLUMNS, line.strip().split(","), strict=True))
            feature = {}
            for key, spec in feature_spec.items():
                if spec.dtype == tf.string:
                    value = tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[values[key].encode()])
                    )
                else:
                    value = tf.train.Feature(
                        float_list=tf.train.FloatList(value=[float(values[key])])
                    )
                feature[key] = value
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            examples.append(example.SerializeToString())
    return examples


@program
def wide_deep_census_r1(workdir):
    """census_main + wide_deep_run_loop: build, train/evaluate per epoch, export."""
    train_file = os.path.join(workdir, "adult.data")
    test_file = os.path.join(workdir, "adult.test")
    write_census_csv(train_file, 80, 0)
    write_census_csv(test_file, 40, 1)
    model_dir = os.path.join(workdir, "census_model")
    refused = error_of(
        lambda: build_estimator(
            model_dir, build_model_columns, 0, 0, loss_reduction=tf.compat.v1.losses.Reduction.SUM
        )
    )
    model = build_estimator(
        model_dir, build_model_columns, 0, 0, loss_reduction=tf.keras.losses.Reduction.SUM
    )
    tensors_to_log = {"average_loss": "head/truediv", "loss": "head/weighted_loss/Sum"}
    logging_hook = tf.estimator.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=100)
    # 2.15 failed building the graph, before its first checkpoint, as the kit does (the
    # hook's tensor names run its call on the graph path): its lines are left out.
    hooked = error_of(
        lambda: model.train(lambda: census_input_fn(train_file, 1, True, 40), hooks=[logging_hook])
    )
    epochs = []
    with info_lines() as lines:
        for _ in range(2):
            model.train(input_fn=lambda: census_input_fn(train_file, 1, True, 40))
            epochs.append(model.evaluate(input_fn=lambda: census_input_fn(test_file, 1, False, 40)))
    wide_columns, deep_columns = build_model_columns()
    feature_spec = tf.feature_column.make_parse_example_spec(wide_columns + deep_columns)
    example_input_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    export_base = os.path.join(workdir, "export")
    old_name = error_of(
        lambda: model.export_savedmodel(export_base, example_input_fn, strip_default_attrs=True)
    )
    export_dir = as_text(model.export_saved_model(export_base, example_input_fn))
    examples = census_examples(test_file, 3, feature_spec)
    served_shapes, _ = served(export_dir, "predict", examples=examples)
    classified_shapes, _ = served(export_dir, "serving_default", inputs=examples)
    return {
        "exact": {
            "loss_reduction_v1_sum": refused[:1] if refused else None,
            "hooked_train": hooked[:1] if hooked else None,
            "evaluate_keys": [sorted(result) for result in epochs],
            "global_steps": [int(result["global_step"]) for result in epochs],
            "model_dir": listing(model.model_dir),
            "train_tags": sorted(event_tags(model.model_dir)),
            "eval_tags": event_tags(model.eval_dir()),
            "export_savedmodel": old_name[:1] if old_name else None,
            "feature_spec": {k: type(v).__name__ for k, v in sorted(feature_spec.items())},
            "signatures": signatures(export_dir),
            "export_files": listing(export_dir),
            "served": served_shapes,
            "classified": classified_shapes,
            "lines": lines,
        },
        "messages": {
            "loss_reduction_v1_sum": refused[1] if refused else None,
            "hooked_train": hooked[1] if hooked else None,
        },
        # What 2.15 drew for the DNN's start decides the rest on 80 rows: the labels' own.
        "close": floats({k: epochs[-1][k] for k in ("label/mean", "accuracy_baseline")}),
    }


# ------------------------------------------------------------------ Cloud ML Engine
TAXI_FEATURES = ["pickuplon", "pickuplat", "dropofflon", "dropofflat", "passengers"]
TAXI_DEFAULTS = [[0.0], [-74.0], [40.0], [-74.0], [40.7], [1.0], ["nokey"]]
TAXI_CSV = ["fare_amount", *TAXI_FEATURES, "key"]


def write_taxi_csv(path, n, seed):
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        for i in range(n):
            lon0, lon1 = rng.uniform(-74.05, -73.75, 2)
            lat0, lat1 = rng.uniform(40.6, 40.85, 2)
            fare = 2.5 + 60 * (abs(lon1 - lon0) + abs(lat1 - lat0)) + rng.normal(0, 1)
            row = [round(fare, 2), lon0, lat0, lon1, lat1, int(rng.randint(1, 5)), f"k{i}"]
            f.write(",".join(str(v) for v in row) + "\n")


def taxi_read_dataset(filename, mode, batch_size=16):
    def decode_csv(row):
        columns = tf.io.decode_csv(row, record_defaults=TAXI_DEFAULTS)
        features = dict(zip(TAXI_CSV, columns, strict=True))
        features.pop("key")
        label = features.pop("fare_amount")
        return features, label

    def input_fn():
        dataset = tf.data.TextLineDataset(tf.io.gfile.glob(filename)).map(decode_csv)
        if mode == tf.estimator.ModeKeys.TRAIN:
            num_epochs = None
            dataset = dataset.shuffle(buffer_size=10 * batch_size, seed=2)
        else:
            num_epochs = 1
        return dataset.repeat(num_epochs).batch(batch_size)

    return input_fn


def taxi_json_serving_input_fn():
    feature_placeholders = {
        name: tf.compat.v1.placeholder(tf.float32, [None]) for name in TAXI_FEATURES
    }
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in feature_placeholders.items()}
    return tf.estimator.export.ServingInputReceiver(features, feature_placeholders)


def taxi_csv_serving_input_fn():
    csv_row = tf.compat.v1.placeholder(shape=[None], dtype=tf.string)
    columns = tf.io.decode_csv(csv_row, record_defaults=TAXI_DEFAULTS[1:-1])
    features = dict(zip(TAXI_FEATURES, columns, strict=True))
    return tf.estimator.export.ServingInputReceiver(features, {"csv_row": csv_row})


class StepsSeen(tf.compat.v1.train.SessionRunHook):
    """A TrainSpec hook: how often each of its methods ran."""

    def __init__(self):
        self.calls = {"begin": 0, "after_create_session": 0, "end": 0, "runs": 0}

    def begin(self):
        self.calls["begin"] += 1

    def after_create_session(self, session, coord):
        self.calls["after_create_session"] += 1

    def after_run(self, run_context, run_values):
        self.calls["runs"] += 1

    def end(self, session):
        self.calls["end"] += 1


def rmse(labels, predictions):
    pred_values = predictions["predictions"]
    return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, pred_values)}


@program
def cloud_ml_train_and_evaluate(workdir):
    """taxifare/census task.py: train_and_evaluate with a LatestExporter given alone and a
    FinalExporter of a CSV receiver, a named EvalSpec, add_metrics, keep_checkpoint_max."""
    train_file = os.path.join(workdir, "taxi-train.csv")
    valid_file = os.path.join(workdir, "taxi-valid.csv")
    write_taxi_csv(train_file, 96, 0)
    write_taxi_csv(valid_file, 40, 1)
    output_dir = os.path.join(workdir, "job_dir")
    run_config = tf.estimator.RunConfig(
        model_dir=output_dir, save_checkpoints_steps=10, keep_checkpoint_max=2, tf_random_seed=9
    )
    feature_columns = [tf.feature_column.numeric_column(name) for name in TAXI_FEATURES]
    estimator = tf.estimator.LinearRegressor(feature_columns=feature_columns, config=run_config)
    estimator = tf.estimator.add_metrics(estimator, rmse)
    hook = StepsSeen()
    train_spec = tf.estimator.TrainSpec(
        input_fn=taxi_read_dataset(train_file, tf.estimator.ModeKeys.TRAIN),
        max_steps=35,
        hooks=[hook],
    )
    latest = tf.estimator.LatestExporter("exporter", taxi_json_serving_input_fn, exports_to_keep=1)
    final = tf.estimator.FinalExporter("taxi_csv", taxi_csv_serving_input_fn)
    eval_spec = tf.estimator.EvalSpec(
        input_fn=taxi_read_dataset(valid_file, tf.estimator.ModeKeys.EVAL),
        steps=2,
        name="taxi-eval",
        start_delay_secs=0,
        throttle_secs=600,  # (the default: the first checkpoint and the last evaluated)
        exporters=latest,
    )
    with info_lines() as lines:
        result, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        # The job run again on its job_dir (max_steps reached), with census's FinalExporter.
        final_spec = tf.estimator.EvalSpec(
            input_fn=eval_spec.input_fn, steps=2, exporters=[final], throttle_secs=0
        )
        again = tf.estimator.train_and_evaluate(estimator, train_spec, final_spec)
    export_root = os.path.join(output_dir, "export")
    (latest_dir,) = glob.glob(os.path.join(export_root, "exporter", "*"))
    csv_dir = as_text(
        estimator.export_saved_model(os.path.join(workdir, "csv"), taxi_csv_serving_input_fn)
    )
    csv_rows = ["-73.99,40.75,-73.95,40.78,2", "-73.80,40.65,-73.98,40.76,1"]
    csv_served, _ = served(csv_dir, "serving_default", inputs=csv_rows)
    state = tf.train.get_checkpoint_state(output_dir)
    return {
        "exact": {
            "result_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "exports": [type(e).__name__ for e in exports],
            "export_paths": [
                re.sub(r"\d{10}", "<ts>", os.path.relpath(as_text(e), output_dir)) for e in exports
            ],
            "again": [type(e).__name__ for e in again],
            "export_folders": sorted(os.listdir(export_root)),
            "hook_calls": hook.calls,
            "kept": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
            "model_dir": listing(output_dir),
            "eval_tags": event_tags(estimator.eval_dir("taxi-eval")),
            "default_eval_tags": event_tags(estimator.eval_dir()),
            "latest_signatures": signatures(latest_dir),
            "csv_signatures": signatures(csv_dir),
            "csv_served": csv_served,
            "lines": lines,
        },
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }
