"""tf.estimator 2.15's public API on the kit's estimator: every name, and what the names
added for it do, checked against what tf.estimator 2.15 did.

The names and signatures come from tests/data/tf215/public_api.json and the
expected behaviour from tests/data/tf215/api_behaviour.json, both recorded once
in the TF 2.15 venv (tests/tf215/record_*.py).  The experimental estimators and
hooks are in test_estimator_experimental.py.
"""

import inspect
import json
import os

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
import tf_keras

from components import estimator
from tests.tf215.record_api_behaviour import (
    NUMPY_X,
    NUMPY_Y,
    dtypes,
    feature_columns,
    jsonable,
    pandas_frame,
    regression_input_fn,
    spec_json,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "tf215")
with open(os.path.join(DATA, "public_api.json")) as f:
    API = json.load(f)
with open(os.path.join(DATA, "api_behaviour.json")) as f:
    RECORDED = json.load(f)

# tf.estimator's names, and from tf.compat.v1.estimator the input functions,
# which TF1-era code reaches as tf.estimator.inputs.* too.
NAMES = dict(API["tf.estimator"])
NAMES.update(
    {k: v for k, v in API["tf.compat.v1.estimator only"].items() if k.split(".")[0] == "inputs"}
)

# The names added with this file; their parameters are checked against 2.15's.
ADDED = [
    "add_metrics",
    "classifier_parse_example_spec",
    "regressor_parse_example_spec",
    "inputs.numpy_input_fn",
    "inputs.pandas_input_fn",
    "export.EvalOutput",
    "export.TensorServingInputReceiver",
    "experimental.InMemoryEvaluatorHook",
    "experimental.LinearSDCA",
    "experimental.RNNClassifier",
    "experimental.RNNEstimator",
    "experimental.build_raw_supervised_input_receiver_fn",
    "experimental.call_logit_fn",
    "experimental.make_early_stopping_hook",
    "experimental.make_stop_at_checkpoint_step_hook",
]


def _resolve(dotted):
    value = estimator
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_public_name_of_tf_estimator_2_15_is_here(name):
    value = _resolve(name)
    kind = NAMES[name]["kind"]
    if kind == "module":
        assert inspect.ismodule(value)
    elif kind == "class":
        assert inspect.isclass(value), f"{name} is {value!r}, a class in 2.15"
    else:
        assert callable(value) and not inspect.isclass(value)


def _parameters(value):
    signature = inspect.signature(value)
    params = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        entry = {"name": p.name}
        if p.default is not p.empty:
            default = p.default
            if isinstance(default, tf.dtypes.DType):
                default = f"tf.{default.name}"
            elif not (default is None or isinstance(default, (bool, int, float, str))):
                default = "<object>"
            entry["default"] = default
        params.append(entry)
    return params


@pytest.mark.parametrize("name", ADDED)
def test_added_names_take_the_arguments_of_2_15(name):
    assert _parameters(_resolve(name)) == NAMES[name]["parameters"]


# ------------------------------------------------------------- parse specs
def test_parse_spec_helpers_give_2_15s_specs():
    recorded = RECORDED["parse_specs"]
    columns = feature_columns()
    fc = tf.feature_column
    assert (
        spec_json(
            estimator.classifier_parse_example_spec(
                columns, "label", tf.string, label_default="red", weight_column="w"
            )
        )
        == recorded["classifier"]
    )
    assert (
        spec_json(estimator.classifier_parse_example_spec(columns, "y"))
        == recorded["classifier_defaults"]
    )
    assert (
        spec_json(
            estimator.regressor_parse_example_spec(
                columns,
                "y",
                label_dimension=3,
                label_default=0.5,
                weight_column=fc.numeric_column("w", dtype=tf.float64),
            )
        )
        == recorded["regressor"]
    )
    assert (
        spec_json(estimator.regressor_parse_example_spec(columns, "y"))
        == recorded["regressor_defaults"]
    )


@pytest.mark.parametrize(
    "case, call",
    [
        ("label_in_features", lambda c: estimator.classifier_parse_example_spec(c, "x")),
        (
            "weight_in_features",
            lambda c: estimator.regressor_parse_example_spec(c, "y", weight_column="age"),
        ),
        (
            "weight_not_numeric",
            lambda c: estimator.classifier_parse_example_spec(
                c, "y", weight_column=tf.feature_column.categorical_column_with_identity("w", 3)
            ),
        ),
    ],
)
def test_parse_spec_helpers_refuse_what_2_15_refused(case, call):
    expected = RECORDED["parse_specs"][case]
    with pytest.raises(ValueError) as raised:
        call(feature_columns())
    # 2.15 listed the feature keys as dict_keys(...); the text before them is the same.
    assert str(raised.value).split(" features:")[0] == expected["message"].split(" features:")[0]


def test_parse_spec_parses_examples_for_a_canned_estimator():
    spec = estimator.classifier_parse_example_spec(
        [tf.feature_column.numeric_column("x")], "label", weight_column="w"
    )
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
                "w": tf.train.Feature(float_list=tf.train.FloatList(value=[2.0])),
            }
        )
    )
    parsed = tf.io.parse_example([example.SerializeToString()], spec)
    assert parsed["label"].numpy().tolist() == [[1]]
    assert parsed["w"].numpy().tolist() == [[2.0]]


# ---------------------------------------------------------- input functions
def _batches(input_fn, limit=None):
    dataset = input_fn()
    assert isinstance(dataset, tf.data.Dataset)
    if limit is not None:
        dataset = dataset.take(limit)
    return [tf.nest.map_structure(lambda t: t.numpy(), batch) for batch in dataset]


def test_numpy_input_fn_yields_2_15s_batches():
    recorded = RECORDED["numpy_input_fn"]
    numpy_input_fn = estimator.inputs.numpy_input_fn
    two_epochs = numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=4, num_epochs=2, shuffle=False)
    assert [jsonable(b) for b in _batches(two_epochs)] == recorded["two_epochs"]
    assert dtypes(two_epochs().element_spec) == recorded["dtypes"]
    array_x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert [
        jsonable(b) for b in _batches(numpy_input_fn(array_x, batch_size=2, shuffle=False))
    ] == recorded["array_x_no_y"]
    dict_y = numpy_input_fn(
        {"a": NUMPY_X["a"][:3]},
        {"y1": NUMPY_Y[:3], "y2": NUMPY_Y[:3] + 1},
        batch_size=2,
        shuffle=False,
    )
    assert [jsonable(b) for b in _batches(dict_y)] == recorded["dict_y"]
    forever = numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=4, num_epochs=None, shuffle=False)
    assert [jsonable(b) for b in _batches(forever, limit=4)] == recorded["forever_first_4"]


def test_numpy_input_fn_shuffles_each_row_once_per_epoch():
    recorded = RECORDED["numpy_input_fn"]
    fn = estimator.inputs.numpy_input_fn(NUMPY_X, NUMPY_Y, batch_size=3, num_epochs=1, shuffle=True)
    orders = []
    for _ in range(3):
        batches = _batches(fn)
        assert [len(labels) for _, labels in batches] == recorded["shuffled_batch_sizes"]
        rows = [float(a) for features, _ in batches for a in features["a"]]
        assert sorted(rows) == recorded["shuffled_rows_sorted"]
        orders.append(rows)
    assert len({tuple(o) for o in orders}) > 1


@pytest.mark.parametrize(
    "case, make",
    [
        ("shuffle_missing", lambda fn: fn(NUMPY_X, NUMPY_Y)),
        ("length_mismatch", lambda fn: fn({"a": np.arange(3)}, np.arange(4), shuffle=False)()),
        (
            "duplicate_keys",
            lambda fn: fn({"a": np.arange(3)}, {"a": np.arange(3)}, shuffle=False)(),
        ),
        ("bad_x", lambda fn: fn([1, 2], shuffle=False)()),
        ("empty_dict", lambda fn: fn({}, shuffle=False)()),
    ],
)
def test_numpy_input_fn_refuses_what_2_15_refused(case, make):
    expected = RECORDED["numpy_input_fn"][case]
    with pytest.raises((ValueError, TypeError)) as raised:
        make(estimator.inputs.numpy_input_fn)
    assert type(raised.value).__name__ == expected["type"]
    assert str(raised.value) == expected["message"]


def test_pandas_input_fn_yields_2_15s_batches():
    recorded = RECORDED["pandas_input_fn"]
    pandas_input_fn = estimator.inputs.pandas_input_fn
    x = pandas_frame()
    y = pd.Series([0, 1, 0], index=x.index)
    fn = pandas_input_fn(x, y, batch_size=2, shuffle=False)
    assert [jsonable(b) for b in _batches(fn)] == recorded["series_y"]
    assert dtypes(fn().element_spec) == recorded["dtypes"]
    y_frame = pd.DataFrame({"y1": [0.5, 1.5, 2.5], "a": [7, 8, 9]}, index=x.index)
    frame_y = pandas_input_fn(x, y_frame, batch_size=3, shuffle=False)
    assert [jsonable(b) for b in _batches(frame_y)] == recorded["frame_y"]
    no_y = pandas_input_fn(x, batch_size=2, num_epochs=2, shuffle=False)
    assert [jsonable(b) for b in _batches(no_y)] == recorded["no_y_two_epochs"]
    custom = pandas_input_fn(x, y, batch_size=3, shuffle=False, target_column="label")
    features, labels = _batches(custom)[0]
    assert sorted(features) == recorded["custom_target"]
    assert labels.tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    "case, make",
    [
        ("target_in_x", lambda fn, x, y: fn(x, y, shuffle=False, target_column="a")),
        ("index_mismatch", lambda fn, x, y: fn(x, pd.Series([0, 1, 0]), shuffle=False)),
        ("shuffle_missing", lambda fn, x, y: fn(x, y)),
        ("target_not_string", lambda fn, x, y: fn(x, y, shuffle=False, target_column=1)),
    ],
)
def test_pandas_input_fn_refuses_what_2_15_refused(case, make):
    expected = RECORDED["pandas_input_fn"][case]
    x = pandas_frame()
    with pytest.raises((ValueError, TypeError)) as raised:
        make(estimator.inputs.pandas_input_fn, x, pd.Series([0, 1, 0], index=x.index))
    assert type(raised.value).__name__ == expected["type"]
    assert str(raised.value) == expected["message"]


def test_pandas_input_fn_trains_a_canned_classifier(tmp_path):
    x = pd.DataFrame({"x": np.linspace(-1, 1, 40), "color": ["red", "blue"] * 20})
    y = pd.Series((x["x"] > 0).astype(int), index=x.index)
    columns = [
        tf.feature_column.numeric_column("x"),
        tf.feature_column.indicator_column(
            tf.feature_column.categorical_column_with_vocabulary_list("color", ["red", "blue"])
        ),
    ]
    classifier = estimator.DNNClassifier([4], columns, model_dir=str(tmp_path))
    train = estimator.inputs.pandas_input_fn(x, y, batch_size=8, num_epochs=None, shuffle=True)
    classifier.train(train, steps=5)
    results = classifier.evaluate(
        estimator.inputs.pandas_input_fn(x, y, batch_size=40, shuffle=False)
    )
    assert results["global_step"] == 5
    predictions = list(
        classifier.predict(estimator.inputs.pandas_input_fn(x, batch_size=16, shuffle=False))
    )
    assert len(predictions) == 40


# -------------------------------------------------------------- add_metrics
@pytest.fixture(scope="module")
def trained_regressor(tmp_path_factory):
    regressor = estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")],
        model_dir=str(tmp_path_factory.mktemp("regressor")),
        optimizer=tf_keras.optimizers.legacy.SGD(0.01),
    )
    regressor.train(regression_input_fn, steps=2)
    return regressor


def test_add_metrics_adds_and_overrides_evaluate_keys(trained_regressor):
    recorded = RECORDED["add_metrics"]

    def metric_fn(labels, predictions, features, config):
        assert config.model_dir == trained_regressor.model_dir
        mean = tf_keras.metrics.Mean(name="mean_x")
        mean.update_state(features["x"])
        seven = tf_keras.metrics.Mean(name="seven")
        seven.update_state(labels * 0.0 + 7.0)
        overriding = tf_keras.metrics.Mean(name="average_loss")
        overriding.update_state(predictions["predictions"] * 0.0 + 3.0)
        return {"mean_x": mean, "seven": seven, "average_loss": overriding}

    extended = estimator.add_metrics(trained_regressor, metric_fn)
    assert type(extended).__name__ == recorded["type"]
    assert (extended.model_dir == trained_regressor.model_dir) == recorded["same_model_dir"]
    results = extended.evaluate(regression_input_fn, steps=1)
    assert sorted(results) == recorded["keys"]
    for key in ("mean_x", "seven", "average_loss"):
        assert float(results[key]) == pytest.approx(recorded[key])
    assert results["global_step"] == 2  # the trained model's checkpoint, not a fresh one


def test_add_metrics_takes_tf1_metric_pairs(trained_regressor):
    def metric_fn(labels):
        return {"seven": tf.compat.v1.metrics.mean(labels * 0.0 + 7.0)}

    results = estimator.add_metrics(trained_regressor, metric_fn).evaluate(
        regression_input_fn, steps=1
    )
    assert float(results["seven"]) == pytest.approx(RECORDED["add_metrics"]["seven"])


def test_add_metrics_on_a_tf1_style_model_fn(tmp_path):
    from tests.tf1_programs import linear_model_fn

    x = np.linspace(-1, 1, 16).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, 3 * x + 1)).repeat().batch(8)

    model = estimator.Estimator(linear_model_fn(estimator), model_dir=str(tmp_path))
    model.train(input_fn, steps=3)

    def metric_fn(labels):
        return {"label_max": tf.compat.v1.metrics.mean(tf.reduce_max(labels))}

    results = estimator.add_metrics(model, metric_fn).evaluate(input_fn, steps=1)
    assert sorted(results) == ["global_step", "label_max", "loss", "mae", "rmse"]
    assert float(results["label_max"]) == pytest.approx(3 * x[7] + 1)  # the first batch of 8
    assert results["global_step"] == 3


def test_add_metrics_refuses_unknown_metric_fn_args(trained_regressor):
    with pytest.raises(ValueError, match=r"has following not expected args: \['mode'\]"):
        estimator.add_metrics(trained_regressor, lambda labels, mode: {})


# ------------------------------------------------------------ call_logit_fn
def test_call_logit_fn_passes_what_the_logit_fn_names():
    recorded = RECORDED["call_logit_fn"]
    seen = {}

    def logit_fn(features, mode, config):
        seen.update(mode=mode, config=config)
        return features["x"] * 2.0

    call = estimator.experimental.call_logit_fn
    result = call(logit_fn, {"x": tf.constant([1.0])}, "train", {"p": 1}, "cfg")
    assert {k: str(v) for k, v in seen.items()} == recorded["passes"]
    assert result.numpy().tolist() == [2.0]
    as_dict = call(
        lambda features: {"a": features["x"]}, {"x": tf.constant(1.0)}, "eval", None, None
    )
    assert sorted(as_dict) == recorded["dict_result_keys"]
    with pytest.raises(ValueError) as raised:
        call(lambda features: [1.0], {}, "eval", None, None)
    assert str(raised.value) == recorded["bad_result"]["message"]


# ------------------------------------------------------- receivers, outputs
def test_raw_supervised_receiver_makes_2_15s_placeholders():
    recorded = RECORDED["receivers"]
    build = estimator.experimental.build_raw_supervised_input_receiver_fn
    with tf.Graph().as_default():
        receiver = build(
            {"a": tf.constant([[1.0, 2.0]]), "b": tf.constant([1], tf.int64)},
            tf.constant([[0.5]]),
            default_batch_size=4,
        )()
        single = build(tf.constant([[1.0]]), {"y": tf.constant([[1]])})()
        assert type(receiver).__name__ == recorded["dict_features"]["type"]
        assert {
            k: {"shape": v.shape.as_list(), "dtype": v.dtype.name}
            for k, v in receiver.receiver_tensors.items()
        } == recorded["dict_features"]["receiver_tensors"]
        assert sorted(receiver.features) == recorded["dict_features"]["features"]
        assert isinstance(receiver.labels, tf.Tensor)
        assert sorted(single.receiver_tensors) == recorded["tensor_features"]["receiver_tensors"]
        assert isinstance(single.features, tf.Tensor)
        assert sorted(single.labels) == recorded["tensor_features"]["labels"]
    with pytest.raises(ValueError, match=r"distinct keys.*\['a'\]"):
        build({"a": tf.constant([1.0])}, {"a": tf.constant([1.0])})


def test_tensor_serving_receiver_hands_model_fn_one_tensor(tmp_path):
    recorded = RECORDED["receivers"]
    with pytest.raises(ValueError, match=recorded["tensor_serving_receiver_none"]["message"]):
        estimator.export.TensorServingInputReceiver(None, tf.constant([1.0]))

    class Doubled(estimator.export.ExportOutput):
        """A user's output written for 2.15: only as_signature_def."""

        def __init__(self, value):
            self._value = value

        def as_signature_def(self, receiver_tensors):
            return tf.compat.v1.saved_model.predict_signature_def(
                receiver_tensors, {"doubled": self._value * 2.0}
            )

    seen = []

    def model_fn(features, mode):
        seen.append(type(features).__name__)
        weight = tf.Variable(3.0, name="w")
        predictions = features * weight
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(
                mode,
                predictions=predictions,
                export_outputs={
                    "serving_default": estimator.export.PredictOutput({"y": predictions}),
                    "doubled": Doubled(predictions),
                },
            )
        loss = tf.reduce_mean(predictions)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    model = estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    model.train(lambda: tf.data.Dataset.from_tensors(tf.constant([1.0])).repeat(), steps=1)

    def receiver_fn():
        values = tf.compat.v1.placeholder(tf.float32, [None], name="values")
        receiver = estimator.export.TensorServingInputReceiver(values, values)
        assert (
            sorted(receiver.receiver_tensors)
            == recorded["tensor_serving_receiver"]["receiver_tensors"]
        )
        return receiver

    path = model.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()
    assert "dict" not in seen
    loaded = tf.saved_model.load(path)
    served = loaded.signatures["serving_default"](input=tf.constant([1.0, 2.0]))
    assert served["y"].numpy().tolist() == [3.0, 6.0]
    doubled = loaded.signatures["doubled"](input=tf.constant([1.0]))
    assert doubled["doubled"].numpy().tolist() == [6.0]


def test_eval_output_keys_and_signature_are_2_15s():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        output = estimator.export.EvalOutput(
            loss=tf.reduce_mean(x),
            predictions={"p": x * 2.0},
            metrics={"mean": tf.compat.v1.metrics.mean(x)},
        )
        assert isinstance(output, estimator.export.ExportOutput)
        inputs, outputs = output.signature_io({"x": x})
        assert sorted(inputs) == ["x"]
        assert sorted(outputs) == [
            "loss",
            "metrics/mean/update_op",
            "metrics/mean/value",
            "predictions/p",
        ]
        signature = output.as_signature_def({"x": x})
        assert signature.method_name == "tensorflow/supervised/eval"
        assert sorted(signature.outputs) == sorted(outputs)


def test_export_output_subclass_must_say_how_it_maps_tensors():
    class Nothing(estimator.export.ExportOutput):
        pass

    with pytest.raises(NotImplementedError, match=r"signature_io.*as_signature_def"):
        Nothing().signature_io({"x": tf.constant(1.0)})


def test_export_all_saved_models_writes_a_meta_graph_per_mode(tmp_path):
    """A canned estimator (trained on the TF2 path) exports TRAIN, EVAL and PREDICT graphs
    into one SavedModel, as tf.estimator did; a key that is no mode is refused."""
    column = tf.feature_column.numeric_column("x")
    model = estimator.LinearRegressor([column], model_dir=str(tmp_path / "model"))
    model.train(
        lambda: tf.data.Dataset.from_tensors(({"x": [[1.0], [2.0]]}, [[2.0], [4.0]])).repeat(),
        steps=2,
    )
    features = {"x": tf.zeros([1, 1])}
    supervised = estimator.experimental.build_raw_supervised_input_receiver_fn(
        features, tf.zeros([1, 1])
    )
    serving = estimator.export.build_raw_serving_input_receiver_fn(features)
    with pytest.raises(ValueError, match=r"keys \['serving'\] that are no ModeKeys"):
        model.experimental_export_all_saved_models(str(tmp_path / "x"), {"serving": serving})
    path = model.experimental_export_all_saved_models(
        str(tmp_path / "export"),
        {
            estimator.ModeKeys.PREDICT: serving,
            estimator.ModeKeys.EVAL: supervised,
            estimator.ModeKeys.TRAIN: supervised,
        },
    ).decode()
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    graphs = {",".join(g.meta_info_def.tags): g for g in saved.meta_graphs}
    assert list(graphs) == ["train", "eval", "serve"]  # tf.estimator's order
    assert graphs["eval"].signature_def["eval"].method_name == "tensorflow/supervised/eval"
    assert "saved_model_train_op" in graphs["train"].collection_def
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        loaded = tf.compat.v1.saved_model.loader.load(session, ["eval"], path)
        signature = loaded.signature_def["eval"]
        fetch = {k: signature.outputs[k].name for k in ("loss", "predictions")}
        feed = {signature.inputs["x"].name: [[1.0]], signature.inputs["label"].name: [[2.0]]}
        values = session.run(fetch, feed)
    # The restored weights give the checkpoint's prediction.
    weight = model.get_variable_value("linear/linear_model/x/weights")[0, 0]
    bias = model.get_variable_value("linear/linear_model/bias_weights")[0]
    assert values["predictions"][0, 0] == pytest.approx(weight + bias, rel=1e-5)
