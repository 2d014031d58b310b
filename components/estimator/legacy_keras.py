"""Makes `tf.keras` mean Keras 2 (`tf_keras`), as it did for Estimator code.

Up to TF 2.15 `tf.keras` was Keras 2; on TF 2.21 it is Keras 3 unless
`TF_USE_LEGACY_KERAS` is true when `tf.keras` (or `tf.losses`, `tf.metrics`,
`tf.optimizers`, `tf.initializers`) is first touched: TensorFlow resolves
each of them lazily, on first attribute access.  Importing the estimator
package sets the variable when it is unset, so a script that does
`import tensorflow as tf` and then imports the estimator gets Keras 2 from
`tf.keras`.  If one of them was already resolved to Keras 3, it is too late
for this process: a warning names the fix.
"""

import os
import warnings

ENV_VAR = "TF_USE_LEGACY_KERAS"
_TRUE = ("1", "true", "True")
_LAZY_KERAS_MODULES = ("keras", "losses", "metrics", "optimizers", "initializers")


def _resolved_to_keras_3(tf):
    """Names of `tf.<module>`s already resolved to Keras 3 (reading them resolves none)."""
    resolved = []
    for name in _LAZY_KERAS_MODULES:
        module = tf.__dict__.get(name)
        state = getattr(module, "__dict__", {})
        if "_tfll_initialized" in state:
            # Still TensorFlow's KerasLazyLoader: it records its choice on first use.
            keras_3 = state["_tfll_initialized"] and state.get("_tfll_keras_version") == "keras_3"
        else:
            # Once resolved, the loader replaces itself with the module it chose.
            keras_3 = getattr(module, "__name__", "").startswith("keras.")
        if keras_3:
            resolved.append(f"tf.{name}")
    return resolved


def use_legacy_keras():
    """Routes `tf.keras` to tf_keras unless the user chose otherwise; warns if it is too late."""
    chosen = os.environ.get(ENV_VAR)
    if chosen is None:
        os.environ[ENV_VAR] = "1"
    elif chosen not in _TRUE:
        warnings.warn(
            f"{ENV_VAR}={chosen!r}: tf.keras is Keras 3 in this process. The Estimator "
            "works with tf_keras (Keras 2) models, layers, optimizers and metrics: "
            "use `import tf_keras` in model code, or unset the variable.",
            stacklevel=3,
        )
        return
    import tensorflow as tf

    too_late = _resolved_to_keras_3(tf)
    if too_late:
        warnings.warn(
            f"{', '.join(too_late)} resolved to Keras 3 before the estimator was imported "
            "and stay Keras 3 in this process, so Estimator-era model code that uses them "
            f"may fail. Fix: import the estimator (or set {ENV_VAR}=1) before the first "
            "use of tf.keras, or use `import tf_keras` in model code.",
            stacklevel=3,
        )
