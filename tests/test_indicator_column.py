"""The DNN's and linear model's indicator columns give TF's IndicatorColumn's values."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.feature_column import feature_column_v2 as fc_lib

from components.estimator.canned import indicator


def _dense(column, features):
    return column.get_dense_tensor(fc_lib.FeatureTransformationCache(features), None).numpy()


def _both(column, features):
    (counted,) = indicator.counted([column])
    assert type(counted) is indicator.CountedIndicatorColumn and counted.name == column.name
    return _dense(column, features), _dense(counted, features)


def test_many_ids_a_row_with_repeats_equal_tfs_one_hot_sums():
    ids = np.random.default_rng(0).integers(0, 50, (16, 30))
    ids[0, :5] = 7  # one id five times in a row
    column = tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_identity("ids", 50)
    )
    stock, counted = _both(column, {"ids": tf.constant(ids, tf.int64)})
    assert counted[0, 7] >= 5
    np.testing.assert_array_equal(counted, stock)


def test_unknown_words_and_missing_values_count_nowhere_as_in_tf():
    column = tf.feature_column.indicator_column(
        tf.feature_column.categorical_column_with_vocabulary_list(
            "word", ["a", "b", "c"], default_value=-1
        )
    )
    words = tf.sparse.SparseTensor(
        [[0, 0], [0, 1], [0, 2], [2, 0], [2, 3]], [b"a", b"zz", b"a", b"c", b""], [3, 4]
    )
    stock, counted = _both(column, {"word": words})
    np.testing.assert_array_equal(counted, [[2, 0, 0], [0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(counted, stock)


def test_weighted_ids_keep_tfs_computation():
    column = tf.feature_column.indicator_column(
        tf.feature_column.weighted_categorical_column(
            tf.feature_column.categorical_column_with_identity("ids", 4), "w"
        )
    )
    features = {
        "ids": tf.sparse.SparseTensor(
            [[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 1], tf.int64), [2, 2]
        ),
        "w": tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 2.0, 3.0], [2, 2]),
    }
    stock, counted = _both(column, features)
    np.testing.assert_array_equal(counted, [[0, 0.5, 0, 2.0], [0, 3.0, 0, 0]])
    np.testing.assert_array_equal(counted, stock)


@pytest.mark.parametrize("rank", [2, 3])
def test_id_counts_follow_the_last_axis_of_any_rank(rank):
    rng = np.random.default_rng(rank)
    shape = [3, 4, 5][:rank]
    dense = rng.integers(-1, 7, shape)  # -1 and 6 lie outside [0, 6)
    ids = tf.sparse.from_dense(tf.constant(dense, tf.int64) + 1)  # explicit zeros dropped
    ids = tf.sparse.SparseTensor(ids.indices, ids.values - 1, ids.dense_shape)
    expected = tf.reduce_sum(
        tf.one_hot(tf.sparse.to_dense(ids, default_value=-1), 6), axis=-2
    ).numpy()
    got = indicator.id_counts(ids, 6).numpy()
    assert got.shape == (*shape[:-1], 6)
    np.testing.assert_array_equal(got, expected)
