"""The canned estimators' INFO lines, run on tf.estimator 2.15 and on this kit.

Public samples call `tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)`
and their users read the `INFO:tensorflow:` lines.  Each program here trains a canned
estimator warm-started from a model_dir path and from `WarmStartSettings` (chosen
variables, a `VocabInfo`), then evaluates, predicts, exports and runs
`train_and_evaluate`, and returns the lines TensorFlow's logger showed, paths, numbers and
times replaced.  `tests/tf215/record_canned_logging.py` records them under 2.15 into
`tests/data/tf215/canned_logging.json`; `tests/test_canned_logging_vs_tf215.py` compares.
"""

import contextlib
import logging
import os
import re

import numpy as np
import tensorflow as tf

from tests.program_registry import registry

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "canned_logging.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
_WORDS = ["a", "b", "c"]
_NEW_WORDS = ["c", "a", "d", "b"]


# ------------------------------------------------------------------ the lines
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")
_TEMPORARY_EXPORT = re.compile(r"/(temp|\.tmp)-[\d-]+/")
# `Using config:`'s session config (2.15's Estimator set a default ConfigProto, printed
# over lines; the kit keeps the one given, None by default: see the test's KNOWN).
_SESSION_CONFIG = re.compile(r"('_session_config': ).*?(, '_keep_checkpoint_max')", re.DOTALL)


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname}:{record.name}:{record.getMessage()}")


@contextlib.contextmanager
def info_lines(workdir):
    """The lines TensorFlow's logger shows at INFO (as a sample sets it), first line of
    each, with `workdir`, export folders and numbers (but a warm start's) replaced."""
    logger = tf.get_logger()
    level = logger.level
    handler = _Lines()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    logger.addHandler(handler)
    shown = []
    try:
        yield shown
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        for line in handler.lines:
            line = _SESSION_CONFIG.sub(r"\1<session_config>\2", line)
            line = _TEMPORARY_EXPORT.sub(
                "/<temp>/", line.splitlines()[0].replace(workdir, "<workdir>")
            )
            # A warm start's counts and settings are no run's accident: kept.
            shown.append(line if "Warm-start" in line else _NUMBER.sub("N", line))


# ------------------------------------------------------------------ the models
def _vocabulary(workdir, name, words):
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write("\n".join(words) + "\n")
    return path


def _input_fn(words, epochs=None):
    rng = np.random.RandomState(3)
    x = rng.normal(size=(16, 2)).astype(np.float32)
    word = np.array([words[i % len(words)] for i in range(16)])
    labels = (x[:, 0] > 0).astype(np.int64)[:, None]

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x, "word": word}, labels))
        return dataset.batch(8).repeat(epochs)

    return input_fn


def _columns(vocabulary_file):
    numeric = tf.feature_column.numeric_column("x", shape=[2])
    word = tf.feature_column.categorical_column_with_vocabulary_file(
        "word", vocabulary_file, vocabulary_size=None
    )
    return numeric, word


def _settings(workdir, vocab_variable, vars_to_warm_start):
    """WarmStartSettings from the first model: `vars_to_warm_start`, and `vocab_variable`
    (the word column's) remapped to the new vocabulary."""
    info = tf.estimator.VocabInfo(
        os.path.join(workdir, "new_vocab.txt"),
        len(_NEW_WORDS),
        0,
        os.path.join(workdir, "old_vocab.txt"),
        len(_WORDS),
    )
    return tf.estimator.WarmStartSettings(
        os.path.join(workdir, "first"),
        vars_to_warm_start=vars_to_warm_start,
        var_name_to_vocab_info={vocab_variable: info},
    )


def _run(workdir, make, settings, everything=False):
    """`make(model_dir, columns, warm_start_from)` builds the estimator: trained, then
    warm-started from its folder and from `settings`, exported; `everything` also
    evaluates, predicts and runs train_and_evaluate."""
    old_vocab = _vocabulary(workdir, "old_vocab.txt", _WORDS)
    new_vocab = _vocabulary(workdir, "new_vocab.txt", _NEW_WORDS)
    with info_lines(workdir) as lines:
        first = make(os.path.join(workdir, "first"), _columns(old_vocab), None)
        first.train(_input_fn(_WORDS), steps=2)
        by_path = make(os.path.join(workdir, "by_path"), _columns(old_vocab), first.model_dir)
        by_path.train(_input_fn(_WORDS), steps=1)
        model = make(os.path.join(workdir, "by_settings"), _columns(new_vocab), settings)
        model.train(_input_fn(_NEW_WORDS), steps=1)
        if everything:
            model.evaluate(_input_fn(_NEW_WORDS, epochs=1), steps=1)
            list(model.predict(_input_fn(_NEW_WORDS, epochs=1)))
        spec = tf.feature_column.make_parse_example_spec(_columns(new_vocab))
        model.export_saved_model(
            os.path.join(workdir, "export"),
            tf.estimator.export.build_parsing_serving_input_receiver_fn(spec),
        )
        if everything:
            tf.estimator.train_and_evaluate(
                model,
                tf.estimator.TrainSpec(_input_fn(_NEW_WORDS), max_steps=3),
                tf.estimator.EvalSpec(_input_fn(_NEW_WORDS, epochs=1), steps=1, throttle_secs=0),
            )
    return {"lines": lines}


@program
def linear_classifier(workdir):
    """A regex of trainable variables (2.15: only those), a VocabInfo; every call."""

    def make(model_dir, columns, warm_start_from):
        return tf.estimator.LinearClassifier(
            list(columns), model_dir=model_dir, warm_start_from=warm_start_from
        )

    settings = _settings(
        workdir, "linear/linear_model/word/weights", "linear/linear_model/(word|bias)"
    )
    return _run(workdir, make, settings, everything=True)


@program
def dnn_classifier(workdir):
    """A list of variable names (2.15: over all variables), the embedding's VocabInfo."""
    embedding = "dnn/input_from_feature_columns/input_layer/word_embedding/embedding_weights"

    def make(model_dir, columns, warm_start_from):
        numeric, word = columns
        return tf.estimator.DNNClassifier(
            [4],
            [numeric, tf.feature_column.embedding_column(word, 2)],
            model_dir=model_dir,
            warm_start_from=warm_start_from,
        )

    return _run(workdir, make, _settings(workdir, embedding, [embedding, "dnn/hiddenlayer_0/"]))


@program
def dnn_linear_combined_classifier(workdir):
    """Wide and deep, the wide part's vocabulary remapped, every trainable variable."""

    def make(model_dir, columns, warm_start_from):
        numeric, word = columns
        return tf.estimator.DNNLinearCombinedClassifier(
            linear_feature_columns=[word],
            dnn_feature_columns=[numeric],
            dnn_hidden_units=[3],
            model_dir=model_dir,
            warm_start_from=warm_start_from,
        )

    return _run(workdir, make, _settings(workdir, "linear/linear_model/word/weights", ".*"))


@program
def linear_regressor(workdir):
    """vars_to_warm_start=None: only the VocabInfo's variable (2.15: of the trainable)."""

    def make(model_dir, columns, warm_start_from):
        return tf.estimator.LinearRegressor(
            list(columns), model_dir=model_dir, warm_start_from=warm_start_from
        )

    return _run(workdir, make, _settings(workdir, "linear/linear_model/word/weights", None))


@program
def numeric_regressor(workdir):
    """An export with no assets (2.15: `No assets to write.`)."""
    with info_lines(workdir) as lines:
        model = tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x", shape=[2])],
            model_dir=os.path.join(workdir, "numeric"),
        )
        model.train(_input_fn(_WORDS), steps=1)
        model.export_saved_model(
            os.path.join(workdir, "export"),
            tf.estimator.export.build_parsing_serving_input_receiver_fn(
                {"x": tf.io.FixedLenFeature([2], tf.float32)}
            ),
        )
    return {"lines": lines}
