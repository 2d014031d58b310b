"""Programs shaped like public tf.estimator samples (tests/public_sample_programs.py) here
against tf.estimator 2.15.

What each sample's user sees, recorded once under 2.15
(`tests/tf215/record_public_samples.py`): keys, dtypes, shapes, listings, signatures,
event tags, the INFO lines users grep and error types exactly; deterministic values to
1e-4; values that hang on random draws within 35%; the gist of error messages.  The
differences the kit keeps on purpose (docs/guide/estimator.md) are taken out first, as
in tests/test_tutorials_vs_tf215.py.  2.15 has no boosted trees: the tutorials' trees are
held to what the tutorials themselves check and to tf.estimator 2.8's evaluation keys.
"""

import json
import os

import pytest

import components.estimator.install  # noqa: F401  (tf.estimator is the kit's)
from components.estimator import ignored
from tests import public_sample_programs as programs
from tests.tf215_recordings import assert_close, normalized, recorded

RECORDED = recorded(programs)
with open(os.path.join(programs.DATA_DIR, "boosted_trees_tf28.json")) as _f:
    TF28_EVALUATE_KEYS = sorted(json.load(_f)["cases"]["binary"]["evaluate"])

SLOW = {"boosted_trees_titanic", "wide_deep_census_r1"}
# What 2.15's messages and the kit's both name, for each misuse.
MESSAGE_GIST = {
    "batch_size_in_params": ["batch_size", "params"],
    "input_fn_without_params": ["input_fn", "params", "batch_size"],
    "bad_mode_predictions": ["nope", "class_ids", "probabilities"],
    "loss_reduction_v1_sum": ["Invalid loss_reduction", "weighted_sum"],
    "hooked_train": ["head/truediv"],
}


def _kept_apart(exact):
    """`exact` without what differs on purpose (docs/guide/estimator.md): 2.15's second
    MetaGraph, tagged `serve, tpu` (export_to_tpu), which only a TPU runs; TF 2.21's
    `fingerprint.pb` in a SavedModel; whether the TensorFlow has boosted trees."""
    exact = {k: v for k, v in exact.items() if k != "has_boosted_trees"}
    if "export" in exact:
        exact["export"] = [g for g in exact["export"] if g["tags"] == ["serve"]]
    if "export_files" in exact:
        exact["export_files"] = [f for f in exact["export_files"] if f != "fingerprint.pb"]
    return exact


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Each program once, on first use."""
    results = {}

    def run(name):
        if name not in results:
            ignored._warned.discard("TPUEstimator.export_to_tpu")  # (warned once per process)
            results[name] = programs.PROGRAMS[name](str(tmp_path_factory.mktemp(name)))
        return results[name]

    return run


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in programs.PROGRAMS],
)
def test_public_sample_behaves_as_under_tf215(name, ran):
    theirs, ours = RECORDED[name], ran(name)
    assert normalized(_kept_apart(ours["exact"])) == normalized(_kept_apart(theirs["exact"]))
    if "close" in theirs:
        assert_close(ours["close"], theirs["close"], f"{name} close")
    if "loose" in theirs:
        assert_close(ours["loose"], theirs["loose"], f"{name} loose", 0.35, 0.05)
    for key, message in theirs.get("messages", {}).items():
        for word in MESSAGE_GIST[key] if message else ():
            assert word in message, (key, word, message)  # (the gist is 2.15's)
            assert word in ours["messages"][key], (key, word, ours["messages"][key])


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def test_samples_log_what_their_users_grep():
    """Every sample sets the verbosity to INFO and shows 2.15's lines: the final loss and
    each evaluation's results (recorded as 2.15 wrote them)."""
    lines = RECORDED["wide_deep_census_r1"]["exact"]["lines"]
    assert any(line.startswith("INFO:tensorflow:Loss for final step: ") for line in lines)
    assert any(line.startswith("INFO:tensorflow:Saving dict for global step 4: ") for line in lines)


@pytest.mark.slow
def test_boosted_trees_tutorials_hold_what_they_check(ran):
    """2.15 has no boosted trees (its record says so); the kit's pass the tutorials'
    own checks: bias + sum(dfc) is the probability to 7 decimals, one bias, normalized
    importances largest first, and tf.estimator 2.8's evaluation keys."""
    assert RECORDED["boosted_trees_titanic"]["exact"]["has_boosted_trees"] is False
    assert ran("boosted_trees_titanic")["exact"]["has_boosted_trees"] is True
    trees = ran("boosted_trees_titanic")["trees"]
    assert sorted(trees["evaluate"]) == TF28_EVALUATE_KEYS
    assert sorted(trees["in_memory_evaluate"]) == TF28_EVALUATE_KEYS
    assert trees["global_step"] == 30
    assert trees["in_memory_global_step"] >= 10 * 3  # every tree grown, in memory
    assert trees["evaluate"]["accuracy"] > trees["evaluate"]["accuracy_baseline"]
    assert trees["dfc_gap"] < 1.5e-7  # np.testing.assert_almost_equal(dfc_prob, probs)
    assert len(trees["biases"]) == 1
    assert trees["dfc_keys"] == sorted(programs.CATEGORICAL_COLUMNS + programs.NUMERIC_COLUMNS)
    assert {"bias", "dfc", "probabilities", "class_ids"} <= set(trees["explanation_keys"])
    importances = list(trees["importances"].values())
    assert importances == sorted(importances, reverse=True)
    assert sum(importances) == pytest.approx(1.0)
    regression = ran("boosted_trees_regression")["trees"]
    assert regression["count"] == 72
    assert regression["trees_error"] < regression["linear_error"] / 5


def test_kit_log_lines_follow_tensorflow_verbosity():
    """The kit logs under components.estimator.*; what it logs shows through TensorFlow's
    logger's handlers, named `tensorflow`, at that logger's verbosity (as 2.15's did)."""
    import logging

    import tensorflow as tf

    tensorflow_logger, seen = tf.get_logger(), []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(f"{record.levelname}:{record.name}:{record.msg}")
    kit = logging.getLogger("components.estimator.training_loop")
    level = tensorflow_logger.level
    tensorflow_logger.addHandler(handler)
    try:
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.WARN)
        kit.info("not shown")
        kit.warning("shown at WARN")
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
        kit.info("Loss for final step: 0.5.")
    finally:
        tensorflow_logger.removeHandler(handler)
        tensorflow_logger.setLevel(level)
    assert seen == [
        "WARNING:tensorflow:shown at WARN",
        "INFO:tensorflow:Loss for final step: 0.5.",
    ]
    assert not kit.isEnabledFor(logging.INFO) or level <= logging.INFO  # restored
