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
- `names` (what goes by 2.15's names) must be equal for every program: exports are
  built in a graph as 2.15 built them, a V2 canned estimator's too (its PREDICT graph,
  restored by name from the checkpoint its TF2 path wrote), so code fetching
  `head/predictions/probabilities:0` or `input_example_tensor:0` finds them (the V1 DNN's
  asset tensor name aside, below; the op list `saved_model_cli` shows for a canned DNN is
  compared below, tf_keras's initializer ops aside);
- `values`: the TF1 model_fn starts from seeded initializers, so its scores are 2.15's
  within 1e-4; a canned model starts from random weights drawn in another order, so its
  scores are checked to agree between the ways of reading them.

The `*_alternatives` programs export over a receiver with `receiver_tensors_alternatives`:
each alternative group adds `<group>:<output key>` signatures, those it cannot serve left
out, as under 2.15.
"""

import re

import numpy as np
import pytest

from tests import export_consumer_programs as programs
from tests.tf215_recordings import (
    ComparedWithTf215,
    assert_close,
    assert_exact,
    program_runs,
    recorded,
)

RECORDED = recorded(programs)
GRAPH_BUILT = ["tf1_model_fn_parsing", "tf1_model_fn_raw", "tf1_model_fn_head"]
ALTERNATIVES = [name for name in programs.PROGRAMS if name.endswith("_alternatives")]
CANNED = [name for name in programs.PROGRAMS if name not in GRAPH_BUILT + ALTERNATIVES]
# Exported from a traced function (a TF2 SavedModel), not a graph with a session: its
# tensor names are not 2.15's, and a sparse input is a signature's three dense parts.
TRACED = "keras_model_fn_alternatives"

TF2_CANNED = ["dnn_classifier", "linear_regressor", "dnn_linear_combined_classifier"]
# A V2 canned classifier with label_vocabulary: its classes 2.15's table lookup
# (`head/predictions/hash_table_Lookup/LookupTableFindV2:0`); a linear model starts from
# zeros, so its scores are 2.15's.
VOCABULARY = "linear_classifier_label_vocabulary"
# The ops `saved_model_cli show --all` lists for a canned DNN's export are 2.15's (its
# one-hot indicator column, its layer summaries in the PREDICT graph, AsString class
# strings) but for the initializers': tf_keras's Dense layers (TF 2.21's) draw theirs with
# stateless ops, Keras 2.15's in a graph with a stateful RandomUniform. The initializers
# never run in an export (its variables are restored), so that pair is kept.
OP_SET = re.compile(r".* contains the following ops: ")
TF_KERAS_INITIALIZER_OPS = ("'StatelessRandomGetKeyCounter'", "'StatelessRandomUniformV2'")
# Left: the V1 DNN's vocabulary asset tensor is `.../colour_indicator_1/...` here (its
# input layer's column scope is taken once before), `.../colour_indicator/...` in 2.15;
# the asset file, and every tensor and op code fetches by name, are 2.15's.
V1_ASSET = re.compile(r"_indicator_1/")

ours = program_runs(programs)


class TestExportConsumers(ComparedWithTf215):
    """Signatures read as under 2.15 (`exact`), and values (`close`)."""

    programs = programs


# V1 canned models whose tensors code fetches by 2.15's names (their ops' names aside).
V1_BY_NAME = ["v1_linear_regressor", "v1_baseline_classifier", "v1_linear_classifier_3_classes"]


@pytest.mark.parametrize(
    "name", [*GRAPH_BUILT, "v1_dnn_classifier", *V1_BY_NAME, *TF2_CANNED, VOCABULARY]
)
def test_names_read_as_under_tf215(ours, name):
    got, theirs = dict(ours[name]["names"]), dict(RECORDED[name]["names"])
    if name == "v1_dnn_classifier":
        got["asset_file_defs"] = [
            [f, V1_ASSET.sub("_indicator/", t)] for f, t in got["asset_file_defs"]
        ]
    if name in TF2_CANNED and "saved_model_cli" in theirs:
        for shown in (got, theirs):  # (the op set: test_canned_export_ops_as_under_tf215)
            shown["saved_model_cli"] = [
                line for line in shown["saved_model_cli"] if not OP_SET.match(line)
            ]
    assert_exact(got, theirs, name)


def _op_sets(shown):
    """{MetaGraph: set of op names} of `saved_model_cli show --all`'s op lines."""
    return {
        OP_SET.match(line).group(0): set(line[OP_SET.match(line).end() :].split(", "))
        for line in shown
        if OP_SET.match(line)
    }


def test_canned_export_ops_as_under_tf215(ours):
    got = _op_sets(ours["dnn_classifier"]["names"]["saved_model_cli"])
    theirs = _op_sets(RECORDED["dnn_classifier"]["names"]["saved_model_cli"])
    for graph, ops in got.items():
        if ops.issuperset(TF_KERAS_INITIALIZER_OPS):
            got[graph] = ops.difference(TF_KERAS_INITIALIZER_OPS) | {"'RandomUniform'"}
    assert got == theirs


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


@pytest.mark.parametrize("name", [*TF2_CANNED, *V1_BY_NAME, VOCABULARY])
def test_canned_scores_by_name_are_the_signatures(ours, name):
    """`sess.run` by 2.15's tensor names gives what the `predict` signature gives: the
    export is one graph, its names those of the signature's tensors."""
    values = ours[name]["values"]
    assert values["by_name"], "nothing fetched by 2.15's names"
    for key, scores in values["by_name"].items():
        if scores and isinstance(scores[0], str):
            assert scores == values["strings"][f"predictor/{key}"], key
        else:
            np.testing.assert_allclose(scores, values["predictor"][key], atol=1e-6)


def test_vocabulary_classes_by_name_as_under_tf215(ours):
    """The classes fetched by 2.15's name are the vocabulary's strings 2.15 gave, with its
    class ids, probabilities and logits."""
    got, theirs = ours[VOCABULARY]["values"], RECORDED[VOCABULARY]["values"]
    assert got["strings"] == theirs["strings"]
    assert got["by_name"]["classes"] == theirs["by_name"]["classes"] == ["yes", "no", "no"]
    for way in ("by_name", "predictor"):
        assert_close(_split(got[way])[1], _split(theirs[way])[1], f"{VOCABULARY} {way}")


@pytest.mark.parametrize("name", [n for n in ALTERNATIVES if n != TRACED])
def test_alternative_signatures_by_name_as_under_tf215(ours, name):
    """A graph-built export's alternative signatures: their tensors (the parsed features'
    `ParseExample/ParseExampleV2:3`, a coo_sparse colour) and `saved_model_cli`'s listing
    are 2.15's."""
    assert_exact(ours[name]["names"], RECORDED[name]["names"], name)


def test_traced_alternative_signatures_as_under_tf215(ours):
    """A TF2-style model_fn's export: the same signatures, inputs and outputs as 2.15's
    graph gave (the sparse colour, which `tf.saved_model.load` calls by its parts under
    2.15 too, is those three parts in the SignatureDef)."""
    got = dict(ours[TRACED]["names"]["signature_defs"])
    theirs = dict(RECORDED[TRACED]["names"]["signature_defs"])
    sparse = "features:serving_default"
    method, inputs, outputs = got.pop(sparse)
    their_method, their_inputs, their_outputs = theirs.pop(sparse)
    assert (method, outputs) == (their_method, their_outputs)
    assert inputs.pop("x") == their_inputs.pop("x")
    assert their_inputs == {"colour": [7, [-1, -1]]}
    assert inputs == {
        "colour_dense_shape": [9, [2]],
        "colour_indices": [9, [-1, 2]],
        "colour_values": [7, [-1]],
    }
    assert got == theirs


@pytest.mark.parametrize("name", ["tf1_model_fn_alternatives", "tf1_model_fn_only_alternatives"])
def test_alternative_scores_as_under_tf215(ours, name):
    got, theirs = ours[name]["values"], RECORDED[name]["values"]
    for way in ("tf2", "predictor"):
        assert sorted(got[way]) == sorted(theirs[way])
        for key, outputs in theirs[way].items():
            got_strings, got_numbers = _split(got[way][key])
            their_strings, their_numbers = _split(outputs)
            assert got_strings == their_strings, (name, way, key)
            assert_close(got_numbers, their_numbers, f"{name} {way} {key}")


def _split(outputs):
    """(its string outputs, its numeric outputs) of a signature's {output: values}."""
    strings = {k: v for k, v in outputs.items() if v and isinstance(v[0], str)}
    return strings, {k: v for k, v in outputs.items() if k not in strings}


@pytest.mark.parametrize("name", ALTERNATIVES)
def test_alternatives_score_as_the_default_signatures(ours, name):
    """Each `<group>:<key>` signature gives what the default `<key>` gives for the same
    examples (the parsed features fed downstream, or the examples as `input`), and the
    predictor what tf.saved_model.load's signature gives."""
    called, predicted = ours[name]["values"]["tf2"], ours[name]["values"]["predictor"]
    for key, outputs in called.items():
        default = called.get(key.split(":")[-1])
        for output, values in outputs.items():
            if default is not None:
                assert values == default[output], (key, output)
            if key in predicted:
                assert predicted[key][output] == values, (key, output)


def test_boosted_trees_export_has_the_alternative_signatures(tmp_path):
    """BoostedTreesClassifier (a TF2 SavedModel here; 2.15 had it in no public namespace)
    gives the receiver's alternatives the signatures 2.15 gave a DNNClassifier's, of
    the same binary head, each scoring as its default one."""
    import tensorflow as tf

    import components.estimator.install  # noqa: F401

    x = tf.feature_column.numeric_column("x", shape=[2])
    est = tf.estimator.BoostedTreesClassifier(
        [tf.feature_column.bucketized_column(x, [-0.5, 0.0, 0.5])],
        n_batches_per_layer=1,
        model_dir=str(tmp_path / "model"),
    )
    est.train(programs._input_fn(tf), steps=3)
    spec = tf.feature_column.make_parse_example_spec([x])
    receiver_fn = programs._alternatives_receiver_fn(tf, spec)
    read = programs._alternatives_read(tf, programs._export(est, tf, str(tmp_path), receiver_fn))
    dnn = RECORDED["dnn_classifier_alternatives"]["exact"]
    # (no sparse colour here: the `dense` group serves what `features` serves)
    expected = dict(dnn["signatures"], **{"dense:predict": "tensorflow/serving/predict"})
    assert read["exact"]["signatures"] == expected
    assert read["exact"]["tf2_inputs"]["features:predict"] == {"x": ["float32", [None, 2]]}
    called = read["values"]["tf2"]
    for key, outputs in called.items():
        assert outputs == called[key.split(":")[-1]], key
