"""BoostedTreesClassifier / Regressor / Estimator: training, evaluation, prediction,
export, resuming, feature importances, explanations and argument checks."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from components import estimator

N = 600


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=N).astype(np.float32)
    x2 = rng.normal(size=N).astype(np.float32)
    cat = rng.integers(0, 6, size=N).astype(np.int64)
    return {"x1": x1, "x2": x2, "cat": cat}, rng


def _columns():
    fc = tf.feature_column
    return [
        fc.numeric_column("x1"),
        fc.bucketized_column(fc.numeric_column("x2"), [-1.0, 0.0, 1.0]),
        fc.indicator_column(fc.categorical_column_with_identity("cat", 6)),
    ]


def _in_memory(features, labels):
    return lambda: tf.data.Dataset.from_tensors((features, labels)).repeat()


def _batches(features, labels=None, size=200):
    data = (features, labels) if labels is not None else features
    return lambda: tf.data.Dataset.from_tensor_slices(data).batch(size)


def _node_arrays(model):
    return {
        name: model.get_variable_value(f"boosted_trees/{name}")
        for name in ("node_feature", "node_threshold", "node_value", "bias")
    }


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    features, _rng = _data()
    labels = (features["x1"] + 1.5 * (features["cat"] == 2) > 0.3).astype(np.int64)
    model = estimator.BoostedTreesClassifier(
        _columns(),
        n_batches_per_layer=1,
        model_dir=str(tmp_path_factory.mktemp("binary")),
        n_trees=6,
        max_depth=3,
        center_bias=True,
        train_in_memory=True,
    )
    model.train(_in_memory(features, labels), max_steps=10**9)
    return model, features, labels


def test_binary_trains_until_its_trees_are_grown_and_evaluates(binary):
    model, features, labels = binary
    # 1 quantile step, a few bias steps, then 6 trees of 3 layers.
    step = int(model.get_variable_value("global_step"))
    assert int(model.get_variable_value("boosted_trees/tree")) == 6
    assert bool(model.get_variable_value("boosted_trees/finished"))
    model.train(_in_memory(features, labels), max_steps=10**9)  # nothing left to do
    assert int(model.get_variable_value("global_step")) == step
    metrics = model.evaluate(_batches(features, labels))
    assert metrics["auc"] > 0.95 and metrics["global_step"] == step
    probabilities = np.array([p["probabilities"][1] for p in model.predict(_batches(features))])
    assert ((probabilities > 0.5) == labels).mean() > 0.9


def test_importances_rank_the_informative_feature_first_and_normalize(binary):
    model, _, _ = binary
    raw = model.experimental_feature_importances()
    normalized = model.experimental_feature_importances(normalize=True)
    assert next(iter(normalized)) == "x1"
    assert list(raw) == list(normalized)
    assert sum(normalized.values()) == pytest.approx(1.0)
    assert normalized["x1"] > normalized["x2_bucketized"]


def test_explanations_add_up_to_the_probability(binary):
    model, features, _ = binary
    explained = list(model.experimental_predict_with_explanations(_batches(features)))
    assert len(explained) == N
    for p in explained[:50]:
        assert set(p["dfc"]) == {"x1", "x2_bucketized", "cat"}
        assert p["bias"] + sum(p["dfc"].values()) == pytest.approx(p["probabilities"][1], abs=1e-5)
    magnitudes = [abs(v) for v in explained[0]["dfc"].values()]
    assert magnitudes == sorted(magnitudes, reverse=True)


def test_resuming_mid_training_grows_the_same_ensemble(binary, tmp_path):
    _, features, labels = binary
    args = {"n_batches_per_layer": 1, "n_trees": 6, "max_depth": 3, "center_bias": True}
    args["train_in_memory"] = True
    resumed = estimator.BoostedTreesClassifier(_columns(), model_dir=str(tmp_path), **args)
    resumed.train(_in_memory(features, labels), steps=7)  # stops inside the third tree
    assert int(resumed.get_variable_value("boosted_trees/layer")) != 0
    again = estimator.BoostedTreesClassifier(_columns(), model_dir=str(tmp_path), **args)
    again.train(_in_memory(features, labels), max_steps=10**9)
    uninterrupted = _node_arrays(binary[0])
    for name, value in _node_arrays(again).items():
        np.testing.assert_array_equal(value, uninterrupted[name], err_msg=name)


@pytest.fixture(scope="module")
def multiclass(tmp_path_factory):
    features, _rng = _data(1)
    classes = np.array(["low", "mid", "high"])
    ids = np.digitize(features["x1"] + 0.8 * (features["cat"] == 3), [-0.5, 0.5])
    labels = classes[ids]
    model = estimator.BoostedTreesClassifier(
        _columns(),
        n_batches_per_layer=3,  # streamed: statistics summed over three batches a layer
        model_dir=str(tmp_path_factory.mktemp("multiclass")),
        n_classes=3,
        label_vocabulary=list(classes),
        n_trees=4,
        max_depth=3,
    )
    model.train(
        lambda: tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(200),
        max_steps=10**9,
    )
    return model, features, labels


def test_multiclass_with_a_vocabulary(multiclass):
    model, features, labels = multiclass
    assert int(model.get_variable_value("boosted_trees/tree")) == 4
    # 3 quantile batches, then 4 trees * 3 layers * 3 batches.
    assert int(model.get_variable_value("global_step")) == 3 + 4 * 3 * 3
    assert model.evaluate(_batches(features, labels))["accuracy"] > 0.85
    predicted = [p["classes"][0].decode() for p in model.predict(_batches(features))]
    assert np.mean(np.array(predicted) == labels) > 0.85
    assert next(iter(model.experimental_feature_importances(normalize=True))) == "x1"
    with pytest.raises(ValueError, match="center_bias must be enabled"):
        next(iter(model.experimental_predict_with_explanations(_batches(features))))


@pytest.fixture(scope="module")
def xor_classes(tmp_path_factory):
    """Four classes no linear model separates (x1 > 0 XOR x2 > 0, and cat 3 or not), grown
    as the zero-code candidate grows them: a Hessian per class, leaf-capped."""
    features, _rng = _data(4)
    xor = (features["x1"] > 0) ^ (features["x2"] > 0)
    labels = (xor + 2 * (features["cat"] == 3)).astype(np.int64)
    growth = {"n_trees": 8, "max_depth": 4, "learning_rate": 0.3, "center_bias": True}
    hgb_like = {"multi_class_hessian": "diagonal", "max_leaf_nodes": 5, "min_samples_leaf": 10}
    model_dir = str(tmp_path_factory.mktemp("xor"))
    model = estimator.BoostedTreesClassifier(
        _columns(), 1, model_dir, n_classes=4, train_in_memory=True, **growth, **hgb_like
    )
    model.train(_in_memory(features, labels), max_steps=10**9)
    return model, features, labels


def test_multiclass_with_a_hessian_per_class_beats_a_linear_model(xor_classes):
    from sklearn.linear_model import LogisticRegression

    model, features, labels = xor_classes
    assert int(model.get_variable_value("boosted_trees/tree")) == 8
    # Centered: the bias starts from the classes' log odds (up to a constant).
    bias = model.get_variable_value("boosted_trees/bias")
    log_odds = np.log(np.bincount(labels) / len(labels))
    np.testing.assert_allclose(bias - bias.mean(), log_odds - log_odds.mean(), atol=0.05)
    # Leaf-capped: no tree has more than 5 leaves, though depth 4 allows 16.
    splits = (model.get_variable_value("boosted_trees/node_feature") >= 0).sum(axis=1)
    assert splits.max() <= 4
    accuracy = model.evaluate(_batches(features, labels))["accuracy"]
    x = np.stack([features["x1"], features["x2"], np.eye(6)[features["cat"]].T[3]], axis=1)
    linear = LogisticRegression(max_iter=1000).fit(x, labels).score(x, labels)
    assert accuracy > 0.9 and linear < 0.65


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    features, rng = _data(2)
    labels = (2.0 * features["x1"] + (features["cat"] == 1) + 0.1 * rng.normal(size=N)).astype(
        np.float32
    )
    model = estimator.BoostedTreesRegressor(
        _columns(),
        n_batches_per_layer=1,
        model_dir=str(tmp_path_factory.mktemp("regression")),
        n_trees=10,
        max_depth=3,
        learning_rate=0.3,
        l2_regularization=0.01,
        tree_complexity=0.001,
        pruning_mode="post",
        center_bias=True,
        train_in_memory=True,
    )
    model.train(_in_memory(features, labels), max_steps=10**9)
    return model, features, labels


def test_regression_fits_and_explains(regression):
    model, features, labels = regression
    assert model.evaluate(_batches(features, labels))["average_loss"] < 0.2 * labels.var()
    p = next(iter(model.experimental_predict_with_explanations(_batches(features))))
    assert p["bias"] == pytest.approx(labels.mean(), abs=0.05)
    assert p["bias"] + sum(p["dfc"].values()) == pytest.approx(p["predictions"][0], abs=1e-4)


def _saved_ops(export_dir):
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    graph = saved.meta_graphs[0].graph_def
    return {n.op for n in graph.node} | {
        n.op for function in graph.library.function for n in function.node_def
    }


@pytest.mark.slow  # a TensorFlow subprocess
def test_exports_serve_in_a_fresh_process(binary, multiclass, regression, xor_classes, tmp_path):
    spec = {
        "x1": tf.io.FixedLenFeature([1], tf.float32),
        "x2": tf.io.FixedLenFeature([1], tf.float32),
        "cat": tf.io.FixedLenFeature([1], tf.int64),
    }
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    expected, exports = {}, {}
    features = binary[1]
    rows = [{k: v[i].item() for k, v in features.items()} for i in range(5)]
    models = {"binary": binary, "multi": multiclass, "reg": regression, "xor": xor_classes}
    for name, (model, _, _) in models.items():
        exports[name] = model.export_saved_model(str(tmp_path / name), receiver).decode()
        assert not {op for op in _saved_ops(exports[name]) if op.startswith("BoostedTrees")}
        first = list(model.predict(_batches({k: v[:5] for k, v in features.items()})))
        key = "predictions" if name == "reg" else "probabilities"
        expected[name] = [p[key].tolist() for p in first]
    script = textwrap.dedent(
        """
        import json, sys
        import tensorflow as tf
        exports, rows = json.loads(sys.argv[1]), json.loads(sys.argv[2])
        examples = [tf.train.Example(features=tf.train.Features(feature={
            "x1": tf.train.Feature(float_list=tf.train.FloatList(value=[r["x1"]])),
            "x2": tf.train.Feature(float_list=tf.train.FloatList(value=[r["x2"]])),
            "cat": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["cat"]])),
        })).SerializeToString() for r in rows]
        out = {}
        for name, path in exports.items():
            model = tf.saved_model.load(path)
            signature = model.signatures["predict"]
            result = signature(examples=tf.constant(examples))
            key = "predictions" if name == "reg" else "probabilities"
            out[name] = result[key].numpy().tolist()
        print(json.dumps(out))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, json.dumps(exports), json.dumps(rows)],
        capture_output=True,
        text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    served = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, values in expected.items():
        np.testing.assert_allclose(served[name], values, atol=1e-5, err_msg=name)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_batches_per_layer": 0}, "n_batches_per_layer"),
        ({"pruning_mode": "sometimes"}, "pruning_mode"),
        ({"pruning_mode": "pre"}, "tree_complexity must be positive"),
        ({"tree_complexity": 0.1}, "no effect unless pruning"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"l2_regularization": -1.0}, "l2_regularization"),
        ({"train_in_memory": True, "n_batches_per_layer": 2}, "train_in_memory"),
        ({"n_classes": 3, "center_bias": True}, "center_bias"),
        ({"multi_class_hessian": "half"}, "multi_class_hessian"),
        ({"min_samples_leaf": -1}, "min_samples_leaf"),
        ({"max_leaf_nodes": 1}, "max_leaf_nodes"),
        ({"n_classes": 3, "l1_regularization": 0.1}, "multi_class_hessian='diagonal'"),
        ({"n_classes": 3, "max_delta_step": 1.0}, "max_delta_step is not supported"),
        ({"max_delta_step": -1.0}, "max_delta_step >= 0"),
        ({"max_depth": 40}, "max_depth"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    args = {"n_batches_per_layer": 1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        estimator.BoostedTreesClassifier(_columns(), **args)


def test_a_mirrored_strategy_is_refused_a_one_device_one_trains(tmp_path):
    mirrored = estimator.RunConfig(train_distribute=tf.distribute.MirroredStrategy(["/cpu:0"]))
    with pytest.raises(ValueError, match="grow on one device: train_distribute=MirroredStrategy"):
        estimator.BoostedTreesClassifier(_columns(), n_batches_per_layer=2, config=mirrored)
    features, _rng = _data()
    labels = (features["x1"] > 0).astype(np.int64)
    one = estimator.RunConfig(
        model_dir=str(tmp_path), train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0")
    )
    model = estimator.BoostedTreesClassifier(
        _columns(), n_batches_per_layer=3, n_trees=2, max_depth=2, config=one
    )
    model.train(lambda: _batches(features, labels)().repeat(), max_steps=100)
    assert bool(model.get_variable_value("boosted_trees/finished"))


def test_unsupported_columns_are_refused():
    fc = tf.feature_column
    embedding = fc.embedding_column(fc.categorical_column_with_identity("cat", 6), 2)
    with pytest.raises(ValueError, match="'cat_embedding' is a EmbeddingColumn"):
        estimator.BoostedTreesRegressor([embedding], n_batches_per_layer=1)
    crossed = fc.indicator_column(fc.crossed_column(["a", "b"], 10))
    with pytest.raises(ValueError, match="CrossedColumn"):
        estimator.BoostedTreesRegressor([crossed], n_batches_per_layer=1)


def test_estimator_takes_a_head_and_a_vocabulary_column(tmp_path):
    features, _ = _data(3)
    words = np.array(["a", "b", "c"])[features["cat"] % 3]
    labels = (words == "b").astype(np.float32) * 3.0 + features["x1"]
    fc = tf.feature_column
    column = fc.indicator_column(fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"]))
    model = estimator.BoostedTreesEstimator(
        [column, fc.numeric_column("x1")],
        n_batches_per_layer=1,
        head=estimator.RegressionHead(),
        model_dir=str(tmp_path),
        n_trees=5,
        max_depth=2,
        learning_rate=0.5,
        train_in_memory=True,
    )
    data = {"w": words, "x1": features["x1"]}
    model.train(_in_memory(data, labels), max_steps=10**9)
    assert model.evaluate(_batches(data, labels))["average_loss"] < 0.3
    assert set(model.experimental_feature_importances()) == {"w", "x1"}


@pytest.mark.parametrize("dim, min_count", [(1, 0), (3, 15)])
def test_split_search_matches_a_plain_search_over_mixed_features(dim, min_count):
    """The histogram and split search on numeric, bucketized and categorical features of
    several sizes (the categorical ones handled together) agree with a plain loop over
    every node, feature and bucket: one logit, or three with a Hessian each (the gain the
    sum of theirs) and at least `min_count` examples on each side."""
    from components.estimator.canned import tree_ensemble as te
    from components.estimator.canned.tree_growing import TreeParams
    from components.estimator.canned.tree_histogram import LayerHistogram

    fc = tf.feature_column
    columns = [
        fc.numeric_column("n", shape=(2,)),
        fc.bucketized_column(fc.numeric_column("b"), [0.0, 1.0]),
        *(fc.categorical_column_with_identity(f"c{size}", size) for size in (2, 5, 9)),
    ]
    layout = te.FeatureLayout(columns, 4)
    rng = np.random.default_rng(3)
    n, nodes = 400, 4
    ids = np.stack([rng.integers(0, b, n) for b in layout.num_buckets], 1).astype(np.int32)
    node = rng.integers(-1, nodes, n).astype(np.int32)
    g, h = rng.normal(size=(n, dim)), rng.uniform(0.1, 1.0, (n, dim))
    counted = [np.ones((n, 1))] if min_count else []
    stats = np.concatenate([g, h, *counted], 1).astype(np.float32)
    params = TreeParams(1, 3, 0.1, 0.0, 0.5, 0.0, 0.0, False, "none", 0.25, 1, True)
    params = params._replace(multi_class_hessian="diagonal", min_samples_leaf=min_count)
    columns = te.Columns.of(tf.constant(ids), layout)
    hist = LayerHistogram(layout)(columns, tf.constant(node), stats, nodes)
    gain, feature, threshold, left, right, ok = (
        t.numpy() for t in te.best_splits(hist, nodes, layout, params, dim)
    )

    def score(gs, hs):
        return np.sum(gs * gs / (hs + 0.5))

    for k in range(nodes):
        rows = node == k
        total_g, total_h = g[rows].sum(0), h[rows].sum(0)
        best = (-np.inf, None, None)
        for f, buckets in enumerate(layout.num_buckets):
            for t in range(buckets):
                goes_left = ids[rows, f] == t if layout.is_equality[f] else ids[rows, f] <= t
                if min(goes_left.sum(), (~goes_left).sum()) < min_count:
                    continue
                lg, lh = g[rows][goes_left].sum(0), h[rows][goes_left].sum(0)
                s = score(lg, lh) + score(total_g - lg, total_h - lh)
                if s > best[0] + 1e-9:
                    best = (s, f, t, lg, lh)
        s, f, t, lg, lh = best
        assert ok[k] and (feature[k], threshold[k]) == (f, t), k
        assert gain[k] == pytest.approx(s - score(total_g, total_h), rel=1e-4, abs=1e-5)
        np.testing.assert_allclose(left[k], -lg / (lh + 0.5), rtol=1e-4)
        np.testing.assert_allclose(right[k], -(total_g - lg) / (total_h - lh + 0.5), rtol=1e-4)


def test_bucket_ids_of_every_kind_of_column_in_feature_order():
    """Dense identity columns (read side by side), a column of sparse ids, a vocabulary
    column, a bucketized and a numeric one: each feature's ids where the layout puts it,
    a missing or out-of-range id in the extra bucket, or the column's default_value."""
    from components.estimator.canned import tree_ensemble as te

    fc = tf.feature_column
    columns = [
        fc.numeric_column("n"),
        fc.bucketized_column(fc.numeric_column("b"), [0.0, 1.0]),
        fc.categorical_column_with_identity("plain", 4),
        fc.indicator_column(fc.categorical_column_with_identity("wide", 3)),
        fc.categorical_column_with_identity("fallback", 5, default_value=2),
        fc.categorical_column_with_identity("sparse", 4),
        fc.categorical_column_with_vocabulary_list("word", ["a", "b"], default_value=-1),
    ]
    layout = te.FeatureLayout(columns, 3)
    features = {
        "n": tf.constant([[0.5], [2.0], [-1.0], [9.0]]),
        "b": tf.constant([-0.5, 0.5, 1.5, 0.0]),
        "plain": tf.constant([0, 3, 4, -1], tf.int64),
        "wide": tf.constant([[2], [7], [0], [-3]], tf.int64),
        "fallback": tf.constant([4, 5, -1, 9], tf.int64),
        "sparse": tf.sparse.SparseTensor([[0, 0], [2, 0]], tf.constant([3, 1], tf.int64), [4, 1]),
        "word": tf.constant([[b"b"], [b"zz"], [b"a"], [b""]]),
    }
    boundaries = tf.constant([[0.0, 1.0]])
    ids = layout.bucket_ids(features, boundaries).numpy()
    expected = {
        "n": [1, 2, 0, 2],
        "b_bucketized": [0, 1, 2, 1],
        "plain": [0, 3, 4, 4],
        "wide": [2, 3, 0, 3],
        "fallback": [4, 2, 5, 2],
        "sparse": [3, 4, 1, 4],
        "word": [1, 2, 0, 2],
    }
    assert sorted(layout.names) == sorted(expected)
    for f, name in enumerate(layout.names):
        assert ids[:, f].tolist() == expected[name], name


@pytest.mark.parametrize("k, quantiles", [(2, 5), (6, 5), (2, 300)])
def test_layer_histogram_compiled_loop_agrees_with_tensorflow_bincounts(k, quantiles):
    """The compiled loop (CPUs) and the bincounts (where a GPU is visible) give the same
    histogram, examples of node -1 left out, features of several sizes, bucket ids in bytes
    or (past 256 buckets) in int32s; a histogram already returned keeps its values through
    later layers (tf.numpy_function may share an array's memory with the tensor it returns:
    the loop must not write into one it returned)."""
    from components.estimator.canned import tree_ensemble as te
    from components.estimator.canned.tree_histogram import LayerHistogram

    fc = tf.feature_column
    columns = [
        fc.numeric_column("n", shape=(3,)),
        *(fc.categorical_column_with_identity(f"c{size}", size) for size in (2, 7)),
    ]
    layout = te.FeatureLayout(columns, quantiles)
    rng = np.random.default_rng(5)
    n = 300
    ids = np.stack([rng.integers(0, b, n) for b in layout.num_buckets], 1).astype(np.int32)
    bucket_ids = te.Columns.of(tf.constant(ids), layout)
    assert bucket_ids.values.dtype == (tf.uint8 if quantiles < 256 else tf.int32)
    compiled, bincounts = LayerHistogram(layout, compiled=True), LayerHistogram(layout, False)
    earlier = []
    for nodes in (4, 1, 8):
        node = tf.constant(rng.integers(-1, nodes, n).astype(np.int32))
        stats = tf.constant(rng.normal(size=(n, k)).astype(np.float32))
        hist = tf.function(compiled)(bucket_ids, node, stats, nodes)
        expected = bincounts(bucket_ids, node, stats, nodes).numpy()
        assert hist.shape == (nodes * layout.total_buckets, k)
        np.testing.assert_allclose(hist.numpy(), expected, rtol=1e-5, atol=1e-5)
        earlier.append((hist, expected))
    for hist, expected in earlier:
        np.testing.assert_allclose(hist.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_layer_histogram_refuses_a_bucket_outside_its_feature():
    """The compiled loop checks what it indexes (numba does not): an error, not a write
    outside the histogram."""
    from components.estimator.canned import tree_ensemble as te
    from components.estimator.canned.tree_histogram import LayerHistogram

    layout = te.FeatureLayout([tf.feature_column.numeric_column("x", shape=(2,))], 4)
    ids = tf.constant([[0, 1], [3, 4]], tf.int32)  # feature 1's bucket 4 of 4
    histogram = tf.function(LayerHistogram(layout, compiled=True))  # as in training
    with pytest.raises(tf.errors.OpError, match="outside its feature"):
        histogram(te.Columns.of(ids, layout), tf.constant([0, 0]), tf.ones([2, 2]), 1)


@pytest.mark.parametrize(
    "l1, l2, min_count, min_weight, complexity, hessians, max_step",
    [
        (0.0, 0.0, 0, 0.0, 0.0, "uniform", 0.0),
        (0.3, 0.5, 15, 2.0, 0.1, "uniform", 0.0),
        (0.0, 1.0, 3, 0.0, 0.0, "zero", 0.0),
        (0.0, 0.0, 3, 0.0, 0.0, "uniform", 1.5),
    ],
)
@pytest.mark.parametrize("kinds", ["mixed", "categorical"])
@pytest.mark.parametrize("dim", [1, 3])
def test_compiled_diagonal_split_search_is_tensorflows_bit_for_bit(
    l1, l2, min_count, min_weight, complexity, hessians, max_step, kinds, dim
):
    """The compiled split search (one logit, or three with a Hessian each, on CPUs) returns
    what the TensorFlow one returns, to the bit: the same gains, splits, leaf weights and
    refusals, under l1, l2, a minimum per leaf, min_node_weight, tree_complexity and
    max_delta_step, with ties (empty buckets, refused sides, all-zero Hessians), so training
    grows the same trees either way."""
    from components.estimator.canned import tree_ensemble as te
    from components.estimator.canned.tree_growing import TreeParams
    from components.estimator.canned.tree_histogram import DiagonalSplitSearch, LayerHistogram

    fc = tf.feature_column
    categorical = [fc.categorical_column_with_identity(f"c{size}", size) for size in (3, 8)]
    numeric = [
        fc.numeric_column("n", shape=(2,)),
        fc.bucketized_column(fc.numeric_column("b"), [0.0]),
    ]
    layout = te.FeatureLayout(categorical + (numeric if kinds == "mixed" else []), 6)
    rng = np.random.default_rng(11)
    examples, nodes = 250, 8
    bucket_ids = np.stack([rng.integers(0, size, examples) for size in layout.num_buckets])
    gradients = rng.normal(size=(examples, dim))
    shape = (examples, dim)
    hess = rng.uniform(0.0, 1.0, shape) if hessians == "uniform" else np.zeros(shape)
    stats = np.concatenate([gradients, hess] + [np.ones((examples, 1))] * bool(min_count), 1)
    params = TreeParams(1, 3, 0.1, l1, l2, complexity, min_weight, False, "pre", 0.25, 1, True)
    params = params._replace(
        min_samples_leaf=min_count, multi_class_hessian="diagonal", max_delta_step=max_step
    )
    hist = LayerHistogram(layout)(
        te.Columns(tf.constant(bucket_ids, layout.bucket_dtype)),
        tf.constant(rng.integers(-1, nodes, examples).astype(np.int32)),
        tf.constant(stats.astype(np.float32)),
        nodes,
    )
    expected = te.best_splits(hist, nodes, layout, params, dim)
    got = DiagonalSplitSearch(layout, params, dim)(hist, tf.constant(nodes))
    for name, want, have in zip(
        ["gain", "feature", "threshold", "left", "right", "ok"], expected, got, strict=True
    ):
        assert have.dtype == want.dtype and have.shape == want.shape, name
        np.testing.assert_array_equal(have.numpy(), want.numpy(), err_msg=name)


@pytest.mark.parametrize(
    "settings",
    [
        {"center_bias": True, "l2_regularization": 0.5},
        {"pruning_mode": "pre", "tree_complexity": 0.004, "l1_regularization": 0.01},
        {"pruning_mode": "post", "tree_complexity": 0.005, "min_node_weight": 0.02},
        {"max_leaf_nodes": 5, "min_samples_leaf": 30, "max_depth": 4},
        {"train_in_memory": False, "n_trees": 3},
        {"n_classes": 3, "multi_class_hessian": "diagonal", "center_bias": True},
    ],
    ids=["center_bias", "pre_pruned", "post_pruned", "leaf_capped", "streamed", "3_classes"],
)
def test_a_layer_grown_in_one_op_grows_the_same_trees(settings, tmp_path, monkeypatch):
    """The one-op layer (`tree_layer.LayerStep`) writes what TensorFlow's ops around the
    compiled loops write, to the bit: splits, gains, leaf values, bias, counters and steps,
    under pruning, a leaf cap, a minimum per leaf, l1, l2, bias centering and three classes
    with a Hessian each."""
    from components.estimator.canned import tree_growing

    features, rng = _data(4)
    noisy = features["x1"] + 1.2 * (features["cat"] == 1) + rng.normal(scale=0.7, size=N)
    labels = np.digitize(noisy, [0.2] if "n_classes" not in settings else [-0.3, 0.6])
    args = {"n_batches_per_layer": 1, "n_trees": 5, "max_depth": 3, "train_in_memory": True}
    args.update(settings)
    if args["train_in_memory"]:
        input_fn = _in_memory(features, labels)
    else:
        input_fn = lambda: tf.data.Dataset.from_tensors((features, labels)).repeat()  # noqa: E731
    grown = {}
    for one_op in (True, False):
        monkeypatch.setattr(tree_growing, "LAYER_IN_ONE_OP", one_op)
        model_dir = tmp_path / str(one_op)
        model = estimator.BoostedTreesClassifier(_columns(), model_dir=str(model_dir), **args)
        model.train(input_fn, max_steps=10**9)
        assert ('/grow_layer"' in (model_dir / "graph.pbtxt").read_text()) == one_op
        grown[one_op] = {
            name: model.get_variable_value(name) for name in model.get_variable_names()
        }
    assert sorted(grown[True]) == sorted(grown[False])
    for name, value in grown[True].items():
        np.testing.assert_array_equal(value, grown[False][name], err_msg=name)
    assert np.any(grown[True]["boosted_trees/node_feature"] >= 0)


@pytest.mark.parametrize("batches", [1, 2], ids=["in_memory", "two_batches_a_layer"])
def test_the_once_a_call_parts_run_eagerly_grow_the_traced_ones_trees(
    batches, tmp_path, monkeypatch
):
    """The quantile sketch and the inputs' cache's bucket ids, run by TensorFlow's kernels one
    at a time in one op of the step (`tree_growing._eagerly`), grow what the same ops traced
    into the step grow: every variable to the bit, with weighted examples, in memory and over
    two batches a layer."""
    from components.estimator.canned import tree_growing

    features, rng = _data(7)
    features["w"] = rng.uniform(0.2, 3.0, size=N).astype(np.float32)
    labels = (features["x1"] + (features["cat"] == 3) + rng.normal(size=N) > 0.4).astype(int)
    if batches == 1:
        args, input_fn = {"train_in_memory": True}, _in_memory(features, labels)
    else:
        args = {}
        input_fn = lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(300)  # noqa: E731
    grown = {}
    for eager in (True, False):
        if not eager:
            monkeypatch.setattr(tree_growing, "_eagerly", lambda fn, inputs, *_: fn(*inputs))
        model_dir = tmp_path / str(eager)
        model = estimator.BoostedTreesClassifier(
            _columns(),
            n_batches_per_layer=batches,
            model_dir=str(model_dir),
            weight_column="w",
            n_trees=4,
            max_depth=3,
            center_bias=True,
            **args,
        )
        model.train(lambda: input_fn().repeat(), max_steps=10**9)
        assert ("EagerPyFunc" in (model_dir / "graph.pbtxt").read_text()) == eager
        grown[eager] = {name: model.get_variable_value(name) for name in model.get_variable_names()}
    assert sorted(grown[True]) == sorted(grown[False])
    for name, value in grown[True].items():
        np.testing.assert_array_equal(value, grown[False][name], err_msg=name)
    assert np.any(grown[True]["boosted_trees/node_feature"] >= 0)


def test_post_pruning_and_the_leaf_cap_in_numpy_are_tensorflows():
    """`tree_layer`'s numpy post-pruning and leaf cap give `tree_ensemble.post_prune`'s and
    `Grower._within_leaf_cap`'s results on random trees, gains tied and negative."""
    from components.estimator.canned import tree_ensemble as te
    from components.estimator.canned import tree_layer

    rng = np.random.default_rng(3)
    depth = 4
    for _ in range(20):
        feature = rng.integers(-1, 3, (1 << (depth + 1)) - 1).astype(np.int32)
        gain = rng.choice([-1.0, -0.5, 0.0, 0.5], feature.size).astype(np.float32)
        want = te.post_prune(tf.constant(feature), tf.constant(gain), depth)
        got = tree_layer.post_pruned(feature, gain, depth)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w.numpy())
        split = rng.random(8) < 0.7
        node_gain = rng.choice([0.1, 0.2, 0.3], 8).astype(np.float32)
        order = tf.argsort(tf.where(split, node_gain, -np.inf), direction="DESCENDING", stable=True)
        expected = split & (tf.math.invert_permutation(order).numpy() < 6 - 3)
        np.testing.assert_array_equal(tree_layer.within_leaf_cap(split, node_gain, 3, 6), expected)


def test_plain_numeric_columns_read_together_give_the_columns_own_values():
    """Numeric columns over rank-1 features of one dtype are read in one stack
    (`tree_ensemble._plain_numbers`): the values each column's own transformation gives
    (read so for [batch, 1] features, a normalizer or mixed dtypes)."""
    from components.estimator.canned import tree_ensemble as te

    fc = tf.feature_column
    rng = np.random.default_rng(5)
    raw = {name: rng.normal(size=40) * 1e3 for name in ("b", "a", "c")}  # float64
    columns = [fc.numeric_column(name) for name in raw]
    layout = te.FeatureLayout(columns, 10)
    as_rank_1 = {name: tf.constant(value) for name, value in raw.items()}
    as_rank_2 = {name: tf.constant(value[:, None]) for name, value in raw.items()}
    assert te._plain_numbers(layout.columns, as_rank_1) is not None
    assert te._plain_numbers(layout.columns, as_rank_2) is None
    together = layout.numeric_values(as_rank_1, te.fc_lib.FeatureTransformationCache(as_rank_1))
    apart = layout.numeric_values(as_rank_2, te.fc_lib.FeatureTransformationCache(as_rank_2))
    assert together.dtype == tf.float32
    np.testing.assert_array_equal(together.numpy(), apart.numpy())
    mixed = dict(as_rank_1, a=tf.constant(np.arange(40)))
    assert te._plain_numbers(layout.columns, mixed) is None
    scaled = [fc.numeric_column("a", normalizer_fn=lambda x: x * 2.0)]
    assert te._plain_numbers(te.FeatureLayout(scaled, 10).columns, as_rank_1) is None


@pytest.mark.parametrize("n_classes", [2, 3])
def test_labels_out_of_range_fail_training_with_the_heads_message(n_classes, tmp_path):
    """The gradients read the labels the head's loss checked in the same step (no second
    check): a label out of range still stops training with the head's error."""
    features, _rng = _data(6)
    labels = np.zeros(N, np.int64)
    labels[7] = n_classes
    model = estimator.BoostedTreesClassifier(
        _columns(),
        n_batches_per_layer=1,
        model_dir=str(tmp_path),
        n_classes=n_classes,
        n_trees=2,
        max_depth=2,
        train_in_memory=True,
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        model.train(_in_memory(features, labels), max_steps=10**9)
