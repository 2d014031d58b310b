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
    return make[kind]()


def train_input_fn(kind):
    """The whole data set as one batch, every step (tf.estimator 2.15's Baseline
    cannot take a dataset)."""
    if kind in KERAS_MODEL_KINDS:
        return keras_input_fn
    labels = TARGETS if kind.endswith("regressor") else CLASSES

    def input_fn():
        return {k: tf.constant(v) for k, v in FEATURES.items()}, tf.constant(labels)

    return input_fn


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices(FEATURES).batch(8)


def predictions(model, kind):
    """The logits (classifiers) or predictions (regressors) of every example, as lists."""
    key = "predictions" if kind.endswith("regressor") else "logits"
    return [p[key].tolist() for p in model.predict(predict_input_fn)]


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
