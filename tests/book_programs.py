"""Books' companion code of the tf.estimator era, written as their chapters wrote it (after
`tf_upgrade_v2`, and the hand edits its report asks for where `tf.contrib` is gone), on a
few dozen made-up rows and a few steps.

- `flights_wide_and_deep`: "Data Science on the Google Cloud Platform", chapter 9 (the
  flights model, ported from `tf.contrib.learn` to `tf.estimator` as the book's later
  edition did): CSV lines through `TextLineDataset` and `decode_csv`, real columns, a
  vocabulary and two hashed columns, lat/lon bucketized over `np.linspace` and crossed
  (a cross of crosses too), every sparse column embedded, the feature columns handed over as
  `dict.values()`, an RMSE of `probabilities[:, 1]` by `add_metrics`,
  `train_and_evaluate` with a `LatestExporter` of a placeholder receiver;
- `learning_tf_cnn_model_fn`: "Learning TensorFlow" (O'Reilly), chapter 7: the MNIST CNN
  built with `tf.compat.v1.layers` in a `model_fn` taking `params`, Adam's `minimize` (for
  `optimize_loss`), an accuracy in `eval_metric_ops`, predictions of the argmax (what it
  shows, not its values: the layers' Glorot draws its seed from Python's `random`, which
  2.15's `numpy_input_fn` seeded again from the system at each call);
- `learning_tf_linear_regressor`: the same chapter's Boston regression, a single numeric
  column of shape [13] with plain gradient descent, its MSE printed: `tf.estimator`'s
  V2 class refuses the TF1 optimizer `tf_upgrade_v2` leaves, `tf.compat.v1.estimator`'s
  takes it;
- `mastering_tf_linear_mnist`: "Mastering TensorFlow 1.x" (Packt), chapter 2: a
  `LinearClassifier` over a `numeric_column("x", shape=...)` with `n_classes=10`, fed by
  `numpy_input_fn`, its evaluation printed key by key;
- `iris_export_and_reload`: the Iris `DNNClassifier` of the TF 1.x books (hidden units
  [10, 20, 10], `ProximalAdagradOptimizer` with an L1 strength, the species as strings):
  as `tf_upgrade_v2` leaves it, the V2 class refuses the TF1 optimizer before it looks at
  the labels, and `tf.compat.v1.estimator`'s refuses a Keras one; the V1 class with a
  `label_vocabulary` trains, evaluates under `name="test"`, exports by
  `export_savedmodel` (a parsing receiver), and the export is read back as the book's
  `tf.contrib.predictor` did (a TF1 session on the `predict` signature) and by
  `tf.saved_model.load`;
- `pandas_ftrl_predict_keys`: a census-shaped DataFrame through `pandas_input_fn`, a V1
  `LinearClassifier` under Ftrl with L1, `predict_keys` given as a string,
  `yield_single_examples=False`, and `target_column` left in the frame it reads.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, keys, printed lines, log lines, errors as [type, first
line]) and `close` values (1e-4). `tests/test_books.py` compares them with 2.15's
recording (`tests/tf215/record_family.py book_programs`, into
`tests/data/tf215/books.json`).
"""

import os
import re

import numpy as np

from tests.program_registry import registry
from tests.public_sample_programs import info_lines
from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import listing, make_input_fn, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "books.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
_NUMBER = re.compile(r"-?\d+\.\d+(e[-+]?\d+)?")
# The log lines a reader of these chapters sees (none that hang on the clock).
_LOGGED = re.compile(
    r"^(Loss for final step|Saving dict for global step|loss = |Skipping training|"
    r"Saving checkpoints for|Starting evaluation|Finished evaluation|"
    r"Start train and evaluate loop|Evaluation \[|SavedModel written to|Signatures|"
    r"Exporting|Restoring parameters|Using config|Not using|Warm)"
)


def _error(call):
    """[type, first line] of what `call()` raised (None when it returned)."""
    raised = _raised(call)
    return raised and [raised[0], raised[1].splitlines()[0] if raised[1] else ""]


def _printed(result):
    """The book's `for key, value in sorted(result.items()): print(...)`, floats as N."""
    return [_NUMBER.sub("N", f"{k}: {v}") for k, v in sorted(result.items())]


def _stamped(export_dir, workdir):
    """An export's folder under `workdir`, its timestamp as <ts>."""
    return re.sub(r"\d{10}$", "<ts>", os.path.relpath(export_dir.decode(), workdir))


def _types(result):
    return {k: type(v).__name__ for k, v in sorted(result.items())}


# ------------------------------------------------------------------ flights (DS on GCP)
CSV_COLUMNS = [
    "ontime",
    "dep_delay",
    "taxiout",
    "distance",
    "avg_dep_delay",
    "avg_arr_delay",
    "carrier",
    "dep_lat",
    "dep_lon",
    "arr_lat",
    "arr_lon",
    "origin",
    "dest",
]
LABEL_COLUMN = "ontime"
DEFAULTS = [[0.0]] * 6 + [["na"], [0.0], [0.0], [0.0], [0.0], ["na"], ["na"]]
REAL = "dep_delay,taxiout,distance,avg_dep_delay,avg_arr_delay,dep_lat,dep_lon,arr_lat,arr_lon"
CARRIERS = ["AS", "VX", "F9", "UA", "US", "WN", "HA", "EV", "MQ", "DL", "OO", "B6", "NK", "AA"]
AIRPORTS = ["SEA", "SFO", "JFK", "ORD", "ATL", "DEN"]


def _flights_csv(path, rows, seed):
    r = np.random.RandomState(seed)
    with open(path, "w") as f:
        for _ in range(rows):
            dep_delay, taxiout = r.uniform(-10, 60), r.uniform(5, 30)
            ontime = float(dep_delay + taxiout < 35)
            values = [ontime, dep_delay, taxiout, r.uniform(100, 2500), r.uniform(0, 20)]
            values += [r.uniform(0, 20), r.choice(CARRIERS), r.uniform(25, 48)]
            values += [r.uniform(-122, -72), r.uniform(25, 48), r.uniform(-122, -72)]
            values += list(r.choice(AIRPORTS, 2))
            f.write(",".join(v if isinstance(v, str) else f"{v:.2f}" for v in values) + "\n")


def _read_dataset(tf, filename, mode, batch_size=8):
    def _input_fn():
        num_epochs = None if mode == tf.estimator.ModeKeys.TRAIN else 1

        def decode_csv(value_column):
            columns = tf.io.decode_csv(value_column, record_defaults=DEFAULTS)
            features = dict(zip(CSV_COLUMNS, columns, strict=True))
            label = features.pop(LABEL_COLUMN)
            return features, label

        dataset = tf.data.TextLineDataset(tf.io.gfile.glob(filename)).map(decode_csv)
        return dataset.repeat(num_epochs).batch(batch_size)

    return _input_fn


def _flights_columns(tf, nbuckets=5):
    fc = tf.feature_column
    real = {name: fc.numeric_column(name) for name in REAL.split(",")}
    sparse = {
        "carrier": fc.categorical_column_with_vocabulary_list("carrier", vocabulary_list=CARRIERS),
        "origin": fc.categorical_column_with_hash_bucket("origin", hash_bucket_size=1000),
        "dest": fc.categorical_column_with_hash_bucket("dest", hash_bucket_size=1000),
    }
    latbuckets = np.linspace(20.0, 50.0, nbuckets).tolist()
    lonbuckets = np.linspace(-120.0, -70.0, nbuckets).tolist()
    disc = {}
    disc.update(
        {f"d_{k}": fc.bucketized_column(real[k], latbuckets) for k in ["dep_lat", "arr_lat"]}
    )
    disc.update(
        {f"d_{k}": fc.bucketized_column(real[k], lonbuckets) for k in ["dep_lon", "arr_lon"]}
    )
    sparse["dep_loc"] = fc.crossed_column([disc["d_dep_lat"], disc["d_dep_lon"]], nbuckets**2)
    sparse["arr_loc"] = fc.crossed_column([disc["d_arr_lat"], disc["d_arr_lon"]], nbuckets**2)
    sparse["dep_arr"] = fc.crossed_column([sparse["dep_loc"], sparse["arr_loc"]], nbuckets**4)
    sparse["ori_dest"] = fc.crossed_column(["origin", "dest"], hash_bucket_size=1000)

    def create_embed(sparse_col):
        dim = 10
        if hasattr(sparse_col, "bucket_size"):  # (contrib's name: never true here)
            dim = 1 + round(np.log2(sparse_col.bucket_size))
        return fc.embedding_column(sparse_col, dimension=dim)

    real.update({name: create_embed(col) for name, col in sparse.items()})
    return real, sparse


def _flights_serving_input_fn(tf):
    placeholder = tf.compat.v1.placeholder
    feature_placeholders = {key: placeholder(tf.float32, [None]) for key in REAL.split(",")}
    feature_placeholders.update(
        {key: placeholder(tf.string, [None]) for key in ["carrier", "origin", "dest"]}
    )
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in feature_placeholders.items()}
    return tf.estimator.export.ServingInputReceiver(features, feature_placeholders)


@program
def flights_wide_and_deep(tf, workdir):
    train_csv, eval_csv = os.path.join(workdir, "train.csv"), os.path.join(workdir, "eval.csv")
    _flights_csv(train_csv, 40, 0)
    _flights_csv(eval_csv, 16, 1)
    output_dir = os.path.join(workdir, "trained_model")
    real, sparse = _flights_columns(tf)
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=output_dir,
        linear_feature_columns=sparse.values(),
        dnn_feature_columns=real.values(),
        dnn_hidden_units=[8, 4],
        config=tf.estimator.RunConfig(tf_random_seed=13),
    )

    def my_rmse(labels, predictions):
        prob_ontime = predictions["probabilities"][:, 1]
        return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, prob_ontime)}

    estimator = tf.estimator.add_metrics(estimator, my_rmse)
    train_spec = tf.estimator.TrainSpec(
        _read_dataset(tf, train_csv, tf.estimator.ModeKeys.TRAIN), max_steps=6
    )
    exporter = tf.estimator.LatestExporter("flights", lambda: _flights_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        _read_dataset(tf, eval_csv, tf.estimator.ModeKeys.EVAL),
        steps=None,
        exporters=exporter,
        start_delay_secs=0,
        throttle_secs=0,
    )
    with info_lines(_LOGGED) as logged:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    (export_dir,) = exports
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    return {
        "exact": {
            "columns": {
                "linear": sorted(c.name for c in sparse.values()),
                "dnn": sorted(c.name for c in real.values()),
            },
            "evaluate": _types(metrics),
            "printed": _printed(metrics),
            "model_dir": listing(output_dir),
            "export_dir": os.path.relpath(export_dir, output_dir).split(os.sep)[:2],
            "signatures": signatures(export_dir),
            "logged": logged,
        },
        "close": {"evaluate": {k: float(v) for k, v in metrics.items()}},
    }


# ------------------------------------------------------------------ Learning TensorFlow, ch. 7
def _digits(n, seed, side=8):
    """Made-up `side`x`side` 'digits': the class lights one band of rows."""
    r = np.random.RandomState(seed)
    labels = r.randint(0, 4, n)
    images = r.uniform(0, 0.3, (n, side, side)).astype(np.float32)
    for i, label in enumerate(labels):
        images[i, 2 * label : 2 * label + 2, :] += 0.7
    return images.reshape(n, side * side), labels.astype(np.int32)


def _cnn_model_fn(tf):
    layers = tf.compat.v1.layers

    def model_fn(features, labels, mode, params):
        x_image = tf.reshape(features["x"], [-1, 8, 8, 1])
        conv1 = layers.conv2d(x_image, 4, [3, 3], padding="same", activation=tf.nn.relu)
        pool1 = layers.max_pooling2d(conv1, [2, 2], [2, 2])
        pool1_flat = tf.reshape(pool1, [-1, 4 * 4 * 4])
        fc1 = layers.dense(pool1_flat, 16, activation=tf.nn.relu)
        training = mode == tf.estimator.ModeKeys.TRAIN
        fc1_drop = layers.dropout(fc1, rate=params["dropout"], training=training)
        y_conv = layers.dense(fc1_drop, 4)
        predictions = tf.argmax(y_conv, 1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=predictions)
        y_ = tf.one_hot(labels, 4)
        cross_entropy = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(labels=tf.stop_gradient(y_), logits=y_conv)
        )
        train_op = tf.compat.v1.train.AdamOptimizer(params["learning_rate"]).minimize(
            cross_entropy, global_step=tf.compat.v1.train.get_global_step()
        )
        accuracy = tf.compat.v1.metrics.accuracy(labels, predictions)
        return tf.estimator.EstimatorSpec(
            mode, predictions, cross_entropy, train_op, {"accuracy": accuracy}
        )

    return model_fn


@program
def learning_tf_cnn_model_fn(tf, workdir):
    data, labels = _digits(48, 0)
    test_data, test_labels = _digits(16, 1)
    model_dir = os.path.join(workdir, "cnn")
    cnn = tf.estimator.Estimator(
        model_fn=_cnn_model_fn(tf),
        model_dir=model_dir,
        params={"dropout": 0.0, "learning_rate": 1e-2},
        config=tf.estimator.RunConfig(tf_random_seed=7),
    )
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    train_fn = numpy_input_fn({"x": data}, labels, batch_size=16, num_epochs=None, shuffle=False)
    cnn.train(input_fn=train_fn, steps=10)
    test_fn = numpy_input_fn({"x": test_data}, test_labels, num_epochs=1, shuffle=False)
    test_acc = cnn.evaluate(input_fn=test_fn)
    predicted = list(cnn.predict(input_fn=test_fn))
    return {
        "exact": {
            "evaluate": _types(test_acc),
            "printed": _NUMBER.sub("N", "Test Accuracy: {}".format(test_acc["accuracy"])),
            "predicted": [type(predicted[0]).__name__, str(np.asarray(predicted).dtype)],
            "model_dir": listing(model_dir),
            "variables": dict(tf.train.list_variables(model_dir)),
            "predicted_count": len(predicted),
        },
    }


def _boston(n, seed):
    r = np.random.RandomState(seed)
    x = r.uniform(0, 1, (n, 13))
    y = x @ np.linspace(-2, 3, 13) + 20 + r.normal(0, 0.1, n)
    return x, y


@program
def learning_tf_linear_regressor(tf, workdir):
    x_data, y_data = _boston(40, 0)
    feature_columns = [tf.feature_column.numeric_column("x", shape=[13])]
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    train_fn = numpy_input_fn({"x": x_data}, y_data, batch_size=8, shuffle=False)
    reg = tf.estimator.LinearRegressor(  # what tf_upgrade_v2 leaves: a TF1 optimizer
        feature_columns=feature_columns,
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1),
        model_dir=os.path.join(workdir, "upgraded"),
    )
    upgraded = _error(lambda: reg.train(train_fn, steps=20))
    reg = tf.compat.v1.estimator.LinearRegressor(  # the hand edit
        feature_columns=feature_columns,
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1),
        model_dir=os.path.join(workdir, "boston"),
    )
    reg.train(train_fn, steps=20)
    mse = reg.evaluate(numpy_input_fn({"x": x_data}, y_data, shuffle=False), steps=1)
    weights = reg.get_variable_value("linear/linear_model/x/weights")
    as_array = numpy_input_fn(x_data, y_data, shuffle=False)
    return {
        "exact": {
            "evaluate": _types(mse),
            "printed": _NUMBER.sub("N", "MSE: {}".format(mse["average_loss"])),
            "variable_names": reg.get_variable_names(),
            "upgraded": upgraded,
            "x_not_a_dict": _error(lambda: reg.train(as_array, steps=1)),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in mse.items()},
            "weights": weights.ravel().tolist(),
        },
    }


# ------------------------------------------------------------------ Mastering TensorFlow 1.x
@program
def mastering_tf_linear_mnist(tf, workdir):
    x_train, y_train = _digits(48, 2)
    x_test, y_test = _digits(16, 3)
    n_classes = 10
    feature_columns = [tf.feature_column.numeric_column("x", shape=[8 * 8])]
    model = tf.estimator.LinearClassifier(
        feature_columns=feature_columns, n_classes=n_classes, model_dir=workdir + "/lc"
    )
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    train_input_fn = numpy_input_fn(
        x={"x": x_train}, y=y_train, batch_size=16, num_epochs=None, shuffle=False
    )
    model.train(input_fn=train_input_fn, steps=6)
    test_input_fn = numpy_input_fn(x={"x": x_test}, y=y_test, num_epochs=1, shuffle=False)
    score = model.evaluate(input_fn=test_input_fn)
    rows = list(model.predict(input_fn=test_input_fn))
    return {
        "exact": {
            "evaluate": _types(score),
            "printed": _printed(score),
            "predict_keys": sorted(rows[0]),
            "class_ids": [r["class_ids"].tolist() for r in rows[:4]],
            "model_dir": listing(workdir + "/lc"),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in score.items()},
            "probabilities": [r["probabilities"].tolist() for r in rows],
        },
    }


# ------------------------------------------------------------------ Iris, exported and reloaded
SPECIES = ["setosa", "versicolor", "virginica"]
IRIS_KEYS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def _iris(n, seed):
    r = np.random.RandomState(seed)
    kinds = r.randint(0, 3, n)
    x = r.normal(0, 0.3, (n, 4)).astype(np.float32) + kinds[:, None] * [1, -0.5, 2, 0.8]
    return {k: x[:, i] for i, k in enumerate(IRIS_KEYS)}, np.array(SPECIES)[kinds]


def _examples(tf, features, rows):
    def example(i):
        feature = {
            k: tf.train.Feature(float_list=tf.train.FloatList(value=[float(features[k][i])]))
            for k in IRIS_KEYS
        }
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    return [example(i) for i in range(rows)]


def _reloaded_v1(tf, export_dir, serialized):
    """The book's `tf.contrib.predictor.from_saved_model`, by hand: a TF1 session."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta.signature_def["predict"]
        fetches = {k: v.name for k, v in signature.outputs.items()}
        feed = {signature.inputs["examples"].name: serialized}
        return sess.run(fetches, feed_dict=feed)


@program
def iris_export_and_reload(tf, workdir):
    features, labels = _iris(45, 0)
    feature_columns = [tf.feature_column.numeric_column(k) for k in IRIS_KEYS]
    optimizer = lambda: tf.compat.v1.train.ProximalAdagradOptimizer(  # noqa: E731
        learning_rate=0.1, l1_regularization_strength=0.001
    )
    v2 = tf.estimator.DNNClassifier(
        [10, 20, 10], feature_columns, workdir + "/v2", n_classes=3, optimizer=optimizer()
    )
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    train_fn = numpy_input_fn(features, labels, batch_size=15, num_epochs=None, shuffle=False)
    upgraded = _error(lambda: v2.train(train_fn, steps=2))
    keras_sgd = tf.compat.v1.estimator.DNNClassifier(
        [4],
        feature_columns,
        workdir + "/v1",
        n_classes=3,
        label_vocabulary=SPECIES,
        optimizer=tf.keras.optimizers.SGD(),
    )
    v1_keras = _error(lambda: keras_sgd.train(train_fn, steps=1))
    v1_keras = v1_keras and [v1_keras[0], v1_keras[1].split(" Given:")[0]]  # (its module)
    model_dir = workdir + "/iris"
    classifier = tf.compat.v1.estimator.DNNClassifier(
        hidden_units=[10, 20, 10],
        feature_columns=feature_columns,
        model_dir=model_dir,
        n_classes=3,
        label_vocabulary=SPECIES,
        optimizer=optimizer(),
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    test_fn = numpy_input_fn(features, labels, num_epochs=1, shuffle=False)
    spec = tf.feature_column.make_parse_example_spec(feature_columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    with info_lines(_LOGGED) as logged:
        classifier.train(input_fn=train_fn, steps=8)
        accuracy_score = classifier.evaluate(input_fn=test_fn, name="test")["accuracy"]
        export_dir = classifier.export_savedmodel(workdir + "/export", receiver)
    serialized = _examples(tf, features, 4)
    reloaded = _reloaded_v1(tf, export_dir.decode(), serialized)
    served = tf.saved_model.load(export_dir.decode()).signatures["serving_default"]
    served = served(inputs=tf.constant(serialized))
    return {
        "exact": {
            "upgraded": upgraded,
            "v1_keras_optimizer": v1_keras,
            "v2_has_export_savedmodel": hasattr(v2, "export_savedmodel"),
            "printed": _NUMBER.sub("N", f"\nTest Accuracy: {accuracy_score:f}\n"),
            "export_dir": [type(export_dir).__name__, _stamped(export_dir, workdir)],
            "logged": logged,
            "model_dir": listing(model_dir),
            "signatures": signatures(export_dir.decode()),
            "reloaded": {k: [v.dtype.name, list(v.shape)] for k, v in sorted(reloaded.items())},
            "classes": reloaded["classes"].tolist()
            and [c.decode() for c in reloaded["classes"][:, 0]],
            "served": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(served.items())},
        },
        "close": {
            "accuracy": float(accuracy_score),
            "probabilities": reloaded["probabilities"].tolist(),
            "scores": served["scores"].numpy().tolist(),
        },
    }


# ------------------------------------------------------------------ pandas, Ftrl, predict_keys
@program
def pandas_ftrl_predict_keys(tf, workdir):
    import pandas as pd

    r = np.random.RandomState(4)
    df = pd.DataFrame(
        {
            "age": r.uniform(18, 70, 40).round(),
            "education": r.choice(["Bachelors", "HS-grad", "Masters"], 40),
            "hours": r.uniform(10, 60, 40).round(),
        }
    )
    df["income"] = ((df.hours > 35) & (df.education != "HS-grad")).astype(int)
    education = tf.feature_column.categorical_column_with_vocabulary_list(
        "education", ["Bachelors", "HS-grad", "Masters"]
    )
    age_buckets = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("age"), boundaries=[25, 35, 45, 55]
    )
    columns = [education, age_buckets, tf.feature_column.numeric_column("hours")]
    model_dir = os.path.join(workdir, "census")
    m = tf.compat.v1.estimator.LinearClassifier(
        feature_columns=columns,
        model_dir=model_dir,
        optimizer=tf.compat.v1.train.FtrlOptimizer(
            learning_rate=0.1, l1_regularization_strength=1.0
        ),
    )
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    m.train(
        pandas_input_fn(df, df["income"], batch_size=10, num_epochs=None, shuffle=False), steps=8
    )
    results = m.evaluate(pandas_input_fn(df, df["income"], num_epochs=1, shuffle=False), steps=None)
    pred_fn = pandas_input_fn(df.head(6), num_epochs=1, shuffle=False)
    as_string = list(m.predict(pred_fn, predict_keys="probabilities"))
    batched = list(m.predict(pred_fn, yield_single_examples=False))
    with_target = pandas_input_fn(df, target_column="income", num_epochs=1, shuffle=False)
    return {
        "exact": {
            "printed": _printed(results),
            "evaluate": _types(results),
            "predict_keys_string": sorted(as_string[0]),
            "batched": {k: list(np.shape(v)) for k, v in sorted(batched[0].items())},
            "target_column": _error(lambda: m.evaluate(with_target, name="target")),
            "model_dir": listing(model_dir),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in results.items()},
            "probabilities": [p["probabilities"].tolist() for p in as_string],
        },
    }


# ------------------------------------------------------------------ Deep Learning with TF 2 and Keras
BOSTON = [
    "CRIM",
    "ZN",
    "INDUS",
    "CHAS",
    "NOX",
    "RM",
    "AGE",
    "DIS",
    "RAD",
    "TAX",
    "PTRATIO",
    "B",
    "LSTAT",
]


def _dict_printed(result):
    """`print(result)` of evaluate()'s dict, its floats as N."""
    return _NUMBER.sub("N", str(result))


@program
def gulli_boston_and_mnist(tf, workdir):
    import pandas as pd

    x_train, y_train = _boston(40, 5)
    x_test, y_test = _boston(12, 6)
    x_train_df = pd.DataFrame(x_train, columns=BOSTON)
    x_test_df = pd.DataFrame(x_test, columns=BOSTON)
    y_train_df = pd.DataFrame(y_train, columns=["MEDV"])
    y_test_df = pd.DataFrame(y_test, columns=["MEDV"])
    feature_columns = [tf.feature_column.numeric_column(f, dtype=tf.float32) for f in BOSTON]

    # The chapter's `estimator_input_fn`: `from_tensor_slices((dict(df), labels_df))`.
    estimator_input_fn = lambda x, y, epochs=20: make_input_fn(x, y, epochs, False, 16)  # noqa: E731

    linear_est = tf.estimator.LinearRegressor(
        feature_columns=feature_columns, model_dir=workdir + "/logs/func/"
    )
    returned = linear_est.train(estimator_input_fn(x_train_df, y_train_df), steps=10)
    val_input_fn = estimator_input_fn(x_test_df, y_test_df, epochs=1)
    result = linear_est.evaluate(val_input_fn)
    preds = list(linear_est.predict(val_input_fn))
    shown = [
        f"Predicted Value:  {p['predictions'][0]} Expected:  {e}"
        for p, e in zip(preds, y_test[:4], strict=False)
    ]
    images, labels = _digits(32, 7)
    classifier = tf.estimator.LinearClassifier(
        feature_columns=[tf.feature_column.numeric_column("x", shape=[8, 8])],
        n_classes=10,
        model_dir=workdir + "/mnist_model/",
    )
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    classifier.train(
        numpy_input_fn(
            {"x": images.reshape(-1, 8, 8)}, labels, batch_size=16, num_epochs=None, shuffle=False
        ),
        steps=4,
    )
    eval_results = classifier.evaluate(
        numpy_input_fn({"x": images.reshape(-1, 8, 8)}, labels, num_epochs=1, shuffle=False)
    )
    return {
        "exact": {
            "train_returned": type(returned).__name__,
            "keys_in_order": list(result),
            "printed": _dict_printed(result),
            "predicted": [_NUMBER.sub("N", line) for line in shown],
            "prediction_dtype": str(preds[0]["predictions"].dtype),
            "mnist_keys_in_order": list(eval_results),
            "mnist_printed": _dict_printed(eval_results),
            "model_dir": listing(workdir + "/logs/func/"),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in result.items()},
            "predictions": [float(p["predictions"][0]) for p in preds],
            "mnist": {k: float(v) for k, v in eval_results.items()},
        },
    }
