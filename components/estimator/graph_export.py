"""TF1 SavedModels as tf.estimator 2.15 wrote them: one MetaGraph per mode.

`export_saved_model(experimental_mode=TRAIN/EVAL)` and
`experimental_export_all_saved_models` build each mode's graph from its receiver
(a supervised receiver gives `model_fn` labels too), restore the checkpoint into it
with a `Saver` and add it to one `tf.compat.v1.saved_model.Builder`: TRAIN first,
then EVAL, then PREDICT, the first carrying the variables (the TRAIN graph holds
the optimizer's slots as well).  A TRAIN or EVAL MetaGraph has one signature named
after its mode (`train`, `eval`) whose inputs are the receiver's tensors and whose
outputs are the loss, the predictions and (EVAL) each metric's value and update
op; the TRAIN one also keeps the train op in the `saved_model_train_op`
collection, so code that retrains or evaluates from the SavedModel finds it.
"""

import tensorflow as tf
from tensorflow.python.saved_model import tag_constants
from tensorflow.python.saved_model.model_utils import export_utils

from components.estimator import checkpoints as ckpt_lib
from components.estimator import graph_mode, serving
from components.estimator.model_fn import ModeKeys

_V1 = tf.compat.v1

# tf.estimator's order: the first mode exported saves the variables.
EXPORT_ORDER = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)
_TAGS = {
    ModeKeys.TRAIN: [tag_constants.TRAINING],
    ModeKeys.EVAL: [tag_constants.EVAL],
    ModeKeys.PREDICT: [tag_constants.SERVING],
}


def _signature_defs(built):
    """The mode's signatures: the serving ones for PREDICT, else one supervised one."""
    spec, receiver = built.spec, built.receiver
    if built.mode == ModeKeys.PREDICT:
        return graph_mode.signature_defs(spec, receiver)  # (which logs 2.15's report)
    metrics = {
        name: graph_mode.metric_pair(name, metric)
        for name, metric in (spec.eval_metric_ops or {}).items()
    }
    outputs = export_utils.export_outputs_for_mode(
        built.mode, predictions=spec.predictions, loss=spec.loss, metrics=metrics or None
    )
    return export_utils.build_all_signature_defs(
        receiver.receiver_tensors, outputs, serving_only=False
    )


def _missing_variables_message(mode, checkpoint_path):
    """Why a mode's graph cannot be restored: the variables the checkpoint lacks."""
    stored = set(ckpt_lib.variable_names(checkpoint_path))
    missing = sorted(v.op.name for v in _V1.global_variables() if v.op.name not in stored)
    return (
        f"Exporting the {mode!r} graph: checkpoint {checkpoint_path} lacks variables this "
        f"mode's model_fn creates in a graph: {missing[:10]}. TRAIN and EVAL SavedModels "
        "are built in a graph, as tf.estimator built them; a model_fn that trains on the "
        "TF2 path has its variables named as in that graph only when it makes the same "
        "variables there, in the same order (and a model_dir it wrote before the kit named "
        "them so has the TF2 names): export the PREDICT mode, or retrain in a fresh model_dir."
    )


def add_meta_graph(builder, built, checkpoint_path, with_variables):
    """Adds `built` (a `graph_mode.ModeGraph` over a receiver) to `builder`, restored from
    `checkpoint_path`; `with_variables` for the first MetaGraph of the SavedModel."""
    with built.graph.as_default():
        signatures = _signature_defs(built)
        scaffold = built.scaffold()
        saver = scaffold.saver
        if hasattr(saver, "build"):
            saver.build()
        # What a loader runs after restoring: the spec's local init op, else the lookup
        # tables' initializers, and for TRAIN and EVAL the local variables' (metrics'
        # totals) too.  (tf.compat.v1's default local init op in a PREDICT graph keeps
        # TF2's tf.saved_model.load from loading it: "Graph is finalized".)
        init_op = scaffold.local_init_op
        if init_op is None:
            init_op = _V1.tables_initializer()
            if built.mode != ModeKeys.PREDICT:
                init_op = tf.group(init_op, _V1.local_variables_initializer())
        with _V1.Session(config=built.session_config()) as session:
            try:
                saver.restore(session, checkpoint_path)
            except tf.errors.NotFoundError:
                raise ValueError(_missing_variables_message(built.mode, checkpoint_path)) from None
            builder._add_train_op(built.spec.train_op)
            kwargs = {
                "tags": _TAGS[built.mode],
                "signature_def_map": signatures,
                "assets_collection": _V1.get_collection(_V1.GraphKeys.ASSET_FILEPATHS),
                "main_op": init_op,
                "saver": saver,
                "strip_default_attrs": True,
            }
            if with_variables:
                builder.add_meta_graph_and_variables(session, **kwargs)
            else:
                builder.add_meta_graph(**kwargs)


def export_all(export_dir_base, graph_for_mode, assets_extra, as_text, checkpoint_path):
    """Writes `<export_dir_base>/<timestamp>` with a MetaGraph for each mode of
    `graph_for_mode` ({mode: a callable giving its ModeGraph}); returns it as bytes."""
    modes = [mode for mode in EXPORT_ORDER if mode in graph_for_mode]

    def write(temp_dir):
        builder = _V1.saved_model.Builder(temp_dir)
        for index, mode in enumerate(modes):
            add_meta_graph(builder, graph_for_mode[mode](), checkpoint_path, index == 0)
        builder.save(as_text=as_text)

    target_dir = serving.timestamped_dir(export_dir_base)
    return serving.write_atomically(write, target_dir, assets_extra).encode()


def receiver_graph(estimator, mode, receiver_fn):
    """`mode`'s graph over `receiver_fn`'s tensors, whichever path the model trains on."""

    def build():
        built = estimator._mode_graph(mode, (), receiver_fn=receiver_fn)
        return built or graph_mode.ModeGraph(estimator, mode, receiver_fn=receiver_fn)

    return build
