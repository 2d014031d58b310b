"""Feature columns and canned-estimator options of public samples, run on 2.15 and on the kit.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what its user sees in two parts that `tests/test_feature_columns_vs_tf215.py`
compares with 2.15's recording (`tests/tf215/record_family.py feature_column_programs`, into
`tests/data/tf215/feature_columns.json`):

- `exact`: variable names and shapes (the checkpoint's keys), parse specs, export
  signatures and listings, errors (type and gist): equal;
- `close`: predictions, metrics, embedding tables: 1e-4 (every embedding has a seeded
  initializer, and each DNN's hidden layers are warm-started from weights written here
  by a formula, so both sides train the same net from the same start);
- `loose`: values with random draws (dropout): 35%.

The columns are those of public samples beyond the tutorials': embeddings with each
combiner, `max_norm`, an initializer, a table loaded from a checkpoint and frozen; shared
embeddings (V2 and compat.v1's); vocabulary files with OOV buckets or a default; weighted,
identity, crossed-of-crossed and multi-dimensional bucketized columns; a multi-valent
sparse input; and canned options (activations, batch norm, combiners, label_dimension,
a vocabulary and weights over five classes, a random seed).
"""

import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tf1_sample_programs import _error as error_of  # [type, message] or None

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "feature_columns.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
STEPS = 3
HIDDEN = [4, 3]
# Warm-started from the formula's weights: the DNN's layers, none of its columns.
DNN_LAYERS = "dnn/hiddenlayer|dnn/logits"


# ------------------------------------------------------------------ data
N = 12
_rng = np.random.RandomState(5)
RAW = {
    "x": _rng.uniform(-1, 1, (N, 2)).astype(np.float32),
    "age": _rng.uniform(0, 1, N).astype(np.float32),
    "c": np.array(list("abcz") * (N // 4)),
    "c2": np.array(list("zcab") * (N // 4)),
    "c3": np.array(list("bazc") * (N // 4)),
    "ids": np.arange(N, dtype=np.int64) % 8,
    "ids2": (np.arange(N, dtype=np.int64) * 3) % 7,
    "w": np.linspace(0.5, 2.0, N).astype(np.float32),
}
# A multi-valent input: 0 to 3 words an example (some twice), fed as a SparseTensor.
WORDS = [["red", "blue", "blue", "red", "pink", "red"][i % 6 : i % 6 + i % 4] for i in range(N)]
_score = RAW["x"][:, 0] + (RAW["c"] == "a") - RAW["age"] + 0.3 * (RAW["ids"] % 3)
LABELS = {
    "binary": (_score > 0.0).astype(np.int64)[:, None],
    "five": np.digitize(_score, [-0.8, -0.2, 0.3, 0.9]).astype(np.int64)[:, None],
    "five_words": np.array(list("vwxyz"))[np.digitize(_score, [-0.8, -0.2, 0.3, 0.9])][:, None],
    "targets3": np.stack([_score, -_score, RAW["age"]], 1).astype(np.float32),
}


def features(tf, rows=N):
    """The first `rows` examples as a dict of tensors, `words` a SparseTensor."""
    out = {key: tf.constant(value[:rows]) for key, value in RAW.items()}
    indices = [[i, j] for i, words in enumerate(WORDS[:rows]) for j in range(len(words))]
    out["words"] = tf.sparse.SparseTensor(
        tf.constant(indices, tf.int64),
        tf.constant([word for words in WORDS[:rows] for word in words]),
        tf.constant([rows, 3], tf.int64),
    )
    return out


def input_fn(tf, label_key):
    return lambda: (features(tf), tf.constant(LABELS[label_key]))


def predict_input_fn(tf):
    """One batch, then the end of input (predict reads until it)."""
    return lambda: tf.data.Dataset.from_tensors(features(tf))


# ------------------------------------------------------------------ what a user sees
def _plain(value):
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return value.astype(np.float64).ravel().tolist()


def predictions(tf, model):
    """{prediction key: every example's values, flattened}."""
    rows = list(model.predict(predict_input_fn(tf)))
    return {key: [_plain(row[key]) for row in rows] for key in sorted(rows[0])}


def floats(values):
    return {k: float(v) for k, v in sorted(values.items()) if k != "global_step"}


def variables(model):
    """{variable name: shape}, the model_dir's checkpoint keys."""
    return {name: list(model.get_variable_value(name).shape) for name in model.get_variable_names()}


def values_of(model, pattern):
    """{name: flattened values} of the variables whose names match `pattern`."""
    return {
        name: _plain(model.get_variable_value(name))
        for name in model.get_variable_names()
        if re.search(pattern, name)
    }


def parse_spec(spec):
    """A parse spec as [kind, shape, dtype, default] per key."""
    return {
        key: [
            type(value).__name__,
            list(getattr(value, "shape", []) or []),
            value.dtype.name,
            _plain(value.default_value)
            if getattr(value, "default_value", None) is not None
            else None,
        ]
        for key, value in sorted(spec.items())
    }


def exported(tf, model, workdir, columns, v1=False):
    """Signatures and files of `model` exported through a parsing receiver over `columns`
    (their parse spec by compat.v1's function for `v1` columns, as V1 samples made it)."""
    from tests.tutorial_programs import listing, signatures

    make_spec = tf.feature_column.make_parse_example_spec
    if v1:
        make_spec = tf.compat.v1.feature_column.make_parse_example_spec
    spec = make_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = model.export_saved_model(os.path.join(workdir, "export"), receiver)
    path = path.decode() if isinstance(path, bytes) else path
    return {"signatures": signatures(path), "files": listing(path), "spec": parse_spec(spec)}


# ------------------------------------------------------------------ fixed starts
def formula(shape, seed):
    """Values for a variable of `shape`, the same on both sides, none zero."""
    size = int(np.prod(shape))
    return (0.4 * np.sin(np.arange(size) * 0.9 + seed) + 0.05).reshape(shape).astype(np.float32)


def const(tf, shape, seed):
    """An embedding initializer drawing nothing: the formula's table."""
    return tf.compat.v1.constant_initializer(formula(shape, seed))


def write_checkpoint(tf, directory, shapes):
    """A TF1 checkpoint in `directory` of variables {name: shape} set by the formula."""
    os.makedirs(directory, exist_ok=True)
    with tf.Graph().as_default():
        made = [
            tf.compat.v1.get_variable(name, initializer=tf.constant(formula(shape, i)))
            for i, (name, shape) in enumerate(sorted(shapes.items()))
        ]
        saver = tf.compat.v1.train.Saver(made)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(directory, "model.ckpt"))
    return directory


def dnn_start(tf, workdir, inputs, units, batch_norm=False):
    """WarmStartSettings giving a DNN of HIDDEN layers over `inputs` numbers the formula's
    weights (its columns keep their own initializers)."""
    shapes, width = {}, inputs
    for i, hidden in enumerate(HIDDEN):
        shapes[f"dnn/hiddenlayer_{i}/kernel"] = [width, hidden]
        shapes[f"dnn/hiddenlayer_{i}/bias"] = [hidden]
        if batch_norm:
            shapes[f"dnn/hiddenlayer_{i}/batchnorm_{i}/gamma"] = [hidden]
            shapes[f"dnn/hiddenlayer_{i}/batchnorm_{i}/beta"] = [hidden]
        width = hidden
    shapes.update({"dnn/logits/kernel": [width, units], "dnn/logits/bias": [units]})
    path = write_checkpoint(tf, os.path.join(workdir, "start"), shapes)
    return tf.estimator.WarmStartSettings(path, vars_to_warm_start=DNN_LAYERS)


def trained(tf, model, label_key, workdir, columns=None, v1=False):
    """Trains `model` STEPS steps; what its user sees after."""
    model.train(input_fn(tf, label_key), steps=STEPS)
    result = {
        "exact": {"variables": variables(model)},
        "close": {
            "predictions": predictions(tf, model),
            "metrics": floats(model.evaluate(input_fn(tf, label_key), steps=1)),
            "tables": values_of(model, r"embedding_weights$|/weights$"),
        },
    }
    if columns is not None:
        result["exact"]["export"] = exported(tf, model, workdir, columns, v1)
    return result


def vocabulary_file(workdir, words, name="vocab.txt"):
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write("".join(word + "\n" for word in words))
    return path


# ------------------------------------------------------------------ embeddings
@program
def dnn_embedding_combiners(tf, workdir):
    """An embedding per combiner (mean over a vocabulary with an OOV bucket, sqrtn over
    multi-valent hashed words, sum with max_norm over identity ids with a default, sqrtn
    over weighted ids)."""
    fc = tf.feature_column
    columns = [
        fc.embedding_column(
            fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"], num_oov_buckets=1),
            2,
            combiner="mean",
            initializer=const(tf, [4, 2], 1),
        ),
        fc.embedding_column(
            fc.categorical_column_with_hash_bucket("words", 5),
            3,
            combiner="sqrtn",
            initializer=const(tf, [5, 3], 2),
        ),
        fc.embedding_column(
            fc.categorical_column_with_identity("ids", 6, default_value=0),
            2,
            combiner="sum",
            max_norm=0.3,
            initializer=const(tf, [6, 2], 3),
        ),
        fc.embedding_column(
            fc.weighted_categorical_column(fc.categorical_column_with_identity("ids2", 7), "w"),
            2,
            combiner="sqrtn",
            initializer=const(tf, [7, 2], 9),
        ),
        fc.numeric_column("x", shape=(2,)),
    ]
    model = tf.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=dnn_start(tf, workdir, 11, 1),
    )
    return trained(tf, model, "binary", workdir, columns)


@program
def dnn_embedding_from_checkpoint(tf, workdir):
    """A frozen embedding loaded from another checkpoint (`ckpt_to_load_from`,
    `tensor_name_in_ckpt`, `trainable=False`) over a vocabulary file with OOV buckets,
    beside a trained one over a cut vocabulary file with a default, and a normalized
    number with a default: a 3-dimensional regressor with elu."""
    fc = tf.feature_column
    words = vocabulary_file(workdir, ["a", "b", "c"])
    table = write_checkpoint(tf, os.path.join(workdir, "table"), {"emb/table": [5, 2]})
    columns = [
        fc.embedding_column(
            fc.categorical_column_with_vocabulary_file("c", words, num_oov_buckets=2),
            2,
            ckpt_to_load_from=table,
            tensor_name_in_ckpt="emb/table",
            trainable=False,
            # Not the checkpoint's values: a step that read them would differ.
            initializer=tf.compat.v1.zeros_initializer(),
        ),
        fc.embedding_column(
            fc.categorical_column_with_vocabulary_file(
                "c2", words, vocabulary_size=2, default_value=0
            ),
            2,
            initializer=const(tf, [2, 2], 4),
        ),
        fc.numeric_column("age", default_value=0.5, normalizer_fn=lambda v: 2.0 * v - 1.0),
    ]
    model = tf.estimator.DNNRegressor(
        HIDDEN,
        columns,
        model_dir=os.path.join(workdir, "model"),
        label_dimension=3,
        activation_fn=tf.nn.elu,
        warm_start_from=dnn_start(tf, workdir, 5, 3),
    )
    return trained(tf, model, "targets3", workdir, columns)


def _shared_columns(tf, shared):
    fc = tf.feature_column
    categories = [
        fc.categorical_column_with_vocabulary_list(key, ["a", "b", "c"]) for key in ("c", "c2")
    ]
    # Shared embeddings refuse to be made eagerly (as in 2.15): made in a graph.
    with tf.Graph().as_default():
        embedded = shared(categories, 2, combiner="mean", initializer=const(tf, [3, 2], 5))
    return [*embedded, fc.numeric_column("x", shape=(2,))]


@program
def dnn_shared_embeddings(tf, workdir):
    """tf.feature_column.shared_embeddings in a five-class DNN with relu6, a label
    vocabulary and a weight column."""
    columns = _shared_columns(tf, tf.feature_column.shared_embeddings)
    model = tf.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=os.path.join(workdir, "model"),
        n_classes=5,
        label_vocabulary=list("vwxyz"),
        weight_column="w",
        activation_fn=tf.nn.relu6,
        warm_start_from=dnn_start(tf, workdir, 6, 5),
    )
    return trained(tf, model, "five_words", workdir, columns)


@program
def dnn_shared_embedding_columns_v1(tf, workdir):
    """tf.compat.v1.feature_column.shared_embedding_columns in compat.v1's DNNClassifier,
    and what tf.estimator's (V2) DNNClassifier says of them."""
    columns = _shared_columns(tf, tf.compat.v1.feature_column.shared_embedding_columns)
    model = tf.compat.v1.estimator.DNNClassifier(
        HIDDEN,
        columns,
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    result = trained(tf, model, "binary", workdir, columns, v1=True)
    v2 = tf.estimator.DNNClassifier(HIDDEN, columns, model_dir=os.path.join(workdir, "v2"))
    result["exact"]["v2_estimator"] = error_of(lambda: v2.train(input_fn(tf, "binary"), steps=1))
    return result


@program
def combined_shared_embedding_columns_v1(tf, workdir):
    """compat.v1's wide & deep: shared embeddings on the deep side, the same categories
    on the wide side under `linear_sparse_combiner='sqrtn'`."""
    fc = tf.feature_column
    columns = _shared_columns(tf, tf.compat.v1.feature_column.shared_embedding_columns)
    wide = [
        fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"]),
        fc.categorical_column_with_hash_bucket("words", 4),
    ]
    model = tf.compat.v1.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=wide,
        dnn_feature_columns=columns,
        dnn_hidden_units=HIDDEN,
        linear_sparse_combiner="sqrtn",
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    return trained(tf, model, "binary", workdir, wide + columns, v1=True)


# ------------------------------------------------------------------ wide & deep options
def _weighted_and_multivalent(tf):
    fc = tf.feature_column
    weighted = fc.weighted_categorical_column(fc.categorical_column_with_identity("ids2", 7), "w")
    words = fc.categorical_column_with_vocabulary_list("words", ["red", "blue", "green", "pink"])
    return weighted, words


@program
def combined_batch_norm_elu(tf, workdir):
    """tf.estimator's wide & deep with batch norm, elu and a 'mean' linear combiner; a
    weighted column wide and as an indicator, multi-valent words as an indicator, a
    bucketized 2-d number crossed with a crossed column under a hash key."""
    fc = tf.feature_column
    weighted, words = _weighted_and_multivalent(tf)
    x_buckets = fc.bucketized_column(fc.numeric_column("x", shape=(2,)), [-0.5, 0.0, 0.5])
    crossed = fc.crossed_column(
        [x_buckets, fc.crossed_column(["c", "c3"], 9)], 11, hash_key=0xDECAFBAD
    )
    wide = [weighted, crossed, words]
    deep = [fc.indicator_column(weighted), fc.indicator_column(words), fc.numeric_column("age")]
    model = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=HIDDEN,
        dnn_activation_fn=tf.nn.elu,
        batch_norm=True,
        linear_sparse_combiner="mean",
        n_classes=5,
        warm_start_from=dnn_start(tf, workdir, 12, 5, batch_norm=True),
    )
    return trained(tf, model, "five", workdir, wide + deep)


@program
def combined_dropout(tf, workdir):
    """A wide & deep with `dnn_dropout`: its masks are random draws (loose), its
    variables exact."""
    fc = tf.feature_column
    weighted, words = _weighted_and_multivalent(tf)
    model = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=[weighted],
        dnn_feature_columns=[fc.indicator_column(words), fc.numeric_column("x", shape=(2,))],
        dnn_hidden_units=HIDDEN,
        dnn_dropout=0.3,
        config=tf.estimator.RunConfig(tf_random_seed=7),
        warm_start_from=dnn_start(tf, workdir, 6, 1),
    )
    result = trained(tf, model, "binary", workdir)
    result["loose"] = result.pop("close")["metrics"]
    return result


# ------------------------------------------------------------------ linear models
def _linear_columns(tf, workdir):
    """Every categorical option a linear sample sets, and numbers with defaults."""
    fc = tf.feature_column
    words = vocabulary_file(workdir, ["a", "b", "c"])
    age = fc.numeric_column("age", default_value=0.5, normalizer_fn=lambda v: 2.0 * v - 1.0)
    return [
        fc.categorical_column_with_vocabulary_file("c", words, num_oov_buckets=2),
        fc.categorical_column_with_vocabulary_file("c2", words, vocabulary_size=2, default_value=0),
        fc.categorical_column_with_vocabulary_list("c3", ["c", "a", "b"], default_value=1),
        fc.categorical_column_with_identity("ids", 6, default_value=5),
        fc.weighted_categorical_column(fc.categorical_column_with_identity("ids2", 7), "w"),
        fc.categorical_column_with_hash_bucket("words", 5),
        fc.bucketized_column(
            fc.numeric_column("x", shape=(2,), default_value=(0.0, 1.0)), [-0.5, 0.0, 0.5]
        ),
        fc.crossed_column([fc.bucketized_column(age, [0.0]), "c3"], 4, hash_key=12345),
        age,
    ]


@program
def linear_sqrtn(tf, workdir):
    """tf.estimator's LinearClassifier(sparse_combiner='sqrtn') over every option."""
    columns = _linear_columns(tf, workdir)
    model = tf.estimator.LinearClassifier(
        columns, model_dir=os.path.join(workdir, "model"), sparse_combiner="sqrtn"
    )
    return trained(tf, model, "binary", workdir, columns)


@program
def linear_v1_five_classes(tf, workdir):
    """compat.v1's LinearClassifier over five classes named by a vocabulary, weighted,
    'mean' combiner."""
    columns = _linear_columns(tf, workdir)
    model = tf.compat.v1.estimator.LinearClassifier(
        columns,
        model_dir=os.path.join(workdir, "model"),
        n_classes=5,
        label_vocabulary=list("vwxyz"),
        weight_column="w",
        sparse_combiner="mean",
    )
    return trained(tf, model, "five_words", workdir, columns)


# ------------------------------------------------------------------ a random seed
@program
def random_seed(tf, workdir):
    """RunConfig(tf_random_seed=...): the same seed draws the same DNN, another seed
    another one (the draws themselves are TensorFlow's own on each side)."""
    columns = [tf.feature_column.numeric_column("x", shape=(2,))]

    def draw(seed, name):
        model = tf.estimator.DNNClassifier(
            HIDDEN,
            columns,
            model_dir=os.path.join(workdir, name),
            config=tf.estimator.RunConfig(tf_random_seed=seed),
        )
        model.train(input_fn(tf, "binary"), steps=1)
        return np.asarray(predictions(tf, model)["logits"])

    first, again, other = draw(3, "a"), draw(3, "b"), draw(4, "c")
    return {
        "exact": {
            "same_seed_same_model": bool(np.array_equal(first, again)),
            "other_seed_other_model": not np.allclose(first, other),
        }
    }


# ------------------------------------------------------------------ TF1 model_fns
def _tf1_columns(tf):
    fc = tf.feature_column
    color = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"], num_oov_buckets=1)
    deep = [
        fc.embedding_column(color, 2, combiner="sqrtn", initializer=const(tf, [4, 2], 6)),
        fc.indicator_column(fc.categorical_column_with_hash_bucket("words", 3)),
        fc.numeric_column("x", shape=(2,)),
    ]
    frozen = [fc.embedding_column(color, 2, initializer=const(tf, [4, 2], 7))]
    wide = [color, fc.categorical_column_with_hash_bucket("words", 4), fc.numeric_column("age")]
    return deep, frozen, wide


# What the TF1 model_fn saw in its graph's collections (2.15 deep-copied `params`).
SEEN = {}


def _tf1_model_fn(features, labels, mode, params):
    """A TF1 sample's three-class model: `input_layer` into a dense layer (one input
    layer untrainable, into a collection of its own) beside `linear_model` of three
    units under 'sqrtn'."""
    import tensorflow as tf

    v1 = tf.compat.v1
    deep, frozen, wide = params["columns"]
    net = v1.feature_column.input_layer(features, deep, weight_collections=["deep_weights"])
    fixed = v1.feature_column.input_layer(
        features, frozen, weight_collections=["frozen_weights"], trainable=False
    )
    hidden = v1.layers.dense(
        tf.concat([net, fixed], 1), 3, kernel_initializer=const(tf, [9, 3], 8), name="hidden"
    )
    logits = hidden + v1.feature_column.linear_model(
        features, wide, units=3, sparse_combiner="sqrtn", weight_collections=["wide_weights"]
    )
    SEEN.update(
        {
            key: sorted(v.op.name for v in v1.get_collection(key))
            for key in ("deep_weights", "frozen_weights", "wide_weights", "trainable_variables")
        }
    )
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = v1.losses.sparse_softmax_cross_entropy(tf.reshape(labels, [-1]), logits)
    train_op = v1.train.AdagradOptimizer(0.3).minimize(loss, v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def tf1_input_layer_and_linear_model(tf, workdir):
    """input_layer (weight_collections, trainable) and linear_model (units,
    sparse_combiner) in a model_fn; exported through compat.v1's parse spec."""
    from tests.tutorial_programs import signatures

    deep, frozen, wide = _tf1_columns(tf)
    SEEN.clear()
    model = tf.estimator.Estimator(
        _tf1_model_fn,
        os.path.join(workdir, "model"),
        params={"columns": (deep, frozen, wide)},
    )
    model.train(lambda: (features(tf), tf.constant(LABELS["five"] % 3)), steps=STEPS)
    spec = tf.compat.v1.feature_column.make_parse_example_spec(deep + frozen + wide)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = model.export_saved_model(os.path.join(workdir, "export"), receiver)
    return {
        "exact": {
            "variables": variables(model),
            "collections": dict(SEEN),
            "spec": parse_spec(spec),
            "signatures": signatures(path.decode() if isinstance(path, bytes) else path),
        },
        "close": {
            "predictions": predictions(tf, model),
            "values": values_of(model, r"^(?!.*Adagrad)(?!global_step)"),
        },
    }


# ------------------------------------------------------------------ refusals
def _in_a_graph(tf, make):
    def made_in_a_graph():
        with tf.Graph().as_default():
            return make()

    return made_in_a_graph


def _refused_columns(tf):
    """What 2.15's feature columns refuse when they are made."""
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    c4 = fc.categorical_column_with_vocabulary_list("c2", ["a", "b", "c", "d"])
    c2 = fc.categorical_column_with_vocabulary_list("c2", ["a", "b", "c"])
    return {
        "shared_embeddings_eagerly": lambda: fc.shared_embeddings([c, c2], 2),
        "shared_embeddings_other_sizes": _in_a_graph(tf, lambda: fc.shared_embeddings([c, c4], 2)),
        "shared_embedding_columns_other_sizes": _in_a_graph(
            tf, lambda: tf.compat.v1.feature_column.shared_embedding_columns([c, c4], 2)
        ),
        "hash_bucket_size_0": lambda: fc.categorical_column_with_hash_bucket("c", 0),
        "crossed_hash_bucket_size_0": lambda: fc.crossed_column(["c", "c2"], 0),
        "oov_and_default": lambda: fc.categorical_column_with_vocabulary_list(
            "c", ["a", "b"], num_oov_buckets=1, default_value=0
        ),
        "identity_default_out_of_range": lambda: fc.categorical_column_with_identity(
            "ids", 3, default_value=3
        ),
        "crossed_over_numeric": lambda: fc.crossed_column([fc.numeric_column("age"), c], 4),
        "numeric_default_shape": lambda: fc.numeric_column(
            "x", shape=(2,), default_value=(1.0, 2.0, 3.0)
        ),
    }


def _refused_estimators(tf, workdir):
    """What 2.15's canned estimators refuse, made or trained."""
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    x = fc.numeric_column("x", shape=(2,))

    def train(model):
        return lambda: model.train(input_fn(tf, "binary"), steps=1)

    def folder(name):
        return os.path.join(workdir, name)

    return {
        "linear_sparse_combiner_typo": train(
            tf.estimator.LinearClassifier([c], folder("l"), sparse_combiner="sqrt")
        ),
        "combined_sparse_combiner_typo": train(
            tf.estimator.DNNLinearCombinedClassifier(
                folder("w"), linear_feature_columns=[c], linear_sparse_combiner="avg"
            )
        ),
        "dnn_embedding_combiner_max": train(
            tf.estimator.DNNClassifier(
                HIDDEN, [fc.embedding_column(c, 2, combiner="max")], folder("e")
            )
        ),
        "dnn_categorical_column": train(tf.estimator.DNNClassifier(HIDDEN, [c, x], folder("d"))),
        "linear_v1_columns": train(
            tf.estimator.LinearClassifier(
                _shared_columns(tf, tf.compat.v1.feature_column.shared_embedding_columns),
                folder("v1"),
            )
        ),
        "dnn_missing_feature": train(
            tf.estimator.DNNClassifier(HIDDEN, [fc.numeric_column("nope")], folder("m"))
        ),
    }


@program
def refusals(tf, workdir):
    """Each refused combination: the exception's type and message."""
    made = {name: error_of(call) for name, call in _refused_columns(tf).items()}
    estimators = {}
    for name, call in _refused_estimators(tf, workdir).items():
        estimators[name] = error_of(call)
    return {"exact": {"columns": made, "estimators": estimators}}
