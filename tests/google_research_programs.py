"""google-research/bleurt's fine-tuning (`finetune.py`, `model.py`, `lib/experiment_utils.py`)
and its scorers (`score.py`), and google-research/uda's text classifier (`text/main.py`,
`uda.py`, `utils/`), as a user runs them on TF 2.x, on a tiny BERT (the one of
tests/bert_task_programs.py) and made-up token ids, ratings and labels:

- `bleurt_finetune`: `run_finetuning_pipeline(..., run_in_lazy_mode=False)` with
  `--dynamic_seq_length=False`: serialized ratings read back by its `input_fn_builder`
  (`to_int32` features, a repeated and shuffled training set), a regression head on the
  pooled output trained from a BLEURT checkpoint by `init_from_checkpoint`, eval metrics
  over streaming concatenations (a Kendall tau by `tf.numpy_function`, a Pearson
  correlation, means), `experiment_utils.run_experiment`'s plain `Estimator` in
  `train_and_evaluate` (an EvalSpec named `default`, throttle 0), a `BestExporter` reading
  `eval_default/*.tfevents.*` and comparing Kendall taus with `<=`, keeping 3, of a raw
  receiver built from eager `tf.zeros` (the sample's TF2 branch); the same model_dir run
  again to a later step with a new exporter (a preempted job restarted); the best export
  finalized (its `bleurt_config.json`) and scored as `EagerPredictor` scores it;
- `bleurt_lazy`: the default lazy mode (`tf.disable_eager_execution()`, here a
  `tf.Graph().as_default()` block, which nothing can turn back on in a process) with
  `--dynamic_seq_length`: an export of `[None, None]` placeholders, fine-tuned again from
  that export's `variables/variables` (`--init_bleurt_checkpoint`), and scored as
  `LazyPredictor` scores it (the export loaded in a graph, called on placeholders, run in a
  session fed by name).

- `uda_text`: google-research/uda's `text/main.py` with `--use_tpu=False` after
  `tf_upgrade_v2`: a TPUEstimator (`keep_checkpoint_max=1000`, `params={"model_dir": ...}`,
  save steps from `save_checkpoints_num`) over a supervised and an unsupervised dataset
  zipped (`shuffle_and_repeat`, a sloppy `parallel_interleave`, `map_and_batch` dropping
  the remainder, the feature dicts merged), a TSA-masked cross entropy plus the KL
  divergence between originals and augmentations, `init_from_checkpoint` given the
  variables themselves, its `construct_scalar_host_call` (a tf2 summary writer with
  `filename_suffix=".host_call"`, `reduce_fn=tf.reduce_mean`, the `training/` prefix),
  `eval_metrics`; its train/evaluate loop turning each result into a number with
  `.item()`, then `--do_eval`'s loop over `all_model_checkpoint_paths` by
  `checkpoint_path`, and what `predict` (which its model_fn refuses) tells a user.

Hand edits a user makes: the data and vocabulary are made-up token ids (no tokenizer); the
tf_slim streaming metrics (`streaming_concat`, `streaming_pearson_correlation`) and
scipy's `kendalltau` are written out here (third-party, not installed); the shuffle
buffer is 1 (`--shuffle_buffer_size=1`), so rows are read in file order; UDA's
`record_summaries_every_n_global_steps(1, step)` becomes `record_if(step % 1 == 0)` (as
tf_upgrade_v2's report asks), `input_ids.shape[0].value` `input_ids.shape[0]`, its
`get_data_files` a glob, its shuffle buffers 1 and its classifier's dropout left out.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_google_research.py` with what `tests/tf215/record_family.py
google_research_programs` recorded under tf.estimator 2.15
(`tests/data/tf215/google_research.json`). Every weight starts from the fixed checkpoint
the program writes and nothing is shuffled or dropped out, so values match to 1e-4.
"""

import glob
import json
import os
import re

import numpy as np

from tests.bert_task_programs import (
    HIDDEN,
    LOGGED,
    SEQ,
    VOCAB,
    _decoded_batches,
    _fixed,
    bert_model,
    clipped_train_op,
    create_optimizer,
    initialize_and_log,
    int_feature,
    log_features,
    pretrained_values,
)
from tests.program_registry import registry
from tests.public_sample_programs import served
from tests.tpu_sample_programs import info_lines, write_pretrained_checkpoint
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, listing

RECORDED = os.path.join(DATA_DIR, "google_research.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
# The lines users grep, BLEURT's own and the BestExporter's. ('loss = <f>, step = N' is
# left out: its step is read in the train op's run, unordered with the increment, and
# 2.15 logged step = 0 or 1 at the first step from one run to the next.)
GREPPED = re.compile(
    f"{LOGGED.pattern[:-1]}|Loading best metric|Performing best model|Exporting BLEURT|"
    "Finalizing BLEURT|BLEURT checkpoint|Initializing BLEURT|Creating input fun|Exporting a model)"
)
FLAGS = {
    "batch_size": 2,
    "eval_batch_size": 2,
    "num_train_steps": 4,
    "save_checkpoints_steps": 2,
    "keep_checkpoint_max": 5,
    "learning_rate": 0.01,
    "warmup_proportion": 0.1,
    "shuffle_buffer_size": 1,
    "random_seed": 55555.0,
    "export_metric": "kendalltau",
}


# ------------------------------------------------------------------ encoding.py
def write_ratings(tf, path, n, seed):
    """encoding.encode_and_serialize's TFRecords: a reference and a candidate as token ids,
    their mask and segments, and the rating."""
    draw = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            length = draw.randint(4, SEQ + 1)
            ids = list(draw.randint(5, VOCAB, size=length)) + [0] * (SEQ - length)
            cut = draw.randint(1, length)
            features = {
                "input_ids": ids,
                "input_mask": [1] * length + [0] * (SEQ - length),
                "segment_ids": [0] * cut + [1] * (length - cut) + [0] * (SEQ - length),
            }
            feature = {
                k: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(x) for x in v]))
                for k, v in features.items()
            }
            score = float(np.round(draw.uniform(-1.5, 1.5), 2))
            feature["score"] = tf.train.Feature(float_list=tf.train.FloatList(value=[score]))
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


def bleurt_checkpoint(tf, workdir):
    """An 'existing BLEURT checkpoint' (--init_bleurt_checkpoint): the BERT's values and
    its regression layer's, fixed, and its config."""
    values = dict(pretrained_values())
    values["dense/kernel"] = _fixed([HIDDEN, 1], 77, 0.5)
    values["dense/bias"] = np.full([1], 0.15, np.float32)
    folder = os.path.join(workdir, "bleurt_base")
    os.makedirs(folder)
    with open(os.path.join(folder, "bleurt_config.json"), "w") as f:
        json.dump({"name": "bleurt_base", "max_seq_length": SEQ}, f)
    return write_pretrained_checkpoint(tf, folder, values)


# ------------------------------------------------------------------ model.py
def create_model(tf, is_training, input_ids, input_mask, segment_ids, labels):
    """model.create_model with n_hidden_layers=0 and no dropout."""
    v1 = tf.compat.v1
    _, output_layer, _ = bert_model(tf, input_ids, input_mask, segment_ids)
    v1.logging.info(f"BERT embedding width: {output_layer.shape[-1]!s}")
    v1.logging.info("Building linear output...")
    predictions = v1.layers.dense(output_layer, 1, bias_initializer=v1.constant_initializer(0.15))
    predictions = tf.squeeze(predictions, 1)
    per_example_loss = tf.pow(predictions - labels, 2)
    loss = tf.reduce_mean(per_example_loss, axis=-1)
    return loss, per_example_loss, predictions


def model_fn_builder(tf, init_checkpoint, num_train_steps, num_warmup_steps):
    v1 = tf.compat.v1
    estimator = tf.compat.v1.estimator

    def model_fn(features, labels, mode, params):
        v1.logging.info("*** Building Regression BERT Model ***")
        v1.set_random_seed(FLAGS["random_seed"])
        log_features(tf, features)
        input_ids = features["input_ids"]
        if mode != estimator.ModeKeys.PREDICT:
            scores = features["score"]
        else:
            scores = tf.zeros(tf.shape(input_ids)[0])
        is_training = mode == estimator.ModeKeys.TRAIN
        total_loss, per_example_loss, pred = create_model(
            tf, is_training, input_ids, features["input_mask"], features["segment_ids"], scores
        )
        if mode == estimator.ModeKeys.TRAIN:
            v1.logging.info(f"**** Initializing from {init_checkpoint} ****")
            initialize_and_log(tf, features, init_checkpoint)
            train_op = create_optimizer(
                tf, total_loss, FLAGS["learning_rate"], num_train_steps, num_warmup_steps
            )
            return estimator.EstimatorSpec(mode=mode, loss=total_loss, train_op=train_op)
        if mode == estimator.ModeKeys.EVAL:
            return estimator.EstimatorSpec(
                mode=mode,
                loss=total_loss,
                eval_metric_ops=metric_fn(tf, per_example_loss, pred, scores),
            )
        return estimator.EstimatorSpec(mode=mode, predictions={"predictions": pred})

    return model_fn


def streaming_concat(tf, values, name="streaming_concat"):
    """tf_slim's metrics.streaming_concat, written out: a local variable of no fixed
    length that each update appends to."""
    v1 = tf.compat.v1
    with v1.variable_scope(None, default_name=name):
        array = v1.Variable(
            tf.zeros([0], values.dtype),
            validate_shape=False,
            shape=tf.TensorShape([None]),
            trainable=False,
            collections=[v1.GraphKeys.LOCAL_VARIABLES, v1.GraphKeys.METRIC_VARIABLES],
            name="array",
        )
        update = v1.assign(array, tf.concat([array, values], 0), validate_shape=False)
        return tf.identity(array), update


def streaming_pearson_correlation(tf, predictions, labels):
    """tf_slim's streaming_pearson_correlation, written out over concatenations."""
    pred_value, pred_update = streaming_concat(tf, predictions)
    label_value, label_update = streaming_concat(tf, labels)
    x = pred_value - tf.reduce_mean(pred_value)
    y = label_value - tf.reduce_mean(label_value)
    r = tf.reduce_sum(x * y) / tf.sqrt(tf.reduce_sum(x * x) * tf.reduce_sum(y * y))
    return r, tf.group(pred_update, label_update)


def _kendall_tau(x, y):
    """scipy.stats.kendalltau's tau (no ties in these ratings), as a float32."""
    pairs = [
        np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
        for i in range(len(x))
        for j in range(i + 1, len(x))
    ]
    return np.array(np.mean(pairs)).astype(np.float32)


def kendall_tau_metric(tf, predictions, ratings):
    with tf.compat.v1.variable_scope("kendall_tau"):
        concat_predictions, update_predictions = streaming_concat(tf, predictions)
        concat_labels, update_labels = streaming_concat(tf, ratings)
        metric_value = tf.reshape(
            tf.numpy_function(_kendall_tau, [concat_predictions, concat_labels], tf.float32),
            shape=[],
        )
        return metric_value, tf.group(update_predictions, update_labels)


def metric_fn(tf, per_example_loss, pred, ratings):
    metrics = tf.compat.v1.metrics
    mean = tf.reduce_mean(pred)
    return {
        "eval_loss": metrics.mean(values=per_example_loss),
        "eval_mean_err": metrics.mean(tf.sqrt(tf.pow(pred - ratings, 2))),
        "eval_mean_pred": metrics.mean(values=pred),
        "eval_pred_sd": metrics.mean(values=tf.sqrt(tf.pow(pred - mean, 2))),
        "correlation": streaming_pearson_correlation(tf, pred, ratings),
        "kendalltau": kendall_tau_metric(tf, pred, ratings),
    }


def input_fn_builder(tf, tfrecord_file, is_training, batch_size):
    v1 = tf.compat.v1
    v1.logging.info(f"Creating input fun with batch_size: {batch_size!s} and drop remainder: False")
    name_to_features = {
        "input_ids": v1.FixedLenFeature([SEQ], tf.int64),
        "input_mask": v1.FixedLenFeature([SEQ], tf.int64),
        "segment_ids": v1.FixedLenFeature([SEQ], tf.int64),
        "score": v1.FixedLenFeature([], tf.float32),
    }

    def _decode_record(record):
        example = v1.parse_single_example(record, name_to_features)
        return {k: v1.to_int32(t) if t.dtype == tf.int64 else t for k, t in example.items()}

    def input_fn(params):
        d = tf.data.TFRecordDataset(tf.io.gfile.glob(tfrecord_file))
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=FLAGS["shuffle_buffer_size"])
        d = d.map(_decode_record)
        return d.batch(batch_size=batch_size, drop_remainder=False)

    return input_fn


def _model_comparator(best_eval_result, current_eval_result):
    metric = FLAGS["export_metric"]
    return best_eval_result[metric] <= current_eval_result[metric]


def _serving_input_fn_builder(tf, dynamic_seq_length):
    """The sample's: eager `tf.zeros` as the features' examples in TF2's eager mode,
    placeholders when nothing runs eagerly."""
    v1 = tf.compat.v1
    names = ("input_ids", "input_mask", "segment_ids")
    if tf.executing_eagerly():
        name_to_features = {n: tf.zeros(dtype=tf.int64, shape=[0, SEQ]) for n in names}
    else:
        if dynamic_seq_length:
            v1.logging.info("Exporting a model with dynamic sequence length.")
        shape = [None, None] if dynamic_seq_length else [None, SEQ]
        name_to_features = {n: v1.placeholder(tf.int64, shape=shape) for n in names}
    return tf.compat.v1.estimator.export.build_raw_serving_input_receiver_fn(name_to_features)


# ------------------------------------------------------------------ experiment_utils.py
def run_experiment(tf, model_dir, model_fn, train_input_fn, eval_input_fn, exporters, steps):
    """experiment_utils.run_experiment: its RunConfig, plain Estimator and specs."""
    tf_estimator = tf.compat.v1.estimator
    run_config = tf_estimator.RunConfig(
        model_dir=model_dir,
        tf_random_seed=None,
        save_checkpoints_steps=FLAGS["save_checkpoints_steps"],
        keep_checkpoint_max=FLAGS["keep_checkpoint_max"],
    )
    estimator = tf_estimator.Estimator(config=run_config, model_fn=model_fn, model_dir=model_dir)
    train_spec = tf_estimator.TrainSpec(input_fn=train_input_fn, max_steps=steps)
    eval_spec = tf_estimator.EvalSpec(
        name="default",
        input_fn=eval_input_fn,
        exporters=exporters,
        start_delay_secs=0,
        throttle_secs=0,
        steps=None,
    )
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    return tf_estimator.train_and_evaluate(
        estimator=estimator, train_spec=train_spec, eval_spec=eval_spec
    )


def run_finetuning(tf, workdir, model_dir, init_checkpoint, steps, dynamic_seq_length=False):
    """model.run_finetuning with experiment_utils.run_experiment: train_and_evaluate's
    result."""
    v1 = tf.compat.v1
    v1.logging.info("Initializing BLEURT training pipeline.")
    train_tfrecord = os.path.join(workdir, "train.tfrecord")
    dev_tfrecord = os.path.join(workdir, "dev.tfrecord")
    train_input_fn = input_fn_builder(tf, train_tfrecord, True, FLAGS["batch_size"])
    dev_input_fn = input_fn_builder(tf, dev_tfrecord, False, FLAGS["eval_batch_size"])
    v1.logging.info("Creating model.")
    num_warmup_steps = int(FLAGS["num_train_steps"] * FLAGS["warmup_proportion"])
    model_fn = model_fn_builder(tf, init_checkpoint, FLAGS["num_train_steps"], num_warmup_steps)
    v1.logging.info("Creating TF Estimator.")
    exporter = tf.compat.v1.estimator.BestExporter(
        "bleurt_best",
        serving_input_receiver_fn=_serving_input_fn_builder(tf, dynamic_seq_length),
        event_file_pattern="eval_default/*.tfevents.*",
        compare_fn=_model_comparator,
        exports_to_keep=3,
    )
    v1.enable_resource_variables()
    v1.logging.info("*** Entering the Training / Eval phase ***")
    return run_experiment(tf, model_dir, model_fn, train_input_fn, dev_input_fn, [exporter], steps)


# ------------------------------------------------------------------ checkpoint.py, score.py
def finalize_bleurt_checkpoint(tf, export_dir):
    tf.compat.v1.logging.info("Finalizing BLEURT checkpoint.")
    config = {"name": "bert_custom", "max_seq_length": SEQ, "dynamic_seq_length": False}
    with tf.io.gfile.GFile(os.path.join(export_dir, "bleurt_config.json"), "w+") as f:
        f.write(json.dumps(config))
    tf.compat.v1.logging.info("BLEURT checkpoint created.")


def scoring_inputs(n=3):
    """Made-up encoded pairs, as BleurtScorer.score hands them to a predictor."""
    draw = np.random.RandomState(9)
    ids = draw.randint(5, VOCAB, size=(n, SEQ)).astype(np.int64)
    mask = np.ones((n, SEQ), np.int64)
    mask[:, 6:] = 0
    segments = np.zeros((n, SEQ), np.int64)
    segments[:, 3:6] = 1
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": segments}


def signature_tensors(export_dir):
    """{signature: {input or output key: [tensor name, dtype, dims]}} of the serving graph."""
    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    (graph,) = saved.meta_graphs
    return {
        name: {
            f"{side}:{key}": [
                info.name,
                tf.as_dtype(info.dtype).name,
                [d.size for d in info.tensor_shape.dim],
            ]
            for side, infos in (("in", sig.inputs), ("out", sig.outputs))
            for key, info in sorted(infos.items())
        }
        for name, sig in sorted(graph.signature_def.items())
    }


def lazy_predictions(tf, export_dir, inputs):
    """score.LazyPredictor: the export loaded in a graph of its own, its signature called
    on placeholders, run in a session fed by the placeholders' names."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        imported = tf.saved_model.load(export_dir)
        ops = imported.signatures["serving_default"](
            input_ids=v1.placeholder(tf.int64, name="input_ids"),
            input_mask=v1.placeholder(tf.int64, name="input_mask"),
            segment_ids=v1.placeholder(tf.int64, name="segment_ids"),
        )
        init_op = tf.group(v1.global_variables_initializer(), v1.tables_initializer())
    with v1.Session(graph=graph) as session:
        session.run(init_op)
        out = session.run(ops, {f"{k}:0": v for k, v in inputs.items()})
    return out["predictions"]


# ------------------------------------------------------------------ the programs
def _evaluations(tf, model_dir):
    """{step: {metric: value}} of the eval_default events, each step's values."""
    found = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(model_dir, "eval_default", "*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    found.setdefault(str(event.step), {})[value.tag] = value.simple_value
    return found


def _numbers(values, prefix=""):
    """{"outer/inner": number or list} of nested dicts, as the `close` parts compare."""
    found = {}
    for key, value in values.items():
        if isinstance(value, dict):
            found.update(_numbers(value, f"{prefix}{key}/"))
        else:
            found[f"{prefix}{key}"] = value
    return found


def _as_logged(lines, workdir):
    """The lines, the program's folder and exports' versions (seconds) as placeholders."""
    return [re.sub(r"/\d{10}\b", "/<ts>", line.replace(workdir, "<workdir>")) for line in lines]


def _variables(tf, checkpoint):
    return [[name, list(shape)] for name, shape in tf.train.list_variables(checkpoint)]


def _exports(model_dir):
    folder = os.path.join(model_dir, "export", "bleurt_best")
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def _run_first_and_restarted(tf, workdir, model_dir, init_checkpoint, dynamic):
    """The fine-tuning run, then the same model_dir run again to a later step with a new
    exporter: what each run returned and which exports were kept after each."""
    seen = {}
    for run, steps in (("first", FLAGS["num_train_steps"]), ("restarted", 6)):
        result, exports = run_finetuning(tf, workdir, model_dir, init_checkpoint, steps, dynamic)
        seen[run] = {
            "result": sorted(result),
            "returned_exports": [None if e is None else "export" for e in exports],
            "kept_exports": len(_exports(model_dir)),
        }
    return seen


@program
def bleurt_finetune(tf, workdir):
    write_ratings(tf, os.path.join(workdir, "train.tfrecord"), 6, 1)
    write_ratings(tf, os.path.join(workdir, "dev.tfrecord"), 5, 2)
    init_checkpoint = bleurt_checkpoint(tf, workdir)
    model_dir = os.path.join(workdir, "model")
    with info_lines(GREPPED) as lines:
        runs = _run_first_and_restarted(tf, workdir, model_dir, init_checkpoint, False)
        export_dir = os.path.join(model_dir, "export", "bleurt_best", _exports(model_dir)[-1])
        tf.compat.v1.logging.info(f"Exporting BLEURT checkpoint to {export_dir}.")
        finalize_bleurt_checkpoint(tf, export_dir)
    inputs = scoring_inputs()
    imported = tf.saved_model.load(export_dir)
    scored = imported.signatures["serving_default"](
        **{k: tf.constant(v, dtype=tf.int64) for k, v in inputs.items()}
    )["predictions"].numpy()
    shapes, _ = served(export_dir, "serving_default", **inputs)
    return {
        "exact": {
            "lines": _as_logged(lines, workdir),
            "runs": runs,
            "listing": listing(model_dir),
            "variables": _variables(tf, model_dir),
            "export_variables": _variables(tf, os.path.join(export_dir, "variables", "variables")),
            "signatures": signature_tensors(export_dir),
            "served": shapes,
            "export_files": listing(export_dir),
        },
        "close": _numbers({"evaluations": _evaluations(tf, model_dir), "scores": scored.tolist()}),
    }


@program
def bleurt_lazy(tf, workdir):
    write_ratings(tf, os.path.join(workdir, "train.tfrecord"), 6, 3)
    write_ratings(tf, os.path.join(workdir, "dev.tfrecord"), 5, 4)
    base = bleurt_checkpoint(tf, workdir)
    inputs = scoring_inputs()
    with info_lines(GREPPED) as lines:
        with tf.Graph().as_default():
            result = run_finetuning(
                tf, workdir, os.path.join(workdir, "model"), base, 2, dynamic_seq_length=True
            )
        model_dir = os.path.join(workdir, "model")
        export_dir = os.path.join(model_dir, "export", "bleurt_best", _exports(model_dir)[-1])
        # Fine-tuned again from that export (--init_bleurt_checkpoint=export_dir).
        again = os.path.join(workdir, "again")
        with tf.Graph().as_default():
            run_finetuning(
                tf, workdir, again, os.path.join(export_dir, "variables", "variables"), 2, True
            )
        again_export = os.path.join(again, "export", "bleurt_best", _exports(again)[-1])
    return {
        "exact": {
            "lines": _as_logged(lines, workdir),
            "result": sorted(result[0]),
            "signatures": signature_tensors(export_dir),
            "listing": listing(again),
            "export_variables": _variables(
                tf, os.path.join(again_export, "variables", "variables")
            ),
        },
        "close": _numbers(
            {
                "evaluations": _evaluations(tf, model_dir),
                "again": _evaluations(tf, again),
                "scores": lazy_predictions(tf, export_dir, inputs).tolist(),
                "again_scores": lazy_predictions(tf, again_export, inputs).tolist(),
            }
        ),
    }


# ------------------------------------------------------------------ uda: text/main.py
UDA = {
    "num_train_steps": 4,
    "save_checkpoints_num": 2,
    "iterations_per_loop": 200,
    "train_batch_size": 2,
    "eval_batch_size": 2,
    "unsup_ratio": 1,
    "uda_coeff": 1.0,
    "tsa": "linear_schedule",
    "learning_rate": 0.01,
    "num_warmup_steps": 1,
    "num_labels": 2,
}


def write_uda_records(tf, path, n, seed, unsup):
    """prepro's tf_examples.tfrecord: labelled rows, or an original and its augmentation."""
    draw = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(n):
            features = {}
            for prefix in ("ori_", "aug_") if unsup else ("",):
                length = draw.randint(4, SEQ + 1)
                features[prefix + "input_ids"] = list(draw.randint(5, VOCAB, size=length))
                features[prefix + "input_ids"] += [0] * (SEQ - length)
                features[prefix + "input_mask"] = [1] * length + [0] * (SEQ - length)
                features[prefix + "input_type_ids"] = [0] * SEQ
            if not unsup:
                features["label_ids"] = [int(features["input_ids"][1] % 2)]
            feature = {k: int_feature(tf, [int(x) for x in v]) for k, v in features.items()}
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


def uda_feature_specs(tf, prefixes, label=False):
    specs = {}
    for prefix in prefixes:
        for name in ("input_ids", "input_mask", "input_type_ids"):
            specs[prefix + name] = tf.io.FixedLenFeature([SEQ], tf.int64)
    if label:
        specs["label_ids"] = tf.io.FixedLenFeature([1], tf.int64)
    return specs


def get_training_dataset(tf, total_data_files, batch_size, feature_specs):
    """proc_data_utils.get_training_dataset after tf_upgrade_v2 (shuffle buffers of 1)."""
    d = tf.data.Dataset.from_tensor_slices(tf.constant(total_data_files))
    d = d.apply(tf.data.experimental.shuffle_and_repeat(buffer_size=len(total_data_files)))
    d = d.apply(
        tf.data.experimental.parallel_interleave(
            tf.data.TFRecordDataset, sloppy=True, cycle_length=min(8, len(total_data_files))
        )
    )
    d = d.shuffle(buffer_size=1)
    return _decoded_batches(tf, d, feature_specs, batch_size, 8)


def training_input_fn_builder(tf, sup_files, unsup_files, unsup_ratio):
    """proc_data_utils.training_input_fn_builder: the two datasets zipped, their feature
    dicts merged."""
    v1 = tf.compat.v1

    def input_fn(params):
        sup_batch_size = params["batch_size"]
        v1.logging.info("sup batch size: %d", (sup_batch_size))
        sup_dst = get_training_dataset(
            tf, sup_files, sup_batch_size, uda_feature_specs(tf, [""], True)
        )
        unsup_dst = get_training_dataset(
            tf, unsup_files, sup_batch_size * unsup_ratio, uda_feature_specs(tf, ["ori_", "aug_"])
        )
        v1.logging.info("unsup batch size: %d", (sup_batch_size * unsup_ratio))
        v1.logging.info("total sample in a batch: %d", (sup_batch_size * (1 + 2 * unsup_ratio)))

        def flatten_input(*features):
            return {key: value for feature in features for key, value in feature.items()}

        return tf.data.Dataset.zip((sup_dst, unsup_dst)).map(flatten_input).prefetch(1000)

    return input_fn


def evaluation_input_fn_builder(tf, files):
    def input_fn(params):
        d = tf.data.TFRecordDataset(files)
        d = _decoded_batches(tf, d, uda_feature_specs(tf, [""], True), params["batch_size"], None)
        return d.prefetch(1000)

    return input_fn


def construct_scalar_host_call(tf, metric_dict, model_dir, prefix="", reduce_fn=None):
    """utils/tpu_utils.construct_scalar_host_call after tf_upgrade_v2, its
    record_summaries_every_n_global_steps(1, step) replaced as the report says."""
    metric_names = list(metric_dict.keys())

    def host_call_fn(global_step, *args):
        step = global_step[0]
        with (
            tf.compat.v2.summary.create_file_writer(
                logdir=model_dir, filename_suffix=".host_call"
            ).as_default(),
            tf.compat.v2.summary.record_if(True),
        ):
            for i, name in enumerate(metric_names):
                scalar = args[i][0] if reduce_fn is None else reduce_fn(args[i])
                with tf.compat.v2.summary.record_if(tf.math.equal(step % 1, 0)):
                    tf.compat.v2.summary.scalar(name=prefix + name, data=scalar, step=step)
            return tf.compat.v1.summary.all_v2_summary_ops()

    global_step_tensor = tf.reshape(tf.compat.v1.train.get_or_create_global_step(), [1])
    other_tensors = [tf.reshape(metric_dict[key], [-1]) for key in metric_names]
    return host_call_fn, [global_step_tensor, *other_tensors]


def hidden_to_logits(tf, hidden, num_classes, scope):
    """uda.hidden_to_logits (its dropout left out, so values compare)."""
    v1 = tf.compat.v1
    with v1.variable_scope(scope, reuse=v1.AUTO_REUSE):
        output_weights = v1.get_variable(
            "output_weights",
            [num_classes, hidden.shape[-1]],
            initializer=v1.constant_initializer(_fixed([num_classes, HIDDEN], 88, 0.5)),
        )
        output_bias = v1.get_variable(
            "output_bias", [num_classes], initializer=v1.zeros_initializer()
        )
        return tf.nn.bias_add(tf.einsum("bd,nd->bn", hidden, output_weights), output_bias)


def uda_losses(tf, log_probs, labels, sup_batch_size, unsup_batch_size, global_step):
    """uda.create_model's losses: TSA-masked supervised cross entropy, the KL divergence
    between the originals' and the augmentations' predictions."""
    v1 = tf.compat.v1
    num_labels = UDA["num_labels"]
    with v1.variable_scope("sup_loss"):
        sup_log_probs = log_probs[:sup_batch_size]
        one_hot_labels = tf.one_hot(labels, depth=num_labels, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * sup_log_probs, axis=-1)
        correct_label_probs = tf.reduce_sum(one_hot_labels * tf.exp(sup_log_probs), axis=-1)
        progress = v1.to_float(global_step) / v1.to_float(UDA["num_train_steps"])
        tsa_threshold = progress * (1 - 1.0 / num_labels) + 1.0 / num_labels
        larger_than_threshold = tf.greater(correct_label_probs, tsa_threshold)
        loss_mask = tf.stop_gradient(1 - tf.cast(larger_than_threshold, tf.float32))
        per_example_loss = per_example_loss * loss_mask
        sup_loss = tf.reduce_sum(per_example_loss) / tf.maximum(tf.reduce_sum(loss_mask), 1)
    unsup_loss = 0.0
    if unsup_batch_size:
        with v1.variable_scope("unsup_loss"):
            ori = log_probs[sup_batch_size : sup_batch_size + unsup_batch_size]
            aug = log_probs[sup_batch_size + unsup_batch_size :]
            target = tf.stop_gradient(ori)
            p = tf.exp(target)
            kl = tf.reduce_sum(p * target, axis=-1) - tf.reduce_sum(p * aug, axis=-1)
            unsup_loss = tf.reduce_mean(kl)
    return sup_loss, unsup_loss, per_example_loss, loss_mask, tsa_threshold, correct_label_probs


def uda_train_op(tf, total_loss, global_step):
    """uda's optimization.create_optimizer: (train_op, the learning rate)."""
    v1 = tf.compat.v1
    learning_rate = v1.train.polynomial_decay(
        tf.constant(UDA["learning_rate"]), global_step, UDA["num_train_steps"], 0.0, power=1.0
    )
    warmup = v1.to_float(global_step) / UDA["num_warmup_steps"]
    is_warmup = v1.to_float(global_step < UDA["num_warmup_steps"])
    learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * UDA["learning_rate"] * warmup
    return clipped_train_op(tf, total_loss, learning_rate, global_step), learning_rate


def uda_init_from_checkpoint(tf, init_checkpoint):
    """uda.get_assignment_map_from_checkpoint (names to the variables themselves) and
    init_from_checkpoint, the trainable variables logged."""
    v1 = tf.compat.v1
    tvars = v1.trainable_variables()
    name_to_variable = {re.sub(r":\d+$", "", var.name): var for var in tvars}
    assignment_map, initialized = {}, {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name in name_to_variable:
            assignment_map[name] = name_to_variable[name]
            initialized[name + ":0"] = 1
    v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
    v1.logging.info("**** Trainable Variables ****")
    for var in tvars:
        init_string = ", *INIT_FROM_CKPT*" if var.name in initialized else ""
        v1.logging.info("  name = %s, shape = %s%s", var.name, var.shape, init_string)


def clas_metric_fn(tf):
    def metric_fn(per_example_loss, label_ids, logits):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "eval_classify_loss": tf.compat.v1.metrics.mean(per_example_loss),
            "eval_classify_accuracy": tf.compat.v1.metrics.accuracy(label_ids, predictions),
        }

    return metric_fn


def uda_model_fn_builder(tf, init_checkpoint):
    v1 = tf.compat.v1
    tpu = tf.compat.v1.estimator.tpu
    modes = tf.estimator.ModeKeys

    def model_fn(features, labels, mode, params):
        log_features(tf, features)
        is_training = mode == modes.TRAIN
        global_step = v1.train.get_or_create_global_step()
        label_ids = tf.reshape(features["label_ids"], [-1])
        names = ("input_ids", "input_mask", "input_type_ids")
        if "ori_input_ids" in features:
            inputs = [tf.concat([features[p + n] for p in ("", "ori_", "aug_")], 0) for n in names]
        else:
            inputs = [features[n] for n in names]
        num_sample = inputs[0].shape[0]  # (input_ids.shape[0].value before TF2)
        sup_batch_size = num_sample // 3 if is_training else num_sample
        _, pooled, _ = bert_model(tf, *inputs)
        logits = hidden_to_logits(tf, pooled, UDA["num_labels"], "classifier")
        (sup_loss, unsup_loss, per_example_loss, loss_mask, tsa_threshold, correct) = uda_losses(
            tf,
            tf.nn.log_softmax(logits, axis=-1),
            label_ids,
            sup_batch_size,
            num_sample - sup_batch_size and sup_batch_size,
            global_step,
        )
        logits = logits[:sup_batch_size]
        is_correct = v1.to_float(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), label_ids))
        metric_dict = {
            "sup/loss": sup_loss,
            "sup/accu": tf.reduce_mean(is_correct),
            "sup/correct_cat_probs": correct,
            "sup/tsa_threshold": tsa_threshold,
            "sup/sup_trained_ratio": tf.reduce_mean(loss_mask),
        }
        total_loss = sup_loss
        if is_training:
            total_loss += UDA["uda_coeff"] * unsup_loss
            metric_dict["unsup/loss"] = unsup_loss
        uda_init_from_checkpoint(tf, init_checkpoint)
        if mode == modes.TRAIN:
            train_op, metric_dict["learning_rate"] = uda_train_op(tf, total_loss, global_step)
            host_call = construct_scalar_host_call(
                tf, metric_dict, params["model_dir"], "training/", tf.reduce_mean
            )
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, host_call=host_call
            )
        if mode == modes.EVAL:
            eval_metrics = (clas_metric_fn(tf), [per_example_loss, label_ids, logits])
            return tpu.TPUEstimatorSpec(mode=mode, loss=total_loss, eval_metrics=eval_metrics)
        raise ValueError(f"Only TRAIN and EVAL modes are supported: {mode}")

    return model_fn


def uda_estimator(tf, model_dir, init_checkpoint):
    """main's RunConfig and TPUEstimator with use_tpu=False (no cluster resolver)."""
    tpu = tf.compat.v1.estimator.tpu
    save_checkpoints_steps = UDA["num_train_steps"] // UDA["save_checkpoints_num"]
    tf.compat.v1.logging.info(f"setting save checkpoints steps to {save_checkpoints_steps:d}")
    run_config = tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=model_dir,
        save_checkpoints_steps=save_checkpoints_steps,
        keep_checkpoint_max=1000,
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=min(save_checkpoints_steps, UDA["iterations_per_loop"]),
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=uda_model_fn_builder(tf, init_checkpoint),
        config=run_config,
        params={"model_dir": model_dir},
        train_batch_size=UDA["train_batch_size"],
        eval_batch_size=UDA["eval_batch_size"],
    )
    return estimator, save_checkpoints_steps


def _tensor_summaries(tf, model_dir):
    """{tag: {step: value}} of the tf2 (tensor) scalar summaries directly in model_dir."""
    found = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("tensor"):
                    number = float(tf.make_ndarray(value.tensor))
                    found.setdefault(value.tag, {})[str(event.step)] = number
    return found


def log_results(tf, dev_result):
    """main's '>> Results:' loop, each value turned into a Python number by .item()."""
    tf.compat.v1.logging.info(">> Results:")
    for key in list(dev_result):
        tf.compat.v1.logging.info("  %s = %s", key, str(dev_result[key]))
        dev_result[key] = dev_result[key].item()
    return dev_result


@program
def uda_text(tf, workdir):
    v1 = tf.compat.v1
    sup = [write_uda_records(tf, os.path.join(workdir, "sup.tfrecord"), 6, 5, False)]
    unsup = [write_uda_records(tf, os.path.join(workdir, "unsup.tfrecord"), 6, 6, True)]
    dev = [write_uda_records(tf, os.path.join(workdir, "dev.tfrecord"), 4, 7, False)]
    init_checkpoint = write_pretrained_checkpoint(tf, workdir, pretrained_values())
    model_dir = os.path.join(workdir, "model")
    train_input_fn = training_input_fn_builder(tf, sup, unsup, UDA["unsup_ratio"])
    eval_input_fn = evaluation_input_fn_builder(tf, dev)
    eval_steps = int(4 / UDA["eval_batch_size"])  # processor.get_dev_size() / batch size
    results, best_acc = [], 0
    with info_lines(GREPPED) as lines:
        estimator, save_checkpoints_steps = uda_estimator(tf, model_dir, init_checkpoint)
        for _ in range(0, UDA["num_train_steps"], save_checkpoints_steps):
            v1.logging.info("*** Running training ***")
            estimator.train(input_fn=train_input_fn, steps=save_checkpoints_steps)
            v1.logging.info("*** Running evaluation ***")
            dev_result = log_results(
                tf, estimator.evaluate(input_fn=eval_input_fn, steps=eval_steps)
            )
            best_acc = max(best_acc, dev_result["eval_classify_accuracy"])
            results.append(dev_result)
        v1.logging.info(f"Best acc: {best_acc:.3f}\n\n")
        # --do_eval alone: every kept checkpoint evaluated, by checkpoint_path.
        evaluator, _ = uda_estimator(tf, model_dir, init_checkpoint)
        for ckpt_path in tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths:
            v1.logging.info(f"Evaluating {os.path.basename(ckpt_path)}")
            results.append(
                log_results(
                    tf, evaluator.evaluate(eval_input_fn, eval_steps, checkpoint_path=ckpt_path)
                )
            )
        predicted = error_of(lambda: next(estimator.predict(eval_input_fn)))
    host_call = _tensor_summaries(tf, model_dir)
    return {
        "exact": {
            "lines": _as_logged(lines, workdir),
            "types": [{k: type(v).__name__ for k, v in sorted(r.items())} for r in results],
            "predict": predicted,
            "listing": listing(model_dir),
            "variables": _variables(tf, model_dir),
            "event_tags": event_tags(model_dir),
            "host_call_files": len(glob.glob(os.path.join(model_dir, "*.host_call"))),
            "host_call_steps": {k: sorted(v) for k, v in host_call.items()},
        },
        "close": _numbers({"results": dict(enumerate(results)), "host_call": host_call}),
    }
