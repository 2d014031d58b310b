"""Keras models made Estimators, as tutorials, blogs and cloud samples wrote it.

`tf.keras.estimator.model_to_estimator` (and `tf.compat.v1.keras.estimator`'s) of
Sequential, functional and subclassed models, compiled with losses, optimizers and
metrics by name or object, given as objects or as saved files, with a model_dir or
without, on a few dozen made-up rows and a few steps.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (keys, names, signatures, log lines, errors as [type, first line])
and `close` values (losses, metrics, predictions). `tests/test_keras_to_estimator.py`
compares them with 2.15's recording (`tests/tf215/record_family.py
keras_to_estimator_programs`, into `tests/data/tf215/keras_to_estimator.json`).
"""

import contextlib
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines as logged_lines
from tests.tf1_fidelity_programs import _raised

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "keras_to_estimator.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


@contextlib.contextmanager
def _info_lines(tf, workdir, grepped):
    """The first lines of what TensorFlow's logger shows at INFO (as the tutorials set
    it) that match `grepped`, `workdir` replaced."""
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    shown = []
    with logged_lines() as lines:
        yield shown
    for line in lines:
        if re.search(grepped, line):
            shown.append(line.splitlines()[0].replace(workdir, "<workdir>"))


def _error(call):
    """[type, first line] of what `call()` raised (None when it returned)."""
    raised = _raised(call)
    return raised and [raised[0], raised[1].splitlines()[0] if raised[1] else ""]


def _iris(rows, seed):
    r = np.random.RandomState(seed)
    x = r.uniform(0, 1, (rows, 4)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > x[:, 2] + 0.5).astype(np.int64) + (x[:, 3] > 0.7)
    return x, y


def _files(directory):
    """The model_dir's files but checkpoint data shards, `.meta`s and event files (2.15's
    Saver wrote two shards and a MetaGraph; see the guide's known differences)."""
    return sorted(
        f for f in os.listdir(directory) if not re.search(r"\.data-|\.meta$|events\.out", f)
    )


def _constant(tf, value, shape):
    """A Constant initializer of alternating signs: the same weights on both sides."""
    size = int(np.prod(shape))
    values = value * np.where(np.arange(size) % 2, -1.0, 1.0) * (1 + np.arange(size) / size)
    return tf.keras.initializers.Constant(values.reshape(shape).tolist())


def _floats(result):
    return {k: float(v) for k, v in result.items() if k != "global_step"}


@program
def tutorial_iris_dense_input(tf, workdir):
    """TensorFlow's "Create an Estimator from a Keras model" tutorial: a Sequential model
    (Dense, Dropout, Dense logits) compiled with a from_logits loss object and 'adam', its
    input_fn keyed `dense_input`, model_dir given; the tutorial prints evaluate()'s dict."""
    tf.keras.backend.clear_session()
    model = tf.keras.models.Sequential(
        [
            tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
            tf.keras.layers.Dropout(0.2),
            tf.keras.layers.Dense(3),
        ]
    )
    model.compile(
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="adam"
    )
    x, y = _iris(64, 0)

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        dataset = dataset.map(lambda features, labels: ({"dense_input": features}, labels))
        return dataset.batch(32).repeat()

    model_dir = os.path.join(workdir, "tfkeras_example")
    with _info_lines(tf, workdir, "Keras|Warm|model directory|config") as lines:
        keras_estimator = tf.keras.estimator.model_to_estimator(
            keras_model=model, model_dir=model_dir
        )
        keras_estimator.train(input_fn=input_fn, steps=5)
        eval_result = keras_estimator.evaluate(input_fn=input_fn, steps=2)
    lines = [line for line in lines if "deprecated" not in line]
    return {
        "exact": {"lines": lines, "keys": sorted(eval_result), "files": _files(model_dir)},
        "close": {},
    }


@program
def estimator_classes(tf, workdir):
    """What `model_to_estimator` returns, as a notebook shows it (`type(est).__name__`):
    2.15's `EstimatorV2` from tf.keras.estimator, its V1 `Estimator` (with
    `export_savedmodel`) from tf.compat.v1.keras.estimator."""
    seen = {}
    for namespace, module in (("v2", tf.keras.estimator), ("v1", tf.compat.v1.keras.estimator)):
        tf.keras.backend.clear_session()
        model = tf.keras.models.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        model.compile(loss="mse", optimizer="sgd")
        est = module.model_to_estimator(
            keras_model=model, model_dir=os.path.join(workdir, namespace)
        )
        seen[namespace] = [
            type(est).__name__,
            isinstance(est, tf.compat.v1.estimator.Estimator),
            callable(getattr(est, "export_savedmodel", None)),
        ]
    return {"exact": seen, "close": {}}


def _two_inputs(rows, seed):
    r = np.random.RandomState(seed)
    a = r.uniform(-1, 1, (rows, 2)).astype(np.float32)
    b = r.uniform(-1, 1, (rows, 3)).astype(np.float32)
    y = ((a.sum(1) + b[:, 0]) > 0).astype(np.float32).reshape(-1, 1)
    return a, b, y


def _functional(tf):
    a_in = tf.keras.Input(shape=(2,), name="a")
    b_in = tf.keras.Input(shape=(3,), name="b")
    hidden = tf.keras.layers.Dense(
        4, activation="relu", kernel_initializer="glorot_uniform", name="hidden"
    )(tf.keras.layers.concatenate([a_in, b_in]))
    out = tf.keras.layers.Dense(1, activation="sigmoid", name="prob")(hidden)
    return tf.keras.Model(inputs=[a_in, b_in], outputs=out)


def _signatures(export_dir, tf):
    loaded = tf.saved_model.load(export_dir)
    found = {}
    for key, fn in sorted(loaded.signatures.items()):
        inputs = fn.structured_input_signature[1]
        found[key] = {
            "inputs": {k: [v.dtype.name, v.shape.as_list()] for k, v in sorted(inputs.items())},
            "outputs": {
                k: [v.dtype.name, v.shape.as_list()]
                for k, v in sorted(fn.structured_outputs.items())
            },
        }
    return found


@program
def functional_named_inputs_metrics(tf, workdir):
    """A functional model of two named inputs, compiled with an optimizer object, a loss by
    name and metrics by name and object; evaluate()'s keys and values, predict()'s keys,
    the export's signatures."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    model = _functional(tf)
    model.compile(
        optimizer=tf.keras.optimizers.Adam(learning_rate=0.01),
        loss="binary_crossentropy",
        metrics=[
            "accuracy",
            tf.keras.metrics.AUC(),
            tf.keras.metrics.Precision(name="prec"),
            "mse",
        ],
    )
    a, b, y = _two_inputs(48, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"a": a, "b": b}, y)).batch(16)

    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    before = est.evaluate(input_fn)
    est.train(input_fn, steps=3)
    after = est.evaluate(input_fn)
    rows = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"a": a[:3], "b": b[:3]}).batch(3))
    )

    def receiver():
        pa = tf.compat.v1.placeholder(tf.float32, [None, 2], name="a")
        pb = tf.compat.v1.placeholder(tf.float32, [None, 3], name="b")
        return tf.estimator.export.ServingInputReceiver({"a": pa, "b": pb}, {"a": pa, "b": pb})

    export = est.export_saved_model(os.path.join(workdir, "export"), receiver)
    return {
        "exact": {
            "keys": sorted(after),
            "row_keys": sorted(rows[0]),
            "signatures": _signatures(export, tf),
            "step": int(after["global_step"]),
        },
        "close": {
            "before": _floats(before),
            "after": _floats(after),
            "prob": [float(r["prob"][0]) for r in rows],
        },
    }


@program
def metric_names_acc(tf, workdir):
    """Metrics 'acc', 'mae' and a metric function, a loss function object; the keys
    evaluate() reports."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(2)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(
        optimizer=tf.keras.optimizers.SGD(0.1),
        loss=tf.keras.losses.sparse_categorical_crossentropy,
        metrics=[
            "acc",
            tf.keras.metrics.sparse_top_k_categorical_accuracy,
            "sparse_categorical_accuracy",
        ],
    )
    x, y = _iris(40, 3)
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(10)  # noqa: E731
    est.train(fn, steps=4)
    result = est.evaluate(fn)
    return {"exact": {"keys": sorted(result)}, "close": _floats(result)}


@program
def binary_accuracy_names(tf, workdir):
    """'accuracy' with binary cross-entropy and a weighted metric; regression metrics."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(3)
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(1, activation="sigmoid", input_shape=(5,), name="out")]
    )
    model.compile(
        optimizer="rmsprop",
        loss=tf.keras.losses.BinaryCrossentropy(),
        metrics=["accuracy", "binary_accuracy", tf.keras.metrics.Recall()],
        weighted_metrics=["accuracy"],
    )
    a, b, y = _two_inputs(40, 4)
    x = np.concatenate([a, b], 1)
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"out_input": x}, y)).batch(10)  # noqa: E731
    est.train(fn, steps=4)
    result = est.evaluate(fn)
    return {"exact": {"keys": sorted(result)}, "close": _floats(result)}


def _subclassed(tf):
    class MyModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = tf.keras.layers.Dense(4, activation="relu")
            self.d2 = tf.keras.layers.Dense(1)

        def call(self, inputs, training=None):
            return self.d2(self.d1(inputs))

    return MyModel()


@program
def subclassed_saver(tf, workdir):
    """A subclassed model: refused in the default format, trained in 'saver'."""
    tf.keras.backend.clear_session()
    tf.keras.layers.Dense(1)  # (one made before: the model's layers are dense_1, dense_2)
    model = _subclassed(tf)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    refused = _error(lambda: tf.keras.estimator.model_to_estimator(keras_model=model))
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model,
        model_dir=os.path.join(workdir, "m"),
        checkpoint_format="saver",
        config=tf.estimator.RunConfig(tf_random_seed=7),
    )
    a, b, y = _two_inputs(20, 5)
    x = np.concatenate([a, b[:, :2]], 1)
    fn = lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(10)  # noqa: E731
    est.train(fn, steps=2)
    result = est.evaluate(fn)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(x[:2]).batch(2)))
    return {
        "exact": {
            "refused": refused,
            "keys": sorted(result),
            "row_keys": sorted(rows[0]),
            "variables": est.get_variable_names(),
            "files": _files(est.model_dir),
        },
        "close": {},  # (its initial values: drawn as it is first called, see the guide)
    }


def _saved_model_program(tf, workdir, path):
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(4)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(4, activation="tanh", input_shape=(5,), name="h"),
            tf.keras.layers.Dense(1, name="y"),
        ]
    )
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    a, b, y = _two_inputs(30, 6)
    x = np.concatenate([a, b], 1)
    model.fit(x, y, epochs=1, batch_size=10, verbose=0)
    path = os.path.join(workdir, path)
    model.save(path)
    keras_before = model.evaluate(x, y, verbose=0)
    with _info_lines(tf, workdir, "Keras|Loading|Warm-started") as lines:
        est = tf.keras.estimator.model_to_estimator(
            keras_model_path=path, model_dir=os.path.join(workdir, "m")
        )
        fn = lambda: tf.data.Dataset.from_tensor_slices(({"h_input": x}, y)).batch(10)  # noqa: E731
        before = est.evaluate(fn)
        est.train(fn, steps=3)
        after = est.evaluate(fn)
    return {
        "exact": {"keys": sorted(after), "lines": lines},
        "close": {
            "before": _floats(before),
            "keras": [float(v) for v in keras_before],
            "after": _floats(after),
        },
    }


@program
def keras_model_path_h5(tf, workdir):
    return _saved_model_program(tf, workdir, "model.h5")


@program
def keras_model_path_saved_model(tf, workdir):
    return _saved_model_program(tf, workdir, "saved")


@program
def no_model_dir(tf, workdir):
    """No model_dir: a temporary folder, and the line that says so."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    import tempfile

    with _info_lines(tf, tempfile.gettempdir(), "model directory|temporary|Using") as lines:
        est = tf.keras.estimator.model_to_estimator(keras_model=model)
    # (the folder's name and the kit's note on its removal: the guide's known differences)
    lines = [re.sub(r"<workdir>.*", "<workdir>...", line) for line in lines]
    return {
        "exact": {
            "lines": lines,
            "in_temp": est.model_dir.startswith(tempfile.gettempdir()),
            "config_dir": est.config.model_dir == est.model_dir,
            "keras_dir": sorted(os.listdir(est.model_dir)),
        },
        "close": {},
    }


@program
def custom_objects_activation(tf, workdir):
    """A custom activation function: without custom_objects, then with them."""
    tf.keras.backend.clear_session()

    def swishy(x):
        return x * tf.sigmoid(x)

    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(3, activation=swishy, input_shape=(2,)), tf.keras.layers.Dense(1)]
    )
    model.compile(optimizer="adam", loss="mse")
    without = _error(
        lambda: tf.keras.estimator.model_to_estimator(
            keras_model=model, model_dir=os.path.join(workdir, "a")
        )
    )
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "b"), custom_objects={"swishy": swishy}
    )
    x = np.ones((4, 2), np.float32)
    y = np.ones((4, 1), np.float32)
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(2)  # noqa: E731
    est.train(fn, steps=1)
    return {"exact": {"without": without, "keys": sorted(est.evaluate(fn))}, "close": {}}


@program
def batch_norm_dropout(tf, workdir):
    """Batch norm and dropout: evaluate() before training (the warm start) and after."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(6, input_shape=(5,), name="h"),
            tf.keras.layers.BatchNormalization(name="bn"),
            tf.keras.layers.Dropout(0.5),
            tf.keras.layers.Dense(1, name="y"),
        ]
    )
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    a, b, y = _two_inputs(40, 7)
    x = np.concatenate([a, b], 1) * 3 + 1
    model.fit(x, y, epochs=2, batch_size=10, verbose=0)
    keras_eval = model.evaluate(x, y, verbose=0)
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"h_input": x}, y)).batch(40)  # noqa: E731
    before = est.evaluate(fn)
    pred = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"h_input": x[:3]}).batch(3))
    )
    est.train(fn, steps=1)  # (dropout draws unseeded: the values after are no record)
    after = est.evaluate(fn)
    return {
        "exact": {"variables": est.get_variable_names(), "after_keys": sorted(after)},
        "close": {
            "keras": float(keras_eval),
            "before": _floats(before),
            "moving_mean": est.get_variable_value(
                "layer_with_weights-1/moving_mean/.ATTRIBUTES/VARIABLE_VALUE"
            ).tolist(),
            "pred": [float(p["y"][0]) for p in pred],
        },
    }


@program
def multi_output_dict_labels(tf, workdir):
    """Two outputs, a loss per output by dict, loss_weights, labels as a dict."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(6)
    inp = tf.keras.Input((4,), name="x")
    h = tf.keras.layers.Dense(5, activation="relu")(inp)
    c = tf.keras.layers.Dense(3, activation="softmax", name="cls")(h)
    r = tf.keras.layers.Dense(1, name="reg")(h)
    model = tf.keras.Model(inp, [c, r])
    model.compile(
        optimizer="adam",
        loss={"cls": "sparse_categorical_crossentropy", "reg": "mse"},
        loss_weights={"cls": 1.0, "reg": 0.5},
        metrics={"cls": "accuracy", "reg": ["mae"]},
    )
    x, y = _iris(30, 8)
    labels = {"cls": y, "reg": x[:, :1]}
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).batch(10)  # noqa: E731
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    before = est.evaluate(fn)
    est.train(fn, steps=3)
    result = est.evaluate(fn)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:2]}).batch(2)))
    missing = _error(
        lambda: est.evaluate(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, {"cls": y})).batch(10)
        )
    )
    return {
        "exact": {"keys": sorted(result), "row_keys": sorted(rows[0]), "missing": missing},
        "close": {"before": _floats(before), "after": _floats(result)},
    }


@program
def train_and_evaluate_exporter(tf, workdir):
    """train_and_evaluate with a LatestExporter, as Google Cloud's Keras trainers did, after
    `tf.random.set_seed` (which 2.15's graphs did not see: the shuffle's order is its seed's)."""
    tf.keras.backend.clear_session()
    tf.random.set_seed(7)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                4,
                "relu",
                input_shape=(4,),
                name="dense",
                kernel_initializer=_constant(tf, 0.3, (4, 4)),
            ),
            tf.keras.layers.Dense(
                3, "softmax", name="classes", kernel_initializer=_constant(tf, -0.2, (4, 3))
            ),
        ]
    )
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    x, y = _iris(40, 9)
    config = tf.estimator.RunConfig(model_dir=os.path.join(workdir, "m"), save_checkpoints_steps=5)
    est = tf.keras.estimator.model_to_estimator(keras_model=model, config=config)

    def train_fn():
        return (
            tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y))
            .shuffle(40, seed=1)
            .repeat()
            .batch(8)
        )

    def eval_fn():
        return tf.data.Dataset.from_tensor_slices(({"dense_input": x}, y)).batch(20)

    def serving():
        inputs = {"dense_input": tf.compat.v1.placeholder(tf.float32, [None, 4])}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    exporter = tf.estimator.LatestExporter("exporter", serving)
    train_spec = tf.estimator.TrainSpec(train_fn, max_steps=10)
    eval_spec = tf.estimator.EvalSpec(
        eval_fn, steps=None, exporters=exporter, start_delay_secs=0, throttle_secs=0
    )
    with _info_lines(
        tf, workdir, "Saving dict|Exporting|Signatures|Skipping|Loss for final"
    ) as lines:
        result = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    export_root = os.path.join(est.model_dir, "export", "exporter")
    export = os.path.join(export_root, os.listdir(export_root)[0])
    lines = [
        re.sub(r"\d+\.\d+(e-?\d+)?", "<f>", re.sub(r"/\d{10}", "/<ts>", line)) for line in lines
    ]
    return {
        "exact": {
            "result_keys": sorted(result[0]) if result and result[0] else None,
            "lines": lines,
            "signatures": _signatures(export, tf),
        },
        "close": _floats(result[0]) if result and result[0] else {},
    }


@program
def compat_v1_saver_default(tf, workdir):
    """`tf.compat.v1.keras.estimator.model_to_estimator`: its default format, the files."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(8)
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(2, activation="softmax", input_shape=(3,), name="d")]
    )
    model.compile(
        optimizer="adagrad", loss="categorical_crossentropy", metrics=["categorical_accuracy"]
    )
    x = np.random.RandomState(0).uniform(size=(12, 3)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[(x[:, 0] > 0.5).astype(int)]
    est = tf.compat.v1.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"d_input": x}, y)).batch(4)  # noqa: E731
    est.train(fn, steps=3)
    result = est.evaluate(fn)
    return {
        "exact": {
            "keys": sorted(result),
            "variables": est.get_variable_names(),
            "keras": sorted(os.listdir(os.path.join(est.model_dir, "keras"))),
        },
        "close": _floats(result),
    }


@program
def unbuilt_sequential(tf, workdir):
    """A Sequential model without input_shape (not built when converted)."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(2), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return {
        "exact": {
            "error": _error(
                lambda: tf.keras.estimator.model_to_estimator(
                    keras_model=model, model_dir=os.path.join(workdir, "m")
                )
            )
        },
        "close": {},
    }


@program
def uncompiled_and_wrong_features(tf, workdir):
    """An uncompiled model; features keyed by a wrong name; a plain tensor as features."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), name="d")])
    uncompiled = _error(lambda: tf.keras.estimator.model_to_estimator(keras_model=model))
    model.compile(optimizer="sgd", loss="mse")
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    wrong = _error(
        lambda: est.train(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2), steps=1
        )
    )
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(2), steps=1)
    plain = sorted(est.evaluate(lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(2)))
    return {"exact": {"uncompiled": uncompiled, "wrong": wrong, "plain": plain}, "close": {}}


@program
def sample_weights_and_weighted_metrics(tf, workdir):
    """Features given as {'features': ..., 'sample_weights': ...} (2.15's way to weight
    examples), metrics and weighted_metrics of the same names."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                1,
                activation="sigmoid",
                input_shape=(2,),
                kernel_initializer=tf.keras.initializers.Constant([[0.5], [-1.0]]),
                name="p",
            )
        ]
    )
    model.compile(
        optimizer=tf.keras.optimizers.SGD(0.5),
        loss="binary_crossentropy",
        metrics=["accuracy", "mse"],
        weighted_metrics=["accuracy", tf.keras.metrics.AUC(name="wauc")],
    )
    x = np.array([[1, 0], [0, 1], [2, 1], [1, 2], [3, 0], [0, 0]], np.float32)
    y = np.array([[1], [0], [0], [0], [1], [1]], np.float32)
    w = np.array([1.0, 0.0, 2.0, 1.0, 0.5, 3.0], np.float32)
    plain = lambda: tf.data.Dataset.from_tensor_slices(({"p_input": x}, y)).batch(6)  # noqa: E731

    def weighted():
        features = {"features": {"p_input": x}, "sample_weights": w}
        return tf.data.Dataset.from_tensor_slices((features, y)).batch(6)

    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    unweighted = est.evaluate(plain)
    before = est.evaluate(weighted)
    est.train(weighted, steps=2)
    after = est.evaluate(weighted)
    rows = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"p_input": x[:2]}).batch(2))
    )
    return {
        "exact": {"keys": sorted(after), "row_keys": sorted(rows[0])},
        "close": {
            "unweighted": _floats(unweighted),
            "before": _floats(before),
            "after": _floats(after),
            "p": [float(r["p"][0]) for r in rows],
        },
    }


@program
def unbuilt_sequential_trains(tf, workdir):
    """A Sequential model given no input shape, converted before it was built."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="ones", name="d")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    x = np.array([[1.0, 2.0], [0.0, 1.0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    fn = lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(2)  # noqa: E731
    made = _error(
        lambda: tf.keras.estimator.model_to_estimator(
            keras_model=model, model_dir=os.path.join(workdir, "m")
        )
    )
    if made:
        return {"exact": {"made": made}, "close": {}}
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m2")
    )
    est.train(fn, steps=2)
    result = est.evaluate(fn)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(x).batch(2)))
    return {
        "exact": {
            "made": made,
            "keys": sorted(result),
            "row_keys": sorted(rows[0]),
            "variables": est.get_variable_names(),
            "files": _files(est.model_dir),
        },
        "close": _floats(result),
    }


@program
def batch_norm_schedule_saver(tf, workdir):
    """Batch norm trained and evaluated (no dropout), Adam on an ExponentialDecay schedule,
    a loss object and metric objects, the 'saver' format's names."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                3, input_shape=(3,), kernel_initializer=_constant(tf, 0.4, (3, 3)), name="h"
            ),
            tf.keras.layers.BatchNormalization(name="bn"),
            tf.keras.layers.Dense(1, kernel_initializer=_constant(tf, 0.5, (3, 1)), name="o"),
        ]
    )
    sched = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    model.compile(
        optimizer=tf.keras.optimizers.Adam(learning_rate=sched),
        loss=tf.keras.losses.MeanSquaredError(),
        metrics=["mae", tf.keras.metrics.RootMeanSquaredError()],
    )
    x = np.arange(24, dtype=np.float32).reshape(8, 3) / 10
    y = x.sum(1, keepdims=True)
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m"), checkpoint_format="saver"
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"h_input": x}, y)).batch(4)  # noqa: E731
    est.train(fn, steps=4)
    r = est.evaluate(fn)
    return {
        "exact": {"keys": sorted(r), "vars": est.get_variable_names()},
        "close": {**_floats(r), "mm": est.get_variable_value("bn/moving_mean").tolist()},
    }


@program
def embedding_text(tf, workdir):
    """The text tutorials' Embedding and GlobalAveragePooling1D over int ids, 'acc'."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Embedding(
                20, 4, input_length=5, embeddings_initializer=_constant(tf, 0.1, (20, 4))
            ),
            tf.keras.layers.GlobalAveragePooling1D(),
            tf.keras.layers.Dense(
                1, activation="sigmoid", kernel_initializer=_constant(tf, 0.3, (4, 1))
            ),
        ]
    )
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["acc"])
    x = (np.arange(40).reshape(8, 5) % 20).astype(np.int32)
    y = (np.arange(8) % 2).astype(np.float32)
    est = tf.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "m")
    )
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"embedding_input": x}, y)).batch(4)  # noqa: E731
    est.train(fn, steps=4)
    r = est.evaluate(fn)
    rows = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"embedding_input": x[:2]}).batch(2))
    )
    return {
        "exact": {"keys": sorted(r), "rows": sorted(rows[0])},
        "close": {**_floats(r), "p": [float(v) for r_ in rows for v in r_["dense"]]},
    }


@program
def resume_second_estimator(tf, workdir):
    """A second model_to_estimator of the model over the first one's model_dir resumes."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(1, input_shape=(2,), kernel_initializer="ones", name="d")]
    )
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    x = np.array([[1.0, 2.0], [0.0, 1.0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    fn = lambda: tf.data.Dataset.from_tensor_slices(({"d_input": x}, y)).batch(2)  # noqa: E731
    d = os.path.join(workdir, "m")
    e1 = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=d)
    e1.train(fn, steps=2)
    e2 = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=d)
    e2.train(fn, steps=2)
    r = e2.evaluate(fn)
    return {"exact": {"step": int(r["global_step"])}, "close": _floats(r)}


def _auto_named_model(tf):
    """A Sequential model whose layers Keras names itself (`dense`, then `dense_2`, ...)."""
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                3, input_shape=(2,), kernel_initializer=_constant(tf, 0.3, (2, 3))
            ),
            tf.keras.layers.Dense(1, kernel_initializer=_constant(tf, 0.5, (3, 1))),
        ]
    )
    model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse", metrics=["mae"])
    return model


def _batches(tf, features, labels):
    """An input_fn of (features, labels) in batches of 2."""
    return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)


@program
def resume_after_rebuilding_the_model(tf, workdir):
    """A notebook re-running its cells: the model built and compiled again (its layers
    auto-named afresh, `dense_2` for `dense`) and made an Estimator over the model_dir
    the first one trained, in the default 'checkpoint' format. 2.15 read that checkpoint
    by its object graph's keys, not by layer names: train resumes, evaluate, predict and
    the export read it."""
    tf.keras.backend.clear_session()
    x = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.5], [1.0, 1.0]], np.float32)
    y = x.sum(1, keepdims=True) / 2
    d = os.path.join(workdir, "m")
    names = []
    for _ in range(2):
        model = _auto_named_model(tf)
        key = model.input_names[0]
        names.append([key] + [layer.name for layer in model.layers])
        fn = _batches(tf, {key: x}, y)
        est = tf.keras.estimator.model_to_estimator(keras_model=model, model_dir=d)
        est.train(fn, steps=2)
    result = est.evaluate(fn)
    rows = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({key: x[:2]}).batch(2)))

    def receiver():
        placeholder = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return tf.estimator.export.ServingInputReceiver({key: placeholder}, {"x": placeholder})

    export = est.export_saved_model(os.path.join(workdir, "export"), receiver)
    served = tf.saved_model.load(export).signatures["serving_default"](tf.constant(x[:2]))
    return {
        "exact": {
            "names": names,
            "step": int(result["global_step"]),
            "signatures": _signatures(export, tf),
            "files": _files(d),
        },
        "close": {
            **_floats(result),
            "p": [float(v) for r in rows for v in r[names[1][-1]]],
            "served": [float(v) for v in next(iter(served.values())).numpy().ravel()],
        },
    }


@program
def max_steps_reached_by_format(tf, workdir):
    """train(max_steps=2) twice. 2.15 read the step to start from by the name `global_step`:
    the 'saver' format's checkpoint holds it (the second call skips), the default
    'checkpoint' format's does not (`estimator_global_step/...`: read as 0, the second call
    trains one step, to 3)."""
    x = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.5], [1.0, 1.0]], np.float32)
    y = x.sum(1, keepdims=True) / 2
    seen, close = {}, {}
    for checkpoint_format in ("checkpoint", "saver"):
        tf.keras.backend.clear_session()
        model = _auto_named_model(tf)
        fn = lambda: _batches(tf, {"dense_input": x}, y)().repeat()  # noqa: E731
        d = os.path.join(workdir, checkpoint_format)
        est = tf.keras.estimator.model_to_estimator(
            keras_model=model, model_dir=d, checkpoint_format=checkpoint_format
        )
        est.train(fn, max_steps=2)
        with _info_lines(tf, workdir, "Skipping|Saving checkpoints") as lines:
            est.train(fn, max_steps=2)
        seen[checkpoint_format] = [lines, os.path.basename(tf.train.latest_checkpoint(d))]
        close[checkpoint_format] = _floats(est.evaluate(fn, steps=1))
    return {"exact": seen, "close": close}
