"""Public tf.estimator code the other families have not tried, after `tf_upgrade_v2`, on
tiny made-up data:

- `astronet_train_and_predict`: google-research/exoplanet-ml's AstroNet (`astronet/train.py`,
  `predict.py`, `util/estimator_util.py`, `ops/dataset_ops.py`, `ops/metrics.py`,
  `ops/training.py`, `tf_util/estimator_runner.py`): an input_fn and a model_fn that are
  callable objects (the input_fn taking `config` and `params`, checking for a TPU
  `RunConfig`), sharded TFRecords parsed into nested feature dicts with the labels among
  the features (popped by the model_fn), a label table, time series reversed by a random
  `tf.cond`, Keras `Dense` layers in a TF1 graph with a `placeholder_with_default`
  training flag, `compute_weighted_loss` and `get_total_loss()`, a polynomially decayed
  TF1 Adam through a `create_train_op` that returns the loss as the train op (tf.contrib's
  and tf_slim's), metrics of its own local variables named with slashes and an op as an
  update, a deep-copied `RunConfig(keep_checkpoint_max=1)`, the runner's evaluate-then-train
  loop (`latest_checkpoint()`, `evaluate(checkpoint_path=..., name="val")`), and predictions
  of a single tensor from `Dataset.from_tensors` of nested features;
- `checkpoint_input_pipeline_hook`: `tf.data.experimental.CheckpointInputPipelineHook`'s
  docstring loop (`train(steps=2)` with the hook, `evaluate()` without), so each call reads
  on where the last stopped, then a call without it (the input starts over); the
  `input.ckpt-N` files and `checkpoint_input` it writes; `tf.compat.v1.data`'s spelling
  with `external_state_policy="warn"`, and a policy it refuses;
- `checkpoint_input_pipeline_hook_train_and_evaluate`: the hook in a `TrainSpec` of a
  canned `LinearRegressor` checkpointing every 2 steps, then in `train()`;
- `checkpoint_input_pipeline_hook_policies`: the hook's `external_state_policy` over an
  input with a random op (`"fail"` fails saving it, `"warn"` and `"ignore"` save), and
  over a seeded `shuffle` (the rows each call reads on from);
- `checkpoint_input_pipeline_hook_tpu_and_v1`: the hook given a `TPUEstimator` with
  `use_tpu=False` and a `tf.compat.v1.estimator.Estimator`;
- `saveable_iterator_in_model_checkpoint`: `tf.data.experimental.make_saveable_from_iterator`
  in the `SAVEABLE_OBJECTS` collection (its docstring's way), so the input's position is
  saved in `model.ckpt` and each `train()` call reads on;
- `queue_runner_input_fn`: an input_fn of its own `FIFOQueue`, filled by a
  `tf.compat.v1.train.QueueRunner` it adds, in train, evaluate and predict.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, variable names, keys, steps, log lines: equal) and `close`
values (models that start from zeros or a checkpoint the program writes, fed in file order:
1e-4). `tests/test_public_code.py` compares them with 2.15's recording
(`tests/tf215/record_family.py public_code_programs`, into `tests/data/tf215/public_code.json`).
"""

import copy
import itertools
import os

import numpy as np

from tests.examples_learn_programs import _fixed_start
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "public_code.json")
PROGRAMS, program = registry()


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def _kept_lines(lines, workdir, *words):
    kept = []
    for line in lines:
        if any(w in line for w in words) and not line.startswith("From "):
            line = _normalized(line, workdir)
            if not kept or kept[-1] != line:
                kept.append(line)
    return kept


# --- a linear model over rows that records the last row it trained on ---


def _rows_input_fn():
    import tensorflow as tf

    rows = tf.data.Dataset.range(10)
    dataset = rows.map(
        lambda i: ({"row": i, "x": tf.cast(i, tf.float32) / 10.0}, tf.cast(i % 3, tf.float32))
    )
    return dataset.batch(2).repeat()


def _eval_input_fn():
    import tensorflow as tf

    x = np.arange(4, dtype=np.float32) / 4.0
    return tf.data.Dataset.from_tensor_slices(({"x": x, "row": np.arange(4)}, x * 2.0)).batch(4)


def rows_model_fn(features, labels, mode):
    import tensorflow as tf

    weight = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
    bias = tf.compat.v1.get_variable("b", [], initializer=tf.compat.v1.zeros_initializer())
    prediction = weight * features["x"] + bias
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
    loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss)
    last_row = tf.compat.v1.get_variable(
        "last_row", [], tf.int64, initializer=tf.compat.v1.zeros_initializer(), trainable=False
    )
    minimize = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    train_op = tf.group(minimize, last_row.assign(tf.reduce_max(features["row"])))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


# --- tf.data.experimental.CheckpointInputPipelineHook: its docstring's loop ---


@program
def checkpoint_input_pipeline_hook(tf, workdir):
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(rows_model_fn, model_dir=model_dir)
    rounds, losses = [], []
    with _info_lines() as lines:
        for _ in range(3):
            est.train(
                _rows_input_fn,
                hooks=[tf.data.experimental.CheckpointInputPipelineHook(est)],
                steps=2,
            )
            metrics = est.evaluate(_eval_input_fn)
            rounds.append([int(metrics["global_step"]), int(est.get_variable_value("last_row"))])
            losses.append(float(metrics["loss"]))
        est.train(_rows_input_fn, steps=2)  # (without the hook: the input starts over)
    rounds.append(
        [int(est.get_variable_value("global_step")), int(est.get_variable_value("last_row"))]
    )
    with open(os.path.join(model_dir, "checkpoint_input")) as f:
        state = [_normalized(line, workdir) for line in f.read().splitlines()]
    hook = tf.compat.v1.data.experimental.CheckpointInputPipelineHook(est, "warn")
    return {
        "exact": {
            "rounds": rounds,
            "listing": listing(model_dir),
            "checkpoint_input": state,
            "lines": _kept_lines(lines, workdir, "input.ckpt", "Saving checkpoints", "Restoring"),
            "is_a_hook": [
                isinstance(hook, tf.compat.v1.train.SessionRunHook),
                isinstance(hook, tf.estimator.SessionRunHook),
            ],
            "refused": _raised(
                lambda: tf.data.experimental.CheckpointInputPipelineHook(est, "sometimes")
            ),
            "variables": sorted(est.get_variable_names()),
        },
        "close": {"losses": losses, "w": float(est.get_variable_value("w"))},
    }


@program
def checkpoint_input_pipeline_hook_train_and_evaluate(tf, workdir):
    model_dir = os.path.join(workdir, "linear")
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=2)
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], config=config)

    def input_fn():
        return _rows_input_fn().map(lambda f, y: ({"x": f["x"]}, y))

    hook = tf.data.experimental.CheckpointInputPipelineHook(est)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=5, hooks=[hook])
    eval_spec = tf.estimator.EvalSpec(_eval_input_fn, steps=None, throttle_secs=0)
    with _info_lines() as lines:
        metrics, _ = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
        est.train(input_fn, steps=3, hooks=[tf.data.experimental.CheckpointInputPipelineHook(est)])
    predictions = [p["predictions"].tolist() for p in est.predict(_eval_input_fn)]
    return {
        "exact": {
            "listing": listing(model_dir),
            "lines": _kept_lines(lines, workdir, "input.ckpt", "Saving checkpoints", "Restoring"),
            "evaluate_keys": sorted(metrics),
        },
        "close": {"metrics": _floats(metrics), "predictions": predictions},
    }


def _random_input_fn():
    """The rows, each through a random op (state outside the pipeline)."""
    import tensorflow as tf

    def row(i):
        noise = 0.0 * tf.random.uniform([])
        return {"row": i, "x": tf.cast(i, tf.float32) / 10.0 + noise}, tf.cast(i % 3, tf.float32)

    return tf.data.Dataset.range(10).map(row).batch(2).repeat()


def _shuffled_input_fn():
    import tensorflow as tf

    rows = tf.data.Dataset.range(10).shuffle(10, seed=3)
    dataset = rows.map(
        lambda i: ({"row": i, "x": tf.cast(i, tf.float32) / 10.0}, tf.cast(i % 3, tf.float32))
    )
    return dataset.batch(2).repeat()


@program
def checkpoint_input_pipeline_hook_policies(tf, workdir):
    seen = {}
    for policy in ("fail", "warn", "ignore"):
        est = tf.estimator.Estimator(rows_model_fn, model_dir=os.path.join(workdir, policy))
        hook = tf.data.experimental.CheckpointInputPipelineHook(est, policy)
        error = _raised(
            lambda est=est, hook=hook: est.train(_random_input_fn, steps=2, hooks=[hook])
        )
        seen[policy] = [error and [error[0], error[1].splitlines()[0]], listing(est.model_dir)]
    est = tf.estimator.Estimator(rows_model_fn, model_dir=os.path.join(workdir, "shuffled"))
    rows = []
    for _ in range(3):
        hook = tf.data.experimental.CheckpointInputPipelineHook(est)
        est.train(_shuffled_input_fn, steps=2, hooks=[hook])
        rows.append(int(est.get_variable_value("last_row")))
    return {"exact": {"policies": seen, "shuffled_rows": rows}}


def _tpu_rows_model_fn(features, labels, mode, params):
    import tensorflow as tf

    spec = rows_model_fn(features, labels, mode)
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op)


@program
def checkpoint_input_pipeline_hook_tpu_and_v1(tf, workdir):
    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=os.path.join(workdir, "tpu"), save_checkpoints_steps=3
    )
    tpu = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn=_tpu_rows_model_fn, config=config, use_tpu=False, train_batch_size=2
    )
    v1 = tf.compat.v1.estimator.Estimator(rows_model_fn, model_dir=os.path.join(workdir, "v1"))
    rows = []
    with _info_lines() as lines:
        for _ in range(2):
            hook = tf.data.experimental.CheckpointInputPipelineHook(tpu)
            tpu.train(lambda params: _rows_input_fn(), steps=2, hooks=[hook])
            rows.append(int(tpu.get_variable_value("last_row")))
        for _ in range(2):
            hook = tf.compat.v1.data.experimental.CheckpointInputPipelineHook(v1)
            v1.train(_rows_input_fn, steps=3, hooks=[hook])
            rows.append(int(v1.get_variable_value("last_row")))
    return {
        "exact": {
            "rows": rows,
            "tpu_listing": listing(tpu.model_dir),
            "v1_listing": listing(v1.model_dir),
            "lines": _kept_lines(lines, workdir, "input.ckpt"),
        }
    }


# --- google-research/exoplanet-ml's astronet (estimator_util, estimator_runner, models) ---


class ConfigDict(dict):
    """tf_util/configdict.py's: a dict whose items are attributes too."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


ASTRO_INPUTS = ConfigDict(
    features=ConfigDict(
        global_view=ConfigDict(length=8, is_time_series=True),
        local_view=ConfigDict(length=4, is_time_series=True),
    ),
    label_feature="av_training_set",
    label_map={"PC": 1, "AFP": 0, "NTP": 0},
)
ASTRO_HPARAMS = ConfigDict(
    output_dim=1,
    num_pre_logits_hidden_layers=1,
    pre_logits_hidden_layer_size=3,
    pre_logits_dropout_rate=0.0,
    batch_size=4,
    learning_rate=0.05,
    learning_rate_decay_steps=10,
    learning_rate_end_factor=0.1,
    learning_rate_decay_power=1.0,
    optimizer="adam",
)


def _palindrome(values):
    return np.concatenate([values, values[::-1]])


def _write_light_curves(tf, path, n, seed):
    """TFRecords of tf.Examples: global and local views (palindromes, so a reversed series
    is the same series) and a label string."""
    rng = np.random.RandomState(seed)
    labels = ["PC", "AFP", "NTP"]
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(n):
            label = labels[i % 3]
            depth = 1.0 if label == "PC" else 0.2
            views = {
                "global_view": _palindrome(-depth * rng.uniform(0.5, 1.0, 4)),
                "local_view": _palindrome(-depth * rng.uniform(0.5, 1.0, 2)),
            }
            feature = {
                k: tf.train.Feature(float_list=tf.train.FloatList(value=v.astype(np.float32)))
                for k, v in views.items()
            }
            feature["av_training_set"] = tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[label.encode()])
            )
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


def _build_dataset(
    tf,
    file_pattern,
    input_config,
    batch_size,
    include_labels,
    reverse_prob,
    shuffle_filenames,
    shuffle_values_buffer,
    repeat,
):
    """astronet/ops/dataset_ops.py's build_dataset (tf_upgrade_v2'd, its HashTable a
    StaticHashTable)."""
    filenames = []
    for p in file_pattern.split(","):
        matches = tf.io.gfile.glob(p)
        if not matches:
            raise ValueError(f"Found no input files matching {p}")
        filenames.extend(matches)
    tf.compat.v1.logging.info(
        "Building input pipeline from %d files matching patterns: %s",
        len(filenames),
        [os.path.basename(p) for p in file_pattern.split(",")],
    )
    if include_labels:
        label_to_id = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                keys=list(input_config.label_map.keys()),
                values=list(input_config.label_map.values()),
                key_dtype=tf.string,
                value_dtype=tf.int32,
            ),
            default_value=-1,
        )

    def _example_parser(serialized_example):
        data_fields = {
            name: tf.io.FixedLenFeature([feature.length], tf.float32)
            for name, feature in input_config.features.items()
        }
        if include_labels:
            data_fields[input_config.label_feature] = tf.io.FixedLenFeature([], tf.string)
        parsed_features = tf.io.parse_single_example(serialized_example, features=data_fields)
        if reverse_prob > 0:
            should_reverse = tf.less(
                tf.random.uniform([], 0, 1), reverse_prob, name="should_reverse"
            )
        output = {}
        for name in input_config.features:
            value = tf.expand_dims(parsed_features.pop(name), 1)
            if reverse_prob > 0:
                value = tf.cond(
                    should_reverse,
                    lambda value=value: tf.reverse(value, axis=[0]),
                    lambda value=value: tf.identity(value),
                )
            output.setdefault("time_series_features", {})[name] = value
        if include_labels:
            label_value = parsed_features.pop(input_config.label_feature)
            label_id = label_to_id.lookup(label_value)
            assert_known_label = tf.Assert(
                tf.greater_equal(label_id, tf.constant(0, tf.int32)),
                ["Unknown label string:", label_value],
            )
            with tf.control_dependencies([assert_known_label]):
                label_id = tf.identity(label_id)
            output["labels"] = label_id
        assert not parsed_features
        return output

    filename_dataset = tf.data.Dataset.from_tensor_slices(filenames)
    if len(filenames) > 1 and shuffle_filenames:
        filename_dataset = filename_dataset.shuffle(len(filenames))
    dataset = filename_dataset.interleave(tf.data.TFRecordDataset, cycle_length=8, block_length=8)
    if shuffle_values_buffer > 0:
        dataset = dataset.shuffle(shuffle_values_buffer)
    if repeat != 1:
        dataset = dataset.repeat(repeat)
    dataset = dataset.map(_example_parser, num_parallel_calls=8)
    dataset = dataset.batch(batch_size)
    return dataset.prefetch(max(1, int(256 / batch_size)))


class _InputFn:
    """estimator_util._InputFn: a callable input_fn taking `config` and `params`."""

    def __init__(self, file_pattern, input_config, mode, shuffle_values_buffer=0, repeat=1):
        self._file_pattern = file_pattern
        self._input_config = input_config
        self._mode = mode
        self._shuffle_values_buffer = shuffle_values_buffer
        self._repeat = repeat

    def __call__(self, config, params):
        import tensorflow as tf

        use_tpu = isinstance(config, tf.compat.v1.estimator.tpu.RunConfig)
        mode = self._mode
        return _build_dataset(
            tf,
            self._file_pattern,
            self._input_config,
            params["batch_size"],
            include_labels=mode in [tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL],
            reverse_prob=0.5 if mode == tf.estimator.ModeKeys.TRAIN else 0,
            shuffle_filenames=mode == tf.estimator.ModeKeys.TRAIN and not use_tpu,
            shuffle_values_buffer=self._shuffle_values_buffer,
            repeat=self._repeat,
        )


class AstroFCModel:
    """astro_model.AstroModel with fully connected layers over each time series."""

    def __init__(self, features, labels, hparams, mode):
        import tensorflow as tf

        valid_modes = [
            tf.estimator.ModeKeys.TRAIN,
            tf.estimator.ModeKeys.EVAL,
            tf.estimator.ModeKeys.PREDICT,
        ]
        if mode not in valid_modes:
            raise ValueError(f"Expected mode in {valid_modes}. Got: {mode}")
        self.hparams, self.mode = hparams, mode
        self.time_series_features = features.get("time_series_features", {})
        self.labels = labels
        self.weights = features.get("weights")

    def build_logits(self, tf):
        hidden = []
        for name, value in sorted(self.time_series_features.items()):
            with tf.name_scope(name + "_hidden"):
                net = tf.keras.layers.Flatten()(value)
                net = tf.keras.layers.Dense(2, activation=tf.nn.relu, name=name + "_fc")(net)
            hidden.append(net)
        net = tf.concat(hidden, axis=1, name="pre_logits_concat")
        with tf.name_scope("pre_logits_hidden"):
            for i in range(self.hparams.num_pre_logits_hidden_layers):
                net = tf.keras.layers.Dense(
                    units=self.hparams.pre_logits_hidden_layer_size,
                    activation=tf.nn.relu,
                    name=f"fully_connected_{i + 1}",
                )(net)
            tf.identity(net, "final")
        self.logits = tf.keras.layers.Dense(units=self.hparams.output_dim, name="logits")(net)

    def build(self):
        import tensorflow as tf

        self.global_step = tf.compat.v1.train.get_or_create_global_step()
        if self.mode == tf.estimator.ModeKeys.TRAIN:
            self.is_training = tf.compat.v1.placeholder_with_default(True, [], "is_training")
        else:
            self.is_training = False
        self.build_logits(tf)
        self.predictions = tf.sigmoid(self.logits, name="predictions")
        if self.mode in [tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL]:
            self.batch_losses = tf.nn.sigmoid_cross_entropy_with_logits(
                labels=tf.cast(self.labels, tf.float32), logits=tf.squeeze(self.logits, [1])
            )
            weights = self.weights if self.weights is not None else 1.0
            tf.compat.v1.losses.compute_weighted_loss(
                losses=self.batch_losses,
                weights=weights,
                reduction=tf.compat.v1.losses.Reduction.MEAN,
            )
            self.total_loss = tf.compat.v1.losses.get_total_loss()


def _create_optimizer(tf, hparams, global_step):
    """astronet/ops/training.py's create_optimizer (its polynomial decay), without
    tf.contrib.opt's weight-decay wrapper (weight_decay 0)."""
    learning_rate = tf.compat.v1.train.polynomial_decay(
        learning_rate=hparams.learning_rate,
        global_step=global_step,
        decay_steps=hparams.learning_rate_decay_steps,
        end_learning_rate=hparams.learning_rate_end_factor * hparams.learning_rate,
        power=hparams.learning_rate_decay_power,
    )
    return tf.compat.v1.train.AdamOptimizer(learning_rate=learning_rate)


def _create_train_op(tf, total_loss, optimizer, global_step):
    """tf.contrib.training.create_train_op as tf_slim's learning.create_train_op keeps it:
    a tensor (the loss, checked) run after the update ops and the gradients' update."""
    update_ops = set(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS))
    with tf.control_dependencies(update_ops):
        barrier = tf.no_op(name="update_barrier")
    with tf.control_dependencies([barrier]):
        total_loss = tf.identity(total_loss)
    grads = optimizer.compute_gradients(total_loss)
    grad_updates = optimizer.apply_gradients(grads, global_step=global_step)
    with tf.name_scope("train_op"):
        total_loss = tf.debugging.check_numerics(total_loss, "LossTensor is inf or nan")
        with tf.control_dependencies([grad_updates]):
            train_op = tf.identity(total_loss, name="train_op")
    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.TRAIN_OP, train_op)
    return train_op


def _astro_metrics(tf, labels, predictions, weights, batch_losses):
    """astronet/ops/metrics.py's _build_metrics for a binary model."""

    def metric_variable(name):
        return tf.compat.v1.Variable(
            initial_value=tf.zeros([], tf.float32),
            trainable=False,
            collections=[
                tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
                tf.compat.v1.GraphKeys.METRIC_VARIABLES,
            ],
            name=name,
        )

    predictions = tf.squeeze(predictions, axis=[1])
    predicted_labels = tf.cast(tf.greater(predictions, 0.5), tf.int32, name="predicted_labels")
    metrics = {}
    with tf.name_scope("metrics"):
        num_examples = metric_variable("num_examples")
        update = tf.compat.v1.assign_add(num_examples, tf.reduce_sum(weights))
        metrics["num_examples"] = (num_examples.read_value(), update)
        num_correct = metric_variable("num_correct")
        is_correct = weights * tf.cast(tf.equal(labels, predicted_labels), tf.float32)
        update = tf.compat.v1.assign_add(num_correct, tf.reduce_sum(is_correct))
        metrics["accuracy/num_correct"] = (num_correct.read_value(), update)
        accuracy = tf.compat.v1.div(num_correct, num_examples, name="accuracy")
        metrics["accuracy/accuracy"] = (accuracy, tf.no_op())
        metrics["losses/weighted_cross_entropy"] = tf.compat.v1.metrics.mean(
            batch_losses, weights=weights, name="cross_entropy_loss"
        )
        for gold in range(2):
            for pred in range(2):
                name = f"confusion_matrix/label_{gold}_pred_{pred}"
                count = metric_variable(name)
                is_equal = tf.logical_and(tf.equal(labels, gold), tf.equal(predicted_labels, pred))
                update = tf.compat.v1.assign_add(
                    count, tf.reduce_sum(weights * tf.cast(is_equal, tf.float32))
                )
                metrics[name] = (count.read_value(), update)
        metrics["auc"] = tf.compat.v1.metrics.auc(
            tf.cast(labels, dtype=tf.bool), predictions, weights=weights, num_thresholds=1000
        )
    return metrics


class _ModelFn:
    """estimator_util._ModelFn: a callable model_fn; labels may come in the features."""

    def __init__(self, model_class, hparams):
        self._model_class = model_class
        self._base_hparams = hparams

    def __call__(self, features, labels, mode, params):
        import tensorflow as tf

        hparams = copy.deepcopy(self._base_hparams)
        if "batch_size" in params:
            hparams.batch_size = params["batch_size"]
        if "labels" in features:
            if labels is not None and labels is not features["labels"]:
                raise ValueError(
                    "Conflicting labels: features['labels'] = {}, labels = {}".format(
                        features["labels"], labels
                    )
                )
            labels = features.pop("labels")
        model = self._model_class(features, labels, hparams, mode)
        model.build()
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = _create_optimizer(tf, hparams, model.global_step)
            train_op = _create_train_op(tf, model.total_loss, optimizer, model.global_step)
        eval_metrics = None
        if mode == tf.estimator.ModeKeys.EVAL:
            weights = model.weights
            if weights is None:
                weights = tf.ones_like(model.labels, dtype=tf.float32)
            eval_metrics = _astro_metrics(
                tf, model.labels, model.predictions, weights, model.batch_losses
            )
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=model.predictions,
            loss=getattr(model, "total_loss", None),
            train_op=train_op,
            eval_metric_ops=eval_metrics,
        )


def _runner_evaluate(tf, estimator, eval_args):
    """tf_util/estimator_runner.py's evaluate."""
    global_step, values = None, {}
    checkpoint = estimator.latest_checkpoint()
    if not checkpoint:
        tf.compat.v1.logging.info("No checkpoint in %s, skipping evaluation.", estimator.model_dir)
        return global_step, values
    tf.compat.v1.logging.info("Starting evaluation on checkpoint %s", checkpoint)
    try:
        for args in eval_args:
            values[args["name"]] = estimator.evaluate(checkpoint_path=checkpoint, **args)
            if global_step is None:
                global_step = values[args["name"]].get("global_step")
    except tf.errors.NotFoundError:
        tf.compat.v1.logging.info(
            "Checkpoint %s no longer exists, skipping evaluation.", checkpoint
        )
    return global_step, values


def _continuous_train_and_eval(tf, estimator, train_input_fn, eval_args, train_steps=None):
    """tf_util/estimator_runner.py's continuous_train_and_eval (local_eval_frequency=None)."""
    while True:
        global_step, values = _runner_evaluate(tf, estimator, eval_args)
        yield global_step, values
        global_step = global_step or 0
        if train_steps and global_step >= train_steps:
            break
        steps = train_steps - global_step if train_steps else None
        tf.compat.v1.logging.info("Starting training at global step %d", global_step)
        estimator.train(train_input_fn, steps=steps)


@program
def astronet_train_and_predict(tf, workdir):
    train_file = _write_light_curves(tf, os.path.join(workdir, "train-00000-of-00001"), 8, 1)
    val_file = _write_light_curves(tf, os.path.join(workdir, "val-00000-of-00001"), 6, 2)
    model_dir = os.path.join(workdir, "astronet")
    hparams = ConfigDict(copy.deepcopy(dict(ASTRO_HPARAMS)))
    model_fn = _ModelFn(AstroFCModel, hparams)
    start = _fixed_start(
        tf,
        workdir,
        lambda features, labels, mode: model_fn(features, labels, mode, {}),
        lambda: {
            "time_series_features": {
                "global_view": tf.zeros([4, 8, 1]),
                "local_view": tf.zeros([4, 4, 1]),
            }
        },
        lambda: tf.zeros([4], tf.int32),
    )
    run_config = copy.deepcopy(tf.estimator.RunConfig(keep_checkpoint_max=1))
    with _info_lines() as lines:
        estimator = tf.estimator.Estimator(
            model_fn=model_fn,
            model_dir=model_dir,
            config=run_config,
            params={"batch_size": hparams.batch_size},
            warm_start_from=start,
        )
        train_input_fn = _InputFn(train_file, ASTRO_INPUTS, tf.estimator.ModeKeys.TRAIN, 0, 1)
        eval_input_fn = _InputFn(val_file, ASTRO_INPUTS, tf.estimator.ModeKeys.EVAL)
        yields = list(
            _continuous_train_and_eval(
                tf, estimator, train_input_fn, [{"name": "val", "input_fn": eval_input_fn}], 4
            )
        )
        features = {
            "global_view": _palindrome(-np.linspace(0.5, 1.0, 4))[None].astype(np.float32),
            "local_view": _palindrome(-np.linspace(0.6, 1.0, 2))[None].astype(np.float32),
        }

        def input_fn():
            return tf.data.Dataset.from_tensors({"time_series_features": features})

        printed = []
        for predictions in estimator.predict(input_fn):
            assert len(predictions) == 1
            printed.append(float(predictions[0]))
    return {
        "exact": {
            "steps": [None if step is None else int(step) for step, _ in yields],
            "metric_keys": [sorted(values.get("val", {})) for _, values in yields],
            "counts": [
                {
                    k: float(v)
                    for k, v in values.get("val", {}).items()
                    if "/label_" in k or "num_" in k
                }
                for _, values in yields
            ],
            "listing": listing(model_dir),
            "variables": sorted(estimator.get_variable_names()),
            "lines": _kept_lines(
                lines,
                workdir,
                "checkpoint",
                "Building input",
                "Starting training",
                "Loss for",
                "Saving dict",
                "Warm-starting",
                "Evaluation",
            ),
            "prediction_type": [type(p).__name__ for p in printed],
        },
        "close": {
            "metrics": {str(step): _floats(values["val"]) for step, values in yields if values},
            "printed": printed,
        },
    }


# --- make_saveable_from_iterator: the input's position saved in the model's checkpoint ---


@program
def saveable_iterator_in_model_checkpoint(tf, workdir):
    model_dir = os.path.join(workdir, "model")

    def input_fn():
        iterator = tf.compat.v1.data.make_one_shot_iterator(_rows_input_fn())
        saveable = tf.data.experimental.make_saveable_from_iterator(iterator)
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVEABLE_OBJECTS, saveable)
        return iterator.get_next()

    est = tf.estimator.Estimator(rows_model_fn, model_dir=model_dir)
    rounds = []
    with _info_lines() as lines:
        for _ in range(3):
            est.train(input_fn, steps=2)
            metrics = est.evaluate(_eval_input_fn)
            rounds.append([int(metrics["global_step"]), int(est.get_variable_value("last_row"))])
    reader = tf.train.load_checkpoint(model_dir)
    return {
        "exact": {
            "rounds": rounds,
            "checkpoint_keys": sorted(reader.get_variable_to_shape_map()),
            "variables": sorted(est.get_variable_names()),
            "listing": listing(model_dir),
            "lines": _kept_lines(lines, workdir, "Saving checkpoints", "Restoring"),
        },
        "close": {"loss": float(metrics["loss"])},
    }


# --- a queue of the input_fn's own, filled by a tf.compat.v1.train.QueueRunner ---


@program
def queue_runner_input_fn(tf, workdir):
    model_dir = os.path.join(workdir, "model")
    x = (np.arange(12, dtype=np.float32) % 6) / 6.0

    def input_fn():
        queue = tf.queue.FIFOQueue(capacity=24, dtypes=[tf.float32, tf.int64], shapes=[[], []])
        enqueue = queue.enqueue_many([tf.constant(x), tf.range(12, dtype=tf.int64)])
        tf.compat.v1.train.add_queue_runner(tf.compat.v1.train.QueueRunner(queue, [enqueue]))
        values, rows = queue.dequeue_many(4)
        return {"x": values, "row": rows}, values * 2.0

    est = tf.estimator.Estimator(rows_model_fn, model_dir=model_dir)
    with _info_lines() as lines:
        est.train(input_fn, steps=3)
        metrics = est.evaluate(input_fn, steps=2)
    predictions = list(itertools.islice(est.predict(input_fn, yield_single_examples=False), 1))
    return {
        "exact": {
            "evaluate_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "listing": listing(model_dir),
            "lines": _kept_lines(lines, workdir, "Saving checkpoints", "loss = ", "Loss for"),
            "predicted_shape": [list(p["y"].shape) for p in predictions],
        },
        "close": {"w": float(est.get_variable_value("w")), "loss": float(metrics["loss"])},
    }
