"""Serving input receivers and export outputs, as in `tf.estimator.export`.

A receiver function is called while the serving graph is built; it creates
placeholders (the `receiver_tensors`, which become the signature inputs) and
returns the `features` the `model_fn` should see.  An export output says how
one signature maps the model's tensors to its outputs.
"""

import collections

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_output as core_export_output

SERVING_DEFAULT = "serving_default"
CLASSIFY = "classification"
REGRESS = "regression"
PREDICT = "predict"


class ServingInputReceiver(
    collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"]
    )
):
    """Features for the model plus the tensors a serving request feeds.

    Each group of `receiver_tensors_alternatives` ({name: tensors}, a single tensor fed
    as `input`) adds signatures beside the default ones, `<name>:<output key>`, fed by
    that group instead: typically the parsed features, fed downstream of the parsing."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _wrapped_receiver_tensors(features, "feature", "feature", int_keys=True)
        receiver_tensors = _wrapped_receiver_tensors(receiver_tensors, "receiver_tensor", "input")
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise ValueError(
                    "receiver_tensors_alternatives must be a dict: "
                    f"{receiver_tensors_alternatives}.\nServingInputReceiver: it is a "
                    f"{type(receiver_tensors_alternatives).__name__}."
                )
            receiver_tensors_alternatives = {
                name: _wrapped_receiver_tensors(
                    group, "receiver_tensors_alternative", "input", group_name=name
                )
                for name, group in receiver_tensors_alternatives.items()
            }
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


def _wrapped_receiver_tensors(value, part, single_key, int_keys=False, group_name=None):
    """`value` as a dict (a single value under `single_key`), checked as 2.15 checked a
    receiver's parts, with a ValueError in 2.15's words (`part` is what they named it),
    then which alternative and what was given: defined, string keys (features may also
    have int ones), each value a Tensor, SparseTensor or RaggedTensor (or an object with
    a `.tensor` that converts to one, as 2.15's LabeledTensor carve-out)."""
    where = "ServingInputReceiver" + ("" if group_name is None else f": group {group_name!r}")
    if value is None:
        raise ValueError(
            f"{part}s must be defined." + ("" if group_name is None else f"\n{where}.")
        )
    named = value if isinstance(value, dict) else {single_key: value}
    for key, tensor in named.items():
        if not isinstance(key, str) and not (int_keys and isinstance(key, int)):
            kinds = "strings or ints" if int_keys else "strings"
            raise ValueError(f"{part} keys must be {kinds}: {key}.\n{where}: key {key!r}.")
        if not _is_receivable(tensor):
            raise ValueError(
                f"{part} {key} must be a Tensor, SparseTensor, or RaggedTensor.\n"
                f"{where}: it is a {type(tensor).__name__}."
            )
    return named


def _is_receivable(tensor):
    if isinstance(tensor, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)):
        return True
    if not hasattr(tensor, "tensor"):
        return False
    try:
        tf.convert_to_tensor(tensor)
    except (TypeError, ValueError):
        return False
    return True


class TensorServingInputReceiver(ServingInputReceiver):
    """A receiver whose `features` is one tensor, handed to `model_fn` as it is (not in a dict).

    (A subclass here, so every export path accepts it; in tf.estimator it was a
    sibling class.)"""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        if not isinstance(features, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)):
            raise ValueError(
                "feature must be a Tensor, SparseTensor, or RaggedTensor.\n"
                f"TensorServingInputReceiver: it is a {type(features).__name__}."
            )
        checked = ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives)
        return tuple.__new__(
            cls, (features, checked.receiver_tensors, checked.receiver_tensors_alternatives)
        )


def _check_input_tensors(value, what):
    tensors = value.values() if isinstance(value, dict) else [value]
    for tensor in tensors:
        if not isinstance(tensor, (tf.Tensor, tf.SparseTensor)):
            raise ValueError(
                f"SupervisedInputReceiver: {what} must be Tensors or a dict of them, "
                f"got {type(tensor).__name__}."
            )


class SupervisedInputReceiver(
    collections.namedtuple("SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])
):
    """Features and labels for a TRAIN or EVAL graph, plus the tensors a request feeds."""

    def __new__(cls, features, labels, receiver_tensors):
        _check_input_tensors(features, "features")
        _check_input_tensors(labels, "labels")
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {"input": receiver_tensors}
        _check_input_tensors(receiver_tensors, "receiver_tensors")
        return super().__new__(cls, features, labels, receiver_tensors)


def _placeholder_like(tensor, default_batch_size):
    """A placeholder of `tensor`'s dtype and shape, the batch dimension `default_batch_size`
    (a scalar's too, as tf.estimator made it: a batch of them), named as `tensor`'s op in
    a graph (no name for an eager tensor), as tf.estimator named it. Its shape is read by
    `get_shape()`, as 2.15 read it: a numpy array or a `tf.TensorSpec` fails there as it
    did (AttributeError)."""
    shape = tf.TensorShape([default_batch_size]).concatenate(tensor.get_shape()[1:])
    try:
        name = tensor.op.name
    except AttributeError:  # (an eager tensor has no op)
        name = None
    return tf.compat.v1.placeholder(tensor.dtype, shape=shape, name=name)


def build_raw_supervised_input_receiver_fn(features, labels, default_batch_size=None):
    """A receiver feeding features and labels directly, one input per tensor.

    A single features tensor is fed as `input`, a single labels tensor as `label`."""
    feature_keys = set(features) if isinstance(features, dict) else {"input"}
    label_keys = set(labels) if isinstance(labels, dict) else {"label"}
    overlap = feature_keys & label_keys
    if overlap:
        raise ValueError(
            f"Features and labels must have distinct keys; both have {sorted(overlap)}."
        )

    def placeholders(tensors, single_name):
        if not isinstance(tensors, dict):
            placeholder = _placeholder_like(tensors, default_batch_size)
            return placeholder, {single_name: placeholder}
        fed = {
            name: _placeholder_like(tensor, default_batch_size) for name, tensor in tensors.items()
        }
        return fed, fed

    def supervised_input_receiver_fn():
        feature_tensors, feature_inputs = placeholders(features, "input")
        label_tensors, label_inputs = placeholders(labels, "label")
        return SupervisedInputReceiver(
            feature_tensors, label_tensors, {**feature_inputs, **label_inputs}
        )

    return supervised_input_receiver_fn


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
        receiver_tensors = {
            name: _placeholder_like(tensor, default_batch_size) for name, tensor in features.items()
        }
        return ServingInputReceiver(dict(receiver_tensors), receiver_tensors)

    return serving_input_receiver_fn


def _single_string_input(receiver_tensors, signature_kind):
    """The serialized tf.Examples a classify or regress signature reads.  Its refusal
    starts as 2.15's did: the export's report of left-out signatures shows it."""
    tensors = list(receiver_tensors.values())
    if len(tensors) != 1 or tensors[0].dtype != tf.string:
        raise ValueError(
            f"{signature_kind.capitalize()} signatures can only accept a single tensor "
            "input of type tf.string. It takes serialized tf.Examples: parse them into "
            "the features with tf.io.parse_example in the serving_input_receiver_fn.\n "
            f"Received: {receiver_tensors}"
        )
    return {"inputs": tensors[0]}


class ExportOutput(core_export_output.ExportOutput):
    """Base class of export outputs: how one signature maps inputs and model tensors.

    A subclass gives `signature_io(receiver_tensors)` -> (inputs, outputs), dicts
    of tensors, and its SignatureDef `method_name`; or, as for tf.estimator,
    `as_signature_def(receiver_tensors)`, from whose tensor names the graph's
    tensors are then looked up."""

    method_name = None

    def signature_io(self, receiver_tensors):
        if type(self).as_signature_def is ExportOutput.as_signature_def:
            raise NotImplementedError(
                f"{type(self).__name__} must define signature_io(receiver_tensors) or "
                "as_signature_def(receiver_tensors)."
            )
        graph = (
            next(iter(receiver_tensors.values())).graph
            if receiver_tensors
            else tf.compat.v1.get_default_graph()
        )
        with graph.as_default():  # as_signature_def may add ops, as under tf.estimator
            signature = self.as_signature_def(receiver_tensors)
        self.method_name = signature.method_name

        def tensors(infos):
            for key, info in infos.items():
                if not info.name:
                    raise ValueError(
                        f"{type(self).__name__}: signature entry {key!r} is not a dense "
                        "tensor; only dense tensors can be looked up by name."
                    )
            return {key: graph.get_tensor_by_name(info.name) for key, info in infos.items()}

        return tensors(signature.inputs), tensors(signature.outputs)

    def as_signature_def(self, receiver_tensors):
        """The SignatureDef (built in the graph that holds the tensors)."""
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {"input": receiver_tensors}
        inputs, outputs = self.signature_io(receiver_tensors)
        info = tf.compat.v1.saved_model.build_tensor_info
        return tf.compat.v1.saved_model.build_signature_def(
            {k: info(v) for k, v in inputs.items()},
            {k: info(v) for k, v in outputs.items()},
            self.method_name,
        )


class ClassificationOutput(ExportOutput, core_export_output.ClassificationOutput):
    """`classes` (strings) and/or `scores` (floats), input `inputs`. As 2.15's (TF's own
    class, which this is a subclass of): refused in its words, read-only properties."""

    method_name = "tensorflow/serving/classify"

    def signature_io(self, receiver_tensors):
        outputs = {}
        if self.classes is not None:
            outputs["classes"] = self.classes
        if self.scores is not None:
            outputs["scores"] = self.scores
        return _single_string_input(receiver_tensors, "classification"), outputs


class RegressionOutput(ExportOutput, core_export_output.RegressionOutput):
    """One float tensor `outputs`, input `inputs` (TF's own class, as 2.15's)."""

    method_name = "tensorflow/serving/regress"

    def signature_io(self, receiver_tensors):
        return _single_string_input(receiver_tensors, "regression"), {"outputs": self.value}


class PredictOutput(ExportOutput, core_export_output.PredictOutput):
    """Any named outputs (one tensor is `output`); the inputs are all receiver tensors by
    name (TF's own class, as 2.15's)."""

    method_name = "tensorflow/serving/predict"

    def signature_io(self, receiver_tensors):
        return dict(receiver_tensors), dict(self.outputs)


class EvalOutput(ExportOutput, core_export_output.EvalOutput):
    """Loss, predictions and metrics of an EVAL graph, keyed as tf.estimator keyed them:
    `loss`, `predictions[/<key>]`, `metrics/<name>/value` and `metrics/<name>/update_op`.

    Only a PREDICT-mode SavedModel is exported here, so this is for code that
    builds or inspects such outputs (its SignatureDef is tf.estimator's)."""

    method_name = "tensorflow/supervised/eval"
    as_signature_def = core_export_output.EvalOutput.as_signature_def

    def signature_io(self, receiver_tensors):
        outputs = {}
        for part in (self.loss, self.predictions, self.metrics):
            outputs.update(part or {})
        return dict(receiver_tensors), outputs


# What tf.estimator 2.15 listed in this namespace (the rest serves the kit itself).
_PUBLIC = (
    "ClassificationOutput",
    "EvalOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
)


def __dir__():
    return sorted(_PUBLIC)
