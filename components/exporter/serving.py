"""The pipeline's serving SavedModel: raw `tf.Example`s in, classifier outputs out.

The transform graph runs inside the model, so clients send the same CSV-derived
features the pipeline ingested.  Signatures:
- `serving_default` / `classification` (`inputs`), `regression` (`inputs`) and
  `predict` (`examples`): the Estimator's, over raw examples without the label;
- `transform_features` (`examples`): raw examples, label included, to the
  transformed features, so TFMA reads the label through the same graph.
"""

import tensorflow as tf

from components.trainer.estimator import export as export_lib
from components.trainer.estimator import serving

TRANSFORM_FEATURES = "transform_features"


def raw_example_receiver_fn(tft_layer, raw_feature_spec, label_key):
    """Parses serialized raw examples (no label) and applies the transform graph."""
    serving_spec = {k: v for k, v in raw_feature_spec.items() if k != label_key}

    def receiver_fn():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        raw = tf.io.parse_example(serialized, serving_spec)
        return export_lib.ServingInputReceiver(tft_layer(raw), {"examples": serialized})

    return receiver_fn


def export_serving_model(estimator, tft_output, label_key, export_dir):
    """Writes the serving SavedModel to `export_dir` atomically; returns the path."""
    tft_layer = tft_output.transform_features_layer()
    raw_spec = tft_output.raw_feature_spec()
    if label_key not in raw_spec:
        raise ValueError(f"Label {label_key!r} is not a raw feature: {sorted(raw_spec)}.")
    module, signatures = estimator.build_serving_module(
        raw_example_receiver_fn(tft_layer, raw_spec, label_key)
    )
    module.tft_layer = tft_layer

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def transform_features(examples):
        return module.tft_layer(tf.io.parse_example(examples, raw_spec))

    signatures[TRANSFORM_FEATURES] = transform_features.get_concrete_function()
    return serving.save(module, signatures, export_dir)
