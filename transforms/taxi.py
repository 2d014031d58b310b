"""Feature engineering for the Chicago taxi data (the Trainer depends on these names)."""

import tensorflow as tf
import tensorflow_transform as tft

from components.transform.tensors import dense as _dense

DENSE_FLOAT_FEATURE_KEYS = ["trip_miles", "fare", "trip_seconds"]
VOCAB_FEATURE_KEYS = ["payment_type", "company"]
VOCAB_SIZE = 1000
OOV_SIZE = 10
BUCKET_FEATURE_KEYS = [
    "pickup_latitude",
    "pickup_longitude",
    "dropoff_latitude",
    "dropoff_longitude",
]
FEATURE_BUCKET_COUNT = 10
# A missing coordinate gets a bucket of its own, after the quantile buckets.
MISSING_BUCKET = FEATURE_BUCKET_COUNT
CATEGORICAL_FEATURE_KEYS = [
    "trip_start_hour",
    "trip_start_day",
    "trip_start_month",
    "pickup_census_tract",
    "dropoff_census_tract",
    "pickup_community_area",
    "dropoff_community_area",
]
MAX_CATEGORICAL_FEATURE_VALUES = [24, 31, 12, 2000, 2000, 80, 80]
LABEL_KEY = "tips"


def transformed_name(key: str) -> str:
    return key + "_xf"


def _float(x):
    return tf.cast(x, tf.float32)


def preprocessing_fn(inputs):
    """Maps raw taxi features to `<key>_xf` dense [batch] tensors."""
    outputs = {}
    for key in DENSE_FLOAT_FEATURE_KEYS:
        # Scaling before filling keeps missing values out of the statistics;
        # they then become 0, i.e. the mean.
        outputs[transformed_name(key)] = _dense(tft.scale_to_z_score(_float(inputs[key])), 0.0)
    for key in VOCAB_FEATURE_KEYS:
        outputs[transformed_name(key)] = tft.compute_and_apply_vocabulary(
            _dense(inputs[key], b""), top_k=VOCAB_SIZE, num_oov_buckets=OOV_SIZE, vocab_filename=key
        )
    for key in BUCKET_FEATURE_KEYS:
        # Quantiles of the values present, then missing ones apart: one analysis phase
        # (filling with an analyzer's result first, e.g. tft.mean, would make two, and
        # Beam's in-memory runner then holds the whole train split; see README, Scale).
        buckets = tft.bucketize(_float(inputs[key]), FEATURE_BUCKET_COUNT)
        outputs[transformed_name(key)] = _dense(buckets, MISSING_BUCKET)
    for key, max_value in zip(
        CATEGORICAL_FEATURE_KEYS, MAX_CATEGORICAL_FEATURE_VALUES, strict=True
    ):
        # Modulo keeps identity columns of size `max_value` in range.
        outputs[transformed_name(key)] = tf.math.floormod(
            tf.cast(_dense(inputs[key], 0), tf.int64), max_value
        )
    # A missing fare is NaN and every comparison with NaN is False: label 0.
    fare = _dense(_float(inputs["fare"]), float("nan"))
    tips = _dense(_float(inputs[LABEL_KEY]), 0.0)
    outputs[transformed_name(LABEL_KEY)] = tf.cast(tips > 0.2 * fare, tf.int64)
    return outputs
