"""Programs in the shape of public TF1-era text and sequence Estimator samples, after
`tf_upgrade_v2`: Google's "text classification with TensorFlow Estimators" (embeddings,
conv1d, an LSTM, the Keras-layers version), RNN cells through `dynamic_rnn` and
`static_rnn`, and word2vec's sampled losses.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees in the parts `tests/tf1_sample_programs.py` names
(`exact`, `close`: 1e-4, `loose`: 35%); `tests/test_text_sequence_samples.py` compares
them with 2.15's recording (`tests/tf215/record_family.py text_sequence_programs`, into
`tests/data/tf215/text_sequence.json`). Every random op is seeded: TF1 ops without a
seed of their own take one from the graph's op count, which differs between versions.
"""

import os
import re

import numpy as np

from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import (
    _floats,
    _loss_steps,
    _messages,
    _shape_of_message,
    _summary_kinds,
)
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "text_sequence.json")
SEED = 7
VOCAB = 20  # hash buckets of the words
MAX_LEN = 6
SENTENCES = [
    b"Good great movie!",
    b"bad awful film",
    b"great acting, good plot",
    b"awful boring plot",
    b"fine good fun",
    b"poor bad acting",
    b"great fun",
    b"boring poor awful movie",
]
LABELS = [1, 0, 1, 0, 1, 0, 1, 0]


def _cleaned(sentence):
    """The samples' Python preprocessing step: lower case, no punctuation."""
    text = sentence.decode() if isinstance(sentence, bytes) else str(sentence)
    return "".join(c for c in text.lower() if c.isalnum() or c == " ").encode()


def _word_ids(tf, sentence):
    """A sentence's word ids (hash buckets: the same in every version) and length."""
    words = tf.compat.v1.string_split([sentence]).values[:MAX_LEN]
    ids = tf.strings.to_hash_bucket_fast(words, VOCAB)
    return ids, tf.size(ids)


def text_input_fn(tf, epochs=None, batch_size=4):
    """tf.data of ({"words": padded ids, "length": n}, label): py_func cleaning,
    string_split, padded_batch."""

    def input_fn():
        def parse(sentence, label):
            cleaned = tf.compat.v1.py_func(_cleaned, [sentence], tf.string, stateful=False)
            cleaned.set_shape([])
            ids, length = _word_ids(tf, cleaned)
            return {"words": ids, "length": length}, label

        data = tf.data.Dataset.from_tensor_slices((SENTENCES, np.int32(LABELS))).map(parse)
        return data.repeat(epochs).padded_batch(
            batch_size, padded_shapes=({"words": [MAX_LEN], "length": []}, [])
        )

    return input_fn


def text_receiver_fn(tf):
    """A raw receiver taking sentences (a string tensor), tokenized with tf.strings.split."""

    def receiver_fn():
        sentences = tf.compat.v1.placeholder(tf.string, [None], name="sentence")
        words = tf.strings.split(tf.strings.lower(sentences))
        ids = tf.strings.to_hash_bucket_fast(words, VOCAB).to_tensor(shape=[None, MAX_LEN])
        length = tf.cast(words.row_lengths(), tf.int32)
        return tf.estimator.export.ServingInputReceiver(
            {"words": ids, "length": length}, {"sentence": sentences}
        )

    return receiver_fn


def _classifier_spec(tf, mode, logits, labels, train_op_of):
    """The samples' heads of a two-class model_fn; `train_op_of(loss)` trains."""
    predictions = {
        "classes": tf.argmax(logits, 1),
        "probabilities": tf.nn.softmax(logits, name="probabilities"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode,
            predictions=predictions,
            export_outputs={"classify": tf.estimator.export.PredictOutput(predictions)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op_of(loss))
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, predictions["classes"]),
        "auc": tf.compat.v1.metrics.auc(labels, predictions["probabilities"][:, 1]),
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


def _clipped_adam(tf, learning_rate=0.05):
    """compute_gradients, clip_by_global_norm, apply_gradients: the samples' Adam."""

    def train_op_of(loss):
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
        grads, variables = zip(*optimizer.compute_gradients(loss), strict=True)
        clipped, _ = tf.clip_by_global_norm(grads, 1.0)
        return optimizer.apply_gradients(
            zip(clipped, variables, strict=True), global_step=tf.compat.v1.train.get_global_step()
        )

    return train_op_of


def _seeded(tf, scale=0.3, seed=SEED):
    return tf.compat.v1.random_uniform_initializer(-scale, scale, seed=seed)


def _run_classifier(tf, workdir, model_fn, steps=20):
    """Train (log lines kept), evaluate, predict, export with the sentence receiver, and
    call the export on two sentences."""
    model = tf.estimator.Estimator(
        model_fn,
        os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=SEED, log_step_count_steps=10),
    )
    with _info_lines() as lines:
        model.train(text_input_fn(tf), steps=steps)
    result = model.evaluate(text_input_fn(tf, epochs=1))
    rows = list(model.predict(text_input_fn(tf, epochs=1)))
    export_dir = model.export_saved_model(
        os.path.join(workdir, "export"), text_receiver_fn(tf)
    ).decode()
    loaded = tf.saved_model.load(export_dir)
    served = loaded.signatures["classify"](sentence=tf.constant([b"great fun", b"bad plot"]))
    return {
        "exact": {
            "eval_keys": sorted(result),
            "variables": model.get_variable_names(),
            "predictions": structure(rows),
            "count": len(rows),
            "loss_steps": _loss_steps(lines),
            "signatures": signatures(export_dir),
            "export_files": listing(export_dir),
            "served_keys": sorted(served),
        },
        "values": {
            **{"eval_" + k: v for k, v in _floats(result).items()},
            "probabilities": [r["probabilities"].tolist() for r in rows],
            "served": served["probabilities"].numpy().tolist(),
        },
    }


def _split(result, part):
    """`result` with its `values` as the part `part` names."""
    return {"exact": result["exact"], part: result["values"]}


# ------------------------------------------------------------------ (a) CNN over words
def _words_conv(tf, features):
    """Embeddings from get_variable, then conv1d over the words."""
    embeddings = tf.compat.v1.get_variable("embeddings", [VOCAB, 8], initializer=_seeded(tf))
    embedded = tf.compat.v1.nn.embedding_lookup(embeddings, features["words"])
    conv = tf.compat.v1.layers.conv1d(
        embedded,
        filters=6,
        kernel_size=3,
        padding="same",
        activation=tf.nn.relu,
        kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 1),
    )
    return conv


def cnn_text_model_fn(features, labels, mode):
    """Embeddings from get_variable, conv1d, max pooling over time, a dense layer."""
    import tensorflow as tf

    conv = _words_conv(tf, features)
    pooled = tf.reduce_max(conv, axis=1)
    hidden = tf.compat.v1.layers.dropout(
        pooled, rate=0.2, seed=SEED + 2, training=mode == tf.estimator.ModeKeys.TRAIN
    )
    logits = tf.compat.v1.layers.dense(
        hidden, 2, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 3)
    )
    return _classifier_spec(tf, mode, logits, labels, _clipped_adam(tf))


def cnn_text(tf, workdir):
    return _split(_run_classifier(tf, workdir, cnn_text_model_fn), "close")


def head_cnn_model_fn(features, labels, mode):
    """The blog's later version: the same CNN's one logit under `tf.estimator`'s
    BinaryClassHead, which calls the model's `train_op_fn` (a TF1 Adam)."""
    import tensorflow as tf

    conv = _words_conv(tf, features)
    logits = tf.compat.v1.layers.dense(
        tf.reduce_max(conv, axis=1),
        1,
        kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 3),
    )
    if labels is not None:
        labels = tf.reshape(labels, [-1, 1])
    optimizer = tf.compat.v1.train.AdamOptimizer(0.05)

    def train_op_fn(loss):
        return optimizer.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())

    return tf.estimator.BinaryClassHead().create_estimator_spec(
        features=features, labels=labels, mode=mode, logits=logits, train_op_fn=train_op_fn
    )


def head_cnn_text(tf, workdir):
    """Its checkpoint names (Adam's `training/beta1_power`: the head's train-op scope),
    evaluate's and predict's keys, and their values."""
    model = tf.estimator.Estimator(
        head_cnn_model_fn,
        os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=SEED),
    )
    model.train(text_input_fn(tf), steps=10)
    result = model.evaluate(text_input_fn(tf, epochs=1))
    rows = list(model.predict(text_input_fn(tf, epochs=1)))
    return {
        "exact": {
            "eval_keys": sorted(result),
            "variables": model.get_variable_names(),
            "predictions": structure(rows),
        },
        "close": {
            **{"eval_" + k: v for k, v in _floats(result).items()},
            "logistic": [r["logistic"].tolist() for r in rows],
        },
    }


# ------------------------------------------------------------------ (b) RNN cells
def _cells(tf, mode, kind):
    """Two layers of `kind` cells, the first with seeded dropout while training."""
    make = {
        "lstm": lambda n: tf.compat.v1.nn.rnn_cell.LSTMCell(
            n, initializer=_seeded(tf, seed=SEED + n)
        ),
        "gru": lambda n: tf.compat.v1.nn.rnn_cell.GRUCell(
            n, kernel_initializer=_seeded(tf, seed=SEED + n)
        ),
    }[kind]
    keep = 0.8 if mode == tf.estimator.ModeKeys.TRAIN else 1.0
    first = tf.compat.v1.nn.rnn_cell.DropoutWrapper(make(5), output_keep_prob=keep, seed=SEED)
    return tf.compat.v1.nn.rnn_cell.MultiRNNCell([first, make(4)])


def rnn_model_fn(features, labels, mode, params):
    """Embeddings, an RNN (dynamic with sequence_length, or static over the unstacked
    steps), the last output to logits."""
    import tensorflow as tf

    embeddings = tf.compat.v1.get_variable("embeddings", [VOCAB, 6], initializer=_seeded(tf))
    embedded = tf.compat.v1.nn.embedding_lookup(embeddings, features["words"])
    cell = _cells(tf, mode, params["cell"])
    if params["static"]:
        steps = tf.unstack(embedded, num=MAX_LEN, axis=1)
        _, state = tf.compat.v1.nn.static_rnn(
            cell, steps, sequence_length=features["length"], dtype=tf.float32
        )
    else:
        # One iteration at a time: TF1's while loop runs up to 32 at once, and the dropout's
        # random op (its shape static) then draws its masks in whichever order they run,
        # under 2.15 as here (1 run in 9 moved the probabilities by 3e-3 on both sides).
        _, state = tf.compat.v1.nn.dynamic_rnn(
            cell,
            embedded,
            sequence_length=features["length"],
            dtype=tf.float32,
            parallel_iterations=1,
        )
    last = state[-1].h if params["cell"] == "lstm" else state[-1]
    logits = tf.compat.v1.layers.dense(
        last, 2, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 9)
    )
    return _classifier_spec(tf, mode, logits, labels, _clipped_adam(tf))


def _rnn_program(cell, static):
    def program(tf, workdir):
        def model_fn(features, labels, mode):
            return rnn_model_fn(features, labels, mode, {"cell": cell, "static": static})

        return _split(_run_classifier(tf, workdir, model_fn), "close")

    return program


# ------------------------------------------------------------------ (c) Keras layers
def keras_layers_model_fn(features, labels, mode):
    """The TF2-era blog's version: tf.keras layers called in a TF1 model_fn."""
    import tensorflow as tf

    layers = tf.keras.layers
    embedded = layers.Embedding(
        VOCAB, 8, embeddings_initializer=tf.keras.initializers.RandomUniform(-0.3, 0.3, seed=1)
    )(features["words"])
    conv = layers.Conv1D(
        6, 3, activation="relu", kernel_initializer=tf.keras.initializers.GlorotUniform(seed=2)
    )(embedded)
    lstm = layers.LSTM(
        4,
        return_sequences=True,
        kernel_initializer=tf.keras.initializers.GlorotUniform(seed=3),
        recurrent_initializer=tf.keras.initializers.Orthogonal(seed=4),
    )(conv)
    pooled = layers.GlobalMaxPooling1D()(lstm)
    logits = layers.Dense(2, kernel_initializer=tf.keras.initializers.GlorotUniform(seed=5))(pooled)
    return _classifier_spec(tf, mode, logits, labels, _clipped_adam(tf))


def keras_layers(tf, workdir):
    return _split(_run_classifier(tf, workdir, keras_layers_model_fn), "close")


# ------------------------------------------------------------------ (e) word2vec
PAIRS = np.array([[i, (i * 3 + 1) % 16] for i in range(16)] * 2, np.int64)


def word2vec_model_fn(features, labels, mode, params):
    """Skip-gram pairs: embeddings, and sampled softmax or NCE over 16 words; NCE's
    embeddings and weights in two partitions (large-vocabulary samples' way)."""
    import tensorflow as tf

    partitioned = params["loss"] == "nce"
    partitioner = tf.compat.v1.fixed_size_partitioner(2) if partitioned else None
    strategy = "div" if partitioned else "mod"
    embeddings = tf.compat.v1.get_variable(
        "embeddings", [16, 4], initializer=_seeded(tf), partitioner=partitioner
    )
    weights = tf.compat.v1.get_variable(
        "nce_weights", [16, 4], initializer=_seeded(tf, seed=SEED + 1), partitioner=partitioner
    )
    biases = tf.compat.v1.get_variable("nce_biases", [16], initializer=tf.zeros_initializer())
    embedded = tf.compat.v1.nn.embedding_lookup(
        embeddings, features["center"], partition_strategy=strategy
    )
    labels = tf.reshape(labels, [-1, 1])
    sampled = tf.random.log_uniform_candidate_sampler(
        labels, 1, num_sampled=4, unique=True, range_max=16, seed=SEED + 2
    )
    loss_fn = {
        "sampled_softmax": tf.compat.v1.nn.sampled_softmax_loss,
        "nce": tf.compat.v1.nn.nce_loss,
    }[params["loss"]]
    loss = tf.reduce_mean(
        loss_fn(
            weights,
            biases,
            labels,
            embedded,
            4,
            16,
            sampled_values=sampled,
            partition_strategy=strategy,
        )
    )
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"mean_loss": tf.compat.v1.metrics.mean(loss)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _word2vec_program(loss):
    def program(tf, workdir):
        def input_fn():
            data = tf.data.Dataset.from_tensor_slices(({"center": PAIRS[:, 0]}, PAIRS[:, 1]))
            return data.batch(8)

        model = tf.estimator.Estimator(
            word2vec_model_fn,
            os.path.join(workdir, "model"),
            params={"loss": loss},
            config=tf.estimator.RunConfig(tf_random_seed=SEED),
        )
        model.train(input_fn, steps=4)
        result = model.evaluate(input_fn)
        return {
            "exact": {
                "eval_keys": sorted(result),
                "variables": model.get_variable_names(),
                "checkpoint": [list(v) for v in tf.train.list_variables(model.model_dir)],
            },
            "close": {
                **_floats(result),
                "embeddings": model.get_variable_value("embeddings").tolist(),
            },
        }

    return program


# ------------------------------------------------------------------ raw sentences
WORDS = ["good", "great", "fine", "fun", "bad", "awful", "poor", "boring"]


def vocab_model_fn(features, labels, mode, params):
    """Raw sentences in: lower-cased and split in the model_fn, looked up in a vocabulary
    file (an asset of the export), averaged embeddings; summaries of its own; a classify
    signature beside the default."""
    import tensorflow as tf

    words = tf.compat.v1.string_split(tf.strings.lower(features["sentence"]))
    initializer = tf.lookup.TextFileInitializer(
        params["vocab"],
        tf.string,
        tf.lookup.TextFileIndex.WHOLE_LINE,
        tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER,
    )
    table = tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets=1)
    ids = tf.SparseTensor(words.indices, table.lookup(words.values), words.dense_shape)
    with open(params["vocab"]) as f:
        size = len(f.read().split())
    embeddings = tf.compat.v1.get_variable(
        "word_embeddings", [size + 1, 4], initializer=_seeded(tf)
    )
    tf.compat.v1.summary.histogram("word_embeddings", embeddings)
    oov = tf.reduce_mean(tf.cast(tf.equal(ids.values, size), tf.float32))
    tf.compat.v1.summary.scalar("oov_rate", oov)
    tf.compat.v1.summary.text("sentences", features["sentence"])
    pooled = tf.compat.v1.nn.embedding_lookup_sparse(embeddings, ids, None, combiner="mean")
    logits = tf.compat.v1.layers.dense(
        pooled, 2, kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 1)
    )
    spec = _classifier_spec(tf, mode, logits, labels, _clipped_adam(tf, 0.1))
    if mode != tf.estimator.ModeKeys.PREDICT:
        return spec
    names = tf.tile(tf.constant([["negative", "positive"]]), [tf.shape(logits)[0], 1])
    scores = spec.predictions["probabilities"]
    return spec._replace(
        export_outputs={
            "serving_default": tf.estimator.export.PredictOutput(spec.predictions),
            "classify": tf.estimator.export.ClassificationOutput(scores=scores, classes=names),
        }
    )


def raw_sentences(tf, workdir):
    """Train and evaluate on raw sentences; export with a raw string receiver, load, call
    both signatures."""
    vocab = os.path.join(workdir, "vocab.txt")
    os.makedirs(workdir, exist_ok=True)
    with open(vocab, "w") as f:
        f.write("\n".join(WORDS) + "\n")

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"sentence": SENTENCES}, np.int32(LABELS)))
        return data.batch(4)

    model_dir = os.path.join(workdir, "model")
    model = tf.estimator.Estimator(
        vocab_model_fn,
        model_dir,
        params={"vocab": vocab},
        config=tf.estimator.RunConfig(tf_random_seed=SEED, save_summary_steps=5),
    )
    model.train(lambda: input_fn().repeat(), steps=12)
    result = model.evaluate(input_fn)
    rows = list(model.predict(lambda: input_fn().map(lambda x, y: x)))
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"sentence": tf.constant([b""])}  # (its batch size: None)
    )
    export_dir = model.export_saved_model(os.path.join(workdir, "export"), receiver).decode()
    loaded = tf.saved_model.load(export_dir)
    sentences = tf.constant([b"great fun", b"Bad plot"])
    served = loaded.signatures["serving_default"](sentence=sentences)
    classified = loaded.signatures["classify"](inputs=sentences)
    return {
        "exact": {
            "eval_keys": sorted(result),
            "variables": model.get_variable_names(),
            "predictions": structure(rows),
            "signatures": signatures(export_dir),
            "export_files": listing(export_dir),
            "served_keys": sorted(served),
            "classified_keys": sorted(classified),
            "classes": [[c.decode() for c in row] for row in classified["classes"].numpy()],
            "train_tags": event_tags(model_dir),
            "train_kinds": _summary_kinds(tf, model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
        },
        "close": {
            **{"eval_" + k: v for k, v in _floats(result).items()},
            "probabilities": [r["probabilities"].tolist() for r in rows],
            "served": served["probabilities"].numpy().tolist(),
            "scores": classified["scores"].numpy().tolist(),
        },
    }


# ------------------------------------------------------------------ embeddings from elsewhere
def _write_vocab(path, words):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(words) + "\n")
    return path


def _sentence_input_fn(tf, epochs=None):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"sentence": SENTENCES}, np.int32(LABELS)))
        return data.batch(4).repeat(epochs)

    return input_fn


def _warm_start_lines(lines, workdir):
    """The 'Warm-starting' log lines, each once, without folders and objects' addresses."""
    kept = []
    for line in lines:
        line = re.sub(r" at 0x[0-9a-f]+", "", line.replace(workdir, "<workdir>"))
        if line.startswith("Warm-start") and line not in kept:
            kept.append(line)
    return kept


def warm_start_vocab(tf, workdir):
    """Train on one vocabulary; warm-start the embeddings of a model with another (words
    reordered, dropped and added) through VocabInfo, the rest fresh."""
    old_vocab = _write_vocab(os.path.join(workdir, "old.txt"), WORDS)
    new_words = ["fun", "movie", "bad", "good", "plot", "awful", "great"]
    new_vocab = _write_vocab(os.path.join(workdir, "new.txt"), new_words)
    config = tf.estimator.RunConfig(tf_random_seed=SEED)
    first = tf.estimator.Estimator(
        vocab_model_fn, os.path.join(workdir, "first"), params={"vocab": old_vocab}, config=config
    )
    first.train(_sentence_input_fn(tf), steps=6)

    def settings(variables):
        return tf.estimator.WarmStartSettings(
            ckpt_to_initialize_from=first.model_dir,
            vars_to_warm_start=variables,
            var_name_to_vocab_info={
                "word_embeddings": tf.estimator.VocabInfo(
                    new_vocab=new_vocab,
                    new_vocab_size=len(new_words),
                    num_oov_buckets=1,
                    old_vocab=old_vocab,
                    old_vocab_size=len(WORDS),
                    backup_initializer=tf.compat.v1.zeros_initializer(),
                )
            },
        )

    def second_model(name, variables):
        return tf.estimator.Estimator(
            vocab_model_fn,
            os.path.join(workdir, name),
            params={"vocab": new_vocab},
            config=config,
            warm_start_from=settings(variables),
        )

    second = second_model("second", "word_embeddings")
    with _info_lines() as lines:
        second.train(_sentence_input_fn(tf), steps=1)
    # A list's regexes match whole names with their ':0', so 'word_embeddings$' finds none.
    anchored = second_model("anchored", ["word_embeddings$"])
    unmatched = _raised(lambda: anchored.train(_sentence_input_fn(tf), steps=1))
    return {
        "exact": {
            "variables": second.get_variable_names(),
            "warm_start_lines": _warm_start_lines(lines, workdir),
            "anchored_regex": unmatched,
        },
        "close": {
            "old": first.get_variable_value("word_embeddings").tolist(),
            "warm_started": second.get_variable_value("word_embeddings").tolist(),
            **{
                "eval_" + k: v
                for k, v in _floats(second.evaluate(_sentence_input_fn(tf, epochs=1))).items()
            },
        },
    }


PRETRAINED = np.linspace(-1, 1, VOCAB * 3).reshape(VOCAB, 3).astype(np.float32)


def pretrained_model_fn(features, labels, mode):
    """Frozen pretrained embeddings fed through the Scaffold's init_feed_dict (a large
    matrix is no constant in the graph), beside a constant_initializer copy; a trained
    projection."""
    import tensorflow as tf

    matrix = tf.compat.v1.placeholder(tf.float32, PRETRAINED.shape, name="pretrained_matrix")
    fed = tf.compat.v1.Variable(matrix, trainable=False, name="pretrained")
    constant = tf.compat.v1.get_variable(
        "constant_embeddings",
        PRETRAINED.shape,
        initializer=tf.compat.v1.constant_initializer(PRETRAINED[::-1]),
        trainable=False,
    )
    words = features["words"]
    both = tf.concat(
        [tf.nn.embedding_lookup(fed, words), tf.nn.embedding_lookup(constant, words)], -1
    )
    pooled = tf.reduce_mean(both, axis=1)
    logits = tf.compat.v1.layers.dense(pooled, 2, kernel_initializer=tf.zeros_initializer())
    spec = _classifier_spec(tf, mode, logits, labels, _clipped_adam(tf, 0.1))
    return spec._replace(scaffold=tf.compat.v1.train.Scaffold(init_feed_dict={matrix: PRETRAINED}))


def pretrained_embeddings(tf, workdir):
    model = tf.estimator.Estimator(pretrained_model_fn, os.path.join(workdir, "model"))
    model.train(text_input_fn(tf), steps=8)
    result = model.evaluate(text_input_fn(tf, epochs=1))
    rows = list(model.predict(text_input_fn(tf, epochs=1), yield_single_examples=False))
    return {
        "exact": {
            "variables": model.get_variable_names(),
            "pretrained_kept": bool(
                np.array_equal(model.get_variable_value("pretrained"), PRETRAINED)
            ),
            "batches": [[[k, list(v.shape)] for k, v in sorted(r.items())] for r in rows],
        },
        "close": {
            **_floats(result),
            "kernel": model.get_variable_value("dense/kernel").tolist(),
        },
    }


# ------------------------------------------------------------------ a sequence tagger
class IteratorInitializerHook:
    """nmt-style samples' hook: runs the input_fn's initializable iterator's initializer
    once the session exists (the input_fn sets `initializer_func`)."""

    def __init__(self, tf):
        self.base = tf.compat.v1.train.SessionRunHook
        self.initializer_func = None

    def as_hook(self):
        outer = self

        class Hook(self.base):
            def after_create_session(self, session, coord):
                outer.initializer_func(session)

        return Hook()


def tagger_input_fn(tf, hook, epochs=None):
    """Batches of ({"words", "length"}, per-word tags: 1 for a positive word) from an
    initializable iterator whose initializer `hook` runs."""

    def input_fn():
        def parse(sentence, label):
            ids, length = _word_ids(tf, tf.strings.lower(sentence))
            return {"words": ids, "length": length}, tf.fill([length], label)

        data = tf.data.Dataset.from_tensor_slices((SENTENCES, np.int32(LABELS))).map(parse)
        data = data.repeat(epochs).padded_batch(
            4, padded_shapes=({"words": [MAX_LEN], "length": []}, [MAX_LEN])
        )
        iterator = tf.compat.v1.data.make_initializable_iterator(data)
        hook.initializer_func = lambda session: session.run(iterator.initializer)
        return iterator.get_next()

    return input_fn


def tagger_model_fn(features, labels, mode):
    """Per-word tags from a bidirectional LSTM; padding masked out of the loss and the
    metrics; a LoggingTensorHook on the loss and the running accuracy."""
    import tensorflow as tf

    embeddings = tf.compat.v1.get_variable("embeddings", [VOCAB, 4], initializer=_seeded(tf))
    embedded = tf.compat.v1.nn.embedding_lookup(embeddings, features["words"])
    cells = [
        tf.compat.v1.nn.rnn_cell.LSTMCell(3, initializer=_seeded(tf, seed=SEED + i)) for i in (1, 2)
    ]
    (forward, backward), _ = tf.compat.v1.nn.bidirectional_dynamic_rnn(
        *cells, embedded, sequence_length=features["length"], dtype=tf.float32
    )
    logits = tf.compat.v1.layers.dense(
        tf.concat([forward, backward], -1),
        2,
        kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=SEED + 3),
    )
    tags = tf.argmax(logits, -1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"tags": tags, "logits": logits})
    mask = tf.sequence_mask(features["length"], MAX_LEN, dtype=tf.float32)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits, weights=mask)
    accuracy = tf.compat.v1.metrics.accuracy(labels, tags, weights=mask)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"tag_accuracy": accuracy}
        )
    logging_hook = tf.compat.v1.train.LoggingTensorHook(
        {"loss": loss, "tag_accuracy": accuracy[1]}, every_n_iter=5
    )
    return tf.estimator.EstimatorSpec(
        mode,
        loss=loss,
        train_op=tf.group(_clipped_adam(tf)(loss), accuracy[1]),
        training_hooks=[logging_hook],
    )


def sequence_tagger(tf, workdir):
    model = tf.estimator.Estimator(
        tagger_model_fn,
        os.path.join(workdir, "model"),
        config=tf.estimator.RunConfig(tf_random_seed=SEED, log_step_count_steps=5),
    )
    hooks = {mode: IteratorInitializerHook(tf) for mode in ("train", "eval", "predict")}
    with _info_lines() as lines:
        model.train(tagger_input_fn(tf, hooks["train"]), steps=10, hooks=[hooks["train"].as_hook()])
    result = model.evaluate(
        tagger_input_fn(tf, hooks["eval"], epochs=1), hooks=[hooks["eval"].as_hook()]
    )
    rows = list(
        model.predict(
            lambda: tagger_input_fn(tf, hooks["predict"], epochs=1)()[0],
            hooks=[hooks["predict"].as_hook()],
        )
    )
    return {
        "exact": {
            "eval_keys": sorted(result),
            "variables": model.get_variable_names(),
            "predictions": structure(rows),
            "count": len(rows),
            "logged": [_shape_of_message(m) for m in _messages(lines, "loss = ")],
        },
        "close": {
            **_floats(result),
            "logits": [r["logits"].tolist() for r in rows[:3]],
        },
    }


# ------------------------------------------------------------------ text in numpy and pandas
def text_array_inputs(tf, workdir):
    """numpy_input_fn and pandas_input_fn given sentences as bytes, str and object arrays
    (what `np.array(texts)` and a DataFrame's text column are): what predict returns, or
    the error."""
    import pandas as pd

    vocab = _write_vocab(os.path.join(workdir, "vocab.txt"), WORDS)
    texts = [s.decode() for s in SENTENCES[:3]]
    model = tf.estimator.Estimator(
        vocab_model_fn,
        os.path.join(workdir, "model"),
        params={"vocab": vocab},
        config=tf.estimator.RunConfig(tf_random_seed=SEED),
    )
    model.train(
        tf.compat.v1.estimator.inputs.numpy_input_fn(
            {"sentence": np.array(SENTENCES)}, np.int32(LABELS), batch_size=4, shuffle=False
        ),
        steps=2,
    )
    inputs = tf.compat.v1.estimator.inputs
    arrays = {
        "bytes": np.array([t.encode() for t in texts]),
        "str": np.array(texts),
        "object": np.array(texts, dtype=object),
    }
    input_fns = {
        f"numpy_{kind}": inputs.numpy_input_fn({"sentence": a}, shuffle=False)
        for kind, a in arrays.items()
    }
    input_fns["pandas"] = inputs.pandas_input_fn(pd.DataFrame({"sentence": texts}), shuffle=False)
    exact, close = _prediction_misuse(tf, model, input_fns["numpy_bytes"]), {}
    for name, input_fn in input_fns.items():
        rows = []
        exact[name] = _raised(lambda f=input_fn, kept=rows: kept.extend(model.predict(f)))
        if rows:
            close[name] = [r["probabilities"].tolist() for r in rows]
    return {"exact": exact, "close": close}


def _prediction_misuse(tf, model, input_fn):
    """What predict says to a key it has not and to per-sentence predictions beside a
    per-vocabulary one (no batch dimension in common)."""

    def with_vocabulary(features, labels, mode):
        tags = tf.strings.split(features["sentence"]).to_tensor()
        return tf.estimator.EstimatorSpec(
            mode, predictions={"tags": tags, "vocabulary": tf.constant(WORDS)}
        )

    def lengths(features, labels, mode):
        lengths = tf.strings.split(features["sentence"]).row_lengths()
        return tf.estimator.EstimatorSpec(mode, predictions=lengths)

    def split_words(kind):
        def model_fn(features, labels, mode):
            split = {"sparse": tf.compat.v1.string_split, "ragged": tf.strings.split}[kind]
            return tf.estimator.EstimatorSpec(
                mode, predictions={"words": split(features["sentence"])}
            )

        return tf.estimator.Estimator(model_fn, model.model_dir)

    mixed = tf.estimator.Estimator(with_vocabulary, model.model_dir)
    single = tf.estimator.Estimator(lengths, model.model_dir)
    return {
        "unknown_key": _raised(lambda: model.predict(input_fn, predict_keys=["nope"])),
        "partly_unknown_keys": [
            sorted(row) for row in model.predict(input_fn, predict_keys=["classes", "nope"])
        ][:1],
        "single_with_keys": _raised(lambda: single.predict(input_fn, predict_keys=["x"])),
        "single": [int(n) for n in single.predict(input_fn)],
        # (Their type: the kit's message says more, docs/guide/estimator.md.)
        "sparse_words": (_raised(lambda: split_words("sparse").predict(input_fn)) or [0])[:1],
        "ragged_words": (_raised(lambda: split_words("ragged").predict(input_fn)) or [0])[:1],
        "mixed_batch": _raised(lambda: mixed.predict(input_fn)),
        "mixed_batch_whole": _raised(lambda: mixed.predict(input_fn, yield_single_examples=False)),
    }


PROGRAMS = {
    "cnn_text": cnn_text,
    "head_cnn_text": head_cnn_text,
    "lstm_dynamic_rnn": _rnn_program("lstm", static=False),
    "gru_static_rnn": _rnn_program("gru", static=True),
    "keras_layers": keras_layers,
    "word2vec_sampled_softmax": _word2vec_program("sampled_softmax"),
    "word2vec_nce": _word2vec_program("nce"),
    "raw_sentences": raw_sentences,
    "warm_start_vocab": warm_start_vocab,
    "pretrained_embeddings": pretrained_embeddings,
    "sequence_tagger": sequence_tagger,
    "text_array_inputs": text_array_inputs,
}
