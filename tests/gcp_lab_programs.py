"""Programs in the shape of Google Cloud's training-data-analyst Estimator labs, after
`tf_upgrade_v2` (and, where it stops with "tf.contrib.layers.optimize_loss cannot be
converted automatically", the `compat.v1` optimizer users put in its place).

The labs: 03_tensorflow's `b_estimator` (pandas_input_fn into LinearRegressor and
DNNRegressor, print_rmse, predict), 04_features' and 05_artandscience's California housing
(compat.v1 LinearRegressor / DNNRegressor, FtrlOptimizer, `add_metrics` RMSE cast to
float64, train_and_evaluate with `EvalSpec(start_delay_secs, throttle_secs)`), 08_image's
MNIST `image_classifier` (compat.v1 layers: CNN with batch normalization and dropout, a
numpy_input_fn, LatestExporter, a placeholder receiver), 09_sequence's sine `rnn2` (GRU
cells in a MultiRNNCell through dynamic_rnn) and 05_artandscience's `simple_rnn`
(BasicLSTMCell through static_rnn, a single unnamed PredictOutput), 09_sequence's
txtclsmodel (a vocabulary file's hash table in the input_fn and the serving receiver, a
Keras Conv1D stack through model_to_estimator, a fractional max_steps), feateng's taxifare
trainer (wide and deep over crosses of crosses), 02_tensorflow's e_traineval (a receiver
its feature engineering changed in place) and blogs/sme_academy's tf.estimator deep dive
(a weighted wide and deep classifier, a BestExporter, stop_if_no_increase_hook).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder,
writes its tiny data there, and returns what the lab's user sees: `exact` (keys, dtypes,
shapes, listings, variable names, signatures, log lines, errors: equal) and `close`
(values of deterministic runs: fixed starting weights written by the program, input in
file order or one full shuffled batch a step; or relations that hold whatever the
weights: 1e-4). `tests/test_gcp_labs.py` compares them with 2.15's recording
(`tests/tf215/record_family.py gcp_lab_programs`, into `tests/data/tf215/gcp_labs.json`).
"""

import glob
import math
import os
import re

import numpy as np
import pandas as pd

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "gcp_labs.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


# Log lines the labs' notebooks show (numbers and folders normalized; each once).
LAB_LINES = (
    "Could not find trained model",
    "Not using Distribute Coordinator",
    "Running training and evaluation locally",
    "Start train and evaluate loop",
    "Saving dict for global step",
    "Loss for final step",
    "Performing the final export",
    "Signatures INCLUDED",
    "Signatures EXCLUDED",
    "Export includes no default signature",
    "Training has already ended",
    "Skip the current checkpoint eval",
    "Warm-starting from",
)
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def _lab_lines(lines, workdir):
    """The lines LAB_LINES names, with folders and numbers replaced, each once, sorted."""
    shown = set()
    for line in lines:
        if line.startswith(LAB_LINES):
            line = line.replace(workdir, "<workdir>")
            shown.add(_NUMBER.sub("N", line))
    return sorted(shown)


def _fixed_start(tf, workdir, model_fn, features, labels, params=None):
    """A checkpoint giving every trainable variable `model_fn` makes fixed numbers
    (a sine over its values, scaled by its fan-in): a warm start both versions share."""
    directory = os.path.join(workdir, "fixed_start")
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        args = (features(), labels(), tf.estimator.ModeKeys.TRAIN)
        model_fn(*args, params) if params is not None else model_fn(*args)
        shapes = {v.op.name: v.shape.as_list() for v in tf.compat.v1.trainable_variables()}
    with tf.Graph().as_default():
        made = []
        for i, (name, shape) in enumerate(sorted(shapes.items())):
            size, fan_in = int(np.prod(shape)), int(np.prod(shape[:-1])) or 1
            value = np.sin(np.arange(size) * 0.7 + i) / np.sqrt(fan_in)
            made.append(
                tf.compat.v1.get_variable(name, initializer=value.reshape(shape).astype("f4"))
            )
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver(made).save(session, os.path.join(directory, "model.ckpt"))
    return directory


def _train_and_export(tf, estimator, train_spec, eval_spec):
    """train_and_evaluate with one exporter: its metrics, export folder and log lines."""
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    (export_dir,) = [e.decode() if isinstance(e, bytes) else e for e in exports]
    return metrics, export_dir, lines


def _variables(estimator):
    return sorted(estimator.get_variable_names())


# ------------------------------------------------------------- 03_tensorflow b_estimator
CSV_COLUMNS = [
    "fare_amount",
    "pickuplon",
    "pickuplat",
    "dropofflon",
    "dropofflat",
    "passengers",
    "key",
]
FEATURES = CSV_COLUMNS[1 : len(CSV_COLUMNS) - 1]
LABEL = CSV_COLUMNS[0]


def _write_taxi_csv(path, n, seed):
    """Rides: the fare grows with the distance between pick-up and drop-off."""
    rng = np.random.RandomState(seed)
    rows = []
    for i in range(n):
        lon, lat = -74.0 + rng.uniform(-0.1, 0.1, 2), 40.7 + rng.uniform(-0.1, 0.1, 2)
        fare = 4.0 + 60.0 * (abs(lon[1] - lon[0]) + abs(lat[1] - lat[0])) + rng.normal(0, 0.3)
        rows.append(
            f"{fare:.2f},{lon[0]:.5f},{lat[0]:.5f},{lon[1]:.5f},{lat[1]:.5f},"
            f"{rng.randint(1, 5)},key{seed}-{i}"
        )
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")
    return path


def make_train_input_fn(tf, df, num_epochs, shuffle=True):
    return tf.compat.v1.estimator.inputs.pandas_input_fn(
        x=df,
        y=df[LABEL],
        batch_size=128,
        num_epochs=num_epochs,
        shuffle=shuffle,
        queue_capacity=1000,
    )


def make_eval_input_fn(tf, df):
    return tf.compat.v1.estimator.inputs.pandas_input_fn(
        x=df, y=df[LABEL], batch_size=128, shuffle=False, queue_capacity=1000
    )


def make_prediction_input_fn(tf, df):
    return tf.compat.v1.estimator.inputs.pandas_input_fn(
        x=df, y=None, batch_size=128, shuffle=False, queue_capacity=1000
    )


def make_feature_cols(tf):
    return [tf.feature_column.numeric_column(k) for k in FEATURES]


def _taxi_frames(workdir):
    frames = []
    for name, n, seed in (("train", 60, 1), ("valid", 20, 2), ("test", 6, 3)):
        path = _write_taxi_csv(os.path.join(workdir, f"taxi-{name}.csv"), n, seed)
        frames.append(pd.read_csv(path, header=None, names=CSV_COLUMNS))
    return frames


def _print_rmse(tf, model, df):
    metrics = model.evaluate(input_fn=make_eval_input_fn(tf, df))
    return metrics, float(np.sqrt(metrics["average_loss"]))


@program
def taxi_pandas_estimators(tf, workdir):
    """b_estimator: a LinearRegressor trained on a shuffled pandas_input_fn of the whole
    frame (label and string key included), its RMSE from evaluate, its predictions; the
    same in file order (values compared); then the DNNRegressor [32, 8, 2]."""
    df_train, df_valid, df_test = _taxi_frames(workdir)
    outdir = os.path.join(workdir, "taxi_trained")
    with _info_lines() as lines:
        model = tf.estimator.LinearRegressor(
            feature_columns=make_feature_cols(tf), model_dir=outdir
        )
        model.train(input_fn=make_train_input_fn(tf, df_train, num_epochs=10))
        metrics, rmse = _print_rmse(tf, model, df_valid)
        rows = list(model.predict(input_fn=make_prediction_input_fn(tf, df_test)))
    predicted = np.array([row["predictions"][0] for row in rows])
    valid_rows = model.predict(input_fn=make_prediction_input_fn(tf, df_valid))
    valid_predicted = np.array([row["predictions"][0] for row in valid_rows])
    in_order = tf.estimator.LinearRegressor(
        feature_columns=make_feature_cols(tf), model_dir=os.path.join(workdir, "in_order")
    )
    in_order.train(input_fn=make_train_input_fn(tf, df_train, num_epochs=10, shuffle=False))
    ordered_metrics, ordered_rmse = _print_rmse(tf, in_order, df_valid)
    ordered_rows = list(in_order.predict(input_fn=make_prediction_input_fn(tf, df_test)))
    dnn = tf.estimator.DNNRegressor(
        hidden_units=[32, 8, 2],
        feature_columns=make_feature_cols(tf),
        model_dir=os.path.join(workdir, "dnn"),
    )
    dnn.train(input_fn=make_train_input_fn(tf, df_train, num_epochs=100))
    dnn_metrics, _ = _print_rmse(tf, dnn, df_valid)
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "ordered_step": int(ordered_metrics["global_step"]),
            "dnn_metrics": sorted(dnn_metrics),
            "dnn_step": int(dnn_metrics["global_step"]),
            "predictions": structure(rows),
            "count": len(rows),
            "files": listing(outdir),
            "variables": _variables(model),
            "dnn_variables": _variables(dnn),
            "train_tags": sorted(event_tags(outdir)),
            "eval_tags": event_tags(os.path.join(outdir, "eval")),
            "lines": _lab_lines(lines, workdir),
        },
        "close": {
            # Whatever the shuffled order made the weights: evaluate's RMSE is the
            # predictions' own, and print_rmse's square root of average_loss.
            "rmse_over_predicted_rmse": rmse
            / np.sqrt(np.mean((valid_predicted - df_valid[LABEL].values) ** 2)),
            "test_predictions_finite": float(np.isfinite(predicted).all()),
            **{f"ordered_{k}": float(v) for k, v in sorted(ordered_metrics.items())},
            "ordered_rmse": ordered_rmse,
            "ordered_predictions": [float(row["predictions"][0]) for row in ordered_rows],
        },
    }


# ------------------------------------------- 04_features / 05_artandscience housing
SCALE = 100000


def _housing_frame(n, seed):
    """California-housing-like rows: the value grows with income and rooms."""
    rng = np.random.RandomState(seed)
    households = rng.uniform(100, 600, n).round()
    df = pd.DataFrame(
        {
            "longitude": rng.uniform(-124.0, -114.5, n),
            "latitude": rng.uniform(32.6, 41.9, n),
            "housing_median_age": rng.randint(2, 52, n).astype(float),
            "total_rooms": (households * rng.uniform(3, 8, n)).round(),
            "total_bedrooms": (households * rng.uniform(0.8, 1.6, n)).round(),
            "population": (households * rng.uniform(1.5, 4, n)).round(),
            "households": households,
            "median_income": rng.uniform(1, 10, n),
        }
    )
    df["median_house_value"] = (
        30000 * df["median_income"] + 8000 * df["total_rooms"] / df["households"]
    ).round()
    return df


def _split(df):
    np.random.seed(seed=1)  # makes split reproducible
    msk = np.random.rand(len(df)) < 0.8
    return df[msk], df[~msk]


def _rmse_metric(tf):
    def rmse(labels, predictions):
        pred_values = tf.cast(predictions["predictions"], tf.float64)
        return {
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(
                labels * SCALE, pred_values * SCALE
            )
        }

    return rmse


def _housing_specs(tf, traindf, evaldf, columns, num_train_steps, batch_size=128):
    train_spec = tf.estimator.TrainSpec(
        input_fn=tf.compat.v1.estimator.inputs.pandas_input_fn(
            x=traindf[columns],
            y=traindf["median_house_value"] / SCALE,
            num_epochs=None,
            batch_size=batch_size,
            shuffle=True,
        ),
        max_steps=num_train_steps,
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=tf.compat.v1.estimator.inputs.pandas_input_fn(
            x=evaldf[columns],
            y=evaldf["median_house_value"] / SCALE,
            num_epochs=1,
            batch_size=len(evaldf),
            shuffle=False,
        ),
        steps=None,
        start_delay_secs=1,  # start evaluating after N seconds
        throttle_secs=10,  # evaluate every N seconds
    )
    return train_spec, eval_spec


def _housing_result(tf, estimator, output_dir, result, lines, workdir):
    metrics, exports = result
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "exports": exports,
            "files": listing(output_dir),
            "variables": _variables(estimator),
            "eval_tags": sorted(event_tags(os.path.join(output_dir, "eval"))),
            "lines": _lab_lines(lines, workdir),
        },
        # add_metrics' RMSE (float64, scaled) against the head's own average_loss.
        "close": {
            "rmse_over_scaled_loss": metrics["rmse"] / SCALE / np.sqrt(metrics["average_loss"])
        },
    }


@program
def housing_handtuning(tf, workdir):
    """a_handtuning's last cell: compat.v1 LinearRegressor with FtrlOptimizer(0.2), an
    RMSE added with compat.v1 add_metrics, train_and_evaluate on pandas_input_fns."""
    df = _housing_frame(120, 4)
    df["num_rooms"] = df["total_rooms"] / df["households"]
    traindf, evaldf = _split(df)
    output_dir = os.path.join(workdir, "housing_trained")
    myopt = tf.compat.v1.train.FtrlOptimizer(learning_rate=0.2)  # note the learning rate
    estimator = tf.compat.v1.estimator.LinearRegressor(
        model_dir=output_dir,
        feature_columns=[tf.feature_column.numeric_column("num_rooms")],
        optimizer=myopt,
    )
    estimator = tf.compat.v1.estimator.add_metrics(estimator, _rmse_metric(tf))
    specs = _housing_specs(tf, traindf, evaldf, ["num_rooms"], 20, batch_size=512)
    with _info_lines() as lines:
        result = tf.estimator.train_and_evaluate(estimator, *specs)
    return _housing_result(tf, estimator, output_dir, result, lines, workdir)


@program
def housing_features_dnn(tf, workdir):
    """a_features' and c_neuralnetwork's columns (bucketized latitude and longitude, derived
    ratios) into a compat.v1 DNNRegressor [100, 50, 20] with FtrlOptimizer and dropout."""
    df = _housing_frame(150, 5)
    df["num_rooms"] = df["total_rooms"] / df["households"]
    df["num_bedrooms"] = df["total_bedrooms"] / df["households"]
    df["persons_per_house"] = df["population"] / df["households"]
    df.drop(["total_rooms", "total_bedrooms", "population", "households"], axis=1, inplace=True)
    names = "housing_median_age,median_income,num_rooms,num_bedrooms,persons_per_house"
    featcols = {name: tf.feature_column.numeric_column(name) for name in names.split(",")}
    featcols["longitude"] = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("longitude"), np.linspace(-124.3, -114.3, 5).tolist()
    )
    featcols["latitude"] = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("latitude"), np.linspace(32.5, 42, 10).tolist()
    )
    traindf, evaldf = _split(df)
    output_dir = os.path.join(workdir, "housing_trained")
    estimator = tf.compat.v1.estimator.DNNRegressor(
        model_dir=output_dir,
        hidden_units=[100, 50, 20],
        feature_columns=featcols.values(),
        optimizer=tf.compat.v1.train.FtrlOptimizer(learning_rate=0.01),
        dropout=0.1,
    )
    estimator = tf.compat.v1.estimator.add_metrics(estimator, _rmse_metric(tf))
    specs = _housing_specs(tf, traindf, evaldf, list(featcols.keys()), 15, batch_size=100)
    tf.compat.v1.summary.FileWriterCache.clear()
    with _info_lines() as lines:
        result = tf.estimator.train_and_evaluate(estimator, *specs)
    return _housing_result(tf, estimator, output_dir, result, lines, workdir)


# ---------------------------------------------------------------- 08_image MNIST
HEIGHT = 28
WIDTH = 28
NCLASSES = 10


def dnn_dropout_model(tf, img, mode, hparams):
    dprob = hparams.get("dprob", 0.1)
    X = tf.reshape(tensor=img, shape=[-1, HEIGHT * WIDTH])  # flatten
    h1 = tf.compat.v1.layers.dense(inputs=X, units=300, activation=tf.nn.relu)
    h2 = tf.compat.v1.layers.dense(inputs=h1, units=100, activation=tf.nn.relu)
    h3 = tf.compat.v1.layers.dense(inputs=h2, units=30, activation=tf.nn.relu)
    h3d = tf.compat.v1.layers.dropout(
        inputs=h3, rate=dprob, training=(mode == tf.estimator.ModeKeys.TRAIN)
    )
    ylogits = tf.compat.v1.layers.dense(inputs=h3d, units=NCLASSES, activation=None)
    return ylogits, NCLASSES


def _conv_and_pool(tf, inputs, filters, kernel_size):
    """The lab's conv2d ('same', relu) then a 2x2 max-pooling, written out twice there."""
    conv = tf.compat.v1.layers.conv2d(
        inputs=inputs, filters=filters, kernel_size=kernel_size, strides=1, padding="same",
        activation=tf.nn.relu,
    )  # fmt: skip
    return tf.compat.v1.layers.max_pooling2d(inputs=conv, pool_size=2, strides=2)


def cnn_model(tf, img, mode, hparams):
    training = mode == tf.estimator.ModeKeys.TRAIN
    p1 = _conv_and_pool(tf, img, hparams.get("nfil1", 10), hparams.get("ksize1", 5))
    p2 = _conv_and_pool(tf, p1, hparams.get("nfil2", 20), hparams.get("ksize2", 5))
    outlen = p2.shape[1] * p2.shape[2] * p2.shape[3]
    p2flat = tf.reshape(tensor=p2, shape=[-1, outlen])
    if hparams["batch_norm"]:
        h3 = tf.compat.v1.layers.dense(inputs=p2flat, units=300, activation=None)
        h3 = tf.compat.v1.layers.batch_normalization(inputs=h3, training=training)
        h3 = tf.nn.relu(features=h3)
    else:
        h3 = tf.compat.v1.layers.dense(inputs=p2flat, units=300, activation=tf.nn.relu)
    h3d = tf.compat.v1.layers.dropout(inputs=h3, rate=hparams.get("dprob", 0.25), training=training)
    ylogits = tf.compat.v1.layers.dense(inputs=h3d, units=NCLASSES, activation=None)
    if hparams["batch_norm"]:
        ylogits = tf.compat.v1.layers.batch_normalization(inputs=ylogits, training=training)
    return ylogits, NCLASSES


def mnist_serving_input_fn(tf):
    feature_placeholders = {
        "image": tf.compat.v1.placeholder(dtype=tf.float32, shape=[None, HEIGHT, WIDTH])
    }
    features = {"image": tf.expand_dims(input=feature_placeholders["image"], axis=-1)}
    return tf.estimator.export.ServingInputReceiver(
        features=features, receiver_tensors=feature_placeholders
    )


def image_classifier(features, labels, mode, params):
    import tensorflow as tf

    model_functions = {"dnn_dropout": dnn_dropout_model, "cnn": cnn_model}
    model_function = model_functions[params["model"]]
    ylogits, _ = model_function(tf, features["image"], mode, params)
    probabilities = tf.nn.softmax(logits=ylogits)
    class_ids = tf.cast(x=tf.argmax(input=probabilities, axis=1), dtype=tf.uint8)
    loss = train_op = eval_metric_ops = None
    if mode in (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL):
        loss = tf.reduce_mean(
            input_tensor=tf.nn.softmax_cross_entropy_with_logits(
                logits=ylogits, labels=tf.stop_gradient(labels)
            )
        )
        if mode == tf.estimator.ModeKeys.TRAIN:
            # This is needed for batch normalization, but has no effect otherwise
            update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(update_ops):
                train_op = tf.compat.v1.train.AdamOptimizer(params["learning_rate"]).minimize(
                    loss, global_step=tf.compat.v1.train.get_global_step()
                )
        else:
            eval_metric_ops = {
                "accuracy": tf.compat.v1.metrics.accuracy(
                    labels=tf.argmax(input=labels, axis=1), predictions=class_ids
                )
            }
    outputs = {"probabilities": probabilities, "class_ids": class_ids}
    return tf.estimator.EstimatorSpec(
        mode=mode, predictions=outputs, loss=loss, train_op=train_op,
        eval_metric_ops=eval_metric_ops,
        export_outputs={"predictions": tf.estimator.export.PredictOutput(outputs)},
    )  # fmt: skip


def _images(n, seed):
    """Digit k: a bright 6x6 block at the k-th of ten places, on faint noise; one-hot
    float64 labels (as input_data's read_data_sets gives them)."""
    rng = np.random.RandomState(seed)
    images = rng.uniform(0, 0.1, (n, HEIGHT, WIDTH, 1)).astype(np.float32)
    classes = np.arange(n) % NCLASSES
    for i, k in enumerate(classes):
        row, col = 2 + 6 * (k // 4), 2 + 6 * (k % 4)
        images[i, row : row + 6, col : col + 6, 0] += 0.8
    return images, np.eye(NCLASSES)[classes]


def _mnist_run(tf, workdir, hparams, shuffle, warm_start_from=None):
    """train_and_evaluate as the lab's task does: numpy_input_fns, a LatestExporter."""
    train_images, train_labels = _images(30, 1)
    test_images, test_labels = _images(20, 2)
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"image": train_images},
        y=train_labels,
        batch_size=30,
        num_epochs=None,
        shuffle=shuffle,
        queue_capacity=5000,
    )
    eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"image": test_images},
        y=test_labels,
        batch_size=100,
        num_epochs=1,
        shuffle=False,
        queue_capacity=5000,
    )
    output_dir = os.path.join(workdir, "mnist_trained")
    estimator = tf.estimator.Estimator(
        model_fn=image_classifier,
        model_dir=output_dir,
        params=hparams,
        warm_start_from=warm_start_from,
    )
    train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=hparams["train_steps"])
    exporter = tf.estimator.LatestExporter(
        name="exporter", serving_input_receiver_fn=lambda: mnist_serving_input_fn(tf)
    )
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=None, exporters=exporter)
    metrics, export_dir, lines = _train_and_export(tf, estimator, train_spec, eval_spec)
    rows = list(
        estimator.predict(
            tf.compat.v1.estimator.inputs.numpy_input_fn(
                x={"image": test_images[:4]}, num_epochs=1, shuffle=False
            )
        )
    )
    served = tf.saved_model.load(export_dir).signatures["serving_default"]
    served = served(image=tf.constant(test_images[:4, :, :, 0]))
    exact = {
        "metrics": sorted(metrics),
        "global_step": int(metrics["global_step"]),
        "files": listing(output_dir),
        "export_parent": os.path.relpath(os.path.dirname(export_dir), output_dir),
        "signatures": signatures(export_dir),
        "served": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(served.items())},
        "variables": _variables(estimator),
        "predictions": structure(rows),
        "lines": _lab_lines(lines, workdir),
    }
    return exact, metrics, rows, served


@program
def mnist_cnn_batch_norm(tf, workdir):
    """mnist_models' cnn with batch_norm, warm-started from fixed weights, dropout off,
    fed in order: its metrics, predictions and the export's answers compared."""
    hparams = {"model": "cnn", "batch_norm": True, "dprob": 0.0, "learning_rate": 0.01}
    hparams["train_steps"] = 3
    image = lambda: tf.compat.v1.placeholder(tf.float32, [None, HEIGHT, WIDTH, 1])  # noqa: E731
    label = lambda: tf.compat.v1.placeholder(tf.float64, [None, NCLASSES])  # noqa: E731
    start = _fixed_start(tf, workdir, image_classifier, lambda: {"image": image()}, label, hparams)
    exact, metrics, rows, served = _mnist_run(tf, workdir, hparams, False, start)
    probabilities = np.array([row["probabilities"] for row in rows])
    return {
        "exact": dict(exact, class_ids=[int(row["class_ids"]) for row in rows]),
        "close": {
            "global_step": float(metrics["global_step"]),
            "export_minus_predict": float(
                np.abs(served["probabilities"].numpy() - probabilities).max()
            ),
        },
        # (The dense layer's bias ahead of batch normalization has no gradient but
        # rounding's, which Adam's first steps scale up to the learning rate: the two
        # versions' rounding differs (1e-6 in the first loss), so these differ by 0.5%.)
        "loose": {
            "accuracy": float(metrics["accuracy"]),
            "loss": float(metrics["loss"]),
            "probabilities": probabilities.tolist(),
        },
    }


@program
def mnist_dnn_dropout(tf, workdir):
    """mnist_models' dnn_dropout as the lab runs it: shuffled numpy input, random start."""
    hparams = {"model": "dnn_dropout", "dprob": 0.1, "learning_rate": 0.01, "train_steps": 4}
    exact, _, rows, served = _mnist_run(tf, workdir, hparams, True)
    probabilities = np.array([row["probabilities"] for row in rows])
    return {
        "exact": exact,
        "close": {
            "probability_sums": probabilities.sum(axis=1).tolist(),
            "export_minus_predict": float(
                np.abs(served["probabilities"].numpy() - probabilities).max()
            ),
        },
    }


# ------------------------------------------------------------ 09_sequence sinemodel
TIMESERIES_COL = "height"
SEQ_LEN = 10
N_OUTPUTS = 1
N_INPUTS = SEQ_LEN - N_OUTPUTS
DEFAULTS = [[0.0] for x in range(0, SEQ_LEN)]
ROWS = 16


def _write_sines(path, n, seed):
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        for _ in range(n):
            freq, ampl = rng.uniform(0.1, 0.6), rng.uniform(0.5, 1.5)
            seq = np.sin(np.arange(0, SEQ_LEN) * freq) * ampl
            f.write(",".join(f"{v:.5f}" for v in seq) + "\n")
    return path


def rnn2_model(tf, features, mode, params):
    x = tf.reshape(features[TIMESERIES_COL], [-1, N_INPUTS, 1])
    cell1 = tf.compat.v1.nn.rnn_cell.GRUCell(N_INPUTS * 2)
    cell2 = tf.compat.v1.nn.rnn_cell.GRUCell(N_INPUTS // 2)
    cells = tf.compat.v1.nn.rnn_cell.MultiRNNCell([cell1, cell2])
    _, state = tf.compat.v1.nn.dynamic_rnn(cells, x, dtype=tf.float32)
    h1 = tf.compat.v1.layers.dense(state[1], cells.output_size // 2, activation=tf.nn.relu)
    return tf.compat.v1.layers.dense(h1, 1, activation=None)  # (?, 1)


def read_dataset(tf, filename, mode, batch_size=512):
    def _input_fn():
        def decode_csv(row):
            features = tf.io.decode_csv(records=row, record_defaults=DEFAULTS)
            label = features.pop()  # remove last feature and use as label
            features = tf.stack(features)
            return {TIMESERIES_COL: features}, label

        dataset = tf.data.Dataset.list_files(filename)
        dataset = dataset.flat_map(tf.data.TextLineDataset)
        dataset = dataset.map(decode_csv)
        if mode == tf.estimator.ModeKeys.TRAIN:
            num_epochs = None  # loop indefinitely
            dataset = dataset.shuffle(buffer_size=10 * batch_size)
        else:
            num_epochs = 1  # end-of-input after this
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    return _input_fn


def sine_serving_input_fn(tf):
    feature_placeholders = {TIMESERIES_COL: tf.compat.v1.placeholder(tf.float32, [None, N_INPUTS])}
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in feature_placeholders.items()}
    features[TIMESERIES_COL] = tf.squeeze(features[TIMESERIES_COL], axis=[2])
    return tf.estimator.export.ServingInputReceiver(features, feature_placeholders)


def sequence_regressor(features, labels, mode, params):
    import tensorflow as tf

    predictions = rnn2_model(tf, features, mode, params)
    loss = train_op = eval_metric_ops = None
    if mode in (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL):
        expanded = tf.expand_dims(labels, -1)
        loss = tf.compat.v1.losses.mean_squared_error(expanded, predictions)
        rmse = tf.compat.v1.metrics.root_mean_squared_error(expanded, predictions)
        if mode == tf.estimator.ModeKeys.TRAIN:
            update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(update_ops):
                train_op = tf.compat.v1.train.AdamOptimizer(params["learning_rate"]).minimize(
                    loss, global_step=tf.compat.v1.train.get_global_step()
                )
        same_as_last = tf.compat.v1.metrics.root_mean_squared_error(
            labels, features[TIMESERIES_COL][:, -1]
        )
        eval_metric_ops = {"RMSE": rmse, "RMSE_same_as_last": same_as_last}
    predictions_dict = {"predicted": predictions}
    return tf.estimator.EstimatorSpec(
        mode=mode, predictions=predictions_dict, loss=loss, train_op=train_op,
        eval_metric_ops=eval_metric_ops,
        export_outputs={"predictions": tf.estimator.export.PredictOutput(predictions_dict)},
    )  # fmt: skip


def _sequence_inputs(tf):
    return (
        lambda: {TIMESERIES_COL: tf.compat.v1.placeholder(tf.float32, [None, N_INPUTS])},
        lambda: tf.compat.v1.placeholder(tf.float32, [None]),
    )


def _sequence_result(tf, estimator, specs, workdir, valid, signature):
    """What a sine lab shows after train_and_evaluate: its files, export and metrics, and
    the export's answers on the first validation rows beside predict's."""
    metrics, export_dir, lines = _train_and_export(tf, estimator, *specs)
    rows = np.loadtxt(valid, delimiter=",", dtype=np.float32)[:3, :N_INPUTS]
    served = tf.saved_model.load(export_dir).signatures[signature]
    served = served(**{TIMESERIES_COL: tf.constant(rows)})
    predicted = estimator.predict(
        tf.compat.v1.estimator.inputs.numpy_input_fn({TIMESERIES_COL: rows}, shuffle=False)
    )
    output_dir = estimator.model_dir
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "files": listing(output_dir),
            "signatures": signatures(export_dir),
            "served": sorted(served),
            "variables": _variables(estimator),
            "eval_tags": event_tags(os.path.join(output_dir, "eval")),
            "lines": _lab_lines(lines, workdir),
        },
        "close": {
            **_floats(metrics),
            "served": [value.numpy().tolist() for _, value in sorted(served.items())],
            "predicted": [row["predicted"].tolist() for row in predicted],
        },
    }


@program
def sine_rnn2(tf, workdir):
    """sinemodel's rnn2 through train_and_evaluate with the task's RunConfig and EvalSpec
    timings, warm-started from fixed weights; one shuffled batch holds every row."""
    _write_sines(os.path.join(workdir, "train-1.csv"), ROWS, 1)
    valid = _write_sines(os.path.join(workdir, "valid-1.csv"), 8, 2)
    hparams = {"learning_rate": 0.01, "train_steps": 5, "min_eval_frequency": 60}
    hparams["eval_delay_secs"] = 10
    start = _fixed_start(tf, workdir, sequence_regressor, *_sequence_inputs(tf), hparams)
    output_dir = os.path.join(workdir, "sine_trained")
    estimator = tf.estimator.Estimator(
        model_fn=sequence_regressor,
        params=hparams,
        model_dir=output_dir,
        config=tf.estimator.RunConfig(save_checkpoints_secs=hparams["min_eval_frequency"]),
        warm_start_from=start,
    )
    train_spec = tf.estimator.TrainSpec(
        input_fn=read_dataset(tf, os.path.join(workdir, "train*"), "train", ROWS),
        max_steps=hparams["train_steps"],
    )
    exporter = tf.estimator.LatestExporter("exporter", lambda: sine_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        input_fn=read_dataset(tf, os.path.join(workdir, "valid*"), "eval", 1000),
        steps=None,
        exporters=exporter,
        start_delay_secs=hparams["eval_delay_secs"],
        throttle_secs=hparams["min_eval_frequency"],
    )
    return _sequence_result(tf, estimator, (train_spec, eval_spec), workdir, valid, "predictions")


# ------------------------------------------------- 05_artandscience simple_rnn
LSTM_SIZE = 3


def simple_rnn(features, labels, mode):
    import tensorflow as tf

    x = tf.split(features[TIMESERIES_COL], N_INPUTS, 1)
    lstm_cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(LSTM_SIZE, forget_bias=1.0)
    outputs, _ = tf.compat.v1.nn.static_rnn(lstm_cell, x, dtype=tf.float32)
    outputs = outputs[-1]
    weight = tf.compat.v1.get_variable(
        "weight", initializer=tf.compat.v1.initializers.random_normal, shape=[LSTM_SIZE, N_OUTPUTS]
    )
    bias = tf.compat.v1.get_variable(
        "bias", initializer=tf.compat.v1.initializers.random_normal, shape=[N_OUTPUTS]
    )
    predictions = tf.matmul(outputs, weight) + bias
    if mode in (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL):
        loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        eval_metric_ops = {
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, predictions)
        }
    else:
        loss = train_op = eval_metric_ops = None
    predictions_dict = {"predicted": predictions}
    export_outputs = {
        "predict_export_outputs": tf.estimator.export.PredictOutput(outputs=predictions)
    }
    return tf.estimator.EstimatorSpec(
        mode=mode, predictions=predictions_dict, loss=loss, train_op=train_op,
        eval_metric_ops=eval_metric_ops,
        export_outputs=export_outputs,
    )  # fmt: skip


def simple_read_dataset(tf, filename, mode, batch_size):
    def _input_fn():
        def decode_csv(line):
            all_data = tf.io.decode_csv(records=line, record_defaults=DEFAULTS)
            inputs = tf.stack(all_data[: len(all_data) - N_OUTPUTS], axis=0)
            labels = tf.stack(all_data[len(all_data) - N_OUTPUTS :], axis=0)
            return {TIMESERIES_COL: inputs}, labels

        file_list = tf.io.gfile.glob(filename)
        dataset = tf.data.TextLineDataset(file_list).map(decode_csv)
        if mode == tf.estimator.ModeKeys.TRAIN:
            num_epochs = None  # indefinitely
            dataset = dataset.shuffle(buffer_size=10 * batch_size)
        else:
            num_epochs = 1  # end-of-input after this
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    return _input_fn


@program
def simple_rnn_static(tf, workdir):
    """d_customestimator's simple_rnn: static_rnn over BasicLSTMCell, get_variable with an
    initializer class, one PredictOutput of a bare tensor under its own name."""
    train = _write_sines(os.path.join(workdir, "train.csv"), ROWS, 3)
    valid = _write_sines(os.path.join(workdir, "valid.csv"), 8, 4)
    features, _ = _sequence_inputs(tf)
    label = lambda: tf.compat.v1.placeholder(tf.float32, [None, N_OUTPUTS])  # noqa: E731
    start = _fixed_start(tf, workdir, simple_rnn, features, label)
    output_dir = os.path.join(workdir, "outputdir")
    estimator = tf.estimator.Estimator(
        model_fn=simple_rnn, model_dir=output_dir, warm_start_from=start
    )
    train_spec = tf.estimator.TrainSpec(
        simple_read_dataset(tf, train, tf.estimator.ModeKeys.TRAIN, ROWS), max_steps=6
    )
    exporter = tf.estimator.LatestExporter("exporter", lambda: sine_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        simple_read_dataset(tf, valid, tf.estimator.ModeKeys.EVAL, 512),
        steps=None,
        exporters=exporter,
    )
    specs = (train_spec, eval_spec)
    return _sequence_result(tf, estimator, specs, workdir, valid, "serving_default")


# ----------------------------------------------------- feateng taxifare trainer
FE_COLUMNS = (
    "fare_amount,dayofweek,hourofday,pickuplon,pickuplat,dropofflon,dropofflat,passengers,key"
)
FE_COLUMNS = FE_COLUMNS.split(",")
FE_DEFAULTS = [[0.0], ["Sun"], [0], [-74.0], [40.0], [-74.0], [40.7], [1.0], ["nokey"]]
DAYS = ["Sun", "Mon", "Tues", "Wed", "Thu", "Fri", "Sat"]
HIDDEN_UNITS = "16 8"  # the task's --hidden_units, split on spaces (so strings)


def _write_feateng_csv(path, n, seed):
    rng = np.random.RandomState(seed)
    with open(path, "w") as f:
        for i in range(n):
            lon, lat = -74.0 + rng.uniform(-0.3, 0.3, 2), 40.7 + rng.uniform(-0.3, 0.3, 2)
            fare = 3.0 + 30.0 * np.hypot(lon[1] - lon[0], lat[1] - lat[0]) + rng.normal(0, 0.3)
            f.write(
                f"{fare:.2f},{DAYS[i % 7]},{rng.randint(0, 24)},{lon[0]:.5f},{lat[0]:.5f},"
                f"{lon[1]:.5f},{lat[1]:.5f},{rng.randint(1, 5)},k{i}\n"
            )
    return path


def feateng_columns(tf, nbuckets):
    """build_estimator's columns: bucketized places crossed, a cross of crosses, day by
    hour, embeddings of the crosses on the deep side."""
    fc = tf.feature_column
    dayofweek = fc.categorical_column_with_vocabulary_list("dayofweek", vocabulary_list=DAYS)
    hourofday = fc.categorical_column_with_identity("hourofday", num_buckets=24)
    numeric = "pickuplat pickuplon dropofflat dropofflon passengers latdiff londiff euclidean"
    plat, plon, dlat, dlon, pcount, latdiff, londiff, euclidean = map(
        fc.numeric_column, numeric.split(" ")
    )
    latbuckets = np.linspace(38.0, 42.0, nbuckets).tolist()
    lonbuckets = np.linspace(-76.0, -72.0, nbuckets).tolist()
    b_plat, b_dlat = fc.bucketized_column(plat, latbuckets), fc.bucketized_column(dlat, latbuckets)
    b_plon, b_dlon = fc.bucketized_column(plon, lonbuckets), fc.bucketized_column(dlon, lonbuckets)
    ploc = fc.crossed_column([b_plat, b_plon], nbuckets * nbuckets)
    dloc = fc.crossed_column([b_dlat, b_dlon], nbuckets * nbuckets)
    pd_pair = fc.crossed_column([ploc, dloc], nbuckets**4)
    day_hr = fc.crossed_column([dayofweek, hourofday], 24 * 7)
    wide_columns = [dloc, ploc, pd_pair, day_hr, dayofweek, hourofday, pcount]
    deep_columns = [fc.embedding_column(pd_pair, 10), fc.embedding_column(day_hr, 10)]
    deep_columns += [plat, plon, dlat, dlon, latdiff, londiff, euclidean]
    return wide_columns, deep_columns


def add_engineered(tf, features):
    latdiff = features["pickuplat"] - features["dropofflat"]
    londiff = features["pickuplon"] - features["dropofflon"]
    features["latdiff"] = latdiff
    features["londiff"] = londiff
    features["euclidean"] = tf.sqrt(latdiff * latdiff + londiff * londiff)
    return features


def feateng_serving_input_fn(tf):
    names = ["pickuplat", "pickuplon", "dropofflat", "dropofflon", "passengers"]
    feature_placeholders = {name: tf.compat.v1.placeholder(tf.float32, [None]) for name in names}
    feature_placeholders["dayofweek"] = tf.compat.v1.placeholder(tf.string, [None])
    feature_placeholders["hourofday"] = tf.compat.v1.placeholder(tf.int32, [None])
    features = add_engineered(tf, feature_placeholders.copy())
    return tf.estimator.export.ServingInputReceiver(features, feature_placeholders)


def feateng_read_dataset(tf, filename, mode, batch_size=512):
    def _input_fn():
        def decode_csv(value_column):
            columns = tf.compat.v1.decode_csv(value_column, record_defaults=FE_DEFAULTS)
            features = dict(zip(FE_COLUMNS, columns, strict=True))
            label = features.pop("fare_amount")
            return add_engineered(tf, features), label

        file_list = tf.compat.v1.gfile.Glob(filename)
        dataset = tf.compat.v1.data.TextLineDataset(file_list).map(decode_csv)
        if mode == tf.estimator.ModeKeys.TRAIN:
            num_epochs = None  # indefinitely
            dataset = dataset.shuffle(buffer_size=10 * batch_size)
        else:
            num_epochs = 1  # end-of-input after this
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    return _input_fn


@program
def taxifare_feateng(tf, workdir):
    """feateng's taxifare trainer: a DNNLinearCombinedRegressor over crosses of crosses
    and their embeddings, hidden_units split from a string (so strings), compat.v1
    add_metrics' RMSE, train_and_evaluate with EvalSpec(steps=100) past the data's end
    and a LatestExporter of placeholders with engineered features."""
    train = _write_feateng_csv(os.path.join(workdir, "taxi-train.csv"), 48, 1)
    valid = _write_feateng_csv(os.path.join(workdir, "taxi-valid.csv"), 12, 2)
    output_dir = os.path.join(workdir, "taxi_trained")
    wide_columns, deep_columns = feateng_columns(tf, 4)
    run_config = tf.estimator.RunConfig(save_checkpoints_secs=30, keep_checkpoint_max=3)
    estimator = tf.estimator.DNNLinearCombinedRegressor(
        model_dir=output_dir, linear_feature_columns=wide_columns,
        dnn_feature_columns=deep_columns, dnn_hidden_units=HIDDEN_UNITS.split(" "), config=run_config,
    )  # fmt: skip

    def add_eval_metrics(labels, predictions):
        pred_values = predictions["predictions"]
        return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, pred_values)}

    estimator = tf.compat.v1.estimator.add_metrics(estimator, add_eval_metrics)
    train_spec = tf.estimator.TrainSpec(
        input_fn=feateng_read_dataset(tf, train, tf.estimator.ModeKeys.TRAIN, 16), max_steps=12
    )
    exporter = tf.estimator.LatestExporter("exporter", lambda: feateng_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        input_fn=feateng_read_dataset(tf, valid, tf.estimator.ModeKeys.EVAL, 8),
        steps=100,
        exporters=exporter,
    )
    metrics, export_dir, lines = _train_and_export(tf, estimator, train_spec, eval_spec)
    rides = {
        "pickuplat": [40.7, 40.8], "pickuplon": [-74.0, -73.9], "dropofflat": [40.75, 40.6],
        "dropofflon": [-73.95, -74.1], "passengers": [1.0, 3.0], "dayofweek": ["Mon", "Sat"],
        "hourofday": [8, 23],
    }  # fmt: skip
    served = tf.saved_model.load(export_dir).signatures["predict"]
    served = served(**{k: tf.constant(v) for k, v in rides.items()})
    direct = estimator.predict(
        lambda: tf.data.Dataset.from_tensors(
            add_engineered(tf, {k: tf.constant(v) for k, v in rides.items()})
        )
    )
    direct = np.array([row["predictions"][0] for row in direct])
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "files": listing(output_dir),
            "signatures": signatures(export_dir),
            "served": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(served.items())},
            "variables": _variables(estimator),
            "eval_tags": sorted(event_tags(os.path.join(output_dir, "eval"))),
            "lines": _lab_lines(lines, workdir),
        },
        # (The DNN starts from weights each version draws its own way: what is compared
        # holds whatever they are.)
        "close": {
            "rmse_squared_over_average_loss": metrics["rmse"] ** 2 / metrics["average_loss"],
            "export_minus_predict": float(
                np.abs(served["predictions"].numpy()[:, 0] - direct).max()
            ),
        },
    }


# ------------------------------- 02_tensorflow e_traineval / 03_model_performance
TE_COLUMNS = ["fare_amount", "dayofweek", "hourofday", "pickuplon", "pickuplat", "dropofflon"]
TE_COLUMNS += ["dropofflat"]
TE_DEFAULTS = [[0.0], [1], [0], [-74.0], [40.0], [-74.0], [40.7]]


def _write_traineval_csv(path, n, seed):
    rng = np.random.RandomState(seed)
    lines = [",".join(TE_COLUMNS)]
    for _ in range(n):
        lon, lat = -74.0 + rng.uniform(-0.3, 0.3, 2), 40.7 + rng.uniform(-0.3, 0.3, 2)
        fare = 3.0 + 30.0 * np.hypot(lon[1] - lon[0], lat[1] - lat[0]) + rng.normal(0, 0.3)
        day, hour = rng.randint(1, 8), rng.randint(0, 24)
        lines.append(f"{fare:.2f},{day},{hour},{lon[0]:.5f},{lat[0]:.5f},{lon[1]:.5f},{lat[1]:.5f}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def add_engineered_features(tf, features):
    features["dayofweek"] = features["dayofweek"] - 1  # 1-7 to 0-6
    features["latdiff"] = features["pickuplat"] - features["dropofflat"]
    features["londiff"] = features["pickuplon"] - features["dropofflon"]
    features["euclidean_dist"] = tf.sqrt(x=features["latdiff"] ** 2 + features["londiff"] ** 2)
    return features


def traineval_read_dataset(tf, csv_path):
    def _parse_row(row):
        fields = tf.io.decode_csv(records=row, record_defaults=TE_DEFAULTS)
        features = add_engineered_features(tf, dict(zip(TE_COLUMNS, fields, strict=True)))
        label = features.pop("fare_amount")
        return features, label

    dataset = tf.data.Dataset.list_files(file_pattern=csv_path)
    dataset = dataset.flat_map(
        map_func=lambda filename: tf.data.TextLineDataset(filenames=filename).skip(count=1)
    )
    return dataset.map(map_func=_parse_row)


def traineval_columns(tf):
    fc = tf.feature_column
    fc_dayofweek = fc.categorical_column_with_identity(key="dayofweek", num_buckets=7)
    fc_hourofday = fc.categorical_column_with_identity(key="hourofday", num_buckets=24)
    latbuckets = np.linspace(start=38.0, stop=42.0, num=16).tolist()
    lonbuckets = np.linspace(start=-76.0, stop=-72.0, num=16).tolist()
    bucketized = [
        fc.bucketized_column(source_column=fc.numeric_column(key=key), boundaries=boundaries)
        for key, boundaries in (
            ("pickuplon", lonbuckets), ("pickuplat", latbuckets),
            ("dropofflon", lonbuckets), ("dropofflat", latbuckets),
        )
    ]  # fmt: skip
    crossed = fc.crossed_column(keys=[fc_dayofweek, fc_hourofday], hash_bucket_size=24 * 7)
    engineered = [fc.numeric_column(key=k) for k in ("latdiff", "londiff", "euclidean_dist")]
    return [fc.indicator_column(categorical_column=crossed), *bucketized, *engineered]


def traineval_receiver_fn(tf):
    """The lab's receiver: add_engineered_features changes its receiver_tensors dict in
    place, so the derived tensors are the export's inputs too."""
    receiver_tensors = {
        "dayofweek": tf.compat.v1.placeholder(dtype=tf.int32, shape=[None]),
        "hourofday": tf.compat.v1.placeholder(dtype=tf.int32, shape=[None]),
    }
    for key in ("pickuplon", "pickuplat", "dropofflat", "dropofflon"):
        receiver_tensors[key] = tf.compat.v1.placeholder(dtype=tf.float32, shape=[None])
    features = add_engineered_features(tf, receiver_tensors)
    return tf.estimator.export.ServingInputReceiver(
        features=features, receiver_tensors=receiver_tensors
    )


@program
def traineval_engineered_receiver(tf, workdir):
    """e_traineval's and a_feature_engineering_dnn's DNNRegressor: model_dir through
    RunConfig with a seed and save_checkpoints_steps, compat add_metrics' RMSE of squeezed
    predictions, a header-skipping list_files input, a FinalExporter of a receiver whose
    receiver_tensors the feature engineering changed in place."""
    train = _write_traineval_csv(os.path.join(workdir, "taxi-train.csv"), 40, 1)
    valid = _write_traineval_csv(os.path.join(workdir, "taxi-valid.csv"), 10, 2)
    outdir = os.path.join(workdir, "taxi_trained_dnn")
    config = tf.estimator.RunConfig(model_dir=outdir, tf_random_seed=1, save_checkpoints_steps=10)
    model = tf.estimator.DNNRegressor(
        hidden_units=[10, 10], feature_columns=traineval_columns(tf), config=config
    )

    def my_rmse(labels, predictions):
        pred_values = tf.squeeze(input=predictions["predictions"], axis=-1)
        return {
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(
                labels=labels, predictions=pred_values
            )
        }

    model = tf.compat.v1.estimator.add_metrics(estimator=model, metric_fn=my_rmse)
    train_spec = tf.estimator.TrainSpec(
        input_fn=lambda: traineval_read_dataset(tf, train).shuffle(1000).repeat().batch(16),
        max_steps=60,
    )
    exporter = tf.estimator.FinalExporter(
        name="exporter", serving_input_receiver_fn=lambda: traineval_receiver_fn(tf)
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=lambda: traineval_read_dataset(tf, valid).batch(16),
        steps=None, start_delay_secs=1, throttle_secs=1, exporters=exporter,
    )  # fmt: skip
    metrics, export_dir, lines = _train_and_export(tf, model, train_spec, eval_spec)
    # The export takes the derived features as inputs too (dayofweek: already shifted).
    rides = {
        "dayofweek": np.array([1, 6], np.int32), "hourofday": np.array([8, 23], np.int32),
        "pickuplon": np.array([-74.0, -73.9], np.float32),
        "pickuplat": np.array([40.7, 40.8], np.float32),
        "dropofflat": np.array([40.75, 40.6], np.float32),
        "dropofflon": np.array([-73.95, -74.1], np.float32),
    }  # fmt: skip
    rides["latdiff"] = rides["pickuplat"] - rides["dropofflat"]
    rides["londiff"] = rides["pickuplon"] - rides["dropofflon"]
    rides["euclidean_dist"] = np.hypot(rides["latdiff"], rides["londiff"])
    served = tf.saved_model.load(export_dir).signatures["predict"]
    served = served(**{k: tf.constant(v) for k, v in rides.items()})["predictions"]
    direct = model.predict(lambda: tf.data.Dataset.from_tensors(rides))
    direct = np.array([row["predictions"][0] for row in direct])
    return {
        "exact": {
            "served": served.shape.as_list(),
            "model_dir": os.path.relpath(model.model_dir, workdir),
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "checkpoints": [name for name in listing(outdir) if name.startswith("model.ckpt")],
            "exports": [name for name in listing(outdir) if name.startswith("export/")],
            "signatures": signatures(export_dir),
            "variables": _variables(model),
            "eval_tags": sorted(event_tags(os.path.join(outdir, "eval"))),
            "lines": [line for line in _lab_lines(lines, workdir) if "eval" not in line],
        },
        "close": {
            "rmse_squared_over_average_loss": metrics["rmse"] ** 2 / metrics["average_loss"],
            "export_minus_predict": float(np.abs(served.numpy()[:, 0] - direct).max()),
        },
    }


# ------------------------------------------ blogs/sme_academy tf_estimator_deepdive
RANDOM_SEED = 19831006
HEADER = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status"]
HEADER += ["occupation", "relationship", "race", "gender", "capital_gain", "capital_loss"]
HEADER += ["hours_per_week", "native_country", "income_bracket"]
HEADER_DEFAULTS = [[0], [""], [0], [""], [0], [""], [""], [""], [""], [""], [0], [0], [0]]
HEADER_DEFAULTS += [[""], [""]]
NUMERIC_FEATURE_NAMES = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
CATEGORICAL_FEATURE_WITH_VOCABULARY = {
    "workclass": ["State-gov", "Self-emp-not-inc", "Private", "Federal-gov", "Local-gov"],
    "relationship": ["Not-in-family", "Husband", "Wife", "Own-child", "Unmarried"],
    "gender": [" Male", "Female"],
    "race": [" White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
    "education": ["Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college"],
}
CATEGORICAL_FEATURE_WITH_HASH_BUCKETS = {"native_country": 60, "occupation": 20}
FEATURE_NAMES = NUMERIC_FEATURE_NAMES + list(CATEGORICAL_FEATURE_WITH_VOCABULARY)
FEATURE_NAMES += list(CATEGORICAL_FEATURE_WITH_HASH_BUCKETS)
TARGET_LABELS = [" <=50K", " >50K"]


def _write_adult_csv(path, n, seed):
    """adult.data-like rows: ', '-separated, the label from age, education and hours."""
    rng = np.random.RandomState(seed)
    vocab = CATEGORICAL_FEATURE_WITH_VOCABULARY
    with open(path, "w") as f:
        for _ in range(n):
            age, hours, education_num = rng.randint(18, 70), rng.randint(10, 60), rng.randint(5, 16)
            label = TARGET_LABELS[int(age + hours + 3 * education_num > 110)]
            row = [
                age, vocab["workclass"][rng.randint(5)], rng.randint(20000, 300000),
                vocab["education"][rng.randint(6)], education_num, "Never-married",
                ["Sales", "Tech-support", "Craft-repair"][rng.randint(3)],
                vocab["relationship"][rng.randint(5)], vocab["race"][rng.randint(5)].strip(),
                ["Male", "Female"][rng.randint(2)], rng.choice([0, 0, 2174]), 0, hours,
                ["United-States", "Mexico", "India"][rng.randint(3)], label.strip(),
            ]  # fmt: skip
            f.write(", ".join(str(value) for value in row) + "\n")
    return path


def process_features(tf, features, target):
    for feature_name in list(CATEGORICAL_FEATURE_WITH_VOCABULARY) + list(
        CATEGORICAL_FEATURE_WITH_HASH_BUCKETS
    ):
        features[feature_name] = tf.strings.strip(features[feature_name])
    features["capital_total"] = features["capital_gain"] - features["capital_loss"]
    return features, target


def adult_input_fn(tf, file_pattern, batch_size, num_epochs=1, shuffle=False):
    def _input_fn():
        dataset = tf.data.experimental.make_csv_dataset(
            file_pattern=file_pattern, batch_size=batch_size, column_names=HEADER,
            column_defaults=HEADER_DEFAULTS, label_name="income_bracket", field_delim=",",
            use_quote_delim=True, header=False, num_epochs=num_epochs, shuffle=shuffle,
            shuffle_buffer_size=(5 * batch_size), shuffle_seed=RANDOM_SEED,
            num_parallel_reads=2, sloppy=True,
        )  # fmt: skip
        return dataset.map(lambda f, t: process_features(tf, f, t)).cache()

    return _input_fn


def create_feature_columns(tf):
    fc = tf.feature_column
    deep_columns = [fc.numeric_column(column) for column in NUMERIC_FEATURE_NAMES]
    wide_columns = []
    for column, vocabulary in CATEGORICAL_FEATURE_WITH_VOCABULARY.items():
        categorical_column = fc.categorical_column_with_vocabulary_list(column, vocabulary)
        wide_columns.append(categorical_column)
        embed_size = int(math.sqrt(len(vocabulary)))
        deep_columns.append(fc.embedding_column(categorical_column, embed_size))
    for column, buckets in CATEGORICAL_FEATURE_WITH_HASH_BUCKETS.items():
        hash_columns = fc.categorical_column_with_hash_bucket(column, hash_bucket_size=buckets)
        wide_columns.append(hash_columns)
        deep_columns.append(fc.indicator_column(hash_columns))
    boundaries = [18, 25, 30, 35, 40, 45, 50, 55, 60]
    wide_columns.append(fc.bucketized_column(deep_columns[0], boundaries=boundaries))
    crossed = fc.crossed_column(["education", "workclass"], hash_bucket_size=int(1e4))
    wide_columns.append(crossed)
    deep_columns.append(fc.embedding_column(crossed, dimension=10))
    return wide_columns, deep_columns


def create_estimator(tf, dnn_optimizer, run_config):
    wide_columns, deep_columns = create_feature_columns(tf)
    return tf.estimator.DNNLinearCombinedClassifier(
        n_classes=len(TARGET_LABELS), label_vocabulary=TARGET_LABELS, weight_column="fnlwgt",
        dnn_feature_columns=deep_columns, dnn_optimizer=dnn_optimizer,
        dnn_hidden_units=[8, 8], dnn_dropout=0.15, dnn_activation_fn=tf.nn.relu,
        batch_norm=True, linear_feature_columns=wide_columns, linear_optimizer="Ftrl",
        config=run_config,
    )  # fmt: skip


def make_serving_input_receiver_fn(tf):
    inputs = {}
    for feature_name in FEATURE_NAMES:
        dtype = tf.float32 if feature_name in NUMERIC_FEATURE_NAMES else tf.string
        inputs[feature_name] = tf.compat.v1.placeholder(shape=[None], dtype=dtype)
    return tf.estimator.export.build_raw_serving_input_receiver_fn(inputs)


def serving_input_receiver_fn(tf):
    """The blog's receiver as TF2 users mend it ("What is wrong here?": placeholders made
    eagerly): made when the export calls it, in its graph."""
    return lambda: make_serving_input_receiver_fn(tf)()


def _accuracy_bigger(best_eval_result, current_eval_result):
    metric = "accuracy"
    return best_eval_result[metric] < current_eval_result[metric]


@program
def estimator_deepdive_blog(tf, workdir):
    """The SME academy's tf.estimator deep dive: a weighted wide and deep classifier with
    a label vocabulary and batch norm over make_csv_dataset, a BestExporter on accuracy
    keeping one export, stop_if_no_increase_hook, and a predictor's call of that export."""
    train = _write_adult_csv(os.path.join(workdir, "adult.data.csv"), 64, 1)
    test = _write_adult_csv(os.path.join(workdir, "adult.test.csv"), 16, 2)
    model_dir = os.path.join(workdir, "dnn_classifier")
    run_config = tf.estimator.RunConfig(
        tf_random_seed=RANDOM_SEED, save_checkpoints_steps=8, keep_checkpoint_max=1,
        model_dir=model_dir, log_step_count_steps=5,
    )  # fmt: skip
    train_input_fn = adult_input_fn(tf, train, 16, num_epochs=None, shuffle=True)
    # (Its tf.compat.v1.train.AdamOptimizer, refused by this V2 class: lab_misuse.)
    errors = {"placeholders_made_eagerly": _raised(lambda: make_serving_input_receiver_fn(tf))}
    adam = tf.keras.optimizers.legacy.Adam(learning_rate=0.001)  # (2.15: a legacy one)
    estimator = create_estimator(tf, adam, run_config)
    exporter = tf.estimator.BestExporter(
        compare_fn=_accuracy_bigger, event_file_pattern="eval_101010/*.tfevents.*",
        name="estimate", serving_input_receiver_fn=serving_input_receiver_fn(tf),
        exports_to_keep=1,
    )  # fmt: skip
    early_stopping_hook = tf.estimator.experimental.stop_if_no_increase_hook(
        estimator, "accuracy", max_steps_without_increase=100, run_every_secs=None,
        run_every_steps=4,
    )  # fmt: skip
    train_spec = tf.estimator.TrainSpec(
        input_fn=train_input_fn, max_steps=8, hooks=[early_stopping_hook]
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=adult_input_fn(tf, test, 16), exporters=[exporter], start_delay_secs=0,
        throttle_secs=0, steps=None,
    )  # fmt: skip
    # (Whether the final evaluation exported hangs on its accuracy: the one kept is read.)
    metrics, _, lines = _train_and_export(tf, estimator, train_spec, eval_spec)
    (export_dir,) = glob.glob(os.path.join(model_dir, "export", "estimate", "*"))
    errors["export_savedmodel"] = _raised(
        lambda: estimator.export_savedmodel(
            os.path.join(model_dir, "export"), serving_input_receiver_fn(tf)
        )
    )
    predictor_fn = tf.saved_model.load(export_dir).signatures["predict"]
    person = {
        "age": [34.0], "workclass": ["Private"], "education": ["Doctorate"],
        "education_num": [10.0],
        "occupation": ["Prof-specialty"], "relationship": ["Husband"], "race": ["White"],
        "gender": ["Male"], "capital_gain": [0.0], "capital_loss": [0.0],
        "hours_per_week": [40.0], "native_country": ["Egyptian"],
    }  # fmt: skip
    output = predictor_fn(**{k: tf.constant(v) for k, v in person.items()})
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "files": listing(model_dir),
            "best_export_parent": os.path.relpath(os.path.dirname(export_dir), model_dir),
            "signatures": signatures(export_dir),
            "output": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(output.items())},
            # (Which class hangs on the weights each version drew: that it is a label is not.)
            "classes_are_labels": all(
                c.decode() in TARGET_LABELS for c in output["classes"].numpy().ravel()
            ),
            "variables": _variables(estimator),
            "eval_tags": sorted(event_tags(os.path.join(model_dir, "eval"))),
            "lines": _lab_lines(lines, workdir),
            "errors": errors,
        },
        "close": {"probability_sum": float(output["probabilities"].numpy().sum())},
    }


# ------------------------------------------------------------------ misuse
def _without_module_path(error):
    """[type, message] with a class's module left out (tensorflow_estimator's or the
    kit's: each package names its own)."""
    return [error[0], re.sub(r"<class '[\w.]+\.(\w+)'>", r"<class '\1'>", error[1])]


def _spec_misuse(tf, model, make_input_fn, serving):
    """train_and_evaluate's specs as the labs' users get them wrong."""
    latest = tf.estimator.LatestExporter("exporter", serving)
    return {
        "eval_spec_negative_throttle": _raised(
            lambda: tf.estimator.EvalSpec(make_input_fn(), throttle_secs=-1)
        ),
        "eval_spec_negative_delay": _raised(
            lambda: tf.estimator.EvalSpec(make_input_fn(), start_delay_secs=-1)
        ),
        "train_spec_zero_steps": _raised(
            lambda: tf.estimator.TrainSpec(make_input_fn(), max_steps=0)
        ),
        "exporter_not_an_exporter": _raised(
            lambda: tf.estimator.EvalSpec(make_input_fn(), exporters=serving)
        ),
        "exporters_of_one_name": _raised(
            lambda: tf.estimator.EvalSpec(make_input_fn(), exporters=[latest, latest])
        ),
        "eval_spec_name_not_a_string": _raised(
            lambda: tf.estimator.EvalSpec(make_input_fn(), name=1)
        ),
        "specs_swapped": _without_module_path(
            _raised(
                lambda: tf.estimator.train_and_evaluate(
                    model,
                    tf.estimator.EvalSpec(make_input_fn()),
                    tf.estimator.TrainSpec(make_input_fn(), max_steps=1),
                )
            )
        ),
        "train_spec_file_for_input_fn": _raised(
            lambda: tf.estimator.TrainSpec("taxi-train.csv", max_steps=10)
        ),
    }


@program
def lab_misuse(tf, workdir):
    """What the labs' users run into: print_rmse and predict on a model_dir just emptied
    by shutil.rmtree (no checkpoint yet), exporting it, pandas_input_fn without shuffle,
    an RMSE metric_fn with the wrong argument names, EvalSpec and TrainSpec mistakes."""
    df_train, df_valid, df_test = _taxi_frames(workdir)
    outdir = os.path.join(workdir, "taxi_trained")
    model = tf.estimator.LinearRegressor(feature_columns=make_feature_cols(tf), model_dir=outdir)
    with _info_lines() as lines:
        metrics, rmse = _print_rmse(tf, model, df_valid)
        rows = list(model.predict(input_fn=make_prediction_input_fn(tf, df_test)))

    # (One wrong name: 2.15 listed several in its set's order, which varies by run.)
    def wrong_rmse(labels, prediction):
        return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, prediction)}

    pandas = tf.compat.v1.estimator.inputs.pandas_input_fn
    serving = lambda: mnist_serving_input_fn(tf)  # noqa: E731
    errors = _spec_misuse(tf, model, lambda: make_eval_input_fn(tf, df_valid), serving)
    errors |= {
        "export_untrained": _raised(lambda: model.export_saved_model(workdir, serving)),
        "v2_class_tf1_optimizer": _raised(
            lambda: tf.estimator.LinearRegressor(
                make_feature_cols(tf),
                os.path.join(workdir, "v2"),
                optimizer=tf.compat.v1.train.FtrlOptimizer(learning_rate=0.1),
            ).train(make_eval_input_fn(tf, df_valid), steps=1)
        ),
        "pandas_without_shuffle": _raised(lambda: pandas(x=df_train, y=df_train[LABEL])),
        "pandas_label_in_index": _raised(
            lambda: pandas(x=df_train, y=df_train[LABEL].reset_index(drop=True)[:10], shuffle=False)
        ),
        "add_metrics_wrong_args": _raised(
            lambda: tf.estimator.add_metrics(model, wrong_rmse).evaluate(
                make_eval_input_fn(tf, df_valid)
            )
        ),
    }
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "predictions": structure(rows),
            "files": listing(outdir),
            "lines": _lab_lines(lines, workdir),
            "errors": errors,
        },
        "close": {
            **_floats(metrics),
            "rmse": rmse,
            "predictions": [float(row["predictions"][0]) for row in rows],
        },
    }


# ------------------------------------------- 09_sequence txtclsmodel: model_native.py
# Headlines classified by source: words looked up in a vocabulary file by a hash table
# (in the input_fn and again in the serving receiver), a Keras Conv1D stack handed to
# model_to_estimator, and max_steps computed as epochs * rows / batch size (a float).
SOURCES = ("github", "nytimes", "techcrunch")
HEADLINE_WORDS = [
    "rust",
    "compiler",
    "python",
    "release",
    "startup",
    "raises",
    "funding",
    "court",
    "rules",
    "senate",
]
PAD_WORD = "ZYXW"
HEADLINE_LENGTH = 6


def _headlines(n, seed):
    rng = np.random.RandomState(seed)
    texts = [" ".join(rng.choice(HEADLINE_WORDS, 4)) + "!" for _ in range(n)]
    return texts, np.arange(n) % len(SOURCES)


def _write_vocabulary(path):
    """The lab's vocab.txt: `word,index` lines, the padding word at 0."""
    with open(path, "w") as f:
        f.write(f"{PAD_WORD},0\n")
        f.writelines(f"{word},{i}\n" for i, word in enumerate(HEADLINE_WORDS, 1))


def words_to_ids(tf, sentences, vocabulary):
    """The lab's vectorize_sentences, its contrib table replaced by a StaticHashTable."""
    sentences = tf.strings.regex_replace(sentences, "[[:punct:]]", " ")
    words = tf.compat.v1.sparse_tensor_to_dense(
        tf.compat.v1.string_split(sentences), default_value=PAD_WORD
    )
    initializer = tf.lookup.TextFileInitializer(
        vocabulary, tf.string, 0, tf.int64, 1, delimiter=","
    )
    return tf.lookup.StaticHashTable(initializer, default_value=0).lookup(words)


def headline_input_fn(tf, texts, labels, vocabulary, batch_size, training):
    def pad(ids, label):
        kept = tf.gather(ids, tf.where(tf.not_equal(ids, 0))[:, 0])
        padded = tf.pad(kept, [[HEADLINE_LENGTH, 0]])[-HEADLINE_LENGTH:]
        return padded, label

    ids = words_to_ids(tf, tf.constant(texts), vocabulary)
    dataset = tf.data.Dataset.from_tensor_slices((ids, labels)).map(pad)
    return dataset.repeat(None if training else 1).batch(batch_size)


def headline_classifier(tf):
    tf.keras.backend.clear_session()  # layer names from dense, whatever ran before
    layers = tf.keras.layers
    model = tf.keras.models.Sequential()
    model.add(
        layers.Embedding(
            input_dim=len(HEADLINE_WORDS) + 1, output_dim=5, input_length=HEADLINE_LENGTH
        )
    )
    model.add(layers.Dropout(rate=0.2))
    model.add(layers.Conv1D(filters=4, kernel_size=3, activation="relu", padding="same"))
    model.add(layers.MaxPooling1D(pool_size=3))
    model.add(layers.Conv1D(filters=8, kernel_size=3, activation="relu", padding="same"))
    model.add(layers.GlobalAveragePooling1D())
    model.add(layers.Dense(len(SOURCES), activation="softmax"))
    model.compile(
        optimizer=tf.keras.optimizers.legacy.Adam(learning_rate=0.01),
        loss="sparse_categorical_crossentropy",
        metrics=["acc"],
    )
    return model


def _signature_view(export_dir, tf):
    loaded = tf.saved_model.load(export_dir)
    view = {}
    for key, function in sorted(loaded.signatures.items()):
        inputs = function.structured_input_signature[1]
        outputs = function.structured_outputs
        view[key] = {
            "inputs": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(inputs.items())},
            "outputs": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(outputs.items())},
            "served": {
                k: list(v.shape)
                for k, v in function(tf.constant(["python release, rust!", "court"])).items()
            },
        }
    return view


@program
def headline_sources_keras(tf, workdir):
    """txtclsmodel's model_native train_and_evaluate, its max_steps `num_epochs *
    len(train_texts) / batch_size`: 24 rows in batches of 8 (3.0), and 20 (2.5), each in
    a folder of its own."""
    vocabulary = os.path.join(workdir, "vocab.txt")
    _write_vocabulary(vocabulary)
    train_texts, train_labels = _headlines(24, 0)
    eval_texts, eval_labels = _headlines(9, 1)

    def serving_input_fn():
        sentences = tf.compat.v1.placeholder(tf.string, [None])
        ids = words_to_ids(tf, sentences, vocabulary)
        return tf.estimator.export.TensorServingInputReceiver(ids, sentences)

    results = {}
    for run, rows in (("one_epoch", 24), ("fractional", 20)):
        output_dir = os.path.join(workdir, run)
        with _info_lines() as lines:
            estimator = tf.keras.estimator.model_to_estimator(
                keras_model=headline_classifier(tf),
                model_dir=output_dir,
                config=tf.estimator.RunConfig(save_checkpoints_steps=500),
            )
        train_spec = tf.estimator.TrainSpec(
            lambda: headline_input_fn(tf, train_texts, train_labels, vocabulary, 8, True),
            max_steps=1 * rows / 8,
        )
        eval_spec = tf.estimator.EvalSpec(
            lambda: headline_input_fn(tf, eval_texts, eval_labels, vocabulary, 8, False),
            steps=None,
            exporters=tf.estimator.LatestExporter("exporter", serving_input_fn),
            start_delay_secs=10,
            throttle_secs=10,
        )
        metrics, export_dir, more = _train_and_export(tf, estimator, train_spec, eval_spec)
        shown = [line for line in lines + more if not line.startswith("Warm-starting")]
        results[run] = {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "checkpoints": sorted(
                f for f in os.listdir(output_dir) if re.fullmatch(r"model\.ckpt-\d+\.index", f)
            ),
            "lines": _lab_lines(shown, workdir)
            + sorted({line for line in shown if line.startswith("Using the Keras model")}),
            "signatures": _signature_view(export_dir, tf),
        }
    # evaluate(steps=1.5) on two batches: both read, the progress lines saying the 1.5.
    with _info_lines() as lines:
        evaluated = estimator.evaluate(
            lambda: headline_input_fn(tf, eval_texts, eval_labels, vocabulary, 8, False),
            steps=1.5,
        )
    results["evaluate_fractional_steps"] = {
        "metrics": sorted(evaluated),
        # (each once: under 2.15 a tf.saved_model.load above lets them reach root too)
        "progress": list(dict.fromkeys(x for x in lines if x.startswith("Evaluation ["))),
    }
    return {"exact": results, "close": {}}
