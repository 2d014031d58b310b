"""tf.compat.v1.estimator's canned estimators with their V1 defaults and the arguments
public code passes them, and tf.estimator's heads the other families use least, run on
2.15 and on the kit.

The V1 classes as samples of the TF1 era built them: the loss summed over the batch,
TF1 optimizers by name (at the V1 rates) and as `tf.compat.v1.train` instances,
`input_layer_partitioner` / `partitioner` (`fixed_size_partitioner`,
`min_max_variable_partitioner`), weights, a label vocabulary, three classes, batch norm,
dropout, the sparse combiners; and tf.estimator's `LogisticRegressionHead`,
`PoissonRegressionHead` with weights, `MultiLabelHead` with
`classes_for_class_based_metrics` and `RegressionHead(label_dimension=2)` in the
`...Estimator`s. Each program trains a few steps on the whole (tiny) data set and returns
what its user sees:

- `exact`: the checkpoint's keys and shapes (`tf.train.list_variables`: 2.15 saved the
  slots of a variable split in parts under one key a part, which `get_variable_value`
  cannot read), the scalar and histogram tags of the training and evaluation events, the
  loss lines logged (numbers replaced), evaluate's and predict's keys, the export's
  signatures;
- `close` (1e-4): evaluate's values, predictions, the logged and summarized losses, the
  linear weights. Each DNN's layers start from weights written here by a formula
  (columns draw nothing: indicators and embeddings with the formula's table); the
  linear and baseline models start from zeros; dropout under a `tf_random_seed` draws
  2.15's masks (components/estimator/graph_seeds.py), so it is `close` too.

`tests/test_canned_v1_vs_tf215.py` compares them with 2.15's recording
(`tests/tf215/record_family.py canned_v1_programs`, into
`tests/data/tf215/canned_v1.json`).
"""

import glob
import os
import re

import numpy as np

from tests.feature_column_programs import HIDDEN, dnn_start
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines
from tests.tutorial_programs import signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "canned_v1.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
STEPS = 3
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


# ------------------------------------------------------------------ data
N = 12
_rng = np.random.RandomState(23)
RAW = {
    "x": _rng.uniform(-1, 1, (N, 2)).astype(np.float32),
    "age": _rng.uniform(0, 1, N).astype(np.float32),
    "c": np.array(list("abcz") * (N // 4)),
    "tag": np.array([f"t{i % 5}" for i in range(N)]),
    "w": np.linspace(0.5, 2.0, N).astype(np.float32),
}
_score = RAW["x"][:, 0] + (RAW["c"] == "a") - RAW["age"] + 0.2
LABELS = {
    "binary": (_score > 0.0).astype(np.int64)[:, None],
    "words": np.array(["no", "yes"])[(_score > 0.0).astype(int)][:, None],
    "three": np.array(["lo", "mid", "hi"])[np.digitize(_score, [-0.4, 0.4])][:, None],
    "target": (2 * RAW["x"][:, :1] - RAW["age"][:, None]).astype(np.float32),
    "targets2": np.stack([_score, RAW["age"]], 1).astype(np.float32),
    "counts": np.round(np.exp(RAW["x"][:, :1] + 0.5)).astype(np.float32),
    "share": (1.0 / (1.0 + np.exp(-2.0 * _score)))[:, None].astype(np.float32),
    "multi_label": np.stack([_score > 0, RAW["c"] == "b", RAW["x"][:, 1] > 0], 1).astype(np.int64),
}


def input_fn(tf, label_key):
    """The whole data set, every step (2.15's Baseline trains on tensors, not a Dataset)."""
    return lambda: ({k: tf.constant(v) for k, v in RAW.items()}, tf.constant(LABELS[label_key]))


def predict_input_fn(tf):
    """One batch of every example (2.15's Baseline predicted without end from a Dataset
    of one element made `from_tensors`)."""
    return lambda: tf.data.Dataset.from_tensor_slices(RAW).batch(N)


def run_config(tf):
    """Every step summarized and its loss logged, as a sample watching its loss sets it."""
    return tf.estimator.RunConfig(save_summary_steps=1, log_step_count_steps=1)


def dnn_columns(tf, embedding=False):
    """Numbers, an indicator and (`embedding`) an embedding of hashed tags: 6 or 8 inputs,
    none drawn (the embedding's table one number: a partitioner splits it, and a table's
    values would not fit either part)."""
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    columns = [fc.numeric_column("x", shape=[2]), fc.numeric_column("age"), fc.indicator_column(c)]
    if embedding:
        tag = fc.categorical_column_with_hash_bucket("tag", 6)
        columns.append(
            fc.embedding_column(tag, 2, initializer=tf.compat.v1.constant_initializer(0.1))
        )
    return columns


def linear_columns(tf):
    fc = tf.feature_column
    age = fc.bucketized_column(fc.numeric_column("age"), [0.25, 0.5, 0.75])
    return [
        fc.numeric_column("x", shape=[2]),
        fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"]),
        fc.categorical_column_with_hash_bucket("tag", 7),
        age,
        fc.crossed_column([age, "c"], 5),
    ]


# ------------------------------------------------------------------ what a user sees
def _plain(value):
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return value.astype(np.float64).ravel().tolist()


def _events(directory):
    """(the sorted tags, with ` (histogram)` after a histogram's, of the event files in
    `directory`; the `loss` scalars in the order written). Steps are left out: a TF1
    summary saver reads the global step beside the train op (on 2.15 as here)."""
    import tensorflow as tf

    tags, losses = set(), []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    tags.add(value.tag)
                    if value.tag == "loss":
                        losses.append(value.simple_value)
                elif value.HasField("histo"):
                    tags.add(f"{value.tag} (histogram)")
    return sorted(tags), losses


def _logged(lines):
    """(the `loss = ...` lines and the last step's, numbers replaced; the losses logged)."""
    kept = [line.splitlines()[0] for line in lines if line.startswith(("loss = ", "Loss for"))]
    shown = []
    for line in kept:  # (two loggers may both see one)
        if not shown or shown[-1] != line:
            shown.append(line)
    losses = [float(re.match(r"loss = (\S+?),", line).group(1)) for line in shown if "=" in line]
    return [_NUMBER.sub("N", line) for line in shown], losses


def trained(tf, model, label_key, columns, weights=r"^linear/linear_model/.*weights$"):
    """Trains `model` STEPS steps (its log collected), evaluates, predicts, exports through
    a parsing receiver over `columns`; what its user sees after."""
    with _info_lines() as lines:
        model.train(input_fn(tf, label_key), steps=STEPS)
    logged, logged_losses = _logged(lines)
    metrics = model.evaluate(input_fn(tf, label_key), steps=1)
    rows = list(model.predict(predict_input_fn(tf)))
    train_tags, summarized = _events(model.model_dir)
    eval_tags, _ = _events(os.path.join(model.model_dir, "eval"))
    exact = {
        "checkpoint": dict(tf.train.list_variables(model.model_dir)),
        "train_tags": train_tags,
        "eval_tags": eval_tags,
        "logged": logged,
        "evaluate": sorted(metrics),
        "predict": {k: np.asarray(v).dtype.name for k, v in sorted(rows[0].items())},
    }
    close = {"logged_losses": logged_losses, "summarized_losses": summarized}
    close.update({f"evaluate/{k}": float(v) for k, v in metrics.items()})
    for key in sorted(rows[0]):
        values = [_plain(row[key]) for row in rows]
        (exact if isinstance(values[0][0], str) else close)[f"predict/{key}"] = values
    for name in model.get_variable_names():
        if re.search(weights, name):
            close[name] = _plain(model.get_variable_value(name))
    if columns is not None:
        spec = tf.feature_column.make_parse_example_spec(columns)
        receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
        path = model.export_saved_model(os.path.join(model.model_dir, "..", "export"), receiver)
        exact["signatures"] = signatures(path.decode() if isinstance(path, bytes) else path)
    return {"exact": exact, "close": close}


def _model_dir(workdir):
    return os.path.join(workdir, "model")


# ------------------------------------------------------------------ V1 DNNs
@program
def dnn_classifier_defaults(tf, workdir):
    """compat.v1's DNNClassifier as the samples built it: Adagrad at 0.05, the loss summed
    over the batch, weighted examples."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        weight_column="w",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "binary", columns)


@program
def dnn_classifier_three_classes_adam(tf, workdir):
    """Three classes named by a vocabulary, `optimizer='Adam'` (its V1 rate)."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        n_classes=3,
        label_vocabulary=["lo", "mid", "hi"],
        optimizer="Adam",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 3),
    )
    return trained(tf, model, "three", columns)


@program
def dnn_classifier_input_layer_partitioner(tf, workdir):
    """An embedding split in two by `input_layer_partitioner=fixed_size_partitioner(2)`,
    RMSProp by name; trained, then resumed (its slots' parts restored)."""
    columns = dnn_columns(tf, embedding=True)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        optimizer="RMSProp",
        input_layer_partitioner=tf.compat.v1.fixed_size_partitioner(2),
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 8, 1),
    )
    model.train(input_fn(tf, "binary"), steps=STEPS)  # then resumed, its slots restored
    return trained(tf, model, "binary", columns)


@program
def dnn_classifier_batch_norm_momentum(tf, workdir):
    """`batch_norm=True` under a `tf.compat.v1.train.MomentumOptimizer` instance."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        optimizer=tf.compat.v1.train.MomentumOptimizer(0.05, momentum=0.9),
        batch_norm=True,
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 1, batch_norm=True),
    )
    return trained(tf, model, "binary", columns)


@program
def dnn_classifier_dropout(tf, workdir):
    """`dropout=0.3` with a seed: 2.15's masks, drawn from the seed."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        dropout=0.3,
        config=tf.estimator.RunConfig(tf_random_seed=3, save_summary_steps=1),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "binary", None)


@program
def dnn_regressor_proximal_adagrad(tf, workdir):
    """A weighted DNNRegressor under a `ProximalAdagradOptimizer` instance with L1."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNRegressor(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        weight_column="w",
        optimizer=tf.compat.v1.train.ProximalAdagradOptimizer(
            0.1, l1_regularization_strength=0.001
        ),
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "target", columns)


@program
def dnn_regressor_sgd_two_targets(tf, workdir):
    """`label_dimension=2`, `optimizer='SGD'`, `activation_fn=tf.nn.tanh`."""
    columns = dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNRegressor(
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        label_dimension=2,
        optimizer="SGD",
        activation_fn=tf.nn.tanh,
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 2),
    )
    return trained(tf, model, "targets2", columns)


# ------------------------------------------------------------------ V1 linear models
@program
def linear_classifier_defaults(tf, workdir):
    """compat.v1's LinearClassifier with its defaults (Ftrl at its V1 rate), weighted."""
    columns = linear_columns(tf)
    model = tf.compat.v1.estimator.LinearClassifier(
        columns, model_dir=_model_dir(workdir), weight_column="w", config=run_config(tf)
    )
    return trained(tf, model, "binary", columns)


@program
def linear_classifier_fixed_size_partitioner(tf, workdir):
    """Every weight split in two, `sparse_combiner='sqrtn'`, an `FtrlOptimizer` instance
    with L1 and L2, two classes by vocabulary; trained, then resumed. (Not three classes:
    2.15 failed on a bias split in parts, which its summary stacked.)"""
    columns = linear_columns(tf)
    model = tf.compat.v1.estimator.LinearClassifier(
        columns,
        model_dir=_model_dir(workdir),
        label_vocabulary=["no", "yes"],
        optimizer=tf.compat.v1.train.FtrlOptimizer(
            0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.01
        ),
        partitioner=tf.compat.v1.fixed_size_partitioner(2),
        sparse_combiner="sqrtn",
        config=run_config(tf),
    )
    model.train(input_fn(tf, "words"), steps=STEPS)  # then resumed, its slots restored
    return trained(tf, model, "words", columns)


@program
def linear_regressor_min_max_partitioner(tf, workdir):
    """`min_max_variable_partitioner` as the r1 census sample set it, 'mean' combiner,
    weights, Adagrad by name."""
    columns = linear_columns(tf)
    model = tf.compat.v1.estimator.LinearRegressor(
        columns,
        model_dir=_model_dir(workdir),
        weight_column="w",
        optimizer="Adagrad",
        partitioner=tf.compat.v1.min_max_variable_partitioner(max_partitions=2, min_slice_size=4),
        sparse_combiner="mean",
        config=run_config(tf),
    )
    return trained(tf, model, "target", columns)


# ------------------------------------------------------------------ V1 wide & deep
@program
def combined_classifier_defaults(tf, workdir):
    """compat.v1's wide & deep with its defaults (Ftrl and Adagrad at their V1 rates),
    weighted, `linear_sparse_combiner='sqrtn'`."""
    wide, deep = linear_columns(tf), dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNLinearCombinedClassifier(
        model_dir=_model_dir(workdir),
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=HIDDEN,
        weight_column="w",
        linear_sparse_combiner="sqrtn",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "binary", wide + deep)


@program
def combined_classifier_optimizers_partitioner(tf, workdir):
    """TF1 optimizer instances for both parts, two classes by vocabulary, batch norm, and
    an `input_layer_partitioner` (2.15 split the wide part's weights with it too)."""
    wide, deep = linear_columns(tf), dnn_columns(tf, embedding=True)
    model = tf.compat.v1.estimator.DNNLinearCombinedClassifier(
        model_dir=_model_dir(workdir),
        linear_feature_columns=wide,
        linear_optimizer=tf.compat.v1.train.FtrlOptimizer(0.05),
        dnn_feature_columns=deep,
        dnn_optimizer=tf.compat.v1.train.AdagradOptimizer(0.1),
        dnn_hidden_units=HIDDEN,
        label_vocabulary=["no", "yes"],
        batch_norm=True,
        input_layer_partitioner=tf.compat.v1.fixed_size_partitioner(2),
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 8, 1, batch_norm=True),
    )
    return trained(tf, model, "words", wide + deep)


@program
def combined_regressor_dropout(tf, workdir):
    """A weighted wide & deep regressor with seeded `dnn_dropout`, optimizers by name."""
    wide, deep = linear_columns(tf), dnn_columns(tf)
    model = tf.compat.v1.estimator.DNNLinearCombinedRegressor(
        model_dir=_model_dir(workdir),
        linear_feature_columns=wide,
        linear_optimizer="SGD",
        dnn_feature_columns=deep,
        dnn_optimizer="Adam",
        dnn_hidden_units=HIDDEN,
        dnn_dropout=0.4,
        weight_column="w",
        config=tf.estimator.RunConfig(tf_random_seed=5, save_summary_steps=1),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "target", None)


# ------------------------------------------------------------------ V1 baselines
@program
def baseline_classifier_three_classes(tf, workdir):
    """compat.v1's BaselineClassifier: three classes by vocabulary, weighted, Ftrl at its
    V1 rate."""
    model = tf.compat.v1.estimator.BaselineClassifier(
        model_dir=_model_dir(workdir),
        n_classes=3,
        weight_column="w",
        label_vocabulary=["lo", "mid", "hi"],
        config=run_config(tf),
    )
    return trained(tf, model, "three", None, weights=r"^baseline/bias$")


@program
def baseline_regressor_sgd_instance(tf, workdir):
    """A weighted BaselineRegressor over two targets with a `GradientDescentOptimizer`."""
    model = tf.compat.v1.estimator.BaselineRegressor(
        model_dir=_model_dir(workdir),
        label_dimension=2,
        weight_column="w",
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1),
        config=run_config(tf),
    )
    return trained(tf, model, "targets2", None, weights=r"^baseline/bias$")


# ------------------------------------------------------------------ tf.estimator's heads
@program
def logistic_regression_head(tf, workdir):
    """tf.estimator's DNNEstimator under a weighted `LogisticRegressionHead` (labels in
    [0, 1]), Adagrad by name."""
    columns = dnn_columns(tf)
    model = tf.estimator.DNNEstimator(
        tf.estimator.LogisticRegressionHead(weight_column="w"),
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        optimizer="Adagrad",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "share", columns)


@program
def poisson_regression_head_weighted(tf, workdir):
    """tf.estimator's LinearEstimator under a weighted `PoissonRegressionHead`."""
    columns = linear_columns(tf)
    model = tf.estimator.LinearEstimator(
        tf.estimator.PoissonRegressionHead(weight_column="w"),
        columns,
        model_dir=_model_dir(workdir),
        config=run_config(tf),
    )
    return trained(tf, model, "counts", columns)


@program
def multi_label_head_class_metrics(tf, workdir):
    """tf.estimator's DNNEstimator under a `MultiLabelHead` with per-class metrics for two
    of its three classes and two thresholds."""
    columns = dnn_columns(tf)
    model = tf.estimator.DNNEstimator(
        tf.estimator.MultiLabelHead(
            3, thresholds=[0.3, 0.6], classes_for_class_based_metrics=[0, 2]
        ),
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        optimizer="Adam",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 3),
    )
    return trained(tf, model, "multi_label", columns)


@program
def regression_head_two_targets(tf, workdir):
    """tf.estimator's DNNEstimator under `RegressionHead(label_dimension=2)`, weighted per
    example, SGD."""
    columns = dnn_columns(tf)
    model = tf.estimator.DNNEstimator(
        tf.estimator.RegressionHead(label_dimension=2, weight_column="w"),
        HIDDEN,
        columns,
        model_dir=_model_dir(workdir),
        optimizer="SGD",
        config=run_config(tf),
        warm_start_from=dnn_start(tf, workdir, 6, 2),
    )
    return trained(tf, model, "targets2", columns)


def _refusal(build):
    """What a user sees of a head refusing its arguments: the error's type and words."""
    try:
        build()
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return "accepted"


@program
def head_argument_errors(tf, workdir):
    """Heads given arguments they refuse, as users mistyped them: a reduction's name, a
    loss_fn without labels or logits, a vocabulary as a dict or of the wrong length,
    thresholds outside (0, 1), and a head's training spec without trainable_variables."""
    heads = tf.estimator

    def train_spec(variables):
        return heads.MultiClassHead(3).create_estimator_spec(
            features={"x": tf.constant([[1.0]])},
            mode=tf.estimator.ModeKeys.TRAIN,
            logits=tf.constant([[1.0, 2.0, 3.0]]),
            labels=tf.constant([[1]]),
            optimizer=tf.keras.optimizers.SGD(),
            trainable_variables=variables,
        )

    cases = {
        "binary_reduction": lambda: heads.BinaryClassHead(loss_reduction="mean"),
        "regression_reduction": lambda: heads.RegressionHead(loss_reduction="mean"),
        "loss_fn_without_logits": lambda: heads.MultiClassHead(3, loss_fn=lambda labels: labels),
        "loss_fn_without_labels": lambda: heads.RegressionHead(loss_fn=lambda logits: logits),
        "multi_label_vocabulary_dict": lambda: heads.MultiLabelHead(3, label_vocabulary={"a": 0}),
        "multi_label_vocabulary_short": lambda: heads.MultiLabelHead(3, label_vocabulary=["a"]),
        "multi_class_vocabulary_short": lambda: heads.MultiClassHead(3, label_vocabulary=["a"]),
        "binary_vocabulary_dict": lambda: heads.BinaryClassHead(label_vocabulary={"a": 0}),
        "multi_label_threshold_one": lambda: heads.MultiLabelHead(3, thresholds=[0.5, 1.0]),
        "binary_threshold_zero": lambda: heads.BinaryClassHead(thresholds=[0.0, 0.5]),
        "train_without_variables": lambda: train_spec(None),
        "train_variables_dict": lambda: train_spec({}),
    }
    return {"exact": {name: _refusal(build) for name, build in cases.items()}}


@program
def head_sequence_weights(tf, workdir):
    """Heads in a custom model_fn scoring each step of a sequence: logits [batch, steps,
    n], weights per example and step ([batch, steps] or [batch, steps, 1]), and weights
    of shapes the heads refuse, for the loss and the evaluation metrics."""
    logits = tf.constant([[[10.0, 0, 0], [12, 0, 0]], [[0, 10, 0], [0, 15, 0]]])
    class_ids = tf.constant([[[0], [1]], [[1], [2]]], tf.int64)
    weights = {
        "steps": [[1.0, 1.5], [2.0, 2.5]],
        "steps_1": [[[1.0], [1.5]], [[2.0], [2.5]]],
        "examples": [[1.0], [2.0]],
        "steps_n": [[1.0, 1.5, 3.0], [2.0, 2.5, 3.0]],
    }
    heads = {
        "multi_class": (tf.estimator.MultiClassHead(3, weight_column="w"), class_ids),
        "multi_label": (tf.estimator.MultiLabelHead(3, weight_column="w"), tf.ones([2, 2, 3])),
        "regression": (tf.estimator.RegressionHead(3, weight_column="w"), logits * 0.5),
    }
    seen = {}
    for head_name, (head, labels) in heads.items():
        for weight_name, value in weights.items():
            features = {"w": tf.constant(value)}
            try:
                loss = float(head.loss(labels, logits, features=features))
                metrics = head.update_metrics(head.metrics(), features, logits, labels)
                seen[f"{head_name}/{weight_name}"] = {
                    "loss": round(loss, 4),
                    **{k: round(float(m.result()), 4) for k, m in sorted(metrics.items())},
                }
            except ValueError as error:
                seen[f"{head_name}/{weight_name}"] = f"ValueError: {error}"
    flat = tf.estimator.MultiClassHead(3, weight_column="w")
    seen["flat/misshapen"] = _refusal(
        lambda: flat.loss(tf.constant([[0], [1]]), tf.zeros([2, 3]), features={"w": [[1.0, 2.0]]})
    )
    return {"exact": seen}


@program
def linear_logit_fn_in_a_model_fn(tf, workdir):
    """`tf.compat.v1.estimator.experimental.linear_logit_fn_builder` in a model_fn, under
    tf.estimator's RegressionHead and a TF1 Ftrl: its variables in the caller's scope
    (`linear_model/...`, not the canned models' `linear/`), trained as 2.15 trained them."""
    columns = linear_columns(tf)

    def model_fn(features, labels, mode):
        logit_fn = tf.compat.v1.estimator.experimental.linear_logit_fn_builder(1, columns)
        optimizer = tf.compat.v1.train.FtrlOptimizer(0.2)
        return tf.estimator.RegressionHead().create_estimator_spec(
            features,
            mode,
            logit_fn(features),
            labels=labels,
            train_op_fn=lambda loss: optimizer.minimize(
                loss, global_step=tf.compat.v1.train.get_global_step()
            ),
        )

    model = tf.estimator.Estimator(model_fn, _model_dir(workdir), config=run_config(tf))
    return trained(tf, model, "target", columns, weights=r"^linear_model/")


def _summaries_by_step(directory):
    """{tag: [the scalar's values, step by step]} of the training event files."""
    import tensorflow as tf

    seen = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    seen.setdefault(value.tag, []).append((event.step, value.simple_value))
    return {tag: [v for _, v in sorted(values)] for tag, values in sorted(seen.items())}


@program
def head_training_summaries(tf, workdir):
    """Heads in custom model_fns as users train them, watched in TensorBoard: a named
    MultiClassHead and a weighted MultiHead given regularization losses (each writes its
    head's loss and the regularization under its own tag), and a RegressionHead trained
    by a Keras optimizer subclass whose own get_updates makes the train op."""
    labels = {
        "kind": np.digitize(RAW["age"], [0.33, 0.66])[:, None],
        "yes": LABELS["binary"],
        "y": LABELS["target"],
    }

    def input_fn():
        return {"x": tf.constant(RAW["x"])}, {k: tf.constant(v) for k, v in labels.items()}

    def linear(features, units):
        weights = tf.compat.v1.get_variable(
            "w", [2, units], initializer=tf.compat.v1.zeros_initializer()
        )
        return tf.matmul(features["x"], weights)

    def sgd(loss):
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
        return optimizer.minimize(loss, tf.compat.v1.train.get_global_step())

    class HandSGD(tf.keras.optimizers.Optimizer):
        def get_updates(self, loss, params):
            gradients = tf.gradients(loss, params)
            steps = [p.assign_sub(0.5 * g) for p, g in zip(params, gradients, strict=True)]
            steps.append(tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1))
            return [tf.group(*steps)]

    def named(features, labels, mode):
        head = tf.estimator.MultiClassHead(3, name="kind")
        return head.create_estimator_spec(
            features,
            mode,
            linear(features, 3),
            labels["kind"],
            train_op_fn=sgd,
            regularization_losses=[tf.constant(0.5), tf.constant(0.25)],
        )

    def multi(features, labels, mode):
        heads = [tf.estimator.BinaryClassHead(name="yes"), tf.estimator.RegressionHead(name="y")]
        return tf.estimator.MultiHead(heads, head_weights=[1.0, 0.5]).create_estimator_spec(
            features,
            mode,
            linear(features, 2),
            labels,
            train_op_fn=sgd,
            regularization_losses=[tf.constant(0.125)],
        )

    def own_updates(features, labels, mode):
        return tf.estimator.RegressionHead(name="y").create_estimator_spec(
            features,
            mode,
            linear(features, 1),
            labels["y"],
            optimizer=HandSGD("hand_sgd"),
            trainable_variables=tf.compat.v1.trainable_variables(),
        )

    exact, close = {}, {}
    for name, model_fn in (("named", named), ("multi", multi), ("own_updates", own_updates)):
        model_dir = os.path.join(workdir, name)
        config = tf.estimator.RunConfig(save_summary_steps=1)
        model = tf.estimator.Estimator(model_fn, model_dir, config=config)
        model.train(input_fn, steps=2)
        scalars = _summaries_by_step(model_dir)
        metrics = model.evaluate(input_fn, steps=1)
        exact[name] = {"summaries": sorted(scalars), "evaluate": sorted(metrics)}
        close[name] = {**scalars, **{f"evaluate/{k}": float(v) for k, v in metrics.items()}}
    return {"exact": exact, "close": close}


@program
def head_label_errors(tf, workdir):
    """What heads say of labels and losses they refuse, called eagerly as a custom
    training loop calls them: float or string class ids, ids out of range, labels of
    another batch or width, a multi-label head's rank-1 labels or its indicator of 2, a
    logistic regression's label below 0, logits of the wrong width, and a loss_fn
    returning a loss of the wrong shape."""
    heads = tf.estimator
    logits3 = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], np.float32)
    logits2 = np.array([[-1.0, 1.0], [-1.5, 1.0]], np.float32)
    column = np.array([[1.0], [2.0]], np.float32)

    def bad_loss(labels, logits):
        return tf.constant([1.0, 2.0])

    cases = {
        "float_ids": lambda: heads.MultiClassHead(3).loss(np.array([[1.0], [1.0]]), logits3),
        "string_ids": lambda: heads.MultiClassHead(3).loss(np.array([["a"], ["b"]]), logits3),
        "id_too_large": lambda: heads.MultiClassHead(3).loss(np.array([[45], [1]]), logits3),
        "id_negative": lambda: heads.MultiClassHead(3).loss(np.array([[-5], [1]]), logits3),
        "binary_id_2": lambda: heads.BinaryClassHead().loss(np.array([[2], [1]]), column),
        "labels_of_3": lambda: heads.MultiClassHead(3).loss(np.array([[1], [1], [1]]), logits3),
        "labels_width_2": lambda: heads.MultiClassHead(3).loss(np.array([[1, 2], [0, 1]]), logits3),
        "multi_label_rank_1": lambda: heads.MultiLabelHead(2).loss(np.array([1, 1]), logits2),
        "multi_label_2": lambda: heads.MultiLabelHead(2).loss(np.array([[2, 0], [1, 1]]), logits2),
        "logistic_below_0": lambda: heads.LogisticRegressionHead().loss(
            np.array([[-1.0], [0.5]], np.float32), column, features={}
        ),
        "regression_of_3": lambda: heads.RegressionHead().loss(
            np.array([[1.0], [2.0], [3.0]], np.float32), column
        ),
        "logits_width_2": lambda: heads.MultiClassHead(3).predictions(logits2),
        "loss_fn_shape": lambda: heads.MultiClassHead(3, loss_fn=bad_loss).loss(
            np.array([[1], [2]]), logits3, features={}
        ),
    }
    return {"exact": {name: _refusal(build) for name, build in cases.items()}}


@program
def v1_reductions_over_weights(tf, workdir):
    """V1 classes whose loss divides by the weights (`tf.compat.v1.losses.Reduction.MEAN`:
    their sum; `SUM_BY_NONZERO_WEIGHTS`: how many are not 0), trained and evaluated
    with a weight column that has zeros."""
    reduction = tf.compat.v1.losses.Reduction
    weights = RAW["w"] * (np.arange(N) % 3 != 0)

    def input_fn():
        features = {"x": tf.constant(RAW["x"]), "w": tf.constant(weights)}
        return features, tf.constant(LABELS["target"])

    seen = {}
    for name in ("MEAN", "SUM_BY_NONZERO_WEIGHTS"):
        model = tf.compat.v1.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x", shape=[2])],
            model_dir=os.path.join(workdir, name),
            weight_column="w",
            loss_reduction=getattr(reduction, name),
            config=run_config(tf),
        )
        model.train(input_fn, steps=STEPS)
        metrics = model.evaluate(input_fn, steps=1)
        seen[name] = {k: float(v) for k, v in sorted(metrics.items())}
        seen[name]["summarized_losses"] = _events(model.model_dir)[1]
    return {"exact": {k: sorted(v) for k, v in seen.items()}, "close": seen}


@program
def head_sequence_predictions(tf, workdir):
    """Heads predicting for each step of a sequence (logits [batch, steps, n]), alone and
    in a MultiHead: each prediction's shape, and its values."""
    logits = tf.constant(np.linspace(-2.0, 2.0, 2 * 2 * 5).reshape([2, 2, 5]), tf.float32)
    heads = tf.estimator
    cases = {
        "multi_class": (heads.MultiClassHead(3), logits[..., :3]),
        "binary": (heads.BinaryClassHead(), logits[..., :1]),
        "multi_label": (heads.MultiLabelHead(3), logits[..., 2:]),
        "regression": (heads.RegressionHead(2), logits[..., 3:]),
        "multi_head": (
            heads.MultiHead([heads.MultiClassHead(3, name="a"), heads.RegressionHead(2, name="b")]),
            logits,
        ),
    }
    exact, close = {}, {}
    for name, (head, head_logits) in cases.items():
        predictions = {
            key if isinstance(key, str) else "/".join(key): value
            for key, value in head.predictions(head_logits).items()
        }
        exact[name] = {k: list(v.shape) for k, v in sorted(predictions.items())}
        for key, value in sorted(predictions.items()):
            (exact if value.dtype == tf.string else close)[f"{name}/{key}"] = _plain(value)
    return {"exact": exact, "close": close}
