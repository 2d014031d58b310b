"""The heads and head-based estimators, against tf.estimator 2.15's own records.

tests/tf215/record_heads.py defines the cases and recorded what tf.estimator 2.15
gave for them (tests/data/tf215/heads.json); here the same code runs them with the
kit's estimator.  Heads: loss, predictions (keys, dtypes, shapes, values) and metric
values on fixed logits and labels, and the export output keys.  Estimators (a few
steps on 64 rows): `evaluate()` keys, and values where the model starts from zeros
and so trains the same in both; predict keys, dtypes and shapes; the SavedModel's
signatures, then loaded and served.
"""

import json

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from components import estimator
from pipeline.config import REPO_ROOT
from tests.tf215 import record_heads as cases

RECORDED = json.loads((REPO_ROOT / "tests" / "data" / "tf215" / "heads.json").read_text())


def _by_key(predictions):
    return {json.dumps(key): record for key, record in predictions}


@pytest.mark.parametrize("name", cases.HEAD_NAMES)
def test_head_matches_tf215(name):
    mine, recorded = cases.record_head(tf, estimator, name), RECORDED["heads"][name]
    for field in ("name", "logits_dimension", "loss_reduction", "export_outputs"):
        assert mine[field] == recorded[field], field
    np.testing.assert_allclose(mine["loss"], recorded["loss"], rtol=1e-5)
    assert sorted(mine["metrics"]) == sorted(recorded["metrics"])
    for key, value in recorded["metrics"].items():
        np.testing.assert_allclose(mine["metrics"][key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    predictions, expected = _by_key(mine["predictions"]), _by_key(recorded["predictions"])
    assert sorted(predictions) == sorted(expected)
    for key, record in expected.items():
        got = predictions[key]
        assert (got["dtype"], got["shape"]) == (record["dtype"], record["shape"]), key
        if record["dtype"].startswith("float"):
            np.testing.assert_allclose(got["value"], record["value"], rtol=1e-5, err_msg=key)
        else:
            assert got["value"] == record["value"], key


@pytest.fixture(scope="module", params=list(cases.ESTIMATOR_CASES))
def run(request, tmp_path_factory):
    """(case name, estimator, evaluate() results, first prediction, export dir)."""
    workdir = str(tmp_path_factory.mktemp(request.param))
    return (request.param, *cases.run_estimator(tf, estimator, request.param, workdir))


def test_estimator_evaluate_matches_tf215(run):
    name, _, results, _, _ = run
    recorded = RECORDED["estimators"][name]["evaluate"]
    assert sorted(results) == sorted(recorded)
    assert results["global_step"] == cases.STEPS
    assert all(type(v) is np.float32 for k, v in results.items() if k != "global_step")
    if name in cases.ZERO_INITIALIZED:
        for key, value in recorded.items():
            np.testing.assert_allclose(results[key], value, rtol=1e-4, err_msg=key)


def test_estimator_predictions_match_tf215(run):
    name, _, results, first, export_dir = run
    record = cases.record_estimator(tf, results, first, export_dir)
    assert record["predict"] == RECORDED["estimators"][name]["predict"]


def test_estimator_signatures_match_tf215(run):
    name, _, results, first, export_dir = run
    record = cases.record_estimator(tf, results, first, export_dir)
    assert record["signatures"] == RECORDED["estimators"][name]["signatures"]


def _serialized(name):
    features = cases.case_features(name, 5)
    examples = []
    for i in range(5):
        feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[features["x"][i]]))}
        if "c" in features:
            feature["c"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[features["c"][i]]))
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    return tf.constant([e.SerializeToString() for e in examples])


def test_loaded_predict_signature_serves_the_predictions(run):
    name, est, _, _, export_dir = run
    predictions = next(
        est.predict(lambda: cases.predict_input_fn(tf, name), yield_single_examples=False)
    )
    loaded = tf.saved_model.load(export_dir)
    served = loaded.signatures["predict"](examples=_serialized(name))
    # A MultiHead predicts ("a", "logits") and serves "a/logits".
    by_name = {"/".join(k) if isinstance(k, tuple) else k: v for k, v in predictions.items()}
    assert sorted(served) == sorted(by_name)
    for key, value in by_name.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(served[key].numpy(), value, rtol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(served[key].numpy(), value, err_msg=key)
    default = loaded.signatures["serving_default"](inputs=_serialized(name))
    assert set(default) <= {"classes", "scores", "outputs"}


def test_head_in_a_custom_model_fn_with_optimizer_and_regularization(tmp_path):
    """The 2.15 V2 way: the head applies `optimizer` to `trainable_variables`."""
    features, _ = cases.estimator_data()
    labels = 2.0 * features["x"] + 1.0

    def model_fn(features, labels, mode):
        layer = tf_keras.layers.Dense(1, name="dense")
        logits = layer(tf.reshape(features["x"], [-1, 1]))
        training = mode == estimator.ModeKeys.TRAIN
        return estimator.RegressionHead(name="y").create_estimator_spec(
            features=features,
            mode=mode,
            logits=logits,
            labels=labels,
            optimizer=tf_keras.optimizers.legacy.SGD(0.2) if training else None,
            trainable_variables=layer.trainable_weights,
            regularization_losses=[1e-3 * tf.reduce_sum(tf.square(layer.kernel))],
        )

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": features["x"]}, labels))
        return dataset.repeat().batch(cases.BATCH)

    est = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=1)
    first = est.evaluate(input_fn, steps=4)
    est.train(input_fn, steps=60)
    results = est.evaluate(input_fn, steps=4)
    assert sorted(results) == [
        "average_loss/y",
        "global_step",
        "label/mean/y",
        "loss",
        "prediction/mean/y",
        "regularization_loss/y",
    ]
    assert results["global_step"] == 61
    assert results["average_loss/y"] < 0.1 * first["average_loss/y"]
    np.testing.assert_allclose(
        results["loss"], results["average_loss/y"] + results["regularization_loss/y"], rtol=1e-4
    )


def test_head_arguments_are_checked_as_tf215_did():
    class Incomplete(estimator.Head):
        name = "incomplete"

    with pytest.raises(TypeError):
        Incomplete()
    with pytest.raises(ValueError, match="must have name specified"):
        estimator.MultiHead([estimator.RegressionHead(), estimator.RegressionHead(name="b")])
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        estimator.MultiClassHead(2)
    with pytest.raises(ValueError, match="thresholds"):
        estimator.BinaryClassHead(thresholds=[1.5])
    with pytest.raises(ValueError, match="label_vocabulary must be provided"):
        estimator.MultiLabelHead(3, classes_for_class_based_metrics=["a"])
    with pytest.raises(ValueError, match="loss_fn must contain argument: logits"):
        estimator.RegressionHead(loss_fn=lambda labels: labels)
    head = estimator.RegressionHead()
    logits, labels = tf.zeros([2, 1]), tf.ones([2, 1])
    with pytest.raises(ValueError, match="cannot both be set"):
        head.create_estimator_spec(
            {},
            estimator.ModeKeys.TRAIN,
            logits,
            labels,
            optimizer=tf_keras.optimizers.legacy.SGD(),
            train_op_fn=lambda loss: tf.no_op(),
        )
    with pytest.raises(ValueError, match="cannot both be None"):
        head.create_estimator_spec({}, estimator.ModeKeys.TRAIN, logits, labels)
