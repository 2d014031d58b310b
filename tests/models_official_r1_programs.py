"""Programs shaped like tensorflow/models' `official/r1` Estimator samples of its v2.x
branches, after `tf_upgrade_v2`, on tiny made-up data, where the other families do not
reach:

- `mnist_keras_sequential`: `official/r1/mnist/mnist.py` (`import tensorflow.compat.v1 as
  tf`): a `tf.keras.Sequential` of Conv2D, MaxPooling2D, Dense and Dropout built in the
  model_fn, `params["data_format"]`, `RunConfig(train_distribute=...)` of
  distribution_utils' CPU choice with a `session_config`, the train/evaluate cycles,
  the printed results, the sample's eager placeholder for its receiver (refused) and
  the placeholder made in a receiver fn, `export_savedmodel(strip_default_attrs=True)`;
- `r1_hooks_helper`: `official/r1/utils/logs`' hooks as `hooks_helper.get_train_hooks`
  makes them: `ExamplesPerSecondHook` (a `tf.estimator.SessionRunHook` on a
  `SecondOrStepTimer`) and `LoggingMetricHook` (a subclass of
  `tf.estimator.LoggingTensorHook` reaching into its state: `_current_tensors`,
  `_should_trigger`, `_iter_count`, `_timer`, `_tag_order`, `_log_at_end`) writing to
  `logger.BenchmarkFileLogger`'s metric.log, and its `log_evaluation_result`;
- `movielens_deep`: `official/r1/wide_deep/movielens_main.py` and movielens_dataset.py:
  parse_example after batch from a TFRecord buffer, max_norm embeddings of vocabulary
  lists, a uint8 numeric genres column; the sample's `tf.estimator.DNNRegressor` with a
  TF1 `AdamOptimizer` and `tf.compat.v1.losses.Reduction.MEAN` (tf_upgrade_v2 makes it
  `tf.compat.v1.estimator.DNNRegressor`), the run loop's `LoggingTensorHook` and
  `LoggingMetricHook` on `dnn/head/weighted_loss/value`, the results logged line by
  line, and the parsing export of a uint8 numeric column (refused by parse_example);
- `transformer_r1`: `official/r1/transformer/transformer_main.py` pared down (a small
  deterministic translator in its place): a model_fn under `variable_scope("model")`
  with a warmup/rsqrt learning rate in a name scope, `compute_gradients` and
  `apply_gradients(name="train")` grouped with UPDATE_OPS, `global_norm`, its scalars
  recorded in the model scope, padded metrics through `tf.compat.v1.metrics.mean`
  (two of them `py_func`s), a `LoggingTensorHook` on the deep names
  `model/get_train_op/learning_rate/learning_rate` and `model/cross_entropy`, the run
  loop's lines and `tf.compat.v1.logging.info(eval_results)`, the global step read from
  `latest_checkpoint()`'s name, the BLEU `FileWriter` made eagerly (refused), and
  `export_saved_model` with the vocabulary in `assets_extra` (the sample's
  `strip_default_attrs=True`, which tf_upgrade_v2 asks to check, refused).

Not compared: NumPy 2's repr of a float32 in a printed or logged dict (np.float32(0.5),
NumPy 1's 0.5: the environment's, not the Estimator's), and the empty
export/temp-<timestamp>/ folder 2.15 left behind after a failed export.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees: `exact` (keys, types, variable names and shapes,
log lines without their numbers, metric.log's entries without their values, export
signatures, errors) and `close` (values that no random draw decides).
`tests/test_models_official_r1.py` compares them with 2.15's recording
(`tests/tf215/record_family.py models_official_r1_programs`, into
`tests/data/tf215/models_official_r1.json`).
"""

import datetime
import json
import numbers
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.resnet_r1_programs import _marked
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised
from tests.tf1_sample_programs import _messages, _shape_of_message
from tests.tutorial_programs import DATA_DIR, event_tags, listing, signatures

RECORDED = os.path.join(DATA_DIR, "models_official_r1.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
SIDE = 4  # the sample's 28x28 digits, here 4x4
BATCH_SIZE = 8
TENSORS_TO_LOG = {name: name for name in ("learning_rate", "cross_entropy", "train_accuracy")}


def _digits(n, seed):
    """Made-up flattened digits: float32 [n, SIDE * SIDE] in [0, 1], int32 labels."""
    draw = np.random.RandomState(seed)
    labels = draw.randint(0, 10, size=n).astype(np.int32)
    images = draw.uniform(0, 0.5, size=(n, SIDE * SIDE)).astype(np.float32)
    images[np.arange(n), labels] += 0.5
    return images, labels


# ------------------------------------------------------------------ official/r1/utils/logs
class BaseBenchmarkLogger:
    """logger.BaseBenchmarkLogger's shape: metrics that are numbers, as JSON-able dicts
    (its "Benchmark metric: %s" lines kept as what they hold)."""

    def __init__(self):
        self.warnings, self.metrics = [], []

    def log_metric(self, name, value, unit=None, global_step=None):
        metric = self._metric(name, value, unit, global_step)
        if metric:
            self.metrics.append([name, type(global_step).__name__, metric["unit"]])

    def log_evaluation_result(self, eval_results):
        global_step = eval_results["global_step"]
        for key in sorted(eval_results):
            if key != "global_step":
                self.log_metric(key, eval_results[key], global_step=global_step)

    def _metric(self, name, value, unit=None, global_step=None):
        if not isinstance(value, numbers.Number):
            self.warnings.append(f"Metric value to log should be a number. Got {type(value)}")
            return None
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {
            "name": name,
            "value": float(value),
            "unit": unit,
            "global_step": global_step,
            "timestamp": stamp,
            "extras": [],
        }


class BenchmarkFileLogger(BaseBenchmarkLogger):
    """logger.BenchmarkFileLogger's shape: one JSON line a metric in metric.log; what
    json.dump refuses is a warning."""

    def __init__(self, tf, logging_dir):
        super().__init__()
        tf.io.gfile.makedirs(logging_dir)
        self.path = os.path.join(logging_dir, "metric.log")
        self._file = tf.io.gfile.GFile(self.path, "a")

    def log_metric(self, name, value, unit=None, global_step=None):
        metric = self._metric(name, value, unit, global_step)
        if metric:
            try:
                json.dump(metric, self._file)  # (streamed: a refused value ends a line early)
                self._file.write("\n")
                self._file.flush()
            except (TypeError, ValueError) as e:
                self.warnings.append(f"Failed to dump metric to log file: name {name}, error {e}")

    def on_finish(self):
        self._file.flush()
        self._file.close()

    def text(self):
        """metric.log as written, its numbers and timestamps replaced (GFile makes the
        file at its first write)."""
        if not os.path.exists(self.path):
            return None
        with open(self.path) as f:
            text = f.read()
        text = re.sub(r'"timestamp": "[^"]*"', '"timestamp": "T"', text)
        return re.sub(r"(?<=: )-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text).splitlines()


def examples_per_second_hook(tf, batch_size, every_n_steps, warm_steps, metric_logger):
    """hooks.ExamplesPerSecondHook as hooks_helper makes it."""

    class ExamplesPerSecondHook(tf.estimator.SessionRunHook):
        def __init__(self):
            self._logger = metric_logger
            self._timer = tf.estimator.SecondOrStepTimer(every_steps=every_n_steps)
            self._step_train_time = 0
            self._total_steps = 0
            self.current_examples_per_sec_list = []

        def begin(self):
            self._global_step_tensor = tf.compat.v1.train.get_global_step()
            if self._global_step_tensor is None:
                raise RuntimeError("Global step should be created to use StepCounterHook.")

        def before_run(self, run_context):
            return tf.estimator.SessionRunArgs(self._global_step_tensor)

        def after_run(self, run_context, run_values):
            global_step = run_values.results
            if self._timer.should_trigger_for_step(global_step) and global_step > warm_steps:
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._step_train_time += elapsed_time
                    self._total_steps += elapsed_steps
                    average = batch_size * (self._total_steps / self._step_train_time)
                    current = batch_size * (elapsed_steps / elapsed_time)
                    self.current_examples_per_sec_list.append(current)
                    self._logger.log_metric(
                        "average_examples_per_sec", average, global_step=global_step
                    )
                    self._logger.log_metric(
                        "current_examples_per_sec", current, global_step=global_step
                    )

    return ExamplesPerSecondHook()


def logging_metric_hook(tf, tensors, metric_logger, every_n_iter=None, every_n_secs=None):
    """metric_hook.LoggingMetricHook: tf.estimator's LoggingTensorHook, its values sent
    to the benchmark logger with the global step it adds to the tensors it fetches."""

    class LoggingMetricHook(tf.estimator.LoggingTensorHook):
        def __init__(self):
            super().__init__(tensors=tensors, every_n_iter=every_n_iter, every_n_secs=every_n_secs)
            self._logger = metric_logger

        def begin(self):
            super().begin()
            self._global_step_tensor = tf.compat.v1.train.get_global_step()
            if self._global_step_tensor is None:
                raise RuntimeError("Global step should be created to use LoggingMetricHook.")
            if self._global_step_tensor.name not in self._current_tensors:
                self._current_tensors[self._global_step_tensor.name] = self._global_step_tensor

        def after_run(self, unused_run_context, run_values):
            if self._should_trigger:
                self._log_metric(run_values.results)
            self._iter_count += 1

        def end(self, session):
            if self._log_at_end:
                self._log_metric(session.run(self._current_tensors))

        def _log_metric(self, tensor_values):
            self._timer.update_last_triggered_step(self._iter_count)
            global_step = tensor_values[self._global_step_tensor.name]
            for tag in self._tag_order:
                self._logger.log_metric(tag, tensor_values[tag], global_step=global_step)

    return LoggingMetricHook()


# ------------------------------------------------------------------ official/r1/mnist
def create_model(tf, data_format):
    """mnist.create_model, small: the same layers, fewer filters and units."""
    input_shape = [1, SIDE, SIDE] if data_format == "channels_first" else [SIDE, SIDE, 1]
    layers = tf.keras.layers
    max_pool = layers.MaxPooling2D((2, 2), (2, 2), padding="same", data_format=data_format)
    return tf.keras.Sequential(
        [
            layers.Reshape(target_shape=input_shape, input_shape=(SIDE * SIDE,)),
            layers.Conv2D(4, 3, padding="same", data_format=data_format, activation=tf.nn.relu),
            max_pool,
            layers.Conv2D(6, 3, padding="same", data_format=data_format, activation=tf.nn.relu),
            max_pool,
            layers.Flatten(),
            layers.Dense(16, activation=tf.nn.relu),
            layers.Dropout(0.4),
            layers.Dense(10),
        ]
    )


def mnist_model_fn(features, labels, mode, params):
    """mnist.model_fn, under the sample's `import tensorflow.compat.v1 as tf`."""
    import tensorflow.compat.v1 as tf

    model = create_model(tf, params["data_format"])
    image = features
    if isinstance(image, dict):
        image = features["image"]
    if mode == tf.estimator.ModeKeys.PREDICT:
        logits = model(image, training=False)
        predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
        return tf.estimator.EstimatorSpec(
            mode=tf.estimator.ModeKeys.PREDICT,
            predictions=predictions,
            export_outputs={"classify": tf.estimator.export.PredictOutput(predictions)},
        )
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=1e-2)
        logits = model(image, training=True)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        accuracy = tf.compat.v1.metrics.accuracy(
            labels=labels, predictions=tf.argmax(logits, axis=1)
        )
        tf.identity(1e-2, "learning_rate")
        tf.identity(loss, "cross_entropy")
        tf.identity(accuracy[1], name="train_accuracy")
        tf.summary.scalar("train_accuracy", accuracy[1])
        return tf.estimator.EstimatorSpec(
            mode=tf.estimator.ModeKeys.TRAIN,
            loss=loss,
            train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()),
        )
    logits = model(image, training=False)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    return tf.estimator.EstimatorSpec(
        mode=tf.estimator.ModeKeys.EVAL,
        loss=loss,
        eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
        },
    )


def _mnist_classifier(tf, model_dir):
    """run_mnist's Estimator: distribution_utils' strategy with no GPU, session config."""
    v1 = tf.compat.v1
    session_config = v1.ConfigProto(
        inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, allow_soft_placement=True
    )
    strategy = tf.distribute.OneDeviceStrategy("device:CPU:0")
    run_config = v1.estimator.RunConfig(
        train_distribute=strategy, session_config=session_config, save_summary_steps=2
    )
    data_format = "channels_first" if v1.config.list_physical_devices("GPU") else "channels_last"
    return v1.estimator.Estimator(
        model_fn=mnist_model_fn,
        model_dir=model_dir,
        config=run_config,
        params={"data_format": data_format},
    )


def _mnist_inputs(tf):
    train, test = _digits(32, 1), _digits(16, 2)

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(train)
        return ds.cache().shuffle(buffer_size=64, seed=3).batch(BATCH_SIZE).repeat(1)

    def eval_input_fn():
        batches = tf.data.Dataset.from_tensor_slices(test).batch(BATCH_SIZE)
        return tf.compat.v1.data.make_one_shot_iterator(batches).get_next()

    return train_input_fn, eval_input_fn


def _types(values):
    return {key: type(value).__name__ for key, value in sorted(values.items())}


@program
def mnist_keras_sequential(tf, workdir):
    v1 = tf.compat.v1
    model_dir = os.path.join(workdir, "mnist_model")
    mnist_classifier = _mnist_classifier(tf, model_dir)
    train_input_fn, eval_input_fn = _mnist_inputs(tf)
    hooks = [v1.estimator.LoggingTensorHook(tensors=TENSORS_TO_LOG, every_n_iter=2)]
    printed, results = [], []
    with _info_lines() as lines:
        for _ in range(2):
            mnist_classifier.train(input_fn=train_input_fn, hooks=hooks)
            eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
            printed.append(f"\nEvaluation results:\n\t{eval_results}\n")
            results.append(eval_results)
    # The sample's placeholder, made in eager code, then one made in the receiver fn.
    eager_placeholder = _raised(lambda: v1.placeholder(tf.float32, [None, SIDE, SIDE]))

    def receiver_fn(shape):
        def input_fn():
            image = v1.placeholder(tf.float32, shape)
            return tf.estimator.export.build_raw_serving_input_receiver_fn({"image": image})()

        return input_fn

    def export(shape):
        return mnist_classifier.export_savedmodel(
            os.path.join(workdir, "export"), receiver_fn(shape), strip_default_attrs=True
        ).decode()

    # The sample's [None, 28, 28] images into a Sequential built for (784,), then flat ones.
    square_images = _raised(lambda: export([None, SIDE, SIDE]))
    export_dir = export([None, SIDE * SIDE])
    loaded = tf.saved_model.load(export_dir)
    served = loaded.signatures["classify"](image=tf.constant(_digits(3, 4)[0]))
    logged = _messages(lines, "cross_entropy = ")
    return {
        "exact": {
            "variables": dict(tf.train.list_variables(model_dir)),
            "eval_types": [_types(r) for r in results],
            "global_steps": [int(r["global_step"]) for r in results],
            "printed": [_values_out(p) for p in printed],
            "logged": [_shape_of_message(message) for message in logged],
            "lines": _marked(lines, workdir),
            "eager_placeholder": eager_placeholder,
            "square_images": square_images,
            "signatures": signatures(export_dir),
            "export_listing": listing(export_dir),
            "served": {k: [v.dtype.name, list(v.shape)] for k, v in sorted(served.items())},
        },
        "close": {},
    }


@program
def r1_hooks_helper(tf, workdir):
    """mnist's train with `--hooks ExamplesPerSecondHook,LoggingMetricHook` (every step
    and every 600 s, as get_logging_metric_hook's default), the benchmark logger a
    BenchmarkFileLogger, and the run loop's log_evaluation_result."""
    model_dir = os.path.join(workdir, "mnist_model")
    mnist_classifier = _mnist_classifier(tf, model_dir)
    train_input_fn, eval_input_fn = _mnist_inputs(tf)
    benchmark_logger = BenchmarkFileLogger(tf, os.path.join(workdir, "benchmark"))
    examples_hook = examples_per_second_hook(tf, BATCH_SIZE, 1, 1, benchmark_logger)
    hooks = [
        examples_hook,
        logging_metric_hook(tf, TENSORS_TO_LOG, benchmark_logger, every_n_iter=2),
        logging_metric_hook(tf, ["cross_entropy"], benchmark_logger, every_n_secs=600),
    ]
    with _info_lines() as lines:
        mnist_classifier.train(input_fn=train_input_fn, hooks=hooks, steps=4)
        eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    benchmark_logger.log_evaluation_result(eval_results)
    benchmark_logger.on_finish()
    return {
        "exact": {
            "metric_log": benchmark_logger.text(),
            "warnings": [re.sub(r"\d+\.\d+", "N", w) for w in benchmark_logger.warnings],
            "examples_logged": len(examples_hook.current_examples_per_sec_list),
            "lines": _marked(lines, workdir),
        },
        "close": {},
    }


# ------------------------------------------------------------------ official/r1/wide_deep
N_GENRE, NUM_USER_IDS, NUM_ITEM_IDS, MAX_RATING = 4, 6, 7, 5.0
USER_EMBEDDING_DIM, ITEM_EMBEDDING_DIM = 2, 3


def _feature_map(tf):
    """movielens_dataset._FEATURE_MAP after tf_upgrade_v2."""
    fixed = tf.io.FixedLenFeature
    return {
        "user_id": fixed([1], dtype=tf.int64),
        "item_id": fixed([1], dtype=tf.int64),
        "timestamp": fixed([1], dtype=tf.int64),
        "genres": fixed([N_GENRE], dtype=tf.int64),
        "rating": fixed([1], dtype=tf.float32),
    }


def write_to_buffer(tf, path, n, seed):
    """file_io.write_to_buffer's TFRecord buffer of made-up ratings."""
    draw = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            ints = {
                "user_id": [draw.randint(1, NUM_USER_IDS)],
                "item_id": [draw.randint(1, NUM_ITEM_IDS)],
                "timestamp": [int(draw.randint(0, 1000))],
                "genres": draw.randint(0, 2, size=N_GENRE).tolist(),
            }
            feature = {
                k: tf.train.Feature(int64_list=tf.train.Int64List(value=v)) for k, v in ints.items()
            }
            rating = float(draw.randint(1, 6))
            feature["rating"] = tf.train.Feature(float_list=tf.train.FloatList(value=[rating]))
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())


def build_model_columns(tf):
    """movielens_dataset.build_model_columns: vocabularies given as ranges."""
    fc = tf.feature_column
    user_id = fc.categorical_column_with_vocabulary_list("user_id", range(1, NUM_USER_IDS))
    user_embedding = fc.embedding_column(
        user_id, USER_EMBEDDING_DIM, max_norm=np.sqrt(USER_EMBEDDING_DIM)
    )
    item_id = fc.categorical_column_with_vocabulary_list("item_id", range(1, NUM_ITEM_IDS))
    item_embedding = fc.embedding_column(
        item_id, ITEM_EMBEDDING_DIM, max_norm=np.sqrt(ITEM_EMBEDDING_DIM)
    )
    time = fc.numeric_column("timestamp")
    genres = fc.numeric_column("genres", shape=(N_GENRE,), dtype=tf.uint8)
    return [], [user_embedding, item_embedding, time, genres]


def _movielens_input_fn(tf, buffer_path, batch_size, repeat, shuffle):
    def deserialize(examples_serialized):
        features = tf.io.parse_example(examples_serialized, _feature_map(tf))
        return features, features["rating"] / MAX_RATING

    def input_fn():
        dataset = tf.data.TFRecordDataset(buffer_path)
        dataset = dataset.batch(batch_size)
        dataset = dataset.map(deserialize, num_parallel_calls=16)
        if shuffle:
            dataset = dataset.shuffle(shuffle)
        dataset = dataset.repeat(repeat)
        return dataset.prefetch(1)

    return input_fn


def build_estimator(tf, model_dir):
    """movielens_main.build_estimator after tf_upgrade_v2 (which made it compat.v1's
    class); its RunConfig made and not passed, as there."""
    _, deep_columns = build_model_columns(tf)
    tf.estimator.RunConfig().replace(
        session_config=tf.compat.v1.ConfigProto(
            device_count={"GPU": 0}, inter_op_parallelism_threads=0, intra_op_parallelism_threads=0
        )
    )
    return tf.compat.v1.estimator.DNNRegressor(
        model_dir=model_dir,
        feature_columns=deep_columns,
        hidden_units=[8, 8, 4],
        optimizer=tf.compat.v1.train.AdamOptimizer(),
        activation_fn=tf.nn.sigmoid,
        dropout=0.3,
        loss_reduction=tf.compat.v1.losses.Reduction.MEAN,
    )


@program
def movielens_deep(tf, workdir):
    """wide_deep_run_loop.run_loop with movielens_main's estimator and tensors_to_log,
    two cycles of an epoch, then export_model."""
    v1 = tf.compat.v1
    buffers = [os.path.join(workdir, f"ml-1m_{name}_buffer") for name in ("train", "eval")]
    write_to_buffer(tf, buffers[0], 48, 1)
    write_to_buffer(tf, buffers[1], 16, 2)
    train_input_fn = _movielens_input_fn(tf, buffers[0], 16, 1, 48)
    eval_input_fn = _movielens_input_fn(tf, buffers[1], 16, 1, None)
    model_dir = os.path.join(workdir, "movie_model")
    model = build_estimator(tf, model_dir)
    tensors_to_log = {"loss": "{loss_prefix}head/weighted_loss/value"}
    tensors_to_log = {k: v.format(loss_prefix="dnn/") for k, v in tensors_to_log.items()}
    benchmark_logger = BaseBenchmarkLogger()
    # get_train_hooks(["LoggingTensorHook", "LoggingMetricHook"], tensors_to_log=...).
    train_hooks = [
        tf.estimator.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=100),
        logging_metric_hook(tf, tensors_to_log, benchmark_logger, every_n_secs=600),
    ]
    all_results = []
    with _info_lines() as lines:
        for n in range(2):
            model.train(input_fn=train_input_fn, hooks=train_hooks)
            results = model.evaluate(input_fn=eval_input_fn)
            v1.logging.info("Results at epoch %d / %d", n + 1, 2)
            v1.logging.info("-" * 60)
            for key in sorted(results):
                v1.logging.info(f"{key}: {results[key]}")
            benchmark_logger.log_evaluation_result(results)
            all_results.append(results)
        _, deep_columns = build_model_columns(tf)
        feature_spec = tf.feature_column.make_parse_example_spec(deep_columns)
        example_input_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
        export_dir = os.path.join(workdir, "export")
        exported = _raised(
            lambda: model.export_savedmodel(export_dir, example_input_fn, strip_default_attrs=True)
        )
    logged = _messages(lines, "loss = ")
    return {
        "exact": {
            "variables": dict(tf.train.list_variables(model_dir)),
            "eval_types": [_types(r) for r in all_results],
            "global_steps": [int(r["global_step"]) for r in all_results],
            "logged": [_shape_of_message(message) for message in logged if "step" not in message],
            "lines": _marked(lines, workdir),
            "results_lines": [
                _normalized(line, workdir)
                for line in _messages(lines, "")
                if line.startswith(("Results at", "-----", *(f"{k}: " for k in results)))
            ],
            "benchmark_metrics": benchmark_logger.metrics,
            "feature_spec": {k: repr(v) for k, v in sorted(feature_spec.items())},
            "exported": exported,
            # (2.15 left an empty export/temp-<timestamp>/ folder behind; no files.)
            "export_files": listing(export_dir) if os.path.isdir(export_dir) else [],
        },
        "close": {},
    }


# ------------------------------------------------------------------ official/r1/transformer
VOCAB, HIDDEN, LENGTH = 8, 4, 5
TRANSFORMER_TENSORS_TO_LOG = {
    "learning_rate": "model/get_train_op/learning_rate/learning_rate",
    "cross_entropy_loss": "model/cross_entropy",
}
TRANSFORMER_PARAMS = {
    "vocab_size": VOCAB,
    "hidden_size": HIDDEN,
    "label_smoothing": 0.1,
    "learning_rate": 2.0,
    "learning_rate_warmup_steps": 2,
    "optimizer_adam_beta1": 0.9,
    "optimizer_adam_beta2": 0.997,
    "optimizer_adam_epsilon": 1e-09,
    "use_tpu": False,
}


def _sequences(n, seed):
    """Made-up token ids in [1, VOCAB), 0-padded after a random length: inputs, targets
    (the inputs' tokens shifted by one, so there is something to learn)."""
    draw = np.random.RandomState(seed)
    inputs = np.zeros((n, LENGTH), np.int64)
    for row in inputs:
        length = draw.randint(2, LENGTH + 1)
        row[:length] = draw.randint(1, VOCAB, size=length)
    targets = np.where(inputs > 0, inputs % (VOCAB - 1) + 1, 0)
    return inputs, targets


def toy_translator(tf, inputs, targets):
    """A transformer.Transformer stand-in, small and deterministic: shared embedding
    weights, the inputs' mean as the encoding, logits over the vocabulary per target."""
    v1 = tf.compat.v1
    start = np.linspace(-0.5, 0.5, VOCAB * HIDDEN).reshape(VOCAB, HIDDEN)
    with v1.variable_scope("embedding_shared_weights"):
        weights = v1.get_variable(
            "weights", [VOCAB, HIDDEN], initializer=v1.constant_initializer(start)
        )
    mask = tf.cast(tf.not_equal(inputs, 0), tf.float32)[:, :, None]
    encoded = tf.reduce_sum(tf.gather(weights, inputs) * mask, 1) / (tf.reduce_sum(mask, 1) + 1)
    shifted = tf.pad(targets, [[0, 0], [1, 0]])[:, :-1]
    kernel = v1.get_variable(
        "decoder/kernel", [HIDDEN, HIDDEN], initializer=v1.constant_initializer(np.eye(HIDDEN))
    )
    decoded = tf.tanh(
        tf.einsum("blh,hk->blk", tf.gather(weights, shifted) + encoded[:, None], kernel)
    )
    return tf.einsum("blh,vh->blv", decoded, weights)


def padded_cross_entropy_loss(tf, logits, labels, smoothing, vocab_size):
    """metrics.padded_cross_entropy_loss after tf_upgrade_v2."""
    with tf.name_scope("loss"):
        with tf.name_scope("smoothing_cross_entropy"):
            confidence = 1.0 - smoothing
            low_confidence = (1.0 - confidence) / tf.cast(vocab_size - 1, dtype=tf.float32)
            soft_targets = tf.one_hot(
                tf.cast(labels, tf.int32),
                depth=vocab_size,
                on_value=confidence,
                off_value=low_confidence,
            )
            xentropy = tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=soft_targets)
            normalizing_constant = -(
                confidence * tf.math.log(confidence)
                + tf.cast(vocab_size - 1, dtype=tf.float32)
                * low_confidence
                * tf.math.log(low_confidence + 1e-20)
            )
            xentropy -= normalizing_constant
        weights = tf.cast(tf.not_equal(labels, 0), dtype=tf.float32)
        return xentropy * weights, weights


def _bigram_f1(predicted, reference):
    """A ROUGE-2-like F1 of token-id bigrams per row, averaged (the sample's py_func)."""
    scores = []
    for ours, theirs in zip(predicted.tolist(), reference.tolist(), strict=True):
        a = {tuple(ours[i : i + 2]) for i in range(len(ours) - 1)}
        b = {tuple(theirs[i : i + 2]) for i in range(len(theirs) - 1)}
        both = len(a & b)
        p, r = both / max(len(a), 1), both / max(len(b), 1)
        scores.append(2 * p * r / (p + r + 1e-8))
    return np.float32(np.mean(scores))


def _unigram_precision(reference, predicted):
    """An approximate-BLEU-like unigram precision over the batch."""
    hits = sum(
        len(set(p) & set(r)) for p, r in zip(predicted.tolist(), reference.tolist(), strict=True)
    )
    total = sum(len(set(p)) for p in predicted.tolist())
    return np.float32(hits / max(total, 1))


def get_eval_metrics(tf, logits, labels, params):
    """metrics.get_eval_metrics: tf.compat.v1.metrics.mean of (scores, weights) per
    batch, two of them computed in Python through py_func, under "metrics/"."""
    v1 = tf.compat.v1
    weights = tf.cast(tf.not_equal(labels, 0), tf.float32)
    outputs = tf.cast(tf.argmax(logits, axis=-1), tf.int32)
    padded_labels = tf.cast(labels, tf.int32)
    with v1.variable_scope("padded_accuracy"):
        accuracy = tf.cast(tf.equal(outputs, padded_labels), tf.float32), weights
    with v1.variable_scope("padded_accuracy_topk"):
        _, top = tf.nn.top_k(logits, k=tf.minimum(5, tf.shape(logits)[-1]))
        same = tf.cast(tf.equal(top, padded_labels[:, :, None] + tf.zeros_like(top)), tf.float32)
        top5 = tf.reduce_sum(same, axis=-1), weights
    with v1.variable_scope("padded_sequence_accuracy"):
        wrong = tf.cast(tf.not_equal(outputs, padded_labels), tf.float32) * weights
        sequence = 1.0 - tf.minimum(1.0, tf.reduce_sum(wrong, axis=[1])), tf.constant(1.0)
    num, den = padded_cross_entropy_loss(tf, logits, labels, 0, params["vocab_size"])
    bleu = v1.py_func(_unigram_precision, (labels, outputs), tf.float32)
    rouge = v1.py_func(_bigram_f1, (outputs, labels), tf.float32)
    metrics = {
        "accuracy": v1.metrics.mean(*accuracy),
        "accuracy_top5": v1.metrics.mean(*top5),
        "accuracy_per_sequence": v1.metrics.mean(*sequence),
        "neg_log_perplexity": v1.metrics.mean(-num, den),
        "approx_bleu_score": v1.metrics.mean(bleu, tf.constant(1.0)),
        "rouge_2_fscore": v1.metrics.mean(rouge, tf.constant(1.0)),
    }
    return {f"metrics/{k}": v for k, v in metrics.items()}


def get_train_op_and_metrics(tf, loss, params):
    """transformer_main.get_train_op_and_metrics after tf_upgrade_v2, LazyAdamOptimizer
    (contrib) replaced by TF1's AdamOptimizer by hand."""
    v1 = tf.compat.v1
    with v1.variable_scope("get_train_op"):
        with tf.name_scope("learning_rate"):
            warmup_steps = tf.cast(params["learning_rate_warmup_steps"], dtype=tf.float32)
            step = tf.cast(v1.train.get_or_create_global_step(), dtype=tf.float32)
            learning_rate = params["learning_rate"] * params["hidden_size"] ** -0.5
            learning_rate *= tf.minimum(1.0, step / warmup_steps)
            learning_rate *= tf.math.rsqrt(tf.maximum(step, warmup_steps))
            tf.identity(learning_rate, "learning_rate")
        optimizer = v1.train.AdamOptimizer(
            learning_rate,
            beta1=params["optimizer_adam_beta1"],
            beta2=params["optimizer_adam_beta2"],
            epsilon=params["optimizer_adam_epsilon"],
        )
        global_step = v1.train.get_global_step()
        tvars = v1.trainable_variables()
        gradients = optimizer.compute_gradients(loss, tvars)
        minimize_op = optimizer.apply_gradients(gradients, global_step=global_step, name="train")
        update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        train_op = tf.group(minimize_op, update_ops)
        gradient_norm = tf.linalg.global_norm([gradient for gradient, _ in gradients])
        return train_op, {
            "learning_rate": learning_rate,
            "global_norm/gradient_norm": gradient_norm,
        }


def translation_loss(tf, inputs, targets, params):
    """The model_fn's logits and its padded, smoothed cross entropy ("cross_entropy")."""
    logits = toy_translator(tf, inputs, targets)
    logits.set_shape(targets.shape.as_list() + logits.shape.as_list()[2:])
    xentropy, weights = padded_cross_entropy_loss(
        tf, logits, targets, params["label_smoothing"], params["vocab_size"]
    )
    loss = tf.reduce_sum(xentropy) / tf.reduce_sum(weights)
    tf.identity(loss, "cross_entropy")
    return logits, loss


def transformer_model_fn(features, labels, mode, params):
    """transformer_main.model_fn after tf_upgrade_v2 (no TPU)."""
    import tensorflow as tf

    v1 = tf.compat.v1
    with v1.variable_scope("model"):
        inputs, targets = features, labels
        if mode == tf.estimator.ModeKeys.PREDICT:
            logits = toy_translator(tf, inputs, tf.zeros_like(inputs))
            output = {
                "outputs": tf.cast(tf.argmax(logits, -1), tf.int32),
                "scores": tf.reduce_max(tf.reduce_sum(logits, -1), -1),
            }
            return tf.estimator.EstimatorSpec(
                tf.estimator.ModeKeys.PREDICT,
                predictions=output,
                export_outputs={"translate": tf.estimator.export.PredictOutput(output)},
            )
        logits, loss = translation_loss(tf, inputs, targets, params)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(
                mode=mode,
                loss=loss,
                predictions={"predictions": logits},
                eval_metric_ops=get_eval_metrics(tf, logits, labels, params),
            )
        train_op, metric_dict = get_train_op_and_metrics(tf, loss, params)
        metric_dict["minibatch_loss"] = loss
        for key, value in metric_dict.items():  # record_scalars
            v1.summary.scalar(name=key, tensor=value)
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def _values_out(text):
    """A logged or printed dict of results without its values (NumPy 2 writes a float32
    np.float32(0.5), NumPy 1 as 0.5)."""
    return re.sub(r"(np\.\w+\()?-?[\d.]+(e[-+]?\d+)?\)?(?=[,}])", "N", text)


def _transformer_run_loop(tf, estimator, train_input_fn, eval_input_fn, iterations, hooks):
    """transformer_main.run_loop without BLEU files: its log lines, the cycles, the
    benchmark logger's evaluation results; the results of each cycle."""
    v1 = tf.compat.v1
    v1.logging.info("Training schedule:")
    v1.logging.info("\t1. Train for 3 steps")
    v1.logging.info("\t2. Evaluate model.")
    v1.logging.info(f"Repeat above steps {iterations} times.")
    benchmark_logger, all_results = BaseBenchmarkLogger(), []
    for i in range(iterations):
        v1.logging.info(f"Starting iteration {i + 1}")
        estimator.train(train_input_fn, steps=3, hooks=hooks)
        eval_results = estimator.evaluate(input_fn=eval_input_fn, steps=1)
        v1.logging.info(f"Evaluation results (iter {i + 1}/{iterations}):")
        v1.logging.info(eval_results)
        benchmark_logger.log_evaluation_result(eval_results)
        all_results.append(eval_results)
    return all_results, benchmark_logger


@program
def transformer_r1(tf, workdir):
    """transformer_main.run_transformer: the Estimator under distribution_utils' CPU
    strategy, TENSORS_TO_LOG's deep names, two cycles, get_global_step from the latest
    checkpoint's name, the BLEU FileWriter, and the export with the vocabulary as an
    extra asset."""
    train, test = _sequences(12, 1), _sequences(4, 2)
    model_dir = os.path.join(workdir, "transformer_model")
    vocab_file = os.path.join(workdir, "vocab.ende.txt")
    with open(vocab_file, "w") as f:
        f.write("\n".join(f"'tok{i}'" for i in range(VOCAB)) + "\n")
    estimator = tf.estimator.Estimator(
        model_fn=transformer_model_fn,
        model_dir=model_dir,
        params=dict(TRANSFORMER_PARAMS),
        config=tf.estimator.RunConfig(
            train_distribute=tf.distribute.OneDeviceStrategy("device:CPU:0"), save_summary_steps=1
        ),
    )
    train_input_fn = lambda: tf.data.Dataset.from_tensor_slices(train).batch(4).repeat()  # noqa: E731
    eval_input_fn = lambda: tf.data.Dataset.from_tensor_slices(test).batch(4)  # noqa: E731
    hooks = [tf.estimator.LoggingTensorHook(tensors=TRANSFORMER_TENSORS_TO_LOG, every_n_iter=2)]
    with _info_lines() as lines:
        results, benchmark_logger = _transformer_run_loop(
            tf, estimator, train_input_fn, eval_input_fn, 2, hooks
        )
    global_step = int(estimator.latest_checkpoint().split("-")[-1])
    bleu_writer = _raised(lambda: tf.compat.v1.summary.FileWriter(os.path.join(model_dir, "bleu")))

    def serving_input_fn():  # official/r1/utils/export.build_tensor_serving_input_receiver_fn
        features = tf.compat.v1.placeholder(dtype=tf.int64, shape=[None, None], name="input_tensor")
        return tf.estimator.export.TensorServingInputReceiver(features, features)

    export_base = os.path.join(workdir, "export")
    extra = {"vocab.txt": vocab_file}
    strip = _raised(
        lambda: estimator.export_saved_model(
            export_base, serving_input_fn, assets_extra=extra, strip_default_attrs=True
        )
    )
    export_dir = estimator.export_saved_model(
        export_base, serving_input_fn, assets_extra=extra
    ).decode()
    served = tf.saved_model.load(export_dir).signatures["translate"](tf.constant(test[0][:2]))
    rows = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(test[0]).batch(4)))
    logged = _messages(lines, "cross_entropy_loss = ")
    user_lines = ("Training schedule", "\t", "Repeat above", "Starting iteration", "Evaluation res")
    return {
        "exact": {
            "variables": dict(tf.train.list_variables(model_dir)),
            "train_tags": sorted(event_tags(model_dir)),
            "eval_tags": sorted(event_tags(os.path.join(model_dir, "eval"))),
            "eval_types": [_types(r) for r in results],
            "logged": [_shape_of_message(message) for message in logged],
            "lines": _marked(lines, workdir),
            "user_lines": [
                _values_out(line)
                for line in _messages(lines, "")
                if line.startswith(user_lines) or line.startswith("{")
            ],
            "benchmark_metrics": benchmark_logger.metrics,
            "global_step": global_step,
            "bleu_writer": bleu_writer,
            "strip_default_attrs": strip and strip[:1],
            "signatures": signatures(export_dir),
            "export_listing": listing(export_dir),
            "served": {k: [v.dtype.name, list(v.shape)] for k, v in sorted(served.items())},
            "predictions": [row["outputs"].tolist() for row in rows],
        },
        "close": {
            **{f"eval{i}/{k}": float(v) for i, r in enumerate(results) for k, v in r.items()},
            "scores": [float(row["scores"]) for row in rows],
            "served_scores": served["scores"].numpy().tolist(),
        },
    }
