"""`ModeKeys` and `EstimatorSpec`: what a `model_fn` receives and returns."""

import collections

import tensorflow as tf

from components.trainer.estimator.ignored import warn_once


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
    values are Keras metrics or `(value, update_op)` pairs.
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
        if mode == ModeKeys.TRAIN:
            if loss is None:
                raise ValueError(
                    "EstimatorSpec: `loss` is required in TRAIN mode (model_fn returned none)."
                )
            if train_op is None:
                raise ValueError("EstimatorSpec: `train_op` is required in TRAIN mode.")
        if mode == ModeKeys.EVAL and loss is None:
            raise ValueError("EstimatorSpec: `loss` is required in EVAL mode.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("EstimatorSpec: `predictions` is required in PREDICT mode.")
        eval_metric_ops = dict(eval_metric_ops or {})
        for key, metric in eval_metric_ops.items():
            if not (_is_keras_metric(metric) or (isinstance(metric, tuple) and len(metric) == 2)):
                raise TypeError(
                    f"EstimatorSpec: eval_metric_ops[{key!r}] must be a Keras metric or a "
                    f"(value, update_op) pair, got {type(metric).__name__}."
                )
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
            scaffold,
            tuple(evaluation_hooks or ()),
            tuple(prediction_hooks or ()),
        )


def _is_keras_metric(obj):
    return hasattr(obj, "update_state") and hasattr(obj, "result") and hasattr(obj, "reset_state")


def metric_value(metric):
    """The current value of an `eval_metric_ops` entry, as a tensor."""
    if _is_keras_metric(metric):
        return tf.convert_to_tensor(metric.result())
    _, update_op = metric
    return tf.convert_to_tensor(update_op)


class Scaffold:
    """How a `model_fn` wants its state saved.

    Only `saver` is honoured: a `tf.train.Checkpoint` over the model's own
    objects makes checkpoints object-based in the user's structure (the
    Estimator adds `global_step` to it).  The TF1 session fields are kept for
    signature compatibility and must stay None; `summary_op` and
    `copy_from_scaffold` are ignored with a warning.
    """

    def __init__(
        self,
        init_op=None,
        init_feed_dict=None,
        init_fn=None,
        ready_op=None,
        ready_for_local_init_op=None,
        local_init_op=None,
        summary_op=None,
        saver=None,
        copy_from_scaffold=None,
        local_init_feed_dict=None,
    ):
        unsupported = {
            name: value
            for name, value in (
                ("init_op", init_op),
                ("init_feed_dict", init_feed_dict),
                ("init_fn", init_fn),
                ("ready_op", ready_op),
                ("ready_for_local_init_op", ready_for_local_init_op),
                ("local_init_op", local_init_op),
                ("local_init_feed_dict", local_init_feed_dict),
            )
            if value is not None
        }
        if unsupported:
            raise ValueError(
                f"Scaffold: {sorted(unsupported)} are TF1 session hooks with no TF2 meaning; "
                "initialize variables with initializers or warm_start_from instead."
            )
        if saver is not None and not isinstance(saver, tf.train.Checkpoint):
            raise TypeError("Scaffold(saver=...) must be a tf.train.Checkpoint.")
        for name, value, instead in (
            (
                "summary_op",
                summary_op,
                "only the loss, learning rates and eval metrics are summarized",
            ),
            ("copy_from_scaffold", copy_from_scaffold, "pass its saver instead"),
        ):
            if value is not None:
                warn_once(f"Scaffold.{name}", f"Scaffold: {name} is ignored: {instead}.")
        self.saver = saver
        self.summary_op = summary_op
