"""Evaluation metrics as others' tf.estimator code writes them, after `tf_upgrade_v2`.

- `binary_weighted_metrics`: a `tf.estimator.Estimator` whose TF1 model_fn
  (`tf.compat.v1.layers`) reports the binary `tf.compat.v1.metrics` samples use with
  `weights=`: auc with careful interpolation (ROC and PR), precision / recall /
  true positives at thresholds, false negatives, true positives, mean relative error,
  percentage below, mean_tensor, precision, recall, accuracy;
- `multiclass_metrics_v1`: a `tf.compat.v1.estimator.Estimator` with three classes:
  mean_per_class_accuracy and mean_iou with weights, sparse_precision_at_k (with a
  class_id), recall_at_k, the top-k ones, mean_cosine_distance, a weighted mean_tensor;
  `evaluate(name=...)`'s folder;
- `keras_layer_metrics`: a TF2-style model_fn (a Keras layer and optimizer) whose
  weighted tf.compat.v1.metrics sit beside a Keras metric object, and one whose Keras
  metric was never updated;
- `mixed_metric_kinds`: a `(value, update_op)` pair beside Keras metric objects, names
  with a slash (`metrics/auc`), a string-valued metric, an int64 matrix;
- `keras_metrics_read_as_pairs`: a user's wrapper unpacking every eval_metric_ops entry
  (Keras metric objects included: 2.15's spec held them as pairs) to file it elsewhere;
- `metric_errors`: eval_metric_ops that 2.15 refused (a tensor alone, a list, a triple,
  a Python number as the update, not a dict) and what it did with a Keras metric never
  updated;
- `added_metrics`: `tf.estimator.add_metrics` on a canned LinearClassifier with
  metric_fns of (labels, predictions), (labels, predictions, features),
  (labels, predictions, config), one replacing the canned `accuracy`, one returning
  (name, metric) pairs, one None, and one taking an argument add_metrics does not pass;
- `loss_only_evaluation`: an EVAL spec with predictions and a loss but no
  eval_metric_ops, under both Estimator classes, and `evaluate(name=...)`.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (result keys, types, dtypes, shapes, event tags, folders, errors:
equal) and `close` values (zero-initialised models on unshuffled data: 1e-4).
`tests/test_eval_metrics.py` compares them with 2.15's recording
(`tests/tf215/record_family.py eval_metric_programs`, into
`tests/data/tf215/eval_metrics.json`).
"""

import glob
import os
import re

import numpy as np

from tests.model_fn_idiom_programs import _events, _numbers, _seen, _shape
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _messages
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "eval_metrics.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
THRESHOLDS = [0.3, 0.5, 0.7]


# ------------------------------------------------------------------ what a user sees
def _results(results):
    return {k: _seen(v) for k, v in sorted(results.items())}


def _scalar_events(tf, folder):
    """{tag: [value, ...]} of the simple values in the event files directly in `folder`."""
    values = {}
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.WhichOneof("value") == "simple_value":
                    values.setdefault(f"events/{value.tag}", []).append(value.simple_value)
    return values


def _folders(model_dir):
    """The folders evaluate() made in `model_dir`."""
    return sorted(n for n in os.listdir(model_dir) if os.path.isdir(os.path.join(model_dir, n)))


def _evaluated(tf, est, input_fn, **kwargs):
    """evaluate()'s results, its `Saving dict` lines and the metrics whose summary it
    skipped."""
    with _info_lines() as lines:
        results = est.evaluate(input_fn, **kwargs)
    saved = [_shape(line) for line in _messages(lines, "Saving dict for global step")]
    # (The warning's words are the kit's own: the metric it names is compared.)
    skipped = [
        re.match(r"Skipping summary for ([^,:]+)", line).group(1)
        for line in _messages(lines, "Skipping summary for")
    ]
    return results, saved, skipped


# ------------------------------------------------------------------------ data
def _rows(n, offset=0):
    """n rows of 4 features, a binary label, 3 classes and a weight (no randomness)."""
    rows = np.arange(offset, offset + n)
    classes = (rows * 7 % 3).astype(np.int32)
    x = ((rows[:, None] * np.arange(1, 5)[None, :]) % 5 / 5.0).astype(np.float32)
    x[np.arange(n), classes] += 1.0
    weights = (1.0 + rows % 4 / 2.0).astype(np.float32)
    return {"x": x, "weight": weights}, classes


def _input_fn(n, batch_size, binary, offset=0, epochs=1):
    features, classes = _rows(n, offset)
    labels = (classes == 0).astype(np.float32)[:, None] if binary else classes

    def input_fn():
        import tensorflow as tf

        data = tf.data.Dataset.from_tensor_slices((features, labels))
        return data.repeat(epochs).batch(batch_size)

    return input_fn


def _logits(tf, features, units):
    """A zero-initialised compat.v1 dense layer over the features."""
    return tf.compat.v1.layers.dense(
        features["x"],
        units,
        kernel_initializer=tf.compat.v1.zeros_initializer(),
        name="logits",
    )


def _train_op(tf, loss):
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    return optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())


# ------------------------------------------------------------ binary, weighted
def _binary_metric_ops(tf, labels, probability, weights):
    metrics = tf.compat.v1.metrics
    predicted = tf.cast(probability > 0.5, tf.float32)
    column = tf.reshape(weights, [-1, 1])
    both = tf.concat([probability, 1.0 - probability], axis=1)
    return {
        "auc_careful": metrics.auc(
            labels, probability, weights=column, summation_method="careful_interpolation"
        ),
        "auc_pr_careful": metrics.auc(
            labels,
            probability,
            weights=column,
            curve="PR",
            summation_method="careful_interpolation",
        ),
        "auc_pr_minoring": metrics.auc(
            labels, probability, curve="PR", summation_method="minoring"
        ),
        "precision_at_thresholds": metrics.precision_at_thresholds(
            labels, probability, THRESHOLDS, weights=column
        ),
        "recall_at_thresholds": metrics.recall_at_thresholds(labels, probability, THRESHOLDS),
        "tp_at_thresholds": metrics.true_positives_at_thresholds(
            labels, probability, THRESHOLDS, weights=column
        ),
        "false_negatives": metrics.false_negatives(labels, predicted, weights=column),
        "true_positives": metrics.true_positives(labels, predicted),
        "mean_relative_error": metrics.mean_relative_error(
            labels, probability, normalizer=tf.ones_like(labels) * 2.0, weights=column
        ),
        "percentage_below": metrics.percentage_below(probability, 0.4, weights=column),
        "mean_both": metrics.mean_tensor(tf.reduce_mean(both, axis=0), weights=[1.0, 3.0]),
        "precision": metrics.precision(labels, predicted, weights=column),
        "recall": metrics.recall(labels, predicted, weights=column),
        "accuracy": metrics.accuracy(labels, predicted, weights=column),
    }


def binary_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _logits(tf, features, 1)
    probability = tf.sigmoid(logits)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"probability": probability})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    metrics = _binary_metric_ops(tf, labels, probability, features["weight"])
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


@program
def binary_weighted_metrics(tf, workdir):
    """Train 4 steps, evaluate 12 other rows in 3 batches."""
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(binary_model_fn, model_dir=model_dir)
    est.train(_input_fn(24, 6, binary=True), steps=4)
    results, saved, skipped = _evaluated(tf, est, _input_fn(12, 4, binary=True, offset=30))
    return {
        "exact": {
            "results": _results(results),
            "saving_dict": saved,
            "skipped": skipped,
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
        },
        "close": {
            **_numbers(results),
            **_scalar_events(tf, os.path.join(model_dir, "eval")),
        },
    }


# ------------------------------------------------------------ multi-class, compat.v1
def _class_metric_ops(tf, labels, logits, weights):
    metrics = tf.compat.v1.metrics
    predicted = tf.argmax(logits, axis=1, output_type=tf.int32)
    sparse = tf.cast(tf.reshape(labels, [-1, 1]), tf.int64)
    probabilities = tf.nn.softmax(logits)
    _, top_2 = tf.nn.top_k(logits, k=2)
    one_hot = tf.one_hot(labels, 3)
    return {
        "mean_per_class_accuracy": metrics.mean_per_class_accuracy(
            labels, predicted, 3, weights=weights
        ),
        "mean_iou": metrics.mean_iou(labels, predicted, 3, weights=weights),
        "sparse_precision_at_2": metrics.sparse_precision_at_k(sparse, logits, k=2),
        "precision_at_1_class_1": metrics.sparse_precision_at_k(sparse, logits, k=1, class_id=1),
        "recall_at_2": metrics.recall_at_k(sparse, logits, k=2, weights=weights),
        "precision_at_top_2": metrics.precision_at_top_k(sparse, tf.cast(top_2, tf.int64), k=2),
        "recall_at_top_2": metrics.recall_at_top_k(sparse, tf.cast(top_2, tf.int64), k=2),
        "mean_cosine_distance": metrics.mean_cosine_distance(
            tf.math.l2_normalize(one_hot, axis=1),
            tf.math.l2_normalize(probabilities, axis=1),
            dim=1,
        ),
        "mean_probabilities": metrics.mean_tensor(
            tf.reduce_mean(probabilities, axis=0), weights=tf.reduce_sum(weights)
        ),
    }


def classes_model_fn(features, labels, mode, params):
    import tensorflow as tf

    logits = _logits(tf, features, 3)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    metrics = _class_metric_ops(tf, labels, logits, features["weight"])
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


@program
def multiclass_metrics_v1(tf, workdir):
    """tf.compat.v1.estimator.Estimator: train 4 steps, evaluate 3 batches named 'test'."""
    model_dir = os.path.join(workdir, "model")
    est = tf.compat.v1.estimator.Estimator(classes_model_fn, model_dir=model_dir, params={})
    est.train(_input_fn(24, 6, binary=False), steps=4)
    results, saved, skipped = _evaluated(
        tf, est, _input_fn(12, 4, binary=False, offset=30), name="test"
    )
    return {
        "exact": {
            "results": _results(results),
            "saving_dict": saved,
            "skipped": skipped,
            "eval_dir": os.path.relpath(est.eval_dir("test"), model_dir),
            "eval_events": _events(tf, os.path.join(model_dir, "eval_test")),
            "files": listing(model_dir),
        },
        "close": {
            **_numbers(results),
            **_scalar_events(tf, os.path.join(model_dir, "eval_test")),
        },
    }


# ------------------------------------------------------------ mixed metric kinds
def mixed_model_fn(features, labels, mode):
    """A (value, update_op) pair beside Keras metric objects, slash names, a string
    value and an int64 confusion matrix."""
    import tensorflow as tf

    logits = _logits(tf, features, 1)
    probability = tf.sigmoid(logits)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    auc = tf.keras.metrics.AUC(num_thresholds=50, name="auc")
    auc.update_state(labels, probability)
    mean = tf.keras.metrics.Mean()
    mean.update_state(probability, sample_weight=tf.reshape(features["weight"], [-1, 1]))
    predicted = tf.cast(probability > 0.5, tf.int64)
    confusion = tf.math.confusion_matrix(
        tf.reshape(tf.cast(labels, tf.int64), [-1]), tf.reshape(predicted, [-1]), 2, dtype=tf.int64
    )
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, predicted),
        "metrics/auc": auc,
        "metrics/mean_probability": mean,
        "metrics/auc_v1": tf.compat.v1.metrics.auc(labels, probability, num_thresholds=50),
        "model_name": (tf.constant("zero-initialised"), tf.no_op()),
        "confusion": _streaming_sum(tf, "confusion", confusion),
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


def _streaming_sum(tf, name, values):
    """A user's streaming sum of `values` (an int64 matrix) in a local variable."""
    total = tf.compat.v1.get_variable(
        name,
        values.shape,
        tf.int64,
        initializer=tf.compat.v1.zeros_initializer(),
        collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES],
        trainable=False,
    )
    return total, tf.compat.v1.assign_add(total, values)


@program
def mixed_metric_kinds(tf, workdir):
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(mixed_model_fn, model_dir=model_dir)
    est.train(_input_fn(24, 6, binary=True), steps=3)
    results, saved, skipped = _evaluated(tf, est, _input_fn(12, 4, binary=True, offset=30))
    model_name = results.get("model_name")
    return {
        "exact": {
            "results": _results(results),
            "model_name": model_name.decode() if isinstance(model_name, bytes) else None,
            "confusion": np.asarray(results.get("confusion")).tolist(),
            "saving_dict": saved,
            "skipped": skipped,
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
            "variables": est.get_variable_names(),
        },
        "close": {
            **_numbers({k: v for k, v in results.items() if k != "confusion"}),
            **_scalar_events(tf, os.path.join(model_dir, "eval")),
        },
    }


# ------------------------------------------------------------ Keras layers' model_fn
def keras_layer_model_fn(features, labels, mode, params):
    """A TF2-style model_fn (a Keras Dense layer of set weights: 2.15's Keras optimizers
    updated no weights in a graph-mode model_fn) whose eval_metric_ops are
    tf.compat.v1.metrics with weights beside a Keras metric object, a float64 metric,
    constants (a string, an int64, an int32) with no update and a ratio of Keras sums
    updated by a tf.group."""
    import tensorflow as tf

    weights = tf.constant_initializer([[0.6], [-0.4], [0.3], [-0.2]])
    layer = tf.keras.layers.Dense(1, kernel_initializer=weights, name="out")
    logits = layer(features["x"])
    probability = tf.sigmoid(logits)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"probability": probability})
    column = tf.reshape(features["weight"], [-1, 1])
    predicted = tf.cast(probability > 0.5, tf.float32)
    metrics = {
        "auc_careful": tf.compat.v1.metrics.auc(
            labels, probability, weights=column, summation_method="careful_interpolation"
        ),
        "tp_at_thresholds": tf.compat.v1.metrics.true_positives_at_thresholds(
            labels, probability, THRESHOLDS, weights=column
        ),
        "false_negatives": tf.compat.v1.metrics.false_negatives(labels, predicted),
        "mean_cosine_distance": tf.compat.v1.metrics.mean_cosine_distance(
            tf.math.l2_normalize(tf.concat([labels, 1.0 - labels], 1), axis=1),
            tf.math.l2_normalize(tf.concat([probability, 1.0 - probability], 1), axis=1),
            dim=1,
            weights=column,
        ),
        "metrics/precision": tf.keras.metrics.Precision(thresholds=0.5),
        "precision_at_1": tf.compat.v1.metrics.precision_at_k(
            tf.cast(labels, tf.int64), tf.concat([logits, -logits], 1), k=1
        ),
        "model_name": (tf.constant("set weights"), tf.no_op()),
        "layers": (tf.constant(1, tf.int64), tf.no_op()),
        "units": (tf.constant(1, tf.int32), tf.no_op()),
    }
    metrics["metrics/precision"].update_state(labels, probability)
    metrics.update(_positive_share(tf, labels))
    if params.get("unused_keras_metric"):
        metrics["recall"] = tf.keras.metrics.Recall()
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


def _positive_share(tf, labels):
    """A user's streaming ratio of two Keras sums, its value computed before its update
    (a tf.group), both sums reported too."""
    positives, rows = tf.keras.metrics.Sum(name="positives"), tf.keras.metrics.Sum(name="rows")
    share = tf.math.divide_no_nan(positives.result(), rows.result())
    update = tf.group(positives.update_state(labels), rows.update_state(tf.ones_like(labels)))
    return {"positives": positives, "rows": rows, "positive_share": (share, update)}


@program
def keras_layer_metrics(tf, workdir):
    """Evaluate (no checkpoint: the layer's initial weights) 12 rows; then a Keras metric
    never updated."""
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(keras_layer_model_fn, model_dir=model_dir, params={})
    results, saved, skipped = _evaluated(tf, est, _input_fn(12, 4, binary=True, offset=30))
    unused = tf.estimator.Estimator(
        keras_layer_model_fn, model_dir=model_dir, params={"unused_keras_metric": True}
    )
    return {
        "exact": {
            "results": _results(results),
            "saving_dict": saved,
            "skipped": skipped,
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
            "unused_keras_metric": _raised(
                lambda: unused.evaluate(_input_fn(12, 4, binary=True), name="unused")
            ),
        },
        "close": {
            **_numbers(results),
            **_scalar_events(tf, os.path.join(model_dir, "eval")),
        },
    }


# ------------------------------------------------------ a wrapper reading the pairs
def _prefixed(model_fn, seen):
    """A user's wrapper that files `model_fn`'s metrics under `eval/`, unpacking each
    eval_metric_ops entry as the (value, update_op) pair 2.15's spec held (a Keras
    metric given too); `seen` gets what each entry was."""

    def wrapped(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        pairs = {}
        for name, entry in spec.eval_metric_ops.items():
            value, update = entry
            seen[name] = [type(entry).__name__, value.dtype.name]
            pairs["eval/" + name] = (value, update)
        return spec._replace(eval_metric_ops=pairs)

    return wrapped


@program
def keras_metrics_read_as_pairs(tf, workdir):
    """Evaluate (no checkpoint) 12 rows through the wrapper, on a TF1 model_fn and on a
    TF2-style one, both with Keras metric objects among their eval_metric_ops."""
    exact, close = {}, {}
    cases = {
        "tf1": lambda f, labels, mode, params: mixed_model_fn(f, labels, mode),
        "keras_layer": keras_layer_model_fn,
    }
    for case, model_fn in cases.items():
        seen = {}
        est = tf.estimator.Estimator(
            _prefixed(model_fn, seen), model_dir=os.path.join(workdir, case), params={}
        )
        results = est.evaluate(_input_fn(12, 4, binary=True, offset=30))
        exact[case] = {"entries": dict(sorted(seen.items())), "results": _results(results)}
        close[case] = _numbers({k: v for k, v in results.items() if k != "eval/confusion"})
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ refused metrics
def _bad_metric_ops(tf, case, labels, probability):
    mean = tf.compat.v1.metrics.mean(probability)
    if case == "tensor_alone":
        return {"mean": mean[0]}
    if case == "list":
        return {"mean": list(mean)}
    if case == "triple":
        return {"mean": (mean[0], mean[1], tf.no_op())}
    if case == "number_update":
        return {"mean": (mean[0], 1.0)}
    if case == "number_value":
        return {"mean": (0.5, mean[1])}
    if case == "not_a_dict":
        return [("mean", mean)]
    if case == "keras_not_updated":
        return {"auc": tf.keras.metrics.AUC(), "mean": mean}
    return {"mean": mean}


def bad_metrics_model_fn(features, labels, mode, params):
    import tensorflow as tf

    logits = _logits(tf, features, 1)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    metrics = _bad_metric_ops(tf, params["case"], labels, tf.sigmoid(logits))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


_BAD_CASES = [
    "tensor_alone",
    "list",
    "triple",
    "number_update",
    "number_value",
    "not_a_dict",
    "keras_not_updated",
]


@program
def metric_errors(tf, workdir):
    """Each refused eval_metric_ops evaluated from one trained model_dir."""
    model_dir = os.path.join(workdir, "model")
    trained = tf.estimator.Estimator(bad_metrics_model_fn, model_dir=model_dir, params={"case": ""})
    trained.train(_input_fn(12, 6, binary=True), steps=2)
    errors, results = {}, {}
    for case in _BAD_CASES:
        est = tf.estimator.Estimator(
            bad_metrics_model_fn, model_dir=model_dir, params={"case": case}
        )
        seen = {}

        def evaluate(est=est, seen=seen, case=case):
            seen.update(est.evaluate(_input_fn(12, 6, binary=True), name=case))

        errors[case] = _raised(evaluate)
        if seen:
            results[case] = _results(seen)
    return {"exact": {"errors": errors, "results": results}, "close": {}}


# ---------------------------------------------------------------- add_metrics
def _probability(predictions):
    return predictions["logistic"]


def auc_pr_metric(labels, predictions):
    import tensorflow as tf

    return {"auc_pr": tf.compat.v1.metrics.auc(labels, _probability(predictions), curve="PR")}


def weighted_mean_metric(labels, predictions, features):
    import tensorflow as tf

    mean = tf.keras.metrics.Mean(name="weighted_probability")
    mean.update_state(_probability(predictions), sample_weight=features["weight"])
    return {"weighted_probability": mean}


def config_metric(labels, predictions, config):
    import tensorflow as tf

    name = f"mean_logit_every_{config.save_checkpoints_steps}"
    return {name: tf.compat.v1.metrics.mean(predictions["logits"])}


def overriding_metric(labels, predictions):
    import tensorflow as tf

    accuracy = tf.keras.metrics.BinaryAccuracy(threshold=0.7)
    accuracy.update_state(labels, _probability(predictions))
    return {"accuracy": accuracy}


def listed_metric(labels, predictions):
    """(name, metric) pairs, not a dict."""
    import tensorflow as tf

    return [
        ("true_positives", tf.compat.v1.metrics.true_positives(labels, predictions["class_ids"]))
    ]


def no_metric(labels, predictions):
    return None


def misnamed_metric(labels, preds):
    return {}


@program
def added_metrics(tf, workdir):
    """A LinearClassifier (zero-initialised), trained 4 steps, evaluated through five
    add_metrics in a chain (one replacing `accuracy`, one of (name, metric) pairs); a
    metric_fn returning None."""
    columns = [
        tf.feature_column.numeric_column("x", shape=[4]),
        tf.feature_column.numeric_column("weight"),
    ]
    model_dir = os.path.join(workdir, "model")
    config = tf.estimator.RunConfig(save_checkpoints_steps=50)
    est = tf.estimator.LinearClassifier(columns, model_dir=model_dir, config=config)
    est.train(_input_fn(24, 6, binary=True), steps=4)
    chained = est
    for metric_fn in (
        auc_pr_metric,
        weighted_mean_metric,
        config_metric,
        overriding_metric,
        listed_metric,
    ):
        chained = tf.estimator.add_metrics(chained, metric_fn)
    no_metrics = tf.estimator.add_metrics(est, no_metric)
    results, saved, skipped = _evaluated(
        tf, chained, _input_fn(12, 4, binary=True, offset=30), name="added"
    )
    return {
        "exact": {
            "results": _results(results),
            "saving_dict": saved,
            "skipped": skipped,
            "misnamed": _raised(lambda: tf.estimator.add_metrics(est, misnamed_metric)),
            "none": _raised(lambda: no_metrics.evaluate(_input_fn(4, 4, binary=True), name="none")),
            "eval_folders": _folders(model_dir),
            "eval_events": _events(tf, os.path.join(model_dir, "eval_added")),
        },
        "close": {
            **_numbers(results),
            **_scalar_events(tf, os.path.join(model_dir, "eval_added")),
        },
    }


# ------------------------------------------------------------ loss-only evaluation
def loss_only_model_fn(features, labels, mode):
    """The EVAL spec carries predictions and a loss, no eval_metric_ops."""
    import tensorflow as tf

    logits = _logits(tf, features, 1)
    predictions = {"probability": tf.sigmoid(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = _train_op(tf, loss) if mode == tf.estimator.ModeKeys.TRAIN else None
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


@program
def loss_only_evaluation(tf, workdir):
    seen, values = {}, {}
    for kind, cls in (
        ("v2", tf.estimator.Estimator),
        ("v1", tf.compat.v1.estimator.Estimator),
    ):
        model_dir = os.path.join(workdir, kind)
        est = cls(loss_only_model_fn, model_dir=model_dir)
        est.train(_input_fn(12, 6, binary=True), steps=2)
        results, saved, _ = _evaluated(tf, est, _input_fn(12, 4, binary=True))
        named = est.evaluate(_input_fn(12, 4, binary=True), steps=1, name="validation set")
        seen[kind] = {
            "results": _results(results),
            "named": _results(named),
            "saving_dict": saved,
            "eval_dir": os.path.relpath(est.eval_dir("validation set"), model_dir),
            "folders": _folders(model_dir),
            "eval_events": _events(tf, os.path.join(model_dir, "eval_validation set")),
        }
        values[kind] = {
            **_numbers(results),
            **{f"named/{k}": v for k, v in _numbers(named).items()},
        }
    return {"exact": seen, "close": values}
