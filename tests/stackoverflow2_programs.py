"""A second sweep of StackOverflow's tf.estimator questions (and tensorflow/tensorflow's
and tensorflow/estimator's issues), on the topics tests/stackoverflow_programs.py left
aside: the asker's code and the answer's, after `tf_upgrade_v2`, on tiny made-up data.

- `initializable_iterator`: "How to use make_initializable_iterator with tf.estimator"
  (the input_fn returns the iterator's `get_next()`): without a hook (the asker's
  FailedPreconditionError), with the answer's `IteratorInitializerHook` running the
  initializer in `after_create_session`, and with the initializer put in the
  TABLE_INITIALIZERS collection (the other answer);
- `generator_input_fn`: `Dataset.from_generator` input_fns (output_types and
  output_shapes, output_signature, a generator of dicts), trained, evaluated with
  `steps=None` to the end of the data, predicted;
- `class_metrics`: `eval_metric_ops` askers build: `mean_per_class_accuracy`,
  precision/recall at thresholds (a vector), the F1 of the "F1 score in Estimator"
  answer (`tf.group` of two update ops), a `tf.keras.metrics` object updated in
  model_fn, `auc` with its summation method;
- `py_func_model_fn`: `tf.compat.v1.py_func` and `tf.numpy_function` in a model_fn (a
  feature computed in numpy, a metric over a py_func's batch value), and predictions
  carrying the py_func's output;
- `partial_restore`: "restore only part of a model from another checkpoint":
  `init_from_checkpoint` with an assignment map of a scope, of one variable, a name the
  checkpoint lacks; `WarmStartSettings` with a regex;
- `predict_options`: `predict_keys` (a list, a key not there), `yield_single_examples=
  False` (the batch), `checkpoint_path` in predict and evaluate (an older checkpoint);
- `multi_output_model_fn`: two outputs with dict labels, two losses summed, metrics of
  each, predictions of each; `tf.estimator.MultiHead` over two heads;
- `params_in_model_fn`: a model_fn changing `params` (what `est.params` then shows, what
  the next call sees);
- `summaries_in_model_fn`: `tf.compat.v1.summary.scalar/histogram/image/text` in a
  model_fn: the tags and steps in model_dir and in `eval/`;
- `train_evaluate_loop`: train/evaluate alternating in a Python loop (`steps`, then
  `max_steps` reached: "Skipping training"), what each evaluate() returns and the log;
- `run_config_options`: `keep_checkpoint_max`, both save_checkpoints_* (refused),
  `log_step_count_steps`, `session_config`, no checkpoints by steps or secs;
- `string_labels_and_weights`: canned classifiers with `label_vocabulary` (classes as
  bytes, a label not in it, int labels given a vocabulary), class weights through a
  `weight_column`;
- and askers' other edges: predictions of two batch sizes, a model_fn's summaries written
  by a SummarySaverHook in evaluation, predict/evaluate before any checkpoint,
  evaluate's `steps` past the data, labels left out, `var_name_to_prev_var_name`, Keras
  metric objects (one never updated, a result tensor), a model_dir reused by a changed
  model (wider, deeper, given twice), an input_fn called too soon (a dataset, a tuple),
  a Scaffold's `init_fn` restoring a Saver's part, a confusion matrix and other metrics
  not scalars, a LoggingTensorHook's formatter, TPUEstimator's `eval_metrics` (and
  `CrossShardOptimizer` off a TPU), `params` as a Namespace, `config` in model_fn,
  `log_step_count_steps=None`, predictions a bare tensor, `tf.py_function` in map and
  model_fn.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (errors as [type, first line], keys, names, log lines: equal) and
`close` values (models from zeros on unshuffled data: 1e-4). `tests/test_stackoverflow2.py`
compares them with 2.15's recording (`tests/tf215/record_family.py
stackoverflow2_programs`, into `tests/data/tf215/stackoverflow2.json`).
"""

import os
import re

import numpy as np

from tests.model_fn_idiom_programs import _events, _numbers, _seen
from tests.program_registry import registry
from tests.stackoverflow_programs import _refused
from tests.tf1_fidelity_programs import _info_lines
from tests.tf1_fidelity_programs import marked_lines as _log
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "stackoverflow2.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


# ------------------------------------------------------------------------ data
def _rows(n=12, offset=0):
    """n rows of 3 features, 3 classes (class k pushes feature k up), no randomness."""
    rows = np.arange(offset, offset + n)
    classes = (rows * 7 % 3).astype(np.int64)
    x = ((rows[:, None] * np.arange(1, 4)[None, :]) % 5 / 5.0).astype(np.float32)
    x[np.arange(n), classes] += 1.0
    return x, classes


def _input_fn(tf, n=12, batch=4, binary=False, epochs=1):
    x, classes = _rows(n)
    labels = (classes == 0).astype(np.int64) if binary else classes

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, labels))
        return data.repeat(epochs).batch(batch)

    return input_fn


def _dense(tf, inputs, units, name):
    return tf.compat.v1.layers.dense(
        inputs, units, name=name, kernel_initializer=tf.compat.v1.zeros_initializer()
    )


def _train_op(tf, loss, rate=0.5):
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(rate)
    return optimizer.minimize(loss, tf.compat.v1.train.get_global_step())


def _classifier_model_fn(features, labels, mode, params=None):
    """The custom-estimator tutorial's shape: dense logits from zeros, 3 classes."""
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    classes = tf.argmax(logits, 1)
    predictions = {"classes": classes, "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops=metrics
    )


def _evaluation(results):
    """evaluate()'s result: [type, dtype, shape] of each, and its numbers."""
    return {k: _seen(v) for k, v in sorted(results.items())}, _numbers(results)


# ------------------------------------------------------------ initializable iterator
def _iterator_hook(tf):
    class IteratorInitializerHook(tf.compat.v1.train.SessionRunHook):
        def __init__(self):
            super().__init__()
            self.initializer_func = None

        def after_create_session(self, session, coord):
            self.initializer_func(session)

    return IteratorInitializerHook()


def _iterator_input_fn(tf, hook=None, collection=False, n=12):
    x, classes = _rows(n)

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, classes)).batch(4)
        iterator = tf.compat.v1.data.make_initializable_iterator(data)
        if hook is not None:
            hook.initializer_func = lambda sess: sess.run(iterator.initializer)
        if collection:
            tf.compat.v1.add_to_collection(
                tf.compat.v1.GraphKeys.TABLE_INITIALIZERS, iterator.initializer
            )
        return iterator.get_next()

    return input_fn


@program
def initializable_iterator(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "bare"))
    exact["no_hook"] = _said(
        lambda: est.train(_iterator_input_fn(tf), steps=2), r"GetNext\(\) failed[^.]*\."
    )
    hook = _iterator_hook(tf)
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "hook"))
    est.train(_iterator_input_fn(tf, hook), hooks=[hook])
    hook = _iterator_hook(tf)
    results = est.evaluate(_iterator_input_fn(tf, hook), hooks=[hook])
    exact["hook"], close["hook"] = _evaluation(results)
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "collection"))
    est.train(_iterator_input_fn(tf, collection=True), steps=5)
    results = est.evaluate(_iterator_input_fn(tf, collection=True))
    exact["collection"], close["collection"] = _evaluation(results)
    predicted = list(est.predict(_iterator_input_fn(tf, collection=True)))
    exact["predicted"] = [len(predicted), sorted(predicted[0])]
    close["probabilities"] = [p["probabilities"].tolist() for p in predicted[:3]]
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ from_generator
def _generator_input_fn(tf, kind, n=12):
    x, classes = _rows(n)

    def rows():
        for i in range(n):
            yield x[i], classes[i]

    def dict_rows():
        for i in range(n):
            yield {"x": x[i]}, classes[i]

    def input_fn():
        if kind == "types":
            data = tf.data.Dataset.from_generator(
                rows, (tf.float32, tf.int64), (tf.TensorShape([3]), tf.TensorShape([]))
            )
            data = data.map(lambda f, c: ({"x": f}, c))
        elif kind == "signature":
            data = tf.data.Dataset.from_generator(
                dict_rows,
                output_signature=(
                    {"x": tf.TensorSpec([3], tf.float32)},
                    tf.TensorSpec([], tf.int64),
                ),
            )
        else:  # features alone, for predict
            data = tf.data.Dataset.from_generator(
                lambda: ({"x": row} for row in x), {"x": tf.float32}, {"x": [3]}
            )
        return data.batch(5)

    return input_fn


@program
def generator_input_fn(tf, workdir):
    exact, close = {}, {}
    for kind in ("types", "signature"):
        est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, kind))
        with _info_lines() as lines:
            est.train(_generator_input_fn(tf, kind), steps=50)
            results = est.evaluate(_generator_input_fn(tf, kind), steps=None)
        exact[kind], close[kind] = _evaluation(results)
        exact[f"{kind}_log"] = _log(lines, workdir, ("Loss for final step", "Evaluation ["))
    predicted = est.predict(_generator_input_fn(tf, "features"), yield_single_examples=False)
    batches = list(predicted)
    exact["batches"] = [[_seen(b["classes"]), _seen(b["probabilities"])] for b in batches]
    close["predicted"] = np.concatenate([b["probabilities"] for b in batches]).tolist()
    return {"exact": exact, "close": close}


# -------------------------------------------------------------------- class metrics
def _metrics_model_fn(features, labels, mode, params):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    classes = tf.argmax(logits, 1)
    probabilities = tf.nn.softmax(logits)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"classes": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    positive = tf.cast(tf.equal(labels, 0), tf.float32)
    score = probabilities[:, 0]
    metrics = {
        "mean_per_class_accuracy": tf.compat.v1.metrics.mean_per_class_accuracy(labels, classes, 3),
        "precision_at": tf.compat.v1.metrics.precision_at_thresholds(positive, score, [0.3, 0.5]),
        "recall_at": tf.compat.v1.metrics.recall_at_thresholds(positive, score, [0.3, 0.5]),
        "auc": tf.compat.v1.metrics.auc(positive, score, summation_method="careful_interpolation"),
    }
    precision, precision_op = tf.compat.v1.metrics.precision(positive, tf.round(score))
    recall, recall_op = tf.compat.v1.metrics.recall(positive, tf.round(score))
    f1 = 2 * precision * recall / (precision + recall + 1e-7)
    metrics["f1"] = (f1, tf.group(precision_op, recall_op))
    if params.get("keras_metric"):
        keras_metric = tf.keras.metrics.Precision(name="keras_precision")
        keras_metric.update_state(positive, score)
        metrics["keras_precision"] = keras_metric
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops=metrics
    )


@program
def class_metrics(tf, workdir):
    exact, close = {}, {}
    for name, keras_metric in (("v1", False), ("keras", True)):
        est = tf.estimator.Estimator(
            _metrics_model_fn,
            os.path.join(workdir, name),
            params={"keras_metric": keras_metric},
        )
        est.train(_input_fn(tf, epochs=3))
        with _info_lines() as lines:
            results = est.evaluate(_input_fn(tf))
        exact[name], close[name] = _evaluation(results)
        exact[f"{name}_log"] = _log(lines, workdir, ("Saving dict for global step",))
        exact[f"{name}_events"] = _events(tf, os.path.join(workdir, name, "eval"))
    return {"exact": exact, "close": close}


# ---------------------------------------------------------------- py_func model_fn
def _np_scaled(x):
    return (x * 2.0 - 1.0).astype(np.float32)


def _np_batch_accuracy(labels, classes):
    return np.float32(np.mean(labels == classes))


def _py_func_model_fn(features, labels, mode, params):
    import tensorflow as tf

    if params["how"] == "numpy_function":
        scaled = tf.numpy_function(_np_scaled, [features["x"]], tf.float32)
    else:
        scaled = tf.compat.v1.py_func(_np_scaled, [features["x"]], tf.float32)
    scaled.set_shape([None, 3])
    logits = _dense(tf, scaled, 3, "logits")
    classes = tf.argmax(logits, 1)
    predictions = {"classes": classes, "scaled": scaled}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    batch_accuracy = tf.compat.v1.py_func(_np_batch_accuracy, [labels, classes], tf.float32)
    metrics = {"py_func_accuracy": tf.compat.v1.metrics.mean(batch_accuracy)}
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops=metrics
    )


@program
def py_func_model_fn(tf, workdir):
    exact, close = {}, {}
    for how in ("py_func", "numpy_function"):
        est = tf.estimator.Estimator(
            _py_func_model_fn, os.path.join(workdir, how), params={"how": how}
        )
        est.train(_input_fn(tf, epochs=2))
        exact[how], close[how] = _evaluation(est.evaluate(_input_fn(tf)))
        first = next(est.predict(_input_fn(tf), predict_keys=["scaled"]))
        exact[f"{how}_predicted"] = {k: _seen(v) for k, v in first.items()}
        close[f"{how}_scaled"] = first["scaled"].tolist()
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ partial restore
def _two_part_model_fn(features, labels, mode, params):
    """An 'encoder' scope and a 'head' scope (the asker's pretrained part and new part)."""
    import tensorflow as tf

    with tf.compat.v1.variable_scope("encoder"):
        hidden = tf.compat.v1.layers.dense(
            features["x"], 4, tf.nn.relu, kernel_initializer=tf.compat.v1.ones_initializer()
        )
    with tf.compat.v1.variable_scope("head"):
        logits = _dense(tf, hidden, 3, "logits")
    if params.get("from"):
        tf.compat.v1.train.init_from_checkpoint(params["from"], params["assignment_map"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss, 0.1))


def _variables(est, names):
    return {name: np.asarray(est.get_variable_value(name)).ravel().tolist() for name in names}


def _pretrained(tf, workdir):
    """The asker's first model, trained (in `workdir`/first), and its variables' names."""
    first = tf.estimator.Estimator(_two_part_model_fn, os.path.join(workdir, "first"), params={})
    first.train(_input_fn(tf, epochs=2))
    return first, ["encoder/dense/kernel", "encoder/dense/bias", "head/logits/kernel"]


@program
def partial_restore(tf, workdir):
    exact, close = {}, {}
    first, names = _pretrained(tf, workdir)
    close["first"] = _variables(first, names)
    maps = {
        "scope": {"encoder/": "encoder/"},
        "one_variable": {"encoder/dense/bias": "encoder/dense/bias"},
        "missing": {"decoder/": "encoder/"},
    }
    for name, assignment_map in maps.items():
        params = {"from": first.model_dir, "assignment_map": assignment_map}
        est = tf.estimator.Estimator(_two_part_model_fn, os.path.join(workdir, name), params=params)
        exact[name] = _refused(lambda est=est: est.train(_input_fn(tf), steps=1))
        if exact[name] == ["OK"]:
            exact[f"{name}_variables"] = sorted(est.get_variable_names())
            close[name] = _variables(est, names)
    warm = tf.estimator.WarmStartSettings(first.model_dir, vars_to_warm_start="encoder.*")
    est = tf.estimator.Estimator(
        _two_part_model_fn, os.path.join(workdir, "warm"), params={}, warm_start_from=warm
    )
    est.train(_input_fn(tf), steps=1)
    close["warm"] = _variables(est, names)
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ predict options
@program
def predict_options(tf, workdir):
    exact, close = {}, {}
    config = tf.estimator.RunConfig(save_checkpoints_steps=3, keep_checkpoint_max=10)
    est = tf.estimator.Estimator(_classifier_model_fn, workdir, config=config)
    est.train(_input_fn(tf, epochs=2))
    listed = est.predict(_input_fn(tf), predict_keys=["probabilities"])
    exact["keys"] = sorted(next(listed))
    exact["missing_key"] = _refused(lambda: est.predict(_input_fn(tf), predict_keys=["logits"]))
    batches = list(est.predict(_input_fn(tf), yield_single_examples=False))
    exact["batches"] = [{k: _seen(v) for k, v in sorted(b.items())} for b in batches]
    older = os.path.join(workdir, "model.ckpt-3")
    first = next(est.predict(_input_fn(tf), checkpoint_path=older))
    close["older_predicted"] = first["probabilities"].tolist()
    close["latest_predicted"] = next(est.predict(_input_fn(tf)))["probabilities"].tolist()
    with _info_lines() as lines:
        results = est.evaluate(_input_fn(tf), checkpoint_path=older, name="older")
    exact["older"], close["older"] = _evaluation(results)
    exact["older_log"] = _log(lines, workdir, ("Restoring parameters", "Saving dict"))
    exact["folders"] = sorted(n for n in os.listdir(workdir) if not n.startswith("events"))
    exact["missing_checkpoint"] = _refused(
        lambda: est.evaluate(_input_fn(tf), checkpoint_path=os.path.join(workdir, "nope"))
    )
    return {"exact": exact, "close": close}


# ------------------------------------------------------------ multi-output model_fn
def _multi_output_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "class_logits")
    amount = tf.squeeze(_dense(tf, features["x"], 1, "amount"), 1)
    predictions = {"classes": tf.argmax(logits, 1), "amount": amount}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    class_loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels["kind"], logits)
    amount_loss = tf.compat.v1.losses.mean_squared_error(labels["amount"], amount)
    loss = class_loss + amount_loss
    metrics = {
        "kind_accuracy": tf.compat.v1.metrics.accuracy(labels["kind"], predictions["classes"]),
        "amount_rmse": tf.compat.v1.metrics.root_mean_squared_error(labels["amount"], amount),
    }
    return tf.estimator.EstimatorSpec(
        mode, predictions, loss, _train_op(tf, loss, 0.1), eval_metric_ops=metrics
    )


def _multi_input_fn(tf, x, classes):
    labels = {"kind": classes, "amount": x.sum(axis=1)}
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).batch(4)


def _multi_head_model_fn(features, labels, mode):
    import tensorflow as tf

    heads = [
        tf.estimator.MultiClassHead(3, name="kind"),
        tf.estimator.RegressionHead(name="amount"),
    ]
    head = tf.estimator.MultiHead(heads)
    logits = {
        "kind": _dense(tf, features["x"], 3, "kind_logits"),
        "amount": _dense(tf, features["x"], 1, "amount_logits"),
    }
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    return head.create_estimator_spec(
        features,
        mode,
        logits,
        labels=labels,
        train_op_fn=lambda loss: optimizer.minimize(loss, tf.compat.v1.train.get_global_step()),
    )


@program
def multi_output_model_fn(tf, workdir):
    exact, close = {}, {}
    x, classes = _rows()
    made = {"outputs": _multi_output_model_fn, "multi_head": _multi_head_model_fn}
    for name, model_fn in made.items():
        est = tf.estimator.Estimator(model_fn, os.path.join(workdir, name))
        exact[f"{name}_train"] = _refused(
            lambda est=est: est.train(_multi_input_fn(tf, x, classes))
        )
        if exact[f"{name}_train"] != ["OK"]:
            continue
        exact[name], close[name] = _evaluation(est.evaluate(_multi_input_fn(tf, x, classes)))
        first = next(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)))
        exact[f"{name}_predicted"] = sorted(
            "/".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in first
        )
    return {"exact": exact, "close": close}


# ---------------------------------------------------------------- params mutation
def _params_model_fn(features, labels, mode, params):
    import tensorflow as tf

    params["calls"] = params.get("calls", 0) + 1
    params.setdefault("seen", []).append(mode)
    logits = _dense(tf, features["x"], params["n_classes"], "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))


@program
def params_in_model_fn(tf, workdir):
    exact = {}
    given = {"n_classes": 3}
    est = tf.estimator.Estimator(_params_model_fn, workdir, params=given)
    est.train(_input_fn(tf), steps=1)
    est.evaluate(_input_fn(tf), steps=1)
    exact["est_params"] = repr(est.params)
    exact["given"] = repr(given)
    given["n_classes"] = 2
    exact["after_change"] = repr(est.params)
    exact["not_a_dict"] = _refused(
        lambda: tf.estimator.Estimator(_params_model_fn, workdir, params=[("n_classes", 3)])
    )
    return {"exact": exact}


# --------------------------------------------------------------- summaries in model_fn
def _summaries_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    tf.compat.v1.summary.scalar("my_loss", loss)
    tf.compat.v1.summary.histogram("logits", logits)
    image = tf.reshape(features["x"], [-1, 1, 3, 1])
    tf.compat.v1.summary.image("inputs", image, max_outputs=2)
    tf.compat.v1.summary.text("mode", tf.constant(mode))
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
    tf.compat.v1.summary.scalar("train_accuracy", accuracy[1])
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=_train_op(tf, loss),
        eval_metric_ops={"accuracy": accuracy},
    )


@program
def summaries_in_model_fn(tf, workdir):
    config = tf.estimator.RunConfig(save_summary_steps=2, save_checkpoints_steps=None)
    est = tf.estimator.Estimator(_summaries_model_fn, workdir, config=config)
    est.train(_input_fn(tf, epochs=2))
    est.evaluate(_input_fn(tf))
    return {"exact": _written(tf, workdir, train="", eval="eval")}


def _written(tf, workdir, **folders):
    """{name: the events in that folder of `workdir`}, and every file's name."""
    found = {name: _events(tf, os.path.join(workdir, folder)) for name, folder in folders.items()}
    return {**found, "files": listing(workdir)}


# ------------------------------------------------------------- train/evaluate loop
@program
def train_evaluate_loop(tf, workdir):
    exact, close = {}, {}
    config = tf.estimator.RunConfig(save_checkpoints_steps=4, log_step_count_steps=2)
    est = tf.estimator.Estimator(_classifier_model_fn, workdir, config=config)
    markers = ("Skipping training", "Saving dict", "Loss for final step", "loss = ")
    with _info_lines() as lines:
        for epoch in range(2):
            est.train(_input_fn(tf), steps=2)
            results = est.evaluate(_input_fn(tf), steps=1)
            close[f"steps_{epoch}"] = _numbers(results)
        for epoch in range(2):
            est.train(_input_fn(tf, epochs=5), max_steps=7)
            close[f"max_steps_{epoch}"] = _numbers(est.evaluate(_input_fn(tf)))
    exact["log"] = _log(lines, workdir, markers)
    exact["checkpoints"] = [
        os.path.basename(path)
        for path in tf.train.get_checkpoint_state(workdir).all_model_checkpoint_paths
    ]
    exact["latest"] = os.path.basename(est.latest_checkpoint())
    exact["both"] = _refused(lambda: est.train(_input_fn(tf), steps=1, max_steps=2))
    exact["zero"] = _refused(lambda: est.train(_input_fn(tf), steps=0))
    return {"exact": exact, "close": close}


# ---------------------------------------------------------------- RunConfig options
@program
def run_config_options(tf, workdir):
    exact = {}
    exact["both_saves"] = _refused(
        lambda: tf.estimator.RunConfig(save_checkpoints_steps=2, save_checkpoints_secs=60)
    )
    exact["negative_keep"] = _refused(lambda: tf.estimator.RunConfig(keep_checkpoint_max=-1))
    session_config = tf.compat.v1.ConfigProto(
        allow_soft_placement=True, log_device_placement=False, device_count={"GPU": 0}
    )
    config = tf.estimator.RunConfig(
        model_dir=os.path.join(workdir, "kept"),
        keep_checkpoint_max=2,
        save_checkpoints_steps=2,
        log_step_count_steps=3,
        session_config=session_config,
    )
    est = tf.estimator.Estimator(_classifier_model_fn, config=config)
    with _info_lines() as lines:
        est.train(_input_fn(tf, epochs=3))
    exact["kept_files"] = listing(os.path.join(workdir, "kept"))
    exact["log"] = _log(lines, workdir, ("loss = ", "global_step/sec", "Saving checkpoints"))
    exact["config"] = [
        est.config.keep_checkpoint_max,
        est.config.save_checkpoints_steps,
        est.config.save_checkpoints_secs,
        est.config.log_step_count_steps,
        est.config.session_config.allow_soft_placement,
    ]
    config = tf.estimator.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "none"), config)
    est.train(_input_fn(tf), steps=2)
    exact["none_files"] = listing(os.path.join(workdir, "none"))
    exact["default_secs"] = [tf.estimator.RunConfig().save_checkpoints_secs]
    return {"exact": exact}


# ------------------------------------------------- string labels, weights per class
def _string_input_fn(tf, vocabulary, weights=None, batch=4):
    x, classes = _rows()
    labels = np.array(vocabulary)[classes]
    features = {"x": x}
    if weights is not None:
        features["weight"] = np.array(weights, dtype=np.float32)[classes]
    return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch)


@program
def string_labels_and_weights(tf, workdir):
    exact, close = {}, {}
    vocabulary = ["cat", "dog", "fish"]
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    est = tf.estimator.LinearClassifier(
        columns, n_classes=3, label_vocabulary=vocabulary, model_dir=os.path.join(workdir, "v")
    )
    est.train(_string_input_fn(tf, vocabulary), steps=3)
    exact["vocabulary"], close["vocabulary"] = _evaluation(
        est.evaluate(_string_input_fn(tf, vocabulary))
    )
    first = next(est.predict(_string_input_fn(tf, vocabulary)))
    exact["predicted"] = {k: _seen(v) for k, v in sorted(first.items())}
    exact["classes"] = [[str(c) for c in first[k].tolist()] for k in ("classes", "all_classes")]
    exact["unknown_label"] = _said(
        lambda: est.evaluate(_string_input_fn(tf, ["cat", "dog", "bird"])), _LABELS_MUST
    )
    exact["no_vocabulary"] = _refused(
        lambda: tf.estimator.LinearClassifier(columns, n_classes=3, label_vocabulary=["cat", "dog"])
    )
    weighted = tf.estimator.LinearClassifier(
        columns,
        n_classes=3,
        weight_column="weight",
        label_vocabulary=vocabulary,
        model_dir=os.path.join(workdir, "w"),
    )
    weighted.train(_string_input_fn(tf, vocabulary, [1.0, 5.0, 0.5]), steps=3)
    results = weighted.evaluate(_string_input_fn(tf, vocabulary, [1.0, 5.0, 0.5]))
    exact["weighted"], close["weighted"] = _evaluation(results)
    exact["no_weight_feature"] = _refused(
        lambda: weighted.evaluate(_string_input_fn(tf, vocabulary))
    )
    binary = tf.estimator.DNNClassifier(
        [4],
        columns,
        label_vocabulary=["no", "yes"],
        model_dir=os.path.join(workdir, "b"),
    )
    exact["int_labels"] = _refused(lambda: binary.train(_input_fn(tf, binary=True), steps=1))
    exact["binary_third_class"] = _said(
        lambda: binary.train(_string_input_fn(tf, ["no", "yes", "maybe"]), steps=1), _LABELS_MUST
    )
    exact.update(_v1_label_refusals(tf, workdir, columns, vocabulary))
    return {"exact": exact, "close": close}


_LABELS_MUST = r"Labels must[^\]]*"  # (the assertion's words, not its ops' names)


def _v1_label_refusals(tf, workdir, columns, vocabulary):
    """tf.compat.v1.estimator's classifiers given a label out of their vocabulary or
    range (2.15's V1 heads worded their range check apart)."""
    v1 = tf.compat.v1.estimator
    named = v1.LinearClassifier(
        columns, n_classes=3, label_vocabulary=vocabulary, model_dir=os.path.join(workdir, "1")
    )
    ids = v1.LinearClassifier(columns, n_classes=2, model_dir=os.path.join(workdir, "2"))
    return {
        "v1_unknown_label": _said(
            lambda: named.train(_string_input_fn(tf, ["cat", "dog", "bird"]), steps=1),
            _LABELS_MUST,
        ),
        "v1_label_past_n_classes": _said(lambda: ids.train(_input_fn(tf), steps=1), _LABELS_MUST),
    }


# ------------------------------------------------------------ more askers' mistakes
def _said(call, pattern):
    """[type, first line, the part of the message matching `pattern`] of `call()`'s
    error (a graph's error says what went wrong past its first line), or ["OK"]."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except Exception as error:  # (any error is the record)
        found = re.search(pattern, str(error))
        return [type(error).__name__, str(error).splitlines()[0], found and found.group(0)]
    return ["OK"]


def _uneven_model_fn(features, labels, mode, params):
    """Predictions of different batch sizes: a per-example class and a batch mean."""
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    predictions = {"classes": tf.argmax(logits, 1)}
    if params.get("mean"):
        predictions["mean"] = tf.reduce_mean(features["x"])
    if params.get("numpy"):
        predictions["numpy"] = np.zeros(3)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))


@program
def prediction_shapes(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_uneven_model_fn, workdir, params={"mean": True})
    est.train(_input_fn(tf), steps=2)
    exact["single"] = _refused(lambda: est.predict(_input_fn(tf)))
    batches = list(est.predict(_input_fn(tf), yield_single_examples=False))
    exact["batches"] = [{k: _seen(v) for k, v in sorted(b.items())} for b in batches]
    close["means"] = [float(b["mean"]) for b in batches]
    numpy = tf.estimator.Estimator(_uneven_model_fn, workdir, params={"numpy": True})
    exact["numpy"] = _refused(lambda: numpy.predict(_input_fn(tf)))
    return {"exact": exact, "close": close}


def _merged_summaries_model_fn(features, labels, mode, params):
    """The answer to "summaries in evaluation": a SummarySaverHook over merge_all."""
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    tf.compat.v1.summary.scalar("batch_loss", loss)
    tf.compat.v1.summary.histogram("logits", logits)
    hook = tf.compat.v1.train.SummarySaverHook(
        save_steps=1,
        output_dir=os.path.join(params["model_dir"], "eval_batches"),
        summary_op=tf.compat.v1.summary.merge_all(),
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), evaluation_hooks=[hook]
    )


@program
def summary_hook_in_evaluation(tf, workdir):
    est = tf.estimator.Estimator(_merged_summaries_model_fn, workdir, params={"model_dir": workdir})
    est.train(_input_fn(tf), steps=3)
    est.evaluate(_input_fn(tf))
    return {"exact": _written(tf, workdir, eval_batches="eval_batches", eval="eval")}


@program
def before_training(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_classifier_model_fn, workdir)
    exact["latest"] = [est.latest_checkpoint()]
    exact["names"] = _refused(est.get_variable_names)
    exact["value"] = _refused(lambda: est.get_variable_value("logits/kernel"))
    for key in ("names", "value"):
        exact[key] = [part.replace(os.path.basename(workdir), "<workdir>") for part in exact[key]]
    markers = ("Could not find trained model", "Saving dict", "Restoring parameters")
    with _info_lines() as lines:
        first = next(est.predict(_input_fn(tf)))
        results = est.evaluate(_input_fn(tf))
    exact["predicted"] = {k: _seen(v) for k, v in sorted(first.items())}
    exact["evaluated"], close["evaluated"] = _evaluation(results)
    close["probabilities"] = first["probabilities"].tolist()
    exact["log"] = _log(lines, workdir, markers)
    exact["files"] = listing(workdir)
    return {"exact": exact, "close": close}


@program
def evaluation_steps(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_classifier_model_fn, workdir)
    est.train(_input_fn(tf), steps=3)
    for steps in (2, 10, None):
        with _info_lines() as lines:
            results = est.evaluate(_input_fn(tf), steps=steps, name=f"s{steps}")
        close[f"steps_{steps}"] = _numbers(results)
        exact[f"steps_{steps}"] = _log(lines, workdir, ("Evaluation [", "Inference Time"))
    repeated = _input_fn(tf, epochs=None)
    close["repeated"] = _numbers(est.evaluate(repeated, steps=5, name="repeated"))
    exact["bad_steps"] = _refused(lambda: est.evaluate(_input_fn(tf), steps=0))
    return {"exact": exact, "close": close}


def _features_only_input_fn(tf):
    x, _ = _rows()
    return lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)


@program
def labels_left_out(tf, workdir):
    exact = {}
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "custom"))
    exact["custom_train"] = _refused(lambda: est.train(_features_only_input_fn(tf), steps=1))
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    canned = tf.estimator.LinearClassifier(columns, model_dir=os.path.join(workdir, "c"))
    exact["canned_train"] = _refused(lambda: canned.train(_features_only_input_fn(tf), steps=1))
    canned.train(_input_fn(tf, binary=True), steps=1)
    exact["canned_evaluate"] = _refused(lambda: canned.evaluate(_features_only_input_fn(tf)))
    return {"exact": exact}


@program
def warm_start_renamed(tf, workdir):
    exact, close = {}, {}
    first, _ = _pretrained(tf, workdir)

    def renamed_model_fn(features, labels, mode):
        with tf.compat.v1.variable_scope("pretrained"):
            return _two_part_model_fn(features, labels, mode, {})

    names = {
        "pretrained/encoder/dense/kernel": "encoder/dense/kernel",
        "pretrained/encoder/dense/bias": "encoder/dense/bias",
    }
    warm = tf.estimator.WarmStartSettings(
        first.model_dir, vars_to_warm_start="pretrained/encoder.*", var_name_to_prev_var_name=names
    )
    est = tf.estimator.Estimator(
        renamed_model_fn, os.path.join(workdir, "renamed"), warm_start_from=warm
    )
    with _info_lines() as lines:
        est.train(_input_fn(tf), steps=1)
    exact["log"] = sorted(set(_log(lines, workdir, ("Warm-start", "Warm-starting"))))
    close["renamed"] = _variables(est, list(names))
    missing = tf.estimator.WarmStartSettings(
        first.model_dir, vars_to_warm_start="pretrained/encoder.*"
    )
    est = tf.estimator.Estimator(
        renamed_model_fn, os.path.join(workdir, "missing"), warm_start_from=missing
    )
    exact["missing"] = _refused(lambda: est.train(_input_fn(tf), steps=1))
    return {"exact": exact, "close": close}


def _keras_metrics_model_fn(features, labels, mode, params):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    probabilities = tf.nn.softmax(logits)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="acc")
    accuracy.update_state(labels, probabilities)
    auc = tf.keras.metrics.AUC(name="auc", num_thresholds=50)
    auc.update_state(tf.equal(labels, 0), probabilities[:, 0])
    mean = tf.keras.metrics.Mean(name="mean_loss")
    mean.update_state(loss)
    metrics = {"acc": accuracy, "auc": auc, "mean_loss": mean}
    if params.get("never_updated"):
        metrics["never_updated"] = tf.keras.metrics.Mean(name="never_updated")
    if params.get("result_tensor"):
        metrics["result_tensor"] = mean.result()
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops=metrics
    )


@program
def keras_metric_objects(tf, workdir):
    exact, close = {}, {}
    for name in ("plain", "never_updated", "result_tensor"):
        est = tf.estimator.Estimator(
            _keras_metrics_model_fn, os.path.join(workdir, name), params={name: True}
        )
        exact[f"{name}_train"] = _refused(lambda est=est: est.train(_input_fn(tf, epochs=2)))
        if exact[f"{name}_train"] == ["OK"]:
            exact[name], close[name] = _evaluation(est.evaluate(_input_fn(tf)))
    return {"exact": exact, "close": close}


def _sized_model_fn(features, labels, mode, params):
    """A hidden layer of `params["units"]` units (the asker changed it, model_dir kept)."""
    import tensorflow as tf

    hidden = tf.compat.v1.layers.dense(
        features["x"],
        params["units"],
        tf.nn.relu,
        name="hidden",
        kernel_initializer=tf.compat.v1.ones_initializer(),
    )
    if params.get("extra"):
        hidden = tf.compat.v1.layers.dense(hidden, 2, name="extra")
    logits = _dense(tf, hidden, 3, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss, 0.1))


@program
def model_dir_reused(tf, workdir):
    """ "Assign requires shapes of both tensors to match" / "Key not found in checkpoint"
    after changing the model and keeping model_dir; a model_dir given twice."""
    exact = {}
    tf.estimator.Estimator(_sized_model_fn, workdir, params={"units": 4}).train(
        _input_fn(tf), steps=2
    )
    changed = {"wider": {"units": 5}, "deeper": {"units": 4, "extra": True}}
    for name, params in changed.items():
        est = tf.estimator.Estimator(_sized_model_fn, workdir, params=params)
        exact[f"{name}_train"] = _refused(lambda est=est: est.train(_input_fn(tf), steps=1))
        exact[f"{name}_evaluate"] = _refused(lambda est=est: est.evaluate(_input_fn(tf)))
    other = tf.estimator.RunConfig(model_dir=os.path.join(workdir, "other"))
    exact["two_model_dirs"] = _refused(
        lambda: tf.estimator.Estimator(_sized_model_fn, workdir, config=other)
    )
    exact["two_model_dirs"][1] = exact["two_model_dirs"][1].replace(
        os.path.basename(workdir), "<workdir>"
    )
    return {"exact": exact}


@program
def input_fn_called_too_soon(tf, workdir):
    """`est.train(input_fn=train_input_fn(x, y))`: a dataset (or a tuple) given where a
    function was asked for."""
    x, classes = _rows()
    est = tf.estimator.Estimator(_classifier_model_fn, workdir)
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, classes)).batch(4)
    exact = {
        "dataset": _refused(lambda: est.train(input_fn=dataset, steps=1)),
        "tuple": _refused(lambda: est.train(input_fn=({"x": x}, classes), steps=1)),
        "no_input_fn": _refused(lambda: est.train(input_fn=None, steps=1)),
    }
    return {"exact": exact}


def _scaffold_model_fn(features, labels, mode, params):
    """The answer to "restore part of a model with a Saver": a Scaffold's init_fn."""
    import tensorflow as tf

    with tf.compat.v1.variable_scope("encoder"):
        hidden = tf.compat.v1.layers.dense(features["x"], 4, tf.nn.relu)
    with tf.compat.v1.variable_scope("head"):
        logits = _dense(tf, hidden, 3, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    encoder = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES, "encoder")
    saver = tf.compat.v1.train.Saver(encoder)

    def init_fn(scaffold, session):
        saver.restore(session, params["checkpoint"])

    scaffold = tf.compat.v1.train.Scaffold(init_fn=init_fn)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss, 0.0), scaffold=scaffold
    )


@program
def scaffold_init_fn_restore(tf, workdir):
    exact, close = {}, {}
    first, names = _pretrained(tf, workdir)
    checkpoint = first.latest_checkpoint()
    est = tf.estimator.Estimator(
        _scaffold_model_fn, os.path.join(workdir, "second"), params={"checkpoint": checkpoint}
    )
    with _info_lines() as lines:
        est.train(_input_fn(tf), steps=1)
    exact["log"] = _log(lines, workdir, ("Restoring parameters",))
    close["restored"] = _variables(est, names)
    close["first"] = _variables(first, names)
    return {"exact": exact, "close": close}


def _confusion_metric(tf, labels, classes, n):
    """The answer to "confusion matrix in eval_metric_ops": a local variable summed."""
    matrix = tf.compat.v1.get_local_variable(
        "confusion", [n, n], tf.int32, tf.compat.v1.zeros_initializer()
    )
    batch = tf.math.confusion_matrix(labels, classes, n, dtype=tf.int32)
    return matrix, tf.compat.v1.assign_add(matrix, batch)


def _named_metrics_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    classes = tf.argmax(logits, 1)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    labels64 = tf.cast(labels, tf.int64)
    metrics = {
        "metrics/accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
        "confusion_matrix": _confusion_metric(tf, labels, classes, 3),
        "precision_at_2": tf.compat.v1.metrics.precision_at_k(labels64[:, None], logits, 2),
        "recall_at_2": tf.compat.v1.metrics.recall_at_k(labels64[:, None], logits, 2),
        "auc_pr": tf.compat.v1.metrics.auc(
            tf.equal(labels, 0), tf.nn.softmax(logits)[:, 0], curve="PR"
        ),
        "mean_logits": tf.compat.v1.metrics.mean_tensor(tf.reduce_mean(logits, 0)),
        "count": tf.compat.v1.metrics.true_positives(tf.equal(labels, 0), tf.equal(classes, 0)),
    }
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops=metrics
    )


@program
def metrics_of_other_shapes(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_named_metrics_model_fn, workdir)
    est.train(_input_fn(tf, epochs=3))
    with _info_lines() as lines:
        results = est.evaluate(_input_fn(tf))
    exact["results"], close["results"] = _evaluation(results)
    exact["log"] = _log(lines, workdir, ("Saving dict", "Skipping summary"))
    exact["events"] = _events(tf, os.path.join(workdir, "eval"))
    return {"exact": exact, "close": close}


def _logging_hook_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
    hook = tf.compat.v1.train.LoggingTensorHook(
        {"loss": loss, "accuracy": accuracy[1]},
        every_n_iter=2,
        formatter=lambda values: "acc={accuracy:.2f} loss={loss:.3f}".format(**values),
    )
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=_train_op(tf, loss),
        training_hooks=[hook],
        eval_metric_ops={"accuracy": accuracy},
    )


@program
def logging_hook_formatter(tf, workdir):
    est = tf.estimator.Estimator(_logging_hook_model_fn, workdir)
    with _info_lines() as lines:
        est.train(_input_fn(tf, epochs=2))
    return {"exact": {"log": _log(lines, workdir, ("acc=",))}}


def _tpu_metric_fn(labels, logits):
    import tensorflow as tf

    classes = tf.argmax(logits, 1)
    return {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
        "per_class": tf.compat.v1.metrics.mean_per_class_accuracy(labels, classes, 3),
    }


def _tpu_model_fn(features, labels, mode, params):
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"classes": tf.argmax(logits, 1), "logits": logits}
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    if params["cross_shard"]:  # (the asker's; the answer wraps it only on a TPU)
        optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metrics=(_tpu_metric_fn, [labels, logits])
    )


def _tpu_input_fn(params):
    import tensorflow as tf

    x, classes = _rows()
    data = tf.data.Dataset.from_tensor_slices(({"x": x}, classes))
    return data.batch(params["batch_size"], drop_remainder=True)


@program
def tpu_estimator_metrics(tf, workdir):
    exact, close = {}, {}
    tpu = tf.compat.v1.estimator.tpu
    config = tpu.RunConfig(model_dir=workdir, tpu_config=tpu.TPUConfig(iterations_per_loop=2))
    made = {}
    for cross_shard in (True, False):
        made[cross_shard] = tpu.TPUEstimator(
            _tpu_model_fn,
            config=config,
            use_tpu=False,
            train_batch_size=4,
            eval_batch_size=4,
            predict_batch_size=4,
            params={"cross_shard": cross_shard},
        )
    exact["cross_shard"] = _said(
        lambda: made[True].train(_tpu_input_fn, max_steps=2), r"CrossReplicaSum[^\n]*"
    )
    est = made[False]
    est.train(_tpu_input_fn, max_steps=6)
    with _info_lines() as lines:
        results = est.evaluate(_tpu_input_fn, steps=3)
    exact["evaluated"], close["evaluated"] = _evaluation(results)
    exact["log"] = _log(lines, workdir, ("Saving dict",))
    predicted = list(est.predict(_tpu_input_fn, predict_keys=["logits"]))
    exact["predicted"] = [len(predicted), sorted(predicted[0])]
    close["logits"] = predicted[0]["logits"].tolist()
    return {"exact": exact, "close": close}


def _namespace_model_fn(features, labels, mode, params):
    """Hyperparameters read as attributes (an argparse Namespace where HParams was)."""
    import tensorflow as tf

    logits = _dense(tf, features["x"], params.n_classes, "logits")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss, params.learning_rate)
    )


def _no_params_model_fn(features, labels, mode):
    return _classifier_model_fn(features, labels, mode)


def _config_model_fn(features, labels, mode, config):
    import tensorflow as tf

    tf.compat.v1.logging.info(
        "model_fn config: %s %s %s",
        os.path.basename(config.model_dir),
        config.save_checkpoints_steps,
        config.keep_checkpoint_max,
    )
    return _classifier_model_fn(features, labels, mode)


@program
def params_and_config_kinds(tf, workdir):
    import argparse

    exact, close = {}, {}
    namespace = argparse.Namespace(n_classes=3, learning_rate=0.5)
    est = tf.estimator.Estimator(_namespace_model_fn, os.path.join(workdir, "ns"), params=namespace)
    exact["namespace"] = _refused(lambda: est.train(_input_fn(tf), steps=2))
    if exact["namespace"] == ["OK"]:
        close["namespace"] = _numbers(est.evaluate(_input_fn(tf)))
        exact["namespace_params"] = [type(est.params).__name__, repr(est.params)]
    exact["no_params_arg"] = _refused(
        lambda: tf.estimator.Estimator(_no_params_model_fn, workdir, params={"n": 1})
    )
    config = tf.estimator.RunConfig(save_checkpoints_steps=3, keep_checkpoint_max=None)
    est = tf.estimator.Estimator(_config_model_fn, os.path.join(workdir, "config"), config=config)
    with _info_lines() as lines:
        est.train(_input_fn(tf, epochs=3))
    exact["config_log"] = _log(lines, workdir, ("model_fn config",))
    exact["keep_all"] = listing(os.path.join(workdir, "config"))
    quiet = tf.estimator.RunConfig(log_step_count_steps=None, save_summary_steps=None)
    est = tf.estimator.Estimator(_classifier_model_fn, os.path.join(workdir, "quiet"), config=quiet)
    with _info_lines() as lines:
        est.train(_input_fn(tf, epochs=3))
    exact["quiet_log"] = _log(lines, workdir, ("loss = ", "global_step/sec", "Loss for final"))
    exact["quiet_events"] = _events(tf, os.path.join(workdir, "quiet"))
    return {"exact": exact, "close": close}


def _tensor_predictions_model_fn(features, labels, mode):
    """Predictions a bare tensor, not a dict (the asker's `predictions=logits`)."""
    import tensorflow as tf

    logits = _dense(tf, features["x"], 3, "logits")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=tf.nn.softmax(logits))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))


def _signature_outputs(tf, export_dir):
    loaded = tf.saved_model.load(export_dir)
    return {
        name: sorted(signature.structured_outputs)
        for name, signature in sorted(loaded.signatures.items())
    }


@program
def tensor_predictions(tf, workdir):
    exact, close = {}, {}
    est = tf.estimator.Estimator(_tensor_predictions_model_fn, os.path.join(workdir, "model"))
    est.train(_input_fn(tf), steps=3)
    rows = list(est.predict(_input_fn(tf)))
    exact["rows"] = [len(rows), _seen(rows[0])]
    close["first"] = rows[0].tolist()
    exact["with_keys"] = _refused(lambda: est.predict(_input_fn(tf), predict_keys=["x"]))
    batches = list(est.predict(_input_fn(tf), yield_single_examples=False))
    exact["batches"] = [_seen(b) for b in batches]
    feature_spec = {"x": tf.io.FixedLenFeature([3], tf.float32)}
    serving = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    exported = est.export_saved_model(os.path.join(workdir, "export"), serving)
    exact["signatures"] = _signature_outputs(tf, exported.decode())
    return {"exact": exact, "close": close}


def _py_function_double(x):
    return x * 2.0


def _py_function_model_fn(features, labels, mode):
    import tensorflow as tf

    doubled = tf.py_function(_py_function_double, [features["x"]], tf.float32)
    doubled.set_shape([None, 3])
    return _classifier_model_fn({"x": doubled}, labels, mode)


@program
def py_function_in_model_fn_and_map(tf, workdir):
    exact, close = {}, {}
    x, classes = _rows()

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices((x, classes))
        data = data.map(lambda f, c: (tf.py_function(_py_function_double, [f], tf.float32), c))
        return data.map(lambda f, c: ({"x": tf.reshape(f, [3])}, c)).batch(4)

    est = tf.estimator.Estimator(_py_function_model_fn, workdir)
    exact["train"] = _refused(lambda: est.train(input_fn, steps=3))
    if exact["train"] == ["OK"]:
        exact["evaluated"], close["evaluated"] = _evaluation(est.evaluate(input_fn))
        close["predicted"] = next(est.predict(input_fn))["probabilities"].tolist()
    return {"exact": exact, "close": close}


def _multi_label_input_fn(tf, words):
    """Two words a row at most, as a SparseTensor (`from_dense` drops the "" padding)."""
    x, _ = _rows()

    def input_fn():
        labels = tf.sparse.from_dense(tf.constant(words * 2))
        return {"x": tf.constant(x[:4])}, labels

    return input_fn


@program
def multi_label_vocabulary(tf, workdir):
    """A MultiLabelHead's string labels, one not in its `label_vocabulary` (2.15 looked it
    up as -1, which `to_indicator` refused), then the answer's labels."""
    exact, close = {}, {}
    head = tf.estimator.MultiLabelHead(3, label_vocabulary=["a", "b", "c"])
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    est = tf.estimator.LinearEstimator(head, columns, model_dir=workdir)
    exact["unknown"] = _said(
        lambda: est.train(_multi_label_input_fn(tf, [["a", ""], ["d", "b"]]), steps=1),
        r"(?m)^[^\n]*(assertion failed|indices|out of|invalid)[^\n]*$",
    )
    known = _multi_label_input_fn(tf, [["a", ""], ["c", "b"]])
    est.train(known, steps=2)
    exact["known"], close["known"] = _evaluation(est.evaluate(known, steps=1))
    return {"exact": exact, "close": close}
