"""Public TPUEstimator programs run with `use_tpu=False` (on CPUs), as `tf_upgrade_v2` leaves
them, on tiny models and synthetic data; each keeps its sample's TPUEstimator usage:

- `efficientnet_ema`: tensorflow/tpu `models/official/efficientnet/main.py` and `utils.py`
  (mnasnet's main is the same shape): an ExponentialMovingAverage of the weights and batch
  norm's moving statistics, restored for evaluation by `scaffold_fn`'s Saver; a `host_call`
  writing tf2 summaries; `eval_metrics=(metric_fn, [labels, logits])`; a warm-up then
  staircase learning rate from the global step; its train_and_eval loop, then its eval
  mode over `checkpoints_iterator` with `archive_ckpt`; a PREDICT `EstimatorSpec` with a
  `classify` output, exported (`export_to_tpu=False`) from image bytes;
- `resnet_piecewise`: tensorflow/tpu `models/official/resnet/resnet_main.py`: TPUConfig
  (iterations_per_loop, num_shards, PER_HOST_V2), the double transpose of its input,
  `piecewise_constant`, Nesterov momentum, batch norm's UPDATE_OPS, a contrib-summary
  host_call (as tf.compat.v2.summary), `eval_on_tpu=False`, predict_batch_size, a
  TensorServingInputReceiver export;
- `albert_classifier`: google-research/albert `run_classifier.py` and `classifier_utils.py`:
  `init_from_checkpoint` in model_fn (no scaffold_fn off TPUs), its own v1 Optimizer
  (AdamWeightDecay) under a warm-up polynomial decay, TFRecords through `map_and_batch`,
  `keep_checkpoint_max=0`, every checkpoint evaluated by `checkpoint_path` (weighted
  metrics, a last short batch), worse ones removed, the best renamed `model.ckpt-best` and
  predicted from;
- `cloudml_template`: cloudml-samples `tpu/templates/tpu_estimator/trainer.py`'s TPU branch
  (params=vars(args) with its own `use_tpu`, a plain EstimatorSpec, tensor features and
  predictions, `set_shapes` with `merge_with`);
- `detection_export`: tensorflow/tpu `models/official/detection/export_saved_model.py`: a
  TPUEstimator made only to export a checkpoint (`model_dir=None`, `master='local'`,
  `export_to_tpu=False`, `checkpoint_path=`);
- `warm_start_train_and_evaluate`: a TPUEstimator warm-started from a checkpoint
  (`WarmStartSettings`) and driven by `tf.estimator.train_and_evaluate` with an exporter;
- `xlnet_classifier`: zihangdai/xlnet `run_classifier.py` and `model_utils.py` with
  `--use_tpu=False`: a plain Estimator on `configure_tpu`'s TPU RunConfig,
  `init_from_checkpoint` given variables, warm-up then polynomial decay, every kept
  checkpoint (`keep_checkpoint_max`) evaluated, `yield_single_examples` predictions;
- `dlrm_tpu_embedding`: tensorflow/tpu `models/experimental/dlrm` (NCF's
  `ncf_main.py` is the same shape): dense features in a numeric column and each
  categorical feature a TPU embedding column (`tf.compat.v1.tpu.experimental
  .embedding_column`), passed with `AdagradParameters` in an `EmbeddingConfigSpec`, which
  2.15 checked and left out off TPUs (the columns look up as embedding columns, trained
  by model_fn's Adagrad); its dot interaction, `eval_metrics`, predictions and export;
- `resnet_main_without_a_tpu`: ResNet's main with its default `--use_tpu=True` on a
  machine without a TPU: made and exported; train, evaluate and predict failing with
  2.15's RuntimeError after its look for the TPU; `eval_on_tpu=False` evaluating on the
  CPU; `num_shards=1`'s warning; what `use_tpu=True` checked when made;
- `flag_misuse`: what these programs say to misuses their flags allow;
  `tpu_config_words_and_tf_config`: the words of TPUConfig's refusals a user's test
  matches, and the TPU workers' job name TF_CONFIG's `service` gives;
  `tpu_estimator_words`: the words of TPUEstimator's and TPUEstimatorSpec's refusals.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_tpu_samples.py` with what `tests/tf215/record_family.py tpu_sample_programs`
recorded under tf.estimator 2.15 (`tests/data/tf215/tpu_samples.json`). Every weight starts
from fixed numbers (constant initializers, or a checkpoint the program writes), no input is
shuffled and nothing drops out, so values match to 1e-4.
"""

import contextlib
import itertools
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.public_sample_programs import _GREPPED, as_text, served
from tests.public_sample_programs import info_lines as grepped_lines
from tests.tpu_programs import _export_layout as meta_graphs
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, floats, listing, seen, structure

RECORDED = os.path.join(DATA_DIR, "tpu_samples.json")
# The lines users grep, and TPUEstimator's own around each call and model_fn.
GREPPED = re.compile(
    f"{_GREPPED.pattern[:-1]}|Calling model_fn|Done calling model_fn|Running \\w+ on CPU|"
    "\\w+_loop marked as finished|_TPUContext|eval_on_tpu|Reraising|Estimator's model_fn)"
)
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

IMAGE = 8  # pixels a side
CLASSES = 6  # top-5 accuracy needs more than 5


@contextlib.contextmanager
def info_lines(grepped=GREPPED):
    """The lines `grepped` finds, a function's address (`<function f at 0x7f...>`) left out."""
    with grepped_lines(grepped) as lines:
        yield lines
    lines[:] = [re.sub(r" at 0x[0-9a-f]+", "", line) for line in lines]


def _fixed(shape, seed, scale=0.3):
    return (np.random.RandomState(seed).normal(scale=scale, size=shape)).astype(np.float32)


def _images(n, seed):
    """Images whose class lights one pixel; labels int32."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, CLASSES, n).astype(np.int32)
    images = rng.uniform(0, 0.5, (n, IMAGE, IMAGE, 3)).astype(np.float32)
    images[np.arange(n), labels, labels, 0] = 2.0
    return images, labels


def _checkpoint_variables(tf, model_dir):
    return sorted(name for name, _ in tf.train.list_variables(model_dir))


def _values(rows, key):
    return np.asarray([row[key] for row in rows], np.float64).ravel().tolist()


# ------------------------------------------------------------------ efficientnet
EFFICIENTNET = {
    "train_batch_size": 8,
    "eval_batch_size": 8,
    "num_train_images": 64,
    "num_eval_images": 16,
    "iterations_per_loop": 3,
    "train_steps": 12,
    "steps_per_eval": 6,
    "base_learning_rate": 4.0,
    "lr_decay_epoch": 0.5,
    "lr_decay_factor": 0.97,
    "lr_warmup_epochs": 1,
    "moving_average_decay": 0.9999,
    "weight_decay": 1e-5,
    "label_smoothing": 0.1,
    "log_step_count_steps": 6,
}


def build_learning_rate(tf, initial_lr, global_step, steps_per_epoch, decay_epochs, factor, warmup):
    """utils.build_learning_rate('exponential'): staircase decay after a linear warm-up."""
    v1 = tf.compat.v1
    lr = v1.train.exponential_decay(
        initial_lr, global_step, steps_per_epoch * decay_epochs, factor, staircase=True
    )
    warmup_steps = int(warmup * steps_per_epoch)
    warmup_lr = initial_lr * tf.cast(global_step, tf.float32) / tf.cast(warmup_steps, tf.float32)
    return v1.cond(global_step < warmup_steps, lambda: warmup_lr, lambda: lr)


def get_ema_vars(tf):
    """utils.get_ema_vars: trainable variables and batch norm's moving statistics."""
    v1 = tf.compat.v1
    ema_vars = v1.trainable_variables() + v1.get_collection("moving_vars")
    for v in v1.global_variables():
        if "moving_mean" in v.name or "moving_variance" in v.name:
            ema_vars.append(v)
    return sorted(set(ema_vars), key=lambda v: v.name)


def conv3x3(tf, inputs, filters, seed, **kwargs):
    """A 3x3 convolution of RGB images without bias, its kernel fixed numbers."""
    kernel = tf.compat.v1.constant_initializer(_fixed([3, 3, 3, filters], seed))
    return tf.compat.v1.layers.conv2d(
        inputs, filters, 3, padding="same", use_bias=False, kernel_initializer=kernel, **kwargs
    )


def efficientnet_logits(tf, features, is_training):
    """A stem conv, batch norm (named as utils.BatchNormalization), swish, pool, head."""
    v1 = tf.compat.v1
    x = conv3x3(tf, features, 4, seed=1, name="stem/conv2d")
    x = v1.layers.batch_normalization(
        x, momentum=0.9, epsilon=1e-3, training=is_training, name="stem/tpu_batch_normalization"
    )
    x = tf.nn.swish(x)
    x = tf.reduce_mean(x, [1, 2])
    return v1.layers.dense(
        x, CLASSES, kernel_initializer=v1.constant_initializer(_fixed([4, CLASSES], 2)), name="head"
    )


def efficientnet_host_call(tf, model_dir, iterations_per_loop):
    def host_call_fn(gs, lr, ce):
        gs = gs[0]
        with (
            tf.compat.v2.summary.create_file_writer(
                model_dir, max_queue=iterations_per_loop
            ).as_default(),
            tf.compat.v2.summary.record_if(True),
        ):
            tf.compat.v2.summary.scalar("learning_rate", lr[0], step=gs)
            tf.compat.v2.summary.scalar("current_epoch", ce[0], step=gs)
            return tf.compat.v1.summary.all_v2_summary_ops()

    return host_call_fn


def top_k_metric_fn(tf):
    def metric_fn(labels, logits):
        labels = tf.argmax(labels, axis=1)
        predictions = tf.argmax(logits, axis=1)
        top_1_accuracy = tf.compat.v1.metrics.accuracy(labels, predictions)
        in_top_5 = tf.cast(tf.compat.v1.nn.in_top_k(logits, labels, 5), tf.float32)
        top_5_accuracy = tf.compat.v1.metrics.mean(in_top_5)
        return {"top_1_accuracy": top_1_accuracy, "top_5_accuracy": top_5_accuracy}

    return metric_fn


def efficientnet_train_op(tf, loss, params, flags):
    """The train op, the learning rate and the epoch, as main.py's TRAIN branch makes them."""
    v1 = tf.compat.v1
    global_step = v1.train.get_global_step()
    current_epoch = tf.cast(global_step, tf.float32) / params["steps_per_epoch"]
    scaled_lr = flags["base_learning_rate"] * (flags["train_batch_size"] / 256.0)
    learning_rate = build_learning_rate(
        tf,
        scaled_lr,
        global_step,
        params["steps_per_epoch"],
        flags["lr_decay_epoch"],
        flags["lr_decay_factor"],
        flags["lr_warmup_epochs"],
    )
    optimizer = v1.train.RMSPropOptimizer(learning_rate, 0.9, 0.9, 0.001)
    update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step)
    return train_op, learning_rate, current_epoch


def classify_spec(tf, mode, logits):
    """Both model_fns' PREDICT branch: a plain EstimatorSpec with a `classify` output."""
    predictions = {
        "classes": tf.argmax(logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    return tf.estimator.EstimatorSpec(
        mode=mode,
        predictions=predictions,
        export_outputs={"classify": tf.estimator.export.PredictOutput(predictions)},
    )


def smoothed_loss_with_weight_decay(tf, logits, onehot_labels, flags):
    """Both model_fns' loss: label-smoothed cross entropy and L2 on all but batch norm."""
    v1 = tf.compat.v1
    cross_entropy = v1.losses.softmax_cross_entropy(
        logits=logits, onehot_labels=onehot_labels, label_smoothing=flags["label_smoothing"]
    )
    decayed = [
        tf.nn.l2_loss(v) for v in v1.trainable_variables() if "batch_normalization" not in v.name
    ]
    return cross_entropy + flags["weight_decay"] * tf.add_n(decayed)


def efficientnet_model_fn(tf, flags):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        if isinstance(features, dict):
            features = features["feature"]
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        logits = efficientnet_logits(tf, features, is_training)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return classify_spec(tf, mode, logits)
        batch_size = params["batch_size"]  # noqa: F841  (as main.py reads it)
        loss = smoothed_loss_with_weight_decay(tf, logits, labels, flags)
        global_step = v1.train.get_global_step()
        ema = v1.train.ExponentialMovingAverage(
            decay=flags["moving_average_decay"], num_updates=global_step
        )
        ema_vars = get_ema_vars(tf)
        host_call = restore_vars_dict = eval_metrics = scaffold_fn = None
        if is_training:
            train_op, learning_rate, current_epoch = efficientnet_train_op(tf, loss, params, flags)
            with tf.control_dependencies([train_op]):
                train_op = ema.apply(ema_vars)
            host_call = (
                efficientnet_host_call(tf, flags["model_dir"], flags["iterations_per_loop"]),
                [tf.reshape(t, [1]) for t in (global_step, learning_rate, current_epoch)],
            )
        else:
            train_op = None
            restore_vars_dict = ema.variables_to_restore(ema_vars)

            def scaffold_fn():
                return v1.train.Scaffold(saver=v1.train.Saver(restore_vars_dict))

        if mode == tf.estimator.ModeKeys.EVAL:
            eval_metrics = (top_k_metric_fn(tf), [labels, logits])
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode,
            loss=loss,
            train_op=train_op,
            host_call=host_call,
            eval_metrics=eval_metrics,
            scaffold_fn=scaffold_fn,
        )

    return model_fn


def efficientnet_input_fn(tf, n, seed, is_training):
    def input_fn(params):
        images, labels = _images(n, seed)
        dataset = tf.data.Dataset.from_tensor_slices((images, np.eye(CLASSES)[labels]))
        dataset = dataset.map(lambda image, label: (image, tf.cast(label, tf.float32)))
        if is_training:
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True).prefetch(1)

    return input_fn


def image_bytes_serving_input_fn(tf):
    """imagenet_input.build_image_serving_input_fn, with raw float bytes for JPEGs."""

    def serving_input_fn():
        image_bytes_list = tf.compat.v1.placeholder(shape=[None], dtype=tf.string)

        def preprocess(image_bytes):
            return tf.reshape(tf.io.decode_raw(image_bytes, tf.float32), [IMAGE, IMAGE, 3])

        images = tf.compat.v1.map_fn(
            preprocess, image_bytes_list, back_prop=False, dtype=tf.float32
        )
        return tf.estimator.export.ServingInputReceiver(images, {"image_bytes": image_bytes_list})

    return serving_input_fn


def archive_ckpt(tf, ckpt_eval, ckpt_objective, ckpt_path):
    """utils.archive_ckpt: copies the best checkpoint's files under archive/."""
    gfile = tf.compat.v1.gfile
    ckpt_dir, ckpt_name = os.path.split(ckpt_path)
    saved_objective_path = os.path.join(ckpt_dir, "best_objective.txt")
    dst_dir = os.path.join(ckpt_dir, "archive")
    if gfile.Exists(dst_dir):
        gfile.DeleteRecursively(dst_dir)
    gfile.MakeDirs(dst_dir)
    for f in gfile.Glob(ckpt_path + ".*"):
        gfile.Copy(f, os.path.join(dst_dir, os.path.basename(f)), overwrite=True)
    ckpt_state = tf.compat.v1.train.generate_checkpoint_state_proto(
        dst_dir, model_checkpoint_path=ckpt_name, all_model_checkpoint_paths=[ckpt_name]
    )
    with gfile.GFile(os.path.join(dst_dir, "checkpoint"), "w") as f:
        f.write(str(ckpt_state))
    with gfile.GFile(os.path.join(dst_dir, "best_eval.txt"), "w") as f:
        f.write(f"{sorted(ckpt_eval)}")
    with gfile.GFile(saved_objective_path, "w") as f:
        f.write(f"{ckpt_objective:f}")


def efficientnet_estimator(tf, flags, **overrides):
    tpu = tf.compat.v1.estimator.tpu
    config = tpu.RunConfig(
        cluster=None,
        model_dir=flags["model_dir"],
        save_checkpoints_steps=max(4, flags["iterations_per_loop"]),
        log_step_count_steps=flags["log_step_count_steps"],
        session_config=tf.compat.v1.ConfigProto(
            graph_options=tf.compat.v1.GraphOptions(
                rewrite_options=_rewriter_config(disable_meta_optimizer=True)
            )
        ),
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["iterations_per_loop"],
            tpu_job_name=None,
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    params = {
        "steps_per_epoch": flags["num_train_images"] / flags["train_batch_size"],
        "use_bfloat16": False,
    }
    settings = {
        "use_tpu": False,
        "model_fn": efficientnet_model_fn(tf, flags),
        "config": config,
        "train_batch_size": flags["train_batch_size"],
        "eval_batch_size": flags["eval_batch_size"],
        "export_to_tpu": False,
        "params": params,
    }
    return tpu.TPUEstimator(**{**settings, **overrides})


def _rewriter_config(**kwargs):
    from tensorflow.core.protobuf import rewriter_config_pb2

    return rewriter_config_pb2.RewriterConfig(**kwargs)


def efficientnet_train_and_eval(tf, est, flags):
    """main.py's train_and_eval mode: train to each eval point, evaluate there."""
    train_input = efficientnet_input_fn(tf, flags["num_train_images"], 0, True)
    eval_input = efficientnet_input_fn(tf, flags["num_eval_images"], 1, False)
    eval_steps = flags["num_eval_images"] // flags["eval_batch_size"]
    from tensorflow.python.estimator import estimator  # (main.py's, for its private helper)

    current_step = estimator._load_global_step_from_checkpoint_dir(flags["model_dir"])
    loaded, results = [[type(current_step).__name__, int(current_step)]], []
    while current_step < flags["train_steps"]:
        next_checkpoint = min(current_step + flags["steps_per_eval"], flags["train_steps"])
        est.train(input_fn=train_input, max_steps=next_checkpoint)
        current_step = next_checkpoint
        results.append(est.evaluate(input_fn=eval_input, steps=eval_steps))
    step = estimator._load_global_step_from_checkpoint_dir(flags["model_dir"])
    return results, [*loaded, [type(step).__name__, int(step)]]


def efficientnet_eval_mode(tf, est, flags):
    """main.py's eval mode: each new checkpoint evaluated and archived if best."""
    eval_input = efficientnet_input_fn(tf, flags["num_eval_images"], 1, False)
    eval_steps = flags["num_eval_images"] // flags["eval_batch_size"]
    evaluated = []
    for ckpt in tf.compat.v1.train.checkpoints_iterator(flags["model_dir"], timeout=1):
        eval_results = est.evaluate(
            input_fn=eval_input, steps=eval_steps, checkpoint_path=ckpt, name="holdout"
        )
        archive_ckpt(tf, eval_results, eval_results["top_1_accuracy"], ckpt)
        current_step = int(os.path.basename(ckpt).split("-")[1])
        evaluated.append((current_step, eval_results))
        if current_step >= flags["train_steps"]:
            break
    return evaluated


@program
def efficientnet_ema(tf, workdir):
    flags = {**EFFICIENTNET, "model_dir": os.path.join(workdir, "model")}
    est = efficientnet_estimator(tf, flags)
    with info_lines() as lines:
        results, loaded_steps = efficientnet_train_and_eval(tf, est, flags)
        holdout = efficientnet_eval_mode(tf, est, flags)
        export_dir = as_text(
            est.export_saved_model(
                export_dir_base=os.path.join(workdir, "export"),
                serving_input_receiver_fn=image_bytes_serving_input_fn(tf),
            )
        )
    images, _ = _images(3, 2)
    image_bytes = np.array([image.tobytes() for image in images], dtype=object)
    shapes, values = served(export_dir, "classify", tags=["serve"], image_bytes=image_bytes)
    model_dir = flags["model_dir"]
    return {
        "exact": {
            "evaluate_keys": [sorted(r) for r in results],
            "global_steps": [int(r["global_step"]) for r in results],
            "holdout_steps": [step for step, _ in holdout],
            "loaded_steps": loaded_steps,
            "model_dir": listing(model_dir),
            "variables": _checkpoint_variables(tf, model_dir),
            "archive_variables": _checkpoint_variables(tf, os.path.join(model_dir, "archive")),
            "train_tags": event_tags(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "holdout_tags": event_tags(os.path.join(model_dir, "eval_holdout")),
            "export": meta_graphs(export_dir),
            "served": shapes,
            "lines": lines,
        },
        "close": {
            **{f"eval_{i}_{k}": v for i, r in enumerate(results) for k, v in floats(r).items()},
            **{f"holdout_{k}": v for k, v in floats(holdout[-1][1]).items()},
            "served_probabilities": values["probabilities"],
        },
    }


# ------------------------------------------------------------------ resnet
RESNET = {
    "train_batch_size": 8,
    "eval_batch_size": 8,
    "predict_batch_size": 4,
    "num_train_images": 48,
    "iterations_per_loop": 4,
    "num_cores": 8,
    "train_steps": 10,
    "momentum": 0.9,
    "weight_decay": 1e-4,
    "label_smoothing": 0.0,
}
MEAN_RGB = [0.25, 0.25, 0.25]
STDDEV_RGB = [0.5, 0.5, 0.5]


def resnet_network(tf, inputs, is_training):
    """A residual block: conv, batch norm, relu, a shortcut, pool, dense."""
    v1 = tf.compat.v1
    conv = conv3x3(tf, inputs, 3, seed=3)
    normed = v1.layers.batch_normalization(conv, momentum=0.9, training=is_training, fused=True)
    block = tf.nn.relu(normed + inputs)
    pooled = tf.reduce_mean(block, [1, 2])
    return v1.layers.dense(
        pooled, CLASSES, kernel_initializer=v1.constant_initializer(_fixed([3, CLASSES], 4))
    )


def resnet_host_call_fn(tf, model_dir, iterations_per_loop):
    summary = tf.compat.v2.summary  # tf.contrib.summary, as tf_upgrade_v2 leaves it

    def host_call_fn(gs, loss, lr, ce):
        gs = gs[0]
        writer = summary.create_file_writer(model_dir, max_queue=iterations_per_loop)
        with writer.as_default(), summary.record_if(True):
            summary.scalar("loss", loss[0], step=gs)
            summary.scalar("learning_rate", lr[0], step=gs)
            summary.scalar("current_epoch", ce[0], step=gs)
            return tf.compat.v1.summary.all_v2_summary_ops()

    return host_call_fn


def resnet_train(tf, loss, flags):
    """resnet_model_fn's TRAIN branch: the train op and its host_call."""
    v1 = tf.compat.v1
    global_step = v1.train.get_global_step()
    steps_per_epoch = flags["num_train_images"] / flags["train_batch_size"]
    current_epoch = tf.cast(global_step, tf.float32) / steps_per_epoch
    learning_rate = v1.train.piecewise_constant(global_step, [4, 8], [0.1, 0.05, 0.01])
    optimizer = v1.train.MomentumOptimizer(
        learning_rate=learning_rate, momentum=flags["momentum"], use_nesterov=True
    )
    update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step)
    tensors = [global_step, loss, learning_rate, current_epoch]
    host_call = (
        resnet_host_call_fn(tf, flags["model_dir"], flags["iterations_per_loop"]),
        [tf.reshape(t, [1]) for t in tensors],
    )
    return train_op, host_call


def resnet_model_fn(tf, flags):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        if isinstance(features, dict):
            features = features["feature"]
        if mode != tf.estimator.ModeKeys.PREDICT:
            features = tf.transpose(features, [3, 0, 1, 2])  # HWCN to NHWC
        features -= tf.constant(MEAN_RGB, shape=[1, 1, 3], dtype=features.dtype)
        features /= tf.constant(STDDEV_RGB, shape=[1, 1, 3], dtype=features.dtype)
        logits = resnet_network(tf, features, mode == tf.estimator.ModeKeys.TRAIN)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return classify_spec(tf, mode, logits)
        one_hot_labels = tf.one_hot(labels, CLASSES)
        loss = smoothed_loss_with_weight_decay(tf, logits, one_hot_labels, flags)
        host_call = train_op = eval_metrics = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op, host_call = resnet_train(tf, loss, flags)
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(labels, logits):
                return top_k_metric_fn(tf)(tf.one_hot(labels, CLASSES), logits)

            eval_metrics = (metric_fn, [labels, logits])
        return v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode, loss=loss, train_op=train_op, host_call=host_call, eval_metrics=eval_metrics
        )

    return model_fn


def resnet_input_fn(tf, n, seed, mode):
    """imagenet_input's input_fn: batches of params['batch_size'], transposed to HWCN
    (transpose_input) for training and evaluation."""

    def input_fn(params):
        images, labels = _images(n, seed)
        if mode == "predict":
            return tf.data.Dataset.from_tensor_slices(images).batch(params["batch_size"])
        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        if mode == "train":
            dataset = dataset.repeat()
        dataset = dataset.batch(params["batch_size"], drop_remainder=True)
        dataset = dataset.map(lambda images, labels: (tf.transpose(images, [1, 2, 3, 0]), labels))
        return dataset.prefetch(tf.data.experimental.AUTOTUNE)

    return input_fn


def resnet_serving_input_fn(tf):
    def image_serving_input_fn():
        images = tf.compat.v1.placeholder(tf.float32, [None, IMAGE, IMAGE, 3], name="images")
        return tf.estimator.export.TensorServingInputReceiver(
            features=images, receiver_tensors=images
        )

    return image_serving_input_fn


def resnet_estimator(tf, flags):
    tpu = tf.compat.v1.estimator.tpu
    config = tpu.RunConfig(
        cluster=None,
        model_dir=flags["model_dir"],
        save_checkpoints_steps=max(6, flags["iterations_per_loop"]),
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["iterations_per_loop"],
            num_shards=flags["num_cores"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    return tpu.TPUEstimator(
        use_tpu=flags.get("use_tpu", False),
        model_fn=resnet_model_fn(tf, flags),
        config=config,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
        eval_on_tpu=flags.get("eval_on_tpu", False),
        export_to_tpu=False,
    )


@program
def resnet_piecewise(tf, workdir):
    flags = {**RESNET, "model_dir": os.path.join(workdir, "model")}
    classifier = resnet_estimator(tf, flags)
    with info_lines() as lines:
        classifier.train(
            input_fn=resnet_input_fn(tf, 48, 0, "train"), max_steps=flags["train_steps"]
        )
        result = classifier.evaluate(input_fn=resnet_input_fn(tf, 24, 1, "eval"), steps=3)
        rows = list(classifier.predict(input_fn=resnet_input_fn(tf, 10, 2, "predict")))
        batches = list(
            classifier.predict(
                input_fn=resnet_input_fn(tf, 10, 2, "predict"), yield_single_examples=False
            )
        )
        export_dir = as_text(
            classifier.export_saved_model(
                export_dir_base=os.path.join(workdir, "export"),
                serving_input_receiver_fn=resnet_serving_input_fn(tf),
            )
        )
    images, _ = _images(3, 2)
    shapes, values = served(export_dir, "serving_default", tags=["serve"], input=images)
    return {
        "exact": {
            **seen(result, rows),
            "batches": [structure([batch]) for batch in batches],
            "model_dir": listing(flags["model_dir"]),
            "variables": classifier.get_variable_names(),
            "train_tags": event_tags(flags["model_dir"]),
            "eval_tags": event_tags(classifier.eval_dir()),
            "export": meta_graphs(export_dir),
            "served": shapes,
            "lines": lines,
        },
        "close": {
            **floats({k: v for k, v in result.items() if k != "global_step"}),
            "probabilities": _values(rows, "probabilities"),
            "batch_probabilities": np.concatenate([b["probabilities"] for b in batches])
            .ravel()
            .tolist(),
            "served_probabilities": values["probabilities"],
        },
    }


# What 2.15 looked for to run on TPUs (the devices' incarnations are random).
TPU_GREPPED = re.compile(
    f"{GREPPED.pattern}|Querying Tensorflow master|Failed to find TPU|num_shards==1|"
    "_is_running_on_cpu"
)
_INCARNATION = re.compile(r"(_DeviceAttributes\([^,]+, \w+, \d+, )-?\d+\)")
NO_TPU = "Cannot find any TPU cores in the system. Please double check Tensorflow master address and TPU worker(s). Available devices are (_DeviceAttributes(/job:localhost/replica:0/task:0/device:CPU:0"  # fmt: skip
NO_TPU_TOPOLOGY = "Cannot find any TPU cores in the system (master address ). This usually means the master address is incorrect or the TPU worker has some problems. Available devices: [_DeviceAttributes("  # fmt: skip


def _said(call, words):
    """[the error's type, whether its message says `words`], or None."""
    error = error_of(call)
    return error and [error[0], words in error[1]]


def use_tpu_refusals(tf, workdir):
    """What 2.15 checked when made with use_tpu=True, and a model-parallel config's error."""
    tpu = tf.compat.v1.estimator.tpu
    model_fn = resnet_model_fn(tf, RESNET)

    def made(**kwargs):
        config = tpu.RunConfig(
            model_dir=os.path.join(workdir, "refused"), tpu_config=kwargs.pop("tpu_config", None)
        )
        return tpu.TPUEstimator(
            model_fn=model_fn, config=config, use_tpu=True, **{"train_batch_size": 8, **kwargs}
        )

    parallel = tpu.TPUConfig(num_cores_per_replica=2)
    per_shard = tpu.TPUConfig(num_cores_per_replica=2, per_host_input_for_training=False)
    categorical = tf.feature_column.categorical_column_with_identity("id", 10)
    embedding = tpu.experimental.EmbeddingConfigSpec(
        feature_columns=[tf.compat.v1.tpu.experimental.embedding_column(categorical, 4)],
        optimization_parameters=tf.compat.v1.tpu.experimental.AdagradParameters(0.1),
    )
    mod = embedding._replace(partition_strategy="mod")
    return {
        "no_train_batch_size": _said(lambda: made(train_batch_size=None), "`train_batch_size` cannot be `None`"),
        "float_train_batch_size": _said(lambda: made(train_batch_size=8.0), "train_batch_size must be int, got <class 'float'>"),
        "zero_eval_batch_size": _said(lambda: made(eval_batch_size=0), "eval_batch_size must be positive, got 0"),
        "model_parallel_per_shard": _said(lambda: made(tpu_config=per_shard), "Model parallelism only supports per host input for training."),
        "model_parallel_train": _said(lambda: made(tpu_config=parallel).train(resnet_input_fn(tf, 8, 0, "train"), max_steps=1), NO_TPU_TOPOLOGY),
        "embedding_per_shard_input": _said(lambda: made(tpu_config=tpu.TPUConfig(per_host_input_for_training=False), embedding_config_spec=embedding), "Only PER_HOST_V1 and PER_HOST_V2 is supported when using TPU Embedding; got 1."),
        "embedding_mod_made": _said(lambda: made(embedding_config_spec=mod) and None, ""),
        "embedding_mod_eval_on_cpu": _said(lambda: made(embedding_config_spec=mod, eval_on_tpu=False), "Mod sharding of embedding tables not supported on CPU"),
        "reserved_params": _said(lambda: made(params={"batch_size": 8}), "['batch_size', 'context'] are reserved keys but existed in params {'batch_size': 8}."),
    }  # fmt: skip


@program
def resnet_main_without_a_tpu(tf, workdir):
    """ResNet's main run with its default --use_tpu=True where there is no TPU (after a
    --use_tpu=False run left a checkpoint): 2.15 made the TPUEstimator and exported;
    train, evaluate and predict raised its RuntimeError (a train whose max_steps was
    reached skipped); eval_on_tpu=False evaluated on the CPU; num_shards=1 warned. (The
    export comes first: after a failed predict 2.15's next export failed too, its context
    still marked for predict, which the kit does not copy.)"""
    flags = {**RESNET, "model_dir": os.path.join(workdir, "model")}
    on_tpu = {**flags, "use_tpu": True, "eval_on_tpu": True}
    train_input = resnet_input_fn(tf, 16, 0, "train")
    eval_input = resnet_input_fn(tf, 16, 1, "eval")
    with info_lines(TPU_GREPPED) as lines:
        resnet_estimator(tf, flags).train(input_fn=train_input, max_steps=2)
        classifier = resnet_estimator(tf, on_tpu)
        export_dir = as_text(
            classifier.export_saved_model(
                os.path.join(workdir, "export"), resnet_serving_input_fn(tf)
            )
        )
        errors = {
            "train": _said(lambda: classifier.train(input_fn=train_input, max_steps=4), NO_TPU),
            "evaluate": _said(lambda: classifier.evaluate(input_fn=eval_input, steps=1), NO_TPU),
            "evaluate_again": _said(lambda: classifier.evaluate(input_fn=eval_input, steps=1), NO_TPU),
            "train_reached": _said(lambda: classifier.train(input_fn=train_input, max_steps=2), NO_TPU),
            "predict": _said(lambda: list(classifier.predict(resnet_input_fn(tf, 4, 2, "predict"))), NO_TPU),
        }  # fmt: skip
        result = resnet_estimator(tf, {**on_tpu, "eval_on_tpu": False}).evaluate(
            eval_input, steps=2
        )
        one_shard = resnet_estimator(
            tf, {**flags, "num_cores": 1, "model_dir": os.path.join(workdir, "one")}
        )
        one_shard.train(input_fn=train_input, max_steps=1)
        refusals = use_tpu_refusals(tf, workdir)
    return {
        "exact": {
            "errors": errors,
            "refusals": refusals,
            "evaluate_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "export": meta_graphs(export_dir),
            "lines": [_INCARNATION.sub(r"\1<incarnation>)", line) for line in lines],
        },
        "close": floats({k: v for k, v in result.items() if k != "global_step"}),
    }


# ------------------------------------------------------------------ albert run_classifier
VOCAB, SEQ, HIDDEN, LABELS = 20, 6, 8, 2
ALBERT = {
    "train_batch_size": 8,
    "eval_batch_size": 8,
    "predict_batch_size": 4,
    "learning_rate": 0.05,
    "train_step": 12,
    "warmup_step": 3,
    "save_checkpoints_steps": 4,
    "iterations_per_loop": 1000,
    "num_tpu_cores": 8,
}


def albert_initial_values():
    return {
        "bert/embeddings/word_embeddings": _fixed([VOCAB, HIDDEN], 5, 0.5),
        "bert/pooler/dense/kernel": _fixed([HIDDEN, HIDDEN], 6, 0.5),
        "bert/pooler/dense/bias": np.zeros(HIDDEN, np.float32),
    }


def write_pretrained_checkpoint(tf, folder, values):
    """The 'pre-trained' model: a name-based checkpoint of fixed values."""
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        variables = [v1.get_variable(name, initializer=value) for name, value in values.items()]
        saver = v1.train.Saver(variables)
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            return saver.save(session, os.path.join(folder, "pretrained", "model.ckpt"))


def write_albert_records(tf, path, n, seed):
    """classifier_utils.file_based_convert_examples_to_features, on made-up token ids."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            ids = rng.randint(1, VOCAB, SEQ)
            label = int(ids[0] > VOCAB // 2)

            def ints(values):
                return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

            features = {
                "input_ids": ints(ids),
                "label_ids": ints([label]),
                "is_real_example": ints([1]),
            }
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return path


def decode_record(tf, record, name_to_features):
    """The BERT family's _decode_record: int64 features to int32 (TPUs take no int64)."""
    example = tf.io.parse_single_example(serialized=record, features=name_to_features)
    for name in list(example.keys()):
        t = example[name]
        if t.dtype == tf.int64:
            t = tf.cast(t, dtype=tf.int32)
        example[name] = t
    return example


def file_based_input_fn_builder(tf, input_file, is_training, drop_remainder, use_tpu, bsz):
    name_to_features = {
        "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }

    return records_input_fn(
        tf, input_file, name_to_features, is_training, drop_remainder, None if use_tpu else bsz
    )


def records_input_fn(tf, input_file, name_to_features, is_training, drop_remainder, bsz=None):
    """The BERT family's file-based input_fn: TFRecords through map_and_batch, in batches of
    `bsz` (params['batch_size'] without one)."""

    def input_fn(params):
        batch_size = bsz or params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()  # (its shuffle(buffer_size=100) left out: values are compared)
        return d.apply(
            tf.data.experimental.map_and_batch(
                lambda record: decode_record(tf, record, name_to_features),
                batch_size=batch_size,
                drop_remainder=drop_remainder,
            )
        )

    return input_fn


class AdamWeightDecayOptimizer:
    """optimization.AdamWeightDecayOptimizer's shape: a v1 Optimizer whose slots are
    `<var>/adam_m` and `<var>/adam_v` variables and whose step leaves the global step alone."""

    def __new__(cls, tf, learning_rate, weight_decay_rate=0.01):
        v1 = tf.compat.v1

        class Optimizer(v1.train.Optimizer):
            def __init__(self):
                super().__init__(False, "AdamWeightDecayOptimizer")

            def apply_gradients(self, grads_and_vars, global_step=None, name=None):
                assignments = []
                for grad, param in grads_and_vars:
                    param_name = param.name[: -len(":0")]
                    m, v = (
                        v1.get_variable(
                            name=f"{param_name}/adam_{slot}",
                            shape=param.shape.as_list(),
                            dtype=tf.float32,
                            trainable=False,
                            initializer=v1.zeros_initializer(),
                        )
                        for slot in "mv"
                    )
                    next_m = tf.multiply(0.9, m) + tf.multiply(0.1, grad)
                    next_v = tf.multiply(0.999, v) + tf.multiply(0.001, tf.square(grad))
                    update = next_m / (tf.sqrt(next_v) + 1e-6)
                    if "LayerNorm" not in param_name and "bias" not in param_name:
                        update += weight_decay_rate * param
                    next_param = param - learning_rate * update
                    assignments += [param.assign(next_param), m.assign(next_m), v.assign(next_v)]
                return tf.group(*assignments, name=name)

        return Optimizer()


def create_optimizer(tf, loss, init_lr, num_train_steps, num_warmup_steps):
    """optimization.create_optimizer: warm-up, polynomial decay, clipped gradients, and the
    global step advanced by the train op itself."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    learning_rate = v1.train.polynomial_decay(
        tf.constant(init_lr, tf.float32), global_step, num_train_steps, 0.0, power=1.0
    )
    global_steps_float = tf.cast(tf.cast(global_step, tf.int32), tf.float32)
    warmup_percent_done = global_steps_float / float(num_warmup_steps)
    is_warmup = tf.cast(tf.cast(global_step, tf.int32) < num_warmup_steps, tf.float32)
    learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * init_lr * warmup_percent_done
    optimizer = AdamWeightDecayOptimizer(tf, learning_rate)
    tvars = v1.trainable_variables()
    grads, _ = tf.clip_by_global_norm(v1.gradients(loss, tvars), clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars, strict=False), global_step=global_step)
    # optimization.py groups the step's increment with train_op unordered, so the learning
    # rate may read the step before or after it (a race under any TensorFlow): ordered
    # after train_op here, so the values compare.
    with tf.control_dependencies([train_op]):
        return tf.group(train_op, [global_step.assign(global_step + 1)])


def albert_model_fn_builder(tf, init_checkpoint, flags, use_tpu=False):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        input_ids, label_ids = features["input_ids"], features["label_ids"]
        is_real_example = tf.cast(features["is_real_example"], dtype=tf.float32)
        with v1.variable_scope("bert"):
            table = v1.get_variable("embeddings/word_embeddings", [VOCAB, HIDDEN])
            pooled = tf.reduce_mean(tf.nn.embedding_lookup(table, input_ids), axis=1)
            output_layer = v1.layers.dense(pooled, HIDDEN, activation=tf.tanh, name="pooler/dense")
        output_weights = v1.get_variable(
            "output_weights",
            [LABELS, HIDDEN],
            initializer=v1.constant_initializer(_fixed([LABELS, HIDDEN], 7)),
        )
        output_bias = v1.get_variable("output_bias", [LABELS], initializer=v1.zeros_initializer())
        logits = tf.nn.bias_add(
            tf.matmul(output_layer, output_weights, transpose_b=True), output_bias
        )
        probabilities = tf.nn.softmax(logits, axis=-1)
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        one_hot_labels = tf.one_hot(label_ids, depth=LABELS, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * tf.nn.log_softmax(logits), axis=-1)
        total_loss = tf.reduce_mean(per_example_loss)
        names = {name for name, _ in tf.train.list_variables(init_checkpoint)}
        assignment_map = {
            v.name[:-2]: v.name[:-2] for v in v1.trainable_variables() if v.name[:-2] in names
        }
        scaffold_fn = None
        v1.train.init_from_checkpoint(init_checkpoint, assignment_map)  # (use_tpu is False)
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = create_optimizer(
                tf, total_loss, flags["learning_rate"], flags["train_step"], flags["warmup_step"]
            )
            return v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn
            )
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = v1.metrics.accuracy(
                    labels=label_ids, predictions=predictions, weights=is_real_example
                )
                loss = v1.metrics.mean(values=per_example_loss, weights=is_real_example)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
            return v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=scaffold_fn
            )
        return v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode,
            predictions={"probabilities": probabilities, "predictions": predictions},
            scaffold_fn=scaffold_fn,
        )

    return model_fn


def albert_estimator(tf, output_dir, init_checkpoint, flags):
    tpu = tf.compat.v1.estimator.tpu
    run_config = tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=output_dir,
        save_checkpoints_steps=int(flags["save_checkpoints_steps"]),
        keep_checkpoint_max=0,
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=int(
                min(flags["iterations_per_loop"], flags["save_checkpoints_steps"])
            ),
            num_shards=flags["num_tpu_cores"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    return tpu.TPUEstimator(
        use_tpu=False,
        model_fn=albert_model_fn_builder(tf, init_checkpoint, flags),
        config=run_config,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
    )


def albert_eval_every_checkpoint(tf, estimator, output_dir, eval_input_fn):
    """run_classifier's do_eval: every checkpoint in step order evaluated, one no better
    than the best removed while a later one waits, the best renamed model.ckpt-best."""
    gfile = tf.compat.v1.gfile

    def remove_checkpoint(checkpoint_path):
        for ext in ["meta", "data-00000-of-00001", "index"]:
            gfile.Remove(checkpoint_path + f".{ext}")

    def later_checkpoints(step):
        names = gfile.ListDirectory(output_dir)
        return [n for n in names if n.endswith(".index") and int(n[:-6].split("-")[-1]) > step]

    steps_and_files = {}
    for filename in gfile.ListDirectory(output_dir):
        if filename.endswith(".index"):
            steps_and_files[int(filename[:-6].split("-")[-1])] = os.path.join(
                output_dir, filename[:-6]
            )
    best_perf, best_step, results = -1, -1, []
    for _step, checkpoint_path in sorted(steps_and_files.items()):
        result = estimator.evaluate(
            input_fn=eval_input_fn, steps=None, checkpoint_path=checkpoint_path
        )
        results.append(result)
        if result["eval_accuracy"] > best_perf:
            best_perf, best_step = result["eval_accuracy"], result["global_step"]
        elif len(later_checkpoints(result["global_step"])) > 1:
            remove_checkpoint(checkpoint_path)
    for ext in ["meta", "data-00000-of-00001", "index"]:
        tf.io.gfile.rename(
            os.path.join(output_dir, f"model.ckpt-{best_step}.{ext}"),
            os.path.join(output_dir, f"model.ckpt-best.{ext}"),
            overwrite=True,
        )
    return results


@program
def albert_classifier(tf, workdir):
    flags = ALBERT
    output_dir = os.path.join(workdir, "output")
    tf.compat.v1.gfile.MakeDirs(output_dir)
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, albert_initial_values())
    files = {
        split: write_albert_records(tf, os.path.join(output_dir, f"{split}.tf_record"), n, seed)
        for split, n, seed in (("train", 40, 0), ("eval", 20, 1), ("predict", 10, 2))
    }
    estimator = albert_estimator(tf, output_dir, init_checkpoint, flags)
    with info_lines() as lines:
        estimator.train(
            input_fn=file_based_input_fn_builder(
                tf, files["train"], True, True, False, flags["train_batch_size"]
            ),
            max_steps=flags["train_step"],
        )
        listed_after_training = listing(output_dir)
        eval_input_fn = file_based_input_fn_builder(
            tf, files["eval"], False, False, False, flags["eval_batch_size"]
        )
        results = albert_eval_every_checkpoint(tf, estimator, output_dir, eval_input_fn)
        rows = list(
            estimator.predict(
                input_fn=file_based_input_fn_builder(
                    tf, files["predict"], False, False, False, flags["predict_batch_size"]
                ),
                checkpoint_path=os.path.join(output_dir, "model.ckpt-best"),
            )
        )
    return {
        "exact": {
            "after_training": listed_after_training,
            "evaluated_steps": [int(r["global_step"]) for r in results],
            "evaluate_keys": sorted(results[0]),
            "model_dir": listing(output_dir),
            "variables": estimator.get_variable_names(),
            "predictions": structure(rows),
            "count": len(rows),
            "classes": [int(row["predictions"]) for row in rows],
            "train_tags": event_tags(output_dir),
            "eval_tags": event_tags(estimator.eval_dir()),
            "lines": lines,
        },
        "close": {
            **{f"eval_{i}_{k}": v for i, r in enumerate(results) for k, v in floats(r).items()},
            "probabilities": _values(rows, "probabilities"),
        },
    }


# ------------------------------------------------------------------ cloudml-samples template
def cloudml_model_fn(tf, calls):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        calls.append([mode, sorted(params), params["use_tpu"], params.get("batch_size")])
        global_step = v1.train.get_global_step()
        hidden = v1.layers.dense(features, 10, activation=tf.nn.relu)
        output = v1.layers.dense(hidden, 1)
        predictions = output
        loss = None
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            loss = tf.nn.l2_loss(predictions - labels)
            optimizer = v1.train.RMSPropOptimizer(learning_rate=0.05)
            if params["use_tpu"]:
                optimizer = v1.tpu.CrossShardOptimizer(optimizer)
            train_op = optimizer.minimize(loss, global_step=global_step)
        if params["use_tpu"]:
            return v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode, predictions=predictions, loss=loss, train_op=train_op
            )
        return tf.estimator.EstimatorSpec(
            mode=mode, predictions=predictions, loss=loss, train_op=train_op
        )

    return model_fn


def cloudml_train_input_fn(tf, input_params):
    def train_input_fn(params={}):  # noqa: B006  (the template's own default)
        input_params.append(sorted(params))
        x = np.random.rand(100, 5)
        w = np.random.rand(5)
        y = np.sum(x * w, axis=1)
        x_tensor = tf.constant(x, dtype=tf.float32)
        y_tensor = tf.constant(y, dtype=tf.float32)
        dataset = tf.data.Dataset.from_tensor_slices((x_tensor, y_tensor))
        batch_size = params.get("batch_size", 16)
        dataset = dataset.repeat().shuffle(32).batch(batch_size, drop_remainder=True)

        def set_shapes(features, labels):
            features_shape = features.get_shape().merge_with([batch_size, None])
            labels_shape = labels.get_shape().merge_with([batch_size])
            features.set_shape(features_shape)
            labels.set_shape(labels_shape)
            return features, labels

        dataset = dataset.map(set_shapes)
        return dataset.prefetch(tf.data.experimental.AUTOTUNE)

    return train_input_fn


@program
def cloudml_template(tf, workdir):
    """The template's TPU branch with --use-tpu left off: its shapes and names (its
    weights and data are random draws, so no values are compared)."""
    tpu = tf.compat.v1.estimator.tpu
    np.random.seed(0)
    args = {
        "model_dir": os.path.join(workdir, "model"),
        "max_steps": 6,
        "train_batch_size": 16,
        "save_checkpoints_steps": 4,
        "use_tpu": False,
        "tpu": None,
    }
    params = dict(args)
    tpu_config = tpu.TPUConfig(num_shards=8, iterations_per_loop=args["save_checkpoints_steps"])
    config = tpu.RunConfig(
        cluster=None,
        model_dir=args["model_dir"],
        tpu_config=tpu_config,
        save_checkpoints_steps=args["save_checkpoints_steps"],
        save_summary_steps=100,
    )
    input_params, model_fn_params = [], []
    estimator = tpu.TPUEstimator(
        model_fn=cloudml_model_fn(tf, model_fn_params),
        config=config,
        params=params,
        use_tpu=False,
        train_batch_size=args["train_batch_size"],
        eval_batch_size=32,
        export_to_tpu=False,
    )
    with info_lines() as lines:
        estimator.train(cloudml_train_input_fn(tf, input_params), max_steps=args["max_steps"])
        rows = list(
            itertools.islice(estimator.predict(cloudml_train_input_fn(tf, input_params)), 20)
        )
    evaluate_error = error_of(
        lambda: estimator.evaluate(cloudml_train_input_fn(tf, input_params), steps=1)
    )
    return {
        "exact": {
            "input_params": input_params,
            "model_fn_params": model_fn_params,
            "params_after": sorted(estimator.params),
            "model_dir": listing(args["model_dir"]),
            "variables": estimator.get_variable_names(),
            "train_tags": sorted(event_tags(args["model_dir"])),
            "predictions": [np.asarray(rows[0]).dtype.name, list(np.shape(rows[0]))],
            "count": len(rows),
            "evaluate_error": evaluate_error[:1] if evaluate_error else None,
            "lines": lines,
        },
        "close": {},
    }


# ------------------------------------------------------------------ detection export
def detection_serving_model_fn(tf):
    """serving_model_fn_builder's shape: features {'images', 'image_info'}, a plain
    EstimatorSpec off TPUs."""
    v1 = tf.compat.v1

    def _serving_model_fn(features, labels, mode, params):
        images = features["images"]
        scale = features["image_info"][:, 2:3]
        pooled = tf.reduce_mean(images, [1, 2]) * scale
        boxes = v1.layers.dense(pooled, 4, name="box_head")
        scores = tf.nn.sigmoid(v1.layers.dense(pooled, 1, name="class_head"))
        predictions = {
            "detection_boxes": boxes,
            "detection_scores": scores,
            "num_detections": tf.ones_like(scores[:, 0]) * params["max_total_size"],
        }
        if params["use_tpu"]:
            return v1.estimator.tpu.TPUEstimatorSpec(mode=mode, predictions=predictions)
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)

    return _serving_model_fn


def detection_serving_input_fn(tf, batch_size, image_size):
    def serving_input_fn():
        placeholder = tf.compat.v1.placeholder(
            tf.float32, [batch_size, image_size, image_size, 3], name="image_tensor"
        )
        image_info = tf.tile(tf.constant([[image_size, image_size, 1.0, 1.0]]), [batch_size, 1])
        return tf.estimator.export.ServingInputReceiver(
            features={"images": placeholder, "image_info": image_info},
            receiver_tensors={"image_tensor": placeholder},
        )

    return serving_input_fn


@program
def detection_export(tf, workdir):
    """export_saved_model.py: a checkpoint trained elsewhere exported by a TPUEstimator
    with no model_dir, on the in-process master."""
    values = {
        "box_head/kernel": _fixed([3, 4], 8),
        "box_head/bias": np.zeros(4, np.float32),
        "class_head/kernel": _fixed([3, 1], 9),
        "class_head/bias": np.zeros(1, np.float32),
        "global_step": np.int64(17),
    }
    checkpoint_path = write_pretrained_checkpoint(tf, workdir, values)
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn=detection_serving_model_fn(tf),
        model_dir=None,
        config=tf.compat.v1.estimator.tpu.RunConfig(
            tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=1),
            master="local",
            evaluation_master="local",
        ),
        params={"max_total_size": 5, "use_tpu": False},
        use_tpu=False,
        train_batch_size=1,
        predict_batch_size=1,
        eval_on_tpu=False,
        export_to_tpu=False,
        export_to_cpu=True,
    )
    with info_lines() as lines:
        export_path = as_text(
            estimator.export_saved_model(
                export_dir_base=os.path.join(workdir, "export"),
                serving_input_receiver_fn=detection_serving_input_fn(tf, 1, IMAGE),
                checkpoint_path=checkpoint_path,
            )
        )
    images, _ = _images(1, 3)
    shapes, values = served(export_path, "serving_default", tags=["serve"], image_tensor=images)
    return {
        "exact": {
            "config": [estimator.config.master, estimator.config.evaluation_master],
            "export": meta_graphs(export_path),
            "export_files": listing(export_path),
            "served": shapes,
            "lines": lines,
        },
        "close": dict(values.items()),
    }


# ------------------------------------------------------------------ misuse the flags allow
@program
def flag_misuse(tf, workdir):
    """What these programs' flags let a user get wrong, and what they are told."""
    tpu = tf.compat.v1.estimator.tpu
    flags = {**EFFICIENTNET, "model_dir": os.path.join(workdir, "model")}
    est = efficientnet_estimator(tf, flags)
    images_input = efficientnet_input_fn(tf, 16, 1, False)
    errors = {
        # efficientnet sets no predict_batch_size: predict gets no params['batch_size'].
        "predict_without_predict_batch_size": lambda: list(est.predict(images_input)),
        # --iterations_per_loop=0
        "iterations_per_loop_zero": lambda: tpu.TPUConfig(iterations_per_loop=0),
        # resnet's --num_cores with a batch size it does not divide
        "batch_not_divisible_by_shards": lambda: resnet_estimator(
            tf, {**RESNET, "train_batch_size": 12, "model_dir": os.path.join(workdir, "r")}
        ).train(resnet_input_fn(tf, 48, 0, "train"), max_steps=1),
        # albert's do_predict before do_eval made model.ckpt-best
        "predict_missing_checkpoint": lambda: list(
            resnet_estimator(tf, {**RESNET, "model_dir": os.path.join(workdir, "p")}).predict(
                resnet_input_fn(tf, 4, 2, "predict"),
                checkpoint_path=os.path.join(workdir, "p", "model.ckpt-best"),
            )
        ),
        # evaluating before any training
        "evaluate_untrained": lambda: est.evaluate(images_input, steps=1),
        # TPUConfig values the TPU flags pass through unchecked
        "num_shards_zero": lambda: tpu.TPUConfig(num_shards=0),
        "num_shards_float": lambda: tpu.TPUConfig(num_shards=8.0),
        "num_cores_per_replica_3": lambda: tpu.TPUConfig(num_cores_per_replica=3),
        "input_partition_dims_per_host_v1": lambda: tpu.TPUConfig(
            input_partition_dims=[[1, 2, 1, 1], None], num_cores_per_replica=2
        ),
        "eval_input_per_host_v2": lambda: tpu.TPUConfig(
            eval_training_input_configuration=tpu.InputPipelineConfig.PER_HOST_V2
        ),
    }
    with info_lines() as lines:
        found = {name: error_of(call) for name, call in errors.items()}
    return {
        "exact": {
            **{name: error[:1] if error else None for name, error in found.items()},
            "per_host_input": [
                tpu.TPUConfig(per_host_input_for_training=given).per_host_input_for_training
                for given in (True, False, tpu.InputPipelineConfig.PER_HOST_V2)
            ],
            "lines": lines,
        },
        "close": {},
        "messages": {name: error[1] for name, error in found.items() if error},
    }


# ------------------------------------------------------------------ train_and_evaluate
def warm_started_model_fn(tf):
    """A dense classifier returning TPUEstimatorSpecs, trained on from a checkpoint."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        hidden = v1.layers.dense(features["x"], 4, activation=tf.tanh, name="dense")
        logits = v1.layers.dense(
            hidden, 2, kernel_initializer=v1.constant_initializer(_fixed([4, 2], 12)), name="logits"
        )
        probabilities = tf.nn.softmax(logits)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return v1.estimator.tpu.TPUEstimatorSpec(
                mode,
                predictions={"probabilities": probabilities},
                export_outputs={"predict": tf.estimator.export.PredictOutput(probabilities)},
            )
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = v1.train.AdagradOptimizer(0.2).minimize(loss, v1.train.get_global_step())

        def metric_fn(labels, logits):
            predicted = tf.argmax(logits, 1)
            return {
                "accuracy": v1.metrics.accuracy(labels, predicted),
                "auc": v1.metrics.auc(labels, tf.nn.softmax(logits)[:, 1]),
            }

        return v1.estimator.tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits])
        )

    return model_fn


def xy_input_fn(tf, n, seed, repeat):
    def input_fn(params):
        rng = np.random.RandomState(seed)
        x = rng.normal(size=(n, 3)).astype(np.float32)
        y = (x[:, 0] - x[:, 1] > 0).astype(np.int32)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return (dataset.repeat() if repeat else dataset).batch(params["batch_size"], True)

    return input_fn


@program
def warm_start_train_and_evaluate(tf, workdir):
    """A TPUEstimator warm-started from a pre-trained checkpoint (WarmStartSettings over
    the hidden layer) and driven by tf.estimator.train_and_evaluate with a LatestExporter."""
    tpu = tf.compat.v1.estimator.tpu
    pretrained = write_pretrained_checkpoint(
        tf, workdir, {"dense/kernel": _fixed([3, 4], 10, 0.7), "dense/bias": _fixed([4], 11)}
    )
    config = tpu.RunConfig(
        model_dir=os.path.join(workdir, "model"),
        save_checkpoints_steps=5,
        tpu_config=tpu.TPUConfig(iterations_per_loop=5),
    )
    estimator = tpu.TPUEstimator(
        model_fn=warm_started_model_fn(tf),
        config=config,
        params={},
        use_tpu=False,
        train_batch_size=8,
        eval_batch_size=8,
        predict_batch_size=8,
        warm_start_from=tf.estimator.WarmStartSettings(
            ckpt_to_initialize_from=pretrained, vars_to_warm_start="dense/.*"
        ),
    )

    def serving_input_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    train_spec = tf.estimator.TrainSpec(xy_input_fn(tf, 64, 0, True), max_steps=10)
    eval_spec = tf.estimator.EvalSpec(
        xy_input_fn(tf, 32, 1, False),
        steps=None,
        exporters=[tf.estimator.LatestExporter("latest", serving_input_fn)],
        start_delay_secs=0,
        throttle_secs=0,
    )
    with info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    model_dir = estimator.model_dir
    return {
        "exact": {
            "evaluate_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "exports": len(exports),
            "model_dir": listing(model_dir),
            "variables": estimator.get_variable_names(),
            "eval_tags": event_tags(estimator.eval_dir()),
            "lines": lines,
        },
        "close": {
            **floats({k: v for k, v in metrics.items() if k != "global_step"}),
            "dense_kernel": estimator.get_variable_value("dense/kernel").ravel().tolist(),
        },
    }


# ------------------------------------------------------------------ xlnet run_classifier
def xlnet_run_config(tf, flags):
    """model_utils.configure_tpu with --use_tpu=False and one core: no strategy."""
    tf.compat.v1.logging.info("Single device mode.")
    tpu = tf.compat.v1.estimator.tpu
    return tpu.RunConfig(
        master=None,
        model_dir=flags["model_dir"],
        session_config=tf.compat.v1.ConfigProto(allow_soft_placement=True),
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["iterations"],
            num_shards=1,
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
        keep_checkpoint_max=flags["max_save"],
        save_checkpoints_secs=None,
        save_checkpoints_steps=flags["save_steps"],
        train_distribute=None,
    )


def xlnet_train_op(tf, total_loss, flags):
    """model_utils.get_train_op: linear warm-up, then polynomial decay; Adam (weight
    decay 0) on gradients clipped by their global norm."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    warmup_lr = tf.cast(global_step, tf.float32) / float(flags["warmup_steps"]) * flags["lr"]
    decay_lr = v1.train.polynomial_decay(
        flags["lr"],
        global_step=global_step - flags["warmup_steps"],
        decay_steps=flags["train_steps"] - flags["warmup_steps"],
        end_learning_rate=flags["lr"] * 0.1,
    )
    learning_rate = v1.where(global_step < flags["warmup_steps"], warmup_lr, decay_lr)
    optimizer = v1.train.AdamOptimizer(learning_rate=learning_rate, epsilon=1e-8)
    gradients, variables = zip(*optimizer.compute_gradients(total_loss), strict=True)
    clipped, _ = tf.clip_by_global_norm(gradients, 1.0)
    return optimizer.apply_gradients(zip(clipped, variables, strict=True), global_step=global_step)


def xlnet_model_fn(tf, init_checkpoint, flags):
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("model"):
            table = v1.get_variable("word_embedding/lookup_table", [VOCAB, HIDDEN])
            summary = tf.reduce_mean(tf.nn.embedding_lookup(table, features["input_ids"]), 1)
            logits = v1.layers.dense(
                summary,
                LABELS,
                kernel_initializer=v1.constant_initializer(_fixed([HIDDEN, LABELS], 13)),
                name="classification_finetune/logit",
            )
        per_example_loss = v1.losses.sparse_softmax_cross_entropy(
            features["label_ids"], logits, reduction=v1.losses.Reduction.NONE
        )
        total_loss = tf.reduce_mean(per_example_loss)
        num_params = sum(np.prod(v.shape) for v in v1.trainable_variables())
        v1.logging.info(f"#params: {num_params}")
        tvars = v1.trainable_variables()
        name_to_variable = {v.name[: -len(":0")]: v for v in tvars}
        assignment_map = {
            name: name_to_variable[name]
            for name, _ in tf.train.list_variables(init_checkpoint)
            if name in name_to_variable
        }  # (model_utils: a variable per checkpoint name)
        v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {"logits": logits, "labels": features["label_ids"]}
            return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
        if mode == tf.estimator.ModeKeys.EVAL:
            predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
            weights = tf.cast(features["is_real_example"], tf.float32)
            metrics = {
                "eval_accuracy": v1.metrics.accuracy(
                    labels=features["label_ids"], predictions=predictions, weights=weights
                ),
                "eval_loss": v1.metrics.mean(values=per_example_loss, weights=weights),
            }
            return tf.estimator.EstimatorSpec(mode=mode, loss=total_loss, eval_metric_ops=metrics)
        train_op = xlnet_train_op(tf, total_loss, flags)
        return tf.estimator.EstimatorSpec(mode=mode, loss=total_loss, train_op=train_op)

    return model_fn


def xlnet_input_fn_builder(tf, input_file, is_training, flags):
    name_to_features = {
        "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }

    def input_fn(params, input_context=None):
        batch_size = flags["train_batch_size" if is_training else "eval_batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if input_context is not None:
            d = d.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        if is_training:
            d = d.repeat()  # (its shuffle left out: values are compared)
        d = d.map(lambda record: tf.io.parse_single_example(record, name_to_features))
        d = d.map(lambda example: {k: tf.cast(v, tf.int32) for k, v in example.items()})
        return d.batch(batch_size, drop_remainder=is_training).prefetch(1024)

    return input_fn


XLNET = {
    "iterations": 10,
    "max_save": 2,
    "save_steps": 4,
    "warmup_steps": 2,
    "train_steps": 10,
    "lr": 0.05,
    "train_batch_size": 8,
    "eval_batch_size": 8,
}


@program
def xlnet_classifier(tf, workdir):
    """run_classifier.py with --use_tpu=False: a plain Estimator on configure_tpu's TPU
    RunConfig, every kept checkpoint evaluated, predictions from the last one."""
    flags = {**XLNET, "model_dir": os.path.join(workdir, "model")}
    init_checkpoint = write_pretrained_checkpoint(
        tf, workdir, {"model/word_embedding/lookup_table": _fixed([VOCAB, HIDDEN], 14, 0.5)}
    )
    records = {
        split: write_albert_records(tf, os.path.join(workdir, f"{split}.tfrecord"), n, seed)
        for split, n, seed in (("train", 40, 0), ("eval", 20, 1))
    }
    with info_lines() as lines:
        run_config = xlnet_run_config(tf, flags)
        estimator = tf.estimator.Estimator(
            model_fn=xlnet_model_fn(tf, init_checkpoint, flags), config=run_config
        )
        estimator.train(
            input_fn=xlnet_input_fn_builder(tf, records["train"], True, flags),
            max_steps=flags["train_steps"],
        )
        steps_and_files = sorted(
            (int(name[: -len(".index")].split("-")[-1]), name[: -len(".index")])
            for name in tf.io.gfile.listdir(flags["model_dir"])
            if name.startswith("model.ckpt-") and name.endswith(".index")
        )
        eval_input_fn = xlnet_input_fn_builder(tf, records["eval"], False, flags)
        results = [
            estimator.evaluate(
                input_fn=eval_input_fn,
                steps=None,
                checkpoint_path=os.path.join(flags["model_dir"], filename),
            )
            for _, filename in steps_and_files
        ]
        rows = list(
            estimator.predict(
                input_fn=eval_input_fn,
                yield_single_examples=True,
                checkpoint_path=os.path.join(flags["model_dir"], steps_and_files[-1][1]),
            )
        )
    return {
        "exact": {
            "config": [
                run_config.master,
                run_config.evaluation_master,
                run_config.keep_checkpoint_max,
            ],
            "evaluated": [step for step, _ in steps_and_files],
            "evaluate_keys": sorted(results[-1]),
            "model_dir": listing(flags["model_dir"]),
            "variables": estimator.get_variable_names(),
            "predictions": structure(rows),
            "count": len(rows),
            "lines": lines,
        },
        "close": {
            **{f"eval_{i}_{k}": v for i, r in enumerate(results) for k, v in floats(r).items()},
            "logits": _values(rows, "logits"),
        },
    }


# ------------------------------------------------------------------ dlrm / ncf recommendation
DLRM = {
    "train_batch_size": 8,
    "eval_batch_size": 8,
    "predict_batch_size": 4,
    "iterations_per_loop": 3,
    "num_tpu_shards": 2,
    "train_steps": 6,
    "learning_rate": 0.3,
    "num_dense_features": 3,
    "vocab_sizes": [7, 5, 9],
    "dim_embed": 4,
    "mlp_bottom": [6, 4],  # its last width is dim_embed: dot_interact needs it
    "mlp_top": [6, 1],
}


def create_feature_columns(tf, params):
    """feature_config.py's columns: the dense features as one numeric column, each
    categorical feature a TPU embedding column over an identity column."""
    dense = tf.feature_column.numeric_column("int-features", shape=[params["num_dense_features"]])
    tpu_columns = []
    for i, vocab_size in enumerate(params["vocab_sizes"]):
        categorical = tf.feature_column.categorical_column_with_identity(
            key=f"categorical-feature-{i}", num_buckets=vocab_size
        )
        tpu_columns.append(
            tf.compat.v1.tpu.experimental.embedding_column(
                categorical_column=categorical,
                dimension=params["dim_embed"],
                initializer=tf.compat.v1.constant_initializer(
                    _fixed([vocab_size, params["dim_embed"]], 30 + i, 0.5)
                ),
            )
        )
    return dense, tpu_columns


def dot_interact(tf, concat_features):
    """DLRM's interaction: every pair of feature vectors' dot product, below the diagonal."""
    count = len(concat_features)
    stacked = tf.stack(concat_features, axis=1)  # [batch, features, dim]
    xactions = tf.matmul(stacked, stacked, transpose_b=True)
    lower = np.tril(np.ones([count, count], bool), -1)
    pairs = tf.boolean_mask(xactions, lower, axis=1)
    return tf.reshape(pairs, [-1, count * (count - 1) // 2])


def _mlp(tf, net, widths, name, seed, last_activation):
    for i, units in enumerate(widths):
        last = i == len(widths) - 1
        net = tf.compat.v1.layers.dense(
            net,
            units,
            activation=None if last and not last_activation else tf.nn.relu,
            kernel_initializer=tf.compat.v1.constant_initializer(
                _fixed([int(net.shape[-1]), units], seed + i, 0.4)
            ),
            name=f"{name}_{i}",
        )
    return net


def dlrm_model_fn(tf, dense_column, tpu_columns):
    """dlrm.py's logits (bottom MLP, dot interaction, top MLP) and its TPUEstimatorSpecs;
    the optimizer is a CrossShardOptimizer only on TPUs."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        bottom = _mlp(
            tf,
            v1.feature_column.input_layer(features, [dense_column]),
            params["mlp_bottom"],
            "bottom_mlp",
            40,
            last_activation=True,
        )
        embeddings = [v1.feature_column.input_layer(features, [c]) for c in tpu_columns]
        interaction = dot_interact(tf, [bottom, *embeddings])
        top = _mlp(tf, tf.concat([bottom, interaction], 1), params["mlp_top"], "top_mlp", 50, False)
        logits = tf.reshape(top, [-1])
        probabilities = tf.sigmoid(logits)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {"probabilities": probabilities, "logits": logits}
            return v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode,
                predictions=predictions,
                export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)},
            )
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        tf.identity(loss, name="cross_entropy")  # for the logging hook
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(labels, probabilities):
                return {
                    "accuracy": v1.metrics.accuracy(labels, tf.round(probabilities)),
                    "auc": v1.metrics.auc(labels, probabilities),
                }

            return v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode, loss=loss, eval_metrics=(metric_fn, [labels, probabilities])
            )
        optimizer = v1.train.AdagradOptimizer(params["learning_rate"])
        if params["use_tpu"]:
            optimizer = v1.tpu.CrossShardOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
        return v1.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    return model_fn


def _recsys_examples(n, seed, params):
    rng = np.random.RandomState(seed)
    features = {"int-features": rng.uniform(0, 1, (n, params["num_dense_features"]))}
    features["int-features"] = features["int-features"].astype(np.float32)
    for i, vocab_size in enumerate(params["vocab_sizes"]):
        features[f"categorical-feature-{i}"] = rng.randint(0, vocab_size, n).astype(np.int64)
    clicked = features["int-features"][:, 0] + (features["categorical-feature-0"] % 2) > 0.9
    return features, clicked.astype(np.float32)


def dlrm_input_fn(tf, n, seed, mode, params):
    """dataloader.py's shape: a batched dataset of params['batch_size'], repeated to train."""
    features, labels = _recsys_examples(n, seed, params)

    def input_fn(params):
        if mode == "predict":
            dataset = tf.data.Dataset.from_tensor_slices(features)
        else:
            dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        if mode == "train":
            dataset = dataset.repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    return input_fn


def dlrm_serving_input_fn(tf, params):
    v1 = tf.compat.v1
    receivers = {"dense": v1.placeholder(tf.float32, [None, params["num_dense_features"]], "dense")}
    features = {"int-features": receivers["dense"]}
    for i in range(len(params["vocab_sizes"])):
        receivers[f"cat_{i}"] = v1.placeholder(tf.int64, [None], f"cat_{i}")
        features[f"categorical-feature-{i}"] = receivers[f"cat_{i}"]
    return tf.estimator.export.ServingInputReceiver(features, receivers)


def loss_recorder(tf, losses):
    class LossHook(tf.compat.v1.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs("cross_entropy:0")

        def after_run(self, run_context, run_values):
            losses.append(float(run_values.results))

    return LossHook()


def dlrm_estimator(tf, params):
    """dlrm_main.py's TPUEstimator with --use_tpu=False: the TPU embedding columns and
    Adagrad for their tables in an EmbeddingConfigSpec."""
    tpu = tf.compat.v1.estimator.tpu
    dense_column, tpu_columns = create_feature_columns(tf, params)
    spec = tpu.experimental.EmbeddingConfigSpec(
        feature_columns=[dense_column, *tpu_columns],
        optimization_parameters=tf.compat.v1.tpu.experimental.AdagradParameters(
            learning_rate=params["learning_rate"],
            initial_accumulator=0.1,
            use_gradient_accumulation=True,
        ),
        pipeline_execution_with_tensor_core=False,
    )
    config = tpu.RunConfig(
        model_dir=params["model_dir"],
        save_checkpoints_steps=params["train_steps"],
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=params["iterations_per_loop"],
            num_shards=params["num_tpu_shards"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = tpu.TPUEstimator(
        model_fn=dlrm_model_fn(tf, dense_column, tpu_columns),
        config=config,
        params={k: v for k, v in params.items() if k != "model_dir"},
        use_tpu=False,
        train_batch_size=params["train_batch_size"],
        eval_batch_size=params["eval_batch_size"],
        predict_batch_size=params["predict_batch_size"],
        export_to_tpu=False,
        embedding_config_spec=spec,
    )
    return estimator, spec


@program
def dlrm_tpu_embedding(tf, workdir):
    """DLRM's and NCF's TPUEstimator with TPU embedding columns and an
    EmbeddingConfigSpec, run with use_tpu=False: 2.15 checked the spec and left it out,
    the columns looking up as embedding columns trained by model_fn's Adagrad."""
    params = {**DLRM, "model_dir": os.path.join(workdir, "model")}
    estimator, spec = dlrm_estimator(tf, params)
    losses = []
    with info_lines() as lines:
        estimator.train(
            dlrm_input_fn(tf, 32, 0, "train", params),
            hooks=[loss_recorder(tf, losses)],
            max_steps=params["train_steps"],
        )
        result = estimator.evaluate(dlrm_input_fn(tf, 16, 1, "eval", params), steps=None)
        rows = list(estimator.predict(dlrm_input_fn(tf, 8, 2, "predict", params)))
        export_dir = as_text(
            estimator.export_saved_model(
                os.path.join(workdir, "export"), lambda: dlrm_serving_input_fn(tf, params)
            )
        )
    features, _ = _recsys_examples(3, 3, params)
    inputs = {"dense": features["int-features"]}
    inputs.update({f"cat_{i}": features[f"categorical-feature-{i}"] for i in range(3)})
    shapes, values = served(export_dir, "serving_default", tags=["serve"], **inputs)
    table = "input_layer_1/categorical-feature-0_embedding/embedding_weights"
    return {
        "exact": {
            "spec": [
                [column.name for column in spec.feature_columns],
                spec.tensor_core_feature_columns,
                spec.partition_strategy,
                type(spec.optimization_parameters).__name__,
            ],
            **seen(result, rows),
            "checkpoint": [[n, s] for n, s in tf.train.list_variables(params["model_dir"])],
            "model_dir": listing(params["model_dir"]),
            "export": meta_graphs(export_dir),
            "served": shapes,
            "lines": lines,
        },
        "close": {
            "losses": losses,
            **floats({k: v for k, v in result.items() if k != "global_step"}),
            "probabilities": _values(rows, "probabilities"),
            "served_probabilities": values["probabilities"],
            "table": estimator.get_variable_value(table).ravel().tolist(),
        },
    }


@program
def tpu_config_words_and_tf_config(tf, workdir):
    """TPUConfig values a user's flags pass on, and the words of 2.15's refusals a user's
    test matches; the TPU workers' job name a launcher puts in TF_CONFIG's `service`
    (`tpu_worker_job_name`), read by a RunConfig that names none."""
    tpu = tf.compat.v1.estimator.tpu
    words = {
        "iterations_per_loop_zero": (lambda: tpu.TPUConfig(iterations_per_loop=0), "must be positive"),
        "iterations_per_loop_negative_time": (lambda: tpu.TPUConfig(iterations_per_loop="-1h"), "must be positive"),
        "num_cores_per_replica_7": (lambda: tpu.TPUConfig(num_cores_per_replica=7), "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 7"),
        "num_shards_float": (lambda: tpu.TPUConfig(num_shards=8.0), "TPUConfig num_shards must be int, got <class 'float'>"),
        "num_shards_zero": (lambda: tpu.TPUConfig(num_shards=0), "TPUConfig num_shards must be positive, got 0"),
        "partition_dims_per_host_v1": (lambda: tpu.TPUConfig(input_partition_dims=[[1, 2], None], num_cores_per_replica=2), "input_partition_dims is only supported in PER_HOST_V2 mode."),
        "partition_dims_without_cores": (lambda: tpu.TPUConfig(input_partition_dims=[[1, 2], None], per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2), "input_partition_dims requires setting num_cores_per_replica."),
        "eval_input_per_host_v2": (lambda: tpu.TPUConfig(eval_training_input_configuration=tpu.InputPipelineConfig.PER_HOST_V2), "eval_training_input_configuration must be PER_HOST_V1 or SLICED; got 3"),
    }  # fmt: skip
    refusals = {}
    for name, (call, said) in words.items():
        error = error_of(call)
        refusals[name] = error and [error[0], said in error[1]]
    before = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = '{"service": {"tpu_worker_job_name": "tpu_workers"}}'
    try:
        from_service = tpu.RunConfig().tpu_config.tpu_job_name
        named = tpu.RunConfig(tpu_config=tpu.TPUConfig(tpu_job_name="mine"))
        replaced = tpu.RunConfig().replace(save_summary_steps=5)
    finally:
        if before is None:
            os.environ.pop("TF_CONFIG")
        else:
            os.environ["TF_CONFIG"] = before
    jobs = [from_service, named.tpu_config.tpu_job_name, replaced.tpu_config.tpu_job_name]
    return {"exact": {"refusals": refusals, "job_names": jobs}, "close": {}}


@program
def tpu_estimator_words(tf, workdir):
    """The words of what TPUEstimator and TPUEstimatorSpec refused, as a user's test
    matches them: a plain RunConfig, reserved params, a model_fn or input_fn without
    `params` (at train), host calls that are not (fn, tensors) pairs, hooks that are not
    SessionRunHooks, SLICED evaluation input off TPUs."""
    tpu = tf.compat.v1.estimator.tpu
    config = tpu.RunConfig(model_dir=os.path.join(workdir, "model"))
    model_fn = resnet_model_fn(tf, RESNET)
    train_input = resnet_input_fn(tf, 8, 0, "train")
    sliced = tpu.RunConfig(
        model_dir=os.path.join(workdir, "sliced"),
        tpu_config=tpu.TPUConfig(eval_training_input_configuration=tpu.InputPipelineConfig.SLICED),
    )

    def made(**kwargs):
        return tpu.TPUEstimator(**{"model_fn": model_fn, "config": config, "use_tpu": False, "train_batch_size": 8, **kwargs})  # fmt: skip

    def no_params(features, labels, mode):
        return model_fn(features, labels, mode, {})

    def no_labels(features, mode, params):
        return model_fn(features, None, mode, params)

    def metric_fn(labels, logits):
        return {}

    spec = tpu.TPUEstimatorSpec
    words = {
        "plain_run_config": (lambda: made(config=tf.compat.v1.estimator.RunConfig()), "`config` must be provided with type `tpu_config.RunConfig`"),
        "reserved_context": (lambda: made(params={"context": 1}), "['batch_size', 'context'] are reserved keys but existed in params {'context': 1}."),
        "model_fn_without_params": (lambda: made(model_fn=no_params).train(train_input, max_steps=1), "does not include params argument, required by TPUEstimator to pass batch size as params['batch_size']"),
        "model_fn_without_params_given_params": (lambda: made(model_fn=no_params, params={"a": 1}), "does not include params argument, but params ({'a': 1}) is passed to Estimator."),
        "model_fn_without_labels": (lambda: made(model_fn=no_labels).train(train_input, max_steps=1), "model_fn does not take labels, but input_fn returns labels."),
        "input_fn_without_params": (lambda: made().train(lambda: None, max_steps=1), 'does not include params argument, required by TPUEstimator to pass batch size as params["batch_size"]'),
        "host_call_not_a_pair": (lambda: spec("train", host_call=(metric_fn,)), "host_call should have two elements."),
        "host_call_a_function": (lambda: spec("train", host_call=metric_fn), "host_call should be tuple or list"),
        "host_call_not_callable": (lambda: spec("train", host_call=(1, [])), "host_call[0] should be callable."),
        "host_call_tensors_not_a_list": (lambda: spec("train", host_call=(metric_fn, 1)), "host_call[1] should be tuple or list, or dict."),
        "eval_metrics_one_tensor_short": (lambda: spec("eval", eval_metrics=(metric_fn, [1])), "In TPUEstimatorSpec.eval_metrics, length of tensors 1 does not match method args of the function, which takes 2."),
        "hook_not_a_hook": (lambda: spec("train", training_hooks=["hook"]), "All hooks must be SessionRunHook instances, given: hook"),
        "export_api_version_3": (lambda: made(export_saved_model_api_version=3), "export_saved_model_api_version should be 1 or 2; got 3."),
        "sliced_evaluate": (lambda: made(config=sliced, eval_batch_size=8).evaluate(resnet_input_fn(tf, 8, 1, "eval"), steps=1), "Invalid TPUConfig `eval_training_input_configuration` value. SLICED mode only works on use_tpu = True."),
    }  # fmt: skip
    with info_lines() as lines:
        refusals = {name: _said(call, said) for name, (call, said) in words.items()}
    return {"exact": {"refusals": refusals, "lines": lines}, "close": {}}
