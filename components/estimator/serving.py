"""SavedModel export: the `model_fn` in PREDICT mode behind receiver placeholders.

The receiver function and `model_fn` are traced together with
`tf.compat.v1.wrap_function` (a graph function, not a session), which allows
tf.estimator-style receivers that create placeholders.  The graph is then
pruned once per distinct set of input tensors (usually once), and each
export output becomes a `tf.function` whose input names follow tf.estimator's
signatures.  Lookup tables the trace creates (vocabulary columns) are kept on
the module, so the SavedModel carries them; of the variables, only those of
the PREDICT graph and the global step are saved, as tf.estimator did.
"""

import logging
import os
import time

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow.python.eager import wrap_function
from tensorflow.python.framework import func_graph
from tensorflow.python.ops import op_selector
from tensorflow.python.saved_model import fingerprinting_utils
from tensorflow.python.saved_model.model_utils import export_utils
from tensorflow.python.trackable import data_structures, resource
from tensorflow.python.util import nest, object_identity

from components.estimator import checkpoints as ckpt_lib
from components.estimator import export as export_lib
from components.estimator import tf_logging
from components.estimator.model_fn import ModeKeys
from components.estimator.variables import GLOBAL_STEP_NAME

log = logging.getLogger(__name__)


class ServingModule(tf.Module):
    """What gets saved: the estimator's variables under the checkpoint's names."""

    def __init__(self, variables, resources, signature_methods):
        super().__init__()
        setattr(self, ckpt_lib.ROOT_ATTRIBUTE, dict(variables))
        self.resources = list(resources)
        # {signature: SignatureDef method name}, applied by `save`; not saved itself.
        self.signature_methods = data_structures.NoDependency(dict(signature_methods))


def export_outputs(spec):
    """The spec's export outputs by signature key, `serving_default` always among them."""
    if spec.export_outputs:
        outputs = dict(spec.export_outputs)
        if export_lib.SERVING_DEFAULT not in outputs:
            if len(outputs) != 1:
                raise ValueError(
                    f"export_outputs {sorted(outputs)} has several entries and no "
                    f"{export_lib.SERVING_DEFAULT!r}."
                )
            outputs[export_lib.SERVING_DEFAULT] = next(iter(outputs.values()))
        return outputs
    predictions = spec.predictions
    return {export_lib.SERVING_DEFAULT: export_lib.PredictOutput(predictions)}


def receiver_signatures(spec, receiver):
    """`servable_signatures` of a ServingInputReceiver: its receiver tensors' and each of
    its `receiver_tensors_alternatives`' (as 2.15 named them: `<alternative>:<output key>`)."""
    return servable_signatures(
        spec, receiver.receiver_tensors, receiver.receiver_tensors_alternatives
    )


def servable_signatures(spec, receiver_tensors, alternatives=None):
    """{signature: (export output, inputs, outputs)} for the export outputs these receiver
    tensors can serve, then those each group of `alternatives` ({name: receiver tensors})
    can serve, named `<name>:<output key>`.  As tf.estimator 2.15's export, an output whose
    signature cannot take a group's tensors (a classify or regress signature needs one
    string input; a raw receiver of several tensors has more) is left out, as is one
    with no inputs or no outputs (no server could call it), and the export goes on;
    2.15's report says which signatures it holds, which it left out and why, and
    whether the default is missing."""
    groups = [(None, receiver_tensors), *(alternatives or {}).items()]
    servable, excluded = {}, {}
    for group, tensors in groups:
        for key, output in export_outputs(spec).items():
            name = key if group is None else f"{group}:{key}"
            try:
                inputs, outputs = output.signature_io(tensors)
                _ensure_servable(inputs, outputs)
            except ValueError as error:
                excluded[name] = str(error)
                continue
            servable[name] = (output, inputs, outputs)
    if not servable:
        raise ValueError(
            "No signature can be exported from these receiver tensors "
            f"{sorted(receiver_tensors)}"
            + (f" nor their alternatives {sorted(alternatives)}" if alternatives else "")
            + ": "
            + "; ".join(f"{k}: {v}" for k, v in excluded.items())
        )
    export_utils._log_signature_report(
        {name: output for name, (output, *_) in servable.items()}, excluded
    )
    return servable


def _ensure_servable(inputs, outputs):
    """Raises 2.15's ValueError when a signature cannot be served: it has no inputs or
    no outputs, or its outputs need a placeholder its inputs do not feed (an alternative
    group of parsed features the model does not all read from).  A traced function's
    captures (its variables, placeholders in its graph) need no feeding."""
    if not inputs or not outputs:
        raise ValueError("A signature needs inputs and outputs to be served.")
    fed = nest.flatten(list(inputs.values()), expand_composites=True)
    needed = nest.flatten(list(outputs.values()), expand_composites=True)
    graph = needed[0].graph
    captured = {t.op.name for t in getattr(graph, "internal_captures", ())}
    fed_ids = object_identity.ObjectIdentitySet(fed)
    for op in op_selector.get_backward_walk_ops(needed, stop_at_ts=fed):
        if op.type != "Placeholder" or op.name in captured:
            continue
        if not all(tensor in fed_ids for tensor in op.outputs):
            raise ValueError(
                f"The signature's input tensors {[t.name for t in fed]} are insufficient "
                f"to compute its output keys {list(outputs)} (respectively, tensors "
                f"{[t.name for t in needed]}) because of the dependency on `{op.name}` "
                "which is not given as a signature input."
            )


def _signature_function(pruned, key, inputs, feeds):
    """A tf.function taking `inputs`' names as keyword inputs, returning `pruned(...)[key]`.

    `pruned` takes `feeds`, the graph tensors behind `inputs`, positionally.
    """
    names = sorted(inputs)
    feed_names = [next(n for n in names if inputs[n].name == feed.name) for feed in feeds]
    specs = [tf.TensorSpec(inputs[n].shape, inputs[n].dtype, name=n) for n in names]

    def call(*args):
        by_name = dict(zip(names, args, strict=True))
        return pruned(*[by_name[n] for n in feed_names])[key]

    return tf.function(call, input_signature=specs).get_concrete_function()


def _traced_as_tf2(graph_fn):
    """`graph_fn` traced as `tf.compat.v1.wrap_function` traces it, in a graph whose name
    does not start with `wrapped_function`: there tf_keras builds as in a `tf.function`
    (its v2 layers; a `tf.keras.Input` in its own scratch graph), as the TF2 path's
    `predict` ran the `model_fn`."""
    holder = wrap_function.VariableHolder(graph_fn)
    graph = func_graph.func_graph_from_py_func(
        "serving_function",
        holder,
        None,
        None,
        signature=[],
        add_control_dependencies=False,
        collections={},
    )
    return wrap_function.WrappedFunction(graph, variable_holder=holder, signature=[])


def _traced(graph_fn, retrace):
    """`graph_fn` in `tf.compat.v1.wrap_function`, as tf.estimator's export traced it;
    with `retrace`, when that fails, in `_traced_as_tf2`'s graph instead (a Keras model
    made of `tf.keras.Input`s recurses in wrap_function, where tf_keras takes its v1
    layers but still makes Keras tensors).  The first error is raised if both fail."""
    try:
        return tf.compat.v1.wrap_function(graph_fn, [])
    except Exception as error:
        if not retrace:
            raise
        log.debug("model_fn does not trace in wrap_function; tracing as TF2:", exc_info=True)
        try:
            return _traced_as_tf2(graph_fn)
        except Exception:
            raise error from None


def build(estimator, receiver_fn, checkpoint_path, mode, retrace=True):
    """(ServingModule, {signature: concrete function}) of `model_fn` in PREDICT mode
    behind `receiver_fn`'s tensors, its variables restored from `checkpoint_path`.
    `retrace`: see `_traced`."""
    if mode != ModeKeys.PREDICT:
        raise ValueError("Only PREDICT-mode exports are supported.")
    traced = {}

    def graph_fn():
        traced["tables"] = resource.ResourceTracker()  # (a failed trace's left behind)
        with resource.resource_tracker_scope(traced["tables"]):
            receiver = receiver_fn()
            if not isinstance(receiver, export_lib.ServingInputReceiver):
                raise TypeError("serving_input_receiver_fn must return a ServingInputReceiver.")
            spec = estimator._traced_model_fn_call(receiver.features, None, ModeKeys.PREDICT)
        traced["receiver"] = receiver
        traced["signatures"] = receiver_signatures(spec, receiver)
        traced["variables"] = estimator._store.requested_in_last_call()

    wrapped = _traced(graph_fn, retrace)
    estimator._restore(checkpoint_path, ModeKeys.PREDICT)
    signatures = _pruned_signatures(wrapped, traced["signatures"])
    methods = {
        name: output.method_name
        for name, (output, *_) in traced["signatures"].items()
        if name in signatures
    }
    module = ServingModule(
        _serving_variables(estimator, wrapped, traced["variables"]),
        traced["tables"].resources,
        methods,
    )
    return module, signatures


def _dense_inputs(name, inputs):
    """A signature's inputs as a TF2 signature takes them: a SparseTensor as its parts,
    named as `tf.saved_model.load` names a TF1 export's sparse input's parts
    (`<key>_indices`, `<key>_values`, `<key>_dense_shape`)."""
    dense = {}
    for key, tensor in inputs.items():
        if isinstance(tensor, tf.SparseTensor):
            parts = ("indices", "values", "dense_shape")
            dense.update({f"{key}_{part}": getattr(tensor, part) for part in parts})
        elif isinstance(tensor, tf.Tensor):
            dense[key] = tensor
        else:
            raise ValueError(
                f"Signature {name!r}: input {key!r} is a {type(tensor).__name__}; a "
                "signature of this export takes Tensors and SparseTensors."
            )
    return dense


def _pruned_signatures(wrapped, servable):
    """{signature: concrete function} of `servable` ({signature: (export output, inputs,
    outputs)}) over the traced graph `wrapped`.  Export outputs fed by the same tensors
    share one pruned graph (the classify, regress and predict signatures all read the
    serialized examples); an alternative group's signatures (`<name>:<key>`) are cut
    from the graph at the group's tensors, downstream of the parsing."""
    by_feeds = {}
    for name, (_, inputs, outputs) in servable.items():
        inputs = _dense_inputs(name, inputs)
        feeds = dict(sorted({t.name: t for t in inputs.values()}.items()))
        group = by_feeds.setdefault(
            tuple(feeds), {"feeds": list(feeds.values()), "fetches": {}, "inputs": {}}
        )
        group["fetches"][name] = outputs
        group["inputs"][name] = inputs
    signatures = {}
    for group in by_feeds.values():
        pruned = wrapped.prune(feeds=group["feeds"], fetches=group["fetches"])
        for name, inputs in group["inputs"].items():
            signatures[name] = _signature_function(pruned, name, inputs, group["feeds"])
    return signatures


def _serving_variables(estimator, wrapped, requested):
    """As tf.estimator exported them: the variables of the PREDICT graph and the global
    step, not the optimizer's slots: for wide & deep a third as many variables to save.

    That is what the PREDICT `model_fn` asked the store for (`requested`), plus any
    store variable the trace read that `model_fn` did not create (a closure's).
    """
    read = {id(v) for v in wrapped.variables}
    wanted = set(requested) | {GLOBAL_STEP_NAME}
    # (A variable a strategy made, a Keras clone's under train_distribute, is read by the
    # export's graph, outside the strategy, as its first replica's: that one is saved.)
    kept = {
        name: getattr(v, "_primary", v)
        for name, v in estimator._store.model_variables().items()
        if name in wanted or id(v) in read or id(getattr(v, "_primary", v)) in read
    }
    return kept


def _read_saved_model(path):
    saved = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as f:
        saved.ParseFromString(f.read())
    return saved


def signature_methods(export_dir):
    """{signature name: method name} of the SavedModel in `export_dir`."""
    saved = _read_saved_model(os.path.join(export_dir, "saved_model.pb"))
    return {name: sig.method_name for name, sig in saved.meta_graphs[0].signature_def.items()}


def _set_method_names(export_dir, methods, as_text):
    """Gives signatures tf.estimator's method names (TF2 saves every one as predict):
    TensorFlow Serving's Classify and Regress APIs accept only classify and
    regress signatures.  The fingerprint is then written again for the new file.
    With `as_text` the graph is then kept as `saved_model.pbtxt` instead, which
    the SavedModel loader reads when there is no `saved_model.pb`."""
    path = os.path.join(export_dir, "saved_model.pb")
    saved = _read_saved_model(path)
    for meta_graph in saved.meta_graphs:
        for name, method in methods.items():
            if name in meta_graph.signature_def:
                meta_graph.signature_def[name].method_name = method
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(saved.SerializeToString())
    fingerprinting_utils.write_fingerprint(export_dir)
    if as_text:
        with tf.io.gfile.GFile(path + "txt", "w") as f:
            f.write(text_format.MessageToString(saved))
        tf.io.gfile.remove(path)


def write_atomically(write, target_dir, assets_extra=None):
    """Calls `write(temp_dir)` on a hidden sibling of `target_dir`, adds `assets_extra`,
    then renames: a half-written export is never visible.

    (The temporary name does not start with `target_dir`'s: TensorFlow's `ram://`
    file system refuses a rename onto a prefix of an existing name.)"""
    parent, name = os.path.split(target_dir)
    temp_dir = os.path.join(parent, f".tmp-{name}-{int(time.time() * 1e6)}")
    with tf_logging.root_logger_untouched():  # TF 2.21's saving logs through absl
        write(temp_dir)
    for dest, source in (assets_extra or {}).items():
        target = os.path.join(temp_dir, "assets.extra", dest)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)
    tf.io.gfile.rename(temp_dir, target_dir)
    return target_dir


def _saved_with_asset_lines(module, temp_dir, signatures):
    """tf.saved_model.save, logging 2.15's builder's asset lines: `Assets added to
    graph.`, then `Assets written to: <assets>` or, with none, `No assets to write.`
    (TF 2.21 names the assets folder either way)."""
    log.info("Assets added to graph.")
    with tf_logging.withheld("Assets written to:"):
        tf.saved_model.save(module, temp_dir, signatures=signatures)
    assets = os.path.join(temp_dir, "assets")
    if tf.io.gfile.exists(assets) and tf.io.gfile.listdir(assets):
        log.info("Assets written to: %s", assets)
    else:
        log.info("No assets to write.")


def save(module, signatures, target_dir, assets_extra=None, as_text=False):
    """Saves `module` with its signatures (and their method names) to `target_dir`."""

    def write(temp_dir):
        _saved_with_asset_lines(module, temp_dir, signatures)
        _set_method_names(temp_dir, module.signature_methods, as_text)
        # 2.15's line (its builder's, naming the temporary folder too).
        written = "saved_model.pbtxt" if as_text else "saved_model.pb"
        log.info("SavedModel written to: %s", os.path.join(temp_dir, written))

    return write_atomically(write, target_dir, assets_extra)


def export_base(export_dir_base):
    """`export_dir_base` as a str; as under 2.15, a str or bytes only (a `pathlib.Path`
    refused with `tf.compat.as_bytes`'s TypeError, before `model_fn` is called)."""
    return tf.compat.as_bytes(export_dir_base).decode()


def timestamped_dir(export_dir_base):
    """A new `<export_dir_base>/<unix seconds>` path (tf.estimator's layout)."""
    export_dir_base = export_base(export_dir_base)
    tf.io.gfile.makedirs(export_dir_base)
    timestamp = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir_base, str(timestamp))):
        timestamp += 1
    return os.path.join(export_dir_base, str(timestamp))


def save_timestamped(module, signatures, export_dir_base, assets_extra=None, as_text=False):
    """`save` to a `timestamped_dir`; returns that path as bytes."""
    target_dir = timestamped_dir(export_dir_base)
    return save(module, signatures, target_dir, assets_extra, as_text).encode()
