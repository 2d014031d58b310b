"""Programs in the shape of tensorflow/tensorflow's TF1 `tensorflow/examples/learn/` (the
Estimator versions of TF 1.5 to 1.15), after `tf_upgrade_v2` and the hand edits users
make where tf.contrib is gone, on tiny made-up data, where the other families do not
reach:

- `iris_custom_model`: iris_custom_model.py and iris_custom_decay_dnn.py: sklearn's
  float64 iris arrays through `numpy_input_fn` into a three-argument model_fn of
  `tf.compat.v1.layers` (which take float64 from their inputs: float64 kernels, loss and
  predictions), an `Estimator` given no model_dir (a temporary folder), `AdagradOptimizer`
  at a fixed rate and at `exponential_decay(0.1, step, 100, 0.001)`, accuracy;
- `iris_run_config`: iris.py, iris_run_config.py and hdf5_classification.py: the arrays
  written to and read back from an HDF5 file, `RunConfig().replace(tf_random_seed=...,
  save_checkpoints_steps=..., keep_checkpoint_max=..., session_config=...)` (and what
  `replace` refuses), a `DNNClassifier` over a `numeric_column(shape=x.shape[1:])`,
  predictions' `class_ids` reshaped to the labels;
- `text_bag_of_words`: text_classification.py's bag-of-words model (VocabularyProcessor's
  int64 ids shifted by one, so padding is -1, through `categorical_column_with_identity`,
  an `embedding_column` and `input_layer`) and `tf.contrib.layers.bow_encoder` as users
  replace it (`embedding_lookup` and `reduce_mean` of their own variable), Adam;
- `text_series_labels`: text_classification.py's labels as a `pandas.Series`, and the
  Series users' splits leave (a shuffled index; an index after the training rows);
- `text_char_models`: text_classification_character_cnn.py (ByteProcessor's uint8 ids
  one-hot over 256 characters, `conv2d` and `max_pooling2d` under `variable_scope`s, the
  transposes and `reduce_max`; text_classification_cnn.py's word version has the same
  layers) and text_classification_character_rnn.py (a `GRUCell` through `static_rnn` over
  the unstacked one-hot characters);
- `mnist_conv`: mnist.py's conv model_fn (`variable_scope`d conv layers, dropout only in
  TRAIN, `softmax_cross_entropy` on an int32 one-hot);
- `boston_dnn_regressor`: boston.py: standardized float64 arrays, float64 labels of rank
  one, `numpy_input_fn(batch_size=1, shuffle=True)` into a `DNNRegressor`, predictions
  reshaped, `average_loss` printed; labels given as a list;
- `multiple_gpu`: multiple_gpu.py: layers placed by `tf.device('/device:GPU:1')` on a
  machine without it (the Estimator's soft placement) and by `tf.device('/cpu:0')`,
  `dropout` left at `training=False`;
- `wide_n_deep_threads`: wide_n_deep_tutorial.py's `--model_type=wide` over a census file
  read by `read_csv(skipinitialspace=True, skiprows=1)` and `dropna`, its input_fn's
  `pandas_input_fn(num_threads=5)` (each thread reads `num_epochs` epochs), evaluation
  to the end and predictions, training without the `dropna`; `numpy_input_fn`'s threads
  likewise.

wide_n_deep_tutorial.py's DNNLinearCombinedClassifier over the census columns is left to
the tutorial, cloudml census and public-sample families, which cover it.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees: `exact` (keys, dtypes, shapes, listings, variable
names, signatures, errors, predicted classes of data the models separate: equal),
`close` (values of models warm-started from fixed weights and fed whole, in order:
1e-4) and `loose` (values after shuffled `numpy_input_fn` training, whose batches 2.15
draws from a queue: 35%). `tests/test_examples_learn.py` compares them with 2.15's
recording (`tests/tf215/record_family.py examples_learn_programs`, into
`tests/data/tf215/examples_learn.json`).
"""

import os
import re
import shutil
import tempfile

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _digits
from tests.tutorial_programs import listing, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "examples_learn.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
X_FEATURE = "x"


def _error(call, gist):
    """[the type of what `call()` raises, whether its message names `gist`], or None."""
    raised = _raised(call)
    return raised and [raised[0], gist in raised[1]]


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def _types(values):
    """{key: [type name, dtype]} of what evaluate() returned."""
    return {k: [type(v).__name__, np.asarray(v).dtype.name] for k, v in sorted(values.items())}


def _checkpoint(estimator):
    """{variable: [dtype, shape]} of the model_dir's latest checkpoint."""
    return {
        name: [
            np.asarray(estimator.get_variable_value(name)).dtype.name,
            list(np.shape(estimator.get_variable_value(name))),
        ]
        for name in estimator.get_variable_names()
    }


def _fixed_start(tf, workdir, model_fn, features, labels):
    """A checkpoint giving every trainable variable `model_fn` makes fixed numbers of its
    own dtype (a sine over its values, scaled by its fan-in): a warm start both versions
    share."""
    directory = os.path.join(workdir, "fixed_start")
    os.makedirs(directory, exist_ok=True)
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        model_fn(features(), labels(), tf.estimator.ModeKeys.TRAIN)
        found = {
            v.op.name: (v.shape.as_list(), v.dtype.base_dtype.as_numpy_dtype)
            for v in tf.compat.v1.trainable_variables()
        }
    with tf.Graph().as_default():
        made = []
        for i, (name, (shape, dtype)) in enumerate(sorted(found.items())):
            size, fan_in = int(np.prod(shape)), int(np.prod(shape[:-1])) or 1
            value = np.sin(np.arange(size) * 0.7 + i) / np.sqrt(fan_in)
            made.append(
                tf.compat.v1.get_variable(name, initializer=value.reshape(shape).astype(dtype))
            )
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver(made).save(session, os.path.join(directory, "model.ckpt"))
    return directory


def _class_lines(lines, workdir):
    """The Estimator's lines about its model_dir and warm start, folders replaced."""
    keep = ("Using temporary folder", "Using default config", "Warm-starting from")
    shown = set()
    for line in lines:
        if line.startswith(keep):
            line = line.replace(workdir, "<workdir>")
            shown.add(re.sub(r"(folder as model directory: ).*", r"\1<tmp>", line))
    return sorted(shown)


def _predicted(tf, estimator, x_test, y_test, output, key=X_FEATURE):
    """main()'s last lines: predict the test set, take each prediction's `output`
    reshaped to the labels' shape (sklearn's scores take those), evaluate the test set.
    (predictions, y_predicted, scores)."""
    test_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={key: x_test}, y=y_test, num_epochs=1, shuffle=False
    )
    predictions = list(estimator.predict(input_fn=test_input_fn))
    y_predicted = np.array([p[output] for p in predictions])
    y_predicted = y_predicted.reshape(np.array(y_test).shape)
    return predictions, y_predicted, estimator.evaluate(input_fn=test_input_fn)


# ------------------------------------------------------------------------- iris
def _iris(n, seed):
    """sklearn's load_iris + train_test_split, made up: float64 (n, 4), int64 labels."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 3
    centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
    x = centers[y] + rng.normal(0, 0.15, (n, 4))
    return x, y.astype(np.int64)


def _iris_spec(tf, logits, labels, mode, learning_rate):
    """The iris samples' predictions, loss, Adagrad (at `learning_rate()`) and accuracy."""
    predicted_classes = tf.argmax(input=logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"class": predicted_classes, "prob": tf.nn.softmax(logits)}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=learning_rate())
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predicted_classes)
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=eval_metric_ops)


def _iris_logits(tf, features):
    net = features[X_FEATURE]
    for units in [10, 20, 10]:
        net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
    return tf.compat.v1.layers.dense(net, 3, activation=None)


def my_model(features, labels, mode):
    """iris_custom_model.py's model_fn (tf_upgrade_v2's spelling)."""
    import tensorflow as tf

    return _iris_spec(tf, _iris_logits(tf, features), labels, mode, lambda: 0.1)


def decay_model(features, labels, mode):
    """iris_custom_decay_dnn.py's: the same, its rate decayed in TRAIN."""
    import tensorflow as tf

    def learning_rate():
        global_step = tf.compat.v1.train.get_global_step()
        return tf.compat.v1.train.exponential_decay(
            learning_rate=0.1, global_step=global_step, decay_steps=100, decay_rate=0.001
        )

    return _iris_spec(tf, _iris_logits(tf, features), labels, mode, learning_rate)


def _iris_custom_run(tf, workdir, model_fn, x_train, y_train, x_test, y_test):
    start = _fixed_start(
        tf,
        workdir,
        model_fn,
        lambda: {X_FEATURE: tf.constant(x_train)},
        lambda: tf.constant(y_train),
    )
    with _info_lines() as lines:
        classifier = tf.estimator.Estimator(model_fn=model_fn, warm_start_from=start)
    model_dir = classifier.model_dir
    try:
        # (The sample: num_epochs=None, shuffle=True, steps=1000; the whole set in order
        # here, so both versions see the same batches.)
        train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
            x={X_FEATURE: x_train},
            y=y_train,
            batch_size=len(x_train),
            num_epochs=None,
            shuffle=False,
        )
        with _info_lines() as more:
            classifier.train(input_fn=train_input_fn, steps=30)
        predictions, y_predicted, scores = _predicted(tf, classifier, x_test, y_test, "class")
        seen = {
            "temporary": model_dir.startswith(tempfile.gettempdir()),
            "lines": _class_lines(lines + more, workdir),
            "variables": _checkpoint(classifier),
            "eval_types": _types(scores),
            "predictions": structure(predictions),
        }
        values = {
            "loss": float(scores["loss"]),
            "accuracy": float(scores["accuracy"]),
            "sklearn_accuracy": float(np.mean(y_predicted == y_test)),
            "prob": np.concatenate([p["prob"] for p in predictions]).astype(float).tolist(),
        }
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    return seen, values


@program
def iris_custom_model(tf, workdir):
    """main() of iris_custom_model.py and of iris_custom_decay_dnn.py."""
    x_train, y_train = _iris(24, 0)
    x_test, y_test = _iris(9, 1)
    plain, plain_values = _iris_custom_run(
        tf, os.path.join(workdir, "plain"), my_model, x_train, y_train, x_test, y_test
    )
    decay, decay_values = _iris_custom_run(
        tf, os.path.join(workdir, "decay"), decay_model, x_train, y_train, x_test, y_test
    )
    return {
        "exact": {"plain": plain, "decay": decay},
        "close": {"plain": plain_values, "decay": decay_values},
    }


def _write_h5(path, **arrays):
    """hdf5_classification.py's file: the arrays under their names."""
    import h5py

    with h5py.File(path, "w") as h5f:
        for name, value in arrays.items():
            h5f.create_dataset(name, data=value)


def _read_h5(path, *names):
    import h5py

    with h5py.File(path, "r") as h5f:
        return [np.array(h5f[name]) for name in names]


def _replace_refused(tf):
    """What `RunConfig().replace` refuses: a property it does not replace, both
    checkpoint triggers."""
    config = tf.estimator.RunConfig()
    return {
        "unknown": _error(lambda: config.replace(gpu_memory_fraction=0.5), "gpu_memory_fraction"),
        "both_triggers": _error(
            lambda: config.replace(save_checkpoints_steps=5, save_checkpoints_secs=60),
            "save_checkpoints_secs",
        ),
        "cluster_spec": _error(lambda: config.replace(cluster_spec=None), "cluster_spec"),
    }


@program
def iris_run_config(tf, workdir):
    """main() of iris_run_config.py (iris.py's DNNClassifier given a RunConfig), its
    arrays read from hdf5_classification.py's file."""
    x_train, y_train = _iris(30, 2)
    x_test, y_test = _iris(9, 3)
    h5 = os.path.join(workdir, "iris.h5")
    _write_h5(h5, X_train=x_train, X_test=x_test, y_train=y_train, y_test=y_test)
    x_train, x_test, y_train, y_test = _read_h5(h5, "X_train", "X_test", "y_train", "y_test")
    session_config = tf.compat.v1.ConfigProto(
        allow_soft_placement=True, log_device_placement=False, intra_op_parallelism_threads=1
    )
    run_config = tf.estimator.RunConfig()
    run_config = run_config.replace(
        model_dir=os.path.join(workdir, "iris_model"),
        tf_random_seed=1,
        save_checkpoints_steps=20,
        keep_checkpoint_max=2,
        session_config=session_config,
    )
    feature_columns = [
        tf.feature_column.numeric_column(X_FEATURE, shape=np.array(x_train).shape[1:])
    ]
    classifier = tf.estimator.DNNClassifier(
        feature_columns=feature_columns, hidden_units=[10, 20, 10], n_classes=3, config=run_config
    )
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={X_FEATURE: x_train}, y=y_train, num_epochs=None, shuffle=True
    )
    classifier.train(input_fn=train_input_fn, steps=200)
    predictions, y_predicted, scores = _predicted(tf, classifier, x_test, y_test, "class_ids")
    config = classifier.config
    return {
        "exact": {
            "config": [
                config.tf_random_seed,
                config.save_checkpoints_steps,
                config.save_checkpoints_secs,
                config.keep_checkpoint_max,
                config.session_config.intra_op_parallelism_threads,
                config.session_config.allow_soft_placement,
            ],
            "refused": _replace_refused(tf),
            "files": listing(os.path.join(workdir, "iris_model")),
            "variables": _checkpoint(classifier),
            "eval_types": _types(scores),
            "predictions": structure(predictions),
            "y_predicted": [y_predicted.dtype.name, list(y_predicted.shape)],
        },
        # (Seeded, but by each version's own op seeds: what the sample prints agrees.)
        "close": {
            "sklearn_less_tensorflow": float(np.mean(y_predicted == y_test) - scores["accuracy"])
        },
    }


# ---------------------------------------------------------------- text classification
MAX_DOCUMENT_LENGTH = 6
EMBEDDING_SIZE = 5
MAX_LABEL = 3
WORDS_FEATURE = "words"
_WORDS = ["river", "lake", "sea", "goal", "match", "team", "vote", "law", "party", "the", "a"]


def _documents(n, seed):
    """VocabularyProcessor(MAX_DOCUMENT_LENGTH)'s int64 ids (1-based, 0 pads) of made-up
    documents whose class is which third of the topic words they use; the texts."""
    rng = np.random.RandomState(seed)
    labels = np.arange(n) % MAX_LABEL
    ids = np.zeros((n, MAX_DOCUMENT_LENGTH), np.int64)
    texts = []
    for i, label in enumerate(labels):
        length = rng.randint(2, MAX_DOCUMENT_LENGTH + 1)
        words = [
            _WORDS[3 * label + rng.randint(3)] if rng.rand() < 0.7 else _WORDS[9 + rng.randint(2)]
            for _ in range(length)
        ]
        ids[i, :length] = [_WORDS.index(w) + 1 for w in words]
        texts.append(" ".join(words))
    return ids, labels.astype(np.int64), texts


n_words = len(_WORDS) + 1  # the processor's vocabulary, with its <UNK>


def estimator_spec_for_softmax_classification(logits, labels, mode):
    """text_classification.py's shared head (tf_upgrade_v2's spelling)."""
    import tensorflow as tf

    predicted_classes = tf.argmax(input=logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions={"class": predicted_classes, "prob": tf.nn.softmax(logits)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=0.01)
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predicted_classes)
    }
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def bag_of_words_model(features, labels, mode):
    """A bag-of-words model (text_classification.py): an identity column's embedding."""
    import tensorflow as tf

    bow_column = tf.feature_column.categorical_column_with_identity(
        WORDS_FEATURE, num_buckets=n_words
    )
    bow_embedding_column = tf.feature_column.embedding_column(bow_column, dimension=EMBEDDING_SIZE)
    bow = tf.compat.v1.feature_column.input_layer(features, feature_columns=[bow_embedding_column])
    logits = tf.compat.v1.layers.dense(bow, MAX_LABEL, activation=None)
    return estimator_spec_for_softmax_classification(logits=logits, labels=labels, mode=mode)


def bow_encoder_model(features, labels, mode):
    """The 1.4-era bag-of-words model, `tf.contrib.layers.bow_encoder` replaced as users
    replace it: their own embedding variable, looked up and averaged."""
    import tensorflow as tf

    with tf.compat.v1.variable_scope("bow_encoder"):
        embeddings = tf.compat.v1.get_variable("embeddings", [n_words, EMBEDDING_SIZE])
        word_vectors = tf.nn.embedding_lookup(params=embeddings, ids=features[WORDS_FEATURE])
        features_encoded = tf.reduce_mean(input_tensor=word_vectors, axis=1)
    logits = tf.compat.v1.layers.dense(features_encoded, MAX_LABEL, activation=None)
    return estimator_spec_for_softmax_classification(logits=logits, labels=labels, mode=mode)


def _text_run(tf, workdir, model_fn, train, test, key=WORDS_FEATURE, predict=True):
    """main(): train on the whole set (the sample: batch_size=len(x_train), shuffled, here
    in order), predict (unless not `predict`: the shared head's predictions are the bag of
    words') and evaluate the test set. `train`, `test`: (ids, labels)."""
    (x_train, y_train), (x_test, y_test) = train, test
    start = _fixed_start(
        tf,
        workdir,
        model_fn,
        lambda: {key: tf.constant(x_train)},
        lambda: tf.constant(y_train),
    )
    model_dir = os.path.join(workdir, "model")
    classifier = tf.estimator.Estimator(
        model_fn=model_fn, model_dir=model_dir, warm_start_from=start
    )
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={key: x_train}, y=y_train, batch_size=len(x_train), num_epochs=None, shuffle=False
    )
    classifier.train(input_fn=train_input_fn, steps=20)
    test_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={key: x_test}, y=y_test, num_epochs=1, shuffle=False
    )
    scores = classifier.evaluate(input_fn=test_input_fn)
    seen = {
        "variables": _checkpoint(classifier),
        "eval_types": _types(scores),
        "files": listing(model_dir),
    }
    values = {"loss": float(scores["loss"]), "accuracy": float(scores["accuracy"])}
    if predict:
        predictions = list(classifier.predict(input_fn=test_input_fn))
        y_predicted = np.array([p["class"] for p in predictions]).reshape(np.array(y_test).shape)
        seen["predictions"] = structure(predictions)
        values["sklearn_accuracy"] = float(np.mean(y_predicted == y_test))
        values["prob"] = np.concatenate([p["prob"] for p in predictions]).astype(float).tolist()
    return seen, values


@program
def text_bag_of_words(tf, workdir):
    """text_classification.py with --bow_model (ids shifted so padding is -1), and the
    bow_encoder version on the unshifted ids."""
    x_train, y_train, _ = _documents(18, 4)
    x_test, y_test, _ = _documents(6, 5)
    # (The sample subtracts 1: the processor's ids start at 1, the identity column's at 0.)
    shifted = (x_train - 1, y_train), (x_test - 1, y_test)
    bow, bow_values = _text_run(tf, os.path.join(workdir, "bow"), bag_of_words_model, *shifted)
    encoder, encoder_values = _text_run(
        tf,
        os.path.join(workdir, "encoder"),
        bow_encoder_model,
        (x_train, y_train),
        (x_test, y_test),
        predict=False,
    )
    return {
        "exact": {"bow": bow, "encoder": encoder},
        "close": {"bow": bow_values, "encoder": encoder_values},
    }


@program
def text_series_labels(tf, workdir):
    """text_classification.py's labels as it holds them, `pandas.Series(target)`, and as
    users' own splits leave them: a shuffled frame's column (its index shuffled too) and
    the rows after the training ones (`iloc[n:]`, an index from n). tf.estimator's feeder
    read a Series by row numbers as labels of its index."""
    import pandas

    x, target, _ = _documents(24, 16)
    x = x - 1
    y_train = pandas.Series(target[:18].astype(np.int32))
    start = _fixed_start(
        tf,
        workdir,
        bag_of_words_model,
        lambda: {WORDS_FEATURE: tf.constant(x[:18])},
        lambda: tf.constant(y_train.to_numpy()),
    )
    classifier = tf.estimator.Estimator(
        model_fn=bag_of_words_model,
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=start,
    )
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={WORDS_FEATURE: x[:18]}, y=y_train, batch_size=18, num_epochs=None, shuffle=False
    )
    classifier.train(input_fn=train_input_fn, steps=5)

    def evaluate(y):
        return classifier.evaluate(
            tf.compat.v1.estimator.inputs.numpy_input_fn(
                x={WORDS_FEATURE: x[18:]}, y=y, num_epochs=1, shuffle=False
            )
        )

    labels = pandas.Series(target.astype(np.int32))
    shuffled = labels[18:].sample(frac=1, random_state=0).reset_index(drop=True)
    shuffled.index = shuffled.index[::-1]
    in_order, by_index = evaluate(labels[18:].reset_index(drop=True)), evaluate(shuffled)
    return {
        "exact": {"split_off": _error(lambda: evaluate(labels.iloc[18:]), "index")},
        "close": {
            "in_order": _floats({k: in_order[k] for k in ("accuracy", "loss")}),
            "by_index": _floats({k: by_index[k] for k in ("accuracy", "loss")}),
        },
    }


# ------------------------------------------------------ the character cnn and rnn
CHARS_FEATURE = "chars"
MAX_CHARS = 8
N_FILTERS = 4
POOLING_WINDOW = 4
POOLING_STRIDE = 2
HIDDEN_SIZE = 4


def _bytes(texts):
    """ByteProcessor(MAX_CHARS)'s uint8 ids: each text's bytes, cut or padded with 0."""
    ids = np.zeros((len(texts), MAX_CHARS), np.uint8)
    for i, text in enumerate(texts):
        data = text.encode()[:MAX_CHARS]
        ids[i, : len(data)] = list(data)
    return ids


def _two_conv_layers(tf, input_layer, filter_shape1, filter_shape2):
    """The samples' two conv layers over [batch, length, width, 1]."""
    with tf.compat.v1.variable_scope("CNN_Layer1"):
        conv1 = tf.compat.v1.layers.conv2d(
            input_layer,
            filters=N_FILTERS,
            kernel_size=filter_shape1,
            padding="VALID",
            activation=tf.nn.relu,
        )
        pool1 = tf.compat.v1.layers.max_pooling2d(
            conv1, pool_size=POOLING_WINDOW, strides=POOLING_STRIDE, padding="SAME"
        )
        # Transpose matrix so that n_filters from convolution becomes width.
        pool1 = tf.transpose(a=pool1, perm=[0, 1, 3, 2])
    with tf.compat.v1.variable_scope("CNN_Layer2"):
        conv2 = tf.compat.v1.layers.conv2d(
            pool1, filters=N_FILTERS, kernel_size=filter_shape2, padding="VALID"
        )
        # Max across each filter to get useful features for classification.
        return tf.squeeze(tf.reduce_max(input_tensor=conv2, axis=1), axis=[1])


def char_cnn_model(features, labels, mode):
    """text_classification_character_cnn.py's char_cnn_model, shrunk."""
    import tensorflow as tf

    features_onehot = tf.one_hot(features[CHARS_FEATURE], 256)
    input_layer = tf.reshape(features_onehot, [-1, MAX_CHARS, 256, 1])
    pool2 = _two_conv_layers(tf, input_layer, [3, 256], [3, N_FILTERS])
    logits = tf.compat.v1.layers.dense(pool2, MAX_LABEL, activation=None)
    return estimator_spec_for_softmax_classification(logits=logits, labels=labels, mode=mode)


def char_rnn_model(features, labels, mode):
    """text_classification_character_rnn.py's char_rnn_model: a GRU through static_rnn."""
    import tensorflow as tf

    byte_vectors = tf.one_hot(features[CHARS_FEATURE], 256, 1.0, 0.0)
    byte_list = tf.unstack(byte_vectors, axis=1)
    cell = tf.compat.v1.nn.rnn_cell.GRUCell(HIDDEN_SIZE)
    _, encoding = tf.compat.v1.nn.static_rnn(cell, byte_list, dtype=tf.float32)
    logits = tf.compat.v1.layers.dense(encoding, MAX_LABEL, activation=None)
    return estimator_spec_for_softmax_classification(logits=logits, labels=labels, mode=mode)


@program
def text_char_models(tf, workdir):
    """The character cnn and rnn samples on ByteProcessor's uint8 ids."""
    _, y_train, train_texts = _documents(18, 6)
    _, y_test, test_texts = _documents(6, 7)
    train, test = (_bytes(train_texts), y_train), (_bytes(test_texts), y_test)
    exact, close = {}, {}
    for name, model_fn in [("char_cnn", char_cnn_model), ("char_rnn", char_rnn_model)]:
        exact[name], close[name] = _text_run(
            tf, os.path.join(workdir, name), model_fn, train, test, CHARS_FEATURE, False
        )
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------------ mnist.py
N_DIGITS = 10


def conv_model(features, labels, mode):
    """mnist.py's conv_model, shrunk to 8x8 images (tf_upgrade_v2's spelling)."""
    import tensorflow as tf

    feature = tf.reshape(features[X_FEATURE], [-1, 8, 8, 1])
    with tf.compat.v1.variable_scope("conv_layer1"):
        h_conv1 = tf.compat.v1.layers.conv2d(
            feature, filters=4, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
        )
        h_pool1 = tf.compat.v1.layers.max_pooling2d(h_conv1, pool_size=2, strides=2, padding="same")
    with tf.compat.v1.variable_scope("conv_layer2"):
        h_conv2 = tf.compat.v1.layers.conv2d(
            h_pool1, filters=8, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
        )
        h_pool2 = tf.compat.v1.layers.max_pooling2d(h_conv2, pool_size=2, strides=2, padding="same")
        h_pool2_flat = tf.reshape(h_pool2, [-1, 2 * 2 * 8])
    h_fc1 = tf.compat.v1.layers.dense(h_pool2_flat, 16, activation=tf.nn.relu)
    if mode == tf.estimator.ModeKeys.TRAIN:
        h_fc1 = tf.compat.v1.layers.dropout(
            h_fc1, rate=0.5, training=(mode == tf.estimator.ModeKeys.TRAIN)
        )
    logits = tf.compat.v1.layers.dense(h_fc1, N_DIGITS, activation=None)
    predict = tf.argmax(input=logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"class": predict, "prob": tf.nn.softmax(logits)}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    onehot_labels = tf.one_hot(tf.cast(labels, tf.int32), N_DIGITS, 1, 0)
    loss = tf.compat.v1.losses.softmax_cross_entropy(onehot_labels=onehot_labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.01)
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predict)
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=eval_metric_ops)


@program
def mnist_conv(tf, workdir):
    """main() of mnist.py's convolutional half (its linear half is a `LinearClassifier`
    the tutorial families cover): its weights and dropout unseeded, as in the sample, so
    what is compared is what does not depend on them."""
    images, labels = _digits(60, 8)
    test_images, test_labels = _digits(20, 9)
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={X_FEATURE: images},
        y=labels.astype(np.int32),
        batch_size=20,
        num_epochs=None,
        shuffle=True,
    )
    test_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={X_FEATURE: test_images}, y=test_labels.astype(np.int32), num_epochs=1, shuffle=False
    )
    classifier = tf.estimator.Estimator(
        model_fn=conv_model, model_dir=os.path.join(workdir, "conv")
    )
    classifier.train(input_fn=train_input_fn, steps=10)
    scores = classifier.evaluate(input_fn=test_input_fn)
    rows = list(classifier.predict(input_fn=test_input_fn))
    return {
        "exact": {
            "variables": _checkpoint(classifier),
            "eval_types": _types(scores),
            "predictions": structure(rows),
            "count": len(rows),
        },
    }


# ----------------------------------------------------------------------- boston.py
def _housing(n, seed):
    """load_boston's arrays, made up: 13 float64 features, float64 prices."""
    rng = np.random.RandomState(seed)
    x = rng.uniform(0, 10, (n, 13)) * rng.uniform(0.5, 3, 13)
    y = x[:, :4] @ np.array([0.5, -0.3, 0.2, 0.1]) + 20 + rng.normal(0, 1, n)
    return x, y


def _standardized(x, mean, scale):
    """preprocessing.StandardScaler's transform."""
    return (x - mean) / scale


@program
def boston_dnn_regressor(tf, workdir):
    """main() of boston.py: a DNNRegressor over standardized arrays, one row a batch."""
    x_train, y_train = _housing(40, 10)
    x_test, y_test = _housing(10, 11)
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0)
    x_train = _standardized(x_train, mean, scale)
    feature_columns = [tf.feature_column.numeric_column("x", shape=np.array(x_train).shape[1:])]
    regressor = tf.estimator.DNNRegressor(
        feature_columns=feature_columns,
        hidden_units=[10, 10],
        model_dir=os.path.join(workdir, "boston"),
    )
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": x_train}, y=y_train, batch_size=1, num_epochs=None, shuffle=True
    )
    regressor.train(input_fn=train_input_fn, steps=50)
    x_transformed = _standardized(x_test, mean, scale)
    predictions, y_predicted, scores = _predicted(
        tf, regressor, x_transformed, y_test, "predictions", key="x"
    )
    # A slip: the prices as a list (`list(boston.target)`), not an array.
    as_list = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": x_transformed}, y=list(y_test), num_epochs=1, shuffle=False
    )
    return {
        "exact": {
            "labels_as_list": _error(lambda: regressor.evaluate(input_fn=as_list), "shape"),
            "variables": _checkpoint(regressor),
            "eval_types": _types(scores),
            "predictions": structure(predictions),
            "y_predicted": [y_predicted.dtype.name, list(y_predicted.shape)],
        },
        # (Unseeded: what the sample prints agrees.)
        "close": {
            "sklearn_over_tensorflow": float(
                np.mean((y_predicted - y_test) ** 2) / scores["average_loss"]
            )
        },
    }


# ----------------------------------------------------------------- multiple_gpu.py
def gpu_model(features, labels, mode, params):
    """multiple_gpu.py's my_model: layers placed on GPUs 1 and 2 (or, as users without
    GPUs edit it, on '/cpu:0'), the dropout left at training=False."""
    import tensorflow as tf

    first, second = params["devices"]
    net = features[X_FEATURE]
    with tf.device(first):
        for units in [10, 20, 10]:
            net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
            net = tf.compat.v1.layers.dropout(net, rate=0.1)
    with tf.device(second):
        logits = tf.compat.v1.layers.dense(net, 3, activation=None)
        return _iris_spec(tf, logits, labels, mode, lambda: 0.1)


def _gpu_run(tf, workdir, devices, x_train, y_train, x_test, y_test):
    params = {"devices": devices}
    start = _fixed_start(
        tf,
        workdir,
        lambda features, labels, mode: gpu_model(features, labels, mode, params),
        lambda: {X_FEATURE: tf.constant(x_train)},
        lambda: tf.constant(y_train),
    )
    model_dir = os.path.join(workdir, "model")
    classifier = tf.estimator.Estimator(
        model_fn=gpu_model, model_dir=model_dir, params=params, warm_start_from=start
    )
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={X_FEATURE: x_train},
        y=y_train,
        batch_size=len(x_train),
        num_epochs=None,
        shuffle=False,
    )
    classifier.train(input_fn=train_input_fn, steps=10)
    test_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={X_FEATURE: x_test}, y=y_test, num_epochs=1, shuffle=False
    )
    scores = classifier.evaluate(input_fn=test_input_fn)
    seen = {"variables": sorted(classifier.get_variable_names()), "eval_types": _types(scores)}
    values = {"loss": float(scores["loss"]), "accuracy": float(scores["accuracy"])}
    return seen, values


@program
def multiple_gpu(tf, workdir):
    """main() of multiple_gpu.py: its hidden layers on GPU 1 as written (soft-placed on
    this CPU), its logits and training on '/cpu:0', as users without GPUs edit it."""
    x_train, y_train = _iris(24, 12)
    x_test, y_test = _iris(6, 13)
    x_train, x_test = x_train.astype(np.float32), x_test.astype(np.float32)
    devices = ("/device:GPU:1", "/cpu:0")
    exact, close = _gpu_run(tf, workdir, devices, x_train, y_train, x_test, y_test)
    return {"exact": exact, "close": close}


# ------------------------------------------------------------ wide_n_deep_tutorial.py
CSV_COLUMNS = ["age", "workclass", "education", "occupation", "gender", "income_bracket"]
_EDUCATION = ["Bachelors", "HS-grad", "Masters", "Some-college"]
_OCCUPATION = ["Adm-clerical", "Exec-managerial", "Sales", "Tech-support"]


def _write_census(path, n, seed, test):
    """adult.data (or adult.test: its first line not a row, its labels ending in '.'),
    made up, with a row missing a value."""
    rng = np.random.RandomState(seed)
    lines = ["|1x3 Cross validator" if test else "age, workclass, ..."]
    for i in range(n):
        age = rng.randint(18, 70)
        education = _EDUCATION[rng.randint(4)]
        rich = age > 40 and education in ("Bachelors", "Masters")
        label = (">50K" if rich else "<=50K") + ("." if test else "")
        workclass = "?" if i == 3 else rng.choice(["Private", "State-gov"])
        occupation = "" if i == 5 else _OCCUPATION[rng.randint(4)]
        gender = rng.choice(["Female", "Male"])
        lines.append(f"{age}, {workclass}, {education}, {occupation}, {gender}, {label}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def census_input_fn(tf, data_file, num_epochs, shuffle, dropna=True):
    """The tutorial's input_fn: read_csv, dropna (unless a user left it out), labels from
    the bracket, five threads."""
    import pandas as pd

    df_data = pd.read_csv(
        tf.io.gfile.GFile(data_file),
        names=CSV_COLUMNS,
        skipinitialspace=True,
        engine="python",
        skiprows=1,
    )
    # remove NaN elements
    if dropna:
        df_data = df_data.dropna(how="any", axis=0)
    labels = df_data["income_bracket"].apply(lambda x: ">50K" in x).astype(int)
    return tf.compat.v1.estimator.inputs.pandas_input_fn(
        x=df_data, y=labels, batch_size=100, num_epochs=num_epochs, shuffle=shuffle, num_threads=5
    )


def _wide_columns(tf):
    gender = tf.feature_column.categorical_column_with_vocabulary_list("gender", ["Female", "Male"])
    education = tf.feature_column.categorical_column_with_hash_bucket(
        "education", hash_bucket_size=1000
    )
    age_buckets = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("age"), boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65]
    )
    base_columns = [gender, education, age_buckets]
    crossed_columns = [
        tf.feature_column.crossed_column(["education", "occupation"], hash_bucket_size=1000),
        tf.feature_column.crossed_column(
            [age_buckets, "education", "occupation"], hash_bucket_size=1000
        ),
    ]
    return base_columns + crossed_columns


@program
def wide_n_deep_threads(tf, workdir):
    """train_and_eval() of wide_n_deep_tutorial.py with --model_type=wide: its input_fn's
    five reader threads each read the test file's one epoch (2.15 warned so), so evaluate
    and predict see every row five times; numpy_input_fn's threads likewise."""
    train_file, test_file = (os.path.join(workdir, f) for f in ("adult.data", "adult.test"))
    _write_census(train_file, 30, 14, test=False)
    _write_census(test_file, 12, 15, test=True)
    m = tf.estimator.LinearClassifier(
        model_dir=os.path.join(workdir, "wide"), feature_columns=_wide_columns(tf)
    )
    m.train(input_fn=census_input_fn(tf, train_file, num_epochs=None, shuffle=True), steps=5)
    results = m.evaluate(
        input_fn=census_input_fn(tf, test_file, num_epochs=1, shuffle=False), steps=None
    )
    rows = list(m.predict(census_input_fn(tf, test_file, num_epochs=1, shuffle=False)))
    # Without dropna, the missing occupation is a NaN in a column of strings.
    with_nan = census_input_fn(tf, train_file, num_epochs=None, shuffle=True, dropna=False)
    probabilities = np.array([row["logistic"][0] for row in rows])
    threads = tf.compat.v1.estimator.inputs.numpy_input_fn(
        {"x": np.arange(7.0)},
        np.arange(7),
        batch_size=4,
        num_epochs=2,
        shuffle=False,
        num_threads=3,
    )
    return {
        "exact": {
            "evaluate_keys": sorted(results),
            "global_step": int(results["global_step"]),
            "predictions": structure(rows),
            "count": len(rows),
            "numpy_rows": _rows_read(tf, threads),
            "without_dropna": _error(
                lambda: m.train(input_fn=with_nan, steps=1), "Unsupported object type float"
            ),
        },
        # (Five copies of each row: the same mean as one.)
        "close": {
            "mean_probability_less_prediction_mean": float(
                probabilities.mean() - results["prediction/mean"]
            )
        },
    }


def _rows_read(tf, input_fn):
    """How many rows `input_fn` gives, read in a TF1 session as an Estimator reads it."""
    with tf.Graph().as_default():
        made = input_fn()
        if isinstance(made, tf.data.Dataset):
            made = tf.compat.v1.data.make_one_shot_iterator(made).get_next()
        features, _ = made
        count = 0
        with tf.compat.v1.train.MonitoredSession() as session:
            while not session.should_stop():
                count += len(session.run(features["x"]))
    return count
