"""Feature engineering for the diabetes regression example (models/diabetes.py reads these)."""

import tensorflow as tf
import tensorflow_transform as tft

NUMERIC_FEATURE_KEYS = ["age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
SEX_KEY = "sex"  # 1 or 2 in the data
LABEL_KEY = "target"


def transformed_name(key: str) -> str:
    return key + "_xf"


def _column(x):
    """A required feature as a dense [batch] tensor."""
    return tf.squeeze(x, axis=1) if x.shape.rank == 2 else x


def preprocessing_fn(inputs):
    """Numbers to z-scores, sex to a 0/1 category id, the label passed through as float."""
    outputs = {
        transformed_name(key): tft.scale_to_z_score(tf.cast(_column(inputs[key]), tf.float32))
        for key in NUMERIC_FEATURE_KEYS
    }
    outputs[transformed_name(SEX_KEY)] = _column(inputs[SEX_KEY]) - 1
    outputs[transformed_name(LABEL_KEY)] = tf.cast(_column(inputs[LABEL_KEY]), tf.float32)
    return outputs
