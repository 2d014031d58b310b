"""Many number features as one dense feature column.

A wide table's thousand number columns, each a `numeric_column`, make a thousand weight
variables in a linear model (each with its optimizer's update) and a thousand small op
chains in a DNN's input layer, traced again for every graph the Estimator builds: on 2,000
columns the first training round of a linear model took longer than the Transform.
`NumbersColumn` reads the same features and hands the model one [batch, n] tensor: one
weight matrix, one concat. The features parsed and their values are unchanged.
"""

import collections

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_v2 as fc_lib


class NumbersColumn(
    fc_lib.DenseColumn, collections.namedtuple("NumbersColumn", ("column_name", "columns"))
):
    """`columns` (float32 `numeric_column`s of shape (1,) and no normalizer) side by side,
    in their order, as one DenseColumn called `column_name`."""

    @property
    def name(self):
        return self.column_name

    @property
    def _is_v2_column(self):
        return True

    @property
    def parse_example_spec(self):
        spec = {}
        for column in self.columns:
            spec.update(column.parse_example_spec)
        return spec

    @property
    def parents(self):
        return list(self.columns)

    @property
    def variable_shape(self):
        return tf.TensorShape([len(self.columns)])

    def transform_feature(self, transformation_cache, state_manager):
        return tf.concat(
            [
                tf.reshape(transformation_cache.get(column, state_manager), [-1, 1])
                for column in self.columns
            ],
            axis=1,
        )

    def get_dense_tensor(self, transformation_cache, state_manager):
        return transformation_cache.get(self, state_manager)

    def get_config(self):
        raise NotImplementedError("NumbersColumn is built by the auto model, not serialized.")

    @classmethod
    def from_config(cls, config, custom_objects=None, columns_by_name=None):
        raise NotImplementedError("NumbersColumn is built by the auto model, not serialized.")


def _alone(column) -> bool:
    return (
        isinstance(column, fc_lib.NumericColumn)
        and column.dtype == tf.float32
        and column.shape == (1,)
        and column.normalizer_fn is None
    )


def together(columns, at_least, name="all_numbers"):
    """`columns` with their float32 number columns, when there are `at_least` of them,
    replaced by one `NumbersColumn` called `name`, in the first one's place."""
    alone = [column for column in columns if _alone(column)]
    if len(alone) < max(at_least, 2):
        return list(columns)
    at = columns.index(alone[0])
    rest = [column for column in columns if not _alone(column)]
    return [*rest[:at], NumbersColumn(name, tuple(alone)), *rest[at:]]
