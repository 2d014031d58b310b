"""`classifier_parse_example_spec` and `regressor_parse_example_spec`, as in tf.estimator.

A canned estimator's label and weight are parsed from the same `tf.Example`s
as its features: these return the feature columns' parse spec plus both.
"""

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_v2 as fc_lib


def _with_label_and_weight(feature_columns, label_key, label_spec, weight_column):
    spec = tf.feature_column.make_parse_example_spec(feature_columns)
    if label_key in spec:
        raise ValueError(
            f"label should not be used as feature. label_key: {label_key}, features: {spec.keys()}"
        )
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if not isinstance(weight_column, fc_lib.NumericColumn):
        raise ValueError(
            "weight_column should be an instance of tf.feature_column.numeric_column. "
            f"Given type: {type(weight_column)} value: {weight_column}"
        )
    if weight_column.key in spec:
        raise ValueError(
            f"weight_column should not be used as feature. weight_column: "
            f"{weight_column.key}, features: {spec.keys()}"
        )
    spec.update(weight_column.parse_example_spec)
    return spec


def classifier_parse_example_spec(
    feature_columns, label_key, label_dtype=tf.int64, label_default=None, weight_column=None
):
    """The parse spec of `feature_columns`, a `[1]` label and the weight column if any."""
    label_spec = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return _with_label_and_weight(feature_columns, label_key, label_spec, weight_column)


def regressor_parse_example_spec(
    feature_columns,
    label_key,
    label_dtype=tf.float32,
    label_default=None,
    label_dimension=1,
    weight_column=None,
):
    """The parse spec of `feature_columns`, a `[label_dimension]` label and the weight."""
    label_spec = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return _with_label_and_weight(feature_columns, label_key, label_spec, weight_column)
