"""Records tf.compat.v1.estimator 2.15: its public names and how its V1 canned
estimators train next to tf.estimator's (run once, in the TF 2.15 venv).

    bench/.venv-tf215/bin/python tests/tf215/record_compat_v1.py

writes tests/data/tf215/compat_v1_api.json (every public name of
`tf.compat.v1.estimator` with its kind, parameters and whether it is
`tf.estimator`'s own object), tests/data/tf215/compat_v1_dnn_init/ (a DNN's
initial weights, so both sides start the same) and
tests/data/tf215/compat_v1_training.json (the V1 and V2 DNN and linear
classifiers, same data and start, after TRAIN_STEPS: eval metrics,
probabilities, variable names).  tests/test_estimator_compat_v1.py builds the
same models from here on the kit.
"""

import glob
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
TRAIN_STEPS = 300
BATCH = 32
HIDDEN_UNITS = [8]
KINDS = ("dnn", "linear")


def training_data():
    """256 rows of two features; the label is a noisy linear rule."""
    rng = np.random.RandomState(0)
    x = rng.randn(256, 2).astype(np.float32)
    y = (x[:, 0] - 0.5 * x[:, 1] + 0.3 * rng.randn(256) > 0).astype(np.int64)
    return x, y


def input_fn(tf, repeat):
    x, y = training_data()
    dataset = tf.data.Dataset.from_tensor_slices(({"a": x[:, 0], "b": x[:, 1]}, y))
    return (dataset.repeat() if repeat else dataset).batch(BATCH)


def build(tf, namespace, kind, model_dir, init_dir):
    """`kind`'s classifier from `namespace` (tf.estimator or tf.compat.v1.estimator, or
    the kit's), with its defaults; the DNN starts from `init_dir`'s weights."""
    columns = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    if kind == "linear":
        return namespace.LinearClassifier(columns, model_dir=model_dir)
    return namespace.DNNClassifier(
        HIDDEN_UNITS, columns, model_dir=model_dir, warm_start_from=init_dir
    )


def outcome(tf, model):
    """What a test compares: eval metrics, the first rows' probabilities, the variables."""
    metrics = model.evaluate(lambda: input_fn(tf, repeat=False))
    predictions = model.predict(lambda: input_fn(tf, repeat=False).map(lambda f, _: f))
    probabilities = [p["probabilities"].tolist() for p in itertools.islice(predictions, 8)]
    return {
        "metrics": {k: float(metrics[k]) for k in ("loss", "average_loss", "accuracy")},
        "probabilities": probabilities,
        "variables": sorted(model.get_variable_names()),
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
    latest = tf.train.latest_checkpoint(INIT_DIR)
    for path in glob.glob(os.path.join(INIT_DIR, "*")):
        if not path.startswith(latest + ".") or path.endswith(".meta"):
            os.remove(path)
    tf.compat.v1.train.update_checkpoint_state(INIT_DIR, os.path.basename(latest))


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
        for kind in KINDS:
            with tempfile.TemporaryDirectory() as model_dir:
                model = build(tf, namespace, kind, model_dir, INIT_DIR)
                model.train(lambda: input_fn(tf, repeat=True), steps=TRAIN_STEPS)
                record[f"{label} {kind}"] = outcome(tf, model)
    with open(TRAINING_OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({k: v["metrics"] for k, v in record.items() if isinstance(v, dict)}))


if __name__ == "__main__":
    main()
