"""Programs using tf.estimator 2.15's experimental canned estimators as their docstrings
and tutorials do, on tiny seeded data: `LinearSDCA` as a `LinearClassifier`'s or
`LinearRegressor`'s optimizer (an example-id string feature; numeric, bucketized and
categorical columns), and `RNNClassifier` / `RNNEstimator` over sequence columns
(`units` with `cell_type`, an `rnn_cell_fn`, `return_sequences`, a head of the user's,
an export by TF1's `export_savedmodel`, which 2.15's RNN classes, V1 Estimators, had).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (names, shapes, keys, signatures, errors) and `close` values;
`tests/test_experimental_estimators.py` compares them with 2.15's recording
(`tests/tf215/record_family.py experimental_estimator_programs`, into
`tests/data/tf215/experimental_estimators.json`).

SDCA starts from zeros and trains on batches of one example (its kernel updates a batch's
examples in threads racing on the weights: run to run, under 2.15 as here, a bigger
batch's values vary), so its values compare. An RNN's start is random (and drawn in
another order here): after one step, each RNN program rewrites its checkpoint with
numbers made from each variable's name (`_fixed_restart`), so that what follows starts
from the same weights under both.
"""

import os
import zlib

import numpy as np

from tests.migrate_guide_programs import _scalars_by_tag
from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import event_tags, listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "experimental_estimators.json")


def _floats(value):
    return np.round(np.asarray(value, np.float64), 6).tolist()


def _shapes(estimator):
    return {
        n: list(np.shape(estimator.get_variable_value(n)))
        for n in sorted(estimator.get_variable_names())
    }


def _rows(rows):
    """{prediction key: [dtype, shape]} of the first row."""
    return {k: [np.asarray(v).dtype.name, list(np.shape(v))] for k, v in sorted(rows[0].items())}


def _numeric_rows(rows):
    """{prediction key: every row's value} of the float predictions."""
    return {
        k: _floats([r[k] for r in rows])
        for k in sorted(rows[0])
        if np.asarray(rows[0][k]).dtype.kind == "f"
    }


def _export(tf, estimator, workdir, columns):
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = estimator.export_saved_model(os.path.join(workdir, "export"), receiver)
    return signatures(path.decode() if isinstance(path, bytes) else path)


def _metrics(metrics):
    return {k: float(v) for k, v in sorted(metrics.items()) if k != "global_step"}


# ------------------------------------------------------------------------------ SDCA
def _people(n=16, seed=0):
    """An example id, an age, a color, a city, a weight, a binary label and a price."""
    rng = np.random.RandomState(seed)
    age = rng.uniform(18, 70, n).astype(np.float32)
    color = rng.choice(["red", "green", "blue", "pink"], n)
    city = rng.choice(["paris", "oslo", "lima", "rome", "kyiv"], n)
    score = (age - 40) / 15 + (color == "red") - (city == "oslo") + rng.normal(0, 0.5, n)
    features = {
        "example_id": np.array([f"id{i}" for i in range(n)]),
        "age": age,
        "color": color,
        "city": city,
        "weight": rng.uniform(0.5, 2.0, n).astype(np.float32),
    }
    return features, (score > 0).astype(np.int64), (2.0 * score + 3.0).astype(np.float32)


def _people_columns(tf):
    fc = tf.feature_column
    age = fc.numeric_column("age")
    return [
        age,
        fc.bucketized_column(age, boundaries=[30.0, 50.0]),
        fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"]),
        fc.categorical_column_with_hash_bucket("city", hash_bucket_size=8),
    ]


def _people_input_fn(tf, label_index, batch_size=1, epochs=None):
    def input_fn():
        data = _people()
        dataset = tf.data.Dataset.from_tensor_slices((data[0], data[label_index]))
        return dataset.repeat(epochs).batch(batch_size)

    return input_fn


def _sdca_run(tf, estimator, label_index, workdir, steps=(8, 8), export=True):
    """Trains (`steps` a call), evaluates, predicts and (with `export`) exports; what a
    user sees."""
    model_dir = estimator.model_dir
    for n in steps:
        estimator.train(_people_input_fn(tf, label_index), steps=n)
    metrics = estimator.evaluate(_people_input_fn(tf, label_index, 16, epochs=1), steps=1)
    rows = list(estimator.predict(_people_input_fn(tf, label_index, batch_size=5, epochs=1)))
    weights = {
        n: _floats(estimator.get_variable_value(n))
        for n in estimator.get_variable_names()
        if n.startswith("linear/") and "_unshrunk" not in n
    }
    scalars = _scalars_by_tag(tf, model_dir)
    return {
        "exact": {
            "metric_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "prediction_rows": _rows(rows),
            "variables": _shapes(estimator),
            "summary_tags": sorted(scalars),
            "model_dir": listing(model_dir),
            "signatures": _export(tf, estimator, workdir, _people_columns(tf)) if export else None,
        },
        "close": {
            "losses": scalars.get("loss", []),
            "metrics": _metrics(metrics),
            "rows": _numeric_rows(rows),
            "weights": weights,
        },
    }


def _sdca_estimator(tf, estimator, model_dir, sdca, **kwargs):
    """`estimator` (LinearClassifier, LinearRegressor) on the people's columns, trained
    by a LinearSDCA of the `sdca` settings, summaries every step."""
    return estimator(
        feature_columns=_people_columns(tf),
        optimizer=tf.estimator.experimental.LinearSDCA(example_id_column="example_id", **sdca),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(save_summary_steps=1),
        **kwargs,
    )


def sdca_linear_classifier(tf, workdir):
    """LinearSDCA's docstring: a binary LinearClassifier with a weight column, trained
    twice by steps, then evaluated, asked for predictions and exported."""
    sdca = {"num_loss_partitions": 1, "num_table_shards": 1, "symmetric_l2_regularization": 2.0}
    classifier = _sdca_estimator(
        tf,
        tf.estimator.LinearClassifier,
        os.path.join(workdir, "classifier"),
        sdca,
        weight_column="weight",
    )
    return _sdca_run(tf, classifier, 1, workdir)


def sdca_linear_regressor(tf, workdir):
    """A LinearRegressor trained by SDCA with L1 and L2 (the L1 shrinks weights to 0)."""
    sdca = {
        "num_loss_partitions": 1,
        "symmetric_l1_regularization": 0.5,
        "symmetric_l2_regularization": 1.0,
    }
    regressor = _sdca_estimator(
        tf, tf.estimator.LinearRegressor, os.path.join(workdir, "regressor"), sdca
    )
    for _ in range(2):
        regressor.train(_people_input_fn(tf, 2), steps=6)
    return _sdca_run(tf, regressor, 2, workdir, steps=())


def sdca_new_estimator_trains_on(tf, workdir):
    """A second LinearClassifier on the first one's model_dir trains on from its
    checkpoint (a new Estimator object, as a resumed script makes)."""
    model_dir = os.path.join(workdir, "resumed")

    def classifier():
        return _sdca_estimator(
            tf,
            tf.estimator.LinearClassifier,
            model_dir,
            {"symmetric_l2_regularization": 2.0},
        )

    classifier().train(_people_input_fn(tf, 1), steps=5)
    return _sdca_run(tf, classifier(), 1, workdir, steps=(5,), export=False)


def sdca_v1_classes(tf, workdir):
    """tf.compat.v1.estimator's LinearClassifier (weighted, its variables split in two by
    a fixed_size_partitioner) trained by LinearSDCA: the unshrunk weights 2.15 saved a
    part apiece (`linear/linear/linear_model/.../part_0_unshrunk`), then a new classifier
    on the first one's model_dir training on."""
    sdca = {"symmetric_l2_regularization": 2.0}
    partitioner = tf.compat.v1.fixed_size_partitioner(num_shards=2, axis=0)

    def classifier():
        return _sdca_estimator(
            tf,
            tf.compat.v1.estimator.LinearClassifier,
            os.path.join(workdir, "v1_classifier"),
            sdca,
            weight_column="weight",
            partitioner=partitioner,
        )

    classifier().train(_people_input_fn(tf, 1), steps=3)
    run = _sdca_run(tf, classifier(), 1, workdir, steps=(3,), export=False)
    # The losses summarized are left out: 2.15's V1 graph read each step's loss racing
    # its weight update (three runs under 2.15: 0.00074, 0.00229, 0.00229 for one step).
    del run["close"]["losses"]
    return run


def sdca_misuse(tf, workdir):
    """What LinearSDCA refuses: several classes, a combiner other than sum, an L2 that is
    not positive, a negative L1, a two-dimensional label."""

    def sdca(**kwargs):
        return tf.estimator.experimental.LinearSDCA(example_id_column="example_id", **kwargs)

    def train(estimator):
        return estimator.train(_people_input_fn(tf, 1), steps=1)

    columns = _people_columns(tf)
    model_dir = os.path.join(workdir, "m")
    linear = tf.estimator.LinearClassifier
    return {
        "exact": {
            "multi_class": _raised(lambda: linear(columns, n_classes=3, optimizer=sdca())),
            "mean_combiner": _raised(
                lambda: linear(columns, optimizer=sdca(), sparse_combiner="mean")
            ),
            "zero_l2": _raised(
                lambda: train(
                    linear(
                        columns,
                        optimizer=sdca(symmetric_l2_regularization=0.0),
                        model_dir=model_dir + "l2",
                    )
                )
            ),
            "negative_l1": _raised(
                lambda: train(
                    linear(
                        columns,
                        optimizer=sdca(symmetric_l1_regularization=-1.0),
                        model_dir=model_dir + "l1",
                    )
                )
            ),
            "label_dimension_2": _raised(
                lambda: tf.estimator.LinearRegressor(columns, label_dimension=2, optimizer=sdca())
            ),
        },
        "close": {},
    }


# ------------------------------------------------------------------------------- RNN
def _fixed_restart(tf, model_dir):
    """Rewrites the latest checkpoint in `model_dir`: every float model variable gets
    numbers made from its name; an optimizer's slots (`training/<optimizer>/<variable>/
    <slot>`) their initial values (0.1 for Adagrad's accumulators, else 0); its
    hyperparameters and the step stay."""
    path = tf.train.latest_checkpoint(model_dir)
    reader = tf.train.load_checkpoint(path)
    dtypes = reader.get_variable_to_dtype_map()
    graph = tf.Graph()
    with graph.as_default():
        variables = []
        for name, shape in sorted(reader.get_variable_to_shape_map().items()):
            value = reader.get_tensor(name)
            if dtypes[name] != tf.float32:
                pass
            elif name.startswith("training/"):
                if name.count("/") > 2:
                    start = 0.1 if name.endswith("/accumulator") else 0.0
                    value = np.full(shape, start, np.float32)
            else:
                rng = np.random.RandomState(zlib.crc32(name.encode()))
                value = rng.uniform(-0.3, 0.3, shape).astype(np.float32)
            variables.append(tf.compat.v1.Variable(value, name=name))
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, path, write_meta_graph=False)


_WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]


def _sentences(n=12, seed=1):
    """Word sequences of 2 to 5 words, a per-sentence class (0..2) and per-word labels."""
    rng = np.random.RandomState(seed)
    lengths = rng.randint(2, 6, n)
    words = [list(rng.choice(_WORDS, size)) for size in lengths]
    ids = [[_WORDS.index(w) for w in sentence] for sentence in words]
    classes = np.array([sum(s) % 3 for s in ids], np.int64)
    per_word = [[int(i % 2) for i in s] for s in ids]
    return words, ids, lengths, classes, per_word


def _sparse(tf, rows, dtype):
    indices = [[i, j] for i, row in enumerate(rows) for j in range(len(row))]
    values = [v for row in rows for v in row]
    width = max(len(row) for row in rows)
    return tf.sparse.SparseTensor(
        indices, tf.constant(values, dtype), dense_shape=[len(rows), width]
    )


def _sentence_input_fn(tf, label="binary", return_labels=True):
    """Features: `tokens` (words), `token_ids`, `loudness` (a number per word),
    `length` (a context number); the label a sentence's class, binary or of 3, or a
    [batch, steps] one per word."""

    def input_fn():
        words, ids, lengths, classes, per_word = _sentences()
        features = {
            "tokens": _sparse(tf, [[w.encode() for w in s] for s in words], tf.string),
            "token_ids": _sparse(tf, ids, tf.int64),
            "loudness": _sparse(tf, [[0.1 * i for i in s] for s in ids], tf.float32),
            "length": tf.constant(lengths[:, None], tf.float32),
        }
        if not return_labels:  # one batch: predict reads until the input ends
            return tf.data.Dataset.from_tensors(features)
        if label == "per_word":
            width = max(len(s) for s in per_word)
            padded = [s + [0] * (width - len(s)) for s in per_word]
            return features, tf.constant(padded, tf.int64)
        values = classes % 2 if label == "binary" else classes
        return features, tf.constant(values[:, None], tf.int64)

    return input_fn


def _token_embedding(tf, dimension=4):
    tokens = tf.feature_column.sequence_categorical_column_with_hash_bucket(
        "tokens", hash_bucket_size=16
    )
    return tf.feature_column.embedding_column(tokens, dimension=dimension)


def _id_embedding(tf, dimension=3):
    ids = tf.feature_column.sequence_categorical_column_with_identity(
        "token_ids", num_buckets=len(_WORDS)
    )
    return tf.feature_column.embedding_column(ids, dimension=dimension)


def _rnn_run(tf, estimator, workdir, columns, label="binary", steps=4, export=True):
    """One step, the checkpoint rewritten to fixed numbers, `steps` more, then
    evaluate, predict and (with `export`) export."""
    model_dir = estimator.model_dir
    estimator.train(_sentence_input_fn(tf, label), steps=1)
    names = _shapes(estimator)
    _fixed_restart(tf, model_dir)
    estimator.train(_sentence_input_fn(tf, label), steps=steps)
    metrics = estimator.evaluate(_sentence_input_fn(tf, label), steps=1)
    rows = list(estimator.predict(_sentence_input_fn(tf, label, return_labels=False)))
    scalars = _scalars_by_tag(tf, model_dir)
    return {
        "exact": {
            "variables_after_one_step": names,
            "metric_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "prediction_rows": _rows(rows),
            "summary_tags": sorted(scalars),
            "histograms": [tag for tag in event_tags(model_dir) if tag.endswith("(histogram)")],
            "model_dir": listing(model_dir),
            "signatures": _export(tf, estimator, workdir, columns) if export else None,
        },
        "close": {
            "losses": scalars.get("loss", [])[1:],
            "metrics": _metrics(metrics),
            "rows": _numeric_rows(rows),
        },
    }


def _summaries_every_step(tf):
    return tf.estimator.RunConfig(save_summary_steps=1)


def rnn_classifier_units_lstm(tf, workdir):
    """RNNClassifier's docstring: a hashed token sequence embedded, `units=[32, 16]`,
    `cell_type='lstm'` (two stacked LSTM cells)."""
    token_emb = _token_embedding(tf)
    estimator = tf.estimator.experimental.RNNClassifier(
        sequence_feature_columns=[token_emb],
        units=[32, 16],
        cell_type="lstm",
        model_dir=os.path.join(workdir, "lstm"),
        config=_summaries_every_step(tf),
    )
    return _rnn_run(tf, estimator, workdir, [token_emb], export=False)


def rnn_classifier_return_sequences(tf, workdir):
    """`units=6, cell_type='gru'` (one fused GRU layer), `return_sequences=True`: a
    label per word, the loss and metrics over the real words, predictions per word
    with the sequence mask."""
    columns = [_id_embedding(tf)]
    estimator = tf.estimator.experimental.RNNClassifier(
        sequence_feature_columns=columns,
        units=6,
        cell_type="gru",
        return_sequences=True,
        model_dir=os.path.join(workdir, "sequences"),
        config=_summaries_every_step(tf),
    )
    return _rnn_run(tf, estimator, workdir, columns, label="per_word", steps=3)


def rnn_estimator_cell_fn_multi_class(tf, workdir):
    """RNNEstimator's docstring with a MultiClassHead and an `rnn_cell_fn` of stacked GRU
    cells; a context column repeated at every step and a numeric sequence column beside
    the embedded ids; Adam by name (2.15 fails a second `train` with an optimizer
    object: it sets the object's `iterations` again)."""

    def rnn_cell_fn():
        cells = [tf.keras.layers.GRUCell(size) for size in [8, 4]]
        return tf.keras.layers.StackedRNNCells(cells)

    columns = [_id_embedding(tf), tf.feature_column.sequence_numeric_column("loudness")]
    context = [tf.feature_column.numeric_column("length")]
    estimator = tf.estimator.experimental.RNNEstimator(
        head=tf.estimator.MultiClassHead(n_classes=3),
        sequence_feature_columns=columns,
        context_feature_columns=context,
        rnn_cell_fn=rnn_cell_fn,
        optimizer="Adam",
        model_dir=os.path.join(workdir, "multi"),
        config=_summaries_every_step(tf),
    )
    return _rnn_run(tf, estimator, workdir, columns, label="multi", steps=3, export=False)


def rnn_misuse(tf, workdir):
    """What the RNN estimators refuse: `units` beside an `rnn_cell_fn`, a cell type
    that is not one, `return_sequences` with a head that is not sequential."""
    columns = [_id_embedding(tf)]
    rnn = tf.estimator.experimental

    def train(estimator):
        return estimator.train(_sentence_input_fn(tf), steps=1)

    return {
        "exact": {
            "units_and_cell_fn": _raised(
                lambda: rnn.RNNClassifier(
                    columns, units=[4], rnn_cell_fn=lambda: tf.keras.layers.GRUCell(4)
                )
            ),
            "unknown_cell_type": _raised(
                lambda: train(
                    rnn.RNNClassifier(columns, units=[4], cell_type="tcn", model_dir=workdir + "/c")
                )
            ),
            "static_head_sequences": _raised(
                lambda: rnn.RNNEstimator(
                    tf.estimator.BinaryClassHead(), columns, units=[4], return_sequences=True
                )
            ),
        },
        "close": {},
    }


def rnn_export_savedmodel(tf, workdir):
    """2.15's RNN estimators subclassed its V1 Estimator: TF1-era code exporting one with
    `export_savedmodel` (TF1's name) got a SavedModel; here the name was hidden, an
    AttributeError, as on tf.estimator's other classes."""
    columns = [_id_embedding(tf)]
    estimator = tf.estimator.experimental.RNNClassifier(
        sequence_feature_columns=columns, units=[4], model_dir=os.path.join(workdir, "model")
    )
    estimator.train(_sentence_input_fn(tf), steps=1)
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = estimator.export_savedmodel(os.path.join(workdir, "export"), receiver)
    return {
        "exact": {
            "v1_estimator": isinstance(estimator, tf.compat.v1.estimator.Estimator),
            "signatures": signatures(path.decode() if isinstance(path, bytes) else path),
        },
        "close": {},
    }


PROGRAMS = {
    "sdca_linear_classifier": sdca_linear_classifier,
    "sdca_linear_regressor": sdca_linear_regressor,
    "sdca_new_estimator_trains_on": sdca_new_estimator_trains_on,
    "sdca_misuse": sdca_misuse,
    "sdca_v1_classes": sdca_v1_classes,
    "rnn_classifier_units_lstm": rnn_classifier_units_lstm,
    "rnn_classifier_return_sequences": rnn_classifier_return_sequences,
    "rnn_estimator_cell_fn_multi_class": rnn_estimator_cell_fn_multi_class,
    "rnn_misuse": rnn_misuse,
    "rnn_export_savedmodel": rnn_export_savedmodel,
}
