"""Programs that import tf.estimator 2.15's objects by the package's internal module paths,
as public code does (`from tensorflow_estimator.python.estimator.canned import
metric_keys`, `...tpu import tpu_estimator`, `...head import binary_class_head`, `...export
import export_lib`, TF 2.15's `tensorflow.python.estimator...` stubs of them), then uses them:

- `names_by_module`: each module's public names (tf.estimator's and tf.compat.v1.estimator's
  objects and string constants): which public names each one is; MetricKeys and
  PredictionKeys by their keys;
- `head_model_fn_estimator`: a TF1 model_fn handing its logits to `binary_class_head.BinaryClassHead`,
  a V1 Estimator from `estimator`, `numpy_io` input, a SessionRunHook from
  `hooks.session_run_hook`; evaluate's metrics and predict's outputs looked up by
  MetricKeys and PredictionKeys, an export through `export_lib`'s parsing receiver;
- `tpu_estimator_on_cpu`: `tpu_estimator.TPUEstimator` with `use_tpu=False` on
  `tpu_config`'s RunConfig and TPUConfig, its `TPUEstimatorSpec`'s eval_metrics keyed by
  MetricKeys, predictions by PredictionKeys;
- `dnn_logit_fn_model_fn`: `canned.dnn`'s `dnn_logit_fn_builder` in a model_fn with
  `multi_class_head`'s head: variables, summary tags, metric and prediction keys.
- `estimator_subclass_overrides`: Estimator subclasses redefining its methods, which 2.15
  allowed only once `_assert_members_are_not_overridden` did nothing (the subclass's own, or
  patched on tf.estimator.Estimator as AdaNet and Horovod did), and the ones it refused.
- `call_model_fn_overridden_and_called`: `_call_model_fn(features, labels, mode, config)`
  overridden so (a TF1 model_fn's Estimator, a canned class), and called in a program's graph.
- `estimator_private_attributes`: `_warm_start_settings` read and set, `_train_distribution`,
  `_eval_distribution` and `_device_fn` read.
- `latest_checkpoint_overridden`: a subclass's own `latest_checkpoint`, asked by exports alone.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_internal_imports.py` with what `tests/tf215/record_family.py
internal_import_programs` recorded under tf.estimator 2.15
(`tests/data/tf215/internal_imports.json`). Weights start from constants and no input is
shuffled, so values match to 1e-4.
"""

import importlib
import os

import numpy as np

from tests.program_registry import registry
from tests.tutorial_programs import DATA_DIR, event_tags, signatures

RECORDED = os.path.join(DATA_DIR, "internal_imports.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

PACKAGE = "tensorflow_estimator.python.estimator"
STUBS = "tensorflow.python.estimator"
# The modules public code imports most, under 2.15's package.
MODULES = (
    "estimator",
    "estimator_lib",
    "model_fn",
    "mode_keys",
    "run_config",
    "training",
    "exporter",
    "early_stopping",
    "extenders",
    "export.export",
    "export.export_lib",
    "export.export_output",
    "inputs.inputs",
    "inputs.numpy_io",
    "inputs.pandas_io",
    "canned.dnn",
    "canned.linear",
    "canned.dnn_linear_combined",
    "canned.baseline",
    "canned.parsing_utils",
    "canned.kmeans",
    "canned.rnn",
    "head.base_head",
    "head.binary_class_head",
    "head.multi_class_head",
    "head.multi_label_head",
    "head.multi_head",
    "head.regression_head",
    "hooks.hooks",
    "hooks.session_run_hook",
    "hooks.basic_session_run_hooks",
    "tpu.tpu_estimator",
    "tpu.tpu_config",
)
# TF 2.15's stubs of 2.15's modules that public code imports from there.
STUB_MODULES = (
    "estimator_lib",
    "canned.metric_keys",
    "canned.prediction_keys",
    "canned.parsing_utils",
    "export.export_lib",
)
X = np.array([[1.0, 0.5], [-1.0, 0.2], [0.3, -0.8], [-0.6, -0.1]] * 2, dtype=np.float32)
Y = np.array([[1], [0], [1], [0], [0], [0], [1], [1]], dtype=np.int64)


def _public_paths(tf):
    """{id(object): [its public names]} over tf.estimator's and tf.compat.v1.estimator's
    namespaces."""
    v2, v1 = tf.estimator, tf.compat.v1.estimator
    namespaces = {
        "tf.estimator": v2,
        "tf.estimator.export": v2.export,
        "tf.estimator.experimental": v2.experimental,
        "tf.compat.v1.estimator": v1,
        "tf.compat.v1.estimator.export": v1.export,
        "tf.compat.v1.estimator.experimental": v1.experimental,
        "tf.compat.v1.estimator.inputs": v1.inputs,
        "tf.compat.v1.estimator.tpu": v1.tpu,
        "tf.compat.v1.estimator.tpu.experimental": v1.tpu.experimental,
    }
    paths = {}
    for place, namespace in namespaces.items():
        for name in dir(namespace):
            value = getattr(namespace, name, None) if not name.startswith("_") else None
            if value is not None and not isinstance(value, type(os)):
                paths.setdefault(id(value), []).append(f"{place}.{name}")
    return paths


def _names(module, paths):
    """{name: its public names, or the string it is} of a module's public names."""
    found = {}
    for name in dir(module):
        value = getattr(module, name) if not name.startswith("_") else None
        if isinstance(value, str):
            found[name] = value
        elif id(value) in paths:
            found[name] = sorted(paths[id(value)])
    return found


def _keys(keys_class):
    return {k: v for k, v in vars(keys_class).items() if k.isupper()}


@program
def names_by_module(tf, workdir):
    paths = _public_paths(tf)
    names = {m: _names(importlib.import_module(f"{PACKAGE}.{m}"), paths) for m in MODULES}
    stubs = {m: _names(importlib.import_module(f"{STUBS}.{m}"), paths) for m in STUB_MODULES}
    from tensorflow.python.estimator.canned import metric_keys as stub_metric_keys
    from tensorflow_estimator.python.estimator.canned import metric_keys, prediction_keys

    keys = {
        "MetricKeys": _keys(metric_keys.MetricKeys),
        "PredictionKeys": _keys(prediction_keys.PredictionKeys),
        "stub's MetricKeys is the same": stub_metric_keys.MetricKeys is metric_keys.MetricKeys,
    }
    return {"exact": {"names": names, "stubs": stubs, "keys": keys}, "close": {}}


def _numpy_input(tf, shuffle=False, num_epochs=None):
    from tensorflow_estimator.python.estimator.inputs import numpy_io

    return numpy_io.numpy_input_fn(
        {"x": X}, Y, batch_size=4, num_epochs=num_epochs, shuffle=shuffle
    )


def _dense(tf, net, units, name):
    v1 = tf.compat.v1
    return v1.layers.dense(
        net,
        units,
        kernel_initializer=v1.constant_initializer(0.3),
        bias_initializer=v1.constant_initializer(0.1),
        name=name,
    )


def head_model_fn(features, labels, mode, params):
    """A TF1 model_fn with 2.15's head by its module path; ModeKeys from `mode_keys`."""
    import tensorflow as tf
    from tensorflow_estimator.python.estimator.head import binary_class_head
    from tensorflow_estimator.python.estimator.mode_keys import ModeKeys

    v1 = tf.compat.v1
    net = v1.feature_column.input_layer(features, params["columns"])
    logits = _dense(tf, net, 1, "logits")
    head = binary_class_head.BinaryClassHead(thresholds=[0.3])

    def train_op_fn(loss):
        assert mode == ModeKeys.TRAIN
        return v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step()
        )

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


@program
def head_model_fn_estimator(tf, workdir):
    from tensorflow_estimator.python.estimator import estimator as estimator_lib
    from tensorflow_estimator.python.estimator import run_config
    from tensorflow_estimator.python.estimator.canned import metric_keys, prediction_keys
    from tensorflow_estimator.python.estimator.export import export_lib
    from tensorflow_estimator.python.estimator.hooks import session_run_hook

    class StepCounter(session_run_hook.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1

    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    est = estimator_lib.Estimator(
        head_model_fn,
        model_dir=os.path.join(workdir, "model"),
        config=run_config.RunConfig(tf_random_seed=1),
        params={"columns": columns},
    )
    counter = StepCounter()
    est.train(_numpy_input(tf), steps=3, hooks=[counter])
    metrics = est.evaluate(_numpy_input(tf, num_epochs=1))
    keys = metric_keys.MetricKeys
    looked_up = (
        keys.LOSS, keys.LOSS_MEAN, keys.ACCURACY, keys.PRECISION, keys.RECALL, keys.AUC,
        keys.AUC_PR, keys.LABEL_MEAN, keys.PREDICTION_MEAN, keys.ACCURACY_BASELINE,
        keys.ACCURACY_AT_THRESHOLD % 0.3, keys.PRECISION_AT_THRESHOLD % 0.3,
        keys.RECALL_AT_THRESHOLD % 0.3,
    )  # fmt: skip
    predictions = list(est.predict(_numpy_input(tf, num_epochs=1)))
    by_key = prediction_keys.PredictionKeys
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = est.export_saved_model(
        os.path.join(workdir, "export"), export_lib.build_parsing_serving_input_receiver_fn(spec)
    )
    return {
        "exact": {
            "hook_runs": counter.runs,
            "metric_keys": sorted(metrics),
            "prediction_keys": sorted(predictions[0]),
            "class_ids": [int(p[by_key.CLASS_IDS][0]) for p in predictions],
            "signatures": signatures(os.fsdecode(export_dir)),
        },
        "close": {
            "metrics": {key: float(metrics[key]) for key in looked_up},
            "probabilities": [p[by_key.PROBABILITIES].tolist() for p in predictions],
            "logistic": [float(p[by_key.LOGISTIC][0]) for p in predictions],
            "logits": [float(p[by_key.LOGITS][0]) for p in predictions],
        },
    }


def tpu_model_fn(features, labels, mode, params):
    """A TPUEstimator model_fn: TPUEstimatorSpec, eval_metrics keyed by MetricKeys."""
    import tensorflow as tf
    from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
    from tensorflow_estimator.python.estimator.canned import metric_keys, prediction_keys
    from tensorflow_estimator.python.estimator.tpu import tpu_estimator

    v1 = tf.compat.v1
    predictions = tf.squeeze(_dense(tf, features["x"], 1, "dense"), -1)
    if mode == model_fn_lib.ModeKeys.PREDICT:
        return tpu_estimator.TPUEstimatorSpec(
            mode, predictions={prediction_keys.PredictionKeys.PREDICTIONS: predictions}
        )
    labels = tf.cast(tf.squeeze(labels, -1), tf.float32)
    loss = v1.losses.mean_squared_error(labels, predictions)

    def metric_fn(labels, predictions):
        keys = metric_keys.MetricKeys
        return {
            keys.LABEL_MEAN: v1.metrics.mean(labels),
            keys.PREDICTION_MEAN: v1.metrics.mean(predictions),
        }

    train_op = None
    if mode == model_fn_lib.ModeKeys.TRAIN:
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step()
        )
    return tpu_estimator.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, predictions])
    )


def _tpu_input(tf, repeat):
    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return (dataset.repeat() if repeat else dataset).batch(
            params["batch_size"], drop_remainder=True
        )

    return input_fn


@program
def tpu_estimator_on_cpu(tf, workdir):
    from tensorflow_estimator.python.estimator.canned import prediction_keys
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_estimator

    config = tpu_config.RunConfig(
        model_dir=os.path.join(workdir, "model"),
        tpu_config=tpu_config.TPUConfig(
            iterations_per_loop=2,
            per_host_input_for_training=tpu_config.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    est = tpu_estimator.TPUEstimator(
        model_fn=tpu_model_fn,
        config=config,
        use_tpu=False,
        train_batch_size=4,
        eval_batch_size=4,
        predict_batch_size=4,
    )
    est.train(_tpu_input(tf, True), max_steps=4)
    metrics = est.evaluate(_tpu_input(tf, False), steps=2)
    key = prediction_keys.PredictionKeys.PREDICTIONS
    predictions = [p[key] for p in est.predict(_tpu_input(tf, False))]
    return {
        "exact": {"metric_keys": sorted(metrics), "global_step": int(metrics["global_step"])},
        "close": {
            "metrics": {k: float(v) for k, v in metrics.items() if k != "global_step"},
            "predictions": [float(p) for p in predictions],
        },
    }


def logit_fn_model_fn(features, labels, mode, params):
    """A model_fn over `canned.dnn`'s dnn_logit_fn_builder, with 2.15's multi-class head."""
    import tensorflow as tf
    from tensorflow_estimator.python.estimator.canned.dnn import dnn_logit_fn_builder
    from tensorflow_estimator.python.estimator.head import multi_class_head

    v1 = tf.compat.v1
    logit_fn = dnn_logit_fn_builder(
        units=3,
        hidden_units=[4, 3],
        feature_columns=params["columns"],
        activation_fn=tf.nn.relu,
        dropout=None,
        input_layer_partitioner=None,
        batch_norm=False,
    )
    logits = logit_fn(features=features, mode=mode)

    def train_op_fn(loss):
        return v1.train.AdagradOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())

    head = multi_class_head.MultiClassHead(3)
    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


@program
def dnn_logit_fn_model_fn(tf, workdir):
    from tensorflow_estimator.python.estimator import estimator as estimator_lib

    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    est = estimator_lib.Estimator(
        logit_fn_model_fn, model_dir=os.path.join(workdir, "model"), params={"columns": columns}
    )
    est.train(_numpy_input(tf), steps=2)
    metrics = est.evaluate(_numpy_input(tf, num_epochs=1))
    prediction = next(iter(est.predict(_numpy_input(tf, num_epochs=1))))
    return {
        "exact": {
            "variables": {
                name: list(tf.train.load_variable(est.model_dir, name).shape)
                for name in est.get_variable_names()
            },
            "train_tags": sorted(event_tags(est.model_dir)),
            "metric_keys": sorted(metrics),
            "prediction_keys": sorted(prediction),
            "prediction_shapes": {k: list(np.shape(v)) for k, v in sorted(prediction.items())},
        },
        "close": {},
    }


def _type_name(value):
    return type(value).__name__


@program
def read_eval_metrics_types(tf, workdir):
    """Public code picks a checkpoint from `early_stopping.read_eval_metrics(eval_dir)`:
    2.15 gave an OrderedDict of int steps to dicts of Python floats (json.dumps takes them)."""
    from tensorflow_estimator.python.estimator import early_stopping

    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.LinearClassifier(columns, model_dir=os.path.join(workdir, "model"))
    for _ in range(2):
        est.train(_numpy_input(tf), steps=2)
        est.evaluate(_numpy_input(tf, num_epochs=1))
    read = early_stopping.read_eval_metrics(est.eval_dir())
    return {
        "exact": {
            "type": _type_name(read),
            "steps": [[step, _type_name(step)] for step in read],
            "metrics": {
                str(step): [[k, _type_name(v)] for k, v in sorted(metrics.items())]
                for step, metrics in read.items()
            },
        },
        "close": {f"{step}/{k}": v for step, metrics in read.items() for k, v in metrics.items()},
    }


def _linear_model_fn(features, labels, mode):
    """A TF1 model_fn of one linear layer from zeros, for the subclasses below."""
    import tensorflow as tf

    v1 = tf.compat.v1
    w = v1.get_variable("w", [2, 1], initializer=v1.zeros_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred})
    loss = v1.losses.mean_squared_error(tf.cast(labels, tf.float32), pred)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _error(make):
    try:
        make()
    except Exception as e:  # (what the user sees: type and first line)
        return [type(e).__name__, str(e).splitlines()[0]]
    return None


@program
def estimator_subclass_overrides(tf, workdir):
    """Estimator subclasses as libraries wrote them for 2.15, which refused a subclass
    redefining its members unless `_assert_members_are_not_overridden` was made to do
    nothing: by the subclass (a team's logging Estimator), or on tf.estimator.Estimator
    itself (AdaNet's and Horovod's Estimators); a class named TPUEstimator passed."""
    calls = []
    folder = iter(os.path.join(workdir, f"model{i}") for i in range(9))

    class Logged(tf.estimator.Estimator):
        def _assert_members_are_not_overridden(self):
            pass

        def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
            calls.append(["train", steps])
            return super().train(input_fn, hooks, steps, max_steps, saving_listeners)

        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
            calls.append(["evaluate", steps])
            return super().evaluate(input_fn, steps, hooks, checkpoint_path, name)

    logged = Logged(_linear_model_fn, next(folder))
    logged.train(_numpy_input(tf), steps=3)
    results = logged.evaluate(_numpy_input(tf, num_epochs=1))
    saved = tf.estimator.Estimator.__dict__.get("_assert_members_are_not_overridden")
    tf.estimator.Estimator._assert_members_are_not_overridden = staticmethod(lambda _: None)
    try:

        class Patched(tf.estimator.Estimator):
            def train(self, input_fn, **kwargs):
                calls.append(["patched train", kwargs])
                return super().train(input_fn, **kwargs)

        patched = Patched(_linear_model_fn, next(folder))
        patched.train(_numpy_input(tf), steps=2)
    finally:
        if saved is None:
            del tf.estimator.Estimator._assert_members_are_not_overridden
        else:
            tf.estimator.Estimator._assert_members_are_not_overridden = saved

    class TPUEstimator(tf.estimator.Estimator):
        def get_variable_names(self):
            calls.append(["get_variable_names"])
            return super().get_variable_names()

    class Unpatched(tf.estimator.Estimator):
        def train(self, input_fn, **kwargs):
            return super().train(input_fn, **kwargs)

    class OwnModelFnCall(tf.estimator.Estimator):
        def _call_model_fn(self, features, labels, mode, config):
            return super()._call_model_fn(features, labels, mode, config)

    class V1OwnTrainModel(tf.compat.v1.estimator.Estimator):
        def _train_model(self, input_fn, hooks, saving_listeners):
            return None

    class Linear(tf.estimator.LinearRegressor):
        def __init__(self, feature_columns, model_dir):
            super().__init__(feature_columns, model_dir=model_dir)

        def export_saved_model(self, export_dir_base, serving_input_receiver_fn, **kwargs):
            return super().export_saved_model(export_dir_base, serving_input_receiver_fn)

    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    refused = {
        "TPUEstimator": _error(lambda: TPUEstimator(_linear_model_fn, next(folder))),
        "train after the patch is undone": _error(lambda: Unpatched(_linear_model_fn)),
        "_call_model_fn": _error(lambda: OwnModelFnCall(_linear_model_fn)),
        "V1 _train_model": _error(lambda: V1OwnTrainModel(_linear_model_fn)),
        "canned export_saved_model": _error(lambda: Linear(columns, next(folder))),
    }
    return {
        "exact": {"calls": calls, "refused": refused, "results": sorted(results)},
        "close": {
            "loss": float(results["loss"]),
            "patched w": patched.get_variable_value("w").tolist(),
        },
    }


@program
def call_model_fn_overridden_and_called(tf, workdir):
    """`_call_model_fn(features, labels, mode, config)`, 2.15's private method: overridden
    by subclasses that allow it (a TF1 model_fn's Estimator, a canned LinearRegressor), each
    call seen with its mode and config, and called by a program in its own graph."""
    calls = []

    def seen(cls, label):
        class Seen(cls):
            def _assert_members_are_not_overridden(self):
                pass

            def _call_model_fn(self, features, labels, mode, config):
                calls.append([label, mode, type(config).__name__, sorted(features)])
                return super()._call_model_fn(features, labels, mode, config)

        return Seen

    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    own = seen(tf.estimator.Estimator, "own")(_linear_model_fn, os.path.join(workdir, "own"))
    canned = seen(tf.estimator.LinearRegressor, "canned")(
        columns, model_dir=os.path.join(workdir, "lin")
    )
    close = {}
    for name, est in (("own", own), ("canned", canned)):
        est.train(_numpy_input(tf), steps=2)
        close[f"{name} loss"] = float(est.evaluate(_numpy_input(tf, num_epochs=1))["loss"])
        predicted = est.predict(_numpy_input(tf, num_epochs=1))
        close[f"{name} first"] = {k: v.tolist() for k, v in next(iter(predicted)).items()}
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        features, labels = {"x": tf.constant(X)}, tf.constant(Y)
        est = tf.estimator.Estimator(_linear_model_fn, os.path.join(workdir, "direct"))
        spec = est._call_model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, est.config)
        direct = [type(spec).__name__, spec.loss.name, spec.train_op.name]
    return {"exact": {"calls": calls, "direct": direct}, "close": close}


@program
def estimator_private_attributes(tf, workdir):
    """2.15's private attributes public code reads or sets: `_warm_start_settings` (handed
    to a new Estimator's warm_start_from, set to warm-start one), `_train_distribution`,
    `_eval_distribution` (a subclass refusing strategies), `_device_fn`."""

    def relative(settings):
        if settings is None:
            return None
        path = os.path.relpath(settings.ckpt_to_initialize_from, workdir)
        return [type(settings).__name__, path, settings.vars_to_warm_start]

    source = tf.estimator.Estimator(_linear_model_fn, os.path.join(workdir, "source"))
    source.train(_numpy_input(tf), steps=2)
    seen, close = {}, {}
    given = {
        "none": None,
        "path": source.model_dir,
        "settings": tf.estimator.WarmStartSettings(source.model_dir, ".*w.*"),
    }
    for name, warm_start_from in given.items():
        est = tf.estimator.Estimator(
            _linear_model_fn, os.path.join(workdir, name), warm_start_from=warm_start_from
        )
        again = tf.estimator.Estimator(
            _linear_model_fn,
            os.path.join(workdir, name + "_again"),
            warm_start_from=est._warm_start_settings,
        )
        seen[name] = [relative(est._warm_start_settings), relative(again._warm_start_settings)]
        seen[name] += [est._train_distribution, est._eval_distribution, est._device_fn]
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = tf.estimator.RunConfig(train_distribute=strategy)
    est = tf.estimator.Estimator(_linear_model_fn, os.path.join(workdir, "s"), config=config)
    seen["strategy"] = [type(est._train_distribution).__name__, est._eval_distribution]
    late = tf.estimator.Estimator(_linear_model_fn, os.path.join(workdir, "late"))
    late._warm_start_settings = tf.estimator.WarmStartSettings(source.model_dir)
    late.train(_numpy_input(tf), steps=1)
    close["late w"] = late.get_variable_value("w").tolist()
    close["source w"] = source.get_variable_value("w").tolist()
    return {"exact": seen, "close": close}


@program
def latest_checkpoint_overridden(tf, workdir):
    """A subclass's own `latest_checkpoint` (2.15 allowed it) answering the first
    checkpoint: 2.15 asked it for exports alone; train, evaluate, predict and
    get_variable_value read the model_dir's latest."""
    calls = []

    class First(tf.estimator.Estimator):
        def latest_checkpoint(self):
            calls.append("latest_checkpoint")
            return os.path.join(self.model_dir, "model.ckpt-1")

    est = First(
        _linear_model_fn,
        config=tf.estimator.RunConfig(
            model_dir=os.path.join(workdir, "first"), save_checkpoints_steps=1
        ),
    )
    est.train(_numpy_input(tf), steps=3)
    seen = {"after train": list(calls)}
    results = est.evaluate(_numpy_input(tf, num_epochs=1), steps=1)
    seen["evaluated step"] = int(results["global_step"])
    predicted = next(iter(est.predict(_numpy_input(tf, num_epochs=1))))
    w = est.get_variable_value("w").tolist()
    seen["after evaluate, predict, get_variable_value"] = list(calls)
    feature_spec = {"x": tf.io.FixedLenFeature([2], tf.float32)}
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    export = est.export_saved_model(os.path.join(workdir, "export"), receiver)
    seen["after export"] = list(calls)
    exported = tf.train.load_variable(os.path.join(export, b"variables/variables"), "w")
    return {
        "exact": seen,
        "close": {"w": w, "y": predicted["y"].tolist(), "exported w": exported.tolist()},
    }


@program
def latest_checkpoint_overridden_in_training(tf, workdir):
    """The same subclass trained with `max_steps` and warm-started: 2.15 read the model_dir's
    own latest checkpoint for both (skipping a train() already at max_steps, warm-starting
    a model_dir without one), never the subclass's."""
    calls = []

    class First(tf.estimator.Estimator):
        def latest_checkpoint(self):
            calls.append("latest_checkpoint")
            return os.path.join(self.model_dir, "model.ckpt-1")

    def config(name):
        return tf.estimator.RunConfig(
            model_dir=os.path.join(workdir, name), save_checkpoints_steps=1
        )

    source = First(_linear_model_fn, config=config("source"))
    source.train(_numpy_input(tf), max_steps=3)
    source.train(_numpy_input(tf), max_steps=3)
    warm = First(_linear_model_fn, config=config("warm"), warm_start_from=source.model_dir)
    warm.train(_numpy_input(tf), steps=1)
    return {
        "exact": {
            "calls": calls,
            "source step": int(source.get_variable_value("global_step")),
            "warm step": int(warm.get_variable_value("global_step")),
        },
        "close": {
            "source w": source.get_variable_value("w").tolist(),
            "warm w": warm.get_variable_value("w").tolist(),
        },
    }
