"""Keras models and layers inside a `model_fn`, here against tf.estimator 2.15.

`tests/keras_model_fn_programs.py` was run once under tf.estimator 2.15
(`tests/tf215/record_keras_model_fn.py`, into `tests/data/tf215/keras_model_fn.json` and
the model_dir `tests/data/tf215/keras_model_fn_model/`).  Here: every model and
optimizer's checkpoint names, on the TF2 path (a Keras optimizer) and the graph path (a
TF1 optimizer); 2.15's model_dir resumed on both paths and warm-started from; the TRAIN
and EVAL SavedModels of a model trained on the TF2 path.
"""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from components.estimator import checkpoints as ckpt_lib
from pipeline.config import REPO_ROOT
from tests import keras_model_fn_programs as programs

DATA = REPO_ROOT / "tests" / "data" / "tf215"


@pytest.fixture(scope="module")
def recorded():
    import components.estimator.install  # noqa: F401  (the programs say tf.keras)

    with open(DATA / "keras_model_fn.json") as f:
        return json.load(f)


def test_every_keras_model_fn_names_its_variables_as_2_15(recorded, tmp_path):
    """Sequential (twice: `sequential_1`), functional, subclassed, bare layers, two
    models: the model's and a Keras Adam's slots (`Adam/m/sequential/dense/kernel`),
    or a TF1 Adam's (graph path)."""
    ours = programs.variable_names(estimator, str(tmp_path))
    assert ours == recorded["variable_names"]


def _model_dir(tmp_path):
    return str(shutil.copytree(DATA / "keras_model_fn_model", tmp_path / "model"))


class _Tf1Hook(tf.compat.v1.train.SessionRunHook):
    """A TF1 hook: the Estimator then trains on the graph path."""


@pytest.mark.parametrize("hooks", [None, [_Tf1Hook()]], ids=["tf2_path", "graph_path"])
def test_2_15s_model_dir_resumes_with_its_optimizer_state(recorded, tmp_path, hooks):
    ours = programs.resume(estimator, _model_dir(tmp_path), hooks=hooks)
    theirs = recorded["resumed"]
    assert ours["global_step"] == theirs["global_step"]
    np.testing.assert_allclose(ours["before"], theirs["before"], rtol=1e-5, atol=1e-6)
    # Adam's m and v came from 2.15's checkpoint too: the same steps from there.
    np.testing.assert_allclose(ours["after"], theirs["after"], rtol=1e-4, atol=1e-5)


def test_a_fresh_model_warm_starts_from_2_15s_model_dir(recorded, tmp_path):
    model = programs.estimator_for(
        estimator,
        *programs.CHECKPOINTED,
        str(tmp_path / "fresh"),
        warm_start_from=_model_dir(tmp_path),
    )
    model.train(programs.train_input_fn, steps=1)
    warmed = model.get_variable_value("sequential/dense/kernel")
    trained = tf.train.load_variable(str(DATA / "keras_model_fn_model"), "sequential/dense/kernel")
    # One step of Adam at 0.05 from 2.15's values: close to them, not to a fresh start.
    np.testing.assert_allclose(warmed, trained, atol=0.051)


def _receiver():
    return estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.zeros([2, 4])}, tf.zeros([2], tf.int64)
    )


def test_train_and_eval_savedmodels_of_the_tf2_path_restore_its_checkpoint(tmp_path):
    """Their graphs name the variables as the checkpoint does (2.15's names), so the
    export restores the model the TF2 path trained and evaluates its loss."""
    model = programs.estimator_for(estimator, *programs.CHECKPOINTED, str(tmp_path / "m"))
    model.train(programs.train_input_fn, steps=2)
    for mode in (estimator.ModeKeys.TRAIN, estimator.ModeKeys.EVAL):
        export_dir = model.export_saved_model(
            str(tmp_path / mode), _receiver(), experimental_mode=mode
        )
        saved = tf.train.load_variable(
            f"{export_dir.decode()}/variables/variables", "sequential/dense_1/kernel"
        )
        np.testing.assert_array_equal(saved, model.get_variable_value("sequential/dense_1/kernel"))


def test_a_model_dir_written_under_kerass_tf2_names_still_resumes(tmp_path):
    """The TF2 path saved `dense/kernel`, `Adam/dense/dense/kernel/m` before it took the
    graph's names: such a model_dir resumes by those names."""
    model = programs.estimator_for(estimator, *programs.CHECKPOINTED, str(tmp_path / "new"))
    model.train(programs.train_input_fn, steps=2)
    old_names = model._store.model_variables()
    assert "dense/kernel" in old_names and "sequential/dense/kernel" in model.get_variable_names()
    old = tmp_path / "old"
    old.mkdir()
    ckpt_lib.write(old_names, str(old / "model.ckpt-2"))
    tf.compat.v1.train.update_checkpoint_state(str(old), "model.ckpt-2")
    resumed = programs.estimator_for(estimator, *programs.CHECKPOINTED, str(old))
    assert programs.logits(resumed) == programs.logits(model)
    resumed.train(programs.train_input_fn, steps=1)
    assert "sequential/dense/kernel" in resumed.get_variable_names()


def test_get_global_step_in_a_tf2_style_model_fn_is_the_estimators_step(tmp_path):
    """Samples step the global step themselves beside a Keras optimizer's updates; under
    2.15 `tf.compat.v1.train.get_global_step()` found it in every mode (checked there: 10
    steps, these names), here it was None on the TF2 path."""
    import components.estimator.install  # noqa: F401  (tf.keras as the programs see it)

    x = np.linspace(-1, 1, 64, dtype=np.float32)[:, None]
    seen = set()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, 3 * x + 1)).repeat().batch(16)

    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_global_step()
        seen.add((mode, step is tf.compat.v1.train.get_or_create_global_step()))
        layer = tf.keras.layers.Dense(1)
        predictions = layer(features["x"])
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        if mode == estimator.ModeKeys.EVAL:
            return estimator.EstimatorSpec(mode, loss=loss)
        optimizer = tf.keras.optimizers.legacy.SGD(0.1)
        updates = optimizer.get_updates(loss, layer.trainable_variables)
        train_op = tf.group(*updates, step.assign_add(1))
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model = estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    model.train(input_fn, steps=10)
    assert model.get_variable_value("global_step") == 10
    assert model.evaluate(lambda: input_fn().take(2))["global_step"] == 10
    next(model.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)))
    modes = [estimator.ModeKeys.TRAIN, estimator.ModeKeys.EVAL, estimator.ModeKeys.PREDICT]
    assert {mode for mode, same in seen if same} == set(modes)
    assert sorted(model.get_variable_names()) == [
        "SGD/decay",
        "SGD/iter",
        "SGD/learning_rate",
        "SGD/momentum",
        "dense/bias",
        "dense/kernel",
        "global_step",
    ]
