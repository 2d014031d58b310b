"""Programs shaped like Google Cloud's Estimator trainers that the other families leave
out, after `tf_upgrade_v2` and the hand edits its report asks for (`tf.contrib.lookup`'s
index tables as `tf.lookup.StaticHashTable`s, `tf.contrib.layers.optimize_loss` as the
compat.v1 optimizer it named), on tiny made-up data each program writes:

- `flowers_cnn`: training-data-analyst's 08_image `flowersmodel`: a CSV of JPEG file
  names read and decoded in the input_fn (`decode_jpeg`, `convert_image_dtype`,
  `compat.v1.image.resize_bilinear`, scaled to [-1, 1]), string labels looked up in a
  table, the cnn with batch normalization through `train_and_evaluate` (an `EvalSpec`
  given one exporter, not a list, and `steps=None`), a `LatestExporter` of a receiver
  taking one scalar JPEG string, predictions with a uint8 class id;
- `hybrid_recommendations`: 10_recommend's hybrid recommender (its TF Hub title column
  left out): hashed content ids and authors embedded, a vocabulary file's category with
  an OOV bucket crossed with bucketized months, WALS factors as numbers, a compat.v1
  `input_layer` DNN whose model_fn reads the content vocabulary, summarizes its metrics'
  update ops, returns accuracy, the mean of `in_top_k` and `average_precision_at_k`;
- `metric_named_loss`: the same model_fn with the eval metrics dict users write with a
  `"loss"` (or a `"global_step"`) of their own in it: 2.15 refused both;
- `molecules_regressor`: cloudml-samples' molecules trainer: a `DNNRegressor` with
  dropout over tf.Transform's outputs (TFRecords of normalized counts, faked here),
  `RunConfig().replace(...)`, `parallel_interleave`, `shuffle_and_repeat`, a stacked
  label, and a `FinalExporter` whose receiver transforms raw counts (the transform is a
  scaling here, as `transform_raw_features` would apply);
- `molecules_train_op_in_every_mode`: the regressor as TF2-era teams rewrote such
  trainers, a custom model_fn of Keras layers and a Keras optimizer's updates returning
  its train_op in every mode: evaluated before and after training, and predicted
  (2.15's session never ran that train_op outside training; the kit's TF2 path leaves
  it out of its eval and predict functions, components/estimator/pruning.py).

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_gcp_trainers.py` with what `tests/tf215/record_family.py
gcp_trainer_programs` recorded under tf.estimator 2.15 (`tests/data/tf215/
gcp_trainers.json`). The custom models start from a checkpoint of fixed numbers (a warm
start) and train on one full batch a step (the trainers' shuffle then only reorders a
mean), so the recommender's values match to 1e-4; the flowers cnn's Adam makes steps of
that reordering's rounding, and the molecules regressor's dropout draws at random, on
either side, so for them only what does not hang on those is compared.
"""

import glob
import os
import random
import re

import numpy as np

from tests.gcp_lab_programs import _fixed_start, _lab_lines
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tutorial_programs import DATA_DIR, listing

RECORDED = os.path.join(DATA_DIR, "gcp_trainers.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

_STEP_FILES = re.compile(r"model\.ckpt-\d+")


def _served(export_dir):
    """{signature: [method, {input: [dtype, shape]}, {output: [dtype, shape]}]}."""
    from tensorflow.core.framework import types_pb2
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())

    def described(tensors):
        return {
            key: [types_pb2.DataType.Name(t.dtype), [d.size for d in t.tensor_shape.dim]]
            for key, t in sorted(tensors.items())
        }

    (graph,) = [g for g in saved.meta_graphs if list(g.meta_info_def.tags) == ["serve"]]
    return {
        name: [sig.method_name, described(sig.inputs), described(sig.outputs)]
        for name, sig in sorted(graph.signature_def.items())
        if not name.startswith("__")
    }


def _eval_events(tf, eval_dir):
    """[[step, [tags in the order written]]] of the eval folder's summaries."""
    written = []
    for path in sorted(glob.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            if event.summary.value:
                written.append([int(event.step), [v.tag for v in event.summary.value]])
    return written


def _only_export(base):
    (export_dir,) = glob.glob(os.path.join(base, "*[0-9]"))
    return export_dir


def _variables(tf, model_dir):
    return {k: list(v) for k, v in tf.train.list_variables(model_dir)}


# ---------------------------------------------------------------- 08_image flowersmodel
FLOWERS = ["daisy", "dandelion", "roses", "sunflowers", "tulips"]
SIDE = 12  # HEIGHT and WIDTH (299 in the lab)


def flowers_decode(tf, image_bytes, label=None):
    """The lab's read_and_preprocess (augment off): JPEG to [-1, 1] floats, resized."""
    image = tf.image.decode_jpeg(contents=image_bytes, channels=3)
    image = tf.image.convert_image_dtype(image=image, dtype=tf.float32)
    image = tf.expand_dims(input=image, axis=0)
    image = tf.compat.v1.image.resize_bilinear(image, [SIDE, SIDE], align_corners=False)
    image = tf.squeeze(input=image, axis=0)
    image = tf.multiply(x=tf.subtract(x=image, y=0.5), y=2.0)
    return {"image": image}, label


def lab_batches(tf, dataset, mode, batch_size):
    """The labs' input_fn ending: shuffled and repeated to train, one epoch otherwise,
    batched, read by a one-shot iterator."""
    if mode == tf.estimator.ModeKeys.TRAIN:
        num_epochs = None
        dataset = dataset.shuffle(buffer_size=10 * batch_size)
    else:
        num_epochs = 1
    dataset = dataset.repeat(count=num_epochs).batch(batch_size=batch_size)
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def flowers_input(tf, csv_of_filenames, batch_size, mode):
    def _input_fn():
        def decode_csv(csv_row):
            filename, label = tf.io.decode_csv(records=csv_row, record_defaults=[[""], [""]])
            return tf.io.read_file(filename=filename), label

        dataset = tf.data.TextLineDataset(filenames=csv_of_filenames).map(map_func=decode_csv)
        dataset = dataset.map(map_func=lambda b, label: flowers_decode(tf, b, label))
        return lab_batches(tf, dataset, mode, batch_size)

    return _input_fn


def flowers_serving_input_fn(tf):
    """One image at a time: a scalar JPEG string."""
    placeholders = {"image_bytes": tf.compat.v1.placeholder(dtype=tf.string, shape=[])}
    image, _ = flowers_decode(tf, tf.squeeze(input=placeholders["image_bytes"]))
    image["image"] = tf.expand_dims(image["image"], axis=0)
    return tf.estimator.export.ServingInputReceiver(features=image, receiver_tensors=placeholders)


def flowers_cnn_model(tf, img, mode, hparams):
    layers, training = tf.compat.v1.layers, mode == tf.estimator.ModeKeys.TRAIN
    c1 = layers.conv2d(img, filters=hparams["nfil1"], kernel_size=3, padding="same")
    p1 = layers.max_pooling2d(tf.nn.relu(c1), pool_size=2, strides=2)
    c2 = layers.conv2d(p1, hparams["nfil2"], 3, padding="same", activation=tf.nn.relu)
    p2 = layers.max_pooling2d(inputs=c2, pool_size=2, strides=2)
    outlen = p2.shape[1] * p2.shape[2] * p2.shape[3]
    h3 = layers.dense(tf.reshape(tensor=p2, shape=[-1, outlen]), units=6, activation=None)
    h3 = tf.nn.relu(layers.batch_normalization(inputs=h3, training=training))
    h3d = layers.dropout(inputs=h3, rate=hparams["dprob"], training=training)
    ylogits = layers.dense(inputs=h3d, units=len(FLOWERS), activation=None)
    return layers.batch_normalization(inputs=ylogits, training=training)


def make_flowers_classifier(tf):
    def image_classifier(features, labels, mode, params):
        ylogits = flowers_cnn_model(tf, features["image"], mode, params)
        probabilities = tf.nn.softmax(logits=ylogits)
        class_int = tf.cast(x=tf.argmax(input=ylogits, axis=1), dtype=tf.uint8)
        class_str = tf.gather(params=FLOWERS, indices=tf.cast(x=class_int, dtype=tf.int32))
        loss = train_op = eval_metric_ops = None
        if mode in (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL):
            ids = tf.range(len(FLOWERS), dtype=tf.int64)
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant(FLOWERS), ids), -1
            )
            labels = table.lookup(labels)
            loss = tf.reduce_mean(
                input_tensor=tf.nn.softmax_cross_entropy_with_logits(
                    logits=ylogits, labels=tf.stop_gradient(tf.one_hot(labels, len(FLOWERS)))
                )
            )
            if mode == tf.estimator.ModeKeys.TRAIN:
                update_ops = tf.compat.v1.get_collection(key=tf.compat.v1.GraphKeys.UPDATE_OPS)
                with tf.control_dependencies(control_inputs=update_ops):
                    train_op = tf.compat.v1.train.AdamOptimizer(params["learning_rate"]).minimize(
                        loss, global_step=tf.compat.v1.train.get_global_step()
                    )
            else:
                eval_metric_ops = {
                    "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=class_int)
                }
        predictions = {"probabilities": probabilities, "classid": class_int, "class": class_str}
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs={"classes": tf.estimator.export.PredictOutput(predictions)},
        )

    return image_classifier


def write_flowers(tf, workdir, rows, name, seed):
    """JPEGs of noise a little brighter for each class, and the CSV naming them."""
    rng = np.random.RandomState(seed)
    lines = []
    for i in range(rows):
        pixels = rng.randint(0, 150, (SIDE + 4, SIDE + 4, 3)) + 20 * (i % len(FLOWERS))
        path = os.path.join(workdir, f"{name}{i}.jpg")
        tf.io.write_file(path, tf.io.encode_jpeg(pixels.astype(np.uint8)))
        lines.append(f"{path},{FLOWERS[i % len(FLOWERS)]}")
    csv = os.path.join(workdir, f"{name}.csv")
    with open(csv, "w") as f:
        f.write("\n".join(lines) + "\n")
    return csv


def _flowers_run(tf, workdir, hparams, model_fn, start):
    output_dir = os.path.join(workdir, "flowers_trained")
    tf.compat.v1.summary.FileWriterCache.clear()
    estimator = tf.estimator.Estimator(
        model_fn=model_fn,
        params=hparams,
        config=tf.estimator.RunConfig(save_checkpoints_secs=300),
        model_dir=output_dir,
        warm_start_from=start,
    )
    train_spec = tf.estimator.TrainSpec(
        input_fn=flowers_input(tf, hparams["train_data_path"], 10, tf.estimator.ModeKeys.TRAIN),
        max_steps=hparams["train_steps"],
    )
    exporter = tf.estimator.LatestExporter(
        name="exporter", serving_input_receiver_fn=lambda: flowers_serving_input_fn(tf)
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=flowers_input(tf, hparams["eval_data_path"], 4, tf.estimator.ModeKeys.EVAL),
        steps=None,
        exporters=exporter,
        start_delay_secs=300,
        throttle_secs=300,
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return estimator, metrics, exports, lines


@program
def flowers_cnn(tf, workdir):
    hparams = {
        "train_data_path": write_flowers(tf, workdir, 10, "train", seed=1),
        "eval_data_path": write_flowers(tf, workdir, 6, "eval", seed=2),
        "learning_rate": 0.01,
        "train_steps": 3,
        "nfil1": 2,
        "nfil2": 3,
        "dprob": 0.0,
    }
    model_fn = make_flowers_classifier(tf)
    image = lambda: tf.zeros([10, SIDE, SIDE, 3])  # noqa: E731
    start = _fixed_start(
        tf, workdir, model_fn, lambda: {"image": image()}, lambda: tf.constant(FLOWERS * 2), hparams
    )
    estimator, metrics, exports, lines = _flowers_run(tf, workdir, hparams, model_fn, start)
    predict_input = flowers_input(tf, hparams["eval_data_path"], 4, tf.estimator.ModeKeys.PREDICT)
    rows = list(estimator.predict(predict_input))
    export_dir = _only_export(os.path.join(estimator.model_dir, "export", "exporter"))
    return {
        "exact": {
            "metric_keys": list(metrics),
            "exports": len(exports),
            "variables": _variables(tf, estimator.model_dir),
            "listing": [_STEP_FILES.sub("model.ckpt-N", n) for n in listing(estimator.model_dir)],
            "served": _served(export_dir),
            "eval_events": _eval_events(tf, estimator.eval_dir()),
            "predicted": {k: type(v).__name__ for k, v in sorted(rows[0].items())},
            "rows": len(rows),
            "lines": _lab_lines(lines, workdir),
        },
        # Not the loss, accuracy or probabilities: each shuffled batch sums in another
        # order, and Adam takes the rounding of near-zero gradients (the batch-normalized
        # layers') as full steps, so 2.15's own runs differ (losses 1.833 to 1.843).
        "close": {"global_step": float(metrics["global_step"])},
    }


# ------------------------------------------------------- 10_recommend hybrid recommender
NON_FACTOR_COLUMNS = (
    "next_content_id,visitor_id,content_id,category,title,author,months_since_epoch"
)
NON_FACTOR_COLUMNS = NON_FACTOR_COLUMNS.split(",")
FACTOR_COLUMNS = [f"user_factor_{i}" for i in range(3)] + [f"item_factor_{i}" for i in range(3)]
CSV_COLUMNS = NON_FACTOR_COLUMNS + FACTOR_COLUMNS
CONTENT_IDS = [f"29977{i}" for i in range(6)]
CATEGORIES = ["News", "Stars & Kultur", "Lifestyle"]
AUTHORS = ["Anna", "Bernd", "Clara", "Dieter"]


def write_preproc(folder, rows, seed):
    """The preprocessing's outputs the trainer reads: counts, vocabularies, CSV shards."""
    preproc = os.path.join(folder, "hybrid_recommendation", "preproc")
    files = {
        "vocab_counts/content_id_vocab_count.txt-00000-of-00001": f"{len(CONTENT_IDS)}\n",
        "vocab_counts/category_vocab_count.txt-00000-of-00001": f"{len(CATEGORIES)}\n",
        "vocab_counts/author_vocab_count.txt-00000-of-00001": f"{len(AUTHORS)}\n",
        "vocab_counts/months_since_epoch_mean.txt-00000-of-00001": "573.4\n",
        "vocabs/content_id_vocab.txt-00000-of-00001": "\n".join(CONTENT_IDS) + "\n",
        "vocabs/category_vocab.txt-00000-of-00001": "\n".join(CATEGORIES) + "\n",
    }
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(preproc, name)), exist_ok=True)
        with open(os.path.join(preproc, name), "w") as f:
            f.write(text)
    draw = random.Random(seed)
    for split, count in rows.items():
        lines = []
        for _ in range(count):
            content = draw.randrange(len(CONTENT_IDS))
            values = [CONTENT_IDS[(content + 1) % len(CONTENT_IDS)], f"visitor{draw.randint(1, 4)}"]
            values += [CONTENT_IDS[content], draw.choice([*CATEGORIES, "Sport"]), "Ein Titel"]
            values += [draw.choice(AUTHORS), str(draw.randint(560, 600))]
            values += [f"{draw.uniform(-1, 1):.3f}" for _ in FACTOR_COLUMNS]
            lines.append(",".join(values))
        with open(os.path.join(preproc, f"{split}.csv-00000-of-00001"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return preproc


def _read_first_line(tf, pattern, kind):
    with tf.io.gfile.GFile(tf.io.gfile.glob(pattern)[0]) as f:
        return kind(f.readline())


def hybrid_input(tf, filename, mode, defaults, batch_size):
    def _input_fn():
        def decode_csv(value_column):
            columns = tf.io.decode_csv(records=value_column, record_defaults=defaults)
            features = dict(zip(CSV_COLUMNS, columns, strict=True))
            return features, features.pop("next_content_id")

        file_list = tf.io.gfile.glob(filename)
        dataset = tf.data.TextLineDataset(filenames=file_list).map(map_func=decode_csv)
        return lab_batches(tf, dataset, mode, batch_size)

    return _input_fn


def hybrid_columns(tf, preproc, counts, embedding_size=2):
    fc = tf.feature_column
    content = fc.categorical_column_with_hash_bucket("content_id", counts["content_id"])
    category = fc.categorical_column_with_vocabulary_file(
        key="category",
        vocabulary_file=tf.io.gfile.glob(f"{preproc}/vocabs/category_vocab.txt*")[0],
        num_oov_buckets=1,
    )
    author = fc.categorical_column_with_hash_bucket("author", counts["author"] + 1)
    boundaries = list(range(560, 600, 20))
    months = fc.bucketized_column(fc.numeric_column("months_since_epoch"), boundaries)
    crossed = fc.crossed_column(
        keys=[category, months], hash_bucket_size=len(boundaries) * (counts["category"] + 1)
    )
    return [
        fc.embedding_column(content, dimension=embedding_size),
        fc.embedding_column(author, dimension=embedding_size),
        fc.indicator_column(category),
        fc.indicator_column(crossed),
    ] + [fc.numeric_column(key) for key in FACTOR_COLUMNS]


def hybrid_model_fn(tf, own_metric=None):
    """The trainer's model_fn; `own_metric` adds a user's metric of that name."""

    def model_fn(features, labels, mode, params):
        net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
        for units in params["hidden_units"]:
            net = tf.compat.v1.layers.dense(inputs=net, units=units, activation=tf.nn.relu)
        logits = tf.compat.v1.layers.dense(inputs=net, units=params["n_classes"])
        predicted_classes = tf.argmax(input=logits, axis=1)
        vocabulary = tf.io.gfile.glob(f"{params['preproc']}/vocabs/content_id_vocab.txt*")[0]
        with tf.io.gfile.GFile(vocabulary) as f:
            content_id_names = tf.constant(value=[x.rstrip() for x in f])
        predicted_names = tf.gather(params=content_id_names, indices=predicted_classes)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {
                "class_ids": tf.expand_dims(input=predicted_classes, axis=-1),
                "class_names": tf.expand_dims(input=predicted_names, axis=-1),
                "probabilities": tf.nn.softmax(logits=logits),
                "logits": logits,
            }
            outputs = {"predict_export_outputs": tf.estimator.export.PredictOutput(predictions)}
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, export_outputs=outputs
            )
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                vocabulary,
                tf.string,
                tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
            -1,
        )
        labels = table.lookup(keys=labels)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        metrics = hybrid_metrics(tf, labels, logits, predicted_classes, params["top_k"])
        if own_metric is not None:
            metrics[own_metric] = tf.compat.v1.metrics.mean(loss)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=metrics)
        optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=params["learning_rate"])
        train_op = optimizer.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    return model_fn


def hybrid_metrics(tf, labels, logits, predicted_classes, top_k):
    """accuracy, the mean of in_top_k and MAP@k, each update op also summarized."""
    accuracy = tf.compat.v1.metrics.accuracy(labels, predicted_classes, name="acc_op")
    top_k_accuracy = tf.compat.v1.metrics.mean(
        values=tf.nn.in_top_k(predictions=logits, targets=labels, k=top_k)
    )
    map_at_k = tf.compat.v1.metrics.average_precision_at_k(labels, predicted_classes, k=top_k)
    metrics = {"accuracy": accuracy, "top_k_accuracy": top_k_accuracy, "map_at_k": map_at_k}
    for name, (_, update) in metrics.items():
        tf.compat.v1.summary.scalar(name=name, tensor=update)
    return metrics


def hybrid_serving_input_fn(tf):
    placeholders = {
        name: tf.compat.v1.placeholder(dtype=tf.string, shape=[None])
        for name in NON_FACTOR_COLUMNS[1:-1]
    }
    placeholders["months_since_epoch"] = tf.compat.v1.placeholder(dtype=tf.float32, shape=[None])
    for name in FACTOR_COLUMNS:
        placeholders[name] = tf.compat.v1.placeholder(dtype=tf.float32, shape=[None])
    features = {key: tf.expand_dims(tensor, -1) for key, tensor in placeholders.items()}
    return tf.estimator.export.ServingInputReceiver(features, placeholders)


def _hybrid_setup(tf, workdir, own_metric=None):
    """(estimator, train_spec, eval_spec) as the trainer's train_and_evaluate makes them
    (warm-started from fixed numbers, unless `own_metric` names a metric model_fn adds)."""
    preproc = write_preproc(workdir, {"train": 12, "eval": 5}, seed=4)
    counts = {
        name: _read_first_line(tf, f"{preproc}/vocab_counts/{name}_vocab_count.txt*", int)
        for name in ("content_id", "category", "author")
    }
    mean_months = _read_first_line(
        tf, f"{preproc}/vocab_counts/months_since_epoch_mean.txt*", float
    )
    defaults = [["Unknown"]] * 6 + [[mean_months]] + [[0.0]] * len(FACTOR_COLUMNS)
    params = {
        "feature_columns": hybrid_columns(tf, preproc, counts),
        "hidden_units": [5, 4],
        "n_classes": counts["content_id"],
        "learning_rate": 0.1,
        "top_k": 3,
        "preproc": preproc,
    }
    model_fn = hybrid_model_fn(tf, own_metric)
    features = hybrid_input(tf, f"{preproc}/train.csv*", "eval", defaults, 12)
    start = own_metric is None and _fixed_start(
        tf, workdir, model_fn, lambda: features()[0], lambda: features()[1], params
    )
    estimator = tf.estimator.Estimator(
        model_fn=model_fn,
        model_dir=os.path.join(workdir, "trained"),
        params=params,
        warm_start_from=start or None,
        config=tf.estimator.RunConfig(save_summary_steps=1),
    )
    mode = tf.estimator.ModeKeys
    train_spec = tf.estimator.TrainSpec(
        hybrid_input(tf, f"{preproc}/train.csv*", mode.TRAIN, defaults, 12), max_steps=3
    )
    exporter = tf.estimator.LatestExporter("exporter", lambda: hybrid_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        input_fn=hybrid_input(tf, f"{preproc}/eval.csv*", mode.EVAL, defaults, 12),
        steps=None,
        start_delay_secs=1,
        throttle_secs=1,
        exporters=exporter,
    )
    return estimator, train_spec, eval_spec


@program
def hybrid_recommendations(tf, workdir):
    estimator, train_spec, eval_spec = _hybrid_setup(tf, workdir)
    with _info_lines() as lines:
        metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    export_dir = _only_export(os.path.join(estimator.model_dir, "export", "exporter"))
    train_tags = {}
    for path in glob.glob(os.path.join(estimator.model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                train_tags.setdefault(value.tag, []).append(float(value.simple_value))
    return {
        "exact": {
            "metric_keys": list(metrics),
            "metric_types": {k: type(v).__name__ for k, v in metrics.items()},
            "variables": _variables(tf, estimator.model_dir),
            "served": _served(export_dir),
            "eval_events": _eval_events(tf, estimator.eval_dir()),
            "lines": _lab_lines(lines, workdir),
        },
        "close": {
            "metrics": {k: float(v) for k, v in metrics.items()},
            "train_summaries": dict(sorted(train_tags.items())),
        },
    }


@program
def metric_named_loss(tf, workdir):
    raised = {}
    for name in ("loss", "global_step"):
        folder = os.path.join(workdir, name)
        os.makedirs(folder)
        estimator, _, eval_spec = _hybrid_setup(tf, folder, own_metric=name)
        error = _raised(lambda e=estimator, s=eval_spec: e.evaluate(s.input_fn))
        raised[name] = list(error) if error else None
    return {"exact": {"raised": raised}, "close": {}}


# ------------------------------------------------------------- cloudml-samples molecules
NORMALIZED = ["NormalizedC", "NormalizedH", "NormalizedO", "NormalizedN"]
RAW = ["TotalC", "TotalH", "TotalO", "TotalN"]
MOLECULE_LABELS = ["Energy"]


def write_molecules(tf, path, count, seed):
    """TFRecords as the preprocessing's transform wrote them: normalized atom counts and
    the energy."""
    rng = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for counts in rng.randint(0, 10, (count, len(NORMALIZED))):
            values = dict(zip(NORMALIZED, counts / 10.0, strict=True))
            values["Energy"] = float(counts @ [3.0, -1.0, 2.0, 0.5])
            feature = {
                k: tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
                for k, v in values.items()
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())


def molecules_input(tf, feature_spec, labels, file_pattern, batch_size, mode):
    def input_fn():
        def decode(elem):
            model_features = tf.io.parse_single_example(serialized=elem, features=feature_spec)
            model_labels = tf.stack([model_features.pop(label) for label in labels])
            return model_features, model_labels

        files = tf.data.Dataset.list_files(file_pattern)
        dataset = files.apply(
            tf.data.experimental.parallel_interleave(tf.data.TFRecordDataset, cycle_length=2)
        )
        dataset = dataset.map(decode, num_parallel_calls=2).take(-1)
        if mode == tf.estimator.ModeKeys.TRAIN:
            dataset = dataset.apply(tf.data.experimental.shuffle_and_repeat(batch_size * 8))
        dataset = dataset.batch(batch_size).prefetch(1)
        iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
        return iterator.get_next()

    return input_fn


def molecules_serving_input_fn(tf):
    """Raw counts in, the transform's normalized features out (named placeholders)."""
    inputs = {name: tf.compat.v1.placeholder(tf.float32, shape=[None], name=name) for name in RAW}
    transformed = {norm: inputs[raw] / 10.0 for norm, raw in zip(NORMALIZED, RAW, strict=True)}
    return tf.estimator.export.ServingInputReceiver(transformed, inputs)


@program
def molecules_regressor(tf, workdir):
    feature_spec = {k: tf.io.FixedLenFeature([], tf.float32) for k in [*NORMALIZED, "Energy"]}
    write_molecules(tf, os.path.join(workdir, "train-00000-of-00001.tfrecord"), 24, seed=5)
    write_molecules(tf, os.path.join(workdir, "eval-00000-of-00001.tfrecord"), 10, seed=6)
    model_dir = os.path.join(workdir, "model")
    run_config = tf.estimator.RunConfig()
    run_config = run_config.replace(model_dir=model_dir)
    run_config = run_config.replace(save_summary_steps=10)
    estimator = tf.estimator.DNNRegressor(
        feature_columns=[tf.feature_column.numeric_column(k, dtype=tf.float32) for k in NORMALIZED],
        hidden_units=[6, 3],
        dropout=0.5,
        config=run_config,
    )
    pattern = os.path.join(workdir, "{}-*")
    mode = tf.estimator.ModeKeys
    train_spec = tf.estimator.TrainSpec(
        molecules_input(tf, feature_spec, MOLECULE_LABELS, pattern.format("train"), 8, mode.TRAIN),
        max_steps=12,
    )
    exporter = tf.estimator.FinalExporter("final", lambda: molecules_serving_input_fn(tf))
    eval_spec = tf.estimator.EvalSpec(
        molecules_input(tf, feature_spec, MOLECULE_LABELS, pattern.format("eval"), 8, mode.EVAL),
        exporters=[exporter],
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    served = _served(_only_export(os.path.join(model_dir, "export", "final")))
    return {
        "exact": {
            "metric_keys": list(metrics),
            "metric_types": {k: type(v).__name__ for k, v in metrics.items()},
            "exports": len(exports),
            "variables": _variables(tf, model_dir),
            "served": served,
            "eval_events": _eval_events(tf, estimator.eval_dir()),
            "lines": _lab_lines(lines, workdir),
        },
        # The eval labels' mean hangs on no weight; the loss on dropout's draws.
        "close": {"label_mean": float(metrics["label/mean"])},
    }


def make_molecules_keras_model_fn(tf):
    """The regressor as a TF2-era custom model_fn: Keras layers over the normalized counts,
    a Keras optimizer's updates and the step's increment as train_op, one EstimatorSpec
    returned in every mode (its train_op too, as such model_fns do)."""

    def model_fn(features, labels, mode):
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(3, activation="relu", kernel_initializer="ones"),
                tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.5)),
            ]
        )
        predictions = model(tf.concat([features[k] for k in NORMALIZED], axis=1))
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"energy": predictions})
        loss = tf.reduce_mean(tf.square(predictions - labels))
        optimizer = tf.keras.optimizers.legacy.SGD(learning_rate=0.01)
        updates = optimizer.get_updates(loss, model.trainable_variables)
        step = tf.compat.v1.assign_add(tf.compat.v1.train.get_or_create_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.group(updates, step))

    return model_fn


@program
def molecules_train_op_in_every_mode(tf, workdir):
    rng = np.random.RandomState(7)
    counts = rng.randint(0, 10, (8, len(NORMALIZED))) / 10.0
    energy = counts @ [3.0, -1.0, 2.0, 0.5]

    def input_fn():
        features = {k: counts[:, [i]].astype("f4") for i, k in enumerate(NORMALIZED)}
        labels = energy[:, None].astype("f4")
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(4)

    estimator = tf.estimator.Estimator(
        make_molecules_keras_model_fn(tf), model_dir=os.path.join(workdir, "model")
    )
    seen = {"untrained": estimator.evaluate(input_fn)}
    estimator.train(lambda: input_fn().repeat(), max_steps=3)
    seen["trained"] = estimator.evaluate(input_fn)
    seen["again"] = estimator.evaluate(input_fn)
    predicted = [float(row["energy"][0]) for row in estimator.predict(input_fn)]
    return {
        "exact": {k: int(v["global_step"]) for k, v in seen.items()},
        "close": {"losses": {k: float(v["loss"]) for k, v in seen.items()}, "energy": predicted},
    }
