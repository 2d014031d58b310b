"""Records tf.estimator 2.15's heads and head-based estimators, for tests/test_estimator_heads.py.

Run once with the TF 2.15 venv that bench/estimator_vs_tf215.py builds:

    bench/.venv-tf215/bin/python tests/tf215/record_heads.py

It writes tests/data/tf215/heads.json: for each head, the loss, predictions and
metric values on fixed logits and labels, and its export output keys; for each
estimator, the `evaluate()` results, the predictions' keys, dtypes and shapes,
and the exported signatures.  The data and the cases are defined here, without
TensorFlow, so that the test builds exactly the same ones.
"""

import json
import os
import sys
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "tf215", "heads.json")

N = 64
BATCH = 16
STEPS = 5


def estimator_data():
    """Features x (float), c (category 0..3), w (weight), and every case's labels."""
    rng = np.random.RandomState(0)
    x = rng.uniform(-1.0, 1.0, N).astype(np.float32)
    c = rng.randint(0, 4, N).astype(np.int64)
    w = rng.uniform(0.5, 1.5, N).astype(np.float32)
    features = {"x": x, "c": c, "w": w}
    labels = {
        "multi_label": np.stack([x > 0, c >= 2, (x > 0.5) | (c == 0)], axis=1).astype(np.int64),
        "poisson": rng.poisson(np.exp(0.5 * x + 0.2 * c)).astype(np.float32),
        "logistic": (1.0 / (1.0 + np.exp(-(2.0 * x - 0.5 * c + 1.0)))).astype(np.float32),
        "multi_head": {"a": c % 3, "b": (2.0 * x + 1.0).astype(np.float32)},
        "binary": (x + 0.3 * c > 0.4).astype(np.int64),
        "regression_2d": np.stack([x, 0.5 * c], axis=1).astype(np.float32),
    }
    return features, labels


# Head-level cases: fixed logits, labels and features; B = 6 rows.
HEAD_FEATURES = {
    "w": [[1.0], [2.0], [0.5], [1.0], [1.5], [1.0]],
    "w2": [[1.0, 2.0], [0.5, 1.0], [1.0, 1.0], [2.0, 0.5], [1.0, 1.5], [0.5, 0.5]],
}
LOGITS_1 = [[-1.5], [0.2], [2.0], [-0.3], [0.9], [-2.2]]
LOGITS_2 = [[0.3, -1.0], [1.2, 0.4], [-0.5, 2.0], [0.0, 0.7], [2.5, -0.2], [-1.1, 0.1]]
LOGITS_3 = [
    [1.0, -0.5, 0.3],
    [-0.2, 2.0, 0.1],
    [0.5, 0.5, -1.0],
    [-1.5, 0.3, 1.2],
    [0.8, -0.8, 0.0],
    [0.1, 0.2, 2.3],
]
MULTI_HOT = [[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 1]]
# The same labels as a sparse [6, 3] tensor: (indices, values).
SPARSE_IDS = (
    [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0], [4, 0], [5, 0], [5, 1]],
    [0, 2, 1, 0, 1, 2, 0, 1, 2],
)
SPARSE_NAMES = (SPARSE_IDS[0], ["x", "z", "y", "x", "y", "z", "x", "y", "z"])

# name: (head constructor, keyword arguments, logits, labels, labels kind, regularization losses)
HEAD_CASES = {
    "binary": (
        "BinaryClassHead",
        {"weight_column": "w", "thresholds": [0.3, 0.7]},
        LOGITS_1,
        [[0], [1], [1], [0], [0], [1]],
        "int",
        None,
    ),
    "binary_vocab_sum": (
        "BinaryClassHead",
        {"label_vocabulary": ["neg", "pos"], "loss_reduction": "sum", "name": "clf"},
        LOGITS_1,
        [["neg"], ["pos"], ["pos"], ["neg"], ["neg"], ["pos"]],
        "string",
        [0.25],
    ),
    "multi_class": (
        "MultiClassHead",
        {"n_classes": 3, "weight_column": "w", "label_vocabulary": ["a", "b", "c"]},
        LOGITS_3,
        [["a"], ["b"], ["a"], ["c"], ["b"], ["c"]],
        "string",
        None,
    ),
    "multi_label": (
        "MultiLabelHead",
        {"n_classes": 3, "thresholds": [0.5], "classes_for_class_based_metrics": [0, 2]},
        LOGITS_3,
        MULTI_HOT,
        "int",
        None,
    ),
    "multi_label_sparse": (
        "MultiLabelHead",
        {"n_classes": 3, "weight_column": "w"},
        LOGITS_3,
        SPARSE_IDS,
        "sparse",
        None,
    ),
    "multi_label_vocab": (
        "MultiLabelHead",
        {
            "n_classes": 3,
            "label_vocabulary": ["x", "y", "z"],
            "classes_for_class_based_metrics": ["y"],
        },
        LOGITS_3,
        SPARSE_NAMES,
        "sparse",
        None,
    ),
    "regression": (
        "RegressionHead",
        {"label_dimension": 2, "weight_column": ("w2", 2)},
        LOGITS_2,
        [[0.0, -1.0], [1.0, 1.0], [0.5, 1.5], [-0.5, 0.0], [2.0, 0.0], [-1.0, 0.5]],
        "float",
        None,
    ),
    "poisson": (
        "PoissonRegressionHead",
        {},
        LOGITS_1,
        [[0.0], [1.0], [6.0], [1.0], [2.0], [0.0]],
        "float",
        None,
    ),
    "logistic": (
        "LogisticRegressionHead",
        {"weight_column": "w"},
        LOGITS_1,
        [[0.1], [0.6], [0.9], [0.4], [0.7], [0.0]],
        "float",
        None,
    ),
}
# The MultiHead case: heads a (3 classes) and b (regression), logits concatenated.
MULTI_HEAD_LOGITS = [row3 + row1 for row3, row1 in zip(LOGITS_3, LOGITS_1, strict=True)]
MULTI_HEAD_LABELS = {
    "a": [[0], [1], [0], [2], [1], [2]],
    "b": [[-1.0], [0.0], [2.0], [0.0], [1.0], [-2.0]],
}
MULTI_HEAD_WEIGHTS = [1.0, 0.5]
MULTI_HEAD_REGULARIZATION = [0.1]
HEAD_NAMES = [*HEAD_CASES, "multi_head"]


def _tensor_record(value):
    value = np.asarray(value)
    if value.dtype == object:
        value = value.astype(bytes).astype(str)
    return {"dtype": str(value.dtype), "shape": list(value.shape), "value": value.tolist()}


def _float_record(results):
    return {k: float(v) for k, v in results.items()}


def _key(key):
    return list(key) if isinstance(key, tuple) else key


def _make_head(tf, module, class_name, kwargs):
    kwargs = dict(kwargs)
    weight = kwargs.get("weight_column")
    if isinstance(weight, tuple):
        kwargs["weight_column"] = tf.feature_column.numeric_column(weight[0], shape=(weight[1],))
    return getattr(module, class_name)(**kwargs)


def _labels(tf, labels, kind):
    if kind == "sparse":
        indices, values = labels
        return tf.sparse.SparseTensor(indices, values, dense_shape=[6, 3])
    dtype = {"int": tf.int64, "string": tf.string, "float": tf.float32}[kind]
    return tf.constant(labels, dtype=dtype)


def _export_outputs(tf, module, head, logits):
    """Export output name -> class name, from a PREDICT spec built in a graph."""
    with tf.Graph().as_default():
        spec = head.create_estimator_spec(
            features={k: tf.constant(v) for k, v in HEAD_FEATURES.items()},
            mode=module.ModeKeys.PREDICT,
            logits=tf.constant(logits),
        )
        return {k: type(v).__name__ for k, v in spec.export_outputs.items()}


def _record_head(tf, module, head, logits, labels, regularization):
    features = {k: tf.constant(v) for k, v in HEAD_FEATURES.items()}
    logits_t = tf.constant(logits)
    loss = head.loss(labels, logits_t, features=features, regularization_losses=regularization)
    metrics = head.update_metrics(
        head.metrics(regularization_losses=regularization),
        features,
        logits_t,
        labels,
        regularization_losses=regularization,
    )
    return {
        "name": head.name,
        "logits_dimension": head.logits_dimension,
        "loss_reduction": head.loss_reduction,
        "loss": float(loss),
        "predictions": [
            [_key(k), _tensor_record(v)] for k, v in sorted(head.predictions(logits_t).items())
        ],
        "metrics": _float_record({k: m.result() for k, m in metrics.items()}),
        "export_outputs": _export_outputs(tf, module, head, logits),
    }


def record_head(tf, module, name):
    """The record of head case `name` (or "multi_head"), built with `module`'s heads."""
    if name == "multi_head":
        head = module.MultiHead(
            [module.MultiClassHead(3, name="a"), module.RegressionHead(name="b")],
            head_weights=MULTI_HEAD_WEIGHTS,
        )
        labels = {
            "a": tf.constant(MULTI_HEAD_LABELS["a"], tf.int64),
            "b": tf.constant(MULTI_HEAD_LABELS["b"], tf.float32),
        }
        return _record_head(tf, module, head, MULTI_HEAD_LOGITS, labels, MULTI_HEAD_REGULARIZATION)
    class_name, kwargs, logits, labels, kind, regularization = HEAD_CASES[name]
    head = _make_head(tf, module, class_name, kwargs)
    return _record_head(tf, module, head, logits, _labels(tf, labels, kind), regularization)


# ------------------------------------------------------------------ estimators
def feature_columns(tf):
    x = tf.feature_column.numeric_column("x")
    c = tf.feature_column.categorical_column_with_identity("c", 4)
    return x, c, tf.feature_column.indicator_column(c)


def make_estimator(tf, module, name, model_dir, seed=1):
    """The estimator of case `name` from `module` (tf.estimator or the kit's estimator).

    The same code builds both; `module` supplies the classes and the heads."""
    x, c, c_one_hot = feature_columns(tf)
    config = module.RunConfig(tf_random_seed=seed)
    common = {"model_dir": model_dir, "config": config}
    if name == "dnn_multi_label":
        head = module.MultiLabelHead(3, thresholds=[0.5])
        return module.DNNEstimator(head, [8], [x, c_one_hot], **common)
    if name == "linear_poisson":
        return module.LinearEstimator(module.PoissonRegressionHead(), [x, c], **common)
    if name == "linear_logistic":
        return module.LinearEstimator(
            module.LogisticRegressionHead(weight_column="w"), [x, c], **common
        )
    if name == "linear_multi_head":
        head = module.MultiHead(
            [module.MultiClassHead(3, name="a"), module.RegressionHead(name="b")],
            head_weights=[1.0, 0.5],
        )
        return module.LinearEstimator(head, [x, c], **common)
    if name == "baseline":
        return module.BaselineEstimator(module.BinaryClassHead(name="clf"), **common)
    if name == "dnn_linear_combined":
        return module.DNNLinearCombinedEstimator(
            module.RegressionHead(label_dimension=2),
            linear_feature_columns=[c],
            dnn_feature_columns=[x],
            dnn_hidden_units=[8],
            **common,
        )
    raise ValueError(name)


# name: (the labels' key in estimator_data(), the features it reads).  Models that
# start from zeros (all but the DNN ones) train the same in both, and their losses
# are compared too.  The baseline reads one feature: tf.estimator 2.15's
# BaselineEstimator fails on a Dataset of two or more ("GetNext() failed because
# the iterator has not been initialized").
ESTIMATOR_CASES = {
    "dnn_multi_label": ("multi_label", ("x", "c")),
    "linear_poisson": ("poisson", ("x", "c")),
    "linear_logistic": ("logistic", ("x", "c", "w")),
    "linear_multi_head": ("multi_head", ("x", "c")),
    "baseline": ("binary", ("x",)),
    "dnn_linear_combined": ("regression_2d", ("x", "c")),
}
ZERO_INITIALIZED = ("linear_poisson", "linear_logistic", "linear_multi_head", "baseline")


def case_features(case, rows=N):
    features, _ = estimator_data()
    return {k: features[k][:rows] for k in ESTIMATOR_CASES[case][1]}


def input_fn(tf, case, repeat):
    labels = estimator_data()[1][ESTIMATOR_CASES[case][0]]
    dataset = tf.data.Dataset.from_tensor_slices((case_features(case), labels))
    return (dataset.repeat() if repeat else dataset).batch(BATCH)


def predict_input_fn(tf, case):
    return tf.data.Dataset.from_tensor_slices(case_features(case, 5)).batch(5)


def parsing_receiver(tf, module, case):
    x, c, _ = feature_columns(tf)
    columns = [x, c] if "c" in ESTIMATOR_CASES[case][1] else [x]
    spec = tf.feature_column.make_parse_example_spec(columns)
    return module.export.build_parsing_serving_input_receiver_fn(spec)


def signature_record(tf, export_dir):
    """{signature: {method, inputs, outputs}} as the SavedModel holds them (less TF2's
    internal `__saved_model_init_op`)."""
    from tensorflow.python.saved_model import loader_impl

    saved = loader_impl.parse_saved_model(export_dir)
    out = {}
    for name, sig in saved.meta_graphs[0].signature_def.items():
        if name.startswith("__"):
            continue
        out[name] = {
            "method": sig.method_name,
            "inputs": sorted(sig.inputs),
            "outputs": {k: tf.dtypes.as_dtype(v.dtype).name for k, v in sig.outputs.items()},
        }
    return out


def run_estimator(tf, module, name, workdir):
    """(estimator, evaluate() results, first prediction, export dir) of case `name`."""
    est = make_estimator(tf, module, name, os.path.join(workdir, name))
    est.train(lambda: input_fn(tf, name, True), steps=STEPS)
    results = est.evaluate(lambda: input_fn(tf, name, False))
    first = next(iter(est.predict(lambda: predict_input_fn(tf, name))))
    export_dir = est.export_saved_model(
        os.path.join(workdir, name + "_export"), parsing_receiver(tf, module, name)
    )
    return est, results, first, os.fsdecode(export_dir)


def record_estimator(tf, results, first, export_dir):
    return {
        "evaluate": {k: float(v) for k, v in results.items()},
        "predict": [
            [_key(k), {"dtype": str(np.asarray(v).dtype), "shape": list(np.shape(v))}]
            for k, v in sorted(first.items())
        ],
        "signatures": signature_record(tf, export_dir),
    }


def main():
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    assert tf.__version__.startswith("2.15"), tf.__version__
    record = {
        "tensorflow": tf.__version__,
        "heads": {name: record_head(tf, tf.estimator, name) for name in HEAD_NAMES},
        "estimators": {},
    }
    with tempfile.TemporaryDirectory() as workdir:
        for name in ESTIMATOR_CASES:
            _, results, first, export_dir = run_estimator(tf, tf.estimator, name, workdir)
            record["estimators"][name] = record_estimator(tf, results, first, export_dir)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
