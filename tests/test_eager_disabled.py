"""Estimators where nothing runs eagerly (tests/eager_disabled_programs.py) against
tf.estimator 2.15: after `tf.compat.v1.disable_eager_execution()` or
`tf.compat.v1.disable_v2_behavior()`, as `tf_upgrade_v2`'d TF1 samples start, or inside a
`tf.Graph().as_default()` block.  2.15 ran every Estimator there, in its graph and
session; the kit runs them on its graph-mode path.

Recorded once under 2.15 (`tests/tf215/record_eager_disabled.py`).  Eager execution
cannot be turned back on, so the two groups that turn it off run in processes of their
own (side by side, while the graph-block group runs here).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests import eager_disabled_programs as programs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(programs.RECORDED) as _f:
    RECORDED = json.load(_f)["groups"]
CASES = [(group, name) for group, (_, found) in programs.GROUPS.items() for name in found]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """{group: {program: its result here}} and the boosted-trees refusal."""
    import components.estimator.install  # noqa: F401  (the programs say tf.estimator)

    workdir = tmp_path_factory.mktemp("eager_disabled")
    running = {}
    for group, (switch, _) in programs.GROUPS.items():
        if switch is not None:
            out = str(workdir / f"{group}.json")
            command = [sys.executable, "-m", "tests.eager_disabled_programs", group, out]
            running[group] = (subprocess.Popen([*command, "--kit"], cwd=REPO), out)
    found = {"groups": {"graph_block": programs.run_group(tf, "graph_block")}}
    for group, (process, out) in running.items():
        assert process.wait() == 0, group
        with open(out) as f:
            written = json.load(f)
        found["groups"][group] = written["programs"]
        found.setdefault("boosted_trees", written["boosted_trees"])
        found.setdefault("model_to_estimator", written["model_to_estimator"])
    return found


def test_every_program_is_recorded():
    assert {g: sorted(p) for g, p in RECORDED.items()} == {
        g: sorted(p) for g, (_, p) in programs.GROUPS.items()
    }


@pytest.mark.parametrize("group, name", CASES)
def test_program_sees_what_it_saw_under_tf215(ours, group, name):
    theirs, got = RECORDED[group][name], ours["groups"][group][name]
    assert sorted(got) == sorted(theirs)
    for key, expected in theirs["exact"].items():
        assert got["exact"][key] == expected, key


@pytest.mark.parametrize("group, name", CASES)
def test_program_values_as_under_tf215(ours, group, name):
    theirs, got = RECORDED[group][name], ours["groups"][group][name]
    part, rtol, atol = ("close", 1e-4, 1e-5) if "close" in theirs else ("loose", 0.35, 0.05)
    assert sorted(got[part]) == sorted(theirs[part])
    for key, expected in theirs[part].items():
        np.testing.assert_allclose(got[part][key], expected, rtol=rtol, atol=atol, err_msg=key)


def test_boosted_trees_refuse_naming_the_cause(ours):
    """The kit's boosted trees grow their trees in eager code between steps (2.15 had
    none): with eager execution off, training is refused, saying why."""
    kind, message = ours["boosted_trees"]
    assert kind == "RuntimeError"
    assert "BoostedTreesClassifier runs only with eager execution" in message
    assert "disable_eager_execution()" in message


def test_model_to_estimator_refuses_a_tf1_keras_model_naming_the_cause(ours):
    """A Keras model compiled with eager execution off is TF1 Keras (no `compiled_loss`):
    2.15 trained it; here it is refused, saying why (not "must be compiled")."""
    kind, message = ours["model_to_estimator"]
    assert kind == "ValueError"
    assert "compiled with eager execution off" in message
