"""Checkpoints shared with tf.estimator 2.15, both ways.

tests/data/tf215 holds tiny model_dirs that tf.estimator 2.15 trained (one per canned
estimator of tests/tf215/checkpoint_models.py, V1 classes with partitioners, a TF1 model_fn,
TPUEstimator, KMeans and an RNNClassifier), a SavedModel it exported, and what it
predicted from them (`tests/tf215/record_checkpoints.py record` wrote them all, in the
TF 2.15 venv).  Here they resume, warm-start and are refused as tf.estimator 2.15 would
have it; the slow test runs 2.15 itself on model_dirs written here.
"""

import json
import logging
import os
import shutil
import subprocess

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from tensorflow.core.protobuf import trackable_object_graph_pb2

from components import estimator
from components.estimator import checkpoints as ckpt_lib
from pipeline.config import REPO_ROOT
from tests.tf215 import checkpoint_models as models

DATA = REPO_ROOT / "tests" / "data" / "tf215"
RECORDER = REPO_ROOT / "tests" / "tf215" / "record_checkpoints.py"


@pytest.fixture(scope="module")
def expected():
    with open(DATA / "expected.json") as f:
        return json.load(f)


def _copy(kind, tmp_path):
    return shutil.copytree(DATA / kind, tmp_path / kind)


def _names(path):
    return {name for name, _ in tf.train.list_variables(str(path))}


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Resuming from")]


@pytest.mark.parametrize("kind", [*models.KINDS, *models.MORE_KINDS])
def test_a_tf215_model_dir_resumes_exactly(kind, expected, tmp_path, caplog):
    model_dir = _copy(kind, tmp_path)
    model = models.build(estimator, kind, str(model_dir))
    np.testing.assert_allclose(
        models.predictions(model, kind), expected[kind]["before"], rtol=1e-5, atol=1e-5
    )
    assert model.get_variable_value("global_step") == models.TRAIN_STEPS

    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        model.train(models.train_input_fn(kind), steps=models.MORE_STEPS)
    assert _warnings(caplog) == []  # global step, slots and hyperparameters all resumed
    assert model.get_variable_value("global_step") == expected[kind]["global_step"]
    # The same updates as 2.15's, up to float rounding.
    np.testing.assert_allclose(
        models.predictions(model, kind), expected[kind]["after"], rtol=1e-4, atol=1e-5
    )
    # The checkpoint written here has 2.15's names, under load_variable too.
    latest = model.latest_checkpoint()
    assert latest.endswith(f"model.ckpt-{expected[kind]['global_step']}")
    assert _names(latest) == _names(DATA / kind)
    assert (
        tf.train.load_variable(str(model_dir), "global_step")
        == models.TRAIN_STEPS + models.MORE_STEPS
    )


@pytest.mark.parametrize("kind", models.KERAS_KINDS)
def test_a_tf215_model_to_estimator_model_dir_resumes_exactly(kind, expected, tmp_path, caplog):
    # 2.15's model_to_estimator wrote object-based checkpoints by default
    # (layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE, estimator_global_step/...),
    # a TF1 optimizer's state too (.OPTIMIZER_SLOT/optimizer/optimizer/m, beta1_power).
    recorded = expected[kind]
    model = models.keras_estimator(estimator, str(_copy(kind, tmp_path)), kind)
    np.testing.assert_allclose(
        models.keras_predictions(model), recorded["before"], rtol=1e-5, atol=1e-5
    )
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        model.train(models.keras_input_fn, steps=models.MORE_STEPS)
    assert _warnings(caplog) == []  # weights, Adam's slots and hyperparameters resumed
    assert model.get_variable_value("global_step") == recorded["global_step"]
    np.testing.assert_allclose(
        models.keras_predictions(model), recorded["after"], rtol=1e-4, atol=1e-5
    )
    # Written as 2.15 wrote it: its keys, its object graph naming each by its graph name.
    latest = model.latest_checkpoint()
    assert latest.endswith(f"model.ckpt-{recorded['global_step']}")
    assert _names(latest) == _names(DATA / kind)
    assert _graph_names(latest) == _graph_names(DATA / kind)
    assert model.get_variable_names() == sorted(_names(DATA / kind))


def _graph_names(path):
    """{name the variable had: key} of an object-based checkpoint (TF1 read it by those)."""
    reader = tf.train.load_checkpoint(str(path))
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    return {a.full_name: a.checkpoint_key for node in graph.nodes for a in node.attributes}


def test_a_tf215_model_dir_with_another_optimizer_warns_once_naming_what_starts_afresh(
    expected, tmp_path, caplog
):
    model = models.build(estimator, "dnn", str(_copy("dnn", tmp_path)), optimizer="Adam")
    np.testing.assert_allclose(
        models.predictions(model, "dnn"), expected["dnn"]["before"], rtol=1e-5, atol=1e-5
    )
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        model.train(models.train_input_fn("dnn"), steps=1)
    (warning,) = _warnings(caplog)
    assert "starts afresh" in warning
    assert "'training/Adam/dnn/hiddenlayer_0/kernel/m'" in warning
    assert "does not use" in warning
    assert "'training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator'" in warning
    assert model.get_variable_value("global_step") == models.TRAIN_STEPS + 1


@pytest.mark.parametrize(
    ("kind", "build", "named"),
    [
        (
            "dnn",
            lambda d: estimator.DNNClassifier([4], models.columns()[::2], model_dir=d),
            "dnn/hiddenlayer_0/kernel: float32[4, 3] in the checkpoint, float32[4, 4] here",
        ),
        (
            "linear",
            lambda d: estimator.LinearClassifier(
                [*models.columns()[:2], tf.feature_column.numeric_column("z")], model_dir=d
            ),
            "it lacks ['linear/linear_model/z/weights']",
        ),
    ],
)
def test_a_checkpoint_that_does_not_match_is_refused_naming_the_variables(
    kind, build, named, tmp_path
):
    model = build(str(_copy(kind, tmp_path)))
    features = dict(models.FEATURES, z=np.zeros(16, np.float32))
    with pytest.raises(ValueError, match="does not match this model") as raised:
        next(model.predict(lambda: tf.data.Dataset.from_tensor_slices(features).batch(8)))
    assert named in str(raised.value)
    # A variable the checkpoint lacks: also 2.15's NotFoundError, in its words.
    lacks = "it lacks" in named
    assert isinstance(raised.value, tf.errors.NotFoundError) == lacks
    assert str(raised.value).startswith("Restoring from checkpoint failed.") == lacks


def test_checkpoint_variables_the_model_does_not_use_are_named(tmp_path, caplog):
    x, _, _ = models.columns()
    model = estimator.LinearClassifier([x], model_dir=str(_copy("linear", tmp_path)))
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        model.train(models.train_input_fn("linear"), steps=1)
    (warning,) = _warnings(caplog)
    assert "'linear/linear_model/c/weights'" in warning
    assert "'training/Ftrl/linear/linear_model/c/weights/accumulator'" in warning


@pytest.mark.parametrize("source", ["linear", models.SAVED_MODEL])
def test_warm_start_from_a_tf215_checkpoint_or_saved_model(source, expected, tmp_path):
    model = models.build(
        estimator,
        "linear",
        str(tmp_path / "warm"),
        optimizer=tf_keras.optimizers.legacy.SGD(0.0),
        warm_start_from=str(DATA / source),
    )
    model.train(models.train_input_fn("linear"), steps=1)
    np.testing.assert_allclose(
        models.predictions(model, "linear"), expected["linear"]["before"], rtol=1e-5, atol=1e-5
    )


def test_warm_start_with_vocab_info_remaps_as_tf215(expected, tmp_path):
    warmed = models.vocab_warm_start(
        estimator, tf_keras.optimizers.legacy.SGD, str(DATA / "linear"), str(tmp_path)
    )
    for name, value in expected["vocab_warm_start"].items():
        np.testing.assert_allclose(warmed[name], value, rtol=1e-6, err_msg=name)


def test_warm_start_regexes_and_previous_names_as_tf215(tmp_path):
    """The DNN part of a wide & deep from a 2.15 DNNClassifier, plus one renamed variable."""
    settings = estimator.WarmStartSettings(
        str(DATA / "dnn"),
        vars_to_warm_start=["dnn/.*", "linear/linear_model/bias_weights$"],
        var_name_to_prev_var_name={"linear/linear_model/bias_weights": "dnn/logits/bias"},
    )
    model = models.build(estimator, "dnn_linear", str(tmp_path / "warm"), warm_start_from=settings)
    model.train(models.train_input_fn("dnn_linear"), steps=1)
    step0 = str(tmp_path / "warm" / "model.ckpt-0")
    for name in _names(DATA / "dnn"):
        if name.startswith("dnn/"):
            expected_value = tf.train.load_variable(str(DATA / "dnn"), name)
            np.testing.assert_array_equal(tf.train.load_variable(step0, name), expected_value)
    np.testing.assert_array_equal(
        tf.train.load_variable(step0, "linear/linear_model/bias_weights"),
        tf.train.load_variable(str(DATA / "dnn"), "dnn/logits/bias"),
    )
    assert not tf.train.load_variable(step0, "linear/linear_model/x/weights").any()


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({}, "'linear/linear_model/bias_weights' (for 'linear/linear_model/bias_weights')"),
        (
            {"vars_to_warm_start": "dnn/.*", "var_name_to_prev_var_name": {"typo": "dnn/x"}},
            "var_name_to_prev_var_name names ['typo']",
        ),
    ],
)
def test_warm_start_that_cannot_be_done_is_refused_naming_the_variables(settings, named, tmp_path):
    model = models.build(
        estimator,
        "linear",
        str(tmp_path / "warm"),
        warm_start_from=estimator.WarmStartSettings(str(DATA / "dnn"), **settings),
    )
    with pytest.raises(ValueError, match="Warm start from") as raised:
        model.train(models.train_input_fn("linear"), steps=1)
    assert named in str(raised.value)


def test_an_object_based_model_dir_of_this_kit_still_resumes(tmp_path, caplog):
    """As this kit wrote model_dirs until 2026-12-02: `tf.train.Checkpoint(
    estimator_variables={name: variable})`."""
    first = models.build(estimator, "linear", str(tmp_path / "new"))
    first.train(models.train_input_fn("linear"), steps=3)
    old = tf.train.Checkpoint(**{ckpt_lib.ROOT_ATTRIBUTE: first._store.model_variables()})
    tf.train.CheckpointManager(old, str(tmp_path / "old"), None, checkpoint_name="model.ckpt").save(
        checkpoint_number=3
    )
    resumed = models.build(estimator, "linear", str(tmp_path / "old"))
    assert resumed.get_variable_value("global_step") == 3
    assert resumed.get_variable_value("linear/linear_model/c/weights").any()
    np.testing.assert_array_equal(
        models.predictions(resumed, "linear"), models.predictions(first, "linear")
    )
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        resumed.train(models.train_input_fn("linear"), steps=2)
        first.train(models.train_input_fn("linear"), steps=2)
    assert _warnings(caplog) == []
    np.testing.assert_allclose(
        models.predictions(resumed, "linear"), models.predictions(first, "linear"), rtol=1e-6
    )
    assert _names(resumed.latest_checkpoint()) == _names(first.latest_checkpoint())


def test_checkpoint_manager_keeps_the_newest_and_one_every_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(ckpt_lib.time, "time", lambda: clock[0])
    variable = tf.Variable(1.0)

    def manager():
        return ckpt_lib.CheckpointManager(
            str(tmp_path), lambda prefix: ckpt_lib.write({"v": variable}, prefix), 2, 1
        )

    def steps():
        return sorted(int(p.stem.split("-")[1]) for p in tmp_path.glob("*.index"))

    saver = manager()
    for step, now in ((1, 1010), (2, 4700), (3, 4710), (4, 4720)):
        clock[0] = now
        saver.save(step)
        # (Dated by the clock: a new manager dates the checkpoints by their files.)
        os.utime(tmp_path / f"model.ckpt-{step}.index", (now, now))
    # 1 went as 3 came; 2, an hour after the manager began, stays when 4 comes.
    assert steps() == [2, 3, 4]
    clock[0] = 4730
    manager().save(5)  # a new manager reads the state file (2.15: a new call's Saver)
    assert steps() == [2, 4, 5]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-4",
        "model.ckpt-5",
    ]
    assert 'model_checkpoint_path: "model.ckpt-5"' in (tmp_path / "checkpoint").read_text()


REVERSE_KINDS = (
    "dnn",
    "dnn_adam",
    "linear",
    "dnn_linear",
    "linear_regressor",
    *models.KERAS_MODEL_KINDS,
    # (of models.MORE_KINDS, two for the suite's time: partitioned variables, TF1
    # optimizers' slots, batch norm's statistics, moving averages)
    "v1_dnn_partitioned",
    "tf1_model_fn",
)


@pytest.mark.slow
def test_model_dirs_written_here_resume_under_tf_estimator_2_15(tmp_path):
    from bench.estimator_vs_tf215 import ensure_tf215_venv

    ours = {}
    for kind in REVERSE_KINDS:
        # 2.15 resumes the model_dir as written (model_to_estimator's state file names
        # its checkpoints by absolute paths, as 2.15's did); the kit goes on in a copy.
        model = models.build(estimator, kind, str(tmp_path / "tf215" / kind))
        model.train(models.train_input_fn(kind), steps=models.TRAIN_STEPS)
        before = models.predictions(model, kind)
        shutil.copytree(tmp_path / "tf215" / kind, tmp_path / "here" / kind)
        model = models.build(estimator, kind, str(tmp_path / "here" / kind))
        model.train(models.train_input_fn(kind), steps=models.MORE_STEPS)
        ours[kind] = {"before": before, "after": models.predictions(model, kind)}

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    result = subprocess.run(
        [ensure_tf215_venv(), str(RECORDER), "resume", str(tmp_path / "tf215")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    theirs = json.loads(line[len("RESULT ") :])
    assert sorted(theirs) == sorted(REVERSE_KINDS)
    for kind in REVERSE_KINDS:
        np.testing.assert_allclose(
            theirs[kind]["before"], ours[kind]["before"], rtol=1e-5, atol=1e-5, err_msg=kind
        )
        assert theirs[kind]["global_step"] == models.TRAIN_STEPS + models.MORE_STEPS
        np.testing.assert_allclose(
            theirs[kind]["after"], ours[kind]["after"], rtol=1e-4, atol=1e-5, err_msg=kind
        )
