"""`experimental.LinearSDCA`: stochastic dual coordinate ascent for the linear estimators.

Passed as `optimizer` to `LinearClassifier` (binary) or `LinearRegressor` (one
label), it trains their weights with TensorFlow's SDCA kernels
(`SdcaFprint`, `SdcaOptimizerV2`), as tf.estimator 2.15 did: each step solves
the batch's dual problem, adds the deltas to the unshrunk weights
(`<weight>_unshrunk`, saved in checkpoints as tf.estimator named them), copies
them to the model's weights and applies the L1 shrinkage.

Each example's dual state (keyed by `example_id_column`) is kept in a hash
table; as tf.estimator did, checkpoints hold it under
`ShardedMutableHashTable-1-of-1-keys` and `...-values` (the table's buckets,
copied there after every step), so a new Estimator (a new process) on the
model_dir trains on from the duals it saved, and a tf.estimator 2.15 SDCA
checkpoint resumes here.  The training summaries add 2.15's
`approximate_duality_gap` and `examples_seen` (the table's size).
"""

import logging

import tensorflow as tf
from tensorflow.python.feature_column import feature_column_v2 as fc_lib

from components.estimator import head as head_lib
from components.estimator import summaries
from components.estimator import variables as variables_lib

log = logging.getLogger(__name__)

# Where canned/linear.py's model keeps its weights.
_LINEAR_MODEL_SCOPE = "linear/linear_model"
# The checkpoint names of the table's buckets (tf.estimator's one shard of its table),
# and its first size (TensorFlow's dense hash table starts with 2**17 buckets).
_TABLE_NAME = "ShardedMutableHashTable-1-of-1"
_TABLE_BUCKETS = 2**17
_LOSSES = {head_lib.BinaryClassHead: "logistic_loss", head_lib.RegressionHead: "squared_loss"}


class LinearSDCA:
    """SDCA settings for a linear estimator's `optimizer` argument.

    `num_table_shards` only split tf.estimator's state table over parameter
    servers; here one in-process table holds it, whatever the value."""

    def __init__(
        self,
        example_id_column,
        num_loss_partitions=1,
        num_table_shards=None,
        symmetric_l1_regularization=0.0,
        symmetric_l2_regularization=1.0,
        adaptive=False,
    ):
        if symmetric_l2_regularization <= 0.0:
            raise ValueError("symmetric_l2_regularization should be positive.")
        if symmetric_l1_regularization < 0.0:
            raise ValueError("symmetric_l1_regularization should be non-negative.")
        del num_table_shards  # see the class docstring
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._l1 = float(symmetric_l1_regularization)
        self._l2 = float(symmetric_l2_regularization)
        self._adaptive = adaptive
        self._tables = {}  # global step variable's ref -> that estimator's example table

    def check_head(self, head, sparse_combiner):
        """Refuses, as tf.estimator did, what SDCA cannot train."""
        if sparse_combiner != "sum":
            raise ValueError('sparse_combiner must be "sum" when optimizer is a LinearSDCA object.')
        if isinstance(head, head_lib.MultiClassHead):
            raise ValueError("LinearSDCA cannot be used in a multi-class setting.")
        if type(head) is head_lib.RegressionHead and head.logits_dimension != 1:
            raise ValueError("LinearSDCA can only be used with one-dimensional label.")
        if _loss_type(head) is None:
            raise ValueError(
                f"LinearSDCA trains a binary logistic or a squared loss (BinaryClassHead, "
                f"RegressionHead), not {type(head).__name__}; use a gradient optimizer."
            )

    def _table(self):
        """This estimator's example-state table, made once (outside the trace)."""
        global_step = variables_lib.get_global_step()
        key = global_step.ref()
        if key not in self._tables:
            with tf.init_scope():
                self._tables[key] = tf.lookup.experimental.DenseHashTable(
                    key_dtype=tf.int64,
                    value_dtype=tf.float32,
                    default_value=[0.0, 0.0, 0.0, 0.0],
                    empty_key=[0, 0],
                    deleted_key=[1, 1],
                    # (Its buckets are saved in the copies under 2.15's names; a TF1
                    # graph's Saver would save the table itself too.)
                    checkpoint=False,
                )
        return self._tables[key], global_step

    def train_op(self, linear_model, features, labels, head, loss=None, slot_naming=None):
        """One SDCA step on the batch: the linear model's weights are updated in place,
        after `loss` (the batch's, at the weights before the step, as 2.15 reported it).
        `slot_naming(slot, weights, name)`: a V1 class's checkpoint keys of the slots."""
        if self._l2 <= 1.0:  # (2.15's warning, each time it built a training graph)
            log.warning(
                "symmetric_l2_regularization for SDCA should typically be larger than for "
                "online optimization methods. Recommended value is of the order of the "
                "average L2 norm of the training examples."
            )
        table, global_step = self._table()
        copies = _table_copies()
        resumed = _resume(table, global_step, copies)
        with tf.control_dependencies([resumed]):
            tf.debugging.assert_equal(
                tf.logical_and(tf.equal(table.size(), 0), global_step > 0),
                False,
                message=(
                    "LinearSDCA cannot train on from this checkpoint: the per-example dual "
                    "state it holds is empty, and training on with the duals reset would "
                    "bias the model. Train in a fresh model_dir."
                ),
            )
            sparse, dense = _inputs_and_weights(linear_model, features, slot_naming)
        example_ids = tf.reshape(features[self._example_id_column], [-1])
        batch = tf.shape(example_ids)[0]
        # The bias: the weight of a dense feature that is 1 for every example.
        bias = linear_model.bias
        dense.append((tf.ones([batch, 1]), bias, _unshrunk(bias, "bias_weights", slot_naming)))
        self._summarize(table, [weights for _, weights, _ in sparse + dense])
        weight_key = _weight_key(head)
        example_weights = (
            tf.reshape(tf.cast(features[weight_key], tf.float32), [-1])
            if weight_key
            else tf.ones([batch])
        )
        feature_ids = [tf.unique(ids)[0] for (_, ids, _), _, _ in sparse]
        fingerprints = tf.raw_ops.SdcaFprint(input=example_ids)
        with tf.control_dependencies([resumed]):
            state_data = table.lookup(fingerprints)
        states, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
            sparse_example_indices=[examples for (examples, _, _), _, _ in sparse],
            sparse_feature_indices=[ids for (_, ids, _), _, _ in sparse],
            sparse_feature_values=[values for (_, _, values), _, _ in sparse],
            dense_features=[inputs for inputs, _, _ in dense],
            example_weights=example_weights,
            example_labels=tf.reshape(tf.cast(labels, tf.float32), [-1]),
            sparse_indices=feature_ids,
            sparse_weights=[
                tf.gather(slot, ids) for (_, _, slot), ids in zip(sparse, feature_ids, strict=True)
            ],
            dense_weights=[slot.read_value() for _, _, slot in dense],
            example_state_data=state_data,
            loss_type=_loss_type(head),
            l1=self._l1,
            l2=self._l2,
            num_loss_partitions=self._num_loss_partitions,
            num_inner_iterations=1,
            adaptive=self._adaptive,
        )
        # (The loss reads the weights this step changes: it is computed first.)
        with tf.control_dependencies([] if loss is None else [loss]):
            states = tf.identity(states)
        updates = [_insert_and_copy(table, fingerprints, states, copies)]
        for (_, _, slot), ids, delta in zip(sparse, feature_ids, sparse_deltas, strict=True):
            rows = tf.reshape(delta, tf.concat([tf.shape(ids), slot.shape[1:]], 0))
            updates.append(slot.scatter_add(tf.IndexedSlices(rows, ids)))
        for (_, _, slot), delta in zip(dense, dense_deltas, strict=True):
            updates.append(slot.assign_add(tf.reshape(delta, slot.shape)))
        with tf.control_dependencies(updates):
            shrinkage = self._l1 / self._l2
            return tf.group(
                [
                    weights.assign(tf.sign(slot) * tf.maximum(0.0, tf.abs(slot) - shrinkage))
                    for _, weights, slot in sparse + dense
                ]
            )

    def _summarize(self, table, weights):
        """2.15's SDCA summaries: the duality gap over the examples seen, and how many."""

        def gap():
            _, values = table.export()
            # Per example: [dual, primal loss, dual loss, example weight].
            sums = tf.reduce_sum(tf.cast(values, tf.float64), 0)
            flat = [tf.reshape(tf.cast(w, tf.float64), [-1]) for w in weights]
            l1 = self._l1 * tf.add_n([tf.reduce_sum(tf.abs(w)) for w in flat])
            l2 = self._l2 * tf.add_n([tf.reduce_sum(tf.square(w)) for w in flat]) / 2.0
            return (sums[1] + sums[2] + l1 + 2.0 * l2) / sums[3]

        summaries.scalar("approximate_duality_gap", gap, v1_scope="linear")
        summaries.scalar("examples_seen", table.size, v1_scope="linear")


def _table_copies():
    """The variables the checkpoints hold the table's buckets in (keys, values); their
    length follows the table's as it grows."""
    return (
        tf.Variable(
            lambda: tf.zeros([_TABLE_BUCKETS, 2], tf.int64),
            trainable=False,
            shape=tf.TensorShape([None, 2]),
            name=f"{_TABLE_NAME}-keys",
        ),
        tf.Variable(
            lambda: tf.zeros([_TABLE_BUCKETS, 4], tf.float32),
            trainable=False,
            shape=tf.TensorShape([None, 4]),
            name=f"{_TABLE_NAME}-values",
        ),
    )


def _resume(table, global_step, copies):
    """Fills an empty table of a trained model from the buckets its checkpoint saved."""
    keys, values = copies

    def load():
        # (The op's shape function wants scalar keys; its kernel takes the buckets
        # `export` gave, which pass it with their shape unknown.)
        load_op = tf.raw_ops.LookupTableImportV2(
            table_handle=table.resource_handle,
            keys=tf.compat.v1.placeholder_with_default(keys.value(), shape=None),
            values=tf.compat.v1.placeholder_with_default(values.value(), shape=None),
        )
        with tf.control_dependencies([load_op]):
            return tf.constant(True)

    empty = tf.logical_and(tf.equal(table.size(), 0), global_step > 0)
    return tf.cond(empty, load, lambda: tf.constant(False))


def _insert_and_copy(table, fingerprints, states, copies):
    """The batch's new dual states into the table, then its buckets into the copies."""
    with tf.control_dependencies([table.insert(fingerprints, states)]):
        keys, values = table.export()
    return tf.group(copies[0].assign(keys), copies[1].assign(values))


def _inputs_and_weights(linear_model, features, slot_naming=None):
    """(inputs, weights, unshrunk slot) for each of the model's sparse and dense columns."""
    columns, state_manager = linear_model._columns, linear_model._state_manager
    cache = fc_lib.FeatureTransformationCache(features)
    sparse, dense = [], []
    for column in columns:
        weights = state_manager.get_variable(column, "weights")
        slot = _unshrunk(weights, f"{column.name}/weights", slot_naming)
        if isinstance(column, fc_lib.CategoricalColumn):
            ids = _unique_ids(column.get_sparse_tensors(cache, state_manager))
            sparse.append((ids, weights, slot))
        elif isinstance(column, fc_lib.DenseColumn):
            if column.variable_shape.ndims != 1:
                raise ValueError(
                    f"Column {type(column).__name__} has rank {column.variable_shape.ndims}, "
                    "larger than 1."
                )
            inputs = tf.cast(column.get_dense_tensor(cache, state_manager), tf.float32)
            dense.append((inputs, weights, slot))
        else:
            raise ValueError(f"LinearSDCA does not support column type {type(column).__name__}.")
    return sparse, dense


def _loss_type(head):
    """SDCA's loss for `head`, as tf.estimator 2.15 chose it by the head's class (a
    subclass, such as tf.compat.v1.estimator.LinearClassifier's own binary head or a
    user's, trains as its base); None for the GLM heads, whose losses SDCA lacks."""
    if isinstance(head, (head_lib.PoissonRegressionHead, head_lib.LogisticRegressionHead)):
        return None
    for head_class, loss_type in _LOSSES.items():
        if isinstance(head, head_class):
            return loss_type
    return None


def _weight_key(head):
    """The feature the head's example weights come from (raw, as SDCA takes them)."""
    column = getattr(head, "_weight_column", None)
    return column if column is None or isinstance(column, str) else column.key


def _unshrunk(weights, name, slot_naming=None):
    """The SDCA slot of the linear model's `name` weights, starting at zero, named as
    tf.estimator named it (a V1 class's by `slot_naming`)."""
    slot = tf.Variable(
        # (A callable: its zeros are made outside the step's control dependencies,
        # which in a TF1 graph read the global step before its initializer ran.)
        lambda: tf.zeros(weights.shape, tf.float32),
        trainable=False,
        name=f"{_LINEAR_MODEL_SCOPE}/{name}_unshrunk",
    )
    if slot_naming is not None:
        slot_naming(slot, weights, name)
    return slot


def _unique_ids(id_weights):
    """(example indices, feature ids, values) of a sparse column, one entry per distinct
    (example, id) pair with the pair's weights summed; invalid (negative) ids dropped."""
    ids = id_weights.id_tensor
    values = (
        id_weights.weight_tensor.values
        if id_weights.weight_tensor is not None
        else tf.ones(tf.shape(ids.values), tf.float32)
    )
    examples, feature_ids = ids.indices[:, 0], tf.cast(ids.values, tf.int64)
    valid = feature_ids >= 0
    pairs = tf.stack([tf.boolean_mask(examples, valid), tf.boolean_mask(feature_ids, valid)], 1)
    unique_pairs, index = tf.raw_ops.UniqueV2(x=pairs, axis=[0])
    summed = tf.math.unsorted_segment_sum(
        tf.cast(tf.boolean_mask(values, valid), tf.float32), index, tf.shape(unique_pairs)[0]
    )
    return unique_pairs[:, 0], unique_pairs[:, 1], summed
