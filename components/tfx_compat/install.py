"""`import components.tfx_compat.install`: a TFX <= 1.15 pipeline's own imports run here.

On TFX 1.21 the components that import TensorFlow Data Validation (which cannot install
on this stack) are None in `tfx.components`, and `tfx.v1`, their `...component` modules
and `tfx.components.trainer.executor` fail to import. Importing this module once, at the
pipeline program's entry (before the pipeline's own imports), makes the spellings TFX
1.15's pipelines and module files use give this kit's objects instead:

- `from tfx.components import StatisticsGen` (SchemaGen, ExampleValidator, Transform,
  Trainer, ImportSchemaGen), and the same names from their `...component` modules: the
  stand-ins of components.tfx_compat, with TFX 1.15's constructors;
- `from tfx.components.trainer.executor import Executor` (and `GenericExecutor`, for
  `custom_executor_spec=executor_spec.ExecutorClassSpec(Executor)`): the stand-in
  Trainer's executor, which runs a `trainer_fn` or a `run_fn`; `TrainerFnArgs`: TFX's
  `FnArgs`;
- `from tfx import v1 as tfx`: TFX's own `tfx.v1`, which imports once the above are
  there, its components those stand-ins;
- `tf.estimator` (in the module file too): the kit's (components.estimator.install);
- `Evaluator` (from `tfx.components`, its `...component` module and `tfx.v1.components`):
  TFX's, whose executor also evaluates TFX 1.15's eval model for a
  `ModelSpec(signature_name="eval")` (evaluator.py);
- `from tfx.orchestration.kubeflow import kubeflow_dag_runner` (and
  `tfx.v1.orchestration.experimental.KubeflowDagRunner`, `KubeflowDagRunnerConfig`,
  `get_default_kubeflow_metadata_config`): TFX 1.15's KFP v1 runner, which compiles with
  TFX's KubeflowV2DagRunner here (kubeflow_v1.py);
- `tfma.export.export_eval_savedmodel` and `tfma.export.EvalInputReceiver`, and every
  configuration message as `tfma.<Name>` (`tfma.PerSliceMetricThreshold`), as TFMA 0.4x
  had them (tfma_export.py).

TFX's own objects are left where they import; `install()` does the same explicitly and
is idempotent.
"""

import functools
import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType

_TRAINER_EXECUTOR = "tfx.components.trainer.executor"
_KUBEFLOW_V1 = "tfx.orchestration.kubeflow.kubeflow_dag_runner"
_V1_EXPERIMENTAL = "tfx.v1.orchestration.experimental"


def _stand_in_module(name, doc, **names):
    """Registers `name` as a module holding `names`, where TFX's own fails to import."""
    try:
        importlib.import_module(name)
        return
    except ImportError:
        pass
    module = sys.modules.get(name) or ModuleType(name, doc)
    module.__dict__.update(names)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    # A package whose own __init__ fails (tfx.components.transform) gets one too.
    _stand_in_module(parent, "This kit's stand-in for a TFX package that fails to import.")
    setattr(sys.modules[parent], child, module)


def install():
    """Idempotent (module doc)."""
    from components.estimator.install import install as install_estimator

    install_estimator()  # first: before TFX's imports make tf.keras Keras 3
    import tfx.components
    from tfx.components.trainer import fn_args_utils

    from components.tfx_compat import component, executor, tfma_export

    tfma_export.install_config_names()
    tfma_export.install()
    for (module, name), stand_in in component.STAND_INS.items():
        if getattr(tfx.components, name, None) is None:
            setattr(tfx.components, name, stand_in)
        _stand_in_module(module, f"This kit's stand-in for TFX's {name}.", **{name: stand_in})
    _stand_in_module(
        _TRAINER_EXECUTOR,
        "TFX 1.15's Trainer executors: this kit's, which runs a trainer_fn or a run_fn.",
        Executor=executor.TrainerExecutor,
        GenericExecutor=executor.TrainerExecutor,
        TrainerFnArgs=fn_args_utils.FnArgs,
    )
    _install_evaluator()
    _install_kubeflow_v1()


def _install_evaluator():
    """TFX's Evaluator, whose executor also reads TFX 1.15's eval model (evaluator.py),
    where pipelines import it (`tfx.v1.components` takes it from TFX's module)."""
    import tfx.components
    from tfx.components.evaluator import component as tfx_evaluator

    from components.tfx_compat import evaluator

    tfx_evaluator.Evaluator = tfx.components.Evaluator = evaluator.Evaluator


def _install_kubeflow_v1():
    """TFX 1.15's KFP v1 runner, which compiles with KubeflowV2DagRunner here
    (kubeflow_v1.py), where TFX 1.15 pipelines import it."""
    from components.tfx_compat import kubeflow_v1

    names = {
        name: getattr(kubeflow_v1, name)
        for name in (
            "KubeflowDagRunner",
            "KubeflowDagRunnerConfig",
            "get_default_kubeflow_metadata_config",
            "get_default_pipeline_operator_funcs",
            "get_default_pod_labels",
            "get_default_output_filename",
        )
    }
    _stand_in_module(_KUBEFLOW_V1, kubeflow_v1.__doc__, **names)
    # tfx.v1 imports some 1,800 modules (Google Cloud clients, kfp): its experimental
    # module gets the names when a pipeline imports it, not here.
    _when_imported(_V1_EXPERIMENTAL, functools.partial(_add_v1_names, names))


def _add_v1_names(names, experimental):
    from tfx.utils import telemetry_utils

    for name in ("KubeflowDagRunner", "KubeflowDagRunnerConfig"):
        setattr(experimental, name, names[name])
    experimental.get_default_kubeflow_metadata_config = names[
        "get_default_kubeflow_metadata_config"
    ]
    experimental.LABEL_KFP_SDK_ENV = telemetry_utils.LABEL_KFP_SDK_ENV


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `then(module)` once the module `name` has been executed, the first time."""

    def __init__(self, name, then):
        self._name, self._then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            execute = spec.loader.exec_module

            def exec_module(module):
                execute(module)
                self._then(module)

            spec.loader.exec_module = exec_module
        return spec


def _when_imported(name, then):
    if name in sys.modules:
        then(sys.modules[name])
    elif not any(isinstance(f, _AfterImport) and f._name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, then))


install()
