"""Name-keyed, object-based checkpoints and warm starting from them.

Checkpoints hold one `tf.train.Checkpoint(estimator_variables={name: var})`,
so a variable's key is derived from the tf.estimator-style name it was
created under, and the exported SavedModel tracks the same dict: a warm start
can read either.
"""

import collections
import logging
import os
import re

import numpy as np
import tensorflow as tf

ROOT_ATTRIBUTE = "estimator_variables"
_KEY_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
CHECKPOINT_NAME = "model.ckpt"

log = logging.getLogger(__name__)


def _escape(name):
    return name.replace(".", "..").replace("/", ".S")


def _unescape(key):
    return re.sub(r"\.(.)", lambda m: "/" if m.group(1) == "S" else m.group(1), key)


def checkpoint_key(name):
    return f"{ROOT_ATTRIBUTE}/{_escape(name)}{_KEY_SUFFIX}"


def checkpoint_step(checkpoint_path):
    """The global step a `model.ckpt-<step>` prefix was saved at."""
    return int(checkpoint_path.rsplit("-", 1)[1])


def make_checkpoint(variables):
    return tf.train.Checkpoint(**{ROOT_ATTRIBUTE: dict(variables)})


def resolve_checkpoint(path):
    """A checkpoint prefix from a checkpoint prefix, a model_dir or a SavedModel dir."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode()
    if tf.io.gfile.exists(os.path.join(path, "saved_model.pb")):
        return os.path.join(path, "variables", "variables")
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"No checkpoint found in {path!r}.")
        return latest
    if tf.io.gfile.exists(path + ".index"):
        return path
    raise ValueError(f"No checkpoint or SavedModel at {path!r}.")


def variable_names(checkpoint_path):
    """The estimator variable names stored in a checkpoint.

    A checkpoint written through a user's `Scaffold(saver=tf.train.Checkpoint)`
    has its own object paths; those keys are listed as they are.
    """
    names, other = [], []
    prefix = ROOT_ATTRIBUTE + "/"
    for key, _ in tf.train.list_variables(checkpoint_path):
        if key.startswith(prefix) and key.endswith(_KEY_SUFFIX):
            names.append(_unescape(key[len(prefix) : -len(_KEY_SUFFIX)]))
        elif key != "_CHECKPOINTABLE_OBJECT_GRAPH":
            other.append(key)
    return sorted(names or other)


def read_variable(checkpoint_path, name):
    reader = tf.train.load_checkpoint(checkpoint_path)
    key = checkpoint_key(name)
    if (
        not reader.has_tensor(key)
        and name == "global_step"
        and reader.has_tensor("global_step" + _KEY_SUFFIX)
    ):
        key = "global_step" + _KEY_SUFFIX
    elif not reader.has_tensor(key) and reader.has_tensor(name):
        key = name
    if not reader.has_tensor(key):
        raise ValueError(f"Variable {name!r} is not in checkpoint {checkpoint_path!r}.")
    return reader.get_tensor(key)


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
    when it is given, else they keep the variable's own initial values."""
    new_vocab = _read_vocab(info.new_vocab)[: info.new_vocab_size]
    old_vocab = _read_vocab(info.old_vocab)
    if info.old_vocab_size > 0:
        old_vocab = old_vocab[: info.old_vocab_size]
    old_index = {word: i for i, word in enumerate(old_vocab)}
    if info.backup_initializer is None:
        result = current.copy()
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


def warm_start(variables, settings):
    """Initializes `variables` ({name: var}) from `settings`; returns the names set."""
    if isinstance(settings, (str, bytes, os.PathLike)):
        settings = WarmStartSettings(settings)
    path = resolve_checkpoint(settings.ckpt_to_initialize_from)
    reader = tf.train.load_checkpoint(path)
    if isinstance(settings.vars_to_warm_start, str):
        pattern = re.compile(settings.vars_to_warm_start)
        chosen = [n for n, v in variables.items() if v.trainable and pattern.match(n)]
    else:
        wanted = list(settings.vars_to_warm_start or [])
        chosen = [n for n in variables if any(re.match(w, n) for w in wanted)]
    warmed = []
    for name in chosen:
        previous_name = settings.var_name_to_prev_var_name.get(name, name)
        key = checkpoint_key(previous_name)
        if not reader.has_tensor(key):
            if name in settings.var_name_to_prev_var_name:
                raise ValueError(
                    f"Warm start: {previous_name!r} (for {name!r}) is not in {path!r}."
                )
            continue
        value = reader.get_tensor(key)
        variable = variables[name]
        info = settings.var_name_to_vocab_info.get(name)
        if info is not None:
            value = _remap_rows(variable.numpy(), value, info)
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"Warm start: {name!r} has shape {tuple(variable.shape)} but "
                f"{previous_name!r} in {path!r} has shape {tuple(value.shape)}."
            )
        variable.assign(value)
        warmed.append(name)
    log.info("Warm-started %d variables from %s", len(warmed), path)
    return warmed
