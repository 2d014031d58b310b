"""Tutorial-, book-, course- and StackOverflow-grade tf.estimator code the other families
have not tried, after `tf_upgrade_v2`, on tiny made-up data:

- `label_mistakes`: the label mistakes StackOverflow questions are about, in a canned
  estimator of each namespace and a head in a custom `model_fn`: one-hot labels given to a
  classifier of `n_classes` (and to a binary one), two label columns to a regressor,
  labels as a `SparseTensor`, an input_fn that returns no labels (to `train` and to
  `evaluate`), what 2.15 refused and in which words;
- `nan_loss`: StackOverflow's "NaN loss during training": unscaled features and a large
  learning rate in a canned `LinearRegressor` (a Keras legacy SGD) and a TF1 `model_fn`,
  checkpointing every 2 steps: the error, the ERROR line and the checkpoints kept (not
  the summaries: 2.15's writer had not flushed its last ones when the error came);
- `nan_in_layer_summary`: the same in a `tf.compat.v1.estimator.DNNRegressor` (a TF1
  SGD) summarizing every step, whose layer histogram meets the infinite activations first;
- `input_fn_helper_misuse`: `numpy_input_fn` and `pandas_input_fn` as StackOverflow
  questions misuse them (no `shuffle`, a string for it, x and y of other lengths, an
  empty dict, a label key clashing with a feature, a frame for y, misaligned indexes, a
  target column clashing with a feature);
- `tf1_optimizers`: the TF1 optimizers and learning-rate decays of TF1-era samples in a
  `model_fn` (proximal ones, Adadelta, AdagradDA, centered RMSProp with momentum, Nesterov
  momentum, FTRL with L2 shrinkage, cosine, inverse-time and linear-cosine decays, and a
  `SyncReplicasOptimizer` of one replica with its hook): checkpoint names and weights;
- `printed_results`: `print(estimator.evaluate(...))` of a TF1 `model_fn` and a canned
  `LinearRegressor`, as a sample's last line prints it;
- `script_console`: all a script (a TF1 `model_fn`, then a canned `LinearRegressor`, each
  trained to the end of its input and its `evaluate()` printed, under
  `set_verbosity(INFO)`) shows on its console, run as `python prog.py` in a process of
  its own: stdout and stderr, less TensorFlow's C++ start-up lines, 2.15's deprecation
  warnings (the kit writes none) and the lines of 2.15's graph and session the TF2 path
  does not log (docs/guide/estimator.md);
- `levels_at_the_root`: what reaches a handler on the root logger (as `logging.basicConfig`
  adds one) from a TF1 `model_fn`'s and a canned estimator's training and evaluation,
  with the root at INFO and TensorFlow's logger at ERROR
  (`tf.get_logger().setLevel("ERROR")`);
- `handlers_on_tensorflows_logger`: what handlers teams attach see of a TF1 `model_fn`'s
  and a canned estimator's training: one on the root (as `logging.basicConfig` adds one)
  showing `%(name)s`, with `tf.get_logger().propagate = False` beside a handler of
  TensorFlow's logger (the usual cure for doubled lines), and with a filter on
  TensorFlow's logger;
- `v2_class_names`: what code sees of the canned classes' names: `type(est).__name__`,
  `__qualname__`, the TypeError of an argument they do not take, and which Estimator
  classes their instances are (tf.estimator's and tf.compat.v1.estimator's);
- `estimator_class_names`: the same for `Estimator` itself (tf.estimator's was 2.15's
  `EstimatorV2`, tf.compat.v1.estimator's `Estimator`) and for what `add_metrics` returns;
- `model_fn_lines_once`: a Keras-layer `model_fn` logging through
  `tf.compat.v1.logging.info` and `tf.get_logger()`: how often each line shows in
  `train`, `evaluate` and `predict`;
- `changed_model_in_model_dir`: the r1 "Checkpoints" guide's warning, a model changed
  between runs over the same model_dir: a `tf.compat.v1.estimator.DNNClassifier` given
  wider or more hidden layers, a `LinearClassifier` in a DNN's folder (each class of both
  namespaces), and a TF1 `model_fn` with a wider layer (2.15 restored it unchecked).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (errors, keys, listings: equal) and `close` values (1e-4).
`tests/test_community_code.py` compares them with 2.15's recording
(`tests/tf215/record_family.py community_code_programs`, into
`tests/data/tf215/community_code.json`).
"""

import inspect
import logging
import os
import re
import subprocess
import sys

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised
from tests.tutorial_programs import listing

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
            lambda d, estimator=estimator: estimator.DNNClassifier(
                [4], columns, n_classes=3, model_dir=d
            ),
            _labelled(tf, one_hot),
        ),
        "binary_one_hot": (
            lambda d, estimator=estimator: estimator.LinearClassifier(columns, model_dir=d),
            _labelled(tf, np.eye(3, 2, dtype=np.int64)),
        ),
        "regressor_two_columns": (
            lambda d, estimator=estimator: estimator.LinearRegressor(columns, model_dir=d),
            _labelled(tf, np.ones((3, 2), np.float32)),
        ),
        "sparse": (
            lambda d, estimator=estimator: estimator.LinearClassifier(columns, model_dir=d),
            _sparse_labels,
        ),
        "none": (
            lambda d, estimator=estimator: estimator.DNNRegressor([3], columns, model_dir=d),
            _no_labels,
        ),
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


# --- NaN loss during training ---


def _unscaled():
    import tensorflow as tf

    x = np.array([[1e3], [2e3], [3e3], [4e3]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, x * 10.0)).batch(4).repeat()


def _diverging_model_fn(features, labels, mode):
    import tensorflow as tf

    w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(10.0)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _kept(lines, workdir, *words):
    """The lines naming one of `words`, each once (2.15 logged to two loggers)."""
    kept = []
    for line in lines:
        line = _normalized(line, workdir)
        if any(w in line for w in words) and (not kept or kept[-1] != line):
            kept.append(line)
    return kept


def _training_error(est, tf):
    """[type, words] of what training 50 steps raises (an op's own words, not where)."""
    try:
        est.train(_unscaled, steps=50)
    except tf.errors.OpError as error:
        words = [line.strip() for line in error.message.splitlines() if " in Histogram " in line]
        return [type(error).__name__, words[-1:]]
    except Exception as error:  # (any error is the record)
        return [type(error).__name__, str(error)]
    return None


def _diverging(tf, workdir, made):
    """What each of `made` ({name: build(model_dir)}) shows when its training diverges."""
    seen = {}
    for name, build in made.items():
        model_dir = os.path.join(workdir, name)
        est = build(model_dir)
        with _info_lines() as lines:
            raised = _training_error(est, tf)
        seen[name] = {
            "raised": raised,
            "lines": _kept(lines, workdir, "NaN", "Saving checkpoints", "Loss for final"),
            "listing": listing(model_dir),
            "latest": os.path.basename(tf.train.latest_checkpoint(model_dir)),
        }
    return {"exact": seen, "close": {}}


def _checkpointing_often(tf):
    return tf.estimator.RunConfig(save_checkpoints_steps=2, save_summary_steps=1)


@program
def nan_loss(tf, workdir):
    config = _checkpointing_often(tf)
    columns = [tf.feature_column.numeric_column("x")]
    made = {
        "linear": lambda d: tf.estimator.LinearRegressor(
            columns,
            model_dir=d,
            optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=10.0),
            config=config,
        ),
        "model_fn": lambda d: tf.estimator.Estimator(_diverging_model_fn, d, config),
    }
    return _diverging(tf, workdir, made)


@program
def nan_in_layer_summary(tf, workdir):
    config = _checkpointing_often(tf).replace(tf_random_seed=1)
    columns = [tf.feature_column.numeric_column("x")]
    made = {
        "v1_dnn": lambda d: tf.compat.v1.estimator.DNNRegressor(
            [2],
            columns,
            model_dir=d,
            optimizer=tf.compat.v1.train.GradientDescentOptimizer(10.0),
            config=config,
        ),
    }
    return _diverging(tf, workdir, made)


# --- numpy_input_fn / pandas_input_fn misuse ---


@program
def input_fn_helper_misuse(tf, workdir):
    import pandas as pd

    inputs = tf.compat.v1.estimator.inputs
    x = {"x": np.arange(6, dtype=np.float32)}
    y = np.arange(6, dtype=np.float32)
    frame = pd.DataFrame(x)
    calls = {
        "no_shuffle": lambda: inputs.numpy_input_fn(x, y),
        "shuffle_string": lambda: inputs.numpy_input_fn(x, y, shuffle="True"),
        "lengths": lambda: inputs.numpy_input_fn(x, y[:4], shuffle=False)(),
        "empty_dict": lambda: inputs.numpy_input_fn({}, y, shuffle=False)(),
        "label_key_clash": lambda: inputs.numpy_input_fn(x, {"x": y}, shuffle=False)(),
        "pandas_no_shuffle": lambda: inputs.pandas_input_fn(frame, pd.Series(y)),
        "pandas_index": lambda: inputs.pandas_input_fn(
            frame, pd.Series(y, index=np.arange(6) + 1), shuffle=False
        )(),
        "pandas_target_clash": lambda: inputs.pandas_input_fn(
            frame, pd.Series(y), shuffle=False, target_column="x"
        )(),
    }
    return {"exact": {name: _raised(call)[:2] for name, call in calls.items()}, "close": {}}


def _ordered_model_fn(seen):
    """A model_fn recording in `seen` the order of the features and labels it meets: a
    linear model over the features stacked in that order, with weights 1, 10, 100."""

    def model_fn(features, labels, mode):
        import tensorflow as tf

        seen.append([list(features), None if labels is None else list(labels)])
        stacked = tf.stack([tf.cast(v, tf.float32) for v in features.values()], axis=1)
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([[1.0], [10.0], [100.0]]))
        prediction = tf.matmul(stacked, w)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"p": prediction, **features})
        loss = tf.reduce_mean(tf.square(prediction - tf.cast(labels["a_label"], tf.float32)))
        train_op = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@program
def numpy_input_fn_key_order(tf, workdir):
    """A dict given to numpy_input_fn in an order of its own: 2.15's feeder sorted its
    keys, so a model_fn stacking `features.values()` (and predict's dicts) met them sorted."""
    inputs = tf.compat.v1.estimator.inputs
    x = {"zeta": np.arange(4.0), "alpha": np.arange(4, dtype=np.int64), "mid": np.ones(4)}
    y = {"b_label": np.zeros(4), "a_label": np.arange(4.0)}
    seen = []
    est = tf.estimator.Estimator(_ordered_model_fn(seen), model_dir=os.path.join(workdir, "model"))
    est.train(inputs.numpy_input_fn(x, y, batch_size=4, shuffle=False), steps=1)
    predicted = next(iter(est.predict(inputs.numpy_input_fn(x, batch_size=4, shuffle=False))))
    lengths = _raised(
        inputs.numpy_input_fn({"b": np.arange(3.0), "a": np.arange(4.0)}, shuffle=False)
    )
    return {
        "exact": {"seen": seen, "predicted_keys": list(predicted), "lengths": lengths[:2]},
        "close": {"p": predicted["p"].tolist()},
    }


# --- TF1 optimizers and decays in a model_fn ---


def _optimized_model_fn(make_optimizer):
    def model_fn(features, labels, mode):
        import tensorflow as tf

        w = tf.compat.v1.get_variable(
            "w", [2, 1], initializer=tf.compat.v1.constant_initializer(0.1)
        )
        b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w) + b)
        global_step = tf.compat.v1.train.get_global_step()
        optimizer, hooks = make_optimizer(tf, global_step)
        train_op = optimizer.minimize(loss, global_step=global_step)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks)

    return model_fn


def _two_features():
    import tensorflow as tf

    x = np.random.RandomState(0).rand(8, 2).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0]], np.float32) + 0.5
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat()


def _sync_replicas(tf, global_step):
    train = tf.compat.v1.train
    optimizer = train.SyncReplicasOptimizer(
        train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1, total_num_replicas=1
    )
    return optimizer, [optimizer.make_session_run_hook(is_chief=True)]


_TF1_OPTIMIZERS = {
    "proximal_gd": lambda tf, gs: tf.compat.v1.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.01
    ),
    "proximal_adagrad": lambda tf, gs: tf.compat.v1.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01
    ),
    "adadelta": lambda tf, gs: tf.compat.v1.train.AdadeltaOptimizer(1.0),
    "adagrad_da": lambda tf, gs: tf.compat.v1.train.AdagradDAOptimizer(0.1, gs),
    "rmsprop_centered": lambda tf, gs: tf.compat.v1.train.RMSPropOptimizer(
        0.01, momentum=0.9, centered=True
    ),
    "nesterov": lambda tf, gs: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "ftrl_shrinkage": lambda tf, gs: tf.compat.v1.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.01
    ),
    "cosine_decay": lambda tf, gs: tf.compat.v1.train.GradientDescentOptimizer(
        tf.compat.v1.train.cosine_decay(0.1, gs, 10)
    ),
    "inverse_time_decay": lambda tf, gs: tf.compat.v1.train.GradientDescentOptimizer(
        tf.compat.v1.train.inverse_time_decay(0.1, gs, 2, 0.5, staircase=True)
    ),
    "linear_cosine_decay": lambda tf, gs: tf.compat.v1.train.GradientDescentOptimizer(
        tf.compat.v1.train.linear_cosine_decay(0.1, gs, 10)
    ),
}


@program
def tf1_optimizers(tf, workdir):
    made = {
        name: (lambda tf, gs, m=make: (m(tf, gs), [])) for name, make in _TF1_OPTIMIZERS.items()
    }
    made["sync_replicas"] = _sync_replicas
    names, weights = {}, {}
    for name, make in made.items():
        est = tf.estimator.Estimator(_optimized_model_fn(make), os.path.join(workdir, name))
        est.train(_two_features, steps=4)
        names[name] = sorted(est.get_variable_names())
        weights[name] = est.get_variable_value("w").ravel().tolist()
    return {"exact": {"names": names}, "close": {"weights": weights}}


# --- a model changed between runs over the same model_dir ---


def _three_rows():
    import tensorflow as tf

    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, np.array([0, 1, 2]))).batch(3)


def _first_line(raised):
    return None if raised is None else [raised[0], raised[1].split("\n")[0]]


def _dense_model_fn(units):
    def model_fn(features, labels, mode):
        import tensorflow as tf

        hidden = tf.compat.v1.layers.dense(features["x"], units, name="h")
        logits = tf.compat.v1.layers.dense(hidden, 3, name="out")
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = tf.compat.v1.train.AdamOptimizer()
        train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@program
def changed_model_in_model_dir(tf, workdir):
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    seen = {}
    for name, estimator in (("v2", tf.estimator), ("v1", tf.compat.v1.estimator)):
        model_dir = os.path.join(workdir, name)
        estimator.DNNClassifier([10, 10], columns, n_classes=3, model_dir=model_dir).train(
            _three_rows, steps=1
        )
        changed = {
            "more_layers": lambda d, estimator=estimator: estimator.DNNClassifier(
                [10, 10, 5], columns, n_classes=3, model_dir=d
            ),
            "linear": lambda d, estimator=estimator: estimator.LinearClassifier(
                columns, n_classes=3, model_dir=d
            ),
        }
        if name == "v1":  # (2.15's V2 DNN restored a wider layer unchecked; the kit refuses)
            changed["wider"] = lambda d, estimator=estimator: estimator.DNNClassifier(
                [10, 20], columns, n_classes=3, model_dir=d
            )
        for change, build in changed.items():
            est = build(model_dir)
            seen[f"{name}_{change}"] = _first_line(
                _raised(lambda e=est: e.train(_three_rows, steps=1))
            )
    model_dir = os.path.join(workdir, "model_fn")
    tf.estimator.Estimator(_dense_model_fn(4), model_dir).train(_three_rows, steps=1)
    wider = tf.estimator.Estimator(_dense_model_fn(5), model_dir)
    wider.train(_three_rows, steps=1)
    seen["model_fn_wider"] = int(wider.get_variable_value("global_step"))
    return {"exact": seen, "close": {}}


# --- evaluate()'s results printed ---


def _line_model_fn(features, labels, mode):
    import tensorflow as tf

    w = tf.compat.v1.get_variable("w", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = features["x"] * w
    loss = tf.reduce_mean(tf.square(predictions - labels))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _eight_rows():
    import tensorflow as tf

    x = np.arange(8, dtype=np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, 3 * x)).batch(4)


def _four_digits(text):
    return re.sub(r"(\d\.\d{4})\d+", r"\1", text)


@program
def printed_results(tf, workdir):
    """What `print(estimator.evaluate(...))`, every sample's last line, shows: a TF1
    `model_fn`'s and a canned `LinearRegressor`'s results (numpy's numbers, printed as
    numpy 1.x printed them under 2.15), and their values' types."""
    made = {
        "model_fn": tf.estimator.Estimator(_line_model_fn, os.path.join(workdir, "tf1")),
        "linear": tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], os.path.join(workdir, "linear")
        ),
    }
    seen = {}
    for name, est in made.items():
        est.train(_eight_rows)
        results = est.evaluate(_eight_rows)
        seen[name] = {
            "printed": _four_digits(str(results)),
            "repr": _four_digits(repr(results)),
            "types": {key: type(value).__name__ for key, value in results.items()},
        }
    return {"exact": seen, "close": {}}


# --- a script's whole console ---

# A sample's shape, of the functions above (their source) and a canned estimator.
_CONSOLE_SCRIPT = "\n\n".join(
    [
        "import numpy as np\nimport tensorflow as tf\n",
        "tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)\n",
        inspect.getsource(_line_model_fn),
        inspect.getsource(_eight_rows),
        """est = tf.estimator.Estimator(_line_model_fn, "tf1")
est.train(_eight_rows)
print(est.evaluate(_eight_rows))
linear = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], "linear")
linear.train(_eight_rows)
print(linear.evaluate(_eight_rows))
""",
    ]
)

# Not compared: TensorFlow's C++ lines (start-up, CPU, CUDA: each version's own), the
# race of TF1's step counter reading the global step beside the step ("It seems that
# global step ..." comes and goes, under 2.15 too), and the lines of 2.15's graph and
# session that the TF2 path does not log (the graph path's are held by other families).
_CONSOLE_NOISE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] |[IWEF]\d{4} [\d:.]+ +\d+ )"
    r"|absl::InitializeLog|rebuild TensorFlow with the appropriate compiler flags"
    r"|It seems that global step|INFO:tensorflow:(Calling model_fn|Done calling model_fn"
    r"|Create CheckpointSaverHook|Graph was finalized|Running local_init_op"
    r"|Done running local_init_op)\.$"
)
_DEPRECATED = re.compile(
    r"^WARNING:tensorflow:From .*: (.* is deprecated|The name .* is deprecated)"
)


def _console_lines(text, workdir):
    """`text`'s lines less the noise above and every deprecation warning (2.15 wrote one
    for each tf.estimator class; TensorFlow's own come and go between versions), with
    times, rates and numbers past 4 digits blurred."""
    kept, lines = [], iter(text.splitlines())
    for line in lines:
        if _DEPRECATED.match(line):
            if next(lines, "").startswith("Instructions for updating"):
                next(lines, "")
            continue
        if _CONSOLE_NOISE.search(line) or (not line.strip() and not kept):
            continue
        line = line.replace(workdir, "<workdir>")
        line = re.sub(r"\d{4}-\d\d-\d\d[T-]\d\d:\d\d:\d\d", "<time>", line)
        line = re.sub(r"\(\d+\.\d+ sec\)|Inference Time : [\d.]+s", "<seconds>", line)
        kept.append(re.sub(r"(\d\.\d{4})\d+", r"\1", line))
    return kept


@program
def script_console(tf, workdir):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entry = "" if tf.__version__.startswith("2.15") else "import components.estimator.install; "
    with open(os.path.join(workdir, "prog.py"), "w") as f:
        f.write(entry + _CONSOLE_SCRIPT)
    env = dict(os.environ, PYTHONPATH=repo, PYTHONWARNINGS="", TF_CPP_MIN_LOG_LEVEL="0")
    ran = subprocess.run(
        [sys.executable, "prog.py"], cwd=workdir, env=env, capture_output=True, text=True
    )
    return {
        "exact": {
            "returncode": ran.returncode,
            "stdout": _console_lines(ran.stdout, workdir),
            "stderr": _console_lines(ran.stderr, workdir),
        },
        "close": {},
    }


# --- the root logger's handlers and TensorFlow's level ---


class _Messages(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        line = re.sub(r"\d{4}-\d\d-\d\d[T-]\d\d:\d\d:\d\d", "<time>", record.getMessage())
        self.lines.append(f"{record.levelname}:{_four_digits(line)}")


def _at_the_root(root_level, tensorflow_level, run):
    """The lines a handler on the root logger (at `root_level`) is given while `run()`
    runs with TensorFlow's logger at `tensorflow_level` (each restored after)."""
    root, tensorflow_logger = logging.getLogger(), logging.getLogger("tensorflow")
    levels = root.level, tensorflow_logger.level
    handler = _Messages()
    root.addHandler(handler)
    root.setLevel(root_level)
    tensorflow_logger.setLevel(tensorflow_level)
    try:
        run()
    finally:
        root.removeHandler(handler)
        root.setLevel(levels[0])
        tensorflow_logger.setLevel(levels[1])
    return handler.lines


def _train_and_evaluate(est):
    est.train(_eight_rows)
    est.evaluate(_eight_rows)


@program
def levels_at_the_root(tf, workdir):
    """2.15's lines went through TensorFlow's logger alone: at ERROR it let none of them
    through to the root's handlers, whatever the root's level."""
    made = {
        "model_fn": tf.estimator.Estimator(_line_model_fn, os.path.join(workdir, "tf1")),
        "linear": tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], os.path.join(workdir, "linear")
        ),
    }
    seen = {
        kind: _at_the_root("INFO", "ERROR", lambda e=est: _train_and_evaluate(e))
        for kind, est in made.items()
    }
    return {"exact": seen, "close": {}}


# --- handlers on TensorFlow's logger: propagation and filters ---


# Lines 2.15 wrote that the kit does not (its deprecation warnings; its graph and session
# lines on the TF2 path): not compared here (docs/guide/estimator.md).
_NOT_WRITTEN = re.compile(
    r"is deprecated and will be removed|^(Calling model_fn|Done calling model_fn"
    r"|Create CheckpointSaverHook|Graph was finalized|Running local_init_op"
    r"|Done running local_init_op)\.$"
)


class _Named(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        message = record.getMessage()
        if not _NOT_WRITTEN.search(message):
            line = f"{record.name}:{record.levelname}:{message.splitlines()[0]}"
            self.lines.append(_four_digits(re.sub(r"/\S*/", "<dir>/", line)))


class _NoSaving(logging.Filter):
    def filter(self, record):
        return "checkpoint" not in record.getMessage()


def _handlers_seeing(run, propagate, tensorflow_filter=None):
    """What a root handler and one of TensorFlow's logger see while `run()` runs (both
    loggers at INFO; TensorFlow's `propagate` and `tensorflow_filter` as given)."""
    root, tensorflow_logger = logging.getLogger(), logging.getLogger("tensorflow")
    saved = root.level, tensorflow_logger.level, tensorflow_logger.propagate
    at_root, at_tensorflow = _Named(), _Named()
    root.addHandler(at_root)
    tensorflow_logger.addHandler(at_tensorflow)
    root.setLevel("INFO")
    tensorflow_logger.setLevel("INFO")
    tensorflow_logger.propagate = propagate
    if tensorflow_filter:
        tensorflow_logger.addFilter(tensorflow_filter)
    try:
        run()
    finally:
        root.removeHandler(at_root)
        tensorflow_logger.removeHandler(at_tensorflow)
        tensorflow_logger.removeFilter(tensorflow_filter)
        root.setLevel(saved[0])
        tensorflow_logger.setLevel(saved[1])
        tensorflow_logger.propagate = saved[2]
    return {"root": at_root.lines, "tensorflow": at_tensorflow.lines}


@program
def handlers_on_tensorflows_logger(tf, workdir):
    """2.15's records were TensorFlow's logger's: named `tensorflow` at the root's
    handlers, kept from them by `propagate = False`, passed through its filters."""
    seen = {}
    for kind in ("model_fn", "linear"):
        for case, propagate, line_filter in (
            ("not_propagated", False, None),
            ("filtered", True, _NoSaving()),
        ):
            folder = os.path.join(workdir, f"{kind}_{case}")
            if kind == "model_fn":
                est = tf.estimator.Estimator(_line_model_fn, folder)
            else:
                est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], folder)
            train = lambda est=est: est.train(_eight_rows)  # noqa: E731
            seen[f"{kind}_{case}"] = _handlers_seeing(train, propagate, line_filter)
    return {"exact": seen, "close": {}}


# --- the canned classes' names ---

_CANNED = [
    f"{family}{kind}"
    for family in ("Baseline", "DNN", "DNNLinearCombined", "Linear")
    for kind in ("Classifier", "Regressor", "Estimator")
]


def _made(tf, module, name):
    column = tf.feature_column.numeric_column("x")
    args = {"head": tf.estimator.RegressionHead()} if name.endswith("Estimator") else {}
    if name.startswith("DNNLinearCombined"):
        args.update(linear_feature_columns=[column], dnn_feature_columns=[column])
        args["dnn_hidden_units"] = [2]
    elif name.startswith("DNN"):
        args.update(hidden_units=[2], feature_columns=[column])
    elif name.startswith("Linear"):
        args["feature_columns"] = [column]
    return getattr(module, name)(**args)


@program
def v2_class_names(tf, workdir):
    """2.15's tf.estimator canned classes were its V2 classes (`LinearClassifierV2`)."""
    seen = {}
    for namespace, module in (("v2", tf.estimator), ("v1", tf.compat.v1.estimator)):
        for name in _CANNED:
            cls = getattr(module, name)
            est = _made(tf, module, name)
            seen[f"{namespace}.{name}"] = {
                "name": [type(est).__name__, cls.__qualname__],
                "unknown_argument": _raised(lambda cls=cls: cls(unknown=1)),
                "is_v1_estimator": isinstance(est, tf.compat.v1.estimator.Estimator),
            }
            if namespace == "v2":  # (a V1 class's is one here: docs/guide/estimator.md)
                seen[f"v2.{name}"]["is_v2_estimator"] = isinstance(est, tf.estimator.Estimator)
    return {"exact": seen, "close": {}}


def _tiny_model_fn(features, labels, mode):
    import tensorflow as tf

    predictions = tf.compat.v1.layers.dense(features["x"], 1)
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    step = tf.compat.v1.train.get_or_create_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


@program
def estimator_class_names(tf, workdir):
    """2.15's tf.estimator.Estimator was its class `EstimatorV2`, a subclass of
    tf.compat.v1.estimator's `Estimator`; `add_metrics` returned the latter."""

    def metric_fn(labels, predictions):
        return {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}

    seen = {}
    for namespace, module in (("v2", tf.estimator), ("v1", tf.compat.v1.estimator)):
        est = module.Estimator(_tiny_model_fn, model_dir=os.path.join(workdir, namespace))
        added = tf.estimator.add_metrics(est, metric_fn)
        seen[namespace] = {
            "name": [type(est).__name__, module.Estimator.__qualname__],
            "repr_class": repr(est).split(" object at ")[0].rsplit(".", 1)[-1],
            "unknown_argument": _raised(lambda m=module: m.Estimator(_tiny_model_fn, unknown=1)),
            # (whether a V1 instance is a tf.estimator.Estimator: docs/guide/estimator.md)
            "add_metrics": [
                type(added).__name__,
                isinstance(added, tf.compat.v1.estimator.Estimator),
            ],
        }
    return {"exact": seen, "close": {}}


# --- lines a model_fn logs ---


def _logging_keras_model_fn(features, labels, mode):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1)
    predictions = layer(features["x"][:, None])
    tf.compat.v1.logging.info("model_fn in %s", mode)
    tf.get_logger().warning("features: %s", sorted(features))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels[:, None]))
    optimizer = tf.keras.optimizers.legacy.SGD(0.01)
    step = tf.compat.v1.train.get_global_step().assign_add(1)
    train_op = tf.group(optimizer.get_updates(loss, layer.trainable_variables), step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def model_fn_lines_once(tf, workdir):
    """2.15 called model_fn once a call: its lines showed once each."""
    est = tf.estimator.Estimator(_logging_keras_model_fn, os.path.join(workdir, "keras"))
    calls = {
        "train": lambda: est.train(_eight_rows),
        "evaluate": lambda: est.evaluate(_eight_rows),
        "predict": lambda: list(est.predict(_eight_rows)),
    }
    seen = {}
    for name, call in calls.items():
        lines = _handlers_seeing(call, True)["tensorflow"]
        seen[name] = [line for line in lines if "model_fn in" in line or "features:" in line]
    return {"exact": seen, "close": {}}
