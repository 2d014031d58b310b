"""Keras models and layers inside a `model_fn`, in the shape of TF2-era public samples.

Each program takes the estimator module (`tf.estimator` under TF 2.15, this kit's under
TF 2.21) and a fresh folder, trains a few steps and returns the checkpoint's variable
names (`get_variable_names()`): the names a model_dir is restored and warm-started by.
`tests/tf215/record_keras_model_fn.py` recorded them under tf.estimator 2.15 into
`tests/data/tf215/keras_model_fn.json`, with a model_dir 2.15 trained
(`tests/data/tf215/keras_model_fn_model/`); `tests/test_estimator_keras_model_fn.py`
runs them here and compares.
"""

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
_rng = np.random.RandomState(3)
X = _rng.randn(24, 4).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1).astype(np.int64)
TRAIN_STEPS = 6
MORE_STEPS = 4


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(8)


def _two_layers():
    return [tf.keras.layers.Dense(10, activation="relu"), tf.keras.layers.Dense(3)]


def _sequential(features):
    model = tf.keras.Sequential(_two_layers())
    return model(features["x"]), [model]


def _sequential_on_input_layer(features):
    column = tf.feature_column.numeric_column("x", shape=[4])
    inputs = v1.feature_column.input_layer(features, [column])
    model = tf.keras.Sequential(_two_layers())
    return model(inputs), [model]


def _functional(features):
    inputs = tf.keras.Input(shape=(4,))
    hidden = tf.keras.layers.Dense(10, activation="relu")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(3)(hidden))
    return model(features["x"]), [model]


class _Subclassed(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(10, activation="relu")
        self.out = tf.keras.layers.Dense(3)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


def _subclassed(features):
    model = _Subclassed()
    return model(features["x"]), [model]


def _bare_layers(features):
    hidden, out = tf.keras.layers.Dense(10, activation="relu"), tf.keras.layers.Dense(3)
    return out(hidden(features["x"])), [hidden, out]


def _two_models(features):
    encoder = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="relu")])
    head = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    return head(encoder(features["x"])), [encoder, head]


def _built_twice(features):
    """A builder called twice in one model_fn: the second model is `sequential_1`."""
    first, second = tf.keras.Sequential(_two_layers()), tf.keras.Sequential(_two_layers())
    return first(features["x"]) + second(features["x"]), [first, second]


def _v1_adam(loss, variables, tape):
    del variables, tape
    return v1.train.AdamOptimizer(0.05).minimize(loss, global_step=v1.train.get_global_step())


def _keras_adam(loss, variables, tape, optimizer_class=None):
    # (In 2.15's graph this Adam's updates ran in no op of the step: it trained nothing.)
    optimizer = (optimizer_class or tf.keras.optimizers.Adam)(0.05)
    step = optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
    # tf.estimator 2.15 stopped on the global step, which a Keras optimizer leaves
    # alone; the kit's TF2 path counts the step itself (and has no TF1 global step).
    global_step = v1.train.get_global_step()
    return step if global_step is None else tf.group(step, v1.assign_add(global_step, 1))


def _model_fn(est, logits_of, minimize):
    def model_fn(features, labels, mode):
        with tf.GradientTape() as tape:
            logits, keras_objects = logits_of(features)
            loss = None
            if mode != est.ModeKeys.PREDICT:
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
                )
        predictions = {"logits": logits}
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions=predictions)
        train_op = None
        if mode == est.ModeKeys.TRAIN:
            variables = [v for o in keras_objects for v in o.trainable_variables]
            train_op = minimize(loss, variables, tape)
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)

    return model_fn


MODELS = {
    "sequential": _sequential,
    "sequential_on_input_layer": _sequential_on_input_layer,
    "functional": _functional,
    "subclassed": _subclassed,
    "bare_layers": _bare_layers,
    "two_models": _two_models,
    "built_twice": _built_twice,
}


def _keras_legacy_adam(loss, variables, tape):
    return _keras_adam(loss, variables, tape, tf.keras.optimizers.legacy.Adam)


OPTIMIZERS = {
    "v1_adam": _v1_adam,
    "keras_adam": _keras_adam,
    "keras_legacy_adam": _keras_legacy_adam,
}


def estimator_for(est, model, optimizer, model_dir, **kwargs):
    return est.Estimator(_model_fn(est, MODELS[model], OPTIMIZERS[optimizer]), model_dir, **kwargs)


def variable_names(est, workdir):
    """{model/optimizer: the variable names after training}, every pair."""
    names = {}
    for model in MODELS:
        for optimizer in OPTIMIZERS:
            case = f"{model}/{optimizer}"
            trained = estimator_for(est, model, optimizer, f"{workdir}/{model}_{optimizer}")
            trained.train(train_input_fn, steps=2)
            names[case] = trained.get_variable_names()
    return names


def logits(model):
    return [p["logits"].tolist() for p in model.predict(predict_input_fn)]


# The model_dir 2.15 trains and both sides resume: the TF2-era sample's shape.
CHECKPOINTED = ("sequential_on_input_layer", "keras_legacy_adam")


def resume(est, model_dir, hooks=None):
    """Logits in `model_dir`, then the global step and logits after MORE_STEPS more."""
    model = estimator_for(est, *CHECKPOINTED, model_dir)
    before = logits(model)
    model.train(train_input_fn, steps=MORE_STEPS, hooks=hooks)
    return {
        "before": before,
        "after": logits(model),
        "global_step": int(model.get_variable_value("global_step")),
    }
