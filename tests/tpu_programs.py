"""A TPUEstimator program in BERT's shape, run with `use_tpu=False` on either side.

`program(est, workdir)` takes the estimator module (`tf.compat.v1.estimator` under
TF 2.15, this kit's `components.estimator` under TF 2.21, both with `.tpu`) and
a fresh folder, and returns what a user would look at, as JSON-able values.
`tests/tf215/record_tpu_estimator.py` runs it under tf.estimator 2.15 once, into
`tests/data/tf215/tpu_estimator.json`; `tests/test_estimator_tpu.py` runs it here
and compares.

Every variable starts from a checkpoint the program writes from fixed numbers
(`scaffold_fn` with `init_from_checkpoint`, as BERT starts from its pre-trained
weights), so training is deterministic and the same under both TensorFlows.
"""

import os

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
SEED = 11
NUM_FEATURES = 4
HIDDEN = 8
BATCH_SIZES = {"train": 8, "eval": 16, "predict": 4}
ITERATIONS_PER_LOOP = 4


def _data():
    rng = np.random.RandomState(3)
    x = rng.normal(size=(64, NUM_FEATURES)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(np.int32)
    return x, y


def _initial_values():
    rng = np.random.RandomState(5)
    return {
        "encoder/dense/kernel": rng.normal(scale=0.5, size=(NUM_FEATURES, HIDDEN)),
        "encoder/dense/bias": np.zeros(HIDDEN),
        "classifier/output_weights": rng.normal(scale=0.5, size=(2, HIDDEN)),
        "classifier/output_bias": np.zeros(2),
    }


def write_init_checkpoint(folder):
    """A name-based checkpoint of fixed values: the 'pre-trained' model."""
    graph = tf.Graph()
    with graph.as_default():
        variables = [
            v1.get_variable(name, initializer=value.astype(np.float32))
            for name, value in _initial_values().items()
        ]
        saver = v1.train.Saver(variables)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            return saver.save(session, os.path.join(folder, "pretrained.ckpt"))


class StepRecorder(v1.train.SessionRunHook):
    """A training hook: the global step and loss each session run returned."""

    def __init__(self, loss, seen):
        self._loss, self._seen = loss, seen

    def before_run(self, run_context):
        return v1.train.SessionRunArgs([v1.train.get_global_step(), self._loss])

    def after_run(self, run_context, run_values):
        step, loss = run_values.results
        self._seen.append((int(step), float(loss)))


def make_model_fn(est, init_checkpoint, summary_dir, seen):
    """BERT's run_classifier shape: encoder, output layer, per-example loss."""

    def model_fn(features, labels, mode, params):
        seen["params"].append(
            {"mode": mode, "batch_size": params.get("batch_size"), "use_tpu": params["use_tpu"]}
        )
        with v1.variable_scope("encoder"):
            hidden = v1.layers.dense(features["x"], HIDDEN, activation=tf.tanh, name="dense")
        with v1.variable_scope("classifier"):
            weights = v1.get_variable("output_weights", [2, HIDDEN])
            bias = v1.get_variable("output_bias", [2], initializer=v1.zeros_initializer())
            logits = tf.nn.bias_add(tf.matmul(hidden, weights, transpose_b=True), bias)
            probabilities = tf.nn.softmax(logits, axis=-1)

        def scaffold_fn():
            # As BERT's: the checkpoint's variables by name (the optimizer's are new).
            v1.train.init_from_checkpoint(init_checkpoint, {k: k for k in _initial_values()})
            return v1.train.Scaffold()

        if mode == est.ModeKeys.PREDICT:
            return est.tpu.TPUEstimatorSpec(
                mode,
                predictions={"probabilities": probabilities, "logits": logits},
                scaffold_fn=scaffold_fn,
            )
        one_hot = tf.one_hot(labels, depth=2, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot * tf.nn.log_softmax(logits), axis=-1)
        loss = tf.reduce_mean(per_example_loss)
        if mode == est.ModeKeys.EVAL:
            return est.tpu.TPUEstimatorSpec(
                mode,
                loss=loss,
                eval_metrics=_eval_metrics(params, per_example_loss, labels, logits),
                scaffold_fn=scaffold_fn,
            )
        global_step = v1.train.get_or_create_global_step()
        train_op = v1.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)
        return est.tpu.TPUEstimatorSpec(
            mode,
            loss=loss,
            train_op=train_op,
            scaffold_fn=scaffold_fn,
            host_call=(
                _host_call_fn(summary_dir),
                {"step": tf.reshape(global_step, [1]), "loss": tf.reshape(loss, [1])},
            ),
            training_hooks=[StepRecorder(loss, seen["steps"])],
        )

    return model_fn


def _metric_fn(per_example_loss, label_ids, logits):
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {
        "eval_accuracy": v1.metrics.accuracy(label_ids, predictions),
        "eval_loss": v1.metrics.mean(per_example_loss),
    }


def _eval_metrics(params, per_example_loss, labels, logits):
    tensors = [per_example_loss, labels, logits]
    if params.get("metric_tensors") == "dict":
        return (
            _metric_fn,
            {"per_example_loss": per_example_loss, "label_ids": labels, "logits": logits},
        )
    return (_metric_fn, tensors)


def _host_call_fn(summary_dir):
    """tf.summary (v2) in a graph, as TPU models wrote their training summaries."""

    def host_call(step, loss):
        writer = tf.summary.create_file_writer(summary_dir)
        with writer.as_default(), tf.summary.record_if(True):
            tf.summary.scalar("host_loss", loss[0], step=step[0])
            return v1.summary.all_v2_summary_ops()

    return host_call


def _input_fn_builder(x, y, mode, seen):
    def input_fn(params):
        seen["input_params"].append({"mode": mode, "batch_size": params.get("batch_size")})
        if mode == "predict":
            dataset = tf.data.Dataset.from_tensor_slices({"x": x[:12]})
        else:
            dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if mode == "train":
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    return input_fn


def _serving_input_fn(est):
    def receiver():
        x = v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
        return est.export.ServingInputReceiver({"x": x}, {"x": x})

    return receiver


def _estimator(est, model_dir, model_fn, params=None):
    config = est.tpu.RunConfig(
        model_dir=model_dir,
        tf_random_seed=SEED,
        save_checkpoints_steps=10,
        log_step_count_steps=8,
        tpu_config=est.tpu.TPUConfig(iterations_per_loop=ITERATIONS_PER_LOOP, num_shards=8),
    )
    return est.tpu.TPUEstimator(
        model_fn=model_fn,
        config=config,
        params=params,
        use_tpu=False,
        train_batch_size=BATCH_SIZES["train"],
        eval_batch_size=BATCH_SIZES["eval"],
        predict_batch_size=BATCH_SIZES["predict"],
    )


def _summaries(folder):
    """{tag: sorted steps} of the events files directly in `folder`."""
    found = {}
    for path in tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*")):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                found.setdefault(value.tag, set()).add(int(event.step))
    return {tag: sorted(steps) for tag, steps in sorted(found.items())}


def _export_layout(export_dir):
    """Each MetaGraph's tags and its signatures' names, inputs and outputs."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    return [
        {
            "tags": sorted(meta.meta_info_def.tags),
            "signatures": {
                key: {
                    "inputs": sorted(signature.inputs),
                    "outputs": sorted(signature.outputs),
                    "method_name": signature.method_name,
                }
                for key, signature in sorted(meta.signature_def.items())
            },
        }
        for meta in saved.meta_graphs
    ]


def _served(export_dir, x):
    """The export loaded with tags=["serve"], as TF Serving on a CPU loads it."""
    loaded = tf.saved_model.load(export_dir, tags=["serve"])
    out = loaded.signatures["serving_default"](x=tf.constant(x))
    return {key: np.asarray(value).tolist() for key, value in sorted(out.items())}


def bert_shaped(est, workdir):
    x, y = _data()
    seen = {"params": [], "input_params": [], "steps": []}
    init_checkpoint = write_init_checkpoint(workdir)
    model_dir = os.path.join(workdir, "model")
    summary_dir = os.path.join(workdir, "host_call")
    model_fn = make_model_fn(est, init_checkpoint, summary_dir, seen)
    estimator = _estimator(est, model_dir, model_fn)
    estimator.train(_input_fn_builder(x, y, "train", seen), max_steps=20)
    metrics = estimator.evaluate(_input_fn_builder(x, y, "eval", seen), steps=3)
    by_dict = _estimator(est, model_dir, model_fn, params={"metric_tensors": "dict"})
    metrics_by_dict = by_dict.evaluate(_input_fn_builder(x, y, "eval", seen), steps=3)
    predictions = list(estimator.predict(_input_fn_builder(x, y, "predict", seen)))
    params_before_export = len(seen["params"])
    export_dir = estimator.export_saved_model(
        os.path.join(workdir, "export"), _serving_input_fn(est)
    )
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    return {
        "steps": seen["steps"],
        "params": seen["params"][:params_before_export],
        "export_params": seen["params"][params_before_export:],
        "input_params": seen["input_params"],
        "eval": {k: float(v) for k, v in metrics.items()},
        "eval_by_dict": {k: float(v) for k, v in metrics_by_dict.items()},
        "prediction_keys": sorted(predictions[0]),
        "probabilities": [p["probabilities"].tolist() for p in predictions],
        "variables": sorted(name for name, _ in tf.train.list_variables(model_dir)),
        "checkpoints": sorted(
            os.path.basename(p)[: -len(".index")]
            for p in tf.io.gfile.glob(os.path.join(model_dir, "*.index"))
        ),
        "model_dir_summaries": sorted(_summaries(model_dir)),
        "host_call_summaries": _summaries(summary_dir),
        "export": _export_layout(export_dir),
        "served": _served(export_dir, x[:3]),
    }


PROGRAMS = {"bert_shaped": bert_shaped}
