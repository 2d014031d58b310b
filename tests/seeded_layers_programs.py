"""Layers' default initializers in a `model_fn` under `RunConfig(tf_random_seed=...)`, and
what training leaves of a program's own random state: as under tf.estimator 2.15.

2.15 set the graph seed of each call's graph and nothing else. `tf.compat.v1.layers` and
Keras layers without an initializer of their own take Keras's Glorot uniform, whose seed
Keras draws from Python's `random` (or from the generator `tf.keras.utils.set_random_seed`
made): a program that seeds `random` (or calls that utility) draws the same start each
run, one that does not draws another each run. A program's `random` and `numpy.random`
go on from where it left them after a `train()`.

- `v1_layers_python_random_seeded`: `random.seed(7)` (not the graph seed), a TF1 model_fn
  of `tf.compat.v1.layers` (dense, dropout), every step's loss, weights, predictions;
- `keras_layers_keras_seeded`: `tf.keras.utils.set_random_seed(3)`, a model_fn of Keras
  layers (the TF2 path here), the same views;
- `random_state_after_train`: `numpy.random` and `random` after training a TF1 model_fn,
  a Keras-layer model_fn and a canned DNN, each seeded;
- `rows_shuffled_by_random_each_epoch`: a program shuffling its rows with
  `random.shuffle` before each of three `train()` calls (the orders, and the weights);
- `random_state_after_model_to_estimator`: the same states after `model_to_estimator`
  of a seeded config (a Keras model with dropout), and after its training; its loss.

`tests/test_seeded_layers_vs_tf215.py` compares them with 2.15's recording
(`tests/tf215/record_family.py seeded_layers_programs`, into `tests/data/tf215/seeded_layers.json`).
"""

import os
import random
import re

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "seeded_layers.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
SEED = 42
STEPS = 4

_rng = np.random.RandomState(11)
X = _rng.uniform(-1, 1, (12, 2)).astype(np.float32)
Y = (X[:, :1] + 0.5 * X[:, 1:] > 0).astype(np.float32)
_LOSS = re.compile(r"loss = ([-+0-9.eE]+), step = ")


def _input_fn(tf, x=X, y=Y, epochs=None):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(epochs).batch(4)


def _estimator(tf, workdir, body):
    """An Estimator over `body(tf, x, training)` -> logits, SGD at 0.1, logging each step."""

    def model_fn(features, labels, mode):
        logits = body(tf, features["x"], mode == tf.estimator.ModeKeys.TRAIN)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    config = tf.estimator.RunConfig(tf_random_seed=SEED, log_step_count_steps=1)
    return tf.estimator.Estimator(model_fn, workdir, config=config)


def _v1_layers(tf, x, training):
    hidden = tf.compat.v1.layers.dense(x, 4, activation=tf.nn.relu)
    hidden = tf.compat.v1.layers.dropout(hidden, 0.25, training=training)
    return tf.compat.v1.layers.dense(hidden, 1)


def _keras_layers(tf, x, training):
    hidden = tf.keras.layers.Dense(4, activation="relu")(x)
    return tf.keras.layers.Dense(1)(hidden)


def _keras_seeds_from_random():
    """Forgets the generator an earlier `tf.keras.utils.set_random_seed` in this process
    left (another program's), so that Keras draws its seeds from `random`, as in a fresh
    process (2.15's Keras and the kit's tf_keras keep it in the same place)."""
    try:
        from tf_keras.src import backend
    except ImportError:  # (under 2.15)
        from keras.src import backend
    backend._SEED_GENERATOR.generator = None


def _seen(tf, model):
    with _info_lines() as lines:
        model.train(_input_fn(tf), steps=STEPS)
    losses = [float(m.group(1)) for m in map(_LOSS.search, lines) if m]
    names = sorted(n for n in model.get_variable_names() if re.search(r"kernel|bias", n))
    logits = [p["logits"].tolist() for p in model.predict(_input_fn(tf, epochs=1))]
    return {
        "exact": {"variables": names, "losses_logged": len(losses)},
        "close": {
            "losses": losses,
            "variables": {n: model.get_variable_value(n).tolist() for n in names},
            "logits": logits,
        },
    }


@program
def v1_layers_python_random_seeded(tf, workdir):
    _keras_seeds_from_random()
    random.seed(7)
    return _seen(tf, _estimator(tf, workdir, _v1_layers))


@program
def keras_layers_keras_seeded(tf, workdir):
    tf.keras.utils.set_random_seed(3)
    return _seen(tf, _estimator(tf, workdir, _keras_layers))


def _states():
    """The next draws of the program's `numpy.random` and `random`."""
    return {"numpy": np.random.rand(2).tolist(), "random": random.random()}


@program
def random_state_after_train(tf, workdir):
    _keras_seeds_from_random()
    seen = {}
    columns = [tf.feature_column.numeric_column("x", shape=(2,))]
    config = tf.estimator.RunConfig(tf_random_seed=SEED)
    canned = lambda d: tf.estimator.DNNClassifier([3], columns, d, config=config)  # noqa: E731
    models = {
        "tf1_model_fn": lambda d: _estimator(tf, d, _v1_layers),
        "keras_layers_model_fn": lambda d: _estimator(tf, d, _keras_layers),
        "canned_dnn": canned,
    }
    for name, make in models.items():
        np.random.seed(0)
        random.seed(0)
        make(os.path.join(workdir, name)).train(_input_fn(tf), steps=2)
        seen[name] = _states()
    return {"exact": {}, "close": seen}


@program
def rows_shuffled_by_random_each_epoch(tf, workdir):
    _keras_seeds_from_random()
    random.seed(5)
    model = _estimator(tf, workdir, _v1_layers)
    rows, orders = list(range(len(X))), []
    for _ in range(3):
        random.shuffle(rows)
        orders.append(list(rows))
        model.train(_input_fn(tf, X[rows], Y[rows], epochs=1))
    names = sorted(n for n in model.get_variable_names() if re.search(r"kernel|bias", n))
    return {
        "exact": {"orders": orders},
        "close": {n: model.get_variable_value(n).tolist() for n in names},
    }


@program
def random_state_after_model_to_estimator(tf, workdir):
    _keras_seeds_from_random()
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(3, activation="relu", input_shape=(2,)),
            tf.keras.layers.Dropout(0.3),
            tf.keras.layers.Dense(1),
        ]
    )
    model.compile("sgd", "mse")
    np.random.seed(0)
    random.seed(0)
    config = tf.estimator.RunConfig(tf_random_seed=3)
    estimator = tf.keras.estimator.model_to_estimator(model, model_dir=workdir, config=config)
    seen = {"made": _states()}
    np.random.seed(0)
    random.seed(0)
    name = model.input_names[0]
    input_fn = lambda: tf.data.Dataset.from_tensor_slices(({name: X}, Y)).batch(4)  # noqa: E731
    estimator.train(input_fn, steps=3)
    seen["trained"] = _states()
    seen["loss"] = float(estimator.evaluate(input_fn, steps=2)["loss"])
    return {"exact": {}, "close": seen}
