"""Programs shaped like the public tf.estimator tutorials, run on 2.15 and on this kit.

Each program is written as a tutorial reader writes it, against `tf.estimator` and
`tf.compat.v1.estimator` (the kit's once `components.estimator.install` ran), and returns
what its user sees, in three parts compared differently by
`tests/test_tutorials_vs_tf215.py`:

- `exact`: keys, dtypes, shapes, model_dir and export listings, signatures, event tags,
  global steps, errors (type and the gist of the message): equal;
- `close`: values of deterministic models (linear, zero-initialised, unshuffled): 1e-4;
- `loose`: values that depend on random draws (a DNN's initial weights, a shuffle):
  within 35%, which holds any trained model the tutorial means and fails an untrained one.

`tests/tf215/record_tutorial_programs.py` records them under tf.estimator 2.15 into
`tests/data/tf215/tutorial_programs.json`.
"""

import glob
import os
import re

import numpy as np
import pandas as pd
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines

try:  # TF 2.21: Keras 2 is tf_keras; TF 2.15: tf.keras is Keras 2
    import tf_keras as keras
except ImportError:  # pragma: no cover - the 2.15 venv
    keras = tf.keras

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "tutorial_programs.json")
PROGRAMS, program = registry()  # name -> run(workdir), and its decorator


# ------------------------------------------------------------------ what a user sees
_EVENTS = re.compile(r"events\.out\.tfevents\.[^/]*$")
_TIMESTAMP = re.compile(r"(?<=/)\d{10}(?=/|$)")


def listing(directory):
    """Every file under `directory`, relative, with event-file names and export
    timestamps replaced by placeholders (one entry however many there are)."""
    names = set()
    for path in glob.glob(os.path.join(directory, "**"), recursive=True):
        if os.path.isfile(path):
            name = "/" + os.path.relpath(path, directory)
            name = _TIMESTAMP.sub("<ts>", _EVENTS.sub("events.out.tfevents.*", name))
            names.add(name[1:])
    return sorted(names)


def event_tags(directory):
    """{tag: the steps written}, over the event files directly in `directory`: scalars
    (`simple_value`) by their tag, histograms as `<tag> (histogram)`."""
    tags = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    tags.setdefault(value.tag, set()).add(int(event.step))
                elif value.HasField("histo"):
                    tags.setdefault(f"{value.tag} (histogram)", set()).add(int(event.step))
    return {tag: sorted(steps) for tag, steps in sorted(tags.items())}


def structure(rows):
    """{prediction key: [dtype, shape]} of the first prediction."""
    return {k: [np.asarray(v).dtype.name, list(np.shape(v))] for k, v in sorted(rows[0].items())}


def seen(result, rows):
    """What a tutorial prints of evaluate() and predict(): keys, step, shapes, count."""
    return {
        "evaluate_keys": sorted(result),
        "global_step": int(result["global_step"]),
        "predictions": structure(rows),
        "count": len(rows),
    }


def floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def signatures(export_dir):
    """{signature: [method, {input: dtype}, outputs]} of the serving graph of an export."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    (graph,) = [g for g in saved.meta_graphs if list(g.meta_info_def.tags) == ["serve"]]
    return {
        name: [
            sig.method_name,
            {k: tf.as_dtype(v.dtype).name for k, v in sorted(sig.inputs.items())},
            sorted(sig.outputs),
        ]
        for name, sig in sorted(graph.signature_def.items())
        if not name.startswith("__")
    }


def error_of(call):
    """The error `call()` raises, as [type name, message]."""
    try:
        call()
    except Exception as error:  # what a user sees is the point
        return [type(error).__name__, str(error)]
    return None


# ------------------------------------------------------------------ premade estimators
SPECIES = ["Setosa", "Versicolor", "Virginica"]
IRIS_KEYS = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def iris(n, seed):
    """An iris-like frame: three species, four measures (numbers near the real ones)."""
    rng = np.random.RandomState(seed)
    species = rng.randint(0, 3, n)
    centre = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
    values = centre[species] + rng.normal(0, 0.3, (n, 4))
    frame = pd.DataFrame(values.astype(np.float32), columns=IRIS_KEYS)
    return frame, pd.Series(species, name="Species")


def iris_input_fn(features, labels, training=True, batch_size=16):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    if training:
        dataset = dataset.shuffle(1000, seed=7).repeat()
    return dataset.batch(batch_size)


@program
def premade_iris(workdir):
    """The premade-estimators tutorial: DNNClassifier [30, 10] on iris."""
    train, train_y = iris(120, 0)
    test, test_y = iris(30, 1)
    columns = [tf.feature_column.numeric_column(key=key) for key in train]
    classifier = tf.estimator.DNNClassifier(
        feature_columns=columns,
        hidden_units=[30, 10],
        n_classes=3,
        model_dir=os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=42),
    )
    classifier.train(input_fn=lambda: iris_input_fn(train, train_y, training=True), steps=300)
    result = classifier.evaluate(input_fn=lambda: iris_input_fn(test, test_y, training=False))
    predict_x = {key: list(test[key][:3]) for key in IRIS_KEYS}
    rows = list(
        classifier.predict(
            input_fn=lambda: tf.data.Dataset.from_tensor_slices(dict(predict_x)).batch(16)
        )
    )
    return {
        "exact": {
            **seen(result, rows),
            "model_dir": listing(classifier.model_dir),
            "train_tags": sorted(event_tags(classifier.model_dir)),
        },
        # 300 steps at Adagrad's 0.001 barely train (the tutorial's 5000 would): losses only.
        "loose": floats({k: result[k] for k in ("average_loss", "loss")}),
    }


# ------------------------------------------------------------------ linear model (titanic)
def titanic(n, seed):
    """A titanic-like frame: who survived by sex, class, age and family aboard."""
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["male", "female"], n),
            "age": rng.uniform(1, 70, n).round(),
            "n_siblings_spouses": rng.randint(0, 4, n),
            "fare": rng.exponential(30, n).astype(np.float32),
            "class": rng.choice(["First", "Second", "Third"], n),
            "alone": rng.choice(["y", "n"], n),
        }
    )
    score = (frame.sex == "female") * 1.5 + (frame["class"] == "First") - frame.age / 40
    survived = (score + rng.normal(0, 0.5, n) > 0.3).astype(np.int64)
    return frame, survived


def titanic_columns():
    fc = tf.feature_column
    columns = [
        fc.categorical_column_with_vocabulary_list(key, vocabulary)
        for key, vocabulary in (
            ("sex", ["male", "female"]),
            ("class", ["First", "Second", "Third"]),
            ("alone", ["y", "n"]),
        )
    ]
    columns += [fc.numeric_column("n_siblings_spouses", dtype=tf.int64)]
    columns += [fc.numeric_column("fare", dtype=tf.float32)]
    age = fc.bucketized_column(fc.numeric_column("age"), [5, 18, 25, 35, 50, 65])
    return [*columns, age, fc.crossed_column([age, "sex"], hash_bucket_size=100)]


def make_input_fn(frame, labels, num_epochs=10, shuffle=True, batch_size=32):
    def input_function():
        dataset = tf.data.Dataset.from_tensor_slices((dict(frame), labels))
        if shuffle:
            dataset = dataset.shuffle(1000, seed=3)
        return dataset.batch(batch_size).repeat(num_epochs)

    return input_function


@program
def linear_titanic(workdir):
    """The linear-model tutorial: train to the end of the input, evaluate's full dict."""
    train, train_y = titanic(100, 0)
    test, test_y = titanic(40, 1)
    model = tf.estimator.LinearClassifier(
        feature_columns=titanic_columns(), model_dir=os.path.join(workdir, "model")
    )
    model.train(make_input_fn(train, train_y, shuffle=False))
    result = model.evaluate(make_input_fn(test, test_y, num_epochs=1, shuffle=False))
    rows = list(model.predict(make_input_fn(test, test_y, num_epochs=1, shuffle=False)))
    return {
        "exact": {
            **seen(result, rows),
            "variables": model.get_variable_names(),
        },
        "close": {
            **floats({k: v for k, v in result.items() if k != "global_step"}),
            "probability_of_survival": [float(row["probabilities"][1]) for row in rows[:5]],
        },
    }


@program
def linear_titanic_shuffled(workdir):
    """As the tutorial trains: shuffled (seeded), with the estimator's tf_random_seed."""
    train, train_y = titanic(100, 0)
    model = tf.estimator.LinearClassifier(
        feature_columns=titanic_columns(),
        model_dir=os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=1),
    )
    model.train(make_input_fn(train, train_y, num_epochs=3))
    result = model.evaluate(make_input_fn(train, train_y, num_epochs=1, shuffle=False))
    return {
        "exact": {"global_step": int(result["global_step"])},
        "loose": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


@program
def crossed_raw_float_key(workdir):
    """A crossed column over a float feature given by its key (a slip the tutorial's
    readers make): what training says."""
    train, train_y = titanic(20, 0)
    cross = tf.feature_column.crossed_column(["age", "sex"], hash_bucket_size=10)
    model = tf.estimator.LinearClassifier([cross], model_dir=os.path.join(workdir, "model"))
    return {"exact": {"error": error_of(lambda: model.train(make_input_fn(train, train_y)))}}


# ------------------------------------------------------------------ wide and deep (census)
def census_columns():
    fc = tf.feature_column
    sex = fc.categorical_column_with_vocabulary_list("sex", ["male", "female"])
    klass = fc.categorical_column_with_vocabulary_list("class", ["First", "Second", "Third"])
    occupation = fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=20)
    age = fc.bucketized_column(fc.numeric_column("age"), [18, 25, 35, 50, 65])
    wide = [sex, klass, occupation, fc.crossed_column([age, "class"], hash_bucket_size=50)]
    deep = [
        fc.numeric_column("fare", normalizer_fn=lambda fare: fare / 30),
        fc.indicator_column(sex),
        fc.indicator_column(klass),
        fc.embedding_column(occupation, dimension=3),
    ]
    return wide, deep


def census(n, seed):
    frame, labels = titanic(n, seed)
    frame["occupation"] = np.random.RandomState(seed).choice(["a", "b", "c", "d", "e"], n)
    return frame, labels


@program
def wide_and_deep_census(workdir):
    """train_and_evaluate with Latest, Best and Final exporters: the layout they write."""
    wide, deep = census_columns()
    train, train_y = census(64, 0)
    test, test_y = census(32, 1)
    model = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=[8, 4],
        config=tf.estimator.RunConfig(tf_random_seed=5, save_checkpoints_steps=10),
    )
    spec = tf.feature_column.make_parse_example_spec(wide + deep)
    serving = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    exporters = [
        tf.estimator.LatestExporter("latest", serving, exports_to_keep=2),
        tf.estimator.BestExporter(name="best", serving_input_receiver_fn=serving),
        tf.estimator.FinalExporter("final", serving),
    ]
    train_spec = tf.estimator.TrainSpec(make_input_fn(train, train_y, None), max_steps=30)
    eval_spec = tf.estimator.EvalSpec(
        make_input_fn(test, test_y, 1, False),
        steps=None,
        exporters=exporters,
        start_delay_secs=0,
        throttle_secs=0,
    )
    result, exports = tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
    export_dir = os.path.join(model.model_dir, "export")
    final = glob.glob(os.path.join(export_dir, "final", "*"))
    return {
        "exact": {
            "result_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "exports": [len(e) if isinstance(e, list) else type(e).__name__ for e in exports],
            "export_counts": {
                name: len(glob.glob(os.path.join(export_dir, name, "*")))
                for name in ("latest", "best", "final")
            },
            "model_dir": listing(model.model_dir),
            "eval_tags": event_tags(model.eval_dir()),
            "signatures": signatures(final[0]),
            "train_tags": sorted(event_tags(model.model_dir)),
        },
        "loose": floats({k: result[k] for k in ("loss", "average_loss")}),
    }


# ------------------------------------------------------------------ numpy and pandas inputs
def _numbers(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 3).astype(np.float32)
    return x, (x @ np.array([1.0, -2.0, 0.5]) + 0.3).astype(np.float32)


@program
def numpy_input_regressor(workdir):
    """compat.v1 numpy_input_fn: an epoch-bound training stops at the end of input."""
    inputs = tf.compat.v1.estimator.inputs
    x, y = _numbers(30, 0)
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    model = tf.estimator.LinearRegressor(columns, model_dir=os.path.join(workdir, "model"))
    model.train(inputs.numpy_input_fn({"x": x}, y, batch_size=8, num_epochs=2, shuffle=False))
    after_epochs = model.get_variable_value("global_step")
    model.train(
        inputs.numpy_input_fn({"x": x}, y, batch_size=8, num_epochs=None, shuffle=True), steps=5
    )
    result = model.evaluate(inputs.numpy_input_fn({"x": x}, y, num_epochs=1, shuffle=False))
    rows = list(model.predict(inputs.numpy_input_fn({"x": x[:4]}, shuffle=False)))
    return {
        "exact": {
            "after_epochs": int(after_epochs),
            **seen(result, rows),
            "no_shuffle": error_of(lambda: inputs.numpy_input_fn({"x": x}, y)),
        },
        "close": {"label/mean": float(result["label/mean"])},
        # After 5 shuffled steps: the mean prediction, near 0, hangs on the order.
        "loose": floats({k: result[k] for k in ("average_loss", "loss")}),
    }


@program
def pandas_input_classifier(workdir):
    """compat.v1 pandas_input_fn over a frame: train an epoch, evaluate, predict."""
    inputs = tf.compat.v1.estimator.inputs
    frame, labels = titanic(50, 2)
    columns = titanic_columns()
    model = tf.estimator.LinearClassifier(columns, model_dir=os.path.join(workdir, "model"))
    model.train(inputs.pandas_input_fn(frame, labels, batch_size=16, num_epochs=1, shuffle=False))
    result = model.evaluate(
        inputs.pandas_input_fn(frame, labels, batch_size=16, num_epochs=1, shuffle=False)
    )
    rows = list(model.predict(inputs.pandas_input_fn(frame[:3], shuffle=False)))
    return {
        "exact": {
            **seen(result, rows),
        },
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


# ------------------------------------------------------------------ Keras
def keras_program(workdir, fmt):
    """tf.keras.estimator.model_to_estimator of a compiled Sequential model."""
    keras.backend.clear_session()
    model = keras.Sequential(
        [
            keras.layers.Dense(8, activation="relu", input_shape=(4,), name="hidden"),
            keras.layers.Dense(3, activation="softmax", name="species"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    weights = model.get_weights()  # (2.15's model could not get_weights after the call)
    est = keras.estimator.model_to_estimator(
        keras_model=model,
        model_dir=os.path.join(workdir, "model"),
        checkpoint_format=fmt,
        # (2.15's 'checkpoint' format kept 5 checkpoints whatever keep_checkpoint_max said)
        config=tf.estimator.RunConfig(keep_checkpoint_max=1, save_checkpoints_steps=2),
    )
    # The warm-start checkpoint 2.15 wrote into model_dir/keras, before any training.
    keras_dir = os.path.join(est.model_dir, "keras")
    keras_files = sorted(os.listdir(keras_dir))
    saved = tf.train.latest_checkpoint(keras_dir)
    keras_variables = tf.train.list_variables(saved)
    reader = tf.train.load_checkpoint(saved)
    kernel = [n for n, _ in keras_variables if re.match(r"(hidden|layer_with_weights-0)/kernel", n)]
    with open(os.path.join(keras_dir, "checkpoint")) as f:
        keras_state = f.read()  # (the path as written: 2.15's Saver's absolute)
    frame, labels = iris(60, 3)

    def input_fn():
        values = frame.values.astype(np.float32)
        dataset = tf.data.Dataset.from_tensor_slices(({"hidden_input": values}, labels.values))
        return dataset.batch(16).repeat(2)

    est.train(input_fn, steps=6)
    result = est.evaluate(input_fn)
    rows = list(
        est.predict(
            lambda: tf.data.Dataset.from_tensor_slices(
                {"hidden_input": frame.values[:3].astype(np.float32)}
            ).batch(3)
        )
    )
    with open(os.path.join(est.model_dir, "checkpoint")) as f:
        state = f.read()
    return {
        "exact": {
            "evaluate_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "predictions": structure(rows),
            # 2.15's default format is object-based (`layer_with_weights-0/...`).
            "variables": est.get_variable_names(),
            "graph_names": _object_graph_names(est.latest_checkpoint()),
            "checkpoint_state": state.replace(est.model_dir, "<model_dir>"),
            "keras_files": keras_files,
            "keras_variables": [[n, list(shape)] for n, shape in keras_variables],
            "keras_checkpoint_state": keras_state.replace(est.model_dir, "<model_dir>"),
            "keras_kernel_saved": bool(np.array_equal(reader.get_tensor(kernel[0]), weights[0])),
        },
    }


def _object_graph_names(checkpoint):
    """{name the variable had: key} of an object-based checkpoint (what TF1 read such a
    checkpoint by), {} of a name-based one."""
    reader = tf.train.load_checkpoint(checkpoint)
    if not reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"):
        return {}
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return {a.full_name: a.checkpoint_key for node in graph.nodes for a in node.attributes}


@program
def keras_model_to_estimator(workdir):
    return keras_program(workdir, "checkpoint")


@program
def keras_model_to_estimator_saver(workdir):
    return keras_program(workdir, "saver")


def served(export_dir, signature, tags=None, **inputs):
    """{output: [dtype, shape]} and the outputs' values of one signature of the export,
    loaded as TF Serving loads it."""
    loaded = tf.saved_model.load(export_dir, tags=tags)
    out = loaded.signatures[signature](**{k: tf.constant(v) for k, v in inputs.items()})
    shapes = {k: [v.dtype.name, list(v.shape)] for k, v in sorted(out.items())}
    values = {k: np.asarray(v).ravel().tolist() for k, v in sorted(out.items())}
    return shapes, values


@program
def export_before_training(workdir):
    """Exported before any train(): a converted Keras model (its weights, as 2.15 took
    them from model_dir/keras) and a canned model warm-started from another's model_dir
    (2.15 took the warm start's checkpoint); then what a model with neither says."""
    keras.backend.clear_session()
    inputs = keras.Input((2,), name="x")
    dense = keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="ones", name="d")
    model = keras.Model(inputs, dense(inputs))
    model.compile(optimizer="adam", loss="mse")
    column = tf.feature_column.numeric_column("x", shape=[2])

    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    def train_input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[1.0, 2.0]]}, [[3.0]])).repeat()

    source = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "source"))
    source.train(train_input_fn, steps=3)
    made = {
        "keras": keras.estimator.model_to_estimator(
            keras_model=model, model_dir=os.path.join(workdir, "keras")
        ),
        "warm_started": tf.estimator.LinearRegressor(
            [column], model_dir=os.path.join(workdir, "warm"), warm_start_from=source.model_dir
        ),
        "untrained": tf.estimator.LinearRegressor(
            [column], model_dir=os.path.join(workdir, "untrained")
        ),
    }
    # (A regression head's default signature takes serialized examples: its `predict`.)
    signature = {"keras": "serving_default", "warm_started": "predict", "untrained": "predict"}
    found, values = {}, {}
    for name, est in made.items():
        try:
            path = est.export_saved_model(os.path.join(workdir, f"export_{name}"), receiver)
        except ValueError as error:
            found[name] = [type(error).__name__, str(error).replace(workdir, "<workdir>")]
            continue
        found[name], values[name] = served(path.decode(), signature[name], x=[[1.0, 2.0]])
    return {"exact": found, "close": values}


def clipped_relu(x):
    return keras.backend.relu(x, max_value=6)


@program
def keras_custom_objects(workdir):
    """A model with a custom activation: model_to_estimator rebuilds the model, so it
    needs `custom_objects` (without them 2.15 failed at once, naming the function)."""
    keras.backend.clear_session()
    inputs = keras.Input((4,), name="measures")
    hidden = keras.layers.Dense(5, activation=clipped_relu, name="hidden")(inputs)
    outputs = keras.layers.Dense(3, activation="softmax", name="species")(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    error = error_of(
        lambda: keras.estimator.model_to_estimator(
            keras_model=model, model_dir=os.path.join(workdir, "without")
        )
    )
    est = keras.estimator.model_to_estimator(
        keras_model=model,
        model_dir=os.path.join(workdir, "model"),
        custom_objects={"clipped_relu": clipped_relu},
    )
    frame, labels = iris(24, 5)

    def input_fn():
        values = frame.values.astype(np.float32)
        return tf.data.Dataset.from_tensor_slices(({"measures": values}, labels.values)).batch(8)

    est.train(input_fn, steps=3)
    result = est.evaluate(input_fn)
    rows = list(est.predict(input_fn))
    return {
        "exact": {
            "error": [error[0], "clipped_relu" in error[1]],
            "evaluate_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "predictions": structure(rows[:2]),
            "count": len(rows),
        },
    }


@program
def keras_model_to_estimator_errors(workdir):
    """What model_to_estimator says to a misuse: no model, two, an uncompiled one, and
    an input_fn whose features or labels dict misses a model input or output."""
    keras.backend.clear_session()
    inputs = keras.Input((4,), name="measures")
    outputs = keras.layers.Dense(3, activation="softmax", name="species")(inputs)
    model = keras.Model(inputs, outputs)
    to_estimator = keras.estimator.model_to_estimator
    errors = {
        "nothing": error_of(lambda: to_estimator(model_dir=workdir)),
        "both": error_of(lambda: to_estimator(keras_model=model, keras_model_path=workdir)),
        "uncompiled": error_of(lambda: to_estimator(keras_model=model, model_dir=workdir)),
    }
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    est = to_estimator(keras_model=model, model_dir=os.path.join(workdir, "model"))
    frame, labels = iris(8, 2)
    values = frame.values.astype(np.float32)
    wrong_input = lambda: ({"sepals": values}, labels.values)  # noqa: E731
    wrong_output = lambda: ({"measures": values}, {"kind": labels.values})  # noqa: E731
    for name, input_fn in [("features", wrong_input), ("labels", wrong_output)]:
        try:
            est.train(input_fn, steps=1)
        except KeyError as error:  # (2.15's was a KeyError that prints its message)
            errors[name] = [type(error).__name__, str(error)]
    return {"exact": errors}


@program
def keras_metric_names_map(workdir):
    """model_to_estimator's metric_names_map renames the evaluation's metrics; a map
    that misses a metric, or names one the model lacks, is refused at evaluate."""
    frame, labels = iris(12, 4)

    def input_fn():
        values = frame.values.astype(np.float32)
        return tf.data.Dataset.from_tensor_slices(({"measures": values}, labels.values)).batch(6)

    seen = {}
    maps = {
        "all": {"sparse_categorical_accuracy": "acc", "sparse_categorical_crossentropy": "xent"},
        "partial": {"sparse_categorical_accuracy": "acc"},
        "extra": {
            "sparse_categorical_accuracy": "acc",
            "sparse_categorical_crossentropy": "xent",
            "auc": "a",
        },
    }
    for name, names_map in maps.items():
        keras.backend.clear_session()
        inputs = keras.Input((4,), name="measures")
        outputs = keras.layers.Dense(3, activation="softmax", name="species")(inputs)
        model = keras.Model(inputs, outputs)
        model.compile(
            optimizer="adam",
            loss="sparse_categorical_crossentropy",
            metrics=["sparse_categorical_accuracy", "sparse_categorical_crossentropy"],
        )
        est = keras.estimator.model_to_estimator(
            keras_model=model,
            model_dir=os.path.join(workdir, name),
            metric_names_map=names_map,
        )
        error = error_of(
            lambda est=est, name=name: seen.setdefault(name, sorted(est.evaluate(input_fn)))
        )
        if error is not None:  # (the names' order in the message follows a set in 2.15)
            seen[name] = [error[0], error[1].split(":")[0]]
    return {"exact": seen}


@program
def keras_premade_linear_model(workdir):
    """The premade `tf.keras.experimental.LinearModel` (a subclassed model) through
    model_to_estimator, as TF 2.x's premade-models guide built it: refused in the default
    object-based format (2.15's ValueError); with checkpoint_format='saver' it trains from
    its own initial values (zeros, no warm start), evaluates, and predicts under the
    output name `output_1`; one called before (so built, its weights set) gets 2.15's
    warning and starts afresh too."""
    keras.backend.clear_session()
    x = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0], [-1.0, -1.0]], np.float32)
    y = np.array([[1.0], [0.0], [2.0], [-1.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(4)

    to_estimator = keras.estimator.model_to_estimator
    model = keras.experimental.LinearModel(units=1)
    model.compile("sgd", "mse", metrics=["mae"])
    refused = error_of(lambda: to_estimator(keras_model=model, model_dir=workdir))
    est = to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "linear"), checkpoint_format="saver"
    )
    before = est.evaluate(input_fn, steps=1)
    est.train(input_fn, steps=5)
    after = est.evaluate(input_fn, steps=1)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(4)))
    built = keras.experimental.LinearModel(units=1)
    built(x)
    built.set_weights([np.ones_like(w) for w in built.get_weights()])
    built.compile("sgd", "mse")
    with _info_lines() as messages:  # (2.15 warned in TensorFlow's logger)
        fresh = to_estimator(
            keras_model=built, model_dir=os.path.join(workdir, "built"), checkpoint_format="saver"
        )
    fresh_result = fresh.evaluate(input_fn, steps=1)
    return {
        "exact": {
            "refused": {"type": refused[0], "text": refused[1]},
            "evaluate_keys": [sorted(before), sorted(after)],
            "global_step": int(after["global_step"]),
            "predictions": structure(rows),
            "variables": est.get_variable_names(),
            "keras_folder": os.path.isdir(os.path.join(est.model_dir, "keras")),
            "built_warned": any("manually subclassed from `Model`" in m for m in messages),
        },
        "close": {
            **floats({f"before/{k}": v for k, v in before.items()}),
            **floats({f"after/{k}": v for k, v in after.items()}),
            "predict/output_1": [float(row["output_1"][0]) for row in rows],
            **floats({f"built/{k}": v for k, v in fresh_result.items()}),
        },
    }


# ------------------------------------------------------------------ regressors, RunConfig
def regression_input_fn(n=32, label_dimension=1, epochs=None):
    x, y = _numbers(n, 4)
    labels = np.stack([y, -y], 1) if label_dimension == 2 else y[:, None]
    weights = np.linspace(0.5, 2.0, n).astype(np.float32)

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x, "w": weights}, labels))
        return dataset.batch(8).repeat(epochs)

    return input_fn


@program
def linear_regressor_run_config(workdir):
    """LinearRegressor with a weight column under a RunConfig that saves often: what
    lands in model_dir, and evaluate(steps=..., name=...)."""
    config = tf.estimator.RunConfig(
        save_checkpoints_steps=5,
        keep_checkpoint_max=2,
        save_summary_steps=3,
        log_step_count_steps=4,
    )
    model = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x", shape=[3])],
        weight_column="w",
        model_dir=os.path.join(workdir, "model"),
        config=config,
    )
    model.train(regression_input_fn(), steps=12)
    result = model.evaluate(regression_input_fn(epochs=1), steps=2, name="x")
    state = tf.train.get_checkpoint_state(model.model_dir)
    return {
        "exact": {
            "evaluate_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "model_dir": listing(model.model_dir),
            "kept": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
            "train_tags": event_tags(model.model_dir),
            "eval_tags": event_tags(model.eval_dir("x")),
        },
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


@program
def dnn_regressor_label_dimension_2(workdir):
    """DNNRegressor with two targets: evaluate and predict's shapes."""
    model = tf.estimator.DNNRegressor(
        hidden_units=[8, 4],
        feature_columns=[tf.feature_column.numeric_column("x", shape=[3])],
        label_dimension=2,
        model_dir=os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    model.train(regression_input_fn(label_dimension=2), steps=20)
    result = model.evaluate(regression_input_fn(label_dimension=2, epochs=1))
    rows = list(model.predict(regression_input_fn(label_dimension=2, epochs=1)))
    return {
        "exact": {
            **seen(result, rows),
        },
        "loose": floats({k: result[k] for k in ("average_loss", "loss")}),
    }


@program
def wide_and_deep_regressor_summaries(workdir):
    """DNNLinearCombinedRegressor with two targets: what it summarizes while training,
    each tag of its kind (the linear bias of two logits a histogram), on its steps."""
    column = tf.feature_column.numeric_column("x", shape=[3])
    model = tf.estimator.DNNLinearCombinedRegressor(
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=[4],
        label_dimension=2,
        model_dir=os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(save_summary_steps=3, tf_random_seed=3),
    )
    model.train(regression_input_fn(label_dimension=2), steps=7)
    return {"exact": {"train_tags": event_tags(model.model_dir)}}


# ------------------------------------------------------------------ warm start, keys, metrics
def _binary_input_fn(epochs=None, batch_size=8):
    x, y = _numbers(40, 5)
    labels = (y > 0).astype(np.int64)

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, labels))
        return dataset.batch(batch_size).repeat(epochs)

    return input_fn


def _linear_classifier(model_dir, **kwargs):
    column = tf.feature_column.numeric_column("x", shape=[3])
    return tf.estimator.LinearClassifier([column], model_dir=model_dir, **kwargs)


@program
def warm_start_from_path(workdir):
    """warm_start_from a model_dir path: the new model starts where the old one ended."""
    first = _linear_classifier(os.path.join(workdir, "first"))
    first.train(_binary_input_fn(), steps=10)
    second = _linear_classifier(os.path.join(workdir, "second"), warm_start_from=first.model_dir)
    second.train(_binary_input_fn(), steps=1)
    return {
        "exact": {
            "variables": second.get_variable_names(),
            "global_step": int(second.get_variable_value("global_step")),
        },
        "close": {
            "first_bias": first.get_variable_value("linear/linear_model/bias_weights").tolist(),
            "second_bias": second.get_variable_value("linear/linear_model/bias_weights").tolist(),
        },
    }


@program
def predict_keys_and_batches(workdir):
    """predict(predict_keys=...) as a list and as one string, and whole batches."""
    model = _linear_classifier(os.path.join(workdir, "model"), n_classes=2)
    model.train(_binary_input_fn(), steps=5)
    fn = _binary_input_fn(epochs=1)
    some = list(model.predict(fn, predict_keys=["probabilities", "class_ids"]))
    batches = list(model.predict(fn, yield_single_examples=False))
    return {
        "exact": {
            "some": structure(some),
            "one": structure(list(model.predict(fn, predict_keys="logits"))),
            "batches": structure(batches),
            "batch_count": len(batches),
            "unknown_key": error_of(lambda: list(model.predict(fn, predict_keys=["nope"]))),
        },
        "close": {"probabilities": [float(row["probabilities"][1]) for row in some[:4]]},
    }


@program
def add_metrics_auc(workdir):
    """tf.estimator.add_metrics with a Keras AUC over the logistic predictions."""
    model = _linear_classifier(os.path.join(workdir, "model"))

    def my_auc(labels, predictions):
        metric = keras.metrics.AUC(name="my_auc")
        metric.update_state(y_true=labels, y_pred=predictions["logistic"])
        return {"auc": metric, "my_auc_too": metric}

    model = tf.estimator.add_metrics(model, my_auc)
    model.train(_binary_input_fn(), steps=5)
    result = model.evaluate(_binary_input_fn(epochs=1))
    return {
        "exact": {"evaluate_keys": sorted(result), "global_step": int(result["global_step"])},
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


@program
def early_stopping_hook(workdir):
    """stop_if_no_decrease_hook in train_and_evaluate: a model that cannot improve
    (learning rate 0) stops once the evaluations say so."""
    model = _linear_classifier(
        os.path.join(workdir, "model"),
        optimizer=keras.optimizers.legacy.SGD(0.0),
        config=tf.estimator.RunConfig(save_checkpoints_steps=10),
    )
    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        model,
        "loss",
        max_steps_without_decrease=20,
        min_steps=5,
        run_every_secs=None,
        run_every_steps=5,
    )
    train_spec = tf.estimator.TrainSpec(_binary_input_fn(), max_steps=200, hooks=[hook])
    eval_spec = tf.estimator.EvalSpec(_binary_input_fn(epochs=1), throttle_secs=0)
    tf.estimator.train_and_evaluate(model, train_spec, eval_spec)
    return {
        "exact": {
            "global_step": int(model.get_variable_value("global_step")),
            "eval_steps": event_tags(model.eval_dir()).get("loss"),
        }
    }


@program
def baseline_classifier(workdir):
    """BaselineClassifier: the prior of the classes, its keys."""
    model = tf.estimator.BaselineClassifier(n_classes=3, model_dir=os.path.join(workdir, "m"))
    frame, labels = iris(30, 2)

    def fn():  # tensors, not a Dataset: 2.15's Baseline failed on one (uninitialized iterator)
        return {k: tf.constant(v) for k, v in frame.items()}, tf.constant(labels.values)

    model.train(fn, steps=10)
    result = model.evaluate(fn, steps=1)  # tensors never end: the steps bound it
    predict_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        {k: v.values for k, v in frame[:4].items()}, shuffle=False
    )
    rows = list(model.predict(predict_fn))
    return {
        "exact": {
            **seen(result, rows),
        },
        "close": {
            **floats({k: v for k, v in result.items() if k != "global_step"}),
            "probabilities": [float(p) for p in rows[0]["probabilities"]],
        },
    }


# ------------------------------------------------------------------ misuse
@program
def misuse(workdir):
    """What a tutorial's reader gets wrong, and what each call says."""
    fresh = _linear_classifier(os.path.join(workdir, "fresh"))
    model = _linear_classifier(os.path.join(workdir, "model"))
    fn = _binary_input_fn(epochs=1)

    def labels_out_of_range():
        three = _linear_classifier(os.path.join(workdir, "three"), n_classes=3)
        x, _ = _numbers(8, 0)
        three.train(lambda: ({"x": tf.constant(x)}, tf.constant([[5]] * 8, tf.int64)), steps=1)

    def missing_feature():
        model.train(lambda: ({"y": tf.zeros([4, 3])}, tf.zeros([4, 1], tf.int64)), steps=1)

    errors = {
        "steps_and_max_steps": lambda: model.train(fn, steps=5, max_steps=5),
        "steps_zero": lambda: model.train(fn, steps=0),
        "evaluate_untrained": lambda: fresh.evaluate(fn),
        "n_classes_1": lambda: _linear_classifier(os.path.join(workdir, "a"), n_classes=1),
        "dnn_without_hidden_units": lambda: tf.estimator.DNNClassifier(
            feature_columns=[tf.feature_column.numeric_column("x")]
        ),
        "input_fn_not_callable": lambda: model.train(fn(), steps=1),
        "labels_out_of_range": labels_out_of_range,
        "missing_feature": missing_feature,
        "vocabulary_without_n_classes": lambda: _linear_classifier(
            os.path.join(workdir, "b"), n_classes=3, label_vocabulary=["a", "b"]
        ),
    }
    return {"exact": {name: error_of(call) for name, call in errors.items()}}


@program
def resumed_run_config(workdir):
    """A second train() call on the same model_dir: where its checkpoints and
    summaries fall (tf.estimator's timers start again at each call's first step)."""
    config = tf.estimator.RunConfig(
        save_checkpoints_steps=5, keep_checkpoint_max=10, save_summary_steps=4
    )
    model = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x", shape=[3])],
        model_dir=os.path.join(workdir, "model"),
        config=config,
    )
    model.train(regression_input_fn(), steps=7)
    model.train(regression_input_fn(), steps=9)
    state = tf.train.get_checkpoint_state(model.model_dir)
    return {
        "exact": {
            "kept": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
            "train_tags": event_tags(model.model_dir),
        },
    }
