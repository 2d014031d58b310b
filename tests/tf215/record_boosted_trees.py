"""Records X

Run once with the TF 2.15 venv that bench/estimator_vs_tf215.py builds:

    bench/.venv-tf215/bin/python tests/tf215/record_boosted_trees.py

It writes tests/data/tf215/boosted_trees.json: for each case, the trained model's
predictions on every row, its `evaluate()` results and its normalized feature
importances.  The data and the cases are defined here, without TensorFlow, so that the
test runs exactly the same ones with the kit's estimator.
"""

import json
import os
import sys
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "tf215", "boosted_trees_tf28.json")

N = 300
BATCH = 100
X1_BOUNDARIES = [float(b) for b in np.linspace(-1.75, 1.75, 15)]
X2_BOUNDARIES = [-1.0, -0.3, 0.0, 0.4, 1.1]
CATEGORIES = 5

_TREES = {"n_trees": 4, "max_depth": 3, "learning_rate": 0.2}
CASES = {
    "binary": (
        "classifier",
        2,
        "binary",
        {**_TREES, "l2_regularization": 0.1, "center_bias": True},
    ),
    "binary_weighted_l1_min_node_weight": (
        "classifier",
        2,
        "binary",
        {**_TREES, "weight_column": "w", "l1_regularization": 0.02, "min_node_weight": 0.02},
    ),
    "binary_weighted_pre_pruned": (
        "classifier",
        2,
        "binary",
        {**_TREES, "weight_column": "w", "tree_complexity": 0.005, "pruning_mode": "pre"},
    ),
    # No node of the third layer splits: training ends with that tree (tf.estimator
    # went on attempting layers that could find nothing).
    "binary_l1_pre_pruned_stops": (
        "classifier",
        2,
        "binary",
        {**_TREES, "l1_regularization": 0.02, "tree_complexity": 0.005, "pruning_mode": "pre"},
    ),
    "regression_post_pruned": (
        "regressor",
        1,
        "regression",
        {**_TREES, "center_bias": True, "tree_complexity": 0.5, "pruning_mode": "post"},
    ),
    "multiclass": ("classifier", 3, "multiclass", {**_TREES, "l2_regularization": 0.5}),
    "binary_batched": ("classifier", 2, "binary", {**_TREES, "n_batches_per_layer": 3}),
}
# Numeric columns are cut at quantiles each side sketches its own way: compared loosely.
NUMERIC_CASE = "binary_numeric"
CASES[NUMERIC_CASE] = ("classifier", 2, "binary", {**_TREES, "center_bias": True})


def data():
    """Features x1, x2 (float), c (category 0..4), w (weight), and every case's labels."""
    rng = np.random.RandomState(0)
    x1 = rng.uniform(-2.0, 2.0, N).astype(np.float32)
    x2 = rng.normal(size=N).astype(np.float32)
    c = rng.randint(0, CATEGORIES, N).astype(np.int64)
    w = rng.uniform(0.5, 1.5, N).astype(np.float32)
    noise = rng.normal(scale=0.5, size=N)
    signal = x1 + 1.5 * (c == 2) - 0.8 * (x2 > 0.4) + noise
    labels = {
        "binary": (signal > 0.3).astype(np.int64),
        "regression": (2.0 * x1 - 0.5 * c + x2 * (c == 1) + noise).astype(np.float32),
        "multiclass": np.digitize(signal, [-0.5, 0.8]).astype(np.int64),
    }
    return {"x1": x1, "x2": x2, "c": c, "w": w}, labels


def feature_columns(tf, numeric):
    fc = tf.feature_column
    x1 = fc.numeric_column("x1")
    return [
        x1 if numeric else fc.bucketized_column(x1, X1_BOUNDARIES),
        fc.bucketized_column(fc.numeric_column("x2"), X2_BOUNDARIES),
        fc.indicator_column(fc.categorical_column_with_identity("c", CATEGORIES)),
    ]


def run_case(tf, estimator, name, model_dir):
    """Trains case `name` to its last tree; {"evaluate", "predictions", "importances"}."""
    kind, classes, label_name, args = CASES[name]
    args = dict(args)
    features, labels = data()
    y = labels[label_name]
    batches = args.pop("n_batches_per_layer", 1)
    common = {
        "feature_columns": feature_columns(tf, name == NUMERIC_CASE),
        "n_batches_per_layer": batches,
        "model_dir": model_dir,
        "train_in_memory": batches == 1,
        **args,
    }
    if kind == "classifier":
        model = estimator.BoostedTreesClassifier(n_classes=classes, **common)
    else:
        model = estimator.BoostedTreesRegressor(**common)

    def train_input():
        if batches == 1:
            return tf.data.Dataset.from_tensors((features, y)).repeat()
        return tf.data.Dataset.from_tensor_slices((features, y)).batch(BATCH).repeat()

    def eval_input():
        return tf.data.Dataset.from_tensor_slices((features, y)).batch(BATCH)

    def predict_input():
        return tf.data.Dataset.from_tensor_slices(features).batch(BATCH)

    model.train(train_input, max_steps=1000)  # both stop once the trees are grown
    evaluated = model.evaluate(eval_input)
    key = "probabilities" if kind == "classifier" else "predictions"
    predictions = [p[key].tolist() for p in model.predict(predict_input)]
    importances = model.experimental_feature_importances(normalize=True)
    return {
        "evaluate": {k: float(v) for k, v in evaluated.items() if k != "global_step"},
        "predictions": predictions,
        "importances": {k: float(v) for k, v in importances.items()},
    }


def main():
    import tensorflow as tf

    if not tf.__version__.startswith("2.8"):
        sys.exit(f"record with TF 2.8 (bench/.venv-tf28), not {tf.__version__}")
    recorded = {}
    for name in CASES:
        with tempfile.TemporaryDirectory() as model_dir:
            recorded[name] = run_case(tf, tf.estimator, name, model_dir)
        print(name, recorded[name]["evaluate"], flush=True)
    with open(OUT, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": recorded}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
