"""The graph-mode path: TF1-style `model_fn`s run as tf.estimator 2.15 ran them.

tf.estimator built a `tf.Graph` for every call, called `model_fn` in it once
and drove a `MonitoredSession` with `SessionRunHook`s, saving name-based
`Saver` checkpoints.  TF 2.21 still ships that machinery, so code written for
it (`tf.compat.v1` layers, variables, optimizers, metrics, summaries and
collections, `Scaffold`, `SessionRunHook`s) runs here on it, unchanged.

The `Estimator` chooses this path by itself: a `model_fn` of its own (not a
canned one) is first built in a graph, and `tf1_markers` lists what in that
graph only a session can run; a model_dir whose checkpoint a graph wrote
(tf.estimator's) also takes this path, since its variables have graph names.
Neither: the TF2 path (one `tf.function` per mode) takes over.  The choice is
logged once and kept for the Estimator's later calls.
"""

import contextlib
import logging
import numbers
import os
import re
import sys
import threading
import time
import weakref

import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import node_def_pb2
from tensorflow.python.checkpoint import checkpoint_management
from tensorflow.python.client import session as session_lib
from tensorflow.python.eager import context as eager_context
from tensorflow.python.framework import meta_graph
from tensorflow.python.lib.io import file_io
from tensorflow.python.training import saver as saver_lib
from tensorflow.python.training import training_util
from tensorflow.python.training.saving import saveable_object

from components.estimator import checkpoints as ckpt_lib
from components.estimator import graph_steps, graph_strategy, run_config, tf_logging
from components.estimator import hooks as hooks_lib
from components.estimator import server as server_lib
from components.estimator import variables as variables_lib
from components.estimator.model_fn import (
    ModeKeys,
    selected_predictions,
    yielded_predictions,
)

log = logging.getLogger(__name__)

_V1 = tf.compat.v1
_KEYS = _V1.GraphKeys
# How long the end of a train() call waits for the session's threads (queue runners) to
# stop before it closes the session under them: MonitoredSession's 120 s, as 2.15 waited.
STOP_GRACE_PERIOD_SECS = 120
# What tf.estimator 2.15 logged (INFO) evaluating or predicting with no checkpoint.
NOT_TRAINED = "Could not find trained model in model_dir: %s, running initialization to %s."

# Collections that only TF1 APIs fill: `get_variable` (so `tf.compat.v1.layers`),
# TF1 optimizers' `minimize`, `UPDATE_OPS`, `tf.compat.v1.summary`.
# (`tf.compat.v1.metrics` work in a tf.function too: they decide nothing.)
_VARIABLE_STORE = ("__variable_store",)
_TF1_COLLECTIONS = {
    _VARIABLE_STORE: "tf.compat.v1.get_variable (or tf.compat.v1.layers)",
    _KEYS.TRAIN_OP: "a tf.compat.v1.train optimizer",
    _KEYS.UPDATE_OPS: "the UPDATE_OPS collection",
    _KEYS.SUMMARIES: "tf.compat.v1.summary",
}


def is_session_run_hook(hook):
    """A hook of TF1's protocol (`before_run`/`after_run`): not one of this kit's, or a
    LoggingTensorHook of its that runs as TF1's (`hooks.speaks_tf1`), or a StepCounterHook
    subclass overriding a session's methods (`hooks.needs_a_session`)."""
    if isinstance(hook, hooks_lib.Hook):
        return hooks_lib.speaks_tf1(hook) or hooks_lib.needs_a_session(hook)
    return isinstance(hook, _V1.train.SessionRunHook)


def _variable_store_names(graph):
    # The store of `get_variable` (its `_vars`); the global step is this path's own.
    stores = graph.get_collection(_VARIABLE_STORE)
    return {name for store in stores for name in store._vars} - {"global_step"}


def tf1_collections(graph):
    """The TF1 APIs whose collections `graph` holds."""
    return [
        what
        for key, what in _TF1_COLLECTIONS.items()
        if (_variable_store_names(graph) if key == _VARIABLE_STORE else graph.get_collection(key))
    ]


def written_by_a_graph(checkpoint_path):
    """Whether a checkpoint comes with a MetaGraph, as every one that tf.estimator or
    this path saved does (the TF2 path's have none): its variables have graph names."""
    return checkpoint_path is not None and tf.io.gfile.exists(checkpoint_path + ".meta")


def tf1_markers(graph, spec, hooks=()):
    """What in `model_fn`'s graph, spec and the call's hooks needs a session."""
    found = tf1_collections(graph)
    spec_hooks = (
        *spec.training_hooks,
        *spec.training_chief_hooks,
        *spec.evaluation_hooks,
        *spec.prediction_hooks,
    )
    found += sorted(
        {
            f"a SessionRunHook ({type(h).__name__})"
            for h in (*hooks, *spec_hooks)
            if is_session_run_hook(h)
        }
    )
    if spec.scaffold is not None and scaffold_has_session_fields(spec.scaffold):
        found.append("a Scaffold with session fields")
    if initialized_from_a_checkpoint(graph):
        found.append("tf.compat.v1.train.init_from_checkpoint")
    return found


def initialized_from_a_checkpoint(graph):
    """Whether `init_from_checkpoint` gave a variable of `graph` a checkpoint's value as
    its initial value (a RestoreV2 op's output): 2.15's session then initialized an
    untrained model from it in every mode, predict and evaluate included, where the
    TF2 path's evaluate() and predict() leave that assignment out (it is no output)."""
    for variable in graph.get_collection(_V1.GraphKeys.GLOBAL_VARIABLES):
        for part in variables_lib.parts(variable):
            initial_value = getattr(part, "__dict__", {}).get("_initial_value")
            if (
                getattr(initial_value, "op", None) is not None
                and initial_value.op.type == "RestoreV2"
            ):
                return True
    return False


def scaffold_has_session_fields(scaffold):
    return any(
        getattr(scaffold, name, None) is not None
        for name in (
            "init_op",
            "init_feed_dict",
            "init_fn",
            "ready_op",
            "ready_for_local_init_op",
            "local_init_op",
            "local_init_feed_dict",
            "summary_op",
        )
    ) or isinstance(scaffold.saver, _V1.train.Saver)


# ---------------------------------------------------------------- the session
class _CallableSession(session_lib.SessionInterface):
    """A session whose `run` reuses one `make_callable` per structure of fetches.

    `MonitoredSession` calls `run` once per step with the caller's fetches and every
    hook's, nearly always the same ones; a plain `Session.run` works out how to fetch
    them again each time (about 0.5 ms, a sixth of a small model's step).  Calls
    with feeds, run options or run metadata to fill go to the session as they are.
    """

    # Structures kept at most: past that, fetches change every step (a hook making
    # new objects) and caching would only grow.
    _MAX_CALLABLES = 32

    def __init__(self, session):
        self._session = session
        self._callables = {}  # fetch structure -> (its fetches, kept alive; callable)

    @property
    def graph(self):
        return self._session.graph

    @property
    def sess_str(self):
        return self._session.sess_str

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if feed_dict or (options is not None and options.ByteSize()):
            return self._session.run(fetches, feed_dict, options, run_metadata)
        key = _fetch_key(fetches)
        entry = self._callables.get(key)
        if entry is None:
            if len(self._callables) >= self._MAX_CALLABLES:
                return self._session.run(fetches, feed_dict, options, run_metadata)
            entry = self._callables[key] = (fetches, self._session.make_callable(fetches))
        # An op's error as `Session.run` raises it (`Graph execution error:`, then where
        # the op was made), not the runtime's bare message: through the session's own
        # error handling, when it has one.
        do_call = getattr(self._session, "_do_call", None)
        return entry[1]() if do_call is None else do_call(entry[1])

    def partial_run_setup(self, fetches, feeds=None):
        return self._session.partial_run_setup(fetches, feeds)

    def partial_run(self, handle, fetches, feed_dict=None):
        return self._session.partial_run(handle, fetches, feed_dict)

    def close(self):
        self._callables.clear()
        self._session.close()

    def __getattr__(self, name):
        return getattr(self._session, name)

    # Hooks and saving listeners are handed this session where 2.15 handed them its
    # `tf.compat.v1.Session`: to `isinstance` (user code checks `isinstance(session,
    # tf.Session)` before running or saving with it) and in `repr`, it is that session.
    @property
    def __class__(self):
        return type(self._session)

    def __repr__(self):
        return repr(self._session)


def _fetch_key(fetches):
    """What identifies the structure of `fetches` and the graph elements in it."""
    if isinstance(fetches, dict):
        return (dict, tuple((_fetch_key(k), _fetch_key(v)) for k, v in fetches.items()))
    if isinstance(fetches, (list, tuple)):
        return (type(fetches), tuple(_fetch_key(v) for v in fetches))
    if isinstance(fetches, (str, bytes)):
        return fetches
    return id(fetches)  # tensors, ops, hooks: `_CallableSession` keeps them alive


class _ChiefSessionCreator(_V1.train.ChiefSessionCreator):
    session = None  # the last one made: multi-step loops run on it, past the hooks

    def create_session(self):
        self.session = _CallableSession(super().create_session())
        return self.session


class _WorkerSessionCreator(_V1.train.WorkerSessionCreator):
    session = None

    def create_session(self):
        self.session = _CallableSession(super().create_session())
        return self.session


# ----------------------------------------------------------------- the graph
class _IteratorInitializerHook(_V1.train.SessionRunHook):
    """Starts the input's iterator once the session exists (before any hook runs)."""

    def __init__(self, initializer):
        self._initializer = initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


# The graphs ModeGraph built: a call the kit makes inside one (a listener's export while
# training runs in its session) is not made from a user's graph block.
_MODE_GRAPHS = weakref.WeakSet()


def eager_execution_off():
    """Whether the caller runs where eager execution is off, so only this path can run:
    `tf.compat.v1.disable_eager_execution()` (or `disable_v2_behavior()`), or a user's
    `tf.Graph().as_default()` block; not the kit's own mode graphs."""
    if tf.executing_eagerly():
        return False
    if eager_context.default_execution_mode != eager_context.EAGER_MODE:
        return True
    return tf.compat.v1.get_default_graph() not in _MODE_GRAPHS


def features_and_labels(element):
    """An input_fn's result, or its dataset's element, as (features, labels): a pair, or
    features alone; a tuple or list of another length is 2.15's ValueError."""
    if isinstance(element, (tuple, list)):
        if len(element) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return element[0], element[1]
    return element, None


def made_elsewhere(error):
    """Whether `error` says an input_fn's dataset, or a dataset it reads, was made outside
    the input_fn's graph (eagerly, before the call): tf.estimator 2.15 refused it with
    TensorFlow's ValueError and its advice, a ValueError here too (not a subclass: its
    name is what a traceback shows)."""
    return getattr(error, "_made_elsewhere", False)


_OTHER_GRAPH = re.compile(r"of the iterator is different from the graph .* was created in\.")
_ESTIMATOR_ADVICE = (
    "If you are using the Estimator API, make sure that no part of the dataset returned "
    "by the `input_fn` function is defined outside the `input_fn` function. Otherwise, "
    "make sure that the dataset"
)


@contextlib.contextmanager
def refusing_datasets_made_elsewhere():
    """Turns TensorFlow's ValueError for an iterator over a dataset of another graph
    into 2.15's words for an input_fn (TF 2.21's leaves the Estimator's advice out)."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        if made_elsewhere(error) or not _OTHER_GRAPH.search(message):
            raise
        refused = ValueError(message.replace("Make sure that the dataset", _ESTIMATOR_ADVICE, 1))
        refused._made_elsewhere = True
        raise refused from None


def reads_an_iterator(graph):
    """Whether an input_fn that returned no Dataset built, in `graph`, the next element
    of a TF1 iterator or of queues (`shuffle_batch`): a new batch per session run."""
    nexts = ("IteratorGetNext", "IteratorGetNextSync")
    return any(op.type in nexts for op in graph.get_operations()) or bool(
        graph.get_collection(_KEYS.QUEUE_RUNNERS)
    )


class ModeGraph:
    """One mode's graph: the input's (or receiver's) tensors and `model_fn`'s spec."""

    def __init__(
        self, estimator, mode, input_fn=None, receiver_fn=None, graph=None, iterator_only=False
    ):
        """`iterator_only`: `model_fn` is called only if input_fn reads an iterator (else
        `spec` is None: the TF2 path takes the input)."""
        self.estimator = estimator
        self.mode = mode
        self.graph = graph or tf.Graph()
        _MODE_GRAPHS.add(self.graph)
        self.input_hooks = []
        self.input_cardinality = None  # of a Dataset input_fn: steps may then be looped
        # Whether input_fn returned a TF1 iterator's next element (or queues'), which only
        # a session runs.
        self.reads_an_iterator = False
        self.receiver = None
        self.strategy = graph_strategy.of_mode(estimator._config, mode, receiver_fn is not None)
        with (
            self.graph.as_default(),
            self.graph.device(_device_fn(estimator._config, mode)),
            graph_strategy.scope(self.strategy),
        ):
            seed = estimator._config.tf_random_seed
            if seed is not None:
                # The graph's seed only, as tf.estimator set it: Keras layers' default
                # initializers draw their seeds from Python's `random`, the program's own
                # (seeded by the program, or not), as they did under 2.15.
                _V1.set_random_seed(seed)
            self.global_step = _V1.train.get_or_create_global_step()
            if mode == ModeKeys.TRAIN:
                # The guarded read TF1 optimizers and tf.estimator's training graphs start
                # with (its evaluate, predict and export graphs had none: no `If` op in
                # an export); it also keeps op ids (the seeds of seeded initializers) as
                # under tf.estimator.
                training_util._get_or_create_global_step_read(self.graph)
            if receiver_fn is not None:
                self.receiver = receiver_fn()
                features = self.receiver.features
                labels = getattr(self.receiver, "labels", None)  # a supervised receiver's
            else:
                features, labels = self._input(input_fn)
                if mode == ModeKeys.PREDICT:
                    labels = None  # (tf.estimator's predict gave the model_fn no labels)
            self.spec = None
            if iterator_only and not self.reads_an_iterator:
                return
            self.model_ops_from = len(self.graph.get_operations())  # (unfetched.effects)
            self.spec = graph_strategy.call_model_fn(
                self.strategy, estimator._call_model_fn_in_graph, features, labels, mode
            )

    def _input(self, input_fn):
        context = graph_strategy.input_context(self.strategy)
        with _V1.device("/cpu:0"), refusing_datasets_made_elsewhere():  # (as tf.estimator)
            result = self.estimator._input_fn_result(input_fn, self.mode, context)
        if isinstance(result, tf.data.Dataset):
            with refusing_datasets_made_elsewhere():  # (before anything else reads it)
                iterator = _V1.data.make_initializable_iterator(result)
            self.input_cardinality = result.cardinality()
            _not_written(self.graph, self.input_cardinality.op)
            self.input_hooks.append(_IteratorInitializerHook(iterator.initializer))
            result = iterator.get_next()
        else:
            self.reads_an_iterator = reads_an_iterator(self.graph)
        return features_and_labels(result)  # (tensors as input_fn built them)

    def scaffold(self):
        """The spec's Scaffold, with the Estimator's default Saver when it names none."""
        config = self.estimator._config
        user = self.spec.scaffold
        saver = getattr(user, "saver", None)
        if isinstance(saver, tf.train.Checkpoint):
            saver = _object_based_saver(self.graph, saver)
        saver = saver or _Saver(
            self.graph,
            sharded=True,
            max_to_keep=config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
            defer_build=True,
            save_relative_paths=True,
        )
        with self.graph.as_default():
            return _V1.train.Scaffold(saver=saver, copy_from_scaffold=user)

    def markers(self):
        return tf1_markers(self.graph, self.spec)

    def session_config(self):
        session_config = self.estimator._config.session_config
        return session_config if isinstance(session_config, _V1.ConfigProto) else None


# Variables the kit keeps whole that tf.estimator 2.15 split in parts (a V1 canned model's
# optimizer slots under a partitioner), saved as 2.15 saved them: each part a slice of the
# whole under its own checkpoint key (`.../part_1/Ftrl`), so model_dirs resume both ways.
_SAVED_IN_PARTS = "kit_saved_in_parts"


def save_in_parts(variable, parts, as_variables=False):
    """Saves `variable` as `parts`, [(checkpoint key, offset, shape)] of its slices along
    one axis, in order; `as_variables`: each slice as a variable of its own shape (as TF1
    saved variables made per part), not as a slice of the whole."""
    variable._kit_saved_in_parts = [(key, list(start), list(shape)) for key, start, shape in parts]
    variable._kit_parts_as_variables = as_variables
    variable.graph.add_to_collection(_SAVED_IN_PARTS, variable)


class _PartsSaveable(saveable_object.SaveableObject):
    """A variable saved as its parts' slices; restored from them, put back together."""

    def __init__(self, variable):
        parts, whole = variable._kit_saved_in_parts, variable.shape.as_list()
        as_variables = getattr(variable, "_kit_parts_as_variables", False)
        with tf.device(variable.device):
            value = variable.read_value()
            specs = [
                saveable_object.SaveSpec(
                    tf.slice(value, start, shape),
                    ""
                    if as_variables
                    else _V1.Variable.SaveSliceInfo(key, whole, start, shape).spec,
                    key,
                    device=variable.device,
                )
                for key, start, shape in parts
            ]
        super().__init__(variable, specs, parts[0][0])
        self._variable = variable
        self._axis = next((a for a, n in enumerate(parts[0][2]) if n != whole[a]), 0)

    def restore(self, restored_tensors, restored_shapes):
        del restored_shapes
        return self._variable.assign(tf.concat(restored_tensors, self._axis))


class _Saver(_V1.train.Saver):
    """The Estimator's default Saver: of every global variable and saveable object when
    built (as TF1's), the variables `save_in_parts` named saved as their parts."""

    def __init__(self, graph, **kwargs):
        super().__init__(**kwargs)
        self._kit_graph = graph

    def build(self):
        if not self._is_built:
            with self._kit_graph.as_default():
                self._var_list = _saved_with_parts(self._kit_graph)
        super().build()


def _saved_with_parts(graph):
    """The default Saver's list (None: every global variable and saveable object), with the
    variables `save_in_parts` named saved as their parts."""
    split = graph.get_collection(_SAVED_IN_PARTS)
    if not split:
        return None
    ids = {id(variable) for variable in split}
    saved = graph.get_collection(_KEYS.GLOBAL_VARIABLES) + graph.get_collection(
        _KEYS.SAVEABLE_OBJECTS
    )
    return [v for v in saved if id(v) not in ids] + [_PartsSaveable(v) for v in split]


def _object_based_saver(graph, checkpoint):
    """A Saver of `checkpoint`'s objects under their object paths: a graph model_fn's
    `Scaffold(saver=tf.train.Checkpoint(...))`, which tf.estimator (and TF1's Scaffold)
    saved and restored so, in training and in export alike."""
    from tensorflow.python.checkpoint import graph_view

    with graph.as_default():
        saveables = graph_view.ObjectGraphView(checkpoint).frozen_saveable_objects()
        return _V1.train.Saver(var_list=saveables, sharded=True)


def _hooks_for_graph(hooks, built, logs):
    """TF1 hooks as they are; this kit's hooks through their graph equivalent, their
    logs fetched from `logs` ({log name: tensor})."""
    return [
        hooks_lib.as_session_run_hook(hook, built, logs)
        if isinstance(hook, hooks_lib.Hook)
        else hook
        for hook in hooks
    ]


class _LossLoggingHook(_V1.train.LoggingTensorHook):
    """The Estimator's `loss = ..., step = N` lines, their numbers as 2.15 showed them."""

    def _log_tensors(self, tensor_values):
        with tf_logging.printed_as_numpy_1():
            super()._log_tensors(tensor_values)


def _device_fn(config, mode):
    """Where a TRAIN graph's ops go on a cluster with ps tasks: tf.estimator's
    between-graph replication, variables on the ps tasks, the rest on this task."""
    if mode != ModeKeys.TRAIN or not config.num_ps_replicas or config.train_distribute:
        return None
    return _V1.train.replica_device_setter(
        ps_tasks=config.num_ps_replicas,
        worker_device=f"/job:{config.task_type}/task:{config.task_id}",
        cluster=config.cluster_spec,
    )


def _session_target(built):
    """The session's master: '' on one machine; on a cluster with ps tasks, the server
    this task starts (a ps task serves here until the job is stopped).  Layouts TF1
    graphs cannot train in are refused, naming why the model_fn runs in a graph."""
    config = built.estimator._config
    why = ", ".join(built.markers()) or "TF1 session hooks"
    if config.train_distribute is not None and built.strategy is None:
        raise ValueError(
            f"This model_fn uses {why}, so it runs as tf.estimator ran it, in a graph "
            "with a session, which a tf.distribute strategy drives only with one replica "
            "on one machine (OneDeviceStrategy; tf.estimator 2.15 hung on more): use one "
            "device, remove RunConfig(train_distribute=...) (a TF_CONFIG cluster with ps "
            "tasks trains it as tf.estimator did), or port model_fn to TF2 (Keras layers "
            "and optimizers)."
        )
    cluster = config.cluster_spec.as_dict()
    if not config.num_ps_replicas:
        if config.num_worker_replicas > 1:
            raise ValueError(
                f"This model_fn uses {why}, so it runs in a graph with a session, which "
                f"shares variables through ps tasks; TF_CONFIG's cluster ({sorted(cluster)}) "
                "has none. Add ps tasks, run it without TF_CONFIG, or port model_fn to TF2."
            )
        return ""
    if config.task_type not in ("chief", "master", "worker", "ps"):
        raise ValueError(
            f"TF_CONFIG makes this a {config.task_type!r} task, which trains nothing: a "
            "cluster with ps tasks trains on its chief (or legacy master) and workers."
        )
    tf_config = {"cluster": cluster, "task": {"type": config.task_type, "index": config.task_id}}
    if config.task_type == "ps":
        server_lib.run_server(tf_config)
    server = server_lib.start_server(tf_config)
    return server.target


def _cluster_session_config(built):
    """The session_config with its task's `run_config.device_filters`: it never waits for
    the other workers."""
    config = built.estimator._config
    session_config = _V1.ConfigProto()
    if built.session_config() is not None:
        session_config.CopyFrom(built.session_config())
    session_config.device_filters[:] = run_config.device_filters(config.task_type, config.task_id)
    return session_config


# ---------------------------------------------------------------------- train
def train(built, hooks, steps, max_steps, saving_listeners):
    """`Estimator.train` on `built`, a TRAIN `ModeGraph`."""
    master = _session_target(built)
    estimator, spec, config = built.estimator, built.spec, built.estimator._config
    model_dir = estimator.model_dir
    with built.graph.as_default():
        scaffold = built.scaffold()
        warm_start_hooks = []
        if estimator._warm_start_from is not None and estimator._model_dir_checkpoint() is None:
            warm_start_hooks = _warm_start(built, estimator._warm_start_from)
        loss = tf.convert_to_tensor(spec.loss)
        # A model_fn that summarized its loss as "loss" itself keeps that summary alone
        # (2.15 added its own only when no summary op was named "loss": no "loss_1").
        summarized = _V1.get_collection(_V1.GraphKeys.SUMMARIES)
        if not any(op.op.name == "loss" for op in summarized):
            _V1.summary.scalar("loss", loss)
        _V1.add_to_collection(_V1.GraphKeys.LOSSES, loss)  # (as 2.15: in the `.meta` too)
        train_op = _counting_steps(built, hooks)
        step_logs = {"loss": loss, "global_step": built.global_step}
        # tf.estimator 2.15's order: the input's hooks, train()'s (its StopAtStepHook
        # last), the loss's NanTensorHook and log, then the spec's training_hooks.
        worker_hooks = [
            *warm_start_hooks,
            *built.input_hooks,
            *_hooks_for_graph(list(hooks), built, step_logs),
            _V1.train.StopAtStepHook(num_steps=steps, last_step=max_steps)
            if (steps or max_steps)
            else None,
            _V1.train.NanTensorHook(loss),
        ]
        if config.log_step_count_steps:
            worker_hooks.append(
                _LossLoggingHook(
                    {"loss": loss, "step": built.global_step},
                    every_n_iter=config.log_step_count_steps,
                )
            )
        worker_hooks += _hooks_for_graph(spec.training_hooks, built, step_logs)
        chief_hooks = _hooks_for_graph(spec.training_chief_hooks, built, step_logs)
        if config.is_chief:
            chief_hooks = _saving_hooks(
                built, scaffold, saving_listeners, worker_hooks + chief_hooks, chief_hooks
            )
        final_loss = None
        session_config = _cluster_session_config(built) if master else built.session_config()
        if config.is_chief:
            creator = _ChiefSessionCreator(
                scaffold=scaffold, master=master, config=session_config, checkpoint_dir=model_dir
            )
        else:
            creator = _WorkerSessionCreator(scaffold=scaffold, master=master, config=session_config)
        worker_hooks = [h for h in worker_hooks if h is not None]
        # As MonitoredTrainingSession orders them: the chief's hooks first.
        every_hook = (chief_hooks if config.is_chief else []) + worker_hooks
        stepped = None
        if _steps_to_run(estimator, steps, max_steps) >= graph_steps.MIN_STEPS_FOR_A_LOOP:
            stepped = _stepped_hooks(built, every_hook, train_op, loss, master, creator)
        with _V1.train.MonitoredSession(
            session_creator=creator,
            hooks=[stepped] if stepped else every_hook,
            stop_grace_period_secs=STOP_GRACE_PERIOD_SECS,
        ) as session:
            while not session.should_stop():
                if stepped is not None:
                    stepped.run_until_needed()
                    if stepped.stop_requested:
                        break
                _, final_loss = session.run([train_op, loss])
    log.info("Loss for final step: %s.", tf_logging.as_printed(final_loss))


def _warm_start(built, settings):
    """Warm-starts a fresh TRAIN graph's variables as 2.15 did, logging its lines (the
    settings, then TF1's `Warm-starting from:` the folder or prefix given); from this
    kit's object-based checkpoints and exports, once the session exists: the hooks."""
    if isinstance(settings, (str, bytes, os.PathLike)):
        settings = ckpt_lib.WarmStartSettings(settings)
    given = settings.ckpt_to_initialize_from
    path = ckpt_lib.resolve_checkpoint(given)
    if ckpt_lib.is_object_based(path):  # this kit's TF2 checkpoint or export
        return [_WarmStartHook(settings, built.graph)]
    log.info("Warm-starting with WarmStartSettings: %s", settings)
    ckpt_lib.warn_unmatched(settings, [v.op.name for v in _V1.global_variables()])
    readable = isinstance(given, str) and path in (given, tf.train.latest_checkpoint(given))
    _V1.train.warm_start(
        given if readable else path,
        settings.vars_to_warm_start,
        settings.var_name_to_vocab_info or None,
        settings.var_name_to_prev_var_name or None,
    )
    return []


def _warm_start_untrained(built, checkpoint_path):
    """2.15's predict and evaluate with no checkpoint to read: the variables warm-started
    from the Estimator's `warm_start_from` (after the model_fn, before the session)."""
    settings = built.estimator._warm_start_from
    if checkpoint_path is not None or settings is None:
        return []
    return _warm_start(built, settings)


def _steps_to_run(estimator, steps, max_steps):
    """How many steps this train() call may run (infinite: no limit)."""
    if steps is not None:
        return steps
    if max_steps is None:
        return float("inf")
    path = estimator._model_dir_checkpoint()
    if path is None:
        return max_steps
    names = {name for name, _ in tf.train.list_variables(path)}
    if "global_step" not in names:  # not a graph's checkpoint: restoring will say why
        return float("inf")
    return max_steps - int(tf.train.load_variable(path, "global_step"))


def _stepped_hooks(built, hooks, train_op, loss, master, creator):
    """The hooks as one that runs the steps none of them needs past them, one lean session
    call each (`graph_steps`), or None where every step runs alone."""
    if not graph_steps.ENABLED or master or built.input_cardinality is None:
        return None
    why = graph_steps.why_not_stepped(train_op, loss, built.global_step)
    if why:
        log.debug("One step per session call: the train step has %s.", why)
        return None
    loop = None
    if graph_steps.LOOP_IN_GRAPH and not graph_steps.asks_single_threaded(built.session_config()):
        loop = graph_steps.build_step_loop(train_op, loss)
    return graph_steps.SteppedHooks(
        hooks,
        loop,
        (train_op, loss),
        built.global_step,
        built.input_cardinality,
        lambda: creator.session,
    )


class _SessionVariable:
    """A graph variable as `ckpt_lib.warm_start` handles variables, through a session."""

    def __init__(self, variable, trainable, session):
        self._variable, self.trainable, self._session = variable, trainable, session
        self.shape = variable.shape

    def numpy(self):
        return self._session.run(self._variable)

    def assign(self, value):
        self._variable.load(value, self._session)  # feeds the initializer: no new op


class _WarmStartHook(_V1.train.SessionRunHook):
    """Warm-starts the graph's variables from this kit's (object-based) checkpoints and
    exports, which TF1's `warm_start` cannot read, once the session exists; under the
    same rules as the TF2 path's (ckpt_lib.warm_start)."""

    def __init__(self, settings, graph):
        wanted = settings.vars_to_warm_start
        if isinstance(wanted, (list, tuple)) and wanted and not isinstance(wanted[0], str):
            # Graph variables, chosen by their names (the session's stand-ins are others).
            wanted = [re.escape(v.op.name) + "$" for v in wanted]
            settings = settings._replace(vars_to_warm_start=wanted)
        self._settings = settings
        with graph.as_default():
            trainable = {id(v) for v in _V1.trainable_variables()}
            self._variables = [(v, id(v) in trainable) for v in _V1.global_variables()]

    def after_create_session(self, session, coord):
        ckpt_lib.warm_start(
            {
                v.op.name: _SessionVariable(v, trainable, session)
                for v, trainable in self._variables
            },
            self._settings,
        )


# Op types that write a resource variable (reads, `Switch`es of control flow do not).
_WRITE_OP_PREFIXES = ("Assign", "ResourceApply", "ResourceSparseApply", "ResourceScatter")
# TF1 control flow's ops that hand a variable on as it is.
_PASSING_ON = {"Switch", "RefSwitch", "Enter", "RefEnter", "Identity", "RefIdentity"}


def _counting_steps(built, hooks):
    """The spec's train op, made to step the global step when nothing the train op runs
    does (a Keras optimizer's `apply_gradients`, a TF1 `minimize` without `global_step`):
    tf.estimator then trained forever, its StopAtStepHook never reached. Writes outside
    the step do not count: a Saver's restore op (a TF1 Hub module's `import_meta_graph`
    builds one over the graph's variables so far) runs only when a checkpoint loads.
    A queue runner's do: a SyncReplicasOptimizer's steps the global step as it applies
    each step's gradients, on a thread of its own (counted twice, training skipped steps
    and checkpoints)."""
    train_op = built.spec.train_op
    runs = [getattr(train_op, "op", train_op)]
    for runner in _queue_runners(built, hooks):
        runs += [getattr(op, "op", op) for op in runner.enqueue_ops]
    step_ops = set(graph_steps.closure(runs))
    handle = built.global_step.op.outputs[0]  # (a handle, or a ref)
    writes = [op for op in handle.consumers() if _writes(op, handle, step_ops)]
    if writes:
        return train_op
    with tf.control_dependencies([built.spec.train_op]):
        return built.global_step.assign_add(1).op


def _writes(op, handle, step_ops):
    """Whether `op`, run in a step, writes the variable of `handle`: a write op; TF1
    control flow's `Switch` or `Enter` passing it to one (a TF1 `tf.cond` branch's
    `assign_add`); a call of functions given it as an input it does not mark read-only
    (TF2 control flow: `tf.cond`'s and `tf.while_loop`'s branches are functions)."""
    if op not in step_ops:
        return False
    if op.type.startswith(_WRITE_OP_PREFIXES):
        return op.inputs[0] is handle  # (the variable written; the value is another)
    if op.type in _PASSING_ON:
        return any(_writes(c, t, step_ops) for t in op.outputs for c in t.consumers())
    try:
        read_only = op.get_attr("_read_only_resource_inputs")
    except ValueError:
        return False
    return any(t is handle and i not in read_only for i, t in enumerate(op.inputs))


def _queue_runners(built, hooks):
    """The queue runners the training session runs beside the train op: the graph's
    (its input queues'), and a SyncReplicasOptimizer's chief runner, which applies the
    gathered gradients and steps the global step (its hook, in train()'s `hooks` or the
    spec's, starts it)."""
    runners = list(built.graph.get_collection(_KEYS.QUEUE_RUNNERS))
    spec = built.spec
    given = (*hooks, *(spec.training_hooks or ()), *(spec.training_chief_hooks or ()))
    for hook in given:
        optimizer = getattr(hook, "_sync_optimizer", None)
        runner = getattr(optimizer, "_chief_queue_runner", None)
        if runner is not None:
            runners.append(runner)
    return runners


def _not_written(graph, op):
    """Leaves `op`, the kit's own (2.15's graph had none), out of the graph written to
    `graph.pbtxt`, the events file and the `.meta` files."""
    if not hasattr(graph, "_kit_not_written"):
        graph._kit_not_written = set()
    graph._kit_not_written.add(op.name)


def without_kit_ops(graph, graph_def):
    """`graph_def` (of `graph`) without the ops `_not_written` marked, in place."""
    left_out = getattr(graph, "_kit_not_written", ())
    if left_out:
        kept = [node for node in graph_def.node if node.name not in left_out]
        del graph_def.node[:]
        graph_def.node.extend(kept)
    return graph_def


def _as_written(graph):
    """The GraphDef written of `graph`: with its shapes, without the kit's own ops."""
    return without_kit_ops(graph, graph.as_graph_def(add_shapes=True))


class _CheckpointSaverHook(_V1.train.CheckpointSaverHook):
    """The Estimator's CheckpointSaverHook: TensorFlow's, writing the same files, with
    less work at a train() call's start: the graph is exported once (a GraphDef for
    `graph.pbtxt`, the events file's graph and MetaGraph, and every save's `.meta`, as
    the graph is finalized), and `graph.pbtxt` (text, the slowest part) is written on a
    thread of its own while the steps run, by `graph_as_text`."""

    graph_steps_schedule_as = _V1.train.CheckpointSaverHook  # saves on the same steps
    _writing = None
    _meta_graph = None  # the serialized MetaGraphDef every save of this call writes

    def after_create_session(self, session, coord):
        global_step = session.run(self._global_step_tensor)
        graph = _V1.get_default_graph()
        graph_def = _as_written(graph)
        if self._save_graph_def:
            self._writing = _Background(
                _write_graph_text, graph_def, self._checkpoint_dir, "graph.pbtxt"
            )
        saver = self._get_saver()
        meta_graph_def = meta_graph.create_meta_graph_def(
            graph_def=graph_def, saver_def=saver.saver_def if saver else None
        )
        writer = self._summary_writer
        if hasattr(writer, "_add_graph_def") and hasattr(writer, "_write_plugin_assets"):
            writer._add_graph_def(graph_def)  # what add_graph(graph) writes, not exported again
            writer._write_plugin_assets(graph)
        else:
            writer.add_graph(graph)
        writer.add_meta_graph(meta_graph_def)
        if self._save_graph_def and type(saver) in (_V1.train.Saver, _Saver):
            exported = saver_lib.export_meta_graph(
                graph_def=graph_def, saver_def=saver.saver_def, graph=graph
            )
            self._meta_graph = exported.SerializeToString(deterministic=True)
        self._save(session, global_step)  # the state at `global_step`, as the stock hook
        self._timer.update_last_triggered_step(global_step)

    def _get_saver(self):
        saver = super()._get_saver()
        if self._meta_graph is None or saver is None:
            return saver
        return _SaverOfExportedMetaGraph(saver, self._meta_graph)

    def end(self, session):
        super().end(session)
        if self._writing is not None:
            self._writing.join()


class _SaverOfExportedMetaGraph:
    """A stock Saver whose saves write `meta_graph` (its export of this call's finalized
    graph, the bytes its `export_meta_graph` writes) as each checkpoint's `.meta`."""

    def __init__(self, saver, meta_graph_bytes):
        self._saver, self._meta_graph = saver, meta_graph_bytes

    def save(self, sess, save_path, global_step=None, **kwargs):
        write_meta_graph = kwargs.pop("write_meta_graph", True)
        stock = not isinstance(global_step, (numbers.Integral, np.integer))
        stock = stock or self._saver._pad_step_number or self._saver._is_empty
        exports_otherwise = kwargs.get("meta_graph_suffix", "meta") != "meta" or any(
            kwargs.get(name) for name in ("strip_default_attrs", "save_debug_info")
        )
        if stock or exports_otherwise:
            kwargs["write_meta_graph"] = write_meta_graph
            return self._saver.save(sess, save_path, global_step=global_step, **kwargs)
        path = self._saver.save(
            sess, save_path, global_step=global_step, write_meta_graph=False, **kwargs
        )
        if write_meta_graph:
            meta_path = checkpoint_management.meta_graph_filename(f"{save_path}-{int(global_step)}")
            file_io.atomic_write_string_to_file(meta_path, self._meta_graph)
        return path

    def __getattr__(self, name):
        return getattr(self._saver, name)


_ATTR_ENTRY = node_def_pb2.NodeDef.DESCRIPTOR.fields_by_name["attr"].message_type


def graph_as_text(graph_def):
    """`text_format.MessageToString(graph_def)`, the same text, in about half the time:
    most nodes' attributes (`T`, `dtype`, `_output_shapes`) repeat, so each distinct
    attribute entry is printed once, by the same printer, and its text reused."""
    printed = {}

    def attribute(message, indent, as_one_line):
        if message.DESCRIPTOR is not _ATTR_ENTRY or as_one_line:
            return None
        key = (message.SerializeToString(deterministic=True), indent)
        text = printed.get(key)
        if text is None:
            body = text_format.MessageToString(message, indent=indent)
            text = printed[key] = body[indent:-1]  # the printer adds the indent and newline
        return text or None

    return text_format.MessageToString(graph_def, message_formatter=attribute)


def _write_graph_text(graph_def, directory, name):
    """`training_util.write_graph(graph_def, directory, name)`: the same file."""
    if sys.byteorder == "big":  # (it swaps tensor contents' bytes first)
        return training_util.write_graph(graph_def, directory, name)
    if not directory.startswith("gs:"):
        tf.io.gfile.makedirs(directory)
    file_io.atomic_write_string_to_file(os.path.join(directory, name), graph_as_text(graph_def))


class _Background:
    """`function(*args)` on a thread; `join()` waits for it and raises what it raised."""

    def __init__(self, function, *args):
        self._error = None

        def run():
            try:
                function(*args)
            except Exception as error:  # raised again in join()
                self._error = error

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def join(self):
        self._thread.join()
        if self._error is not None:
            raise self._error


def _saving_hooks(built, scaffold, saving_listeners, given, spec_chief_hooks):
    """The chief's hooks as MonitoredTrainingSession ordered them under tf.estimator:
    the Estimator's CheckpointSaverHook, the spec's `training_chief_hooks`, then the
    step counter and the summary saver.  A `CheckpointSaverHook` among the `given`
    hooks saves instead of the Estimator's, with the saving listeners."""
    config, model_dir = built.estimator._config, built.estimator.model_dir
    # A user's CheckpointSaverHook without a saver finds the Estimator's here.
    if not built.graph.get_collection(_KEYS.SAVERS):
        built.graph.add_to_collection(_KEYS.SAVERS, scaffold.saver)
    savers = [h for h in given if isinstance(h, _V1.train.CheckpointSaverHook)]
    saving = []
    if not savers and run_config.saves_checkpoints(config):
        saving.append(
            _CheckpointSaverHook(
                model_dir,
                save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps,
                scaffold=scaffold,
                checkpoint_basename=ckpt_lib.CHECKPOINT_NAME,
                save_graph_def=config.checkpoint_save_graph_def,
            )
        )
        savers = saving[:]
    if saving_listeners and not savers:
        raise ValueError(hooks_lib.NO_SAVER_FOR_LISTENERS)
    for listener in saving_listeners:
        if listener not in savers[0]._listeners:
            savers[0]._listeners.append(listener)
    saving += list(spec_chief_hooks)
    if config.log_step_count_steps:
        saving.append(
            _V1.train.StepCounterHook(
                every_n_steps=config.log_step_count_steps, output_dir=model_dir
            )
        )
    if config.save_summary_steps:
        saving.append(
            _V1.train.SummarySaverHook(
                save_steps=config.save_summary_steps, output_dir=model_dir, scaffold=scaffold
            )
        )
    return saving


# ------------------------------------------------------------------- evaluate
def metric_pair(name, metric):
    """`(value, update_op)` of an `eval_metric_ops` entry: a pair or a Keras metric."""
    if isinstance(metric, tuple):
        value, update = metric
        return tf.convert_to_tensor(value), update
    updates = list(getattr(metric, "updates", None) or [])
    if not updates:
        raise ValueError(
            f"eval_metric_ops[{name!r}]: this Keras metric was never updated in model_fn "
            "(call its update_state there, or return a (value, update_op) pair)."
        )
    # Keras metrics keep their variables out of every collection: as local variables
    # the session initializes them, and no checkpoint holds them.
    for variable in metric.variables:
        if variable not in _V1.local_variables():
            _V1.add_to_collection(_KEYS.LOCAL_VARIABLES, variable)
    return tf.convert_to_tensor(metric.result()), tf.group(*updates)


def _session_creator(built, scaffold, checkpoint_path):
    return _ChiefSessionCreator(
        scaffold=scaffold,
        config=built.session_config(),
        checkpoint_filename_with_path=checkpoint_path,
    )


def _log_eval_progress(done, steps):
    """tf.estimator's progress lines: with `steps`, `Evaluation [done/steps]` every
    step under 20 steps, else every tenth of them and at the last."""
    if steps is None:
        return
    every = 1 if steps < 20 else steps // 10
    if done % every == 0 or done == steps:
        log.info("Evaluation [%d/%d]", done, steps)


def evaluate(built, steps, hooks, checkpoint_path):
    """`Estimator.evaluate` on `built`, an EVAL `ModeGraph`: the metric values."""
    with built.graph.as_default():
        warm_start_hooks = _warm_start_untrained(built, checkpoint_path)
    return Evaluation(built, hooks).run(steps, checkpoint_path, first_hooks=warm_start_hooks)


class Evaluation:
    """An evaluation of `built` (an EVAL `ModeGraph`), its ops made once: the metrics,
    their updates and the hooks'. Each `run` evaluates in a session of its own, as
    tf.estimator 2.15 built an evaluation graph once and ran it (InMemoryEvaluatorHook
    runs one every `every_n_iter` steps)."""

    def __init__(self, built, hooks):
        self.built = built
        spec = built.spec
        with built.graph.as_default():
            scaffold = built.scaffold()
            values, updates = {}, []
            for name, metric in spec.eval_metric_ops.items():
                values[name], update = metric_pair(name, metric)
                updates.append(update)
            if "loss" not in values:
                values["loss"], update = _V1.metrics.mean(spec.loss)
                updates.append(update)
            # As 2.15 ran them (and hooks see them in `original_args.fetches`): the
            # metrics' updates grouped, then the eval step's count, a list of two.
            self.eval_ops = [tf.group(*updates), _eval_step().assign_add(1, use_locking=True)]
            if scaffold.local_init_op is not None:  # (the metrics' variables are new to it)
                scaffold = _V1.train.Scaffold(
                    local_init_op=tf.group(
                        scaffold.local_init_op, _V1.train.Scaffold.default_local_init_op()
                    ),
                    copy_from_scaffold=scaffold,
                )
            self.scaffold = scaffold
            self.logs = {**values, "global_step": built.global_step}
            self.hooks = [
                *built.input_hooks,
                *_hooks_for_graph(list(hooks) + list(spec.evaluation_hooks), built, self.logs),
            ]

    def run(self, steps, checkpoint_path, first_hooks=()):
        """The metric values of one evaluation; `first_hooks` come before the others (the
        input's too: an InMemoryEvaluatorHook's loading of the training values)."""
        built, final = self.built, _V1.train.FinalOpsHook(self.logs)  # (it makes no op)
        with built.graph.as_default():
            log.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S"))
            start = time.time()
            creator = _session_creator(built, self.scaffold, checkpoint_path)
            hooks = [*first_hooks, *self.hooks, final]
            with _V1.train.MonitoredSession(session_creator=creator, hooks=hooks) as session:
                done = 0
                while not session.should_stop() and (steps is None or done < steps):
                    session.run(self.eval_ops)
                    done += 1
                    _log_eval_progress(done, steps)
            log.info("Inference Time : %.5fs", time.time() - start)
            log.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S"))
        if final.final_ops_values is None:
            raise ValueError("evaluate: input_fn produced no data.")
        # As the session gave them (2.15): a float64 or int32 metric stays one, a vector
        # metric an array, a serialized summary bytes.
        return dict(final.final_ops_values)


def _eval_step():
    """The evaluation's count of batches, as tf.estimator 2.15 kept it: `eval_step`, an
    int64 local variable in the EVAL_STEP collection (its stop-after-N hook and users'
    hooks read it there), made after the metrics', counted up by each run of the updates
    (unordered with them, as 2.15's)."""
    found = _V1.get_collection(_KEYS.EVAL_STEP)
    if found:
        return found[0]
    return _V1.get_variable(
        "eval_step",
        shape=[],
        dtype=tf.int64,
        initializer=_V1.zeros_initializer(),
        trainable=False,
        collections=[_KEYS.LOCAL_VARIABLES, _KEYS.EVAL_STEP],
        use_resource=True,
    )


# -------------------------------------------------------------------- predict
def predict(built, predict_keys, hooks, checkpoint_path, yield_single_examples):
    """`Estimator.predict` on `built`, a PREDICT `ModeGraph`: yields predictions.

    The predict graph is the default graph while the session builds and runs, not while
    the caller holds a prediction: 2.15 yielded inside it, so a generator left half-read
    (`next(estimator.predict(...))` in a notebook, a test that failed holding one) kept
    its finalized graph, and graph mode, default for everything after it in that thread.
    """
    spec = built.spec
    predictions, single = selected_predictions(spec.predictions, predict_keys)
    graph = built.graph
    with graph.as_default():
        warm_start_hooks = _warm_start_untrained(built, checkpoint_path)
        scaffold = built.scaffold()
        every_hook = [
            *warm_start_hooks,
            *built.input_hooks,
            *_hooks_for_graph(
                list(hooks) + list(spec.prediction_hooks),
                built,
                {"predictions": predictions, "global_step": built.global_step},
            ),
        ]
        session = _V1.train.MonitoredSession(
            session_creator=_session_creator(built, scaffold, checkpoint_path), hooks=every_hook
        )
    try:
        while True:
            with graph.as_default():
                if session.should_stop():
                    break
                arrays = session.run(predictions)
            yield from yielded_predictions(arrays, single, yield_single_examples)
    except BaseException as error:  # the session's own exit: end of input, or closed early
        with graph.as_default():
            if not session.__exit__(type(error), error, error.__traceback__):
                raise
        return
    with graph.as_default():
        session.__exit__(None, None, None)


# --------------------------------------------------------------------- export
def signature_defs(spec, receiver):
    """tf.estimator's signatures: one per export output, by the outputs' own rules, for
    the receiver's tensors and for each group of its alternatives."""
    from components.estimator import serving

    signatures = {}
    servable = serving.receiver_signatures(spec, receiver)
    for key, (output, inputs, outputs) in servable.items():
        signatures[key] = _V1.saved_model.build_signature_def(
            inputs={k: _V1.saved_model.build_tensor_info(t) for k, t in inputs.items()},
            outputs={k: _V1.saved_model.build_tensor_info(t) for k, t in outputs.items()},
            method_name=output.method_name,
        )
    return signatures
