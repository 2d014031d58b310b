"""`from components import tfx_v1 as tfx`: TFX's public `tfx.v1` API where TFX's own
import fails (it imports TensorFlow Data Validation, which cannot install here).

The namespaces are built from TFX's own `tfx/v1` source files: each `from X import Y`
there is done here, so every name is TFX's object, `tfx.v1` as TFX 1.21 defines it.
Where an import fails, the name gets this kit's stand-in with TFX 1.15's constructor
(components/tfx_compat: StatisticsGen, SchemaGen, ExampleValidator, Transform,
Trainer, ImportSchemaGen), or, with none, a placeholder that raises on use, saying
what failed.  `Pusher` and `CsvExampleGen` are TFX's, and `tfx.components.Evaluator` is
TFX's, whose executor also evaluates TFX 1.15's eval model (components/tfx_compat/evaluator.py).
"""

import ast
import importlib
import os
import sys
from types import ModuleType

import tfx

from components.tfx_compat import component as _stand_ins
from components.tfx_compat import evaluator as _evaluator
from components.tfx_compat import tfma_export

_TFX_V1_DIR = os.path.join(os.path.dirname(tfx.__file__), "v1")
# (TFX's module, name): the kit's stand-in, for the imports that fail here.
STAND_INS = _stand_ins.STAND_INS


class Unavailable:
    """A `tfx.v1` name whose TFX object cannot be imported here, and has no stand-in."""

    def __init__(self, name, module, error):
        self.name, self.module, self.error = name, module, error

    def _refuse(self, *args, **kwargs):
        raise ImportError(
            f"tfx.v1.{self.name} is not available here: importing it from {self.module} "
            f"failed ({self.error})."
        )

    __call__ = _refuse

    def __getattr__(self, attribute):
        self._refuse()


def _source_file(relative):
    package = os.path.join(_TFX_V1_DIR, relative, "__init__.py")
    return package if os.path.exists(package) else os.path.join(_TFX_V1_DIR, relative + ".py")


def _namespace(relative=""):
    """The module `tfx.v1[.relative]`, rebuilt from TFX's source of it."""
    name = ".".join(filter(None, (__name__, relative.replace("/", "."))))
    namespace = ModuleType(name)
    sys.modules[name] = namespace
    with open(_source_file(relative)) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                setattr(namespace, alias.asname or alias.name, _imported(node.module, alias.name))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
            # `RunState = run_state_pb2.RunState`
            owner = getattr(namespace, getattr(node.value.value, "id", ""), None)
            if owner is not None:
                for target in node.targets:
                    setattr(namespace, target.id, getattr(owner, node.value.attr))
        elif isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "__all__" for t in node.targets
        ):
            namespace.__all__ = ast.literal_eval(node.value)
    namespace.__doc__ = ast.get_docstring(tree)
    return namespace


def _imported(module, attribute):
    if module.startswith("tfx.v1"):
        relative = module[len("tfx.v1") :].lstrip(".").replace(".", "/")
        return _namespace(f"{relative}/{attribute}".lstrip("/"))
    name = f"{module.rpartition('.')[2]}.{attribute}"
    try:
        owner = importlib.import_module(module)
        if not hasattr(owner, attribute):  # a submodule: `from package import module`
            return importlib.import_module(f"{module}.{attribute}")
        return getattr(owner, attribute)
    except ImportError as e:
        return STAND_INS.get((module, attribute)) or Unavailable(name, module, e)


components = _namespace("components")
components.Evaluator = _evaluator.Evaluator
dsl = _namespace("dsl")
extensions = _namespace("extensions")
orchestration = _namespace("orchestration")
proto = _namespace("proto")
testing = _namespace("testing")
types = _namespace("types")
utils = _namespace("utils")
__version__ = tfx.__version__
tfma_export.install_config_names()
