"""Preprocessing functions for the Transform component, referenced by dotted path.

A dotted path (not a function object) keeps pipeline definitions serializable and
lets the executor import the code where it runs.
"""

import importlib


def load_preprocessing_fn(dotted_path: str):
    """Imports `package.module.function` and returns the function."""
    module_name, _, attr = dotted_path.rpartition(".")
    if not module_name or not attr:
        raise ValueError(
            f"preprocessing_fn {dotted_path!r} is not a dotted path like "
            '"transforms.taxi.preprocessing_fn"'
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only a missing target module is the caller's mistake; a missing
        # dependency inside it should surface unchanged.
        if e.name is None or not module_name.startswith(e.name):
            raise
        raise ValueError(
            f"preprocessing_fn {dotted_path!r}: module {module_name!r} not found"
        ) from e
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(
            f"preprocessing_fn {dotted_path!r}: module {module_name!r} has no callable {attr!r}"
        )
    return fn
