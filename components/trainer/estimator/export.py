"""Serving input receivers and export outputs, as in `tf.estimator.export`.

A receiver function is called while the serving graph is built; it creates
placeholders (the `receiver_tensors`, which become the signature inputs) and
returns the `features` the `model_fn` should see.  An export output says how
one signature maps the model's tensors to its outputs.
"""

import collections

import tensorflow as tf

from components.trainer.estimator.ignored import warn_once

SERVING_DEFAULT = "serving_default"
CLASSIFY = "classification"
REGRESS = "regression"
PREDICT = "predict"


class ServingInputReceiver(
    collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"]
    )
):
    """Features for the model plus the tensors a serving request feeds."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("ServingInputReceiver: features must be given.")
        if not isinstance(features, dict):
            features = {"feature": features}
        if receiver_tensors is None:
            raise ValueError("ServingInputReceiver: receiver_tensors must be given.")
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {"input": receiver_tensors}
        if receiver_tensors_alternatives:
            warn_once(
                "ServingInputReceiver.receiver_tensors_alternatives",
                "ServingInputReceiver: receiver_tensors_alternatives is ignored: only "
                "receiver_tensors become signature inputs.",
            )
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver taking serialized `tf.Example`s under the input name `examples`."""

    def serving_input_receiver_fn():
        serialized = tf.compat.v1.placeholder(
            tf.string, [default_batch_size], name="input_example_tensor"
        )
        features = tf.io.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver feeding each feature directly, one input per feature."""

    def serving_input_receiver_fn():
        receiver_tensors = {}
        for name, tensor in features.items():
            shape = [default_batch_size, *list(tensor.shape[1:])] if tensor.shape.rank else []
            receiver_tensors[name] = tf.compat.v1.placeholder(tensor.dtype, shape=shape, name=name)
        return ServingInputReceiver(dict(receiver_tensors), receiver_tensors)

    return serving_input_receiver_fn


def _single_string_input(receiver_tensors, signature_kind):
    if len(receiver_tensors) != 1:
        raise ValueError(
            f"A {signature_kind} signature needs exactly one receiver tensor, got "
            f"{sorted(receiver_tensors)}."
        )
    (tensor,) = receiver_tensors.values()
    if tensor.dtype != tf.string:
        raise ValueError(
            f"A {signature_kind} signature needs a string input (serialized tf.Examples), "
            f"got {tensor.dtype.name}."
        )
    return {"inputs": tensor}


class ClassificationOutput:
    """`classes` (strings) and/or `scores` (floats), input `inputs`."""

    method_name = "tensorflow/serving/classify"

    def __init__(self, scores=None, classes=None):
        if scores is None and classes is None:
            raise ValueError("ClassificationOutput: give scores, classes or both.")
        if classes is not None and classes.dtype != tf.string:
            raise ValueError("ClassificationOutput: classes must be a string tensor.")
        self.scores = scores
        self.classes = classes

    def signature_io(self, receiver_tensors):
        outputs = {}
        if self.classes is not None:
            outputs["classes"] = self.classes
        if self.scores is not None:
            outputs["scores"] = self.scores
        return _single_string_input(receiver_tensors, "classification"), outputs


class RegressionOutput:
    """One float tensor `outputs`, input `inputs`."""

    method_name = "tensorflow/serving/regress"

    def __init__(self, value):
        if not value.dtype.is_floating:
            raise ValueError("RegressionOutput: value must be a float tensor.")
        self.value = value

    def signature_io(self, receiver_tensors):
        return _single_string_input(receiver_tensors, "regression"), {"outputs": self.value}


class PredictOutput:
    """Any named outputs; the inputs are all receiver tensors by name."""

    method_name = "tensorflow/serving/predict"

    def __init__(self, outputs):
        if not isinstance(outputs, dict):
            outputs = {"output": outputs}
        self.outputs = dict(outputs)

    def signature_io(self, receiver_tensors):
        return dict(receiver_tensors), dict(self.outputs)
