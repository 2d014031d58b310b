"""The taxi wide-and-deep model over the transformed features of `transforms.taxi`."""

import tensorflow as tf

from components import estimator
from transforms import taxi

LABEL_KEY = taxi.transformed_name(taxi.LABEL_KEY)


def wide_and_deep_columns():
    """(linear columns, dnn columns): categorical ids go wide, scaled floats go deep."""
    deep = [
        tf.feature_column.numeric_column(taxi.transformed_name(key))
        for key in taxi.DENSE_FLOAT_FEATURE_KEYS
    ]
    wide = [
        tf.feature_column.categorical_column_with_identity(
            taxi.transformed_name(key), num_buckets=taxi.VOCAB_SIZE + taxi.OOV_SIZE
        )
        for key in taxi.VOCAB_FEATURE_KEYS
    ]
    wide += [
        tf.feature_column.categorical_column_with_identity(
            taxi.transformed_name(key), num_buckets=taxi.MISSING_BUCKET + 1
        )
        for key in taxi.BUCKET_FEATURE_KEYS
    ]
    wide += [
        tf.feature_column.categorical_column_with_identity(
            taxi.transformed_name(key), num_buckets=num_buckets
        )
        for key, num_buckets in zip(
            taxi.CATEGORICAL_FEATURE_KEYS, taxi.MAX_CATEGORICAL_FEATURE_VALUES, strict=True
        )
    ]
    return wide, deep


def build_estimator(run_config, hparams, warm_start_from=None):
    """A `DNNLinearCombinedClassifier`; `hparams['hidden_units']` sizes the deep part."""
    wide, deep = wide_and_deep_columns()
    return estimator.DNNLinearCombinedClassifier(
        config=run_config,
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=list(hparams.get("hidden_units", [100, 70, 50, 25])),
        warm_start_from=warm_start_from,
    )
