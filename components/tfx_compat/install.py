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
- `tfma.export.export_eval_savedmodel` and `tfma.export.EvalInputReceiver`, and every
  configuration message as `tfma.<Name>` (`tfma.PerSliceMetricThreshold`), as TFMA 0.4x
  had them (tfma_export.py).

TFX's own objects are left where they import; `install()` does the same explicitly and
is idempotent.
"""

import importlib
import sys
from types import ModuleType

_TRAINER_EXECUTOR = "tfx.components.trainer.executor"


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


install()
