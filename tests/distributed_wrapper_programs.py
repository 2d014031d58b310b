"""Estimator code trained under a distributed-training wrapper, written as its authors
wrote it (after `tf_upgrade_v2`), on one process and tiny made-up data. The wrapper
libraries are not installed: their classes are written here in their shape, on one
process (size 1, rank 0, allreduce and broadcast the identity, as Horovod on one process
is).

- `horovod_mnist_estimator`: Horovod's `examples/tensorflow/tensorflow_mnist_estimator.py`
  (BytePS's and Uber's copies are the same): `hvd.DistributedOptimizer` around a TF1
  `MomentumOptimizer` (a `tf.compat.v1.train.Optimizer` subclass overriding
  `compute_gradients`, delegating `apply_gradients`, `get_slot`, `get_slot_names`,
  `variables`), `hvd.BroadcastGlobalVariablesHook(0)` (assign ops built in `begin()`, run
  in `after_create_session`), a `LoggingTensorHook` on `softmax_tensor`,
  `session_config.gpu_options.visible_device_list`, `model_dir` None off rank 0,
  `steps // hvd.size()`; its `tf.compat.v1.layers` CNN: losses, names, slots, evaluation,
  predictions, log lines;
- `horovod_sparse_as_dense`: `DistributedOptimizer(Adam, sparse_as_dense=True)` over an
  embedding (its IndexedSlices made dense), the broadcast hook given to each of two
  `train` calls and to `evaluate`: names, slots, values;
- `horovod_backward_passes`: `DistributedOptimizer(backward_passes_per_step=2)` (its local
  gradient aggregation: local variables, the update applied in a `tf.cond` every second
  pass and the global step advanced in the other branch), an Estimator given no
  `model_dir` (as ranks other than 0 make it), the broadcast hook in `train`, `evaluate`
  and `predict`: losses per step, the global step, evaluation, predictions; and the same
  under TF1 control flow (`horovod_backward_passes_tf1_control_flow`);
- `tfos_roles`: TensorFlowOnSpark's `examples/mnist/estimator`: the `RunConfig` each role of
  the driver's `TF_CONFIG` (chief, worker, ps, evaluator) parses, then the evaluator's
  `train_and_evaluate` once the chief's checkpoint reached `max_steps`;
- `replica_device_setter_layers`: TF1 between-graph replication code's
  `tf.compat.v1.device(replica_device_setter(...))` around a model_fn's layers (by
  `ps_tasks`, by a cluster, with a worker device, with no cluster), run on one process:
  names, the variables' devices, evaluation, predictions, or the error;
- `ema_scaffold_saver`: an `ExponentialMovingAverage` applied in the train op and a
  `Scaffold(saver=Saver(ema.variables_to_restore()))` in EVAL and PREDICT: the
  checkpoint's contents, evaluation and predictions from the averaged weights, and the
  SavedModel `export_saved_model` writes with that saver (its variables, what it serves);
- `horovod_checkpoints_on_rank_0_only`: `save_checkpoints_steps` None off rank 0 (and no
  `save_checkpoints_secs`): the model_dir then, evaluate and predict from initial values,
  `get_variable_names`' error;
- `horovod_canned_optimizers`: `hvd.DistributedOptimizer` of a TF1 optimizer given to
  `tf.compat.v1.estimator`'s DNN and linear classifiers (trained, evaluated) and to the V2
  ones (an instance, a callable: 2.15's error);
- `ema_restore_mistakes`: the EMA restoring Scaffold over a checkpoint trained without
  averages (2.15's error), and `init_from_checkpoint` of a checkpoint's averages into a
  fresh model's variables (fine-tuning from the EMA weights): its predictions;
- `moving_average_swapping_saver`: tensorflow/models' `MovingAverageOptimizer` shape (its
  `swapping_saver()` in the TRAIN scaffold writes the averages under the variables' own
  names): the checkpoint's contents and what evaluate, predict and an export read back.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts and `close` values. `tests/test_distributed_wrappers.py` compares
them with 2.15's recording (`tests/tf215/record_family.py distributed_wrapper_programs`,
into `tests/data/tf215/distributed_wrappers.json`).
"""

import json
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import LOG_MARKERS, _info_lines, _normalized
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "distributed_wrappers.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _lines(seen, workdir, markers=LOG_MARKERS):
    lines = []
    for line in seen:
        first = line.splitlines()[0] if line else line
        if any(marker in first for marker in markers):
            # (numpy's padding of an array's printed numbers differs by version)
            normalized = re.sub(r"\s+\]", "]", re.sub(r"\s+", " ", _normalized(first, workdir)))
            if not lines or lines[-1] != normalized:
                lines.append(normalized)
    return lines


def _checkpoint(tf, model_dir):
    """{name: shape} of the latest checkpoint, and its values (floats) by name."""
    path = tf.train.latest_checkpoint(model_dir)
    names = {name: list(shape) for name, shape in tf.train.list_variables(path)}
    values = {
        name: np.asarray(tf.train.load_variable(path, name), np.float64).ravel().tolist()
        for name in names
        if name != "global_step"
    }
    return names, values


# ------------------------------------------------------------------ horovod, one process
def horovod(tf):
    """`horovod.tensorflow` as `import horovod.tensorflow as hvd` gives it, on one process."""
    v1 = tf.compat.v1

    class _DistributedOptimizer(v1.train.Optimizer):
        def __init__(self, optimizer, name=None, use_locking=False, sparse_as_dense=False):
            if name is None:
                name = f"Distributed{type(optimizer).__name__}"
            super().__init__(name=name, use_locking=use_locking)
            self._optimizer = optimizer
            self._sparse_as_dense = sparse_as_dense

        def compute_gradients(self, *args, **kwargs):
            gradients = self._optimizer.compute_gradients(*args, **kwargs)
            reduced = []
            for grad, var in gradients:
                if self._sparse_as_dense and isinstance(grad, tf.IndexedSlices):
                    grad = tf.convert_to_tensor(grad)
                reduced.append((grad if grad is None else tf.identity(grad), var))
            return reduced

        def apply_gradients(self, *args, **kwargs):
            return self._optimizer.apply_gradients(*args, **kwargs)

        def get_slot(self, *args, **kwargs):
            return self._optimizer.get_slot(*args, **kwargs)

        def get_slot_names(self, *args, **kwargs):
            return self._optimizer.get_slot_names(*args, **kwargs)

        def variables(self, *args, **kwargs):
            return self._optimizer.variables(*args, **kwargs)

    def broadcast_global_variables(root_rank):
        return tf.group(*[var.assign(tf.identity(var)) for var in v1.global_variables()])

    class BroadcastGlobalVariablesHook(v1.train.SessionRunHook):
        def __init__(self, root_rank, device=""):
            super().__init__()
            self.root_rank = root_rank
            self.bcast_op = None
            self.device = device

        def begin(self):
            if not self.bcast_op or self.bcast_op.graph != v1.get_default_graph():
                with tf.device(self.device):
                    self.bcast_op = broadcast_global_variables(self.root_rank)

        def after_create_session(self, session, coord):
            session.run(self.bcast_op)

    class hvd:  # (the module's name in the samples)
        init = staticmethod(lambda: None)
        size = staticmethod(lambda: 1)
        rank = staticmethod(lambda: 0)
        local_rank = staticmethod(lambda: 0)
        DistributedOptimizer = _DistributedOptimizer

    hvd.BroadcastGlobalVariablesHook = BroadcastGlobalVariablesHook
    return hvd


def _digits(n, seed):
    r = np.random.RandomState(seed)
    labels = r.randint(0, 3, n).astype(np.int32)
    images = r.rand(n, 8, 8).astype(np.float32) * 0.5
    images[np.arange(n), labels * 2, :] += 0.5
    return images.reshape(n, 64), labels


def cnn_model_fn_maker(tf, hvd, made):
    v1 = tf.compat.v1
    init = v1.glorot_uniform_initializer

    def cnn_model_fn(features, labels, mode):
        input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])
        conv1 = v1.layers.conv2d(
            inputs=input_layer,
            filters=4,
            kernel_size=[3, 3],
            padding="same",
            activation=tf.nn.relu,
            kernel_initializer=init(seed=1),
        )
        pool1 = v1.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
        pool1_flat = tf.reshape(pool1, [-1, 4 * 4 * 4])
        dense = v1.layers.dense(
            inputs=pool1_flat, units=8, activation=tf.nn.relu, kernel_initializer=init(seed=2)
        )
        dropout = v1.layers.dropout(
            inputs=dense, rate=0.0, training=mode == tf.estimator.ModeKeys.TRAIN
        )
        logits = v1.layers.dense(inputs=dropout, units=3, kernel_initializer=init(seed=3))
        predictions = {
            "classes": tf.argmax(input=logits, axis=1),
            "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
        }
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
        onehot_labels = tf.one_hot(indices=tf.cast(labels, tf.int32), depth=3)
        loss = v1.losses.softmax_cross_entropy(onehot_labels=onehot_labels, logits=logits)
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = v1.train.MomentumOptimizer(learning_rate=0.1 * hvd.size(), momentum=0.9)
            optimizer = hvd.DistributedOptimizer(optimizer)
            train_op = optimizer.minimize(loss=loss, global_step=v1.train.get_global_step())
            made["optimizer"] = [
                optimizer.get_name(),
                optimizer.get_slot_names(),
                optimizer.get_slot(v1.trainable_variables()[0], "momentum").op.name,
                sorted(v.op.name for v in optimizer.variables()),
            ]
            return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
        eval_metric_ops = {
            "accuracy": v1.metrics.accuracy(labels=labels, predictions=predictions["classes"])
        }
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)

    return cnn_model_fn


class _LossesHook:
    """A SessionRunHook reading the loss at each step (what the loss lines print)."""

    @staticmethod
    def make(tf, losses):
        v1 = tf.compat.v1

        class LossesHook(v1.train.SessionRunHook):
            def before_run(self, run_context):
                return v1.train.SessionRunArgs(v1.get_collection(v1.GraphKeys.LOSSES))

            def after_run(self, run_context, run_values):
                losses.append(float(run_values.results[0]))

        return LossesHook()


@program
def horovod_mnist_estimator(tf, workdir):
    v1 = tf.compat.v1
    hvd = horovod(tf)
    hvd.init()
    train_data, train_labels = _digits(40, 0)
    eval_data, eval_labels = _digits(12, 1)
    config = v1.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())
    model_dir = os.path.join(workdir, "mnist_convnet_model") if hvd.rank() == 0 else None
    made = {}
    mnist_classifier = tf.estimator.Estimator(
        model_fn=cnn_model_fn_maker(tf, hvd, made),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(session_config=config, log_step_count_steps=2),
    )
    tensors_to_log = {"probabilities": "softmax_tensor"}
    logging_hook = v1.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=500)
    bcast_hook = hvd.BroadcastGlobalVariablesHook(0)
    train_input_fn = v1.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=10, num_epochs=None, shuffle=False
    )
    losses = []
    with _info_lines() as seen:
        mnist_classifier.train(
            input_fn=train_input_fn,
            steps=6 // hvd.size(),
            hooks=[logging_hook, bcast_hook, _LossesHook.make(tf, losses)],
        )
        eval_input_fn = v1.estimator.inputs.numpy_input_fn(
            x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
        )
        eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    predictions = list(
        mnist_classifier.predict(
            v1.estimator.inputs.numpy_input_fn(x={"x": eval_data[:4]}, shuffle=False)
        )
    )
    names, values = _checkpoint(tf, model_dir)
    return {
        "exact": {
            "optimizer": made["optimizer"],
            "checkpoint": names,
            "variable_names": mnist_classifier.get_variable_names(),
            "eval_keys": sorted(eval_results),
            "classes": [int(p["classes"]) for p in predictions],
            "lines": _lines(seen, workdir, (*LOG_MARKERS, "probabilities = ")),
            "model_dir": [n for n in listing(model_dir) if "events" not in n],
            "session_config": str(mnist_classifier.config.session_config),
        },
        "close": {
            "losses": losses,
            "eval": {k: float(v) for k, v in eval_results.items()},
            "probabilities": [p["probabilities"].tolist() for p in predictions],
            "weights": values,
        },
    }


@program
def horovod_sparse_as_dense(tf, workdir):
    v1 = tf.compat.v1
    hvd = horovod(tf)
    made = {}

    def model_fn(features, labels, mode, params):
        table = v1.get_variable(
            "embeddings", [10, 3], initializer=v1.random_uniform_initializer(-1, 1, seed=4)
        )
        embedded = tf.reduce_mean(tf.nn.embedding_lookup(table, features["ids"]), axis=1)
        logits = v1.layers.dense(embedded, 1, kernel_initializer=v1.ones_initializer())
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            opt = hvd.DistributedOptimizer(
                v1.train.AdamOptimizer(params["lr"] * hvd.size()), sparse_as_dense=True
            )
            train_op = opt.minimize(loss, global_step=v1.train.get_or_create_global_step())
            made["slots"] = sorted(opt.get_slot(table, s).op.name for s in opt.get_slot_names())
        metrics = {"auc": v1.metrics.auc(labels, tf.sigmoid(logits))}
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
        )

    r = np.random.RandomState(5)
    ids = r.randint(0, 10, (16, 3)).astype(np.int64)
    labels = (ids[:, :1] % 2).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"ids": ids}, labels)).batch(4)

    est = tf.estimator.Estimator(model_fn, os.path.join(workdir, "model"), params={"lr": 0.1})
    bcast = hvd.BroadcastGlobalVariablesHook(0)
    for _ in range(2):
        est.train(input_fn, steps=3, hooks=[bcast])
    result = est.evaluate(input_fn, hooks=[bcast])
    return {
        "exact": {"slots": made["slots"], "names": est.get_variable_names()},
        "close": {
            "eval": {k: float(v) for k, v in result.items()},
            "embeddings": est.get_variable_value("embeddings").ravel().tolist(),
        },
    }


def aggregating_optimizer(tf):
    """Horovod's DistributedOptimizer with `backward_passes_per_step` (its
    LocalGradientAggregationHelper, on one process): gradients summed into local variables,
    applied in a `tf.cond` every n-th pass, the global step advanced on the others."""
    v1 = tf.compat.v1

    class AggregatingOptimizer(v1.train.Optimizer):
        def __init__(self, optimizer, backward_passes_per_step):
            super().__init__(name="Distributed" + type(optimizer).__name__, use_locking=False)
            self._optimizer, self._passes = optimizer, backward_passes_per_step

        def compute_gradients(self, *args, **kwargs):
            pairs = self._optimizer.compute_gradients(*args, **kwargs)
            with v1.variable_scope("aggregation_variables_0", reuse=v1.AUTO_REUSE):
                self.counter = v1.get_variable(
                    "aggregation_counter",
                    shape=(),
                    dtype=tf.int32,
                    initializer=v1.zeros_initializer(),
                    trainable=False,
                    collections=[v1.GraphKeys.LOCAL_VARIABLES],
                )
                sums = [
                    v1.get_variable(
                        str(i),
                        initializer=tf.zeros(g.shape, g.dtype),
                        trainable=False,
                        collections=[v1.GraphKeys.LOCAL_VARIABLES, "aggregating_collection"],
                    )
                    for i, (g, _) in enumerate(pairs)
                ]
            cleared = tf.cond(
                tf.equal(self.counter, 0),
                lambda: tf.group(*[s.assign(s.initial_value) for s in sums]),
                tf.no_op,
            )
            with tf.control_dependencies([cleared]):
                added = tf.group(*[s.assign_add(g) for s, (g, _) in zip(sums, pairs, strict=True)])
            with tf.control_dependencies([added]):
                counted = self.counter.assign_add(1)
            with tf.control_dependencies([counted]):
                grads = tf.cond(
                    tf.equal(self.counter, self._passes),
                    lambda: self._averaged(sums),
                    lambda: [tf.identity(g) for g, _ in pairs],
                )
            return list(zip(grads, [v for _, v in pairs], strict=True))

        def _averaged(self, sums):
            read = [s.read_value() for s in sums]
            with tf.control_dependencies(read):
                reset = self.counter.assign(0, use_locking=True)
            with tf.control_dependencies([reset]):
                return [tf.divide(r, self._passes) for r in read]

        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            with tf.control_dependencies([g for g, _ in grads_and_vars]):
                applied = tf.cond(
                    tf.equal(self.counter, 0),
                    lambda: self._optimizer.apply_gradients(grads_and_vars, global_step, name),
                    tf.no_op,
                )
            with tf.control_dependencies([applied]):
                return tf.cond(
                    tf.equal(self.counter, 0),
                    tf.no_op,
                    lambda: global_step.assign_add(1, use_locking=True, read_value=False),
                )

    return AggregatingOptimizer


@program
def horovod_backward_passes(tf, workdir):
    return _backward_passes(tf)


@program
def horovod_backward_passes_tf1_control_flow(tf, workdir):
    """The same under TF1 control flow (as TF 1.x ran it; `disable_v2_behavior()` too)."""
    tf.compat.v1.disable_control_flow_v2()
    try:
        return _backward_passes(tf)
    finally:
        tf.compat.v1.enable_control_flow_v2()


def _backward_passes(tf):
    v1 = tf.compat.v1
    hvd = horovod(tf)
    AggregatingOptimizer = aggregating_optimizer(tf)
    weights = []

    def model_fn(features, labels, mode):
        hidden = v1.layers.dense(
            features["x"], 3, tf.nn.relu, kernel_initializer=v1.constant_initializer(0.3)
        )
        logits = v1.layers.dense(hidden, 1, kernel_initializer=v1.constant_initializer(-0.2))
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
        loss = v1.losses.mean_squared_error(labels, logits)
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            opt = AggregatingOptimizer(v1.train.AdamOptimizer(0.05), backward_passes_per_step=2)
            train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
            weights.append(sorted(v.op.name for v in v1.local_variables()))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(9).rand(12, 2).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) - 0.5).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat()

    with _info_lines() as seen:
        est = tf.estimator.Estimator(model_fn, model_dir=None)  # (what ranks other than 0 pass)
        bcast = hvd.BroadcastGlobalVariablesHook(0)
        losses = []
        est.train(input_fn, steps=5, hooks=[bcast, _LossesHook.make(tf, losses)])
        result = est.evaluate(input_fn, steps=2, hooks=[bcast])
        predicted = est.predict(input_fn, hooks=[bcast])
        predictions = [next(predicted)["logits"].tolist() for _ in range(3)]
        predicted.close()
    temporary = [line for line in seen if "temporary folder" in line]
    return {
        "exact": {
            "local_variables": weights,
            "names": est.get_variable_names(),
            "temporary": [_normalized(line, est.model_dir) for line in temporary],
            "global_step": int(est.get_variable_value("global_step")),
        },
        "close": {
            "losses": losses,
            "eval": {k: float(v) for k, v in result.items()},
            "predictions": predictions,
        },
    }


# ------------------------------------------------------------------ TensorFlowOnSpark
def _tf_config(task_type, index):
    cluster = {
        "chief": ["localhost:2222"],
        "worker": ["localhost:2223", "localhost:2224"],
        "ps": ["localhost:2225"],
    }
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


def _config_seen(tf, model_dir):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=2)
    return {
        "task_type": config.task_type,
        "task_id": config.task_id,
        "is_chief": config.is_chief,
        "num_worker_replicas": config.num_worker_replicas,
        "num_ps_replicas": config.num_ps_replicas,
        "master": config.master,
        "evaluation_master": config.evaluation_master,
        "cluster_spec": config.cluster_spec.as_dict(),
        "global_id_in_cluster": config.global_id_in_cluster,
    }


@program
def tfos_roles(tf, workdir):
    model_dir = os.path.join(workdir, "mnist_model")
    roles = {}
    saved = os.environ.pop("TF_CONFIG", None)
    try:
        for task_type, index in [("chief", 0), ("worker", 1), ("ps", 0), ("evaluator", 0)]:
            os.environ["TF_CONFIG"] = _tf_config(task_type, index)
            roles[f"{task_type}:{index}"] = _config_seen(tf, model_dir)
        del os.environ["TF_CONFIG"]
        made = {}
        hvd = horovod(tf)
        train_data, train_labels = _digits(20, 2)

        def train_input_fn():
            ds = tf.data.Dataset.from_tensor_slices(({"x": train_data}, train_labels))
            return ds.batch(10).repeat()

        def eval_input_fn():
            ds = tf.data.Dataset.from_tensor_slices(({"x": train_data}, train_labels))
            return ds.batch(10)

        def make(config):
            return tf.estimator.Estimator(cnn_model_fn_maker(tf, hvd, made), config=config)

        chief = make(tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=2))
        chief.train(train_input_fn, max_steps=4)
        os.environ["TF_CONFIG"] = _tf_config("evaluator", 0)
        evaluator = make(tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=2))
        train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=4)
        eval_spec = tf.estimator.EvalSpec(
            input_fn=eval_input_fn, steps=None, start_delay_secs=0, throttle_secs=0
        )
        with _info_lines() as seen:
            returned = tf.estimator.train_and_evaluate(evaluator, train_spec, eval_spec)
    finally:
        os.environ.pop("TF_CONFIG", None)
        if saved is not None:
            os.environ["TF_CONFIG"] = saved
    return {
        "exact": {
            "roles": roles,
            "returned": None if returned is None else [type(r).__name__ for r in returned],
            "lines": _lines(seen, workdir),
            "eval_dirs": [n for n in sorted(os.listdir(model_dir)) if "events" not in n],
        },
        "close": {},
    }


# ------------------------------------------------------------------ between-graph replication
def _device_setters(tf):
    """The replica_device_setter calls between-graph replication code makes."""
    v1 = tf.compat.v1
    cluster = tf.train.ClusterSpec({"ps": ["localhost:2225"], "worker": ["localhost:2223"]})
    return {
        "ps_tasks": lambda: v1.train.replica_device_setter(ps_tasks=1),
        "cluster": lambda: v1.train.replica_device_setter(cluster=cluster),
        "worker_device": lambda: v1.train.replica_device_setter(
            worker_device="/job:worker/task:0", cluster=cluster
        ),
        "empty_cluster": lambda: v1.train.replica_device_setter(cluster=None),
    }


def _replicated_run(tf, model_dir, setter, devices):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        with v1.device(setter()):
            hidden = v1.layers.dense(
                features["x"], 4, tf.nn.tanh, kernel_initializer=v1.ones_initializer()
            )
            logits = v1.layers.dense(hidden, 1, kernel_initializer=v1.ones_initializer())
            global_step = v1.train.get_or_create_global_step()
            devices[mode] = sorted([v.op.name, v.device] for v in v1.global_variables())
            if mode == tf.estimator.ModeKeys.PREDICT:
                return tf.estimator.EstimatorSpec(mode, predictions={"y": logits})
            loss = v1.losses.mean_squared_error(labels, logits)
            train_op = v1.train.AdagradOptimizer(0.1).minimize(loss, global_step=global_step)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(6).rand(12, 2).astype(np.float32)
    y = (x[:, :1] - x[:, 1:]).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat(2)

    est = tf.estimator.Estimator(model_fn, model_dir)
    est.train(input_fn)
    result = est.evaluate(input_fn, steps=2)
    predictions = [p["y"].tolist() for p in est.predict(input_fn)][:4]
    return est.get_variable_names(), {k: float(v) for k, v in result.items()}, predictions


@program
def replica_device_setter_layers(tf, workdir):
    exact, close = {}, {}
    for name, setter in _device_setters(tf).items():
        devices = {}
        try:
            names, result, predictions = _replicated_run(
                tf, os.path.join(workdir, name), setter, devices
            )
        except Exception as error:  # what the user sees is the point
            exact[name] = {"error": [type(error).__name__, str(error).splitlines()[0]]}
            continue
        exact[name] = {"devices": devices, "names": names}
        close[name] = {"eval": result, "predictions": predictions}
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ moving averages
def _regression_data():
    x = np.random.RandomState(8).rand(16, 3).astype(np.float32)
    y = (x @ np.array([[0.5], [-1.0], [2.0]], np.float32)).astype(np.float32)
    return x, y


def _linear(tf, features):
    v1 = tf.compat.v1
    with v1.variable_scope("linear"):
        w = v1.get_variable("w", [3, 1], initializer=v1.zeros_initializer())
        b = v1.get_variable("b", [1], initializer=v1.zeros_initializer())
    return tf.matmul(features["x"], w) + b


def _averaged_run(tf, model_fn, workdir):
    """Trains, evaluates, predicts and exports a moving-average model_fn: what each read."""
    x, y = _regression_data()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)

    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(model_fn, model_dir)
    est.train(lambda: input_fn().repeat(2))
    result = est.evaluate(input_fn)
    predictions = [p["y"].tolist() for p in est.predict(input_fn)][:4]
    names, values = _checkpoint(tf, model_dir)
    exported, served = _exported(tf, est, workdir, x)
    return {
        "exact": {"checkpoint": names, "names": est.get_variable_names(), "exported": exported},
        "close": {
            "eval": {k: float(v) for k, v in result.items()},
            "predictions": predictions,
            "checkpoint": values,
            "served": served,
        },
    }


@program
def ema_scaffold_saver(tf, workdir):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        prediction = _linear(tf, features)
        ema = v1.train.ExponentialMovingAverage(0.5, num_updates=v1.train.get_global_step())
        if mode == tf.estimator.ModeKeys.TRAIN:
            loss = v1.losses.mean_squared_error(labels, prediction)
            opt = v1.train.GradientDescentOptimizer(0.2)
            step = opt.minimize(loss, global_step=v1.train.get_global_step())
            with tf.control_dependencies([step]):
                train_op = ema.apply(v1.trainable_variables())
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        scaffold = v1.train.Scaffold(saver=v1.train.Saver(ema.variables_to_restore()))
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(
                mode, predictions={"y": prediction}, scaffold=scaffold
            )
        loss = v1.losses.mean_squared_error(labels, prediction)
        return tf.estimator.EstimatorSpec(mode, loss=loss, scaffold=scaffold)

    return _averaged_run(tf, model_fn, workdir)


def _exported(tf, est, workdir, x):
    """The SavedModel's variables ({name: shape}) and what its serving signature answers."""
    v1 = tf.compat.v1

    def receiver():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    export_dir = est.export_saved_model(os.path.join(workdir, "export"), receiver)
    if isinstance(export_dir, bytes):
        export_dir = export_dir.decode()
    variables = os.path.join(export_dir, "variables", "variables")
    names = {name: list(shape) for name, shape in tf.train.list_variables(variables)}
    loaded = tf.saved_model.load(export_dir)
    served = loaded.signatures["serving_default"](x=tf.constant(x[:4]))
    return names, {k: v.numpy().tolist() for k, v in served.items()}


def moving_average_optimizer(tf):
    """tensorflow/models' (contrib.opt's) MovingAverageOptimizer, as research code copied it."""
    v1 = tf.compat.v1

    class MovingAverageOptimizer(v1.train.Optimizer):
        def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
            self._optimizer = opt
            self._ema = v1.train.ExponentialMovingAverage(average_decay, num_updates=num_updates)
            self._swapped_variable_name_map = None
            self._sequential_update = sequential_update

        def compute_gradients(self, *args, **kwargs):
            return self._optimizer.compute_gradients(*args, **kwargs)

        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            train_op = self._optimizer.apply_gradients(
                grads_and_vars, global_step=global_step, name=name
            )
            var_list = [x[1] for x in grads_and_vars if x[0] is not None]
            self._swapped_variable_name_map = {}
            if self._sequential_update:
                with tf.control_dependencies([train_op]):
                    ma_op = self._ema.apply(var_list)
            else:
                ma_op = self._ema.apply(var_list)
            for v in var_list:
                v_avg = self._ema.average(v)
                self._swapped_variable_name_map[v.op.name] = v_avg.op.name
                self._swapped_variable_name_map[v_avg.op.name] = v.op.name
            return tf.group(train_op, ma_op, name="train_with_avg")

        def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
            if self._swapped_variable_name_map is None:
                raise RuntimeError(
                    "Must call apply_gradients or minimize before creating the swapping_saver"
                )
            if var_list is None:
                var_list = v1.global_variables()
            if not isinstance(var_list, dict):
                var_list = {v.op.name: v for v in var_list}
            swapped_var_list = {
                k: var_list[self._swapped_variable_name_map.get(k, k)] for k in var_list
            }
            return v1.train.Saver(swapped_var_list, name=name, **kwargs)

    return MovingAverageOptimizer


@program
def moving_average_swapping_saver(tf, workdir):
    v1 = tf.compat.v1
    MovingAverageOptimizer = moving_average_optimizer(tf)

    def model_fn(features, labels, mode):
        prediction = _linear(tf, features)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
        loss = v1.losses.mean_squared_error(labels, prediction)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss)
        opt = MovingAverageOptimizer(v1.train.GradientDescentOptimizer(0.2), average_decay=0.5)
        train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        scaffold = v1.train.Scaffold(saver=opt.swapping_saver())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)

    return _averaged_run(tf, model_fn, workdir)


# ------------------------------------------------------------------ wrapped canned optimizers
def _canned_input_fn(tf):
    r = np.random.RandomState(10)
    x = r.rand(16, 2).astype(np.float32)
    y = (x[:, 0] > x[:, 1]).astype(np.int64)
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8).repeat()


@program
def horovod_canned_optimizers(tf, workdir):
    v1 = tf.compat.v1
    hvd = horovod(tf)
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    input_fn = _canned_input_fn(tf)
    config = tf.estimator.RunConfig(tf_random_seed=1)
    adagrad, ftrl = v1.train.AdagradOptimizer, v1.train.FtrlOptimizer
    made = {  # name: (class, its hidden units, the TF1 optimizer, given as a callable)
        "v1_dnn": (v1.estimator.DNNClassifier, [[3]], adagrad, False),
        "v1_linear": (v1.estimator.LinearClassifier, [], ftrl, False),
        "v2_dnn": (tf.estimator.DNNClassifier, [[3]], adagrad, False),
        "v2_linear_callable": (tf.estimator.LinearClassifier, [], ftrl, True),
    }

    def make(name, model_dir):
        cls, hidden, optimizer, as_callable = made[name]
        wrapped = lambda: hvd.DistributedOptimizer(optimizer(0.1))  # noqa: E731
        given = wrapped if as_callable else wrapped()
        return cls(*hidden, columns, model_dir=model_dir, config=config, optimizer=given)

    exact, close = {}, {}
    for name in made:
        try:
            est = make(name, os.path.join(workdir, name))
            est.train(input_fn, steps=3)
            result = est.evaluate(input_fn, steps=1)
        except Exception as error:  # what the user sees is the point
            message = re.sub(r" at 0x[0-9a-f]+", "", str(error).splitlines()[0])
            exact[name] = {"error": [type(error).__name__, message]}
            continue
        exact[name] = {"names": est.get_variable_names(), "keys": sorted(result)}
        close[name] = {k: float(v) for k, v in result.items()}
    return {"exact": exact, "close": close}


@program
def ema_restore_mistakes(tf, workdir):
    """EMA switched on for evaluation over a checkpoint trained without it, and
    init_from_checkpoint of the averages into a fresh model (fine-tuning from EMA)."""
    v1 = tf.compat.v1
    model_dir = os.path.join(workdir, "plain")

    def plain_fn(features, labels, mode):
        loss = v1.losses.mean_squared_error(labels, _linear(tf, features))
        opt = v1.train.GradientDescentOptimizer(0.2)
        train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def ema_eval_fn(features, labels, mode):
        loss = v1.losses.mean_squared_error(labels, _linear(tf, features))
        ema = v1.train.ExponentialMovingAverage(0.5)
        scaffold = v1.train.Scaffold(saver=v1.train.Saver(ema.variables_to_restore()))
        return tf.estimator.EstimatorSpec(mode, loss=loss, scaffold=scaffold)

    x, y = _regression_data()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)

    tf.estimator.Estimator(plain_fn, model_dir).train(input_fn)
    evaluating = tf.estimator.Estimator(ema_eval_fn, model_dir)
    try:
        evaluating.evaluate(input_fn)
        error = None
    except Exception as raised:  # what the user sees is the point
        error = [type(raised).__name__, str(raised).splitlines()[0]]
    trained = _averaged_run(tf, _ema_train_fn(tf), os.path.join(workdir, "averaged"))
    checkpoint = v1.train.latest_checkpoint(os.path.join(workdir, "averaged", "model"))

    def tuned_fn(features, labels, mode):
        prediction = _linear(tf, features)
        v1.train.init_from_checkpoint(
            checkpoint,
            {
                "linear/w/ExponentialMovingAverage": "linear/w",
                "linear/b/ExponentialMovingAverage": "linear/b",
            },
        )
        return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})

    tuned = tf.estimator.Estimator(tuned_fn, os.path.join(workdir, "tuned"))
    tuned_predictions = [p["y"].tolist() for p in tuned.predict(input_fn)][:4]
    return {
        "exact": {"error": error},
        "close": {"tuned": tuned_predictions, "trained": trained["close"]["predictions"]},
    }


def _ema_train_fn(tf):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        prediction = _linear(tf, features)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
        loss = v1.losses.mean_squared_error(labels, prediction)
        ema = v1.train.ExponentialMovingAverage(0.5, num_updates=v1.train.get_global_step())
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            step = v1.train.GradientDescentOptimizer(0.2).minimize(
                loss, global_step=v1.train.get_global_step()
            )
            with tf.control_dependencies([step]):
                train_op = ema.apply(v1.trainable_variables())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@program
def horovod_checkpoints_on_rank_0_only(tf, workdir):
    """Horovod's advice: `save_checkpoints_steps` on rank 0 only (None on the others, and
    no `save_checkpoints_secs`): what such a rank's model_dir holds and what evaluate,
    predict and get_variable_names then do."""
    v1 = tf.compat.v1
    hvd = horovod(tf)
    rank = 1  # (the code as the other ranks run it)

    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [2, 1], initializer=v1.zeros_initializer())
        prediction = tf.matmul(features["x"], w)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
        loss = v1.losses.mean_squared_error(labels, prediction)
        opt = hvd.DistributedOptimizer(v1.train.GradientDescentOptimizer(0.1))
        train_op = opt.minimize(loss, v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(11).rand(8, 2).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat()

    model_dir = os.path.join(workdir, "model")
    config = tf.estimator.RunConfig(
        save_checkpoints_steps=2 if rank == 0 else None, save_checkpoints_secs=None
    )
    est = tf.estimator.Estimator(model_fn, model_dir, config=config)
    est.train(input_fn, steps=3)
    files = [n for n in listing(model_dir) if "events" not in n]
    result = est.evaluate(input_fn, steps=1)
    predictions = [p["y"].tolist() for p in est.predict(lambda: input_fn().take(1))]
    try:
        names = est.get_variable_names()
    except Exception as error:  # what the user sees is the point
        message = str(error).splitlines()[0].replace(model_dir, "<model_dir>")
        names = [type(error).__name__, message]
    return {
        "exact": {"files": files, "names": names},
        "close": {"eval": {k: float(v) for k, v in result.items()}, "predictions": predictions},
    }
