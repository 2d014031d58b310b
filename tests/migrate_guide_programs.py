"""The TF1 Estimator halves of TensorFlow's migration guides (tensorflow/docs
`site/en/guide/migrate/*.ipynb`), each reproduced as its cells write it, on tiny data.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the guide's reader sees, in parts that `tests/test_migrate_guides.py`
compares with 2.15's recording (`tests/tf215/record_family.py migrate_guide_programs`, into
`tests/data/tf215/migrate_guides.json`): `exact` (keys, listings, log lines' shapes,
event tags, variable names, signatures, printed lines without their numbers: equal),
`close` (values of models whose every random op is seeded: 1e-4) and `loose` (values a
random draw the guide leaves unseeded decides: 35%).

Where a guide's cell cannot run here (MNIST or titanic downloads, a TPU, a cluster) the
program keeps its calls and flow on made-up data of the same shape; where a guide's
model draws unseeded initial weights the program passes a seeded initializer (or
`tf_random_seed`), so the values mean something.
"""

import contextlib
import functools
import glob
import io
import os
import re
import shutil
import tempfile

import numpy as np
import pandas as pd

from tests.program_registry import registry
from tests.tf1_fidelity_programs import LOG_MARKERS, _info_lines, _normalized, _raised
from tests.tf1_sample_programs import _messages
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "migrate_guides.json")
SEED = 7
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")

# The guides' shared toy regression (migrating_estimator, logging_stop_hook, ...).
FEATURES = [[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]
LABELS = [[0.3], [0.5], [0.7]]
EVAL_FEATURES = [[4.0, 4.5], [5.0, 5.5], [6.0, 6.5]]
EVAL_LABELS = [[0.8], [0.9], [1.0]]

PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _loss_line_count(lines):
    """How many `loss = ..., step = N` lines the Estimator logged (not their steps: a TF1
    model_fn's global step is read beside its increment, so 2.15 logged 0 or 1 first)."""
    return len(_messages(lines, "loss = "))


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items()) if k != "global_step"}


def _user_lines(lines, workdir, extra=()):
    """The Estimator's log lines a reader of the guide sees (LOG_MARKERS and `extra`),
    with numbers and folders replaced, each once."""
    kept = []
    for line in lines:
        first = line.splitlines()[0] if line else line
        if any(marker in first for marker in (*LOG_MARKERS, *extra)):
            normalized = re.sub(r"/tmp\w*/\S*", "<tmp>", _normalized(first, workdir))
            if not kept or kept[-1] != normalized:
                kept.append(normalized)
    return kept


@contextlib.contextmanager
def _without_model_dir(make):
    """`make()`'s Estimator, made as the guides make it with no model_dir; its temporary
    folder is removed afterwards."""
    estimator = make()
    try:
        yield estimator
    finally:
        shutil.rmtree(estimator.model_dir, ignore_errors=True)


def _guide_estimator(tf, model_fn):
    """`tf1.estimator.Estimator(model_fn=model_fn)`, as the guides make it (see above)."""
    return _without_model_dir(lambda: tf.compat.v1.estimator.Estimator(model_fn=model_fn))


def _in_temp(model_dir):
    return os.path.dirname(os.path.abspath(model_dir)) == os.path.abspath(tempfile.gettempdir())


# ------------------------------------------------------------ the guides' model_fns
def _input_fn():
    import tensorflow as tf

    return tf.compat.v1.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1)


def _eval_input_fn():
    import tensorflow as tf

    return tf.compat.v1.data.Dataset.from_tensor_slices((EVAL_FEATURES, EVAL_LABELS)).batch(1)


def _seeded_dense(tf, units):
    """The guides' `tf1.layers.Dense(units)`, its glorot kernel seeded."""
    return tf.compat.v1.layers.Dense(
        units, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED)
    )


def _adagrad_minimize(tf, loss):
    """The guides' `tf1.train.AdagradOptimizer(0.05).minimize(loss, global_step=...)`."""
    optimizer = tf.compat.v1.train.AdagradOptimizer(0.05)
    return optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())


def _model_fn(features, labels, mode):
    """migrating_estimator's (and mirrored_strategy's, multi_worker's) model_fn."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    logits = _seeded_dense(tf, 1)(features)
    loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
    train_op = _adagrad_minimize(tf, loss)
    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _kernel_and_bias(estimator):
    return {
        "kernel": estimator.get_variable_value("dense/kernel").ravel().tolist(),
        "bias": estimator.get_variable_value("dense/bias").ravel().tolist(),
    }


# ------------------------------------------------------------------ migrating_estimator
@program
def migrating_estimator(tf, workdir):
    """`Estimator(model_fn=_model_fn)` with no model_dir, train to the end of the
    input, evaluate."""
    with _info_lines() as lines, _guide_estimator(tf, _model_fn) as estimator:
        estimator.train(_input_fn)
        result = estimator.evaluate(_eval_input_fn)
        files = listing(estimator.model_dir)
        names = estimator.get_variable_names()
        values = _kernel_and_bias(estimator)
    return {
        "exact": {
            "temporary_model_dir": _in_temp(estimator.model_dir),
            "eval_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "loss_lines": _loss_line_count(lines),
            "lines": _user_lines(lines, workdir, ("Using temporary folder",)),
            "files": files,
            "variables": names,
        },
        "close": {**_floats(result), **values},
    }


# ------------------------------------------------------------------ logging_stop_hook
def _logging_model_fn(features, labels, mode):
    """logging_stop_hook's model_fn: a StopAtStepHook and two LoggingTensorHooks (a list
    of tensors every step, a dict every 3 seconds) in training_hooks."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    dense = _seeded_dense(tf, 1)
    logits = dense(features)
    loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
    train_op = _adagrad_minimize(tf, loss)
    stop_hook = tf1.train.StopAtStepHook(num_steps=2)
    kernel_name = tf.identity(dense.weights[0])
    bias_name = tf.identity(dense.weights[1])
    logging_weight_hook = tf1.train.LoggingTensorHook(
        tensors=[kernel_name, bias_name], every_n_iter=1
    )
    logging_loss_hook = tf1.train.LoggingTensorHook(
        {"loss from LoggingTensorHook": loss}, every_n_secs=3
    )
    return tf1.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        training_hooks=[stop_hook, logging_weight_hook, logging_loss_hook],
    )


def _logged_values(message):
    return [float(m.group()) for m in _NUMBER.finditer(message)]


def _timed(message):
    """(the message without its ` (N sec)` ending, whether it had one)."""
    timed = message.endswith(" sec)")
    return (message[: message.rindex(" (")] if timed else message), timed


def _tensor_message(message):
    """A LoggingTensorHook line over a list of tensors, as [[the tensor as printed (its
    name, shape, dtype), its values], ..., whether it ends with the time since the last]."""
    body, timed = _timed(message)
    parts = re.split(r'(?:^|, )(?=Tensor\(")', body)[1:]
    shown = [part.split(") = ", 1) for part in parts]
    return [[tag + ")", _logged_values(values)] for tag, values in shown] + [timed]


@program
def logging_stop_hook(tf, workdir):
    """Training stops after 2 steps; the weights are logged by tensor each step, the loss
    by its key (the first step: a 3-second timer fires first at once)."""
    with _info_lines() as lines, _guide_estimator(tf, _logging_model_fn) as estimator:
        estimator.train(_input_fn)
        step = int(estimator.get_variable_value("global_step"))
    weights = [_tensor_message(m) for m in _messages(lines, 'Tensor("')]
    loss, timed = _timed(_messages(lines, "loss from LoggingTensorHook = ")[0])
    return {
        "exact": {
            "global_step": step,
            "weights_logged": [[part[0] for part in w[:-1]] + w[-1:] for w in weights],
            "first_loss_logged": [_NUMBER.sub("N", loss), timed],
            "loss_lines": _loss_line_count(lines),
        },
        # (Not the weights' values: their identities are read beside the step's update,
        # before or after it, in 2.15 as here.)
        "close": {"loss": _logged_values(loss)},
    }


# ------------------------------------------------------------ sessionrunhook_callback
def _repeated_input_fn():
    import tensorflow as tf

    return tf.compat.v1.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1).repeat(20)


def _logger_hook(tf):
    """sessionrunhook_callback's LoggerHook: prints every 10th of its own step counts."""
    import time
    from datetime import datetime

    class LoggerHook(tf.compat.v1.train.SessionRunHook):
        """Logs loss and runtime."""

        def begin(self):
            self._step = -1
            self._start_time = time.time()
            self.log_frequency = 10

        def before_run(self, run_context):
            self._step += 1

        def after_run(self, run_context, run_values):
            if self._step % self.log_frequency == 0:
                current_time = time.time()
                duration = current_time - self._start_time
                self._start_time = current_time
                examples_per_sec = self.log_frequency / max(duration, 1e-9)
                print(
                    "Time:",
                    datetime.now(),
                    ", Step #:",
                    self._step,
                    ", Examples per second:",
                    examples_per_sec,
                )

    return LoggerHook()


@program
def sessionrunhook_callback(tf, workdir):
    """A custom SessionRunHook counting its own steps: what it prints, step by step."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), _guide_estimator(tf, _model_fn) as estimator:
        estimator.train(_repeated_input_fn, hooks=[_logger_hook(tf)])
        values = _kernel_and_bias(estimator)
        step = int(estimator.get_variable_value("global_step"))
    shown = [line for line in printed.getvalue().splitlines() if line.startswith("Time:")]
    return {
        "exact": {
            "global_step": step,
            "printed_steps": [int(line.split("Step #: ")[1].split(" ")[0]) for line in shown],
            "printed_shape": sorted({_NUMBER.sub("N", line) for line in shown}),
        },
        "close": values,
    }


# ---------------------------------------------------------------- metrics_optimizers
CLASS_LABELS = [0, 0, 1]
EVAL_CLASS_LABELS = [0, 1, 1]


def _class_input_fn():
    import tensorflow as tf

    return tf.compat.v1.data.Dataset.from_tensor_slices((FEATURES, CLASS_LABELS)).batch(1)


def _class_eval_input_fn():
    import tensorflow as tf

    data = (EVAL_FEATURES, EVAL_CLASS_LABELS)
    return tf.compat.v1.data.Dataset.from_tensor_slices(data).batch(1)


def _metrics_model_fn(features, labels, mode):
    """metrics_optimizers' model_fn: a per-example (unreduced) loss, predictions as one
    tensor, tf.compat.v1.metrics.accuracy."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    logits = _seeded_dense(tf, 2)(features)
    predictions = tf.math.argmax(input=logits, axis=1)
    loss = tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    train_op = _adagrad_minimize(tf, loss)
    accuracy = tf1.metrics.accuracy(labels=labels, predictions=predictions)
    return tf1.estimator.EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"accuracy": accuracy},
    )


def mean_squared_error(labels, predictions):
    import tensorflow as tf

    labels = tf.cast(labels, predictions.dtype)
    return {
        "mean_squared_error": tf.compat.v1.metrics.mean_squared_error(
            labels=labels, predictions=predictions
        )
    }


@program
def metrics_optimizers(tf, workdir):
    """tf.compat.v1.metrics in a model_fn, then tf1.estimator.add_metrics with a metric
    on the integer predictions; the loss lines of a per-example loss."""
    tf1 = tf.compat.v1
    with _info_lines() as lines, _guide_estimator(tf, _metrics_model_fn) as estimator:
        estimator.train(_class_input_fn)
        first = estimator.evaluate(_class_eval_input_fn)
        estimator = tf1.estimator.add_metrics(estimator, mean_squared_error)
        second = estimator.evaluate(_class_eval_input_fn)
        # (Not in the guide: its model_fn computes the loss in every mode.)
        predict_error = _raised(lambda: estimator.predict(_class_eval_input_fn))
    return {
        "exact": {
            "first_keys": sorted(first),
            "second_keys": sorted(second),
            "add_metrics_type": type(estimator).__name__,
            "loss_lines": [_NUMBER.sub("N", m) for m in _messages(lines, "loss = ")],
            "final_loss_line": [_NUMBER.sub("N", m) for m in _messages(lines, "Loss for final")],
            "predict_error": predict_error[:1],
        },
        "close": {
            **{f"first/{k}": v for k, v in _floats(first).items()},
            **{f"second/{k}": v for k, v in _floats(second).items()},
        },
    }


# ---------------------------------------------------------------------- early_stopping
def _digit_images(n, seed):
    """MNIST's shape shrunk to 8x8: uint8 images (class k lights row k % 8), labels."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n).astype(np.int64)
    images = rng.randint(0, 80, size=(n, 8, 8)).astype(np.uint8)
    for i, label in enumerate(labels):
        images[i, label % 8, :] = 255
    return images, labels


def normalize_img(image, label):
    import tensorflow as tf

    return tf.cast(image, tf.float32) / 255.0, label


def _early_input_fn():
    import tensorflow as tf

    ds_train = tf.data.Dataset.from_tensor_slices(_digit_images(64, 0))
    ds_train = ds_train.map(normalize_img, num_parallel_calls=tf.data.AUTOTUNE)
    return ds_train.batch(16).repeat(100)


def _early_eval_input_fn():
    import tensorflow as tf

    ds_test = tf.data.Dataset.from_tensor_slices(_digit_images(32, 1))
    ds_test = ds_test.map(normalize_img, num_parallel_calls=tf.data.AUTOTUNE)
    return ds_test.batch(16)


def _early_model_fn(features, labels, mode):
    """early_stopping's model_fn (its layers seeded, 16 hidden units for 128)."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    flatten = tf1.layers.Flatten()(features)
    features = tf1.layers.Dense(
        16, "relu", kernel_initializer=tf1.glorot_uniform_initializer(seed=SEED)
    )(flatten)
    logits = _seeded_dense(tf, 10)(features)
    loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    optimizer = tf1.train.AdagradOptimizer(0.005)
    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _stop_after(calls, count):
    """A should_stop_fn that says stop on its `count`th call (the guide's asks whether
    20 seconds passed): a deterministic stand-in that counts its calls in `calls`."""

    def should_stop_fn():
        calls.append(len(calls) + 1)
        return len(calls) >= count

    return should_stop_fn


def _early_stopped(tf, model_dir, should_stop_fn, **every):
    tf1 = tf.compat.v1
    estimator = tf1.estimator.Estimator(model_fn=_early_model_fn, model_dir=model_dir)
    early_stopping_hook = tf1.estimator.experimental.make_early_stopping_hook(
        estimator=estimator, should_stop_fn=should_stop_fn, **every
    )
    train_spec = tf1.estimator.TrainSpec(input_fn=_early_input_fn, hooks=[early_stopping_hook])
    eval_spec = tf1.estimator.EvalSpec(input_fn=_early_eval_input_fn)
    result = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return estimator, result


@program
def early_stopping(tf, workdir):
    """make_early_stopping_hook in train_and_evaluate: the guide's timer (1 second) with
    a time limit already passed, then every 5 steps with a predicate true on its third
    call: where training stops, what train_and_evaluate returns."""
    import time

    start_time = time.time()
    max_train_seconds = 0

    def should_stop_fn():
        return time.time() - start_time >= max_train_seconds

    with _info_lines() as lines:
        timed, timed_result = _early_stopped(
            tf,
            os.path.join(workdir, "timed"),
            should_stop_fn,
            run_every_secs=1,
            run_every_steps=None,
        )
    calls = []
    counted, counted_result = _early_stopped(
        tf,
        os.path.join(workdir, "counted"),
        _stop_after(calls, 3),
        run_every_secs=None,
        run_every_steps=5,
    )
    metrics, exports = counted_result
    return {
        "exact": {
            "timed_step": int(timed.get_variable_value("global_step")),
            "timed_result": [sorted(timed_result[0]), timed_result[1]],
            "counted_step": int(counted.get_variable_value("global_step")),
            "counted_calls": len(calls),
            "counted_result": [type(counted_result).__name__, sorted(metrics), exports],
            "eval_step": int(metrics["global_step"]),
            "stop_lines": _user_lines(lines, workdir, ("early stopping", "Early stop")),
            "files": listing(os.path.join(workdir, "counted")),
        },
        "close": {"loss": float(metrics["loss"])},
    }


# ------------------------------------------- checkpoint_saver, tensorboard, evaluator
def _numpy_inputs(tf, train, test):
    """The guides' numpy_input_fns: 10 shuffled epochs of batches of 50, and 10 epochs
    of the test set in order (numpy_input_fn's default batch of 128)."""
    tf1 = tf.compat.v1
    (x_train, y_train), (x_test, y_test) = train, test
    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": x_train}, y=y_train.astype(np.int32), num_epochs=10, batch_size=50, shuffle=True
    )
    test_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": x_test}, y=y_test.astype(np.int32), num_epochs=10, shuffle=False
    )
    return train_input_fn, test_input_fn


def _mnist_like():
    (x_train, y_train), (x_test, y_test) = _digit_images(120, 2), _digit_images(40, 3)
    return (x_train / 255.0, y_train), (x_test / 255.0, y_test)


def _mnist_classifier(tf, dropout, **kwargs):
    tf1 = tf.compat.v1
    feature_columns = [tf1.feature_column.numeric_column("x", shape=[8, 8])]
    return tf1.estimator.DNNClassifier(
        feature_columns=feature_columns,
        hidden_units=[16, 8],
        optimizer=tf1.train.AdamOptimizer(0.001),
        n_classes=10,
        dropout=dropout,
        **kwargs,
    )


def _saving_every_step(tf, model_dir):
    """The guides' classifier under `RunConfig(save_summary_steps=1,
    save_checkpoints_steps=1)` (seeded here)."""
    config = tf.compat.v1.estimator.RunConfig(
        save_summary_steps=1, save_checkpoints_steps=1, tf_random_seed=SEED
    )
    return _mnist_classifier(tf, 0.2, model_dir=model_dir, config=config)


def _saved_steps(lines, prefix):
    found = re.compile(re.escape(prefix) + r" (\d+)")
    return [int(m.group(1)) for m in map(found.search, lines) if m]


@program
def checkpoint_saver(tf, workdir):
    """checkpoint_saver's and tensorboard's train_and_evaluate: a checkpoint and
    summaries every step, an evaluation after each checkpoint (throttle_secs=0): the
    model_dir, its event tags, the evaluations' steps."""
    tf1 = tf.compat.v1
    path = os.path.join(workdir, "model")
    classifier = _saving_every_step(tf, path)
    train_input_fn, test_input_fn = _numpy_inputs(tf, *_mnist_like())
    train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=10)
    eval_spec = tf1.estimator.EvalSpec(input_fn=test_input_fn, steps=10, throttle_secs=0)
    with _info_lines() as lines:
        metrics, exports = tf1.estimator.train_and_evaluate(
            estimator=classifier, train_spec=train_spec, eval_spec=eval_spec
        )
    return {
        "exact": {
            "result": [sorted(metrics), exports],
            "global_step": int(metrics["global_step"]),
            "files": listing(classifier.model_dir),
            "train_tags": event_tags(path),
            "eval_tags": event_tags(os.path.join(path, "eval")),
            "saved_steps": _saved_steps(lines, "Saving checkpoints for"),
            "evaluated_steps": _saved_steps(lines, "Saving dict for global step"),
            "variables": classifier.get_variable_names(),
        },
        "loose": _floats(metrics),
    }


@program
def evaluator(tf, workdir):
    """evaluator's train_and_evaluate: no model_dir, the default RunConfig (a checkpoint
    at the start and the end only), so one evaluation at the end."""
    tf1 = tf.compat.v1
    with (
        _info_lines() as lines,
        _without_model_dir(lambda: _mnist_classifier(tf, 0.2)) as classifier,
    ):
        train_input_fn, test_input_fn = _numpy_inputs(tf, *_mnist_like())
        train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=10)
        eval_spec = tf1.estimator.EvalSpec(input_fn=test_input_fn, steps=10, throttle_secs=0)
        metrics, exports = tf1.estimator.train_and_evaluate(
            estimator=classifier, train_spec=train_spec, eval_spec=eval_spec
        )
        eval_tags = event_tags(os.path.join(classifier.model_dir, "eval"))
    return {
        "exact": {
            "temporary_model_dir": _in_temp(classifier.model_dir),
            "result": [sorted(metrics), exports],
            "global_step": int(metrics["global_step"]),
            "eval_tags": eval_tags,
            "saved_steps": _saved_steps(lines, "Saving checkpoints for"),
            "evaluated_steps": _saved_steps(lines, "Saving dict for global step"),
            "evaluation_lines": _user_lines(lines, workdir, ("Evaluation [",)),
        }
    }


def _exports_seen(tf, seen):
    """An exporter noting each call's evaluated step and finality (it exports nothing)."""

    class ExportsSeen(tf.estimator.Exporter):
        name = "seen"

        def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
            seen.append([int(eval_result["global_step"]), bool(is_the_final_export)])

    return ExportsSeen()


@program
def final_export_by_max_steps(tf, workdir):
    """train_and_evaluate's exports when training ends at max_steps, before it (the input
    runs out) and with none: only an evaluation at max_steps is the final export; a
    saving listener's calls; what it returns. A canned classifier and a TF1 model_fn."""
    tf1 = tf.compat.v1
    train_input_fn, test_input_fn = _numpy_inputs(tf, *_mnist_like())
    every = tf1.estimator.RunConfig(save_checkpoints_steps=5)
    estimators = {
        "dnn_classifier": (
            lambda: _mnist_classifier(tf, 0.2, config=every),
            train_input_fn,
            test_input_fn,
        ),
        "tf1_model_fn": (
            lambda: tf1.estimator.Estimator(
                _model_fn, config=every.replace(save_checkpoints_steps=1)
            ),
            _input_fn,
            _eval_input_fn,
        ),
    }
    found = {}
    for name, (make, input_fn, eval_input_fn) in estimators.items():
        for max_steps in (None, 100, 2):
            with _without_model_dir(make) as estimator:
                exports, calls = [], []
                train_spec = tf1.estimator.TrainSpec(
                    input_fn, max_steps=max_steps, saving_listeners=[_listener(tf, calls)]
                )
                eval_spec = tf1.estimator.EvalSpec(
                    eval_input_fn, steps=1, throttle_secs=0, exporters=[_exports_seen(tf, exports)]
                )
                metrics, returned = tf1.estimator.train_and_evaluate(
                    estimator, train_spec, eval_spec
                )
            found[f"{name}/{max_steps}"] = {
                "exports": exports,
                "returned": [int(metrics["global_step"]), returned],
                "listener": calls,
            }
    return {"exact": found}


@program
def no_checkpoint_saver(tf, workdir):
    """RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None), as guides set it
    to turn saving off: what training leaves in model_dir, then saving listeners refused.
    A canned regressor and a TF1 model_fn."""
    tf1 = tf.compat.v1
    off = {"save_checkpoints_steps": None, "save_checkpoints_secs": None}
    column = tf1.feature_column.numeric_column("x", shape=[2])
    estimators = {
        "linear_regressor": (
            lambda config: tf1.estimator.LinearRegressor([column], config=config),
            lambda: _input_fn().map(lambda x, y: ({"x": x}, y)),
        ),
        "tf1_model_fn": (
            lambda config: tf1.estimator.Estimator(_model_fn, config=config),
            _input_fn,
        ),
    }
    found = {}
    for name, (make, input_fn) in estimators.items():
        model_dir = os.path.join(workdir, name)
        estimator = make(tf1.estimator.RunConfig(model_dir=model_dir, **off))
        estimator.train(input_fn, steps=2)
        found[name] = {
            "files": listing(model_dir),
            "variables": _raised(estimator.get_variable_names),
            "with_listener": _raised(
                functools.partial(
                    estimator.train,
                    input_fn,
                    steps=1,
                    saving_listeners=[tf1.train.CheckpointSaverListener()],
                )
            ),
        }
    return {"exact": found}


# --------------------------------------------------------------------- fault_tolerance
def _interrupt_hook(tf):
    class InterruptHook(tf.compat.v1.train.SessionRunHook):
        # A hook for artificially interrupting training.
        def begin(self):
            self._step = -1

        def before_run(self, run_context):
            self._step += 1

        def after_run(self, run_context, run_values):
            if self._step == 5:
                raise RuntimeError("Interruption")

    return InterruptHook()


@program
def fault_tolerance(tf, workdir):
    """A hook interrupts training at its sixth step; a new DNNClassifier on the same
    model_dir resumes from the last checkpoint to max_steps."""
    path = os.path.join(workdir, "model")
    classifier = _saving_every_step(tf, path)
    train_input_fn, _ = _numpy_inputs(tf, *_mnist_like())
    printed = None
    try:
        classifier.train(input_fn=train_input_fn, hooks=[_interrupt_hook(tf)], max_steps=10)
    except Exception as e:
        printed = f"{type(e).__name__}:{e}"
    interrupted = listing(path)
    classifier = _saving_every_step(tf, path)
    with _info_lines() as lines:
        classifier.train(input_fn=train_input_fn, max_steps=10)
    return {
        "exact": {
            "printed": printed,
            "interrupted_files": interrupted,
            "global_step": int(classifier.get_variable_value("global_step")),
            "resumed_from": [re.sub(r".*/", "", m) for m in _messages(lines, "Restoring param")],
            "saved_steps": _saved_steps(lines, "Saving checkpoints for"),
            "files": listing(path),
        }
    }


# ------------------------------------------------------------------------ saved_model
def add_two(input):
    return input + 2


def _add_two_model_fn(features, labels, mode):
    """saved_model's model_fn: predictions a tensor, a step-counting train_op, a
    constant loss, a PredictOutput as serving_default."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    output = add_two(features["input"])
    step = tf1.train.get_global_step()
    return tf.estimator.EstimatorSpec(
        mode,
        predictions=output,
        train_op=step.assign_add(1),
        loss=tf.constant(0.0),
        export_outputs={
            tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: tf.estimator.export.PredictOutput(
                {"output": output}
            )
        },
    )


@contextlib.contextmanager
def _working_dir(folder):
    """The guide's relative paths, under `folder`."""
    before = os.getcwd()
    os.makedirs(folder, exist_ok=True)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _load_tf1(tf, path, input):
    """saved_model's load_tf1: the serving signature's tensors by name in a Session."""
    tf1 = tf.compat.v1
    with tf.Graph().as_default(), tf1.Session() as sess:
        meta_graph = tf1.saved_model.load(sess, ["serve"], path)
        sig_def = meta_graph.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        input_name = sig_def.inputs["input"].name
        output_name = sig_def.outputs["output"].name
        shapes = [
            [d.size for d in sig_def.inputs["input"].tensor_shape.dim],
            [d.size for d in sig_def.outputs["output"].tensor_shape.dim],
        ]
        return [input_name, output_name, shapes], sess.run(
            output_name, feed_dict={input_name: input}
        ).tolist()


def _load_tf2(tf, path, input):
    loaded = tf.saved_model.load(path)
    signature = loaded.signatures[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    return signature(tf.constant(input))["output"].numpy().tolist()


@program
def saved_model(tf, workdir):
    """Export the Estimator's inference graph (a raw receiver of a dummy scalar), move it
    to a set path, load it with tf1.saved_model.load and tf.saved_model.load."""
    with _working_dir(workdir), _info_lines() as lines:
        est = tf.estimator.Estimator(_add_two_model_fn, "estimator-checkpoints")

        def train_fn():
            return tf.data.Dataset.from_tensors({"input": 3.0})

        est.train(train_fn, steps=1)
        serving_input_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
            {"input": tf.constant(3.0)}
        )
        estimator_path = est.export_saved_model("exported-estimator", serving_input_fn)
        shutil.move(estimator_path, "estimator-model")
        tf1_names, tf1_output = _load_tf1(tf, "estimator-model", [5.0])
        tf2_output = _load_tf2(tf, "estimator-model", [5.0])
        model_dir = est.model_dir
    shown = estimator_path.decode() if isinstance(estimator_path, bytes) else estimator_path
    return {
        "exact": {
            "model_dir": model_dir,
            "export_path": [type(estimator_path).__name__, re.sub(r"\d{10}", "<ts>", shown)],
            "tf1_names": tf1_names,
            "signatures": signatures(os.path.join(workdir, "estimator-model")),
            "export_files": listing(os.path.join(workdir, "estimator-model")),
            "model_files": listing(os.path.join(workdir, "estimator-checkpoints")),
            "lines": _user_lines(lines, workdir),
        },
        "close": {"tf1": tf1_output, "tf2": tf2_output},
    }


# -------------------------------------------------------------- migrating_checkpoints
def print_checkpoint(tf, save_path):
    """The guide's print_checkpoint, as lines (the object graph's value left out)."""
    reader = tf.train.load_checkpoint(save_path)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    lines = [f"Checkpoint at '{save_path}':"]
    for key in sorted(shapes):
        value = "..." if key == "_CHECKPOINTABLE_OBJECT_GRAPH" else reader.get_tensor(key)
        lines.append(
            f"  (key='{key}', shape={shapes[key]}, dtype={dtypes[key].name}, value={value})"
        )
    return lines


def model_fn_tf1_ckpt(features, labels, mode):
    """Adds 2 to the variable `var` in every train step; a name-based checkpoint."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    train_step = tf1.train.get_or_create_global_step()
    v = tf1.get_variable("var", shape=[], dtype=tf.float32, initializer=tf1.constant_initializer(0))
    return tf.estimator.EstimatorSpec(
        mode,
        predictions=v,
        train_op=tf.group(v.assign_add(2), train_step.assign_add(1)),
        loss=tf.constant(1.0),
        scaffold=None,
    )


def model_fn_tf2_ckpt(features, labels, mode):
    """The same model saving a TF2 (object-based) checkpoint: a tf.train.Checkpoint as
    the Scaffold's saver."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    train_step = tf1.train.get_or_create_global_step()
    v = tf1.get_variable("var", shape=[], dtype=tf.float32, initializer=tf1.constant_initializer(0))
    ckpt = tf.train.Checkpoint(var_list={"var": v}, step=train_step)
    return tf.estimator.EstimatorSpec(
        mode,
        predictions=v,
        train_op=tf.group(v.assign_add(2), train_step.assign_add(1)),
        loss=tf.constant(1.0),
        scaffold=tf1.train.Scaffold(saver=ckpt),
    )


@program
def checkpoints_in_estimator(tf, workdir):
    """migrating_checkpoints' "TF2 checkpoints in Estimator": a TF1 checkpoint, then a
    TF2 one warm-started from it; the checkpoints as print_checkpoint shows them."""

    def train_fn():
        return tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6]))

    with _working_dir(workdir):
        est = tf.estimator.Estimator(model_fn_tf1_ckpt, "est-tf1")
        est.train(train_fn, steps=1)
        first = print_checkpoint(tf, tf.train.latest_checkpoint("est-tf1"))
        est = tf.estimator.Estimator(model_fn_tf2_ckpt, "est-tf2", warm_start_from="est-tf1")
        est.train(train_fn, steps=1)
        second = print_checkpoint(tf, tf.train.latest_checkpoint("est-tf2"))
        value = est.get_variable_value("var_list/var/.ATTRIBUTES/VARIABLE_VALUE")
        names = est.get_variable_names()
        est.train(train_fn, steps=1)  # (not in the guide: resuming from the TF2 checkpoint)
        resumed = print_checkpoint(tf, tf.train.latest_checkpoint("est-tf2"))
        files = listing("est-tf2")
    return {
        "exact": {
            "tf1": first,
            "tf2": second,
            "resumed": resumed,
            "value": float(value),
            "variables": names,
            "files": files,
        }
    }


# ------------------------------------------------------------------ canned_estimators
FEATURE_NAMES = ["age", "fare", "sex", "n_siblings_spouses", "parch", "class", "alone"]


def _titanic(n, seed):
    """The guide's titanic frames after its replace() calls: floats and small ints."""
    rng = np.random.RandomState(seed)
    sex = rng.randint(0, 2, size=n)
    klass = rng.randint(1, 4, size=n)
    frame = pd.DataFrame(
        {
            "age": rng.uniform(1, 70, size=n).round(),
            "fare": rng.exponential(30, size=n).round(2),
            "sex": sex,
            "n_siblings_spouses": rng.randint(0, 3, size=n),
            "parch": rng.randint(0, 3, size=n),
            "class": klass,
            "alone": rng.randint(0, 2, size=n),
        }
    )
    survived = ((sex == 1) & (klass < 3)) | (rng.uniform(size=n) < 0.15)
    return frame, pd.Series(survived.astype(np.int64), name="survived")


def create_sample_optimizer(tf):
    """The guide's 'tf1' optimizer: a callable making a legacy Keras Ftrl whose learning
    rate decays with tf1.train.exponential_decay on the global step."""
    tf1 = tf.compat.v1
    return lambda: tf.keras.optimizers.legacy.Ftrl(
        l1_regularization_strength=0.001,
        learning_rate=tf1.train.exponential_decay(
            learning_rate=0.1,
            global_step=tf1.train.get_global_step(),
            decay_steps=10000,
            decay_rate=0.9,
        ),
    )


def _canned_run(estimator, input_fn, eval_input_fn):
    estimator.train(input_fn=input_fn, steps=100)
    result = estimator.evaluate(input_fn=eval_input_fn, steps=10)
    return result, estimator.get_variable_names()


@program
def canned_estimators(tf, workdir):
    """LinearEstimator, DNNEstimator and DNNLinearCombinedEstimator with a BinaryClassHead
    and the callable decayed Ftrl, on titanic-shaped frames (the input ends before the
    100 steps, as the guide's does)."""
    tf1 = tf.compat.v1
    (x_train, y_train), (x_eval, y_eval) = _titanic(96, 4), _titanic(40, 5)

    def _input_fn():
        return tf1.data.Dataset.from_tensor_slices((dict(x_train), y_train)).batch(32)

    def _eval_input_fn():
        return tf1.data.Dataset.from_tensor_slices((dict(x_eval), y_eval)).batch(32)

    feature_columns = [
        tf1.feature_column.numeric_column(fn, dtype=tf.float32) for fn in FEATURE_NAMES
    ]
    linear, linear_names = _canned_run(
        tf.estimator.LinearEstimator(
            head=tf.estimator.BinaryClassHead(),
            feature_columns=feature_columns,
            optimizer=create_sample_optimizer(tf),
            model_dir=os.path.join(workdir, "linear"),
        ),
        _input_fn,
        _eval_input_fn,
    )
    dnn, dnn_names = _canned_run(
        tf.estimator.DNNEstimator(
            head=tf.estimator.BinaryClassHead(),
            feature_columns=feature_columns,
            hidden_units=[16],
            activation_fn=tf.nn.relu,
            optimizer=create_sample_optimizer(tf),
            model_dir=os.path.join(workdir, "dnn"),
        ),
        _input_fn,
        _eval_input_fn,
    )
    optimizer = create_sample_optimizer(tf)
    combined, combined_names = _canned_run(
        tf.estimator.DNNLinearCombinedEstimator(
            head=tf.estimator.BinaryClassHead(),
            linear_feature_columns=feature_columns,
            linear_optimizer=optimizer,
            dnn_feature_columns=feature_columns,
            dnn_hidden_units=[16],
            dnn_optimizer=optimizer,
            model_dir=os.path.join(workdir, "combined"),
        ),
        _input_fn,
        _eval_input_fn,
    )
    return {
        "exact": {
            "keys": [sorted(linear), sorted(dnn), sorted(combined)],
            "steps": [int(r["global_step"]) for r in (linear, dnn, combined)],
            "variables": [linear_names, dnn_names, combined_names],
        },
        # (The DNNs' values hang on initial weights the guide draws unseeded (no
        # tf_random_seed): the canned tests warm-start or seed them instead.)
        "close": {f"linear/{k}": v for k, v in _floats(linear).items()},
    }


# ---------------------------------------------------------- migrating_feature_columns
@program
def feature_columns_dnn(tf, workdir):
    """migrating_feature_columns' complete example: a V1 DNNClassifier over an indicator,
    an embedding and a normalized numeric column; one prediction of an unseen size."""
    import math

    tf1 = tf.compat.v1
    features = {"type": [0, 1, 1], "size": ["small", "small", "medium"], "weight": [2.7, 1.8, 1.6]}
    labels = [1, 1, 0]
    predict_features = {"type": [0], "size": ["foo"], "weight": [-0.7]}
    vocab = ["small", "medium", "large"]
    weight_mean, weight_variance = 2.0, 1.0
    categorical_col = tf1.feature_column.categorical_column_with_identity("type", num_buckets=3)
    indicator_col = tf1.feature_column.indicator_column(categorical_col)
    vocab_col = tf1.feature_column.categorical_column_with_vocabulary_list(
        "size", vocabulary_list=vocab, num_oov_buckets=1
    )
    embedding_col = tf1.feature_column.embedding_column(vocab_col, 4)
    normalizer_fn = lambda x: (x - weight_mean) / math.sqrt(weight_variance)  # noqa: E731
    numeric_col = tf1.feature_column.numeric_column("weight", normalizer_fn=normalizer_fn)
    estimator = tf1.estimator.DNNClassifier(
        feature_columns=[indicator_col, embedding_col, numeric_col],
        hidden_units=[1],
        model_dir=os.path.join(workdir, "model"),
    )

    def _input_fn():
        return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)

    def _predict_fn():
        return tf1.data.Dataset.from_tensor_slices(predict_features).batch(1)

    estimator.train(_input_fn)
    prediction = next(estimator.predict(_predict_fn))
    return {
        "exact": {
            "global_step": int(estimator.get_variable_value("global_step")),
            "prediction": structure([prediction]),
            "variables": estimator.get_variable_names(),
        },
    }


# ------------------------------------------ mirrored_strategy, multi_worker_cpu_gpu
def _train_and_evaluate(tf, model_dir, config=None):
    tf1 = tf.compat.v1
    estimator = tf1.estimator.Estimator(model_fn=_model_fn, model_dir=model_dir, config=config)
    train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn)
    eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn)
    metrics, exports = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return estimator, {
        "exact": {
            "result": [sorted(metrics), exports],
            "global_step": int(metrics["global_step"]),
            "variables": estimator.get_variable_names(),
            "files": listing(model_dir),
        },
        "close": {**_floats(metrics), **_kernel_and_bias(estimator)},
    }


@program
def multi_worker_training(tf, workdir):
    """multi_worker_cpu_gpu_training's TF1 half: a TF_CONFIG cluster set and removed
    again, then train_and_evaluate with no max_steps (the input's end stops it)."""
    import json

    tf_config = {
        "cluster": {
            "chief": ["localhost:11111"],
            "worker": ["localhost:12345", "localhost:23456", "localhost:21212"],
            "ps": ["localhost:12121", "localhost:13131"],
        },
        "task": {"type": "chief", "index": 0},
    }
    before = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps(tf_config)
    del os.environ["TF_CONFIG"]
    try:
        _, seen = _train_and_evaluate(tf, os.path.join(workdir, "model"))
    finally:
        if before is not None:
            os.environ["TF_CONFIG"] = before
    return seen


@program
def mirrored_strategy(tf, workdir):
    """mirrored_strategy's TF1 half: a MirroredStrategy (this machine's one device) as
    train_distribute and eval_distribute."""
    tf1 = tf.compat.v1
    strategy = tf1.distribute.MirroredStrategy()
    config = tf1.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    _, seen = _train_and_evaluate(tf, os.path.join(workdir, "model"), config)
    return seen


# ----------------------------------------------------------------------- tpu_estimator
def _tpu_input_fn(params):
    import tensorflow as tf

    dataset = tf.compat.v1.data.Dataset.from_tensor_slices(([[1.0, 1.5]], [[0.3]]))
    dataset = dataset.repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


def _tpu_eval_input_fn(params):
    import tensorflow as tf

    dataset = tf.compat.v1.data.Dataset.from_tensor_slices(([[4.0, 4.5]], [[0.8]]))
    dataset = dataset.repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


def _tpu_model_fn(features, labels, mode, params):
    import tensorflow as tf

    tf1 = tf.compat.v1
    logits = _seeded_dense(tf, 1)(features)
    loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
    train_op = _adagrad_minimize(tf, loss)
    return tf1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def tpu_estimator(tf, workdir):
    """tpu_estimator's TF1 half without a TPU (use_tpu=False, no cluster resolver):
    TPUConfig(iterations_per_loop=10), save_checkpoints_steps=None, train 1 step,
    evaluate 1 step."""
    tf1 = tf.compat.v1
    tpu_config = tf1.estimator.tpu.TPUConfig(iterations_per_loop=10)
    config = tf1.estimator.tpu.RunConfig(
        save_checkpoints_steps=None, tpu_config=tpu_config, model_dir=os.path.join(workdir, "m")
    )
    estimator = tf1.estimator.tpu.TPUEstimator(
        model_fn=_tpu_model_fn, config=config, train_batch_size=8, eval_batch_size=8, use_tpu=False
    )
    estimator.train(_tpu_input_fn, steps=1)
    result = estimator.evaluate(_tpu_eval_input_fn, steps=1)
    return {
        "exact": {
            "eval_keys": sorted(result),
            "global_step": int(result["global_step"]),
            # (No checkpoint: save_checkpoints_steps=None turns the saving off.)
            "variables": _raised(estimator.get_variable_names),
            "files": listing(estimator.model_dir),
            "eval_tags": event_tags(os.path.join(estimator.model_dir, "eval")),
        },
        "close": _floats(result),
    }


# ------------------------------------ evaluator (in-process), checkpoint_saver (listeners)
def _listener(tf, seen):
    """A CheckpointSaverListener noting each call's name and step."""

    class Listener(tf.compat.v1.train.CheckpointSaverListener):
        def begin(self):
            seen.append(["begin"])

        def before_save(self, session, global_step_value):
            seen.append(["before_save", int(global_step_value)])

        def after_save(self, session, global_step_value):
            seen.append(["after_save", int(global_step_value)])

        def end(self, session, global_step_value):
            seen.append(["end", int(global_step_value)])

    return Listener()


def _repeated_eval_input_fn():
    import tensorflow as tf

    return tf.compat.v1.data.Dataset.from_tensor_slices((EVAL_FEATURES, EVAL_LABELS)).batch(1)


@program
def in_memory_evaluator(tf, workdir):
    """The evaluation the guides' Estimator side ran in the training process: an
    InMemoryEvaluatorHook every 4 steps, beside a checkpoint every 3 steps kept 2 at a
    time (keep_checkpoint_max) and a CheckpointSaverListener."""
    tf1 = tf.compat.v1
    model_dir = os.path.join(workdir, "model")
    config = tf1.estimator.RunConfig(save_checkpoints_steps=3, keep_checkpoint_max=2)
    estimator = tf1.estimator.Estimator(model_fn=_model_fn, model_dir=model_dir, config=config)
    evaluator = tf1.estimator.experimental.InMemoryEvaluatorHook(
        estimator, _repeated_eval_input_fn, every_n_iter=4
    )
    seen = []
    with _info_lines() as lines:
        estimator.train(
            _repeated_input_fn, hooks=[evaluator], steps=10, saving_listeners=[_listener(tf, seen)]
        )
    return {
        "exact": {
            "listener": seen,
            "files": listing(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "evaluated_steps": _saved_steps(lines, "Saving dict for global step"),
            "saved_steps": _saved_steps(lines, "Saving checkpoints for"),
        },
        "close": _kernel_and_bias(estimator),
    }


# -------------------------------------------------- tensorboard, a V1 linear model's values
def _scalars_by_tag(tf, folder):
    """{tag: [its simple_values by step]} of the event files directly in `folder`."""
    found = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    found.setdefault(value.tag, {})[int(event.step)] = value.simple_value
    return {tag: [steps[s] for s in sorted(steps)] for tag, steps in sorted(found.items())}


@program
def tensorboard_linear(tf, workdir):
    """The tensorboard guide's flow (summaries every step, train_and_evaluate) with a
    V1 LinearClassifier, which starts from zeros: the values TensorBoard charts."""
    tf1 = tf.compat.v1
    config = tf1.estimator.RunConfig(save_summary_steps=1, save_checkpoints_steps=5)
    path = os.path.join(workdir, "model")
    feature_columns = [tf1.feature_column.numeric_column("x", shape=[8, 8])]
    classifier = tf1.estimator.LinearClassifier(
        feature_columns=feature_columns, n_classes=10, model_dir=path, config=config
    )
    (x_train, y_train), (x_test, y_test) = _mnist_like()
    train_input_fn = tf1.estimator.inputs.numpy_input_fn(
        x={"x": x_train}, y=y_train.astype(np.int32), num_epochs=1, batch_size=30, shuffle=False
    )
    _, test_input_fn = _numpy_inputs(tf, (x_train, y_train), (x_test, y_test))
    train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=10)
    eval_spec = tf1.estimator.EvalSpec(input_fn=test_input_fn, steps=2, throttle_secs=0)
    tf1.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    train = _scalars_by_tag(tf, path)
    evaluated = _scalars_by_tag(tf, os.path.join(path, "eval"))
    return {
        "exact": {
            "train_tags": event_tags(path),
            "eval_tags": event_tags(os.path.join(path, "eval")),
        },
        "close": {
            **{f"train/{k}": v for k, v in train.items() if not k.startswith("enqueue_input")},
            **{f"eval/{k}": v for k, v in evaluated.items()},
        },
    }


_GRAPH_OPS = ["dnn/hiddenlayer_0/MatMul", "dnn/hiddenlayer_0/Relu", "dnn/logits/BiasAdd"]


def _graph_events(tf, folder):
    """The graph records of the events files directly in `folder`: how many `graph_def`
    events, the kinds of graph record (`graph_def`, `meta_graph_def`), the newest
    GraphDef."""
    count, kinds, newest = 0, set(), None
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            kind = event.WhichOneof("what")
            if kind in ("graph_def", "meta_graph_def"):
                kinds.add(kind)
            if kind == "graph_def":
                count += 1
                newest = tf.compat.v1.GraphDef.FromString(event.graph_def)
    return count, sorted(kinds), newest


@program
def tensorboard_graph(tf, workdir):
    """The tensorboard guide's Graphs tab after two train() calls of a V2 DNNClassifier
    into one model_dir: whether each call wrote the graph into the events (what
    `summary_iterator` reads: graph_def and meta_graph_def records), which of the model's
    layer ops the newest graph holds (at its top level, or in a function of its library,
    which the Graphs tab shows too) and what TensorBoard's event accumulator, which the
    Graphs tab reads, finds for the run."""
    from tensorboard.backend.event_processing import event_accumulator

    (x_train, y_train), _ = _mnist_like()
    path = os.path.join(workdir, "model")
    classifier = tf.estimator.DNNClassifier(
        [4],
        [tf.feature_column.numeric_column("x", shape=[8, 8])],
        n_classes=10,
        model_dir=path,
    )

    def input_fn():
        data = ({"x": x_train.astype(np.float32)}, y_train.astype(np.int32))
        return tf.data.Dataset.from_tensor_slices(data).batch(30)

    written, kinds = [], []
    for _ in range(2):
        before = _graph_events(tf, path)[0]
        classifier.train(input_fn, steps=2)
        count, seen, newest = _graph_events(tf, path)
        written.append(count > before)
        kinds.append(seen)
    names = set()
    for graph in [newest] if newest is not None else []:
        names.update(node.name for node in graph.node)
        for function in graph.library.function:
            names.update(node.name for node in function.node_def)
    accumulator = event_accumulator.EventAccumulator(path).Reload()
    tags = accumulator.Tags()
    return {
        "exact": {
            "graph_written_by_call": written,
            "graph_records_after_call": kinds,
            "model_ops": [op for op in _GRAPH_OPS if any(n.endswith(op) for n in names)],
            "tensorboard": {"graph": tags["graph"], "meta_graph": tags["meta_graph"]},
            "tensorboard_graph_has_nodes": tags["graph"] and len(accumulator.Graph().node) > 0,
        }
    }
