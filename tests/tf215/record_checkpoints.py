"""tf.estimator 2.15's side of tests/test_estimator_tf215_checkpoints.py; runs in the TF 2.15
venv (`ensure_tf215_venv()` in bench/estimator_vs_tf215.py builds it).

    bench/.venv-tf215/bin/python tests/tf215/record_checkpoints.py record tests/data/tf215
        trains each of models.KINDS for TRAIN_STEPS into OUT/<kind> (only its last
        checkpoint kept), exports "linear" to OUT/linear_saved_model, and writes
        OUT/expected.json: each kind's predictions there, and after MORE_STEPS more
        (trained on a copy), and what a vocabulary warm start from "linear" sets.
    bench/.venv-tf215/bin/python tests/tf215/record_checkpoints.py record tests/data/tf215 KIND...
        the same for the KINDs named alone (models.MORE_KINDS), added to expected.json.
    bench/.venv-tf215/bin/python tests/tf215/record_checkpoints.py resume DIR
        resumes each DIR/<kind> (written by this kit), printing one line `RESULT {json}`
        with each kind's predictions there, its global step after MORE_STEPS more,
        and its predictions then.
    bench/.venv-tf215/bin/python tests/tf215/record_checkpoints.py record-keras tests/data/tf215 [KIND]
        the same for models.KERAS_KINDS (model_to_estimator model_dirs; or KIND) alone.
"""

import glob
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checkpoint_models as models
import tensorflow as tf


def _resume(model_dir, kind):
    """Predictions in `model_dir`, then the step and predictions after MORE_STEPS more."""
    model = models.build(tf.estimator, kind, model_dir)
    before = models.predictions(model, kind)
    if kind in models.KERAS_MODEL_KINDS:
        # (2.15's model_to_estimator failed to train or evaluate after it predicted from
        # a trained model_dir, AttributeError '_v1_compile_was_called'; a new Estimator
        # trains.)
        model = models.build(tf.estimator, kind, model_dir)
    model.train(models.train_input_fn(kind), steps=models.MORE_STEPS)
    after = models.predictions(model, kind)
    # (2.15's object-based checkpoints hold the step under its object's key only)
    names = model.get_variable_names()
    step = "global_step" if "global_step" in names else _OBJECT_STEP
    return {"before": before, "after": after, "global_step": int(model.get_variable_value(step))}


_OBJECT_STEP = "estimator_global_step/.ATTRIBUTES/VARIABLE_VALUE"


def _keep_last_checkpoint_only(model_dir):
    latest = tf.train.latest_checkpoint(model_dir)
    for path in glob.glob(os.path.join(model_dir, "*")):
        if os.path.isdir(path):  # (model_to_estimator's keras/ warm start)
            shutil.rmtree(path)
        elif not path.startswith(latest + ".") or path.endswith(".meta"):
            os.remove(path)
    tf.compat.v1.train.update_checkpoint_state(
        model_dir, os.path.basename(latest), [os.path.basename(latest)]
    )


def _export(model, export_dir):
    def receiver_fn():
        features = {
            "x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x"),
            "c": tf.compat.v1.placeholder(tf.string, [None], name="c"),
        }
        return tf.estimator.export.ServingInputReceiver(features, features)

    with tempfile.TemporaryDirectory() as base:
        shutil.move(model.export_saved_model(base, receiver_fn).decode(), export_dir)


def record(out, kinds=None):
    out = os.path.abspath(out)  # the state files then name their checkpoints relatively
    expected = {}
    if kinds:
        with open(os.path.join(out, "expected.json")) as f:
            expected = json.load(f)
    with tempfile.TemporaryDirectory() as work:
        for kind in kinds or models.KINDS:
            model_dir = os.path.join(out, kind)
            shutil.rmtree(model_dir, ignore_errors=True)
            model = models.build(tf.estimator, kind, model_dir)
            model.train(models.train_input_fn(kind), steps=models.TRAIN_STEPS)
            if kind == "linear":
                shutil.rmtree(os.path.join(out, models.SAVED_MODEL), ignore_errors=True)
                _export(model, os.path.join(out, models.SAVED_MODEL))
            _keep_last_checkpoint_only(model_dir)
            copy = shutil.copytree(model_dir, os.path.join(work, kind))
            expected[kind] = _resume(copy, kind)
        if not kinds:
            expected["vocab_warm_start"] = models.vocab_warm_start(
                tf.estimator, tf.keras.optimizers.legacy.SGD, os.path.join(out, "linear"), work
            )
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


def record_keras(out, kinds=models.KERAS_KINDS):
    """Trains each of `kinds` into OUT/<kind> and adds its predictions there, and after
    MORE_STEPS more (on a copy), to OUT/expected.json."""
    for kind in kinds:
        _record_keras(os.path.abspath(out), kind)


def _record_keras(out, kind):
    model_dir = os.path.join(out, kind)
    shutil.rmtree(model_dir, ignore_errors=True)
    model = models.keras_estimator(tf.estimator, model_dir, kind)
    model.train(models.keras_input_fn, steps=models.TRAIN_STEPS)
    _keep_last_checkpoint_only(model_dir)
    with tempfile.TemporaryDirectory() as work:
        copy = shutil.copytree(model_dir, os.path.join(work, kind))
        model = models.keras_estimator(tf.estimator, copy, kind)
        before = models.keras_predictions(model)
        model.train(models.keras_input_fn, steps=models.MORE_STEPS)
        after = models.keras_predictions(model)
        step = int(model.get_variable_value(_OBJECT_STEP))
    path = os.path.join(out, "expected.json")
    with open(path) as f:
        expected = json.load(f)
    expected[kind] = {"before": before, "after": after, "global_step": step}
    with open(path, "w") as f:
        json.dump(expected, f, indent=1)


def resume(directory):
    results = {
        kind: _resume(os.path.join(directory, kind), kind)
        for kind in (*models.KINDS, *models.KERAS_MODEL_KINDS, *models.MORE_KINDS)
        if os.path.isdir(os.path.join(directory, kind))
    }
    print("RESULT " + json.dumps(results))


if __name__ == "__main__":
    command, path, *kinds = sys.argv[1:]
    if command == "record-keras" and kinds:
        record_keras(path, kinds)
    elif command == "record" and kinds:
        record(path, kinds)
    else:
        {"record": record, "record-keras": record_keras, "resume": resume}[command](path)
