"""tf.estimator-era user code, run as a user script in a fresh process.

Each script starts with `import tensorflow as tf`, then imports the estimator
where it imported `tf.estimator`, and says `tf.keras` as the TensorFlow guides
of the time did (Keras 2; Keras 3 on TF 2.21 unless the estimator routes it).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pipeline.config import REPO_ROOT

pytestmark = pytest.mark.slow

_DATA = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import tensorflow as tf
    from components import estimator

    x = np.random.default_rng(0).normal(size=(512, 3)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5], "float32") > 0).astype("int64")
""")

# The custom model_fn of TensorFlow's "Training checkpoints" guide: a Keras
# model, a Keras optimizer and a tf.train.Checkpoint as the Scaffold's saver.
_CUSTOM_MODEL_FN = _DATA + textwrap.dedent("""
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.l1 = tf.keras.layers.Dense(5)

        def call(self, x):
            return self.l1(x)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)

    def model_fn(features, labels, mode):
        net = Net()
        opt = tf.keras.optimizers.Adam(0.1)
        ckpt = tf.train.Checkpoint(step=estimator.get_global_step(), optimizer=opt, net=net)
        with tf.GradientTape() as tape:
            output = net(features["x"])
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                labels, output, from_logits=True))
        variables = net.trainable_variables
        gradients = tape.gradient(loss, variables)
        return estimator.EstimatorSpec(
            mode, loss=loss,
            train_op=tf.group(opt.apply_gradients(zip(gradients, variables)),
                              ckpt.step.assign_add(1)),
            scaffold=estimator.Scaffold(saver=ckpt))

    model_dir = sys.argv[1]
    est = estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
    est.train(input_fn, steps=20)
    first = est.latest_checkpoint()
    kernel_at_20 = tf.train.load_variable(first, "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE")
    est.train(input_fn, steps=10)
    latest = est.latest_checkpoint()
    logits = x @ tf.train.load_variable(latest, "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE") \\
        + tf.train.load_variable(latest, "net/l1/bias/.ATTRIBUTES/VARIABLE_VALUE")
    print(json.dumps({
        "keras": tf.keras.__name__,
        "checkpoints": [os.path.basename(first), os.path.basename(latest)],
        "step": int(tf.train.load_variable(latest, "step/.ATTRIBUTES/VARIABLE_VALUE")),
        "kernel_moved": bool(np.abs(kernel_at_20 - tf.train.load_variable(
            latest, "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE")).max() > 0),
        "train_accuracy": float(np.mean(np.argmax(logits, axis=1) == y)),
    }))
""")

# model_to_estimator with a tf.keras model compiled as the Estimator guide did.
_KERAS_MODEL = _DATA + textwrap.dedent("""
    model = tf.keras.models.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(3,)),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(1),
    ])
    model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(0.01), metrics=["accuracy"])
    name = model.input_names[0]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({name: x}, y[:, None].astype("float32"))).repeat().batch(32)

    est = estimator.model_to_estimator(keras_model=model, model_dir=sys.argv[1])
    est.train(input_fn, steps=200)
    metrics = est.evaluate(lambda: input_fn().take(16))
    path = est.export_saved_model(sys.argv[1] + "/export",
        estimator.export.build_raw_serving_input_receiver_fn(
            {name: tf.zeros([1, 3], tf.float32)})).decode()
    served = tf.saved_model.load(path).signatures["serving_default"](**{name: tf.constant(x)})
    (logits,) = served.values()
    print(json.dumps({
        "keras": tf.keras.__name__,
        "step": int(metrics["global_step"]),
        "accuracy": float(metrics["accuracy"]),
        "served_accuracy": float(np.mean((logits.numpy()[:, 0] > 0) == y)),
    }))
""")

# Keras 3 reached first: the estimator cannot change it any more, and says so.
_TOO_LATE = textwrap.dedent("""
    import tensorflow as tf
    tf.keras.layers.Dense(1)
    from components import estimator
    print(tf.keras.__name__)
""")


def _run_script(script, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    # A fresh user's shell: the variable the estimator sets is not set yet.
    env.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return proc


def _last_json(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_guide_custom_model_fn_with_tf_keras_and_checkpoint_saver_trains_and_resumes(tmp_path):
    result = _last_json(_run_script(_CUSTOM_MODEL_FN, tmp_path / "model"))
    assert result["keras"].startswith("tf_keras")
    # The step lives in the user's checkpoint under the user's name, and the
    # second train() call resumes from it.
    assert result["checkpoints"] == ["model.ckpt-20", "model.ckpt-30"]
    assert result["step"] == 30
    assert result["kernel_moved"]
    assert result["train_accuracy"] > 0.9


def test_model_to_estimator_takes_a_tf_keras_model(tmp_path):
    result = _last_json(_run_script(_KERAS_MODEL, tmp_path / "model"))
    assert result["keras"].startswith("tf_keras")
    assert result["step"] == 200
    assert result["accuracy"] > 0.9
    assert result["served_accuracy"] > 0.9


def test_tf_keras_already_resolved_to_keras_3_warns_naming_the_fix():
    proc = _run_script(_TOO_LATE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1].startswith("keras.")
    assert "tf.keras resolved to Keras 3 before the estimator was imported" in proc.stderr
    assert "Fix: import the estimator (or set TF_USE_LEGACY_KERAS=1)" in proc.stderr
