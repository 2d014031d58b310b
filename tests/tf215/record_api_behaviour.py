"""Records what tf.estimator 2.15 does for the names tests/test_estimator_api.py checks.

    bench/.venv-tf215/bin/python tests/tf215/record_api_behaviour.py

writes tests/data/tf215/api_behaviour.json (run once, in the TF 2.15 venv; about
a minute).  Each entry is built from tiny inputs the tests rebuild the same way:
parse specs, the batches `numpy_input_fn` and `pandas_input_fn` yield, the keys
`add_metrics` adds, when `InMemoryEvaluatorHook` evaluates, where the hook
factories stop, receiver tensors, and the RNN and SDCA estimators' variables,
keys and (for SDCA) weights.  The tests import those inputs from here.
"""

import json
import os
import tempfile

import numpy as np
import pandas as pd
import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "tf215", "api_behaviour.json")
fc = tf.feature_column


def _error(fn):
    try:
        fn()
    except Exception as e:  # the record is the error itself
        return {"type": type(e).__name__, "message": str(e)}
    return None


def spec_json(spec):
    """A parse spec as JSON: each feature's type, shape, dtype and default."""
    out = {}
    for key, feature in sorted(spec.items()):
        entry = {"type": type(feature).__name__, "dtype": feature.dtype.name}
        if isinstance(feature, tf.io.FixedLenFeature):
            entry["shape"] = list(feature.shape)
            default = feature.default_value
            entry["default_value"] = default.decode() if isinstance(default, bytes) else default
        out[key] = entry
    return out


def feature_columns():
    vocab = fc.categorical_column_with_vocabulary_list("color", ["red", "blue"])
    return [
        fc.numeric_column("x", shape=(2,)),
        fc.bucketized_column(fc.numeric_column("age"), [10.0, 20.0]),
        fc.indicator_column(vocab),
        fc.embedding_column(fc.categorical_column_with_hash_bucket("id", 10), 3),
    ]


def parse_specs():
    columns = feature_columns()
    return {
        "classifier": spec_json(
            tf.estimator.classifier_parse_example_spec(
                columns, "label", tf.string, label_default="red", weight_column="w"
            )
        ),
        "classifier_defaults": spec_json(tf.estimator.classifier_parse_example_spec(columns, "y")),
        "regressor": spec_json(
            tf.estimator.regressor_parse_example_spec(
                columns,
                "y",
                label_dimension=3,
                label_default=0.5,
                weight_column=fc.numeric_column("w", dtype=tf.float64),
            )
        ),
        "regressor_defaults": spec_json(tf.estimator.regressor_parse_example_spec(columns, "y")),
        "label_in_features": _error(
            lambda: tf.estimator.classifier_parse_example_spec(columns, "x")
        ),
        "weight_in_features": _error(
            lambda: tf.estimator.regressor_parse_example_spec(columns, "y", weight_column="age")
        ),
        "weight_not_numeric": _error(
            lambda: tf.estimator.classifier_parse_example_spec(
                columns, "y", weight_column=fc.categorical_column_with_identity("w", 3)
            )
        ),
    }


def _batches(input_fn, limit=None):
    """Runs a queue-based input_fn in a graph until it ends (or `limit` batches)."""
    with tf.Graph().as_default():
        out = input_fn()
        batches = []
        with tf.compat.v1.train.MonitoredSession() as session:
            while not session.should_stop() and (limit is None or len(batches) < limit):
                batches.append(session.run(out))
    return batches


def jsonable(value):
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    array = np.asarray(value)
    if array.dtype.kind in "SO":
        return [v.decode() if isinstance(v, bytes) else v for v in array.tolist()]
    return array.tolist()


def dtypes(value):
    if isinstance(value, dict):
        return {k: dtypes(v) for k, v in sorted(value.items())}
    if isinstance(value, tuple):
        return [dtypes(v) for v in value]
    return value.dtype.name


def _graph_dtypes(input_fn):
    with tf.Graph().as_default():
        return dtypes(input_fn())


NUMPY_X = {"a": np.arange(10, dtype=np.float64), "b": np.arange(10, dtype=np.int64)}
NUMPY_Y = np.arange(10, dtype=np.float64) * 10


def numpy_inputs():
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    fn = numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=4, num_epochs=2, shuffle=False)
    array_x = np.arange(6, dtype=np.float32).reshape(3, 2)
    shuffled = _batches(numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=3, num_epochs=1, shuffle=True))
    return {
        "two_epochs": [jsonable(b) for b in _batches(fn)],
        "dtypes": _graph_dtypes(fn),
        "array_x_no_y": [
            jsonable(b) for b in _batches(numpy_input_fn(array_x, batch_size=2, shuffle=False))
        ],
        "dict_y": [
            jsonable(b)
            for b in _batches(
                numpy_input_fn(
                    {"a": NUMPY_X["a"][:3]},
                    {"y1": NUMPY_Y[:3], "y2": NUMPY_Y[:3] + 1},
                    batch_size=2,
                    shuffle=False,
                )
            )
        ],
        "forever_first_4": [
            jsonable(b)
            for b in _batches(
                numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=4, num_epochs=None, shuffle=False),
                limit=4,
            )
        ],
        "shuffled_rows_sorted": sorted(
            float(a) for batch in shuffled for a in batch[0]["a"].tolist()
        ),
        "shuffled_batch_sizes": [len(b[1]) for b in shuffled],
        "shuffle_missing": _error(lambda: numpy_input_fn(NUMPY_X, NUMPY_Y)),
        "length_mismatch": _error(
            lambda: numpy_input_fn({"a": np.arange(3)}, np.arange(4), shuffle=False)()
        ),
        "duplicate_keys": _error(
            lambda: numpy_input_fn({"a": np.arange(3)}, {"a": np.arange(3)}, shuffle=False)()
        ),
        "bad_x": _error(lambda: numpy_input_fn([1, 2], shuffle=False)()),
        "empty_dict": _error(lambda: numpy_input_fn({}, shuffle=False)()),
    }


def pandas_frame():
    return pd.DataFrame(
        {"a": [1.0, 2.0, 3.0], "b": [4, 5, 6], "c": ["x", "y", "z"]}, index=[10, 11, 12]
    )


def pandas_inputs():
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    x = pandas_frame()
    y = pd.Series([0, 1, 0], index=x.index)
    y_frame = pd.DataFrame({"y1": [0.5, 1.5, 2.5], "a": [7, 8, 9]}, index=x.index)
    fn = pandas_input_fn(x, y, batch_size=2, shuffle=False)
    return {
        "series_y": [jsonable(b) for b in _batches(fn)],
        "dtypes": _graph_dtypes(fn),
        "frame_y": [
            jsonable(b) for b in _batches(pandas_input_fn(x, y_frame, batch_size=3, shuffle=False))
        ],
        "no_y_two_epochs": [
            jsonable(b)
            for b in _batches(pandas_input_fn(x, batch_size=2, num_epochs=2, shuffle=False))
        ],
        "custom_target": sorted(
            _batches(pandas_input_fn(x, y, batch_size=3, shuffle=False, target_column="label"))[0][
                0
            ]
        ),
        "target_in_x": _error(lambda: pandas_input_fn(x, y, shuffle=False, target_column="a")),
        "index_mismatch": _error(lambda: pandas_input_fn(x, pd.Series([0, 1, 0]), shuffle=False)),
        "shuffle_missing": _error(lambda: pandas_input_fn(x, y)),
        "target_not_string": _error(lambda: pandas_input_fn(x, y, shuffle=False, target_column=1)),
    }


def regression_input_fn():
    features = {"x": np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)}
    labels = np.array([[2.0], [4.0], [6.0], [8.0]], np.float32)
    return tf.data.Dataset.from_tensors((features, labels)).repeat()


def _linear_regressor(model_dir):
    return tf.estimator.LinearRegressor(
        [fc.numeric_column("x")],
        model_dir=model_dir,
        optimizer=tf.keras.optimizers.legacy.SGD(0.01),
    )


def _event_scalars(directory):
    """{step: sorted scalar tags} over every event file in `directory`."""
    steps = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags = [v.tag for v in event.summary.value if v.HasField("simple_value")]
            if tags:
                steps.setdefault(int(event.step), set()).update(tags)
    return {str(step): sorted(tags) for step, tags in sorted(steps.items())}


def add_metrics():
    base = _linear_regressor(tempfile.mkdtemp())
    base.train(regression_input_fn, steps=2)

    def metric_fn(labels, predictions, features, config):
        del config
        mean = tf.keras.metrics.Mean(name="mean_x")
        mean.update_state(features["x"])
        label_max = tf.compat.v1.metrics.mean(labels * 0.0 + 7.0)
        overriding = tf.keras.metrics.Mean(name="average_loss")
        overriding.update_state(predictions["predictions"] * 0.0 + 3.0)
        return {"mean_x": mean, "seven": label_max, "average_loss": overriding}

    extended = tf.estimator.add_metrics(base, metric_fn)
    results = extended.evaluate(regression_input_fn, steps=1)
    return {
        "keys": sorted(results),
        "mean_x": float(results["mean_x"]),
        "seven": float(results["seven"]),
        "average_loss": float(results["average_loss"]),
        "same_model_dir": extended.model_dir == base.model_dir,
        "type": type(extended).__name__,
        "bad_arg": _error(lambda: tf.estimator.add_metrics(base, lambda labels, mode: {})),
    }


def in_memory_evaluator():
    model_dir = tempfile.mkdtemp()
    estimator = _linear_regressor(model_dir)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(
        estimator, regression_input_fn, steps=2, name="mem", every_n_iter=3
    )
    estimator.train(regression_input_fn, steps=7, hooks=[hook])
    return {
        "eval_dir_steps": _event_scalars(os.path.join(model_dir, "eval_mem")),
        "bad_every_n_iter": _error(
            lambda: tf.estimator.experimental.InMemoryEvaluatorHook(
                estimator, regression_input_fn, every_n_iter=0
            )
        ),
    }


def hook_factories():
    estimator = _linear_regressor(tempfile.mkdtemp())
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) >= 3

    hook = tf.estimator.experimental.make_early_stopping_hook(
        estimator, should_stop, run_every_secs=None, run_every_steps=2
    )
    estimator.train(regression_input_fn, steps=20, hooks=[hook])
    early_stop_step = int(estimator.get_variable_value("global_step"))
    stop_hook = tf.estimator.experimental.make_stop_at_checkpoint_step_hook(estimator, 5)
    second = _linear_regressor(tempfile.mkdtemp())
    second.train(regression_input_fn, steps=20, hooks=[stop_hook])
    return {
        "early_stopping": {"calls": len(calls), "global_step": early_stop_step},
        "stop_at_checkpoint_step_chief": {
            "hook": type(stop_hook).__name__,
            "global_step": int(second.get_variable_value("global_step")),
        },
        "both_intervals": _error(
            lambda: tf.estimator.experimental.make_early_stopping_hook(
                estimator, should_stop, run_every_secs=1, run_every_steps=1
            )
        ),
        "not_an_estimator": _error(
            lambda: tf.estimator.experimental.make_early_stopping_hook(object(), should_stop)
        ),
    }


def call_logit_fn():
    call = tf.estimator.experimental.call_logit_fn
    seen = {}

    def logit_fn(features, mode, config):
        seen.update(mode=mode, config=config)
        return features["x"] * 2.0

    with tf.Graph().as_default():
        result = call(logit_fn, {"x": tf.constant([1.0])}, "train", {"p": 1}, "cfg")
        dict_result = call(
            lambda features: {"a": features["x"]}, {"x": tf.constant(1.0)}, "eval", None, None
        )
        return {
            "passes": {k: str(v) for k, v in sorted(seen.items())},
            "tensor_result": type(result).__name__,
            "dict_result_keys": sorted(dict_result),
            "bad_result": _error(lambda: call(lambda features: [1.0], {}, "eval", None, None)),
        }


def _placeholder(tensor):
    return {"shape": tensor.shape.as_list(), "dtype": tensor.dtype.name}


def receivers():
    with tf.Graph().as_default():
        build = tf.estimator.experimental.build_raw_supervised_input_receiver_fn
        receiver = build(
            {"a": tf.constant([[1.0, 2.0]]), "b": tf.constant([1], tf.int64)},
            tf.constant([[0.5]]),
            default_batch_size=4,
        )()
        single = build(tf.constant([[1.0]]), {"y": tf.constant([[1]])})()
        tensor_receiver = tf.estimator.export.TensorServingInputReceiver(
            tf.constant([1.0]), tf.compat.v1.placeholder(tf.string, [None])
        )
        return {
            "dict_features": {
                "type": type(receiver).__name__,
                "receiver_tensors": {
                    k: _placeholder(v) for k, v in sorted(receiver.receiver_tensors.items())
                },
                "features": sorted(receiver.features),
                "labels_type": type(receiver.labels).__name__,
            },
            "tensor_features": {
                "receiver_tensors": sorted(single.receiver_tensors),
                "features_type": type(single.features).__name__,
                "labels": sorted(single.labels),
            },
            "overlap": _error(lambda: build({"a": tf.constant([1.0])}, {"a": tf.constant([1.0])})),
            "tensor_serving_receiver": {
                "features_type": type(tensor_receiver.features).__name__,
                "receiver_tensors": sorted(tensor_receiver.receiver_tensors),
            },
            "tensor_serving_receiver_none": _error(
                lambda: tf.estimator.export.TensorServingInputReceiver(None, tf.constant([1.0]))
            ),
        }


def sequence_input_fn():
    values = np.array(
        [[1.0, 2.0, 0.0], [3.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 0.0]], np.float32
    )
    lengths = np.array([2, 1, 3, 2])
    labels = np.array([[1], [0], [1], [0]], np.int64)

    def to_sparse(features, label):
        dense = features["seq"]
        mask = tf.sequence_mask(features["len"], 3)
        sparse = tf.SparseTensor(
            tf.where(mask), tf.boolean_mask(dense, mask), tf.shape(dense, out_type=tf.int64)
        )
        return {"seq": sparse, "ctx": features["ctx"]}, label

    features = {
        "seq": values,
        "len": lengths,
        "ctx": np.array([[0.5], [1.0], [0.0], [2.0]], np.float32),
    }
    return tf.data.Dataset.from_tensors((features, labels)).map(to_sparse).repeat()


def rnn():
    seq = [tf.feature_column.sequence_numeric_column("seq")]
    ctx = [fc.numeric_column("ctx")]
    classifier = tf.estimator.experimental.RNNClassifier(
        seq,
        context_feature_columns=ctx,
        units=[4],
        cell_type="lstm",
        model_dir=tempfile.mkdtemp(),
    )
    classifier.train(sequence_input_fn, steps=2)
    results = classifier.evaluate(sequence_input_fn, steps=1)
    predictions = next(classifier.predict(sequence_input_fn))
    regressor = tf.estimator.experimental.RNNEstimator(
        tf.estimator.RegressionHead(),
        seq,
        units=[3],
        cell_type="gru",
        model_dir=tempfile.mkdtemp(),
    )
    regressor.train(sequence_input_fn, steps=1)
    default = tf.estimator.experimental.RNNClassifier(seq, units=[2], model_dir=tempfile.mkdtemp())
    default.train(sequence_input_fn, steps=1)
    sequences = tf.estimator.experimental.RNNClassifier(
        seq, units=[2], return_sequences=True, model_dir=tempfile.mkdtemp()
    )

    def sequence_labels():
        return sequence_input_fn().map(lambda f, label: (f, tf.tile(label, [1, 3])))

    sequences.train(sequence_labels, steps=1)
    seq_results = sequences.evaluate(sequence_labels, steps=1)
    seq_predictions = next(sequences.predict(sequence_labels))
    return {
        "classifier_variables": classifier.get_variable_names(),
        "evaluate_keys": sorted(results),
        "predict_keys": sorted(predictions),
        "regressor_variables": regressor.get_variable_names(),
        "default_cell_variables": default.get_variable_names(),
        "return_sequences": {
            "evaluate_keys": sorted(seq_results),
            "predict": {k: list(np.shape(v)) for k, v in sorted(seq_predictions.items())},
        },
        "rnn_cell_fn_and_units": _error(
            lambda: tf.estimator.experimental.RNNClassifier(
                seq, units=[2], rnn_cell_fn=lambda: tf.keras.layers.SimpleRNNCell(2)
            )
        ),
        "bad_cell_type": _error(
            lambda: tf.estimator.experimental.RNNClassifier(
                seq, units=[2], cell_type="nope", model_dir=tempfile.mkdtemp()
            ).train(sequence_input_fn, steps=1)
        ),
    }


def sdca_input_fn():
    features = {
        "example_id": np.array([b"0", b"1", b"2", b"3", b"4", b"5"]),
        "x": np.array([[1.0], [2.0], [-1.0], [-2.0], [0.5], [-0.5]], np.float32),
        "cat": np.array([["a"], ["b"], ["a"], ["c"], ["b"], ["c"]]),
    }
    labels = np.array([[1], [1], [0], [0], [1], [0]], np.int64)
    return tf.data.Dataset.from_tensors((features, labels)).repeat()


def sdca_columns():
    return [
        fc.numeric_column("x"),
        fc.categorical_column_with_vocabulary_list("cat", ["a", "b", "c"]),
    ]


def sdca():
    columns = sdca_columns()
    results = {}
    for name, estimator_class, l1 in (
        ("classifier", tf.estimator.LinearClassifier, 0.0),
        ("classifier_l1", tf.estimator.LinearClassifier, 0.5),
        ("regressor", tf.estimator.LinearRegressor, 0.0),
    ):
        optimizer = tf.estimator.experimental.LinearSDCA(
            example_id_column="example_id",
            symmetric_l1_regularization=l1,
            symmetric_l2_regularization=2.0,
        )
        estimator = estimator_class(columns, optimizer=optimizer, model_dir=tempfile.mkdtemp())
        estimator.train(sdca_input_fn, steps=5)
        names = estimator.get_variable_names()
        results[name] = {
            "variables": names,
            "weights": {
                n: estimator.get_variable_value(n).tolist()
                for n in names
                if n.startswith("linear/linear_model/") and n.endswith(("weights", "bias_weights"))
            },
            "evaluate": {
                k: float(v) for k, v in estimator.evaluate(sdca_input_fn, steps=1).items()
            },
        }
    results["multi_class"] = _error(
        lambda: tf.estimator.LinearClassifier(
            columns, n_classes=3, optimizer=tf.estimator.experimental.LinearSDCA("example_id")
        )
    )
    results["mean_combiner"] = _error(
        lambda: tf.estimator.LinearRegressor(
            columns,
            sparse_combiner="mean",
            optimizer=tf.estimator.experimental.LinearSDCA("example_id"),
        )
    )
    return results


def main():
    record = {"recorded_with": {"tensorflow": tf.__version__}}
    for name, fn in (
        ("parse_specs", parse_specs),
        ("numpy_input_fn", numpy_inputs),
        ("pandas_input_fn", pandas_inputs),
        ("add_metrics", add_metrics),
        ("in_memory_evaluator", in_memory_evaluator),
        ("hook_factories", hook_factories),
        ("call_logit_fn", call_logit_fn),
        ("receivers", receivers),
        ("rnn", rnn),
        ("sdca", sdca),
    ):
        record[name] = fn()
        print("recorded", name, flush=True)
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(os.path.normpath(OUT))


if __name__ == "__main__":
    main()
