"""The pipeline's serving SavedModel: raw `tf.Example`s in, classifier outputs out.

The transform graph runs inside the model, so clients send the same CSV-derived
features the pipeline ingested (packed first as the Transform packed them, on a wide
table: components/transform/packing.py).  Signatures:
- `serving_default` / `classification` (`inputs`), `regression` (`inputs`) and
  `predict` (`examples`): the Estimator's, over raw examples without the label;
- `transform_features` (`examples`): raw examples, label included, to the
  transformed features, so TFMA reads the label through the same graph.
"""

import os

import tensorflow as tf
from tensorflow.python.trackable import data_structures

from components.estimator import export as export_lib
from components.estimator import serving
from components.transform import packing

TRANSFORM_FEATURES = "transform_features"


def _packing(tft_output):
    """The `Packing` the transform graph's raw columns were fitted with (None: none)."""
    return packing.Packing.read(os.path.dirname(tft_output.transform_savedmodel_dir))


def raw_example_receiver_fn(tft_layer, raw_feature_spec, raw_label_key, packed=None):
    """Parses serialized raw examples (no label), packs them as `packed` says (a wide
    table's, components/transform/packing.py) and applies the transform graph."""
    serving_spec = {k: v for k, v in raw_feature_spec.items() if k != raw_label_key}

    def receiver_fn():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        raw = packing.parse_packed(serialized, serving_spec, packed)
        return export_lib.ServingInputReceiver(tft_layer(raw), {"examples": serialized})

    return receiver_fn


def export_serving_model(estimator, tft_output, raw_label_key, export_dir, checkpoint_path=None):
    """Writes the serving SavedModel of `checkpoint_path` (None: the latest) to `export_dir`
    atomically; returns the path."""
    raw_spec = tft_output.raw_feature_spec()
    if raw_label_key not in raw_spec:
        raise ValueError(f"Label {raw_label_key!r} is not a raw feature: {sorted(raw_spec)}.")
    receiver_fn = raw_example_receiver_fn(
        tft_output.transform_features_layer(), raw_spec, raw_label_key, _packing(tft_output)
    )
    return export_with_transform_features(
        estimator, receiver_fn, tft_output, export_dir, checkpoint_path
    )


def _transform_features_function(module, tft_output):
    """Raw examples, label included, to the transformed features; `module` keeps the layer."""
    module.tft_layer = tft_output.transform_features_layer()
    packed = _packing(tft_output)
    raw_spec = tft_output.raw_feature_spec()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def transform_features(examples):
        return module.tft_layer(packing.parse_packed(examples, raw_spec, packed))

    return transform_features.get_concrete_function()


def export_with_transform_features(
    estimator, receiver_fn, tft_output, export_dir, checkpoint_path=None
):
    """The Estimator's signatures over `receiver_fn`'s inputs, and `transform_features`;
    written to `export_dir` atomically.  Returns the path."""
    module, signatures = estimator.build_serving_module(receiver_fn, checkpoint_path)
    signatures[TRANSFORM_FEATURES] = _transform_features_function(module, tft_output)
    return serving.save(module, signatures, export_dir)


def add_transform_features(saved_model_dir, tft_output, export_dir):
    """The SavedModel in `saved_model_dir` (an Estimator's TF2 export) with the
    `transform_features` signature added, written to `export_dir` atomically: its own
    signatures, variables and method names unchanged."""
    loaded = tf.saved_model.load(saved_model_dir)
    signatures = dict(loaded.signatures)
    signatures[TRANSFORM_FEATURES] = _transform_features_function(loaded, tft_output)
    loaded.signature_methods = serving.signature_methods(saved_model_dir)
    return serving.save(loaded, signatures, export_dir)


def export_combined_model(
    members, weights, temperature, clip, tft_output, raw_label_key, export_dir, bounds=None
):
    """One SavedModel serving the weighted average of `members` ([(estimator, checkpoint)])
    over raw examples (`combined_serving_module`), and `transform_features`; written to
    `export_dir` atomically.  Returns the path."""
    raw_spec = tft_output.raw_feature_spec()
    if raw_label_key not in raw_spec:
        raise ValueError(f"Label {raw_label_key!r} is not a raw feature: {sorted(raw_spec)}.")
    receiver_fn = raw_example_receiver_fn(
        tft_output.transform_features_layer(), raw_spec, raw_label_key, _packing(tft_output)
    )
    module, signatures = combined_serving_module(
        members, weights, temperature, clip, receiver_fn, bounds
    )
    signatures[TRANSFORM_FEATURES] = _transform_features_function(module, tft_output)
    return serving.save(module, signatures, export_dir)


def combined_serving_module(members, weights, temperature, clip, receiver_fn, bounds=None):
    """(module, signatures) serving the weighted average of `members` ([(estimator,
    checkpoint)]) with `weights`, in stock TensorFlow ops, under the members' own signatures
    (names, inputs, outputs and method names): class probabilities then divided in log
    space by `temperature` (None: left as averaged) and clipped to [clip, 1 - clip] in
    float32 (components/trainer/ensemble.py does the same in numpy, and owns `CLIP`); a
    regressor's predictions clipped to `bounds` ((low, high); None: not bounded)."""
    built = [estimator.build_serving_module(receiver_fn, path) for estimator, path in members]
    module = tf.Module()
    module.members = [member for member, _ in built]
    names = set.intersection(*(set(signatures) for _, signatures in built))
    signatures = {
        name: _combined_signature(
            [signatures[name] for _, signatures in built], weights, temperature, clip, bounds
        )
        for name in sorted(names)
    }
    module.signature_methods = data_structures.NoDependency(
        {k: v for k, v in built[0][0].signature_methods.items() if k in names}
    )
    return module, signatures


def _combined_signature(functions, weights, temperature, clip, bounds=None):
    """A concrete function with the inputs of `functions` (the members' signature), their
    outputs combined by `_combined_outputs`."""
    # The members' signature functions take their inputs positionally, named by the specs.
    specs = functions[0].structured_input_signature[0]

    def call(*args):
        outputs = [function(*args) for function in functions]
        return _combined_outputs(outputs, weights, temperature, clip, bounds)

    input_signature = [tf.TensorSpec(s.shape, s.dtype, name=s.name) for s in specs]
    return tf.function(call, input_signature=input_signature).get_concrete_function()


def _combined_outputs(outputs, weights, temperature, clip, bounds=None):
    """The first member's outputs, those that follow from its numbers recomputed from the
    weighted average: a regressor's `outputs`/`predictions` (within `bounds`, when given);
    a classifier's `scores` or `probabilities` (calibrated, clipped), then `logits`,
    `logistic`, `class_ids` and `classes` from them."""
    combined = dict(outputs[0])

    def average(key):
        return tf.add_n([weight * out[key] for weight, out in zip(weights, outputs, strict=True)])

    for key in ("outputs", "predictions"):
        if key in combined:
            combined[key] = average(key)
            if bounds is not None:
                low, high = (tf.cast(b, combined[key].dtype) for b in bounds)
                combined[key] = tf.clip_by_value(combined[key], low, high)
    key = next((k for k in ("probabilities", "scores") if k in combined), None)
    if key is None:
        return combined
    probabilities = average(key)
    log_p = tf.math.log(tf.maximum(probabilities, 1e-30))
    if temperature is not None:
        probabilities = tf.nn.softmax(log_p / temperature)
        log_p = tf.nn.log_softmax(log_p / temperature)
    probabilities = tf.clip_by_value(probabilities, clip, 1.0 - clip)
    combined[key] = probabilities
    if "logistic" in combined:
        combined["logistic"] = probabilities[:, 1:]
    if "logits" in combined:
        binary = combined["logits"].shape[-1] == 1
        combined["logits"] = log_p[:, 1:] - log_p[:, :1] if binary else log_p
    if "class_ids" in combined:
        ids = tf.argmax(probabilities, axis=1, output_type=combined["class_ids"].dtype)[:, None]
        combined["class_ids"] = ids
        if "classes" in combined and "all_classes" in combined:
            combined["classes"] = tf.gather(combined["all_classes"], ids, batch_dims=1)
    return combined
