"""Custom-Estimator idioms of TF1-era samples and StackOverflow-grade user code, after
`tf_upgrade_v2`, that the other families leave out.

- `uncommon_metrics`: eval_metric_ops of the rarer `tf.compat.v1.metrics`
  (mean_per_class_accuracy, the `_at_k` family, mean_iou, auc's careful interpolation and
  PR curve, the `_at_thresholds` vectors, mean_relative_error, percentage_below,
  mean_tensor), a user's own `(value, update)` over local variables, an int32 one:
  what `evaluate()` returns (types, dtypes, shapes, values), logs and writes;
- `summary_as_metric`: a serialized image summary returned as a metric (no update);
- `generator_inputs`: `Dataset.from_generator` (output_types / output_shapes, and
  output_signature), a dict of features with a string one, predictions passing it on;
- `numpy_epochs`: `numpy_input_fn(num_epochs=..., shuffle=False)` ending training before
  `steps`, with a string column and a short last batch;
- `summaries_everywhere`: scalar / histogram / image / text / audio summaries in a
  model_fn, `merge_all`, SummarySaverHooks of their own folders among the training and
  evaluation hooks, a user's event written through `FileWriterCache`;
- `logging_hooks`: `tf.compat.v1.train.LoggingTensorHook(formatter=, every_n_secs=,
  at_end=True)` in the spec's hooks, `StepCounterHook(every_n_steps=, output_dir=)`;
- `scaffold_summary_op`: a Scaffold's summary_op, a summary in a collection of its own,
  a TF2 `tf.summary.scalar` in a TF1 model_fn;
- `keras_metric_objects`: Keras metrics (vector Precision, PR AUC, MeanTensor, MeanIoU)
  in eval_metric_ops;
- `event_files_of_repeated_runs`: training and evaluating twice into the same folders,
  then a user's summary through `FileWriterCache.get(eval_dir)`: the event files;
- `canned_evaluate_in_a_loop`: a canned LinearClassifier evaluated six times in one
  process (a tutorial's epoch loop): the eval folder's event files;
- `eval_runs_what_it_fetches`: a TF2-style model_fn (Keras layer and optimizer) that
  builds its optimizer update in EVAL too, returned in TRAIN only: what evaluate() gives;
- `python_values_read_per_call`: a Keras-layer model_fn reading a Python value the program
  changes between train(), evaluate() and predict() calls;
- `model_dir_emptied_between_calls`: a canned and a custom Estimator trained, their
  model_dir deleted, then evaluated and trained again;
- `eval_step_counter`: a user's evaluation hook reading the `eval_step` counter through
  `GraphKeys.EVAL_STEP` in a TF1 model_fn's evaluation;
- `model_fn_of_another_estimator`: `Estimator(model_fn=other.model_fn)` over TF1 custom
  model_fns and a canned one; `canned_model_fn_in_a_user_model_fn`: a user's model_fn
  changing a canned model_fn's spec;
- `spec_fields_as_model_fn_sees_them`: a PREDICT spec's export_outputs as the spec holds
  them, `_replace` (the mode kept or changed, a TRAIN spec's loss taken away), a scaffold
  that is not one; `serving_receiver_checks`: what `ServingInputReceiver` refuses;
  `tensor_receiver_of_a_ragged_feature`: a ragged feature through a
  `TensorServingInputReceiver`, and the words of the receivers' refusals;
- `run_config_subclass`: a user's RunConfig subclass overriding fields with properties;
  `run_config_class_properties`: RunConfig's (and tpu.RunConfig's) fields as class-level
  properties, a subclass's property built on `super()`'s; `run_config_fields_read_only`:
  assigning a field (RunConfig's, tpu.RunConfig's, a subclass's) raises, as 2.15's
  property without a setter did, while `_<field>` and new attributes set;
  `run_config_strategy_lines`: the lines a RunConfig given a strategy logs when made
  (not replaced, nor copied), and its `Using config: ...` line's end;
  `run_config_tf_config_line`: the line a RunConfig made with TF_CONFIG set logs.
- `export_outputs_as_tf_made_them`: `tf.estimator.export`'s Classification-, Regression-
  and PredictOutput as 2.15's (TF's own classes): what they refuse, in which words, their
  read-only properties, a PredictOutput of one tensor, the SignatureDefs they make.
- `checkpoint_lacking_a_new_layer`: a model_fn whose Python flag adds a layer between
  calls: the error restoring a checkpoint that lacks it.
- `scaffold_local_init_op`: a Scaffold whose `local_init_op` groups the local variables'
  and tables' initializers as the model_fn saw them (a TF1 model_fn and a Keras-layer one,
  a vocabulary table, metrics made after it): what train, evaluate and predict give.
- `empty_inputs`: train(), evaluate() and predict() given an input that yields no batch,
  for a TF1 model_fn, a TF2-style one and three canned estimators.
- `partial_and_keyword_only_model_fns`: a hyper-parameter search's `functools.partial`
  model_fn and input_fn binding `params`, a keyword-only parameter, `params={}` given to
  a model_fn without one.
- `train_calls_into_one_events_file`: train(steps=1) calls in a loop (a canned
  LinearRegressor's, a Keras-layer model_fn's) and a new Estimator over the same folder:
  model_dir's events files.
- `call_after_a_failed_first_call`: a TF1 model_fn's first call failing on a misnamed
  feature, then the same Estimator trained, evaluated and predicted with it fixed.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (keys, types, dtypes, shapes, event tags and steps, log lines'
shapes: equal) and `close` values (zero-initialised models on unshuffled data: 1e-4).
`tests/test_model_fn_idioms.py` compares them with 2.15's recording
(`tests/tf215/record_family.py model_fn_idiom_programs`, into
`tests/data/tf215/model_fn_idioms.json`).
"""

import glob
import json
import os
import re
import shutil

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _messages
from tests.tutorial_programs import listing, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "model_fn_idioms.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def _shape(line):
    """A log line with its numbers as `N` (their digits vary with the version's rounding)."""
    return _NUMBER.sub("N", line)


def _seen(value):
    """[type, dtype, shape] of a value evaluate() or predict() returned."""
    array = np.asarray(value)
    # (numpy 1's `bool_` is numpy 2's `bool`.)
    return [type(value).__name__.rstrip("_"), array.dtype.name, list(array.shape)]


def _numbers(results):
    """The numeric values of a result dict as lists of floats (for `close`)."""
    return {
        k: np.asarray(v, dtype=np.float64).ravel().tolist()
        for k, v in sorted(results.items())
        if np.asarray(v).dtype.kind in "biuf"
    }


def _events(tf, folder):
    """{tag: [kind (a tensor's plugin and dtype), steps]} over the event files directly in
    `folder`; with the number of event files under `files`, the kinds of their records
    (a version, summaries, a graph, a meta graph) under `records`."""
    tags, paths = {}, sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*")))
    records = set()
    for path in paths:
        for event in tf.compat.v1.train.summary_iterator(path):
            records.add(event.WhichOneof("what"))
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "tensor":
                    dtype = tf.as_dtype(value.tensor.dtype).name
                    shape = [d.size for d in value.tensor.tensor_shape.dim]
                    kind = f"tensor {value.metadata.plugin_data.plugin_name} {dtype} {shape}"
                entry = tags.setdefault(value.tag, [kind, []])
                entry[1] = sorted({*entry[1], int(event.step)})
    return {"files": len(paths), "records": sorted(records), **dict(sorted(tags.items()))}


# ------------------------------------------------------------------------ data
def _classes(n, offset=0):
    """n rows of 4 features, 3 classes: class k pushes feature k up (no randomness)."""
    rows = np.arange(offset, offset + n)
    labels = (rows * 7 % 3).astype(np.int32)
    x = ((rows[:, None] * np.arange(1, 5)[None, :]) % 5 / 5.0).astype(np.float32)
    x[np.arange(n), labels] += 1.0
    return x, labels


def _dataset_input_fn(x, labels, batch_size, epochs=1):
    def input_fn():
        import tensorflow as tf

        data = tf.data.Dataset.from_tensor_slices(({"x": x}, labels))
        return data.repeat(epochs).batch(batch_size)

    return input_fn


def _linear_logits(tf, x, units=3):
    """A zero-initialised dense layer (compat.v1 variables: deterministic training)."""
    kernel = tf.compat.v1.get_variable(
        "kernel", [x.shape[-1], units], initializer=tf.compat.v1.zeros_initializer()
    )
    bias = tf.compat.v1.get_variable("bias", [units], initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(x, kernel) + bias


def _train_op(tf, loss, rate=0.5):
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(rate)
    return optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())


# --------------------------------------------------------------- uncommon metrics
def _count_metric(tf, values):
    """A user's streaming count: an int32 local variable and its assign_add."""
    count = tf.compat.v1.get_variable(
        "example_count",
        [],
        tf.int32,
        initializer=tf.compat.v1.zeros_initializer(),
        collections=[tf.compat.v1.GraphKeys.LOCAL_VARIABLES],
        trainable=False,
    )
    return count, tf.compat.v1.assign_add(count, tf.size(values))


def _ratio_metric(tf, hits, total):
    """A user's streaming ratio over two float local variables, its value a tensor of its
    own (StackOverflow's 'custom streaming metric')."""
    with tf.compat.v1.variable_scope("hit_ratio"):
        local = {
            "shape": [],
            "initializer": tf.compat.v1.zeros_initializer(),
            "collections": [tf.compat.v1.GraphKeys.LOCAL_VARIABLES],
            "trainable": False,
        }
        seen_hits = tf.compat.v1.get_variable("hits", **local)
        seen_total = tf.compat.v1.get_variable("total", **local)
    update = tf.group(
        tf.compat.v1.assign_add(seen_hits, tf.reduce_sum(hits)),
        tf.compat.v1.assign_add(seen_total, tf.cast(total, tf.float32)),
    )
    return tf.compat.v1.div_no_nan(seen_hits, seen_total), update


def _uncommon_metric_ops(tf, labels, logits):
    metrics = tf.compat.v1.metrics
    probabilities = tf.nn.softmax(logits)
    predicted = tf.argmax(logits, axis=1, output_type=tf.int32)
    sparse = tf.cast(tf.reshape(labels, [-1, 1]), tf.int64)
    first = tf.cast(tf.equal(labels, 0), tf.float32)  # class 0 against the rest
    p_first = probabilities[:, 0]
    thresholds = [0.2, 0.35, 0.5]
    return {
        "mean_per_class_accuracy": metrics.mean_per_class_accuracy(labels, predicted, 3),
        "precision_at_2": metrics.precision_at_k(sparse, logits, k=2),
        "recall_at_2": metrics.recall_at_k(sparse, logits, k=2),
        "sparse_ap_at_2": metrics.sparse_average_precision_at_k(sparse, logits, k=2),
        "ap_at_1": metrics.average_precision_at_k(sparse, logits, k=1),
        "mean_iou": metrics.mean_iou(labels, predicted, num_classes=3),
        "auc_careful": metrics.auc(first, p_first, summation_method="careful_interpolation"),
        "auc_pr": metrics.auc(first, p_first, curve="PR", num_thresholds=50),
        "precision_at_thresholds": metrics.precision_at_thresholds(first, p_first, thresholds),
        "recall_at_thresholds": metrics.recall_at_thresholds(first, p_first, thresholds),
        "fn_at_thresholds": metrics.false_negatives_at_thresholds(first, p_first, thresholds),
        "mean_relative_error": metrics.mean_relative_error(
            first, p_first, normalizer=tf.ones_like(first) * 2.0
        ),
        "percentage_below": metrics.percentage_below(p_first, threshold=0.35),
        "rmse": metrics.root_mean_squared_error(first, p_first),
        "mean_probabilities": metrics.mean_tensor(tf.reduce_mean(probabilities, axis=0)),
        "example_count": _count_metric(tf, labels),
        "hit_ratio": _ratio_metric(
            tf, tf.cast(tf.equal(predicted, labels), tf.float32), tf.size(labels)
        ),
    }


def uncommon_metrics_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops=_uncommon_metric_ops(tf, labels, logits)
    )


@program
def uncommon_metrics(tf, workdir):
    """Train 4 steps, evaluate twice (the metrics' local variables start again at zero)."""
    x, labels = _classes(24)
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(uncommon_metrics_model_fn, model_dir=model_dir)
    est.train(_dataset_input_fn(x, labels, 6), steps=4)
    eval_x, eval_labels = _classes(12, offset=30)
    with _info_lines() as lines:
        first = est.evaluate(_dataset_input_fn(eval_x, eval_labels, 4))
    again = est.evaluate(_dataset_input_fn(eval_x, eval_labels, 4), steps=2, name="two")
    saved = _messages(lines, "Saving dict for global step")
    return {
        "exact": {
            "results": {k: _seen(v) for k, v in sorted(first.items())},
            "results_two": {k: _seen(v) for k, v in sorted(again.items())},
            "saving_dict": [_shape(line) for line in saved],
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
            "eval_two_events": _events(tf, os.path.join(model_dir, "eval_two")),
            "files": listing(model_dir),
        },
        "close": {
            **_numbers(first),
            **{f"two/{k}": v for k, v in _numbers(again).items()},
        },
    }


# -------------------------------------------------------------- summary as a metric
def summary_metric_model_fn(features, labels, mode, params):
    """A sample's trick: an image summary's serialized proto (of the trained kernel) as an
    eval metric with no update op, beside a bool and a float64 metric; with
    `params["of_input"]`, a metric of the input with no update op."""
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    kernel, bias = tf.compat.v1.trainable_variables()
    if params.get("of_input"):
        metrics = {"max_logit": (tf.reduce_max(logits), tf.no_op())}
    else:
        picture = tf.reshape(kernel, [1, 4, 3, 1])
        mean64, update64 = tf.compat.v1.metrics.mean(tf.cast(logits, tf.float64))
        metrics = {
            "picture": (tf.compat.v1.summary.image("kernel", picture), tf.no_op()),
            "mean_logit64": (mean64, update64),
            "any_positive_bias": (tf.reduce_any(bias > 0), tf.no_op()),
        }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


@program
def summary_as_metric(tf, workdir):
    x, labels = _classes(12)
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(summary_metric_model_fn, model_dir=model_dir, params={})
    est.train(_dataset_input_fn(x, labels, 6), steps=2)
    with _info_lines() as lines:
        results = est.evaluate(_dataset_input_fn(x, labels, 6))
    of_input = tf.estimator.Estimator(
        summary_metric_model_fn, model_dir=model_dir, params={"of_input": True}
    )
    return {
        "exact": {
            "results": {k: _seen(v) for k, v in sorted(results.items())},
            "saving_dict": [_shape(line) for line in _messages(lines, "Saving dict for")],
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
            "picture_is_a_summary": _parsed_summary(tf, results.get("picture")),
            "input_read_after_its_end": _end_of_input(
                lambda: of_input.evaluate(_dataset_input_fn(x, labels, 6), name="of_input")
            ),
        },
        "close": _numbers(results),
    }


def _end_of_input(call):
    """The error's type, and whether it says the input ended (2.15's message also carries
    the graph's stack, TF 2.21's not)."""
    try:
        call()
    except Exception as error:  # (the error is the record)
        return [type(error).__name__, "End of sequence" in str(error)]
    return None


def _parsed_summary(tf, value):
    if not isinstance(value, bytes):
        return None
    summary = tf.compat.v1.Summary.FromString(value)
    return [[v.tag, v.WhichOneof("value")] for v in summary.value]


# --------------------------------------------------------------- generator inputs
WORDS = [b"red", b"green", b"blue", b"red", b"blue", b"yellow"]


def _examples(n):
    x, labels = _classes(n)
    for i in range(n):
        yield {"x": x[i, :2], "word": WORDS[i % len(WORDS)]}, labels[i]


def word_model_fn(features, labels, mode):
    """Two numbers and a hashed word (zero-initialised embedding) into 3 logits; the word
    passed on in the predictions."""
    import tensorflow as tf

    buckets = tf.strings.to_hash_bucket_fast(features["word"], 5)
    embeddings = tf.compat.v1.get_variable(
        "word_embeddings", [5, 3], initializer=tf.compat.v1.zeros_initializer()
    )
    logits = _linear_logits(tf, features["x"]) + tf.nn.embedding_lookup(embeddings, buckets)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {
            "word": features["word"],
            "class_ids": tf.argmax(logits, axis=1),
            "probabilities": tf.nn.softmax(logits),
        }
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})


@program
def generator_inputs(tf, workdir):
    """Training on a finite generator (output_types/output_shapes) ends it before
    `steps`; evaluation reads one of output_signature; prediction one of features only."""

    def train_input_fn():
        data = tf.data.Dataset.from_generator(
            lambda: _examples(12),
            output_types=({"x": tf.float32, "word": tf.string}, tf.int32),
            output_shapes=({"x": [2], "word": []}, []),
        )
        return data.repeat(2).batch(4)

    def eval_input_fn():
        signature = (
            {"x": tf.TensorSpec([2], tf.float32), "word": tf.TensorSpec([], tf.string)},
            tf.TensorSpec([], tf.int32),
        )
        return tf.data.Dataset.from_generator(lambda: _examples(10), output_signature=signature)

    def predict_input_fn():
        data = tf.data.Dataset.from_generator(
            lambda: (features for features, _ in _examples(5)),
            output_types={"x": tf.float32, "word": tf.string},
            output_shapes={"x": [2], "word": []},
        )
        return data.batch(2)

    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(word_model_fn, model_dir=model_dir)
    with _info_lines() as lines:
        est.train(train_input_fn, steps=100)
    results = est.evaluate(lambda: eval_input_fn().batch(3))
    rows = list(est.predict(predict_input_fn))
    batches = list(est.predict(predict_input_fn, yield_single_examples=False))
    return {
        "exact": {
            "global_step": int(est.get_variable_value("global_step")),
            "loss_lines": [_shape(line) for line in _messages(lines, "loss = ")],
            "results": {k: _seen(v) for k, v in sorted(results.items())},
            "predictions": structure(rows),
            "words": [row["word"].decode() for row in rows],
            "batches": [structure([batch]) for batch in batches],
            "batch_words": [_seen(batch["word"]) for batch in batches],
            "variables": est.get_variable_names(),
        },
        "close": {
            **_numbers(results),
            "probabilities": [row["probabilities"].tolist() for row in rows],
            "embeddings": est.get_variable_value("word_embeddings").tolist(),
        },
    }


# ------------------------------------------------------------------ numpy epochs
@program
def numpy_epochs(tf, workdir):
    """numpy_input_fn(num_epochs=2, shuffle=False) of 10 rows in batches of 4: training
    stops after 5 steps of `steps=50`; evaluation of one epoch takes 3 batches, of
    `steps=10` too."""
    x, labels = _classes(10)
    words = np.array([WORDS[i % len(WORDS)] for i in range(10)])
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(word_model_fn, model_dir=model_dir)

    def inputs(num_epochs, y=labels, **features):
        return tf.compat.v1.estimator.inputs.numpy_input_fn(
            x={"x": x[:, :2], "word": words, **features},
            y=y,
            batch_size=4,
            num_epochs=num_epochs,
            shuffle=False,
        )

    with _info_lines() as lines:
        est.train(inputs(2), steps=50)
        results = est.evaluate(inputs(1))
        est.evaluate(inputs(1), steps=10, name="steps")  # (its input ends after 3)
    rows = list(est.predict(inputs(1, y=None)))
    unicode_words = np.array([w.decode() for w in words])
    return {
        "exact": {
            "global_step": int(est.get_variable_value("global_step")),
            "loss_lines": [_shape(line) for line in _messages(lines, "loss = ")],
            "eval_lines": _messages(lines, "Evaluation ["),
            "results": {k: _seen(v) for k, v in sorted(results.items())},
            "predictions": structure(rows),
            "count": len(rows),
            "unicode_words": _raised(lambda: est.train(inputs(1, word=unicode_words))),
            "step_after_unicode": int(est.get_variable_value("global_step")),
        },
        "close": {
            **_numbers(results),
            "probabilities": [row["probabilities"].tolist() for row in rows],
        },
    }


# -------------------------------------------------------------- summaries everywhere
# (Summary savers and step counters here save every step or every 2: a hook reads the
# global step in the train op's own run, unordered with its increment, under 2.15 as
# here, so at every 3 or more a step's summary lands one step sooner now and then.)
def summaries_model_fn(features, labels, mode, params):
    """Every compat.v1 summary kind, merged into SummarySaverHooks of their own folders."""
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    probabilities = tf.nn.softmax(logits)
    tf.compat.v1.summary.scalar("mean_probability", tf.reduce_mean(probabilities))
    tf.compat.v1.summary.histogram("logits", logits)
    tf.compat.v1.summary.image("probabilities", tf.reshape(probabilities, [1, -1, 3, 1]))
    tf.compat.v1.summary.text("mode", tf.constant(mode))
    wave = tf.reshape(tf.tanh(features["x"]), [1, -1, 1])
    tf.compat.v1.summary.audio("features_as_sound", wave, sample_rate=8000, max_outputs=1)
    merged = tf.compat.v1.summary.merge_all()
    if mode == tf.estimator.ModeKeys.TRAIN:
        hook = tf.compat.v1.train.SummarySaverHook(
            save_steps=1, output_dir=params["train_hook_dir"], summary_op=merged
        )
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=_train_op(tf, loss), training_hooks=[hook]
        )
    hook = tf.compat.v1.train.SummarySaverHook(
        save_steps=1, output_dir=params["eval_hook_dir"], summary_op=merged
    )
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={"accuracy": accuracy}, evaluation_hooks=[hook]
    )


@program
def summaries_everywhere(tf, workdir):
    """Train 5 steps (summaries every 2, the train hook's every step), evaluate 2 batches,
    then write a user's scalar through FileWriterCache into the model's folder."""
    x, labels = _classes(20)
    model_dir = os.path.join(workdir, "model")
    params = {
        "train_hook_dir": os.path.join(model_dir, "train_hook"),
        "eval_hook_dir": os.path.join(model_dir, "eval_hook"),
    }
    est = tf.estimator.Estimator(
        summaries_model_fn,
        model_dir=model_dir,
        params=params,
        config=tf.estimator.RunConfig(save_summary_steps=2),
    )
    est.train(_dataset_input_fn(x, labels, 4), steps=5)
    results = est.evaluate(_dataset_input_fn(x, labels, 4), steps=2)
    writer = tf.compat.v1.summary.FileWriterCache.get(model_dir)
    extra = tf.compat.v1.Summary(
        value=[tf.compat.v1.Summary.Value(tag="user/extra", simple_value=1.5)]
    )
    writer.add_summary(extra, global_step=int(results["global_step"]))
    writer.flush()
    same_writer = tf.compat.v1.summary.FileWriterCache.get(model_dir) is writer
    writer_dir = writer.get_logdir() == model_dir
    tf.compat.v1.summary.FileWriterCache.clear()
    return {
        "exact": {
            "train": _events(tf, model_dir),
            "eval": _events(tf, os.path.join(model_dir, "eval")),
            "train_hook": _events(tf, params["train_hook_dir"]),
            "eval_hook": _events(tf, params["eval_hook_dir"]),
            "cached_writer": [same_writer, writer_dir],
            "files": listing(model_dir),
        },
        "close": _numbers(results),
    }


# ------------------------------------------------------------------ logging hooks
def logged_model_fn(features, labels, mode, params):
    """LoggingTensorHooks of tensors (not names) with formatters in the spec's training
    and evaluation hooks (at their end, of what needs no more input)."""
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    tf.nn.softmax(logits, name="softmax_out")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.compat.v1.train.get_global_step()

    def formatter(values):
        shown = ", ".join(
            f"{k}={np.asarray(values[k]).dtype.name}{list(np.shape(values[k]))}:"
            f"{np.round(np.asarray(values[k], dtype=np.float64), 4).ravel().tolist()}"
            for k in sorted(values)
        )
        return f"seen[{mode}] {shown}"

    if mode == tf.estimator.ModeKeys.TRAIN:
        hook = tf.compat.v1.train.LoggingTensorHook(
            {"loss": loss, "probabilities": "softmax_out:0"},
            every_n_secs=3600,
            at_end=True,
            formatter=formatter,
        )
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=_train_op(tf, loss), training_hooks=[hook]
        )
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    hook = tf.compat.v1.train.LoggingTensorHook(
        {"running_accuracy": accuracy[0], "step": step}, at_end=True, formatter=formatter
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={"accuracy": accuracy}, evaluation_hooks=[hook]
    )


@program
def logging_hooks(tf, workdir):
    """Train 6 steps with a StepCounterHook(every_n_steps=1, output_dir=...) beside the
    spec's hook, log_step_count_steps=1; evaluate 3 batches."""
    x, labels = _classes(24)
    model_dir = os.path.join(workdir, "model")
    counter_dir = os.path.join(workdir, "step_counter")
    est = tf.estimator.Estimator(
        logged_model_fn,
        model_dir=model_dir,
        params={},
        config=tf.estimator.RunConfig(log_step_count_steps=1, save_summary_steps=100),
    )
    counter = tf.compat.v1.train.StepCounterHook(every_n_steps=1, output_dir=counter_dir)
    with _info_lines() as lines:
        est.train(_dataset_input_fn(x, labels, 4, epochs=2), steps=6, hooks=[counter])
        est.evaluate(_dataset_input_fn(x, labels, 8))
    seen = _messages(lines, "seen[")
    return {
        "exact": {
            "seen": [re.sub(r":\[[^\]]*\]", "", line) for line in seen],
            # (Two hooks' lines of one step, equal now and then, would pass as one.)
            "rates": sorted({_shape(line) for line in _messages(lines, "global_step/sec")}),
            "loss_lines": [_shape(line) for line in _messages(lines, "loss = ")],
            "counter_events": _events(tf, counter_dir),
            "train_events": _events(tf, model_dir),
        },
        "close": {
            f"{i}/{key}": [float(n) for n in numbers.split(", ") if n]
            for i, line in enumerate(seen)
            for key, numbers in re.findall(r"(\w+)=\w+\[[\d, ]*\]:\[([^\]]*)\]", line)
        },
    }


# ------------------------------------------------------------ a scaffold's summary_op
def scaffold_summary_model_fn(features, labels, mode):
    """Summaries the Estimator's own saver leaves or takes: a scaffold whose summary_op
    merges one of them, one in a collection of its own, a TF2 `tf.summary.scalar` (no
    default writer in the graph)."""
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    kept = tf.compat.v1.summary.scalar("kept_max_logit", tf.reduce_max(logits))
    tf.compat.v1.summary.scalar("left_min_logit", tf.reduce_min(logits))
    tf.compat.v1.summary.histogram("elsewhere", logits, collections=["my_summaries"])
    step = tf.compat.v1.train.get_global_step()
    tf.summary.scalar("v2_mean_logit", tf.reduce_mean(logits), step=step)
    scaffold = tf.compat.v1.train.Scaffold(summary_op=tf.compat.v1.summary.merge([kept]))
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), scaffold=scaffold
    )


@program
def scaffold_summary_op(tf, workdir):
    x, labels = _classes(12)
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(
        scaffold_summary_model_fn,
        model_dir=model_dir,
        config=tf.estimator.RunConfig(save_summary_steps=2),
    )
    est.train(_dataset_input_fn(x, labels, 4, epochs=2), steps=5)
    return {"exact": {"train": _events(tf, model_dir)}, "close": {}}


# ------------------------------------------------------------- Keras metric objects
def keras_metrics_model_fn(features, labels, mode):
    """Keras metric objects updated in a TF1 model_fn, some of non-scalar results."""
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss))
    probabilities = tf.nn.softmax(logits)
    first = tf.cast(tf.equal(labels, 0), tf.float32)
    metrics = {
        "precision_at": tf.keras.metrics.Precision(thresholds=[0.3, 0.5]),
        "auc_pr": tf.keras.metrics.AUC(curve="PR", num_thresholds=50),
        "mean_probabilities": tf.keras.metrics.MeanTensor(),
        "top_2": tf.keras.metrics.SparseTopKCategoricalAccuracy(k=2),
        "mean_iou": tf.keras.metrics.MeanIoU(num_classes=3),
    }
    metrics["precision_at"].update_state(first, probabilities[:, 0])
    metrics["auc_pr"].update_state(first, probabilities[:, 0])
    metrics["mean_probabilities"].update_state(tf.reduce_mean(probabilities, axis=0))
    metrics["top_2"].update_state(labels, logits)
    metrics["mean_iou"].update_state(labels, tf.argmax(logits, axis=1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


@program
def keras_metric_objects(tf, workdir):
    x, labels = _classes(12)
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(keras_metrics_model_fn, model_dir=model_dir)
    est.train(_dataset_input_fn(x, labels, 4), steps=3)
    with _info_lines() as lines:
        results = est.evaluate(_dataset_input_fn(x, labels, 4))
    return {
        "exact": {
            "results": {k: _seen(v) for k, v in sorted(results.items())},
            "saving_dict": [_shape(line) for line in _messages(lines, "Saving dict for")],
            "eval_events": _events(tf, os.path.join(model_dir, "eval")),
            "variables": est.get_variable_names(),
        },
        "close": _numbers(results),
    }


# ---------------------------------------------------------------- repeated runs' events
def accuracy_model_fn(features, labels, mode):
    import tensorflow as tf

    logits = _linear_logits(tf, features["x"])
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss), eval_metric_ops={"accuracy": accuracy}
    )


@program
def event_files_of_repeated_runs(tf, workdir):
    """Train twice and evaluate twice into the same folders, then write a user's image of
    the kernel through FileWriterCache into the eval folder (a StackOverflow answer's
    way to add a summary beside the metrics): the event files, and what a reader of the
    first one only sees."""
    x, labels = _classes(12)
    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(
        accuracy_model_fn,
        model_dir=model_dir,
        config=tf.estimator.RunConfig(save_summary_steps=1),
    )
    for _ in range(2):
        est.train(_dataset_input_fn(x, labels, 6), steps=2)
        results = est.evaluate(_dataset_input_fn(x, labels, 6), steps=1)
    kernel = est.get_variable_value("kernel").reshape(1, 4, 3, 1)
    image = tf.compat.v1.Summary.Image(height=4, width=3, colorspace=1, encoded_image_string=b"")
    extra = tf.compat.v1.Summary(
        value=[tf.compat.v1.Summary.Value(tag="kernel_image", image=image)]
    )
    writer = tf.compat.v1.summary.FileWriterCache.get(est.eval_dir())
    writer.add_summary(extra, int(results["global_step"]))
    writer.flush()
    tf.compat.v1.summary.FileWriterCache.clear()
    eval_dir = est.eval_dir()
    first_file = sorted(glob.glob(os.path.join(eval_dir, "events.out.tfevents.*")))[0]
    first_steps = sorted(
        {int(e.step) for e in tf.compat.v1.train.summary_iterator(first_file) if e.summary.value}
    )
    return {
        "exact": {
            "train": _events(tf, model_dir),
            "eval": _events(tf, eval_dir),
            "first_eval_file_steps": first_steps,
        },
        "close": {"kernel": kernel.ravel().tolist()},
    }


@program
def canned_evaluate_in_a_loop(tf, workdir):
    """A tutorial's epoch loop on a canned LinearClassifier (train, then evaluate, three
    times) and three more evaluations of the last checkpoint: the eval folder's event
    files (2.15: one, the first evaluation's graph in it) and each one's steps."""
    x, labels = _classes(12)
    labels = (labels > 0).astype(np.int32)
    column = tf.feature_column.numeric_column("x", shape=[4])
    est = tf.estimator.LinearClassifier([column], model_dir=os.path.join(workdir, "model"))
    for _ in range(3):
        est.train(_dataset_input_fn(x, labels, 6), steps=2)
        results = est.evaluate(_dataset_input_fn(x, labels, 6), steps=1)
    for _ in range(3):
        est.evaluate(_dataset_input_fn(x, labels, 6), steps=1)
    paths = sorted(glob.glob(os.path.join(est.eval_dir(), "events.out.tfevents.*")))
    steps_by_file = [
        [int(e.step) for e in tf.compat.v1.train.summary_iterator(path) if e.summary.value]
        for path in paths
    ]
    return {
        "exact": {"eval": _events(tf, est.eval_dir()), "steps_by_file": steps_by_file},
        "close": _numbers(results),
    }


# ------------------------------------------------------------- what EVAL runs
def _regression_data():
    x = (np.arange(8, dtype=np.float32) / 8).reshape(8, 1)
    return x, (2 * x[:, 0] + 1).astype(np.float32)


def keras_update_in_every_mode_model_fn(features, labels, mode):
    """TF2-style code (a Keras layer, a Keras optimizer's apply_gradients): the update is
    built in every mode, returned as the train_op in TRAIN only."""
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    prediction = layer(features["x"])[:, 0]
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=prediction)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    variables = layer.trainable_variables
    optimizer = tf.keras.optimizers.legacy.SGD(0.1)
    update = optimizer.apply_gradients(zip(tf.gradients(loss, variables), variables, strict=True))
    train_op = tf.group(update, tf.compat.v1.train.get_global_step().assign_add(1))
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return tf.estimator.EstimatorSpec(mode, loss=loss)


@program
def eval_runs_what_it_fetches(tf, workdir):
    """An optimizer update a model_fn builds in EVAL without returning it: 2.15's session
    fetched the loss and the metrics alone, so it never ran (the same loss on every
    batch's model, the global step unchanged)."""
    x, y = _regression_data()
    est = tf.estimator.Estimator(keras_update_in_every_mode_model_fn, os.path.join(workdir, "m"))
    est.train(_dataset_input_fn(x, y, 4), steps=2)
    evaluations = [est.evaluate(_dataset_input_fn(x, y, 4), steps=2) for _ in range(2)]
    return {
        "exact": {"global_steps": [int(r["global_step"]) for r in evaluations]},
        "close": {"losses": [float(r["loss"]) for r in evaluations]},
    }


def _features_input_fn(tf, x):
    return lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)


@program
def model_fn_calls_per_call(tf, workdir):
    """How often each train(), evaluate() and predict() calls a Keras-layer model_fn (code
    that counts, logs or builds once per call sees it): 2.15 built one graph a call."""
    calls = []

    def counting_model_fn(features, labels, mode):
        calls.append(mode)
        return keras_update_in_every_mode_model_fn(features, labels, mode)

    x, y = _regression_data()
    est = tf.estimator.Estimator(counting_model_fn, os.path.join(workdir, "m"))
    seen = {}
    for call, run in (
        ("train", lambda: est.train(_dataset_input_fn(x, y, 4), steps=2)),
        ("train_again", lambda: est.train(_dataset_input_fn(x, y, 4), steps=2)),
        ("evaluate", lambda: est.evaluate(_dataset_input_fn(x, y, 4), steps=2)),
        ("predict", lambda: list(est.predict(_features_input_fn(tf, x)))),
    ):
        del calls[:]
        run()
        seen[call] = list(calls)
    return {"exact": seen}


@program
def python_values_read_per_call(tf, workdir):
    """A Keras-layer model_fn scaling its output by a Python value the program changes
    between calls (a global: a schedule, a switch, a flag), as loops of train() and
    evaluate() calls do: 2.15 built each call's graph anew, so each call used the value of
    its time (its scale 0: no training, predictions 0)."""
    scale = {"value": 1.0}

    def scaled_model_fn(features, labels, mode):
        layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
        prediction = layer(features["x"])[:, 0] * scale["value"]
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=prediction)
        loss = tf.reduce_mean(tf.square(prediction - labels))
        variables = layer.trainable_variables
        update = tf.keras.optimizers.legacy.SGD(0.1).apply_gradients(
            zip(tf.gradients(loss, variables), variables, strict=True)
        )
        step = tf.compat.v1.train.get_global_step().assign_add(1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(update, step))

    x, y = _regression_data()
    est = tf.estimator.Estimator(scaled_model_fn, os.path.join(workdir, "m"))
    seen = {"kernels": [], "losses": [], "predictions": []}
    steps = []
    for value in (1.0, 0.0, 2.0):
        scale["value"] = value
        est.train(_dataset_input_fn(x, y, 4), steps=2)
        steps.append(int(est.get_variable_value("global_step")))
        seen["kernels"].append(float(est.get_variable_value("dense/kernel")[0, 0]))
        seen["losses"].append(float(est.evaluate(_dataset_input_fn(x, y, 4), steps=2)["loss"]))
        seen["predictions"].append([float(p) for p in est.predict(_features_input_fn(tf, x))])
    return {"exact": {"global_steps": steps}, "close": seen}


@program
def model_dir_emptied_between_calls(tf, workdir):
    """One Estimator trained, its model_dir deleted (a notebook's `shutil.rmtree(OUTDIR,
    ignore_errors=True)` cell run again), then evaluated and trained again: 2.15 started
    from the initial values and step 0, for a canned and a Keras-layer model_fn alike."""
    x, y = _regression_data()
    estimators = {
        "canned": tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")],
            model_dir=os.path.join(workdir, "canned"),
            optimizer="SGD",
        ),
        "custom": tf.estimator.Estimator(
            keras_update_in_every_mode_model_fn, os.path.join(workdir, "custom")
        ),
    }
    steps, losses = {}, {}
    for kind, est in estimators.items():
        seen = []
        est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=3)
        seen.append(est.evaluate(_dataset_input_fn(x, y, 4), steps=1))
        shutil.rmtree(est.model_dir)
        seen.append(est.evaluate(_dataset_input_fn(x, y, 4), steps=1))
        est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=3)
        seen.append(est.evaluate(_dataset_input_fn(x, y, 4), steps=1))
        steps[kind] = [int(r["global_step"]) for r in seen]
        losses[kind] = [float(r["loss"]) for r in seen]
    return {"exact": {"global_steps": steps}, "close": losses}


class _EvalStepHook:
    """A user's evaluation hook reading tf.estimator's `eval_step` counter (through its
    collection), as progress or stop-after-N hooks of TF1 code did."""

    def __new__(cls, tf):
        class Hook(tf.compat.v1.train.SessionRunHook):
            def begin(self):
                found = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.EVAL_STEP)
                self.seen = {
                    "collection": [[v.name, v.dtype.name, v.shape.as_list()] for v in found],
                    "local_variables": [v.name for v in tf.compat.v1.local_variables()],
                    "after_run": [],
                }
                self.counter = found[0] if found else None

            def after_run(self, run_context, run_values):
                if self.counter is not None:
                    value = run_context.session.run(self.counter)
                    self.seen["after_run"].append(int(value))

            def end(self, session):
                if self.counter is not None:
                    self.seen["end"] = int(session.run(self.counter))

        return Hook()


def tf1_regression_model_fn(features, labels, mode):
    import tensorflow as tf

    weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], weight)[:, 0]
    loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    mae = tf.compat.v1.metrics.mean_absolute_error(labels, prediction)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_train_op(tf, loss, 0.1), eval_metric_ops={"mae": mae}
    )


@program
def eval_step_counter(tf, workdir):
    """A TF1 model_fn evaluated with a user's hook reading the `eval_step` local variable
    2.15 made (int64, in GraphKeys.EVAL_STEP), counted up once a batch."""
    x, y = _regression_data()
    est = tf.estimator.Estimator(tf1_regression_model_fn, os.path.join(workdir, "m"))
    est.train(_dataset_input_fn(x, y, 2), steps=2)
    hook = _EvalStepHook(tf)
    results = est.evaluate(_dataset_input_fn(x, y, 2), steps=3, hooks=[hook])
    return {"exact": hook.seen, "close": _numbers(results)}


def tf1_dense_model_fn(features, labels, mode):
    """tf.compat.v1.layers and a TF1 optimizer's minimize, as the bench's TF1 case."""
    import tensorflow as tf

    dense = tf.compat.v1.layers.dense(
        features["x"], 1, kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    prediction = dense[:, 0]
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
    loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss, 0.1))


@program
def model_fn_of_another_estimator(tf, workdir):
    """`tf.estimator.Estimator(model_fn=other.model_fn, ...)`, as code that rebuilds an
    estimator on a new model_dir or config does: the bound model_fn of two TF1 custom
    Estimators (`get_variable`; `compat.v1.layers` and `minimize`) and of a canned
    LinearRegressor, each trained, evaluated and (but the first) predicted through the new
    Estimator."""
    x, y = _regression_data()
    seen, numbers = {}, {}
    originals = {
        "get_variable": lambda d: tf.estimator.Estimator(tf1_regression_model_fn, d),
        "layers": lambda d: tf.estimator.Estimator(tf1_dense_model_fn, d),
        "canned": lambda d: tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], d
        ),
    }
    for name, make in originals.items():
        original = make(os.path.join(workdir, name))
        again = tf.estimator.Estimator(original.model_fn, os.path.join(workdir, name + "_again"))
        again.train(_dataset_input_fn(x, y, 2), steps=3)
        results = again.evaluate(_dataset_input_fn(x, y, 4), steps=2)
        seen[name] = {"variables": sorted(again.get_variable_names()), "evaluate": sorted(results)}
        numbers[name] = _numbers(results)
        if name != "get_variable":  # (that model_fn predicts nothing)
            predictions = list(again.predict(_features_input_fn(tf, x)))
            seen[name]["prediction_keys"] = sorted(predictions[0])
            numbers[name + "_predictions"] = [
                float(np.ravel(p[sorted(p)[-1]])[0]) for p in predictions
            ]
    return {"exact": seen, "close": numbers}


@program
def canned_model_fn_in_a_user_model_fn(tf, workdir):
    """A user's model_fn calling a canned LinearRegressor's bound `model_fn` and changing its
    spec (an extra metric, a logging hook), as code that extended canned estimators
    before add_metrics did."""
    x, y = _regression_data()
    canned = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")], os.path.join(workdir, "canned")
    )

    def model_fn(features, labels, mode, config):
        spec = canned.model_fn(features, labels, mode, config)
        if mode == tf.estimator.ModeKeys.EVAL:
            mae = tf.compat.v1.metrics.mean_absolute_error(labels, spec.predictions["predictions"])
            return spec._replace(eval_metric_ops=dict(spec.eval_metric_ops, mae=mae))
        if mode == tf.estimator.ModeKeys.TRAIN:
            hook = tf.compat.v1.train.LoggingTensorHook({"loss": spec.loss}, every_n_iter=1)
            return spec._replace(training_hooks=[*spec.training_hooks, hook])
        return spec

    est = tf.estimator.Estimator(model_fn, os.path.join(workdir, "m"))
    est.train(_dataset_input_fn(x, y, 2), steps=3)
    results = est.evaluate(_dataset_input_fn(x, y, 4), steps=2)
    predictions = list(est.predict(_features_input_fn(tf, x)))
    return {
        "exact": {
            "variables": sorted(est.get_variable_names()),
            "evaluate": sorted(results),
            "prediction_keys": sorted(predictions[0]),
        },
        "close": dict(
            _numbers(results), predictions=[float(p["predictions"][0]) for p in predictions]
        ),
    }


def _error_type(call):
    """The name of the error `call()` raised (its words are the kit's own), or None."""
    return (_raised(call) or [None])[0]


@program
def spec_fields_as_model_fn_sees_them(tf, workdir):
    """What code wrapping a model_fn sees of the specs it makes or changes: a PREDICT spec's
    export_outputs (none given; one head without `serving_default`), `_replace` keeping
    the mode or changing it, `_replace(loss=None)` on a TRAIN spec, a scaffold that is
    not a Scaffold, a Python number as loss, a string as train_op, and tensors of another
    graph (a model_fn caching them across calls)."""
    spec = tf.estimator.EstimatorSpec
    keys = tf.estimator.ModeKeys
    seen = {}
    with tf.Graph().as_default():  # what a cached tensor from an earlier call belongs to
        stale = tf.constant(1.0)
        stale_metric = tf.compat.v1.metrics.mean(stale)
        stale_op = tf.no_op()
    with tf.Graph().as_default():
        y = tf.constant([[1.0], [2.0]])
        loss = tf.constant(1.0)
        seen["from_another_graph"] = {
            "loss": _error_type(lambda: spec(keys.EVAL, loss=stale)),
            "train_op": _error_type(lambda: spec(keys.TRAIN, loss=loss, train_op=stale_op)),
            "prediction": _error_type(lambda: spec(keys.PREDICT, predictions={"y": stale})),
            "metric": _error_type(
                lambda: spec(keys.EVAL, loss=loss, eval_metric_ops={"m": stale_metric})
            ),
        }
        seen["loss_number"] = _error_type(lambda: spec(keys.EVAL, loss=0.5))
        seen["train_op_string"] = _error_type(lambda: spec(keys.TRAIN, loss=loss, train_op="x"))
        alone = spec(keys.PREDICT, predictions={"y": y})
        seen["default_outputs"] = {
            k: [type(v).__name__, sorted(v.outputs)] for k, v in alone.export_outputs.items()
        }
        head = tf.estimator.export.RegressionOutput(y)
        one = spec(keys.PREDICT, predictions={"y": y}, export_outputs={"head": head})
        seen["one_head"] = sorted(one.export_outputs)
        seen["same_object"] = one.export_outputs["serving_default"] is head
        evaluated = spec(keys.EVAL, loss=loss)
        seen["replace_same_mode"] = evaluated._replace(mode=keys.EVAL).mode
        seen["replace_other_mode"] = _error_type(lambda: evaluated._replace(mode=keys.TRAIN))
        trained = spec(keys.TRAIN, loss=loss, train_op=tf.no_op())
        seen["replace_loss_none"] = _error_type(lambda: trained._replace(loss=None))
        seen["replace_type"] = type(trained._replace(loss=loss * 2)).__name__
        seen["scaffold_not_one"] = _error_type(
            lambda: spec(keys.TRAIN, loss=loss, train_op=tf.no_op(), scaffold=object())
        )
    return {"exact": seen, "close": {}}


def _spec_refusals(tf, spec, keys):
    """Each refusal (type, words) of specs made wrongly in a graph: a field a mode needs
    missing, fields of the wrong kind, tensors of another graph, a change of mode."""
    with tf.Graph().as_default():
        stale = tf.constant(1.0, name="stale")
    with tf.Graph().as_default():
        loss, op, y = tf.constant(1.0, name="loss"), tf.no_op(), tf.constant([1.0], name="y")
        sparse = tf.sparse.SparseTensor([[0]], [1.0], [1])
        output = tf.estimator.export.PredictOutput({"y": y})
        made = {
            "train_no_loss": lambda: spec(keys.TRAIN, train_op=op),
            "train_no_train_op": lambda: spec(keys.TRAIN, loss=loss),
            "eval_no_loss": lambda: spec(keys.EVAL, predictions=y),
            "predict_nothing": lambda: spec(keys.PREDICT),
            "loss_sparse": lambda: spec(keys.EVAL, loss=sparse),
            "loss_vector": lambda: spec(keys.EVAL, loss=tf.constant([1.0, 2.0], name="v")),
            "prediction_number": lambda: spec(keys.PREDICT, predictions=2.0),
            "prediction_key_sparse": lambda: spec(keys.PREDICT, predictions={"s": sparse}),
            "scaffold_dict": lambda: spec(keys.TRAIN, loss=loss, train_op=op, scaffold={}),
            "scaffold_list": lambda: spec(keys.TRAIN, loss=loss, train_op=op, scaffold=[op]),
            "outputs_list": lambda: spec(keys.PREDICT, predictions=y, export_outputs=["y"]),
            "outputs_tensor": lambda: spec(keys.PREDICT, predictions=y, export_outputs={"a": y}),
            "outputs_no_default": lambda: spec(
                keys.PREDICT, predictions=y, export_outputs={"a": output, "b": output}
            ),
            "hook_not_one": lambda: spec(keys.EVAL, loss=loss, evaluation_hooks=[print]),
            "metrics_list": lambda: spec(keys.EVAL, loss=loss, eval_metric_ops=[loss]),
            "stale_loss": lambda: spec(keys.EVAL, loss=stale),
            "stale_prediction": lambda: spec(keys.PREDICT, predictions=stale),
            "stale_prediction_key": lambda: spec(keys.PREDICT, predictions={"k": stale}),
            "stale_train_op": lambda: spec(keys.TRAIN, loss=loss, train_op=stale),
            "stale_metric": lambda: spec(
                keys.EVAL, loss=loss, eval_metric_ops={"m": (stale, stale)}
            ),
            "change_mode": lambda: spec(keys.EVAL, loss=loss)._replace(mode=keys.TRAIN),
        }
        return {name: _raised(call) for name, call in made.items()}


def _bad_spec_model_fn(features, labels, mode, params):
    """A model_fn that forgets what `params["forget"]` names in the spec it returns."""
    import tensorflow as tf

    y = tf.compat.v1.layers.dense(features["x"], 1)
    step = tf.compat.v1.train.get_or_create_global_step()
    fields = {"predictions": {"y": y, "n": 3.0} if params["forget"] == "n" else {"y": y}}
    if mode != tf.estimator.ModeKeys.PREDICT:
        fields["loss"] = tf.reduce_mean(tf.square(y - labels))
        fields["train_op"] = tf.compat.v1.assign_add(step, 1)
    fields.pop(params["forget"], None)
    return tf.estimator.EstimatorSpec(mode, **fields)


@program
def spec_refusals_word_for_word(tf, workdir):
    """The words of EstimatorSpec's refusals (a user's log shows them): made in a graph as
    a wrapper of model_fns makes them, and returned by a model_fn to train, evaluate and
    predict (a spec missing its loss, its train_op, predictions holding a number)."""
    seen = _spec_refusals(tf, tf.estimator.EstimatorSpec, tf.estimator.ModeKeys)
    x = np.array([[1.0], [2.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(2)

    for name, forget, call in (
        ("train_without_loss", "loss", lambda model: model.train(input_fn, steps=1)),
        ("train_without_train_op", "train_op", lambda model: model.train(input_fn, steps=1)),
        ("evaluate_without_loss", "loss", lambda model: model.evaluate(input_fn, steps=1)),
        ("predict_without_predictions", "predictions", lambda model: model.predict(input_fn)),
        ("predict_a_number", "n", lambda model: model.predict(input_fn)),
    ):
        model = tf.estimator.Estimator(
            _bad_spec_model_fn,
            model_dir=os.path.join(workdir, name),
            params={"forget": forget},
        )
        seen[name] = _raised(lambda call=call, model=model: call(model))
    return {"exact": seen, "close": {}}


@program
def serving_receiver_checks(tf, workdir):
    """What a serving_input_receiver_fn's `ServingInputReceiver(...)` takes and refuses
    (the error's type): features and receiver tensors that are not tensors, an int key
    among features or among receiver tensors, a ragged feature, alternatives that are not
    a dict or hold a string."""
    receiver = tf.estimator.export.ServingInputReceiver
    seen = {}
    with tf.Graph().as_default():
        words = tf.compat.v1.placeholder(tf.string, [None], name="words")
        ragged = tf.strings.split(words)

        def made(*args):
            return lambda: sorted(map(str, receiver(*args).features))

        cases = {
            "feature_string": made("not a tensor", words),
            "feature_number_in_dict": made({"x": 3}, words),
            "feature_variable": made(tf.compat.v1.Variable(1.0), words),
            "feature_int_key": made({7: words}, words),
            "feature_ragged": made({"tokens": ragged}, words),
            "receiver_string": made(words, "not a tensor"),
            "receiver_int_key": made(words, {7: words}),
            "alternatives_not_dict": made(words, words, words),
            "alternatives_string": made(words, words, {"alt": "not a tensor"}),
            "alternatives_dict": made(words, words, {"alt": words}),
        }
        for name, call in cases.items():
            seen[name] = _error_type(call) or call()
    return {"exact": seen, "close": {}}


def local_counter_model_fn(features, labels, mode):
    """A TF1 local variable counting the batches a call ran (its loss grows with it),
    beside a Keras layer: no get_variable, so no graph marker."""
    import tensorflow as tf

    v1 = tf.compat.v1
    calls = v1.Variable(0.0, name="batches_seen", collections=[v1.GraphKeys.LOCAL_VARIABLES])
    seen = v1.assign_add(calls, 1.0)
    prediction = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")(features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        seen_now = tf.identity(seen) * tf.ones_like(prediction[:, 0])
        return tf.estimator.EstimatorSpec(
            mode, predictions={"y": prediction[:, 0], "seen": seen_now}
        )
    loss = tf.reduce_mean(tf.square(prediction[:, 0] - labels)) + seen
    step = v1.train.get_global_step()
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=v1.assign_add(step, 1))


@program
def local_variable_per_call(tf, workdir):
    """A model_fn's `tf.compat.v1.Variable(collections=[LOCAL_VARIABLES])`: 2.15 set it
    afresh at each train(), evaluate() and predict() call and kept it out of checkpoints."""
    x, y = _regression_data()
    est = tf.estimator.Estimator(local_counter_model_fn, os.path.join(workdir, "m"))
    est.train(_dataset_input_fn(x, y, 4), steps=2)
    evaluations = [est.evaluate(_dataset_input_fn(x, y, 2), steps=3) for _ in range(2)]
    predictions = list(est.predict(_features_input_fn(tf, x)))
    return {
        "exact": {
            "variables": sorted(est.get_variable_names()),
            "seen_by_predictions": [float(p["seen"]) for p in predictions],
        },
        "close": {"losses": [float(r["loss"]) for r in evaluations]},
    }


def _growing_model_fn(tf, grown):
    """A model_fn whose Python flag (`grown["layer"]`) adds a layer `extra` before its
    output, in Keras layers (TF2-style, `grown["tf1"]` False) or TF1's."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode):
        dense = v1.layers.dense if grown["tf1"] else None
        names = ["extra", "out"] if grown["layer"] else ["out"]
        net = features["x"]
        for name in names:  # (each of one unit: `out`'s kernel keeps its shape)
            if dense:
                net = dense(net, 1, kernel_initializer=v1.zeros_initializer(), name=name)
            else:
                net = tf.keras.layers.Dense(1, kernel_initializer="zeros", name=name)(net)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=net[:, 0])
        loss = tf.reduce_mean(tf.square(net[:, 0] - labels))
        step = v1.train.get_global_step()
        if dense:
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        else:
            variables = v1.trainable_variables()
            update = tf.keras.optimizers.legacy.SGD(0.1).apply_gradients(
                zip(tf.gradients(loss, variables), variables, strict=True)
            )
            train_op = tf.group(update, step.assign_add(1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def _restore_failure(call):
    """[the TensorFlow or Python error class, its error_code, its message's first line,
    the checkpoint key it names as not found] of `call()`, or None."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except Exception as error:  # (any error is the record)
        mro = type(error).__mro__
        public = [c for c in mro if c.__module__.startswith(("builtins", "tensorflow"))]
        key = re.search(r"Key (\S+) not found in checkpoint", str(error))
        first = str(error).splitlines()[0]
        return [public[0].__name__, getattr(error, "error_code", None), first, key and key.group(1)]
    return None


def _failures_of_each_call(tf, est, x, y):
    return {
        "train": _restore_failure(lambda: est.train(_dataset_input_fn(x, y, 4), steps=2)),
        "evaluate": _restore_failure(lambda: est.evaluate(_dataset_input_fn(x, y, 4), steps=1)),
        "predict": _restore_failure(lambda: est.predict(_features_input_fn(tf, x))),
        "latest": os.path.basename(tf.train.latest_checkpoint(est.model_dir)),
    }


@program
def checkpoint_lacking_a_new_layer(tf, workdir):
    """A model_fn changed between calls (a Python flag adds a layer `extra` after the first
    train()): 2.15's train(), evaluate() and predict() each failed restoring the
    checkpoint with TF1's Saver's NotFoundError ("Restoring from checkpoint failed. ...",
    "Key extra/bias not found in checkpoint"), writing nothing; for a Keras-layer
    model_fn and a TF1 one."""
    x, y = _regression_data()
    seen = {}
    for kind in ("keras", "tf1"):
        grown = {"layer": False, "tf1": kind == "tf1"}
        est = tf.estimator.Estimator(_growing_model_fn(tf, grown), os.path.join(workdir, kind))
        est.train(_dataset_input_fn(x, y, 4), steps=2)
        grown["layer"] = True
        seen[kind] = _failures_of_each_call(tf, est, x, y)
    return {"exact": seen}


def ragged_sum_model_fn(features, labels, mode):
    """A model_fn over one ragged feature (a TensorServingInputReceiver hands it over as
    it is): each row's sum, scaled by a variable."""
    import tensorflow as tf

    v1 = tf.compat.v1
    scale = v1.get_variable("scale", [], initializer=v1.constant_initializer(2.0))
    total = tf.reduce_sum(features, axis=1) * scale
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"total": total})
    loss = tf.reduce_mean(tf.square(total - labels))
    step = v1.train.get_global_step()
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=v1.assign_add(step, 1))


@program
def tensor_receiver_of_a_ragged_feature(tf, workdir):
    """A `TensorServingInputReceiver` whose one feature is a RaggedTensor made of two
    placeholders (2.15 took it): the export's signature and what it computes; and the
    words of the receivers' refusals a user's test matches (2.15's, `... must be defined`,
    `feature must be a Tensor, SparseTensor, or RaggedTensor`)."""
    v1 = tf.compat.v1
    est = tf.estimator.Estimator(ragged_sum_model_fn, os.path.join(workdir, "m"))
    est.train(lambda: (tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.constant([3.0, 3.0])), steps=1)

    def receiver_fn():
        values = v1.placeholder(tf.float32, [None], name="values")
        lengths = v1.placeholder(tf.int64, [None], name="lengths")
        ragged = tf.RaggedTensor.from_row_lengths(values, lengths)
        return tf.estimator.export.TensorServingInputReceiver(
            ragged, {"values": values, "lengths": lengths}
        )

    export_dir = est.export_saved_model(os.path.join(workdir, "export"), receiver_fn)
    signature = tf.saved_model.load(export_dir.decode()).signatures["serving_default"]
    outputs = signature(values=tf.constant([1.0, 2.0, 3.0]), lengths=tf.constant([1, 2], tf.int64))
    words = {}
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None], name="x")
        receivers = tf.estimator.export
        for name, call, said in [
            ("no_features", lambda: receivers.ServingInputReceiver(None, x), "features must be defined"),
            ("no_receiver", lambda: receivers.ServingInputReceiver(x, None), "receiver_tensors must be defined"),
            ("tensor_no_features", lambda: receivers.TensorServingInputReceiver(None, x), "features must be defined"),
            ("tensor_dict", lambda: receivers.TensorServingInputReceiver({"x": x}, x), "feature must be a Tensor, SparseTensor, or RaggedTensor"),
            ("feature_not_tensor", lambda: receivers.ServingInputReceiver({"x": 3}, x), "feature x must be a Tensor, SparseTensor, or RaggedTensor"),
            ("receiver_not_tensor", lambda: receivers.ServingInputReceiver(x, {"x": 3}), "receiver_tensor x must be a Tensor, SparseTensor, or RaggedTensor"),
            ("receiver_int_key", lambda: receivers.ServingInputReceiver(x, {1: x}), "receiver_tensor keys must be strings"),
        ]:  # fmt: skip
            error = _raised(call)
            words[name] = error and [error[0], said in error[1]]
    return {
        "exact": {
            "inputs": sorted(signature.structured_input_signature[1]),
            "outputs": sorted(signature.structured_outputs),
            "refusals": words,
        },
        "close": {"totals": outputs["total"].numpy().tolist()},
    }


@program
def run_config_subclass(tf, workdir):
    """A user's RunConfig subclass overriding fields with properties (2.15's fields were
    read-only properties) and adding an attribute: what an Estimator built on it reads,
    what `replace` gives, where training writes its summaries."""

    class EveryStepConfig(tf.estimator.RunConfig):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.owner = "team-a"

        @property
        def save_summary_steps(self):
            return 1

        @property
        def is_chief(self):
            return True

    x, y = _regression_data()
    config = EveryStepConfig(model_dir=os.path.join(workdir, "m"), save_checkpoints_steps=3)
    replaced = config.replace(keep_checkpoint_max=2)
    est = tf.estimator.Estimator(local_counter_model_fn, config=config)
    est.train(_dataset_input_fn(x, y, 4, epochs=2), steps=3)
    seen = {
        "config": [type(est.config).__name__, est.config.save_summary_steps, est.config.is_chief],
        "replaced": [type(replaced).__name__, replaced.owner, replaced.keep_checkpoint_max],
        "replaced_summary_steps": replaced.save_summary_steps,
        "loss_steps": _events(tf, est.model_dir).get("loss"),
        "checkpoint": os.path.basename(est.latest_checkpoint()),
    }
    return {"exact": seen, "close": {}}


def _table_model_fn(keras):
    """Looks its string feature up in a table, with a Scaffold whose local_init_op groups
    the initializers of what exists when it is made: the metrics and the Estimator's
    `eval_step` come later."""

    def model_fn(features, labels, mode):
        import tensorflow as tf

        v1 = tf.compat.v1
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [0.0, 1.0, 2.0]), -1.0
        )
        inputs = tf.stack([features["x"][:, 0], table.lookup(features["word"])], axis=1)
        scaffold = v1.train.Scaffold(
            local_init_op=tf.group(v1.local_variables_initializer(), v1.tables_initializer())
        )
        if keras:
            dense = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
            prediction = dense(inputs)[:, 0]
        else:
            prediction = _linear_logits(tf, inputs, units=1)[:, 0]
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=prediction, scaffold=scaffold)
        loss = tf.reduce_mean(tf.square(prediction - labels))
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, v1.train.get_global_step()
            )
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)
        metrics = {"mae": v1.metrics.mean_absolute_error(labels, prediction)}
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops=metrics, scaffold=scaffold
        )

    return model_fn


@program
def scaffold_local_init_op(tf, workdir):
    """A user's `Scaffold(local_init_op=...)` made before the metrics: 2.15's evaluate()
    ran the default local initialization beside it (metrics and `eval_step` included)."""
    x, y = _regression_data()
    words = np.array(["a", "b", "c", "z"] * 2)

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x, "word": words}, y))
        return data.batch(4)

    seen = {}
    for keras in (False, True):
        est = tf.estimator.Estimator(_table_model_fn(keras), os.path.join(workdir, str(keras)))
        est.train(input_fn, steps=2)
        metrics = est.evaluate(input_fn)
        predicted = [float(p) for p in est.predict(input_fn)]
        seen["keras" if keras else "tf1"] = {
            "metrics": {k: float(v) for k, v in sorted(metrics.items())},
            "predicted": predicted,
        }
    return {"exact": {}, "close": seen}


def tf1_predicting_model_fn(features, labels, mode):
    """tf1_regression_model_fn, with a PREDICT spec."""
    import tensorflow as tf

    if mode != tf.estimator.ModeKeys.PREDICT:
        return tf1_regression_model_fn(features, labels, mode)
    weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    return tf.estimator.EstimatorSpec(mode, predictions=tf.matmul(features["x"], weight)[:, 0])


def _empty_input_fn(x, labels):
    def input_fn():
        import tensorflow as tf

        return tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).take(0).batch(4)

    return input_fn


@program
def empty_inputs(tf, workdir):
    """An input that yields no batch (a filter that kept nothing, an empty file): 2.15's
    train() ended at once (a step-0 checkpoint), predict() yielded nothing, and evaluate()
    returned every metric as it starts (0, `accuracy_baseline` too) at the checkpoint's
    step, for custom and canned estimators alike. (The TF2 case's train op steps the global
    step apart from the input: 2.15's session ran that assign before the empty input
    stopped it, a step counted with no batch; not compared.)"""
    x, y = _regression_data()
    classes = (y > 2).astype(np.int64)
    column = [tf.feature_column.numeric_column("x")]
    cases = {
        "tf1": (tf.estimator.Estimator, [tf1_predicting_model_fn], y),
        "tf2": (tf.estimator.Estimator, [keras_update_in_every_mode_model_fn], y),
        "linear_classifier": (tf.estimator.LinearClassifier, [column], classes),
        "dnn_classifier_3": (
            lambda *a, **k: tf.estimator.DNNClassifier([2], *a, n_classes=3, **k),
            [column],
            classes,
        ),
        "dnn_regressor": (lambda *a, **k: tf.estimator.DNNRegressor([2], *a, **k), [column], y),
    }
    exact, close = {}, {}
    for name, (make, args, labels) in cases.items():
        est = make(*args, model_dir=os.path.join(workdir, name))
        first = None
        if name != "tf2":  # (its step's assign_add, apart from the input, ran under 2.15)
            est.train(_empty_input_fn(x, labels))
            first = os.path.basename(est.latest_checkpoint())
        est.train(_dataset_input_fn(x, labels, 4), steps=2)
        metrics = est.evaluate(_empty_input_fn(x, labels))
        exact[name] = {
            "first_checkpoint": first,
            "metric_keys": list(metrics),
            "predicted": list(est.predict(_empty_input_fn(x, labels))),
        }
        close[name] = {k: float(v) for k, v in metrics.items()}
    return {"exact": exact, "close": close}


@program
def run_config_class_properties(tf, workdir):
    """RunConfig's fields as the class holds them (2.15's were read-only properties): a
    subclass's property built on `super()`'s, `RunConfig.field.fget(config)`, and the same
    of `tf.compat.v1.estimator.tpu.RunConfig` (its `tpu_config` and `cluster` too)."""
    v1 = tf.compat.v1

    class NestedConfig(tf.estimator.RunConfig):
        @property
        def model_dir(self):
            return os.path.join(super().model_dir, "nested")

        @property
        def save_summary_steps(self):
            return super().save_summary_steps * 2

    class TpuConfig(v1.estimator.tpu.RunConfig):
        @property
        def tpu_config(self):
            return super().tpu_config._replace(iterations_per_loop=7)

    config = NestedConfig(model_dir=os.path.join(workdir, "m"), save_summary_steps=5)
    est = tf.estimator.Estimator(local_counter_model_fn, config=config)
    tpu_config = TpuConfig(model_dir=os.path.join(workdir, "t"))
    classes = {"RunConfig": tf.estimator.RunConfig, "tpu.RunConfig": v1.estimator.tpu.RunConfig}
    seen = {
        name: sorted(n for n in dir(cls) if isinstance(getattr(cls, n), property))
        for name, cls in classes.items()
    }
    seen.update(
        model_dir=os.path.relpath(est.model_dir, workdir),
        summary_steps=[config.save_summary_steps, est.config.save_summary_steps],
        read_through_class=[
            tf.estimator.RunConfig.save_summary_steps.fget(config),
            tf.estimator.RunConfig.is_chief.fget(config),
            tf.estimator.RunConfig.task_type.fget(config),
        ],
        tpu=[tpu_config.tpu_config.iterations_per_loop, tpu_config.cluster],
    )
    return {"exact": seen, "close": {}}


@program
def run_config_private_fields(tf, workdir):
    """2.15 kept each RunConfig field as `_<field>`, which programs set to get round the
    read-only property (`config._save_checkpoints_steps = 2`) and read: the Estimator
    then saves on that schedule, and copies and `replace` keep it (here the attribute
    was a new one the Estimator never read, and reading an unset one failed)."""
    config = tf.estimator.RunConfig(save_checkpoints_steps=100)
    config._save_checkpoints_steps = 2
    config._keep_checkpoint_max = 2
    model_dir = os.path.join(workdir, "m")
    est = tf.estimator.Estimator(local_counter_model_fn, model_dir, config=config)
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[1.0]])).repeat(), steps=7)
    replaced = config.replace(save_summary_steps=3)
    seen = {
        "checkpoints": sorted(f for f in os.listdir(model_dir) if f.endswith(".index")),
        "read": [
            config._save_checkpoints_steps,
            config.save_checkpoints_steps,
            replaced.save_checkpoints_steps,
            replaced._save_summary_steps,
            est.config._keep_checkpoint_max,
        ],
        "unknown": hasattr(config, "_nope"),
    }
    return {"exact": seen, "close": {}}


@program
def run_config_strategy_lines(tf, workdir):
    """What 2.15 logged when a RunConfig was given a distribution strategy (made, not
    replaced nor copied by the Estimator), and the `_distribute_coordinator_mode` its
    `Using config: ...` line then showed."""
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    tpu = tf.compat.v1.estimator.tpu
    made = {}

    def estimator(config):
        return tf.estimator.Estimator(local_counter_model_fn, config=config)

    steps = [
        ("plain", lambda: tf.estimator.RunConfig()),
        ("train", lambda: tf.estimator.RunConfig(train_distribute=strategy)),
        ("eval", lambda: tf.estimator.RunConfig(eval_distribute=strategy)),
        (
            "both",
            lambda: tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy),
        ),
        ("replaced", lambda: made["train"].replace(save_summary_steps=5)),
        ("given_by_replace", lambda: made["plain"].replace(train_distribute=strategy)),
        ("tpu", lambda: tpu.RunConfig(train_distribute=strategy)),
        ("tpu_replaced", lambda: made["tpu"].replace(save_summary_steps=3)),
        ("estimator", lambda: estimator(made["train"])),
        ("estimator_given_by_replace", lambda: estimator(made["given_by_replace"])),
        ("estimator_replaced", lambda: estimator(made["replaced"])),
    ]
    seen = {}
    for name, make in steps:
        with _info_lines() as lines:
            made[name] = make()
        said = [line for line in lines if "istribut" in line or "Coordinator" in line]
        seen[name] = [
            line.endswith("'_distribute_coordinator_mode': None}")
            if line.startswith("Using config")
            else line
            for line in said
        ]
    return {"exact": seen, "close": {}}


@program
def run_config_tf_config_line(tf, workdir):
    """The line 2.15 logged when a RunConfig was made with TF_CONFIG set (a chief alone),
    given a strategy or not, and none for `replace()`'s copy."""
    tf_config = {"cluster": {"chief": ["localhost:2222"]}, "task": {"type": "chief", "index": 0}}
    before = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps(tf_config)
    seen = {}
    try:
        for name, make in [
            ("made", lambda: tf.estimator.RunConfig(save_summary_steps=3)),
            (
                "strategy",
                lambda: tf.estimator.RunConfig(
                    train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0")
                ),
            ),
            ("replaced", lambda: tf.estimator.RunConfig().replace(save_summary_steps=4)),
            ("tpu", lambda: tf.compat.v1.estimator.tpu.RunConfig()),
        ]:
            with _info_lines() as lines:
                made = make()
            said = [line for line in lines if re.search("TF_CONFIG|istribut|Coordinator", line)]
            seen[name] = [said, made.task_type, made.is_chief]
    finally:
        if before is None:
            del os.environ["TF_CONFIG"]
        else:
            os.environ["TF_CONFIG"] = before
    return {"exact": seen, "close": {}}


@program
def run_config_fields_read_only(tf, workdir):
    """`config.save_summary_steps = 7` raised AttributeError under 2.15 (a property
    without a setter) and left the field; here it set it. `_<field>` still sets, and a
    program's own attribute too."""
    config = tf.estimator.RunConfig(save_summary_steps=3)
    tpu = tf.compat.v1.estimator.tpu
    tpu_config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=3))

    class Doubled(tf.estimator.RunConfig):
        @property
        def save_summary_steps(self):
            return 2 * super().save_summary_steps

    doubled = Doubled(save_summary_steps=5)
    assigned = [
        (config, "save_summary_steps", 7),
        (config, "model_dir", os.path.join(workdir, "m")),
        (config, "is_chief", False),
        (config, "session_config", None),
        (config, "train_distribute", None),
        (tpu_config, "tpu_config", None),
        (tpu_config, "master", "grpc://x"),
        (tpu_config, "evaluation_master", "grpc://y"),
        (doubled, "save_summary_steps", 1),
    ]
    seen = {}
    for target, name, value in assigned:
        raised = _raised(lambda t=target, n=name, v=value: setattr(t, n, v))
        seen[f"{type(target).__name__}.{name}"] = [raised, repr(getattr(target, name))[:40]]
    config.note = "mine"
    config._save_summary_steps = 9
    tpu_config._tpu_config = tpu.TPUConfig(iterations_per_loop=5)
    seen["set"] = [
        config.note,
        config.save_summary_steps,
        config.replace(keep_checkpoint_max=2).save_summary_steps,
        tpu_config.tpu_config.iterations_per_loop,
        tpu_config.replace(save_summary_steps=4).tpu_config.iterations_per_loop,
        doubled.replace(tf_random_seed=1).save_summary_steps,
    ]
    return {"exact": seen, "close": {}}


@program
def export_outputs_as_tf_made_them(tf, workdir):
    """2.15's export outputs were TF's own classes: they refused int scores, a list, a
    key that is not a string and a value that is not a tensor, in TF's words, and held
    their tensors in read-only properties; the kit's took int scores and non-tensors,
    refused in words of its own, and let `out.scores = x` replace them."""
    export = tf.estimator.export
    with tf.Graph().as_default():
        scores = tf.compat.v1.placeholder(tf.float32, [None, 2], name="scores")
        ids = tf.compat.v1.placeholder(tf.int64, [None], name="ids")
        words = tf.compat.v1.placeholder(tf.string, [None, 2], name="words")
        calls = {
            "ClassificationOutput()": lambda: export.ClassificationOutput(),
            "ClassificationOutput(int scores)": lambda: export.ClassificationOutput(ids),
            "ClassificationOutput(float classes)": lambda: export.ClassificationOutput(
                classes=scores
            ),
            "ClassificationOutput(a list)": lambda: export.ClassificationOutput([1.0]),
            "RegressionOutput(int)": lambda: export.RegressionOutput(ids),
            "RegressionOutput(a list)": lambda: export.RegressionOutput([1.0]),
            "PredictOutput(1)": lambda: export.PredictOutput(1),
            "PredictOutput({1: t})": lambda: export.PredictOutput({1: scores}),
            "PredictOutput({'a': 1})": lambda: export.PredictOutput({"a": 1}),
        }
        seen = {name: _raised(call) for name, call in calls.items()}
        made = {
            "scores": export.ClassificationOutput(scores=scores, classes=words),
            "classes": export.ClassificationOutput(classes=words),
            "value": export.RegressionOutput(scores[:, 0]),
            "outputs": export.PredictOutput(scores),
        }
        for name, out in made.items():
            kind = type(getattr(type(out), name, None)).__name__
            raised = _raised(lambda out=out, name=name: setattr(out, name, None))
            seen[f"{type(out).__name__}.{name}"] = [kind, raised]
        examples = {"inputs": tf.compat.v1.placeholder(tf.string, [None], name="examples")}
        signatures = {
            name: out.as_signature_def(examples if name != "outputs" else {"x": scores})
            for name, out in made.items()
        }
        seen["signatures"] = {
            name: [
                sig.method_name,
                {k: v.name for k, v in sorted(sig.inputs.items())},
                {k: v.name for k, v in sorted(sig.outputs.items())},
            ]
            for name, sig in signatures.items()
        }
        seen["read"] = [
            made["scores"].scores.name,
            made["classes"].scores,
            made["value"].value.name,
            {k: v.name for k, v in made["outputs"].outputs.items()},
        ]
    return {"exact": seen, "close": {}}


def _squared_error_spec(tf, mode, prediction, labels):
    """The spec of a regression's `prediction`: its squared error, trained by SGD."""
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=prediction)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(tf, loss, 0.1))


def _scaled_model_fn(features, labels, mode, params, config=None):
    """A zero-initialised linear model whose output is scaled by `params["scale"]` (a
    grid search's hyper-parameter), given by the Estimator or bound by a partial."""
    import tensorflow as tf

    kernel = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], kernel)[:, 0] * params.get("scale", 1.0)
    return _squared_error_spec(tf, mode, prediction, labels)


@program
def partial_and_keyword_only_model_fns(tf, workdir):
    """What a hyper-parameter search hands an Estimator: `functools.partial(model_fn,
    params=...)` (2.15 left a parameter a partial bound alone: the partial's params, not
    the Estimator's `{}`; given params too, a ValueError), an input_fn partial binding its
    own `params`, a model_fn with a keyword-only parameter of its own (2.15 counted
    positional parameters only: neither passed nor refused), and `params={}` given to a
    model_fn without a `params` parameter (refused: 2.15 checked `params is not None`)."""
    import functools

    x, y = _regression_data()

    def rows_input_fn(params):
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).take(params["rows"]).batch(8)

    def keyword_only_model_fn(features, labels, mode, *, extra=2.0):
        return _scaled_model_fn(features, labels, mode, {"scale": extra})

    def no_params_model_fn(features, labels, mode):
        return _scaled_model_fn(features, labels, mode, {})

    made = {
        "partial": lambda: tf.estimator.Estimator(
            functools.partial(_scaled_model_fn, params={"scale": 3.0}),
            os.path.join(workdir, "partial"),
        ),
        "partial_reads_its_input": lambda: tf.estimator.Estimator(
            functools.partial(_scaled_model_fn, params={"rows": 2}),
            os.path.join(workdir, "rows"),
        ),
        "keyword_only": lambda: tf.estimator.Estimator(
            keyword_only_model_fn, os.path.join(workdir, "keyword_only")
        ),
    }
    seen, losses = {}, {}
    for name, make in made.items():
        est = make()
        train_input = _dataset_input_fn(x, y, 4)
        if name == "partial_reads_its_input":
            train_input = functools.partial(rows_input_fn, params={"rows": 4})
        est.train(train_input, steps=2)
        seen[name] = int(est.get_variable_value("global_step"))
        losses[name] = [float(est.evaluate(_dataset_input_fn(x, y, 8), steps=1)["loss"])]
        losses[name] += [float(p) for p in est.predict(_features_input_fn(tf, x[:2]))]
    bound = functools.partial(_scaled_model_fn, params={"scale": 3.0})
    seen["partial_and_params"] = _raised(lambda: tf.estimator.Estimator(bound, params={"a": 1}))
    seen["empty_params"] = _raised(lambda: tf.estimator.Estimator(no_params_model_fn, params={}))
    return {"exact": seen, "close": losses}


@program
def train_calls_into_one_events_file(tf, workdir):
    """A notebook's loop of train(steps=1) calls on a canned LinearRegressor and on a
    Keras-layer model_fn (the TF2 path), then a new Estimator over the same model_dir (a
    search re-creating it each round): 2.15's summary saver took FileWriterCache's writer
    of the folder, so a process wrote one events file into model_dir, each call's graph
    and losses in it (the kit's TF2 path wrote a file a call)."""
    x, y = _regression_data()
    makers = {
        "canned": lambda folder: tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], model_dir=folder, optimizer="SGD"
        ),
        "custom": lambda folder: tf.estimator.Estimator(
            keras_update_in_every_mode_model_fn, model_dir=folder
        ),
    }
    seen, steps = {}, {}
    for kind, make in makers.items():
        folder = os.path.join(workdir, kind)
        est = make(folder)
        for _ in range(3):
            est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=1)
        est = make(folder)
        est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=1)
        seen[kind] = _events(tf, folder)
        steps[kind] = int(est.get_variable_value("global_step"))
    return {"exact": {"events": seen, "global_steps": steps}, "close": {}}


def _input_layer_model_fn(features, labels, mode):
    """A TF1 model_fn whose first op reads the `x` column (`input_layer`), before any
    variable: a misnamed feature fails it before anything TF1 is in its graph."""
    import tensorflow as tf

    inputs = tf.compat.v1.feature_column.input_layer(
        features, [tf.feature_column.numeric_column("x")]
    )
    dense = tf.compat.v1.layers.dense(
        inputs, 1, kernel_initializer=tf.compat.v1.zeros_initializer()
    )
    prediction = dense[:, 0]
    return _squared_error_spec(tf, mode, prediction, labels)


@program
def call_after_a_failed_first_call(tf, workdir):
    """A notebook's first train() (or evaluate(), or predict()) of a TF1 model_fn given an
    input_fn whose feature is misnamed (`X`), then trained, evaluated and predicted with
    the input fixed, on the same Estimator: 2.15 built each call's graph anew, so the
    second call ran as a first (the kit's TF2 path, chosen by the failed call, trained
    under names its evaluation could not restore)."""
    x, y = _regression_data()
    misnamed = {
        "train": lambda est: est.train(
            lambda: tf.data.Dataset.from_tensor_slices(({"X": x}, y)).batch(4), steps=1
        ),
        "evaluate": lambda est: est.evaluate(
            lambda: tf.data.Dataset.from_tensor_slices(({"X": x}, y)).batch(4), steps=1
        ),
        "predict": lambda est: est.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"X": x}).batch(4)
        ),
    }
    seen, values = {}, {}
    for name, call in misnamed.items():
        est = tf.estimator.Estimator(_input_layer_model_fn, os.path.join(workdir, name))
        seen[name] = [_raised(lambda est=est, call=call: call(est))]
        est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=2)
        values[name] = [float(est.evaluate(_dataset_input_fn(x, y, 8), steps=1)["loss"])]
        values[name] += [float(p) for p in est.predict(_features_input_fn(tf, x[:2]))]
        seen[name].append(sorted(est.get_variable_names()))
    return {"exact": seen, "close": values}


# --------------------------------------------------------- a model_dir's events, in order
def _event_sequence(tf, folder):
    """The records of the events files directly in `folder`, in their order, as
    `summary_iterator` reads them once the process's writer of `folder` flushed (as at
    its exit): [step, what], `what` a record's kind (`graph_def`, `session_log START`,
    `session_log CHECKPOINT model.ckpt`) or a summary value's `tag kind`; with
    {`tag@step`: its numbers} (a scalar's value; a histogram's count, sum, min, max)."""
    tf.compat.v1.summary.FileWriterCache.get(folder).flush()
    records, values = [], {}
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            step, what = int(event.step), event.WhichOneof("what")
            if what == "session_log":
                log = event.session_log
                status = tf.compat.v1.SessionLog.SessionStatus.Name(log.status)
                name = os.path.basename(log.checkpoint_path)
                records.append([step, f"session_log {status} {name}".strip()])
            elif what != "summary":
                records.append([step, what])
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                records.append([step, f"{value.tag} {kind}"])
                if kind == "simple_value" and value.tag != "global_step/sec":
                    values[f"{value.tag}@{step}"] = [value.simple_value]
                elif kind == "histo":
                    histo = value.histo
                    values[f"{value.tag}@{step}"] = [histo.num, histo.sum, histo.min, histo.max]
    return records, values


@program
def canned_summaries_at_their_steps(tf, workdir):
    """V2 canned estimators' training summaries (a zero-initialised LinearClassifier, a
    seeded wide & deep of 3 classes) over two train() calls, summarized every step (2.15
    chose other steps by whether it read the global step before or after its increment,
    which varied from run to run):
    2.15's summary saver ran them beside the train op, so a variable's summary (`bias`,
    `fraction_of_zero_weights`, the multi-class `bias` histogram) shows it before the
    step's update (the kit's TF2 path showed it after), and each step's event lists the
    model's own summaries before the Estimator's `loss`; a V1 LinearClassifier's head
    summarized `loss` itself, before its `average_loss` (the kit: after)."""
    x, labels = _classes(24)
    columns = [tf.feature_column.numeric_column("x", shape=[4])]
    makers = {
        "linear": lambda config: tf.estimator.LinearClassifier(columns, config=config),
        "wide_deep": lambda config: tf.estimator.DNNLinearCombinedClassifier(
            linear_feature_columns=columns,
            dnn_feature_columns=columns,
            dnn_hidden_units=[3],
            n_classes=3,
            config=config,
        ),
        "v1_linear": lambda config: tf.compat.v1.estimator.LinearClassifier(columns, config=config),
    }
    seen, values = {}, {}
    for name, make in makers.items():
        folder = os.path.join(workdir, name)
        config = tf.estimator.RunConfig(folder, tf_random_seed=1, save_summary_steps=1)
        est, y = make(config), labels if name == "wide_deep" else (labels == 0).astype(np.int32)
        for steps in (3, 2):
            est.train(_dataset_input_fn(x, y, 8, epochs=None), steps=steps)
        records, values[name] = _event_sequence(tf, folder)
        seen[name] = [r for r in records if " " in r[1] and not r[1].startswith("session_log")]
    return {"exact": seen, "close": values}


@program
def canned_train_calls_event_records(tf, workdir):
    """The records of a V2 LinearRegressor's model_dir after two train() calls, as
    TensorBoard and `summary_iterator` loops read them: 2.15's checkpoint saver wrote the
    graph each call, whether or not `checkpoint_save_graph_def`, and the events file's
    writer wrote it when the process opened it (its first call: the graph twice; with no
    checkpoints, once); its summary saver marked each call's first step `session_log
    START`. (The kit wrote the graph once a call, none without graph.pbtxt, and no START.)
    Every step summarized: 2.15's other summary steps varied with a race (see above)."""
    x, y = _regression_data()
    configs = {
        "saving": {"save_summary_steps": 1},
        "no_graph_def": {"save_summary_steps": 1, "checkpoint_save_graph_def": False},
        "no_checkpoints": {
            "save_summary_steps": 1,
            "save_checkpoints_steps": None,
            "save_checkpoints_secs": None,
        },
    }
    seen = {}
    for name, options in configs.items():
        folder = os.path.join(workdir, name)
        config = tf.estimator.RunConfig(folder, **options)
        est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], config=config)
        for _ in range(2):
            est.train(_dataset_input_fn(x, y, 4, epochs=None), steps=2)
        seen[name] = _event_sequence(tf, folder)[0]
    return {"exact": seen, "close": {}}
