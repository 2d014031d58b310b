"""Name-based checkpoints, as tf.estimator 2.15 wrote them, and warm starting.

`model.ckpt-<step>` holds each variable under the name tf.estimator gave it
(`dnn/hiddenlayer_0/kernel`, `global_step`,
`training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator`) in
`tf.compat.v1.train.Saver`'s format, next to Saver's `checkpoint` state file:
`tf.train.load_variable` reads it, tf.estimator 2.15 resumes from it, and a
2.15 model_dir resumes here (also the object-based one of 2.15's `model_to_estimator`,
read by the names its variables had, which `model_to_estimator` writes here too:
`write(..., object_graph=...)`).  Until 2026-12-02 this kit wrote object-based
checkpoints, one `tf.train.Checkpoint(estimator_variables={name: var})`; those
are still read, and exported SavedModels still track that dict.
"""

import collections
import logging
import os
import re
import time

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2
from tensorflow.python.checkpoint import checkpoint_management, graph_view, save_util_v1

from components.estimator.variables import tf_estimator_name

ROOT_ATTRIBUTE = "estimator_variables"
_KEY_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
CHECKPOINT_NAME = "model.ckpt"
# The early-stopping hooks' signal (early_stopping.py): saved by the train() calls they
# hook, so a checkpoint may hold it or not; no model's state, restored when present.
STOP_SIGNAL = "signal_early_stopping/STOP"

log = logging.getLogger(__name__)


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _unescape(key):
    return re.sub(r"\.(.)", lambda m: "/" if m.group(1) == "S" else m.group(1), key)


def checkpoint_key(name):
    """The key of variable `name` in an object-based checkpoint of this kit."""
    return f"{ROOT_ATTRIBUTE}/{_escape(name)}{_KEY_SUFFIX}"


def checkpoint_step(checkpoint_path):
    """The global step a `model.ckpt-<step>` prefix was saved at."""
    return int(checkpoint_path.rsplit("-", 1)[1])


class NotFoundError(tf.errors.NotFoundError, ValueError):
    """No checkpoint where one was named: TensorFlow's NotFoundError, by its name (what
    tf.estimator 2.15's warm start raised), and a ValueError (what this kit raised before)."""

    def __init__(self, message):
        super().__init__(None, None, message)


CheckpointNotFoundError = NotFoundError  # (its name until December 2026)


class CheckpointMismatchError(tf.errors.NotFoundError, ValueError):
    """A checkpoint lacking a variable the model makes: TensorFlow's NotFoundError, which
    tf.estimator 2.15's Saver raised restoring it, and a ValueError (this kit's before)."""

    def __init__(self, message):
        super().__init__(None, None, message)


# How tf.estimator 2.15 (TF1's Saver) began the error for a variable a checkpoint lacks.
RESTORE_FAILED = (
    "Restoring from checkpoint failed. This is most likely due to a Variable name or "
    "other graph key that is missing from the checkpoint. Please ensure that you have "
    "not altered the graph expected based on the checkpoint. Original error:\n\n"
)


def _mismatch_error(checkpoint_path, missing, mismatched):
    """The error for a checkpoint that lacks the model's variables `missing` (2.15's
    NotFoundError, naming the first as 2.15 did, then all) or holds others with another
    shape or dtype (`mismatched`, a ValueError: 2.15 restored those unchecked)."""
    problems = []
    if missing:
        problems.append(f"it lacks {missing}")
    if mismatched:
        problems.append(f"it holds {mismatched}")
    detail = (
        f"Checkpoint {checkpoint_path!r} does not match this model: {'; '.join(problems)}. "
        "Train in a fresh model_dir, or warm-start from the checkpoint."
    )
    if not missing:
        return ValueError(detail)
    return CheckpointMismatchError(
        f"{RESTORE_FAILED}Key {missing[0]} not found in checkpoint\n\n{detail}"
    )


def resolve_checkpoint(path):
    """A checkpoint prefix from a checkpoint prefix, a model_dir or a SavedModel dir."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode()
    if tf.io.gfile.exists(os.path.join(path, "saved_model.pb")):
        return os.path.join(path, "variables", "variables")
    if tf.io.gfile.exists(path + ".index"):
        return path
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise CheckpointNotFoundError(f"No checkpoint found in {path!r}.")
        return latest
    raise NotFoundError(  # 2.15's words first (its checkpoint reader's)
        f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
        f"{path}\nNo checkpoint or SavedModel at {path!r}."
    )


def _reader(checkpoint_path):
    # Not tf.train.load_checkpoint: on ram:// a prefix with files below it is a directory.
    return tf.compat.v1.train.NewCheckpointReader(checkpoint_path)


def _object_names(keys):
    """{estimator variable name: key} of an object-based checkpoint's keys."""
    prefix = ROOT_ATTRIBUTE + "/"
    return {
        _unescape(key[len(prefix) : -len(_KEY_SUFFIX)]): key
        for key in keys
        if key.startswith(prefix) and key.endswith(_KEY_SUFFIX)
    }


def _full_names(reader):
    """{variable name when saved: key} of an object-based checkpoint, from its object
    graph (`Model.save_weights`' `layer_with_weights-0/kernel/...` is `hidden/kernel`), as
    TF1 read such checkpoints by name."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(_OBJECT_GRAPH))
    return {
        attribute.full_name: attribute.checkpoint_key
        for node in graph.nodes
        for attribute in node.attributes
        if attribute.full_name
    }


def is_object_based(checkpoint_path):
    """Whether a TF2 `tf.train.Checkpoint` (object names) wrote `checkpoint_path`."""
    return _OBJECT_GRAPH in _reader(checkpoint_path).get_variable_to_shape_map()


def variable_names(checkpoint_path):
    """The variable names stored in a checkpoint.

    A checkpoint written through a user's `Scaffold(saver=tf.train.Checkpoint)`
    has its own object paths; those keys are listed as they are, with the object graph's
    own key, as tf.estimator listed them.
    """
    keys = _reader(checkpoint_path).get_variable_to_shape_map()
    return sorted(_object_names(keys) or keys)


def read_variable(checkpoint_path, name):
    """Variable `name`'s value, from a name-based or an object-based checkpoint."""
    reader = _reader(checkpoint_path)
    for key in (name, checkpoint_key(name), name + _KEY_SUFFIX):
        if reader.has_tensor(key):
            return reader.get_tensor(key)
    if reader.has_tensor(_OBJECT_GRAPH):  # (by the name it had: 2.15's model_to_estimator)
        key = _full_names(reader).get(name)
        if key is not None:
            return reader.get_tensor(key)
    raise ValueError(f"Variable {name!r} is not in checkpoint {checkpoint_path!r}.")


def stored_global_step(model_dir):
    """The global step of `model_dir`'s latest checkpoint as stored (a numpy int64, as
    tf.estimator 2.15's helper returned it); 0 without one, or when it cannot be read (as
    2.15 counted a model_dir not yet trained)."""
    latest = tf.train.latest_checkpoint(model_dir)
    if latest is None:
        return 0
    try:
        return read_variable(latest, "global_step")
    except (ValueError, tf.errors.OpError):
        return 0


def _saved_value(variable):
    # A variable synced on read (batch norm's moving statistics) saves this task's first
    # copy: its whole value is a reduction across workers, which the chief, saving alone
    # under a multi-worker strategy, would wait in forever.
    if variable.synchronization == tf.VariableSynchronization.ON_READ:
        variable = tf.distribute.get_strategy().experimental_local_results(variable)[0]
    return variable.read_value()


def object_graph(root):
    """`root`'s object graph as a TF1 Saver of its saveables wrote it (2.15's
    `model_to_estimator`): the `TrackableObjectGraph`, whose attributes name the keys
    (`layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE`), and each node's object
    (its optimizer slots too)."""
    view = graph_view.ObjectGraphView(root)
    trackables, _ = view.breadth_first_traversal()
    _, graph, _, _ = save_util_v1.serialize_gathered_objects(view)
    nodes = list(trackables) + [None] * (len(graph.nodes) - len(trackables))
    for node_id, node in enumerate(graph.nodes):  # (slots are nodes of their own)
        for slot in node.slot_variables:
            original = nodes[slot.original_variable_node_id]
            nodes[slot.slot_variable_node_id] = nodes[node_id].get_slot(original, slot.slot_name)
    return graph, nodes


def write(variables, prefix, object_graph=None):
    """Saves {name: variable} at `prefix` in one SaveV2, as `tf.compat.v1.train.Saver` does;
    with `object_graph` (a `TrackableObjectGraph` naming those keys) object-based, as a
    Saver of an object graph's saveables wrote it."""
    names = sorted(variables)
    tensors = [_saved_value(variables[name]) for name in names]
    if object_graph is not None:
        names.append(_OBJECT_GRAPH)
        tensors.append(tf.constant(object_graph.SerializeToString()))
    with tf.device("CPU:0"):
        tf.raw_ops.SaveV2(
            prefix=prefix,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=tensors,
        )
    return prefix


def _read(prefix, keys, dtypes):
    with tf.device("CPU:0"):
        return tf.raw_ops.RestoreV2(
            prefix=prefix, tensor_names=keys, shape_and_slices=[""] * len(keys), dtypes=dtypes
        )


def restore(store, checkpoint_path, warn_unused=False, object_keys=None):
    """Sets the store's model variables from a name-based or object-based checkpoint.

    A model variable the checkpoint lacks, or holds with another shape or dtype,
    is an error naming it.  Missing optimizer state starts afresh, with one
    warning naming it (a step counter that tf.estimator 2.15 kept in
    `global_step` is set from it); with `warn_unused` that warning also names
    what the checkpoint holds and this model does not use. `object_keys`, {variable
    name: key}, keys an object-based checkpoint's variables by their place in its object
    graph rather than by the names it recorded.
    """
    reader = _reader(checkpoint_path)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    variables = store.model_variables()
    if _OBJECT_GRAPH in shapes and _object_names(shapes):  # (this kit's until 2026-12-02)
        keys = {checkpoint_key(name): name for name in variables}
    elif _OBJECT_GRAPH in shapes:
        # Another object graph's (2.15's model_to_estimator, checkpoint_format
        # 'checkpoint': `layer_with_weights-0/kernel/...`): each variable by the name it had.
        saved = _full_names(reader)
        by_place = object_keys or {}
        keys = {
            by_place.get(name)
            or saved.get(store.checkpoint_name(name), store.checkpoint_name(name)): name
            for name in variables
        }
    else:
        keys = {store.checkpoint_name(name): name for name in variables}
        if sum(key in shapes for key in keys) < sum(name in shapes for name in variables):
            # A model_dir the TF2 path wrote before it named Keras variables as
            # tf.estimator's graph did (`dense/kernel`, not `sequential/dense/kernel`).
            keys = {name: name for name in variables}
    found, missing, afresh, counters, mismatched = {}, [], [], [], []
    for key, name in sorted(keys.items()):
        variable = variables[name]
        role = store.optimizer_role(name)
        if key not in shapes:
            if name == STOP_SIGNAL:
                continue
            if role == "iterations":
                counters.append(variable)
            else:
                (afresh if role else missing).append(key)
        elif (
            not variable.shape.is_compatible_with(shapes[key])
            or dtypes[key] != variable.dtype.base_dtype
        ):
            mismatched.append(
                f"{key}: {dtypes[key].name}{shapes[key]} in the checkpoint, "
                f"{variable.dtype.base_dtype.name}{variable.shape.as_list()} here"
            )
        else:
            found[key] = variable
    if missing or mismatched:
        raise _mismatch_error(checkpoint_path, missing, mismatched)
    values = _read(checkpoint_path, list(found), [v.dtype.base_dtype for v in found.values()])
    for variable, value in zip(found.values(), values, strict=True):
        variable.assign(value)
    for counter in counters:
        counter.assign(tf.cast(store.global_step, counter.dtype))
    notes = []
    if afresh:
        notes.append(f"this optimizer state is not in it and starts afresh: {afresh}")
    unused = sorted(
        set(shapes) - set(keys) - {_OBJECT_GRAPH, "save_counter" + _KEY_SUFFIX, STOP_SIGNAL}
    )
    if warn_unused and unused:
        notes.append(f"it holds variables this model does not use: {unused}")
    if notes:
        log.warning("Resuming from %s: %s.", checkpoint_path, "; ".join(notes))


def require_checkpoint(path):
    """Refuses a checkpoint path that names no checkpoint (evaluate's, predict's or an
    export's `checkpoint_path`) as 2.15's Saver refused it, before its restoring line; a
    path that is not a str or bytes (a `pathlib.Path`) with the Saver's TypeError."""
    tf.compat.as_bytes(path)
    if not checkpoint_management.checkpoint_exists_internal(path):
        raise ValueError(f"The passed save_path is not a valid checkpoint: {path}")


class CheckpointManager:
    """Writes `model.ckpt-<step>` and the `checkpoint` state file as tf.estimator's
    Saver did (one made per train() call), keeping the newest `max_to_keep` and, of the
    older ones, one every `keep_checkpoint_every_n_hours` from the call's start.  With
    `max_to_keep` None (or 0) every checkpoint stays and the state file names those it
    named when the call began and the latest, as the Saver kept no list of its own then.
    The state file holds no timestamps, as the Saver's held none: the checkpoints it
    names are dated by their files, as the Saver recovered them.  It is updated before
    old files go, so it never names a deleted checkpoint.  Without `save_relative_paths`
    it names them as written (an absolute model_dir's absolute paths), as a Saver made
    without that setting did (2.15's `model_to_estimator` in its 'checkpoint' format)."""

    def __init__(
        self,
        directory,
        write_fn,
        max_to_keep,
        keep_checkpoint_every_n_hours,
        save_relative_paths=True,
    ):
        self._directory = directory
        self._relative = save_relative_paths
        self._write = write_fn
        self._max_to_keep = max_to_keep
        self._keep_secs = (keep_checkpoint_every_n_hours or 0) * 3600
        self._next_kept = time.time() + self._keep_secs
        state = tf.train.get_checkpoint_state(directory)
        self._active = []  # [(path, timestamp)], oldest first
        if state is not None:
            self._active = [
                (path, tf.io.gfile.stat(path + ".index").mtime_nsec / 1e9)
                for path in state.all_model_checkpoint_paths
                if tf.io.gfile.exists(path + ".index")
            ]

    def save(self, step):
        path = os.path.join(self._directory, f"{CHECKPOINT_NAME}-{step}")
        self._write(path)
        now = time.time()
        listed = [p for p, _ in self._active]  # (the state file adds `path` last)
        if self._max_to_keep:
            self._active = [(p, t) for p, t in self._active if p != path] + [(path, now)]
        removed = []
        while self._max_to_keep and len(self._active) > self._max_to_keep:
            old, stamp = self._active.pop(0)
            if self._keep_secs and stamp > self._next_kept:
                self._next_kept += self._keep_secs
            else:
                removed.append(old)
        if self._max_to_keep:
            listed = [p for p, _ in self._active]
        # Relative paths, as tf.estimator's Saver wrote them: the model_dir can move.
        checkpoint_management.update_checkpoint_state_internal(
            self._directory, path, listed, save_relative_paths=self._relative
        )
        for old in removed:
            for file in tf.io.gfile.glob(old + ".*"):
                tf.io.gfile.remove(file)
        return path


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        [
            "new_vocab",
            "new_vocab_size",
            "num_oov_buckets",
            "old_vocab",
            "old_vocab_size",
            "backup_initializer",
            "axis",
        ],
    )
):
    """How to remap the rows of an embedding whose vocabulary changed."""

    def __new__(
        cls,
        new_vocab,
        new_vocab_size,
        num_oov_buckets,
        old_vocab,
        old_vocab_size=-1,
        backup_initializer=None,
        axis=0,
    ):
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Which variables to initialize from which checkpoint (tf.estimator's fields)."""

    def __new__(
        cls,
        ckpt_to_initialize_from,
        vars_to_warm_start=".*",
        var_name_to_vocab_info=None,
        var_name_to_prev_var_name=None,
    ):
        if not ckpt_to_initialize_from:
            raise ValueError("WarmStartSettings: ckpt_to_initialize_from must be set.")
        return super().__new__(
            cls,
            ckpt_to_initialize_from,
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            var_name_to_prev_var_name or {},
        )


def _read_vocab(path):
    with tf.io.gfile.GFile(path) as f:
        return [line.rstrip("\n") for line in f]


def _remap_rows(current, previous, info):
    """Rows of `previous` moved to where their vocabulary words now are.

    The other rows (new words, OOV buckets) come from `info.backup_initializer`
    when it is given, else they are zeros, as tf.estimator's warm start left them."""
    new_vocab = _read_vocab(info.new_vocab)[: info.new_vocab_size]
    old_vocab = _read_vocab(info.old_vocab)
    if info.old_vocab_size > 0:
        old_vocab = old_vocab[: info.old_vocab_size]
    old_index = {word: i for i, word in enumerate(old_vocab)}
    if info.backup_initializer is None:
        result = np.zeros_like(current)
    else:
        result = np.array(info.backup_initializer(current.shape, dtype=tf.as_dtype(current.dtype)))
    for new_i, word in enumerate(new_vocab):
        old_i = old_index.get(word)
        if old_i is not None and old_i < previous.shape[info.axis]:
            if info.axis == 0:
                result[new_i] = previous[old_i]
            else:
                result[:, new_i] = previous[:, old_i]
    return result


def _matches(pattern, name):
    # tf.estimator matched against the graph's `<name>:0`; `$`-anchored patterns match too.
    return re.match(pattern, name) or re.match(pattern, name + ":0")


def _chosen(variables, settings):
    """The {name: variable} `settings.vars_to_warm_start` selects, as tf.estimator read it: a
    regex over trainable variables, a list of regexes over all, a list of variables, or
    None for the trainable ones with a `VocabInfo`."""
    wanted = settings.vars_to_warm_start
    if wanted is None:
        return {
            n: v
            for n, v in variables.items()
            if v.trainable and n in settings.var_name_to_vocab_info
        }
    if isinstance(wanted, str):
        return {n: v for n, v in variables.items() if v.trainable and _matches(wanted, n)}
    wanted = list(wanted)
    if all(isinstance(w, str) for w in wanted):
        return {n: v for n, v in variables.items() if any(_matches(w, n) for w in wanted)}
    if all(isinstance(w, tf.Variable) for w in wanted):
        ids = {id(w) for w in wanted}
        return {n: v for n, v in variables.items() if id(v) in ids}
    raise ValueError(
        "vars_to_warm_start must be a regex, a list of regexes or of variables, or None; "
        f"got {wanted!r}."
    )


def warn_unmatched(settings, names):
    """Warns naming each `vars_to_warm_start` regex that chooses none of the model's
    variable `names` (tf.estimator 2.15 passed over them in silence, so a model could
    be warm-started with nothing)."""
    wanted = settings.vars_to_warm_start
    patterns = [wanted] if isinstance(wanted, str) else list(wanted or [])
    unmatched = [
        p for p in patterns if isinstance(p, str) and not any(_matches(p, n) for n in names)
    ]
    for pattern in unmatched:
        log.warning(
            "Warm start from %s: vars_to_warm_start %r matches none of the model's "
            "variables (%s%s).",
            settings.ckpt_to_initialize_from,
            pattern,
            ", ".join(sorted(names)[:8]),
            ", ..." if len(names) > 8 else "",
        )
    return unmatched


def checked_warm_start_from(warm_start_from):
    """An Estimator's `warm_start_from`, refused (as 2.15 refused it, when the Estimator is
    made) unless it is a path as str or bytes (not a `pathlib.Path`) or a
    `WarmStartSettings`."""
    if not isinstance(warm_start_from, (type(None), str, bytes, WarmStartSettings)):
        raise ValueError(
            "warm_start_from must be a string or a WarmStartSettings, instead got "
            f"{type(warm_start_from)}"
        )
    return warm_start_from


def warm_start_checkpoint(settings):
    """The checkpoint a warm start (`WarmStartSettings` or a path) initializes from."""
    if isinstance(settings, (str, bytes, os.PathLike)):
        settings = WarmStartSettings(settings)
    return resolve_checkpoint(settings.ckpt_to_initialize_from)


def _tf1_warm_start_error(settings, chosen, source, shapes):
    """What 2.15 said first of a warm start it could not do (TF1's init_from_checkpoint,
    over the checkpoint's names in order, then its check of the renames and vocabularies
    given for no chosen variable), whole: the error's first line is 2.15's."""
    given = settings.ckpt_to_initialize_from
    for previous, name in sorted(
        (settings.var_name_to_prev_var_name.get(name, name), name)
        for name, info in ((n, settings.var_name_to_vocab_info.get(n)) for n in chosen)
        if info is None
    ):
        key = source.get(previous)
        if key is None:
            return f"Tensor {previous} is not found in {given} checkpoint {shapes}"
        shape = chosen[name].shape
        if not shape.is_compatible_with(shapes[key]):
            return (
                f"Shape of variable {name}:0 ({shape}) doesn't match with shape of tensor "
                f"{previous} ({shapes[key]}) from checkpoint reader."
            )
    for field in ("var_name_to_prev_var_name", "var_name_to_vocab_info"):
        unused = set(getattr(settings, field)) - set(chosen)
        if unused:
            return (
                f"You provided the following variables in {field} that were not used: "
                f"{unused}.  Perhaps you misspelled them?  Here is the list of viable "
                f"variable names: {dict.fromkeys(chosen).keys()}"
            )
    return ""


def warm_start(variables, settings):
    """Initializes `variables` ({name: var}, tf.estimator's names) from `settings`.

    As tf.estimator's warm start, a chosen variable that the checkpoint lacks, or
    holds with another shape, and a `var_name_to_prev_var_name` or
    `var_name_to_vocab_info` entry for no chosen variable, are errors naming them;
    nothing is set then.  Returns the names set."""
    if isinstance(settings, (str, bytes, os.PathLike)):
        settings = WarmStartSettings(settings)
    _log_warm_start(settings)
    path = warm_start_checkpoint(settings)
    reader = _reader(path)
    shapes = reader.get_variable_to_shape_map()
    if _OBJECT_GRAPH in shapes:
        source = _full_names(reader)
        source.update({tf_estimator_name(name): key for name, key in _object_names(shapes).items()})
    else:
        source = {key: key for key in shapes}
    chosen = _chosen(variables, settings)
    warn_unmatched(settings, list(variables))
    problems, plan = [], []
    for name, variable in sorted(chosen.items()):
        previous = settings.var_name_to_prev_var_name.get(name, name)
        info = settings.var_name_to_vocab_info.get(name)
        key = source.get(previous)
        if key is None:
            problems.append(f"{previous!r} (for {name!r}) is not in the checkpoint")
        elif info is None and shapes[key] != variable.shape.as_list():
            problems.append(
                f"{name!r} has shape {variable.shape.as_list()} but {previous!r} has {shapes[key]}"
            )
        else:
            plan.append((name, variable, key, info))
    for field in ("var_name_to_prev_var_name", "var_name_to_vocab_info"):
        unused = sorted(set(getattr(settings, field)) - set(chosen))
        if unused:
            problems.append(
                f"{field} names {unused}, which vars_to_warm_start does not choose "
                f"(chosen: {sorted(chosen)})"
            )
    if problems:
        said = _tf1_warm_start_error(settings, chosen, source, shapes)
        ours = f"Warm start from {path!r}: " + "; ".join(problems) + "."
        raise ValueError("\n".join(filter(None, (said, ours))))
    for name, variable, key, info in plan:
        value = reader.get_tensor(key)
        if info is not None:
            value = _remap_rows(variable.numpy(), value, info)
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"Warm start: {name!r} has shape {tuple(variable.shape)}; remapped "
                    f"through its VocabInfo, {key!r} in {path!r} has {tuple(value.shape)}."
                )
        variable.assign(value)
    log.info("Warm-started %d variables.", len(plan))
    return [name for name, *_ in plan]


def _log_warm_start(settings):
    """2.15's lines before a warm start (its Estimator's, then TF1's `warm_start`'s): the
    settings, the checkpoint as given (a folder stays a folder), and, for a regex or
    None, that only trainable variables are chosen."""
    log.info("Warm-starting with WarmStartSettings: %s", settings)
    log.info("Warm-starting from: %s", settings.ckpt_to_initialize_from)
    if settings.vars_to_warm_start is None or isinstance(settings.vars_to_warm_start, str):
        log.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
