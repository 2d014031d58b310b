"""Many classes sharing one tree, each with its own Hessian (`multi_class_hessian=
"diagonal"`, as the zero-code candidate grows them): `max_delta_step` keeps the bias
centering and the leaves finite where a class's p(1 - p) vanishes (issue 46, nycflights)."""

import numpy as np
import tensorflow as tf

from components import estimator

CLASSES, VALUES, ROWS = 12, 120, 2000
TASK_CLASSES = [("multiclass", ["a", "b", "c"]), ("binary", ["0", "1"]), ("regression", None)]


def _near_deterministic():
    """A category whose value gives the class (as a plane's tail number gives its carrier),
    classes of halving frequency (the rarest in 7 rows of 2,000), and a noise column."""
    rng = np.random.default_rng(0)
    frequency = 0.5 ** np.arange(CLASSES)
    owner = rng.choice(CLASSES, size=VALUES, p=frequency / frequency.sum())
    owner[:CLASSES] = np.arange(CLASSES)
    value = rng.integers(0, VALUES, size=ROWS)
    features = {"value": value.astype(np.int64), "noise": rng.normal(size=ROWS).astype(np.float32)}
    return features, owner[value]


def _trained(model_dir, **kwargs):
    fc = tf.feature_column
    columns = [
        fc.indicator_column(fc.categorical_column_with_identity("value", VALUES)),
        fc.numeric_column("noise"),
    ]
    model = estimator.BoostedTreesClassifier(
        columns,
        n_batches_per_layer=1,
        model_dir=str(model_dir),
        n_classes=CLASSES,
        n_trees=5,
        max_depth=4,
        learning_rate=0.3,
        center_bias=True,
        train_in_memory=True,
        multi_class_hessian="diagonal",
        min_samples_leaf=20,
        max_leaf_nodes=8,
        **kwargs,
    )
    features, labels = _near_deterministic()
    model.train(lambda: tf.data.Dataset.from_tensors((features, labels)).repeat(), max_steps=10**9)
    data = lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(ROWS)  # noqa: E731
    return model, model.evaluate(data)["average_loss"], labels


def test_a_bounded_step_keeps_many_classes_finite_and_learning(tmp_path):
    """Unbounded, the diagonal Newton steps of the bias overshoot (every logit at once) to
    probabilities of exact 0s and 1s, whose Hessians are 0: the log loss is in the hundreds
    and no tree splits. Bounded, the bias is the classes' log odds and the trees learn."""
    _, unbounded, _ = _trained(tmp_path / "unbounded")
    model, bounded, labels = _trained(tmp_path / "bounded", max_delta_step=5.0)
    prior = np.bincount(labels) / len(labels)
    prior_loss = -np.mean(np.log(prior[labels]))
    assert unbounded > 100 * prior_loss
    assert np.isfinite(bounded) and bounded < 0.9 * prior_loss
    bias = model.get_variable_value("boosted_trees/bias")
    np.testing.assert_allclose(bias - bias.mean(), np.log(prior) - np.log(prior).mean(), atol=0.05)
    values = model.get_variable_value("boosted_trees/node_value")
    # A node's value adds its own bounded step to its parent's: at most depth 4 of them.
    assert 0 < np.abs(values).max() <= 4 * 0.3 * 5.0


def test_the_zero_code_candidate_bounds_the_step_of_multiclass_trees_only(tmp_path):
    """A regression's leaves are mean residuals in the label's units and a binary label's
    one logit has no shared tree: only a multiclass candidate takes the bound."""
    from components.auto.model import MULTICLASS_MAX_DELTA_STEP, candidate_estimator

    columns = [tf.feature_column.numeric_column("x")]
    config = estimator.RunConfig(model_dir=str(tmp_path))
    bounds = {
        task: candidate_estimator(
            "boosted_trees", task, [], columns, classes, config, {}, None, 100
        ).tree_params.max_delta_step
        for task, classes in TASK_CLASSES
    }
    assert bounds == {"multiclass": MULTICLASS_MAX_DELTA_STEP, "binary": 0.0, "regression": 0.0}
    assert MULTICLASS_MAX_DELTA_STEP > 0
