"""`tf.compat.v1.keras.estimator`: `model_to_estimator` with TF1's default format."""

from components.estimator import keras


def model_to_estimator(
    keras_model=None,
    keras_model_path=None,
    custom_objects=None,
    model_dir=None,
    config=None,
    checkpoint_format="saver",
    metric_names_map=None,
    export_outputs=None,
):
    """tf.keras.estimator's `model_to_estimator`; 2.15's V1 one defaulted to 'saver'
    (the kit writes tf.estimator's name-based checkpoints for either format)."""
    return keras.converted(keras.KerasEstimatorV1, **locals())
