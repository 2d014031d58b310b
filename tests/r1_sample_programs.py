"""tensorflow/models' r1-era samples and the TensorFlow docs' r1 Estimator guides, after
`tf_upgrade_v2`, on tiny made-up data.

- `samples/cookbook/regression`: linear_regression.py, linear_regression_categorical.py,
  dnn_regression.py and custom_regression.py over automobile_data.py's frames (float64
  columns and prices, strings; `loss_reduction=...SUM`, which tf_upgrade_v2 inserts);
  warm starts with renamed variables, and what their slips raise; a `checkpoint_path` of
  a step never saved;
- `site/en/r1/guide/checkpoints.md`: the model_dir a premade DNN writes, a checkpointing
  `RunConfig`, a temporary model_dir, and the bad restoration it warns of; its retention
  settings at their edges (`keep_checkpoint_max` None or 0, `keep_checkpoint_every_n_hours`)
  and the `checkpoint` file they leave; a `RunConfig` that saves no checkpoint;
- `site/en/r1/guide/datasets_for_estimators.md`: iris_data.py's `csv_input_fn`
  (`TextLineDataset(...).skip(1)` and `decode_csv`) into premade_estimator.py's main and
  the guide's `LinearClassifier`; the flags' slips (`--train_steps` at 0 and below) and an
  input_fn returning a triple;
- `site/en/r1/guide/feature_columns.md`: its columns (a float64 number, a vector, a
  matrix, bucketized years, an identity, a vocabulary file, a hashed embedding, its
  `81**0.25` dimension, crossed latitude and longitude buckets);
- `site/en/r1/tutorials/estimators/linear.ipynb`: census through compat.v1's
  `LinearClassifier` with TF1 `FtrlOptimizer`s (plain; L1 and L2), its printed metrics,
  predictions from a frame that still holds the label, and its weights;
- `tutorials/image/cifar10_estimator`: towers under a device function, lists of shards
  as features and labels, hparams as an `argparse.Namespace`, `--num-gpus=2` soft-placed.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees: `exact` (keys, dtypes, shapes, listings, variable
names, printed lines without their numbers, errors) and `close` (values: every model
starts from weights a checkpoint the program writes holds, or from zeros, and every batch
is the whole data set, so the values agree to 1e-4). `tests/test_r1_samples.py` compares
them with 2.15's recording (`tests/tf215/record_family.py r1_sample_programs`, into
`tests/data/tf215/r1_samples.json`).
"""

import contextlib
import io
import itertools
import os
import re
import tempfile

import numpy as np
import pandas as pd

from tests.feature_column_programs import write_checkpoint
from tests.migrate_guide_programs import _user_lines
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _floats, _iris_frames
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "r1_samples.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
STEPS = 4
PRICE_NORM_FACTOR = 1000.0
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def _without_numbers(lines):
    return [_NUMBER.sub("N", line) for line in lines]


def _printed(call):
    """(what `call()` returns, the lines it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = call()
    return result, [line for line in out.getvalue().splitlines() if line.strip()]


def _error(call, gist):
    """[the type of what `call()` raises, whether its message says `gist`] (TensorFlow's
    runtime errors carry the stack where the op was made), or None if nothing is raised."""
    try:
        call()
    except Exception as error:  # (any error is the record)
        return [type(error).__name__, gist in str(error)]
    return None


def _predictions(rows):
    """{key: every row's values, flattened} of `rows` (dicts of numbers)."""
    return {
        key: np.concatenate([np.ravel(row[key]) for row in rows]).astype(float).tolist()
        for key in sorted(rows[0])
        if np.asarray(rows[0][key]).dtype.kind in "fiu"
    }


def _variables(model, skip=r"$^"):
    """{name: shape} of the model_dir's checkpoint, and {name: values} of its weights."""
    names = [n for n in model.get_variable_names() if not re.search(skip, n)]
    shapes = {n: list(np.shape(model.get_variable_value(n))) for n in names}
    values = {
        n: np.ravel(model.get_variable_value(n)).astype(float).tolist()
        for n in names
        if np.asarray(model.get_variable_value(n)).dtype.kind == "f"
    }
    return shapes, values


# ------------------------------------------------------------ automobile_data.py
_MAKES = ["audi", "bmw", "honda", "mazda", "toyota", "volvo", "peugot"]
_BODY_STYLES = ["hardtop", "wagon", "sedan", "hatchback", "convertible"]


def load_data(n_train=24, n_test=12, seed=0):
    """automobile_data.load_data: ((x_train, y_train), (x_test, y_test)), frames of the
    imports-85 columns the samples read (float64, as pandas reads them; strings) and
    the price."""
    rng = np.random.RandomState(seed)
    n = n_train + n_test
    weight = rng.uniform(1500, 4000, n).round()
    mpg = rng.uniform(16, 50, n).round()
    body = rng.choice(_BODY_STYLES, n)
    body[::9] = "limousine"  # not in the samples' vocabulary: a weight of zero
    data = pd.DataFrame(
        {
            "symboling": rng.randint(-2, 4, n),
            "make": rng.choice(_MAKES, n),
            "body-style": body,
            "curb-weight": weight,
            "highway-mpg": mpg,
            "price": (weight * 6.0 - mpg * 150 + rng.normal(0, 900, n) + 4000).round(),
        }
    )
    x_train, x_test = data[:n_train].copy(), data[n_train:].copy()
    return (x_train, x_train.pop("price")), (x_test, x_test.pop("price"))


def make_dataset(tf, batch_sz, x, y=None, shuffle=False, shuffle_buffer_size=1000):
    """automobile_data.make_dataset (its last version): an input_fn of a frame's slices."""

    def input_fn():
        if y is not None:
            dataset = tf.data.Dataset.from_tensor_slices((dict(x), y))
        else:
            dataset = tf.data.Dataset.from_tensor_slices(dict(x))
        if shuffle:
            dataset = dataset.shuffle(shuffle_buffer_size).batch(batch_sz).repeat()
        else:
            dataset = dataset.batch(batch_sz)
        return dataset

    return input_fn


def make_iterator_input_fn(tf, batch_sz, x, y=None, shuffle=False):
    """automobile_data.make_dataset (its 1.x version): the input_fn returns a one-shot
    iterator's next element (`tf_upgrade_v2`: `tf.compat.v1.data.make_one_shot_iterator`)."""
    make = make_dataset(tf, batch_sz, x, y, shuffle)
    return lambda: tf.compat.v1.data.make_one_shot_iterator(make()).get_next()


def from_dataset(tf, ds):
    """linear_regression_categorical.py's from_dataset (after tf_upgrade_v2)."""
    return lambda: tf.compat.v1.data.make_one_shot_iterator(ds).get_next()


def _scaled_data():
    (train_x, train_y), (test_x, test_y) = load_data()
    train_y /= PRICE_NORM_FACTOR
    test_y /= PRICE_NORM_FACTOR
    return (train_x, train_y), (test_x, test_y)


def _automobile_columns(tf, deep):
    """The cookbook's columns: two numbers, then body style and make (raw for a linear
    model; indicator and embedding for a DNN)."""
    body_style = tf.feature_column.categorical_column_with_vocabulary_list(
        key="body-style", vocabulary_list=_BODY_STYLES
    )
    make = tf.feature_column.categorical_column_with_hash_bucket(key="make", hash_bucket_size=50)
    columns = [
        tf.feature_column.numeric_column(key="curb-weight"),
        tf.feature_column.numeric_column(key="highway-mpg"),
    ]
    if deep:
        return [
            *columns,
            tf.feature_column.indicator_column(body_style),
            tf.feature_column.embedding_column(make, dimension=3),
        ]
    return [*columns, body_style, make]


# Kept on purpose (docs/guide/estimator.md): 2.15's graph and session lines, which the TF2
# path (a canned model on a Dataset) does not run.
_GRAPH_LINES = {
    "Done calling model_fn.",
    "Create CheckpointSaverHook.",
    "Graph was finalized.",
    "Running local_init_op.",
    "Done running local_init_op.",
}


def _rms_line(average_loss):
    return f"RMS error for the test set: ${PRICE_NORM_FACTOR * average_loss**0.5:.0f}"


@program
def linear_regression(tf, workdir):
    """linear_regression.py's main, then its flags' slips: a batch size of 0 and a price
    norm factor of 0 (prices of inf)."""
    (train_x, train_y), (test_x, test_y) = _scaled_data()
    batch = len(train_x)  # (every batch is the whole set: the shuffle orders nothing)
    model_dir = os.path.join(workdir, "linear")
    feature_columns = _automobile_columns(tf, deep=False)[:2]
    model = tf.estimator.LinearRegressor(
        feature_columns=feature_columns,
        model_dir=model_dir,
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    with _info_lines() as lines:
        model.train(input_fn=make_dataset(tf, batch, train_x, train_y, True, 1000), steps=STEPS)
        eval_result = model.evaluate(input_fn=make_dataset(tf, batch, test_x, test_y))
    input_dict = {"curb-weight": np.array([2000, 3000]), "highway-mpg": np.array([30, 40])}
    rows = list(model.predict(input_fn=make_dataset(tf, 1, input_dict)))
    printed = [
        "Curb weight: {: 4d}lbs, Highway: {: 0d}mpg, Prediction: ${: 9.2f}".format(
            input_dict["curb-weight"][i],
            input_dict["highway-mpg"][i],
            PRICE_NORM_FACTOR * prediction["predictions"][0],
        )
        for i, prediction in enumerate(rows)
    ]
    zero_batch = _error(
        lambda: tf.estimator.LinearRegressor(
            feature_columns, model_dir=os.path.join(workdir, "zero_batch")
        ).train(make_dataset(tf, 0, train_x, train_y, True), steps=2),
        "Batch size must be greater than zero.",
    )
    infinite = tf.estimator.LinearRegressor(
        feature_columns,
        model_dir=os.path.join(workdir, "inf"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    inf_prices = _raised(
        lambda: infinite.train(make_dataset(tf, batch, train_x, train_y / 0.0, True), steps=3)
    )
    raw = tf.estimator.LinearRegressor(  # --price_norm_factor=1: prices in dollars
        feature_columns,
        model_dir=os.path.join(workdir, "raw"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    with _info_lines() as raw_lines:
        raw.train(make_dataset(tf, batch, train_x, train_y * PRICE_NORM_FACTOR, True), steps=2)
        raw_result = raw.evaluate(make_dataset(tf, batch, test_x, test_y * PRICE_NORM_FACTOR))
    shapes, values = _variables(model, skip="Ftrl")
    return {
        "exact": {
            "eval_keys": list(eval_result),
            "global_step": int(eval_result["global_step"]),
            "raw_lines": [
                line for line in _user_lines(raw_lines, workdir) if line not in _GRAPH_LINES
            ],
            "printed": _without_numbers([_rms_line(eval_result["average_loss"]), *printed]),
            "predictions": structure(rows),
            "files": listing(model_dir),
            "variables": shapes,
            "lines": [line for line in _user_lines(lines, workdir) if line not in _GRAPH_LINES],
            "zero_batch": zero_batch,
            "inf_prices": inf_prices,
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items()}),
            **_floats({f"raw/{k}": v for k, v in raw_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


@program
def linear_regression_categorical(tf, workdir):
    """linear_regression_categorical.py: its datasets made in main and read through
    `from_dataset` (what 2.15 said), then each made in its input_fn (the 1.x
    automobile_data's one-shot iterators)."""
    (train_x, train_y), (test_x, test_y) = _scaled_data()
    batch = len(train_x)
    train = tf.data.Dataset.from_tensor_slices((dict(train_x), train_y)).shuffle(1000)
    train = train.batch(batch).repeat()
    outside = tf.estimator.LinearRegressor(
        feature_columns=_automobile_columns(tf, deep=False),
        model_dir=os.path.join(workdir, "outside"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    made_outside = _raised(lambda: outside.train(input_fn=from_dataset(tf, train), steps=2))
    returned_outside = _raised(lambda: outside.train(input_fn=lambda: train, steps=2))
    model_dir = os.path.join(workdir, "categorical")
    model = tf.estimator.LinearRegressor(
        feature_columns=_automobile_columns(tf, deep=False),
        model_dir=model_dir,
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    with _info_lines() as lines:
        model.train(input_fn=make_iterator_input_fn(tf, batch, train_x, train_y, True), steps=STEPS)
        eval_result = model.evaluate(input_fn=make_iterator_input_fn(tf, 5, test_x, test_y))
    rows = list(model.predict(input_fn=make_iterator_input_fn(tf, 5, test_x)))
    shapes, values = _variables(model, skip="Ftrl")
    return {
        "exact": {
            "lines": _user_lines(lines, workdir),
            "made_outside": made_outside,
            "returned_outside": returned_outside,
            "outside_files": listing(os.path.join(workdir, "outside")),
            "eval_keys": list(eval_result),
            "global_step": int(eval_result["global_step"]),
            "printed": _without_numbers([_rms_line(eval_result["average_loss"])]),
            "predictions": structure(rows),
            "count": len(rows),
            "variables": shapes,
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


# The DNNs' weights, from a checkpoint the program writes (the samples draw them).
_EMBEDDING = "input_layer/make_embedding/embedding_weights"


def _dense_shapes(prefix, names, widths):
    shapes = {}
    for name, (rows, cols) in zip(names, itertools.pairwise(widths), strict=True):
        shapes[f"{prefix}{name}/kernel"] = [rows, cols]
        shapes[f"{prefix}{name}/bias"] = [cols]
    return shapes


@program
def dnn_regression(tf, workdir):
    """dnn_regression.py: a DNNRegressor [20, 20] over an indicator and an embedding
    column, warm-started from fixed weights; evaluate, predict, export."""
    (train_x, train_y), (test_x, test_y) = _scaled_data()
    batch = len(train_x)
    shapes = _dense_shapes("dnn/", ["hiddenlayer_0", "hiddenlayer_1", "logits"], [10, 20, 20, 1])
    shapes[f"dnn/input_from_feature_columns/{_EMBEDDING}"] = [50, 3]
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    model_dir = os.path.join(workdir, "dnn")
    feature_columns = _automobile_columns(tf, deep=True)
    model = tf.estimator.DNNRegressor(
        hidden_units=[20, 20],
        feature_columns=feature_columns,
        model_dir=model_dir,
        loss_reduction=tf.keras.losses.Reduction.SUM,
        warm_start_from=start,
    )
    model.train(input_fn=make_dataset(tf, batch, train_x, train_y, True), steps=STEPS)
    eval_result = model.evaluate(input_fn=make_dataset(tf, batch, test_x, test_y))
    rows = list(model.predict(input_fn=make_dataset(tf, 5, test_x)))
    spec = tf.feature_column.make_parse_example_spec(feature_columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    export_dir = model.export_saved_model(os.path.join(workdir, "export"), receiver)
    names, values = _variables(model, skip="Adagrad|global_step")
    return {
        "exact": {
            "eval_keys": list(eval_result),
            "global_step": int(eval_result["global_step"]),
            "printed": _without_numbers([_rms_line(eval_result["average_loss"])]),
            "predictions": structure(rows),
            "variables": sorted(model.get_variable_names()),
            "shapes": names,
            "signatures": signatures(export_dir.decode()),
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


def my_dnn_regression_fn(features, labels, mode, params):
    """custom_regression.py's model_fn, as tf_upgrade_v2 leaves it."""
    import tensorflow as tf

    top = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for units in params.get("hidden_units", [20]):
        top = tf.compat.v1.layers.dense(inputs=top, units=units, activation=tf.nn.relu)
    output_layer = tf.compat.v1.layers.dense(inputs=top, units=1)
    predictions = tf.squeeze(output_layer, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions={"price": predictions})
    average_loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    batch_size = tf.shape(input=labels)[0]
    total_loss = tf.cast(batch_size, dtype=tf.float32) * average_loss
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = params.get("optimizer", tf.compat.v1.train.AdamOptimizer)
        optimizer = optimizer(params.get("learning_rate", None))
        train_op = optimizer.minimize(
            loss=average_loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.estimator.EstimatorSpec(mode=mode, loss=total_loss, train_op=train_op)
    assert mode == tf.estimator.ModeKeys.EVAL
    print(labels)
    print(predictions)
    predictions = tf.cast(predictions, tf.float64)
    rmse = tf.compat.v1.metrics.root_mean_squared_error(labels, predictions)
    return tf.estimator.EstimatorSpec(mode=mode, loss=total_loss, eval_metric_ops={"rmse": rmse})


@program
def custom_regression(tf, workdir):
    """custom_regression.py's main (its model_fn prints labels and predictions while
    evaluate builds it), warm-started from fixed weights; then without a learning rate."""
    (train_x, train_y), (test_x, test_y) = _scaled_data()
    batch = len(train_x)
    shapes = _dense_shapes("", ["dense", "dense_1", "dense_2"], [10, 20, 20, 1])
    shapes[_EMBEDDING] = [50, 3]
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    params = {
        "feature_columns": _automobile_columns(tf, deep=True),
        "learning_rate": 0.001,
        "optimizer": tf.compat.v1.train.AdamOptimizer,
        "hidden_units": [20, 20],
    }
    model_dir = os.path.join(workdir, "custom")
    model = tf.estimator.Estimator(
        model_fn=my_dnn_regression_fn, model_dir=model_dir, params=params, warm_start_from=start
    )
    with _info_lines() as lines:
        model.train(input_fn=make_dataset(tf, batch, train_x, train_y, True, 1000), steps=STEPS)
        eval_result, printed = _printed(
            lambda: model.evaluate(input_fn=make_dataset(tf, batch, test_x, test_y))
        )
    rows = list(model.predict(input_fn=make_dataset(tf, 5, test_x)))
    no_rate = tf.estimator.Estimator(
        model_fn=my_dnn_regression_fn,
        model_dir=os.path.join(workdir, "no_rate"),
        params={**params, "learning_rate": None},
    )
    without_rate = _raised(
        lambda: no_rate.train(make_dataset(tf, batch, train_x, train_y, True), steps=1)
    )
    weighted = make_dataset(tf, batch, train_x, train_y)  # (features, labels, weights)
    three_tuple = _raised(
        lambda: no_rate.train(lambda: weighted().map(lambda x, y: (x, y, 1.0)), steps=1)
    )
    names, values = _variables(model, skip="Adam|power|global_step")
    rms = "RMS error for the test set: ${:.0f}".format(PRICE_NORM_FACTOR * eval_result["rmse"])
    return {
        "exact": {
            "eval_keys": list(eval_result),
            "global_step": int(eval_result["global_step"]),
            "printed": printed + _without_numbers([rms]),
            "lines": _user_lines(lines, workdir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "predictions": structure(rows),
            "variables": sorted(model.get_variable_names()),
            "shapes": names,
            "files": listing(model_dir),
            "without_rate": without_rate,
            "three_tuple": three_tuple,
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


# ------------------------------------------------------------ iris: the r1 guides
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]
CSV_TYPES = [[0.0], [0.0], [0.0], [0.0], [0]]


def _iris_csv(path, n, seed):
    """A file in iris_training.csv's layout: a header line (count, width, names), rows."""
    frame, species = _iris_frames(n, seed)
    with open(path, "w") as f:
        f.write(f"{n},4,setosa,versicolor,virginica\n")
        for row, label in zip(frame.itertuples(index=False), species, strict=True):
            f.write(",".join(f"{v:.1f}" for v in row) + f",{label}\n")
    return path


def _parse_line(tf, line):
    """iris_data._parse_line: a CSV line to (features, label)."""
    fields = tf.io.decode_csv(records=line, record_defaults=CSV_TYPES)
    features = dict(zip(CSV_COLUMN_NAMES, fields, strict=True))
    label = features.pop("Species")
    return features, label


def csv_input_fn(tf, csv_path, batch_size):
    """iris_data.csv_input_fn."""
    dataset = tf.data.TextLineDataset(csv_path).skip(1)
    dataset = dataset.map(lambda line: _parse_line(tf, line))
    return dataset.shuffle(1000).repeat().batch(batch_size)


def iris_eval_input_fn(tf, features, labels, batch_size):
    """iris_data.eval_input_fn."""
    features = dict(features)
    inputs = features if labels is None else (features, labels)
    dataset = tf.data.Dataset.from_tensor_slices(inputs)
    assert batch_size is not None, "batch_size must not be None"
    return dataset.batch(batch_size)


def _iris_start(tf, workdir, hidden):
    shapes = _dense_shapes(
        "dnn/", [f"hiddenlayer_{i}" for i in range(len(hidden))] + ["logits"], [4, *hidden, 3]
    )
    return write_checkpoint(tf, os.path.join(workdir, "start"), shapes)


def _iris_classifier(tf, hidden, **kwargs):
    return tf.estimator.DNNClassifier(
        feature_columns=[tf.feature_column.numeric_column(key=k) for k in CSV_COLUMN_NAMES[:4]],
        hidden_units=hidden,
        n_classes=3,
        loss_reduction=tf.keras.losses.Reduction.SUM,
        **kwargs,
    )


def _premade_misuse(tf, classifier, train_path, test_x, test_y):
    """premade_estimator.py's flags at 0 and below (--train_steps), and an input_fn that
    returns (features, labels, weights)."""

    def with_weights():
        features, labels = _parse_line(tf, tf.constant("5.1,3.3,1.7,0.5,0"))
        return features, labels, tf.constant(1.0)

    def evaluate(steps):
        return classifier.evaluate(lambda: iris_eval_input_fn(tf, test_x, test_y, 4), steps=steps)

    return {
        "train_steps_0": _raised(
            lambda: classifier.train(lambda: csv_input_fn(tf, train_path, 30), steps=0)
        ),
        "train_steps_-5": _raised(
            lambda: classifier.train(lambda: csv_input_fn(tf, train_path, 30), steps=-5)
        ),
        "max_steps_0": _raised(
            lambda: classifier.train(lambda: csv_input_fn(tf, train_path, 30), max_steps=0)
        ),
        "eval_steps_0": _raised(lambda: evaluate(0)),
        "three_tuple": _raised(lambda: classifier.train(with_weights, steps=1)),
        "three_tuple_predict": _raised(lambda: list(classifier.predict(with_weights))),
    }


@program
def iris_csv(tf, workdir):
    """datasets_for_estimators.md: premade_estimator.py trained from iris_data's
    csv_input_fn (every batch the whole file), evaluated on a frame, its predictions
    printed with the sample's template."""
    train_path = _iris_csv(os.path.join(workdir, "iris_training.csv"), 30, 0)
    test_x, test_y = _iris_frames(12, 1)
    classifier = _iris_classifier(
        tf,
        [10, 10],
        model_dir=os.path.join(workdir, "iris"),
        warm_start_from=_iris_start(tf, workdir, [10, 10]),
    )
    classifier.train(input_fn=lambda: csv_input_fn(tf, train_path, 30), steps=STEPS)
    eval_result = classifier.evaluate(input_fn=lambda: iris_eval_input_fn(tf, test_x, test_y, 12))
    predict_x = {
        "SepalLength": [5.1, 5.9, 6.9],
        "SepalWidth": [3.3, 3.0, 3.1],
        "PetalLength": [1.7, 4.2, 5.4],
        "PetalWidth": [0.5, 1.5, 2.1],
    }
    rows = list(classifier.predict(input_fn=lambda: iris_eval_input_fn(tf, predict_x, None, 100)))
    template = '\nPrediction is "{}" ({:.1f}%), expected "{}"'
    printed = [
        template.format(
            SPECIES[row["class_ids"][0]], 100 * row["probabilities"][row["class_ids"][0]], e
        )
        for row, e in zip(rows, ["Setosa", "Versicolor", "Virginica"], strict=True)
    ]
    misuse = _premade_misuse(tf, classifier, train_path, test_x, test_y)
    feature_columns = [tf.feature_column.numeric_column(name) for name in CSV_COLUMN_NAMES[:-1]]
    est = tf.estimator.LinearClassifier(
        feature_columns,
        n_classes=3,
        model_dir=os.path.join(workdir, "linear"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    est.train(steps=STEPS, input_fn=lambda: csv_input_fn(tf, train_path, 30))
    linear = est.evaluate(input_fn=lambda: iris_eval_input_fn(tf, test_x, test_y, 12))
    linear_weights = _variables(est, skip="Ftrl")[1]
    return {
        "exact": {
            "linear_keys": list(linear),
            "misuse": misuse,
            "accuracy_line": _NUMBER.sub(
                "N", "\nTest set accuracy: {accuracy:0.3f}\n".format(**eval_result)
            ),
            "eval_keys": list(eval_result),
            "printed": _without_numbers(printed),
            "predictions": structure(rows),
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **_floats({f"linear/{k}": v for k, v in linear.items()}),
            **{f"linear_weights/{k}": v for k, v in linear_weights.items()},
        },
    }


@program
def checkpoints_guide(tf, workdir):
    """checkpoints.md: what the first train() call leaves in model_dir, a second call,
    the temporary model_dir of an Estimator made without one, and restoring the
    checkpoint into [10, 20] hidden units (the guide's bad restoration)."""
    train_x, train_y = _iris_frames(20, 2)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((dict(train_x), train_y))
        return dataset.shuffle(1000).repeat().batch(20)

    model_dir = os.path.join(workdir, "models", "iris")
    my_checkpointing_config = tf.estimator.RunConfig(
        save_checkpoints_secs=20 * 60,
        keep_checkpoint_max=10,
    )
    classifier = _iris_classifier(tf, [10, 10], model_dir=model_dir, config=my_checkpointing_config)
    classifier.train(input_fn=train_input_fn, steps=3)
    first = listing(model_dir)
    classifier.train(input_fn=train_input_fn, steps=2)
    second = listing(model_dir)
    temporary = _iris_classifier(tf, [10, 10]).model_dir
    changed = _iris_classifier(tf, [10, 20], model_dir=model_dir)
    bad_restoration = _raised(lambda: changed.train(input_fn=train_input_fn, steps=2))
    config = classifier.config
    return {
        "exact": {
            "first_call": first,
            "second_call": second,
            "checkpoints": [
                os.path.basename(p)
                for p in tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths
            ],
            "config": [
                config.save_checkpoints_secs,
                config.save_checkpoints_steps,
                config.keep_checkpoint_max,
                config.save_summary_steps,
            ],
            "temporary_model_dir": [
                os.path.dirname(temporary) == tempfile.gettempdir(),
                os.path.isdir(temporary),
            ],
            "bad_restoration": bad_restoration and [bad_restoration[0], bad_restoration[1][:120]],
            "after": listing(model_dir),
        },
        "close": {},
    }


def _iris_linear_classifier(tf, model_dir, config):
    return tf.estimator.LinearClassifier(
        feature_columns=[tf.feature_column.numeric_column(k) for k in CSV_COLUMN_NAMES[:4]],
        n_classes=3,
        model_dir=model_dir,
        config=config,
    )


@program
def checkpoint_retention(tf, workdir):
    """checkpoints.md's retention settings at their edges, on a premade model trained by
    two train() calls that save every 2 steps: keep_checkpoint_max=None and 0 (every
    checkpoint stays, the `checkpoint` file names the latest alone), and 1 with
    keep_checkpoint_every_n_hours a moment (every older one stays, one named): model_dir's
    files and the `checkpoint` file as written."""
    train_x, train_y = _iris_frames(20, 2)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((dict(train_x), train_y))
        return dataset.repeat().batch(20)

    settings = {
        "keep_none": {"keep_checkpoint_max": None},
        "keep_zero": {"keep_checkpoint_max": 0},
        "every_moment": {"keep_checkpoint_max": 1, "keep_checkpoint_every_n_hours": 1e-9},
    }
    exact = {}
    for name, retention in settings.items():
        model_dir = os.path.join(workdir, name)
        config = tf.estimator.RunConfig(save_checkpoints_steps=2, **retention)
        classifier = _iris_linear_classifier(tf, model_dir, config)
        classifier.train(input_fn=train_input_fn, steps=3)
        classifier.train(input_fn=train_input_fn, steps=4)
        with open(os.path.join(model_dir, "checkpoint")) as state:
            exact[name] = {"files": listing(model_dir), "checkpoint": state.read()}
    return {"exact": exact, "close": {}}


@program
def no_checkpoints(tf, workdir):
    """checkpoints.md's RunConfig with neither interval (`save_checkpoints_steps=None,
    save_checkpoints_secs=None`): no checkpoint is saved, so each call starts from the
    initial values again (zeros here): evaluate and predict after train(), and a second
    train() to max_steps=2 that trains from step 0."""
    train_x, train_y = _iris_frames(20, 2)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((dict(train_x), train_y))
        return dataset.repeat().batch(20)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices((dict(train_x), train_y)).batch(20)

    model_dir = os.path.join(workdir, "model")
    config = tf.estimator.RunConfig(
        save_checkpoints_steps=None, save_checkpoints_secs=None, save_summary_steps=1
    )
    classifier = _iris_linear_classifier(tf, model_dir, config)
    classifier.train(input_fn=train_input_fn, steps=3)
    evaluated = classifier.evaluate(input_fn=eval_input_fn)
    predicted = next(iter(classifier.predict(input_fn=eval_input_fn)))
    classifier.train(input_fn=train_input_fn, max_steps=2)
    return {
        "exact": {
            "files": listing(model_dir),
            "events": event_tags(model_dir),
            "global_step": int(evaluated["global_step"]),
            "latest": classifier.latest_checkpoint(),
        },
        "close": {
            "evaluate": _floats(evaluated),
            "probabilities": [float(p) for p in predicted["probabilities"]],
        },
    }


@program
def warm_start_slips(tf, workdir):
    """A premade LinearRegressor warm-started from another model's checkpoint through
    `WarmStartSettings` with renamed variables, and the slips made with them: a regex
    that also takes the optimizer's slots, which the checkpoint lacks, a renamed variable
    of another shape, and a rename of a variable not chosen (misspelled). What training raises: its type and the words 2.15 said
    (which a user's test matches; the kit says more after them)."""
    previous = os.path.join(workdir, "previous")
    write_checkpoint(tf, previous, {"old/w": [3, 1], "old/b": [1]})
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x.sum(axis=1))).batch(8)

    weights, bias = "linear/linear_model/x/weights", "linear/linear_model/bias_weights"
    slips = {
        "slots_taken_too": ([".*bias_weights"], {bias: "old/b"}),
        "other_shape": ([weights], {weights: "old/w"}),
        "rename_of_no_chosen_variable": ([bias], {bias: "old/b", "linear/weights": "old/w"}),
    }
    said = {}
    for name, (chosen, renamed) in slips.items():
        settings = tf.estimator.WarmStartSettings(
            previous, vars_to_warm_start=chosen, var_name_to_prev_var_name=renamed
        )
        model = tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x", shape=[2])],
            model_dir=os.path.join(workdir, name),
            warm_start_from=settings,
        )
        kind, message = _raised(lambda model=model: model.train(input_fn, steps=1))
        said[name] = [kind, message.splitlines()[0].replace(workdir, "<workdir>")]
    return {"exact": said, "close": {}}


@program
def checkpoint_path_slips(tf, workdir):
    """evaluate, predict and export_saved_model given a `checkpoint_path` of a step never
    saved (checkpoints.md's model.ckpt-<step> names, one mistyped), on a premade model:
    what each raises, its type and message."""
    train_x, train_y = _iris_frames(20, 2)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((dict(train_x), train_y)).batch(20)

    model_dir = os.path.join(workdir, "model")
    classifier = _iris_linear_classifier(tf, model_dir, None)
    classifier.train(input_fn=input_fn, steps=2)
    typo = os.path.join(model_dir, "model.ckpt-20")
    spec = {k: tf.io.FixedLenFeature([1], tf.float32) for k in CSV_COLUMN_NAMES[:4]}
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    calls = {
        "evaluate": lambda: classifier.evaluate(input_fn, checkpoint_path=typo),
        "predict": lambda: classifier.predict(input_fn, checkpoint_path=typo),
        "export": lambda: classifier.export_saved_model(
            os.path.join(workdir, "export"), receiver, checkpoint_path=typo
        ),
    }
    said = {}
    for name, call in calls.items():
        kind, message = _raised(call)
        said[name] = [kind, message.replace(workdir, "<workdir>")]
    return {"exact": said, "close": {}}


# ------------------------------------------------------------ linear.ipynb (r1)
def _census_columns(tf):
    """The notebook's base and crossed columns."""
    from tests.public_sample_programs import _EDUCATION, _MARITAL, _RELATIONSHIP, _WORKCLASS

    fc = tf.feature_column
    age_buckets = fc.bucketized_column(
        fc.numeric_column("age"), boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65]
    )
    base_columns = [
        fc.categorical_column_with_vocabulary_list("education", _EDUCATION),
        fc.categorical_column_with_vocabulary_list("marital_status", _MARITAL),
        fc.categorical_column_with_vocabulary_list("relationship", _RELATIONSHIP),
        fc.categorical_column_with_vocabulary_list("workclass", _WORKCLASS),
        fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=1000),
        age_buckets,
    ]
    crossed_columns = [
        fc.crossed_column(["education", "occupation"], hash_bucket_size=1000),
        fc.crossed_column([age_buckets, "education", "occupation"], hash_bucket_size=1000),
    ]
    return base_columns + crossed_columns


def easy_input_function(tf, df, label_key, num_epochs, shuffle, batch_size):
    """The notebook's input function over a frame (its label stays among the features)."""
    label = df[label_key]
    ds = tf.data.Dataset.from_tensor_slices((dict(df), label))
    if shuffle:
        ds = ds.shuffle(10000)
    return ds.batch(batch_size).repeat(num_epochs)


def _flat_weights(model):
    """The notebook's get_flat_weights: the linear_model weights but Ftrl's, flattened."""
    weight_names = [
        name for name in model.get_variable_names() if "linear_model" in name and "Ftrl" not in name
    ]
    weight_values = [model.get_variable_value(name) for name in weight_names]
    return weight_names, np.concatenate([item.flatten() for item in weight_values], axis=0)


@program
def linear_census(tf, workdir):
    """linear.ipynb with `import tensorflow.compat.v1 as tf`: LinearClassifiers under TF1
    FtrlOptimizers (plain, L1 and L2), trained to the end of 3 epochs, their printed
    metrics, the notebook's predictions and weights."""
    from tests.public_sample_programs import _CSV_COLUMNS, census_input_fn, write_census_csv

    tf1 = tf.compat.v1
    train_file = os.path.join(workdir, "adult.data")
    test_file = os.path.join(workdir, "adult.test")
    write_census_csv(train_file, 40, 0)
    write_census_csv(test_file, 20, 1)
    train_inpf = lambda: census_input_fn(train_file, 3, True, 40)  # noqa: E731
    test_inpf = lambda: census_input_fn(test_file, 1, False, 20)  # noqa: E731
    results, printed, weights = {}, {}, {}
    strengths = {"base": (0.0, 0.0), "l1_l2": (10.0, 10.0)}  # (the notebook's l1, l2 apart)
    for name, (l1, l2) in strengths.items():
        model = tf1.estimator.LinearClassifier(
            model_dir=os.path.join(workdir, name),
            feature_columns=_census_columns(tf),
            optimizer=tf1.train.FtrlOptimizer(
                learning_rate=0.1, l1_regularization_strength=l1, l2_regularization_strength=l2
            ),
        )
        model.train(train_inpf)
        results[name] = model.evaluate(test_inpf)
        printed[name] = [
            "%s: %0.2f" % (key, value)  # noqa: UP031  (the notebook's)
            for key, value in sorted(results[name].items())
        ]
        weights[name] = _flat_weights(model)
    test_df = pd.read_csv(test_file, names=_CSV_COLUMNS)
    predict_df = test_df[:12].copy()
    pred_iter = model.predict(
        lambda: easy_input_function(tf, predict_df, "income_bracket", 1, False, 10)
    )
    classes = np.array(["<=50K", ">50K"])
    rows = list(pred_iter)
    predicted_class = classes[np.array([row["class_ids"] for row in rows])].ravel().tolist()
    return {
        "exact": {
            "eval_keys": {k: list(v) for k, v in results.items()},
            "global_steps": {k: int(v["global_step"]) for k, v in results.items()},
            "printed": {k: _without_numbers(v) for k, v in printed.items()},
            "weight_names": weights["base"][0],
            "predictions": structure(rows),
            "predicted_class": predicted_class,
            "files": listing(os.path.join(workdir, "base")),
        },
        "close": {
            **{
                f"{name}/{k}": float(v)
                for name, result in results.items()
                for k, v in result.items()
            },
            **{f"weights/{k}": v[1].astype(float).tolist() for k, v in weights.items()},
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
        },
    }


# ------------------------------------------------------------ feature_columns.md (r1)
_PRODUCTS = ["kitchenware", "electronics", "sports"]


def _guide_features(n, seed):
    """Inputs for each column the feature-columns guide makes (its dtypes and shapes)."""
    rng = np.random.RandomState(seed)
    return {
        "SepalLength": rng.uniform(4, 8, n),  # float64, as the guide's column says
        "Bowling": rng.uniform(0, 1, (n, 3)).astype(np.float32),
        "MyMatrix": rng.uniform(-1, 1, (n, 2, 3)).astype(np.float32),
        "Year": rng.randint(1950, 2010, n),
        "my_feature_b": rng.randint(0, 4, n),
        "product_class": rng.choice([*_PRODUCTS, "toys"], n),
        "some_feature": rng.choice(["a", "b", "c", "d", "e"], n),
        "latitude": rng.uniform(-1, 1, n).astype(np.float32),
        "longitude": rng.uniform(-1, 1, n).astype(np.float32),
    }


def _guide_columns(tf, workdir, dimension=3):
    """The guide's columns: a float64 number, a vector, a matrix, bucketized years, an
    identity, a vocabulary file and a hashed column (dense for a DNN)."""
    fc = tf.feature_column
    vocabulary = os.path.join(workdir, "product_class.txt")
    with open(vocabulary, "w") as f:
        f.write("\n".join(_PRODUCTS) + "\n")
    return [
        fc.numeric_column(key="SepalLength", dtype=tf.float64),
        fc.numeric_column(key="Bowling", shape=3),
        fc.numeric_column(key="MyMatrix", shape=[2, 3]),
        fc.bucketized_column(
            source_column=fc.numeric_column("Year"), boundaries=[1960, 1980, 2000]
        ),
        fc.indicator_column(fc.categorical_column_with_identity(key="my_feature_b", num_buckets=4)),
        fc.indicator_column(
            fc.categorical_column_with_vocabulary_file(
                key="product_class", vocabulary_file=vocabulary, vocabulary_size=3
            )
        ),
        fc.embedding_column(
            categorical_column=fc.categorical_column_with_hash_bucket(
                key="some_feature", hash_bucket_size=100
            ),
            dimension=dimension,
        ),
    ]


def _lat_lon_columns(tf):
    """The guide's crossed latitude and longitude buckets."""
    fc = tf.feature_column
    latitude_bucket_fc = fc.bucketized_column(
        fc.numeric_column("latitude"), list(np.linspace(-1.0, 1.0, 5))
    )
    longitude_bucket_fc = fc.bucketized_column(
        fc.numeric_column("longitude"), list(np.linspace(-1.0, 1.0, 5))
    )
    crossed_lat_lon_fc = fc.crossed_column(
        [latitude_bucket_fc, longitude_bucket_fc], hash_bucket_size=100
    )
    return [latitude_bucket_fc, longitude_bucket_fc, crossed_lat_lon_fc]


@program
def feature_columns_guide(tf, workdir):
    """feature_columns.md: its columns in a DNNClassifier (warm-started from fixed
    weights), its 81**0.25 embedding dimension (a float), and a LinearRegressor over its
    crossed latitude and longitude."""
    features, labels = _guide_features(24, 3), np.arange(24) % 3

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(24).repeat()

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(24)

    shapes = _dense_shapes("dnn/", ["hiddenlayer_0", "logits"], [24, 10, 3])
    embedding = "dnn/input_from_feature_columns/input_layer/some_feature_embedding"
    shapes[f"{embedding}/embedding_weights"] = [100, 3]
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    dnn = tf.estimator.DNNClassifier(
        hidden_units=[10],
        feature_columns=_guide_columns(tf, workdir),
        n_classes=3,
        model_dir=os.path.join(workdir, "dnn"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
        warm_start_from=start,
    )
    dnn.train(input_fn, steps=STEPS)
    dnn_result = dnn.evaluate(eval_input_fn)
    rows = list(dnn.predict(lambda: tf.data.Dataset.from_tensor_slices(features).batch(5)))
    float_dimension = tf.estimator.DNNClassifier(
        hidden_units=[10],
        feature_columns=_guide_columns(tf, workdir, dimension=81**0.25),
        n_classes=3,
        model_dir=os.path.join(workdir, "float_dimension"),
    )
    labels_2 = (features["latitude"] * 2 - features["longitude"]).astype(np.float32)
    est = tf.estimator.LinearRegressor(
        _lat_lon_columns(tf),
        model_dir=os.path.join(workdir, "lat_lon"),
        loss_reduction=tf.keras.losses.Reduction.SUM,
    )
    est.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels_2)).batch(24), steps=3)
    lat_lon = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((features, labels_2)).batch(24)
    )
    return {
        "exact": {
            "dnn_keys": list(dnn_result),
            "predictions": structure(rows),
            "variables": sorted(dnn.get_variable_names()),
            "float_dimension": _error(
                lambda: float_dimension.train(input_fn, steps=1),
                "Dimension value must be integer",
            ),
            "lat_lon_keys": list(lat_lon),
            "lat_lon_variables": _variables(est, skip="Ftrl")[0],
        },
        "close": {
            **_floats({f"dnn/{k}": v for k, v in dnn_result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in _variables(dnn, skip="Adagrad|global")[1].items()},
            **_floats({f"lat_lon/{k}": v for k, v in lat_lon.items()}),
            **{f"lat_lon_weights/{k}": v for k, v in _variables(est, skip="Ftrl")[1].items()},
        },
    }


# ------------------------------------------------------------ cifar10_estimator
class _LocalDeviceSetter:
    """cifar10_utils.local_device_setter's placement: variables on the ps device with
    the fewest elements so far, every other op on the tower's device."""

    def __init__(self, worker_device, ps_devices):
        self.worker_device, self.ps_devices = worker_device, ps_devices
        self.ps_sizes = [0] * len(ps_devices)

    def __call__(self, op):
        if op.device:
            return op.device
        if op.type not in ("Variable", "VariableV2", "VarHandleOp"):
            return self.worker_device
        index = min(range(len(self.ps_sizes)), key=self.ps_sizes.__getitem__)
        self.ps_sizes[index] += op.outputs[0].get_shape().num_elements() or 0
        return self.ps_devices[index]


def _tower_fn(tf, is_training, weight_decay, feature, label):
    """cifar10_main._tower_fn over a one-block net (conv, batch norm, pooling, dense)."""
    x = tf.compat.v1.layers.conv2d(feature, 4, 3, padding="same", use_bias=False)
    x = tf.compat.v1.layers.batch_normalization(
        x, momentum=0.997, epsilon=1e-5, training=is_training
    )
    logits = tf.compat.v1.layers.dense(tf.reduce_mean(tf.nn.relu(x), [1, 2]), 10)
    tower_pred = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits),
    }
    tower_loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(logits=logits, labels=label)
    tower_loss = tf.reduce_mean(input_tensor=tower_loss)
    model_params = tf.compat.v1.trainable_variables()
    tower_loss += weight_decay * tf.add_n([tf.nn.l2_loss(v) for v in model_params])
    tower_grad = tf.gradients(ys=tower_loss, xs=model_params)
    return tower_loss, zip(tower_grad, model_params, strict=True), tower_pred


def get_model_fn(num_gpus):
    """cifar10_main.get_model_fn with variable_strategy 'CPU': a tower per GPU (on
    '/gpu:i', which soft placement puts on the CPU here), the gradients averaged."""
    import tensorflow as tf

    def _resnet_model_fn(features, labels, mode, params):
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        tower_losses, tower_gradvars, tower_preds = [], [], []
        num_devices, device_type = (1, "cpu") if num_gpus == 0 else (num_gpus, "gpu")
        for i in range(num_devices):
            device_setter = _LocalDeviceSetter(f"/{device_type}:{i}", ["/cpu:0"])
            with (
                tf.compat.v1.variable_scope("resnet", reuse=bool(i != 0)),
                tf.compat.v1.name_scope(f"tower_{i}") as name_scope,
                tf.compat.v1.device(device_setter),  # (tf_upgrade_v2's tf.device takes no function)
            ):
                loss, gradvars, preds = _tower_fn(
                    tf, is_training, params.weight_decay, features[i], labels[i]
                )
                tower_losses.append(loss)
                tower_gradvars.append(list(gradvars))
                tower_preds.append(preds)
                if i == 0:
                    update_ops = tf.compat.v1.get_collection(
                        tf.compat.v1.GraphKeys.UPDATE_OPS, name_scope
                    )
        all_grads = {}
        for grad, var in (pair for pairs in tower_gradvars for pair in pairs):
            if grad is not None:
                all_grads.setdefault(var.ref(), []).append(grad)
        gradvars = []
        with tf.name_scope("gradient_averaging"):
            for ref, grads in all_grads.items():
                with tf.device(ref.deref().device):
                    avg = (
                        grads[0]
                        if len(grads) == 1
                        else tf.multiply(tf.add_n(grads), 1.0 / len(grads))
                    )
                gradvars.append((avg, ref.deref()))
        with tf.device("/cpu:0"):
            learning_rate = tf.compat.v1.train.piecewise_constant(
                tf.compat.v1.train.get_global_step(),
                [2],
                [params.learning_rate, params.learning_rate * 0.1],
            )
            learning_rate = tf.identity(learning_rate, name="learning_rate")
            optimizer = tf.compat.v1.train.MomentumOptimizer(
                learning_rate=learning_rate, momentum=params.momentum
            )
            train_op = [
                optimizer.apply_gradients(
                    gradvars, global_step=tf.compat.v1.train.get_global_step()
                )
            ]
            train_op.extend(update_ops)
            train_op = tf.group(*train_op)
            predictions = {
                "classes": tf.concat([p["classes"] for p in tower_preds], axis=0),
                "probabilities": tf.concat([p["probabilities"] for p in tower_preds], axis=0),
            }
            stacked_labels = tf.concat(labels, axis=0)
            metrics = {
                "accuracy": tf.compat.v1.metrics.accuracy(stacked_labels, predictions["classes"])
            }
            loss = tf.reduce_mean(input_tensor=tower_losses, name="loss")
        return tf.estimator.EstimatorSpec(
            mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            training_chief_hooks=[], eval_metric_ops=metrics,
        )  # fmt: skip

    return _resnet_model_fn


def cifar_input_fn(tf, images, labels, num_shards, batch_size):
    """cifar10_main.input_fn: a one-shot iterator's batch, cut into a list per tower."""
    with tf.device("/cpu:0"):
        dataset = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(batch_size)
        image_batch, label_batch = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        if num_shards <= 1:
            return [image_batch], [label_batch]
        image_batch = tf.unstack(image_batch, num=batch_size, axis=0)
        label_batch = tf.unstack(label_batch, num=batch_size, axis=0)
        feature_shards = [[] for _ in range(num_shards)]
        label_shards = [[] for _ in range(num_shards)]
        for i in range(batch_size):
            feature_shards[i % num_shards].append(image_batch[i])
            label_shards[i % num_shards].append(label_batch[i])
        feature_shards = [tf.parallel_stack(x) for x in feature_shards]
        label_shards = [tf.parallel_stack(x) for x in label_shards]
        return feature_shards, label_shards


@program
def cifar10_estimator(tf, workdir):
    """tutorials/image/cifar10_estimator's main without tf.contrib (the Experiment's train
    and evaluate calls, its hparams an argparse Namespace), on CPU and with --num-gpus=2
    on a machine without GPUs (allow_soft_placement), warm-started from fixed weights."""
    import argparse

    rng = np.random.RandomState(5)
    images = rng.uniform(0, 1, (8, 6, 6, 3)).astype(np.float32)
    labels = rng.randint(0, 10, 8).astype(np.int32)
    shapes = {
        "resnet/conv2d/kernel": [3, 3, 3, 4],
        "resnet/batch_normalization/gamma": [4],
        "resnet/batch_normalization/beta": [4],
        "resnet/dense/kernel": [4, 10],
        "resnet/dense/bias": [10],
    }
    start = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    hparams = argparse.Namespace(weight_decay=2e-4, momentum=0.9, learning_rate=0.1)
    sess_config = tf.compat.v1.ConfigProto(
        allow_soft_placement=True,
        log_device_placement=False,
        intra_op_parallelism_threads=0,
        gpu_options=tf.compat.v1.GPUOptions(force_gpu_compatible=True),
    )
    results = {"exact": {}, "close": {}}
    for num_gpus in (0, 2):

        def input_fn(num_gpus=num_gpus):
            return cifar_input_fn(tf, images, labels, num_gpus, 4)

        job_dir = os.path.join(workdir, f"gpus{num_gpus}")
        classifier = tf.estimator.Estimator(
            model_fn=get_model_fn(num_gpus),
            config=tf.estimator.RunConfig(session_config=sess_config, model_dir=job_dir),
            params=hparams,
            warm_start_from=start,
        )
        hook = tf.estimator.LoggingTensorHook(
            tensors={"learning_rate": "learning_rate", "loss": "loss"}, every_n_iter=1
        )
        with _info_lines() as lines:
            classifier.train(input_fn, steps=3, hooks=[hook])
        metrics = classifier.evaluate(input_fn, steps=2)
        logged = [line for line in lines if line.startswith("learning_rate = ")]
        results["exact"][f"gpus{num_gpus}"] = {
            "params": type(classifier.params).__name__,
            "eval_keys": list(metrics),
            "variables": sorted(classifier.get_variable_names()),
            "logged": _without_numbers(logged),
        }
        values = _variables(classifier, skip="Momentum|global_step")[1]
        results["close"].update(
            {
                **_floats({f"gpus{num_gpus}/eval/{k}": v for k, v in metrics.items()}),
                **{f"gpus{num_gpus}/{k}": v for k, v in values.items()},
            }
        )
    return results
