"""Programs using TensorFlow Hub inside Estimators, shaped like the Estimator-era Hub
tutorials and samples as teams have them after `tf_upgrade_v2`, on modules each program
writes itself (no network): a TF1 Hub module made by `hub.create_module_spec` and
exported by a `hub.Module` (a text embedding over a vocabulary file, with a `{"train"}`
graph; an image feature vector), and a TF2 SavedModel for `hub.KerasLayer` and
`hub.load`, all holding numbers written by a formula.

- `text_classifier`: "Text classification with TF-Hub" as tf_upgrade_v2 leaves it:
  pandas frames through `pandas_input_fn`, `hub.text_embedding_column` into a
  `tf.compat.v1.estimator.DNNClassifier` with a compat.v1 Adagrad (the upgrade's
  `loss_reduction=tf.keras.losses.Reduction.SUM` refused, then the compat.v1 one), evaluate,
  predict's class ids, a parsing export of the column's spec;
- `text_classifier_module_training`: the same column with `trainable=True`, whose
  embeddings train and are checkpointed with the DNN;
- `text_classifier_tf2_tutorial`: the tutorial's TF2 edition, `tf.estimator.DNNClassifier`
  given a Keras optimizer (refused), then a legacy one;
- `image_classifier`: `hub.image_embedding_column` into a DNNClassifier on numpy images;
- `wide_and_deep_text_classifier`: the column (trainable) on both sides of a compat.v1
  DNNLinearCombinedClassifier, its export; `wide_and_deep_frozen_regressor`: a frozen one
  in the compat.v1 regressor; `wide_and_deep_tf2`: tf.estimator's classifier;
- `linear_text_classifier`: compat.v1 LinearClassifier over the column (a dense input);
  `linear_tf2`: tf.estimator's LinearRegressor over it, LinearClassifier over images;
- `sparse_text_dnn`: `hub.sparse_text_embedding_column` over split tokens into a compat.v1
  DNNClassifier; `sparse_text_linear`: into a compat.v1 LinearClassifier and both sides of
  a compat.v1 wide & deep classifier;
- `module_in_model_fn`: a custom `model_fn` calling a trainable `hub.Module` with
  `tags={"train"}` in TRAIN, `hub.register_module_for_export` and a
  `hub.LatestModuleExporter` beside a `LatestExporter` in `train_and_evaluate`; the
  exported module read back;
- `frozen_module_in_model_fn`: a `hub.Module` that does not train, evaluate and predict;
- `input_layer_model_fn`: a frozen `hub.text_embedding_column` beside a hashed embedding
  read by compat.v1 `input_layer` in a custom model_fn (10_recommend's hybrid
  recommender's title column);
- `keras_layer_in_model_fn`: `hub.KerasLayer` (trainable) over the TF2 SavedModel inside
  a `model_fn`, trained, evaluated, exported; the SavedModel read by `hub.load`.

Each `program(tf, workdir)` returns {"exact": ..., "close": ...}: variable names and
shapes, metric keys, listings and signatures equal; losses, metrics, predictions and
trained tables within 1e-4 (`tests/test_hub.py`), against what `tests/tf215/
record_family.py hub_programs` recorded under tf.estimator 2.15 into
`tests/data/tf215/hub.json`. DNNs start from the formula's weights (a warm start), the
input is read in order (the tutorial's shuffle off), so both sides train the same net.
"""

import os

import numpy as np

from tests.feature_column_programs import HIDDEN, dnn_start, formula, variables
from tests.program_registry import registry
from tests.tutorial_programs import DATA_DIR, error_of, listing, signatures

RECORDED = os.path.join(DATA_DIR, "hub.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

VOCABULARY = ["good", "great", "fun", "bad", "dull", "awful", "movie", "plot", "the"]
OOV_BUCKETS = 1
DIM = 3
IMAGE = [4, 4, 3]
GOOD = ["good fun movie", "great plot", "the movie was great fun", "good good plot"]
BAD = ["bad movie", "dull plot", "the awful movie", "bad and dull, awful"]
TRAIN_SENTENCES = (GOOD + BAD) * 2
TRAIN_POLARITY = ([1] * len(GOOD) + [0] * len(BAD)) * 2
TEST_SENTENCES = ["good movie", "awful plot", "great, great fun", "the dull one", "new words"]
TEST_POLARITY = [1, 0, 1, 0, 1]


def _hub():
    import tensorflow_hub as hub

    return hub


# ------------------------------------------------------------------ the modules
def write_text_module(tf, workdir):
    """A TF1 Hub text embedding (sentences in, a sqrtn-combined [batch, DIM] out) over a
    vocabulary file, its `{"train"}` graph scaling the embedding by 0.8; exported to
    workdir/text_module. Returns that folder."""
    hub = _hub()
    vocabulary_file = os.path.join(workdir, "tokens.txt")
    with open(vocabulary_file, "w") as f:
        f.write("\n".join(VOCABULARY) + "\n")
    rows = len(VOCABULARY) + OOV_BUCKETS

    def module_fn(is_training):
        sentences = tf.compat.v1.placeholder(tf.string, shape=[None], name="sentences")
        cleaned = tf.strings.regex_replace(sentences, r"\pP", "")
        tokens = tf.compat.v1.string_split(cleaned, " ")
        embeddings = tf.compat.v1.get_variable(
            "embeddings", initializer=tf.constant(formula([rows, DIM], 3))
        )
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(
                vocabulary_file,
                tf.string,
                tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
            num_oov_buckets=OOV_BUCKETS,
        )
        ids = tf.SparseTensor(tokens.indices, table.lookup(tokens.values), tokens.dense_shape)
        combined = tf.nn.embedding_lookup_sparse(embeddings, ids, None, combiner="sqrtn")
        if is_training:
            combined = combined * 0.8
        hub.add_signature("default", {"sentences": sentences}, {"default": combined})

    spec = hub.create_module_spec(
        module_fn,
        tags_and_args=[(set(), {"is_training": False}), ({"train"}, {"is_training": True})],
    )
    return _export_module(tf, spec, os.path.join(workdir, "text_module"))


def write_image_module(tf, workdir):
    """A TF1 Hub image feature vector: [batch, 4, 4, 3] images, a relu of a dense map to
    [batch, DIM]; exported to workdir/image_module."""
    hub = _hub()

    def module_fn():
        images = tf.compat.v1.placeholder(tf.float32, shape=[None, *IMAGE])
        flat = tf.reshape(images, [-1, int(np.prod(IMAGE))])
        weights = tf.compat.v1.get_variable(
            "weights", initializer=tf.constant(formula([int(np.prod(IMAGE)), DIM], 4))
        )
        hub.add_signature(inputs={"images": images}, outputs=tf.nn.relu(tf.matmul(flat, weights)))

    spec = hub.create_module_spec(module_fn)
    return _export_module(tf, spec, os.path.join(workdir, "image_module"))


def _export_module(tf, spec, folder):
    with tf.Graph().as_default():
        module = _hub().Module(spec)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(tf.compat.v1.tables_initializer())
            module.export(folder, session)
    return folder


def write_saved_model(tf, workdir):
    """A TF2 SavedModel embedder for `hub.KerasLayer`: sentences hashed word by word into
    an embedding table, averaged; `variables` and `trainable_variables` as reusable
    SavedModels have them. Written to workdir/saved_embedder."""
    rows = 7
    folder = os.path.join(workdir, "saved_embedder")
    embedder = tf.train.Checkpoint()
    embedder.embeddings = tf.Variable(formula([rows, DIM], 5), name="embeddings")
    embedder.variables = [embedder.embeddings]
    embedder.trainable_variables = [embedder.embeddings]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def embed(sentences):
        words = tf.strings.split(sentences)
        ids = tf.strings.to_hash_bucket_fast(words, rows)
        return tf.reduce_mean(tf.gather(embedder.embeddings, ids), axis=1)

    embedder.__call__ = embed
    tf.saved_model.save(embedder, folder)
    return folder


# ------------------------------------------------------------------ input
def frames():
    import pandas as pd

    train = pd.DataFrame({"sentence": TRAIN_SENTENCES, "polarity": TRAIN_POLARITY})
    test = pd.DataFrame({"sentence": TEST_SENTENCES, "polarity": TEST_POLARITY})
    return train, test


def pandas_inputs(tf, batch_size=4):
    """The tutorial's three input_fns (training repeats; its shuffle off, see above)."""
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    train, test = frames()
    return (
        pandas_input_fn(
            train, train["polarity"], batch_size=batch_size, num_epochs=None, shuffle=False
        ),
        pandas_input_fn(train, train["polarity"], batch_size=batch_size, shuffle=False),
        pandas_input_fn(test, test["polarity"], batch_size=batch_size, shuffle=False),
    )


def _gist(call):
    """The error `call()` raises: its type and its message's first sentence."""
    error = error_of(call)
    return error and [error[0], error[1].split(". ")[0]]


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items()) if k != "global_step"}


def _export_path(path):
    return path.decode() if isinstance(path, bytes) else path


# ------------------------------------------------------------------ canned, with columns
def _trained_text_classifier(tf, workdir, trainable):
    """The tutorial's DNNClassifier over `hub.text_embedding_column`, after tf_upgrade_v2
    (and the hand edit its error asks for), trained; with its column, what the as-is
    upgrade raised, and the tutorial's input_fns."""
    hub = _hub()
    module = write_text_module(tf, workdir)
    inputs = pandas_inputs(tf)
    embedded_text_feature_column = hub.text_embedding_column(
        key="sentence", module_spec=module, trainable=trainable
    )
    # What tf_upgrade_v2 writes for the tutorial's `tf.estimator.DNNClassifier(...,
    # optimizer=tf.train.AdagradOptimizer(...))`, then the hand edit its error asks for.
    upgraded_as_is = _gist(
        lambda: tf.compat.v1.estimator.DNNClassifier(
            hidden_units=HIDDEN,
            feature_columns=[embedded_text_feature_column],
            n_classes=2,
            optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.05),
            loss_reduction=tf.keras.losses.Reduction.SUM,
        )
    )
    estimator = tf.compat.v1.estimator.DNNClassifier(
        hidden_units=HIDDEN,
        feature_columns=[embedded_text_feature_column],
        n_classes=2,
        optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.05),
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    estimator.train(input_fn=inputs[0], steps=6)
    return estimator, embedded_text_feature_column, upgraded_as_is, inputs


@program
def text_classifier(tf, workdir):
    estimator, column, upgraded_as_is, inputs = _trained_text_classifier(tf, workdir, False)
    predict_test_input_fn = inputs[2]  # (the tutorial's evaluation on the training set: left out)
    test_eval_result = estimator.evaluate(input_fn=predict_test_input_fn)
    predicted = list(estimator.predict(input_fn=predict_test_input_fn))
    spec = tf.feature_column.make_parse_example_spec([column])
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    exported = _export_path(estimator.export_saved_model(os.path.join(workdir, "export"), receiver))
    return {
        "exact": {
            "upgraded_as_is": upgraded_as_is,
            "variables": variables(estimator),
            "eval_keys": sorted(test_eval_result),
            "predict_keys": sorted(predicted[0]),
            "class_ids": [int(row["class_ids"][0]) for row in predicted],
            "column": [column.name, sorted(map(str, spec.items()))],
            "signatures": signatures(exported),
            "export": listing(exported),
        },
        "close": {
            "test": _floats(test_eval_result),
            "probabilities": _rows(predicted, "probabilities"),
        },
    }


@program
def text_classifier_module_training(tf, workdir):
    estimator, _, _, inputs = _trained_text_classifier(tf, workdir, True)
    embeddings = [n for n in estimator.get_variable_names() if n.endswith("/embeddings")]
    return {
        "exact": {"variables": variables(estimator)},
        "close": {
            "test": _floats(estimator.evaluate(input_fn=inputs[2])),
            "embeddings": {
                name: estimator.get_variable_value(name).ravel().tolist() for name in embeddings
            },
        },
    }


@program
def text_classifier_tf2_tutorial(tf, workdir):
    """The tutorial's TF2 edition: `tf.estimator.DNNClassifier` given a Keras optimizer
    (2.15 took only a legacy one), then the legacy Adagrad; the module never trains."""
    hub = _hub()
    module = write_text_module(tf, workdir)
    train_input_fn, _, predict_test_input_fn = pandas_inputs(tf)
    column = hub.text_embedding_column(key="sentence", module_spec=module, trainable=True)

    def classifier(name, optimizer):
        return tf.estimator.DNNClassifier(
            hidden_units=HIDDEN,
            feature_columns=[column],
            n_classes=2,
            optimizer=optimizer,
            model_dir=os.path.join(workdir, name),
            warm_start_from=dnn_start(tf, os.path.join(workdir, name), DIM, 1),
        )

    keras = classifier("keras", tf.keras.optimizers.Adagrad(learning_rate=0.05))
    as_written = error_of(lambda: keras.train(input_fn=train_input_fn, steps=2))
    estimator = classifier("legacy", tf.keras.optimizers.legacy.Adagrad(learning_rate=0.05))
    estimator.train(input_fn=train_input_fn, steps=4)
    metrics = estimator.evaluate(input_fn=predict_test_input_fn)
    return {
        "exact": {"as_written": as_written[:1], "variables": variables(estimator)},
        "close": {
            "metrics": _floats(metrics),
            "embeddings": estimator.get_variable_value("module/embeddings").ravel().tolist(),
        },
    }


@program
def image_classifier(tf, workdir):
    hub = _hub()
    module = write_image_module(tf, workdir)
    images = formula([8, *IMAGE], 6)
    labels = (images.reshape(8, -1).mean(axis=1) > images.mean()).astype(np.int64)
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    image_column = hub.image_embedding_column("image", module)
    estimator = tf.compat.v1.estimator.DNNClassifier(
        hidden_units=HIDDEN,
        feature_columns=[image_column],
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.2),
        loss_reduction=tf.compat.v1.losses.Reduction.SUM,
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    inputs = {"image": images}
    estimator.train(
        numpy_input_fn(inputs, labels, batch_size=4, num_epochs=None, shuffle=False), steps=4
    )
    metrics = estimator.evaluate(numpy_input_fn(inputs, labels, batch_size=4, shuffle=False))
    return {
        "exact": {
            "variables": variables(estimator),
            "column": [image_column.name, image_column.variable_shape.as_list()],
            "eval_keys": sorted(metrics),
        },
        "close": {
            "metrics": _floats(metrics),
        },
    }


# ------------------------------------------------------------------ wide & deep, linear
def _text_column(tf, workdir, trainable):
    return _hub().text_embedding_column(
        key="sentence", module_spec=write_text_module(tf, workdir), trainable=trainable
    )


def _parsing_export(tf, estimator, columns, folder):
    """The export a tutorial adds last: parsed tf.Examples of the columns' spec."""
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    exported = _export_path(estimator.export_saved_model(folder, receiver))
    return {"signatures": signatures(exported), "export": listing(exported)}


def _modules(estimator):
    """{name: values} of the Hub modules' tables in the checkpoint."""
    return {
        name: estimator.get_variable_value(name).ravel().tolist()
        for name in estimator.get_variable_names()
        if name.endswith("module/embeddings")
    }


def _linear_weights(estimator):
    return {
        name: estimator.get_variable_value(name).ravel().tolist()
        for name in estimator.get_variable_names()
        if name.startswith("linear/linear_model/") and name.endswith(("/weights", "bias_weights"))
    }


def _seen_by_a_canned_model(tf, workdir, estimator, columns, exports=True):
    """What a tutorial prints of a canned estimator trained on the sentences: variables,
    test metrics, trained tables; with `exports`, predictions and the parsing export's
    signatures too."""
    train_input_fn, _, predict_test_input_fn = pandas_inputs(tf)
    estimator.train(input_fn=train_input_fn, steps=4)
    metrics = estimator.evaluate(input_fn=predict_test_input_fn)
    seen = {
        "exact": {"variables": variables(estimator), "eval_keys": sorted(metrics)},
        "close": {
            "metrics": _floats(metrics),
            "modules": _modules(estimator),
            "linear": _linear_weights(estimator),
        },
    }
    if exports:
        predicted = list(estimator.predict(input_fn=predict_test_input_fn))
        output = "probabilities" if "probabilities" in predicted[0] else "predictions"
        seen["close"][output] = _rows(predicted, output)
        seen["exact"]["predict_keys"] = sorted(predicted[0])
        export = os.path.join(workdir, "export")
        seen["exact"].update(_parsing_export(tf, estimator, columns, export))
    return seen


@program
def wide_and_deep_text_classifier(tf, workdir):
    """The tutorial's column (trainable) on both sides of a compat.v1 wide & deep model:
    2.15 imported a module for each side, under each side's scope, and trained the DNN's
    with Adagrad and the linear model's with Ftrl."""
    column = _text_column(tf, workdir, trainable=True)
    estimator = tf.compat.v1.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=[column],
        linear_optimizer=tf.compat.v1.train.FtrlOptimizer(learning_rate=0.1),
        dnn_feature_columns=[column],
        dnn_optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1),
        dnn_hidden_units=HIDDEN,
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    return _seen_by_a_canned_model(tf, workdir, estimator, [column])


@program
def wide_and_deep_frozen_regressor(tf, workdir):
    """A frozen column (trainable=False) in a compat.v1 wide & deep regressor with its
    default optimizers: the modules are imported and never trained."""
    column = _text_column(tf, workdir, trainable=False)
    estimator = tf.compat.v1.estimator.DNNLinearCombinedRegressor(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=HIDDEN,
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    return _seen_by_a_canned_model(tf, workdir, estimator, [column], exports=False)


@program
def wide_and_deep_tf2(tf, workdir):
    """tf.estimator.DNNLinearCombinedClassifier with the column (trainable) on both
    sides and its default optimizers: 2.15 built it in a graph, the DNN's module under
    `module/`, the linear model's under its column, neither trained."""
    column = _text_column(tf, workdir, trainable=True)
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "model"),
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=HIDDEN,
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    return _seen_by_a_canned_model(tf, workdir, estimator, [column])


@program
def linear_text_classifier(tf, workdir):
    """compat.v1 LinearClassifier over the column (trainable, a dense input to the
    linear model): 2.15 trained the module with the model's Ftrl, its slots under
    `linear/linear/...` (unsplit, the weights' in `part_0`)."""
    column = _text_column(tf, workdir, trainable=True)
    estimator = tf.compat.v1.estimator.LinearClassifier(
        [column], model_dir=os.path.join(workdir, "model")
    )
    return _seen_by_a_canned_model(tf, workdir, estimator, [column])


@program
def linear_tf2(tf, workdir):
    """tf.estimator's LinearRegressor over the text column and LinearClassifier over
    `hub.image_embedding_column`: built in a graph, the modules never trained."""
    column = _text_column(tf, workdir, trainable=True)
    regressor = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "model"))
    seen = _seen_by_a_canned_model(tf, workdir, regressor, [column], exports=False)
    images = formula([8, *IMAGE], 6)
    labels = (images.reshape(8, -1).mean(axis=1) > images.mean()).astype(np.int64)
    image_column = _hub().image_embedding_column("image", write_image_module(tf, workdir))
    classifier = tf.estimator.LinearClassifier(
        [image_column], model_dir=os.path.join(workdir, "images")
    )
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    inputs = {"image": images}
    classifier.train(
        numpy_input_fn(inputs, labels, batch_size=4, num_epochs=None, shuffle=False), steps=3
    )
    metrics = classifier.evaluate(numpy_input_fn(inputs, labels, batch_size=4, shuffle=False))
    seen["exact"]["image_variables"] = variables(classifier)
    seen["close"]["image_metrics"] = _floats(metrics)
    seen["close"]["image_linear"] = _linear_weights(classifier)
    return seen


def _sparse_text_column(tf, workdir):
    return _hub().sparse_text_embedding_column(
        "tokens",
        write_text_module(tf, workdir),
        combiner="sqrtn",
        default_value="the",
        trainable=True,
    )


def token_input(tf, sentences, polarity, repeat):
    """An input_fn of the sentences' words (punctuation dropped) as sparse tokens."""

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((sentences, polarity))
        dataset = (dataset.repeat() if repeat else dataset).batch(4)
        words = lambda s: tf.strings.split(tf.strings.regex_replace(s, r"\\pP", ""))  # noqa: E731
        return dataset.map(lambda s, y: ({"tokens": words(s).to_sparse()}, y))

    return input_fn


@program
def sparse_text_dnn(tf, workdir):
    """`hub.sparse_text_embedding_column` over pre-split tokens into a compat.v1
    DNNClassifier: 2.15's V1 DNN read it through compat.v1 DenseFeatures, which imports
    the module when the column is read, under `dnn/input_from_feature_columns/module/`,
    and trained it (Adagrad)."""
    column = _sparse_text_column(tf, workdir)
    estimator = tf.compat.v1.estimator.DNNClassifier(
        hidden_units=HIDDEN,
        feature_columns=[column],
        optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1),
        model_dir=os.path.join(workdir, "model"),
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    estimator.train(token_input(tf, TRAIN_SENTENCES, TRAIN_POLARITY, True), steps=4)
    metrics = estimator.evaluate(token_input(tf, TEST_SENTENCES, TEST_POLARITY, False))
    return {
        "exact": {"variables": variables(estimator), "eval_keys": sorted(metrics)},
        "close": {"metrics": _floats(metrics), "modules": _modules(estimator)},
    }


@program
def sparse_text_linear(tf, workdir):
    """`hub.sparse_text_embedding_column` (trainable) into a compat.v1 LinearClassifier,
    then on both sides of a compat.v1 wide & deep classifier: 2.15's V1 linear model read
    V2 columns through compat.v1's LinearModel, which imports the module when the column
    is read, under `linear/module/`, and trained it with its Ftrl."""
    column = _sparse_text_column(tf, workdir)
    seen = {"exact": {}, "close": {}}
    linear = tf.compat.v1.estimator.LinearClassifier(
        [column], model_dir=os.path.join(workdir, "linear")
    )
    wide_and_deep = tf.compat.v1.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(workdir, "wide_and_deep"),
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=HIDDEN,
        warm_start_from=dnn_start(tf, workdir, DIM, 1),
    )
    for name, estimator in (("linear", linear), ("wide_and_deep", wide_and_deep)):
        estimator.train(token_input(tf, TRAIN_SENTENCES, TRAIN_POLARITY, True), steps=4)
        metrics = estimator.evaluate(token_input(tf, TEST_SENTENCES, TEST_POLARITY, False))
        seen["exact"][name] = {"variables": variables(estimator), "eval_keys": sorted(metrics)}
        seen["close"][name] = {
            "metrics": _floats(metrics),
            "modules": _modules(estimator),
            "linear": _linear_weights(estimator),
        }
    return seen


# ------------------------------------------------------------------ custom model_fns
def sentence_input(tf, sentences, polarity, repeat):
    """An input_fn of (features, labels) batches of 4 sentences, in order."""

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"sentence": sentences}, polarity))
        return (dataset.repeat() if repeat else dataset).batch(4)

    return input_fn


def serving_input_fn(tf):
    def receive():
        sentence = tf.compat.v1.placeholder(tf.string, shape=[None], name="sentence")
        return tf.estimator.export.ServingInputReceiver(
            {"sentence": sentence}, {"sentence": sentence}
        )

    return receive


def classifier_head(tf, net, labels, mode, optimizer):
    """A dense softmax over `net`, the EstimatorSpec a hub sample's model_fn returns."""
    logits = tf.compat.v1.layers.dense(
        net, 2, kernel_initializer=tf.compat.v1.constant_initializer(formula([DIM, 2], 7))
    )
    predictions = {"class_ids": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        outputs = {"serving_default": tf.estimator.export.PredictOutput(predictions)}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    accuracy = tf.compat.v1.metrics.accuracy(labels, predictions["class_ids"])
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy}
    )


def hub_model_fn(tf, module_path, trainable):
    """A model_fn over a TF1 Hub module, its `{"train"}` graph in TRAIN, registered for
    export as "embedder"."""
    hub = _hub()

    def model_fn(features, labels, mode, params):
        train = mode == tf.estimator.ModeKeys.TRAIN
        embed = hub.Module(module_path, trainable=trainable, tags={"train"} if train else None)
        hub.register_module_for_export(embed, "embedder")
        net = embed(features["sentence"])
        optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
        return classifier_head(tf, net, labels, mode, optimizer)

    return model_fn


def _checkpoint(tf, model_dir):
    return {k: list(v) for k, v in tf.train.list_variables(tf.train.latest_checkpoint(model_dir))}


def _rows(predicted, key):
    return [np.asarray(row[key]).tolist() for row in predicted]


@program
def module_in_model_fn(tf, workdir):
    hub = _hub()
    module = write_text_module(tf, workdir)
    model_dir = os.path.join(workdir, "model")
    estimator = tf.estimator.Estimator(
        model_fn=hub_model_fn(tf, module, trainable=True),
        model_dir=model_dir,
        params={"learning_rate": 0.1},
    )
    train_input = sentence_input(tf, TRAIN_SENTENCES, TRAIN_POLARITY, repeat=True)
    test_input = sentence_input(tf, TEST_SENTENCES, TEST_POLARITY, repeat=False)
    exporters = [
        hub.LatestModuleExporter("tf_hub", serving_input_fn(tf)),
        tf.estimator.LatestExporter("saved", serving_input_fn(tf)),
    ]
    metrics, _ = tf.estimator.train_and_evaluate(
        estimator,
        tf.estimator.TrainSpec(train_input, max_steps=6),
        tf.estimator.EvalSpec(test_input, steps=None, exporters=exporters),
    )
    (module_export,) = os.listdir(os.path.join(model_dir, "export", "tf_hub"))
    exported = os.path.join(model_dir, "export", "tf_hub", module_export, "embedder")
    with tf.Graph().as_default():
        embedded = hub.Module(exported)(tf.constant(TEST_SENTENCES))
        with tf.compat.v1.train.MonitoredSession() as session:
            read_back = session.run(embedded)
    (saved,) = os.listdir(os.path.join(model_dir, "export", "saved"))
    return {
        "exact": {
            "checkpoint": _checkpoint(tf, model_dir),
            "metric_keys": sorted(metrics),
            "exports": listing(os.path.join(model_dir, "export")),
            "signatures": signatures(os.path.join(model_dir, "export", "saved", saved)),
        },
        "close": {
            "metrics": _floats(metrics),
            "read_back": read_back.tolist(),
            "embeddings": estimator.get_variable_value("module/embeddings").ravel().tolist(),
        },
    }


@program
def frozen_module_in_model_fn(tf, workdir):
    module = write_text_module(tf, workdir)
    estimator = tf.estimator.Estimator(
        model_fn=hub_model_fn(tf, module, trainable=False),
        model_dir=os.path.join(workdir, "model"),
        params={"learning_rate": 0.1},
    )
    estimator.train(sentence_input(tf, TRAIN_SENTENCES, TRAIN_POLARITY, repeat=True), steps=4)
    test_input = sentence_input(tf, TEST_SENTENCES, TEST_POLARITY, repeat=False)
    metrics = estimator.evaluate(test_input)
    predicted = list(estimator.predict(test_input))
    return {
        "exact": {
            "variables": variables(estimator),
            "trainable": sorted(
                n for n in estimator.get_variable_names() if not n.startswith("module/")
            ),
        },
        "close": {
            "metrics": _floats(metrics),
            "probabilities": _rows(predicted, "probabilities"),
            "embeddings": estimator.get_variable_value("module/embeddings").ravel().tolist(),
        },
    }


@program
def input_layer_model_fn(tf, workdir):
    """A custom model_fn reading a frozen `hub.text_embedding_column` beside a hashed
    author's embedding through compat.v1 `input_layer` (10_recommend's hybrid
    recommender's title column, as its trainer reads it)."""
    hub = _hub()
    module = write_text_module(tf, workdir)
    fc = tf.feature_column
    author = fc.categorical_column_with_hash_bucket("author", 5)
    columns = [
        hub.text_embedding_column(key="sentence", module_spec=module, trainable=False),
        fc.embedding_column(
            author, 2, initializer=tf.compat.v1.constant_initializer(formula([5, 2], 8))
        ),
    ]

    def model_fn(features, labels, mode, params):
        net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
        net = tf.compat.v1.layers.dense(
            net,
            DIM,
            tf.nn.relu,
            kernel_initializer=tf.compat.v1.constant_initializer(formula([DIM + 2, DIM], 9)),
        )
        optimizer = tf.compat.v1.train.AdagradOptimizer(0.2)
        return classifier_head(tf, net, labels, mode, optimizer)

    authors = [["ann", "bo", "cy"][i % 3] for i in range(len(TRAIN_SENTENCES))]

    def input_fn():
        features = {"sentence": TRAIN_SENTENCES, "author": authors}
        return tf.data.Dataset.from_tensor_slices((features, TRAIN_POLARITY)).batch(4)

    estimator = tf.estimator.Estimator(
        model_fn=model_fn,
        model_dir=os.path.join(workdir, "model"),
        params={"feature_columns": columns},
    )
    estimator.train(lambda: input_fn().repeat(), steps=4)
    metrics = estimator.evaluate(input_fn)
    return {
        "exact": {"variables": variables(estimator)},
        "close": {
            "metrics": _floats(metrics),
            "author": estimator.get_variable_value("input_layer/author_embedding/embedding_weights")
            .ravel()
            .tolist(),
        },
    }


@program
def keras_layer_in_model_fn(tf, workdir):
    hub = _hub()
    saved = write_saved_model(tf, workdir)

    def model_fn(features, labels, mode):
        embed = hub.KerasLayer(saved, input_shape=[], dtype=tf.string, trainable=True)
        net = embed(features["sentence"])
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
        return classifier_head(tf, net, labels, mode, optimizer)

    model_dir = os.path.join(workdir, "model")
    estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
    estimator.train(sentence_input(tf, TRAIN_SENTENCES, TRAIN_POLARITY, repeat=True), steps=5)
    test_input = sentence_input(tf, TEST_SENTENCES, TEST_POLARITY, repeat=False)
    metrics = estimator.evaluate(test_input)
    exported = _export_path(
        estimator.export_saved_model(os.path.join(workdir, "export"), serving_input_fn(tf))
    )
    loaded = hub.load(saved)
    return {
        "exact": {
            "checkpoint": _checkpoint(tf, model_dir),
            "signatures": signatures(exported),
            "export": listing(exported),
        },
        "close": {
            "metrics": _floats(metrics),
            "saved_model": loaded(tf.constant(TEST_SENTENCES)).numpy().tolist(),
        },
    }
