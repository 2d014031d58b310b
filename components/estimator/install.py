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
- `tf.compat.v1.tpu.experimental.AdagradParameters`, `AdamParameters`, `FtrlParameters`
  and `StochasticGradientDescentParameters` (TPUEstimator's EmbeddingConfigSpec takes
  them; TF 2.21 dropped them), where TensorFlow has none of its own;
- `tf.data.experimental.CheckpointInputPipelineHook` (and `tf.compat.v1.data`'s), which
  TF 2.21 dropped with tf.estimator: the kit's (`input_checkpoints`), where TensorFlow
  has none of its own;
- `import tensorflow_estimator` (2.15's package, which cannot import on TF 2.21):
  its public `estimator` namespace;
- 2.15's modules, as public code imports them (`from tensorflow_estimator.python.estimator
  .canned import metric_keys`, `...tpu import tpu_estimator`, `from
  tensorflow.python.estimator.model_fn import ModeKeys`): their public names, the kit's
  (`internal_modules`); 2.15's internal names and modules are refused, saying what to use.

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

from components.estimator import internal_modules

_TENSORFLOW_ESTIMATOR = "tensorflow_estimator"
# 2.15's public namespace under it: its V1 API (`tensorflow_estimator.estimator`).
_PUBLIC_PATH = "tensorflow_estimator.estimator"
# The package above 2.15's modules (`tensorflow_estimator.python.estimator...`, whose
# public names `internal_modules` gives, as it gives TF 2.15's tensorflow.python.estimator
# stubs of them).
_PYTHON_PACKAGE = "tensorflow_estimator.python"


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
    """Resolves `tensorflow_estimator.estimator` to the kit's V1 namespace, and 2.15's
    modules (`tensorflow_estimator.python.estimator...`, TF 2.15's
    `tensorflow.python.estimator...` stubs) to `internal_modules`' modules of the kit's
    objects; refuses the others with an ImportError that says what to use."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in (_PUBLIC_PATH, _PYTHON_PACKAGE):
            return importlib.machinery.ModuleSpec(
                fullname, self, is_package=fullname == _PYTHON_PACKAGE
            )
        inside = internal_modules.suffix(fullname)  # ImportError if refused
        if inside is not None:
            return importlib.machinery.ModuleSpec(
                fullname, self, is_package=inside in internal_modules.PACKAGES
            )
        if fullname.startswith(_TENSORFLOW_ESTIMATOR + "."):
            raise ImportError(internal_modules.refusal(fullname), name=fullname)
        return None

    def create_module(self, spec):
        if spec.name == _PUBLIC_PATH:
            return _namespaces()[1]
        if spec.name == _PYTHON_PACKAGE:
            package = types.ModuleType(spec.name, "tensorflow-estimator 2.15's modules.")
            package.__path__ = []
            return package
        extra = None
        if internal_modules.suffix(spec.name) == "estimator":
            extra = {
                "_load_global_step_from_checkpoint_dir": _load_global_step_from_checkpoint_dir,
                "maybe_overwrite_model_dir_and_session_config": _settled_config,
            }
        return internal_modules.module(spec.name, extra)

    def exec_module(self, module):
        pass


def _load_global_step_from_checkpoint_dir(checkpoint_dir):
    """The global step of `checkpoint_dir`'s latest checkpoint, 0 without one (2.15's
    private helper, which EfficientNet's and ResNet's TPU mains call)."""
    from components.estimator import checkpoints

    return checkpoints.stored_global_step(checkpoint_dir)


def _settled_config(config, model_dir):
    """The RunConfig an Estimator given `config` and `model_dir` runs with: a default one
    for None, refused as the Estimator refuses it, `model_dir` in it (a temporary folder
    when neither names one). 2.15's `maybe_overwrite_model_dir_and_session_config`, which
    TF-Lattice 2.x's canned estimators call before their Estimator constructor."""
    from components.estimator import estimator

    config, model_dir = estimator.checked_config(config, model_dir)
    return config.replace(model_dir=model_dir or estimator.temporary_model_dir())


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


class _TensorflowHubFinder(importlib.abc.MetaPathFinder):
    """`import tensorflow_hub` where setuptools no longer ships `pkg_resources` (81 and
    later; the kit's venv): tensorflow-hub 0.15 checks TensorFlow's version at import with
    `pkg_resources.parse_version` and nothing else of it. While its package imports, and
    only then, a stand-in module gives that function (packaging's)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow_hub" or "pkg_resources" in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or importlib.machinery.PathFinder.find_spec("pkg_resources"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_with_stand_in(module):
            from packaging.version import parse

            stand_in = types.ModuleType("pkg_resources", "parse_version, for tensorflow_hub.")
            stand_in.parse_version = parse
            sys.modules["pkg_resources"] = stand_in
            try:
                exec_module(module)
            finally:
                if sys.modules.get("pkg_resources") is stand_in:
                    del sys.modules["pkg_resources"]

        spec.loader.exec_module = exec_with_stand_in
        return spec


def _install_tpu_embedding_parameters(compat_v1):
    """2.15's `tf.compat.v1.tpu.experimental.AdagradParameters` and its three siblings,
    which TensorFlow 2.21 dropped (TPUEstimator's EmbeddingConfigSpec takes them): the
    kit's, where TensorFlow has none of its own."""
    from components.estimator.tpu.embedding import OPTIMIZATION_PARAMETERS

    namespace = getattr(getattr(compat_v1, "tpu", None), "experimental", None)
    if namespace is None:
        return
    for name, cls in OPTIMIZATION_PARAMETERS.items():
        if not hasattr(namespace, name):
            setattr(namespace, name, cls)


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
    from components.estimator import input_checkpoints
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
    _install_tpu_embedding_parameters(compat_v1)
    input_checkpoints.install(tf)
    sys.modules[_TENSORFLOW_ESTIMATOR] = _tensorflow_estimator_package(v1)
    if not any(isinstance(f, _TensorflowEstimatorFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TensorflowEstimatorFinder())
    if not any(isinstance(f, _TensorflowHubFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TensorflowHubFinder())
    return True


install()
