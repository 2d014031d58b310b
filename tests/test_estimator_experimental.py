"""`estimator.experimental`'s estimators and hooks, checked against tf.estimator 2.15.

Expected values come from tests/data/tf215/api_behaviour.json, recorded once
in the TF 2.15 venv by tests/tf215/record_api_behaviour.py, from the same tiny
inputs as here.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from components import estimator
from components.estimator import summaries
from components.trainer.launcher import free_ports
from pipeline.config import REPO_ROOT
from tests.tf215.record_api_behaviour import (
    regression_input_fn,
    sdca_columns,
    sdca_input_fn,
    sequence_input_fn,
)

with open(os.path.join(os.path.dirname(__file__), "data", "tf215", "api_behaviour.json")) as f:
    RECORDED = json.load(f)

fc = tf.feature_column
experimental = estimator.experimental


def _regressor(model_dir, config=None):
    return estimator.LinearRegressor(
        [fc.numeric_column("x")],
        model_dir=str(model_dir),
        optimizer=tf_keras.optimizers.legacy.SGD(0.01),
        config=config,
    )


# ------------------------------------------------------- in-memory evaluation
def test_in_memory_evaluator_evaluates_before_every_n_steps_and_at_the_end(tmp_path):
    model = _regressor(tmp_path)
    hook = experimental.InMemoryEvaluatorHook(
        model, regression_input_fn, steps=2, name="mem", every_n_iter=3
    )
    model.train(regression_input_fn, steps=7, hooks=[hook])
    written = summaries.read_scalars_by_step(tf.io.gfile.glob(str(tmp_path / "eval_mem" / "*")))
    expected = RECORDED["in_memory_evaluator"]["eval_dir_steps"]
    assert {str(step): sorted(tags) for step, tags in written.items()} == expected
    # Each evaluation is of the model as it was then: the loss falls as it trains.
    losses = [written[step]["loss"] for step in sorted(written)]
    assert losses == sorted(losses, reverse=True) and losses[0] > losses[-1]
    assert hook.results["global_step"] == 7
    # No checkpoint was read: the last one written is step 7's, and step 3's never was.
    assert not tf.io.gfile.glob(str(tmp_path / "model.ckpt-3.*"))


def test_in_memory_evaluator_refuses_what_2_15_refused(tmp_path):
    model = _regressor(tmp_path)
    with pytest.raises(ValueError) as raised:
        experimental.InMemoryEvaluatorHook(model, regression_input_fn, every_n_iter=0)
    assert str(raised.value) == RECORDED["in_memory_evaluator"]["bad_every_n_iter"]["message"]
    with pytest.raises(ValueError, match=r"SessionRunHook.*checkpoint"):
        experimental.InMemoryEvaluatorHook(
            model, regression_input_fn, hooks=[tf.compat.v1.train.SessionRunHook()]
        )


# ------------------------------------------------------------ hook factories
def test_early_stopping_hook_asks_on_2_15s_schedule(tmp_path):
    recorded = RECORDED["hook_factories"]
    model = _regressor(tmp_path)
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) >= 3

    hook = experimental.make_early_stopping_hook(
        model, should_stop, run_every_secs=None, run_every_steps=2
    )
    model.train(regression_input_fn, steps=20, hooks=[hook])
    assert len(calls) == recorded["early_stopping"]["calls"] == 3
    # This kit's hook sees the step that just ran: asked at steps 1, 3 and 5. 2.15's reads
    # the global step in the run whose train op moves it, before or after the increment
    # as TF1's executor orders it: its third question may fall one step either side.
    assert int(model.get_variable_value("global_step")) == 5
    assert 4 <= recorded["early_stopping"]["global_step"] <= 6


def test_early_stopping_hook_by_time_asks_after_the_first_step(tmp_path):
    model = _regressor(tmp_path)
    hook = experimental.make_early_stopping_hook(model, lambda: True, run_every_secs=3600)
    model.train(regression_input_fn, steps=20, hooks=[hook])
    assert int(model.get_variable_value("global_step")) == 1


def test_early_stopping_hook_refuses_what_2_15_refused(tmp_path):
    recorded = RECORDED["hook_factories"]
    model = _regressor(tmp_path)
    with pytest.raises(ValueError) as raised:
        experimental.make_early_stopping_hook(model, bool, run_every_secs=1, run_every_steps=1)
    assert str(raised.value) == recorded["both_intervals"]["message"]
    with pytest.raises(TypeError) as raised:
        experimental.make_early_stopping_hook(object(), bool)
    assert str(raised.value) == recorded["not_an_estimator"]["message"]
    with pytest.raises(TypeError, match="must be callable"):
        experimental.make_early_stopping_hook(model, "not callable")


_MULTI_WORKER = textwrap.dedent("""
    import json, os, sys
    import numpy as np, tensorflow as tf, tf_keras
    from components import estimator

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    x = np.linspace(-1, 1, 64, dtype="float32")[:, None]
    model = estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")],
        optimizer=lambda: tf_keras.optimizers.legacy.SGD(0.01),
        config=estimator.RunConfig(model_dir=sys.argv[1], train_distribute=strategy))
    calls = []

    def should_stop():
        # Only worker 1 (not the chief) ever says stop, at its second question.
        calls.append(1)
        return os.environ["TF_CONFIG"].endswith('"index": 1}}') and len(calls) == 2

    hook = estimator.experimental.make_early_stopping_hook(
        model, should_stop, run_every_secs=None, run_every_steps=3)
    model.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).repeat().batch(8),
                steps=50, hooks=[hook])
    print(json.dumps({"calls": len(calls), "step": int(model._store.global_step.numpy())}))
""")


@pytest.mark.slow
def test_early_stopping_hook_stops_every_multi_worker_mirrored_worker_together(tmp_path):
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _MULTI_WORKER, str(tmp_path / "model")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(
                env,
                TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}}),
            ),
        )
        for i in range(2)
    ]
    try:
        outputs = [w.communicate(timeout=300) for w in workers]
    finally:
        for w in workers:
            w.kill()
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    # Both asked at steps 0 and 3 (as each step starts) and stopped together after step 4.
    assert results == [{"calls": 2, "step": 4}, {"calls": 2, "step": 4}]


def test_stop_at_checkpoint_step_hook_stops_the_chief_at_its_step(tmp_path):
    recorded = RECORDED["hook_factories"]["stop_at_checkpoint_step_chief"]
    model = _regressor(tmp_path)
    hook = experimental.make_stop_at_checkpoint_step_hook(model, 5)
    assert type(hook).__name__ == recorded["hook"]
    model.train(regression_input_fn, steps=20, hooks=[hook])
    assert int(model.get_variable_value("global_step")) == recorded["global_step"]


def test_stop_at_checkpoint_step_hook_makes_a_worker_wait_for_the_chiefs_checkpoint(
    tmp_path, monkeypatch
):
    chief = _regressor(tmp_path)
    chief.train(regression_input_fn, steps=5)
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {
                "cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]},
                "task": {"type": "worker", "index": 0},
            }
        ),
    )
    worker = _regressor(tmp_path, config=estimator.RunConfig())
    assert not worker.config.is_chief
    for last_step, stops in ((5, True), (6, False)):
        hook = experimental.make_stop_at_checkpoint_step_hook(
            worker, last_step, wait_after_file_check_secs=0
        )
        context = estimator.hooks.StepContext(worker, 6)
        hook.after_step(context, {"global_step": 6, "loss": 0.0})
        assert context.stop_requested is stops


# ------------------------------------------------------------ RNN estimators
SEQUENCE = [fc.sequence_numeric_column("seq")]


def _model_variables(model):
    """The model's own variables (optimizer state is named by the optimizer, not the model)."""
    return [n for n in model.get_variable_names() if not n.startswith("training/")]


def test_rnn_classifier_has_2_15s_variables_and_keys(tmp_path):
    recorded = RECORDED["rnn"]
    classifier = experimental.RNNClassifier(
        SEQUENCE,
        context_feature_columns=[fc.numeric_column("ctx")],
        units=[4],
        cell_type="lstm",
        model_dir=str(tmp_path),
    )
    classifier.train(sequence_input_fn, steps=2)
    assert _model_variables(classifier) == [
        n for n in recorded["classifier_variables"] if not n.startswith("training/")
    ]
    assert sorted(classifier.evaluate(sequence_input_fn, steps=1)) == recorded["evaluate_keys"]
    assert sorted(next(classifier.predict(sequence_input_fn))) == recorded["predict_keys"]


def test_rnn_estimator_trains_under_a_users_head(tmp_path):
    recorded = RECORDED["rnn"]
    regressor = experimental.RNNEstimator(
        estimator.RegressionHead(), SEQUENCE, units=[3], cell_type="gru", model_dir=str(tmp_path)
    )
    regressor.train(sequence_input_fn, steps=1)
    assert _model_variables(regressor) == [
        n for n in recorded["regressor_variables"] if not n.startswith("training/")
    ]
    with pytest.raises(ValueError, match="_SequentialHead"):
        experimental.RNNEstimator(
            estimator.RegressionHead(), SEQUENCE, units=[3], return_sequences=True
        )


def test_rnn_classifier_with_return_sequences_predicts_every_step(tmp_path):
    recorded = RECORDED["rnn"]["return_sequences"]
    classifier = experimental.RNNClassifier(
        SEQUENCE, units=[2], return_sequences=True, model_dir=str(tmp_path)
    )

    def per_step_labels():
        return sequence_input_fn().map(lambda f, label: (f, tf.tile(label, [1, 3])))

    classifier.train(per_step_labels, steps=1)
    assert _model_variables(classifier) == [
        n for n in RECORDED["rnn"]["default_cell_variables"] if not n.startswith("training/")
    ]
    assert sorted(classifier.evaluate(per_step_labels, steps=1)) == recorded["evaluate_keys"]
    predictions = next(classifier.predict(per_step_labels))
    assert {k: list(np.shape(v)) for k, v in predictions.items()} == recorded["predict"]
    assert predictions["sequence_mask"].tolist() == [True, True, False]


def test_rnn_classifier_refuses_what_2_15_refused():
    recorded = RECORDED["rnn"]
    with pytest.raises(ValueError) as raised:
        experimental.RNNClassifier(
            SEQUENCE, units=[2], rnn_cell_fn=lambda: tf_keras.layers.SimpleRNNCell(2)
        )
    assert str(raised.value) == recorded["rnn_cell_fn_and_units"]["message"]
    with pytest.raises(ValueError) as raised:
        experimental.RNNClassifier(SEQUENCE, units=[2], cell_type="nope")
    assert str(raised.value) == recorded["bad_cell_type"]["message"]


# --------------------------------------------------------------------- SDCA
def _sdca(l1=0.0):
    return experimental.LinearSDCA(
        example_id_column="example_id",
        symmetric_l1_regularization=l1,
        symmetric_l2_regularization=2.0,
    )


# SdcaOptimizerV2 spreads a batch's examples over threads: its weights vary from run to
# run by up to about 1e-2 (seen under tf.estimator 2.15 too), the classifier's by 1e-4.
@pytest.mark.parametrize(
    "case, estimator_class, l1, tolerance",
    [
        ("classifier", estimator.LinearClassifier, 0.0, 1e-3),
        ("classifier_l1", estimator.LinearClassifier, 0.5, 1e-3),
        ("regressor", estimator.LinearRegressor, 0.0, 3e-2),
    ],
)
def test_linear_sdca_trains_to_2_15s_weights(tmp_path, case, estimator_class, l1, tolerance):
    recorded = RECORDED["sdca"][case]
    model = estimator_class(sdca_columns(), optimizer=_sdca(l1), model_dir=str(tmp_path))
    model.train(sdca_input_fn, steps=5)
    # Checkpoints hold tf.estimator's names, its example table's buckets too.
    assert model.get_variable_names() == recorded["variables"]
    for name, weights in recorded["weights"].items():
        np.testing.assert_allclose(model.get_variable_value(name), weights, atol=tolerance)
    results = model.evaluate(sdca_input_fn, steps=1)
    assert sorted(results) == sorted(recorded["evaluate"])
    for key, value in recorded["evaluate"].items():
        assert float(results[key]) == pytest.approx(value, abs=tolerance)
    if l1:
        # The L1 shrinkage zeroes the weights it shrinks past zero, exactly.
        assert model.get_variable_value("linear/linear_model/bias_weights").tolist() == [0.0]


def test_linear_sdca_trains_on_in_process_and_in_a_new_estimator_from_its_saved_duals(
    tmp_path,
):
    model = estimator.LinearClassifier(sdca_columns(), optimizer=_sdca(), model_dir=str(tmp_path))
    model.train(sdca_input_fn, steps=2)
    model.train(sdca_input_fn, steps=1)
    assert int(model.get_variable_value("global_step")) == 3
    keys = model.get_variable_value("ShardedMutableHashTable-1-of-1-keys")
    assert (keys != 0).any(axis=1).sum() > 0  # the examples' fingerprints
    reopened = estimator.LinearClassifier(
        sdca_columns(), optimizer=_sdca(), model_dir=str(tmp_path)
    )
    assert reopened.evaluate(sdca_input_fn, steps=1)["accuracy"] == 1.0
    reopened.train(sdca_input_fn, steps=1)
    assert int(reopened.get_variable_value("global_step")) == 4
    np.testing.assert_array_equal(
        reopened.get_variable_value("ShardedMutableHashTable-1-of-1-keys"), keys
    )


@pytest.mark.parametrize(
    "case, make",
    [
        (
            "multi_class",
            lambda: estimator.LinearClassifier(sdca_columns(), n_classes=3, optimizer=_sdca()),
        ),
        (
            "mean_combiner",
            lambda: estimator.LinearRegressor(
                sdca_columns(), sparse_combiner="mean", optimizer=_sdca()
            ),
        ),
    ],
)
def test_linear_sdca_refuses_what_2_15_refused(case, make):
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == RECORDED["sdca"][case]["message"]
