"""tf.estimator 2.15's internal module paths on the kit, for `components.estimator.install`.

Public code imports 2.15's objects through the package's own modules
(`from tensorflow_estimator.python.estimator.canned import metric_keys`,
`...tpu import tpu_estimator`, `...head import binary_class_head`, `...export import
export_lib`) and through the stubs TF 2.15 kept of them under `tensorflow.python.estimator`
(`from tensorflow.python.estimator.model_fn import ModeKeys`).  One table (NAMES) serves
both prefixes: each module's names that are 2.15's public objects (exported under
tf.estimator or tf.compat.v1.estimator under some name), or objects the kit has as well
(MetricKeys and PredictionKeys as its heads use them), are the kit's.  A value says where
the kit's object is: "v1" is tf.compat.v1.estimator, "v2" tf.estimator, "v2.export" its
attribute, under the same name or the one after a space ("v2 Estimator"); "kit.head" is
`components.estimator.head`; a string in quotes is a constant.  Other names of those
modules, and modules not in the table, are 2.15's internals: refused, saying what to use.
"""

import importlib
import types

PREFIXES = ("tensorflow_estimator.python.estimator", "tensorflow.python.estimator")
PACKAGES = ("", "export", "inputs", "canned", "head", "hooks", "tpu")
_EXPERIMENTAL = "v2.experimental"
_V1_CANNED = ("Baseline", "DNN", "Linear", "DNNLinearCombined")
_KINDS = ("Classifier", "Regressor", "Estimator")


def _canned_names(prefix):
    """A canned module's names: its V1 classes (tf.compat.v1.estimator's), the same
    with `V2` (tf.estimator's), ModeKeys."""
    names = {"ModeKeys": "v2"}
    for kind in _KINDS:
        names[prefix + kind] = "v1"
        names[f"{prefix}{kind}V2"] = f"v2 {prefix}{kind}"
    return names


def _head_names(*heads):
    return {"ModeKeys": "v2", **dict.fromkeys(heads, "v2")}


_EARLY_STOPPING = {
    **dict.fromkeys(
        (
            "make_early_stopping_hook",
            "stop_if_higher_hook",
            "stop_if_lower_hook",
            "stop_if_no_decrease_hook",
            "stop_if_no_increase_hook",
        ),
        _EXPERIMENTAL,
    ),
    # 2.15's reader of an eval dir's metrics, which programs call to pick a checkpoint.
    "read_eval_metrics": "kit.early_stopping",
}
_RECEIVERS = {
    **dict.fromkeys(
        (
            "ServingInputReceiver",
            "TensorServingInputReceiver",
            "build_parsing_serving_input_receiver_fn",
            "build_raw_serving_input_receiver_fn",
        ),
        "v2.export",
    ),
    "build_raw_supervised_input_receiver_fn": _EXPERIMENTAL,
}
_EXPORT_OUTPUTS = dict.fromkeys(
    ("ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput", "EvalOutput"),
    "v2.export",
)
_HEADS = (
    "Head",
    "BinaryClassHead",
    "MultiClassHead",
    "MultiLabelHead",
    "MultiHead",
    "RegressionHead",
    "PoissonRegressionHead",
    "LogisticRegressionHead",
)
# What 2.15's estimator_lib gathered: the V1 canned classes and Estimator, the V2 API.
_ESTIMATOR_LIB = {
    **{prefix + kind: "v1" for prefix in _V1_CANNED for kind in _KINDS},
    **dict.fromkeys(
        (
            *_HEADS,
            "EstimatorSpec",
            "EvalSpec",
            "Exporter",
            "FinalExporter",
            "LatestExporter",
            "ModeKeys",
            "RunConfig",
            "TrainSpec",
            "VocabInfo",
            "WarmStartSettings",
            "add_metrics",
            "train_and_evaluate",
        ),
        "v2",
    ),
    **dict.fromkeys(
        ("Estimator", "classifier_parse_example_spec", "regressor_parse_example_spec"), "v1"
    ),
    **dict.fromkeys(("call_logit_fn", "RNNClassifier", "RNNEstimator"), _EXPERIMENTAL),
    **dict.fromkeys(("dnn_logit_fn_builder", "linear_logit_fn_builder"), "v1.experimental"),
    "KMeansClustering": "v1.experimental KMeans",
    "TPUEstimator": "v1.tpu",
    **_EARLY_STOPPING,
}
_HOOKS = (
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
)

NAMES = {
    **{package: {} for package in PACKAGES},
    "estimator": {
        "Estimator": "v1",
        "EstimatorV2": "v2 Estimator",
        **dict.fromkeys(("ModeKeys", "VocabInfo", "WarmStartSettings"), "v2"),
    },
    "estimator_lib": _ESTIMATOR_LIB,
    "model_fn": {
        "EstimatorSpec": "v2",
        "ModeKeys": "v2",
        "call_logit_fn": _EXPERIMENTAL,
        "LOSS_METRIC_KEY": "'loss'",
        "AVERAGE_LOSS_METRIC_KEY": "'average_loss'",
    },
    "mode_keys": {"ModeKeys": "v2"},
    "run_config": {"RunConfig": "v2", "TaskType": "kit.run_config"},
    "training": dict.fromkeys(("TrainSpec", "EvalSpec", "train_and_evaluate"), "v2"),
    "exporter": dict.fromkeys(
        ("Exporter", "FinalExporter", "LatestExporter", "BestExporter"), "v2"
    ),
    "early_stopping": _EARLY_STOPPING,
    "extenders": {"add_metrics": "v2", "ModeKeys": "v2"},
    "export.export": {
        **_RECEIVERS,
        "SINGLE_FEATURE_DEFAULT_NAME": "'feature'",
        "SINGLE_LABEL_DEFAULT_NAME": "'label'",
        "SINGLE_RECEIVER_DEFAULT_NAME": "'input'",
    },
    "export.export_lib": {**_RECEIVERS, **_EXPORT_OUTPUTS},
    "export.export_output": _EXPORT_OUTPUTS,
    "inputs.inputs": {"numpy_input_fn": "v1.inputs", "pandas_input_fn": "v1.inputs"},
    "inputs.numpy_io": {"numpy_input_fn": "v1.inputs"},
    "inputs.pandas_io": {"pandas_input_fn": "v1.inputs"},
    "canned.dnn": {**_canned_names("DNN"), "dnn_logit_fn_builder": "v1.experimental"},
    "canned.linear": {
        **_canned_names("Linear"),
        "LinearSDCA": _EXPERIMENTAL,
        "linear_logit_fn_builder": "v1.experimental",
    },
    "canned.dnn_linear_combined": _canned_names("DNNLinearCombined"),
    "canned.baseline": _canned_names("Baseline"),
    "canned.kmeans": {"KMeansClustering": "v1.experimental KMeans"},
    "canned.rnn": dict.fromkeys(("RNNClassifier", "RNNEstimator"), _EXPERIMENTAL),
    "canned.metric_keys": {"MetricKeys": "kit.head"},
    "canned.optimizers": {"get_optimizer_instance_v2": "kit.optimizers get_optimizer"},
    "canned.prediction_keys": {"PredictionKeys": "kit.head"},
    "canned.parsing_utils": {
        "classifier_parse_example_spec": "v1",
        "regressor_parse_example_spec": "v1",
        "classifier_parse_example_spec_v2": "v2 classifier_parse_example_spec",
        "regressor_parse_example_spec_v2": "v2 regressor_parse_example_spec",
    },
    "head.base_head": {
        "Head": "v2",
        "DEFAULT_SERVING_KEY": "'serving_default'",
        "CLASSIFY_SERVING_KEY": "'classification'",
        "PREDICT_SERVING_KEY": "'predict'",
        "REGRESS_SERVING_KEY": "'regression'",
    },
    "head.binary_class_head": _head_names("BinaryClassHead"),
    "head.multi_class_head": _head_names("MultiClassHead"),
    "head.multi_label_head": _head_names("MultiLabelHead"),
    "head.multi_head": _head_names("MultiHead"),
    "head.regression_head": _head_names(
        "RegressionHead", "PoissonRegressionHead", "LogisticRegressionHead"
    ),
    "head.head_utils": {"binary_or_multi_class_head": "kit.head"},
    "hooks.hooks": dict.fromkeys(
        ("InMemoryEvaluatorHook", "make_stop_at_checkpoint_step_hook"), _EXPERIMENTAL
    ),
    "hooks.session_run_hook": dict.fromkeys(
        ("SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues"), "v2"
    ),
    "hooks.basic_session_run_hooks": dict.fromkeys(_HOOKS, "v2"),
    "tpu.tpu_estimator": {
        "TPUEstimator": "v1.tpu",
        "TPUEstimatorSpec": "v1.tpu",
        "EmbeddingConfigSpec": "v1.tpu.experimental",
        # (not public in 2.15, but TPUEstimator's argument: AdaNet's TPUEstimator passes V2)
        "ExportSavedModelApiVersion": "kit.tpu.tpu_estimator",
    },
    "tpu.tpu_config": dict.fromkeys(("RunConfig", "TPUConfig", "InputPipelineConfig"), "v1.tpu"),
}

# What to use instead of the refused modules public code imports most.
_INSTEAD = {
    "canned.head": "2.15's V1 head functions are internal: a model_fn hands its logits to "
    "one of tf.estimator's heads (BinaryClassHead, MultiClassHead, RegressionHead, ...).",
    "util": "For fn_args: inspect.signature(fn).parameters.",
    "keras_lib": "tf.keras.estimator.model_to_estimator is the kit's.",
    "api": "Its namespaces are tf.estimator and tf.compat.v1.estimator.",
    "inputs.queues": "tf.compat.v1.estimator.inputs has numpy_input_fn and pandas_input_fn.",
    "tpu": "tf.compat.v1.estimator.tpu has TPUEstimator, TPUEstimatorSpec and RunConfig.",
}
_PUBLIC = (
    "After `import components.estimator.install`, use the public names: tf.estimator.X "
    "and tf.compat.v1.estimator.X (the kit's), or `from components import estimator`."
)


def suffix(fullname):
    """The module's path under 2.15's package (its NAMES key), "" for the package itself;
    None for a module under neither prefix; ImportError for one the kit does not give."""
    for prefix in PREFIXES:
        if fullname == prefix:
            return ""
        if fullname.startswith(prefix + "."):
            inside = fullname[len(prefix) + 1 :]
            if inside in NAMES:
                return inside
            raise ImportError(refusal(fullname, inside), name=fullname)
    return None


def refusal(fullname, inside=""):
    """Why `fullname` does not import here, and what to use."""
    instead = next(
        (
            text
            for path, text in _INSTEAD.items()
            if inside == path or inside.startswith(path + ".")
        ),
        "",
    )
    return (
        f"{fullname} is tensorflow-estimator 2.15's internal module, which the kit does not "
        f"provide (it cannot run on TensorFlow 2.21). {instead + ' ' if instead else ''}{_PUBLIC}"
    )


def _kit_object(spelling, name):
    """The kit's object that `spelling` (a NAMES value) names."""
    if spelling.startswith("'"):
        return spelling.strip("'")
    namespace, _, renamed = spelling.partition(" ")
    root, *parts = namespace.split(".")
    if root == "kit":
        found = importlib.import_module("components.estimator." + ".".join(parts))
    else:
        import components.estimator as found

        if root == "v1":
            from components.estimator import compat_v1 as found
        for part in parts:
            found = getattr(found, part)
    return getattr(found, renamed or name)


def module(fullname, extra=None):
    """The module `fullname` (under either prefix): its NAMES the kit's, `extra` ({name:
    object}) too; other names refused, saying what to use."""
    inside = suffix(fullname)
    made = types.ModuleType(fullname, "tf.estimator 2.15's module of this path, on the kit.")
    if inside in PACKAGES:
        made.__path__ = []  # a package, so its submodules reach the finder
    for attribute, spelling in NAMES[inside].items():
        setattr(made, attribute, _kit_object(spelling, attribute))
    for attribute, value in (extra or {}).items():
        setattr(made, attribute, value)

    def refused(attribute):
        raise AttributeError(
            f"{fullname}.{attribute} is tensorflow-estimator 2.15's internal name, which the "
            f"kit does not provide. {_PUBLIC}"
        )

    made.__getattr__ = refused
    return made
