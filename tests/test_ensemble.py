"""The model choice's arithmetic (components/trainer/ensemble.py) and the combined export
(components/exporter/serving.py): greedy ensemble selection never worse than the best single
model on the data it chose on, temperature scaling never worse than none, no probability
of exactly 0 or 1, and an exported ensemble serving the weighted average of its members."""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from components.trainer import ensemble


def _overconfident(rows=600, classes=3, seed=0):
    """(probabilities, labels): right 70% of the time, but nearly sure every time."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, rows)
    guess = np.where(rng.uniform(size=rows) < 0.7, labels, rng.integers(0, classes, rows))
    p = np.full((rows, classes), 0.002)
    p[np.arange(rows), guess] = 1 - 0.002 * (classes - 1)
    return p, labels


def test_temperature_scaling_lowers_an_overconfident_model_s_log_loss():
    p, labels = _overconfident()
    t = ensemble.fit_temperature(p, labels)
    assert t > 1.5  # softened
    before = ensemble.loss(p, labels, True)
    after = ensemble.loss(ensemble.calibrated(p, t), labels, True)
    assert after < 0.6 * before
    # on a held-out half too: fitted on one half, scored on the other
    t_half = ensemble.fit_temperature(p[:300], labels[:300])
    assert ensemble.loss(ensemble.calibrated(p[300:], t_half), labels[300:], True) < (
        ensemble.loss(p[300:], labels[300:], True)
    )


def test_a_calibrated_model_is_never_worse_than_uncalibrated_on_its_fitting_data():
    rng = np.random.default_rng(3)
    for _ in range(5):
        labels = rng.integers(0, 2, 200)
        p1 = 1 / (1 + np.exp(-(rng.normal(size=200) + (labels - 0.5))))
        p = np.stack([1 - p1, p1], axis=1)
        t = ensemble.fit_temperature(p, labels)
        assert ensemble.loss(ensemble.calibrated(p, t), labels, True) <= ensemble.loss(
            ensemble.clipped(p), labels, True
        )


def test_clipped_probabilities_are_never_exactly_zero_or_one_in_float32():
    p = ensemble.calibrated(np.array([[1.0, 0.0], [0.0, 1.0], [1e-40, 1.0]]), 0.05)
    assert p.dtype == np.float32
    assert np.all(p > 0) and np.all(p < 1)
    assert p.min() == np.float32(1e-7)


def test_greedy_selection_is_never_worse_than_the_best_single_model_and_mixes_errors():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=500)
    members = {f"m{i}": truth + rng.normal(scale=1.0, size=500) for i in range(3)}  # noise
    members["bad"] = truth + 10 + rng.normal(size=500)
    weights = ensemble.select(members, truth, classifier=False)
    assert abs(sum(weights.values()) - 1) < 1e-9 and "bad" not in weights
    combined = ensemble.loss(ensemble.combine(members, weights), truth, False)
    best = min(ensemble.loss(p, truth, False) for p in members.values())
    assert combined < 0.5 * best  # independent errors average out
    # one model that is better than all the others combined takes all the weight
    alone = ensemble.select({"a": truth, "b": truth + 1}, truth, classifier=False)
    assert alone == {"a": 1.0}


def test_the_trivial_model_and_the_scores():
    labels = np.array([0, 0, 0, 1])
    shares, loss = ensemble.trivial(labels, True, 2)
    assert shares.tolist() == [0.75, 0.25]
    assert loss == pytest.approx(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25)))
    mean, mse = ensemble.trivial(np.array([1.0, 3.0]), False, None)
    assert (mean, mse) == (2.0, 1.0)
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    score = np.round(rng.uniform(size=300) + 0.3 * y, 1)  # with ties
    p = np.stack([1 - score / 2, score / 2], axis=1)
    assert ensemble.scores(p, y, True)["auc"] == pytest.approx(roc_auc_score(y, score))


_SERVE = """
import json, sys
import numpy as np
import tensorflow as tf
paths, examples = json.loads(sys.argv[1])
examples = tf.constant([bytes.fromhex(e) for e in examples])
out = {}
for path in paths:
    model = tf.saved_model.load(path)
    served = {}
    for name in ("serving_default", "predict"):
        signature = model.signatures[name]
        (key,) = signature.structured_input_signature[1]
        served[name] = {k: v.numpy().tolist() if v.dtype != tf.string else
                        v.numpy().astype(str).tolist() for k, v in signature(**{key: examples}).items()}
    out[path] = served
print(json.dumps(out))
"""


@pytest.mark.slow  # trains two small models and loads three SavedModels in a new process
def test_an_exported_ensemble_serves_the_weighted_average_of_its_members(tmp_path):
    import tensorflow as tf

    from components import estimator
    from components.estimator import serving
    from components.exporter.serving import combined_serving_module

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 2)).astype(np.float32)
    y = np.array(["a", "b", "c"])[(x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)]
    columns = [tf.feature_column.numeric_column(n) for n in ("x0", "x1")]

    def input_fn():
        features = {"x0": x[:, :1], "x1": x[:, 1:]}
        return tf.data.Dataset.from_tensor_slices((features, y)).repeat().batch(32)

    members = []
    for name, build in (
        (
            "linear",
            lambda c: estimator.LinearClassifier(
                columns, n_classes=3, config=c, label_vocabulary=["a", "b", "c"]
            ),
        ),
        (
            "dnn",
            lambda c: estimator.DNNClassifier(
                [8], columns, n_classes=3, config=c, label_vocabulary=["a", "b", "c"]
            ),
        ),
    ):
        model = build(estimator.RunConfig(model_dir=str(tmp_path / name), tf_random_seed=1))
        model.train(input_fn, max_steps=40)
        members.append((model, model.latest_checkpoint()))
    spec = {n: tf.io.FixedLenFeature([1], tf.float32) for n in ("x0", "x1")}
    receiver_fn = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    paths = []
    for model, checkpoint in members:
        module, signatures = model.build_serving_module(receiver_fn, checkpoint)
        paths.append(serving.save(module, signatures, str(tmp_path / f"alone-{len(paths)}")))
    weights = [0.7, 0.3]
    module, signatures = combined_serving_module(members, weights, None, ensemble.CLIP, receiver_fn)
    paths.append(serving.save(module, signatures, str(tmp_path / "ensemble")))
    module, signatures = combined_serving_module(members, weights, 2.5, ensemble.CLIP, receiver_fn)
    paths.append(serving.save(module, signatures, str(tmp_path / "calibrated")))
    assert serving.signature_methods(paths[-1]) == serving.signature_methods(paths[0])

    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    n: tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
                    for n, v in zip(("x0", "x1"), row, strict=True)
                }
            )
        )
        .SerializeToString()
        .hex()
        for row in rng.normal(scale=3, size=(50, 2))
    ]
    result = subprocess.run(
        [sys.executable, "-c", _SERVE, json.dumps([paths, examples])],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    first, second, combined, calibrated = (served[p] for p in paths)
    for signature, key in (("serving_default", "scores"), ("predict", "probabilities")):
        average = weights[0] * np.array(first[signature][key]) + weights[1] * np.array(
            second[signature][key]
        )
        expected = np.clip(average, np.float32(1e-7), np.float32(1) - np.float32(1e-7))
        np.testing.assert_allclose(combined[signature][key], expected, atol=1e-6)
        # the temperature in the graph is the one the choice fitted in numpy
        scaled = ensemble.calibrated(average, 2.5)
        np.testing.assert_allclose(calibrated[signature][key], scaled, atol=1e-6)
    assert combined["serving_default"]["classes"] == first["serving_default"]["classes"]
    predicted = np.array(combined["predict"]["probabilities"]).argmax(axis=1)
    assert np.array(combined["predict"]["class_ids"]).reshape(-1).tolist() == predicted.tolist()
    assert np.array(combined["predict"]["classes"]).reshape(-1).tolist() == [
        "abc"[i] for i in predicted
    ]


def test_the_summary_shows_the_spread_the_trivial_model_and_the_temperature():
    from pipeline.runner import RunSummary

    line = {
        "chosen": False,
        "validation_metrics": {"accuracy": 0.8},
        "seconds": 2.0,
        "steps": 300,
        "stop_reason": "stopped",
        "strategy": "default",
    }
    choice = {
        "reason": "the ensemble's validation loss 0.4 beat ...",
        "candidates": [
            # an ensemble has no strategy of its own; its members trained under one
            {**line, "name": "ensemble", "chosen": True, "validation_loss": 0.4, "strategy": ""},
            {**line, "name": "linear", "validation_loss": 0.45, "loss_spread": 0.031},
        ],
        "rows": 500,
        "folds": 5,
        "trivial": {
            "model": "the class shares",
            "validation_loss": 0.69,
            "validation_metrics": {"accuracy": 0.5},
        },
        "temperature": 1.3,
        "uncalibrated_loss": 0.41,
        "served_loss": 0.4,
    }
    summary = RunSummary({}, True, None, None, (), None, model_choice=choice)
    lines = summary._model_lines()
    assert lines[0] == "  model: ensemble (the ensemble's validation loss 0.4 beat ...)"
    assert "strategy" not in lines[1] + lines[2]
    assert "linear: validation loss 0.45 ± 0.031 over the folds (accuracy 0.8)" in lines[2]
    assert lines[3].endswith(
        "trivial (the class shares): validation loss 0.69 (accuracy 0.5), on the same 500 rows"
    )
    assert lines[4] == (
        "  probabilities: temperature 1.3 fitted on those rows (log loss 0.41 to 0.4), "
        "clipped to [1e-7, 1 - 1e-7]"
    )
    # under cross-validation a temperature below 1 is raised to 1 (the models are refits)
    choice.update(temperature=1.0, folds_temperature=0.86, uncalibrated_loss=0.4)
    summary = RunSummary({}, True, None, None, (), None, model_choice=choice)
    assert summary._model_lines()[4] == (
        "  probabilities: temperature 1 (the folds' 0.86; at least 1 for models refit) "
        "(log loss 0.4 to 0.4), clipped to [1e-7, 1 - 1e-7]"
    )


def test_a_temperature_for_refit_models_only_softens():
    """Fitted with `lowest=1` (the models served are refits, not the ones that predicted):
    an underconfident model's probabilities are left as they are rather than sharpened; an
    overconfident model's are softened as without the floor."""
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 400)
    logits = 4 * (labels - 0.5) + rng.normal(size=400)
    p1 = 1 / (1 + np.exp(-logits / 4))  # right, but four times too timid
    timid = np.stack([1 - p1, p1], axis=1)
    assert ensemble.fit_temperature(timid, labels) < 0.5
    assert ensemble.fit_temperature(timid, labels, lowest=1.0) == 1.0
    sure, sure_labels = _overconfident()
    free = ensemble.fit_temperature(sure, sure_labels)
    assert free > 1.5 and ensemble.fit_temperature(sure, sure_labels, lowest=1.0) == free
