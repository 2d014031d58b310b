"""The canned estimators' INFO lines (tests/canned_logging_programs.py) against
tf.estimator 2.15's, recorded once by `tests/tf215/record_canned_logging.py`: warm starts
from a folder and from WarmStartSettings, evaluate, predict, export, train_and_evaluate.

Every line 2.15 showed is compared, in order, but those the kit leaves out on purpose
(`left_out`, each with its reason)."""

import json
import re

import pytest

import components.estimator.install  # noqa: F401  (tf.estimator is the kit's)
from tests import canned_logging_programs as programs

with open(programs.RECORDED) as _f:
    RECORDED = json.load(_f)["programs"]

SLOW = {"dnn_classifier", "dnn_linear_combined_classifier"}
# Left out on purpose: 2.15's graph and session machinery, which the TF2 path does not
# run (it calls model_fn once per trace, makes no CheckpointSaverHook, finalizes no graph,
# runs no local_init_op); and deprecation warnings, which name each version's own
# functions (the kit deprecates nothing of tf.estimator's).
_MACHINERY = re.compile(
    r"^INFO:tensorflow:(Calling model_fn|Done calling model_fn|Create CheckpointSaverHook|"
    r"Graph was finalized|Running local_init_op|Done running local_init_op)\.$"
)
_DEPRECATION = "WARNING:tensorflow:From "


def left_out(lines):
    return [
        line for line in lines if not line.startswith(_DEPRECATION) and not _MACHINERY.match(line)
    ]


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in programs.PROGRAMS],
)
def test_canned_estimator_logs_as_under_tf215(name, tmp_path):
    theirs = left_out(RECORDED[name]["lines"])
    ours = left_out(programs.PROGRAMS[name](str(tmp_path))["lines"])
    assert ours == theirs


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def test_the_recordings_hold_what_the_programs_are_for():
    """2.15's warm-start lines in each program that warm-starts (a folder given stays a
    folder), its asset lines, and the machinery lines `left_out` drops."""
    for name, recorded in RECORDED.items():
        lines = recorded["lines"]
        assert any(_MACHINERY.match(line) for line in lines), name
        if name != "numeric_regressor":
            assert "INFO:tensorflow:Warm-starting from: <workdir>/first" in lines, name
            assert sum(line.startswith("INFO:tensorflow:Warm-started ") for line in lines) == 2
    assert "INFO:tensorflow:No assets to write." in RECORDED["numeric_regressor"]["lines"]
