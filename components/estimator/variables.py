"""Variables that outlive the `model_fn` call that created them.

tf.estimator rebuilt the graph for every mode and matched variables by name.
Here `model_fn` is traced inside `tf.function`s (one per mode, plus export),
and each trace asks for its variables again.  `VariableStore` hands back the
variable created by an earlier trace under the same name, so training,
evaluation, prediction and export all share one set of eager variables, and
checkpoints are keyed by the same names tf.estimator used.
"""

import contextlib
import inspect
import re
import threading

import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import resource_variable_ops

GLOBAL_STEP_NAME = "global_step"

# tf.estimator 2.15's canned estimators applied their optimizers in this name scope.
CANNED_TRAINING_SCOPE = "training"
# Its DNNs read features through a layer `input_layer` inside this scope, which
# here is the DenseFeatures layer itself.
_DNN_INPUT_SCOPE = "dnn/input_from_feature_columns/"
_DNN_INPUT_LAYER = _DNN_INPUT_SCOPE + "input_layer/"

_active = threading.local()
_DIRECT_ARGUMENTS = frozenset(
    inspect.signature(resource_variable_ops.ResourceVariable.__init__).parameters
) - {"self"}


_REPLICA_SUFFIX = re.compile(r"/?replica_\d+$")


def _strip_suffix(name):
    return re.sub(r":\d+$", "", name)


def tf_estimator_name(name):
    """The name tf.estimator 2.15 gave the model variable this store calls `name`."""
    if name.startswith(_DNN_INPUT_SCOPE) and not name.startswith(_DNN_INPUT_LAYER):
        return _DNN_INPUT_LAYER + name[len(_DNN_INPUT_SCOPE) :]
    return name


def optimizer_state_names(optimizer, scope, variables, primary_name):
    """(state variable, name) of a `tf_keras` legacy optimizer's slots for `variables` and
    its hyperparameter variables, as tf.estimator 2.15's canned estimators named them:
    `training/<scope>/<primary>/<slot>`, `training/<scope>/<hyperparameter>`;
    `primary_name(variable)`: its 2.15 name."""
    prefix = f"{CANNED_TRAINING_SCOPE}/{scope}"
    for variable in variables:
        for slot in optimizer.get_slot_names():
            try:
                slot_variable = optimizer.get_slot(variable, slot)
            except KeyError:  # no gradient reached it
                continue
            yield slot_variable, f"{prefix}/{primary_name(variable)}/{slot}"
    for hyper, value in optimizer._hyper.items():
        if isinstance(value, tf.Variable):
            yield value, f"{prefix}/{hyper}"


class VariableStore:
    """Name -> variable map, filled through a variable creator scope."""

    def __init__(self):
        self.variables = {}
        self.global_step = None
        # Optimizer state named as tf.estimator 2.15's canned estimators named it:
        # {store name: checkpoint name}, and the store names of step counters.
        self._optimizer_state = {}
        self._iterations = set()
        # {store name: the name model_fn's graph gave it} (see `expect_graph_names`).
        self._graph_names = {}
        self._graph_variables = {}  # {mode: [(name, shape, dtype)] of its graph}
        # {store name: initial value} of TF1 local variables (`collections=[LOCAL_VARIABLES]`):
        # 2.15 left them out of checkpoints and set them afresh at each call's start.
        self._local_initial_values = {}
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

    def expect_graph_names(self, mode, graph):
        """Notes the variables `model_fn` made for `mode` when built in `graph` (TF1-style,
        as tf.estimator 2.15 built it), in the order it made them.  The next call of that
        mode traced for the TF2 path names the variables it makes in the same order, of the
        same shapes, as the graph did: Keras models and optimizers name their variables
        otherwise in a `tf.function` (`dense/kernel`, `Adam/m/dense/dense/kernel`) than in
        a graph (`sequential/dense/kernel`, `Adam/m/sequential/dense/kernel`)."""
        self._graph_variables[mode] = [
            (v.op.name, v.shape, v.dtype.base_dtype)
            for v in graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)
            if v.op.name != GLOBAL_STEP_NAME and not is_metric_variable(v)
        ]

    def name_as_in_graph(self, mode):
        """Gives the variables this `mode`'s call (in `scope()`) made so far the names of
        `expect_graph_names`: only when both made the same variables, one for one."""
        expected = self._graph_variables.pop(mode, None)
        if expected is None:
            return
        made = [
            (name, self.variables[name])
            for name in dict.fromkeys(self._call.order)
            if name != GLOBAL_STEP_NAME and not is_metric_variable(self.variables[name])
        ]
        if len(made) != len(expected):
            return
        for (_, variable), (_, shape, dtype) in zip(made, expected, strict=True):
            if variable.shape != shape or variable.dtype.base_dtype != dtype:
                return
        for (name, _), (graph_name, _, _) in zip(made, expected, strict=True):
            if name != graph_name and name not in self._optimizer_state:
                self._graph_names[name] = graph_name

    def _creator(self, next_creator, **kwargs):
        name = self._full_name(kwargs.get("name"))
        self._call.order.append(name)
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
        # Eager and initialized here, past tf.function's own creator: a tf.function
        # that sees no variable created in its first trace does not trace model_fn a
        # second time (seconds for a big model).  Not under a strategy (its creator
        # must make the variable) nor for arguments a ResourceVariable does not take;
        # the V1 arguments Keras layers and get_variable pass, `use_resource=None|True`
        # and `expected_shape=None`, ask for nothing a resource variable lacks.
        direct_kwargs = dict(kwargs)
        if kwargs.get("use_resource") in (None, True) and kwargs.get("expected_shape") is None:
            direct_kwargs.pop("use_resource", None)
            direct_kwargs.pop("expected_shape", None)
        direct = not tf.distribute.has_strategy() and _DIRECT_ARGUMENTS.issuperset(direct_kwargs)
        # Named `name` exactly, as in 2.15's graph: not under the trace's name scope
        # (the training loop's `while/cond/`), which `init_scope` keeps.
        with tf.init_scope(), ops.name_scope_v1(None):
            if callable(initial_value):
                initial_value = initial_value()
            made = {"initial_value": initial_value, "name": name}
            if direct:
                variable = resource_variable_ops.ResourceVariable(**{**direct_kwargs, **made})
            else:
                variable = next_creator(**{**kwargs, **made})
        if tf.compat.v1.GraphKeys.LOCAL_VARIABLES in (kwargs.get("collections") or ()):
            self._local_initial_values[name] = initial_value
        self.variables[name] = variable
        return variable

    def reset_local_variables(self):
        """Sets the TF1 local variables to their initial values, as 2.15's session did
        (its `local_init_op`) at the start of each train, evaluate and predict call."""
        for name, initial_value in self._local_initial_values.items():
            self.variables[name].assign(initial_value)

    @contextlib.contextmanager
    def scope(self):
        """Routes every `tf.Variable` created inside to this store."""
        outer = getattr(_active, "store", None)
        if outer is self:  # nested: one call, one set of names
            yield
            return
        _active.store = self
        self._call.names = set()
        self._call.order = []
        self._call.optimizer_scopes = set()
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

    def name_optimizer_state(self, optimizer, variables):
        """Records the checkpoint names tf.estimator 2.15's canned estimators gave a
        `tf_keras` legacy optimizer's state: `training/<optimizer>/<variable>/<slot>`,
        `training/<optimizer>/<hyperparameter>`; the second optimizer of a name in
        one `model_fn` call is `<optimizer>_1`, as in a TF1 graph."""
        if not hasattr(optimizer, "get_slot_names") or not hasattr(optimizer, "_hyper"):
            # A TF1 optimizer (tf.compat.v1.estimator's) names its slots itself,
            # in the variable scope the store already records.
            return
        scope, i = optimizer._name, 0
        while scope in self._call.optimizer_scopes:
            i += 1
            scope = f"{optimizer._name}_{i}"
        self._call.optimizer_scopes.add(scope)
        names = {id(v): name for name, v in self.variables.items()}

        def record(variable, checkpoint_name):
            if id(variable) not in names:  # made before model_fn ran
                self.adopt([variable])
                names.update({id(v): name for name, v in self.variables.items()})
            self._optimizer_state[names[id(variable)]] = checkpoint_name
            return names[id(variable)]

        def primary_name(variable):
            return tf_estimator_name(names[id(variable)])

        for state, checkpoint_name in optimizer_state_names(
            optimizer, scope, variables, primary_name
        ):
            record(state, checkpoint_name)
        if optimizer.iterations is not self.global_step:  # (counting in it: nothing of its own)
            self._iterations.add(
                record(optimizer.iterations, f"{CANNED_TRAINING_SCOPE}/{scope}/iter")
            )

    def name_tf1_slots(self, optimizer, variables):
        """Records the checkpoint names a TF1 graph gives a `tf.compat.v1.train`
        optimizer's state for `variables`: each variable's slots `<variable>/<name>`,
        `<variable>/<name>_1`, ... in the order it made them (`hidden/kernel/Adam`,
        `hidden/kernel/Adam_1`; made eagerly, TF1 numbers them across the process:
        `hidden/kernel/Adam_2/`), its other state (`training/beta1_power`) as named."""
        names = {id(v): name for name, v in self.variables.items()}
        prefix = re.escape(optimizer.get_name())
        for variable in variables:
            primary = tf_estimator_name(names[id(variable)])
            taken = {}
            for slot_name in optimizer._slots:  # (in the order it made them)
                slot = optimizer.get_slot(variable, slot_name)
                if slot is None or id(slot) not in names:
                    continue
                last = names[id(slot)].rstrip("/").rsplit("/", 1)[-1]
                mine = re.fullmatch(prefix + r"(_\d+)?", last)
                base = optimizer.get_name() if mine else re.sub(r"_\d+$", "", last)
                count = taken[base] = taken.get(base, -1) + 1
                suffix = f"_{count}" if count else ""
                self._optimizer_state[names[id(slot)]] = f"{primary}/{base}{suffix}"
        for state in optimizer._non_slot_dict.values():
            if id(state) in names:
                self._optimizer_state[names[id(state)]] = names[id(state)]

    def checkpoint_name(self, name):
        """The name the variable this store calls `name` has in name-based checkpoints."""
        return (
            self._optimizer_state.get(name)
            or self._graph_names.get(name)
            or tf_estimator_name(name)
        )

    def optimizer_role(self, name):
        """'iterations' for an optimizer's step counter, 'state' for its other
        variables, None for the model's own."""
        if name in self._iterations:
            return "iterations"
        return "state" if name in self._optimizer_state else None

    def checkpoint_names(self, variables=None):
        """{checkpoint name: variable} of `variables` ({store name: variable}; by
        default the model variables)."""
        if variables is None:
            variables = self.model_variables()
        return {self.checkpoint_name(name): v for name, v in variables.items()}

    def requested_in_last_call(self):
        """Names the latest `scope()` in this thread asked for (created or reused)."""
        return set(getattr(self._call, "names", ()))

    def model_variables(self):
        """Variables saved in checkpoints: all but metric accumulators and TF1 local
        variables."""
        return {
            name: v
            for name, v in self.variables.items()
            if not is_metric_variable(v) and name not in self._local_initial_values
        }

    def metric_variables(self):
        return [v for v in self.variables.values() if is_metric_variable(v)]


def parts(variable):
    """A distributed variable's per-device variables, or `(variable,)` for any other (read
    them, not the distributed one: its attributes reduce across replicas)."""
    return getattr(variable, "values", None) or (variable,)


def is_metric_variable(variable):
    # Keras metrics keep their accumulators as ON_READ variables summed over
    # replicas; they are per-evaluation state, like tf.estimator's local
    # variables.  Batch norm's moving statistics are ON_READ too, but averaged:
    # model state, checkpointed as tf.estimator did.
    return (
        variable.synchronization == tf.VariableSynchronization.ON_READ
        and variable.aggregation != tf.VariableAggregation.MEAN
    )


def name_optimizer_state(optimizer, variables):
    """`VariableStore.name_optimizer_state` for the store whose `model_fn` is running."""
    store = getattr(_active, "store", None)
    if store is not None:
        store.name_optimizer_state(optimizer, variables)


def get_global_step():
    """The global step variable of the Estimator whose `model_fn` is running (in a
    graph-mode run, the graph's, as `tf.compat.v1.train.get_global_step()`)."""
    store = getattr(_active, "store", None)
    if store is None:
        return None if tf.executing_eagerly() else tf.compat.v1.train.get_global_step()
    return store.global_step
