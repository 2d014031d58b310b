"""Every canned estimator of tf.estimator 2.15 built as short public samples build it:
the required arguments only (feature columns, hidden units, a head), every other one
left to its default (optimizer, learning rate, loss reduction, two classes, the
config), then the one-liners samples add most (an optimizer by name or as a callable,
three classes, a label vocabulary, a weight column, an activation, dropout, batch norm,
a sparse combiner), run on 2.15 and on the kit.

Each program trains STEPS steps on a tiny fixed data set (given as tensors), evaluates,
predicts, exports through a parsing receiver, and returns what its user sees (the
`..._to_the_end` ones train, evaluate and predict on a batched Dataset without `steps`,
as the tutorials do, reading it to its end):

- `exact`: the checkpoint's keys and shapes (optimizer slots too), the model_dir's
  files, the training and evaluation summary tags, the INFO lines of LOG_MARKERS
  (numbers and folders replaced), evaluate's keys, predict's keys with their dtypes and
  shapes, the export's signatures, errors (their type);
- `close` (1e-4): what no random draw moves: evaluate's values and the predictions of
  linear and baseline models (zeros at the start) and of boosted trees (2.15 has none:
  it records their AttributeError);
- DNNs draw their start: with the default config (no `tf_random_seed`) only their names,
  keys and shapes are compared. A seed makes them comparable: the kit draws 2.15's
  numbers from it (`dnn_classifier_seeded`; tests/seeded_dnn_programs.py holds more).

The only argument given beyond the required ones is `model_dir` (a folder to list);
`linear_classifier_no_model_dir` leaves even that to its default.
`tests/test_canned_defaults_vs_tf215.py` compares them with 2.15's recording
(`tests/tf215/record_family.py canned_defaults_programs`, into
`tests/data/tf215/canned_defaults.json`).
"""

import os
import re
import shutil
import tempfile

import numpy as np

from tests.canned_v1_programs import _events, _plain
from tests.program_registry import registry
from tests.tf1_fidelity_programs import LOG_MARKERS, _info_lines, _normalized
from tests.tutorial_programs import error_of, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "canned_defaults.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
STEPS = 3


# ------------------------------------------------------------------ data
N = 12
_rng = np.random.RandomState(31)
RAW = {
    "x": _rng.uniform(-1, 1, (N, 2)).astype(np.float32),
    "c": np.array(list("abcz") * (N // 4)),
    "w": np.linspace(0.5, 2.0, N).astype(np.float32),
}
_score = RAW["x"][:, 0] - RAW["x"][:, 1] + (RAW["c"] == "a") - 0.3
LABELS = {
    "binary": (_score > 0.0).astype(np.int64)[:, None],
    "words": np.array(["no", "yes"])[(_score > 0.0).astype(int)][:, None],
    "three": np.digitize(_score, [-0.5, 0.5]).astype(np.int64)[:, None],
    "three_words": np.array(["lo", "mid", "hi"])[np.digitize(_score, [-0.5, 0.5])][:, None],
    "target": (2 * RAW["x"][:, :1] - RAW["x"][:, 1:]).astype(np.float32),
    "multi_label": np.stack([_score > 0, RAW["c"] == "b", RAW["x"][:, 1] > 0], 1).astype(np.int64),
}


def input_fn(tf, label_key):
    """The whole data set, every step (2.15's Baseline trains on tensors, not a Dataset)."""
    return lambda: ({k: tf.constant(v) for k, v in RAW.items()}, tf.constant(LABELS[label_key]))


def predict_input_fn(tf):
    return lambda: tf.data.Dataset.from_tensor_slices(RAW).batch(N)


def linear_columns(tf):
    fc = tf.feature_column
    return [
        fc.numeric_column("x", shape=[2]),
        fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"]),
    ]


def dnn_columns(tf):
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    return [fc.numeric_column("x", shape=[2]), fc.indicator_column(c)]


def tree_columns(tf):
    """What boosted trees take: a bucketized number and an indicator."""
    fc = tf.feature_column
    x = fc.numeric_column("x", shape=[2])
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    return [fc.bucketized_column(x, [-0.5, 0.0, 0.5]), fc.indicator_column(c)]


# ------------------------------------------------------------------ what a user sees
# 2.15's graph and session machinery, which the kit's TF2 path does not run
# (tests/test_canned_logging_vs_tf215.py leaves them out too).
_MACHINERY = re.compile(
    r"^(Done calling model_fn|Create CheckpointSaverHook|Graph was finalized|"
    r"Running local_init_op|Done running local_init_op)\.$"
)


def _marked(lines, workdir):
    """The LOG_MARKERS lines but the machinery's (first line of each, numbers and
    `workdir` replaced)."""
    shown = []
    for line in lines:
        first = line.splitlines()[0] if line else line
        if any(marker in first for marker in LOG_MARKERS) and not _MACHINERY.match(first):
            normalized = _normalized(first, workdir)
            if not shown or shown[-1] != normalized:  # (two loggers may both see one)
                shown.append(normalized)
    return shown


def _export(tf, model, workdir, columns):
    """The signatures of `model` exported through a parsing receiver over `columns`."""
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = model.export_saved_model(os.path.join(workdir, "export"), receiver)
    return signatures(path.decode() if isinstance(path, bytes) else path)


def trained(tf, model, label_key, workdir, columns, values=True):
    """Trains `model` STEPS steps, evaluates, predicts and exports (through a parsing
    receiver over `columns`): what its user sees; `values` (evaluate's and the
    predictions) close only when nothing random drew them."""
    with _info_lines() as lines:
        model.train(input_fn(tf, label_key), steps=STEPS)
        metrics = model.evaluate(input_fn(tf, label_key), steps=1)
        rows = list(model.predict(predict_input_fn(tf)))
        batch = next(iter(model.predict(predict_input_fn(tf), yield_single_examples=False)))
        exact = {"signatures": _export(tf, model, workdir, columns)}
    exact.update(
        checkpoint=dict(tf.train.list_variables(model.model_dir)),
        variable_names=model.get_variable_names(),
        latest=os.path.basename(model.latest_checkpoint()),
        params=sorted(model.params),
        files=listing(model.model_dir),
        train_tags=_events(model.model_dir)[0],
        eval_tags=_events(os.path.join(model.model_dir, "eval"))[0],
        logged=_marked(lines, workdir),
        evaluate=sorted(metrics),
        evaluate_types={k: type(v).__name__ for k, v in sorted(metrics.items())},
        predict=structure(rows),
        predict_batch=structure([batch]),
    )
    close = {}
    for key in sorted(rows[0]) if values else ():
        got = [_plain(row[key]) for row in rows]
        (exact if isinstance(got[0][0], str) else close)[f"predict/{key}"] = got
    if values:
        close.update({f"evaluate/{k}": float(v) for k, v in metrics.items()})
    return {"exact": exact, "close": close}


def _model_dir(workdir):
    return os.path.join(workdir, "model")


# ------------------------------------------------------------------ the defaults
# {program: (namespace, class, label, columns kind, whether values are deterministic)}
_HEADS = {
    "binary": lambda tf: tf.estimator.BinaryClassHead(),
    "target": lambda tf: tf.estimator.RegressionHead(),
    "multi_label": lambda tf: tf.estimator.MultiLabelHead(3),
}


def _required(tf, class_name, label_key, workdir):
    """(`class_name`'s required arguments, the columns its export parses, whether its
    values are deterministic); `model_dir` the one argument more."""
    kwargs = {"model_dir": _model_dir(workdir)}
    if class_name.endswith("Estimator"):
        kwargs["head"] = _HEADS[label_key](tf)
    if class_name.startswith("Baseline"):
        columns = [tf.feature_column.numeric_column("x", shape=[2])]  # to export
    elif class_name.startswith("Linear"):
        columns = kwargs["feature_columns"] = linear_columns(tf)
    elif class_name.startswith("DNNLinearCombined"):
        kwargs["linear_feature_columns"] = linear_columns(tf)
        kwargs["dnn_feature_columns"] = dnn_columns(tf)
        kwargs["dnn_hidden_units"] = [4, 3]
        columns = linear_columns(tf)
    elif class_name.startswith("DNN"):
        columns = kwargs["feature_columns"] = dnn_columns(tf)
        kwargs["hidden_units"] = [4, 3]
    else:  # boosted trees: its one required number besides the columns
        columns = kwargs["feature_columns"] = tree_columns(tf)
        kwargs["n_batches_per_layer"] = 1
    return kwargs, columns, not class_name.startswith("DNN")


def _defaults(namespace, class_name, label_key, extra=None):
    """A program building `class_name` of `namespace` (v2: tf.estimator, v1:
    tf.compat.v1.estimator) with its required arguments and `extra(tf)`'s."""

    def run(tf, workdir):
        est = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
        kwargs, columns, values = _required(tf, class_name, label_key, workdir)
        kwargs.update(extra(tf) if extra else {})
        try:  # (2.15 has no boosted trees; its V1 ...Estimators refuse tf.estimator's heads)
            model = getattr(est, class_name)(**kwargs)
            return trained(tf, model, label_key, workdir, columns, values)
        except (AttributeError, ValueError) as error:
            return {"exact": {"error": type(error).__name__}, "close": {}}

    return run


def _snake(class_name):
    words = re.findall(r"DNN|[A-Z][a-z]+", class_name)
    return "_".join(word.lower() for word in words)


for _namespace, _prefix in (("v2", ""), ("v1", "v1_")):
    for _family in ("Linear", "DNN", "DNNLinearCombined", "Baseline"):
        for _kind, _label in (
            ("Classifier", "binary"),
            ("Regressor", "target"),
            ("Estimator", "multi_label" if _family != "Linear" else "target"),
        ):
            _name = f"{_prefix}{_snake(_family + _kind)}_defaults"
            PROGRAMS[_name] = _defaults(_namespace, _family + _kind, _label)
for _kind, _label in (("Classifier", "binary"), ("Regressor", "target")):
    PROGRAMS[f"boosted_trees_{_kind.lower()}_defaults"] = _defaults(
        "v2", f"BoostedTrees{_kind}", _label
    )


# ------------------------------------------------------------------ the one-liners
def one_liner(name, class_name, label_key, namespace="v2", **extra):
    """A program (of tf.estimator's class by default) adding the arguments `extra`
    ({name: make(tf)})."""
    PROGRAMS[name] = _defaults(
        namespace, class_name, label_key, lambda tf: {k: make(tf) for k, make in extra.items()}
    )


for _optimizer in ("Adagrad", "Adam", "RMSProp", "SGD"):
    one_liner(
        f"linear_classifier_optimizer_{_optimizer.lower()}",
        "LinearClassifier",
        "binary",
        optimizer=lambda tf, name=_optimizer: name,
    )
for _optimizer in ("Adam", "Ftrl"):
    one_liner(
        f"dnn_classifier_optimizer_{_optimizer.lower()}",
        "DNNClassifier",
        "binary",
        optimizer=lambda tf, name=_optimizer: name,
    )
one_liner(
    "linear_regressor_optimizer_keras_callable",
    "LinearRegressor",
    "target",
    optimizer=lambda tf: lambda: tf.keras.optimizers.Adam(learning_rate=0.05),
)
one_liner(
    "dnn_regressor_optimizer_keras_instance",
    "DNNRegressor",
    "target",
    optimizer=lambda tf: tf.keras.optimizers.Adam(learning_rate=0.05),
)
one_liner(
    "linear_regressor_optimizer_keras_legacy_callable",
    "LinearRegressor",
    "target",
    optimizer=lambda tf: lambda: tf.keras.optimizers.legacy.Adam(learning_rate=0.05),
)
one_liner(
    "baseline_regressor_optimizer_keras_legacy_instance",
    "BaselineRegressor",
    "target",
    optimizer=lambda tf: tf.keras.optimizers.legacy.SGD(learning_rate=0.1),
)
one_liner(
    "dnn_classifier_optimizer_tf1_instance",
    "DNNClassifier",
    "binary",
    optimizer=lambda tf: tf.compat.v1.train.AdamOptimizer(0.01),
)
one_liner(
    "v1_dnn_classifier_optimizer_keras_legacy_instance",
    "DNNClassifier",
    "binary",
    "v1",
    optimizer=lambda tf: tf.keras.optimizers.legacy.Adam(0.01),
)
one_liner(
    "v1_linear_classifier_optimizer_adam",
    "LinearClassifier",
    "binary",
    "v1",
    optimizer=lambda tf: "Adam",
)
one_liner(
    "linear_classifier_loss_reduction_sum",
    "LinearClassifier",
    "binary",
    loss_reduction=lambda tf: tf.losses.Reduction.SUM,
)
one_liner("linear_classifier_n_classes_3", "LinearClassifier", "three", n_classes=lambda tf: 3)
one_liner("dnn_classifier_n_classes_3", "DNNClassifier", "three", n_classes=lambda tf: 3)
one_liner("baseline_classifier_n_classes_3", "BaselineClassifier", "three", n_classes=lambda tf: 3)
one_liner(
    "linear_classifier_label_vocabulary",
    "LinearClassifier",
    "words",
    label_vocabulary=lambda tf: ["no", "yes"],
)
one_liner(
    "linear_regressor_weight_column", "LinearRegressor", "target", weight_column=lambda tf: "w"
)
one_liner(
    "dnn_linear_combined_classifier_both_adagrad",
    "DNNLinearCombinedClassifier",
    "binary",
    linear_optimizer=lambda tf: "Adagrad",
)
one_liner(
    "linear_classifier_weight_column_numeric",
    "LinearClassifier",
    "binary",
    weight_column=lambda tf: tf.feature_column.numeric_column("w"),
)
one_liner(
    "dnn_classifier_three_words",
    "DNNClassifier",
    "three_words",
    n_classes=lambda tf: 3,
    label_vocabulary=lambda tf: ["lo", "mid", "hi"],
)
one_liner("dnn_classifier_weight_column", "DNNClassifier", "binary", weight_column=lambda tf: "w")
one_liner("dnn_classifier_relu6", "DNNClassifier", "binary", activation_fn=lambda tf: tf.nn.relu6)
one_liner("dnn_classifier_dropout", "DNNClassifier", "binary", dropout=lambda tf: 0.2)
one_liner("dnn_regressor_batch_norm", "DNNRegressor", "target", batch_norm=lambda tf: True)
one_liner(
    "dnn_linear_combined_classifier_sparse_combiner",
    "DNNLinearCombinedClassifier",
    "binary",
    linear_sparse_combiner=lambda tf: "mean",
)


# ------------------------------------------------------------------ datasets to their end
def _to_the_end(namespace, class_name, label_key):
    """`class_name` (required arguments only) trained, evaluated and predicting on a
    batched Dataset of the data (batches of 5: two full and one of 2) without `steps`,
    as the tutorials call them: each reads its input to the end."""

    def run(tf, workdir):
        est = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
        kwargs, _, values = _required(tf, class_name, label_key, workdir)
        model = getattr(est, class_name)(**kwargs)

        def batches():
            return tf.data.Dataset.from_tensor_slices((RAW, LABELS[label_key])).batch(5)

        with _info_lines() as lines:
            model.train(batches)
            metrics = model.evaluate(batches)
            rows = list(model.predict(lambda: batches().map(lambda x, y: x)))
        close = {f"evaluate/{k}": float(v) for k, v in metrics.items()} if values else {}
        return {
            "exact": {
                "files": listing(model.model_dir),
                "global_step": int(metrics["global_step"]),
                "evaluate": sorted(metrics),
                "logged": _marked(lines, workdir),
                "predictions": len(rows),
            },
            "close": close,
        }

    return run


for _namespace, _prefix in (("v2", ""), ("v1", "v1_")):
    for _class_name, _label in (
        ("LinearClassifier", "binary"),
        ("DNNRegressor", "target"),
        ("BaselineClassifier", "binary"),
    ):
        if (_namespace, _class_name) == ("v2", "BaselineClassifier"):
            continue  # 2.15's failed on a Dataset (FailedPreconditionError: GetNext() failed
            # because the iterator has not been initialized); the kit's trains on it
        PROGRAMS[f"{_prefix}{_snake(_class_name)}_to_the_end"] = _to_the_end(
            _namespace, _class_name, _label
        )


@program
def dnn_classifier_seeded(tf, workdir):
    """`RunConfig(tf_random_seed=42)`: the seeded start is the same number on both sides
    (the first hidden layer's kernel; the test compares it with 2.15's)."""
    kwargs, _, _ = _required(tf, "DNNClassifier", "binary", workdir)
    model = tf.estimator.DNNClassifier(**kwargs, config=tf.estimator.RunConfig(tf_random_seed=42))
    model.train(input_fn(tf, "binary"), steps=1)
    kernel = model.get_variable_value("dnn/hiddenlayer_0/kernel")
    return {"exact": {"shape": list(kernel.shape)}, "seeded": {"kernel": _plain(kernel)}}


@program
def linear_classifier_no_model_dir(tf, workdir):
    """Not even a model_dir: the Estimator's own temporary folder, and what it logs."""
    with _info_lines() as lines:
        model = tf.estimator.LinearClassifier(linear_columns(tf))
        model.train(input_fn(tf, "binary"), steps=STEPS)
    folder = model.model_dir
    try:
        files = listing(folder)
        temporary = {line for line in lines if line.startswith("Using temporary folder")}
        return {
            "exact": {
                "files": files,
                "temporary_folder_logged": sorted(_normalized(line, folder) for line in temporary),
                "under_tempdir": os.path.dirname(folder) == tempfile.gettempdir(),
            },
            "close": {"bias": _plain(model.get_variable_value("linear/linear_model/bias_weights"))},
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@program
def linear_and_baseline_optimizer_own_get_updates(tf, workdir):
    """A legacy Keras optimizer whose class has its own `get_updates` (to watch or scale
    the loss): 2.15's V2 classes trained through it, handing it the model's variables
    (their names, as a model_fn sees them, recorded)."""
    given = []

    class HalvedSGD(tf.keras.optimizers.legacy.SGD):
        def get_updates(self, loss, params):
            given.append(sorted(p.name for p in params))
            return super().get_updates(loss * 0.5, params)

    linear = tf.estimator.LinearRegressor(
        linear_columns(tf), model_dir=_model_dir(workdir), optimizer=HalvedSGD(0.1)
    )
    baseline = tf.estimator.BaselineRegressor(
        model_dir=os.path.join(workdir, "baseline"), optimizer=HalvedSGD(0.1)
    )
    close = {}
    for model in (linear, baseline):
        model.train(input_fn(tf, "target"), steps=STEPS)
        for name in model.get_variable_names():
            if name.endswith(("weights", "bias")):
                close[name] = _plain(model.get_variable_value(name))
    # (how often model_fn is traced is the kit's own: the distinct calls are compared)
    distinct = [list(names) for names in sorted(set(map(tuple, given)))]
    return {"exact": {"get_updates_given": distinct}, "close": close}


def _write_weights(tf, model_dir, weights, global_step):
    """A checkpoint of `weights` ({name: value}) at `global_step`, written by a graph's
    Saver as 2.15's V2 canned models wrote theirs: no optimizer step counter of its own."""
    with tf.Graph().as_default():
        for name, value in weights.items():
            tf.Variable(value, name=name, dtype=tf.float32)
        step = tf.compat.v1.train.create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step.assign(global_step))
            tf.compat.v1.train.Saver().save(session, os.path.join(model_dir, "model.ckpt"))


@program
def dnn_regressor_resumed_with_a_tf1_hook(tf, workdir):
    """A DNNRegressor resuming written weights at step 10 with a TF1 hook (so in a graph),
    trained by SGD under an ExponentialDecay schedule, twice: 2.15's V2 DNN counted its
    optimizer's steps in the global step (the schedule decays from step 10; the
    checkpoints hold no `training/SGD/iter`)."""
    model_dir = _model_dir(workdir)
    weights = {
        "dnn/hiddenlayer_0/kernel": [[0.6, 0.5], [-0.2, 0.3]],
        "dnn/hiddenlayer_0/bias": [0.1, -0.1],
        "dnn/logits/kernel": [[1.0], [-0.8]],
        "dnn/logits/bias": [0.3],
    }
    # (with SGD's hyperparameters, which 2.15 saved too)
    _write_weights(
        tf, model_dir, {**weights, "training/SGD/decay": 0.0, "training/SGD/momentum": 0.0}, 10
    )
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 5, 0.5)
    model = tf.estimator.DNNRegressor(
        [2],
        [tf.feature_column.numeric_column("x", shape=[2])],
        model_dir=model_dir,
        optimizer=lambda: tf.keras.optimizers.legacy.SGD(schedule),
    )
    for _ in range(2):
        model.train(input_fn(tf, "target"), steps=STEPS, hooks=[tf.estimator.SessionRunHook()])
    reader = tf.train.load_checkpoint(model_dir)
    return {
        "exact": {
            "keys": sorted(reader.get_variable_to_shape_map()),
            "global_step": int(reader.get_tensor("global_step")),
        },
        "close": {name: _plain(reader.get_tensor(name)) for name in weights},
    }


@program
def dnn_models_given_one_feature_tensor(tf, workdir):
    """An input_fn giving one tensor, not a dict, to the DNN and wide & deep classes of
    both namespaces (alone, and with a TF1 hook): 2.15's ValueError, with its message."""
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    raised = {}
    for namespace, module in (("v2", tf.estimator), ("v1", tf.compat.v1.estimator)):
        for hooks in ([], [tf.estimator.SessionRunHook()]):
            for class_name, kwargs in (
                ("DNNClassifier", {"hidden_units": [2], "feature_columns": columns}),
                ("DNNLinearCombinedClassifier", {"linear_feature_columns": columns}),
            ):
                model = getattr(module, class_name)(**kwargs, model_dir=_model_dir(workdir))
                name = f"{namespace} {class_name} hooks={len(hooks)}"
                raised[name] = error_of(
                    lambda model=model, hooks=hooks: model.train(
                        lambda: (tf.constant(RAW["x"]), tf.constant(LABELS["binary"])),
                        steps=1,
                        hooks=hooks,
                    )
                )
    return {"exact": raised}


@program
def dnn_without_hidden_layers(tf, workdir):
    """`hidden_units=[]` (or `()`): 2.15's DNNs trained their logits layer over the input
    layer alone, seeded as any DNN; `hidden_units=None` failed only when trained, as
    did a wide & deep model's empty or missing `dnn_hidden_units`."""
    config = tf.estimator.RunConfig(tf_random_seed=1)
    exact, close = {}, {}
    for name, module, hidden_units in (
        ("v2_list", tf.estimator, []),
        ("v2_tuple", tf.estimator, ()),
        ("v1_list", tf.compat.v1.estimator, []),
        ("v2_none", tf.estimator, None),
    ):
        model = module.DNNClassifier(
            hidden_units, dnn_columns(tf), os.path.join(workdir, name), config=config
        )
        exact[f"{name}/raised"] = error_of(
            lambda model=model: model.train(input_fn(tf, "binary"), steps=3)
        )
        if exact[f"{name}/raised"] is None:
            exact[f"{name}/variables"] = model.get_variable_names()
            metrics = model.evaluate(input_fn(tf, "binary"), steps=1)
            close[name] = {k: float(v) for k, v in sorted(metrics.items())}
    for name, module, hidden_units in (
        ("v2", tf.estimator, []),
        ("v1", tf.compat.v1.estimator, None),
    ):
        model = module.DNNLinearCombinedClassifier(
            os.path.join(workdir, f"combined_{name}"),
            linear_feature_columns=dnn_columns(tf),
            dnn_feature_columns=dnn_columns(tf),
            dnn_hidden_units=hidden_units,
        )  # (taken when made: refused when trained)
        exact[f"combined_{name}/raised"] = error_of(
            lambda model=model: model.train(input_fn(tf, "binary"), steps=1)
        )
    return {"exact": exact, "close": close}
