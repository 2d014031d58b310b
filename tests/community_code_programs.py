"""Tutorial-, book-, course- and StackOverflow-grade tf.estimator code the other families
have not tried, after `tf_upgrade_v2`, on tiny made-up data:

- `label_mistakes`: the label mistakes StackOverflow questions are about, in a canned
  estimator of each namespace and a head in a custom `model_fn`: one-hot labels given to a
  classifier of `n_classes` (and to a binary one), two label columns to a regressor,
  labels as a `SparseTensor`, an input_fn that returns no labels (to `train` and to
  `evaluate`), what 2.15 refused and in which words.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (errors, keys, listings: equal) and `close` values (1e-4).
`tests/test_community_code.py` compares them with 2.15's recording
(`tests/tf215/record_family.py community_code_programs`, into
`tests/data/tf215/community_code.json`).
"""

import os

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _raised

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "community_code.json")
PROGRAMS, program = registry()


# --- label mistakes ---


def _labelled(tf, labels):
    x = np.array([[1.0], [2.0], [3.0]], np.float32)
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).batch(3)


def _sparse_labels():
    import tensorflow as tf

    features = {"x": tf.constant([[1.0], [2.0]])}
    return features, tf.SparseTensor([[0, 0], [1, 0]], tf.constant([1, 0], tf.int64), [2, 1])


def _no_labels():
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices({"x": np.ones((3, 1), np.float32)}).batch(3)


def _canned_label_mistakes(tf, estimator, workdir):
    columns = [tf.feature_column.numeric_column("x")]
    one_hot = np.eye(3, dtype=np.int64)
    made = {
        "dnn_one_hot": (
            lambda d: estimator.DNNClassifier([4], columns, n_classes=3, model_dir=d),
            _labelled(tf, one_hot),
        ),
        "binary_one_hot": (
            lambda d: estimator.LinearClassifier(columns, model_dir=d),
            _labelled(tf, np.eye(3, 2, dtype=np.int64)),
        ),
        "regressor_two_columns": (
            lambda d: estimator.LinearRegressor(columns, model_dir=d),
            _labelled(tf, np.ones((3, 2), np.float32)),
        ),
        "sparse": (lambda d: estimator.LinearClassifier(columns, model_dir=d), _sparse_labels),
        "none": (lambda d: estimator.DNNRegressor([3], columns, model_dir=d), _no_labels),
    }
    refused = {}
    for name, (build, input_fn) in made.items():
        est = build(os.path.join(workdir, name))
        refused[name] = _raised(lambda est=est, input_fn=input_fn: est.train(input_fn, steps=1))
    est = estimator.LinearRegressor(columns, model_dir=os.path.join(workdir, "evaluated"))
    est.train(_labelled(tf, np.ones(3, np.float32)), steps=1)
    refused["evaluate_none"] = _raised(lambda: est.evaluate(_no_labels))
    return refused


@program
def label_mistakes(tf, workdir):
    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features["x"], 3)
        head = tf.estimator.MultiClassHead(3)
        optimizer = tf.compat.v1.train.AdagradOptimizer(0.1)
        return head.create_estimator_spec(features, mode, logits, labels, optimizer=optimizer)

    custom = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, "custom"))
    return {
        "exact": {
            "v2": _canned_label_mistakes(tf, tf.estimator, os.path.join(workdir, "v2")),
            "v1": _canned_label_mistakes(tf, tf.compat.v1.estimator, os.path.join(workdir, "v1")),
            "head_one_hot": _raised(
                lambda: custom.train(_labelled(tf, np.eye(3, dtype=np.int64)), steps=1)
            ),
            "head_none": _raised(lambda: custom.train(_no_labels, steps=1)),
        },
        "close": {},
    }
