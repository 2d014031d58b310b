"""Records tf.estimator 2.15's public names and signatures (run once, in the TF 2.15 venv).

    bench/.venv-tf215/bin/python tests/tf215/record_public_api.py

writes tests/data/tf215/public_api.json: every public name reachable from
`tf.estimator` (and, separately, the names only `tf.compat.v1.estimator` has),
each with its kind and, for classes and functions, its parameters.  The tests
read the file; they never import TF 2.15.
"""

import inspect
import json
import os
import sys
import types

import tensorflow as tf

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "tf215", "public_api.json")


def _default(value):
    """A default as JSON: literals as they are, dtypes by name, anything else as a marker."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tf.dtypes.DType):
        return f"tf.{value.name}"
    if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float, str)) for v in value):
        return list(value)
    return "<object>"


def _parameters(obj):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = []
    for p in signature.parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        entry = {"name": p.name}
        if p.default is not p.empty:
            entry["default"] = _default(p.default)
        params.append(entry)
    return params


def _walk(module, prefix=""):
    names = {}
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            names[prefix + name] = {"kind": "module"}
            names.update(_walk(value, prefix + name + "."))
        else:
            kind = "class" if inspect.isclass(value) else "function"
            names[prefix + name] = {"kind": kind, "parameters": _parameters(value)}
    return names


def main():
    v2 = _walk(tf.estimator)
    v1 = _walk(tf.compat.v1.estimator)
    record = {
        "recorded_with": {"tensorflow": tf.__version__, "python": sys.version.split()[0]},
        "tf.estimator": v2,
        "tf.compat.v1.estimator only": {k: v for k, v in v1.items() if k not in v2},
    }
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(
        f"{len(v2)} names in tf.estimator, {len(record['tf.compat.v1.estimator only'])} more "
        f"in tf.compat.v1.estimator: {os.path.normpath(OUT)}"
    )


if __name__ == "__main__":
    main()
