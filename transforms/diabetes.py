"""Feature engineering for the diabetes regression example (models/diabetes.py reads these)."""

import tensorflow as tf
import tensorflow_transform as tft

from components.transform.tensors import dense

NUMERIC_FEATURE_KEYS = ["age", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
SEX_KEY = "sex"  # 1 or 2 in the data
LABEL_KEY = "target"


def transformed_name(key: str) -> str:
    return key + "_xf"


def preprocessing_fn(inputs):
    """Numbers to z-scores, sex to a 0/1 category id, the label passed through as float."""
    outputs = {
        transformed_name(key): tft.scale_to_z_score(tf.cast(dense(inputs[key], 0.0), tf.float32))
        for key in NUMERIC_FEATURE_KEYS
    }
    outputs[transformed_name(SEX_KEY)] = dense(inputs[SEX_KEY], 0) - 1
    outputs[transformed_name(LABEL_KEY)] = tf.cast(dense(inputs[LABEL_KEY], 0.0), tf.float32)
    return outputs
