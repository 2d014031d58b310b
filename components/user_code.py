"""A user's function named in a pipeline setting (preprocessing_fn, estimator_fn).

Two forms, both plain strings so that a pipeline stays serializable and each executor
imports the code where it runs:

- a dotted path, `package.module.function`, importable where the component runs;
- a file, `path/to/module.py:function`, what `python -m pipeline init` writes: the
  definition loader makes a relative path absolute (against the definition's folder).

`fingerprint` hashes the code behind a reference, so that a pipeline whose module changed
does not reuse the cached output of the code before the edit.
"""

import hashlib
import importlib
import importlib.util
import os
import sys

FILE_SEPARATOR = ".py:"
# The setting that asks for the kit's zero-code functions (components/auto) instead of a
# user's: a component loads them by dotted path like any reference, so that it does not
# import the auto package, which builds on the components' own libraries.
AUTO = "auto"


def is_file_reference(reference):
    return FILE_SEPARATOR in reference


def split_file_reference(reference):
    """("path/to/module.py", "function") for a file reference."""
    path, _, attr = reference.rpartition(":")
    return path, attr


def _module_from_file(path, what, reference):
    if not os.path.isfile(path):
        raise ValueError(f"{what} {reference!r}: no file {path}")
    # A stable name per file: loading it again (another component in this process) reuses
    # the module, and tracebacks say which file it was.
    name = "user_code_" + hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    # Its folder joins the import path (last, shadowing nothing): a project's model.py can
    # import its preprocessing.py.
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _module_from_dotted(module_name, what, reference):
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only a missing target module is the caller's mistake; a missing dependency
        # inside it surfaces unchanged.
        if e.name is None or not module_name.startswith(e.name):
            raise
        raise ValueError(f"{what} {reference!r}: module {module_name!r} not found") from e


def load_file_module(path, what):
    """The module in file `path`; ValueError naming `what` (the setting) if there is none."""
    return _module_from_file(path, what, path)


def load(reference, what):
    """The callable `reference` names; ValueError naming `what` (the setting) if there is
    none."""
    if is_file_reference(reference):
        path, attr = split_file_reference(reference)
        module = _module_from_file(path, what, reference)
        where = path
    else:
        module_name, _, attr = reference.rpartition(".")
        if not module_name or not attr:
            raise ValueError(
                f"{what} {reference!r} is neither a dotted path (package.module.function) "
                "nor a file reference (module.py:function)"
            )
        module = _module_from_dotted(module_name, what, reference)
        where = f"module {module_name!r}"
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(f"{what} {reference!r}: {where} has no callable {attr!r}")
    return fn


def source_file(reference):
    """The file the code of `reference` is in; None when it cannot be found here."""
    if is_file_reference(reference):
        path = split_file_reference(reference)[0]
        return path if os.path.isfile(path) else None
    module_name = reference.rpartition(".")[0]
    try:
        spec = importlib.util.find_spec(module_name) if module_name else None
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and os.path.isfile(spec.origin) else None


def fingerprint(reference):
    """sha256 of the source file behind `reference` ("" when there is none to read here)."""
    path = source_file(reference)
    return "" if path is None else file_sha256(path)


def file_sha256(path):
    """The sha256 of the file's bytes, in hex."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
