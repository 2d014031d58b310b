"""One side of `estimator_vs_tf215.py`: train, evaluate, export and serve a taxi model.

    python bench/_estimator_worker.py --impl {ours,tf215} --model {wide_deep,tf1,tf1_hooks}
        --data DIR
        [--train-steps N] ...

Needs only the standard library and TensorFlow, so that it runs unchanged
under TF 2.21 with this project's estimator (`--impl ours`, repo root on
PYTHONPATH) and under TF 2.15 with `tf.estimator` (`--impl tf215`).  The
model's columns come from DIR/spec.json (written from `models/taxi.py`).
Prints one line `RESULT {json}` last.
"""

import argparse
import glob
import json
import logging
import os
import random
import shutil
import statistics
import tempfile
import time

import tensorflow as tf

HIDDEN_UNITS = [100, 70, 50, 25]
SHUFFLE_BUFFER = 10_000
LOG_EVERY = 100  # steps per logged steps/s window


def _logged_step_rates(model_dir, after_step):
    """The steps/s that both estimators log (`global_step/sec`) every `LOG_EVERY` steps, of
    the windows after the first one past `after_step` (that one holds the call's start-up):
    per-step speed, free of any train() call's fixed cost, without subtracting one noisy
    timing from another."""
    rates = []
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "global_step/sec" and event.step > after_step + LOG_EVERY:
                    if value.HasField("simple_value"):  # tf.estimator's
                        rates.append(value.simple_value)
                    else:  # a TF2 summary's tensor: ours
                        rates.append(float(tf.make_ndarray(value.tensor)))
    return rates


def _estimator_api(impl):
    if impl == "ours":
        from components import estimator

        return estimator
    return tf.estimator


def _input_fn(files, feature_spec, label, batch_size, seed, train):
    """As the Trainer's `make_input_fn`: gzipped records -> parsed (features, label) batches."""

    def parse(records):
        features = tf.io.parse_example(records, feature_spec)
        return features, features.pop(label)

    def input_fn():
        dataset = tf.data.TFRecordDataset(files, compression_type="GZIP")
        if train:
            dataset = dataset.shuffle(SHUFFLE_BUFFER, seed=seed).repeat()
        dataset = dataset.batch(batch_size).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.prefetch(tf.data.AUTOTUNE)

    return input_fn


class _FetchEveryN(tf.compat.v1.train.SessionRunHook):
    """A user's hook as written for tf.estimator: fetches a tensor every `every` steps."""

    def __init__(self, tensor, every):
        self._tensor, self._every, self._calls, self.values = tensor, every, 0, []

    def before_run(self, run_context):
        self._calls += 1
        if self._calls % self._every == 0:
            return tf.compat.v1.train.SessionRunArgs(self._tensor)
        return None

    def after_run(self, run_context, run_values):
        if run_values.results is not None:
            self.values.append(run_values.results)


_USER_HOOKS = []  # every _FetchEveryN made: what they fetched goes into the RESULT


def _training_hooks(loss, logits):
    """The second TF1 case's hooks: TensorFlow's logging and step-counting hooks and a
    user's hook, each acting every `LOG_EVERY` steps."""
    v1 = tf.compat.v1
    _USER_HOOKS.append(_FetchEveryN(tf.reduce_mean(logits), LOG_EVERY))
    return [
        v1.train.LoggingTensorHook({"loss": loss}, every_n_iter=LOG_EVERY),
        v1.train.StepCounterHook(every_n_steps=LOG_EVERY),
        _USER_HOOKS[-1],
    ]


def _tf1_model_fn(api, wide, deep, with_hooks=False):
    """A custom TF1-style model_fn as teams wrote them: feature columns through
    `input_layer`, `tf.compat.v1.layers`, a TF1 optimizer and metric; `with_hooks`:
    with `_training_hooks` too."""
    v1 = tf.compat.v1
    columns = deep + [tf.feature_column.embedding_column(c, dimension=8) for c in wide]

    def model_fn(features, labels, mode):
        net = v1.feature_column.input_layer(features, columns)
        for units in HIDDEN_UNITS:
            net = v1.layers.dense(net, units, activation=tf.nn.relu)
        logits = v1.layers.dense(net, 1)
        probabilities = tf.sigmoid(logits)
        if mode == api.ModeKeys.PREDICT:
            predictions = {"logistic": probabilities, "logits": logits}
            output = api.export.PredictOutput(predictions)
            return api.EstimatorSpec(
                mode,
                predictions=predictions,
                export_outputs={"serving_default": output, "predict": output},
            )
        labels = tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        if mode == api.ModeKeys.EVAL:
            return api.EstimatorSpec(
                mode, loss=loss, eval_metric_ops={"auc": v1.metrics.auc(labels, probabilities)}
            )
        optimizer = v1.train.AdagradOptimizer(0.05)
        train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
        hooks = _training_hooks(loss, logits) if with_hooks else []
        return api.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks)

    return model_fn


def _build(api, model, spec, model_dir, seed, intra_op_threads, inter_op_threads):
    wide = [
        tf.feature_column.categorical_column_with_identity(name, num_buckets=n)
        for name, n in spec["wide"]
    ]
    deep = [tf.feature_column.numeric_column(name) for name in spec["deep"]]
    config = api.RunConfig(
        model_dir=model_dir,
        tf_random_seed=seed,
        save_checkpoints_steps=10**9,
        save_summary_steps=100,
        log_step_count_steps=LOG_EVERY,
        session_config=tf.compat.v1.ConfigProto(
            intra_op_parallelism_threads=intra_op_threads,
            inter_op_parallelism_threads=inter_op_threads,
        ),
    )
    if model in ("tf1", "tf1_hooks"):
        model_fn = _tf1_model_fn(api, wide, deep, with_hooks=model == "tf1_hooks")
        return api.Estimator(model_fn, config=config)
    return api.DNNLinearCombinedClassifier(
        config=config,
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=HIDDEN_UNITS,
    )


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _trainer_input_fn(impl, data, spec, feature_spec, label, batch_size, seed):
    """The Trainer's own training input_fn (ours), or this worker's copy of it (tf215)."""
    if impl == "ours":
        # Imported late: it brings TFX and TFT, which the timed estimator work runs without.
        from components.trainer.executor import make_input_fn

        return make_input_fn(
            os.path.join(data, spec["files"]["train"]), feature_spec, label, batch_size, True, seed
        )
    files = sorted(glob.glob(os.path.join(data, spec["files"]["train"])))
    return _input_fn(files, feature_spec, label, batch_size, seed, train=True)


def _input_rate(input_fn, batch_size, batches, warmup_batches=200):
    """Examples/s the input pipeline alone delivers, drained in a `tf.function` loop
    as the training loop drains it."""
    iterator = iter(input_fn())

    @tf.function
    def drain(count):
        for _ in tf.range(count):
            iterator.get_next()
        return count

    drain(tf.constant(warmup_batches))
    _, seconds = _timed(lambda: drain(tf.constant(batches)))
    return batches * batch_size / seconds


def _serving(export_dir, records, calls, batch, rounds=5, calls_per_round=10):
    """(ms for one example, examples/s for `batch` examples) via the `predict` signature.

    Each is the best of a few rounds (the median latency of `calls // rounds` calls a
    round): other processes only ever slow a round down, so one waking up should not
    decide the figure.
    """
    predict = tf.saved_model.load(export_dir).signatures["predict"]
    one = tf.constant(records[:1])
    many = tf.constant((records * (batch // len(records) + 1))[:batch])
    for _ in range(50):
        predict(examples=one)
    for _ in range(3):
        predict(examples=many)
    latencies, rates = [], []
    for _ in range(rounds):
        round_latencies = []
        for _ in range(max(1, calls // rounds)):
            _, seconds = _timed(lambda: predict(examples=one))
            round_latencies.append(seconds)
        latencies.append(statistics.median(round_latencies))
        _, seconds = _timed(lambda: [predict(examples=many) for _ in range(calls_per_round)])
        rates.append(calls_per_round * batch / seconds)
    return min(latencies) * 1e3, max(rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["ours", "tf215"], required=True)
    parser.add_argument(
        "--model",
        choices=["wide_deep", "tf1", "tf1_hooks"],
        default="wide_deep",
        help="the canned DNNLinearCombinedClassifier, a custom TF1-style model_fn, or that "
        "model_fn with a LoggingTensorHook, a StepCounterHook and a user's hook",
    )
    parser.add_argument("--data", required=True, help="folder with spec.json (bench/_taxi_data.py)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument("--train-steps", type=int, default=3000)
    parser.add_argument("--serving-calls", type=int, default=300)
    parser.add_argument("--serving-batch", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--intra-op-threads",
        type=int,
        default=0,
        help="RunConfig(session_config=ConfigProto(intra_op_parallelism_threads=N)); 0: TF's default",
    )
    parser.add_argument(
        "--inter-op-threads",
        type=int,
        default=0,
        help="RunConfig(session_config=ConfigProto(inter_op_parallelism_threads=N)); 0: TF's default",
    )
    args = parser.parse_args()
    if args.train_steps < 2 * LOG_EVERY:
        parser.error(
            f"--train-steps must be at least {2 * LOG_EVERY}: per-step speed comes from the "
            f"{LOG_EVERY}-step windows after the first"
        )

    with open(os.path.join(args.data, "spec.json")) as f:
        spec = json.load(f)
    feature_spec = {
        name: tf.io.FixedLenFeature([], tf.as_dtype(dtype))
        for name, dtype in spec["feature_spec"].items()
    }
    label = spec["label"]
    files = {
        split: sorted(glob.glob(os.path.join(args.data, pattern)))
        for split, pattern in spec["files"].items()
    }

    # INFO, timestamped: both estimators then log their own global_step/sec every
    # 100 steps and their checkpoint saves to the worker's log, which shows where a
    # train() call's time went beyond the timed total.
    logging.basicConfig(level=logging.INFO, format="%(relativeCreated)8.0fms %(name)s: %(message)s")
    tf.get_logger().setLevel(logging.INFO)
    tf.random.set_seed(args.seed)
    # tf_keras initializers (ours) draw their seeds from Python's `random`, which
    # neither tf.random.set_seed nor RunConfig(tf_random_seed) reaches.
    random.seed(args.seed)
    api = _estimator_api(args.impl)
    model_dir = tempfile.mkdtemp(prefix=f"bench-{args.impl}-")
    try:
        model = _build(
            api,
            args.model,
            spec,
            model_dir,
            args.seed,
            args.intra_op_threads,
            args.inter_op_threads,
        )
        train_input = _input_fn(
            files["train"], feature_spec, label, args.batch_size, args.seed, train=True
        )
        # The first call pays for graph building / tracing; time only later ones.
        _, warmup_s = _timed(lambda: model.train(train_input, steps=args.warmup_steps))
        # Every train() call also pays a fixed cost (tf.estimator rebuilds its graph
        # and session; both restore and save a checkpoint and refill the shuffle
        # buffer): one step's call shows it. Per-step speed comes from the logged
        # step rates instead (`_logged_step_rates`).
        _, call_s = _timed(lambda: model.train(train_input, steps=1))
        cpu_start = time.process_time()
        _, train_s = _timed(lambda: model.train(train_input, steps=args.train_steps))
        train_cpu_s = time.process_time() - cpu_start
        window_rates = _logged_step_rates(model_dir, after_step=args.warmup_steps + 1)

        eval_input = _input_fn(
            files["eval"], feature_spec, label, args.batch_size, args.seed, train=False
        )
        metrics, eval_s = _timed(lambda: model.evaluate(eval_input))

        serving_spec = {k: v for k, v in feature_spec.items() if k != label}
        receiver_fn = api.export.build_parsing_serving_input_receiver_fn(serving_spec)
        export_dir, export_s = _timed(
            lambda: model.export_saved_model(os.path.join(model_dir, "export"), receiver_fn)
        )
        records = [
            r.numpy()
            for r in tf.data.TFRecordDataset(files["eval"], compression_type="GZIP").take(
                args.serving_batch
            )
        ]
        p50_ms, batch_rate = _serving(
            export_dir.decode(), records, args.serving_calls, args.serving_batch
        )
        input_rate = _input_rate(
            _trainer_input_fn(
                args.impl, args.data, spec, feature_spec, label, args.batch_size, args.seed
            ),
            args.batch_size,
            args.train_steps,
        )
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)

    result = {
        "impl": args.impl,
        "model": args.model,
        "tf_version": tf.__version__,
        "batch_size": args.batch_size,
        "train_steps": args.train_steps,
        "warmup_seconds": warmup_s,
        "train_seconds": train_s,
        "train_examples_per_sec": args.train_steps * args.batch_size / train_s,
        "train_call_seconds": call_s,
        # CPU seconds of all the process's threads: less bent by other processes than
        # the wall clock on a busy machine.
        "train_cpu_ms_per_step": train_cpu_s / args.train_steps * 1e3,
        "train_step_examples_per_sec": statistics.median(window_rates) * args.batch_size,
        "train_step_windows": len(window_rates),
        "global_step": int(metrics["global_step"]),
        "eval_auc": float(metrics["auc"]),
        "eval_loss": float(metrics["loss"]),
        "eval_seconds": eval_s,
        "export_seconds": export_s,
        "serving_p50_ms_batch1": p50_ms,
        "serving_examples_per_sec": batch_rate,
        "serving_batch": args.serving_batch,
        "input_examples_per_sec": input_rate,
        "user_hook_fetches": sum(len(hook.values) for hook in _USER_HOOKS),
    }
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
