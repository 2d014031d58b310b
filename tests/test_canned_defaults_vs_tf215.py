"""Every canned estimator of tf.estimator 2.15 with its defaults, and the one-liners
samples add most (tests/canned_defaults_programs.py), here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py canned_defaults_programs`): each
class of `tf.estimator` and `tf.compat.v1.estimator` built with its required arguments
only (boosted trees with `n_batches_per_layer=1`), trained, evaluated and predicting on
tensors and on a batched Dataset read to its end, then optimizers by name, as Keras
callables and instances and a TF1 instance, three classes, a label vocabulary, weights,
relu6, dropout, batch norm, a summed loss and a linear sparse combiner. Each program runs
once here (a module fixture); `exact` parts (checkpoint keys and shapes, model_dir
files, summary tags, INFO lines, evaluate and predict keys, dtypes and shapes,
signatures, errors) must be equal, `close` ones (linear and baseline values) within
1e-4. The DNNs draw their start unseeded: their names only (seeded, 2.15's numbers: see
`test_a_seed_draws_2_15s_numbers`). What 2.15 refused and the kit runs is
held to a twin program of 2.15's (KIT_ONLY)."""

import re

import numpy as np
import pytest

from tests import canned_defaults_programs as programs
from tests.tf215_recordings import (
    ComparedWithTf215,
    assert_close,
    assert_exact,
    program_runs,
    recorded,
)

RECORDED = recorded(programs)
ours = program_runs(programs)
# Run by the fast lane: the linear and DNN classifiers' defaults in each namespace, the
# baseline regressor's, a Keras optimizer's slots, a refusal; the rest marked slow.
FAST = re.compile(
    r"^(v1_)?(linear|dnn)_classifier_defaults$|^baseline_regressor_defaults$"
    r"|_keras_legacy_callable$|^dnn_classifier_optimizer_tf1_instance$"
)
# What 2.15 refused and the kit runs, each with the program of 2.15's it is held to
# (all but the checkpoint, and the trees' training summaries, equal to that one's):
# 2.15 has no boosted trees (`tf.estimator.BoostedTreesClassifier` is an AttributeError
# there; the kit's are tf.estimator 2.8's), and its V2 classes refused a non-legacy Keras
# optimizer (ValueError: not a tf.keras.optimizers.Optimizer instance), which trains
# here on the TF2 path (docs/guide/estimator.md), its state under Keras's own names.
KIT_ONLY = {
    "boosted_trees_classifier_defaults": "linear_classifier_defaults",
    "boosted_trees_regressor_defaults": "linear_regressor_defaults",
    "linear_regressor_optimizer_keras_callable": "linear_regressor_optimizer_keras_legacy_callable",
    "dnn_regressor_optimizer_keras_instance": "dnn_regressor_defaults",
}


def _marked(names):
    return [pytest.param(n, marks=[] if FAST.search(n) else [pytest.mark.slow]) for n in names]


APART = {"dnn_classifier_seeded", "linear_classifier_no_model_dir", *KIT_ONLY}  # below


class TestCannedDefaults(ComparedWithTf215):
    programs = programs

    def compared(self):
        return _marked(n for n in programs.PROGRAMS if n not in APART)


def test_a_seed_draws_2_15s_numbers(ours):
    """`RunConfig(tf_random_seed=42)` draws a DNN's start as 2.15 did, from the op seeds
    its graph counted (components/estimator/graph_seeds.py; tests/seeded_dnn_programs.py
    holds losses, evaluations and predictions): the first kernel after one step is 2.15's.
    (The other DNN programs here, unseeded, compare names and shapes only.)"""
    theirs, got = RECORDED["dnn_classifier_seeded"], ours["dnn_classifier_seeded"]
    assert got["exact"] == theirs["exact"]
    np.testing.assert_allclose(got["seeded"]["kernel"], theirs["seeded"]["kernel"], rtol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KIT_ONLY))
def test_what_2_15_refused_shows_its_twins_names_here(ours, name):
    """2.15 refused it; the kit's runs show what 2.15's twin program showed: evaluate's
    and predict's keys, dtypes and shapes, signatures, files, INFO lines; the Keras
    optimizer's values are its legacy twin's (within 1e-4: the same Adam update)."""
    twin = KIT_ONLY[name]
    assert RECORDED[name]["exact"]["error"] in ("AttributeError", "ValueError")
    got, theirs = dict(ours[name]["exact"]), dict(RECORDED[twin]["exact"])
    kept_apart = ("checkpoint", "variable_names")  # (the state of a model of its own)
    for skipped in (*kept_apart, "train_tags") if name.startswith("boosted") else kept_apart:
        assert got.pop(skipped) and theirs.pop(skipped)
    if name.startswith("boosted"):
        assert ours[name]["exact"]["checkpoint"]["boosted_trees/node_value"] == [100, 127, 1]
        got = {k: v for k, v in got.items() if not k.startswith("predict/")}
        theirs = {k: v for k, v in theirs.items() if not k.startswith("predict/")}
    else:
        assert_close(ours[name]["close"], RECORDED[twin]["close"], name)
    assert_exact(got, theirs, name)


@pytest.mark.slow
def test_a_model_dir_of_its_own_is_logged_as_2_15_logged_it(ours):
    """No model_dir: the same folder's files and bias; the line 2.15 logged, to which the
    kit adds that it removes the folder when the process exits (docs/guide/estimator.md:
    2.15 left one behind per Estimator)."""
    name = "linear_classifier_no_model_dir"
    got, theirs = dict(ours[name]["exact"]), dict(RECORDED[name]["exact"])
    (line,) = got.pop("temporary_folder_logged")
    (expected,) = theirs.pop("temporary_folder_logged")
    assert (
        line == expected + " (removed when this process exits; pass model_dir to keep the model)."
    )
    assert_exact(got, theirs, name)
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
