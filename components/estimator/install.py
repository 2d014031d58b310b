"""`import components.estimator.install`: tf.estimator code runs unchanged on the kit.

TF 2.21 has no `tf.estimator`.  Importing this module (once, at the program's
entry, before any module that does `from tensorflow.compat.v1 import
estimator`) makes every spelling of it the kit's, in every module:

- `tf.estimator`, `tf.compat.v2.estimator`, `from tensorflow import estimator`:
  `components.estimator`;
- `tf.compat.v1.estimator`, `import tensorflow.compat.v1 as tf; tf.estimator`,
  `from tensorflow.compat.v1 import estimator`: `components.estimator.compat_v1`
  (2.15's V1 canned estimators);
- `tf.keras.estimator.model_to_estimator` (and `tf.compat.v1.keras`'s, with
  `checkpoint_format='saver'`);
- `import tensorflow_estimator` (2.15's package, which cannot import on TF 2.21):
  its public `estimator` namespace; its internal modules
  (`tensorflow_estimator.python.estimator...`) are refused, saying what to use.

Modules that did `import tensorflow as tf` earlier look `tf.estimator` up when
they run, so they see it too.  On a TensorFlow that has its own tf.estimator
(2.15 and older) nothing is replaced: a warning says so.  `install()` does the
same explicitly and is idempotent.
"""

import importlib.abc
import importlib.machinery
import sys
import types
import warnings

_TENSORFLOW_ESTIMATOR = "tensorflow_estimator"
# 2.15's public namespace under it: its V1 API (`tensorflow_estimator.estimator`).
_PUBLIC_PATH = "tensorflow_estimator.estimator"
# What TF 2.15 still shipped under tensorflow.python.estimator: stub modules, each carrying
# every name of tensorflow_estimator's module of the same path.  TF1-era samples import
# the public ones from there (`from tensorflow.python.estimator.model_fn import ModeKeys`,
# `...inputs import numpy_io`, `...export import export_output`) and TPU mains a private
# helper (`estimator._load_global_step_from_checkpoint_dir(model_dir)`).  Each module's
# public names are the kit's, from the namespace 2.15's objects were in: "v1" is
# tf.compat.v1.estimator, "v2" tf.estimator, "v2.export" its attribute, under the same
# name or the one after a space ("v2 Estimator"); a string in quotes is a constant.
# Other names (2.15's internals) are refused, saying what to use.
_TF_PYTHON_ESTIMATOR = "tensorflow.python.estimator"
_TF_PYTHON_PACKAGES = ("", "export", "inputs", "canned")


def _canned_names(prefix):
    """A canned module's names: its V1 classes (tf.compat.v1.estimator's), the same
    with `V2` (tf.estimator's), ModeKeys."""
    names = {"ModeKeys": "v2"}
    for kind in ("Classifier", "Regressor", "Estimator"):
        names[prefix + kind] = "v1"
        names[f"{prefix}{kind}V2"] = f"v2 {prefix}{kind}"
    return names


_TF_PYTHON_NAMES = {
    "": {},
    "export": {},
    "inputs": {},
    "canned": {},
    "estimator": {
        "Estimator": "v1",
        "EstimatorV2": "v2 Estimator",
        "ModeKeys": "v2",
        "VocabInfo": "v2",
        "WarmStartSettings": "v2",
    },
    "model_fn": {
        "EstimatorSpec": "v2",
        "ModeKeys": "v2",
        "call_logit_fn": "v2.experimental",
        "LOSS_METRIC_KEY": "'loss'",
        "AVERAGE_LOSS_METRIC_KEY": "'average_loss'",
    },
    "run_config": {"RunConfig": "v2"},
    "training": {"TrainSpec": "v2", "EvalSpec": "v2", "train_and_evaluate": "v2"},
    "exporter": dict.fromkeys(
        ("Exporter", "FinalExporter", "LatestExporter", "BestExporter"), "v2"
    ),
    "export.export": {
        **dict.fromkeys(
            (
                "ServingInputReceiver",
                "TensorServingInputReceiver",
                "build_parsing_serving_input_receiver_fn",
                "build_raw_serving_input_receiver_fn",
            ),
            "v2.export",
        ),
        "build_raw_supervised_input_receiver_fn": "v2.experimental",
    },
    "export.export_output": dict.fromkeys(
        ("ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput", "EvalOutput"),
        "v2.export",
    ),
    "inputs.inputs": {"numpy_input_fn": "v1.inputs", "pandas_input_fn": "v1.inputs"},
    "inputs.numpy_io": {"numpy_input_fn": "v1.inputs"},
    "inputs.pandas_io": {"pandas_input_fn": "v1.inputs"},
    "canned.dnn": _canned_names("DNN"),
    "canned.linear": {**_canned_names("Linear"), "LinearSDCA": "v2.experimental"},
    "canned.dnn_linear_combined": _canned_names("DNNLinearCombined"),
    "canned.baseline": _canned_names("Baseline"),
}
_TF_PYTHON_MODULES = {
    _TF_PYTHON_ESTIMATOR + (f".{suffix}" if suffix else ""): suffix for suffix in _TF_PYTHON_NAMES
}


def real_tf_estimator(tf):
    """What the running TensorFlow calls `tf.estimator` itself (TF <= 2.15 has one,
    a lazy loader of the tensorflow_estimator package), or None.  Looked up in the
    module's own dict, which loads nothing."""
    existing = tf.__dict__.get("estimator")
    if existing is not None and getattr(existing, "__name__", "") != "components.estimator":
        return existing
    major, minor = (int(part) for part in tf.__version__.split(".")[:2])
    if (major, minor) <= (2, 15):
        return f"tensorflow {tf.__version__}'s own tf.estimator"
    return None


def _namespaces():
    import components.estimator as v2
    from components.estimator import compat_v1 as v1

    return v2, v1


class _TensorflowEstimatorFinder(importlib.abc.MetaPathFinder):
    """Resolves `tensorflow_estimator.estimator` to the kit's V1 namespace and refuses
    2.15's internal modules with an ImportError that says what to use."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _TF_PYTHON_MODULES:
            return importlib.machinery.ModuleSpec(
                fullname, self, is_package=_TF_PYTHON_MODULES[fullname] in _TF_PYTHON_PACKAGES
            )
        if not fullname.startswith((_TENSORFLOW_ESTIMATOR + ".", _TF_PYTHON_ESTIMATOR + ".")):
            return None
        if fullname == _PUBLIC_PATH:
            return importlib.machinery.ModuleSpec(fullname, self)
        raise ImportError(
            f"{fullname} is tensorflow-estimator 2.15's internal module, which cannot run "
            "on TensorFlow 2.21. After `import components.estimator.install`, use the public "
            "names: tf.estimator.X and tf.compat.v1.estimator.X (the kit's), or "
            "`from components import estimator`.",
            name=fullname,
        )

    def create_module(self, spec):
        if spec.name in _TF_PYTHON_MODULES:
            return _tf_python_estimator_module(spec.name)
        return _namespaces()[1]

    def exec_module(self, module):
        pass


def _load_global_step_from_checkpoint_dir(checkpoint_dir):
    """The global step of `checkpoint_dir`'s latest checkpoint, 0 without one (2.15's
    private helper, which EfficientNet's and ResNet's TPU mains call)."""
    from components.estimator import checkpoints

    return checkpoints.stored_global_step(checkpoint_dir)


def _public_object(spelling, name):
    """The kit's object that `spelling` (a `_TF_PYTHON_NAMES` value) names."""
    if spelling.startswith("'"):
        return spelling.strip("'")
    namespace, _, renamed = spelling.partition(" ")
    v2, v1 = _namespaces()
    found = v2 if namespace.startswith("v2") else v1
    for part in namespace.split(".")[1:]:
        found = getattr(found, part)
    return getattr(found, renamed or name)


def _tf_python_estimator_module(name):
    """A module of TF 2.15's `tensorflow.python.estimator` stub: its public names the
    kit's (`_TF_PYTHON_NAMES`), the TPU mains' private helper in `.estimator`; other
    internal names are refused, saying what to use."""
    suffix = _TF_PYTHON_MODULES[name]
    module = types.ModuleType(name, "TF 2.15's tensorflow.python.estimator stub, on the kit.")
    if suffix in _TF_PYTHON_PACKAGES:
        module.__path__ = []  # a package, so its submodules reach the finder
    for attribute, spelling in _TF_PYTHON_NAMES[suffix].items():
        setattr(module, attribute, _public_object(spelling, attribute))
    if suffix == "estimator":
        module._load_global_step_from_checkpoint_dir = _load_global_step_from_checkpoint_dir

    def refused(attribute):
        raise AttributeError(
            f"{name}.{attribute} is tensorflow-estimator 2.15's internal name, which the kit "
            "does not provide. After `import components.estimator.install`, use the public "
            "names: tf.estimator.X and tf.compat.v1.estimator.X (the kit's)."
        )

    module.__getattr__ = refused
    return module


def _tensorflow_estimator_package(v1):
    """`import tensorflow_estimator`: 2.15's top level, whose `estimator` is the V1 API."""
    package = types.ModuleType(
        _TENSORFLOW_ESTIMATOR, "tensorflow-estimator 2.15's public API, on the kit."
    )
    package.__path__ = []  # a package, so its submodules reach the finder
    package.estimator = v1
    return package


def _set_module(module, name, value):
    if module is not None:
        setattr(module, name, value)


def _patch_keras(v2_model_to_estimator, v1_model_to_estimator):
    """tf_keras's `estimator.model_to_estimator` (it imports tensorflow_estimator when
    called): the kit's, in the modules `tf.keras` and `tf.compat.v1.keras` resolve to."""
    for name, function in (
        ("tf_keras.estimator", v2_model_to_estimator),
        ("tf_keras.api._v2.keras.estimator", v2_model_to_estimator),
        ("tf_keras.api._v1.keras.estimator", v1_model_to_estimator),
    ):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        module.model_to_estimator = function


def install():
    """Makes tf.estimator, tf.compat.v1.estimator and tf.keras.estimator the kit's.

    Returns False (with a warning) when TensorFlow has its own tf.estimator."""
    import tensorflow as tf

    real = real_tf_estimator(tf)
    if real is not None:
        warnings.warn(
            f"components.estimator.install: this TensorFlow ({tf.__version__}) has its own "
            f"tf.estimator ({real!r}); it is left as it is. The kit's estimator is "
            "`from components import estimator` (it needs TF 2.16 or later).",
            stacklevel=2,
        )
        return False
    v2, v1 = _namespaces()
    from components.estimator.compat_v1.keras import model_to_estimator as v1_keras

    compat_v1 = tf.compat.v1
    for module in (tf, tf.compat.v2, sys.modules.get("tensorflow.compat.v2")):
        _set_module(module, "estimator", v2)
    for module in (compat_v1, sys.modules.get("tensorflow.compat.v1")):
        _set_module(module, "estimator", v1)
    sys.modules["tensorflow.estimator"] = v2
    sys.modules["tensorflow.compat.v2.estimator"] = v2
    sys.modules["tensorflow.compat.v1.estimator"] = v1
    _patch_keras(v2.model_to_estimator, v1_keras)
    sys.modules[_TENSORFLOW_ESTIMATOR] = _tensorflow_estimator_package(v1)
    if not any(isinstance(f, _TensorflowEstimatorFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TensorflowEstimatorFinder())
    return True


install()
