"""More research code's TPUEstimator programs (`use_tpu=False`), as `tf_upgrade_v2` leaves
them, on tiny made-up data, where the research, TPU research, Google Research and BERT
families do not reach:

- `simclr_pretrain_then_eval`: google-research/simclr v1 (`run.py`, `model.py`,
  `model_util.py`, `objective.py`, `lars_optimizer.py`, `data.py`) in its
  `tf.disable_eager_execution()` world (here a `tf.Graph().as_default()` block):
  `--mode=train --train_mode=pretrain`, a TPU RunConfig whose `iterations_per_loop`,
  summary and checkpoint steps are all `checkpoint_steps`, an input_fn returning a one-shot iterator's tensors (two views concatenated on the
  last axis, labels a dict of one-hot labels and a mask, eval batches padded to the batch
  size), a `base_model` tower of `tf.compat.v1.layers` with batch norm and its blocks'
  variables in `trainable_variables_inblock_N` collections, an `AUTO_REUSE` projection
  head, the NT-Xent loss by `tf.compat.v1.losses.softmax_cross_entropy`, weight decay in
  REGULARIZATION_LOSSES and `get_total_loss()`, a warm-up then `cosine_decay` learning rate
  by `tf.where`, a tf2 summary writer made in model_fn (`init()` as a control dependency,
  `record_if` of a floormod tensor, `all_v2_summary_ops()` before the train op), its
  `LARSOptimizer` (a `tf.compat.v1.train.Optimizer` subclass whose `apply_gradients`
  makes `<var>/Momentum` by `get_variable` and advances the global step itself); then
  `--mode=eval`: `checkpoints_iterator(model_dir, min_interval_secs=15)` evaluated by
  `checkpoint_path` (`eval_metrics` of weighted means, accuracies and `recall_at_k`, tensors
  `tf.fill`ed to `params['batch_size']`), `result.json` and `result_<step>.json` written,
  and the loop left once the step reaches `train_steps`;
- `simclr_finetune_and_export`: `--mode=train_then_eval --train_mode=finetune
  --fine_tune_after_block=4 --zero_init_logits_layer` from that pre-trained checkpoint:
  `scaffold_fn` calling `init_from_checkpoint` over `tf.global_variables(variable_schema)`
  and returning a `Scaffold(init_op=...)` that zeroes the supervised head after
  `global_variables_initializer()`, the head alone trained (its collection), evaluated,
  and exported for each evaluated step (`hub/<step>`, the hub module's place; here an
  `export_saved_model` of an images placeholder, as the hub module is not installed),
  loaded in a session and served.

- `tapas_train_eval_predict_files`: google-research/tapas's classifier experiment
  (`experiment_utils.build_estimator`: `use_tpu` left None, `num_shards=None`,
  `keep_checkpoint_every_n_hours`, three batch sizes), its eval loop over the latest
  checkpoint, predictions written to TSV files (padded examples removed) and SQA's
  sequence prediction (examples read in a Session, predicted from an in-memory input_fn
  whose last batch is short);
- `bert_export_to_tpu_false`: BERT run_classifier's TPUEstimator, then the blog posts'
  `estimator._export_to_tpu = False` and `export_savedmodel` of a raw receiver of
  placeholders (in a variable scope, or not), loaded in a session by tensor names;
- `albert_export_best_checkpoint`: ALBERT run_classifier's `--export_dir`: the best
  checkpoint renamed `model.ckpt-best`, exported with `checkpoint_path` and its
  serving_input_receiver_fn (one receiver tensor, scalar constant features), served.

Hand edits a user makes: `eval_training_input_configuration` PER_HOST_V1, not SLICED
(which 2.15 refuses off TPUs when it evaluates, as the kit does); no tfds (made-up 8-dim "images" and 6 classes), no random
augmentation (the two views are fixed numpy perturbations), no shuffle, the dense
kernels' initializers fixed numbers, a 2-layer tower for the ResNet.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_research_code2.py` with what `tests/tf215/record_family.py
research_code2_programs` recorded under tf.estimator 2.15
(`tests/data/tf215/research_code2.json`).
"""

import glob
import json
import math
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tpu_programs import _export_layout as meta_graphs
from tests.tpu_sample_programs import _checkpoint_variables, _fixed, info_lines
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, listing

RECORDED = os.path.join(DATA_DIR, "research_code2.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

# ------------------------------------------------------------------ simclr v1
DIM, CLASSES = 8, 6
SIMCLR = {
    "learning_rate": 3.0,
    "learning_rate_scaling": "sqrt",
    "warmup_epochs": 1,
    "weight_decay": 1e-4,
    "batch_norm_decay": 0.9,
    "train_batch_size": 4,
    "eval_batch_size": 6,
    "train_steps": 6,
    "train_summary_steps": 2,
    "checkpoint_steps": 3,
    "keep_checkpoint_max": 5,
    "momentum": 0.9,
    "temperature": 0.5,
    "hidden_norm": True,
    "proj_out_dim": 4,
    "num_proj_layers": 2,
    "ft_proj_selector": 0,
    "train_mode": "pretrain",
    "fine_tune_after_block": -1,
    "zero_init_logits_layer": False,
    "checkpoint": None,
    "variable_schema": "(?!global_step|(?:.*/|^)LARSOptimizer|head)",
    "eval_name": None,
}
NUM_TRAIN, NUM_EVAL = 16, 10
LARGE_NUM = 1e9


def simclr_data(n, seed):
    """Made-up images (8 numbers), their class, and two fixed views of each."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, CLASSES, n).astype(np.int64)
    images = rng.normal(0, 0.5, (n, DIM)).astype(np.float32)
    images[np.arange(n), labels] += 1.5
    views = [images + rng.normal(0, 0.1, images.shape).astype(np.float32) for _ in range(2)]
    return images, labels, views


def pad_to_batch(tf, dataset, batch_size):
    """data_util.pad_to_batch: the last short batch padded with zeros (mask 0)."""

    def _pad_to_batch(*args):
        flat_args = tf.nest.flatten(args)
        for tensor in flat_args:
            tensor.shape[1:].assert_is_fully_defined()
        batch = tf.shape(flat_args[0])[0]
        padded = []
        for tensor in flat_args:
            rank = len(tensor.shape)
            padding = [[0, batch_size - batch]] + [[0, 0]] * (rank - 1)
            tensor = tf.pad(tensor, padding)
            tensor.set_shape([batch_size, *tensor.shape.as_list()[1:]])
            padded.append(tensor)
        return tf.nest.pack_sequence_as(args, padded)

    return dataset.map(_pad_to_batch)


def build_input_fn(tf, flags, is_training):
    """data.build_input_fn (tfds left out: made-up images; its shuffle left out)."""
    n, seed = (NUM_TRAIN, 1) if is_training else (NUM_EVAL, 2)
    images, labels, views = simclr_data(n, seed)

    def _input_fn(params):
        def map_fn(image, view1, view2, label):
            if flags["train_mode"] == "pretrain":
                image = tf.concat([view1, view2], -1)
            label = tf.one_hot(label, CLASSES)
            return image, label, 1.0

        dataset = tf.data.Dataset.from_tensor_slices((images, views[0], views[1], labels))
        if is_training:
            dataset = dataset.repeat(-1)
        dataset = dataset.map(map_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        dataset = dataset.batch(params["batch_size"], drop_remainder=is_training)
        dataset = pad_to_batch(tf, dataset, params["batch_size"])
        images_t, labels_t, mask = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        return images_t, {"labels": labels_t, "mask": mask}

    return _input_fn


def batch_norm_relu(tf, inputs, is_training, relu=True, center=True):
    """resnet.batch_norm_relu (its fused batch norm, gamma ones)."""
    inputs = tf.compat.v1.layers.batch_normalization(
        inputs,
        momentum=SIMCLR["batch_norm_decay"],
        epsilon=1e-5,
        center=center,
        scale=True,
        training=is_training,
    )
    return tf.nn.relu(inputs) if relu else inputs


def _kernel(tf, fan_in, units, seed):
    return tf.compat.v1.constant_initializer(_fixed([fan_in, units], seed, 0.5))


def tower(tf):
    """resnet.resnet_v1's shape, two dense blocks: its endpoints named, its blocks'
    variables in `trainable_variables_inblock_N`."""
    v1 = tf.compat.v1

    def model(inputs, is_training):
        x = v1.layers.dense(inputs, DIM, kernel_initializer=_kernel(tf, DIM, DIM, 11))
        x = batch_norm_relu(tf, x, is_training)
        x = tf.identity(x, "block_group1")
        x = v1.layers.dense(x, DIM, kernel_initializer=_kernel(tf, DIM, DIM, 12))
        x = tf.identity(x, "final_avg_pool")
        for block, prefix in ((1, "dense/"), (1, "batch_normalization/"), (4, "dense_1/")):
            for var in v1.trainable_variables():
                if var.op.name.startswith(v1.get_variable_scope().name + "/" + prefix):
                    v1.add_to_collection(f"trainable_variables_inblock_{block}", var)
        return x

    return model


def linear_layer(tf, x, is_training, num_classes, seed, use_bias=True, use_bn=False, name="l"):
    """model_util.linear_layer (its kernel initializer fixed numbers)."""
    v1 = tf.compat.v1
    assert len(x.shape) == 2, x.shape
    with v1.variable_scope(name, reuse=v1.AUTO_REUSE):
        x = v1.layers.dense(
            inputs=x,
            units=num_classes,
            use_bias=use_bias and not use_bn,
            kernel_initializer=_kernel(tf, int(x.shape[-1]), num_classes, seed),
        )
        if use_bn:
            x = batch_norm_relu(tf, x, is_training, relu=False, center=use_bias)
        x = tf.identity(x, f"{name}_out")
    return x


def projection_head(tf, flags, hiddens, is_training, name="head_contrastive"):
    """model_util.projection_head, nonlinear."""
    v1 = tf.compat.v1
    with v1.variable_scope(name, reuse=v1.AUTO_REUSE):
        mid_dim = hiddens.shape[-1]
        hiddens_list = [hiddens]
        for j in range(flags["num_proj_layers"]):
            if j != flags["num_proj_layers"] - 1:
                dim, bias_relu = mid_dim, True
            else:
                dim, bias_relu = flags["proj_out_dim"], False
            hiddens = linear_layer(
                tf, hiddens, is_training, dim, 20 + j, bias_relu, use_bn=True, name=f"nl_{j}"
            )
            hiddens = tf.nn.relu(hiddens) if bias_relu else hiddens
            hiddens_list.append(hiddens)
        if flags["train_mode"] == "pretrain":
            hiddens = hiddens_list[-1]
        else:
            hiddens = hiddens_list[flags["ft_proj_selector"]]
    return hiddens


def supervised_head(tf, hiddens, num_classes, is_training, name="head_supervised"):
    v1 = tf.compat.v1
    with v1.variable_scope(name):
        logits = linear_layer(tf, hiddens, is_training, num_classes, 30, name="linear_layer")
    for var in v1.trainable_variables():
        if var.name.startswith(name):
            v1.add_to_collection("trainable_variables_inblock_5", var)
    return logits


def add_contrastive_loss(tf, hidden, hidden_norm=True, temperature=1.0, weights=1.0):
    """objective.add_contrastive_loss (tpu_context None: the local batch)."""
    if hidden_norm:
        hidden = tf.math.l2_normalize(hidden, -1)
    hidden1, hidden2 = tf.split(hidden, 2, 0)
    batch_size = tf.shape(hidden1)[0]
    labels = tf.one_hot(tf.range(batch_size), batch_size * 2)
    masks = tf.one_hot(tf.range(batch_size), batch_size)
    logits_aa = tf.matmul(hidden1, hidden1, transpose_b=True) / temperature
    logits_aa = logits_aa - masks * LARGE_NUM
    logits_bb = tf.matmul(hidden2, hidden2, transpose_b=True) / temperature
    logits_bb = logits_bb - masks * LARGE_NUM
    logits_ab = tf.matmul(hidden1, hidden2, transpose_b=True) / temperature
    logits_ba = tf.matmul(hidden2, hidden1, transpose_b=True) / temperature
    losses = tf.compat.v1.losses
    loss_a = losses.softmax_cross_entropy(labels, tf.concat([logits_ab, logits_aa], 1), weights)
    loss_b = losses.softmax_cross_entropy(labels, tf.concat([logits_ba, logits_bb], 1), weights)
    return loss_a + loss_b, logits_ab, labels


def add_weight_decay(tf, flags):
    """model_util.add_weight_decay for LARS: the supervised head's kernels only."""
    v1 = tf.compat.v1
    l2_losses = [
        tf.nn.l2_loss(v)
        for v in v1.trainable_variables()
        if "head_supervised" in v.name and "bias" not in v.name
    ]
    if l2_losses:
        v1.losses.add_loss(
            flags["weight_decay"] * tf.add_n(l2_losses), v1.GraphKeys.REGULARIZATION_LOSSES
        )


def get_train_steps(flags, num_examples):
    return flags["train_steps"] or (num_examples * 100 // flags["train_batch_size"] + 1)


def learning_rate_schedule(tf, flags, base_learning_rate, num_examples):
    """model_util.learning_rate_schedule: linear warm-up, then cosine decay."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    warmup_steps = round(flags["warmup_epochs"] * num_examples // flags["train_batch_size"])
    scaled_lr = base_learning_rate * math.sqrt(flags["train_batch_size"])
    learning_rate = (
        tf.cast(global_step, dtype=tf.float32) / int(warmup_steps) * scaled_lr
        if warmup_steps
        else scaled_lr
    )
    total_steps = get_train_steps(flags, num_examples)
    return tf.compat.v1.where(
        global_step < warmup_steps,
        learning_rate,
        v1.train.cosine_decay(scaled_lr, global_step - warmup_steps, total_steps - warmup_steps),
    )


def lars_optimizer_class(tf):
    """lars_optimizer.LARSOptimizer (classic momentum), a tf.compat.v1 Optimizer subclass."""
    v1 = tf.compat.v1

    class LARSOptimizer(v1.train.Optimizer):
        def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0, exclude=None):
            super().__init__(False, "LARSOptimizer")
            self.learning_rate = learning_rate
            self.momentum = momentum
            self.weight_decay = weight_decay
            self.eeta = 0.001
            self.exclude_from_weight_decay = exclude
            self.exclude_from_layer_adaptation = exclude

        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            assignments = []
            for grad, param in grads_and_vars:
                if grad is None or param is None:
                    continue
                param_name = param.op.name
                v = v1.get_variable(
                    name=param_name + "/Momentum",
                    shape=param.shape.as_list(),
                    dtype=tf.float32,
                    trainable=False,
                    initializer=tf.zeros_initializer(),
                )
                if self._use_weight_decay(param_name):
                    grad += self.weight_decay * param
                trust_ratio = 1.0
                if self._do_layer_adaptation(param_name):
                    w_norm = tf.norm(param, ord=2)
                    g_norm = tf.norm(grad, ord=2)
                    trust_ratio = v1.where(
                        tf.greater(w_norm, 0),
                        v1.where(tf.greater(g_norm, 0), (self.eeta * w_norm / g_norm), 1.0),
                        1.0,
                    )
                scaled_lr = self.learning_rate * trust_ratio
                next_v = tf.multiply(self.momentum, v) + scaled_lr * grad
                assignments.extend([param.assign(param - next_v), v.assign(next_v)])
            if global_step is not None:
                assignments.append(global_step.assign(global_step + 1))
            return tf.group(*assignments, name=name)

        def _use_weight_decay(self, param_name):
            if not self.weight_decay:
                return False
            return not any(re.search(r, param_name) for r in self.exclude_from_weight_decay or [])

        def _do_layer_adaptation(self, param_name):
            patterns = self.exclude_from_layer_adaptation or []
            return not any(re.search(r, param_name) for r in patterns)

    return LARSOptimizer


def train_summaries(tf, flags, model_dir, scalars):
    """model.py's tf2 summaries: a writer made in model_fn, recorded every N steps."""
    v1 = tf.compat.v1
    summary_writer = tf.summary.create_file_writer(model_dir)
    with tf.control_dependencies([summary_writer.init()]), summary_writer.as_default():
        step = v1.train.get_global_step()
        should_record = tf.math.equal(tf.math.floormod(step, flags["train_summary_steps"]), 0)
        with tf.summary.record_if(should_record):
            for name, value in scalars.items():
                tf.summary.scalar(name, value, step=v1.train.get_global_step())


def simclr_metric_fn(tf):
    metrics = tf.compat.v1.metrics

    def metric_fn(logits_sup, labels_sup, logits_con, labels_con, mask, **kws):
        found = {k: metrics.mean(v, weights=mask) for k, v in kws.items()}
        found["label_top_1_accuracy"] = metrics.accuracy(
            tf.argmax(labels_sup, 1), tf.argmax(logits_sup, axis=1), weights=mask
        )
        found["label_top_5_accuracy"] = metrics.recall_at_k(
            tf.argmax(labels_sup, 1), logits_sup, k=5, weights=mask
        )
        found["contrastive_top_1_accuracy"] = metrics.accuracy(
            tf.argmax(labels_con, 1), tf.argmax(logits_con, axis=1), weights=mask
        )
        found["contrastive_top_5_accuracy"] = metrics.recall_at_k(
            tf.argmax(labels_con, 1), logits_con, k=5, weights=mask
        )
        return found

    return metric_fn


def simclr_heads(tf, flags, model, features, labels, is_training, params):
    """model_fn's forward pass: (contrast_loss, logits_con, labels_con, logits_sup)."""
    v1 = tf.compat.v1
    num_transforms = 2 if flags["train_mode"] == "pretrain" else 1
    # (an export's model_fn has no batch size: the hub module's graph is built without)
    batch_size = params.get("batch_size") or tf.shape(features)[0]
    features = tf.concat(tf.split(features, num_or_size_splits=num_transforms, axis=-1), 0)
    with v1.variable_scope("base_model"):
        model_train_mode = is_training and flags["fine_tune_after_block"] < 4
        hiddens = model(features, is_training=model_train_mode)
    if flags["train_mode"] == "pretrain":
        hiddens_proj = projection_head(tf, flags, hiddens, is_training)
        contrast_loss, logits_con, labels_con = add_contrastive_loss(
            tf, hiddens_proj, flags["hidden_norm"], flags["temperature"]
        )
        logits_sup = tf.zeros([batch_size, CLASSES])
    else:
        contrast_loss = tf.zeros([])
        logits_con = tf.zeros([batch_size, 10])
        labels_con = tf.zeros([batch_size, 10])
        hiddens = projection_head(tf, flags, hiddens, is_training)
        logits_sup = supervised_head(tf, hiddens, CLASSES, is_training)
        if labels is not None:
            v1.losses.softmax_cross_entropy(labels["labels"], logits_sup, weights=labels["mask"])
    return contrast_loss, logits_con, labels_con, logits_sup


def simclr_scaffold_fn(tf, flags):
    """model.py's scaffold_fn: the checkpoint's variables, the logits layer zeroed."""
    v1 = tf.compat.v1

    def scaffold_fn():
        v1.train.init_from_checkpoint(
            flags["checkpoint"],
            {v.op.name: v.op.name for v in v1.global_variables(flags["variable_schema"])},
        )
        if not flags["zero_init_logits_layer"]:
            return v1.train.Scaffold()
        output_layer_parameters = [
            var for var in v1.trainable_variables() if var.name.startswith("head_supervised")
        ]
        v1.logging.info(
            "Initializing output layer parameters %s to zero",
            [x.op.name for x in output_layer_parameters],
        )
        with tf.control_dependencies([v1.global_variables_initializer()]):
            init_op = tf.group([v1.assign(x, tf.zeros_like(x)) for x in output_layer_parameters])
        return v1.train.Scaffold(init_op=init_op)

    return scaffold_fn if flags["checkpoint"] else None


def simclr_train_spec(tf, flags, model_dir, loss, learning_rate, stats):
    v1 = tf.compat.v1
    if flags["train_mode"] == "pretrain":
        variables_to_train = v1.trainable_variables()
    else:
        variables_to_train = []
        for j in range(flags["fine_tune_after_block"] + 1, 6):
            variables_to_train += v1.get_collection("trainable_variables_inblock_" + str(j))
    v1.logging.info("Variables to train: %s", [v.op.name for v in variables_to_train])
    train_summaries(tf, flags, model_dir, dict(stats, learning_rate=learning_rate))
    exclude = ["batch_normalization", "bias", "head_supervised"]
    optimizer = lars_optimizer_class(tf)(
        learning_rate, flags["momentum"], flags["weight_decay"], exclude
    )
    control_deps = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
    control_deps.extend(v1.summary.all_v2_summary_ops())
    with tf.control_dependencies(control_deps):
        train_op = optimizer.minimize(
            loss, global_step=v1.train.get_or_create_global_step(), var_list=variables_to_train
        )
    return v1.estimator.tpu.TPUEstimatorSpec(
        mode="train", train_op=train_op, loss=loss, scaffold_fn=simclr_scaffold_fn(tf, flags)
    )


def build_model_fn(tf, flags, model, model_dir):
    """model.build_model_fn."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params=None):
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        contrast_loss, logits_con, labels_con, logits_sup = simclr_heads(
            tf, flags, model, features, labels, is_training, params
        )
        if mode == tf.estimator.ModeKeys.PREDICT:  # the hub module's outputs, for export
            predictions = {"logits_sup": logits_sup}
            return v1.estimator.tpu.TPUEstimatorSpec(mode, predictions=predictions)
        add_weight_decay(tf, flags)
        loss = v1.losses.get_total_loss()
        learning_rate = learning_rate_schedule(tf, flags, flags["learning_rate"], NUM_TRAIN)
        if is_training:
            contrast_acc = tf.equal(tf.argmax(labels_con, 1), tf.argmax(logits_con, axis=1))
            stats = {
                "train_contrast_loss": contrast_loss,
                "train_contrast_acc": tf.reduce_mean(tf.cast(contrast_acc, tf.float32)),
            }
            return simclr_train_spec(tf, flags, model_dir, loss, learning_rate, stats)
        metrics = {
            "logits_sup": logits_sup,
            "labels_sup": labels["labels"],
            "logits_con": logits_con,
            "labels_con": labels_con,
            "mask": labels["mask"],
            "contrast_loss": tf.fill((params["batch_size"],), contrast_loss),
            "regularization_loss": tf.fill(
                (params["batch_size"],), v1.losses.get_regularization_loss()
            ),
        }
        return v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode, loss=loss, eval_metrics=(simclr_metric_fn(tf), metrics), scaffold_fn=None
        )

    return model_fn


def simclr_estimator(tf, flags, model_dir):
    """run.py's main: the TPU RunConfig and TPUEstimator."""
    tpu = tf.compat.v1.estimator.tpu
    checkpoint_steps = flags["checkpoint_steps"]
    run_config = tpu.RunConfig(
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=checkpoint_steps,
            # SLICED in run.py: both refuse it off TPUs at evaluation (held by tpu_samples'
            # tpu_estimator_words), so a CPU run sets PER_HOST_V1.
            eval_training_input_configuration=tpu.InputPipelineConfig.PER_HOST_V1,
        ),
        model_dir=model_dir,
        save_summary_steps=checkpoint_steps,
        save_checkpoints_steps=checkpoint_steps,
        keep_checkpoint_max=flags["keep_checkpoint_max"],
        master=None,
        cluster=None,
    )
    estimator = tpu.TPUEstimator(
        build_model_fn(tf, flags, tower(tf), model_dir),
        config=run_config,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
        use_tpu=False,
    )
    return estimator, run_config


def serving_input_fn(tf):
    images = tf.compat.v1.placeholder(tf.float32, [None, DIM], name="images")
    return tf.estimator.export.TensorServingInputReceiver(images, {"images": images})


def perform_evaluation(tf, flags, estimator, eval_steps, model_dir, checkpoint_path=None):
    """run.perform_evaluation: the result as JSON (the hub module's export an
    export_saved_model of the checkpoint under hub/<step>)."""
    if not checkpoint_path:
        checkpoint_path = estimator.latest_checkpoint()
    result = estimator.evaluate(
        build_input_fn(tf, flags, False),
        eval_steps,
        checkpoint_path=checkpoint_path,
        name=flags["eval_name"],
    )
    with tf.io.gfile.GFile(os.path.join(model_dir, "result.json"), "w") as f:
        json.dump({k: float(v) for k, v in result.items()}, f)
    result_json_path = os.path.join(model_dir, f"result_{result['global_step']}.json")
    with tf.io.gfile.GFile(result_json_path, "w") as f:
        json.dump({k: float(v) for k, v in result.items()}, f)
    with tf.io.gfile.GFile(os.path.join(model_dir, "flags.json"), "w") as f:
        json.dump(flags, f)
    if flags["train_mode"] == "finetune":
        hub_dir = os.path.join(model_dir, "hub")
        tf.io.gfile.makedirs(hub_dir)
        exported = estimator.export_saved_model(
            hub_dir, lambda: serving_input_fn(tf), checkpoint_path=checkpoint_path
        )
        export_dir = os.path.join(hub_dir, str(result["global_step"]))
        tf.io.gfile.rename(exported, export_dir)
    return result


def simclr_main(tf, flags, model_dir):
    """run.py's main for --mode=train, eval or train_then_eval; each result returned."""
    train_steps = get_train_steps(flags, NUM_TRAIN)
    eval_steps = math.ceil(NUM_EVAL / flags["eval_batch_size"])
    estimator, run_config = simclr_estimator(tf, flags, model_dir)
    results = []
    if flags["mode"] == "eval":
        for ckpt in tf.compat.v1.train.checkpoints_iterator(
            run_config.model_dir, min_interval_secs=15
        ):
            try:
                result = perform_evaluation(tf, flags, estimator, eval_steps, model_dir, ckpt)
            except tf.errors.NotFoundError:
                continue
            results.append(result)
            if result["global_step"] >= train_steps:
                return results
    estimator.train(build_input_fn(tf, flags, True), max_steps=train_steps)
    if flags["mode"] == "train_then_eval":
        results.append(perform_evaluation(tf, flags, estimator, eval_steps, model_dir))
    return results


def tensor_summaries(tf, directory):
    """{tag: [[step, value]]} of the tf2 scalar summaries in `directory`'s event files."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("tensor"):
                    number = float(tf.make_ndarray(value.tensor))
                    found.setdefault(value.tag, []).append([int(event.step), number])
    return {tag: sorted(rows) for tag, rows in sorted(found.items())}


def checkpoint_values(tf, model_dir, names):
    reader = tf.train.load_checkpoint(model_dir)
    return {name: np.ravel(reader.get_tensor(name)).tolist() for name in names}


def _json_files(model_dir):
    found = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "result*.json"))):
        with open(path) as f:
            found[os.path.basename(path)] = json.load(f)
    return found


def _simclr_pretrained(tf, workdir, lines, evaluate=True):
    model_dir = os.path.join(workdir, "pretrain")
    flags = dict(SIMCLR, mode="train")
    with tf.Graph().as_default(), info_lines() as seen:
        simclr_main(tf, flags, model_dir)
        results = simclr_main(tf, dict(flags, mode="eval"), model_dir) if evaluate else []
    lines.extend(seen)
    return model_dir, results


def simclr_seen(tf, model_dir, lines, results):
    """What both simclr programs compare: (exact parts, values)."""
    exact = {
        "lines": lines,
        "listing": listing(model_dir),
        "variables": _checkpoint_variables(tf, model_dir),
        "evaluated": [sorted(r) for r in results],
        "summary_steps": {
            tag: [row[0] for row in rows] for tag, rows in tensor_summaries(tf, model_dir).items()
        },
    }
    values = {str(i): {k: float(v) for k, v in r.items()} for i, r in enumerate(results)}
    return exact, {"results": values}


PRETRAIN_READ = [
    "base_model/dense/kernel",
    "base_model/dense/kernel/Momentum",
    "base_model/batch_normalization/moving_mean",
    "head_contrastive/nl_1/dense/kernel",
]


@program
def simclr_pretrain_then_eval(tf, workdir):
    """simclr v1 pre-trained with LARS, then its eval mode over the checkpoints."""
    lines = []
    model_dir, results = _simclr_pretrained(tf, workdir, lines)
    exact, close = simclr_seen(tf, model_dir, lines, results)
    return {
        "exact": {
            **exact,
            "tags": event_tags(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
        },
        "close": {
            **close,
            "json": _json_files(model_dir),
            "summaries": tensor_summaries(tf, model_dir),
            "checkpoint": checkpoint_values(tf, model_dir, PRETRAIN_READ),
        },
    }


def served_in_session(tf, export_dir, images):
    """The export loaded in a graph (as hub.Module's users load one) and run."""
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as session:
        meta = v1.saved_model.loader.load(session, ["serve"], export_dir)
        signature = meta.signature_def["serving_default"]
        fetches = {k: v.name for k, v in signature.outputs.items()}
        feed = {signature.inputs["images"].name: images}
        return {k: np.ravel(v).tolist() for k, v in session.run(fetches, feed).items()}


FINETUNE_READ = [
    "head_supervised/linear_layer/dense/kernel",
    "head_supervised/linear_layer/dense/bias",
    "base_model/dense/kernel",
]


@program
def simclr_finetune_and_export(tf, workdir):
    """simclr v1 fine-tuned from the pre-trained checkpoint (scaffold_fn), evaluated,
    exported and served."""
    pretrain_dir, _ = _simclr_pretrained(tf, workdir, [], evaluate=False)
    model_dir = os.path.join(workdir, "finetune")
    flags = dict(
        SIMCLR,
        mode="train_then_eval",
        train_mode="finetune",
        learning_rate=0.1,
        fine_tune_after_block=4,
        zero_init_logits_layer=True,
        checkpoint=tf.train.latest_checkpoint(pretrain_dir),
    )
    with tf.Graph().as_default(), info_lines() as lines:
        results = simclr_main(tf, flags, model_dir)
    export_dir = os.path.join(model_dir, "hub", str(results[0]["global_step"]))
    outputs = served_in_session(tf, export_dir, simclr_data(3, 5)[0])
    exact, close = simclr_seen(tf, model_dir, lines, results)
    return {
        "exact": {**exact, "export": meta_graphs(export_dir)},
        "close": {
            **close,
            "served": outputs,
            "checkpoint": checkpoint_values(tf, model_dir, FINETUNE_READ),
            "base_unchanged": checkpoint_values(tf, pretrain_dir, ["base_model/dense/kernel"]),
        },
    }


# ------------------------------------------------------------------ tapas
TAPAS = {
    "train_batch_size": 4,
    "eval_batch_size": 4,
    "predict_batch_size": 4,
    "gradient_accumulation_steps": 1,
    "num_train_examples": 24,
    "learning_rate": 0.05,
    "warmup_ratio": 0.34,
    "num_eval_steps": None,
    "save_checkpoints_steps": 2,
    "keep_checkpoint_max": 2,
    "keep_checkpoint_every_n_hours": 4.0,
    "use_tpu": None,
    "tpu_iterations_per_loop": 1000,
    "num_tpu_cores": None,
    "tf_random_seed": None,
    "eval_name": None,
    "cell_classification_threshold": 0.2,
    "temperature": 1.0,
    "num_classification_labels": 2,
}
TSEQ, TVOCAB, QLEN, TH = 10, 20, 8, 8
PADDED_QUESTION_ID = "<padded>"
TAPAS_INT_FEATURES = {
    "input_ids": TSEQ,
    "input_mask": TSEQ,
    "segment_ids": TSEQ,
    "column_ids": TSEQ,
    "row_ids": TSEQ,
    "prev_label_ids": TSEQ,
    "label_ids": TSEQ,
    "classification_class_index": 1,
}


def str_to_ints(text, length):
    """text_utils.str_to_ints: a question id as code points, zero-padded."""
    ints = [ord(c) for c in text][:length]
    return ints + [0] * (length - len(ints))


def ints_to_str(ints):
    return "".join(chr(i) for i in ints if i != 0)


def parse_question_id(question_id):
    """text_utils.parse_question_id: '<table>-<annotator>_<position>'."""
    match = re.fullmatch(r"([^-]+)-([^_]+)_(\d+)", question_id)
    if not match:
        raise ValueError(f"Invalid question id: {question_id}")
    return match.group(1), match.group(2), int(match.group(3))


def tapas_example(rng, question_id):
    """A question (segment 0) then a 2x2 table's cells (segment 1), two tokens a cell."""
    question = [1, *rng.randint(3, TVOCAB, 1)]
    cells = [(c, r) for r in (1, 2) for c in (1, 2) for _ in range(2)]
    answer = cells[rng.randint(len(cells))]
    return {
        "input_ids": question + list(rng.randint(3, TVOCAB, len(cells))),
        "input_mask": [1] * TSEQ,
        "segment_ids": [0, 0] + [1] * len(cells),
        "column_ids": [0, 0] + [c for c, _ in cells],
        "row_ids": [0, 0] + [r for _, r in cells],
        "prev_label_ids": [0] * TSEQ,
        "label_ids": [0, 0] + [int(cell == answer) for cell in cells],
        "classification_class_index": [int(answer[0] == 2)],
        "question_id_ints": str_to_ints(question_id, QLEN),
    }


def write_tapas_records(tf, path, question_ids, padded, seed):
    """tf.Examples as tapas's create_data writes them (padded to the batch size)."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        rows = [tapas_example(rng, qid) for qid in question_ids]
        empty = {key: [0] * width for key, width in TAPAS_INT_FEATURES.items()}
        rows += [dict(empty, question_id_ints=str_to_ints(PADDED_QUESTION_ID, QLEN))] * padded
        for row in rows:
            feature = {
                k: tf.train.Feature(int64_list=tf.train.Int64List(value=v)) for k, v in row.items()
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())


def tapas_input_fn(tf, name, file_patterns, is_training, include_id, params):
    """tapas_classifier_model.input_fn (dataset.read_dataset): parsed, int32, batches
    of the mode's batch size with the remainder dropped."""
    del name
    features = {k: tf.io.FixedLenFeature([w], tf.int64) for k, w in TAPAS_INT_FEATURES.items()}
    if include_id:
        features["question_id_ints"] = tf.io.FixedLenFeature([QLEN], tf.int64)

    def parse(serialized):
        example = tf.io.parse_single_example(serialized, features)
        return {k: tf.cast(v, tf.int32) for k, v in example.items()}

    dataset = tf.data.TFRecordDataset(tf.io.gfile.glob(file_patterns))
    if is_training:
        dataset = dataset.repeat()
    dataset = dataset.map(parse)
    return dataset.batch(params["batch_size"], drop_remainder=True)


def _tapas_variable(tf, name, shape, seed):
    init = tf.compat.v1.constant_initializer(_fixed(shape, seed, 0.5))
    return tf.compat.v1.get_variable(name, shape, initializer=init)


def tapas_encoder(tf, features):
    """The BERT encoder, two layers: summed token-type embeddings, then a dense layer."""
    v1 = tf.compat.v1
    with v1.variable_scope("bert/embeddings"):
        output = tf.gather(
            _tapas_variable(tf, "word_embeddings", [TVOCAB, TH], 41), features["input_ids"]
        )
        for i, key in enumerate(("segment_ids", "column_ids", "row_ids", "prev_label_ids")):
            table = _tapas_variable(tf, f"token_type_embeddings_{i}", [3, TH], 42 + i)
            output += tf.gather(table, features[key])
    with v1.variable_scope("bert/encoder"):
        kernel = v1.constant_initializer(_fixed([TH, TH], 47, 0.5))
        return v1.layers.dense(output, TH, activation=tf.tanh, kernel_initializer=kernel)


def tapas_heads(tf, output_layer, temperature):
    """compute_token_logits and the classification logits of the first token."""
    output_weights = _tapas_variable(tf, "output_weights", [TH], 48)
    output_bias = tf.compat.v1.get_variable(
        "output_bias", shape=(), initializer=tf.zeros_initializer()
    )
    logits = (tf.einsum("bsj,j->bs", output_layer, output_weights) + output_bias) / temperature
    weights_cls = _tapas_variable(tf, "output_weights_cls", [2, TH], 49)
    bias_cls = tf.compat.v1.get_variable(
        "output_bias_cls", shape=[2], initializer=tf.zeros_initializer()
    )
    logits_cls = (
        tf.matmul(tf.reduce_mean(output_layer, 1), weights_cls, transpose_b=True) + bias_cls
    )
    return logits, logits_cls


def tapas_metric_fn(tf):
    metrics = tf.compat.v1.metrics

    def metric_fn(per_example_loss, label_ids, logits, mask, gold_cls, logits_cls):
        predictions = tf.cast(logits >= 0.0, tf.int32)
        return {
            "eval_sequence_accuracy": metrics.accuracy(label_ids, predictions, weights=mask),
            "eval_loss": metrics.mean(values=per_example_loss),
            "eval_classification_accuracy": metrics.accuracy(
                gold_cls[:, 0], tf.argmax(logits_cls, axis=-1, output_type=tf.int32)
            ),
        }

    return metric_fn


def tapas_model_fn_builder(tf, config):
    """tapas_classifier_model.model_fn_builder: cell selection and classification."""
    from tests.bert_task_programs import create_optimizer

    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        del labels
        v1.logging.info("*** Features ***")
        for name in sorted(features.keys()):
            v1.logging.info("  name = %s, shape = %s", name, features[name].shape)
        output_layer = tapas_encoder(tf, features)
        logits, logits_cls = tapas_heads(tf, output_layer, config["temperature"])
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {
                "probabilities": tf.sigmoid(logits),
                **{k: features[k] for k in ("input_ids", "column_ids", "row_ids", "segment_ids")},
                "question_id_ints": features["question_id_ints"],
                "gold_cls": features["classification_class_index"],
                "pred_cls": tf.argmax(logits_cls, axis=-1),
                "logits_cls": logits_cls,
            }
            return tpu.TPUEstimatorSpec(mode=mode, predictions=predictions)
        mask = tf.cast(features["segment_ids"] * tf.sign(features["column_ids"]), tf.float32)
        label_ids = features["label_ids"]
        token_loss = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(label_ids, tf.float32), logits=logits
        )
        per_example_loss = tf.reduce_sum(token_loss * mask, 1) / tf.reduce_sum(mask, 1)
        gold_cls = features["classification_class_index"]
        per_example_loss += tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=gold_cls[:, 0], logits=logits_cls
        )
        total_loss = tf.reduce_mean(per_example_loss)
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = create_optimizer(
                tf,
                total_loss,
                config["learning_rate"],
                config["num_train_steps"],
                config["num_warmup_steps"],
            )
            return tpu.TPUEstimatorSpec(mode=mode, loss=total_loss, train_op=train_op)
        metric_args = [per_example_loss, label_ids, logits, mask, gold_cls, logits_cls]
        return tpu.TPUEstimatorSpec(
            mode=mode, loss=total_loss, eval_metrics=(tapas_metric_fn(tf), metric_args)
        )

    return model_fn


def tapas_build_estimator(tf, flags, model_fn, model_dir):
    """experiment_utils.build_estimator."""
    tpu = tf.compat.v1.estimator.tpu
    run_config = tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=model_dir,
        tf_random_seed=flags["tf_random_seed"],
        save_checkpoints_steps=flags["save_checkpoints_steps"],
        keep_checkpoint_max=flags["keep_checkpoint_max"],
        keep_checkpoint_every_n_hours=flags["keep_checkpoint_every_n_hours"],
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["tpu_iterations_per_loop"],
            num_shards=flags["num_tpu_cores"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    return tpu.TPUEstimator(
        params={"gradient_accumulation_steps": flags["gradient_accumulation_steps"]},
        use_tpu=flags["use_tpu"],
        model_fn=model_fn,
        config=run_config,
        train_batch_size=flags["train_batch_size"] // flags["gradient_accumulation_steps"],
        eval_batch_size=flags["eval_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
    )


def get_mean_cell_probs(prediction):
    """prediction_utils.get_mean_cell_probs: each cell's tokens' mean probability."""
    coords_to_probs = {}
    for i, prob in enumerate(prediction["probabilities"]):
        col, row = prediction["column_ids"][i] - 1, prediction["row_ids"][i] - 1
        if col >= 0 and row >= 0 and prediction["segment_ids"][i] == 1:
            coords_to_probs.setdefault((col, row), []).append(prob)
    return {coords: np.array(probs).mean() for coords, probs in coords_to_probs.items()}


def _write_prediction(prediction, threshold, writer):
    """prediction_utils._write_prediction, cell selection and classification."""
    question_id = ints_to_str(prediction["question_id_ints"])
    max_width, max_height = prediction["column_ids"].max(), prediction["row_ids"].max()
    if max_width == 0 and max_height == 0 and question_id == PADDED_QUESTION_ID:
        return False
    cell_coords_to_prob = get_mean_cell_probs(prediction)
    answer_coordinates = []
    for col in range(max_width):
        for row in range(max_height):
            cell_prob = cell_coords_to_prob.get((col, row), None)
            if cell_prob is not None and cell_prob > threshold:
                answer_coordinates.append(str((row, col)))
    example_id, annotator, position = parse_question_id(question_id)
    writer.writerow(
        {
            "question_id": question_id,
            "id": example_id,
            "annotator": annotator,
            "position": str(position),
            "answer_coordinates": str(answer_coordinates),
            "gold_cls": str(prediction["gold_cls"][0]),
            "pred_cls": str(prediction["pred_cls"]),
            "answer_score": f"{max(cell_coords_to_prob.values()):.5f}",
            "logits_cls": " ".join(f"{v:.5f}" for v in prediction["logits_cls"]),
        }
    )
    return True


def write_predictions(tf, predictions, output_predict_file, threshold):
    """prediction_utils.write_predictions: a TSV, its header even when empty."""
    import csv

    header = ["question_id", "id", "annotator", "position", "answer_coordinates"]
    header += ["answer_score", "gold_cls", "pred_cls", "logits_cls"]
    with tf.io.gfile.GFile(output_predict_file, "w") as write_file:
        writer = csv.DictWriter(write_file, fieldnames=header, delimiter="\t")
        writer.writeheader()
        written = [_write_prediction(p, threshold, writer) for p in predictions]
    tf.compat.v1.logging.info("Removed %d padded examples", written.count(False))


def read_classifier_dataset(tf, predict_data):
    """prediction_utils.read_classifier_dataset: examples in memory, read in a Session
    from a one-shot iterator (the padded ones skipped)."""
    v1 = tf.compat.v1
    examples_by_position = {}
    with tf.Graph().as_default():
        dataset = tapas_input_fn(tf, "predict", predict_data, False, True, {"batch_size": 1})
        get_next = v1.data.make_one_shot_iterator(dataset).get_next()
        with v1.Session() as sess:
            try:
                while True:
                    example = sess.run(get_next)
                    question_id = ints_to_str(example["question_id_ints"][0])
                    if question_id == PADDED_QUESTION_ID:
                        continue
                    table_id, annotator, position = parse_question_id(question_id)
                    examples_by_position.setdefault(position, {})[(table_id, annotator)] = example
            except tf.errors.OutOfRangeError:
                pass
    return examples_by_position


def _get_in_memory_input_fn(tf, examples):
    def _input_fn(params):
        keys = list(examples[0])
        dataset = tf.data.Dataset.zip(
            {
                key: tf.data.Dataset.from_tensor_slices(np.concatenate([e[key] for e in examples]))
                for key in keys
            }
        )
        return dataset.batch(params["batch_size"])

    return _input_fn


def _previous_answers(results):
    answers = {}
    for prediction in results:
        table_id, annotator, _ = parse_question_id(ints_to_str(prediction["question_id_ints"]))
        cells = get_mean_cell_probs(prediction)
        answers[(table_id, annotator)] = {key: prob > 0.5 for key, prob in cells.items()}
    return answers


def compute_prediction_sequence(tf, estimator, examples_by_position):
    """prediction_utils.compute_prediction_sequence: each position predicted with the
    model's answers to the previous question as `prev_label_ids`."""
    all_results, prev_answers = [], None
    for position in range(len(examples_by_position)):
        examples = {k: dict(v) for k, v in examples_by_position[position].items()}
        for example_id, example in examples.items() if prev_answers is not None else ():
            model_label_ids = np.zeros_like(example["prev_label_ids"])
            for i in range(model_label_ids.shape[1]):
                row_id, col_id = example["row_ids"][0, i] - 1, example["column_ids"][0, i] - 1
                if row_id >= 0 and col_id >= 0 and example["segment_ids"][0, i] == 1:
                    model_label_ids[0, i] = int(prev_answers[example_id][(col_id, row_id)])
            example["prev_label_ids"] = model_label_ids
        input_fn = _get_in_memory_input_fn(tf, list(examples.values()))
        results = list(estimator.predict(input_fn=input_fn))
        all_results.extend(results)
        prev_answers = _previous_answers(results)
    return all_results


def tapas_predict(tf, flags, estimator, checkpoint, files, model_dir):
    """run_task_main's do_predict body for one checkpoint: a TSV per input."""
    v1 = tf.compat.v1
    current_step = int(os.path.basename(checkpoint).split("-")[1])
    for mode in ("predict", "eval"):
        v1.logging.info("Running predictor for step %d.", current_step)
        input_fn = _tapas_input(tf, mode, files[mode], False, True)
        result = estimator.predict(input_fn=input_fn, checkpoint_path=checkpoint)
        output = os.path.join(model_dir, f"{mode}_results_{current_step}.tsv")
        write_predictions(tf, result, output, flags["cell_classification_threshold"])
        examples_by_position = read_classifier_dataset(tf, files[mode])
        result_sequence = compute_prediction_sequence(tf, estimator, examples_by_position)
        output = os.path.join(model_dir, f"{mode}_results_sequence_{current_step}.tsv")
        write_predictions(tf, result_sequence, output, flags["cell_classification_threshold"])
    return current_step


def _tapas_input(tf, name, pattern, is_training, include_id):
    def input_fn(params):
        return tapas_input_fn(tf, name, pattern, is_training, include_id, params)

    return input_fn


def tapas_main(tf, flags, files, model_dir):
    """run_task_main / tapas_classifier_experiment's main: train, the eval loop, the
    predict loop."""
    v1 = tf.compat.v1
    num_train_steps = flags["num_train_examples"] // flags["train_batch_size"]
    config = dict(
        flags,
        num_train_steps=num_train_steps,
        num_warmup_steps=int(num_train_steps * flags["warmup_ratio"]),
    )
    estimator = tapas_build_estimator(tf, flags, tapas_model_fn_builder(tf, config), model_dir)
    tf.io.gfile.makedirs(model_dir)
    with tf.io.gfile.GFile(os.path.join(model_dir, "tapas_config.json"), "w") as f:
        json.dump(config, f)
    estimator.train(
        _tapas_input(tf, "train", files["train"], True, False), max_steps=num_train_steps
    )
    results = []
    while True:
        checkpoint = estimator.latest_checkpoint()
        v1.logging.info("Running eval: %s", flags["eval_name"])
        result = estimator.evaluate(
            input_fn=_tapas_input(tf, "eval", files["eval"], False, True),
            steps=flags["num_eval_steps"],
            name=flags["eval_name"],
            checkpoint_path=checkpoint,
        )
        results.append(result)
        current_step = int(os.path.basename(checkpoint).split("-")[1])
        if current_step >= num_train_steps:
            v1.logging.info("Evaluation finished after training step %d", current_step)
            break
    current_step = tapas_predict(
        tf, flags, estimator, estimator.latest_checkpoint(), files, model_dir
    )
    v1.logging.info("Predictor finished after training step %d", current_step)
    return results


def read_tsv(path):
    """A written TSV's rows, the logits apart (numbers, compared as values)."""
    import csv

    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    logits = [float(v) for row in rows for v in row.pop("logits_cls").split()]
    logits += [float(row.pop("answer_score")) for row in rows]
    return rows, logits


TAPAS_GREPPED = re.compile(
    r"^(Running eval|Evaluation finished|Running predictor|Predictor finished|"
    r"Removed \d+ padded|\*\*\* Features|  name = |Calling model_fn|Running \w+ on CPU|"
    r"Saving checkpoints for|Loss for final step|Saving dict for global step|Evaluation \[|"
    r"Restoring parameters from|_TPUContext|eval_on_tpu)"
)


@program
def tapas_train_eval_predict_files(tf, workdir):
    """tapas's classifier experiment (use_tpu unset): trained, its eval loop over the
    latest checkpoint, predictions written to TSV files, and SQA's sequence prediction."""
    model_dir = os.path.join(workdir, "model")
    tables = [f"t{t}-0_{p}" for t in range(6) for p in range(2)]
    files = {
        mode: os.path.join(workdir, f"{mode}.tfrecord") for mode in ("train", "eval", "predict")
    }
    write_tapas_records(tf, files["train"], tables, 0, 1)
    write_tapas_records(tf, files["eval"], tables[:8], 0, 2)
    write_tapas_records(tf, files["predict"], tables[:6], 2, 3)
    with info_lines(TAPAS_GREPPED) as lines:
        results = tapas_main(tf, TAPAS, files, model_dir)
    written = {
        os.path.basename(p): read_tsv(p)
        for p in sorted(glob.glob(os.path.join(model_dir, "*.tsv")))
    }
    return {
        "exact": {
            "lines": lines,
            "listing": listing(model_dir),
            "variables": _checkpoint_variables(tf, model_dir),
            "evaluated": [sorted(r) for r in results],
            "tsv": {name: rows for name, (rows, _) in written.items()},
        },
        "close": {
            "results": {str(i): {k: float(v) for k, v in r.items()} for i, r in enumerate(results)},
            "logits_cls": {name: logits for name, (_, logits) in written.items()},
        },
    }


# ------------------------------------------------------------------ BERT's export hack
def bert_classifier_model_fn(tf, num_labels=2):
    """run_classifier's create_model and model_fn_builder (use_tpu=False), on a mean of
    embeddings for the encoder; its dropout left out."""
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def metric_fn(per_example_loss, label_ids, logits):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "eval_accuracy": v1.metrics.accuracy(label_ids, predictions),
            "eval_loss": v1.metrics.mean(per_example_loss),
        }

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("bert"):
            table = _tapas_variable(tf, "embeddings/word_embeddings", [TVOCAB, TH], 51)
            mask = tf.cast(features["input_mask"], tf.float32)[:, :, None]
            pooled = tf.reduce_sum(tf.gather(table, features["input_ids"]) * mask, 1)
            kernel = v1.constant_initializer(_fixed([TH, TH], 52, 0.5))
            output_layer = v1.layers.dense(
                pooled, TH, tf.tanh, kernel_initializer=kernel, name="pooler/dense"
            )
        output_weights = _tapas_variable(tf, "output_weights", [num_labels, TH], 53)
        output_bias = v1.get_variable(
            "output_bias", [num_labels], initializer=tf.zeros_initializer()
        )
        with v1.variable_scope("loss"):
            logits = tf.nn.bias_add(
                tf.matmul(output_layer, output_weights, transpose_b=True), output_bias
            )
            probabilities = tf.nn.softmax(logits, axis=-1)
            log_probs = tf.nn.log_softmax(logits, axis=-1)
            one_hot_labels = tf.one_hot(features["label_ids"], depth=num_labels, dtype=tf.float32)
            per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
            loss = tf.reduce_mean(per_example_loss)
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = v1.train.GradientDescentOptimizer(0.5)
            train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
            return tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)
        if mode == tf.estimator.ModeKeys.EVAL:
            metrics = (metric_fn, [per_example_loss, features["label_ids"], logits])
            return tpu.TPUEstimatorSpec(mode=mode, loss=loss, eval_metrics=metrics)
        return tpu.TPUEstimatorSpec(mode=mode, predictions={"probabilities": probabilities})

    return model_fn


def classifier_rows(n, seed):
    rng = np.random.RandomState(seed)
    ids = rng.randint(1, TVOCAB, (n, TSEQ)).astype(np.int32)
    mask = (np.arange(TSEQ)[None, :] < rng.randint(3, TSEQ + 1, (n, 1))).astype(np.int32)
    ids *= mask
    labels = (ids[:, 0] > TVOCAB // 2).astype(np.int32)
    return {"input_ids": ids, "input_mask": mask, "segment_ids": 0 * mask, "label_ids": labels}


def bert_serving_input_fn(tf, scope=None):
    """The blog posts' serving_input_fn: placeholders (label_ids too) through
    build_raw_serving_input_receiver_fn, optionally in a variable scope."""
    v1 = tf.compat.v1

    def serving_input_fn():
        label_ids = v1.placeholder(tf.int32, [None], name="label_ids")
        input_ids = v1.placeholder(tf.int32, [None, TSEQ], name="input_ids")
        input_mask = v1.placeholder(tf.int32, [None, TSEQ], name="input_mask")
        segment_ids = v1.placeholder(tf.int32, [None, TSEQ], name="segment_ids")
        tensors = {
            "label_ids": label_ids,
            "input_ids": input_ids,
            "input_mask": input_mask,
            "segment_ids": segment_ids,
        }
        if scope is None:
            return tf.estimator.export.build_raw_serving_input_receiver_fn(tensors)()
        with v1.variable_scope(scope):
            return tf.estimator.export.build_raw_serving_input_receiver_fn(tensors)()

    return serving_input_fn


def loaded_by_tensor_names(tf, export_dir, rows):
    """The export loaded in a session, fed and fetched by tensor names."""
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as sess:
        meta = v1.saved_model.loader.load(sess, [v1.saved_model.tag_constants.SERVING], export_dir)
        graph = v1.get_default_graph()
        signature = meta.signature_def["serving_default"]
        names = {k: v.name for k, v in sorted(signature.inputs.items())}
        # (the receiver's own placeholders: `<scope>/input_ids:0`, or `input_ids_1:0`
        # beside the serving_input_fn's unconnected `input_ids:0`)
        feed = {graph.get_tensor_by_name(names[k]): v for k, v in rows.items()}
        probabilities = sess.run(graph.get_tensor_by_name("loss/Softmax:0"), feed)
        return {"inputs": names, "outputs": sorted(signature.outputs)}, probabilities


@program
def bert_export_to_tpu_false(tf, workdir):
    """BERT run_classifier's TPUEstimator trained, then `estimator._export_to_tpu = False`
    and `export_savedmodel` (and the V2 name) of a raw receiver of placeholders, loaded in
    a session by tensor names as the blog posts do."""
    tpu = tf.compat.v1.estimator.tpu
    model_dir, rows = os.path.join(workdir, "output"), classifier_rows(12, 7)
    run_config = tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=model_dir,
        save_checkpoints_steps=1000,
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=1000,
            num_shards=8,
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=bert_classifier_model_fn(tf),
        config=run_config,
        train_batch_size=4,
        eval_batch_size=4,
        predict_batch_size=8,
    )

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(rows).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    found, served = {}, {}
    with info_lines() as lines:
        estimator.train(input_fn, max_steps=4)
        estimator._export_to_tpu = False
        exports = {
            "v1": estimator.export_savedmodel(
                os.path.join(workdir, "export"), bert_serving_input_fn(tf)
            ),
            "scoped": estimator.export_saved_model(
                os.path.join(workdir, "scoped"), bert_serving_input_fn(tf, "qqp")
            ),
        }
    for kind, path in exports.items():
        path = path.decode() if isinstance(path, bytes) else path
        found[kind], probabilities = loaded_by_tensor_names(tf, path, rows)
        found[kind]["meta_graphs"] = meta_graphs(path)
        found[kind]["listing"] = listing(path)
        served[kind] = np.ravel(probabilities).tolist()
    return {"exact": {"lines": lines, "exports": found}, "close": {"served": served}}


# ------------------------------------------------------------------ ALBERT's export
def albert_serving_input_receiver_fn(tf):
    """classifier_utils.serving_input_receiver_fn: serialized tf.Examples parsed, the
    label and `is_real_example` scalar constants, int64 cast to int32."""
    v1 = tf.compat.v1

    def serving_input_receiver_fn():
        serialized_example = v1.placeholder(
            dtype=tf.string, shape=[None], name="serialized_example"
        )
        features = {
            k: tf.io.FixedLenFeature([TSEQ], dtype=tf.int64)
            for k in ("input_ids", "input_mask", "segment_ids")
        }
        feature_map = tf.io.parse_example(serialized=serialized_example, features=features)
        feature_map["is_real_example"] = tf.constant(1, dtype=tf.int32)
        feature_map["label_ids"] = tf.constant(0, dtype=tf.int32)
        for name in feature_map:
            t = feature_map[name]
            if t.dtype == tf.int64:
                t = tf.cast(t, dtype=tf.int32)
            feature_map[name] = t
        return tf.estimator.export.ServingInputReceiver(
            features=feature_map, receiver_tensors=serialized_example
        )

    return serving_input_receiver_fn


def _serialized(tf, rows, n):
    examples = []
    for i in range(n):
        feature = {
            k: tf.train.Feature(int64_list=tf.train.Int64List(value=rows[k][i].tolist()))
            for k in ("input_ids", "input_mask", "segment_ids")
        }
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    return [example.SerializeToString() for example in examples]


@program
def albert_export_best_checkpoint(tf, workdir):
    """ALBERT run_classifier's `--export_dir`: the best checkpoint renamed
    `model.ckpt-best`, exported by `export_saved_model(checkpoint_path=...)` with its
    serving_input_receiver_fn (one receiver tensor, scalar constant features), and served
    as its hub users load it (`tags=["serve"]`)."""
    tpu = tf.compat.v1.estimator.tpu
    output_dir, rows = os.path.join(workdir, "output"), classifier_rows(12, 8)
    run_config = tpu.RunConfig(
        model_dir=output_dir, save_checkpoints_steps=2, keep_checkpoint_max=0
    )
    estimator = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=bert_classifier_model_fn(tf),
        config=run_config,
        train_batch_size=4,
        eval_batch_size=4,
        predict_batch_size=4,
    )

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(rows).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    with info_lines() as lines:
        estimator.train(input_fn, max_steps=4)
        for ext in (".data-00000-of-00001", ".index", ".meta"):
            source = os.path.join(output_dir, "model.ckpt-2" + ext)
            tf.io.gfile.rename(source, os.path.join(output_dir, "model.ckpt-best" + ext))
        checkpoint_path = os.path.join(output_dir, "model.ckpt-best")
        export_dir = os.path.join(workdir, "export")
        tf.io.gfile.makedirs(export_dir)
        tf.compat.v1.logging.info("Starting to export model.")
        subfolder = estimator.export_saved_model(
            export_dir_base=export_dir,
            serving_input_receiver_fn=albert_serving_input_receiver_fn(tf),
            checkpoint_path=checkpoint_path,
        )
    subfolder = subfolder.decode() if isinstance(subfolder, bytes) else subfolder
    signature = tf.saved_model.load(subfolder, tags=["serve"]).signatures["serving_default"]
    served = signature(input=tf.constant(_serialized(tf, rows, 3)))
    return {
        "exact": {
            "lines": lines,
            "export": meta_graphs(subfolder),
            "listing": listing(output_dir),
            "inputs": sorted(signature.structured_input_signature[1]),
        },
        "close": {k: np.ravel(v.numpy()).tolist() for k, v in sorted(served.items())},
    }


@program
def export_flags_both_false(tf, workdir):
    """The blog posts' hack taken one step further: `export_to_tpu=False` and
    `export_to_cpu=False` together, then each export call (before and after training),
    beside `export_to_tpu=False` alone."""
    tpu = tf.compat.v1.estimator.tpu
    rows = classifier_rows(8, 9)

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices(rows).repeat()
        return dataset.batch(params["batch_size"], drop_remainder=True)

    def estimator(model_dir, **flags):
        return tpu.TPUEstimator(
            use_tpu=False,
            model_fn=bert_classifier_model_fn(tf),
            config=tpu.RunConfig(model_dir=os.path.join(workdir, model_dir)),
            train_batch_size=4,
            predict_batch_size=4,
            **flags,
        )

    neither = estimator("neither", export_to_tpu=False, export_to_cpu=False)
    receiver = bert_serving_input_fn(tf)
    base = os.path.join(workdir, "exports")
    found = {"untrained": error_of(lambda: neither.export_saved_model(base, receiver))}
    neither.train(input_fn, max_steps=2)
    found["export_saved_model"] = error_of(lambda: neither.export_saved_model(base, receiver))
    found["export_savedmodel"] = error_of(lambda: neither.export_savedmodel(base, receiver))
    receivers = {tf.estimator.ModeKeys.PREDICT: receiver}
    found["all_saved_models"] = error_of(
        lambda: neither.experimental_export_all_saved_models(base, receivers)
    )
    tpu_only = estimator("tpu_only", export_to_cpu=False)
    tpu_only.train(input_fn, max_steps=2)
    error = error_of(lambda: tpu_only.experimental_export_all_saved_models(base, receivers))
    found["tpu_only_all_saved_models"] = error and [error[0], error[1].split("\n")[0]]
    templates = {k: tf.zeros([1, TSEQ], tf.int32) for k in ("input_ids", "input_mask")}
    labels = tf.zeros([1], tf.int32)
    training = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(templates, labels)
    found["tpu_only_train_graph"] = error_of(
        lambda: tpu_only.experimental_export_all_saved_models(base, {"train": training})
    )
    cpu_only = estimator("cpu_only", export_to_tpu=False)
    cpu_only.train(input_fn, max_steps=2)
    path = cpu_only.export_saved_model(os.path.join(workdir, "cpu_only_export"), receiver)
    found["cpu_only"] = meta_graphs(path.decode() if isinstance(path, bytes) else path)
    for key, value in found.items():  # (the folder in `Couldn't find trained model at ...`)
        if key != "cpu_only" and value:
            value[1] = value[1].replace(workdir, "<workdir>")
    return {"exact": found, "close": {}}
