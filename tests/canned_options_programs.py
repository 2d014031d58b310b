"""Canned estimators given options beyond the one-liners of
`tests/canned_defaults_programs.py`, and the bad input their users pass, run on
tf.estimator 2.15 and on the kit.

Options: an optimizer given as a class (`optimizer=tf.keras.optimizers.legacy.SGD`,
called for its instance at the class's own rate); what 2.15 refused of an optimizer
argument, in its words and at its moment (V2 classes and V1 ones); a label vocabulary
of other than `n_classes` words (2.15's binary heads took one); `predict(predict_keys=...)`
and `evaluate(name=...)`. An `optioned` program trains as the canned-defaults family's
do (its STEPS steps on its tiny data set, as tensors), evaluates, predicts and exports
through a parsing receiver, and returns what its user sees in that family's shape (`exact`: checkpoint keys, files,
summary tags, INFO lines, keys, signatures, errors as [type, first line]; `close`
(1e-4): linear and baseline values, zeros at the start).

`tests/test_canned_options_vs_tf215.py` compares them with 2.15's recording
(`tests/tf215/record_family.py canned_options_programs`, into
`tests/data/tf215/canned_options.json`).
"""

import os

from tests.canned_defaults_programs import _required, input_fn, predict_input_fn, trained
from tests.program_registry import registry
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "canned_options.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _estimator(tf, namespace):
    return tf.estimator if namespace == "v2" else tf.compat.v1.estimator


def first_line_of_error(call):
    """[type name, first line of the message] of what `call()` raises, or None."""
    try:
        call()
    except Exception as error:  # what a user sees is the point
        return [type(error).__name__, (str(error).splitlines() or [""])[0]]
    return None


def optioned(namespace, class_name, label_key, options):
    """A program building `class_name` with its required arguments and `options(tf)`,
    then trained and looked at as the canned-defaults family does."""

    def run(tf, workdir):
        kwargs, columns, values = _required(tf, class_name, label_key, workdir)
        kwargs.update(options(tf))
        model = getattr(_estimator(tf, namespace), class_name)(**kwargs)
        return trained(tf, model, label_key, workdir, columns, values)

    return run


def refused(namespace, class_name, label_key, options):
    """A program building `class_name` with `options(tf)` and training it one step:
    where (`built` or `trained`) it fails and with what [type, first line]."""

    def run(tf, workdir):
        kwargs, _, _ = _required(tf, class_name, label_key, workdir)
        kwargs.update(options(tf))
        made = []
        built = first_line_of_error(
            lambda: made.append(getattr(_estimator(tf, namespace), class_name)(**kwargs))
        )
        if built:
            return {"exact": {"built": built}}
        at_training = first_line_of_error(lambda: made[0].train(input_fn(tf, label_key), steps=1))
        return {"exact": {"trained": at_training}}

    return run


# ------------------------------------------------------------------ optimizers
PROGRAMS["linear_regressor_optimizer_class"] = optioned(
    "v2", "LinearRegressor", "target", lambda tf: {"optimizer": tf.keras.optimizers.legacy.SGD}
)
PROGRAMS["dnn_classifier_optimizer_class"] = optioned(
    "v2", "DNNClassifier", "binary", lambda tf: {"optimizer": tf.keras.optimizers.legacy.Adam}
)
for _name, _given in (
    ("unknown_name", lambda tf: "Adadelta"),
    ("lowercase_name", lambda tf: "adam"),
    ("number", lambda tf: 3),
    ("callable_of_a_number", lambda tf: lambda: 0.1),
):
    PROGRAMS[f"linear_regressor_optimizer_{_name}"] = refused(
        "v2", "LinearRegressor", "target", lambda tf, given=_given: {"optimizer": given(tf)}
    )


for _class_name, _label in (("LinearRegressor", "target"), ("DNNClassifier", "binary")):
    for _given in ("Nadam", "adagrad"):  # (refused when trained, as 2.15's V1 classes did)
        PROGRAMS[f"v1_{_class_name.lower()}_optimizer_{_given.lower()}"] = refused(
            "v1", _class_name, _label, lambda tf, given=_given: {"optimizer": given}
        )


# ------------------------------------------------------------------ label vocabularies
for _namespace, _prefix in (("v2", ""), ("v1", "v1_")):
    # 2.15's binary heads took a vocabulary of any length (all_classes lists it whole)
    PROGRAMS[f"{_prefix}linear_classifier_two_classes_vocabulary_of_three"] = optioned(
        _namespace,
        "LinearClassifier",
        "words",
        lambda tf: {"label_vocabulary": ["no", "yes", "maybe"]},
    )
PROGRAMS["linear_classifier_three_classes_vocabulary_of_two"] = refused(
    "v2",
    "LinearClassifier",
    "three_words",
    lambda tf: {"n_classes": 3, "label_vocabulary": ["lo", "mid"]},
)


# ------------------------------------------------------------------ predict and evaluate
def _keys_in_order(tf, model, predict_keys):
    """The keys of predict()'s first prediction in their order, or its error."""
    rows = []
    error = first_line_of_error(
        lambda: rows.append(next(iter(model.predict(predict_input_fn(tf), predict_keys))))
    )
    return error or list(rows[0])


def predict_keys_program(namespace, class_name, label_key, n_classes=2):
    """What `predict(predict_keys=...)` yields (keys in order: a printed prediction), a key
    it lacks, and the folder and keys of `evaluate(name=...)`."""

    def run(tf, workdir):
        kwargs, _, _ = _required(tf, class_name, label_key, workdir)
        if n_classes != 2:
            kwargs["n_classes"] = n_classes
        model = getattr(_estimator(tf, namespace), class_name)(**kwargs)
        model.train(input_fn(tf, label_key), steps=1)
        exact = {
            str(keys): _keys_in_order(tf, model, keys)
            for keys in (None, ["probabilities"], "class_ids", ["classes", "logits"], ["nope"])
        }
        metrics = model.evaluate(input_fn(tf, label_key), steps=1, name="validation")
        exact["evaluate"] = list(metrics)
        exact["files"] = listing(model.model_dir)
        return {"exact": exact}

    return run


for _namespace, _prefix in (("v2", ""), ("v1", "v1_")):
    PROGRAMS[f"{_prefix}linear_classifier_predict_keys"] = predict_keys_program(
        _namespace, "LinearClassifier", "binary"
    )
PROGRAMS["baseline_classifier_three_classes_predict_keys"] = predict_keys_program(
    "v2", "BaselineClassifier", "three", 3
)


# ------------------------------------------------------------------ weights
PROGRAMS["linear_regressor_weight_column_of_a_category"] = refused(
    "v2",
    "LinearRegressor",
    "target",
    lambda tf: {"weight_column": tf.feature_column.categorical_column_with_identity("w", 3)},
)
