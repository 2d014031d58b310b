"""`tf.compat.v1.estimator` (components.estimator.compat_v1) against 2.15, and the one
line that makes `tf.estimator` code run unchanged (components.estimator.install).

2.15's side was recorded once by tests/tf215/record_compat_v1.py: the public
names of `tf.compat.v1.estimator` (tests/data/tf215/compat_v1_api.json) and the
V1 and V2 DNN and linear classifiers trained on the same data from the same
start (compat_v1_training.json).  `install` is checked in a fresh interpreter,
since it changes the `tensorflow` module for the rest of the process.
"""

import inspect
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from components.estimator import compat_v1
from components.estimator.install import real_tf_estimator
from tests.test_estimator_api import _parameters
from tests.tf215 import record_compat_v1 as programs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(programs.API_OUT) as f:
    V1_API = json.load(f)["tf.compat.v1.estimator"]
with open(programs.TRAINING_OUT) as f:
    TRAINED = json.load(f)


def _resolve(namespace, dotted):
    value = namespace
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


# ------------------------------------------------------------------ names
@pytest.mark.parametrize(
    "namespace", ["", "experimental", "export", "inputs", "tpu", "tpu.experimental"]
)
def test_dir_lists_the_names_2_15_listed(namespace):
    # (What an editor completes and dir() shows: the API, not the kit's modules; `tpu`
    # too, which is imported on first use.)
    prefix = f"{namespace}." if namespace else ""
    recorded = {
        name[len(prefix) :]
        for name in V1_API
        if name.startswith(prefix) and "." not in name[len(prefix) :]
    }
    module = _resolve(compat_v1, namespace) if namespace else compat_v1
    assert {name for name in dir(module) if not name.startswith("_")} == recorded


@pytest.mark.parametrize("name", sorted(V1_API))
def test_every_public_name_of_tf_compat_v1_estimator_2_15_is_here(name):
    value = _resolve(compat_v1, name)
    kind = V1_API[name]["kind"]
    if kind == "module":
        assert inspect.ismodule(value)
    elif kind == "class":
        assert inspect.isclass(value), f"{name} is {value!r}, a class in 2.15"
    else:
        assert callable(value) and not inspect.isclass(value)


# 2.15's own V1 objects (not tf.estimator's): their parameters and defaults are checked.
# (The parse-spec helpers take V2's arguments.)
V1_OWN = sorted(
    name
    for name, entry in V1_API.items()
    if not entry["same_as_tf_estimator"]
    and entry["kind"] != "module"
    and not name.startswith("inputs.")
)


@pytest.mark.parametrize("name", V1_OWN)
def test_v1_classes_take_the_arguments_and_defaults_of_2_15(name):
    assert _parameters(_resolve(compat_v1, name)) == V1_API[name]["parameters"]


CANNED = [n for n in V1_OWN if n[0].isupper() and n != "experimental.KMeans"]


@pytest.mark.parametrize("name", CANNED)
def test_v1_canned_classes_are_not_tf_estimators(name):
    # 2.15: tf.compat.v1.estimator.DNNClassifier is not tf.estimator.DNNClassifier.
    v1 = _resolve(compat_v1, name)
    assert v1 is not _resolve(estimator, name)
    assert issubclass(v1, compat_v1.Estimator)


def test_names_2_15_shared_between_the_namespaces_are_shared_here():
    shared = [n for n, e in V1_API.items() if e["same_as_tf_estimator"]]
    assert len(shared) > 40
    for name in shared:
        assert _resolve(compat_v1, name) is _resolve(estimator, name), name


@pytest.mark.parametrize("run", sorted(programs.KMEANS_RUNS))
def test_kmeans_clusters_as_2_15s_did(run, tmp_path):
    # The same TF1 clustering kernels, seed and points: the same centers. Full-batch runs
    # are deterministic; mini-batch updates race between the session's threads (on 2.15 too:
    # one of four runs there gave centers 0.005 apart), so they are held to the
    # clusters' own scale (5 apart): centers within 0.1, the score within 2%.
    mini_batch = programs.KMEANS_RUNS[run].get("use_mini_batch", True)
    atol, rel = (0.1, 0.02) if mini_batch else (1e-4, 1e-4)
    recorded = TRAINED[f"kmeans {run}"]
    got = programs.kmeans_outcome(tf, compat_v1, str(tmp_path), programs.KMEANS_RUNS[run])
    np.testing.assert_allclose(got["centers"], recorded["centers"], atol=atol)
    assert got["score"] == pytest.approx(recorded["score"], rel=rel)
    assert got["cluster_index"] == recorded["cluster_index"]


# ------------------------------------------------------- V1 semantics
def test_v1_string_optimizers_are_tf1_optimizers_at_the_v1_rates():
    from components.estimator.compat_v1.canned import get_optimizer_instance

    adagrad = get_optimizer_instance("Adagrad", 0.05)()
    assert isinstance(adagrad, tf.compat.v1.train.AdagradOptimizer)
    assert adagrad._learning_rate == 0.05
    with pytest.raises(ValueError, match=r"Unsupported optimizer name: adagrad\."):
        get_optimizer_instance("adagrad", 0.05)()  # (when the model trains, as in 2.15)
    keras_optimizer = get_optimizer_instance(lambda: estimator.optimizers._BY_NAME["SGD"](), 1)
    with pytest.raises(ValueError, match=r"Keras optimizer goes to the tf\.estimator"):
        keras_optimizer()


def test_v1_loss_reductions_as_2_15_accepts_them():
    columns = [tf.feature_column.numeric_column("a")]
    # tf_upgrade_v2's `tf.keras.losses.Reduction.SUM` is refused by 2.15's V1 classes too.
    with pytest.raises(ValueError, match="Invalid loss_reduction: sum"):
        compat_v1.DNNClassifier([2], columns, loss_reduction="sum")
    model = compat_v1.LinearRegressor(columns, loss_reduction="weighted_mean")
    assert model is not None
    # The means over the weights (canned_v1's v1_reductions_over_weights holds their values).
    for reduction in ("weighted_mean", "weighted_sum_by_nonzero_weights"):
        compat_v1.LinearRegressor(columns, weight_column="w", loss_reduction=reduction)


def test_v1_canned_estimators_refuse_a_strategy_of_two_replicas_naming_the_v2_class():
    """(One replica trains, as in 2.15: distribute_config's compat_v1_canned_one_replica.)"""
    with tf.Graph().as_default():  # (made in a graph, nothing checks that CPU:1 exists)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = compat_v1.RunConfig(train_distribute=strategy)
    with pytest.raises(ValueError, match=r"use tf\.estimator\.LinearClassifier \(the V2"):
        compat_v1.LinearClassifier([tf.feature_column.numeric_column("a")], config=config)


def _train_as_recorded(namespace, kind, tmp_path):
    model = programs.build(tf, namespace, kind, str(tmp_path / kind), programs.INIT_DIR)
    programs.train(tf, model, kind)
    return programs.outcome(tf, model, kind)


NAMESPACES = {"tf.compat.v1.estimator": compat_v1, "tf.estimator": estimator}
CASES = [(label, kind) for label in NAMESPACES for kind in programs.KINDS_BY_NAMESPACE[label]]


@pytest.mark.parametrize("label,kind", CASES)
def test_v1_and_v2_canned_estimators_train_as_2_15s_did(label, kind, tmp_path):
    # Same data, same start: 2.15's V1 classes sum the loss over the batch and train with
    # TF1 optimizers at the V1 rates (the DNN's Adagrad at 0.05); its V2 DNN averages the
    # loss and uses Keras Adagrad's own 0.001.
    recorded = TRAINED[f"{label} {kind}"]
    got = _train_as_recorded(NAMESPACES[label], kind, tmp_path)
    _assert_same_outcome(got, recorded)


def _assert_same_outcome(got, recorded):
    for key, value in recorded["metrics"].items():
        assert got["metrics"][key] == pytest.approx(value, rel=2e-3, abs=1e-4), key
    np.testing.assert_allclose(got["outputs"], recorded["outputs"], rtol=1e-3, atol=1e-3)

    # The checkpoint's names too, so a model_dir resumes on either side.
    assert got["variables"] == recorded["variables"]


@pytest.mark.parametrize("kind", programs.RESUMED_KINDS)
def test_a_v1_model_dir_of_2_15_resumes_here_with_its_optimizer_state(kind, tmp_path):
    # 2.15 saved the V1 DNN's and linear model's TF1 slots under partitioned-variable
    # keys (`dnn/hiddenlayer_0/kernel/t_0/Adagrad`); resuming reads them back, so
    # training goes on exactly as it went on under 2.15.
    model_dir = tmp_path / kind
    shutil.copytree(programs.resumed_dir(kind), model_dir)
    model = programs.build(tf, compat_v1, kind, str(model_dir), programs.INIT_DIR)
    model.train(lambda: programs.input_fn(tf, True), steps=programs.RESUME_STEPS)
    assert model.get_variable_value("global_step") == 2 * programs.RESUME_STEPS
    _assert_same_outcome(programs.outcome(tf, model, kind), TRAINED[f"resumed {kind}"])


def test_the_recording_tells_v1_from_v2():
    # What the test above holds the kit to: 2.15's two classes differ, a lot.
    v1 = TRAINED["tf.compat.v1.estimator dnn"]["metrics"]
    v2 = TRAINED["tf.estimator dnn"]["metrics"]
    assert v1["loss"] == pytest.approx(v1["average_loss"] * programs.BATCH, rel=1e-3)
    assert v2["loss"] == pytest.approx(v2["average_loss"], rel=1e-6)
    assert v2["average_loss"] > 2 * v1["average_loss"]


# ------------------------------------------------------------- install
def test_a_tensorflow_with_its_own_estimator_is_never_replaced():
    assert real_tf_estimator(tf) is None  # TF 2.21: none
    tf215 = types.ModuleType("tensorflow")
    tf215.__version__ = "2.15.1"
    assert real_tf_estimator(tf215) is not None
    own = types.ModuleType("tensorflow_estimator.python.estimator.api._v2.estimator")
    tf215.estimator = own
    assert real_tf_estimator(tf215) is own


EARLY_MODULE = """
import tensorflow as tf


def train_v2(model_dir):
    columns = [tf.feature_column.numeric_column("a")]
    model = tf.estimator.LinearClassifier(columns, model_dir=model_dir)
    model.train(input_fn, steps=2)
    return type(model).__module__


def v1_dnn():
    return tf.compat.v1.estimator.DNNClassifier


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"a": [1.0, -1.0]}, [1, 0])).repeat().batch(2)
"""

PROGRAM = """
import json, os, sys
import early  # did `import tensorflow as tf` before the line

import components.estimator.install

import tensorflow as tf
import tensorflow.compat.v1 as tf1
from tensorflow import estimator as v2_estimator
from tensorflow.compat.v1 import estimator as tf_estimator

work = sys.argv[1]  # the test's tmp_path: every model_dir goes there
result = {"v2 trained": early.train_v2(os.path.join(work, "v2"))}
result["v1 DNN"] = early.v1_dnn().__module__
result["same v1"] = tf_estimator is tf1.estimator is tf.compat.v1.estimator
result["same v2"] = v2_estimator is tf.estimator is tf.compat.v2.estimator
result["tpu"] = tf.compat.v1.estimator.tpu.TPUEstimator.__module__
columns = [tf.feature_column.numeric_column("a")]
tf_estimator.LinearClassifier(columns, model_dir=os.path.join(work, "v1")).train(
    early.input_fn, steps=2
)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
model.compile("sgd", "mse")
keras_estimator = tf.keras.estimator.model_to_estimator(
    model, model_dir=os.path.join(work, "keras")
)
result["keras"] = type(keras_estimator).__module__
import tensorflow_estimator
result["tensorflow_estimator"] = tensorflow_estimator.estimator is tf_estimator
from tensorflow_estimator.python.estimator.canned import metric_keys
result["metric_keys"] = metric_keys.MetricKeys.AUC
try:
    import tensorflow_estimator.python.estimator.canned.head
except ImportError as error:
    result["internal refused"] = str(error)
print("RESULT " + json.dumps(result))
"""


@pytest.mark.slow
def test_one_line_makes_tf_estimator_code_run_unchanged(tmp_path):
    (tmp_path / "early.py").write_text(textwrap.dedent(EARLY_MODULE))
    (tmp_path / "program.py").write_text(textwrap.dedent(PROGRAM))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    env.pop("TF_USE_LEGACY_KERAS", None)
    run = subprocess.run(
        [sys.executable, str(tmp_path / "program.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT ") :])
    assert result["v2 trained"] == "components.estimator.canned.linear"
    assert result["v1 DNN"] == "components.estimator.compat_v1.canned"
    assert result["same v1"] and result["same v2"]
    assert result["tpu"] == "components.estimator.tpu.tpu_estimator"
    assert result["keras"].startswith("components.estimator.")
    assert result["tensorflow_estimator"]
    assert result["metric_keys"] == "auc"
    assert "tf.compat.v1.estimator.X" in result["internal refused"]


# ------------------------------------------------- experimental, export, keras
def _logit_fn_model_fn(logit_fn_of):
    """A TF1 model_fn, as 2.15's users wrote them around the V1 logit-fn builders."""

    def model_fn(features, labels, mode):
        logits = logit_fn_of(features, mode)
        head = compat_v1.BinaryClassHead()

        def train_op_fn(loss):
            return tf.compat.v1.train.AdagradOptimizer(0.5).minimize(
                loss, global_step=tf.compat.v1.train.get_global_step()
            )

        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels, train_op_fn=train_op_fn
        )

    return model_fn


def _columns():
    return [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]


@pytest.mark.parametrize("builder", ["dnn", "linear"])
def test_v1_logit_fn_builders_train_in_a_users_model_fn(builder, tmp_path):
    experimental = compat_v1.experimental
    if builder == "dnn":
        logit_fn = experimental.dnn_logit_fn_builder(
            units=1,
            hidden_units=[4],
            feature_columns=_columns(),
            activation_fn=tf.nn.relu,
            dropout=None,
            input_layer_partitioner=None,
            batch_norm=False,
        )
        logit_fn_of = logit_fn
    else:
        logit_fn = experimental.linear_logit_fn_builder(units=1, feature_columns=_columns())
        logit_fn_of = lambda features, mode: logit_fn(features)  # noqa: E731
    model = compat_v1.Estimator(_logit_fn_model_fn(logit_fn_of), model_dir=str(tmp_path))
    model.train(lambda: programs.input_fn(tf, True), steps=100)
    metrics = model.evaluate(lambda: programs.input_fn(tf, False))
    assert metrics["accuracy"] > 0.85  # the label is a noisy linear rule: 0.5 untrained
    # 2.15's logit_fns made their variables in the model_fn's scope (the canned models'
    # dnn/ and linear/ are theirs): canned_v1's linear_logit_fn_in_a_model_fn records it.
    kernel = "hiddenlayer_0/kernel" if builder == "dnn" else "linear_model/a/weights"
    assert kernel in model.get_variable_names()


def test_v1_canned_estimator_exports_with_tf1s_export_savedmodel(tmp_path):
    model = compat_v1.LinearClassifier(_columns(), model_dir=str(tmp_path / "model"))
    model.train(lambda: programs.input_fn(tf, True), steps=20)
    spec = tf.feature_column.make_parse_example_spec(_columns())
    receiver_fn = compat_v1.export.build_parsing_serving_input_receiver_fn(spec)
    path = model.export_savedmodel(str(tmp_path / "export"), receiver_fn)
    x, _, _ = programs.training_data()
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    "a": tf.train.Feature(float_list=tf.train.FloatList(value=[row[0]])),
                    "b": tf.train.Feature(float_list=tf.train.FloatList(value=[row[1]])),
                }
            )
        ).SerializeToString()
        for row in x[:4]
    ]
    served = tf.saved_model.load(path.decode()).signatures["predict"](
        examples=tf.constant(examples)
    )
    predicted = model.predict(lambda: programs.input_fn(tf, False).map(lambda f, _: f))
    expected = [p["probabilities"] for p in itertools.islice(predicted, 4)]
    np.testing.assert_allclose(served["probabilities"].numpy(), expected, atol=1e-6)


def test_v1_keras_model_to_estimator_defaults_to_tf1s_checkpoint_format():
    from components.estimator.compat_v1.keras import model_to_estimator

    default = inspect.signature(model_to_estimator).parameters["checkpoint_format"].default
    assert default == "saver"
