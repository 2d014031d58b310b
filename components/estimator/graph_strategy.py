"""A TF1 graph `model_fn` under `RunConfig(train_distribute=..., eval_distribute=...)`.

tf.estimator 2.15 built a TRAIN graph under `train_distribute` and an EVAL graph under
`eval_distribute` (PREDICT and exports under none): the global step made in the
strategy's scope, `input_fn` given an `InputContext`, `model_fn` called in a replica
context (so `tf.distribute.has_strategy()` is True there, and a `MirroredStrategy`'s
variables are `MirroredVariable`s).  tensorflow/models' `official/r1` samples pass their
strategy on CPUs this way (`OneDeviceStrategy`, or `MirroredStrategy` over one device).
The graph path does the same for a strategy of one replica on one machine; with more
replicas (2.15 hung on a TF1 `model_fn` over two devices) it refuses to train.
"""

import contextlib

import tensorflow as tf

from components.estimator.model_fn import ModeKeys


def of_mode(config, mode, exporting):
    """The strategy `mode`'s graph is built under, or None: one of a single replica, on
    one machine, named by `config` for TRAIN or EVAL (not for an export)."""
    if exporting:
        return None
    strategy = {ModeKeys.TRAIN: config.train_distribute, ModeKeys.EVAL: config.eval_distribute}
    strategy = strategy.get(mode)
    if strategy is None or strategy.num_replicas_in_sync != 1:
        return None
    if config.num_ps_replicas or config.num_worker_replicas > 1:
        return None
    return strategy


def scope(strategy):
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def input_context(strategy):
    """What 2.15 passed an `input_fn` taking `input_context` under `strategy`: its one
    input pipeline (None without a strategy)."""
    if strategy is None:
        return None
    return tf.distribute.InputContext(
        num_input_pipelines=1,
        input_pipeline_id=0,
        num_replicas_in_sync=strategy.num_replicas_in_sync,
    )


def call_model_fn(strategy, call, features, labels, mode):
    """`call(features, labels, mode)`, in `strategy`'s replica context when there is one.
    (Its one replica's spec comes back as it was returned.)

    2.15's `call_for_each_replica` converted what it called with AutoGraph, so a user's
    `model_fn` (and the functions of its own it calls) ran converted under a strategy: a
    Python `if` on a tensor there worked. `call(..., autograph=True)` converts the
    model_fn alone: converting the Estimator's own code around it took seconds a call."""
    if strategy is None:
        return call(features, labels, mode)
    return strategy.extended.call_for_each_replica(
        tf.autograph.experimental.do_not_convert(call),
        args=(features, labels, mode),
        kwargs={"autograph": True},
    )
