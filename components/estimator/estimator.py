"""The `Estimator`: train, evaluate, predict and export around a `model_fn`.

One shared core for every canned estimator.  `model_fn` is traced into
`tf.function`s (one per mode); a `VariableStore` makes every trace see the
same variables; checkpoints are name-based, as tf.estimator's (checkpoints.py).
Training runs many steps per `tf.function` call between the points where
the host has work to do (summaries, logging, checkpoints, hooks).  Against
tf.estimator 2.15 each `train()` call saves the graph rebuild and session
start; per step, most of the gain on wide & deep is the canned linear model's
gather for single dense ids (see docs/benchmarks/, the Estimator against tf.estimator 2.15).
"""

import atexit
import concurrent.futures
import contextlib
import copy
import functools
import inspect
import logging
import math
import os
import random
import shutil
import tempfile
import threading
import time
import weakref

import numpy as np
import tensorflow as tf
import tf_keras
from tensorflow.python.autograph.core import ag_ctx
from tensorflow.python.framework import func_graph as func_graph_lib
from tensorflow.python.framework import ops as tf_ops

from components.estimator import checkpoints as ckpt_lib
from components.estimator import (
    graph_export,
    graph_mode,
    graph_seeds,
    inputs,
    pruning,
    run_config,
    server,
    summaries,
    tf_logging,
    unfetched,
)
from components.estimator.hooks import HookRunner, check_listeners, is_hook
from components.estimator.model_fn import (
    EstimatorSpec,
    ModeKeys,
    metric_value,
    selected_predictions,
    yielded_predictions,
)
from components.estimator.run_config import RunConfig
from components.estimator.variables import VariableStore

log = logging.getLogger(__name__)


def _accepted_args(fn):
    """The names an Estimator passes `fn` (a model_fn or an input_fn) arguments by, as
    tf.estimator 2.15 counted them: its positional parameters (with or without a default;
    a callable object's `__call__`'s, a bound method's without `self`), not keyword-only
    ones, nor those a `functools.partial` bound (by position or keyword), which keep the
    value the partial gives them."""
    if isinstance(fn, type) or not callable(fn):
        raise TypeError(f"unsupported callable\n{fn!r} is not callable.")  # (2.15's words first)
    return set(_positional_args(fn))


def _positional_args(fn):
    if isinstance(fn, functools.partial):
        names = _positional_args(fn.func)[len(fn.args) :]
        return [name for name in names if name not in (fn.keywords or {})]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(fn).parameters.items()
    return [name for name, parameter in parameters if parameter.kind in positional]


# What the Estimator passes a model_fn (by name), as tf.estimator did.
_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "config"}


def _check_metric_names(eval_metric_ops):
    """2.15's refusal of the names evaluate() gives its own values: `loss` (the mean of
    the spec's loss) and `global_step` (what a user's metric of that name would hide)."""
    if "loss" in eval_metric_ops:
        raise ValueError(
            'Metric with name "loss" is not allowed, because Estimator already defines a '
            "default metric with the same name."
        )
    if tf.compat.v1.GraphKeys.GLOBAL_STEP in eval_metric_ops:
        raise ValueError(
            "Metric with name `global_step` is not allowed, because Estimator already "
            "defines a default metric with the same name."
        )


def _whole_steps(count):
    """A step count as a whole number: a fractional one rounded up.  tf.estimator 2.15
    took any number (its StopAtStepHook stopped at the first step reaching it), and
    samples pass `num_epochs * len(rows) / batch_size`, a float, as max_steps."""
    if count is None or isinstance(count, int):
        return count
    return math.ceil(count)


def _checked_hooks(hooks):
    """train/evaluate/predict's `hooks` as a list, each a hook (TF1's or this kit's)."""
    hooks = list(hooks or ())
    for hook in hooks:
        if not is_hook(hook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {hook}")
    return hooks


def _expose_global_step(global_step):
    """Puts the Estimator's step where `tf.compat.v1.train.get_global_step()` finds it in
    the function `model_fn` is traced in, as it found it in tf.estimator's graph (a traced
    function's collections are its own: nothing outlives the trace)."""
    graph = tf.compat.v1.get_default_graph()
    key = tf.compat.v1.GraphKeys.GLOBAL_STEP
    if global_step is not None and not tf.executing_eagerly() and not graph.get_collection(key):
        graph.add_to_collection(key, global_step)


_VARIABLE_KEYS = (
    tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
    tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES,
    tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
)


def _collected(next_creator, **kwargs):
    """A variable `model_fn` makes (or the store gives again), in the trace's TF1
    collections as a graph's constructor put it there (the store makes it eagerly,
    where no collection is kept)."""
    variable = next_creator(**kwargs)
    keys = list(kwargs.get("collections") or [tf.compat.v1.GraphKeys.GLOBAL_VARIABLES])
    on_read = kwargs.get("synchronization") == tf.VariableSynchronization.ON_READ
    if kwargs.get("trainable", not on_read) and _VARIABLE_KEYS[1] not in keys:
        keys.append(_VARIABLE_KEYS[1])
    graph = tf.compat.v1.get_default_graph()
    for key in keys:
        listed = graph.get_collection_ref(key)
        if not any(v is variable for v in listed):
            listed.append(variable)
    return variable


@contextlib.contextmanager
def _variable_collections(global_step):
    """In a trace, `tf.compat.v1.global_variables()`, `trainable_variables()` and
    `local_variables()` list what `model_fn` made, as tf.estimator's graph listed them (a
    Keras optimizer's `get_updates(loss, tf.compat.v1.trainable_variables())` trained
    nothing here: they were empty). The lists are the trace's own: a traced function
    shares them with the graph around it, which outlives the call."""
    graph = tf.compat.v1.get_default_graph()
    if tf.executing_eagerly():
        yield
        return
    kept = {key: graph._collections.get(key) for key in _VARIABLE_KEYS}
    for key in _VARIABLE_KEYS:
        graph._collections[key] = []
    if global_step is not None:
        graph._collections[_VARIABLE_KEYS[0]].append(global_step)
    try:
        with tf.variable_creator_scope(_collected):
            yield
    finally:
        for key, listed in kept.items():
            if listed is None:
                graph._collections.pop(key, None)
            else:
                graph._collections[key] = listed


def _is_parameter_server(strategy):
    return isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)


class _ParameterServerChunks:
    """Runs chunks of training steps on the workers of a parameter-server cluster.

    This process coordinates: each chunk is split across the workers, each
    scheduled `run_steps` call runs on whichever worker is free, and a lost
    worker's call is retried elsewhere by the `ClusterCoordinator`.
    """

    def __init__(self, strategy, dataset, run_steps):
        self._coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        self._iterator = iter(self._coordinator.create_per_worker_dataset(dataset))
        self._run_steps = run_steps
        self._workers = max(1, strategy.extended._num_workers)
        # A zero-step call traces model_fn (creating the variables on the ps
        # tasks) before the host loop needs them.
        self._coordinator.schedule(run_steps, args=(self._iterator, *self._counts(0)))
        self._coordinator.join()

    @staticmethod
    def _counts(num_steps):
        """(steps, summarize_at): the model's own summaries are not asked of workers."""
        return tf.constant(num_steps, tf.int64), tf.constant(0, tf.int64)

    def __call__(self, num_steps, summarize=False):
        shares = [
            num_steps // self._workers + (1 if i < num_steps % self._workers else 0)
            for i in range(self._workers)
        ]
        results = [
            self._coordinator.schedule(self._run_steps, args=(self._iterator, *self._counts(share)))
            for share in shares
            if share
        ]
        self._coordinator.join()
        done = sum(int(r.fetch()[0]) for r in results)
        return done, np.asarray(results[-1].fetch()[1])[()], b""


def _scope(strategy):
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def _outside_strategy(fn):
    """Calls `fn()` where no `tf.distribute` strategy is in scope, and returns its result.

    Evaluation and export do not use the training strategy (as with
    tf.estimator, whose evaluations built graphs of their own), yet
    `train_and_evaluate` calls them from inside `train`, in its strategy's
    scope.  There, a variable the chief alone creates (a metric) would be
    broadcast to workers that never create it.  Strategy scopes are per
    thread, so the call runs in a thread of its own; so do calls from a
    graph-mode training session (see graph_mode), which must run eagerly.
    """
    if not tf.distribute.has_strategy() and tf.executing_eagerly():
        return fn()
    with concurrent.futures.ThreadPoolExecutor(1, "estimator-outside-strategy") as pool:
        return pool.submit(fn).result()


def _release_in_background(references):
    """Empties the list `references`, which holds the last reference to a tf.data
    iterator, in a thread of its own.  Deleting an iterator waits for tf.data's
    autotuning thread to notice, idle: up to 5 s at the end of a train() call
    (measured on TF 2.21)."""
    threading.Thread(target=references.clear, name="estimator-release", daemon=True).start()


def _copied_params(params):
    """A copy of an Estimator's params, as tf.estimator 2.15 deep-copied them for the
    Estimator and for each model_fn call: a dict (of its own class), or another object
    (the HParams or argparse Namespace r1 samples pass, read as attributes), with the
    lists, dicts, sets and tuples in it copied, so that a model_fn changing them
    (`params["hidden_units"].pop()`) changes them for that call only. Other objects in
    them (a hook, a model, a feature column) are shared, not copied as 2.15 copied them:
    a hook passed in params is the one the caller reads afterwards."""
    shared = {}
    _share_objects(params, shared, set(), top=True)
    try:
        return copy.deepcopy(params, shared)
    except Exception:  # (an object that cannot be copied: as the kit copied before)
        return dict(params) if isinstance(params, dict) else copy.copy(params)


_PARAMS_DATA = (type(None), bool, int, float, complex, str, bytes, np.generic, np.ndarray)


def _share_objects(value, shared, seen, top=False):
    """Puts in `shared` (a deepcopy memo) every object in `value` that is not data or a
    container of data, so that deepcopy keeps it as it is (`seen`: containers walked)."""
    if isinstance(value, _PARAMS_DATA) or id(value) in seen:
        return
    if type(value) in (list, tuple, set, frozenset):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif top and hasattr(value, "__dict__"):
        items = vars(value).values()
    else:
        shared[id(value)] = value
        return
    seen.add(id(value))
    for item in list(items):
        _share_objects(item, shared, seen)


def _final_values(traced, features, labels):
    """{name: value} of the eval step's pairs updated by an op (tf.no_op(), a group),
    read after the last batch's updates, as 2.15's session fetched every metric's value
    once at the end (their value's reads, traced before the update, saw the batch
    before). `traced` returns (values, finals); the last batch's arguments."""
    finals = traced.structured_outputs[1]
    if not finals:
        return {}
    names = sorted(finals)
    read = pruning.reading_only(traced, [finals[name] for name in names])
    if read is None:
        return {}
    return {name: value.numpy() for name, value in zip(names, read(features, labels), strict=True)}


def _made_since(dataset, started):
    """Whether eager `dataset` and the datasets it reads were made after `started` (an
    `ops.uid()`): none made before the input_fn call, which 2.15's graph refused."""
    pending = [dataset]
    while pending:
        dataset = pending.pop()
        variant = getattr(dataset, "_variant_tensor", None)
        if getattr(variant, "_id", -1) <= started:
            return False
        try:
            pending.extend(dataset._inputs())
        except Exception:  # (a user's Dataset class): asked of the graph instead
            return False
    return True


def _input_of_structure(result):
    """An input_fn giving, in a graph, tensors of the structure of `result` (what the
    user's input_fn returned eagerly: a Dataset, or tensors), for a scratch graph of
    `model_fn` that needs the input's structure only; None if `result` has none."""
    if isinstance(result, Exception):
        return None
    try:
        if not isinstance(result, tf.data.Dataset):
            result = tf.data.Dataset.from_tensors(result)
        spec = result.element_spec
    except (TypeError, ValueError):
        return None

    def legacy(kind):
        return tf.nest.map_structure(
            lambda part: getattr(part, f"_to_legacy_output_{kind}")(), spec
        )

    def input_fn():
        iterator = tf.compat.v1.data.Iterator.from_structure(
            legacy("types"), legacy("shapes"), output_classes=legacy("classes")
        )
        return iterator.get_next()

    return input_fn


def _metrics_as_they_start(traced):
    """The metric values of an evaluation in which no batch ran, read from `traced`
    eval step's zeroed variables: 2.15's session read each metric as it starts."""
    outputs = traced.structured_outputs[0]
    names = sorted(outputs)
    read = pruning.as_they_stand(traced, [outputs[name] for name in names])
    if read is None:
        raise ValueError("evaluate: input_fn produced no data.")
    return {n: v.numpy() for n, v in zip(names, read(), strict=True)}


def _split_element(element):
    return graph_mode.features_and_labels(element)


def _fills_queues(graph):
    """Whether `graph` has queue runners (`string_input_producer`, `shuffle_batch`, ...):
    pre-tf.data input_fns, whose batches only a session with their runners started gives
    (eagerly, TensorFlow refuses queues)."""
    return bool(graph.get_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS))


def _built_tf1_input(graph):
    """Whether a build that failed left TF1 input code in `graph` (queues, or the local
    variables of epochs and matched files): its error is 2.15's graph error, the user's."""
    return _fills_queues(graph) or bool(
        graph.get_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES)
    )


# On a model_fn that wraps another Estimator's (its bound `model_fn`, add_metrics'): that
# Estimator, whose model_fn's path (TF2 or graph) the wrapper's Estimator takes.
WRAPPED_ESTIMATOR = "_wraps_model_fn_of"


def _without_partials(model_fn):
    """The function a (nest of) functools.partial calls, or `model_fn` itself."""
    while hasattr(model_fn, "func"):
        model_fn = model_fn.func
    return model_fn


def _wrapped_estimator(model_fn):
    """The Estimator whose model_fn `model_fn` wraps (through partials), or None."""
    return getattr(_without_partials(model_fn), WRAPPED_ESTIMATOR, None)


def _is_kit_model_fn(model_fn):
    """A canned estimator's (or model_to_estimator's) model_fn: TF2 code of this package.
    A wrapper of another Estimator's model_fn is what that one is."""
    wrapped = _wrapped_estimator(model_fn)
    if wrapped is not None:
        return _is_kit_model_fn(wrapped._model_fn)
    return getattr(_without_partials(model_fn), "__module__", "").startswith(__package__ + ".")


class EvaluationResults(dict):
    """evaluate()'s dict (its values numpy's, as 2.15's), which `print()` shows as 2.15's
    showed under numpy 1.x, `{'accuracy': 0.475, ..., 'global_step': 12}`: numpy 2 writes
    each value's type there (`np.float32(0.475)`)."""

    def __repr__(self):
        with tf_logging.printed_as_numpy_1():
            return super().__repr__()


def in_215_order(results):
    """evaluate()'s results in 2.15's order: the metrics' keys sorted, then `global_step`."""
    step_key = tf.compat.v1.GraphKeys.GLOBAL_STEP
    ordered = EvaluationResults((key, results[key]) for key in sorted(results) if key != step_key)
    if step_key in results:
        ordered[step_key] = results[step_key]
    return ordered


def task_config(estimator):
    """The RunConfig `estimator` trains by on this task: under a strategy's cluster, the
    task's own role in it (`estimator.config` keeps 2.15's one-machine fields there)."""
    return estimator._config


_TEMPORARY_MODEL_DIR_PREFIX = "estimator-"


# The members of tf.estimator 2.15's Estimator that a subclass could not redefine: its
# public ones but model_fn and latest_checkpoint, and its private ones but those 2.15
# allowed (_create_and_assert_global_step, _export_all_saved_models, its API names). The
# private ones the kit lacks are refused too: 2.15 refused them, and the kit would not call
# them.
_FIXED_MEMBERS = (
    "config",
    "eval_dir",
    "evaluate",
    "experimental_export_all_saved_models",
    "export_saved_model",
    "export_savedmodel",
    "get_variable_names",
    "get_variable_value",
    "model_dir",
    "params",
    "predict",
    "train",
    "_actual_eval",
    "_actual_train_model_distributed",
    "_add_meta_graph_for_mode",
    "_assert_members_are_not_overridden",
    "_call_input_fn",
    "_call_model_fn",
    "_call_model_fn_eval",
    "_call_model_fn_eval_distributed",
    "_convert_eval_steps_to_hooks",
    "_convert_train_steps_to_hooks",
    "_create_global_step",
    "_evaluate_build_graph",
    "_evaluate_run",
    "_extract_batch_length",
    "_extract_keys",
    "_get_features_and_labels_from_input_fn",
    "_get_features_from_input_fn",
    "_get_iterator_from_input_fn",
    "_maybe_warm_start",
    "_tf_docs_inheritable_header",
    "_train_model",
    "_train_model_default",
    "_train_model_distributed",
    "_train_with_estimator_spec",
    "_train_with_estimator_spec_distributed",
    "_validate_features_in_predict_input",
)


def tf1_export_savedmodel(
    self,
    export_dir_base,
    serving_input_receiver_fn,
    assets_extra=None,
    as_text=False,
    checkpoint_path=None,
    strip_default_attrs=False,
):
    """TF1's name for `export_saved_model`, a method of 2.15's V1 Estimator
    (tf.compat.v1.estimator's classes, and the RNN estimators, which subclassed it);
    `strip_default_attrs` changes nothing here."""
    del strip_default_attrs
    return self.export_saved_model(
        export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
    )


def _check_not_overridden(cls):
    """2.15's refusal of an Estimator subclass that redefines one of those members in
    its own body (the kit's classes are its own; 2.15 let any class named TPUEstimator
    through, its own)."""
    if cls.__module__.split(".")[0] == "components" or cls.__name__ == "TPUEstimator":
        return
    overridden = [
        name
        for name in _FIXED_MEMBERS
        if name in vars(cls) and getattr(cls, name) != getattr(Estimator, name, None)
    ]
    if overridden:
        raise ValueError(
            "Subclasses of Estimator cannot override members of Estimator. "
            f"{cls} does override {overridden}"
        )


def _overrides_call_model_fn(cls):
    """Whether `cls` has a `_call_model_fn` of its own (a subclass of a program's, which
    2.15 let override it once `_assert_members_are_not_overridden` did nothing)."""
    return cls._call_model_fn is not Estimator._call_model_fn


def _as_warm_start_settings(warm_start_from):
    """`warm_start_from` as 2.15 kept it: a path is a `WarmStartSettings` from it (a
    SavedModel's folder: from its variables), every trainable variable warm-started."""
    if warm_start_from is None or isinstance(warm_start_from, ckpt_lib.WarmStartSettings):
        return warm_start_from
    path = os.fsdecode(warm_start_from)
    variables = os.path.join(path, "variables", "variables")
    if tf.io.gfile.exists(variables + ".index"):
        path = variables
    return ckpt_lib.WarmStartSettings(ckpt_to_initialize_from=path)


def checked_config(config, model_dir):
    """The Estimator's RunConfig (a default one for None) and its model_dir (the
    constructor's or the config's), refused with 2.15's errors: a config that is not a
    RunConfig, or a model_dir other than the config's."""
    if config is None:
        config = RunConfig()
        log.info("Using default config.")
    elif not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir and config.model_dir and model_dir != config.model_dir:
        raise ValueError(
            "`model_dir` are set both in constructor and `RunConfig`, but with different "
            f"values. In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' "
        )
    return config, model_dir or config.model_dir


def temporary_model_dir():
    """A fresh folder for an Estimator given no model_dir, removed when this process exits:
    tf.estimator left one behind per such Estimator, and a user's temp folder filled up.
    Only a folder of the kit's own naming is removed: a test that patches `tempfile.mkdtemp`
    to answer '/tmp' (as tf.estimator's own tests did) gets that folder back untouched."""
    model_dir = tempfile.mkdtemp(prefix=_TEMPORARY_MODEL_DIR_PREFIX)
    if not os.path.basename(model_dir).startswith(_TEMPORARY_MODEL_DIR_PREFIX):
        log.warning("Using temporary folder as model directory: %s", model_dir)
        return model_dir
    atexit.register(shutil.rmtree, model_dir, ignore_errors=True)
    log.warning(
        "Using temporary folder as model directory: %s (removed when this process exits; "
        "pass model_dir to keep the model).",
        model_dir,
    )
    return model_dir


# Without a checkpoint: 2.15's words when variables are read, and when exporting.
_NOT_TRAINED_VARIABLES = "Could not find trained model in model_dir: {}."
_NOT_TRAINED_EXPORT = "Couldn't find trained model at {}."


def _cached_writer(folder, graph):
    """FileWriterCache's writer of `folder`, made when it has none: with `graph` (a
    session's) as 2.15's was; or, `graph` a trace's (whose collections hold eager objects
    a MetaGraph cannot describe), with its GraphDef and a MetaGraph of that alone."""
    cache = tf.compat.v1.summary.FileWriterCache
    if not isinstance(graph, func_graph_lib.FuncGraph):
        with graph.as_default():
            return cache.get(folder)
    with cache._lock:
        writer = cache._cache.get(folder)
        if writer is None:
            with tf.Graph().as_default():  # (a FileWriter is made where nothing is eager)
                writer = cache._cache[folder] = tf.compat.v1.summary.FileWriter(folder)
            graph_def = graph.as_graph_def()
            writer.add_event(
                tf.compat.v1.Event(wall_time=time.time(), graph_def=graph_def.SerializeToString())
            )
            writer.add_meta_graph(tf.compat.v1.MetaGraphDef(graph_def=graph_def))
    return writer


def _log_eval_progress(evaluated, steps):
    """2.15's `Evaluation [i/N]` lines when evaluate() was given steps: each batch, or
    every tenth of them from 20 steps on, and the last."""
    if steps is None:
        return
    every = 1 if steps < 20 else math.floor(steps / 10)
    if evaluated % every == 0 or evaluated == steps:
        log.info("Evaluation [%d/%d]", evaluated, steps)


# `get_variable_value` of a name the checkpoint lacks: TensorFlow's NotFoundError, by its
# name (what tf.estimator raised), and a ValueError (what this kit raised before).
MissingVariableError = ckpt_lib.NotFoundError


class Estimator:
    """tf.estimator's `Estimator`, TF2-native."""

    # True for tf.compat.v1.estimator's canned estimators (compat_v1): they train
    # with TF1 optimizers, in a graph with a session, as 2.15 ran them.
    _runs_in_a_graph = False
    # Whether the canned model's own training summaries are tagged as 2.15's V1 classes
    # tagged them (`dnn/dnn/hiddenlayer_0/...`, `linear/bias`, `average_loss`).
    _v1_summaries = False
    # Why the model cannot run in a graph with a session, for a model that cannot.
    _needs_eager_execution = None
    # True for tf.estimator's canned classes: 2.15 exported them from a tf.Graph (its
    # tensor names, name-based variable keys), whichever path they train on here.
    _exports_a_graph = False
    # Whether the TF2 path's variables are dropped when the checkpoint they were saved to
    # is gone (`_forget_variables_without_a_checkpoint`); not by a class that holds them
    # in a model of its own.
    _forgets_variables_without_a_checkpoint = True
    # Whether the graph path converts model_fn with AutoGraph, while a subclass's own
    # `_call_model_fn` runs (`_call_model_fn_in_graph`).
    _autograph_in_graph = False
    # The modes whose model_fn this call already called (and whose lines it logged).
    _model_fn_lines_shown = frozenset()
    # (The class attributes above, which an Estimator wrapping this one's model_fn takes.)
    _MODEL_TRAITS = (
        "_runs_in_a_graph",
        "_v1_summaries",
        "_needs_eager_execution",
        "_exports_a_graph",
    )

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        # As 2.15 called it: a subclass (or a program patching the class, as Horovod's
        # and AdaNet's Estimators did) that makes it do nothing may override the rest.
        type(self)._assert_members_are_not_overridden(self)
        config, model_dir = checked_config(config, model_dir)  # (2.15 checked these first)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        self._model_fn_args = _accepted_args(model_fn)
        if "features" not in self._model_fn_args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in self._model_fn_args:  # (2.15's order)
            raise ValueError(
                f"model_fn ({model_fn}) does not include params argument, but params "
                f"({params}) is passed to Estimator."
            )
        unexpected = sorted(self._model_fn_args - _MODEL_FN_ARGS)
        if unexpected:
            raise ValueError(
                f"model_fn ({model_fn}) has following not expected args: {unexpected}\n"
                f"(the Estimator passes only {sorted(_MODEL_FN_ARGS)})."
            )
        if not model_dir:
            model_dir = temporary_model_dir()
        self._model_dir = model_dir
        self._user_config = run_config.with_default_session_config(
            config.replace(model_dir=model_dir)
        )
        log.info("Using config: %s", run_config.as_logged(self._user_config))
        if params is None and "params" in self._model_fn_args:
            log.warning(
                "Estimator's model_fn (%s) includes params argument, but params are not "
                "passed to Estimator.",
                model_fn,
            )
        # What the Estimator trains by, and model_fn gets: under a strategy's cluster, this
        # task's role in it (`config` keeps 2.15's one-machine fields, as its did).
        self._config = self._user_config._as_worker()
        self._params = _copied_params(params or {})
        self._model_fn = model_fn
        wrapped = _wrapped_estimator(model_fn)
        if wrapped is not None:  # (its model runs, summarizes and exports as the wrapped's)
            for trait in self._MODEL_TRAITS:
                setattr(self, trait, getattr(wrapped, trait))
        self._warm_start_from = ckpt_lib.checked_warm_start_from(warm_start_from)
        self._store = VariableStore()
        self._functions = {}
        self._traced_specs = {}
        self._written_graph = None  # the training trace last written as graph.pbtxt
        self._restarted = False  # set by `restart` until the next call
        self._graph_for_events = None  # the graph each TF2-path train() call's events get
        # Whether model_fn runs in a graph with a session (graph_mode): None until
        # its first build tells.
        self._graph_mode = None
        self._chosen_by_an_error = False  # (_forget_a_path_chosen_by_an_error)
        self._graph_named_modes = set()  # modes whose variables have a graph's names
        # Whether training runs in a graph with a session though the other modes take the
        # TF2 path: model_fn makes effects there that 2.15's session never ran
        # (`_trains_without_what_is_unfetched`).
        self._trains_in_a_graph = False
        self._iterator_input_fns = weakref.WeakKeyDictionary()
        # {thread: (input_fn, mode, what it returned)}: input_fn's result (or error) for the
        # TF2 path, from the call that chose the path (_graph_of_an_iterator).
        self._pending_inputs = {}

    model_dir = property(lambda self: self._model_dir)
    # A copy on each read, as 2.15 gave it: a program changing it changes nothing here.
    config = property(lambda self: run_config.handed_out(self._user_config))
    params = property(lambda self: _copied_params(self._params))
    # 2.15's private attribute, which TF Hub's LatestModuleExporter opens its session by.
    _session_config = property(lambda self: self._config.session_config)
    # 2.15's private attributes, which public code reads: the strategies (a subclass
    # refusing to be distributed), the device function.
    _train_distribution = property(lambda self: self._config.train_distribute)
    _eval_distribution = property(lambda self: self._config.eval_distribute)
    _device_fn = property(lambda self: self._config.device_fn)

    @property
    def _warm_start_settings(self):
        """2.15's attribute: the warm start as a `WarmStartSettings` (None without one),
        which programs hand to a new Estimator's `warm_start_from` or set to warm-start."""
        return _as_warm_start_settings(self._warm_start_from)

    @_warm_start_settings.setter
    def _warm_start_settings(self, settings):
        self._warm_start_from = ckpt_lib.checked_warm_start_from(settings)

    @property
    def model_fn(self):
        """The model_fn bound to `params`, as tf.estimator 2.15 gave it:
        `model_fn(features, labels, mode, config)` calls the user's with the arguments it
        takes and checks it returned an EstimatorSpec (TF Hub's LatestModuleExporter
        builds its serving graph so)."""

        def public_model_fn(features, labels, mode, config):
            kwargs = self._model_fn_kwargs(features, labels, mode, config)
            log.info("Calling model_fn.")
            spec = self._model_fn(**kwargs)
            log.info("Done calling model_fn.")
            if not isinstance(spec, EstimatorSpec):
                raise ValueError("model_fn should return an EstimatorSpec.")
            return spec

        setattr(public_model_fn, WRAPPED_ESTIMATOR, self)
        return public_model_fn

    # ----------------------------------------------------------- plumbing
    def _assert_members_are_not_overridden(self):
        """tf.estimator 2.15's check of a subclass, called when an Estimator is made."""
        _check_not_overridden(type(self))

    def _model_fn_kwargs(self, features, labels, mode, config=None):
        kwargs = {"features": features}
        if "labels" in self._model_fn_args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if config is None:  # (a user's model_fn gets a copy a call, as 2.15 gave it)
            kit = _is_kit_model_fn(self._model_fn)
            config = self._config if kit else run_config.handed_out(self._config)
        for name, value in (("mode", mode), ("params", self.params), ("config", config)):
            if name in self._model_fn_args:
                kwargs[name] = value
        return kwargs

    @staticmethod
    def _require_spec(spec):
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(
                f"model_fn should return an EstimatorSpec.\nIt returned a {type(spec).__name__}."
            )

    def _checked_spec(self, spec, mode):
        self._require_spec(spec)
        if spec.mode == ModeKeys.TRAIN and spec.loss is None:
            raise ValueError("model_fn returned no `loss` in TRAIN mode.")
        if mode == ModeKeys.EVAL:
            _check_metric_names(spec.eval_metric_ops)
        self._traced_specs[mode] = spec
        return spec

    def _call_model_fn(self, features, labels, mode, config=None):
        """tf.estimator 2.15's private method, which public code calls and overrides
        (Estimators patched to allow it, as AdaNet's): model_fn's EstimatorSpec, given
        the `config` model_fn gets (the kit's choice for None). Built where it is called:
        in a TF1 graph as the graph path builds (a program's own `tf.Graph` too), else as
        the TF2 path traces."""
        graph = tf.compat.v1.get_default_graph()
        if not tf.executing_eagerly() and not isinstance(graph, func_graph_lib.FuncGraph):
            return self._model_fn_in_graph(features, labels, mode, config)
        kwargs = self._model_fn_kwargs(features, labels, mode, config)
        # As in tf.estimator's graph: model_fn's own Python runs as it is, and
        # subclassed Keras layers convert their `call` with AutoGraph.
        collections = (
            contextlib.nullcontext()
            if _is_kit_model_fn(self._model_fn)
            else _variable_collections(self._store.global_step)
        )
        # The lines model_fn logs show once a call, as 2.15 called it once: not again
        # where this call's graph already called it (the TF2 path's scratch graph).
        shown = mode in self._model_fn_lines_shown and not _is_kit_model_fn(self._model_fn)
        with (
            self._store.scope(),
            collections,
            ag_ctx.ControlStatusCtx(status=ag_ctx.Status.UNSPECIFIED),
            tf_logging.withheld_but_the_kits() if shown else contextlib.nullcontext(),
        ):
            _expose_global_step(self._store.global_step)
            spec = self._model_fn(**kwargs)
            self._store.name_as_in_graph(mode)
        self._require_spec(spec)
        if spec.scaffold is not None and graph_mode.scaffold_has_session_fields(spec.scaffold):
            raise ValueError(
                "model_fn's Scaffold has TF1 session fields (init_fn, init_op, local_init_op, "
                "ready_op, summary_op or a Saver), but model_fn does not build in a graph, so "
                "it runs as TF2 code, where nothing runs them: make model_fn build in a "
                "tf.Graph, or initialize with initializers or warm_start_from instead."
            )
        return self._checked_spec(spec, mode)

    def _traced_model_fn_call(self, features, labels, mode):
        """The TF2 path's model_fn call: `_call_model_fn`, a subclass's own given 2.15's
        arguments (a copy of the Estimator's config)."""
        if _overrides_call_model_fn(type(self)):
            spec = self._checked_spec(
                self._call_model_fn(features, labels, mode, self.config), mode
            )
        else:
            spec = self._call_model_fn(features, labels, mode)
        self._chosen_by_an_error = False  # (model_fn runs here: the path stays chosen)
        return spec

    def _call_model_fn_in_graph(self, features, labels, mode, autograph=False):
        """`model_fn` in the current `tf.Graph`, its variables the graph's (graph_mode);
        with `autograph`, a user's model_fn converted by AutoGraph (recursively), as
        tf.estimator's strategies' `call_for_each_replica` converted it (graph_strategy).
        A subclass's own `_call_model_fn` is called instead, with 2.15's arguments."""
        if _overrides_call_model_fn(type(self)):
            self._autograph_in_graph = autograph  # (for its super() call)
            try:
                spec = self._call_model_fn(features, labels, mode, self.config)
            finally:
                self._autograph_in_graph = False
            return self._checked_spec(spec, mode)
        return self._model_fn_in_graph(features, labels, mode, None, autograph)

    def _model_fn_in_graph(self, features, labels, mode, config, autograph=None):
        log.info("Calling model_fn.")
        model_fn = self._model_fn
        if autograph is None:
            autograph = self._autograph_in_graph
        if autograph and not _is_kit_model_fn(model_fn):
            enabled = ag_ctx.ControlStatusCtx(status=ag_ctx.Status.ENABLED)
            model_fn = tf.__internal__.autograph.tf_convert(model_fn, enabled)
        # In every mode, as 2.15's canned models summarized their layers in every graph
        # (an export's graph holds those ops; only training writes them).
        with summaries.in_training_graph(v1=self._v1_summaries), unfetched.noting():
            spec = model_fn(**self._model_fn_kwargs(features, labels, mode, config))
        self._model_fn_lines_shown = self._model_fn_lines_shown | {mode}
        log.info("Done calling model_fn.")
        return self._checked_spec(spec, mode)

    def _mode_graph(self, mode, hooks, input_fn=None, receiver_fn=None, before_input=None):
        """The `graph_mode.ModeGraph` to run `mode` in, or None for the TF2 path.

        This kit's own model_fns are TF2 code and skip the check, unless the
        call brings what only a session runs: TF1 `SessionRunHook`s, or an
        input_fn that returns a TF1 iterator's next element, or is made where nothing
        runs eagerly (`tf.compat.v1.disable_eager_execution()`, a `tf.Graph` block),
        where the TF2 path cannot run.  `before_input()`: what must run before the TF2
        path calls input_fn (train()'s seeding).

        A scratch graph that the TF2 path's trace replaces has what it drew from Python's
        `random` undone (Keras layers' default initializers take their seeds there): the
        trace then draws what 2.15's one graph of the call drew, and the program's
        `random` is left where 2.15 left it."""
        eager_off = graph_mode.eager_execution_off()
        if self._needs_eager_execution and eager_off:
            raise RuntimeError(
                f"{type(self).__name__} runs only with eager execution, which is off here "
                "(tf.compat.v1.disable_eager_execution(), disable_v2_behavior() or a "
                f"tf.Graph().as_default() block): {self._needs_eager_execution}. Run it "
                "where eager execution is on (TensorFlow 2's default)."
            )
        forced = (
            self._runs_in_a_graph
            or eager_off
            or any(graph_mode.is_session_run_hook(h) for h in hooks or ())
            or (mode == ModeKeys.TRAIN and self._trains_in_a_graph)
        )
        self._pending_inputs.pop(threading.get_ident(), None)
        self._model_fn_lines_shown = frozenset()  # (a call's model_fn calls start here)
        self._forget_a_path_chosen_by_an_error()
        if not forced and (self._graph_mode is False or _is_kit_model_fn(self._model_fn)):
            built = input_fn is not None and self._graph_of_an_iterator(
                input_fn, mode, before_input
            )
            if not built and self._graph_mode is False:
                built = self._name_variables_as_a_graph(mode, input_fn, receiver_fn)
            return built or None
        graph, draws = tf.Graph(), random.getstate()
        try:
            built = graph_mode.ModeGraph(
                self, mode, input_fn=input_fn, receiver_fn=receiver_fn, graph=graph
            )
        except Exception as error:
            if graph_mode.made_elsewhere(error):
                raise  # (2.15's error, whichever path the model_fn takes)
            # Code that only runs in a tf.function (TF2-style) lands here: the TF2
            # path runs it, unless what it did in the graph was TF1 already.
            if forced or self._graph_mode or graph_mode.tf1_collections(graph):
                raise
            log.debug("model_fn does not build in a graph; using the TF2 path.", exc_info=True)
            self._graph_mode = False
            self._graph_named_modes = None  # (nor will it for the other modes)
            self._chosen_by_an_error = True  # (until model_fn runs on the TF2 path)
            random.setstate(draws)  # (see _mode_graph)
            return None
        if self._graph_mode is None:
            if not forced and input_fn is not None and built.reads_an_iterator:
                with contextlib.suppress(TypeError):  # (as the probe's)
                    self._iterator_input_fns[input_fn] = True
                return built
            markers = built.markers()
            if markers:
                why = f"model_fn uses {', '.join(markers)}"
            elif graph_mode.written_by_a_graph(self._model_dir_checkpoint()):
                # (A model_dir of tf.estimator's: its variables have graph names.)
                why = "model_dir's checkpoint was written by a graph (as tf.estimator's are)"
            elif forced:  # (what this call brings needs the graph; later calls choose)
                return built
            else:
                self._graph_mode = False
                self._graph_named_modes.add(mode)
                self._store.expect_graph_names(mode, graph)
                if self._trains_without_what_is_unfetched(built):
                    return built
                random.setstate(draws)  # (see _mode_graph)
                return None
            self._graph_mode = True
            log.debug("%s: it runs in a graph with a session, as under tf.estimator.", why)
        return built

    def _graph_of_an_iterator(self, input_fn, mode, before_input):
        """The mode's graph when `input_fn` reads a TF1 iterator (`_input_fn_reads_an_iterator`),
        else None, input_fn called once a call where tf.estimator 2.15 called it once: first
        eagerly, for the TF2 path (`_call_input_fn` takes that result), and in the mode's
        graph only when that does not tell: a result that is no Dataset made in the call
        (tensors, perhaps an iterator's next element; a Dataset made before the call,
        2.15's error)."""
        if not self._calls_input_fn_first(mode):
            if not self._input_fn_reads_an_iterator(input_fn, mode):
                return None
            return graph_mode.ModeGraph(self, mode, input_fn=input_fn, graph=tf.Graph())
        if before_input is not None:
            before_input()
        started = tf_ops.uid()
        try:
            result = self._input_fn_result(input_fn, mode)
        except Exception as error:  # (raised again by _call_input_fn on the TF2 path)
            result = error
        if not isinstance(result, tf.data.Dataset):
            built = self._iterator_mode_graph(input_fn, mode)
        else:  # (no iterator's: a Dataset made before the call is 2.15's error)
            built = None
            if not (getattr(input_fn, "returns_dataset", False) or _made_since(result, started)):
                self._input_fn_reads_an_iterator(input_fn, mode)
        if built is None:
            self._pending_inputs[threading.get_ident()] = (input_fn, mode, result)
        return built

    def _iterator_mode_graph(self, input_fn, mode):
        """The mode's graph if `input_fn` reads an iterator (or queues) in it, else None
        (what the TF2 path's model_fn would make not built)."""
        with contextlib.suppress(KeyError, TypeError):
            if not self._iterator_input_fns[input_fn]:
                return None
        graph, state = tf.Graph(), random.getstate()
        try:
            built = graph_mode.ModeGraph(self, mode, input_fn, graph=graph, iterator_only=True)
        except Exception as error:  # code that builds only eagerly: not a TF1 iterator's
            if graph_mode.made_elsewhere(error):
                raise
            if graph_mode.reads_an_iterator(graph) or _built_tf1_input(graph):
                raise  # (a model_fn failing over an iterator's input, or TF1 input code)
            log.debug("input_fn does not build in a graph.", exc_info=True)
            built = None
        if built is None or not built.reads_an_iterator:
            built = None
            random.setstate(state)  # (its draws undone: the TF2 path runs; see _mode_graph)
        self._remember_iterator_input(input_fn, built is not None)
        return built

    def _remember_iterator_input(self, input_fn, reads):
        """Notes (and says, when it does) whether `input_fn` reads a TF1 iterator."""
        if reads:
            log.debug(
                "input_fn returns an iterator's next element or a queue's (TF1 style): this "
                "call runs in a graph with a session, as tf.estimator ran it."
            )
        with contextlib.suppress(TypeError):  # not weakly referable: asked again next time
            self._iterator_input_fns[input_fn] = reads

    def _calls_input_fn_first(self, mode):
        """Whether the TF2 path's input_fn is called before the path is chosen: not when a
        strategy or a parameter-server cluster calls it in training (once per worker)."""
        config = self._config
        return mode != ModeKeys.TRAIN or (
            config.train_distribute is None and not config.num_ps_replicas
        )

    def _name_variables_as_a_graph(self, mode, input_fn, receiver_fn):
        """Has the TF2 path name the variables `mode` makes as tf.estimator's graph named
        them (`VariableStore.expect_graph_names`): `model_fn` built in a graph once per
        mode, the first time the mode runs (a Keras optimizer's slots, made in TRAIN
        only, when PREDICT ran first). Returns the TRAIN graph to train in instead when
        model_fn makes effects there that 2.15 never ran (else None)."""
        if self._graph_named_modes is None or mode in self._graph_named_modes:
            return None
        self._graph_named_modes.add(mode)
        real_input_fn = input_fn
        pending = self._pending_inputs.get(threading.get_ident())
        if pending is not None and pending[:2] == (input_fn, mode):
            input_fn = _input_of_structure(pending[2]) or input_fn  # (not called again)
        graph, draws = tf.Graph(), random.getstate()
        try:
            built = graph_mode.ModeGraph(
                self, mode, input_fn=input_fn, receiver_fn=receiver_fn, graph=graph
            )
        except Exception:
            log.debug("model_fn does not build in a graph in %s mode.", mode, exc_info=True)
            random.setstate(draws)  # (see _mode_graph)
            return None
        self._store.expect_graph_names(mode, graph)
        if mode == ModeKeys.TRAIN and self._trains_without_what_is_unfetched(built):
            if input_fn is real_input_fn:
                return built
            # (Built on a stand-in of the input's structure: the graph needs the input.)
            self._pending_inputs.pop(threading.get_ident(), None)
            random.setstate(draws)
            return graph_mode.ModeGraph(self, mode, input_fn=real_input_fn, graph=tf.Graph())
        random.setstate(draws)  # (see _mode_graph)
        return None

    def _forget_a_path_chosen_by_an_error(self):
        """A model_fn (or input_fn) that failed in its first graph made the TF2 path its
        path; when it failed there too, the call ended with that error and chose nothing
        (2.15 built each call's graph anew: a notebook's second call, its input fixed,
        ran as a first). The next call chooses again, with what the failed one traced or
        made dropped, as a new Estimator's first call."""
        if not self._chosen_by_an_error:
            return
        self._chosen_by_an_error = False
        self._graph_mode = None
        self._graph_named_modes = set()
        self._drop_traced_model()

    def _trains_without_what_is_unfetched(self, built):
        """Whether `built`, a TRAIN graph, holds effects its train op and loss do not need
        (`unfetched.effects`: updates left out of the train op, an unfetched print or
        assert), which 2.15's session never ran, where the TF2 path's trace would run
        them: then this Estimator trains in a graph with a session, as 2.15 trained."""
        if built.mode != ModeKeys.TRAIN:
            return False
        found = unfetched.effects(built)
        if found:
            self._trains_in_a_graph = True
            log.debug(
                "model_fn makes ops in training that neither its train_op nor its loss "
                "needs (%s): it trains in a graph with a session, which leaves them out "
                "as tf.estimator did.",
                unfetched.described(found),
            )
        return bool(found)

    def _input_fn_reads_an_iterator(self, input_fn, mode):
        """Whether `input_fn` returns the next element of a TF1 iterator
        (`make_one_shot_iterator(dataset).get_next()`) or of queues (`shuffle_batch`): a
        new batch per session run, which only a graph gives (run eagerly it would be one
        batch, forever; queues TensorFlow refuses).  Found by calling it once in a
        scratch graph, per input_fn, unless it says it returns a Dataset
        (`returns_dataset`: the Trainer's, whose parsing of hundreds of features took
        seconds to trace again)."""
        if getattr(input_fn, "returns_dataset", False):
            return False
        try:
            return self._iterator_input_fns[input_fn]
        except (KeyError, TypeError):
            pass
        graph = tf.Graph()
        try:
            with graph.as_default(), graph_mode.refusing_datasets_made_elsewhere():
                result = self._input_fn_result(input_fn, mode)
                if isinstance(result, tf.data.Dataset):  # (one made in main, 2.15 refused)
                    tf.compat.v1.data.make_initializable_iterator(result)
        except Exception as error:  # code that builds only eagerly: not a TF1 iterator's
            if graph_mode.made_elsewhere(error):
                raise
            if _built_tf1_input(graph):
                raise  # TF1 input code (queues, epochs, matched files): 2.15's graph error
            log.debug("input_fn does not build in a graph.", exc_info=True)
            result = None
        reads = (
            result is not None
            and not isinstance(result, tf.data.Dataset)
            and graph_mode.reads_an_iterator(graph)
        )
        self._remember_iterator_input(input_fn, reads)
        return reads

    def _input_fn_result(self, input_fn, mode, input_context=None):
        args = _accepted_args(input_fn)
        kwargs = {
            name: value for name, value in (("mode", mode), ("params", self.params)) if name in args
        }
        if "config" in args:  # (a copy a call, as 2.15 gave it)
            kwargs["config"] = run_config.handed_out(self._config)
        # (2.15 gave an input_context under a strategy only: `def input_fn(input_context)`
        # was Python's TypeError without one)
        if "input_context" in args and (input_context is not None or self._distributed(mode)):
            kwargs["input_context"] = input_context
        with inputs.read_by_an_estimator():
            result = input_fn(**kwargs)
        if input_context is not None:  # (given under a strategy: the graph path's too)
            self._check_distributed_input(result, mode)
        return result

    def _check_distributed_input(self, result, mode):
        """tf.estimator 2.15 read the input of a mode it distributed (the user's RunConfig
        names a strategy for it) as a Dataset only: tensors or an iterator's next element
        are refused with its error."""
        if self._distributed(mode) and not isinstance(result, tf.data.Dataset):
            raise ValueError("input_fn must return a tf.data.Dataset or a callable.")

    def _call_input_fn(self, input_fn, mode, input_context=None):
        pending = self._pending_inputs.pop(threading.get_ident(), None)
        if input_context is None and pending is not None and pending[:2] == (input_fn, mode):
            result = pending[2]  # (called when the path was chosen: _graph_of_an_iterator)
            if isinstance(result, Exception):
                raise result
        else:
            result = self._input_fn_result(input_fn, mode, input_context)
        if isinstance(result, tf.data.Dataset):
            return result
        self._check_distributed_input(result, mode)  # (the TF2 path's evaluation too)
        # tensors (or a (features, labels) pair of them): the same batch forever.
        return tf.data.Dataset.from_tensors(result).repeat()

    def _distributed(self, mode):
        """Whether the user's RunConfig names a strategy for `mode` (TRAIN or EVAL)."""
        config = self._user_config
        strategies = {
            ModeKeys.TRAIN: config.train_distribute,
            ModeKeys.EVAL: config.eval_distribute,
        }
        return strategies.get(mode) is not None

    def _global_step(self):
        with tf.init_scope():
            return self._store.create_global_step()

    def _create_global_step(self, graph):
        """2.15's: the global step made in `graph` (a subclass's graph of its own)."""
        return tf.compat.v1.train.create_global_step(graph)

    def _create_and_assert_global_step(self, graph):
        """2.15's: `_create_global_step(graph)`, checked to be the default graph's integer
        global step (AdaNet's Estimator makes one so before calling an input_fn)."""
        step = self._create_global_step(graph)
        assert step is tf.compat.v1.train.get_global_step()
        assert step.dtype.is_integer
        return step

    def traced_train_spec(self):
        """The EstimatorSpec the TRAIN trace returned, None before one (for hooks)."""
        return self._traced_specs.get(ModeKeys.TRAIN)

    def latest_checkpoint(self):
        return self._model_dir_checkpoint()

    def _model_dir_checkpoint(self):
        """The model_dir's latest checkpoint, whatever a subclass's `latest_checkpoint`
        (which 2.15 allowed, and asked for exports alone) returns."""
        return tf.train.latest_checkpoint(self._model_dir)

    def restart(self, config, initial_checkpoint):
        """Points this Estimator at `config` (a model_dir with no checkpoint yet), its
        variables set from `initial_checkpoint` (one of its own, e.g. its step-0 one): the
        next `train()` fits the same model afresh there with the functions it already traced.
        (The kit's extension: cross-validation fits a model once per fold, and a trace costs
        more than a small fold's training.) Not for a model_fn that builds in a graph."""
        if self._graph_mode or self._runs_in_a_graph or self._trains_in_a_graph:
            raise ValueError("restart: a model_fn that builds in a graph traces per call.")
        if not config.model_dir or tf.train.latest_checkpoint(config.model_dir):
            raise ValueError(
                f"restart: {config.model_dir!r} must be a model_dir without a checkpoint."
            )
        self._restore(initial_checkpoint, ModeKeys.TRAIN)
        self._restarted = True  # (its next call starts from these values, no checkpoint)
        self._model_dir = config.model_dir
        self._user_config = config
        self._config = config._as_worker()

    def get_variable_names(self):
        path = self._require_checkpoint(_NOT_TRAINED_VARIABLES)
        return ckpt_lib.variable_names(path)

    def get_variable_value(self, name):
        path = self._require_checkpoint(_NOT_TRAINED_VARIABLES)
        name = name[:-2] if name.endswith(":0") else name  # (a variable's `.name`, as 2.15)
        try:
            return ckpt_lib.read_variable(path, name)
        except ValueError as error:  # TensorFlow's error for a missing key, as under 2.15
            raise MissingVariableError(f"Key {name} not found in checkpoint\n{error}") from None

    def _require_checkpoint(self, not_trained=_NOT_TRAINED_EXPORT):
        """The latest checkpoint; without one, 2.15's ValueError (`not_trained`: its
        words when variables are read, or when exporting). As 2.15's, an export before
        any training takes the warm start's checkpoint (model_to_estimator's Keras
        weights, a `warm_start_from`), when there is one."""
        exporting = not_trained == _NOT_TRAINED_EXPORT  # (2.15 asked a subclass's own here)
        path = self.latest_checkpoint() if exporting else self._model_dir_checkpoint()
        if path is None and exporting and self._warm_start_from:
            with contextlib.suppress(ckpt_lib.NotFoundError):
                path = ckpt_lib.warm_start_checkpoint(self._warm_start_from)
        if path is None:
            raise ValueError(not_trained.format(self._model_dir))
        return path

    def _initialize_fresh_variables(self, variables):
        """Called instead of a restore when there is no checkpoint yet."""
        self._store.reset_local_variables()
        if self._warm_start_from is not None:
            ckpt_lib.warm_start(self._store.checkpoint_names(variables), self._warm_start_from)

    def _scaffold_saver(self, mode):
        """The `tf.train.Checkpoint` a `model_fn`'s Scaffold gives for `mode`, if any."""
        spec = self._traced_specs.get(mode) or self._traced_specs.get(ModeKeys.TRAIN)
        saver = spec.scaffold.saver if spec is not None and spec.scaffold is not None else None
        if saver is not None and not hasattr(saver, "global_step"):
            saver.global_step = self._store.global_step
        return saver

    def _checkpoint(self, mode):
        """What writes `mode`'s checkpoint at a prefix: the Scaffold's saver in its own
        object structure, else name-based under tf.estimator's names (ckpt_lib)."""
        saver = self._scaffold_saver(mode)
        if saver is not None:
            return saver.write
        return lambda prefix: ckpt_lib.write(self._store.checkpoint_names(), prefix)

    def _checkpoint_manager(self, directory):
        """What saves a train() call's checkpoints in `directory`, keeping as many as
        the RunConfig says (2.15's CheckpointSaverHook's Saver)."""
        return ckpt_lib.CheckpointManager(
            directory,
            self._checkpoint(ModeKeys.TRAIN),
            max_to_keep=self._config.keep_checkpoint_max or None,
            keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
        )

    def _restore(self, checkpoint_path, mode):
        ckpt_lib.require_checkpoint(checkpoint_path)
        self._store.reset_local_variables()
        saver = self._scaffold_saver(mode)
        if saver is not None:
            saver.read(checkpoint_path).expect_partial()
        else:
            keys = self._checkpoint_keys(checkpoint_path)
            warn_unused = mode == ModeKeys.TRAIN
            ckpt_lib.restore(self._store, checkpoint_path, warn_unused, object_keys=keys)
        log.info("Restoring parameters from %s", checkpoint_path)  # 2.15's Saver's line

    def _checkpoint_keys(self, checkpoint_path):
        """{variable name: key} an object-based checkpoint holds them by, if not by the
        names its object graph records (the Keras Estimator's); None: by those names."""
        return None

    # ---------------------------------------------------------------- train
    def _traced(self, mode_function):
        """The function `mode_function` of an earlier call, if it may serve this one.

        tf.estimator 2.15 called model_fn anew on every train(), evaluate() and predict()
        call, so a user's model_fn may read Python values that change between calls (a
        global, a closure, a file): its functions are traced anew on each call. This
        package's own model_fns read only what their Estimator was built with: their traces
        are reused."""
        if not _is_kit_model_fn(self._model_fn):
            return None
        return self._functions.get(mode_function)

    def _forget_variables_without_a_checkpoint(self, checkpoint_path):
        """2.15 made each call's variables anew, from their initializers where model_dir
        held no checkpoint. The TF2 path keeps its variables from call to call: when the
        checkpoint they were saved to is gone (a notebook's `shutil.rmtree(model_dir)`
        before training again), it drops them, and the call makes them anew as a new
        Estimator's first call does. (Without a saver no checkpoint was ever read or
        written: training_loop sets them back to their initial values after each call.
        Kept: the values `restart` set, for the next call; InMemoryEvaluatorHook's
        evaluations, which read training's variables.)"""
        config, restarted, self._restarted = self._config, self._restarted, False
        if (
            checkpoint_path is not None
            or restarted
            or not self._forgets_variables_without_a_checkpoint
            or not self._store.variables
            or self._graph_mode
            or not run_config.saves_checkpoints(config)
            or config.train_distribute is not None
            or config.num_worker_replicas > 1
            or config.num_ps_replicas
        ):
            return
        self._drop_traced_model()
        if self._graph_named_modes is not None:
            self._graph_named_modes = set()

    def _drop_traced_model(self):
        """Drops the variables and traced functions a call made: the next call makes them
        anew, as a new Estimator's first call does."""
        self._store = VariableStore()
        self._functions.clear()
        self._traced_specs.clear()
        self._written_graph = None

    def _train_function(self):
        reused = self._traced("train")
        if reused is not None:
            return reused
        store = self._store

        def one_step(features, labels, summarize):
            global_step = store.global_step
            before = global_step.read_value()
            with summaries.collecting(summarize) as requested:
                spec = self._traced_model_fn_call(features, labels, ModeKeys.TRAIN)
            # train_op usually leaves the step alone (TF2 optimizers): count it
            # then.  No tf.cond: under a strategy the update is a merge point.
            unchanged = tf.equal(global_step.read_value(), before)
            global_step.assign_add(tf.cast(unchanged, tf.int64))
            # (The model's own summaries, computed on summary steps only.)
            return tf.cast(spec.loss, tf.float32), summaries.serialized_if(summarize, requested)

        strategy = self._config.train_distribute

        def step(features, labels, summarize):
            if strategy is None:
                loss, summary = one_step(features, labels, summarize)
                return tf.reshape(loss, []), summary
            loss, summary = strategy.run(one_step, args=(features, labels, summarize))
            # Heads divide each replica's loss by the replica count: the sum
            # is the loss over the global batch.  Summaries: the first replica's.
            loss = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
            return tf.reshape(loss, []), strategy.experimental_local_results(summary)[0]

        # The mode functions are traced without AutoGraph (see _call_model_fn):
        # converting model_fn and the canned models cost seconds per trace.
        # `summarize_at`: the step of the call (1-based; 0 for none) whose summaries
        # the model computes and the call returns.
        @tf.function(autograph=False)
        def run_steps(iterator, max_steps, summarize_at):
            def more(done, loss, _summary, exhausted):
                # (A NaN loss ends the call at its step: the Estimator's NanTensorHook.)
                going = tf.logical_or(tf.equal(done, 0), tf.logical_not(tf.math.is_nan(loss)))
                return tf.logical_and(
                    tf.logical_and(tf.logical_not(exhausted), done < max_steps), going
                )

            def next_step(done, loss, summary, _exhausted):
                optional = iterator.get_next_as_optional()

                def train():
                    features, labels = _split_element(optional.get_value())
                    summarize = tf.equal(done + 1, summarize_at)
                    new_loss, new_summary = step(features, labels, summarize)
                    new_summary = tf.where(summarize, new_summary, summary)
                    return done + 1, new_loss, new_summary, tf.constant(False)

                def exhausted():
                    return done, loss, summary, tf.constant(True)

                return tf.cond(optional.has_value(), train, exhausted)

            start = (
                tf.constant(0, tf.int64),
                tf.constant(math.nan, tf.float32),
                tf.constant(b""),
                tf.constant(False),
            )
            done, loss, summary, _ = tf.while_loop(more, next_step, start)
            return done, loss, summary

        self._functions["train"] = run_steps
        return run_steps

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains from the latest checkpoint in `model_dir` (or from scratch)."""
        if self._user_config.task_type == "evaluator":  # (2.15's refusal, first; a ps task serves)
            raise ValueError(
                "Train has been called wrong configuration. Please use "
                "tf.estimator.train_and_evaluate which calls proper API according to given "
                f"configuration. Current configuration: {self._user_config}."
            )
        hooks = _checked_hooks(hooks)
        check_listeners(
            saving_listeners, "saving_listeners must be a list of CheckpointSaverListener"
        )
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        steps, max_steps = _whole_steps(steps), _whole_steps(max_steps)
        if self._max_steps_reached(max_steps):  # (first, as tf.estimator: no graph built)
            return self
        self._forget_variables_without_a_checkpoint(self._model_dir_checkpoint())
        seeded, counted = [], contextlib.ExitStack()

        def seed_a_first_trace():
            # As tf.estimator seeded each graph: initial values, dropout and the input's
            # shuffles repeat from run to run (Keras layers' default initializers draw
            # from Python's `random`, as under 2.15: the program's own state, untouched).
            # Once a call: before the TF2 path's input_fn, which may run when the path is
            # chosen.
            if not seeded:  # 2.15's op seeds, from 0 each call (graph_seeds)
                first = not self._store.variables
                seed = self._config.tf_random_seed
                counted.enter_context(graph_seeds.counting(seed, self, first_trace=first))
            seeded.append(True)

        with counted:
            built = self._mode_graph(
                ModeKeys.TRAIN, hooks, input_fn=input_fn, before_input=seed_a_first_trace
            )
            if built is not None:
                graph_mode.train(built, hooks or (), steps, max_steps, saving_listeners or ())
                return self
            seed_a_first_trace()
            if self._take_cluster_role(max_steps, hooks or ()) == "served":
                return self
            with _scope(self._config.train_distribute):
                return self._train(input_fn, hooks, steps, max_steps, saving_listeners)

    def _max_steps_reached(self, max_steps):
        """True (and logged) when the latest checkpoint is at `max_steps` or beyond."""
        if max_steps is None or self._stored_step() < max_steps:
            return False
        log.info("Skipping training since max_steps has already saved.")
        return True

    def _take_cluster_role(self, max_steps, hooks=()):
        """This task's part in a `TF_CONFIG` cluster, before training.

        tf.estimator code trains on a cluster with ps tasks without a strategy.
        Here the chief then coordinates a ParameterServerStrategy, and this call
        on a ps task serves it until the job is stopped; on a worker, until the
        chief's checkpoint reaches `max_steps` or, given an early-stopping hook, carries
        the chief's stop signal (where a 2.15 worker stopped)."""
        config = self._config
        if config.train_distribute is not None or not config.num_ps_replicas:
            return
        cluster = config.cluster_spec.as_dict()
        if "chief" not in cluster:
            raise ValueError(
                "Parameter-server training needs a 'chief' task in TF_CONFIG to coordinate "
                f"it; the cluster lists {sorted(cluster)}."
            )
        task = {"type": config.task_type, "index": config.task_id}
        if config.task_type == "ps" or (config.task_type == "worker" and max_steps is None):
            server.run_server({"cluster": cluster, "task": task})
        if config.task_type == "worker":
            watch = any(getattr(hook, "reads_stop_signal", False) for hook in hooks)
            server.serve_until(
                {"cluster": cluster, "task": task},
                lambda: self._stored_step() >= max_steps or (watch and self._stop_signalled()),
            )
            if watch and self._stop_signalled():
                log.info("Early stopping requested, suspending run.")  # (2.15's worker's)
            return "served"
        if config.is_chief:
            log.info("TF_CONFIG lists ps tasks: training with a ParameterServerStrategy.")
            self._config = config.replace(
                train_distribute=tf.distribute.experimental.ParameterServerStrategy(
                    tf.distribute.cluster_resolver.TFConfigClusterResolver()
                )
            )._as_worker()
        return None

    def _stop_signalled(self):
        """Whether the latest checkpoint holds an early-stopping hook's stop (2.15's workers
        read that signal on the ps tasks, here the chief's checkpoint carries it)."""
        latest = self._model_dir_checkpoint()
        try:
            names = [] if latest is None else ckpt_lib.variable_names(latest)
            return ckpt_lib.STOP_SIGNAL in names and bool(
                ckpt_lib.read_variable(latest, ckpt_lib.STOP_SIGNAL)
            )
        except (ValueError, tf.errors.OpError):
            return False

    def _stored_step(self):
        """The latest checkpoint's global step (0 without one)."""
        return ckpt_lib.stored_global_step(self._model_dir)

    def _write_graph(self, traced):
        """As tf.estimator's graph.pbtxt: the training graph, for inspection, where this
        task writes.  Once per trace: writing it costs more than a short train() call.
        The events get it too (`_graph_for_events`, which the training loop writes where
        2.15's saver and its events file's writer wrote theirs, whether or not
        `checkpoint_save_graph_def`): TensorBoard's Graphs tab shows it."""
        from components.estimator import training_loop

        graph_dir = training_loop.output_dir(self._config, self._model_dir)
        self._graph_for_events = None if graph_dir is None else traced.graph
        if not (
            self._config.checkpoint_save_graph_def
            and run_config.saves_checkpoints(self._config)  # (2.15's saver wrote it)
            and graph_dir is not None
        ):
            return
        if self._written_graph is not traced:
            tf.io.write_graph(traced.graph.as_graph_def(), graph_dir, "graph.pbtxt")
            self._written_graph = traced

    def _train(self, input_fn, hooks, steps, max_steps, saving_listeners):
        from components.estimator import training_loop

        global_step = self._global_step()
        latest = self._model_dir_checkpoint()
        # The step read cheaply, before tracing anything.
        if self._max_steps_reached(max_steps):
            return self
        strategy = self._config.train_distribute
        run_steps = self._train_function()
        if strategy is None:
            iterator = iter(self._call_input_fn(input_fn, ModeKeys.TRAIN))
        else:
            # input_fn runs once per worker with its InputContext; its batch
            # size is per replica, as with tf.estimator.
            dataset = strategy.distribute_datasets_from_function(
                lambda context: self._call_input_fn(input_fn, ModeKeys.TRAIN, context)
            )
        if _is_parameter_server(strategy):
            run_chunk = _ParameterServerChunks(strategy, dataset, run_steps)
            # (Its zero-step call traced run_steps on the workers' iterator.)
            self._write_graph(run_steps._list_all_concrete_functions()[-1])
        else:
            if strategy is not None:
                iterator = iter(dataset)
            traced = run_steps.get_concrete_function(
                iterator, tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int64)
            )
            if strategy is None:
                # (Under a strategy the trace sees per-device components instead.)
                self._store.adopt(traced.variables)
            self._write_graph(traced)

            def run_chunk(num_steps, summarize=False):
                done, loss, summary = run_steps(
                    iterator,
                    tf.constant(num_steps, tf.int64),
                    tf.constant(num_steps if summarize else 0, tf.int64),
                )
                return int(done), loss.numpy(), summary.numpy()  # (its dtype, as logged)

        training_loop.run(
            estimator=self,
            run_chunk=run_chunk,
            global_step=global_step,
            latest_checkpoint=latest,
            steps=steps,
            max_steps=max_steps,
            hooks=list(hooks or ())
            + list(self._traced_specs[ModeKeys.TRAIN].training_hooks)
            + (
                list(self._traced_specs[ModeKeys.TRAIN].training_chief_hooks)
                if self._config.is_chief
                else []
            ),
            saving_listeners=list(saving_listeners or ()),
        )
        if strategy is None:
            last_reference = [iterator]
            iterator = None  # (run_chunk's too)
            _release_in_background(last_reference)
        return self

    # ------------------------------------------------------------- evaluate
    def _eval_function(self):
        reused = self._traced("eval")
        if reused is not None:
            return reused

        @tf.function(autograph=False)
        def eval_step(features, labels):
            with self._store.scope():
                spec = self._traced_model_fn_call(features, labels, ModeKeys.EVAL)
                mean_loss = tf_keras.metrics.Mean(name="loss")
            mean_loss.update_state(spec.loss)
            values = {name: metric_value(m) for name, m in spec.eval_metric_ops.items()}
            values["loss"] = mean_loss.result()
            # A pair updated by an op: its value read again after the last batch.
            finals = {
                name: tf.convert_to_tensor(m[0])
                for name, m in spec.eval_metric_ops.items()
                if isinstance(m, tuple) and isinstance(m[1], tf.Operation)
            }
            return values, finals

        self._functions["eval"] = eval_step
        return eval_step

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates a checkpoint; returns metric values plus `global_step`, in 2.15's
        order (the metrics' keys sorted, then `global_step`), which printing shows."""
        return in_215_order(
            _outside_strategy(lambda: self._evaluate(input_fn, steps, hooks, checkpoint_path, name))
        )

    def _evaluate(self, input_fn, steps, hooks, checkpoint_path, name):
        hooks = _checked_hooks(hooks)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        checkpoint_path = checkpoint_path or self._model_dir_checkpoint()
        self._note_untrained(checkpoint_path, "evaluate")
        self._forget_variables_without_a_checkpoint(checkpoint_path)
        built = self._mode_graph(ModeKeys.EVAL, hooks, input_fn=input_fn)
        self.eval_dir(name)  # (a name that is no string: 2.15's TypeError, after model_fn)
        if built is not None:
            results = graph_mode.evaluate(built, steps, hooks or (), checkpoint_path)
            self._write_eval_summaries(results, name, checkpoint_path, built.graph)
            return results
        global_step = self._global_step()
        dataset = self._call_input_fn(input_fn, ModeKeys.EVAL)
        if steps is not None:  # (its progress lines say the number given, as 2.15's)
            dataset = dataset.take(_whole_steps(steps))
        log.info("Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S"))
        started = time.time()
        eval_step = self._eval_function()
        runner = values = None
        for evaluated, element in enumerate(dataset, 1):
            features, labels = _split_element(element)
            if runner is None:
                traced, run_step, runner = self._start_evaluation(
                    eval_step, dataset, checkpoint_path, hooks
                )
                step = runner.context.global_step
            if runner.hooks and runner.before_step(step):
                break
            values, _ = run_step(features, labels)
            _log_eval_progress(evaluated, steps)
            if runner.hooks and runner.after_step(
                dict({k: float(v) for k, v in values.items()}, global_step=step)
            ):
                break
        if runner is None:  # (no batch)
            traced, _, runner = self._start_evaluation(eval_step, dataset, checkpoint_path, hooks)
        if values is None:  # (no batch, or a hook stopped before the first)
            results = _metrics_as_they_start(traced)
        else:
            results = {key: value.numpy() for key, value in values.items()}
            results.update(_final_values(traced, features, labels))
        results["global_step"] = np.int64(global_step.numpy())
        runner.end(results)
        log.info("Inference Time : %.5fs", time.time() - started)
        log.info("Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S"))
        self._write_eval_summaries(results, name, checkpoint_path, traced.graph)
        return results

    def _start_evaluation(self, eval_step, dataset, checkpoint_path, hooks):
        """(trace, pruned step, hook runner) of an evaluation, its variables ready.

        Traced for the dataset's element spec, batch size unknown (as tf.estimator's graph
        had it): one trace serves every batch, a last smaller one included, and every later
        evaluation of the same features (a retrace was seconds on a wide table)."""
        traced = eval_step.get_concrete_function(*_split_element(dataset.element_spec))
        run_step = pruning.as_fetched(eval_step, traced, self._store.metric_variables())
        self._prepare_eval(checkpoint_path)
        runner = HookRunner(
            self,
            list(hooks or ()) + list(self._traced_specs[ModeKeys.EVAL].evaluation_hooks),
            int(self._global_step().numpy()),
        )
        return traced, run_step, runner

    def _note_untrained(self, checkpoint_path, mode):
        """2.15's line when there is no checkpoint to read: before the input_fn and the
        model_fn are called (so before a model_fn's own lines)."""
        if checkpoint_path is None:
            log.info(graph_mode.NOT_TRAINED, self._model_dir, mode)

    def _prepare_eval(self, checkpoint_path):
        if checkpoint_path is None:
            self._initialize_fresh_variables(self._store.model_variables())
        else:
            self._restore(checkpoint_path, ModeKeys.EVAL)
        for variable in self._store.metric_variables():
            variable.assign(tf.zeros_like(variable))

    def eval_dir(self, name=None):
        """`eval` or `eval_<name>` under model_dir; a name that is no string is 2.15's
        TypeError (`can only concatenate str (not "int") to str`)."""
        return os.path.join(self._model_dir, "eval_" + name if name else "eval")

    def _write_eval_summaries(self, results, name, checkpoint_path, graph):
        """The results (and the checkpoint evaluated) as events under `eval_dir(name)`,
        logged as tf.estimator logged them.  They go, as 2.15's did, through
        tf.compat.v1's FileWriterCache (its writer of the folder, made with the `graph`
        evaluated first: the session's, or the TF2 path's trace of its step): one event
        file for all the evaluations into the folder in a process, whose writer a user's
        `FileWriterCache.get(eval_dir)` gets after evaluate()."""
        step = int(results["global_step"])
        with tf_logging.printed_as_numpy_1():  # 2.15's %s, without bytes (a Summary)
            logged = ", ".join(
                f"{k} = {v!s}" for k, v in sorted(results.items()) if not isinstance(v, bytes)
            )
        log.info("Saving dict for global step %d: %s", step, logged)
        written = [summaries.eval_summary(results)]
        if checkpoint_path:
            log.info(
                "Saving 'checkpoint_path' summary for global step %d: %s", step, checkpoint_path
            )
            written.append(summaries.text_summary("checkpoint_path", checkpoint_path))
        writer = _cached_writer(self.eval_dir(name), graph)
        for summary in written:
            writer.add_summary(summary, step)
        writer.flush()

    # -------------------------------------------------------------- predict
    def _predict_function(self):
        if self._traced("predict") is None:

            @tf.function(autograph=False)
            def predict_step(features):
                return self._traced_model_fn_call(features, None, ModeKeys.PREDICT).predictions

            self._functions["predict"] = predict_step
        return self._functions["predict"]

    def predict(
        self,
        input_fn,
        predict_keys=None,
        hooks=None,
        checkpoint_path=None,
        yield_single_examples=True,
    ):
        """Yields predictions, one example at a time or one batch at a time."""
        hooks = _checked_hooks(hooks)
        checkpoint_path = checkpoint_path or self._model_dir_checkpoint()
        self._note_untrained(checkpoint_path, "predict")
        self._forget_variables_without_a_checkpoint(checkpoint_path)
        built = self._mode_graph(ModeKeys.PREDICT, hooks, input_fn=input_fn)
        if built is not None:
            yield from graph_mode.predict(
                built, predict_keys, hooks or (), checkpoint_path, yield_single_examples
            )
            return
        self._global_step()
        dataset = self._call_input_fn(input_fn, ModeKeys.PREDICT)
        predict_step = self._predict_function()
        runner = None
        for element in dataset:
            features, _ = _split_element(element)
            if runner is None:
                run_step = pruning.as_fetched(
                    predict_step,
                    predict_step.get_concrete_function(features),
                )
                if checkpoint_path is not None:
                    self._restore(checkpoint_path, ModeKeys.PREDICT)
                else:
                    self._initialize_fresh_variables(self._store.model_variables())
                step = int(self._global_step().numpy())
                runner = HookRunner(
                    self,
                    list(hooks or ()) + list(self._traced_specs[ModeKeys.PREDICT].prediction_hooks),
                    step,
                )
            if runner.hooks and runner.before_step(step):
                break
            predictions, single = selected_predictions(run_step(features), predict_keys)
            arrays = {k: v.numpy() for k, v in predictions.items()}
            yield from yielded_predictions(arrays, single, yield_single_examples)
            if runner.hooks and runner.after_step({"predictions": arrays, "global_step": step}):
                break
        if runner is not None:
            runner.end({"global_step": step})

    # --------------------------------------------------------------- export
    def runs_in_a_graph(self, serving_input_receiver_fn):
        """Whether the model serves from a graph with a session (a TF1-style model_fn):
        such a model exports only with `export_saved_model`, not as a serving module."""
        return bool(self._mode_graph(ModeKeys.PREDICT, (), receiver_fn=serving_input_receiver_fn))

    def build_serving_module(
        self, serving_input_receiver_fn, checkpoint_path=None, mode=ModeKeys.PREDICT
    ):
        """A `tf.Module` with the model's variables and its signatures.

        Returns `(module, signatures)`.  Callers may attach more objects and
        functions to the module before saving it (the Trainer adds the
        transform graph this way).  A `model_fn` that does not trace in
        `tf.compat.v1.wrap_function` (a Keras model made of `tf.keras.Input`s) is traced
        as in a `tf.function` instead.
        """
        return self._serving_module(serving_input_receiver_fn, checkpoint_path, mode)

    def _serving_module(self, serving_input_receiver_fn, checkpoint_path, mode, retrace=True):
        """`build_serving_module`; without `retrace`, a failed wrap_function trace raises
        (`export_saved_model` then exports the PREDICT graph as a TF1 SavedModel)."""
        from components.estimator import serving

        checkpoint_path = checkpoint_path or self._require_checkpoint()
        if self.runs_in_a_graph(serving_input_receiver_fn):
            raise ValueError(
                "This model_fn runs in a graph with a session (TF1-style), whose variables "
                "no tf.Module holds: export it with export_saved_model (a TF1 SavedModel); "
                "a serving module, as the pipeline's Trainer builds with the transform "
                "graph, needs a TF2-style model_fn (Keras layers and optimizers) or a "
                "canned estimator."
            )
        self._global_step()
        return _outside_strategy(
            lambda: serving.build(self, serving_input_receiver_fn, checkpoint_path, mode, retrace)
        )

    def export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        experimental_mode=ModeKeys.PREDICT,
    ):
        """Writes a SavedModel to `<export_dir_base>/<timestamp>`; returns that path as bytes.

        `as_text=True` writes `saved_model.pbtxt` instead of `saved_model.pb`;
        `experimental_mode` TRAIN or EVAL exports that mode's graph over a supervised
        receiver, as `experimental_export_all_saved_models` does."""
        from components.estimator import serving

        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        if experimental_mode != ModeKeys.PREDICT:
            return self.experimental_export_all_saved_models(
                export_dir_base,
                {experimental_mode: serving_input_receiver_fn},
                assets_extra=assets_extra,
                as_text=as_text,
                checkpoint_path=checkpoint_path,
            )
        checkpoint_path = checkpoint_path or self._require_checkpoint()  # before model_fn
        serving.export_base(export_dir_base)  # (2.15's TypeError, also before model_fn)

        def export():
            module, signatures = self._serving_module(
                serving_input_receiver_fn, checkpoint_path, experimental_mode, retrace=False
            )
            return serving.save_timestamped(
                module, signatures, export_dir_base, assets_extra, as_text
            )

        built = self._mode_graph(ModeKeys.PREDICT, (), receiver_fn=serving_input_receiver_fn)
        if built is None and self._exports_a_graph:
            checkpoint_path = checkpoint_path or self._require_checkpoint()
            built = self._export_graph(serving_input_receiver_fn, checkpoint_path)
        if built is None:
            try:
                return _outside_strategy(export)
            except Exception:
                built = self._graph_after_a_failed_trace(serving_input_receiver_fn, checkpoint_path)
                if built is None:
                    raise
        return graph_export.export_all(
            export_dir_base,
            {ModeKeys.PREDICT: lambda: built},
            assets_extra,
            as_text,
            checkpoint_path or self._require_checkpoint(),
        )

    def _graph_after_a_failed_trace(self, receiver_fn, checkpoint_path):
        """The PREDICT graph of a TF2-path `model_fn` whose serving trace failed, for a TF1
        SavedModel as 2.15 exported it; None when it does not build there either. (A Keras
        functional model `model_fn` makes from `tf.keras.Input`s does not trace in
        `tf.compat.v1.wrap_function`, where tf_keras takes its v1 layers but still makes
        Keras tensors, and recurses; it builds in a graph, as under 2.15.)"""
        log.debug("model_fn does not trace for a TF2 SavedModel:", exc_info=True)
        checkpoint_path = checkpoint_path or self._require_checkpoint()
        with contextlib.suppress(Exception):
            return self._export_graph(receiver_fn, checkpoint_path, falls_back=False)
        return None

    def _export_graph(self, receiver_fn, checkpoint_path, falls_back=True):
        """A canned model's PREDICT graph over `receiver_fn`, for a TF1 SavedModel as 2.15
        exported (`dnn/logits/BiasAdd:0`, `head/predictions/probabilities:0`, variables
        keyed `dnn/logits/kernel`), restored by name from the TF2 path's checkpoint; None
        (a TF2 SavedModel, as this kit wrote before) when the checkpoint lacks a variable of
        the graph (a model_dir the kit wrote before it named them as 2.15's graph did)."""
        try:
            built = graph_mode.ModeGraph(self, ModeKeys.PREDICT, receiver_fn=receiver_fn)
        except Exception:  # (TF2-only code in model_fn: a TF2 SavedModel, as before)
            if not falls_back:
                raise
            log.warning("model_fn does not build in a graph: exporting a TF2 SavedModel.")
            log.debug("Why:", exc_info=True)
            return None
        with built.graph.as_default():
            made = {v.op.name for v in tf.compat.v1.global_variables()}
        ckpt_lib.require_checkpoint(checkpoint_path)
        missing = sorted(made - set(ckpt_lib.variable_names(checkpoint_path)))
        if missing:
            log.warning(
                "Exporting a TF2 SavedModel: checkpoint %s lacks %s, which the PREDICT graph "
                "makes (a model_dir written before the kit named variables as tf.estimator "
                "did), so the export has no tf.estimator 2.15 tensor names.",
                checkpoint_path,
                missing[:5],
            )
            return None
        return built

    @property
    def export_savedmodel(self):
        """Hidden, as 2.15 hid TF1's name on tf.estimator.Estimator (and its canned
        classes); tf.compat.v1.estimator.Estimator has it."""
        raise AttributeError(
            "`Estimator.export_savedmodel` has been deprecated. Please use "
            "`export_saved_model` instead."
        )

    def experimental_export_all_saved_models(
        self,
        export_dir_base,
        input_receiver_fn_map,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
    ):
        """One SavedModel with a MetaGraph per mode of `input_receiver_fn_map`, as
        tf.estimator wrote it (`graph_export`): TRAIN and EVAL graphs from supervised
        receivers (tagged `train`, `eval`), PREDICT's from a serving receiver (`serve`).
        A PREDICT receiver alone exports as `export_saved_model` does."""
        unknown = sorted(set(input_receiver_fn_map) - set(graph_export.EXPORT_ORDER))
        if unknown:
            raise ValueError(
                f"experimental_export_all_saved_models: input_receiver_fn_map has keys "
                f"{unknown} that are no ModeKeys; expected some of "
                f"{list(graph_export.EXPORT_ORDER)}."
            )
        modes = [m for m in graph_export.EXPORT_ORDER if input_receiver_fn_map.get(m)]
        if not modes:
            raise ValueError(
                "experimental_export_all_saved_models: input_receiver_fn_map has no receiver."
            )
        if modes == [ModeKeys.PREDICT]:
            return self.export_saved_model(
                export_dir_base,
                input_receiver_fn_map[ModeKeys.PREDICT],
                assets_extra=assets_extra,
                as_text=as_text,
                checkpoint_path=checkpoint_path,
            )
        checkpoint_path = checkpoint_path or self._require_checkpoint()  # before model_fn
        graphs = {
            mode: graph_export.receiver_graph(self, mode, input_receiver_fn_map[mode])
            for mode in modes
        }
        return _outside_strategy(
            lambda: graph_export.export_all(
                export_dir_base, graphs, assets_extra, as_text, checkpoint_path
            )
        )


# 2.15's tf.estimator.Estimator was its class `EstimatorV2` (what `type(est).__name__` and
# `repr` show), a subclass of tf.compat.v1.estimator's `Estimator` (estimator_v1.py here),
# whose `__init__` (`Estimator.__init__()` in a TypeError) it kept, as this one keeps its own.
Estimator.__name__ = Estimator.__qualname__ = "EstimatorV2"
EstimatorV2 = Estimator  # (pickle finds a class by its name)
