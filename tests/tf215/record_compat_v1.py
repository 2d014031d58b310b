"""Records tf.compat.v1.estimator 2.15: its public names and how its V1 canned
estimators train next to tf.estimator's (run once, in the TF 2.15 venv).

    bench/.venv-tf215/bin/python tests/tf215/record_compat_v1.py

writes tests/data/tf215/compat_v1_api.json (every public name of
`tf.compat.v1.estimator` with its kind, parameters and whether it is
`tf.estimator`'s own object), tests/data/tf215/compat_v1_dnn_init/ (a DNN's
initial weights, so both sides start the same),
tests/data/tf215/compat_v1_<kind>_model/ (2.15 V1 model_dirs to resume) and
tests/data/tf215/compat_v1_training.json (each of KINDS, V1 and V2, same
data and start, after TRAIN_STEPS: eval metrics, the first rows' outputs,
variable names; each kept model_dir's after RESUME_STEPS more; KMeans's centers).
tests/test_estimator_compat_v1.py builds the
same models from here on the kit.
"""

import itertools
import json
import os
import shutil
import sys
import tempfile

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "tf215")
API_OUT = os.path.join(DATA, "compat_v1_api.json")
TRAINING_OUT = os.path.join(DATA, "compat_v1_training.json")
INIT_DIR = os.path.join(DATA, "compat_v1_dnn_init")
RESUME_STEPS = 5
# V1 models whose 2.15 model_dir (compat_v1_<kind>_model, RESUME_STEPS in) is kept.
RESUMED_KINDS = ("dnn", "linear")
TRAIN_STEPS = 300
BATCH = 32
HIDDEN_UNITS = [8]
KINDS = ("dnn", "linear", "baseline", "dnn_linear", "dnn_regressor", "linear_regressor")
# 2.15's V2 BaselineClassifier fails on this input_fn ("GetNext() failed because the
# iterator has not been initialized"): recorded for V1 only.
KINDS_BY_NAMESPACE = {
    "tf.estimator": tuple(k for k in KINDS if k != "baseline"),
    "tf.compat.v1.estimator": KINDS,
}


def training_data():
    """256 rows of two features; the class is a noisy linear rule, the regression
    target a noisy linear function."""
    rng = np.random.RandomState(0)
    x = rng.randn(256, 2).astype(np.float32)
    y = (x[:, 0] - 0.5 * x[:, 1] + 0.3 * rng.randn(256) > 0).astype(np.int64)
    target = (2.0 * x[:, 0] + x[:, 1] + 0.1 * rng.randn(256)).astype(np.float32)
    return x, y, target


def input_fn(tf, repeat, regression=False):
    x, y, target = training_data()
    labels = target if regression else y
    dataset = tf.data.Dataset.from_tensor_slices(({"a": x[:, 0], "b": x[:, 1]}, labels))
    return (dataset.repeat() if repeat else dataset).batch(BATCH)


def build(tf, namespace, kind, model_dir, init_dir):
    """`kind`'s estimator from `namespace` (tf.estimator or tf.compat.v1.estimator, or
    the kit's), with its defaults; DNNs start from `init_dir`'s weights."""
    columns = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    warm_dnn = namespace.WarmStartSettings(init_dir, vars_to_warm_start="dnn/")
    if kind == "linear":
        return namespace.LinearClassifier(columns, model_dir=model_dir)
    if kind == "linear_regressor":
        return namespace.LinearRegressor(columns, model_dir=model_dir)
    if kind == "baseline":
        return namespace.BaselineClassifier(model_dir=model_dir)
    if kind == "dnn_linear":
        return namespace.DNNLinearCombinedClassifier(
            model_dir=model_dir,
            linear_feature_columns=columns,
            dnn_feature_columns=columns,
            dnn_hidden_units=HIDDEN_UNITS,
            warm_start_from=warm_dnn,
        )
    model_class = namespace.DNNRegressor if kind == "dnn_regressor" else namespace.DNNClassifier
    return model_class(HIDDEN_UNITS, columns, model_dir=model_dir, warm_start_from=warm_dnn)


def train(tf, model, kind):
    regression = kind.endswith("regressor")
    model.train(lambda: input_fn(tf, True, regression), steps=TRAIN_STEPS)


def outcome(tf, model, kind):
    """What a test compares: eval metrics, the first rows' outputs, the variables."""
    regression = kind.endswith("regressor")
    metrics = model.evaluate(lambda: input_fn(tf, False, regression))
    predictions = model.predict(lambda: input_fn(tf, False).map(lambda f, _: f))
    key = "predictions" if regression else "probabilities"
    return {
        "metrics": {k: float(v) for k, v in metrics.items() if k in _COMPARED},
        "outputs": [p[key].tolist() for p in itertools.islice(predictions, 8)],
        "variables": sorted(model.get_variable_names()),
    }


_COMPARED = (
    "loss",
    "average_loss",
    "accuracy",
    "auc",
    "auc_precision_recall",
    "label/mean",
    "prediction/mean",
)


def kmeans_points():
    """150 points around three centers."""
    rng = np.random.RandomState(0)
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [-5.0, 5.0]], np.float32)
    return np.concatenate([c + 0.3 * rng.randn(50, 2) for c in centers]).astype(np.float32)


KMEANS_RUNS = {
    "random full batch": {"initial_clusters": "random", "use_mini_batch": False},
    "kmeans_plus_plus full batch": {
        "initial_clusters": "kmeans_plus_plus",
        "use_mini_batch": False,
    },
    "kmeans_plus_plus mini-batch": {"initial_clusters": "kmeans_plus_plus"},
}
KMEANS_TRAIN_CALLS = 5


def kmeans_outcome(tf, namespace, model_dir, settings):
    """KMEANS_TRAIN_CALLS train calls over all points at once (as 2.15's docs did),
    then the centers, the score and the first points' clusters."""
    model = namespace.experimental.KMeans(3, model_dir=model_dir, seed=1, **settings)

    def input_fn():
        return tf.data.Dataset.from_tensors(kmeans_points())

    for _ in range(KMEANS_TRAIN_CALLS):
        model.train(input_fn)
    return {
        "centers": model.cluster_centers().tolist(),
        "score": float(model.score(input_fn)),
        "cluster_index": [
            int(i) for i in itertools.islice(model.predict_cluster_index(input_fn), 5)
        ],
    }


def _api(tf):
    from record_public_api import _walk

    v2 = _walk(tf.estimator)
    v1 = _walk(tf.compat.v1.estimator)
    for name, entry in v1.items():
        value = tf.compat.v1.estimator
        for part in name.split("."):
            value = getattr(value, part)
        shared = name in v2 and v2[name]["kind"] != "module"
        if shared:
            other = tf.estimator
            for part in name.split("."):
                other = getattr(other, part)
            shared = other is value
        entry["same_as_tf_estimator"] = shared
    return {"recorded_with": tf.__version__, "tf.compat.v1.estimator": v1}


def _write_init(tf):
    """A DNN trained one step at learning rate 0: its initial weights, kept."""
    shutil.rmtree(INIT_DIR, ignore_errors=True)
    columns = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    model = tf.estimator.DNNClassifier(
        HIDDEN_UNITS,
        columns,
        model_dir=INIT_DIR,
        optimizer=tf.keras.optimizers.legacy.SGD(0.0),
        config=tf.estimator.RunConfig(tf_random_seed=1),
    )
    model.train(lambda: input_fn(tf, repeat=True), steps=1)
    _keep_last_checkpoint_only(INIT_DIR)


def _keep_last_checkpoint_only(model_dir):
    from record_checkpoints import _keep_last_checkpoint_only as keep

    keep(model_dir)


def resumed_dir(kind):
    return os.path.join(DATA, f"compat_v1_{kind}_model")


def _record_resume(tf, record):
    """A V1 model_dir after RESUME_STEPS, kept; and its outputs after RESUME_STEPS more
    (trained on a copy), which a resume on the kit must give."""
    for kind in RESUMED_KINDS:
        model_dir = resumed_dir(kind)
        shutil.rmtree(model_dir, ignore_errors=True)
        model = build(tf, tf.compat.v1.estimator, kind, model_dir, INIT_DIR)
        model.train(lambda: input_fn(tf, repeat=True), steps=RESUME_STEPS)
        _keep_last_checkpoint_only(model_dir)
        with tempfile.TemporaryDirectory() as copy:
            shutil.copytree(model_dir, copy, dirs_exist_ok=True)
            model = build(tf, tf.compat.v1.estimator, kind, copy, INIT_DIR)
            model.train(lambda: input_fn(tf, repeat=True), steps=RESUME_STEPS)
            record[f"resumed {kind}"] = outcome(tf, model, kind)


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tensorflow as tf

    with open(API_OUT, "w") as f:
        json.dump(_api(tf), f, indent=1, sort_keys=True)
        f.write("\n")
    _write_init(tf)
    record = {"recorded_with": tf.__version__, "train_steps": TRAIN_STEPS}
    namespaces = {"tf.estimator": tf.estimator, "tf.compat.v1.estimator": tf.compat.v1.estimator}
    for label, namespace in namespaces.items():
        for kind in KINDS_BY_NAMESPACE[label]:
            with tempfile.TemporaryDirectory() as model_dir:
                model = build(tf, namespace, kind, model_dir, INIT_DIR)
                train(tf, model, kind)
                record[f"{label} {kind}"] = outcome(tf, model, kind)
    _record_resume(tf, record)
    for name, settings in KMEANS_RUNS.items():
        with tempfile.TemporaryDirectory() as model_dir:
            record[f"kmeans {name}"] = kmeans_outcome(
                tf, tf.compat.v1.estimator, model_dir, settings
            )
    with open(TRAINING_OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(
        json.dumps(
            {k: v["metrics"] for k, v in record.items() if isinstance(v, dict) and "metrics" in v}
        )
    )


if __name__ == "__main__":
    main()
