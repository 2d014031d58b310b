"""`add_metrics` and `experimental.call_logit_fn`: user functions called with the
arguments they name, as tf.estimator called them."""

import tensorflow as tf

from components.estimator.estimator import WRAPPED_ESTIMATOR, _accepted_args
from components.estimator.estimator_v1 import Estimator
from components.estimator.model_fn import EstimatorSpec, ModeKeys

_METRIC_FN_ARGS = {"features", "labels", "predictions", "config"}


def _named_args(fn, available):
    """The entries of `available` that `fn` takes by name (as 2.15 counted them: not those a
    `functools.partial` bound, nor keyword-only ones)."""
    names = _accepted_args(fn)
    return {name: value for name, value in available.items() if name in names}


def add_metrics(estimator, metric_fn):
    """A new `Estimator` on the same model_dir whose `evaluate()` also reports `metric_fn`'s metrics.

    `metric_fn` takes any of `features`, `labels`, `predictions`, `config` and
    returns `{name: metric}` (Keras metrics or `(value, update_op)` pairs); a name
    the estimator already reports is replaced.
    """
    unexpected = sorted(_accepted_args(metric_fn) - _METRIC_FN_ARGS)
    if unexpected:
        raise ValueError(f"metric_fn ({metric_fn}) has following not expected args: {unexpected}")
    model_fn = estimator._model_fn  # the user's own (`model_fn` is 2.15's bound one)

    def new_model_fn(features, labels, mode, params, config):
        available = {
            "features": features,
            "labels": labels,
            "mode": mode,
            "params": params,
            "config": config,
        }
        spec = model_fn(**_named_args(model_fn, available))
        if mode != ModeKeys.EVAL:
            return spec
        added = metric_fn(**_named_args(metric_fn, dict(available, predictions=spec.predictions)))
        fields = spec._asdict()
        # (dict.update, as 2.15: pairs of (name, metric) do, None is not iterable)
        fields["eval_metric_ops"] = dict(spec.eval_metric_ops)
        fields["eval_metric_ops"].update(added)
        return EstimatorSpec(**fields)

    setattr(new_model_fn, WRAPPED_ESTIMATOR, estimator)  # (it runs where estimator's runs)
    return Estimator(
        new_model_fn,
        model_dir=estimator.model_dir,
        config=estimator._user_config,
        params=estimator.params,
        warm_start_from=estimator._warm_start_from,
    )


def call_logit_fn(logit_fn, features, mode, params, config):
    """`logit_fn(features=..., [mode, params, config])`; its result must be a Tensor or
    a dict of them by string keys."""
    logits = logit_fn(
        features=features,
        **_named_args(logit_fn, {"mode": mode, "params": params, "config": config}),
    )
    valid_dict = isinstance(logits, dict) and all(
        isinstance(k, str) and isinstance(v, tf.Tensor) for k, v in logits.items()
    )
    if not (valid_dict or isinstance(logits, tf.Tensor)):
        raise ValueError(
            "logit_fn should return a Tensor or a dictionary mapping strings to Tensors.  "
            f"logit_fn returned: {logits}"
        )
    return logits
