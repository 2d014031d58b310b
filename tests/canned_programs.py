"""Small canned-estimator programs, run on tf.estimator 2.15 and on this kit, compared.

A program is `run(est, workdir)` -> JSON-able results, where `est` is the namespace a
program is written against: `tf.estimator` (namespace "v2") or `tf.compat.v1.estimator`
("v1") under TF 2.15, this kit's matching modules under TF 2.21.  Results hold
`predictions` and `metrics` (floats, compared to `Program.tolerance`), `signatures`
(names, inputs and outputs: compared exactly) and `logs` (hook log lines: exactly).

`tests/tf215/record_canned_programs.py` runs every program under 2.15 into
`tests/data/tf215/canned_programs.json`; `tests/test_canned_vs_tf215.py` runs them here.
Every row but the hooks' runs in both namespaces, built the same way: only `est` differs.

The DNN programs start from weights 2.15 drew (`INIT_DIR`, made by `make_inits`), so
both sides train the same net from the same start and their predictions can agree
to 1e-4; programs whose training draws random numbers (dropout, a wide & deep
estimator, which 2.15 could not warm-start) compare metrics within a looser bound.
"""

import collections
import glob
import os
import re
import shutil

import numpy as np
import tensorflow as tf

try:  # TF 2.21: Keras 2 is tf_keras; TF 2.15: tf.keras is Keras 2
    import tf_keras as keras
except ImportError:  # pragma: no cover - the 2.15 venv
    keras = tf.keras

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "canned_programs.json")
INIT_DIR = os.path.join(DATA_DIR, "canned_init")
STEPS = 8
OPTIMIZER_NAMES = ("Adagrad", "Adam", "Ftrl", "RMSProp", "SGD")
EXACT = {"rtol": 1e-4, "atol": 1e-5}  # deterministic on both sides
# Random draws differ (dropout masks, a fresh DNN's weights): the losses only, to 25%.
LOOSE = {"rtol": 0.25, "atol": 0.05, "only": ("average_loss", "loss")}
# A fresh three-class net no recorded init starts: its loss after STEPS steps moves with
# the process's earlier draws (1.2 to 2.1 seen, on both sides), so its metrics' names only.
DRAWN = {"only": ()}

Program = collections.namedtuple("Program", "namespace family run tolerance")
PROGRAMS = {}  # "namespace/name" -> Program
# The programs the fast lane runs (the others are marked slow): each canned class
# with its defaults, the DNN under each optimizer name, every receiver kind once,
# the hooks and the constructors, in each namespace.
FAST = re.compile(
    r"^v\d/([a-z_]+(/n_classes_3)?|dnn_classifier/[a-z]+|[a-z_]+/loss_reduction_sum"
    r"|[a-z_]+/tf1_hook|linear_classifier/warm_start\w*|export/binary/[a-z_]+|export/\w+/parsing|logging_tensor_hook/.*|constructor_parameters)$"
)


def add(namespace, name, family, run, tolerance=EXACT):
    PROGRAMS[f"{namespace}/{name}"] = Program(namespace, family, run, tolerance)


# ------------------------------------------------------------------ data
_rng = np.random.RandomState(11)
N = 24
FEATURES = {
    "x": _rng.randn(N, 2).astype(np.float32),
    "age": _rng.uniform(-1, 1, N).astype(np.float32),
    "c": np.array(list("abcd") * (N // 4)),
    "tag": np.array([f"t{i % 5}" for i in range(N)]),
}
_score = FEATURES["x"][:, 0] + 0.8 * (FEATURES["c"] == "a") + FEATURES["age"]
LABELS = {
    "binary": (_score > 0.3).astype(np.int64)[:, None],
    "multi": np.digitize(_score, [-0.5, 0.8]).astype(np.int64)[:, None],
    "words": np.array(["no", "yes"])[(_score > 0.3).astype(int)][:, None],
    "target": (2 * FEATURES["x"][:, :1] - FEATURES["age"][:, None]).astype(np.float32),
    "targets2": np.stack([_score, -_score], 1).astype(np.float32),
    "counts": np.round(np.exp(FEATURES["x"][:, :1] * 0.5)).astype(np.float32),
    "multi_label": (FEATURES["x"] > 0).astype(np.int64)[:, [0, 1, 0]],
}
WEIGHTS = np.linspace(0.5, 1.5, N).astype(np.float32)[:, None]


def linear_columns():
    """Every kind of column a linear model takes (as a census program has them)."""
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    age = fc.bucketized_column(fc.numeric_column("age"), [-0.5, 0.0, 0.5])
    hashed = fc.categorical_column_with_hash_bucket("tag", 5)
    return [fc.numeric_column("x", shape=[2]), c, age, hashed, fc.crossed_column(["tag", age], 7)]


def dnn_columns():
    fc = tf.feature_column
    c = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
    return [
        fc.numeric_column("x", shape=[2]),
        fc.numeric_column("age"),
        fc.embedding_column(c, 2),
        fc.indicator_column(c),
    ]


def train_input_fn(label_key, weighted=False):
    """The whole data set as one batch, every step (2.15's Baseline takes no dataset)."""

    def input_fn():
        features = {k: tf.constant(v) for k, v in FEATURES.items()}
        if weighted:
            features["w"] = tf.constant(WEIGHTS)
        return features, tf.constant(LABELS[label_key])

    return input_fn


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices(FEATURES).batch(N)


def _plain(value):
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return value.astype(np.float64).tolist()


def predictions(model):
    """{prediction key: every example's values}."""
    rows = list(model.predict(predict_input_fn))
    return {key: [_plain(row[key]) for row in rows] for key in sorted(rows[0])}


def metrics(values):
    return {k: float(v) for k, v in sorted(values.items())}


# ------------------------------------------------------------------ estimators
class Late:
    """A constructor argument made from the namespace (a head, an optimizer)."""

    def __init__(self, make):
        self.make = make


def _shape_kwargs(class_name):
    """The columns (and layers) each family's constructor takes."""
    if class_name.startswith("Baseline"):
        return {}
    if class_name.startswith("Linear"):
        return {"feature_columns": linear_columns()}
    if class_name.startswith("DNNLinearCombined"):
        return {
            "linear_feature_columns": linear_columns(),
            "dnn_feature_columns": dnn_columns(),
            "dnn_hidden_units": [4, 3],
        }
    return {"hidden_units": [4, 3], "feature_columns": dnn_columns()}


def build(est, class_name, model_dir, init=None, **kwargs):
    """`est.<class_name>` over `model_dir`, warm-started from the init `init` if given."""
    kwargs = {k: v.make(est) if isinstance(v, Late) else v for k, v in kwargs.items()}
    kwargs = {**_shape_kwargs(class_name), **kwargs}
    for part in ("linear_feature_columns", "dnn_feature_columns", "dnn_hidden_units"):
        if part in kwargs and kwargs[part] is None:  # a wide & deep with one part
            del kwargs[part]
    if init is not None:
        kwargs["warm_start_from"] = est.WarmStartSettings(
            os.path.join(INIT_DIR, init), vars_to_warm_start=".*"
        )
    return getattr(est, class_name)(model_dir=model_dir, **kwargs)


def canned(class_name, label_key, init=None, weighted=False, tf1_hook=False, **kwargs):
    """A program: train `class_name` STEPS steps, then its predictions and metrics.
    `tf1_hook` trains with a TF1 SessionRunHook (the kit's graph-mode path)."""

    def run(est, workdir):
        model = build(est, class_name, workdir, init, **kwargs)
        hooks = [tf.compat.v1.train.StopAtStepHook(last_step=1000)] if tf1_hook else []
        model.train(train_input_fn(label_key, weighted), steps=STEPS, hooks=hooks)
        return {
            "predictions": predictions(model),
            "metrics": metrics(model.evaluate(train_input_fn(label_key, weighted), steps=1)),
        }

    return run


# Each init: the class and arguments 2.15 drew the start of a DNN family from.
INITS = {
    "dnn_1": ("DNNClassifier", {}),
    "dnn_3": ("DNNClassifier", {"n_classes": 3}),
    "dnn_bn_1": ("DNNClassifier", {"batch_norm": True}),
    "combined_1": ("DNNLinearCombinedClassifier", {}),
    # A linear model 2.15 trained STEPS steps with its defaults: what a warm start carries.
    "linear_trained": ("LinearClassifier", {}),
}


def make_inits(est, out_dir):
    """Under 2.15: each INITS net not yet in `out_dir`, as drawn (one step at learning rate
    0) or, for a `_trained` one, trained STEPS steps; its last checkpoint only."""
    for name, (class_name, kwargs) in INITS.items():
        model_dir = os.path.join(out_dir, name)
        if os.path.isdir(model_dir):
            continue
        zero = {"optimizer": keras.optimizers.legacy.SGD(0.0)}
        if class_name.startswith("DNNLinearCombined"):
            zero = {
                "dnn_optimizer": keras.optimizers.legacy.SGD(0.0),
                "linear_optimizer": keras.optimizers.legacy.SGD(0.0),
            }
        trained = name.endswith("_trained")
        model = build(est, class_name, model_dir, **kwargs, **({} if trained else zero))
        label_key = "multi" if kwargs.get("n_classes") else "binary"
        model.train(train_input_fn(label_key), steps=STEPS if trained else 1)
        latest = tf.train.latest_checkpoint(model_dir)
        for path in glob.glob(os.path.join(model_dir, "*")):
            if not path.startswith(latest + ".") or path.endswith(".meta"):
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        with open(os.path.join(model_dir, "checkpoint"), "w") as f:
            f.write(f'model_checkpoint_path: "{os.path.basename(latest)}"\n')


def vocab_warm_start(est, workdir):
    """A linear model whose `c` vocabulary changed (a, b, c to c, a, z plus an OOV
    bucket) warm-started from 2.15's trained one through a VocabInfo, then trained."""
    os.makedirs(workdir, exist_ok=True)
    old_vocab, new_vocab = os.path.join(workdir, "old.txt"), os.path.join(workdir, "new.txt")
    for path, words in ((old_vocab, "abc"), (new_vocab, "caz")):
        with open(path, "w") as f:
            f.write("".join(word + "\n" for word in words))
    fc = tf.feature_column
    columns = [fc.categorical_column_with_vocabulary_file("c", new_vocab, num_oov_buckets=1)]
    columns += [column for column in linear_columns() if column.name != "c"]
    name = "linear/linear_model/c/weights"
    settings = est.WarmStartSettings(
        os.path.join(INIT_DIR, "linear_trained"),
        vars_to_warm_start=".*",
        var_name_to_vocab_info={name: est.VocabInfo(new_vocab, 3, 1, old_vocab)},
    )
    model = est.LinearClassifier(
        columns, model_dir=os.path.join(workdir, "model"), warm_start_from=settings
    )
    model.train(train_input_fn("binary"), steps=2)
    return {"predictions": predictions(model)}


# ------------------------------------------------------------------ the table
def _optimizer_rows(namespace):
    for name in OPTIMIZER_NAMES:
        low = name.lower()
        add(
            namespace,
            f"baseline_classifier/{low}",
            "baseline",
            canned("BaselineClassifier", "binary", optimizer=name),
        )
        add(
            namespace,
            f"linear_classifier/{low}",
            "linear",
            canned("LinearClassifier", "binary", optimizer=name),
        )
        add(
            namespace,
            f"dnn_classifier/{low}",
            "dnn",
            canned("DNNClassifier", "binary", "dnn_1", optimizer=name),
        )
        add(
            namespace,
            f"dnn_linear_combined_classifier/dnn_{low}",
            "combined",
            canned("DNNLinearCombinedClassifier", "binary", "combined_1", dnn_optimizer=name),
        )
        add(
            namespace,
            f"dnn_linear_combined_classifier/linear_{low}",
            "combined",
            canned("DNNLinearCombinedClassifier", "binary", "combined_1", linear_optimizer=name),
        )


def _default_rows(namespace):
    """Every canned class with its defaults; the `...Estimator`s under a head of each kind."""
    multi_label = Late(lambda est: est.MultiLabelHead(3))
    rows = {
        "baseline_classifier": ("BaselineClassifier", "binary", None, {}),
        "baseline_classifier/n_classes_3": ("BaselineClassifier", "multi", None, {"n_classes": 3}),
        "baseline_regressor": ("BaselineRegressor", "target", None, {}),
        "baseline_estimator": ("BaselineEstimator", "multi_label", None, {"head": multi_label}),
        "linear_classifier": ("LinearClassifier", "binary", None, {}),
        "linear_classifier/n_classes_3": ("LinearClassifier", "multi", None, {"n_classes": 3}),
        "linear_regressor": ("LinearRegressor", "target", None, {}),
        "linear_regressor/label_dimension_2": (
            "LinearRegressor",
            "targets2",
            None,
            {"label_dimension": 2},
        ),
        "linear_estimator": (
            "LinearEstimator",
            "counts",
            None,
            {"head": Late(lambda est: est.PoissonRegressionHead())},
        ),
        "linear_classifier/sparse_combiner_mean": (
            "LinearClassifier",
            "binary",
            None,
            {"sparse_combiner": "mean"},
        ),
        "linear_classifier/optimizer_none": (
            "LinearClassifier",
            "binary",
            None,
            {"optimizer": None},
        ),
        "dnn_classifier": ("DNNClassifier", "binary", "dnn_1", {}),
        "dnn_classifier/n_classes_3": ("DNNClassifier", "multi", "dnn_3", {"n_classes": 3}),
        "dnn_classifier/batch_norm": ("DNNClassifier", "binary", "dnn_bn_1", {"batch_norm": True}),
        "dnn_classifier/tanh": ("DNNClassifier", "binary", "dnn_1", {"activation_fn": tf.nn.tanh}),
        "dnn_regressor": ("DNNRegressor", "target", "dnn_1", {}),
        "dnn_estimator": ("DNNEstimator", "multi_label", "dnn_3", {"head": multi_label}),
        "dnn_linear_combined_classifier": (
            "DNNLinearCombinedClassifier",
            "binary",
            "combined_1",
            {},
        ),
        "dnn_linear_combined_regressor": ("DNNLinearCombinedRegressor", "target", "combined_1", {}),
        "dnn_linear_combined_estimator/linear_only": (
            "DNNLinearCombinedEstimator",
            "binary",
            None,
            {
                "head": Late(lambda est: est.BinaryClassHead()),
                "dnn_feature_columns": None,
                "dnn_hidden_units": None,
            },
        ),
    }
    for name, (class_name, label_key, init, kwargs) in rows.items():
        family = name.split("/")[0].split("_")[0]
        add(namespace, name, family, canned(class_name, label_key, init, **kwargs))


def _argument_rows(namespace):
    """Arguments whose handling differs quietly: reduction, vocabulary, weights, callables."""
    sum_reduction = Late(lambda est: keras.losses.Reduction.SUM)
    for low, class_name, init in (
        ("dnn_classifier", "DNNClassifier", "dnn_1"),
        ("linear_classifier", "LinearClassifier", None),
        ("baseline_classifier", "BaselineClassifier", None),
    ):
        family = low.split("_")[0]
        add(
            namespace,
            f"{low}/loss_reduction_sum",
            family,
            canned(class_name, "binary", init, loss_reduction=sum_reduction),
        )
        add(
            namespace,
            f"{low}/label_vocabulary",
            family,
            canned(class_name, "words", init, label_vocabulary=["no", "yes"]),
        )
        add(
            namespace,
            f"{low}/weight_column",
            family,
            canned(class_name, "binary", init, weighted=True, weight_column="w"),
        )
    add(
        namespace,
        "linear_classifier/warm_start",
        "linear",
        canned("LinearClassifier", "binary", "linear_trained"),
    )
    add(namespace, "linear_classifier/warm_start_vocabulary", "linear", vocab_warm_start)
    for low, class_name, init in (
        ("dnn_classifier", "DNNClassifier", "dnn_1"),
        ("linear_classifier", "LinearClassifier", None),
        ("dnn_linear_combined_classifier", "DNNLinearCombinedClassifier", "combined_1"),
    ):
        add(
            namespace,
            f"{low}/tf1_hook",
            low.split("_")[0],
            canned(class_name, "binary", init, tf1_hook=True),
        )
    add(
        namespace,
        "dnn_classifier/optimizer_callable",
        "dnn",
        canned(
            "DNNClassifier",
            "binary",
            "dnn_1",
            optimizer=Late(lambda est: lambda: keras.optimizers.legacy.SGD(0.1)),
        ),
    )
    add(
        namespace,
        "dnn_classifier/dropout",
        "dnn",
        canned("DNNClassifier", "binary", "dnn_1", dropout=0.3),
        LOOSE,
    )
    add(
        namespace,
        "dnn_linear_combined_estimator",
        "combined",
        canned(
            "DNNLinearCombinedEstimator",
            "multi",
            None,
            head=Late(lambda est: est.MultiClassHead(3)),
        ),
        DRAWN,
    )


# ------------------------------------------------------------------ exports
def signatures(export_dir):
    """{meta graph tags: {signature: method, inputs (name: dtype), outputs}} of an export."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    result = {}
    for graph in saved.meta_graphs:
        tags = ",".join(sorted(graph.meta_info_def.tags))
        result[tags] = {
            name: {
                "method": sig.method_name,
                "inputs": {k: tf.as_dtype(v.dtype).name for k, v in sorted(sig.inputs.items())},
                "outputs": sorted(sig.outputs),
            }
            for name, sig in sorted(graph.signature_def.items())
            if not name.startswith("__")  # TF2's init op, not a serving signature
        }
    return result


def _receiver(est, kind, columns):
    """The serving (or supervised) input receiver fn of `kind` for a model over `columns`."""
    raw = {k: tf.constant(v[:1]) for k, v in FEATURES.items()}
    keys = sorted({key for column in columns for key in _raw_keys(column)})
    if kind == "parsing":
        spec = tf.feature_column.make_parse_example_spec(columns)
        return est.export.build_parsing_serving_input_receiver_fn(spec)
    if kind == "raw":
        return est.export.build_raw_serving_input_receiver_fn({k: raw[k] for k in keys})
    if kind == "tensor":

        def receiver_fn():
            x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
            return est.export.TensorServingInputReceiver(x, x)

        return receiver_fn
    return est.experimental.build_raw_supervised_input_receiver_fn(
        {k: raw[k] for k in keys}, tf.constant(LABELS["binary"][:1])
    )


def _raw_keys(column):
    if isinstance(column, str):
        return [column]
    parents = getattr(column, "parents", None)
    if parents:
        return [key for parent in parents for key in _raw_keys(parent)]
    return [column.key]


def export_program(class_name, label_key, receiver, columns, mode="predict", **kwargs):
    """Trains `class_name` 2 steps over `columns`, exports it through `receiver`."""

    def run(est, workdir):
        cols = {
            "x": [tf.feature_column.numeric_column("x", shape=[2])],
            "c": [tf.feature_column.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])],
        }
        chosen = [column for key in columns.split("+") for column in cols[key]]
        kwargs.setdefault("feature_columns", chosen)
        model = build(est, class_name, os.path.join(workdir, "model"), **kwargs)
        model.train(train_input_fn(label_key), steps=2)
        path = model.export_saved_model(
            os.path.join(workdir, "export"),
            _receiver(est, receiver, chosen),
            experimental_mode=getattr(est.ModeKeys, mode.upper()),
        )
        return {"signatures": signatures(path.decode() if isinstance(path, bytes) else path)}

    return run


def tensor_export_program(head):
    """A custom model_fn over one feature tensor (no dict), exported through a
    `TensorServingInputReceiver`."""

    def run(est, workdir):
        def model_fn(features, labels, mode):
            x = features["x"] if isinstance(features, dict) else features
            made = head(est)
            weights = tf.compat.v1.get_variable(
                "w", [2, made.logits_dimension], initializer=tf.compat.v1.zeros_initializer()
            )

            def train_op_fn(loss):
                return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
                    loss, global_step=tf.compat.v1.train.get_global_step()
                )

            return made.create_estimator_spec(
                features={},
                mode=mode,
                logits=tf.matmul(x, weights),
                labels=labels,
                train_op_fn=train_op_fn,
            )

        model = est.Estimator(model_fn, model_dir=os.path.join(workdir, "model"))
        model.train(train_input_fn("binary"), steps=2)
        path = model.export_saved_model(
            os.path.join(workdir, "export"), _receiver(est, "tensor", [])
        )
        return {"signatures": signatures(path.decode() if isinstance(path, bytes) else path)}

    return run


def _export_rows(namespace):
    """Every receiver kind under each head kind a canned estimator has."""
    heads = {
        "binary": ("LinearClassifier", "binary", {}),
        "multi_class": ("LinearClassifier", "multi", {"n_classes": 3}),
        "vocabulary": ("LinearClassifier", "words", {"label_vocabulary": ["no", "yes"]}),
        "regression": ("LinearRegressor", "target", {}),
        "multi_label": (
            "LinearEstimator",
            "multi_label",
            {"head": Late(lambda est: est.MultiLabelHead(3))},
        ),
    }
    receivers = {
        "parsing": "x+c",
        "raw_one_string": "c",
        "raw_one_float": "x",
        "raw_several": "x+c",
    }
    for head_name, (class_name, label_key, kwargs) in heads.items():
        for receiver_name, columns in receivers.items():
            receiver = "parsing" if receiver_name == "parsing" else "raw"
            add(
                namespace,
                f"export/{head_name}/{receiver_name}",
                "export",
                export_program(class_name, label_key, receiver, columns, **kwargs),
            )
    for head_name, mode in (("binary", "eval"), ("binary", "train"), ("regression", "eval")):
        class_name, label_key, kwargs = heads[head_name]
        add(
            namespace,
            f"export/{head_name}/supervised_{mode}",
            "export",
            export_program(
                class_name,
                "binary" if head_name == "binary" else label_key,
                "supervised",
                "x+c",
                mode,
                **kwargs,
            ),
        )
    add(
        namespace,
        "export/binary/tensor",
        "export",
        tensor_export_program(lambda est: est.BinaryClassHead()),
    )
    add(
        namespace,
        "export/regression/tensor",
        "export",
        tensor_export_program(lambda est: est.RegressionHead()),
    )


# ------------------------------------------------------------------ hooks' logs
# (Not the Estimator's own `loss = ..., step = N` line: a TF1 graph reads the global
# step beside the train op, before or after its update, on 2.15 as here.)
HOOK_TAGS = ("probabilities", "xent", "softmax_tensor", "seen:")
_SECONDS = re.compile(r"\(\d+\.\d+ sec\)")


class LogLines:
    """Collects the log lines that start with one of HOOK_TAGS, from TensorFlow's logger
    and every other (this kit logs under its modules' names)."""

    def __init__(self, tags=HOOK_TAGS):
        import logging

        self.tags = tuple(tags)
        self.lines = []
        self._logging = logging
        self._handler = logging.Handler(logging.INFO)
        self._handler.emit = self._keep
        self._loggers = [logging.getLogger(), logging.getLogger("tensorflow")]

    def _keep(self, record):
        message = record.getMessage()
        if message.startswith(self.tags) and (not self.lines or self.lines[-1][0] is not record):
            self.lines.append((record, _SECONDS.sub("(<elapsed> sec)", message)))

    def __enter__(self):
        self._levels = [logger.level for logger in self._loggers]
        for logger in self._loggers:
            logger.addHandler(self._handler)
            logger.setLevel(self._logging.INFO)
        return self

    def __exit__(self, *exc):
        for logger, level in zip(self._loggers, self._levels, strict=True):
            logger.removeHandler(self._handler)
            logger.setLevel(level)

    def messages(self):
        return [message for _, message in self.lines]


def _softmax_model_fn(est):
    """A TF1 layers classifier whose softmax is a named tensor, as hook programs log it;
    zero weights and learning rate 0 keep every logged value exact."""

    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(
            features["x"], 3, kernel_initializer=tf.compat.v1.zeros_initializer()
        )
        probabilities = tf.nn.softmax(logits, name="softmax_tensor")
        labels = tf.reshape(labels, [-1])
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={"probabilities": probabilities})
        loss = tf.identity(
            tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits), name="xent"
        )
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def hook_program(**hook_kwargs):
    """Trains 7 steps on 3 examples with a `LoggingTensorHook(**hook_kwargs)`; its lines."""

    def run(est, workdir):
        def input_fn():
            return {"x": tf.constant(FEATURES["x"][:3])}, tf.constant(LABELS["multi"][:3])

        model = est.Estimator(_softmax_model_fn(est), model_dir=workdir)
        kwargs = {k: v.make(est) if isinstance(v, Late) else v for k, v in hook_kwargs.items()}
        with LogLines() as logs:
            model.train(input_fn, steps=7, hooks=[est.LoggingTensorHook(**kwargs)])
        return {"logs": logs.messages()}

    return run


def _hook_rows(namespace):
    rows = {
        "dict": {"tensors": {"probabilities": "softmax_tensor"}, "every_n_iter": 3},
        "dict_order": {
            "tensors": {"xent": "xent", "probabilities": "softmax_tensor"},
            "every_n_iter": 4,
        },
        "list": {"tensors": ["softmax_tensor", "xent"], "every_n_iter": 5},
        "formatter": {
            "tensors": {"xent": "xent"},
            "every_n_iter": 2,
            "formatter": lambda values: f"seen: step {values['xent']}",
        },
        "every_n_secs": {"tensors": {"xent": "xent"}, "every_n_secs": 3600},
        "at_end": {"tensors": {"xent": "xent"}, "at_end": True},
        "every_n_iter_and_at_end": {
            "tensors": {"xent": "xent"},
            "every_n_iter": 3,
            "at_end": True,
        },
    }
    for name, kwargs in rows.items():
        add(namespace, f"logging_tensor_hook/{name}", "hooks", hook_program(**kwargs))


# ------------------------------------------------------------------ constructors
CANNED_CLASSES = [
    f"{family}{kind}"
    for family in ("Baseline", "Linear", "DNN", "DNNLinearCombined")
    for kind in ("Classifier", "Regressor", "Estimator")
]


def _default(value):
    value = getattr(value, "value", value)  # an enum's (a loss reduction's) value
    return getattr(value, "__name__", None) or repr(value)


def constructor_parameters(est, workdir):
    """Each canned class's constructor parameters, in order, with their defaults."""
    import inspect

    result = {}
    for class_name in CANNED_CLASSES:
        parameters = list(inspect.signature(getattr(est, class_name).__init__).parameters.values())
        result[class_name] = [
            [p.name, None if p.default is inspect.Parameter.empty else _default(p.default)]
            for p in parameters[1:]
        ]
    return {"parameters": result}


# The same builders over both namespaces: tf.compat.v1.estimator's canned classes are
# 2.15's V1 ones (their own defaults, TF1 optimizers, the loss summed over the batch).
# Its hooks are tf.estimator's own classes: their rows run once, under "v2".
for _namespace in ("v2", "v1"):
    _optimizer_rows(_namespace)
    _default_rows(_namespace)
    _argument_rows(_namespace)
    _export_rows(_namespace)
    add(_namespace, "constructor_parameters", "parameters", constructor_parameters)
_hook_rows("v2")
