"""Kaggle kernels and book notebooks of the tf.estimator era, written as their authors wrote
them (after `tf_upgrade_v2`), on a few dozen made-up rows and a few steps.

- `titanic_pandas_submission`: a Titanic kernel: feature columns built in a loop over
  `df.columns` (a vocabulary list of `df[col].unique()` for text columns, numeric ones
  otherwise), a `LinearClassifier` trained by `pandas_input_fn` on a DataFrame and a Series
  of labels, `"Test set accuracy: {accuracy:0.3f}".format(**eval_result)`, a submission
  DataFrame of `[p["class_ids"][0] for p in est.predict(...)]` written by `to_csv`,
  `predict_keys`, the model_dir's files; then the label given as a one-column DataFrame
  (`df[["Survived"]]`), which 2.15's heads refused with a TypeError (the kit: a ValueError
  about the labels' rank);
- `handson_ml_predict_given_arrays`: the book cells that hand arrays to the Estimator's
  calls (`dnn_clf.predict(X_test)`, `train(X_train, steps=...)`, `evaluate(X_test,
  y_test)`) after the numpy_input_fn ones, for a canned classifier and a TF1 model_fn
  (TensorFlow-Examples' `tf.layers` network): 2.15 refused the array as an input_fn
  (`TypeError: unsupported callable`; the kit: numpy's `ValueError: The truth value of an
  array ...`), and evaluate's second argument is its `steps`;
- `digit_recognizer_train_eval_loop`: `train(steps=...)` in a loop with `evaluate` after
  each, `RunConfig(save_checkpoints_steps=..., keep_checkpoint_max=...)`, string labels
  with `label_vocabulary` and a `weight_column`, the classes decoded into a submission.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, keys, printed lines, errors as [type, first line]) and
`close` values (linear models start from zeros, on unshuffled data: 1e-4).
`tests/test_kaggle_notebooks.py` compares them with 2.15's recording
(`tests/tf215/record_family.py kaggle_notebook_programs`, into
`tests/data/tf215/kaggle_notebooks.json`).
"""

import os

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "kaggle_notebooks.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _error(call):
    """[type, first line] of what `call()` raised (None when it returned)."""
    raised = _raised(call)
    return raised and [raised[0], raised[1].splitlines()[0] if raised[1] else ""]


def _passengers(rows, seed):
    """A Titanic-shaped DataFrame of made-up passengers (with their `Survived`)."""
    import pandas as pd

    r = np.random.RandomState(seed)
    df = pd.DataFrame(
        {
            "PassengerId": np.arange(1, rows + 1),
            "Pclass": r.randint(1, 4, rows),
            "Sex": r.choice(["male", "female"], rows),
            "Age": r.uniform(1, 70, rows).round(1),
            "Fare": r.uniform(5, 100, rows).round(2),
            "Embarked": r.choice(["S", "C", "Q"], rows),
        }
    )
    df["Survived"] = ((df.Sex == "female") | (df.Age < 10)).astype(int)
    return df


@program
def titanic_pandas_submission(tf, workdir):
    import pandas as pd

    train, test = _passengers(40, 0), _passengers(8, 1).drop("Survived", axis=1)
    y = train.pop("Survived")
    X = train.drop("PassengerId", axis=1)
    feat_cols = []
    for col in X.columns:
        if X[col].dtype == object:
            vocab = tf.feature_column.categorical_column_with_vocabulary_list(col, X[col].unique())
            feat_cols.append(tf.feature_column.indicator_column(vocab))
        else:
            feat_cols.append(tf.feature_column.numeric_column(col))
    model_dir = os.path.join(workdir, "titanic")
    est = tf.estimator.LinearClassifier(feature_columns=feat_cols, model_dir=model_dir)
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    train_fn = pandas_input_fn(x=X, y=y, batch_size=10, num_epochs=None, shuffle=False)
    est.train(input_fn=train_fn, steps=8)
    eval_result = est.evaluate(input_fn=pandas_input_fn(x=X, y=y, shuffle=False))
    pred_fn = pandas_input_fn(x=test.drop("PassengerId", axis=1), num_epochs=1, shuffle=False)
    preds = est.predict(input_fn=pred_fn)
    submission = pd.DataFrame(
        {"PassengerId": test.PassengerId, "Survived": [p["class_ids"][0] for p in preds]}
    )
    path = os.path.join(workdir, "submission.csv")
    submission.to_csv(path, index=False)
    with open(path) as f:
        written = f.read()
    probabilities = list(est.predict(input_fn=pred_fn, predict_keys=["probabilities"]))
    as_frame = pandas_input_fn(x=X, y=y.to_frame(), shuffle=False)
    return {
        "exact": {
            "columns": [c.name for c in feat_cols],
            "printed": "Test set accuracy: {accuracy:0.3f}".format(**eval_result),
            "evaluate": {k: type(v).__name__ for k, v in sorted(eval_result.items())},
            "submission": written,
            "submission_dtypes": {k: str(v) for k, v in submission.dtypes.items()},
            "predict_keys": [sorted(p) for p in probabilities[:1]],
            "model_dir": listing(model_dir),
            "labels_as_a_dataframe": {
                "train": _error(lambda: est.train(input_fn=as_frame, steps=1)),
                "evaluate": _error(lambda: est.evaluate(input_fn=as_frame)),
            },
        },
        "close": {
            "evaluate": {k: float(v) for k, v in eval_result.items()},
            "probabilities": [p["probabilities"].tolist() for p in probabilities],
        },
    }


def _layers_model_fn(tf):
    """TensorFlow-Examples' neural_network.py model_fn (tf.layers), predictions a tensor."""

    def model_fn(features, labels, mode):
        layer_1 = tf.compat.v1.layers.dense(features["images"], 4, kernel_initializer="ones")
        logits = tf.compat.v1.layers.dense(layer_1, 3, kernel_initializer="ones")
        pred_classes = tf.argmax(input=logits, axis=1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=pred_classes)
        loss_op = tf.reduce_mean(
            input_tensor=tf.nn.sparse_softmax_cross_entropy_with_logits(
                logits=logits, labels=tf.cast(labels, dtype=tf.int32)
            )
        )
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1)
        train_op = optimizer.minimize(loss_op, global_step=tf.compat.v1.train.get_global_step())
        acc_op = tf.compat.v1.metrics.accuracy(labels=labels, predictions=pred_classes)
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=pred_classes,
            loss=loss_op,
            train_op=train_op,
            eval_metric_ops={"accuracy": acc_op},
        )

    return model_fn


@program
def handson_ml_predict_given_arrays(tf, workdir):
    r = np.random.RandomState(9)
    X_train = r.uniform(size=(24, 5)).astype(np.float32)
    y_train = r.randint(0, 3, 24).astype(np.int32)
    X_test, y_test = X_train[:6], y_train[:6]
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    feature_cols = [tf.feature_column.numeric_column("images", shape=[5])]
    estimators = {
        "canned": tf.estimator.LinearClassifier(
            feature_columns=feature_cols, n_classes=3, model_dir=os.path.join(workdir, "linear")
        ),
        "model_fn": tf.estimator.Estimator(
            _layers_model_fn(tf), model_dir=os.path.join(workdir, "layers")
        ),
    }
    exact, close = {}, {}
    for name, est in estimators.items():
        input_fn = numpy_input_fn(
            x={"images": X_train}, y=y_train, num_epochs=2, batch_size=8, shuffle=False
        )
        est.train(input_fn=input_fn)
        test_input_fn = numpy_input_fn(x={"images": X_test}, y=y_test, shuffle=False)
        eval_results = est.evaluate(input_fn=test_input_fn)
        y_pred = list(est.predict(input_fn=test_input_fn))
        exact[name] = {
            "evaluate": sorted(eval_results),
            "predicted": sorted(y_pred[0])
            if isinstance(y_pred[0], dict)
            else [type(y_pred[0]).__name__, int(y_pred[0])],
            "predict_array": _error(lambda est=est: est.predict(X_test)),
            "train_array": _error(lambda est=est: est.train(X_train, steps=1)),
            "train_array_max_steps": _error(lambda est=est: est.train(X_train, max_steps=9)),
            "evaluate_arrays": _error(lambda est=est: est.evaluate(X_test, y_test)),
            "global_step": int(est.get_variable_value("global_step")),
        }
        close[name] = {k: float(v) for k, v in eval_results.items()}
    return {"exact": exact, "close": close}


@program
def digit_recognizer_train_eval_loop(tf, workdir):
    import pandas as pd

    r = np.random.RandomState(5)
    pixels = pd.DataFrame(r.uniform(size=(30, 4)), columns=[f"pixel{i}" for i in range(4)])
    names = np.array(["zero", "one", "two"])
    label = pd.Series(names[(pixels.pixel0 * 3).astype(int).clip(0, 2)])
    pixels["weight"] = r.uniform(0.5, 2.0, 30)
    cols = [tf.feature_column.numeric_column(c) for c in pixels.columns if c != "weight"]
    model_dir = os.path.join(workdir, "digits")
    config = tf.estimator.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=2)
    clf = tf.estimator.LinearClassifier(
        feature_columns=cols,
        n_classes=3,
        label_vocabulary=list(names),
        weight_column="weight",
        model_dir=model_dir,
        config=config,
    )
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    tr = pandas_input_fn(x=pixels, y=label, batch_size=8, num_epochs=None, shuffle=False)
    ev = pandas_input_fn(x=pixels, y=label, shuffle=False)
    printed, accuracies = [], []
    for i in range(3):
        clf.train(input_fn=tr, steps=3)
        result = clf.evaluate(input_fn=ev)
        printed.append("Epoch {}: step {}".format(i, result["global_step"]))
        accuracies.append(float(result["accuracy"]))
    pf = pandas_input_fn(x=pixels.head(5), num_epochs=1, shuffle=False)
    labels = [p["classes"][0].decode("utf8") for p in clf.predict(input_fn=pf)]
    firsts = list(clf.predict(input_fn=pf, predict_keys=["class_ids", "probabilities"]))
    with open(os.path.join(model_dir, "checkpoint")) as f:
        state = f.read().replace(model_dir, "<model_dir>")
    return {
        "exact": {
            "printed": printed,
            "labels": labels,
            "class_ids": [p["class_ids"].tolist() for p in firsts],
            "checkpoint": state,
            "model_dir": listing(model_dir),
        },
        "close": {
            "accuracies": accuracies,
            "probabilities": [p["probabilities"].tolist() for p in firsts],
        },
    }


@program
def titanic_columns_of_the_wrong_type(tf, workdir):
    """Titanic kernels' commonest column mistakes: a vocabulary list of strings over the
    integer `Pclass`, an identity column over the text `Sex`, a hash bucket over the float
    `Age`, in the canned classes of both namespaces (2.15: `ValueError: in user code:`)."""
    passengers = _passengers(12, 2)
    y = passengers.pop("Survived")
    fc = tf.feature_column
    mistakes = {
        "vocabulary_over_int": fc.categorical_column_with_vocabulary_list("Pclass", ["1", "2"]),
        "identity_over_text": fc.categorical_column_with_identity("Sex", 2),
        "hash_over_float": fc.categorical_column_with_hash_bucket("Age", 3),
    }
    classes = {
        "linear": (tf.estimator.LinearClassifier, {}, False),
        "dnn": (tf.estimator.DNNClassifier, {"hidden_units": [2]}, True),
        "v1_linear": (tf.compat.v1.estimator.LinearClassifier, {}, False),
        "v1_dnn": (tf.compat.v1.estimator.DNNClassifier, {"hidden_units": [2]}, True),
    }
    input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(passengers, y, shuffle=False)
    raised = {}
    for mistake, column in mistakes.items():
        for name, (cls, kwargs, dense) in classes.items():
            folder = os.path.join(workdir, f"{mistake}_{name}")
            est = cls(
                feature_columns=[fc.indicator_column(column) if dense else column],
                model_dir=folder,
                **kwargs,
            )
            raised[f"{mistake}/{name}"] = _error(lambda est=est: est.train(input_fn, steps=1))
    return {"exact": raised}


@program
def titanic_missing_text_and_text_targets(tf, workdir):
    """The whole Titanic frame fed as it was read: `Cabin`'s missing values (NaN among its
    text) in an unused column, in train() and predict(); and a House Prices kernel's
    regressor given its target as text (2.15: errors of the step's run, `Graph execution
    error:` first)."""
    import pandas as pd

    passengers = _passengers(8, 3)
    y = passengers.pop("Survived")
    passengers["Cabin"] = [np.nan, "C85", np.nan, "E46", np.nan, "B28", "C123", np.nan]
    fc = tf.feature_column
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    est = tf.estimator.LinearClassifier(
        [fc.numeric_column("Pclass")], model_dir=os.path.join(workdir, "cabin")
    )
    raised = {
        "train_with_cabin": _error(
            lambda: est.train(pandas_input_fn(passengers, y, shuffle=False), steps=1)
        ),
        "predict_with_cabin": _error(
            lambda: est.predict(pandas_input_fn(passengers, shuffle=False))
        ),
    }
    prices = pd.Series([f"{v:.1f}" for v in passengers.Fare * 1000])
    regressors = {
        "linear": (tf.estimator.LinearRegressor, {}),
        "dnn": (tf.estimator.DNNRegressor, {"hidden_units": [2]}),
        "v1_linear": (tf.compat.v1.estimator.LinearRegressor, {}),
    }
    for name, (cls, kwargs) in regressors.items():
        reg = cls(
            feature_columns=[fc.numeric_column("Age")],
            model_dir=os.path.join(workdir, name),
            **kwargs,
        )
        fed = pandas_input_fn(passengers[["Age"]], prices, shuffle=False)
        raised[f"text_target/{name}"] = _error(lambda reg=reg, fed=fed: reg.train(fed, steps=1))
    return {"exact": raised}
