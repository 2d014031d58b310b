"""The tiny canned estimators and data both sides of the tf.estimator 2.15 checkpoint
tests build: under TF 2.15 with `tf.estimator` (record_checkpoints.py) and under TF 2.21
with this kit's estimator (tests/test_estimator_tf215_checkpoints.py).  Standard library,
NumPy and TensorFlow only, so it imports under both."""

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 20  # what tf.estimator 2.15 trains before its model_dir is recorded
MORE_STEPS = 5  # what each side then trains on from the other's model_dir

KINDS = (
    "dnn",
    "dnn_adam",
    "dnn_batch_norm",
    "linear",
    "dnn_linear",
    "dnn_regressor",
    "linear_regressor",
    "baseline",
)
# Kinds teams also have model_dirs of: tf.compat.v1.estimator's classes with TF1
# optimizers and partitioned variables, a TF1 model_fn (partitioned get_variable, batch
# norm's moving statistics, Adam's slots, moving-average shadows), TPUEstimator with
# use_tpu=False, KMeans stopped within a mini-batch iteration and an RNNClassifier.
# (SDCA's model_dirs move over too, checked by a script: its checkpoint keeps a table of
# 2**17 buckets, 4 MB, too large to keep here; and its kernel visits a batch's examples
# in a random order, so that 2.15 resuming one model_dir twice trains on differently.)
MORE_KINDS = (
    "v1_dnn_partitioned",
    "v1_linear_partitioned",
    "tf1_model_fn",
    "tpu_estimator",
    "kmeans",
    "rnn",
)
SAVED_MODEL = "linear_saved_model"  # the exported SavedModel of "linear"
# A Keras model through model_to_estimator in its default format ('checkpoint'), whose
# checkpoints 2.15 wrote object-based (layer_with_weights-0/kernel/.ATTRIBUTES/...).
KERAS = "keras_object_based"
# The same model compiled with a tf.compat.v1.train optimizer (TF1's Adam: its slots
# hidden/kernel/Adam, its training/beta1_power), as TF 1.x's guides compiled them.
KERAS_TF1 = "keras_tf1_optimizer"
KERAS_KINDS = (KERAS, KERAS_TF1)
# KERAS_TF1 in the 'saver' format (name-based: hidden/kernel/Adam, training/beta1_power),
# which both sides read: a canned-like kind (build, train_input_fn, predictions).
KERAS_TF1_SAVER = "keras_tf1_saver"
KERAS_MODEL_KINDS = (*KERAS_KINDS, KERAS_TF1_SAVER)

_rng = np.random.RandomState(7)
FEATURES = {
    "x": _rng.randn(16, 2).astype(np.float32),
    "c": np.array(["a", "b", "c", "d"] * 4),
}
CLASSES = ((FEATURES["x"][:, 0] + (FEATURES["c"] == "a")) > 0.5).astype(np.int64)
TARGETS = (2 * FEATURES["x"][:, :1] - FEATURES["x"][:, 1:]).astype(np.float32)


def columns():
    """(numeric x, vocabulary column c, embedding of c)."""
    fc = tf.feature_column
    vocabulary = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    return fc.numeric_column("x", shape=[2]), vocabulary, fc.embedding_column(vocabulary, 2)


def build(estimator, kind, model_dir, **kwargs):
    """The canned estimator `kind` over `model_dir`; `estimator` is tf.estimator or the kit's."""
    x, c, embedded = columns()
    dnn = {"hidden_units": [3], "feature_columns": [x, embedded], "model_dir": model_dir}
    linear = {"feature_columns": [x, c], "model_dir": model_dir}
    make = {
        "dnn": lambda: estimator.DNNClassifier(**dnn, **kwargs),
        "dnn_adam": lambda: estimator.DNNClassifier(**dnn, optimizer="Adam", **kwargs),
        "dnn_batch_norm": lambda: estimator.DNNClassifier(**dnn, batch_norm=True, **kwargs),
        "linear": lambda: estimator.LinearClassifier(**linear, **kwargs),
        "dnn_linear": lambda: estimator.DNNLinearCombinedClassifier(
            model_dir=model_dir,
            linear_feature_columns=[x, c],
            dnn_feature_columns=[x, embedded],
            dnn_hidden_units=[3],
            **kwargs,
        ),
        "dnn_regressor": lambda: estimator.DNNRegressor(**dnn, **kwargs),
        "linear_regressor": lambda: estimator.LinearRegressor(**linear, **kwargs),
        "baseline": lambda: estimator.BaselineClassifier(model_dir=model_dir, **kwargs),
        **{k: lambda: keras_estimator(estimator, model_dir, kind) for k in KERAS_MODEL_KINDS},
    }
    if kind in MORE_KINDS:
        return _build_more(estimator, kind, model_dir, **kwargs)
    return make[kind]()


def _v1(estimator):
    """tf.compat.v1.estimator: 2.15's, or the kit's beside its tf.estimator."""
    if hasattr(estimator, "model_to_estimator"):  # (the kit's tf.estimator)
        from components.estimator import compat_v1

        return compat_v1
    return tf.compat.v1.estimator


def _build_more(estimator, kind, model_dir, **kwargs):
    x, c, embedded = columns()
    v1 = _v1(estimator)
    train = tf.compat.v1.train
    if kind == "v1_dnn_partitioned":
        partitioner = tf.compat.v1.min_max_variable_partitioner(2, min_slice_size=1)
        return v1.DNNClassifier(
            [3],
            [x, embedded],
            model_dir=model_dir,
            optimizer=train.MomentumOptimizer(0.05, 0.9),
            input_layer_partitioner=partitioner,
            **kwargs,
        )
    if kind == "v1_linear_partitioned":
        partitioner = tf.compat.v1.fixed_size_partitioner(2)
        return v1.LinearClassifier([x, c], model_dir=model_dir, partitioner=partitioner, **kwargs)
    if kind == "tf1_model_fn":
        return estimator.Estimator(_tf1_model_fn(estimator), model_dir=model_dir, **kwargs)
    if kind == "tpu_estimator":
        return v1.tpu.TPUEstimator(
            _tf1_model_fn(v1.tpu, "TPUEstimatorSpec"),
            model_dir=model_dir,
            config=v1.tpu.RunConfig(model_dir=model_dir),
            use_tpu=False,
            train_batch_size=16,
            predict_batch_size=8,
            **kwargs,
        )
    if kind == "kmeans":
        return v1.experimental.KMeans(
            2, model_dir=model_dir, feature_columns=[x], mini_batch_steps_per_iteration=3, seed=3
        )
    if kind == "rnn":
        sequence = tf.feature_column.sequence_numeric_column("s")
        return estimator.experimental.RNNClassifier([sequence], units=[3], model_dir=model_dir)
    raise KeyError(kind)


def _tf1_model_fn(estimator, spec="EstimatorSpec"):
    """A TF1 model_fn as tf_upgrade_v2 leaves them: a partitioned get_variable, an
    embedding lookup, batch normalization, Adam (Momentum under TPUEstimator) and
    moving averages of the weights."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params=None):
        with v1.variable_scope("tower", partitioner=v1.fixed_size_partitioner(2)):
            w = v1.get_variable("w", [2, 4], initializer=v1.glorot_uniform_initializer(1))
            table = v1.get_variable("emb", [6, 4], initializer=v1.glorot_uniform_initializer(2))
        ids = tf.strings.to_hash_bucket_fast(features["c"], 6)
        hidden = tf.matmul(features["x"], w) + v1.nn.embedding_lookup(table, ids)
        hidden = v1.layers.batch_normalization(hidden, training=mode == "train", name="bn")
        logits = v1.layers.dense(
            tf.nn.relu(hidden), 1, name="out", kernel_initializer=v1.glorot_uniform_initializer(3)
        )
        if mode == "infer":
            return getattr(estimator, spec)(mode, predictions={"logits": logits})
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        optimizer = (
            v1.train.MomentumOptimizer(0.05, 0.9) if params else v1.train.AdamOptimizer(0.05)
        )
        with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss, v1.train.get_or_create_global_step())
        with tf.control_dependencies([train_op]):
            train_op = v1.train.ExponentialMovingAverage(0.9).apply(v1.trainable_variables())
        return getattr(estimator, spec)(mode, loss=loss, train_op=train_op)

    return model_fn


def train_input_fn(kind):
    """The whole data set as one batch, every step (tf.estimator 2.15's Baseline
    cannot take a dataset)."""
    if kind in KERAS_MODEL_KINDS:
        return keras_input_fn
    labels = TARGETS if kind.endswith("regressor") else CLASSES

    def input_fn(params=None):  # (TPUEstimator's input_fn takes params)
        features = _more_features(kind, {k: tf.constant(v) for k, v in FEATURES.items()})
        return features, None if kind == "kmeans" else tf.constant(labels)

    return input_fn


def _more_features(kind, features):
    if kind == "rnn":  # x as a sequence of two steps
        features["s"] = tf.sparse.from_dense(features["x"])
    return features


def predict_input_fn(kind=None):
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES).batch(8)
    return dataset.map(lambda features: _more_features(kind, features)) if kind else dataset


def predictions(model, kind):
    """The logits (classifiers), predictions (regressors) or distances to the centers
    (KMeans) of every example, as lists."""
    key = "predictions" if kind.endswith("regressor") else "logits"
    key = "all_distances" if kind == "kmeans" else key

    def input_fn(params=None):
        return predict_input_fn(kind)

    return [p[key].tolist() for p in model.predict(input_fn)]


def vocab_warm_start(estimator, sgd, linear_dir, work_dir):
    """Warm-starts "linear" with its vocabulary a, b, c remapped to c, a, z (+1 OOV bucket)
    from `linear_dir`, trains one step at learning rate 0 (`sgd` is the legacy SGD class),
    and returns the {name: weights} the warm start set."""
    old_vocab, new_vocab = f"{work_dir}/old_vocab.txt", f"{work_dir}/new_vocab.txt"
    for path, words in ((old_vocab, "abc"), (new_vocab, "caz")):
        with open(path, "w") as f:
            f.write("".join(w + "\n" for w in words))
    x, _, _ = columns()
    c = tf.feature_column.categorical_column_with_vocabulary_file("c", new_vocab, num_oov_buckets=1)
    name = "linear/linear_model/c/weights"
    settings = estimator.WarmStartSettings(
        linear_dir,
        var_name_to_vocab_info={name: estimator.VocabInfo(new_vocab, 3, 1, old_vocab)},
    )
    model = estimator.LinearClassifier(
        [x, c], model_dir=f"{work_dir}/warm", optimizer=sgd(0.0), warm_start_from=settings
    )
    model.train(train_input_fn("linear"), steps=1)
    names = (name, "linear/linear_model/x/weights", "linear/linear_model/bias_weights")
    return {n: model.get_variable_value(n).tolist() for n in names}


def keras_estimator(estimator, model_dir, kind=KERAS):
    """KERAS's (KERAS_TF1's) Estimator: a compiled Keras 2 model (tf.keras under 2.15,
    tf_keras here) over `x`, through `model_to_estimator` with its defaults."""
    if hasattr(estimator, "model_to_estimator"):  # (the kit's tf.estimator)
        import tf_keras as keras

        to_estimator = estimator.model_to_estimator
    else:
        keras = tf.keras
        to_estimator = keras.estimator.model_to_estimator
    inputs = keras.layers.Input(shape=(2,), name="x")
    hidden = keras.layers.Dense(3, activation="relu", kernel_initializer="ones", name="hidden")
    logits = keras.layers.Dense(1, kernel_initializer="ones", name="logits")
    model = keras.Model(inputs, logits(hidden(inputs)))
    tf1 = kind in (KERAS_TF1, KERAS_TF1_SAVER)
    adam = tf.compat.v1.train.AdamOptimizer if tf1 else keras.optimizers.legacy.Adam
    model.compile(
        optimizer=adam(0.05),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    checkpoint_format = "saver" if kind == KERAS_TF1_SAVER else "checkpoint"
    return to_estimator(keras_model=model, model_dir=model_dir, checkpoint_format=checkpoint_format)


def keras_input_fn():
    labels = CLASSES.reshape(-1, 1).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": FEATURES["x"]}, labels)).batch(16).repeat()


def keras_predictions(model):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": FEATURES["x"]}).batch(8)

    return [p["logits"].tolist() for p in model.predict(input_fn)]
