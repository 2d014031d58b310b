"""Programs in the shape of tensorflow/models' `official/r1/resnet` (cifar10_main.py,
resnet_run_loop.py, resnet_model.py) after `tf_upgrade_v2`, shrunk to 8x8x3 images and
a ResNet of two blocks.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder and
returns what the sample's user sees, in the parts `tests/tf1_sample_programs.py`
describes (`exact`, `close`, `loose`); `tests/test_resnet_r1_sample.py` compares them
with 2.15's recording (`tests/tf215/record_family.py resnet_r1_programs`, into
`tests/data/tf215/resnet_r1.json`).  Every random op has its own seed (an unseeded
TF1 op's seed follows the graph's op count, which differs between the releases), so
trained values are compared closely.

What the sample does that the other sample programs do not: a TF1 `model_fn` under
`RunConfig(train_distribute=...)` (the sample's strategy on CPUs: `OneDeviceStrategy`,
or `MirroredStrategy` over one device) with an `input_fn` taking `input_context`; a
`custom_getter` variable scope; fused batch norm through `UPDATE_OPS` grouped with the
minimize op; `piecewise_constant`; `compute_gradients`/`apply_gradients` with a loss
scale and weight decay over `trainable_variables()`; `metrics.mean(in_top_k)`; an
`ExamplesPerSecondHook`-like hook on `SecondOrStepTimer`; `ProfilerHook`; a warm start
of all but the dense layer (fine-tuning only it); the train/evaluate cycles of
`resnet_main`; a tensor receiver's export by both export spellings, loaded and called.
"""

import os
import re

import numpy as np

from tests.tf1_fidelity_programs import LOG_MARKERS, _info_lines, _normalized, _raised
from tests.tf1_sample_programs import _floats, _messages, _shape_of_message, _summary_kinds
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "resnet_r1.json")
SEED = 7
HEIGHT = WIDTH = 8
NUM_CHANNELS = 3
NUM_CLASSES = 10
NUM_IMAGES = 48
BATCH_SIZE = 8
_BATCH_NORM_DECAY = 0.997
_BATCH_NORM_EPSILON = 1e-5
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")
# [mode, whether a strategy was in scope] of each model_fn call (params are deep-copied
# by 2.15, so the program's own list, not one in params).
MODEL_FN_SEEN = []


# ------------------------------------------------------------------ cifar10_main.py's data
def write_records(path, n, seed):
    """A CIFAR-10-format binary file: per image a label byte, then its bytes depth-major."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, NUM_CLASSES, size=n).astype(np.uint8)
    images = rng.randint(0, 256, size=(n, NUM_CHANNELS, HEIGHT, WIDTH)).astype(np.uint8)
    for i, label in enumerate(labels):  # a class brightens its own channel's rows
        images[i, label % NUM_CHANNELS, label % HEIGHT, :] = 255
    with open(path, "wb") as f:
        for label, image in zip(labels, images, strict=True):
            f.write(bytes([label]) + image.tobytes())
    return path


def parse_record(raw_record, is_training, dtype):
    """cifar10_main.parse_record: the label byte, the image transposed to HWC."""
    import tensorflow as tf

    record_vector = tf.io.decode_raw(raw_record, tf.uint8)
    label = tf.cast(record_vector[0], tf.int32)
    depth_major = tf.reshape(record_vector[1:], [NUM_CHANNELS, HEIGHT, WIDTH])
    image = tf.cast(tf.transpose(a=depth_major, perm=[1, 2, 0]), tf.float32)
    image = preprocess_image(image, is_training)
    return tf.cast(image, dtype), label


def preprocess_image(image, is_training):
    """cifar10_main.preprocess_image: pad, random crop and flip (seeded), standardize."""
    import tensorflow as tf

    if is_training:
        image = tf.image.resize_with_crop_or_pad(image, HEIGHT + 2, WIDTH + 2)
        image = tf.image.random_crop(image, [HEIGHT, WIDTH, NUM_CHANNELS], seed=SEED)
        image = tf.image.random_flip_left_right(image, seed=SEED)
    return tf.image.per_image_standardization(image)


def input_fn(
    is_training, filename, batch_size, num_epochs=1, dtype=None, input_context=None, seen=None
):
    """cifar10_main.input_fn with resnet_run_loop.process_record_dataset's steps."""
    import tensorflow as tf

    dtype = dtype or tf.float32
    dataset = tf.data.FixedLengthRecordDataset(filename, 1 + HEIGHT * WIDTH * NUM_CHANNELS)
    if seen is not None:
        seen.append(_context(input_context))
    if input_context:
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    options = tf.data.Options()
    options.threading.max_intra_op_parallelism = 1
    dataset = dataset.with_options(options)
    dataset = dataset.prefetch(buffer_size=batch_size)
    if is_training:
        dataset = dataset.shuffle(buffer_size=NUM_IMAGES, seed=SEED)
    dataset = dataset.repeat(num_epochs)
    dataset = dataset.map(lambda value: parse_record(value, is_training, dtype))
    dataset = dataset.batch(batch_size, drop_remainder=False)
    return dataset.prefetch(buffer_size=tf.data.experimental.AUTOTUNE)


def _context(input_context):
    if input_context is None:
        return None
    return [
        input_context.num_input_pipelines,
        input_context.input_pipeline_id,
        input_context.num_replicas_in_sync,
    ]


# ------------------------------------------------------------------ resnet_model.py
class _Seeds:
    """A seed per initializer, in the order the layers are made."""

    def __init__(self):
        self.next = SEED

    def __call__(self):
        self.next += 1
        return self.next


def batch_norm(inputs, training):
    import tensorflow as tf

    return tf.compat.v1.layers.batch_normalization(
        inputs=inputs,
        axis=3,
        momentum=_BATCH_NORM_DECAY,
        epsilon=_BATCH_NORM_EPSILON,
        center=True,
        scale=True,
        training=training,
        fused=True,
    )


def fixed_padding(inputs, kernel_size):
    import tensorflow as tf

    pad_total = kernel_size - 1
    pad_beg = pad_total // 2
    pad_end = pad_total - pad_beg
    return tf.pad(tensor=inputs, paddings=[[0, 0], [pad_beg, pad_end], [pad_beg, pad_end], [0, 0]])


def conv2d_fixed_padding(inputs, filters, kernel_size, strides, seeds):
    import tensorflow as tf

    if strides > 1:
        inputs = fixed_padding(inputs, kernel_size)
    return tf.compat.v1.layers.conv2d(
        inputs=inputs,
        filters=filters,
        kernel_size=kernel_size,
        strides=strides,
        padding=("SAME" if strides == 1 else "VALID"),
        use_bias=False,
        kernel_initializer=tf.compat.v1.variance_scaling_initializer(seed=seeds()),
    )


def building_block_v1(inputs, filters, training, projection_shortcut, strides, seeds):
    import tensorflow as tf

    shortcut = inputs
    if projection_shortcut is not None:
        shortcut = batch_norm(projection_shortcut(inputs), training)
    inputs = conv2d_fixed_padding(inputs, filters, 3, strides, seeds)
    inputs = tf.nn.relu(batch_norm(inputs, training))
    inputs = batch_norm(conv2d_fixed_padding(inputs, filters, 3, 1, seeds), training)
    return tf.nn.relu(inputs + shortcut)


def block_layer(inputs, filters, strides, training, name, seeds):
    import tensorflow as tf

    def projection_shortcut(inputs):
        return conv2d_fixed_padding(inputs, filters, 1, strides, seeds)

    inputs = building_block_v1(inputs, filters, training, projection_shortcut, strides, seeds)
    return tf.identity(inputs, name)


class Model:
    """resnet_model.Model, v1 blocks: its fp16 custom getter keeps variables in float32."""

    def __init__(self, num_classes, dtype):
        self.num_classes = num_classes
        self.dtype = dtype

    def _custom_dtype_getter(self, getter, name, shape=None, dtype=None, *args, **kwargs):
        import tensorflow as tf

        if dtype == tf.float16:
            var = getter(name, shape, tf.float32, *args, **kwargs)
            return tf.cast(var, dtype=dtype, name=name + "_cast")
        return getter(name, shape, dtype, *args, **kwargs)

    def __call__(self, inputs, training):
        import tensorflow as tf

        seeds = _Seeds()
        with tf.compat.v1.variable_scope("resnet_model", custom_getter=self._custom_dtype_getter):
            inputs = conv2d_fixed_padding(inputs, 4, 3, 1, seeds)
            inputs = tf.identity(inputs, "initial_conv")
            inputs = tf.nn.relu(batch_norm(inputs, training))
            for i, (filters, strides) in enumerate([(4, 1), (8, 2)]):
                inputs = block_layer(
                    inputs, filters, strides, training, f"block_layer{i + 1}", seeds
                )
            inputs = tf.reduce_mean(input_tensor=inputs, axis=[1, 2], keepdims=True)
            inputs = tf.identity(inputs, "final_reduce_mean")
            inputs = tf.squeeze(inputs, [1, 2])
            inputs = tf.compat.v1.layers.dense(
                inputs=inputs,
                units=self.num_classes,
                kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=seeds()),
            )
            return tf.identity(inputs, "final_dense")


# ------------------------------------------------------------------ resnet_run_loop.py
def learning_rate_with_decay(batch_size, batch_denom, num_images, boundary_epochs, decay_rates):
    """resnet_run_loop.learning_rate_with_decay, without warm-up: piecewise constant."""
    import tensorflow as tf

    initial_learning_rate = 0.1 * batch_size / batch_denom
    batches_per_epoch = num_images / batch_size
    boundaries = [int(batches_per_epoch * epoch) for epoch in boundary_epochs]
    vals = [initial_learning_rate * decay for decay in decay_rates]

    def learning_rate_fn(global_step):
        return tf.compat.v1.train.piecewise_constant(global_step, boundaries, vals)

    return learning_rate_fn


def resnet_model_fn(features, labels, mode, params):
    """resnet_run_loop.resnet_model_fn as cifar10_model_fn calls it."""
    import tensorflow as tf

    MODEL_FN_SEEN.append([mode, tf.distribute.has_strategy()])
    dtype = params["dtype"]
    features = tf.reshape(features, [-1, HEIGHT, WIDTH, NUM_CHANNELS])
    tf.compat.v1.summary.image("images", features, max_outputs=2)
    logits = Model(NUM_CLASSES, dtype)(features, mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.cast(logits, tf.float32)
    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=predictions,
            export_outputs={"predict": tf.estimator.export.PredictOutput(predictions)},
        )
    cross_entropy = tf.compat.v1.losses.sparse_softmax_cross_entropy(logits=logits, labels=labels)
    tf.identity(cross_entropy, name="cross_entropy")
    tf.compat.v1.summary.scalar("cross_entropy", cross_entropy)
    l2_loss = params["weight_decay"] * tf.add_n(
        [
            tf.nn.l2_loss(tf.cast(v, tf.float32))
            for v in tf.compat.v1.trainable_variables()
            if "batch_normalization" not in v.name
        ]
    )
    tf.compat.v1.summary.scalar("l2_loss", l2_loss)
    loss = cross_entropy + l2_loss
    train_op = None
    if mode == tf.estimator.ModeKeys.TRAIN:
        train_op = _train_op(tf, loss, params)
    accuracy = tf.compat.v1.metrics.accuracy(labels, predictions["classes"])
    accuracy_top_5 = tf.compat.v1.metrics.mean(
        tf.nn.in_top_k(predictions=logits, targets=labels, k=5, name="top_5_op")
    )
    metrics = {"accuracy": accuracy, "accuracy_top_5": accuracy_top_5}
    tf.identity(accuracy[1], name="train_accuracy")
    tf.identity(accuracy_top_5[1], name="train_accuracy_top_5")
    tf.compat.v1.summary.scalar("train_accuracy", accuracy[1])
    tf.compat.v1.summary.scalar("train_accuracy_top_5", accuracy_top_5[1])
    return tf.estimator.EstimatorSpec(
        mode=mode, predictions=predictions, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def _train_op(tf, loss, params):
    """The sample's TRAIN branch: piecewise constant Momentum, a loss scale's gradients
    scaled back, the dense layer's alone when fine-tuning, UPDATE_OPS grouped after."""
    global_step = tf.compat.v1.train.get_or_create_global_step()
    learning_rate = learning_rate_with_decay(
        batch_size=BATCH_SIZE,
        batch_denom=8,
        num_images=NUM_IMAGES,
        boundary_epochs=[1, 2],
        decay_rates=[1, 0.5, 0.1],
    )(global_step)
    tf.identity(learning_rate, name="learning_rate")
    tf.compat.v1.summary.scalar("learning_rate", learning_rate)
    optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate=learning_rate, momentum=0.9)
    loss_scale = params["loss_scale"]
    grad_vars = optimizer.compute_gradients(loss * loss_scale)
    if params["fine_tune"]:
        grad_vars = [(g, v) for g, v in grad_vars if "dense" in v.name]
    grad_vars = [(grad / loss_scale, var) for grad, var in grad_vars]
    minimize_op = optimizer.apply_gradients(grad_vars, global_step)
    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    return tf.group(minimize_op, update_ops)


class ExamplesPerSecondHook:
    """official/utils/logs/hooks.ExamplesPerSecondHook's shape, made a SessionRunHook
    of the `tf` given: the steps its timer triggered on, and what it saw."""

    def __new__(cls, tf, batch_size, every_n_steps):
        class Hook(tf.compat.v1.train.SessionRunHook):
            def __init__(self):
                self._timer = tf.compat.v1.train.SecondOrStepTimer(every_steps=every_n_steps)
                self._batch_size = batch_size
                self.triggered, self.global_step_type = [], None

            def begin(self):
                self._global_step_tensor = tf.compat.v1.train.get_global_step()
                if self._global_step_tensor is None:
                    raise RuntimeError("Global step should be created to use StepCounterHook.")
                self.global_step_type = type(self._global_step_tensor).__name__

            def before_run(self, run_context):
                return tf.compat.v1.train.SessionRunArgs(self._global_step_tensor)

            def after_run(self, run_context, run_values):
                global_step = run_values.results
                if self._timer.should_trigger_for_step(global_step) and global_step > 0:
                    elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(
                        global_step
                    )
                    if elapsed_time is not None:
                        self.triggered.append([int(global_step), int(elapsed_steps)])

        return Hook()


def _strategy(tf, name):
    """distribution_utils.get_distribution_strategy's choice on CPUs."""
    if name == "one_device":
        return tf.distribute.OneDeviceStrategy("device:CPU:0")
    if name == "mirrored":
        return tf.distribute.MirroredStrategy(devices=["device:CPU:0"])
    return None


def _params(tf, **kwargs):
    return {
        "batch_size": BATCH_SIZE,
        "dtype": tf.float32,
        "loss_scale": 1,
        "weight_decay": 2e-4,
        "fine_tune": False,
        **kwargs,
    }


def _variables(classifier):
    """Checkpoint names, and a scalar summary of each value (sum, sum of squares)."""
    names = classifier.get_variable_names()
    values = {}
    for name in names:
        value = np.asarray(classifier.get_variable_value(name), dtype=np.float64)
        values[f"{name}/sum"] = float(value.sum())
        values[f"{name}/sum_sq"] = float((value**2).sum())
    return names, values


def build_tensor_serving_input_receiver_fn(tf, shape, dtype=None, batch_size=1):
    """official/r1/utils/export's receiver: one placeholder named input_tensor."""

    def serving_input_receiver_fn():
        features = tf.compat.v1.placeholder(
            dtype=dtype or tf.float32, shape=[batch_size, *shape], name="input_tensor"
        )
        return tf.estimator.export.TensorServingInputReceiver(
            features=features, receiver_tensors=features
        )

    return serving_input_receiver_fn


def _served(tf, export_dir, images):
    """What the export's serving_default gives for `images`, loaded as TF2 loads it."""
    loaded = tf.saved_model.load(export_dir)
    signature = loaded.signatures["serving_default"]
    outputs = signature(tf.constant(images))
    return sorted(signature.structured_input_signature[1]), {
        k: np.asarray(v).tolist() for k, v in sorted(outputs.items())
    }


def _run_config(tf, strategy, eval_strategy=None):
    session_config = tf.compat.v1.ConfigProto(
        inter_op_parallelism_threads=0, intra_op_parallelism_threads=0, allow_soft_placement=True
    )
    return tf.estimator.RunConfig(
        train_distribute=strategy,
        eval_distribute=eval_strategy,
        session_config=session_config,
        save_checkpoints_secs=60 * 60 * 24,
        save_checkpoints_steps=None,
        tf_random_seed=SEED,
    )


def _cycles(tf, classifier, files, hooks, train_epochs, epochs_between_evals, seen):
    """resnet_main's loop: train `epochs_between_evals` epochs, evaluate, again."""
    n_loops = -(-train_epochs // epochs_between_evals)
    schedule = [epochs_between_evals for _ in range(n_loops)]
    schedule[-1] = train_epochs - sum(schedule[:-1])
    results = []
    for num_train_epochs in schedule:
        classifier.train(
            input_fn=lambda input_context=None, epochs=num_train_epochs: input_fn(
                True, files[0], BATCH_SIZE, epochs, input_context=input_context, seen=seen
            ),
            hooks=hooks,
            max_steps=None,
        )
        results.append(
            classifier.evaluate(input_fn=lambda: input_fn(False, files[1], BATCH_SIZE), steps=None)
        )
    return results


def _cifar10_folders(workdir, seed):
    """[train file, test file], the model_dir, a fresh list for the input contexts (and
    MODEL_FN_SEEN emptied)."""
    files = [
        write_records(os.path.join(workdir, "data_batch_1.bin"), NUM_IMAGES, seed),
        write_records(os.path.join(workdir, "test_batch.bin"), 16, seed + 1),
    ]
    MODEL_FN_SEEN.clear()
    return files, os.path.join(workdir, "cifar10_model"), []


def cifar10_main(tf, workdir, strategy_name, eval_distribute=False, export=False):
    """cifar10_main.main -> resnet_main: two cycles of an epoch each under the sample's
    strategy, hooks as hooks_helper made them, predict; with `export`, both exports
    served (they build no strategy's graph)."""
    files, model_dir, contexts = _cifar10_folders(workdir, 0)
    strategy = _strategy(tf, strategy_name)
    config = _run_config(tf, strategy, strategy if eval_distribute else None)
    params = _params(tf)
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn, model_dir=model_dir, config=config, params=params
    )
    tensors_to_log = {
        "learning_rate": "learning_rate",
        "cross_entropy": "cross_entropy",
        "train_accuracy": "train_accuracy",
    }
    examples_hook = ExamplesPerSecondHook(tf, BATCH_SIZE, every_n_steps=2)
    hooks = [tf.estimator.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=2), examples_hook]
    # hooks_helper's ProfilerHook, made eagerly as the sample makes it (2.15: refused).
    profiler = _raised(lambda: tf.compat.v1.train.ProfilerHook(save_steps=4, output_dir=model_dir))
    with _info_lines() as lines:
        results = _cycles(tf, classifier, files, hooks, 2, 1, contexts)
    rows = list(classifier.predict(input_fn=lambda: input_fn(False, files[1], BATCH_SIZE)))
    names, values = _variables(classifier)
    exports, served = {}, {}
    if export:
        exports, served = _exports(tf, classifier, model_dir, config, params, workdir)
    logged = _messages(lines, "cross_entropy = ")
    return {
        "exact": {
            "eval_keys": [list(result) for result in results],
            "global_steps": [int(result["global_step"]) for result in results],
            "model_fn_seen": list(MODEL_FN_SEEN),
            "input_contexts": contexts,
            "logged": [_shape_of_message(message) for message in logged],
            "examples_per_second": [examples_hook.triggered, examples_hook.global_step_type],
            "loss_steps": [
                int(m) for m in re.findall(r"step = (\d+)", " ".join(_messages(lines, "loss = ")))
            ],
            "checkpoint_lines": [
                _NUMBER.sub("N", line.replace(model_dir, "<model_dir>"))
                for line in _messages(lines, "Saving checkpoints for")
            ],
            "predictions": structure(rows),
            "count": len(rows),
            "files": listing(model_dir),
            "train_tags": sorted(event_tags(model_dir)),
            "train_summaries": _summary_kinds(tf, model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "variables": names,
            "exports": exports,
            "lines": _marked(lines, workdir),
            "profiler_hook": profiler and profiler[:1],
        },
        "close": {
            **_floats({f"eval{i}/{k}": v for i, r in enumerate(results) for k, v in r.items()}),
            **values,
            **{f"logged/{i}": _numbers(m) for i, m in enumerate(logged)},
            "predictions": [row["probabilities"].tolist() for row in rows[:4]],
            **{f"served/{key}": value for key, value in served.items()},
        },
    }


def _marked(lines, workdir):
    """The Estimator's INFO lines of the train/evaluate cycles (tf1_fidelity_programs'
    markers), numbers and the folder replaced, each once in a row."""
    marked = []
    for line in lines:
        if any(marker in line for marker in LOG_MARKERS):
            normalized = _normalized(line, workdir)
            if not marked or marked[-1] != normalized:
                marked.append(normalized)
    return marked


def _numbers(message):
    return [float(m.group(0)) for m in _NUMBER.finditer(message.split(" (")[0])]


def _exports(tf, classifier, model_dir, config, params, workdir):
    """The sample's export_savedmodel (on tf.compat.v1.estimator's class: tf.estimator's
    has none) with a receiver of any batch, and export_saved_model of a fixed batch."""
    shape = [HEIGHT, WIDTH, NUM_CHANNELS]
    v1_classifier = tf.compat.v1.estimator.Estimator(
        model_fn=resnet_model_fn, model_dir=model_dir, config=config, params=params
    )
    v1_dir = v1_classifier.export_savedmodel(
        os.path.join(workdir, "export_v1"),
        build_tensor_serving_input_receiver_fn(tf, shape, batch_size=None, dtype=tf.float32),
        strip_default_attrs=True,
    )
    v2_dir = classifier.export_saved_model(
        os.path.join(workdir, "export_v2"),
        build_tensor_serving_input_receiver_fn(tf, shape, batch_size=4),
    )
    images = np.linspace(-1, 1, 4 * HEIGHT * WIDTH * NUM_CHANNELS, dtype=np.float32)
    images = images.reshape([4, *shape])
    v1_inputs, v1_served = _served(tf, v1_dir.decode(), images)
    v2_inputs, v2_served = _served(tf, v2_dir.decode(), images)
    exports = {
        "v1": [signatures(v1_dir.decode()), v1_inputs, listing(v1_dir.decode())],
        "v2": [signatures(v2_dir.decode()), v2_inputs, listing(v2_dir.decode())],
    }
    served = {
        f"{name}/{key}": value
        for name, outputs in (("v1", v1_served), ("v2", v2_served))
        for key, value in outputs.items()
    }
    return exports, served


def _train_plain(tf, workdir, name, params, steps, **settings):
    """An Estimator of resnet_model_fn trained `steps` steps on the sample's input."""
    train_file = write_records(os.path.join(workdir, f"{name}.bin"), NUM_IMAGES, 2)
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn,
        model_dir=os.path.join(workdir, name),
        config=tf.estimator.RunConfig(tf_random_seed=SEED),
        params=params,
        **settings,
    )
    classifier.train(input_fn=lambda: input_fn(True, train_file, BATCH_SIZE, None), steps=steps)
    return classifier, train_file


def fine_tune(tf, workdir):
    """--pretrained_model_checkpoint_path with --fine_tune: all but the dense layer warm
    started ('^(?!.*dense)'), the dense layer's gradients alone applied."""
    pretrained, _ = _train_plain(tf, workdir, "pretrained", _params(tf), 4)
    settings = tf.estimator.WarmStartSettings(
        pretrained.model_dir, vars_to_warm_start="^(?!.*dense)"
    )
    with _info_lines() as lines:
        tuned, train_file = _train_plain(
            tf, workdir, "tuned", _params(tf, fine_tune=True), 3, warm_start_from=settings
        )
    before = {name: pretrained.get_variable_value(name) for name in pretrained.get_variable_names()}
    unchanged = sorted(
        name
        for name in tuned.get_variable_names()
        if name in before and np.array_equal(before[name], tuned.get_variable_value(name))
    )
    names, values = _variables(tuned)
    result = tuned.evaluate(input_fn=lambda: input_fn(False, train_file, BATCH_SIZE), steps=2)
    return {
        "exact": {
            "variables": names,
            "unchanged": unchanged,
            "warm_start_lines": [
                _NUMBER.sub("N", line.replace(workdir, "<workdir>"))
                for line in _messages(lines, "Warm-start")
                if "Warm-starting variable" not in line
            ],
            "files": listing(tuned.model_dir),
        },
        "close": {**values, **_floats(result)},
    }


def fp16(tf, workdir):
    """--dtype fp16: the custom getter's float32 variables cast to float16, a loss
    scale of 128 (resnet_run_loop's default for fp16)."""
    params = _params(tf, dtype=tf.float16, loss_scale=128)

    def fp16_input_fn():
        return input_fn(True, train_file, BATCH_SIZE, None, dtype=tf.float16)

    train_file = write_records(os.path.join(workdir, "fp16.bin"), NUM_IMAGES, 3)
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn,
        model_dir=os.path.join(workdir, "fp16"),
        config=tf.estimator.RunConfig(tf_random_seed=SEED),
        params=params,
    )
    classifier.train(input_fn=fp16_input_fn, steps=3)
    result = classifier.evaluate(
        input_fn=lambda: input_fn(False, train_file, BATCH_SIZE, dtype=tf.float16), steps=2
    )
    names, values = _variables(classifier)
    dtypes = sorted({str(classifier.get_variable_value(name).dtype) for name in names})
    return {
        "exact": {"variables": names, "dtypes": dtypes, "eval_keys": list(result)},
        "loose": {**values, **_floats(result)},
    }


def cifar10_train_and_evaluate(tf, workdir):
    """resnet_main with --eval_only first (one evaluation of a fresh model_dir), then
    --use_train_and_evaluate under the CPU strategy: TrainSpec's input_fn takes
    input_context, EvalSpec's does not."""
    files, model_dir, contexts = _cifar10_folders(workdir, 4)
    config = _run_config(tf, _strategy(tf, "one_device"))
    classifier = tf.estimator.Estimator(
        model_fn=resnet_model_fn, model_dir=model_dir, config=config, params=_params(tf)
    )

    def input_fn_eval():
        return input_fn(False, files[1], BATCH_SIZE)

    with _info_lines() as lines:
        eval_only = classifier.evaluate(input_fn=input_fn_eval, steps=None)
        train_spec = tf.estimator.TrainSpec(
            input_fn=lambda input_context=None: input_fn(
                True, files[0], BATCH_SIZE, 2, input_context=input_context, seen=contexts
            ),
            max_steps=8,
        )
        eval_spec = tf.estimator.EvalSpec(input_fn=input_fn_eval)
        metrics, exported = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    names, values = _variables(classifier)
    return {
        "exact": {
            "eval_only_keys": list(eval_only),
            "eval_only_step": int(eval_only["global_step"]),
            "no_model_lines": [
                _NUMBER.sub("N", line.replace(model_dir, "<model_dir>"))
                for line in _messages(lines, "Could not find trained model")
            ],
            "metrics_keys": list(metrics),
            "global_step": int(metrics["global_step"]),
            "exported": exported,
            "model_fn_seen": list(MODEL_FN_SEEN),
            "input_contexts": contexts,
            "files": listing(model_dir),
            "variables": names,
        },
        "close": {
            **_floats({f"eval_only/{k}": v for k, v in eval_only.items()}),
            **_floats({f"final/{k}": v for k, v in metrics.items()}),
            **values,
        },
    }


PROGRAMS = {
    "cifar10_one_device": lambda tf, workdir: cifar10_main(
        tf, workdir, "one_device", eval_distribute=True, export=True
    ),
    "cifar10_mirrored": lambda tf, workdir: cifar10_main(tf, workdir, "mirrored"),
    "cifar10_train_and_evaluate": cifar10_train_and_evaluate,
    "fine_tune": fine_tune,
    "fp16": fp16,
}
