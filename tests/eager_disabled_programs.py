"""Programs that run Estimators where nothing runs eagerly, as many `tf_upgrade_v2`'d TF1
samples do: after `tf.compat.v1.disable_eager_execution()`, after
`tf.compat.v1.disable_v2_behavior()` (v1 variables, control flow and shapes too), or inside
a `with tf.Graph().as_default():` block.

Eager execution cannot be turned back on in a process, so each group of programs runs in
a process of its own:

    python -m tests.eager_disabled_programs GROUP OUT_JSON [--kit]

(from the repository's root; `--kit` installs the kit's `tf.estimator` first).
`tests/tf215/record_eager_disabled.py` records 2.15's results into
`tests/data/tf215/eager_disabled.json`; `tests/test_eager_disabled.py` runs the kit's and
compares: `exact` parts equal, `close` ones (zero-initialised models) within 1e-4,
`loose` ones (seeded random initial weights) within 35%.
"""

import json
import os
import sys
import tempfile

import numpy as np

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "eager_disabled.json")
SEED = 42
_X = np.random.RandomState(SEED).rand(64, 3).astype(np.float32)
_Y = (_X[:, 0] + 0.5 * _X[:, 1] > 0.7).astype(np.int32)


def _dataset(tf, labels=_Y, repeat=True):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": _X}, labels)).batch(16)
        return dataset.repeat() if repeat else dataset

    return input_fn


def _numpy_input(tf, labels=_Y, epochs=None):
    return tf.compat.v1.estimator.inputs.numpy_input_fn(
        {"x": _X}, labels, batch_size=16, num_epochs=epochs, shuffle=False
    )


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items()) if np.ndim(v) == 0}


def _seen(tf, estimator, workdir, result, serving_input_fn=None):
    """What the program's user sees: evaluate()'s keys, predict()'s keys, dtypes and
    shapes, the variable names, the export's signatures; and the numbers to compare."""
    from tests.tutorial_programs import signatures, structure

    rows = list(estimator.predict(_dataset(tf, repeat=False)))
    if serving_input_fn is None:
        spec = {"x": tf.io.FixedLenFeature([3], tf.float32)}
        serving_input_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    export_dir = estimator.export_saved_model(os.path.join(workdir, "export"), serving_input_fn)
    export_dir = os.fsdecode(export_dir)  # (2.15 returned bytes)
    first = {k: np.asarray(v).ravel().tolist() for k, v in rows[0].items()}
    numbers = {**_floats(result), **{k: v for k, v in first.items() if k in _NUMERIC}}
    return {
        "exact": {
            "evaluate_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "predictions": structure(rows),
            "count": len(rows),
            "variables": sorted(estimator.get_variable_names()),
            "signatures": signatures(export_dir),
        },
        "numbers": numbers,
    }


_NUMERIC = ("logits", "probabilities", "logistic", "predictions", "scores")


def _split(seen, close):
    numbers = seen.pop("numbers")
    if close:
        seen["close"] = numbers
    else:
        seen["loose"] = {k: v for k, v in numbers.items() if k in ("loss", "average_loss")}
    return seen


def custom_tf1_model_fn(tf, workdir):
    """A TF1 model_fn (tf.compat.v1.layers, a tf.compat.v1.train optimizer), zero weights."""

    def model_fn(features, labels, mode):
        zeros = tf.compat.v1.zeros_initializer()
        logits = tf.compat.v1.layers.dense(features["x"], 2, kernel_initializer=zeros)
        predictions = {"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
        if mode == tf.estimator.ModeKeys.PREDICT:
            export = {"serving_default": tf.estimator.export.PredictOutput(predictions)}
            return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=export)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss, step)
        accuracy = tf.compat.v1.metrics.accuracy(labels, predictions["classes"])
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy}
        )

    estimator = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, "model"))
    estimator.train(_numpy_input(tf), steps=6)
    result = estimator.evaluate(_numpy_input(tf, epochs=1))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")}
    )
    return _split(_seen(tf, estimator, workdir, result, receiver), close=True)


def _columns(tf):
    return [tf.feature_column.numeric_column("x", shape=(3,))]


def _config(tf):
    return tf.estimator.RunConfig(tf_random_seed=SEED)


def linear_classifier(tf, workdir):
    """tf.estimator's LinearClassifier (zero weights), tf.data input."""
    estimator = tf.estimator.LinearClassifier(_columns(tf), model_dir=workdir + "/model")
    estimator.train(_dataset(tf), steps=6)
    result = estimator.evaluate(_dataset(tf, repeat=False))
    return _split(_seen(tf, estimator, workdir, result), close=True)


def linear_classifier_v1(tf, workdir):
    """tf.compat.v1.estimator's LinearClassifier (zero weights), numpy input, 3 classes."""
    labels = (_X[:, 0] * 3).astype(np.int32)
    estimator = tf.compat.v1.estimator.LinearClassifier(
        _columns(tf), n_classes=3, model_dir=workdir + "/model"
    )
    estimator.train(_numpy_input(tf, labels), steps=6)
    result = estimator.evaluate(_numpy_input(tf, labels, epochs=1))
    return _split(_seen(tf, estimator, workdir, result), close=True)


def dnn_classifier(tf, workdir):
    """tf.estimator's DNNClassifier (seeded random weights), tf.data input."""
    estimator = tf.estimator.DNNClassifier(
        [8, 4], _columns(tf), model_dir=workdir + "/model", config=_config(tf)
    )
    estimator.train(_dataset(tf), steps=6)
    result = estimator.evaluate(_dataset(tf, repeat=False))
    return _split(_seen(tf, estimator, workdir, result), close=False)


def dnn_linear_combined_classifier(tf, workdir):
    """tf.estimator's wide & deep classifier (seeded random weights)."""
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=_columns(tf),
        dnn_feature_columns=_columns(tf),
        dnn_hidden_units=[4],
        model_dir=workdir + "/model",
        config=_config(tf),
    )
    estimator.train(_dataset(tf), steps=6)
    result = estimator.evaluate(_dataset(tf, repeat=False))
    return _split(_seen(tf, estimator, workdir, result), close=False)


def linear_regressor_train_and_evaluate(tf, workdir):
    """tf.estimator's LinearRegressor (zero weights) through train_and_evaluate."""
    targets = (_X @ np.array([1.0, -2.0, 0.5], np.float32)).astype(np.float32)
    estimator = tf.estimator.LinearRegressor(_columns(tf), model_dir=workdir + "/model")
    train_spec = tf.estimator.TrainSpec(_dataset(tf, targets), max_steps=6)
    eval_spec = tf.estimator.EvalSpec(_dataset(tf, targets, repeat=False), throttle_secs=0)
    result, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return _split(_seen(tf, estimator, workdir, result), close=True)


def _in_a_graph_block(program):
    def run(tf, workdir):
        with tf.Graph().as_default():
            return program(tf, workdir)

    run.__doc__ = program.__doc__
    return run


# {group: (how it turns eager execution off, {program name: program})}
GROUPS = {
    "eager_disabled": (
        "disable_eager_execution",
        {
            "custom_tf1_model_fn": custom_tf1_model_fn,
            "linear_classifier": linear_classifier,
            "linear_classifier_v1": linear_classifier_v1,
            "dnn_classifier": dnn_classifier,
            "dnn_linear_combined_classifier": dnn_linear_combined_classifier,
            "linear_regressor_train_and_evaluate": linear_regressor_train_and_evaluate,
        },
    ),
    "v2_behavior_disabled": (
        "disable_v2_behavior",
        {
            "custom_tf1_model_fn": custom_tf1_model_fn,
            "linear_classifier_v1": linear_classifier_v1,
            "dnn_classifier": dnn_classifier,
            "linear_regressor_train_and_evaluate": linear_regressor_train_and_evaluate,
        },
    ),
    "graph_block": (
        None,
        {
            "linear_classifier": _in_a_graph_block(linear_classifier),
            "dnn_classifier": _in_a_graph_block(dnn_classifier),
        },
    ),
}


def run_group(tf, group):
    """{program: its result}: `group`'s programs, in this process, once eager execution is
    off as the group says (call it once per process)."""
    switch, programs = GROUPS[group]
    if switch is not None:
        getattr(tf.compat.v1, switch)()
    results = {}
    for name, program in programs.items():
        with tempfile.TemporaryDirectory() as workdir:
            results[name] = program(tf, workdir)
    return results


def boosted_trees_refused(tf):
    """[error type, message] of the kit's BoostedTreesClassifier.train (2.15 had none)."""
    bucketized = tf.feature_column.bucketized_column(_columns(tf)[0], [0.25, 0.5, 0.75])
    estimator = tf.estimator.BoostedTreesClassifier([bucketized], n_batches_per_layer=1)
    try:
        estimator.train(_dataset(tf), max_steps=2)
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None


def model_to_estimator_refused(tf):
    """[error type, message] of the kit's model_to_estimator given a Keras model compiled
    with eager execution off (2.15 trained it)."""
    import tf_keras

    model = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,))])
    model.compile("sgd", "mse")
    try:
        tf_keras.estimator.model_to_estimator(keras_model=model)
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None


def main(group, out_path, *flags):
    import tensorflow as tf

    found = {"tensorflow": tf.__version__}
    if "--kit" in flags:
        import components.estimator.install  # noqa: F401  (the samples say tf.estimator)
    found["programs"] = run_group(tf, group)
    if "--kit" in flags:
        found["boosted_trees"] = boosted_trees_refused(tf)
        found["model_to_estimator"] = model_to_estimator_refused(tf)
    with open(out_path, "w") as f:
        json.dump(found, f, sort_keys=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
