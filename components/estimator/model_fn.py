"""`ModeKeys` and `EstimatorSpec`: what a `model_fn` receives and returns."""

import collections

import tensorflow as tf

from components.estimator import hooks as hooks_lib


class ModeKeys:
    """The three modes a `model_fn` is called in (values as tf.estimator's)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_SPEC_FIELDS = [
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
]


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """Everything an `Estimator` needs from one `model_fn` call.

    `train_op` is whatever applies the update (an op, a tensor, or None when
    the update already ran eagerly in the traced step); `eval_metric_ops`
    values are `(value, update_op)` pairs (a Keras metric given is made one, as in 2.15).
    """

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"EstimatorSpec: unknown mode {mode!r}")
        # (2.15's words for what a mode needs, in its order: 'Missing train_op.', then
        # the train_op's type, then 'Missing loss.', ...)
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        _check_train_op_type(train_op)
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        _check_types_and_graph(loss, train_op, predictions)
        loss = _scalar_loss(loss)
        _check_predictions(predictions)
        for hooks in (training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks):
            _check_hooks(hooks)
        if mode == ModeKeys.PREDICT:
            export_outputs = _completed_export_outputs(export_outputs, predictions)
        if scaffold and not isinstance(scaffold, tf.compat.v1.train.Scaffold):  # ({}: none)
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
        eval_metric_ops = _checked_eval_metric_ops(eval_metric_ops)
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            train_op,
            eval_metric_ops,
            export_outputs,
            tuple(training_chief_hooks or ()),
            tuple(training_hooks or ()),
            scaffold or Scaffold(),  # 2.15's default: an empty one, its fields None
            tuple(evaluation_hooks or ()),
            tuple(prediction_hooks or ()),
        )

    def _replace(self, **changes):
        """A new spec with these fields changed, checked as a new spec is (2.15 refused a
        change of mode, and re-ran its checks: `loss=None` in TRAIN is refused)."""
        if "mode" in changes and changes["mode"] != self.mode:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(**dict(self._asdict(), **changes))


def _check_train_op_type(train_op):
    """2.15's TypeError for a train_op neither an Operation nor a tensor."""
    if train_op is not None and not isinstance(
        train_op, (tf.Operation, tf.__internal__.types.Tensor)
    ):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")


def _check_types_and_graph(loss, train_op, predictions):
    """2.15's checks of the spec's tensors: a TypeError for a loss that is not a tensor (a
    Python number too); in a graph, a ValueError for a loss, train_op or prediction made
    in another graph (a TF2 trace's captures are not compared, as for eval_metric_ops)."""
    if loss is not None and not isinstance(loss, tf.__internal__.types.Tensor):
        raise TypeError(f"loss must be Tensor, given: {loss}")
    if tf.executing_eagerly() or tf.inside_function():
        return
    graph = tf.compat.v1.get_default_graph()
    values = "prediction values"
    if isinstance(predictions, dict):
        named = [(values, f"{key}: ", value) for key, value in predictions.items()]
    else:
        named = [(values, "", predictions)]
    named += [("loss", "", loss), ("train_op", "", train_op)]
    for what, key, value in named:
        if isinstance(value, tf.Variable) or getattr(value, "graph", graph) is graph:
            continue
        raise ValueError(_not_of_the_default_graph(what, f"{key}{value.name}"))


def _not_of_the_default_graph(what, name):
    """2.15's refusal of a spec's tensor made in another graph, in its words."""
    return (
        f'{what} with "{name}" must be from the default graph. Possible causes of this error '
        f"include: \n\n1) {what} was created outside the context of the default graph."
        "\n\n2) The object passed through to EstimatorSpec was not created in the most "
        'recent call to "model_fn".'
    )


def _scalar_loss(loss):
    """The loss as a scalar: tf.estimator took a loss of one element of any shape (a
    per-example loss over batches of one, shape [None]) and reshaped it to [], so its
    summary and logging see a scalar; more elements are refused as it refused them."""
    if not tf.is_tensor(loss) or isinstance(loss, tf.Variable):
        return loss
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if not loss.shape.is_compatible_with(tf.TensorShape([])):
        return tf.reshape(loss, [])
    return loss


def _checked_eval_metric_ops(eval_metric_ops):
    """A copy of `eval_metric_ops` after tf.estimator 2.15's checks, in its order and words:
    a dict; each value a Keras metric whose update_state ran in model_fn, or a 2-tuple;
    then every part of a tuple from the graph the spec is made in (a Python number has
    no graph: an AttributeError, as there; a TF2 trace's graphs are not compared)."""
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    in_a_graph = not (tf.executing_eagerly() or tf.inside_function())
    for key, value in eval_metric_ops.items():
        if _is_keras_metric(value):
            if not _was_updated(value, in_a_graph):
                raise ValueError(f'Please call update_state(...) on the "{value.name}" metric')
        elif not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples, "
                f"given: {value} for key: {key}"
            )
    if not in_a_graph:  # (eagerly, or in a trace: its captures may be eager variables)
        return _as_pairs(eval_metric_ops, in_a_graph)
    graph = tf.compat.v1.get_default_graph()
    for key, value in eval_metric_ops.items():
        parts = () if _is_keras_metric(value) else tf.nest.flatten(value)
        if _is_keras_metric(value):  # (2.15 took its result and update)
            parts = [v for v in value.variables if v.graph is not graph][:1]
        for part in parts:
            if part.graph is not graph:
                raise ValueError(
                    _not_of_the_default_graph("eval_metric_ops", f"{key}: {part.name}")
                )
    return _as_pairs(eval_metric_ops, in_a_graph)


def _as_pairs(eval_metric_ops, in_a_graph):
    """`eval_metric_ops` with each Keras metric made a `(value, update_op)` pair, as
    tf.estimator 2.15's EstimatorSpec made them: in a graph its result and its update
    (2.15 took the first update; a metric updated more than once here updates by all),
    its variables added to the local and metric collections; in a trace, whose updates
    have already run, its result for both."""
    pairs = dict(eval_metric_ops)
    for key, value in eval_metric_ops.items():
        if not _is_keras_metric(value):
            continue
        result = value.result()
        if not in_a_graph:
            pairs[key] = (result, result)
            continue
        updates = list(getattr(value, "updates", None) or ())
        if not updates:  # (a metric-like object of another kind: kept as given)
            continue
        pairs[key] = (result, updates[0] if len(updates) == 1 else tf.group(*updates))
        keys = tf.compat.v1.GraphKeys
        for collection in (keys.LOCAL_VARIABLES, keys.METRIC_VARIABLES):
            known = tf.compat.v1.get_collection(collection)
            for variable in value.variables:
                if not any(variable is k for k in known):
                    tf.compat.v1.add_to_collection(collection, variable)
    return pairs


def _was_updated(metric, in_a_graph):
    """Whether a Keras metric's update_state ran in the graph being built: in a graph its
    `updates` list it; a tf.function's list none (TF2 applies them as they run), so there
    the trace (or a function graph it is nested in) must have captured one of its
    variables. Eagerly: taken as updated."""
    if in_a_graph:
        return bool(getattr(metric, "updates", True))
    if tf.executing_eagerly():
        return True
    try:
        captured, graph = set(), tf.compat.v1.get_default_graph()
        while getattr(graph, "external_captures", None) is not None:
            captured.update(id(t) for t in graph.external_captures)
            graph = graph.outer_graph
        return any(id(v.handle) in captured for v in metric.variables)
    except (AttributeError, ValueError):  # (a graph or variable of another kind)
        return True


def _check_predictions(predictions):
    """A TypeError for predictions that are neither a tensor nor a dict of tensors (as
    tf.estimator refused them when the spec was made): a SparseTensor or RaggedTensor
    (`string_split`'s words) too, which no batch of predictions can be cut from."""
    if predictions is None:
        return
    named = predictions.items() if isinstance(predictions, dict) else [(None, predictions)]
    for key, value in named:
        if not isinstance(value, tf.__internal__.types.Tensor):
            where = "predictions" if key is None else f"predictions[{key}]"
            raise TypeError(f"{where} must be Tensor, given: {value}")


def _check_hooks(hooks):
    """A TypeError for a spec hook that is neither TF1's SessionRunHook nor this kit's
    Hook (as tf.estimator refused them when the spec was made)."""
    for hook in hooks or ():
        if not hooks_lib.is_hook(hook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")


def _completed_export_outputs(export_outputs, predictions):
    """A PREDICT spec's `export_outputs` as 2.15 kept them on the spec: checked (ExportOutput
    values, a `serving_default` among several), a single one also as `serving_default`,
    and none given: `{'serving_default': PredictOutput(predictions)}`."""
    from components.estimator import export as export_lib

    if export_outputs is None:
        return {export_lib.SERVING_DEFAULT: export_lib.PredictOutput(predictions)}
    _check_export_outputs(export_outputs)
    if len(export_outputs) == 1 and export_lib.SERVING_DEFAULT not in export_outputs:
        return dict(
            export_outputs, **{export_lib.SERVING_DEFAULT: next(iter(export_outputs.values()))}
        )
    return export_outputs


def _check_export_outputs(export_outputs):
    """tf.estimator's checks of a PREDICT spec's `export_outputs`, when the spec is made:
    ExportOutput values, and a `serving_default` among several."""
    from tensorflow.python.saved_model.model_utils import export_output

    if not export_outputs:
        return
    if not isinstance(export_outputs, dict):
        raise TypeError(f"`export_outputs` must be dict, received: {export_outputs}.")
    for output in export_outputs.values():
        if not isinstance(output, export_output.ExportOutput):
            raise TypeError(
                f"Values in `export_outputs` must be ExportOutput objects, received: "
                f"{export_outputs}."
            )
    default = tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if len(export_outputs) > 1 and default not in export_outputs:
        raise ValueError(
            "Multiple `export_outputs` were provided, but none of them are specified as the "
            "default. Use`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY` to specify a default."
        )


def _is_keras_metric(obj):
    return hasattr(obj, "update_state") and hasattr(obj, "result") and hasattr(obj, "reset_state")


def metric_value(metric):
    """The current value of an `eval_metric_ops` entry, as a tensor: a pair's update
    tensor (a tf.compat.v1 metric's is its value after the update), or, when the update
    is an Operation (`tf.no_op()`, `tf.group(...)`), its value, after it."""
    if _is_keras_metric(metric):
        return tf.convert_to_tensor(metric.result())
    value, update_op = metric
    if not isinstance(update_op, tf.Operation):
        return tf.convert_to_tensor(update_op)
    with tf.control_dependencies([update_op]):
        return tf.identity(value)


class Scaffold(tf.compat.v1.train.Scaffold):
    """How a `model_fn` wants its state initialized and saved: tf.estimator's Scaffold.

    Every field works as in TF1 for a `model_fn` that runs in a graph with a
    session (see graph_mode): `init_fn`, `local_init_op`, a `Saver`, ...  A
    TF2-style `model_fn` may instead give `saver=tf.train.Checkpoint(...)`, which
    makes checkpoints object-based in the user's structure (the Estimator adds
    `global_step` to it); the session fields have no meaning there and are
    refused.
    """

    def __init__(self, *args, saver=None, **kwargs):
        checkpoint = saver if isinstance(saver, tf.train.Checkpoint) else None
        super().__init__(*args, saver=None if checkpoint else saver, **kwargs)
        if checkpoint is not None:
            self._saver = checkpoint


def selected_predictions(predictions, predict_keys):
    """`(predictions as a dict, whether model_fn returned a single tensor)`, narrowed to
    `predict_keys` when given, as `Estimator.predict` yields them: as in 2.15, keys the
    predictions lack are passed over while one is there (`key in predict_keys`, a
    string's too), and predict_keys with a single tensor is refused."""
    single = not isinstance(predictions, dict)
    if not predict_keys:
        return ({"predictions": predictions} if single else predictions), single
    if single:
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    kept = {k: v for k, v in predictions.items() if k in predict_keys}
    if not kept:
        raise ValueError(
            f"Expected to run at least one output from {predictions.keys()}, "
            f"provided {predict_keys}."
        )
    return kept, single


def _batch_length(arrays):
    """The predictions' common batch length, the first key's (or a later one's while it
    is 0); 2.15's words for the first key that differs."""
    length = None
    for key, value in arrays.items():
        length = length or value.shape[0]
        if value.shape[0] != length:
            raise ValueError(
                f"Batch length of predictions should be same. {key} has different batch "
                "length than others."
            )
    return length


def yielded_predictions(arrays, single, yield_single_examples):
    """One batch's numpy predictions as `Estimator.predict` yields them (a scalar one
    fails as it did in 2.15: a single tensor's TypeError, a dict's IndexError)."""
    if not yield_single_examples:
        yield arrays["predictions"] if single else arrays
    elif single:
        yield from arrays["predictions"]
    else:
        for i in range(_batch_length(arrays)):
            yield {k: v[i] for k, v in arrays.items()}
