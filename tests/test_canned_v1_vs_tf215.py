"""tf.compat.v1.estimator's canned estimators with their V1 defaults and common
arguments, and tf.estimator's less used heads (tests/canned_v1_programs.py), here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py canned_v1_programs`): the V1
DNN, linear, wide & deep and baseline classes (the loss summed over the batch, TF1
optimizers by name and as instances, partitioners, weights, a label vocabulary, three
classes, batch norm, dropout, sparse combiners) and `LogisticRegressionHead`, a weighted
`PoissonRegressionHead`, `MultiLabelHead(classes_for_class_based_metrics=...)` and
`RegressionHead(label_dimension=2)` in tf.estimator's `...Estimator`s. Each program runs
once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4,
`loose` ones (dropout's draws) within 35%.
"""

import pytest

from tests import canned_v1_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_program_sees_what_it_saw_under_tf215(ours, name):
    assert_exact(ours[name]["exact"], RECORDED[name]["exact"], name)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_program_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
    if "loose" in RECORDED[name]:
        assert_close(ours[name]["loose"], RECORDED[name]["loose"], name, rtol=0.35)


def test_the_recording_holds_the_v1_semantics():
    """What the comparisons hold the kit to: 2.15's V1 classes sum the loss over the
    batch (weighted: the weights' sum), tf.estimator's heads average it."""
    v1 = RECORDED["dnn_classifier_defaults"]["close"]
    assert v1["evaluate/loss"] == pytest.approx(
        v1["evaluate/average_loss"] * programs.RAW["w"].sum(), rel=1e-4
    )
    v2 = RECORDED["multi_label_head_class_metrics"]["close"]
    assert v2["evaluate/loss"] == pytest.approx(v2["evaluate/average_loss"], rel=1e-4)
