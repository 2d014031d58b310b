"""The diabetes regression model: a wide-and-deep regressor over `transforms.diabetes`."""

import tensorflow as tf

from components import estimator
from transforms import diabetes

LABEL_KEY = diabetes.transformed_name(diabetes.LABEL_KEY)


def build_estimator(run_config, hparams, warm_start_from=None):
    """A `DNNLinearCombinedRegressor`; `hparams['hidden_units']` sizes the deep part."""
    deep = [
        tf.feature_column.numeric_column(diabetes.transformed_name(key))
        for key in diabetes.NUMERIC_FEATURE_KEYS
    ]
    wide = [
        tf.feature_column.categorical_column_with_identity(
            diabetes.transformed_name(diabetes.SEX_KEY), num_buckets=2
        )
    ]
    return estimator.DNNLinearCombinedRegressor(
        config=run_config,
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=list(hparams.get("hidden_units", [32, 16])),
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.05),
        linear_optimizer=lambda: tf.keras.optimizers.Ftrl(0.5),
        warm_start_from=warm_start_from,
    )
