"""google-research/bert's pre-training and SQuAD programs with `--use_tpu=False`, as
`tf_upgrade_v2` leaves them, on a tiny BERT (hidden size 8, one layer, sequences of 8) and
made-up token ids; each keeps its sample's TPUEstimator usage:

- `bert_pretraining`: `run_pretraining.py`: TFRecords the program writes (two files, read
  by `parallel_interleave` for training and in turn for evaluation, through `map_and_batch`
  with `drop_remainder=True`), the masked LM over `gather_indexes` of the flattened sequence
  and the next-sentence output, `get_assignment_map_from_checkpoint` and
  `init_from_checkpoint` off TPUs, the trainable variables logged with `*INIT_FROM_CKPT*`,
  `optimization.create_optimizer` (its own v1 Optimizer with `_get_variable_name` and the
  weight-decay exclusions, a warm-up then polynomial decay, `clip_by_global_norm`, the
  global step advanced by the train op), `eval_metrics=(metric_fn, [seven tensors])` with
  weighted `accuracy` and `mean`, `evaluate(steps=max_eval_steps)` written to
  `eval_results.txt`;
- `bert_squad`: `run_squad.py`: features written by its FeatureWriter, `unique_ids`, a
  span classifier on the sequence output, `num_train_steps` from the epochs (no warm-up:
  `create_optimizer`'s other branch), `save_checkpoints_steps` and `iterations_per_loop`,
  `predict_batch_size` with no `eval_batch_size`, `predict(yield_single_examples=True)`
  read into `RawResult`s and the best spans written to `predictions.json`, and what
  `evaluate` (which its model_fn refuses) tells a user.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_bert_tasks.py` with what `tests/tf215/record_family.py bert_task_programs`
recorded under tf.estimator 2.15 (`tests/data/tf215/bert_tasks.json`). Every weight starts
from fixed numbers (constant initializers, or the checkpoint the program writes), nothing is
shuffled and nothing drops out, so values match to 1e-4.
"""

import collections
import json
import math
import os
import re
import tempfile

import numpy as np

from tests.program_registry import registry
from tests.public_sample_programs import _NUMBER
from tests.tpu_sample_programs import (
    GREPPED,
    decode_record,
    info_lines,
    records_input_fn,
    write_pretrained_checkpoint,
)
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, floats, listing, structure

RECORDED = os.path.join(DATA_DIR, "bert_tasks.json")
# TPUEstimator's lines, and the ones the samples log themselves (their banners, features,
# trainable variables, eval results and progress).
LOGGED = re.compile(
    f"{GREPPED.pattern[:-1]}|\\*\\*\\*|  \\w[\\w ]* = |Processing example|"
    "Using temporary folder|Could not find trained model)"
)
# A folder in the temporary one (the program's, or an Estimator's own temporary model_dir:
# 2.15's /tmp/tmp<...>, the kit's <temp folder>/estimator-<...>).
TEMPORARY_MODEL_DIR = re.compile(re.escape(tempfile.gettempdir()) + r"/[^\s,]+")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

VOCAB, SEQ, HIDDEN, HEADS, INTERMEDIATE, MAX_PREDICTIONS = 24, 8, 8, 2, 16, 2


def _fixed(shape, seed, scale=0.3):
    return np.random.RandomState(seed).normal(scale=scale, size=shape).astype(np.float32)


def pretrained_values():
    """The 'pre-trained' BERT: every `bert/` variable, as fixed numbers."""
    shapes = {
        "bert/embeddings/word_embeddings": [VOCAB, HIDDEN],
        "bert/embeddings/token_type_embeddings": [2, HIDDEN],
        "bert/embeddings/position_embeddings": [SEQ, HIDDEN],
    }
    layer = "bert/encoder/layer_0"
    for name in ("attention/self/query", "attention/self/key", "attention/self/value"):
        shapes[f"{layer}/{name}/kernel"] = [HIDDEN, HIDDEN]
    shapes[f"{layer}/attention/output/dense/kernel"] = [HIDDEN, HIDDEN]
    shapes[f"{layer}/intermediate/dense/kernel"] = [HIDDEN, INTERMEDIATE]
    shapes[f"{layer}/output/dense/kernel"] = [INTERMEDIATE, HIDDEN]
    shapes["bert/pooler/dense/kernel"] = [HIDDEN, HIDDEN]
    values = {name: _fixed(shape, seed) for seed, (name, shape) in enumerate(shapes.items())}
    for name, shape in shapes.items():  # its biases: small fixed numbers too
        if name.endswith("/kernel"):
            values[name[: -len("kernel")] + "bias"] = _fixed(shape[-1:], 50 + len(values), 0.05)
    for scope in ("embeddings", "encoder/layer_0/attention/output", "encoder/layer_0/output"):
        values[f"bert/{scope}/LayerNorm/beta"] = np.zeros(HIDDEN, np.float32)
        values[f"bert/{scope}/LayerNorm/gamma"] = np.ones(HIDDEN, np.float32)
    return values


# ------------------------------------------------------------------ modeling.py
def create_initializer(tf, shape, seed):
    """modeling.create_initializer (a truncated normal), as fixed numbers here."""
    return tf.compat.v1.constant_initializer(_fixed(shape, 100 + seed, 0.2))


def gelu(tf, x):
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def layer_norm(tf, input_tensor, name="LayerNorm"):
    """modeling.layer_norm (contrib's layer_norm over the last axis, which tf_upgrade_v2
    cannot convert) written out: `LayerNorm/beta` and `LayerNorm/gamma`."""
    v1 = tf.compat.v1
    with v1.variable_scope(name):
        width = input_tensor.shape[-1]
        beta = v1.get_variable("beta", [width], initializer=v1.zeros_initializer())
        gamma = v1.get_variable("gamma", [width], initializer=v1.ones_initializer())
        mean, variance = tf.nn.moments(input_tensor, axes=[-1], keepdims=True)
        return tf.nn.batch_normalization(input_tensor, mean, variance, beta, gamma, 1e-12)


def dense(tf, inputs, units, name, seed, activation=None):
    return tf.compat.v1.layers.dense(
        inputs,
        units,
        activation=activation,
        name=name,
        kernel_initializer=create_initializer(tf, [inputs.shape[-1], units], seed),
    )


def embeddings(tf, input_ids, token_type_ids, batch_size):
    v1 = tf.compat.v1
    with v1.variable_scope("embeddings"):
        table = v1.get_variable(
            "word_embeddings",
            [VOCAB, HIDDEN],
            initializer=create_initializer(tf, [VOCAB, HIDDEN], 1),
        )
        output = tf.reshape(
            tf.gather(table, tf.reshape(input_ids, [-1])), [batch_size, SEQ, HIDDEN]
        )
        token_types = v1.get_variable(
            "token_type_embeddings", [2, HIDDEN], initializer=create_initializer(tf, [2, HIDDEN], 2)
        )
        one_hot_ids = tf.one_hot(tf.reshape(token_type_ids, [-1]), depth=2)
        output += tf.reshape(tf.matmul(one_hot_ids, token_types), [batch_size, SEQ, HIDDEN])
        positions = v1.get_variable(
            "position_embeddings",
            [SEQ, HIDDEN],
            initializer=create_initializer(tf, [SEQ, HIDDEN], 3),
        )
        output += tf.reshape(tf.slice(positions, [0, 0], [SEQ, -1]), [1, SEQ, HIDDEN])
        return layer_norm(tf, output), table


def attention_layer(tf, layer_input, input_mask, batch_size):
    """One multi-headed self-attention over [batch * seq, hidden] rows."""
    size = HIDDEN // HEADS

    def heads(tensor):
        return tf.transpose(tf.reshape(tensor, [batch_size, SEQ, HEADS, size]), [0, 2, 1, 3])

    query, key, value = (
        heads(dense(tf, layer_input, HIDDEN, name, seed))
        for seed, name in enumerate(("query", "key", "value"), 10)
    )
    scores = tf.matmul(query, key, transpose_b=True) * (1.0 / math.sqrt(float(size)))
    mask = tf.cast(tf.reshape(input_mask, [batch_size, 1, 1, SEQ]), tf.float32)
    probs = tf.nn.softmax(scores + (1.0 - mask) * -10000.0)
    context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])
    return tf.reshape(context, [batch_size * SEQ, HIDDEN])


def transformer_layer(tf, layer_input, input_mask, batch_size):
    v1 = tf.compat.v1
    with v1.variable_scope("layer_0"):
        with v1.variable_scope("attention"):
            with v1.variable_scope("self"):
                attention = attention_layer(tf, layer_input, input_mask, batch_size)
            with v1.variable_scope("output"):
                attention = dense(tf, attention, HIDDEN, "dense", 13)
                attention = layer_norm(tf, attention + layer_input)
        with v1.variable_scope("intermediate"):
            intermediate = dense(tf, attention, INTERMEDIATE, "dense", 14, lambda x: gelu(tf, x))
        with v1.variable_scope("output"):
            output = dense(tf, intermediate, HIDDEN, "dense", 15)
            return layer_norm(tf, output + attention)


def bert_model(tf, input_ids, input_mask, token_type_ids, scope="bert"):
    """modeling.BertModel: (sequence output [batch, seq, hidden], pooled output, the
    embedding table)."""
    v1 = tf.compat.v1
    batch_size = input_ids.shape[0]
    if batch_size is None:  # (modeling.get_shape_list: the dynamic size)
        batch_size = tf.shape(input_ids)[0]
    with v1.variable_scope(scope, reuse=v1.AUTO_REUSE):  # (ELECTRA's generator shares them)
        embedded, table = embeddings(tf, input_ids, token_type_ids, batch_size)
        with v1.variable_scope("encoder"):
            rows = tf.reshape(embedded, [-1, HIDDEN])
            sequence = tf.reshape(
                transformer_layer(tf, rows, input_mask, batch_size), [batch_size, SEQ, HIDDEN]
            )
        with v1.variable_scope("pooler"):
            first_token = tf.squeeze(sequence[:, 0:1, :], axis=1)
            pooled = dense(tf, first_token, HIDDEN, "dense", 16, tf.tanh)
    return sequence, pooled, table


def get_assignment_map_from_checkpoint(tf, tvars, init_checkpoint):
    """modeling.get_assignment_map_from_checkpoint."""
    assignment_map, initialized_variable_names = collections.OrderedDict(), {}
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        m = re.match("^(.*):\\d+$", var.name)
        name_to_variable[m.group(1) if m is not None else var.name] = var
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized_variable_names[name] = 1
        initialized_variable_names[name + ":0"] = 1
    return assignment_map, initialized_variable_names


def initialize_and_log(tf, features, init_checkpoint):
    """What both model_fns do first and last: log the features, start from the checkpoint
    (`init_from_checkpoint` directly: use_tpu is False), log the trainable variables."""
    v1 = tf.compat.v1
    tvars = v1.trainable_variables()
    assignment_map, initialized_variable_names = get_assignment_map_from_checkpoint(
        tf, tvars, init_checkpoint
    )
    v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
    v1.logging.info("**** Trainable Variables ****")
    for var in tvars:
        init_string = ", *INIT_FROM_CKPT*" if var.name in initialized_variable_names else ""
        v1.logging.info("  name = %s, shape = %s%s", var.name, var.shape, init_string)


def log_features(tf, features):
    tf.compat.v1.logging.info("*** Features ***")
    for name in sorted(features.keys()):
        tf.compat.v1.logging.info(f"  name = {name}, shape = {features[name].shape}")


# ------------------------------------------------------------------ optimization.py
def adam_weight_decay_optimizer(tf):
    """optimization.AdamWeightDecayOptimizer (made for the `tf` given)."""

    class AdamWeightDecayOptimizer(tf.compat.v1.train.Optimizer):
        def __init__(
            self,
            learning_rate,
            weight_decay_rate=0.0,
            beta_1=0.9,
            beta_2=0.999,
            epsilon=1e-6,
            exclude_from_weight_decay=None,
            name="AdamWeightDecayOptimizer",
        ):
            super().__init__(False, name)
            self.learning_rate, self.weight_decay_rate = learning_rate, weight_decay_rate
            self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
            self.exclude_from_weight_decay = exclude_from_weight_decay

        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            assignments = []
            for grad, param in grads_and_vars:
                if grad is None or param is None:
                    continue
                param_name = self._get_variable_name(param.name)
                m, v = (
                    tf.compat.v1.get_variable(
                        name=param_name + suffix,
                        shape=param.shape.as_list(),
                        dtype=tf.float32,
                        trainable=False,
                        initializer=tf.compat.v1.zeros_initializer(),
                    )
                    for suffix in ("/adam_m", "/adam_v")
                )
                next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
                next_v = tf.multiply(self.beta_2, v) + tf.multiply(
                    1.0 - self.beta_2, tf.square(grad)
                )
                update = next_m / (tf.sqrt(next_v) + self.epsilon)
                if self._do_use_weight_decay(param_name):
                    update += self.weight_decay_rate * param
                next_param = param - self.learning_rate * update
                assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
            return tf.group(*assignments, name=name)

        def _do_use_weight_decay(self, param_name):
            if not self.weight_decay_rate:
                return False
            for r in self.exclude_from_weight_decay or ():
                if re.search(r, param_name) is not None:
                    return False
            return True

        def _get_variable_name(self, param_name):
            m = re.match("^(.*):\\d+$", param_name)
            return m.group(1) if m is not None else param_name

    return AdamWeightDecayOptimizer


def create_optimizer(tf, loss, init_lr, num_train_steps, num_warmup_steps):
    """optimization.create_optimizer with use_tpu=False."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
    learning_rate = v1.train.polynomial_decay(
        learning_rate, global_step, num_train_steps, end_learning_rate=0.0, power=1.0, cycle=False
    )
    if num_warmup_steps:
        global_steps_int = tf.cast(global_step, tf.int32)
        warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
        warmup_percent_done = tf.cast(global_steps_int, tf.float32) / tf.cast(
            warmup_steps_int, tf.float32
        )
        is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
        learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * (
            init_lr * warmup_percent_done
        )
    return clipped_train_op(tf, loss, learning_rate, global_step)


def clipped_train_op(tf, loss, learning_rate, global_step):
    """Both create_optimizers' end: AdamWeightDecay on clipped gradients, the step's own
    increment."""
    v1 = tf.compat.v1
    optimizer = adam_weight_decay_optimizer(tf)(
        learning_rate=learning_rate,
        weight_decay_rate=0.01,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    )
    tvars = v1.trainable_variables()
    grads = tf.gradients(ys=loss, xs=tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars, strict=True), global_step=global_step)
    # optimization.py groups `global_step.assign(global_step + 1)` with train_op unordered,
    # so the learning rate may read the step before or after it (a race under either
    # TensorFlow): ordered after train_op here, so the values compare.
    with tf.control_dependencies([train_op]):
        new_global_step = global_step + 1
    return tf.group(train_op, [global_step.assign(new_global_step)])


# ------------------------------------------------------------------ run_pretraining.py
PRETRAINING = {
    "train_batch_size": 4,
    "eval_batch_size": 4,
    "learning_rate": 0.01,
    "num_train_steps": 6,
    "num_warmup_steps": 2,
    "save_checkpoints_steps": 4,
    "iterations_per_loop": 3,
    "max_eval_steps": 3,
    "num_tpu_cores": 8,
}


def int_feature(tf, values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))


def write_pretraining_records(tf, path, n, seed):
    """create_pretraining_data.write_instance_to_example_files, on made-up sentences:
    padded ids and masks, up to MAX_PREDICTIONS masked positions (weights 0 past them)."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            length = rng.randint(5, SEQ + 1)
            input_ids = [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length)
            split = rng.randint(2, length)
            segment_ids = [0] * split + [1] * (length - split) + [0] * (SEQ - length)
            predictions = rng.randint(1, MAX_PREDICTIONS + 1)
            positions = sorted(rng.choice(np.arange(1, length), predictions, replace=False))
            masked_lm_ids = [input_ids[p] for p in positions]
            for p in positions:
                input_ids[p] = 2  # [MASK]
            padding = [0] * (MAX_PREDICTIONS - predictions)
            features = collections.OrderedDict(
                input_ids=int_feature(tf, input_ids),
                input_mask=int_feature(tf, [1] * length + [0] * (SEQ - length)),
                segment_ids=int_feature(tf, segment_ids),
                masked_lm_positions=int_feature(tf, list(positions) + padding),
                masked_lm_ids=int_feature(tf, masked_lm_ids + padding),
                masked_lm_weights=tf.train.Feature(
                    float_list=tf.train.FloatList(value=[1.0] * predictions + padding)
                ),
                next_sentence_labels=int_feature(tf, [int(masked_lm_ids[0] % 2)]),
            )
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return path


def _interleaved_records(tf, input_files, num_cpu_threads):
    """BERT's and ELECTRA's training read: the files repeated, their records interleaved
    (the samples' shuffles left out and sloppy=False, so the values compare)."""
    d = tf.data.Dataset.from_tensor_slices(tf.constant(input_files)).repeat()
    cycle_length = min(num_cpu_threads, len(input_files))
    return d.apply(
        tf.data.experimental.parallel_interleave(
            tf.data.TFRecordDataset, sloppy=False, cycle_length=cycle_length
        )
    )


def _decoded_batches(tf, d, name_to_features, batch_size, num_cpu_threads):
    """Both samples' map_and_batch of decoded records, the last short batch dropped."""
    return d.apply(
        tf.data.experimental.map_and_batch(
            lambda record: decode_record(tf, record, name_to_features),
            batch_size=batch_size,
            num_parallel_batches=num_cpu_threads,
            drop_remainder=True,
        )
    )


def pretraining_input_fn_builder(tf, input_files, is_training, num_cpu_threads=4):
    def input_fn(params):
        batch_size = params["batch_size"]
        name_to_features = {
            "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
            "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([MAX_PREDICTIONS], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([MAX_PREDICTIONS], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([MAX_PREDICTIONS], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
        }
        if is_training:
            d = _interleaved_records(tf, input_files, num_cpu_threads)
        else:
            d = tf.data.TFRecordDataset(input_files)
            d = d.repeat()
        return _decoded_batches(tf, d, name_to_features, batch_size, num_cpu_threads)

    return input_fn


def gather_indexes(tf, sequence_tensor, positions):
    """Gathers the vectors at the specific positions over a minibatch."""
    batch_size, seq_length, width = sequence_tensor.shape.as_list()
    flat_offsets = tf.reshape(tf.range(0, batch_size, dtype=tf.int32) * seq_length, [-1, 1])
    flat_positions = tf.reshape(positions + flat_offsets, [-1])
    flat_sequence_tensor = tf.reshape(sequence_tensor, [batch_size * seq_length, width])
    return tf.gather(flat_sequence_tensor, flat_positions)


def get_masked_lm_output(tf, input_tensor, output_weights, positions, label_ids, label_weights):
    v1 = tf.compat.v1
    input_tensor = gather_indexes(tf, input_tensor, positions)
    with v1.variable_scope("cls/predictions"):
        with v1.variable_scope("transform"):
            input_tensor = dense(tf, input_tensor, HIDDEN, "dense", 20, lambda x: gelu(tf, x))
            input_tensor = layer_norm(tf, input_tensor)
        output_bias = v1.get_variable("output_bias", [VOCAB], initializer=v1.zeros_initializer())
        logits = tf.nn.bias_add(
            tf.matmul(input_tensor, output_weights, transpose_b=True), output_bias
        )
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        label_ids = tf.reshape(label_ids, [-1])
        label_weights = tf.reshape(label_weights, [-1])
        one_hot_labels = tf.one_hot(label_ids, depth=VOCAB, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(log_probs * one_hot_labels, axis=[-1])
        numerator = tf.reduce_sum(label_weights * per_example_loss)
        denominator = tf.reduce_sum(label_weights) + 1e-5
        return numerator / denominator, per_example_loss, log_probs


def get_next_sentence_output(tf, input_tensor, labels):
    v1 = tf.compat.v1
    with v1.variable_scope("cls/seq_relationship"):
        output_weights = v1.get_variable(
            "output_weights", [2, HIDDEN], initializer=create_initializer(tf, [2, HIDDEN], 21)
        )
        output_bias = v1.get_variable("output_bias", [2], initializer=v1.zeros_initializer())
        logits = tf.nn.bias_add(
            tf.matmul(input_tensor, output_weights, transpose_b=True), output_bias
        )
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf.one_hot(tf.reshape(labels, [-1]), depth=2, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
        return tf.reduce_mean(per_example_loss), per_example_loss, log_probs


def pretraining_metric_fn(tf):
    v1 = tf.compat.v1

    def metric_fn(
        masked_lm_example_loss,
        masked_lm_log_probs,
        masked_lm_ids,
        masked_lm_weights,
        next_sentence_example_loss,
        next_sentence_log_probs,
        next_sentence_labels,
    ):
        masked_lm_log_probs = tf.reshape(masked_lm_log_probs, [-1, masked_lm_log_probs.shape[-1]])
        masked_lm_predictions = tf.argmax(masked_lm_log_probs, axis=-1, output_type=tf.int32)
        masked_lm_example_loss = tf.reshape(masked_lm_example_loss, [-1])
        masked_lm_ids = tf.reshape(masked_lm_ids, [-1])
        masked_lm_weights = tf.reshape(masked_lm_weights, [-1])
        masked_lm_accuracy = v1.metrics.accuracy(
            labels=masked_lm_ids, predictions=masked_lm_predictions, weights=masked_lm_weights
        )
        masked_lm_mean_loss = v1.metrics.mean(
            values=masked_lm_example_loss, weights=masked_lm_weights
        )
        next_sentence_log_probs = tf.reshape(
            next_sentence_log_probs, [-1, next_sentence_log_probs.shape[-1]]
        )
        next_sentence_predictions = tf.argmax(
            next_sentence_log_probs, axis=-1, output_type=tf.int32
        )
        next_sentence_labels = tf.reshape(next_sentence_labels, [-1])
        next_sentence_accuracy = v1.metrics.accuracy(
            labels=next_sentence_labels, predictions=next_sentence_predictions
        )
        next_sentence_mean_loss = v1.metrics.mean(values=next_sentence_example_loss)
        return {
            "masked_lm_accuracy": masked_lm_accuracy,
            "masked_lm_loss": masked_lm_mean_loss,
            "next_sentence_accuracy": next_sentence_accuracy,
            "next_sentence_loss": next_sentence_mean_loss,
        }

    return metric_fn


def pretraining_model_fn_builder(tf, init_checkpoint, flags):
    tpu = tf.compat.v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        log_features(tf, features)
        is_training = mode == tf.estimator.ModeKeys.TRAIN  # (dropout is 0 here)
        del is_training
        sequence, pooled, table = bert_model(
            tf, features["input_ids"], features["input_mask"], features["segment_ids"]
        )
        masked_lm_loss, masked_lm_example_loss, masked_lm_log_probs = get_masked_lm_output(
            tf,
            sequence,
            table,
            features["masked_lm_positions"],
            features["masked_lm_ids"],
            features["masked_lm_weights"],
        )
        next_sentence_loss, next_sentence_example_loss, next_sentence_log_probs = (
            get_next_sentence_output(tf, pooled, features["next_sentence_labels"])
        )
        total_loss = masked_lm_loss + next_sentence_loss
        initialize_and_log(tf, features, init_checkpoint)
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = create_optimizer(
                tf,
                total_loss,
                flags["learning_rate"],
                flags["num_train_steps"],
                flags["num_warmup_steps"],
            )
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=None
            )
        if mode == tf.estimator.ModeKeys.EVAL:
            eval_metrics = (
                pretraining_metric_fn(tf),
                [
                    masked_lm_example_loss,
                    masked_lm_log_probs,
                    features["masked_lm_ids"],
                    features["masked_lm_weights"],
                    next_sentence_example_loss,
                    next_sentence_log_probs,
                    features["next_sentence_labels"],
                ],
            )
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=None
            )
        raise ValueError(f"Only TRAIN and EVAL modes are supported: {mode}")

    return model_fn


def tpu_estimator(tf, output_dir, model_fn, flags, **batch_sizes):
    """Both mains' RunConfig and TPUEstimator (no cluster: use_tpu is False)."""
    tpu = tf.compat.v1.estimator.tpu
    run_config = tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=output_dir,
        save_checkpoints_steps=flags["save_checkpoints_steps"],
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["iterations_per_loop"],
            num_shards=flags["num_tpu_cores"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    return tpu.TPUEstimator(use_tpu=False, model_fn=model_fn, config=run_config, **batch_sizes)


def checkpoint_state(tf, model_dir):
    """The `checkpoint` file's latest and kept checkpoints, by name."""
    state = tf.train.get_checkpoint_state(model_dir)
    return [
        os.path.basename(state.model_checkpoint_path),
        [os.path.basename(p) for p in state.all_model_checkpoint_paths],
    ]


def output_and_init_checkpoint(tf, workdir, output):
    """The --output_dir made, and the --init_checkpoint: the 'pre-trained' BERT."""
    output_dir = os.path.join(workdir, output)
    tf.io.gfile.makedirs(output_dir)
    return output_dir, write_pretrained_checkpoint(tf, workdir, pretrained_values())


def checkpoint_contents(tf, model_dir):
    """[name, shape] of each variable in the latest checkpoint, and each one's mean."""
    names = tf.train.list_variables(model_dir)
    reader = tf.train.load_checkpoint(model_dir)
    means = {name: float(np.mean(reader.get_tensor(name))) for name, _ in names}
    return [[name, list(shape)] for name, shape in names], means


def written_eval_results(tf, result, output_eval_file):
    """run_pretraining's eval_results.txt, written as the sample writes it."""
    with tf.io.gfile.GFile(output_eval_file, "w") as writer:
        tf.compat.v1.logging.info("***** Eval results *****")
        for key in sorted(result.keys()):
            tf.compat.v1.logging.info("  %s = %s", key, str(result[key]))
            writer.write(f"{key} = {result[key]!s}\n")
    with open(output_eval_file) as f:
        return [_NUMBER.sub("<f>", line) for line in f.read().splitlines()]


def pretraining_run(tf, workdir):
    """run_pretraining's main up to its estimator: (estimator, output_dir, input_files)."""
    flags = PRETRAINING
    output_dir, init_checkpoint = output_and_init_checkpoint(tf, workdir, "pretraining_output")
    input_files = [
        write_pretraining_records(tf, os.path.join(workdir, f"tf_examples_{i}.tfrecord"), 10, i)
        for i in range(2)
    ]
    estimator = tpu_estimator(
        tf,
        output_dir,
        pretraining_model_fn_builder(tf, init_checkpoint, flags),
        flags,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
    )
    return estimator, output_dir, input_files


def pretraining_eval(tf, estimator, output_dir, input_files):
    """run_pretraining's do_eval: (its result, the eval_results.txt it writes)."""
    tf.compat.v1.logging.info("***** Running evaluation *****")
    tf.compat.v1.logging.info("  Batch size = %d", PRETRAINING["eval_batch_size"])
    eval_input_fn = pretraining_input_fn_builder(tf, input_files, is_training=False)
    result = estimator.evaluate(input_fn=eval_input_fn, steps=PRETRAINING["max_eval_steps"])
    return result, written_eval_results(tf, result, os.path.join(output_dir, "eval_results.txt"))


@program
def bert_pretraining(tf, workdir):
    flags = PRETRAINING
    estimator, output_dir, input_files = pretraining_run(tf, workdir)
    with info_lines(LOGGED) as lines:
        tf.compat.v1.logging.info("***** Running training *****")
        tf.compat.v1.logging.info("  Batch size = %d", flags["train_batch_size"])
        train_input_fn = pretraining_input_fn_builder(tf, input_files, is_training=True)
        estimator.train(input_fn=train_input_fn, max_steps=flags["num_train_steps"])
        listed_after_training = listing(output_dir)
        result, eval_results = pretraining_eval(tf, estimator, output_dir, input_files)
    variables, means = checkpoint_contents(tf, output_dir)
    return {
        "exact": {
            "after_training": listed_after_training,
            "model_dir": listing(output_dir),
            "variables": variables,
            "evaluate_types": {k: type(v).__name__ for k, v in sorted(result.items())},
            "eval_results": eval_results,
            "train_tags": event_tags(output_dir),
            "eval_tags": event_tags(estimator.eval_dir()),
            "lines": lines,
        },
        "close": {**floats(result), **{f"mean {k}": v for k, v in means.items()}},
    }


@program
def bert_pretraining_eval_only(tf, workdir):
    """--do_train=False --do_eval=True: the pre-trained model itself evaluated, from
    init_from_checkpoint alone (no checkpoint in output_dir)."""
    estimator, output_dir, input_files = pretraining_run(tf, workdir)
    with info_lines(LOGGED) as lines:
        result, eval_results = pretraining_eval(tf, estimator, output_dir, input_files)
    return {
        "exact": {
            "model_dir": listing(output_dir),
            "evaluate_types": {k: type(v).__name__ for k, v in sorted(result.items())},
            "eval_results": eval_results,
            "eval_tags": event_tags(estimator.eval_dir()),
            "lines": [
                TEMPORARY_MODEL_DIR.sub("<tmp>", line) for line in lines if "  name = " not in line
            ],
        },
        "close": floats(result),
    }


# ------------------------------------------------------------------ run_squad.py
SQUAD = {
    "train_batch_size": 4,
    "predict_batch_size": 4,
    "learning_rate": 0.01,
    "num_train_epochs": 1.5,
    "warmup_proportion": 0.1,
    "save_checkpoints_steps": 3,
    "iterations_per_loop": 2,
    "num_tpu_cores": 8,
    "n_best_size": 3,
    "max_answer_length": 3,
}
RawResult = collections.namedtuple("RawResult", ["unique_id", "start_logits", "end_logits"])


def write_squad_features(tf, path, n, seed, is_training):
    """run_squad.FeatureWriter over made-up questions and contexts: {unique_id: length}."""
    rng = np.random.RandomState(seed)
    lengths = {}
    with tf.io.TFRecordWriter(path) as writer:
        for unique_id in range(1000000000, 1000000000 + n):
            length = rng.randint(6, SEQ + 1)
            question = rng.randint(2, 4)
            input_ids = [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length)
            features = collections.OrderedDict()
            features["unique_ids"] = int_feature(tf, [unique_id])
            features["input_ids"] = int_feature(tf, input_ids)
            features["input_mask"] = int_feature(tf, [1] * length + [0] * (SEQ - length))
            features["segment_ids"] = int_feature(
                tf, [0] * question + [1] * (length - question) + [0] * (SEQ - length)
            )
            if is_training:
                start = int(np.argmax(input_ids[question:length])) + question
                end = min(start + int(input_ids[start] % 2), length - 1)
                features["start_positions"] = int_feature(tf, [start])
                features["end_positions"] = int_feature(tf, [end])
                features["is_impossible"] = int_feature(tf, [0])
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
            lengths[unique_id] = (question, length)
    return lengths


def squad_name_to_features(tf, is_training):
    """The SQuAD features' parsing spec (the answer's positions to train)."""
    name_to_features = {
        "unique_ids": tf.io.FixedLenFeature([], tf.int64),
        "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
    }
    if is_training:
        name_to_features["start_positions"] = tf.io.FixedLenFeature([], tf.int64)
        name_to_features["end_positions"] = tf.io.FixedLenFeature([], tf.int64)
    return name_to_features


def squad_input_fn_builder(tf, input_file, is_training, drop_remainder):
    name_to_features = squad_name_to_features(tf, is_training)
    return records_input_fn(tf, input_file, name_to_features, is_training, drop_remainder)


def create_squad_model(tf, input_ids, input_mask, segment_ids):
    v1 = tf.compat.v1
    final_hidden, _, _ = bert_model(tf, input_ids, input_mask, segment_ids)
    batch_size = tf.shape(final_hidden)[0]
    output_weights = v1.get_variable(
        "cls/squad/output_weights", [2, HIDDEN], initializer=create_initializer(tf, [2, HIDDEN], 30)
    )
    output_bias = v1.get_variable("cls/squad/output_bias", [2], initializer=v1.zeros_initializer())
    final_hidden_matrix = tf.reshape(final_hidden, [batch_size * SEQ, HIDDEN])
    logits = tf.nn.bias_add(
        tf.matmul(final_hidden_matrix, output_weights, transpose_b=True), output_bias
    )
    logits = tf.transpose(tf.reshape(logits, [batch_size, SEQ, 2]), [2, 0, 1])
    unstacked_logits = tf.unstack(logits, axis=0)
    return unstacked_logits[0], unstacked_logits[1]


def squad_model_fn_builder(tf, init_checkpoint, flags, num_steps, seen_params):
    """model_fn_builder; `seen_params` gets each call's mode and params (their types)."""
    tpu = tf.compat.v1.estimator.tpu
    num_train_steps, num_warmup_steps = num_steps

    def model_fn(features, labels, mode, params):
        seen_params.append([mode, {k: type(v).__name__ for k, v in sorted(params.items())}])
        log_features(tf, features)
        unique_ids = features["unique_ids"]
        start_logits, end_logits = create_squad_model(
            tf, features["input_ids"], features["input_mask"], features["segment_ids"]
        )
        initialize_and_log(tf, features, init_checkpoint)
        if mode == tf.estimator.ModeKeys.TRAIN:

            def compute_loss(logits, positions):
                one_hot_positions = tf.one_hot(positions, depth=SEQ, dtype=tf.float32)
                log_probs = tf.nn.log_softmax(logits, axis=-1)
                return -tf.reduce_mean(tf.reduce_sum(one_hot_positions * log_probs, axis=-1))

            start_loss = compute_loss(start_logits, features["start_positions"])
            end_loss = compute_loss(end_logits, features["end_positions"])
            total_loss = (start_loss + end_loss) / 2.0
            train_op = create_optimizer(
                tf, total_loss, flags["learning_rate"], num_train_steps, num_warmup_steps
            )
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=None
            )
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {
                "unique_ids": unique_ids,
                "start_logits": start_logits,
                "end_logits": end_logits,
            }
            return tpu.TPUEstimatorSpec(mode=mode, predictions=predictions, scaffold_fn=None)
        raise ValueError(f"Only TRAIN and PREDICT modes are supported: {mode}")

    return model_fn


def _compute_softmax(scores):
    exp_scores = np.exp(np.asarray(scores) - max(scores))
    return (exp_scores / exp_scores.sum()).tolist()


def best_spans(all_results, lengths, flags):
    """write_predictions' choice, on token positions: the n best starts and ends inside
    the context, the best valid span, and the n best spans' probabilities."""
    chosen, probabilities = {}, []
    for result in all_results:
        question, length = lengths[result.unique_id]
        starts = np.argsort(result.start_logits)[::-1][: flags["n_best_size"]]
        ends = np.argsort(result.end_logits)[::-1][: flags["n_best_size"]]
        spans = [
            (result.start_logits[s] + result.end_logits[e], int(s), int(e))
            for s in starts
            for e in ends
            if question <= s <= e < length and e - s + 1 <= flags["max_answer_length"]
        ]
        spans.sort(reverse=True)
        chosen[str(result.unique_id)] = list(spans[0][1:]) if spans else [0, 0]
        probabilities.extend(_compute_softmax([score for score, _, _ in spans] or [0.0]))
    return chosen, probabilities


def centered(rows):
    """Each example's logits less their mean, all in a row. The span classifier's
    `output_bias` shifts every position's logit alike, which no softmax sees: its gradient is
    zero but for rounding, and Adam's step (gradient over its root mean square) turns that
    rounding into a move of up to the learning rate, one TensorFlow build's rounding not
    another's (5e-5 here between 2.15 and the kit). What run_squad reads of the logits (their
    order, sums and softmax) is the same with or without that shift."""
    return [x - float(np.mean(row)) for row in rows for x in row]


@program
def bert_squad(tf, workdir):
    flags = SQUAD
    output_dir, init_checkpoint = output_and_init_checkpoint(tf, workdir, "squad_output")
    train_file = os.path.join(output_dir, "train.tf_record")
    num_train_features = len(write_squad_features(tf, train_file, 16, 7, is_training=True))
    num_train_steps = int(
        num_train_features / flags["train_batch_size"] * flags["num_train_epochs"]
    )
    num_warmup_steps = int(num_train_steps * flags["warmup_proportion"])
    seen_params = []
    model_fn = squad_model_fn_builder(
        tf, init_checkpoint, flags, (num_train_steps, num_warmup_steps), seen_params
    )
    estimator = tpu_estimator(
        tf,
        output_dir,
        model_fn,
        flags,
        train_batch_size=flags["train_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
    )
    eval_file = os.path.join(output_dir, "eval.tf_record")
    lengths = write_squad_features(tf, eval_file, 10, 8, is_training=False)
    predict_input_fn = squad_input_fn_builder(tf, eval_file, False, drop_remainder=False)
    with info_lines(LOGGED) as lines:
        train_input_fn = squad_input_fn_builder(tf, train_file, True, drop_remainder=True)
        estimator.train(input_fn=train_input_fn, max_steps=num_train_steps)
        all_results, rows = [], []
        for result in estimator.predict(predict_input_fn, yield_single_examples=True):
            if len(all_results) % 1000 == 0:
                tf.compat.v1.logging.info(f"Processing example: {len(all_results)}")
            rows.append(result)
            unique_id = int(result["unique_ids"])
            start_logits = [float(x) for x in result["start_logits"].flat]
            end_logits = [float(x) for x in result["end_logits"].flat]
            all_results.append(RawResult(unique_id, start_logits, end_logits))
    chosen, probabilities = best_spans(all_results, lengths, flags)
    with tf.io.gfile.GFile(os.path.join(output_dir, "predictions.json"), "w") as writer:
        writer.write(json.dumps(chosen, indent=4) + "\n")
    variables, means = checkpoint_contents(tf, output_dir)
    return {
        "exact": {
            "model_dir": listing(output_dir),
            "variables": variables,
            "predictions": structure(rows),
            "unique_ids": [r.unique_id for r in all_results],
            "model_fn_params": seen_params,
            "spans": chosen,
            "train_tags": event_tags(output_dir),
            "evaluate": error_of(lambda: estimator.evaluate(predict_input_fn, steps=1)),
            "lines": lines,
        },
        "close": {
            "start_logits": centered(r.start_logits for r in all_results),
            "end_logits": centered(r.end_logits for r in all_results),
            "probabilities": probabilities,
            **{f"mean {k}": v for k, v in means.items() if k != "cls/squad/output_bias"},
        },
    }


# ------------------------------------------------------------------ ELECTRA run_pretraining.py
ELECTRA = {
    "train_batch_size": 4,
    "eval_batch_size": 4,
    "learning_rate": 0.01,
    "num_train_steps": 6,
    "num_warmup_steps": 2,
    "num_eval_steps": 2,
    "save_checkpoints_steps": 3,
    "keep_checkpoint_max": 1,
    "iterations_per_loop": 2,
    "num_tpu_cores": 8,
    "gen_weight": 1.0,
    "disc_weight": 50.0,
}


class ETAHook:
    """training_utils.ETAHook (made for the `tf` given): each run's step of n_steps and the
    tensors it logs, the global step read by its own `session.run` after each run and at
    the end. (Its rates and times, and its print, left out: `seen` keeps the rest.)"""

    def __new__(cls, tf, to_log, n_steps, seen, is_training=True):
        class Hook(tf.estimator.SessionRunHook):
            def __init__(self):
                self._steps_run_so_far, self._global_step = 0, None

            def begin(self):
                self._global_step_tensor = tf.compat.v1.train.get_or_create_global_step()

            def before_run(self, run_context):
                return tf.estimator.SessionRunArgs(to_log)

            def after_run(self, run_context, run_values):
                self._global_step = run_context.session.run(self._global_step_tensor)
                self._steps_run_so_far += 1  # (iterations_per_loop on TPUs)
                self.log(run_values)

            def end(self, session):
                self._global_step = session.run(self._global_step_tensor)
                self.log()

            def log(self, run_values=None):
                step = self._global_step if is_training else self._steps_run_so_far
                msg = f"{step}/{n_steps} = {100.0 * step / n_steps:.1f}%"
                values = {}
                if run_values is not None:
                    values = {str(tag): float(v) for tag, v in run_values.results.items()}
                seen.append([msg, type(self._global_step).__name__, values])

        return Hook()


def electra_input_fn(tf, pattern, is_training, num_cpu_threads=4):
    """pretrain_data.get_input_fn: the files a glob finds, interleaved, in batches."""
    input_files = []
    for input_pattern in pattern.split(","):
        input_files.extend(sorted(tf.io.gfile.glob(input_pattern)))  # (sorted: the order)

    def input_fn(params):
        batch_size = params["batch_size"]
        name_to_features = {
            "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
            "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        }
        d = _interleaved_records(tf, input_files, num_cpu_threads)
        return _decoded_batches(tf, d, name_to_features, batch_size, num_cpu_threads)

    return input_fn


def electra_mask(tf, input_ids, input_mask):
    """pretrain_helpers.mask's shape (positions, their ids, [MASK]ed inputs), its random
    choice made a fixed one: the positions of each row's two largest ids past [CLS]."""
    candidates = input_ids * input_mask * tf.concat([[0], tf.ones([SEQ - 1], tf.int32)], 0)
    positions = tf.math.top_k(candidates, k=MAX_PREDICTIONS).indices
    masked_lm_ids = tf.gather(input_ids, positions, batch_dims=1)
    masked_input_ids, _ = scatter_update(tf, input_ids, tf.fill(tf.shape(positions), 2), positions)
    return positions, masked_lm_ids, masked_input_ids


def scatter_update(tf, sequence, updates, positions):
    """pretrain_helpers.scatter_update: `updates` at `positions`, and where they went."""
    one_hot = tf.one_hot(positions, SEQ, dtype=tf.int32)  # [batch, predictions, seq]
    updated = tf.minimum(tf.reduce_sum(one_hot, 1), 1)
    values = tf.reduce_sum(one_hot * tf.expand_dims(updates, -1), 1)
    return sequence * (1 - updated) + values, updated


def electra_generator(tf, features, positions, masked_lm_ids, masked_input_ids):
    """The generator's masked LM (`generator_predictions`) over the discriminator's
    embeddings (tied, `electra/embeddings`), its transformer left out (a generator of no
    layers: the family's time)."""
    v1 = tf.compat.v1
    batch_size = masked_input_ids.shape[0]
    with v1.variable_scope("electra", reuse=v1.AUTO_REUSE):
        sequence, table = embeddings(tf, masked_input_ids, features["segment_ids"], batch_size)
    with v1.variable_scope("generator_predictions"):
        hidden = dense(
            tf, gather_indexes(tf, sequence, positions), HIDDEN, "dense", 40, lambda x: gelu(tf, x)
        )
        hidden = layer_norm(tf, hidden)
        output_bias = v1.get_variable("output_bias", [VOCAB], initializer=v1.zeros_initializer())
        logits = tf.nn.bias_add(tf.matmul(hidden, table, transpose_b=True), output_bias)
        logits = tf.reshape(logits, [-1, MAX_PREDICTIONS, VOCAB])
        log_probs = tf.nn.log_softmax(logits)
        oh_labels = tf.one_hot(masked_lm_ids, depth=VOCAB, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(log_probs * oh_labels, axis=-1)
        loss = tf.reduce_mean(per_example_loss)  # (its weights are all 1 here)
        preds = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
        return loss, per_example_loss, preds, logits


def electra_discriminator(tf, features, fake_input_ids, labels):
    """The discriminator (`electra`) and its `discriminator_predictions`."""
    v1 = tf.compat.v1
    sequence, _, _ = bert_model(
        tf, fake_input_ids, features["input_mask"], features["segment_ids"], "electra"
    )
    with v1.variable_scope("discriminator_predictions"):
        hidden = dense(tf, sequence, HIDDEN, "dense", 41, lambda x: gelu(tf, x))
        logits = tf.squeeze(dense(tf, hidden, 1, "dense_1", 42), -1)
        weights = tf.cast(features["input_mask"], tf.float32)
        losses = tf.nn.sigmoid_cross_entropy_with_logits(
            logits=logits, labels=tf.cast(labels, tf.float32)
        )
        losses *= weights
        per_example_loss = tf.reduce_sum(losses, axis=-1) / (1e-6 + tf.reduce_sum(weights, -1))
        loss = tf.reduce_sum(losses) / (1e-6 + tf.reduce_sum(weights))
        probs = tf.nn.sigmoid(logits)
        preds = tf.cast(tf.round((tf.sign(logits) + 1) / 2), tf.int32)
        return loss, per_example_loss, probs, preds


def electra_create_optimizer(tf, loss, learning_rate, num_train_steps, warmup_steps):
    """ELECTRA's optimization.create_optimizer: the warm-up a tf.minimum."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    learning_rate = v1.train.polynomial_decay(
        learning_rate, global_step, num_train_steps, end_learning_rate=0.0, power=1.0, cycle=False
    )
    learning_rate *= tf.minimum(
        1.0, tf.cast(global_step, tf.float32) / tf.cast(warmup_steps, tf.float32)
    )
    return clipped_train_op(tf, loss, learning_rate, global_step)


def electra_metric_fn(tf, eval_fn_keys):
    """PretrainingModel's metric_fn: its tensors by position (`*args`), named again."""
    v1 = tf.compat.v1

    def metric_fn(*args):
        d = dict(zip(eval_fn_keys, args, strict=True))
        metrics = {}
        metrics["masked_lm_accuracy"] = v1.metrics.accuracy(
            labels=tf.reshape(d["masked_lm_ids"], [-1]),
            predictions=tf.reshape(d["masked_lm_preds"], [-1]),
        )
        metrics["masked_lm_loss"] = v1.metrics.mean(values=tf.reshape(d["mlm_loss"], [-1]))
        metrics["disc_loss"] = v1.metrics.mean(d["disc_loss"])
        metrics["disc_auc"] = v1.metrics.auc(
            d["disc_labels"] * d["input_mask"],
            d["disc_probs"] * tf.cast(d["input_mask"], tf.float32),
        )
        metrics["disc_accuracy"] = v1.metrics.accuracy(
            labels=d["disc_labels"], predictions=d["disc_preds"], weights=d["input_mask"]
        )
        metrics["disc_precision"] = v1.metrics.accuracy(
            labels=d["disc_labels"],
            predictions=d["disc_preds"],
            weights=d["disc_preds"] * d["input_mask"],
        )
        metrics["disc_recall"] = v1.metrics.accuracy(
            labels=d["disc_labels"],
            predictions=d["disc_preds"],
            weights=d["disc_labels"] * d["input_mask"],
        )
        return metrics

    return metric_fn


def electra_model(tf, features):
    """PretrainingModel: (total loss, the metric_fn's inputs by name)."""
    input_mask = features["input_mask"]
    positions, masked_lm_ids, masked_input_ids = electra_mask(tf, features["input_ids"], input_mask)
    mlm_loss, mlm_per_example, mlm_preds, _ = electra_generator(
        tf, features, positions, masked_lm_ids, masked_input_ids
    )
    sampled_tokids = tf.stop_gradient(mlm_preds)  # (it samples: the most likely one here)
    fake_input_ids, masked = scatter_update(tf, masked_input_ids, sampled_tokids, positions)
    labels = masked * (1 - tf.cast(tf.equal(fake_input_ids, features["input_ids"]), tf.int32))
    disc_loss, disc_per_example, disc_probs, disc_preds = electra_discriminator(
        tf, features, fake_input_ids, labels
    )
    total_loss = ELECTRA["gen_weight"] * mlm_loss + ELECTRA["disc_weight"] * disc_loss
    eval_fn_inputs = {
        "input_ids": masked_input_ids,
        "masked_lm_preds": mlm_preds,
        "mlm_loss": mlm_per_example,
        "masked_lm_ids": masked_lm_ids,
        "input_mask": input_mask,
        "disc_loss": disc_per_example,
        "disc_labels": labels,
        "disc_probs": disc_probs,
        "disc_preds": disc_preds,
    }
    return total_loss, eval_fn_inputs


def electra_model_fn_builder(tf, flags, seen):
    tpu = tf.compat.v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        total_loss, eval_fn_inputs = electra_model(tf, features)
        eval_fn_keys = eval_fn_inputs.keys()
        eval_fn_values = [eval_fn_inputs[k] for k in eval_fn_keys]
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = electra_create_optimizer(
                tf,
                total_loss,
                flags["learning_rate"],
                flags["num_train_steps"],
                flags["num_warmup_steps"],
            )
            hook = ETAHook(tf, {"loss": total_loss}, flags["num_train_steps"], seen["train"])
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, training_hooks=[hook]
            )
        if mode == tf.estimator.ModeKeys.EVAL:
            hook = ETAHook(tf, {"loss": total_loss}, flags["num_eval_steps"], seen["eval"], False)
            return tpu.TPUEstimatorSpec(
                mode=mode,
                loss=total_loss,
                eval_metrics=(electra_metric_fn(tf, eval_fn_keys), eval_fn_values),
                evaluation_hooks=[hook],
            )
        raise ValueError("Only TRAIN and EVAL modes are supported")

    return model_fn


def write_electra_records(tf, path, n, seed):
    """build_pretraining_dataset's examples: ids, mask and segments, padded."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            length = rng.randint(5, SEQ + 1)
            split = rng.randint(2, length)
            features = collections.OrderedDict(
                input_ids=int_feature(
                    tf, [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length)
                ),
                input_mask=int_feature(tf, [1] * length + [0] * (SEQ - length)),
                segment_ids=int_feature(
                    tf, [0] * split + [1] * (length - split) + [0] * (SEQ - length)
                ),
            )
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())


@program
def electra_pretraining(tf, workdir):
    flags = ELECTRA
    model_dir = os.path.join(workdir, "models", "electra_small")
    for i in range(2):
        write_electra_records(tf, os.path.join(workdir, f"pretrain_data.tfrecord-{i}-of-2"), 8, i)
    pattern = os.path.join(workdir, "pretrain_data.tfrecord*")
    tpu = tf.compat.v1.estimator.tpu
    tpu_config = tpu.TPUConfig(
        iterations_per_loop=flags["iterations_per_loop"],
        num_shards=flags["num_tpu_cores"],
        tpu_job_name=None,
        per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
    )
    run_config = tpu.RunConfig(
        cluster=None,
        model_dir=model_dir,
        save_checkpoints_steps=flags["save_checkpoints_steps"],
        keep_checkpoint_max=flags["keep_checkpoint_max"],
        tpu_config=tpu_config,
    )
    seen = {"train": [], "eval": []}
    estimator = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=electra_model_fn_builder(tf, flags, seen),
        config=run_config,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
    )
    with info_lines(LOGGED) as lines:
        estimator.train(
            input_fn=electra_input_fn(tf, pattern, True), max_steps=flags["num_train_steps"]
        )
        result = estimator.evaluate(
            input_fn=electra_input_fn(tf, pattern, False), steps=flags["num_eval_steps"]
        )
    variables, means = checkpoint_contents(tf, model_dir)
    logged = {part: [row[:2] for row in rows] for part, rows in seen.items()}
    losses = [v for rows in seen.values() for row in rows for v in row[2].values()]
    return {
        "exact": {
            "model_dir": listing(model_dir),
            "variables": variables,
            "eta_hook": logged,
            "checkpoint_state": checkpoint_state(tf, model_dir),
            "evaluate_types": {k: type(v).__name__ for k, v in sorted(result.items())},
            "results": [
                f"  {key} = {_NUMBER.sub('<f>', str(result[key]))}" for key in sorted(result)
            ],
            "train_tags": event_tags(model_dir),
            "eval_tags": event_tags(estimator.eval_dir()),
            "lines": lines,
        },
        "close": {**floats(result), "losses": losses, **{f"mean {k}": v for k, v in means.items()}},
    }


# ------------------------------------------------------------------ extract_features.py
def features_input_fn_builder(tf, features):
    """extract_features.input_fn_builder: the features as constants (not scalable, as
    its comment says), in batches, the last one short."""
    all_unique_ids = [f["unique_id"] for f in features]
    all_input_ids = [f["input_ids"] for f in features]
    all_input_mask = [f["input_mask"] for f in features]
    all_input_type_ids = [f["input_type_ids"] for f in features]

    def input_fn(params):
        batch_size = params["batch_size"]
        num_examples = len(features)
        d = tf.data.Dataset.from_tensor_slices(
            {
                "unique_ids": tf.constant(all_unique_ids, shape=[num_examples], dtype=tf.int32),
                "input_ids": tf.constant(all_input_ids, shape=[num_examples, SEQ], dtype=tf.int32),
                "input_mask": tf.constant(
                    all_input_mask, shape=[num_examples, SEQ], dtype=tf.int32
                ),
                "input_type_ids": tf.constant(
                    all_input_type_ids, shape=[num_examples, SEQ], dtype=tf.int32
                ),
            }
        )
        return d.batch(batch_size=batch_size, drop_remainder=False)

    return input_fn


def features_model_fn_builder(tf, init_checkpoint):
    tpu = tf.compat.v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        unique_ids = features["unique_ids"]
        sequence, _, _ = bert_model(
            tf, features["input_ids"], features["input_mask"], features["input_type_ids"]
        )
        if mode != tf.estimator.ModeKeys.PREDICT:
            raise ValueError(f"Only PREDICT modes are supported: {mode}")
        initialize_and_log(tf, features, init_checkpoint)
        predictions = {"unique_id": unique_ids, "layer_output_0": sequence}
        return tpu.TPUEstimatorSpec(mode=mode, predictions=predictions, scaffold_fn=None)

    return model_fn


def made_up_features(n, seed):
    rng = np.random.RandomState(seed)
    features = []
    for unique_id in range(n):
        length = rng.randint(3, SEQ + 1)
        features.append(
            {
                "unique_id": unique_id,
                "tokens": [f"t{i}" for i in range(length)],
                "input_ids": [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length),
                "input_mask": [1] * length + [0] * (SEQ - length),
                "input_type_ids": [0] * SEQ,
            }
        )
    return features


@program
def bert_extract_features(tf, workdir):
    """extract_features.py: a TPUEstimator with no model_dir (a temporary one), nothing
    trained, predicting from init_from_checkpoint alone, one JSON line per example."""
    tpu = tf.compat.v1.estimator.tpu
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, pretrained_values())
    features = made_up_features(7, 9)
    unique_id_to_feature = {f["unique_id"]: f for f in features}
    run_config = tpu.RunConfig(
        master=None,
        tpu_config=tpu.TPUConfig(
            num_shards=8, per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2
        ),
    )
    output_file = os.path.join(workdir, "output.jsonl")
    with info_lines(LOGGED) as lines:
        estimator = tpu.TPUEstimator(
            use_tpu=False,
            model_fn=features_model_fn_builder(tf, init_checkpoint),
            config=run_config,
            predict_batch_size=3,
        )
        with tf.io.gfile.GFile(output_file, "w") as writer:
            for result in estimator.predict(
                features_input_fn_builder(tf, features), yield_single_examples=True
            ):
                unique_id = int(result["unique_id"])
                feature = unique_id_to_feature[unique_id]
                all_features = []
                for i, token in enumerate(feature["tokens"]):
                    layer_output = result["layer_output_0"]
                    values = [round(float(x), 6) for x in layer_output[i : (i + 1)].flat]
                    layers = collections.OrderedDict(index=-1, values=values)
                    all_features.append(collections.OrderedDict(token=token, layers=[layers]))
                output_json = collections.OrderedDict(linex_index=unique_id, features=all_features)
                writer.write(json.dumps(output_json) + "\n")
    with open(output_file) as f:
        rows = [json.loads(line) for line in f]
    return {
        "exact": {
            "model_dir_is_temporary": estimator.model_dir.startswith(tempfile.gettempdir()),
            "model_dir": listing(estimator.model_dir),
            "linex_index": [row["linex_index"] for row in rows],
            "tokens": [[f["token"] for f in row["features"]] for row in rows],
            "lines": [TEMPORARY_MODEL_DIR.sub("<tmp>", line) for line in lines],
        },
        "close": {
            "values": [v for row in rows for f in row["features"] for v in f["layers"][0]["values"]]
        },
    }
