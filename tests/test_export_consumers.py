"""Code that consumes tf.estimator exports (tests/export_consumer_programs.py) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py export_consumer_programs`):
TF1-era serving and batch-scoring code reading an export with
`tf.compat.v1.saved_model.loader.load` and `sess.run` by tensor names, a predictor feeding
a signature by its keys, `tf.saved_model.load(...).signatures`, the export's assets,
variables index and ops, and `saved_model_cli show --all`, for a TF1 model_fn (parsing
and raw receivers) and canned estimators. Each program runs once here (a module fixture).

- `exact` (what goes through the signatures: keys, methods, dtypes, shapes, tag
  constants) must be equal for every program;
- `names` (what goes by 2.15's names) must be equal for the TF1 model_fns and
  tf.compat.v1's DNNClassifier, whose exports are built in a graph as 2.15 built them
  (the V1 DNN's asset tensor name aside, below). A V2 canned estimator's export is a TF2
  SavedModel of the kit's serving module (docs/guide/estimator.md): its signatures'
  tensors are `StatefulPartitionedCall` outputs and its variables' index keys
  object-based, so code fetching `head/predictions/probabilities:0` or
  `input_example_tensor:0` finds neither: those comparisons are strict xfails;
- `values`: the TF1 model_fn starts from seeded initializers, so its scores are 2.15's
  within 1e-4; a canned model starts from random weights drawn in another order, so its
  scores are checked to agree between the ways of reading them.
"""

import re

import numpy as np
import pytest

from tests import export_consumer_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
GRAPH_BUILT = ["tf1_model_fn_parsing", "tf1_model_fn_raw", "tf1_model_fn_head"]
CANNED = [name for name in programs.PROGRAMS if name not in GRAPH_BUILT]

# Left (see the module's docstring): a V2 canned estimator's export is a TF2 SavedModel.
TF2_CANNED = ["dnn_classifier", "linear_regressor", "dnn_linear_combined_classifier"]
TF2_SAVED_MODEL = (
    "a canned estimator exports a TF2 SavedModel: no 2.15 tensor names, object-based keys"
)
# Left: the V1 DNN's vocabulary asset tensor is `.../colour_indicator_1/...` here (its
# input layer's column scope is taken once before), `.../colour_indicator/...` in 2.15;
# the asset file, and every tensor and op code fetches by name, are 2.15's.
V1_ASSET = re.compile(r"_indicator_1/")

ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_signatures_read_as_under_tf215(ours, name):
    assert sorted(ours[name]) == sorted(RECORDED[name])
    assert_exact(ours[name]["exact"], RECORDED[name]["exact"], name)


@pytest.mark.parametrize(
    "name",
    [*GRAPH_BUILT, "v1_dnn_classifier"]
    + [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=TF2_SAVED_MODEL))
        for name in TF2_CANNED
    ],
)
def test_names_read_as_under_tf215(ours, name):
    got = dict(ours[name]["names"])
    if name == "v1_dnn_classifier":
        got["asset_file_defs"] = [
            [f, V1_ASSET.sub("_indicator/", t)] for f, t in got["asset_file_defs"]
        ]
    assert_exact(got, RECORDED[name]["names"], name)


@pytest.mark.parametrize("name", GRAPH_BUILT)
def test_scores_as_under_tf215(ours, name):
    got, theirs = ours[name]["values"], RECORDED[name]["values"]
    assert got["strings"] == theirs["strings"]
    for way in ("predictor", "by_name"):
        assert_close(got[way], theirs[way], f"{name} {way}")
    for key, outputs in theirs["tf2"].items():
        assert_close(got["tf2"][key], outputs, f"{name} tf2 {key}")


@pytest.mark.parametrize("name", CANNED)
def test_canned_scores_agree_between_readers(ours, name):
    """The predictor (a Session over the `predict` signature) and tf.saved_model.load's
    `predict` signature give the same scores, and the classes' strings match."""
    values = ours[name]["values"]
    assert values["predictor"].keys() == values["tf2"]["predict"].keys()
    for key, scores in values["predictor"].items():
        np.testing.assert_allclose(scores, values["tf2"]["predict"][key], atol=1e-6)
    strings = values["strings"]
    for key in ("classes", "all_classes"):
        if f"predictor/{key}" in strings:
            assert strings[f"predictor/{key}"] == strings[f"predict/{key}"]


def test_canned_names_2_15_had(ours):
    """What the xfails above stand for: 2.15's canned export answered `sess.run` by its
    tensor names and kept name-based index keys; the kit's has the same signatures,
    served by keys (tests above), not those names."""
    theirs = RECORDED["dnn_classifier"]["names"]
    assert theirs["fetched_by_name"] == ["logistic", "logits", "probabilities"]
    assert "dnn/logits/kernel" in theirs["index_keys"]
    got = ours["dnn_classifier"]["names"]
    assert got["fetched_by_name"] in ("TypeError", "KeyError", "ValueError")
