"""Boosted trees against tf.estimator's own, recorded under TF 2.8 (the last tf.estimator
with them) by tests/tf215/record_boosted_trees.py in tests/data/tf215/boosted_trees_tf28.json.

The same cases run here with the kit's estimator: bucketized and categorical columns,
where both sides see the same buckets, grow the same trees (predictions, `evaluate()`
and feature importances equal to float32 rounding), in memory and over batches, with
weights, l1, l2, min_node_weight, pre- and post-pruning, bias centering and three
classes.  A numeric column is cut at quantiles that each side sketches its own way:
that case is held to the same quality, not the same trees.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from pipeline.config import REPO_ROOT
from tests.tf215 import record_boosted_trees as cases

RECORDED = json.loads(
    (REPO_ROOT / "tests" / "data" / "tf215" / "boosted_trees_tf28.json").read_text()
)["cases"]
EXACT = [name for name in cases.CASES if name != cases.NUMERIC_CASE]
# tf.estimator 2.8's boosted trees evaluated with its v1 heads, whose precision-recall AUC is
# tf.compat.v1.metrics.auc's; the kit's heads are 2.15's (Keras's AUC, checked against 2.15
# in tests/test_estimator_heads.py): on the few distinct values trees predict, up to 1% apart.
V1_HEAD_ONLY = {"auc_precision_recall"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {
        name: cases.run_case(tf, estimator, name, str(tmp_path_factory.mktemp(name)))
        for name in cases.CASES
    }


@pytest.mark.parametrize("name", EXACT)
def test_same_buckets_grow_the_same_trees_as_tf_estimator(runs, name):
    mine, recorded = runs[name], RECORDED[name]
    np.testing.assert_allclose(mine["predictions"], recorded["predictions"], atol=5e-6)
    assert sorted(mine["evaluate"]) == sorted(recorded["evaluate"])
    for key, value in recorded["evaluate"].items():
        if key not in V1_HEAD_ONLY:
            np.testing.assert_allclose(
                mine["evaluate"][key], value, rtol=2e-5, atol=1e-6, err_msg=key
            )
    assert mine["importances"] == pytest.approx(recorded["importances"], abs=1e-5)


def test_numeric_columns_train_as_well_as_tf_estimator(runs):
    mine, recorded = runs[cases.NUMERIC_CASE], RECORDED[cases.NUMERIC_CASE]
    assert sorted(mine["evaluate"]) == sorted(recorded["evaluate"])
    assert mine["evaluate"]["auc"] == pytest.approx(recorded["evaluate"]["auc"], abs=0.01)
    assert mine["evaluate"]["loss"] == pytest.approx(recorded["evaluate"]["loss"], rel=0.05)
    agree = np.mean(
        (np.array(mine["predictions"])[:, 1] > 0.5)
        == (np.array(recorded["predictions"])[:, 1] > 0.5)
    )
    assert agree > 0.95
    assert max(mine["importances"], key=mine["importances"].get) == "x1"
