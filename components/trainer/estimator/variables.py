"""Variables that outlive the `model_fn` call that created them.

tf.estimator rebuilt the graph for every mode and matched variables by name.
Here `model_fn` is traced inside `tf.function`s (one per mode, plus export),
and each trace asks for its variables again.  `VariableStore` hands back the
variable created by an earlier trace under the same name, so training,
evaluation, prediction and export all share one set of eager variables, and
checkpoints are keyed by the same names tf.estimator used.
"""

import contextlib
import re
import threading

import tensorflow as tf

GLOBAL_STEP_NAME = "global_step"

_active = threading.local()


_REPLICA_SUFFIX = re.compile(r"/?replica_\d+$")


def _strip_suffix(name):
    return re.sub(r":\d+$", "", name)


class VariableStore:
    """Name -> variable map, filled through a variable creator scope."""

    def __init__(self):
        self.variables = {}
        self.global_step = None
        # Per thread: MirroredStrategy calls model_fn once per replica, each
        # in its own thread and name scope, and each must get the same names.
        self._call = threading.local()

    def create_global_step(self):
        if self.global_step is None:
            self.global_step = tf.Variable(
                0,
                dtype=tf.int64,
                trainable=False,
                name=GLOBAL_STEP_NAME,
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            )
            self.variables[GLOBAL_STEP_NAME] = self.global_step
        return self.global_step

    def _full_name(self, requested):
        scope = tf.get_current_name_scope()
        prefix = self._call.scope_prefix
        if prefix and (scope == prefix or scope.startswith(prefix + "/")):
            scope = scope[len(prefix) :].lstrip("/")
        name = _strip_suffix(requested or "Variable")
        full = f"{scope}/{name}" if scope else name
        # Names built from other variables' names (optimizer slots) still
        # carry the trace's prefixes: the training loop's `while/...` and a
        # replica's `replica_<n>`.
        for trace_prefix in (prefix, _REPLICA_SUFFIX.sub("", prefix)):
            if trace_prefix:
                full = full.replace(trace_prefix + "/", "")
        # Two requests for one name within a call are two variables, as
        # in a TF1 graph: uniquify them the same way on every trace.
        unique, i = full, 0
        while unique in self._call.names:
            i += 1
            unique = f"{full}_{i}"
        self._call.names.add(unique)
        return unique

    def _creator(self, next_creator, **kwargs):
        name = self._full_name(kwargs.get("name"))
        existing = self.variables.get(name)
        if existing is not None:
            return existing
        initial_value = kwargs.get("initial_value")
        if tf.is_symbolic_tensor(initial_value):
            # A tensor of the trace cannot leave it; a constant one can.
            static = tf.get_static_value(initial_value)
            if static is None:
                raise ValueError(
                    f"Variable {name!r} is initialized from a computed tensor; "
                    "pass an initializer or a constant instead."
                )
            initial_value = static
        with tf.init_scope():
            if callable(initial_value):
                initial_value = initial_value()
            kwargs["initial_value"] = initial_value
            kwargs["name"] = name
            variable = next_creator(**kwargs)
        self.variables[name] = variable
        return variable

    @contextlib.contextmanager
    def scope(self):
        """Routes every `tf.Variable` created inside to this store."""
        outer = getattr(_active, "store", None)
        if outer is self:  # nested: one call, one set of names
            yield
            return
        _active.store = self
        self._call.names = set()
        self._call.scope_prefix = tf.get_current_name_scope()
        try:
            with tf.variable_creator_scope(self._creator):
                yield
        finally:
            _active.store = outer

    def adopt(self, variables):
        """Adds variables made outside `model_fn` (an optimizer instance's own
        `iteration` and `learning_rate`, created when the user built it) so
        that checkpoints hold them too."""
        known = {id(v) for v in self.variables.values()}
        for variable in variables:
            if id(variable) in known:
                continue
            base = _strip_suffix(variable.name)
            name, i = base, 0
            while name in self.variables:
                i += 1
                name = f"{base}_{i}"
            self.variables[name] = variable
            known.add(id(variable))

    def requested_in_last_call(self):
        """Names the latest `scope()` in this thread asked for (created or reused)."""
        return set(getattr(self._call, "names", ()))

    def model_variables(self):
        """Variables saved in checkpoints: all but metric accumulators."""
        return {name: v for name, v in self.variables.items() if not is_metric_variable(v)}

    def metric_variables(self):
        return [v for v in self.variables.values() if is_metric_variable(v)]


def is_metric_variable(variable):
    # Keras metrics keep their accumulators as ON_READ variables; they are
    # per-evaluation state, like tf.estimator's local variables.
    return variable.synchronization == tf.VariableSynchronization.ON_READ


def get_global_step():
    """The global step variable of the Estimator whose `model_fn` is running."""
    store = getattr(_active, "store", None)
    if store is None:
        return None
    return store.global_step
