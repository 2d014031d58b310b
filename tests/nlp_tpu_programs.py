"""Pretrained-model fine-tuning programs of the TPUEstimator era with `use_tpu=False`, as
`tf_upgrade_v2` leaves them, on the tiny BERT of tests/bert_task_programs.py (hidden size 8,
one layer, sequences of 8) and made-up token ids; each keeps its sample's TPUEstimator usage:

- `electra_finetuning`: google-research/electra `run_finetuning.py`: `FinetuningModel` over
  an `electra/` encoder started by `init_from_checkpoint` in model_fn (no scaffold_fn off
  TPUs, in PREDICT too), a classification task under `task_specific/<task>`, the loss one
  task's by `task_id`, ETAHook training hooks, `tf.estimator.tpu.RunConfig` with
  `save_checkpoints_secs=None`, `predict_batch_size`, its dev-set evaluation by
  `predict(yield_single_examples=True)` over `utils.flatten_dict`'s predictions with
  padding examples (`task_id` past the tasks) in the last batch, and two trials, the first
  one's model_dir removed;
- `xlnet_squad`: zihangdai/xlnet `run_squad.py`, `model_utils.py` and `function_builder.py`
  with its TPU branch (TPUEstimatorSpec, `scaffold_fn`, `host_call`) on a
  `TPUEstimator(use_tpu=False)`: `configure_tpu`'s RunConfig (`keep_checkpoint_max`,
  `save_checkpoints_secs=None`, `iterations` cut to `save_steps`), `init_from_checkpoint`
  in a `scaffold_fn` with its `*INIT_FROM_CKPT*` log, `get_train_op` (a linear warm-up, then
  polynomial decay from `global_step - warmup_steps`, Adam, clipped gradients scaled by
  `lr_layer_decay_rate` per `model/transformer/layer_<n>/` with its log),
  `construct_scalar_host_call` (as tf.compat.v2.summary, its `.host_call` event file), the
  `#params` log, `predict(yield_single_examples=True)` over a last short batch read
  into `RawResult`s, and run_classifier's do_eval: every kept checkpoint evaluated by
  `checkpoint_path` (`eval_metrics` weighted by `is_real_example`, the `scaffold_fn` again); `xlnet_squad_without_save_steps`: the same with `--save_steps` at its
  default (None), which saves no checkpoint, so predict starts from initialization.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_nlp_tpu.py` with what `tests/tf215/record_family.py nlp_tpu_programs` recorded
under tf.estimator 2.15 (`tests/data/tf215/nlp_tpu.json`). Every weight starts from fixed
numbers (constant initializers, or the checkpoint the program writes), nothing is shuffled
and nothing drops out, so values match to 1e-4.
"""

import collections
import os
import re
import shutil

import numpy as np

from tests.bert_task_programs import (
    HIDDEN,
    LOGGED,
    SEQ,
    TEMPORARY_MODEL_DIR,
    VOCAB,
    ETAHook,
    bert_model,
    checkpoint_state,
    dense,
    electra_create_optimizer,
    embeddings,
    get_assignment_map_from_checkpoint,
    int_feature,
    pretrained_values,
    squad_name_to_features,
    transformer_layer,
)
from tests.program_registry import registry
from tests.tpu_sample_programs import info_lines, records_input_fn, write_pretrained_checkpoint
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, listing

RECORDED = os.path.join(DATA_DIR, "nlp_tpu.json")
# The BERT family's lines, and the ones XLNet's model_fn and get_train_op log.
LOGGED_XLNET = re.compile(
    f"{LOGGED.pattern[:-1]}|#params|Apply mult|Initialize from|init_checkpoint not)"
)
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

# ------------------------------------------------------------------ electra run_finetuning.py
FINETUNING = {
    "task_names": ["mrpc"],
    "train_batch_size": 4,
    "eval_batch_size": 4,
    "predict_batch_size": 4,
    "learning_rate": 0.01,
    "num_train_steps": 5,
    "warmup_steps": 2,
    "save_checkpoints_steps": 2,
    "iterations_per_loop": 2,
    "num_tpu_cores": 8,
    "num_trials": 2,
}


def flatten_dict(d, delim="_"):
    """utils.flatten_dict: nested names joined by `_`."""
    flattened = {}
    for k, v in d.items():
        if isinstance(v, dict):
            for k2, v2 in flatten_dict(v, delim).items():
                flattened[k + delim + k2] = v2
        else:
            flattened[k] = v
    return flattened


def nest_dict(d, prefixes, delim="_"):
    """utils.nest_dict: flatten_dict undone for the given prefixes."""
    nested = collections.defaultdict(dict)
    for key, value in d.items():
        for prefix in prefixes:
            if key.startswith(prefix + delim):
                nested[prefix][key[len(prefix) + 1 :]] = value
                break
        else:
            nested[key] = value
    return nested


def classification_module(tf, pooled, features, name):
    """ClassificationTask.get_prediction_module (its dropout left out: values compare)."""
    logits = dense(tf, pooled, 2, "dense", 60)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    label_ids = features[name + "_label_ids"]
    labels = tf.one_hot(label_ids, depth=2, dtype=tf.float32)
    losses = -tf.reduce_sum(labels * log_probs, axis=-1)
    outputs = {
        "loss": losses,
        "logits": logits,
        "predictions": tf.argmax(logits, axis=-1),
        "label_ids": label_ids,
        "eid": features[name + "_eid"],
    }
    return losses, outputs


def finetuning_model(tf, features, flags):
    """FinetuningModel: (its loss, its outputs by task)."""
    v1 = tf.compat.v1
    _, pooled, _ = bert_model(
        tf, features["input_ids"], features["input_mask"], features["segment_ids"], "electra"
    )
    outputs, losses = {"task_id": features["task_id"]}, []
    for name in flags["task_names"]:
        with v1.variable_scope("task_specific/" + name):
            task_losses, task_outputs = classification_module(tf, pooled, features, name)
            losses.append(task_losses)
            outputs[name] = task_outputs
    loss = tf.reduce_sum(
        tf.stack(losses, -1) * tf.one_hot(features["task_id"], len(flags["task_names"]))
    )
    return loss, outputs


def finetuning_model_fn_builder(tf, flags, init_checkpoint, seen):
    v1, tpu = tf.compat.v1, tf.compat.v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        loss, outputs = finetuning_model(tf, features, flags)
        assignment_map, _ = get_assignment_map_from_checkpoint(
            tf, v1.trainable_variables(), init_checkpoint
        )
        v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = electra_create_optimizer(
                tf, loss, flags["learning_rate"], flags["num_train_steps"], flags["warmup_steps"]
            )
            hook = ETAHook(tf, {"loss": loss}, flags["num_train_steps"], seen)
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=loss, train_op=train_op, scaffold_fn=None, training_hooks=[hook]
            )
        assert mode == tf.estimator.ModeKeys.PREDICT
        return tpu.TPUEstimatorSpec(mode=mode, predictions=flatten_dict(outputs), scaffold_fn=None)

    return model_fn


def write_finetuning_records(tf, path, n, seed, pad_to=1):
    """Preprocessor's examples (ids, mask, segments, task_id, the task's eid and label),
    then padding examples (task_id = the number of tasks) up to a multiple of `pad_to`."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for eid in range(n + (-n % pad_to)):
            length = rng.randint(4, SEQ + 1)
            padding = eid >= n
            features = collections.OrderedDict(
                input_ids=int_feature(
                    tf, [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length)
                ),
                input_mask=int_feature(tf, [1] * length + [0] * (SEQ - length)),
                segment_ids=int_feature(tf, [0] * SEQ),
                task_id=int_feature(tf, [1 if padding else 0]),
                mrpc_eid=int_feature(tf, [0 if padding else eid]),
                mrpc_label_ids=int_feature(tf, [0 if padding else int(rng.randint(2))]),
            )
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return path


def finetuning_input_fn(tf, input_file, is_training, batch_size):
    """Preprocessor._input_fn_builder: records decoded in batches, the last dropped."""
    name_to_features = {
        "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
        "task_id": tf.io.FixedLenFeature([], tf.int64),
        "mrpc_eid": tf.io.FixedLenFeature([], tf.int64),
        "mrpc_label_ids": tf.io.FixedLenFeature([], tf.int64),
    }

    return records_input_fn(tf, input_file, name_to_features, is_training, True, batch_size)


def finetuning_estimator(tf, flags, model_dir, init_checkpoint, seen):
    """ModelRunner's RunConfig and TPUEstimator."""
    tpu = tf.compat.v1.estimator.tpu
    tpu_config = tpu.TPUConfig(
        iterations_per_loop=flags["iterations_per_loop"],
        num_shards=flags["num_tpu_cores"],
        per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        tpu_job_name=None,
    )
    run_config = tpu.RunConfig(
        cluster=None,
        model_dir=model_dir,
        save_checkpoints_steps=flags["save_checkpoints_steps"],
        save_checkpoints_secs=None,
        tpu_config=tpu_config,
    )
    return tpu.TPUEstimator(
        use_tpu=False,
        model_fn=finetuning_model_fn_builder(tf, flags, init_checkpoint, seen),
        config=run_config,
        train_batch_size=flags["train_batch_size"],
        eval_batch_size=flags["eval_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
    )


def evaluate_task(estimator, flags, eval_input_fn):
    """ModelRunner.evaluate_task: the padding examples skipped, the rest scored."""
    rows = []
    for r in estimator.predict(input_fn=eval_input_fn, yield_single_examples=True):
        if r["task_id"] != len(flags["task_names"]):
            r = nest_dict(r, flags["task_names"])
            task = r["mrpc"]
            rows.append(
                {
                    "keys": sorted(r) + sorted(task),
                    "types": sorted({type(v).__name__ for v in task.values()}),
                    "eid": int(task["eid"]),
                    "logits": [float(x) for x in task["logits"]],
                    "correct": int(task["predictions"] == task["label_ids"]),
                }
            )
    return rows


@program
def electra_finetuning(tf, workdir):
    flags = FINETUNING
    values = {"electra/" + k[len("bert/") :]: v for k, v in pretrained_values().items()}
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, values)
    train_file = write_finetuning_records(tf, os.path.join(workdir, "train.tfrecord"), 8, 0)
    dev_file = write_finetuning_records(tf, os.path.join(workdir, "dev.tfrecord"), 6, 1, 4)
    generic_model_dir = os.path.join(workdir, "models", "electra_small", "finetuning_models")
    trials, removed = [], []
    for trial in range(1, flags["num_trials"] + 1):
        model_dir = generic_model_dir + "_" + str(trial)
        seen = []
        estimator = finetuning_estimator(tf, flags, model_dir, init_checkpoint, seen)
        with info_lines(LOGGED) as lines:
            estimator.train(
                input_fn=finetuning_input_fn(tf, train_file, True, flags["train_batch_size"]),
                max_steps=flags["num_train_steps"],
            )
            rows = evaluate_task(
                estimator,
                flags,
                finetuning_input_fn(tf, dev_file, False, flags["predict_batch_size"]),
            )
        trials.append(
            {
                "model_dir": listing(model_dir),
                "checkpoint_state": checkpoint_state(tf, model_dir),
                "eta_hook": [row[:2] for row in seen],
                "losses": [v for row in seen for v in row[2].values()],
                "train_tags": event_tags(model_dir),
                "lines": lines,
                "rows": rows,
            }
        )
        if trial != flags["num_trials"]:
            shutil.rmtree(model_dir)
            removed.append(os.path.exists(model_dir))
    exact = [{k: v for k, v in t.items() if k != "losses"} for t in trials]
    for t in exact:
        t["rows"] = [{k: v for k, v in row.items() if k != "logits"} for row in t["rows"]]
    return {
        "exact": {"trials": exact, "removed": removed},
        "close": {
            f"trial {i} {part}": values
            for i, t in enumerate(trials)
            for part, values in (
                ("losses", t["losses"]),
                ("logits", [x for row in t["rows"] for x in row["logits"]]),
            )
        },
    }


@program
def electra_eval_only(tf, workdir):
    """--do_train=False --do_eval=True on a fresh model_dir: the dev set predicted from the
    init_checkpoint alone (no checkpoint in model_dir)."""
    flags = FINETUNING
    values = {"electra/" + k[len("bert/") :]: v for k, v in pretrained_values().items()}
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, values)
    dev_file = write_finetuning_records(tf, os.path.join(workdir, "dev.tfrecord"), 6, 1, 4)
    model_dir = os.path.join(workdir, "models", "electra_small", "finetuning_models_1")
    estimator = finetuning_estimator(tf, flags, model_dir, init_checkpoint, [])
    with info_lines(LOGGED) as lines:
        rows = evaluate_task(
            estimator, flags, finetuning_input_fn(tf, dev_file, False, flags["predict_batch_size"])
        )
    return {
        "exact": {
            "model_dir": listing(model_dir) if os.path.isdir(model_dir) else None,
            "lines": [TEMPORARY_MODEL_DIR.sub("<tmp>", line) for line in lines],
            "rows": [{k: v for k, v in row.items() if k != "logits"} for row in rows],
        },
        "close": {"logits": [x for row in rows for x in row["logits"]]},
    }


# ------------------------------------------------------------------ xlnet run_squad.py
XLNET = {
    "learning_rate": 0.01,
    "warmup_steps": 2,
    "train_steps": 6,
    "min_lr_ratio": 0.0,
    "adam_epsilon": 1e-8,
    "clip": 1.0,
    "lr_layer_decay_rate": 0.75,
    "iterations": 4,
    "save_steps": 3,
    "max_save": 2,
    "num_hosts": 1,
    "num_core_per_host": 8,
    "train_batch_size": 4,
    "predict_batch_size": 4,
    "start_n_top": 2,
    "summary_every": 2,
}


def xlnet_configure_tpu(tf, flags, model_dir):
    """model_utils.configure_tpu without a TPU: no cluster, no strategy."""
    tpu = tf.compat.v1.estimator.tpu
    session_config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    return tpu.RunConfig(
        cluster=None,
        model_dir=model_dir,
        session_config=session_config,
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=flags["iterations"],
            num_shards=flags["num_hosts"] * flags["num_core_per_host"],
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
            tpu_job_name=None,
        ),
        keep_checkpoint_max=flags["max_save"],
        save_checkpoints_secs=None,
        save_checkpoints_steps=flags["save_steps"],
        train_distribute=None,
    )


def xlnet_init_from_checkpoint(tf, init_checkpoint):
    """model_utils.init_from_checkpoint's TPU branch: the restore in a scaffold_fn."""
    v1 = tf.compat.v1
    tvars = v1.trainable_variables()
    v1.logging.info(f"Initialize from the ckpt {init_checkpoint}")
    assignment_map, initialized = get_assignment_map_from_checkpoint(tf, tvars, init_checkpoint)

    def tpu_scaffold():
        v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
        return v1.train.Scaffold()

    v1.logging.info("**** Global Variables ****")
    for var in tvars:
        init_string = ", *INIT_FROM_CKPT*" if var.name in initialized else ""
        v1.logging.info("  name = %s, shape = %s%s", var.name, var.shape, init_string)
    return tpu_scaffold


def xlnet_learning_rate(tf, flags, global_step):
    """get_train_op's schedule: a linear warm-up, then polynomial decay."""
    v1 = tf.compat.v1
    warmup_lr = (
        tf.cast(global_step, tf.float32)
        / tf.cast(flags["warmup_steps"], tf.float32)
        * flags["learning_rate"]
    )
    decay_lr = v1.train.polynomial_decay(
        flags["learning_rate"],
        global_step=global_step - flags["warmup_steps"],
        decay_steps=flags["train_steps"] - flags["warmup_steps"],
        end_learning_rate=flags["learning_rate"] * flags["min_lr_ratio"],
    )
    return tf.compat.v1.where(global_step < flags["warmup_steps"], warmup_lr, decay_lr)


def xlnet_get_train_op(tf, flags, total_loss):
    """model_utils.get_train_op (weight_decay 0: Adam), with the layer-wise decay."""
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    learning_rate = xlnet_learning_rate(tf, flags, global_step)
    optimizer = v1.train.AdamOptimizer(learning_rate=learning_rate, epsilon=flags["adam_epsilon"])
    gradients, variables = zip(*optimizer.compute_gradients(total_loss), strict=True)
    clipped, gnorm = tf.clip_by_global_norm(gradients, flags["clip"])
    n_layer = 0
    for var in variables:
        m = re.search(r"model/transformer/layer_(\d+?)/", var.name)
        if m:
            n_layer = max(n_layer, int(m.group(1)) + 1)
    for i in range(len(clipped)):
        for layer in range(n_layer):
            if f"model/transformer/layer_{layer}/" in variables[i].name:
                abs_rate = flags["lr_layer_decay_rate"] ** (n_layer - 1 - layer)
                clipped[i] *= abs_rate
                v1.logging.info(
                    f"Apply mult {abs_rate:.4f} to layer-{layer} grad of {variables[i].name}"
                )
                break
    train_op = optimizer.apply_gradients(
        zip(clipped, variables, strict=True), global_step=global_step
    )
    return train_op, learning_rate, gnorm


def construct_scalar_host_call(tf, monitor_dict, model_dir, every, prefix="", reduce_fn=None):
    """function_builder.construct_scalar_host_call, tf.contrib.summary as tf.compat.v2's."""
    summary = tf.compat.v2.summary
    metric_names = list(monitor_dict.keys())

    def host_call_fn(global_step, *args):
        step = global_step[0]
        writer = summary.create_file_writer(model_dir, filename_suffix=".host_call")
        with writer.as_default(), summary.record_if(tf.equal(step % every, 0)):
            for i, name in enumerate(metric_names):
                scalar = args[i][0] if reduce_fn is None else reduce_fn(args[i])
                summary.scalar(prefix + name, scalar, step=step)
            return tf.compat.v1.summary.all_v2_summary_ops()

    global_step_tensor = tf.reshape(tf.compat.v1.train.get_or_create_global_step(), [1])
    other_tensors = [tf.reshape(monitor_dict[key], [1]) for key in metric_names]
    return host_call_fn, [global_step_tensor, *other_tensors]


def xlnet_qa_outputs(tf, features, flags):
    """function_builder.get_qa_outputs' shape over the tiny encoder (`model/transformer`)."""
    v1 = tf.compat.v1
    batch_size = tf.shape(features["input_ids"])[0]
    with v1.variable_scope("model/transformer"):
        embedded, _ = embeddings(tf, features["input_ids"], features["segment_ids"], batch_size)
        rows = tf.reshape(embedded, [-1, HIDDEN])
        output = transformer_layer(tf, rows, features["input_mask"], batch_size)
    sequence = tf.reshape(output, [batch_size, SEQ, HIDDEN])
    with v1.variable_scope("start_logits"):
        start_logits = tf.squeeze(dense(tf, sequence, 1, "dense", 70), -1)
        start_log_probs = tf.nn.log_softmax(start_logits, -1)
    with v1.variable_scope("end_logits"):
        end_logits = tf.squeeze(dense(tf, sequence, 1, "dense", 71), -1)
        end_log_probs = tf.nn.log_softmax(end_logits, -1)
    with v1.variable_scope("answer_class"):
        cls_logits = tf.squeeze(dense(tf, sequence[:, 0], 1, "dense", 72), -1)
    start_top_log_probs, start_top_index = tf.nn.top_k(start_log_probs, k=flags["start_n_top"])
    end_top_log_probs, end_top_index = tf.nn.top_k(end_log_probs, k=flags["start_n_top"])
    return {
        "start_log_probs": start_log_probs,
        "end_log_probs": end_log_probs,
        "start_top_log_probs": start_top_log_probs,
        "start_top_index": start_top_index,
        "end_top_log_probs": end_top_log_probs,
        "end_top_index": end_top_index,
        "cls_logits": cls_logits,
    }


def xlnet_squad_loss(tf, features, outputs):
    seq_length = tf.shape(features["input_ids"])[1]

    def compute_loss(log_probs, positions):
        one_hot_positions = tf.one_hot(positions, depth=seq_length, dtype=tf.float32)
        return tf.reduce_mean(-tf.reduce_sum(one_hot_positions * log_probs, axis=-1))

    start_loss = compute_loss(outputs["start_log_probs"], features["start_positions"])
    end_loss = compute_loss(outputs["end_log_probs"], features["end_positions"])
    total_loss = (start_loss + end_loss) * 0.5
    is_impossible = tf.reshape(features["is_impossible"], [-1])
    regression_loss = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=is_impossible, logits=outputs["cls_logits"]
    )
    return total_loss + tf.reduce_mean(regression_loss) * 0.5


def xlnet_eval_metrics(tf, features, outputs):
    """run_classifier's metric_fn and its arguments (padding examples weighted 0: every
    third unique id here), over the start positions."""
    v1 = tf.compat.v1
    is_real_example = tf.cast(tf.not_equal(features["unique_ids"] % 3, 0), tf.float32)
    one_hot = tf.one_hot(features["start_positions"], SEQ)
    per_example_loss = -tf.reduce_sum(one_hot * outputs["start_log_probs"], -1)

    def metric_fn(per_example_loss, label_ids, logits, is_real_example):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        eval_input_dict = {
            "labels": label_ids,
            "predictions": predictions,
            "weights": is_real_example,
        }
        accuracy = v1.metrics.accuracy(**eval_input_dict)
        loss = v1.metrics.mean(values=per_example_loss, weights=is_real_example)
        return {"eval_accuracy": accuracy, "eval_loss": loss}

    label_ids, logits = features["start_positions"], outputs["start_log_probs"]
    return metric_fn, [per_example_loss, label_ids, logits, is_real_example]


def xlnet_squad_model_fn(tf, flags, init_checkpoint, model_dir):
    v1, tpu = tf.compat.v1, tf.compat.v1.estimator.tpu

    def model_fn(features, labels, mode, params):
        outputs = xlnet_qa_outputs(tf, features, flags)
        num_params = sum([np.prod(v.shape) for v in v1.trainable_variables()])
        v1.logging.info(f"#params: {num_params}")
        if mode == tf.estimator.ModeKeys.PREDICT:
            v1.logging.info("init_checkpoint not being used in predict mode.")
            keys = ("start_top_index", "start_top_log_probs", "end_top_index")
            predictions = {"unique_ids": features["unique_ids"], **{k: outputs[k] for k in keys}}
            predictions["end_top_log_probs"] = outputs["end_top_log_probs"]
            predictions["cls_logits"] = outputs["cls_logits"]
            return tpu.TPUEstimatorSpec(mode=mode, predictions=predictions, scaffold_fn=None)
        total_loss = xlnet_squad_loss(tf, features, outputs)
        scaffold_fn = xlnet_init_from_checkpoint(tf, init_checkpoint)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tpu.TPUEstimatorSpec(
                mode=mode,
                loss=total_loss,
                eval_metrics=xlnet_eval_metrics(tf, features, outputs),
                scaffold_fn=scaffold_fn,
            )
        train_op, learning_rate, _ = xlnet_get_train_op(tf, flags, total_loss)
        host_call = construct_scalar_host_call(
            tf, {"lr": learning_rate}, model_dir, flags["summary_every"], "train/", tf.reduce_mean
        )
        return tpu.TPUEstimatorSpec(
            mode=mode,
            loss=total_loss,
            train_op=train_op,
            host_call=host_call,
            scaffold_fn=scaffold_fn,
        )

    return model_fn


def write_squad_records(tf, path, n, seed, is_training):
    """FeatureWriter's features: unique ids, ids, mask, segments (and answers to train)."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(n):
            length = rng.randint(5, SEQ + 1)
            features = collections.OrderedDict(
                unique_ids=int_feature(tf, [1000000000 + i]),
                input_ids=int_feature(
                    tf, [1] + list(rng.randint(3, VOCAB, length - 1)) + [0] * (SEQ - length)
                ),
                input_mask=int_feature(tf, [1] * length + [0] * (SEQ - length)),
                segment_ids=int_feature(tf, [0] * 3 + [1] * (SEQ - 3)),
            )
            if is_training:
                start = int(rng.randint(3, length))
                features["start_positions"] = int_feature(tf, [start])
                features["end_positions"] = int_feature(tf, [int(rng.randint(start, length))])
                impossible = float(rng.randint(2))
                features["is_impossible"] = tf.train.Feature(
                    float_list=tf.train.FloatList(value=[impossible])
                )
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return path


def xlnet_input_fn_builder(tf, input_glob, is_training, drop_remainder, answers=None, bsz=None):
    """run_squad.input_fn_builder: its files by glob (its shuffle and prefetch left out);
    with `answers`, a dev set with its answers (to evaluate), in batches of `bsz` (run_squad
    gives its TPUEstimator no eval_batch_size)."""
    answers = is_training if answers is None else answers
    name_to_features = squad_name_to_features(tf, answers)
    if answers:
        name_to_features["is_impossible"] = tf.io.FixedLenFeature([], tf.float32)

    input_files = sorted(tf.io.gfile.glob(input_glob))
    return records_input_fn(tf, input_files, name_to_features, is_training, drop_remainder, bsz)


def host_call_summaries(tf, model_dir):
    """[file suffix, tag, step] of each summary in the `.host_call` event files (tf2
    summaries: tensors, not the simple values `event_tags` reads)."""
    found = []
    for name in sorted(os.listdir(model_dir)):
        if name.endswith(".host_call"):
            for event in tf.compat.v1.train.summary_iterator(os.path.join(model_dir, name)):
                found += [[".host_call", v.tag, int(event.step)] for v in event.summary.value]
    return found


def xlnet_eval_every_checkpoint(tf, estimator, model_dir, dev_file):
    """run_classifier's do_eval: every checkpoint in model_dir evaluated by its path."""
    steps_and_files = []
    for filename in tf.io.gfile.listdir(model_dir):
        if filename.endswith(".index"):
            cur_filename = os.path.join(model_dir, filename[:-6])
            steps_and_files.append([int(cur_filename.split("-")[-1]), cur_filename])
    evaluated = []
    for global_step, filename in sorted(steps_and_files):
        eval_input_fn = xlnet_input_fn_builder(tf, dev_file, False, True, True, 4)
        ret = estimator.evaluate(input_fn=eval_input_fn, checkpoint_path=filename)
        evaluated.append([global_step, ret])
    return evaluated


RawResult = collections.namedtuple(
    "RawResult",
    [
        "unique_id",
        "start_top_log_probs",
        "start_top_index",
        "end_top_log_probs",
        "end_top_index",
        "cls_logits",
    ],
)


def xlnet_raw_results(estimator, eval_input_fn):
    """run_squad's predict loop."""
    cur_results = []
    for result in estimator.predict(input_fn=eval_input_fn, yield_single_examples=True):
        cur_results.append(
            RawResult(
                unique_id=int(result["unique_ids"]),
                start_top_log_probs=[float(x) for x in result["start_top_log_probs"].flat],
                start_top_index=[int(x) for x in result["start_top_index"].flat],
                end_top_log_probs=[float(x) for x in result["end_top_log_probs"].flat],
                end_top_index=[int(x) for x in result["end_top_index"].flat],
                cls_logits=float(result["cls_logits"].flat[0]),
            )
        )
    return cur_results


@program
def xlnet_squad(tf, workdir):
    return xlnet_squad_run(tf, workdir, XLNET)


@program
def xlnet_squad_without_save_steps(tf, workdir):
    """--save_steps left at its default (None: "not to save any model")."""
    return xlnet_squad_run(tf, workdir, {**XLNET, "save_steps": None})


def xlnet_squad_run(tf, workdir, flags):
    flags = dict(flags)
    if flags["save_steps"] is not None:
        flags["iterations"] = min(flags["iterations"], flags["save_steps"])
    model_dir = os.path.join(workdir, "experiment", "squad")
    values = {
        re.sub("^bert/(encoder/)?", "model/transformer/", k): v
        for k, v in pretrained_values().items()
        if "pooler" not in k
    }
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, values)
    write_squad_records(
        tf, os.path.join(workdir, "spiece.model.0.slen-8.train.tf_record"), 8, 0, True
    )
    dev_file = write_squad_records(tf, os.path.join(workdir, "dev.tf_record"), 6, 2, True)
    eval_file = write_squad_records(
        tf, os.path.join(workdir, "spiece.model.slen-8.eval.tf_record"), 6, 1, False
    )
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        use_tpu=False,
        model_fn=xlnet_squad_model_fn(tf, flags, init_checkpoint, model_dir),
        config=xlnet_configure_tpu(tf, flags, model_dir),
        train_batch_size=flags["train_batch_size"],
        predict_batch_size=flags["predict_batch_size"],
    )
    train_glob = os.path.join(workdir, "spiece.model.*.slen-8.train.tf_record")
    with info_lines(LOGGED_XLNET) as lines:
        estimator.train(
            input_fn=xlnet_input_fn_builder(tf, train_glob, True, True),
            max_steps=flags["train_steps"],
        )
        results = xlnet_raw_results(estimator, xlnet_input_fn_builder(tf, eval_file, False, False))
        evaluated = xlnet_eval_every_checkpoint(tf, estimator, model_dir, dev_file)
    return {
        "exact": {
            "model_dir": listing(model_dir),
            "checkpoint_state": (
                tf.train.latest_checkpoint(model_dir) and checkpoint_state(tf, model_dir)
            ),
            "host_call_summaries": host_call_summaries(tf, model_dir),
            "train_tags": event_tags(model_dir),
            "lines": [TEMPORARY_MODEL_DIR.sub("<tmp>", line) for line in lines],
            "results": [[r.unique_id, r.start_top_index, r.end_top_index] for r in results],
            "evaluated": [[step, sorted(result)] for step, result in evaluated],
            "evaluate": error_of(
                lambda: estimator.evaluate(
                    input_fn=xlnet_input_fn_builder(tf, eval_file, False, False), steps=1
                )
            ),
        },
        "close": {
            "log_probs": [x for r in results for x in r.start_top_log_probs + r.end_top_log_probs],
            "cls_logits": [r.cls_logits for r in results],
            "evaluated": [[float(v) for _, v in sorted(r.items())] for _, r in evaluated],
        },
    }
