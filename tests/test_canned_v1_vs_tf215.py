"""tf.compat.v1.estimator's canned estimators with their V1 defaults and common
arguments, and tf.estimator's less used heads (tests/canned_v1_programs.py), here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py canned_v1_programs`): the V1
DNN, linear, wide & deep and baseline classes (the loss summed over the batch, TF1
optimizers by name and as instances, partitioners, weights, a label vocabulary, three
classes, batch norm, dropout, sparse combiners) and `LogisticRegressionHead`, a weighted
`PoissonRegressionHead`, `MultiLabelHead(classes_for_class_based_metrics=...)` and
`RegressionHead(label_dimension=2)` in tf.estimator's `...Estimator`s. Each program runs
once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4
(seeded dropout too: the kit draws 2.15's masks).
"""

import pytest

from tests import canned_v1_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


class TestCannedV1(ComparedWithTf215):
    programs = programs
    tolerances = {"close": (1e-4, 1e-5)}


def test_the_recording_holds_the_v1_semantics():
    """What the comparisons hold the kit to: 2.15's V1 classes sum the loss over the
    batch (weighted: the weights' sum), tf.estimator's heads average it."""
    v1 = RECORDED["dnn_classifier_defaults"]["close"]
    assert v1["evaluate/loss"] == pytest.approx(
        v1["evaluate/average_loss"] * programs.RAW["w"].sum(), rel=1e-4
    )
    v2 = RECORDED["multi_label_head_class_metrics"]["close"]
    assert v2["evaluate/loss"] == pytest.approx(v2["evaluate/average_loss"], rel=1e-4)
