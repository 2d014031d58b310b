"""Canned DNNs under `RunConfig(tf_random_seed=...)`, as public samples run them to print
their losses: the same numbers as under tf.estimator 2.15.

2.15 made each call's graph with that graph seed, and every random op naming no seed took
the graph's count of such ops before it as op seed: the input's `Dataset.shuffle()`
first, then the DNN's kernel initializers (Glorot uniform) and dropout, in the order the
model built them (`components/estimator/graph_seeds.py` draws them so on the TF2 path).
Each program trains a small DNN a few steps (logging every step's loss), evaluates and
predicts, and returns its user's view: `exact` the variables' names and shapes and the
number of losses logged, `seeded` (within 1e-5 relative) every step's loss, the trained kernels and
biases, evaluate's values and the predicted logits. Cases: a Dataset with and without
`shuffle()`, dropout, batch norm, numpy_input_fn without shuffling, the V1 classes (in a
graph), a regressor, wide and deep, an embedding column, and a second train() call
(2.15 built its graph again: shuffles and dropout from their start).

`tests/test_seeded_dnn_vs_tf215.py` compares them with 2.15's recording
(`tests/tf215/record_family.py seeded_dnn_programs`, into `tests/data/tf215/seeded_dnn.json`).
"""

import os
import re

import numpy as np

from tests.canned_v1_programs import _plain
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "seeded_dnn.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
SEED = 42
STEPS = 5

N = 16
_rng = np.random.RandomState(7)
X = _rng.uniform(-1, 1, (N, 2)).astype(np.float32)
WORDS = np.array(list("abcd") * (N // 4))
CLASSES = (X[:, :1] - X[:, 1:] + 0.4 * (WORDS[:, None] == "a") > 0).astype(np.int64)
TARGET = (2 * X[:, :1] - X[:, 1:]).astype(np.float32)
_LOSS = re.compile(r"loss = ([-+0-9.eE]+), step = ")


def _columns(tf, embedding=False):
    fc = tf.feature_column
    columns = [fc.numeric_column("x", shape=(2,))]
    if embedding:
        words = fc.categorical_column_with_vocabulary_list("w", list("abcd"))
        columns.append(fc.embedding_column(words, dimension=3))
    return columns


def _dataset_fn(tf, labels, shuffle=False, epochs=None, batch=4):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": X, "w": WORDS}, labels))
        if shuffle:
            data = data.shuffle(8)
        return data.repeat(epochs).batch(batch)

    return input_fn


def _config(tf):
    return tf.estimator.RunConfig(
        tf_random_seed=SEED, log_step_count_steps=1, save_summary_steps=STEPS
    )


def _trained(tf, model, input_fn, calls=1):
    """Every step's logged loss over `calls` train() calls (not its step: 2.15 logged the
    global step as read beside the loss, at times the next step's)."""
    losses = []
    for _ in range(calls):
        with _info_lines() as lines:
            model.train(input_fn, steps=STEPS)
        for match in (_LOSS.search(line) for line in lines):
            if match:
                losses.append(float(match.group(1)))
    return losses


def _seen(tf, model, labels, input_fn, calls=1):
    losses = _trained(tf, model, input_fn, calls)
    names = sorted(n for n in model.get_variable_names() if re.search(r"/(kernel|bias|weights)", n))
    names = [n for n in names if not re.search(r"Adagrad|Ftrl|Adam|/part_\d+/", n)]
    results = model.evaluate(_dataset_fn(tf, labels, epochs=1))
    predictions = list(model.predict(_dataset_fn(tf, labels, epochs=1)))
    return {
        "exact": {
            "variables": {n: list(model.get_variable_value(n).shape) for n in names},
            "losses_logged": len(losses),
        },
        "seeded": {
            "losses": losses,
            "variables": {n: _plain(model.get_variable_value(n)) for n in names},
            "evaluate": {k: float(v) for k, v in results.items() if k != "global_step"},
            "logits": [
                _plain(p["predictions" if "predictions" in p else "logits"]) for p in predictions
            ],
        },
    }


def _classifier(tf, workdir, namespace=None, **kwargs):
    namespace = namespace or tf.estimator
    return namespace.DNNClassifier(
        hidden_units=[4, 3],
        feature_columns=_columns(tf, kwargs.pop("embedding", False)),
        model_dir=workdir,
        config=_config(tf),
        **kwargs,
    )


@program
def dnn_classifier_dataset(tf, workdir):
    """A Dataset without shuffle(): the kernels' Glorot draws alone."""
    model = _classifier(tf, workdir)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES))


@program
def dnn_classifier_shuffled(tf, workdir):
    """`Dataset.shuffle(8)` without a seed: the input's op seed counts first."""
    model = _classifier(tf, workdir)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True))


@program
def dnn_classifier_dropout(tf, workdir):
    """Dropout after each hidden layer: each step's mask from its layer's op seed."""
    model = _classifier(tf, workdir, dropout=0.3)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True))


@program
def dnn_classifier_batch_norm(tf, workdir):
    model = _classifier(tf, workdir, batch_norm=True)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES))


@program
def dnn_classifier_embedding(tf, workdir):
    """An embedding column: its table's truncated normal draw comes before the kernels'."""
    model = _classifier(tf, workdir, embedding=True)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True))


@program
def dnn_classifier_numpy_input(tf, workdir):
    """numpy_input_fn without shuffling (2.15: queues, no random op)."""
    model = _classifier(tf, workdir)
    input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        {"x": X, "w": WORDS}, CLASSES, batch_size=4, num_epochs=None, shuffle=False
    )
    return _seen(tf, model, CLASSES, input_fn)


@program
def dnn_classifier_trained_twice(tf, workdir):
    """Two train() calls: 2.15's second graph shuffled and dropped out from the start."""
    model = _classifier(tf, workdir, dropout=0.2)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True), calls=2)


@program
def dnn_regressor_dropout(tf, workdir):
    model = tf.estimator.DNNRegressor(
        hidden_units=[5],
        feature_columns=_columns(tf),
        model_dir=workdir,
        config=_config(tf),
        dropout=0.5,
    )
    return _seen(tf, model, TARGET, _dataset_fn(tf, TARGET, shuffle=True))


@program
def v1_dnn_classifier(tf, workdir):
    """tf.compat.v1.estimator's class (a graph of its own here too), dropout, shuffle."""
    model = _classifier(tf, workdir, namespace=tf.compat.v1.estimator, dropout=0.3)
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True))


@program
def dnn_linear_combined_classifier(tf, workdir):
    model = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=_columns(tf),
        dnn_feature_columns=_columns(tf, embedding=True),
        dnn_hidden_units=[4, 3],
        dnn_dropout=0.2,
        model_dir=workdir,
        config=_config(tf),
    )
    return _seen(tf, model, CLASSES, _dataset_fn(tf, CLASSES, shuffle=True))


@program
def v1_dnn_linear_combined_regressor(tf, workdir):
    model = tf.compat.v1.estimator.DNNLinearCombinedRegressor(
        linear_feature_columns=_columns(tf),
        dnn_feature_columns=_columns(tf),
        dnn_hidden_units=[3],
        model_dir=workdir,
        config=_config(tf),
    )
    return _seen(tf, model, TARGET, _dataset_fn(tf, TARGET))
