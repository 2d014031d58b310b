"""StackOverflow's tf.estimator questions (and tensorflow/tensorflow's and
tensorflow/estimator's issues of the same kind), the asker's code and the answer's, after
`tf_upgrade_v2`, on tiny made-up data: what the asker saw (the error's type and first
line) and what the answer's code gives.

- `forgot_to_batch`: "Cannot reshape a tensor with 3 elements to shape [3,3]": an input_fn
  returning `Dataset.from_tensor_slices(...)` without `.batch()` to a `LinearClassifier`,
  a `tf.compat.v1.estimator.LinearRegressor` and a `DNNClassifier`, then the answer's
  `.batch(5)` (2.15's linear models failed on the features, in their layer's traced
  call; the kit's took the unbatched row as one example and failed on the labels' rank);
- `variable_values_by_name`: "how do I get the weights of my Estimator": a TF1 model_fn
  noting `v.name` of `tf.compat.v1.trainable_variables()`, then
  `get_variable_value(name)` with its `:0` (2.15 read it: TensorFlow's `load_variable`
  drops the `:0`; the kit's NotFoundError), a canned model's weights, a name not there;
- `dataset_made_outside_input_fn`: the dataset built in `main` and returned by a lambda,
  to a TF1 model_fn (first, and after a call that trained), a Keras-layer one and a
  canned estimator: 2.15's ValueError, by its own class name (the kit's was a subclass
  of its own, so a traceback named that), where the kit trained a TF1 model_fn on it
  (or, after a first call, failed capturing an eager tensor);
- `tpu_estimator_questions`: `TPUEstimator(use_tpu=False)` as askers got it wrong (a plain
  RunConfig, `batch_size` in params, a model_fn or input_fn without `params`, no
  `train_batch_size`, no eval or predict batch size, `eval_metric_ops` in a
  TPUEstimatorSpec) and as the answers set it (eval and predict batch sizes, `params
  ["batch_size"]` read in predictions);
- `input_helper_mix_ups`: `numpy_input_fn` given text with a None or a NaN among it
  (2.15's queue failed as training read it: `InternalError`; the kit refused the array
  when it made its tensor: a `ValueError`), lists, labels of objects; `pandas_input_fn`
  given an array (2.15 read its `index` first, and its columns only when input_fn was
  called), and a DataFrame changed after the input_fn was made (2.15 had copied it; the
  kit read it then too);
- `canned_input_mistakes`: the canned-estimator errors askers paste: features not a dict,
  a label past `n_classes`, string labels without a vocabulary, a feature key the
  columns lack, a categorical column given to a DNN, a hash bucket over integers, labels
  of another dimension, a TF1 optimizer given to a V2 class;
- `model_fn_mistakes`: a custom model_fn's: a LoggingTensorHook naming a tensor not
  there, a metric that is no `(value, update_op)` pair, no `train_op`, no `predictions`
  in PREDICT, a loss that is no scalar, a TPUEstimatorSpec returned to an Estimator,
  misnamed arguments (refused when the Estimator is made);
- `canned_loss_by_name`: a hook fetching a canned classifier's loss by 2.15's tensor name
  (`head/losses/weighted_loss/value` in a V2 class, `linear/head/weighted_loss/Sum` in a V1
  one) and listing the graph's `LOSSES` (the kit's V2 heads named it
  `head/weighted_loss/value`: a KeyError);
- `what_answers_print`: what answers print: a model_fn's tensors (`print(features)`),
  `"Test Accuracy: {acc:0.3f}".format(**evaluate(...))`, what `train()` returns, `next()`
  of `predict()`, `predict_keys` as a string, a `CheckpointSaverListener`'s calls,
  `train_and_evaluate`'s result.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (errors as [type, first line], keys, printed lines: equal) and
`close` values (models starting from zeros on unshuffled data: 1e-4).
`tests/test_stackoverflow.py` compares them with 2.15's recording
(`tests/tf215/record_family.py stackoverflow_programs`, into
`tests/data/tf215/stackoverflow.json`).
"""

import os
import re

import numpy as np

from tests.migrate_guide_programs import _listener
from tests.program_registry import registry

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "stackoverflow.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _refused(call):
    """[the error's own class name, its first line] (addresses and folders out), or
    ["OK"] when `call()` returned (a generator read to its end)."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except Exception as error:  # (any error is the record)
        first = str(error).splitlines()[0] if str(error) else ""
        first = re.sub(r" at 0x[0-9a-f]+", "", re.sub(r"/\S+/", "<dir>/", first))
        return [type(error).__name__, first[:300]]
    return ["OK"]


def _rows():
    r = np.random.RandomState(0)
    x = r.uniform(size=(20, 3)).astype(np.float32)
    return x, (x[:, 0] > 0.5).astype(np.int64)


def _input_fn(tf, x, y, batch=5):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(batch)


def _columns(tf):
    return [tf.feature_column.numeric_column("x", shape=[3])]


def _tf1_model_fn(features, labels, mode, params=None):
    """The layers tutorial's shape: dense logits from zeros, softmax, accuracy."""
    import tensorflow as tf

    logits = tf.compat.v1.layers.dense(
        features["x"], 2, name="logits", kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    probabilities = tf.nn.softmax(logits, name="softmax_tensor")
    classes = tf.argmax(logits, 1)
    predictions = {"classes": classes, "probabilities": probabilities}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    accuracy = tf.compat.v1.metrics.accuracy(labels, classes)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"acc": accuracy}
    )


def _reshape_refusal(call):
    """What the asker saw: [type, first line, the reshape's words (no op names)]."""
    try:
        call()
    except ValueError as error:
        said = re.search(
            r"Cannot reshape a tensor with \d+ elements to shape \[[\d,]+\]", str(error)
        )
        return [type(error).__name__, str(error).splitlines()[0], said and said.group(0)]
    return ["OK"]


@program
def forgot_to_batch(tf, workdir):
    x, y = _rows()
    unbatched = lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y))  # noqa: E731
    made = {
        "linear": lambda d: tf.estimator.LinearClassifier(_columns(tf), model_dir=d),
        "v1_linear_regressor": lambda d: tf.compat.v1.estimator.LinearRegressor(
            _columns(tf), model_dir=d
        ),
        "dnn": lambda d: tf.estimator.DNNClassifier([4], _columns(tf), model_dir=d),
    }
    exact, close = {}, {}
    for name, make in made.items():
        est = make(os.path.join(workdir, name))
        exact[name] = _reshape_refusal(lambda est=est: est.train(input_fn=unbatched, steps=2))
        if name != "dnn":  # (the answer: .batch(5); a DNN's start is drawn)
            est.train(input_fn=_input_fn(tf, x, y), steps=2)
            close[name] = float(est.evaluate(input_fn=_input_fn(tf, x, y))["loss"])
    return {"exact": exact, "close": close}


@program
def variable_values_by_name(tf, workdir):
    x, y = _rows()
    names = []

    def model_fn(features, labels, mode):
        spec = _tf1_model_fn(features, labels, mode)
        names[:] = [v.name for v in tf.compat.v1.trainable_variables()]
        return spec

    est = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, "custom"))
    est.train(input_fn=_input_fn(tf, x, y), steps=2)
    linear = tf.estimator.LinearRegressor(_columns(tf), model_dir=os.path.join(workdir, "linear"))
    linear.train(input_fn=_input_fn(tf, x, y.astype(np.float32)), steps=2)
    weights = "linear/linear_model/x/weights"
    return {
        "exact": {
            "names": names,
            "not_there": _refused(lambda: est.get_variable_value("logits/weights:0")),
            "shapes": [list(est.get_variable_value(n).shape) for n in names],
        },
        "close": {
            "custom": {n: est.get_variable_value(n).ravel().tolist() for n in names},
            "canned": linear.get_variable_value(weights + ":0").ravel().tolist(),
            "canned_bare": linear.get_variable_value(weights).ravel().tolist(),
        },
    }


def _keras_layer_model_fn(features, labels, mode):
    """A TF2-style model_fn: a Keras layer and optimizer, the train op by hand."""
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros")
    predictions = layer(features["x"])[:, 0]
    loss = tf.reduce_mean(tf.square(predictions - tf.cast(labels, tf.float32)))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    step = tf.compat.v1.train.get_global_step()
    train_op = optimizer.minimize(loss, step, var_list=layer.trainable_variables)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def dataset_made_outside_input_fn(tf, workdir):
    x, y = _rows()
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(5)  # (in main)
    outside = lambda: dataset  # noqa: E731
    folder = lambda name: os.path.join(workdir, name)  # noqa: E731
    custom = tf.estimator.Estimator(_tf1_model_fn, model_dir=folder("custom"))
    called = tf.estimator.Estimator(_tf1_model_fn, model_dir=folder("called"))
    called.train(input_fn=_input_fn(tf, x, y), steps=1)  # (a first call, as the answer's)
    keras = tf.estimator.Estimator(_keras_layer_model_fn, model_dir=folder("keras"))
    canned = tf.estimator.LinearClassifier(_columns(tf), model_dir=folder("canned"))
    return {
        "exact": {
            "custom": _refused(lambda: custom.train(input_fn=outside, steps=1)),
            "custom_after_a_first_call": _refused(lambda: called.train(input_fn=outside, steps=1)),
            "keras_layer_model_fn": _refused(lambda: keras.train(input_fn=outside, steps=1)),
            "canned": _refused(lambda: canned.train(input_fn=outside, steps=1)),
            "custom_files": sorted(os.listdir(folder("custom")))
            if os.path.isdir(folder("custom"))
            else None,
        }
    }


def _tpu_model_fn(features, labels, mode, params):
    import tensorflow as tf

    tpu = tf.compat.v1.estimator.tpu
    logits = tf.compat.v1.layers.dense(
        features["x"], 2, kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    if mode == tf.estimator.ModeKeys.PREDICT:
        size = tf.fill([tf.shape(logits)[0]], params["batch_size"])
        return tpu.TPUEstimatorSpec(mode, predictions={"logits": logits, "batch_size": size})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())

    def metric_fn(labels, logits):
        return {"acc": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    return tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits])
    )


def _tpu_mistakes(tf, workdir, tpu, made, train_input_fn):
    x, y = _rows()
    config = lambda name: tpu.RunConfig(model_dir=os.path.join(workdir, name))  # noqa: E731
    trained = made(config=config("trained"), train_batch_size=4)
    trained.train(train_input_fn, steps=1)
    predict_input_fn = lambda params: tf.data.Dataset.from_tensor_slices({"x": x[:4]}).batch(4)  # noqa: E731
    without_params = lambda features, labels, mode: _tpu_model_fn(features, labels, mode, {})  # noqa: E731
    return {
        "plain_run_config": _refused(lambda: made(config=tf.estimator.RunConfig())),
        "batch_size_in_params": _refused(
            lambda: made(config=config("p"), train_batch_size=4, params={"batch_size": 4})
        ),
        "model_fn_without_params": _refused(
            lambda: tpu.TPUEstimator(
                model_fn=without_params, use_tpu=False, train_batch_size=4, config=config("m")
            ).train(train_input_fn, steps=1)
        ),
        "input_fn_without_params": _refused(lambda: trained.train(_input_fn(tf, x, y, 4), steps=1)),
        "no_train_batch_size": _refused(
            lambda: made(config=config("n")).train(train_input_fn, steps=1)
        ),
        "no_predict_batch_size": _refused(lambda: trained.predict(predict_input_fn)),
        "no_eval_batch_size": _refused(lambda: trained.evaluate(train_input_fn, steps=1)),
        "eval_metric_ops_in_spec": _refused(
            lambda: tpu.TPUEstimatorSpec("eval", loss=tf.constant(1.0), eval_metric_ops={})
        ),
    }


@program
def tpu_estimator_questions(tf, workdir):
    x, y = _rows()
    tpu = tf.compat.v1.estimator.tpu

    def made(**kwargs):
        return tpu.TPUEstimator(model_fn=_tpu_model_fn, use_tpu=False, **kwargs)

    def train_input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    exact = _tpu_mistakes(tf, workdir, tpu, made, train_input_fn)
    answered = made(
        config=tpu.RunConfig(model_dir=os.path.join(workdir, "answer")),
        train_batch_size=4,
        eval_batch_size=5,
        predict_batch_size=2,
    )
    answered.train(train_input_fn, steps=3)
    result = answered.evaluate(train_input_fn, steps=2)

    def predict_input_fn(params):
        return tf.data.Dataset.from_tensor_slices({"x": x[:4]}).batch(params["batch_size"])

    predictions = list(answered.predict(predict_input_fn))
    exact["answer"] = {
        "evaluate": sorted(result),
        "global_step": int(result["global_step"]),
        "predictions": len(predictions),
        "batch_size": [int(p["batch_size"]) for p in predictions],
    }
    close = {k: float(v) for k, v in result.items() if k != "global_step"}
    close["logits"] = [p["logits"].tolist() for p in predictions]
    return {"exact": exact, "close": close}


def _canned_trained_on(tf, workdir, name, est, features, labels):
    path = os.path.join(workdir, name)
    input_fn = lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(5)  # noqa: E731
    return _refused(lambda: est(path).train(input_fn=input_fn, steps=1))


@program
def canned_input_mistakes(tf, workdir):
    x, y = _rows()
    fc = tf.feature_column
    words = fc.categorical_column_with_vocabulary_list("k", ["a", "b"])
    hashed = fc.categorical_column_with_hash_bucket("k", 10)
    linear = lambda d, cols=None, **kw: tf.estimator.LinearClassifier(  # noqa: E731
        cols or _columns(tf), model_dir=d, **kw
    )

    def dnn(cols, **kw):
        return lambda d: tf.estimator.DNNClassifier([4], cols, model_dir=d, **kw)

    proximal = tf.compat.v1.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.001)
    cases = {
        "features_not_a_dict": (linear, x, y),
        "label_past_n_classes": (dnn(_columns(tf)), {"x": x}, y + 1),
        "string_labels_without_vocabulary": (linear, {"x": x}, np.array(["no", "yes"])[y]),
        "feature_key_the_columns_lack": (dnn(_columns(tf)), {"X": x}, y),
        "categorical_column_to_a_dnn": (dnn([words]), {"k": np.array(["a", "b"] * 10)}, y),
        "hash_bucket_over_integers": (
            lambda d: linear(d, [hashed]),
            {"k": np.arange(20)},
            y,
        ),
        "labels_of_another_dimension": (
            lambda d: tf.estimator.DNNRegressor([3], _columns(tf), label_dimension=2, model_dir=d),
            {"x": x},
            x[:, 0],
        ),
        "tf1_optimizer_to_a_v2_class": (dnn(_columns(tf), optimizer=proximal), {"x": x}, y),
    }
    exact = {name: _canned_trained_on(tf, workdir, name, *case) for name, case in cases.items()}
    exact["n_classes_of_one"] = _refused(lambda: dnn(_columns(tf), n_classes=1)(None))
    return {"exact": exact}


def _pandas_mix_ups(tf, workdir, x, y):
    import pandas as pd

    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1]})
    columns = [tf.feature_column.numeric_column(k) for k in "ab"]
    est = tf.estimator.LinearRegressor(columns, model_dir=os.path.join(workdir, "pandas"))
    made = pandas_input_fn(x=frame, y=pd.Series(x[:, 2]), shuffle=False, batch_size=5)
    frame["a"] = 0.0  # (a later cell changes the frame; 2.15's input_fn had copied it)
    est.train(made)
    return {
        "exact": {
            "array_with_series": _refused(
                lambda: pandas_input_fn(x=x, y=pd.Series(y), shuffle=False)
            ),
            "array_alone": _refused(lambda: est.train(pandas_input_fn(x=x, shuffle=False))),
        },
        "close": est.get_variable_value("linear/linear_model/a/weights").ravel().tolist(),
    }


@program
def input_helper_mix_ups(tf, workdir):
    x, y = _rows()
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    words = tf.feature_column.categorical_column_with_vocabulary_list("s", ["a", "b"])
    est = tf.estimator.LinearClassifier([words], model_dir=os.path.join(workdir, "words"))
    cases = {
        "none_among_words": {"s": np.array(["a", "b", None, "a"] * 5, dtype=object)},
        "nan_among_words": {"s": np.array(["a", np.nan, "b", "a"] * 5, dtype=object)},
        "words_as_a_list": {"s": ["a", "b", "a", "b"] * 5},
    }
    exact = {
        name: _refused(
            lambda features=features: est.train(numpy_input_fn(x=features, y=y, shuffle=False))
        )
        for name, features in cases.items()
    }
    exact["labels_as_a_list"] = _refused(
        lambda: est.train(numpy_input_fn(x=cases["none_among_words"], y=list(y), shuffle=False))
    )
    labels_of_objects = y.astype(object)
    exact["labels_of_objects"] = _refused(
        lambda: est.train(
            numpy_input_fn(x={"s": np.array(["a", "b"] * 10)}, y=labels_of_objects, shuffle=False)
        )
    )
    pandas = _pandas_mix_ups(tf, workdir, x, y)
    exact.update(pandas["exact"])
    return {"exact": exact, "close": {"pandas_weights": pandas["close"]}}


def _spec_changed(tf, **changes):
    """The tutorial model_fn with its spec's fields changed in each mode (`changes`:
    {field: a function of the spec's}), as the askers' model_fns had them."""

    def model_fn(features, labels, mode):
        spec = _tf1_model_fn(features, labels, mode)
        return spec._replace(**{k: change(spec, mode) for k, change in changes.items()})

    return model_fn


def _tpu_spec_model_fn(features, labels, mode, params):
    import tensorflow as tf

    spec = _tf1_model_fn(features, labels, mode)
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op)


@program
def model_fn_mistakes(tf, workdir):
    x, y = _rows()
    input_fn = _input_fn(tf, x, y)
    vector_loss = lambda spec, mode: tf.reshape(spec.loss, [1]) * tf.ones([2])  # noqa: E731
    model_fns = {
        "metric_not_a_pair": _spec_changed(
            tf,
            eval_metric_ops=lambda spec, mode: (
                {"acc": spec.loss} if spec.loss is not None else None
            ),
        ),
        "no_train_op": _spec_changed(tf, train_op=lambda spec, mode: None),
        "loss_not_a_scalar": _spec_changed(
            tf, loss=lambda spec, mode: None if spec.loss is None else vector_loss(spec, mode)
        ),
        "tpu_spec_to_an_estimator": _tpu_spec_model_fn,
    }
    exact = {}
    for name, model_fn in model_fns.items():
        est = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, name))
        exact[name] = {
            "train": _refused(lambda est=est: est.train(input_fn=input_fn, steps=1)),
            "evaluate": _refused(lambda est=est: est.evaluate(input_fn=input_fn)),
        }
    exact["misnamed_arguments"] = _refused(
        lambda: tf.estimator.Estimator(lambda feature, label, mode: None)
    )
    est = tf.estimator.Estimator(_tf1_model_fn, model_dir=os.path.join(workdir, "hooked"))
    hook = tf.estimator.LoggingTensorHook({"p": "softmax"}, every_n_iter=1)
    exact["hook_naming_no_tensor"] = _refused(lambda: est.train(input_fn, steps=1, hooks=[hook]))
    no_predictions = tf.estimator.Estimator(
        _spec_changed(tf, predictions=lambda spec, mode: None),
        model_dir=est.model_dir,
    )
    exact["no_predictions"] = _refused(
        lambda: no_predictions.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(5)
        )
    )
    return {"exact": exact}


def _printing_model_fn(printed):
    def model_fn(features, labels, mode):
        printed.append(f"{mode}: {features['x']!r} {labels!r}")
        spec = _tf1_model_fn(features, labels, mode)
        printed.append(f"{mode}: {spec.loss!r} {spec.train_op!r}")
        return spec

    return model_fn


@program
def what_answers_print(tf, workdir):
    x, y = _rows()
    input_fn, printed, seen = _input_fn(tf, x, y), [], []
    est = tf.estimator.Estimator(_printing_model_fn(printed), model_dir=os.path.join(workdir, "m"))
    returned = est.train(input_fn=input_fn, steps=4, saving_listeners=[_listener(tf, seen)])
    result = est.evaluate(input_fn=input_fn)
    predictions = est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:3]}).batch(3))
    first = next(predictions)
    canned = tf.estimator.LinearClassifier(_columns(tf), model_dir=os.path.join(workdir, "c"))
    both = tf.estimator.train_and_evaluate(
        canned,
        tf.estimator.TrainSpec(input_fn, max_steps=3),
        tf.estimator.EvalSpec(input_fn, steps=None, throttle_secs=0),
    )
    keyed = next(canned.predict(input_fn, predict_keys="probabilities"))
    return {
        "exact": {
            "printed": printed,
            "formatted": "Test Accuracy: {acc:0.3f}".format(**result),
            "evaluate": {k: type(v).__name__ for k, v in result.items()},
            "train_returned_the_estimator": returned is est,
            "first_prediction": {k: [type(v).__name__, str(v.dtype)] for k, v in first.items()},
            "rest": len(list(predictions)),
            "listener": seen,
            "train_and_evaluate": [type(both).__name__, sorted(both[0]), both[1]],
            "predict_keys_string": sorted(keyed),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in result.items()},
            "first": first["probabilities"].tolist(),
            "canned": {k: float(v) for k, v in both[0].items()},
        },
    }


def _losses_seen(tf, seen):
    """A hook noting the graph's LOSSES collection's tensor names, as askers list them."""

    class LossesHook(tf.estimator.SessionRunHook):
        def begin(self):
            losses = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES)
            seen.append([t.name for t in losses])

    return LossesHook()


@program
def canned_loss_by_name(tf, workdir):
    x, y = _rows()
    input_fn = _input_fn(tf, x, y)
    made = {
        "linear": (tf.estimator.LinearClassifier, "head/losses/weighted_loss/value"),
        "v1_linear": (tf.compat.v1.estimator.LinearClassifier, "linear/head/weighted_loss/Sum"),
    }
    exact, close = {}, {}
    for name, (make, tensor) in made.items():
        est, seen = make(_columns(tf), model_dir=os.path.join(workdir, name)), []
        logged = tf.estimator.LoggingTensorHook({"loss": tensor}, every_n_iter=1)
        est.train(input_fn, steps=2, hooks=[_losses_seen(tf, seen), logged])
        exact[name] = seen
        close[name] = float(est.evaluate(input_fn)["loss"])
    return {"exact": exact, "close": close}
