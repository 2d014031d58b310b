"""Several steps per session call on the graph-mode path (`graph_steps`): hooks see what
they saw under tf.estimator 2.15, and the steps none of them needs run in loop calls."""

import json
import logging
import re

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from components.estimator import graph_steps
from tests import tf1_programs
from tests.test_estimator_tf1 import (
    RECORDED,
    _assert_tf1_summary_steps,
    _stopped_within_a_step_of_its_threshold,
)

v1 = tf.compat.v1
STEPS = 1_200  # past graph_steps.MIN_STEPS_FOR_A_LOOP


def _model_fn(features, labels, mode):
    net = v1.layers.dense(features["x"], 8, activation=tf.nn.relu)
    predictions = v1.layers.dense(net, 1)
    loss = v1.losses.mean_squared_error(labels, predictions)
    train_op = v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _seeded_model_fn(features, labels, mode):
    """`_model_fn` with op-level seeds: TF1 derives an unseeded op's seed from the number
    of ops in the graph, which what ran before in the process can change."""
    seeded = v1.glorot_uniform_initializer(seed=7)
    with v1.variable_scope(v1.get_variable_scope(), initializer=seeded):
        return _model_fn(features, labels, mode)


def _input_fn():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(256, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)


class _EveryStep(v1.train.SessionRunHook):
    """Fetches the loss at every step."""

    def begin(self):
        self.losses = []

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(v1.get_collection(v1.GraphKeys.LOSSES)[0])

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results)


class _EveryHundredCalls(v1.train.SessionRunHook):
    """Asks for the global step once every 100 of its own calls, as a user's hook would."""

    def begin(self):
        self.calls, self.fetched = 0, []
        self.step = v1.train.get_global_step()

    def before_run(self, run_context):
        self.calls += 1
        if self.calls % 100 == 0:
            return v1.train.SessionRunArgs(self.step)
        return None

    def after_run(self, run_context, run_values):
        if run_values.results is not None:
            self.fetched.append(int(run_values.results))


def _estimator(tmp_path):
    return estimator.Estimator(
        _model_fn,
        model_dir=str(tmp_path),
        config=estimator.RunConfig(save_summary_steps=250, log_step_count_steps=300),
    )


def _looped(caplog):
    """(steps looped, loop calls) of the train() calls that built a loop, by their logs."""
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Looped")]
    return [tuple(map(int, re.findall(r"\d+", line)[:2])) for line in lines]


def _train(tmp_path, hooks, caplog):
    est = _estimator(tmp_path)
    with caplog.at_level(logging.DEBUG, logger=graph_steps.__name__):
        est.train(_input_fn, hooks=hooks, steps=STEPS)
    ((looped, calls),) = _looped(caplog)
    return est, looped, calls


def test_a_call_to_max_steps_loops_when_the_steps_left_after_the_checkpoint_are_many(
    tmp_path, caplog
):
    est = _estimator(tmp_path)
    with caplog.at_level(logging.DEBUG, logger=graph_steps.__name__):
        est.train(_input_fn, max_steps=100)  # too short for a loop
        assert _looped(caplog) == []
        est.train(_input_fn, max_steps=100 + STEPS)
    ((looped, _),) = _looped(caplog)
    assert looped > STEPS // 2
    assert est.get_variable_value("global_step") == 100 + STEPS


def test_a_hook_asking_for_every_step_sees_every_step_and_nothing_is_looped(tmp_path, caplog):
    hook = _EveryStep()
    est, looped, calls = _train(tmp_path, [hook], caplog)
    assert len(hook.losses) == STEPS
    assert all(loss is not None for loss in hook.losses)
    assert (looped, calls) == (0, 0)
    assert est.get_variable_value("global_step") == STEPS


def test_steps_no_hook_asks_for_run_in_loop_calls_and_hooks_still_see_theirs(tmp_path, caplog):
    hook = _EveryHundredCalls()
    est, looped, calls = _train(tmp_path, [hook], caplog)
    assert est.get_variable_value("global_step") == STEPS
    # Called for every step, in order; given the step it asked for at each 100th call
    # (TF1 reads it before or after that step's train op moves it, either side).
    assert hook.calls == STEPS
    assert len(hook.fetched) == STEPS // 100
    for n, step in enumerate(hook.fetched, start=1):
        assert 100 * n - 1 <= step <= 100 * n, hook.fetched
    # The other steps ran in loop calls, which end where a hook (this one, the summary
    # and step-count hooks, the last step's StopAtStepHook) needs a step of its own.
    assert looped > STEPS * 3 // 4
    assert STEPS // 100 <= calls < STEPS // 10
    # The SummarySaverHook wrote at its steps, as under 2.15: the first, then every 250.
    events = tf.compat.v1.train.summary_iterator
    files = tf.io.gfile.glob(str(tmp_path / "events.out.tfevents.*"))
    loss_steps = sorted(
        e.step for f in files for e in events(f) for v in e.summary.value if v.tag == "loss"
    )
    _assert_tf1_summary_steps(loss_steps, every=250, last_step=STEPS)


def test_recorded_tf1_programs_give_2_15s_results_with_loops_from_the_first_step(
    tmp_path, monkeypatch
):
    """tests/test_estimator_tf1.py's checks of two recorded programs, with loops built for
    every train() call: their hooks ask for each step, and nothing changes."""
    with open(RECORDED) as f:
        theirs = json.load(f)["programs"]
    monkeypatch.setattr(graph_steps, "MIN_STEPS_FOR_A_LOOP", 0)
    ours = tf1_programs.stock_hooks(estimator, str(tmp_path / "stock"))
    ours_steps = ours.pop("summary_steps")
    _assert_tf1_summary_steps(ours_steps, every=4, last_step=12)
    expected = dict(theirs["stock_hooks"])
    expected.pop("summary_steps")
    for key in ("final_ops_values", "first_and_last_loss"):
        assert ours.pop(key) == pytest.approx(expected.pop(key), rel=1e-5)
    assert ours == expected
    iris = tf1_programs.iris(estimator, str(tmp_path / "iris"))
    _stopped_within_a_step_of_its_threshold(iris, threshold=30, steps_after=70)


def test_gathered_steps_run_as_session_calls_or_in_the_tf1_loop_when_switched_on(
    tmp_path, caplog, monkeypatch
):
    """By default the gathered steps run one lean session call each on the default
    executor (the one 2.15 ran); a session_config asking for the single-threaded executor
    gets them on it; `graph_steps.LOOP_IN_GRAPH` runs them in the TF1 while loop. Every
    way, the hook gets the steps it asked for and training reaches the same step and
    weights."""
    single_config = v1.ConfigProto(experimental={"executor_type": "SINGLE_THREADED_EXECUTOR"})
    finals = []
    for name, session_config, in_graph, how in (
        ("default", None, False, "runs of one session call a step"),
        ("single", single_config, False, "runs of one session call a step"),
        ("loop", None, True, "session calls"),
    ):
        monkeypatch.setattr(graph_steps, "LOOP_IN_GRAPH", in_graph)
        hook = _EveryHundredCalls()
        est = estimator.Estimator(
            _seeded_model_fn,
            model_dir=str(tmp_path / name),
            config=estimator.RunConfig(session_config=session_config, tf_random_seed=1),
        )
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger=graph_steps.__name__):
            est.train(_input_fn, hooks=[hook], steps=STEPS)
        messages = [r.getMessage() for r in caplog.records]
        assert any(m.startswith("Looped") and m.endswith(how + ".") for m in messages), messages
        assert len(hook.fetched) == STEPS // 100
        assert est.get_variable_value("global_step") == STEPS
        finals.append(est.get_variable_value("dense/kernel"))
    np.testing.assert_allclose(finals[0], finals[1], rtol=1e-5)
    np.testing.assert_allclose(finals[0], finals[2], rtol=1e-5)
