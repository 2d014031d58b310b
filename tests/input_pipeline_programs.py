"""Programs in the shape of pre-tf.data input pipelines and the Google Cloud training
courses' Estimator trainers (training-data-analyst's taxifare and babyweight), after
`tf_upgrade_v2`, and how often each call calls a course's input_fn
(`input_fn_calls_per_call`).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, writes
its tiny CSV / TFRecord data there, and returns what the user sees in the parts
`tests/test_input_pipeline_samples.py` compares with 2.15's recording
(`tests/tf215/record_family.py input_pipeline_programs`, into `tests/data/tf215/input_pipelines.json`):
`exact` (names, keys, listings, steps: equal), `close` (zero-initialised linear models
fed in file order, and relations that hold whatever the seeded weights: 1e-4).
"""

import os

import numpy as np

from tests.tf1_fidelity_programs import _info_lines
from tests.tutorial_programs import event_tags, listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "input_pipelines.json")
SEED = 7
TAXI_COLUMNS = ["fare_amount", "pickuplon", "pickuplat", "passengers", "key"]
TAXI_DEFAULTS = [[0.0], [-74.0], [40.0], [1.0], ["nokey"]]


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def _write_taxi_csv(path, n, seed, header=False):
    """Taxi rides: the fare grows with the distance from a point, plus noise."""
    rng = np.random.RandomState(seed)
    lines = [",".join(TAXI_COLUMNS)] if header else []
    for i in range(n):
        lon, lat = -74.0 + rng.uniform(-0.1, 0.1), 40.7 + rng.uniform(-0.1, 0.1)
        passengers = rng.randint(1, 4)
        fare = 5.0 + 40.0 * (abs(lon + 74.0) + abs(lat - 40.7)) + rng.normal(0, 0.5)
        lines.append(f"{fare:.3f},{lon:.5f},{lat:.5f},{passengers},k{i}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _taxi_columns(tf):
    return [
        tf.feature_column.numeric_column(name) for name in ("pickuplon", "pickuplat", "passengers")
    ]


def _features_and_label(tf, row):
    features = dict(zip(TAXI_COLUMNS, row, strict=True))
    features.pop("key")
    return features, features.pop("fare_amount")


def _variables(estimator):
    return sorted(
        name for name in estimator.get_variable_names() if not name.startswith("training/")
    )


# ------------------------------------------------------------- queue-based input_fns
def queue_input_fn(tf, filename, batch_size, num_epochs, shuffle):
    """The TF1 sample's read_dataset: a filename queue, a TextLineReader reading up to a
    batch of lines, decode_csv, then `train.batch` (or a seeded `shuffle_batch`)."""

    def input_fn():
        queue = tf.compat.v1.train.string_input_producer(
            [filename], num_epochs=num_epochs, shuffle=False
        )
        reader = tf.compat.v1.TextLineReader()
        _, rows = reader.read_up_to(queue, num_records=batch_size)
        value_column = tf.expand_dims(rows, -1)
        columns = tf.io.decode_csv(records=value_column, record_defaults=TAXI_DEFAULTS)
        features, label = _features_and_label(tf, columns)
        tensors = dict(features, fare_amount=label)
        if shuffle:
            batch = tf.compat.v1.train.shuffle_batch(
                tensors,
                batch_size,
                capacity=64,
                min_after_dequeue=16,
                enqueue_many=True,
                seed=SEED,
                allow_smaller_final_batch=True,
            )
        else:
            batch = tf.compat.v1.train.batch(
                tensors, batch_size, enqueue_many=True, allow_smaller_final_batch=True
            )
        label = batch.pop("fare_amount")
        return batch, label

    return input_fn


def single_read_input_fn(tf, filename, batch_size):
    """The older shape: `reader.read` one line at a time, `limit_epochs` on the file
    list, `train.batch` of single rows."""

    def input_fn():
        names = tf.compat.v1.train.limit_epochs(tf.constant([filename]), num_epochs=1)
        queue = tf.compat.v1.train.string_input_producer(names, shuffle=False)
        _, row = tf.compat.v1.TextLineReader().read(queue)
        columns = tf.io.decode_csv(row, record_defaults=TAXI_DEFAULTS)
        features, label = _features_and_label(tf, columns)
        batch = tf.compat.v1.train.batch(
            dict(features, fare_amount=label), batch_size, allow_smaller_final_batch=True
        )
        return batch, tf.expand_dims(batch.pop("fare_amount"), -1)

    return input_fn


def queue_pipelines(tf, workdir):
    """Queue runners started by the Estimator's session; num_epochs ends training with
    OutOfRange; evaluation until the queue runs dry."""
    train_csv = _write_taxi_csv(os.path.join(workdir, "train.csv"), 40, 1)
    valid_csv = _write_taxi_csv(os.path.join(workdir, "valid.csv"), 12, 2)
    model = tf.estimator.LinearRegressor(
        _taxi_columns(tf),
        model_dir=os.path.join(workdir, "linear"),
        optimizer=tf.keras.optimizers.legacy.Ftrl(learning_rate=0.1),
    )
    model.train(queue_input_fn(tf, train_csv, 8, num_epochs=3, shuffle=False))
    evaluated = model.evaluate(queue_input_fn(tf, valid_csv, 5, num_epochs=1, shuffle=False))
    second = model.evaluate(single_read_input_fn(tf, valid_csv, 5), name="single")
    predicted = list(model.predict(queue_input_fn(tf, valid_csv, 5, num_epochs=1, shuffle=False)))
    dnn = tf.estimator.DNNRegressor(
        hidden_units=[4],
        feature_columns=_taxi_columns(tf),
        model_dir=os.path.join(workdir, "dnn"),
        config=tf.estimator.RunConfig(tf_random_seed=SEED),
    )
    dnn.train(queue_input_fn(tf, train_csv, 8, num_epochs=2, shuffle=True))
    dnn_eval = dnn.evaluate(queue_input_fn(tf, valid_csv, 6, num_epochs=1, shuffle=False))
    return {
        "exact": {
            "global_step": int(model.get_variable_value("global_step")),
            "evaluate_keys": sorted(evaluated),
            "eval_steps": [int(evaluated["global_step"]), int(second["global_step"])],
            "predictions": len(predicted),
            "variables": _variables(model),
            "dnn_global_step": int(dnn.get_variable_value("global_step")),
            "files": listing(os.path.join(workdir, "linear")),
            "train_tags": event_tags(os.path.join(workdir, "linear")),
            "eval_tags": event_tags(os.path.join(workdir, "linear", "eval")),
            "dnn_train_tags": event_tags(os.path.join(workdir, "dnn")),
        },
        "close": _floats(
            {
                "loss": evaluated["loss"],
                "average_loss": evaluated["average_loss"],
                "single_loss": second["average_loss"],
                "first_prediction": predicted[0]["predictions"][0],
                "last_prediction": predicted[-1]["predictions"][0],
                # (The seeded DNN's loss hangs on its initial weights, 4 to 600 by the
                # seed under either: its labels' mean is what the queues fed it.)
                "dnn_label_mean": dnn_eval["label/mean"],
            }
        ),
    }


def _linear_model_fn(features, labels, mode):
    """A TF1 custom model_fn of the courses' kind: zero-initialised dense over the
    numeric columns, a GradientDescent minimize, an RMSE eval metric."""
    import tensorflow as tf

    inputs = tf.stack([features[k] for k in ("pickuplon", "pickuplat", "passengers")], 1)
    inputs = tf.reshape(inputs, [-1, 3]) + tf.constant([74.0, -40.7, 0.0])
    predictions = tf.compat.v1.layers.dense(
        inputs, 1, kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"fare": predictions})
    labels = tf.reshape(labels, [-1, 1])
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    rmse = tf.compat.v1.metrics.root_mean_squared_error(labels, predictions)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"rmse": rmse}
    )


def _keras_optimizer_on_queues(tf, train_csv, model_dir):
    """[type, first line] of what a non-legacy Keras optimizer given to a canned
    estimator trained on queues raises: the updates of such an optimizer no session runs."""
    model = tf.estimator.DNNRegressor(
        [3], _taxi_columns(tf), model_dir=model_dir, optimizer=tf.keras.optimizers.Adam(0.01)
    )
    try:
        model.train(queue_input_fn(tf, train_csv, 6, num_epochs=1, shuffle=False))
    except ValueError as error:
        return [type(error).__name__, str(error).split("\n")[0]]
    return None


def queue_v1_estimators(tf, workdir):
    """The older trainers' classes on queues: a compat.v1 canned regressor and a TF1
    custom model_fn, each until the epochs run out."""
    train_csv = _write_taxi_csv(os.path.join(workdir, "train.csv"), 30, 5)
    valid_csv = _write_taxi_csv(os.path.join(workdir, "valid.csv"), 9, 6)
    v1 = tf.compat.v1.estimator.LinearRegressor(
        _taxi_columns(tf), model_dir=os.path.join(workdir, "v1"), optimizer="Ftrl"
    )
    v1.train(queue_input_fn(tf, train_csv, 6, num_epochs=2, shuffle=False))
    v1_eval = v1.evaluate(single_read_input_fn(tf, valid_csv, 4))
    custom = tf.estimator.Estimator(_linear_model_fn, model_dir=os.path.join(workdir, "fn"))
    custom.train(single_read_input_fn(tf, train_csv, 5))
    custom_eval = custom.evaluate(queue_input_fn(tf, valid_csv, 4, num_epochs=1, shuffle=False))
    fares = [
        row["fare"][0]
        for row in custom.predict(queue_input_fn(tf, valid_csv, 4, num_epochs=1, shuffle=False))
    ]
    refused = _keras_optimizer_on_queues(tf, train_csv, os.path.join(workdir, "keras"))
    return {
        "differs": {"keras_optimizer": refused},
        "exact": {
            "keras_optimizer_error": refused[0],
            "steps": [int(v1_eval["global_step"]), int(custom_eval["global_step"])],
            "v1_keys": sorted(v1_eval),
            "custom_keys": sorted(custom_eval),
            "v1_variables": _variables(v1),
            "custom_variables": _variables(custom),
            "predictions": len(fares),
            "custom_files": listing(os.path.join(workdir, "fn")),
        },
        "close": _floats(
            {
                "v1_average_loss": v1_eval["average_loss"],
                "custom_rmse": custom_eval["rmse"],
                "custom_loss": custom_eval["loss"],
                "first_fare": fares[0],
                "last_fare": fares[-1],
            }
        ),
    }


def _matched_files_queue_error(tf, model, pattern):
    """[type, first line] of what training on `string_input_producer` over
    `match_filenames_once` (a resource variable under TF2) raises."""

    def input_fn():
        names = tf.compat.v1.train.match_filenames_once(pattern)
        queue = tf.compat.v1.train.string_input_producer(names, num_epochs=1)
        _, rows = tf.compat.v1.TextLineReader().read_up_to(queue, num_records=4)
        columns = tf.io.decode_csv(tf.expand_dims(rows, -1), record_defaults=TAXI_DEFAULTS)
        return _features_and_label(tf, columns)

    try:
        model.train(input_fn, steps=1)
    except Exception as error:
        return [type(error).__name__, str(error).split("\n")[0]]
    return None


def queue_steps(tf, workdir):
    """Endless queues (num_epochs=None) cut by max_steps, steps and evaluate's steps; a
    seeded shuffle_batch evaluated to its end (the same rows in any order)."""
    train_csv = _write_taxi_csv(os.path.join(workdir, "train.csv"), 20, 1)
    model = tf.estimator.LinearRegressor(_taxi_columns(tf), model_dir=os.path.join(workdir, "m"))
    model.train(queue_input_fn(tf, train_csv, 6, None, shuffle=False), max_steps=7)
    model.train(single_read_input_fn(tf, train_csv, 3), steps=3)
    cut = model.evaluate(queue_input_fn(tf, train_csv, 4, None, shuffle=False), steps=2)
    whole = model.evaluate(queue_input_fn(tf, train_csv, 4, 1, shuffle=True), name="whole")
    return {
        "exact": {
            "files": listing(os.path.join(workdir, "m")),
            "match_filenames_once": _matched_files_queue_error(tf, model, train_csv),
        },
        "close": {
            f"{name}/{key}": float(value)
            for name, result in (("cut", cut), ("whole", whole))
            for key, value in sorted(result.items())
        },
    }


# -------------------------------------------------------------- tf.data CSV input_fns
def text_line_input_fn(tf, pattern, batch_size, num_epochs):
    """The courses' read_dataset: glob, TextLineDataset skipping the header, decode_csv."""

    def input_fn():
        files = tf.data.Dataset.from_tensor_slices(sorted(tf.io.gfile.glob(pattern)))
        dataset = files.flat_map(lambda name: tf.data.TextLineDataset(name).skip(1))
        dataset = dataset.map(
            lambda line: _features_and_label(
                tf, tf.io.decode_csv(line, record_defaults=TAXI_DEFAULTS)
            )
        )
        return dataset.repeat(num_epochs).batch(batch_size)

    return input_fn


def csv_dataset_input_fn(tf, pattern, batch_size):
    def input_fn():
        dataset = tf.data.experimental.make_csv_dataset(
            pattern,
            batch_size,
            column_names=TAXI_COLUMNS,
            column_defaults=[d[0] for d in TAXI_DEFAULTS],
            label_name="fare_amount",
            num_epochs=1,
            shuffle=False,
        )
        return dataset

    return input_fn


def _write_tfrecords(tf, path, csv_path):
    with open(csv_path) as f:
        lines = f.read().splitlines()[1:]
    with tf.io.TFRecordWriter(path) as writer:
        for line in lines:
            values = line.split(",")
            feature = {
                name: tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
                for name, v in zip(TAXI_COLUMNS[:-1], values, strict=False)
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


def tfrecord_input_fn(tf, path, batch_size):
    spec = {name: tf.io.FixedLenFeature([], tf.float32) for name in TAXI_COLUMNS[:-1]}

    def parse(serialized):
        features = tf.io.parse_single_example(serialized, spec)
        return features, features.pop("fare_amount")

    def input_fn():
        return tf.data.TFRecordDataset([path]).map(parse).batch(batch_size)

    return input_fn


def csv_datasets(tf, workdir):
    """One zero-initialised linear model trained on TextLineDataset rows, evaluated on
    the same rows three ways: TextLineDataset, make_csv_dataset, TFRecords."""
    for i in range(2):
        _write_taxi_csv(os.path.join(workdir, f"train-{i}.csv"), 20, 10 + i, header=True)
    valid = _write_taxi_csv(os.path.join(workdir, "valid.csv"), 10, 3, header=True)
    records = _write_tfrecords(tf, os.path.join(workdir, "valid.tfrecord"), valid)
    model = tf.estimator.LinearRegressor(
        _taxi_columns(tf),
        model_dir=os.path.join(workdir, "model"),
        optimizer=tf.keras.optimizers.legacy.Ftrl(learning_rate=0.1),
    )
    model.train(text_line_input_fn(tf, os.path.join(workdir, "train-*.csv"), 8, 2))
    results = {
        "text_line": model.evaluate(text_line_input_fn(tf, valid, 4, 1), name="text"),
        "csv_dataset": model.evaluate(csv_dataset_input_fn(tf, valid, 4), name="csv"),
        "tfrecord": model.evaluate(tfrecord_input_fn(tf, records, 4), name="records"),
    }
    return {
        "exact": {
            "global_step": int(model.get_variable_value("global_step")),
            "evaluate_keys": {k: sorted(v) for k, v in results.items()},
            "files": listing(os.path.join(workdir, "model")),
        },
        "close": _floats({k: v["average_loss"] for k, v in results.items()}),
    }


# ------------------------------------------------------------ serving receivers
NUMERIC = ("pickuplon", "pickuplat", "passengers")


def flat_serving_input_fn():
    """Placeholders of [None] handed to the numeric columns as they are (no expand_dims)."""
    import tensorflow as tf

    tensors = {k: tf.compat.v1.placeholder(tf.float32, [None], name=k) for k in NUMERIC}
    return tf.estimator.export.ServingInputReceiver(tensors, tensors)


def csv_serving_input_fn():
    """taxifare's CSV receiver: one string of CSV rows, decoded in the serving graph."""
    import tensorflow as tf

    rows = tf.compat.v1.placeholder(tf.string, [None], name="csv_row")
    columns = tf.io.decode_csv(rows, record_defaults=TAXI_DEFAULTS[1:4])
    features = dict(zip(NUMERIC, columns, strict=True))
    return tf.estimator.export.ServingInputReceiver(features, {"csv_row": rows})


def serving_receivers(tf, workdir):
    """A queue-trained LinearRegressor exported with both receivers: the signatures,
    their inputs and outputs, and what they predict for one ride."""
    train_csv = _write_taxi_csv(os.path.join(workdir, "train.csv"), 20, 1)
    model = tf.estimator.LinearRegressor(_taxi_columns(tf), model_dir=os.path.join(workdir, "m"))
    model.train(queue_input_fn(tf, train_csv, 5, num_epochs=2, shuffle=False))
    seen, values = {}, {}
    for name, receiver_fn in (("flat", flat_serving_input_fn), ("csv", csv_serving_input_fn)):
        path = model.export_saved_model(os.path.join(workdir, name), receiver_fn)
        served = tf.saved_model.load(path.decode() if isinstance(path, bytes) else path)
        seen[name] = {
            key: [sorted(f.structured_input_signature[1]), sorted(f.structured_outputs)]
            for key, f in sorted(served.signatures.items())
        }
        if name == "flat":
            ride = {"pickuplon": [-74.05], "pickuplat": [40.72], "passengers": [2.0]}
            got = served.signatures["predict"](**{k: tf.constant(v) for k, v in ride.items()})
            values[name] = got["predictions"].numpy()[0][0]
        else:
            got = served.signatures["serving_default"](inputs=tf.constant(["-74.05,40.72,2"]))
            values[name] = got["outputs"].numpy()[0][0]
    return {"exact": {"signatures": seen}, "close": _floats(values)}


# ------------------------------------------------------------------- babyweight
BABY_COLUMNS = ["weight_pounds", "is_male", "mother_age", "plurality", "gestation_weeks", "key"]
BABY_DEFAULTS = [[0.0], ["null"], [0.0], ["null"], [0.0], ["nokey"]]
PLURALITIES = ["Single(1)", "Twins(2)", "Triplets(3)", "Multiple(2+)"]


def _write_baby_csv(path, n, seed):
    rng = np.random.RandomState(seed)
    lines = []
    for i in range(n):
        male = rng.choice(["True", "False", "Unknown"])
        age, weeks = rng.randint(15, 45), rng.randint(28, 44)
        plurality = PLURALITIES[rng.randint(0, 4)]
        weight = 1.0 + 0.18 * weeks + 0.3 * (male == "True") + rng.normal(0, 0.3)
        lines.append(f"{weight:.3f},{male},{age},{plurality},{weeks},k{i}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _baby_columns(tf):
    """babyweight's wide and deep: categorical and bucketized columns on the wide side,
    their cross embedded on the deep side."""
    fc = tf.feature_column
    is_male = fc.categorical_column_with_vocabulary_list("is_male", ["True", "False", "Unknown"])
    plurality = fc.categorical_column_with_vocabulary_list("plurality", PLURALITIES)
    age = fc.numeric_column("mother_age")
    weeks = fc.numeric_column("gestation_weeks")
    age_buckets = fc.bucketized_column(age, boundaries=[20.0, 30.0, 40.0])
    week_buckets = fc.bucketized_column(weeks, boundaries=[32.0, 36.0, 40.0])
    wide = [is_male, plurality, age_buckets, week_buckets]
    crossed = fc.crossed_column(wide, hash_bucket_size=200)
    deep = [age, weeks, fc.embedding_column(crossed, 3)]
    return wide, deep


def baby_input_fn(tf, pattern, batch_size, mode):
    def decode(line):
        features = dict(
            zip(BABY_COLUMNS, tf.io.decode_csv(line, record_defaults=BABY_DEFAULTS), strict=True)
        )
        return features, features.pop("weight_pounds")

    def input_fn():
        dataset = tf.data.TextLineDataset(tf.io.gfile.glob(pattern)).map(decode)
        if mode == tf.estimator.ModeKeys.TRAIN:
            dataset = dataset.shuffle(32, seed=SEED).repeat(None)
        return dataset.batch(batch_size)

    return input_fn


def baby_serving_input_fn():
    """The course's serving_input_fn: placeholders of [None], each expanded to [None, 1]."""
    import tensorflow as tf

    placeholders = {
        "is_male": tf.compat.v1.placeholder(tf.string, [None]),
        "mother_age": tf.compat.v1.placeholder(tf.float32, [None]),
        "plurality": tf.compat.v1.placeholder(tf.string, [None]),
        "gestation_weeks": tf.compat.v1.placeholder(tf.float32, [None]),
    }
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in placeholders.items()}
    return tf.estimator.export.ServingInputReceiver(features, placeholders)


def _signature_report(lines):
    """The export's log lines on which signatures it holds and which it left out (why:
    its first sentence)."""
    starts = ("Signatures ", "Export includes ", "'")
    kept = [line.split(". ")[0] for line in lines if line.startswith(starts)]
    return [line for i, line in enumerate(kept) if i == 0 or kept[i - 1] != line]


def babyweight(tf, workdir):
    """training-data-analyst's babyweight trainer: DNNLinearCombinedRegressor, an RMSE
    metric added with add_metrics, train_and_evaluate with a LatestExporter."""
    train = _write_baby_csv(os.path.join(workdir, "train.csv"), 64, 4)
    _write_baby_csv(os.path.join(workdir, "eval.csv"), 16, 5)
    model_dir = os.path.join(workdir, "babyweight_trained")
    wide, deep = _baby_columns(tf)
    config = tf.estimator.RunConfig(
        save_checkpoints_secs=1000, keep_checkpoint_max=3, tf_random_seed=SEED
    )
    estimator = tf.estimator.DNNLinearCombinedRegressor(
        model_dir=model_dir,
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=[8, 4],
        config=config,
    )

    def my_rmse(labels, predictions):
        pred_values = predictions["predictions"]
        return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, pred_values)}

    estimator = tf.estimator.add_metrics(estimator, my_rmse)
    train_spec = tf.estimator.TrainSpec(
        input_fn=baby_input_fn(tf, train, 16, tf.estimator.ModeKeys.TRAIN), max_steps=30
    )
    exporter = tf.estimator.LatestExporter("exporter", baby_serving_input_fn)
    eval_spec = tf.estimator.EvalSpec(
        input_fn=baby_input_fn(tf, os.path.join(workdir, "eval*"), 8, "eval"),
        steps=None,
        start_delay_secs=60,
        throttle_secs=300,
        exporters=exporter,
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    (export_dir,) = [e.decode() if isinstance(e, bytes) else e for e in exports]
    babies = {
        "is_male": ["True", "False"],
        "mother_age": [26.0, 33.0],
        "plurality": ["Single(1)", "Twins(2)"],
        "gestation_weeks": [39.0, 30.0],
    }
    serving = tf.saved_model.load(export_dir).signatures["predict"]
    predicted = serving(**{k: tf.constant(v) for k, v in babies.items()})
    direct = estimator.predict(
        lambda: (
            tf.data.Dataset.from_tensor_slices(babies)
            .map(lambda row: {k: tf.expand_dims(v, -1) for k, v in row.items()})
            .batch(2)
        )
    )
    direct = [row["predictions"][0] for row in direct]
    return {
        "exact": {
            "metrics": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "files": listing(model_dir),
            "train_tags": event_tags(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "signatures": signatures(export_dir),
            "export_parent": os.path.relpath(os.path.dirname(export_dir), model_dir),
            "variables": sorted(estimator.get_variable_names()),
            "predicted": {k: list(v.shape) for k, v in sorted(predicted.items())},
            "signature_report": _signature_report(lines),
        },
        # Its loss and predictions hang on the seeded initial weights (an RMSE of 2 to 25
        # by the seed), which the kit draws as 2.15 did: compared too.
        "seeded": {
            **_floats({"rmse": metrics["rmse"], "average_loss": metrics["average_loss"]}),
            "predictions": [float(p) for p in direct],
        },
        "close": _floats(
            {
                "rmse_squared_over_average_loss": metrics["rmse"] ** 2 / metrics["average_loss"],
                "export_minus_predict": np.abs(
                    predicted["predictions"].numpy()[:, 0] - direct
                ).max(),
            }
        ),
    }


def _keras_layer_model_fn(features, labels, mode):
    """A TF2-style custom model_fn (a Keras layer and a Keras optimizer's update)."""
    import tensorflow as tf

    inputs = tf.stack([features[k] for k in ("pickuplon", "pickuplat", "passengers")], 1)
    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros")
    predictions = layer(inputs + tf.constant([74.0, -40.7, 0.0]))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"fare": predictions})
    loss = tf.reduce_mean(tf.square(predictions - tf.reshape(labels, [-1, 1])))
    variables = layer.trainable_variables
    update = tf.keras.optimizers.legacy.SGD(0.01).apply_gradients(
        zip(tf.gradients(loss, variables), variables, strict=True)
    )
    train_op = tf.group(update, tf.compat.v1.train.get_global_step().assign_add(1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn_calls_per_call(tf, workdir):
    """How often each train(), evaluate() and predict() calls a course's CSV input_fn (one
    that loads, prints or counts once a call sees it), each call given a new input_fn as
    the courses' `lambda: read_dataset(...)`: 2.15 called it once a call, in the call's
    graph.  A canned LinearRegressor's calls, and a Keras-layer custom model_fn's."""
    pattern = _write_taxi_csv(os.path.join(workdir, "taxi.csv"), 12, SEED)
    calls = []

    def input_fn(labelled=True):
        read = csv_dataset_input_fn(tf, pattern, 4)

        def counted():
            calls.append(labelled)
            dataset = read()
            return dataset if labelled else dataset.map(lambda features, label: features)

        return counted

    def counts(estimator):
        seen = {}
        for call, run in (
            ("train", lambda: estimator.train(input_fn(), steps=2)),
            ("train_again", lambda: estimator.train(input_fn(), steps=2)),
            ("evaluate", lambda: estimator.evaluate(input_fn())),
            ("evaluate_again", lambda: estimator.evaluate(input_fn())),
            ("predict", lambda: list(estimator.predict(input_fn(labelled=False)))),
            ("predict_again", lambda: list(estimator.predict(input_fn(labelled=False)))),
        ):
            del calls[:]
            run()
            seen[call] = len(calls)
        return seen

    return {
        "exact": {
            "canned": counts(
                tf.estimator.LinearRegressor(
                    _taxi_columns(tf), model_dir=os.path.join(workdir, "linear")
                )
            ),
            "custom": counts(
                tf.estimator.Estimator(_keras_layer_model_fn, os.path.join(workdir, "custom"))
            ),
        }
    }


PROGRAMS = {
    "queue_pipelines": queue_pipelines,
    "queue_v1_estimators": queue_v1_estimators,
    "queue_steps": queue_steps,
    "csv_datasets": csv_datasets,
    "serving_receivers": serving_receivers,
    "babyweight": babyweight,
    "input_fn_calls_per_call": input_fn_calls_per_call,
}
