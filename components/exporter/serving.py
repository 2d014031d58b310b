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
