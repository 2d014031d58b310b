"""Public tf.estimator code the other families leave out, after `tf_upgrade_v2`, on tiny
made-up data: GoogleCloudPlatform/tf-estimator-tutorials (Khalid Salama's notebooks) and
the Estimator object's calls as StackOverflow-grade code makes them.

- `sms_cnn_latest_exporter_as_text`: 08_Text_Analysis' SMS ham/spam word-embedding CNN: a
  TSV read by `TextLineDataset`, labels looked up in a table, the text split, padded and
  looked up in a vocabulary file's `StaticVocabularyTable` (its `index_table_from_file`),
  `embed_sequence`'s variable written out, `conv1d`, a weighted sparse softmax loss
  summarized as `loss`, weighted accuracy and AUC, `train_and_evaluate` with a
  `LatestExporter(name="predict", exports_to_keep=1, as_text=True)` of a signature named
  `prediction` only, `evaluate(steps=1)` on whole sets, the export's `prediction`
  signature called (its `tf.contrib.predictor`);
- `autoencoder_export_as_text`: 05_Autoencoding's custom-Estimator autoencoder: numeric
  columns through `input_layer`, noise and dropout, the encoder and mirrored decoder
  (`tf.contrib.layers.stack` written as a loop of `dense` layers with tf_upgrade_v2's
  `tf.keras.regularizers.l2(0.5 * scale)`), the MSE plus `get_regularization_loss()`,
  an RMSE metric, params as an HParams-like object, `predict` read through
  `itertools.islice`, `export_saved_model(as_text=True)` of a CSV-string receiver;
- `estimator_api_calls`: what `latest_checkpoint`, `get_variable_names`,
  `get_variable_value` and `predict` give before training; `predict(predict_keys="y")` (a
  string), `predict(yield_single_examples=False, checkpoint_path=...)` of an older
  checkpoint, `evaluate(name=..., checkpoint_path=...)` and `eval_dir`, `config.model_dir`
  read in model_fn, and the calls' refusals;
- `config_read_as_a_copy`: `estimator.config` read twice, compared, changed (its
  `session_config`, a note of the program's) before training: 2.15 gave a
  deep copy on each read, so nothing changed what the Estimator and model_fn saw;
- `keras_layer_updates_of_trainable_variables`: a Keras-layer model_fn training what
  `tf.compat.v1.trainable_variables()` lists by a legacy Keras optimizer's `get_updates`
  (the kit's trace listed nothing, so it trained nothing);
- `export_all_as_text`: `experimental_export_all_saved_models(as_text=True)` and an EVAL
  `export_saved_model(as_text=True, experimental_mode=...)`;
- `keras_model_fn_tf1_summaries`, `keras_model_fn_tf2_summaries`: a model_fn of a Keras
  layer and a legacy Keras optimizer's `get_updates` writing compat.v1 histogram, scalar,
  image and text summaries (and TF2 `tf.summary` ones) under `save_summary_steps`;
- `keras_model_fn_spec_hooks`: its spec's `training_chief_hooks` (a StepCounterHook with
  an `output_dir`), `evaluation_hooks` and `prediction_hooks` (a LoggingTensorHook), a
  `Scaffold(saver=Saver(max_to_keep=1))`;
- `params_changed_by_model_fn`: a model_fn that pops its output size off
  `params["hidden_units"]` and appends to a list in params, and one that reverses an
  argparse Namespace's list in place (the autoencoder without its `.copy()`): 2.15 gave
  each call a deep copy, so evaluate() built the model train() built and the caller's
  params stayed as they were (the kit shared the lists: evaluate() failed).
- `keras_model_fn_logging_tensors`: `tf.estimator.LoggingTensorHook` given the model_fn's
  tensors in the spec's training, evaluation and prediction hooks, and a tensor's name in
  train()'s (2.15's hook was TF1's; the kit's TF2 path failed on both);
- `keras_batch_norm_updates`: a Keras BatchNormalization whose updates are grouped into the
  train op (as 2.15) and left out of it (`forgotten`: 2.15 never ran them);
- `train_op_without_global_step`: a TF1 `minimize` without `global_step` (`steps`: a
  known difference, 2.15 left the step at 0);
- `exports_kept_and_warm_started_from`: `LatestExporter(exports_to_keep=None)` of a
  parsing receiver with `default_batch_size`, a tensor (not dict) prediction with
  `ClassificationOutput`s of classes only and of scores only, a warm start from an
  export's folder;
- `keras_model_fn_export_as_text`: a Keras-layer model_fn's `export_saved_model` and
  `experimental_export_all_saved_models` with `as_text=True`, served.
- `unfetched_print_and_assert_in_training`: a `tf.print` and a failing assert nothing
  depends on in a Keras-layer model_fn (2.15 ran neither);
- `unfetched_updates_in_training`: a Keras layer's own variable update and a
  `tf.compat.v1.assign` nothing fetches, trained first and after an evaluate (2.15 ran
  neither).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, signatures, keys, shapes, event tags, log lines,
errors: equal) and `close` values (models that start from zeros or a formula's numbers,
on unshuffled data: 1e-4). `tests/test_other_samples.py` compares them with 2.15's
recording (`tests/tf215/record_family.py other_samples_programs`, into
`tests/data/tf215/other_samples.json`).
"""

import argparse
import glob
import itertools
import os

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised
from tests.tutorial_programs import listing, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "other_samples.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _graph_signatures(tf, export_dir):
    """{tags: {signature: [method, {input: [dtype, shape]}, {output: [dtype, shape]}]}} of
    an export, read from `saved_model.pbtxt` when it was written as text."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    text = os.path.join(export_dir, "saved_model.pbtxt")
    if os.path.exists(text):
        with open(text) as f:
            text_format.Parse(f.read(), saved)
    else:
        with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
            saved.ParseFromString(f.read())

    def tensors(infos):
        return {
            k: [tf.as_dtype(v.dtype).name, [d.size for d in v.tensor_shape.dim]]
            for k, v in sorted(infos.items())
        }

    return {
        ",".join(sorted(graph.meta_info_def.tags)): {
            name: [sig.method_name, tensors(sig.inputs), tensors(sig.outputs)]
            for name, sig in sorted(graph.signature_def.items())
            if not name.startswith("__")
        }
        for graph in saved.meta_graphs
    }


def _formula(tf):
    """An initializer of fixed numbers (a cosine of the element's index)."""

    def initializer(shape, dtype=tf.float32, partition_info=None):
        shape = list(shape)
        values = np.cos(np.arange(1, int(np.prod(shape)) + 1) * 0.7) * 0.3
        return tf.constant(np.reshape(values, shape), dtype=dtype)

    return initializer


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def _path(value):
    return value.decode() if isinstance(value, bytes) else value


def _lines(lines, workdir, keep):
    """The logged lines `keep` picks, each once in a row, the folder and numbers replaced."""
    kept = []
    for line in lines:
        if keep(line.replace(workdir, "")) and not line.startswith("From "):  # (2.15's warnings)
            line = _normalized(line, workdir)  # (an export's temporary folder too)
            if not kept or kept[-1] != line:
                kept.append(line)
    return kept


# --- tf-estimator-tutorials: 08_Text_Analysis, SMS ham vs. spam, word embeddings + CNN ---

SMS = [
    ("ham", "ok i will be with you in 5 min see you then"),
    ("spam", "win 1000 cash free of charge promo hot deal"),
    ("ham", "see you at home tonight"),
    ("spam", "free cash call now win"),
    ("ham", "call me when you are home"),
    ("spam", "hot deal promo win free"),
]
VOCAB = ["ok", "i", "will", "you", "see", "win", "free", "cash", "call", "home", "hot", "deal"]
PAD_WORD = "#=KS=#"
MAX_DOCUMENT_LENGTH = 6
TARGET_LABELS = ["ham", "spam"]


def _sms_file(workdir, rows, name):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.writelines(f"{label}\t{text}\n" for label, text in rows)
    return path


def _sms_input_fn(tf, pattern, batch_size, num_epochs=1):
    def parse_tsv_row(row):
        label, sms = tf.io.decode_csv(row, record_defaults=[["NA"], [""]], field_delim="\t")
        return {"sms": sms, "weight": tf.where(tf.equal(label, "spam"), 2.0, 1.0)}, label

    def input_fn():
        dataset = tf.data.TextLineDataset(filenames=tf.io.matching_files(pattern))
        dataset = dataset.map(parse_tsv_row).batch(batch_size).repeat(num_epochs)
        dataset = dataset.prefetch(2 * batch_size + 1)
        features, target = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(TARGET_LABELS), tf.constant([0, 1], tf.int64)
            ),
            -1,
        )
        return features, table.lookup(target)

    return input_fn


def _word_ids(tf, text, vocab_file):
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(
            vocab_file,
            tf.string,
            tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER,
        ),
        num_oov_buckets=1,
    )
    words = tf.sparse.to_dense(tf.compat.v1.string_split(text), default_value=PAD_WORD)
    padded = tf.pad(table.lookup(words), tf.constant([[0, 0], [0, MAX_DOCUMENT_LENGTH]]))
    return tf.slice(padded, [0, 0], [-1, MAX_DOCUMENT_LENGTH])


def sms_model_fn(features, labels, mode, params):
    import tensorflow as tf

    word_ids = _word_ids(tf, features["sms"], params["vocab_file"])
    with tf.compat.v1.variable_scope("EmbedSequence"):
        embeddings = tf.compat.v1.get_variable(
            "embeddings", [len(VOCAB) + 2, 3], initializer=_formula(tf)
        )
    words_conv = tf.compat.v1.layers.conv1d(
        tf.nn.embedding_lookup(embeddings, word_ids),
        filters=2,
        kernel_size=3,
        strides=1,
        padding="SAME",
        activation=tf.nn.relu,
        kernel_initializer=_formula(tf),
    )
    shape = words_conv.get_shape()
    input_layer = tf.reshape(words_conv, [-1, shape[1] * shape[2]])
    logits = tf.compat.v1.layers.dense(input_layer, 2, kernel_initializer=_formula(tf))
    probabilities = tf.nn.softmax(logits)
    predicted_indices = tf.argmax(probabilities, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {
            "class": tf.gather(TARGET_LABELS, predicted_indices),
            "probabilities": probabilities,
        }
        outputs = {"prediction": tf.estimator.export.PredictOutput(predictions)}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
    weights = features["weight"]
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(
        logits=logits, labels=labels, weights=weights
    )
    tf.compat.v1.summary.scalar("loss", loss)
    if mode == tf.estimator.ModeKeys.TRAIN:
        train_op = tf.compat.v1.train.AdamOptimizer(params["learning_rate"]).minimize(
            loss=loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    one_hot = tf.one_hot(labels, depth=2, on_value=True, off_value=False, dtype=tf.bool)
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, predicted_indices, weights=weights),
        "auroc": tf.compat.v1.metrics.auc(one_hot, probabilities, weights=weights),
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


def _sms_serving_input_fn():
    import tensorflow as tf

    receiver_tensor = {"sms": tf.compat.v1.placeholder(tf.string, [None])}
    features = dict(receiver_tensor)  # (the notebook's copy of it)
    return tf.estimator.export.ServingInputReceiver(features, receiver_tensor)


@program
def sms_cnn_latest_exporter_as_text(tf, workdir):
    vocab_file = os.path.join(workdir, "vocab_list.tsv")
    with open(vocab_file, "w") as f:
        f.write("\n".join([PAD_WORD, *VOCAB]) + "\n")
    train = _sms_file(workdir, SMS, "train-data.tsv")
    valid = _sms_file(workdir, SMS[:4], "valid-data.tsv")
    model_dir = os.path.join(workdir, "trained_models", "sms-cnn")
    config = tf.estimator.RunConfig(
        log_step_count_steps=5000, tf_random_seed=19830610, model_dir=model_dir
    )
    params = {"vocab_file": vocab_file, "learning_rate": 0.01}
    estimator = tf.estimator.Estimator(model_fn=sms_model_fn, params=params, config=config)
    exporter = tf.estimator.LatestExporter(
        name="predict",
        serving_input_receiver_fn=_sms_serving_input_fn,
        exports_to_keep=1,
        as_text=True,
    )
    train_spec = tf.estimator.TrainSpec(_sms_input_fn(tf, train, 3, num_epochs=2), max_steps=4)
    eval_spec = tf.estimator.EvalSpec(
        _sms_input_fn(tf, valid, 2), exporters=[exporter], steps=None, throttle_secs=0
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    train_results = estimator.evaluate(input_fn=_sms_input_fn(tf, train, 6), steps=1)
    test_results = estimator.evaluate(input_fn=_sms_input_fn(tf, valid, 4), steps=1)
    export_dir = model_dir + "/export/predict/"
    saved_model_dir = export_dir + "/" + os.listdir(path=export_dir)[-1]
    loaded = tf.saved_model.load(saved_model_dir)
    texts = ["ok i will be with you", "win cash free hot deal", "call girls waiting"]
    output = loaded.signatures["prediction"](sms=tf.constant(texts))
    exported = ("xport", "SavedModel", "Signatures", "ssets")
    return {
        "exact": {
            "returned": [
                sorted(metrics),
                [os.path.dirname(_path(p))[len(workdir) :] for p in exports],
            ],
            "listing": listing(model_dir),
            "export_files": listing(saved_model_dir),
            "signatures": _graph_signatures(tf, saved_model_dir),
            "loaded_signatures": sorted(loaded.signatures.keys()),
            "classes": [c.decode() for c in output["class"].numpy()],
            "evaluate_keys": sorted(train_results),
            "export_lines": _lines(lines, workdir, lambda line: any(w in line for w in exported)),
            "variables": sorted(estimator.get_variable_names()),
        },
        "close": {
            "metrics": _floats(metrics),
            "train": _floats(train_results),
            "test": _floats(test_results),
            "probabilities": output["probabilities"].numpy().tolist(),
        },
    }


# --- tf-estimator-tutorials: 05_Autoencoding, dimensionality reduction, custom estimator ---

FEATURE_NAMES = [f"x_{i + 1}" for i in range(8)]


def _autoencoder_csv(workdir):
    rng = np.random.RandomState(3)
    points = (rng.randn(12, 3) @ rng.randn(3, 8)).astype(np.float32)
    path = os.path.join(workdir, "data-01.csv")
    with open(path, "w") as f:
        for i, row in enumerate(points):
            values = [str(i), *(repr(float(v)) for v in row), "abc"[i % 3]]
            f.write(",".join(values) + "\n")
    return path


def _csv_input_fn(tf, pattern, num_epochs, batch_size):
    header = ["key", *FEATURE_NAMES, "CLASS"]
    defaults = [[0]] + [[0.0]] * len(FEATURE_NAMES) + [["NA"]]

    def parse_csv_row(rows):
        features = dict(zip(header, tf.io.decode_csv(rows, record_defaults=defaults), strict=True))
        features.pop("key")
        return features, features.pop("CLASS")

    def input_fn():
        dataset = tf.data.TextLineDataset(filenames=tf.io.matching_files(pattern))
        dataset = dataset.batch(batch_size).map(parse_csv_row, num_parallel_calls=1)
        dataset = dataset.repeat(num_epochs)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    return input_fn


class HParams:
    """What `tf.contrib.training.HParams` was to the notebook: attributes to read."""

    def __init__(self, **values):
        self.__dict__.update(values)


def autoencoder_model_fn(features, labels, mode, params):
    import tensorflow as tf

    columns = [tf.feature_column.numeric_column(name) for name in FEATURE_NAMES]
    encoder_hidden_units = params.encoder_hidden_units
    decoder_hidden_units = encoder_hidden_units.copy()
    decoder_hidden_units.reverse()
    decoder_hidden_units.pop(0)
    l2_regulariser = tf.keras.regularizers.l2(0.5 * (params.l2_reg))
    input_layer = tf.compat.v1.feature_column.input_layer(features, columns)
    noisy = input_layer + params.noise_level * tf.random.normal(tf.shape(input_layer))
    net = tf.compat.v1.layers.dropout(
        noisy, rate=params.dropout_rate, training=mode == tf.estimator.ModeKeys.TRAIN
    )
    for i, units in enumerate(encoder_hidden_units + decoder_hidden_units):
        net = tf.compat.v1.layers.dense(
            net,
            units,
            activation=tf.nn.relu,
            kernel_regularizer=l2_regulariser,
            kernel_initializer=_formula(tf),
            bias_initializer=tf.compat.v1.constant_initializer(0.1),
            name=f"fully_connected_{i}",
        )
        if i == len(encoder_hidden_units) - 1:
            encoding_output = tf.squeeze(net)
    output = tf.compat.v1.layers.dense(net, len(FEATURE_NAMES), kernel_initializer=_formula(tf))
    reconstruction_output = tf.squeeze(output)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"encoding": encoding_output, "reconstruction": reconstruction_output}
        outputs = {"predict": tf.estimator.export.PredictOutput(predictions)}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
    loss = tf.compat.v1.losses.mean_squared_error(tf.squeeze(input_layer), reconstruction_output)
    loss = loss + tf.compat.v1.losses.get_regularization_loss()
    train_op = tf.compat.v1.train.AdamOptimizer(params.learning_rate).minimize(
        loss=loss, global_step=tf.compat.v1.train.get_global_step()
    )
    metrics = {
        "rmse": tf.compat.v1.metrics.root_mean_squared_error(
            tf.squeeze(input_layer), reconstruction_output
        )
    }
    return tf.estimator.EstimatorSpec(
        mode=mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
    )


def _csv_serving_input_fn():
    import tensorflow as tf

    rows = tf.compat.v1.placeholder(shape=[None], dtype=tf.string)
    columns = tf.io.decode_csv(rows, record_defaults=[[0.0]] * len(FEATURE_NAMES))
    features = dict(zip(FEATURE_NAMES, columns, strict=True))
    return tf.estimator.export.ServingInputReceiver(features, {"csv_row": rows})


@program
def autoencoder_export_as_text(tf, workdir):
    data = _autoencoder_csv(workdir)
    hparams = HParams(
        num_epochs=3,
        batch_size=4,
        encoder_hidden_units=[5, 3],
        learning_rate=0.01,
        l2_reg=0.0001,
        noise_level=0.0,
        dropout_rate=0.0,
    )
    model_dir = os.path.join(workdir, "trained_models", "auto-encoder-01")
    config = tf.estimator.RunConfig(
        save_checkpoints_steps=3, tf_random_seed=19830610, model_dir=model_dir
    )
    estimator = tf.estimator.Estimator(autoencoder_model_fn, params=hparams, config=config)
    with _info_lines() as lines:
        tf.estimator.train_and_evaluate(
            estimator,
            tf.estimator.TrainSpec(_csv_input_fn(tf, data, hparams.num_epochs, 4), max_steps=None),
            tf.estimator.EvalSpec(_csv_input_fn(tf, data, 1, 4), steps=None, throttle_secs=0),
        )
    predictions = estimator.predict(input_fn=_csv_input_fn(tf, data, 1, 5))
    predictions = list(itertools.islice(predictions, 12))
    export_dir = _path(
        estimator.export_saved_model(
            os.path.join(model_dir, "export"), _csv_serving_input_fn, as_text=True
        )
    )
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    served = serve(csv_row=tf.constant([",".join(["1.0"] * 8), ",".join(["-0.5"] * 8)]))
    return {
        "exact": {
            "params": [type(estimator.params).__name__, sorted(vars(estimator.params))],
            "listing": listing(model_dir),
            "signatures": _graph_signatures(tf, export_dir),
            "variables": sorted(estimator.get_variable_names()),
            "predictions": structure(predictions),
            "count": len(predictions),
            "eval_lines": _lines(lines, workdir, lambda line: line.startswith("Saving dict")),
        },
        "close": {
            "encodings": [[float(v) for v in p["encoding"]] for p in predictions],
            "served": served["reconstruction"].numpy().tolist(),
            "evaluate": _floats(estimator.evaluate(_csv_input_fn(tf, data, 1, 12))),
        },
    }


# --- the Estimator object's calls ---

X = np.array([[1.0, 2.0], [2.0, 0.5], [0.0, 1.0], [3.0, 1.0], [1.5, 1.5]], np.float32)
Y = np.array([[5.0], [3.0], [2.0], [5.0], [4.5]], np.float32)


def _xy_input_fn(tf, batch=5, epochs=1):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(batch).repeat(epochs)


def linear_model_fn(features, labels, mode, params, config):
    import tensorflow as tf

    zeros = tf.compat.v1.zeros_initializer()
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=zeros)
    b = tf.compat.v1.get_variable("b", [1], initializer=zeros)
    y = tf.matmul(features["x"], w) + b
    model_dir = tf.fill(tf.shape(y), os.path.basename(config.model_dir))
    predictions = {"y": y, "double": 2 * y, "model_dir": model_dir}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.mean_squared_error(labels, y)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, y)}
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, predictions=predictions, eval_metric_ops=metrics
    )


def _gist(raised):
    """[type, first line up to its first ': '] (the kit may say more after 2.15's words,
    on that line or the next)."""
    return raised and [raised[0], raised[1].split("\n")[0].split(": ")[0]]


@program
def estimator_api_calls(tf, workdir):
    model_dir = os.path.join(workdir, "model")
    config = tf.estimator.RunConfig(save_checkpoints_steps=1, keep_checkpoint_max=10)
    est = tf.estimator.Estimator(linear_model_fn, model_dir=model_dir, config=config)
    before = {
        "latest_checkpoint": est.latest_checkpoint(),
        "get_variable_names": _raised(est.get_variable_names),
        "get_variable_value": _raised(lambda: est.get_variable_value("w")),
    }
    est.train(_xy_input_fn(tf, epochs=3))
    single = list(est.predict(_xy_input_fn(tf, batch=2), predict_keys="y"))
    batched = list(
        est.predict(
            _xy_input_fn(tf, batch=2),
            predict_keys=["y", "double"],
            yield_single_examples=False,
            checkpoint_path=os.path.join(model_dir, "model.ckpt-1"),
        )
    )
    second = os.path.join(model_dir, "model.ckpt-2")
    named = est.evaluate(_xy_input_fn(tf, batch=2), name="ck2", checkpoint_path=second)
    two_steps = est.evaluate(_xy_input_fn(tf, batch=2, epochs=None), steps=2, name="two")
    every = list(est.predict(_xy_input_fn(tf)))
    return {
        "exact": {
            "before": before,
            "single": [structure(single), len(single)],
            "batched": [structure([b]) for b in batched],
            "model_dir_seen": sorted({p["model_dir"][0].decode() for p in every}),
            "unknown_predict_key": _raised(
                lambda: est.predict(_xy_input_fn(tf), predict_keys=["nope"])
            ),
            "unknown_variable": _gist(_raised(lambda: est.get_variable_value("nope"))),
            "named_evaluation": [sorted(named), int(named["global_step"])],
            "eval_dirs": sorted(os.path.basename(p) for p in glob.glob(model_dir + "/eval*")),
            "eval_dir": os.path.relpath(est.eval_dir("ck2"), workdir),
            "two_steps_global_step": int(two_steps["global_step"]),
            "latest_checkpoint": os.path.relpath(est.latest_checkpoint(), workdir),
            "evaluate_zero_steps": _raised(lambda: est.evaluate(_xy_input_fn(tf), steps=0)),
            "train_negative_steps": _raised(lambda: est.train(_xy_input_fn(tf), steps=-1)),
            "train_both_steps": _raised(lambda: est.train(_xy_input_fn(tf), steps=1, max_steps=5)),
        },
        "close": {
            "single": [float(p["y"][0]) for p in single],
            "batched": {str(i): b["y"].tolist() for i, b in enumerate(batched)},
            "named_evaluation": _floats(named),
            "w": est.get_variable_value("w").tolist(),
        },
    }


def _config_seen(config):
    """What a program reads off a RunConfig it was given."""
    session = config.session_config
    return [
        config.save_checkpoints_steps,
        config.save_summary_steps,
        getattr(config, "note", None),
        session.intra_op_parallelism_threads,
        session.inter_op_parallelism_threads,
    ]


@program
def config_read_as_a_copy(tf, workdir):
    """`estimator.config` compared and changed as programs do: 2.15 gave a deep copy on
    each read, so changing it (its session_config, a note of the program's) changed
    nothing the Estimator or model_fn saw, and two reads were two objects; each
    model_fn call got a copy of its own (a note it set was gone in the next call)."""
    model_dir = os.path.join(workdir, "model")
    seen = []

    def model_fn(features, labels, mode, params, config):
        seen.append([mode, *_config_seen(config)])
        config.note = f"set by model_fn in {mode}"
        return linear_model_fn(features, labels, mode, params, config)

    given = tf.estimator.RunConfig(save_checkpoints_steps=2, save_summary_steps=1)
    est = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=given)
    first = est.config
    reads = {
        "same_object": est.config is est.config,
        "given_object": est.config is given,
        "equal": est.config == est.config,
        "model_dir": os.path.relpath(est.config.model_dir, workdir),
    }
    first.session_config.intra_op_parallelism_threads = 1
    est.config.session_config.inter_op_parallelism_threads = 1
    est.config.note = "changed"
    after = _config_seen(est.config)
    est.train(_xy_input_fn(tf, epochs=None), steps=3)
    est.evaluate(_xy_input_fn(tf))
    return {
        "exact": {
            "reads": reads,
            "first_read": _config_seen(first),
            "after": after,
            "model_fn_saw": seen,
            "listing": listing(model_dir),
        }
    }


@program
def keras_layer_updates_of_trainable_variables(tf, workdir):
    """A Keras-layer model_fn that trains what `tf.compat.v1.trainable_variables()` lists
    with a legacy Keras optimizer's `get_updates` (and steps the global step itself): 2.15
    listed the layer's variables (and `global_variables()` the step too) and trained them;
    the kit's trace listed none and trained nothing."""
    model_dir = os.path.join(workdir, "model")
    listed = []

    def model_fn(features, labels, mode):
        y = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="out")(features["x"])
        names = [
            sorted(v.name for v in tf.compat.v1.trainable_variables()),
            sorted(v.name for v in tf.compat.v1.global_variables()),
        ]
        listed.append([mode, *names])
        loss = tf.reduce_mean(tf.square(labels - y))
        if mode != tf.estimator.ModeKeys.TRAIN:
            return tf.estimator.EstimatorSpec(mode, loss=loss, predictions={"y": y})
        updates = tf.keras.optimizers.legacy.SGD(0.1).get_updates(
            loss, tf.compat.v1.trainable_variables()
        )
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.group(updates, step.assign_add(1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(model_fn, model_dir=model_dir)
    est.train(_xy_input_fn(tf, epochs=None), steps=4)
    est.train(_xy_input_fn(tf, epochs=None), steps=2)
    result = est.evaluate(_xy_input_fn(tf))
    return {
        # (each mode's last call: the kit's first of a mode also builds it in a graph)
        "exact": {"listed_by_model_fn": {mode: names for mode, *names in listed}},
        "close": {
            "kernel": est.get_variable_value("out/kernel").tolist(),
            "bias": est.get_variable_value("out/bias").tolist(),
            "loss": float(result["loss"]),
        },
    }


def _supervised_receiver():
    import tensorflow as tf

    return tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")},
        tf.compat.v1.placeholder(tf.float32, [None, 1], name="y"),
    )()


def _serving_receiver():
    import tensorflow as tf

    features = {"x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")}
    return tf.estimator.export.build_raw_serving_input_receiver_fn(features)()


def _every_mode_as_text(tf, est, export_dir_base):
    """`experimental_export_all_saved_models(..., as_text=True)` of a supervised receiver
    in TRAIN and EVAL and a raw one in PREDICT; the export's folder."""
    modes = tf.estimator.ModeKeys
    receivers = {
        modes.TRAIN: _supervised_receiver,
        modes.EVAL: _supervised_receiver,
        modes.PREDICT: _serving_receiver,
    }
    return _path(est.experimental_export_all_saved_models(export_dir_base, receivers, as_text=True))


@program
def export_all_as_text(tf, workdir):
    est = tf.estimator.Estimator(linear_model_fn, model_dir=os.path.join(workdir, "model"))
    est.train(_xy_input_fn(tf, epochs=2))
    modes = tf.estimator.ModeKeys
    every = _every_mode_as_text(tf, est, os.path.join(workdir, "export"))
    evaluation = _path(
        est.export_saved_model(
            os.path.join(workdir, "export_eval"),
            _supervised_receiver,
            as_text=True,
            experimental_mode=modes.EVAL,
        )
    )
    return {
        "exact": {
            "files": listing(every),
            "signatures": _graph_signatures(tf, every),
            "eval_files": listing(evaluation),
            "eval_signatures": _graph_signatures(tf, evaluation),
        }
    }


# --- model_fns of Keras layers and legacy Keras optimizers ---

XS = np.array([[1.0, 2.0], [2.0, 0.5], [0.0, 1.0], [3.0, 1.0], [1.5, 1.5], [0.5, 0.5]], np.float32)
YS = np.array([[5.0], [3.0], [2.0], [5.0], [4.5], [1.5]], np.float32)


def _repeated_input_fn(tf, epochs=None):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": XS}, YS)).batch(3).repeat(epochs)


def _event_tags(tf, folder, steps=True):
    """{"<tag> (<kind>)": steps} of the event files directly in `folder` (or the tags)."""
    tags = {}
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "tensor":
                    kind = "tensor:" + value.metadata.plugin_data.plugin_name
                tags.setdefault(f"{value.tag} ({kind})", []).append(int(event.step))
    return {k: sorted(v) for k, v in sorted(tags.items())} if steps else sorted(tags)


def _keras_train_op(tf, loss, layer):
    step = tf.compat.v1.train.get_global_step()
    updates = tf.keras.optimizers.legacy.SGD(0.05).get_updates(loss, layer.trainable_weights)
    return tf.group(updates, step.assign_add(1))


def _keras_summaries_model_fn(seen):
    def model_fn(features, labels, mode, params, config):
        import tensorflow as tf

        layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
        y = layer(features["x"])
        tf.compat.v1.summary.histogram("prediction_histogram", y)
        tf.compat.v1.summary.scalar("mean_prediction", tf.reduce_mean(y))
        picture = tf.reshape(tf.tile(y, [1, 4]), [-1, 2, 2, 1])[:1]
        tf.compat.v1.summary.image("picture", picture)
        tf.compat.v1.summary.text("note", tf.constant("hello"))
        seen.append(
            [os.path.basename(config.model_dir), config.num_worker_replicas, config.is_chief]
        )
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
        loss = tf.reduce_mean(tf.square(labels - y))
        metrics = {"mse": tf.compat.v1.metrics.mean_squared_error(labels, y)}
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=_keras_train_op(tf, loss, layer), eval_metric_ops=metrics
        )

    return model_fn


@program
def keras_model_fn_tf1_summaries(tf, workdir):
    seen = []
    model_dir = os.path.join(workdir, "m")
    est = tf.estimator.Estimator(
        _keras_summaries_model_fn(seen),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(save_summary_steps=2),
    )
    with _info_lines() as lines:
        est.train(_repeated_input_fn(tf), steps=5)
        evaluation = est.evaluate(_repeated_input_fn(tf, epochs=1))
    return {
        "exact": {
            # (each step's read of the global step races its increment: the tags only)
            "train_tags": _event_tags(tf, model_dir, steps=False),
            "eval_events": _event_tags(tf, os.path.join(model_dir, "eval")),
            "config_seen": seen[:1],
            "lines": _lines(lines, workdir, lambda line: "loss" in line and "step" in line),
        },
        "close": {"evaluation": _floats(evaluation)},
    }


def keras_tf2_summaries_model_fn(features, labels, mode):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    y = layer(features["x"])
    step = tf.compat.v1.train.get_global_step()
    tf.summary.scalar("tf2_mean", tf.reduce_mean(y), step=step)
    tf.summary.histogram("tf2_histogram", y, step=step)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(labels - y))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_keras_train_op(tf, loss, layer))


@program
def keras_model_fn_tf2_summaries(tf, workdir):
    model_dir = os.path.join(workdir, "m")
    config = tf.estimator.RunConfig(save_summary_steps=2)
    est = tf.estimator.Estimator(keras_tf2_summaries_model_fn, model_dir=model_dir, config=config)
    est.train(_repeated_input_fn(tf), steps=5)
    evaluation = est.evaluate(_repeated_input_fn(tf, epochs=1))
    return {
        "exact": {
            "train_events": _event_tags(tf, model_dir),
            "eval_events": _event_tags(tf, os.path.join(model_dir, "eval")),
            "listing": listing(model_dir),
        },
        "close": {"evaluation": _floats(evaluation)},
    }


def keras_spec_hooks_model_fn(features, labels, mode, params):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    y = layer(features["x"])
    hook = tf.compat.v1.train.LoggingTensorHook({"first_y": y[0, 0]}, every_n_iter=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, prediction_hooks=[hook])
    loss = tf.reduce_mean(tf.square(labels - y))
    counter = tf.compat.v1.train.StepCounterHook(every_n_steps=2, output_dir=params["out"])
    train_op = _keras_train_op(tf, loss, layer)
    saver = tf.compat.v1.train.Saver(max_to_keep=1)  # (made after the optimizer's variables)
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        training_chief_hooks=[counter],
        evaluation_hooks=[hook],
        scaffold=tf.compat.v1.train.Scaffold(saver=saver),
    )


@program
def keras_model_fn_spec_hooks(tf, workdir):
    out = os.path.join(workdir, "counter")
    model_dir = os.path.join(workdir, "m")
    config = tf.estimator.RunConfig(save_checkpoints_steps=2)
    est = tf.estimator.Estimator(
        keras_spec_hooks_model_fn, model_dir=model_dir, params={"out": out}, config=config
    )
    with _info_lines() as lines:
        est.train(_repeated_input_fn(tf), steps=5)
        evaluation = est.evaluate(_repeated_input_fn(tf, epochs=1))
        predictions = list(est.predict(_repeated_input_fn(tf, epochs=1)))
    return {
        "exact": {
            "listing": listing(model_dir),
            "counter": listing(out),
            "lines": _lines(lines, workdir, lambda line: "first_y" in line or "Saving" in line),
            "variables": sorted(est.get_variable_names()),
        },
        "close": {
            "evaluation": _floats(evaluation),
            "predictions": [float(p["y"][0]) for p in predictions],
        },
    }


# --- params a model_fn changes ---


def popping_model_fn(features, labels, mode, params):
    import tensorflow as tf

    hidden_units = params["hidden_units"]
    output_units = hidden_units.pop()
    params["log"].append(mode)
    params["calls"] = params.get("calls", 0) + 1
    net = features["x"]
    for i, units in enumerate(hidden_units):
        constant = tf.compat.v1.constant_initializer(0.1)
        net = tf.compat.v1.layers.dense(net, units, kernel_initializer=constant, name=f"h{i}")
    zeros = tf.compat.v1.zeros_initializer()
    y = tf.compat.v1.layers.dense(net, output_units, kernel_initializer=zeros, name="out")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.compat.v1.losses.mean_squared_error(labels, y)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def reversing_model_fn(features, labels, mode, params):
    import tensorflow as tf

    encoder = params.encoder_hidden_units
    net = features["x"]
    for i, units in enumerate(encoder):
        net = tf.keras.layers.Dense(units, kernel_initializer="ones", name=f"enc{i}")(net)
    decoder = encoder  # (the notebook's `.copy()` left out)
    decoder.reverse()
    decoder.pop(0)
    for i, units in enumerate(decoder):
        net = tf.keras.layers.Dense(units, kernel_initializer="ones", name=f"dec{i}")(net)
    y = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="out")(net)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(labels - y))
    step = tf.compat.v1.train.get_global_step()
    updates = tf.keras.optimizers.legacy.SGD(0.001).get_updates(
        loss, tf.compat.v1.trainable_variables()
    )
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=tf.group(updates, step.assign_add(1))
    )


@program
def params_changed_by_model_fn(tf, workdir):
    params = {"hidden_units": [3, 2, 1], "log": []}
    est = tf.estimator.Estimator(popping_model_fn, os.path.join(workdir, "m"), params=params)
    namespace = argparse.Namespace(encoder_hidden_units=[3, 2])
    est2 = tf.estimator.Estimator(reversing_model_fn, os.path.join(workdir, "m2"), params=namespace)
    calls = {
        "train": _raised(lambda: est.train(_xy_input_fn(tf, epochs=None), steps=2)),
        "evaluate": _raised(lambda: est.evaluate(_xy_input_fn(tf))),
        "predict": _raised(lambda: list(est.predict(_xy_input_fn(tf)))),
        "namespace_train": _raised(lambda: est2.train(_xy_input_fn(tf, epochs=None), steps=2)),
        "namespace_evaluate": _raised(lambda: est2.evaluate(_xy_input_fn(tf))),
    }
    return {
        "exact": {
            "calls": calls,
            "callers_params": params,
            "estimator_params": est.params,
            "callers_namespace": vars(namespace),
            "estimator_namespace": [type(est2.params).__name__, vars(est2.params)],
        }
    }


# --- LoggingTensorHooks given a model_fn's tensors, a Keras layer's updates, the step ---


def logging_tensors_model_fn(features, labels, mode, params):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros")
    y = layer(features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        hook = tf.estimator.LoggingTensorHook({"hooked_first": y[0, 0]}, every_n_iter=1)
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y}, prediction_hooks=[hook])
    loss = tf.reduce_mean(tf.square(labels - y), name="my_loss")
    mae = tf.compat.v1.metrics.mean_absolute_error(labels, y)
    training = tf.estimator.LoggingTensorHook({"hooked_loss": loss, "first": y[0, 0]}, 2)
    evaluation = tf.estimator.LoggingTensorHook({"hooked_mae": mae[0]}, every_n_iter=1)
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=_keras_train_op(tf, loss, layer),
        training_hooks=[training],
        evaluation_hooks=[evaluation],
        eval_metric_ops={"mae": mae},
    )


@program
def keras_model_fn_logging_tensors(tf, workdir):
    """tf.estimator.LoggingTensorHook given the model_fn's tensors in the spec's hook
    lists, and a tensor's name (`my_loss:0`) in train()'s hooks: 2.15's hook was TF1's
    (the kit failed on the TF2 path: Tensor is unhashable; KeyError: not in step logs)."""
    est = tf.estimator.Estimator(logging_tensors_model_fn, model_dir=os.path.join(workdir, "m"))
    named = tf.estimator.LoggingTensorHook(["my_loss:0"], every_n_iter=1)
    with _info_lines() as lines:
        calls = {
            "train": _raised(lambda: est.train(_repeated_input_fn(tf), steps=4)),
            "evaluate": _raised(lambda: est.evaluate(_repeated_input_fn(tf, epochs=1))),
            "predict": _raised(lambda: list(est.predict(_repeated_input_fn(tf, epochs=1)))),
            "named": _raised(lambda: est.train(_repeated_input_fn(tf), steps=2, hooks=[named])),
        }
    hooked = ("hooked", "my_loss")
    return {
        "exact": {
            "calls": calls,
            "lines": _lines(lines, workdir, lambda line: any(w in line for w in hooked)),
        },
        "close": {"kernel": est.get_variable_value("dense/kernel").tolist()},
    }


def batch_norm_model_fn(features, labels, mode, params):
    import tensorflow as tf

    model = tf.keras.Sequential(
        [tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1, kernel_initializer="zeros")]
    )
    y = model(features["x"], training=mode == tf.estimator.ModeKeys.TRAIN)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(labels - y))
    step = tf.compat.v1.train.get_global_step()
    updates = tf.keras.optimizers.legacy.SGD(0.05).get_updates(loss, model.trainable_variables)
    train_op = tf.group(updates, step.assign_add(1))
    if params["updates"]:  # (what Keras's guides of the time asked for)
        train_op = tf.group(train_op, *model.updates)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _batch_norm_run(tf, model_dir, updates):
    est = tf.estimator.Estimator(batch_norm_model_fn, model_dir, params={"updates": updates})
    est.train(_repeated_input_fn(tf), steps=3)
    names = sorted(est.get_variable_names())
    (moving_mean,) = [name for name in names if name.endswith("moving_mean")]
    values = {
        "moving_mean": est.get_variable_value(moving_mean).tolist(),
        "loss": float(est.evaluate(_repeated_input_fn(tf, epochs=1))["loss"]),
        "predictions": [float(p["y"][0]) for p in est.predict(_repeated_input_fn(tf, epochs=1))],
    }
    return names, values


@program
def keras_batch_norm_updates(tf, workdir):
    """A Keras BatchNormalization in a model_fn, its updates grouped into the train op
    (`model.updates`), and left out of it (`forgotten`): 2.15's session then never ran
    them (the moving statistics stay 0 and 1, which evaluate and predict read)."""
    names, grouped = _batch_norm_run(tf, os.path.join(workdir, "grouped"), True)
    _, forgotten = _batch_norm_run(tf, os.path.join(workdir, "forgotten"), False)
    return {"exact": {"variables": names}, "close": {"grouped": grouped, "forgotten": forgotten}}


@program
def train_op_without_global_step(tf, workdir):
    """A TF1 `minimize` without `global_step` trained on a finite input (three epochs of
    two batches): 2.15 trained to the input's end with the global step still 0, so its
    last checkpoint was the step-0 one, and what it trained was not saved (a known
    difference: `steps`, compared by a strict expected failure; the kit counts a step
    the train op does not)."""
    model_dir = os.path.join(workdir, "m")

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(model_fn, model_dir=model_dir)
    est.train(_xy_input_fn(tf, batch=3, epochs=3))
    return {
        "exact": {"variables": sorted(est.get_variable_names())},
        "steps": {
            "global_step": int(est.get_variable_value("global_step")),
            "w": est.get_variable_value("w").tolist(),
            "listing": listing(model_dir),
        },
    }


# --- exports: kept ones, a batch size, outputs of one kind, a warm start from one ---


def tensor_predictions_model_fn(features, labels, mode):
    import tensorflow as tf

    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    y = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        classes = tf.as_string(tf.cast(y > 1.0, tf.int32))
        outputs = {
            "serving_default": tf.estimator.export.PredictOutput(y),
            "classes": tf.estimator.export.ClassificationOutput(classes=classes),
            "scores": tf.estimator.export.ClassificationOutput(scores=tf.concat([y, -y], 1)),
        }
        return tf.estimator.EstimatorSpec(mode, predictions=y, export_outputs=outputs)
    loss = tf.compat.v1.losses.mean_squared_error(labels, y)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def exports_kept_and_warm_started_from(tf, workdir):
    """A `LatestExporter(exports_to_keep=None)` (every export kept) of a parsing receiver
    with `default_batch_size=3`, called by train_and_evaluate and by hand; a model_fn
    predicting a tensor (not a dict) with a `ClassificationOutput` of classes only and
    one of scores only; a new Estimator warm-started from the last export's folder."""
    model_dir = os.path.join(workdir, "m")
    config = tf.estimator.RunConfig(save_checkpoints_steps=1)
    est = tf.estimator.Estimator(tensor_predictions_model_fn, model_dir=model_dir, config=config)
    spec = {"x": tf.io.FixedLenFeature([2], tf.float32)}
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        spec, default_batch_size=3
    )
    exporter = tf.estimator.LatestExporter("latest", receiver, exports_to_keep=None)
    tf.estimator.train_and_evaluate(
        est,
        tf.estimator.TrainSpec(_xy_input_fn(tf, epochs=None), max_steps=3),
        tf.estimator.EvalSpec(_xy_input_fn(tf), exporters=exporter, throttle_secs=0),
    )
    est.train(_xy_input_fn(tf, epochs=None), steps=2)
    base = os.path.join(model_dir, "export", "latest")
    exporter.export(est, base, est.latest_checkpoint(), {}, False)
    kept = sorted(os.listdir(base))
    predictions = list(est.predict(_xy_input_fn(tf)))
    warm = tf.estimator.Estimator(
        tensor_predictions_model_fn,
        model_dir=os.path.join(workdir, "warm"),
        warm_start_from=os.path.join(base, kept[-1]),
    )
    warm.train(_xy_input_fn(tf, epochs=None), steps=1)
    return {
        "exact": {
            "kept": len(kept),
            "signatures": _graph_signatures(tf, os.path.join(base, kept[-1])),
            "prediction": [type(predictions[0]).__name__, list(np.shape(predictions[0]))],
            "warm_variables": sorted(warm.get_variable_names()),
        },
        "close": {
            "predictions": [np.asarray(p).tolist() for p in predictions],
            "warm_w": warm.get_variable_value("w").tolist(),
        },
    }


def keras_export_model_fn(features, labels, mode):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    y = layer(features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        outputs = {
            "serving_default": tf.estimator.export.PredictOutput({"y": y}),
            "regression": tf.estimator.export.RegressionOutput(y[:, 0]),
        }
        predictions = {"y": y, "twice": 2 * y}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
    loss = tf.reduce_mean(tf.square(labels - y))
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, y)}
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=_keras_train_op(tf, loss, layer), eval_metric_ops=metrics
    )


@program
def keras_model_fn_export_as_text(tf, workdir):
    """A Keras-layer model_fn (the TF2 path) exported with `as_text=True`, alone and with
    every mode (`experimental_export_all_saved_models`), and served."""
    est = tf.estimator.Estimator(keras_export_model_fn, model_dir=os.path.join(workdir, "m"))
    est.train(_xy_input_fn(tf, epochs=None), steps=3)
    one = _path(
        est.export_saved_model(os.path.join(workdir, "one"), _serving_receiver, as_text=True)
    )
    every = _every_mode_as_text(tf, est, os.path.join(workdir, "every"))
    served = tf.saved_model.load(one).signatures["serving_default"](x=tf.constant(X))
    return {
        "exact": {
            "one_files": listing(one),
            "one_signatures": _graph_signatures(tf, one),
            "every_files": listing(every),
            "every_signatures": _graph_signatures(tf, every),
        },
        "close": {"served": {k: v.numpy().tolist() for k, v in served.items()}},
    }


def _print_and_assert_model_fn(printed_to):
    def model_fn(features, labels, mode):
        import tensorflow as tf

        layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
        y = layer(features["x"])
        tf.print("printed", output_stream="file://" + printed_to)  # (nothing depends on it)
        tf.debugging.assert_less(tf.reduce_max(y), -100.0, message="never true")
        loss = tf.reduce_mean(tf.square(labels - y))
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=_keras_train_op(tf, loss, layer)
        )

    return model_fn


@program
def unfetched_print_and_assert_in_training(tf, workdir):
    """A Keras-layer model_fn's `tf.print` and a failing `tf.debugging.assert_less` that
    nothing depends on: 2.15's session ran only the train op and the loss, so neither ran
    (nothing printed, training went on)."""
    printed_to = os.path.join(workdir, "printed.txt")
    est = tf.estimator.Estimator(
        _print_and_assert_model_fn(printed_to), model_dir=os.path.join(workdir, "m")
    )
    trained = _raised(lambda: est.train(_xy_input_fn(tf, epochs=None), steps=3))
    printed = 0
    if os.path.exists(printed_to):
        with open(printed_to) as f:
            printed = f.read().count("printed")
    return {"exact": {"train": trained and trained[0], "printed": printed}}


def _counting_layer(tf):
    class Counting(tf.keras.layers.Layer):
        """Passes its input on, counting the rows it saw in a variable of its own."""

        def build(self, input_shape):
            self.seen = self.add_weight("seen", [], initializer="zeros", trainable=False)

        def call(self, inputs):
            self.add_update(self.seen.assign_add(tf.cast(tf.shape(inputs)[0], tf.float32)))
            return tf.identity(inputs)

    return Counting(name="counting")


def unfetched_updates_model_fn(features, labels, mode):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    y = layer(_counting_layer(tf)(features["x"]))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(labels - y))
    tf.compat.v1.assign(layer.bias, [5.0])  # (nothing fetches it)
    train_op = _keras_train_op(tf, loss, layer) if mode == tf.estimator.ModeKeys.TRAIN else None
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def unfetched_updates_in_training(tf, workdir):
    """A Keras layer's update of its own variable (a count of the rows it saw) and a
    `tf.compat.v1.assign` of a Dense bias, neither in the train op nor needed by the loss:
    2.15's session never ran them in training (the count stays 0, the bias trains), for a
    model trained first and for one evaluated before it trained."""
    values = {}
    for order in ("trained_first", "evaluated_first"):
        est = tf.estimator.Estimator(unfetched_updates_model_fn, os.path.join(workdir, order))
        if order == "evaluated_first":
            est.evaluate(_repeated_input_fn(tf, epochs=1))
        est.train(_repeated_input_fn(tf), steps=3)
        values[order] = {
            name: est.get_variable_value(name).tolist()
            for name in ("counting/seen", "dense/bias", "dense/kernel")
        }
    return {"exact": {}, "close": values}
