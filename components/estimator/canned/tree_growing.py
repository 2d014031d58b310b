"""The boosted trees' model variables and training step (see boosted_trees.py).

`Ensemble` holds the trees (under `boosted_trees/`) and predicts from them;
`Grower` builds one training step: quantiles, then bias centering, then one
layer at a time; `GrowthHook` stops training when the trees are grown.
"""

import collections

import numpy as np
import tensorflow as tf

from components.estimator import head as head_lib
from components.estimator.canned import tree_ensemble as te
from components.estimator.canned import tree_histogram, tree_layer
from components.estimator.hooks import Hook
from components.estimator.model_fn import ModeKeys

_PRUNING_MODES = ("none", "pre", "post")
SCOPE = "boosted_trees"
# Variables kept between the steps of one train() call only, as tf.estimator's local
# variables: ON_READ/SUM variables are what this kit leaves out of checkpoints.
_LOCAL = {
    "synchronization": tf.VariableSynchronization.ON_READ,
    "aggregation": tf.VariableAggregation.SUM,
}

TreeParams = collections.namedtuple(
    "TreeParams",
    [
        "n_trees",
        "max_depth",
        "learning_rate",
        "l1_regularization",
        "l2_regularization",
        "tree_complexity",
        "min_node_weight",
        "center_bias",
        "pruning_mode",
        "quantile_sketch_epsilon",
        "n_batches_per_layer",
        "train_in_memory",
        "multi_class_hessian",
        "min_samples_leaf",
        "max_leaf_nodes",
        "max_delta_step",
    ],
    # Not tf.estimator's: its behaviour by default (full Hessian, no count, no leaf cap, no
    # bound on a leaf's weight).
    defaults=("full", 0, None, 0.0),
)
_HESSIANS = ("full", "diagonal")
# The split search is compiled by XLA from this many buckets in all features (`Grower`).
XLA_FROM_BUCKETS = 20_000
# A layer grown by one op where `tree_layer.LayerStep` applies (False: by TensorFlow's ops
# around the compiled loops, the way it grows elsewhere; the trees are the same).
LAYER_IN_ONE_OP = True


def hessian_width(params, logits_dimension):
    """Hessian statistics per example: one per logit with a diagonal Hessian (or a single
    logit), else the full L*L matrix."""
    if logits_dimension == 1 or params.multi_class_hessian == "diagonal":
        return logits_dimension
    return logits_dimension * logits_dimension


def stats_width(params, logits_dimension):
    """Statistics per example in the histogram: gradients, Hessians, and an example count
    where `min_samples_leaf` needs it."""
    count = 1 if params.min_samples_leaf > 0 else 0
    return logits_dimension + hessian_width(params, logits_dimension) + count


def checked_params(params, logits_dimension, config):
    for name in ("n_trees", "max_depth", "n_batches_per_layer"):
        value = getattr(params, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"Expected {name} to be an integer >= 1, received: {value!r}")
    for name in ("learning_rate", "quantile_sketch_epsilon"):
        if not getattr(params, name) > 0:
            raise ValueError(f"Expected {name} > 0, received: {getattr(params, name)!r}")
    if params.quantile_sketch_epsilon >= 1:
        raise ValueError(
            f"Expected quantile_sketch_epsilon < 1, received: {params.quantile_sketch_epsilon}"
        )
    bounds = ("l2_regularization", "tree_complexity", "min_node_weight", "max_delta_step")
    for name in ("l1_regularization", *bounds):
        if not getattr(params, name) >= 0:
            raise ValueError(f"Expected {name} >= 0, received: {getattr(params, name)!r}")
    if params.pruning_mode not in _PRUNING_MODES:
        raise ValueError(
            f"pruning_mode must be one of {_PRUNING_MODES}, received: {params.pruning_mode!r}"
        )
    if params.pruning_mode == "none" and params.tree_complexity > 0:
        raise ValueError("Tree complexity have no effect unless pruning mode is chosen.")
    if params.pruning_mode != "none" and params.tree_complexity <= 0:
        raise ValueError("For pruning, tree_complexity must be positive.")
    _check_growth_params(params)
    full = logits_dimension > 1 and params.multi_class_hessian == "full"
    if full and params.l1_regularization > 0:
        raise ValueError(
            "l1_regularization is not supported with more than one logit and a full Hessian "
            "(multi_class_hessian='diagonal' takes it)."
        )
    if full and params.max_delta_step > 0:
        raise ValueError(
            "max_delta_step is not supported with more than one logit and a full Hessian "
            "(multi_class_hessian='diagonal' takes it)."
        )
    if full and params.center_bias:
        raise ValueError(
            "center_bias is not supported with more than one logit (n_classes > 2) and a "
            "full Hessian (multi_class_hessian='diagonal' takes it)."
        )
    nodes = params.n_trees * ((1 << (params.max_depth + 1)) - 1)
    if nodes > te.MAX_TOTAL_NODES:
        raise ValueError(
            f"n_trees={params.n_trees} trees of max_depth={params.max_depth} make {nodes} "
            f"tree nodes, more than {te.MAX_TOTAL_NODES}: lower max_depth or n_trees."
        )
    strategy = getattr(config, "train_distribute", None)
    if strategy is not None and not isinstance(strategy, tf.distribute.OneDeviceStrategy):
        # Their variables take scatter updates, which mirrored variables do not.
        raise ValueError(
            f"Boosted trees grow on one device: train_distribute={type(strategy).__name__} "
            "is not supported; train them without one (or with a OneDeviceStrategy)."
        )
    if params.train_in_memory:
        if params.n_batches_per_layer != 1:
            raise ValueError(
                "When train_in_memory is enabled, input_fn should return the entire dataset "
                "as a single batch, and n_batches_per_layer should be set as 1; got "
                f"n_batches_per_layer={params.n_batches_per_layer}."
            )
        if config is not None and (
            config.num_worker_replicas > 1 or config.num_ps_replicas > 0 or config.train_distribute
        ):
            raise ValueError("train_in_memory is supported only for non-distributed training.")
    return params


def _check_growth_params(params):
    """The arguments beyond tf.estimator's (`TreeParams`' last three)."""
    if params.multi_class_hessian not in _HESSIANS:
        raise ValueError(
            f"multi_class_hessian must be one of {_HESSIANS}, received: "
            f"{params.multi_class_hessian!r}"
        )
    count = params.min_samples_leaf
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise ValueError(f"Expected min_samples_leaf to be an integer >= 0, received: {count!r}")
    cap = params.max_leaf_nodes
    if cap is not None and (
        isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 2
    ):
        raise ValueError(
            f"Expected max_leaf_nodes to be None or an integer >= 2, received: {cap!r}"
        )


def _example_weights(features, weight_column, batch_size):
    if weight_column is None:
        return tf.ones([batch_size])
    dummy = tf.zeros([batch_size, 1])
    return tf.reshape(head_lib._weights(features, weight_column, dummy), [-1])


def _loss_scale(head, features, logits):
    """d(training loss)/d(example's unweighted loss), [batch, 1], as the head reduces."""
    weights = head_lib._weights(features, head._weight_column, logits, head._per_logit_weights)
    weights = tf.broadcast_to(weights, [tf.shape(logits)[0], head._loss_dimension()])
    if head._reduction != head_lib.SUM:
        weights = weights / tf.cast(tf.size(weights), tf.float32)
    return weights


def _class_labels(head, labels, dtype, checked):
    """A class head's labels as its loss reads them; where `checked` (the loss's own range
    check ran first in the step: a control dependency) without tracing and running that
    check again (four asserts, a seventh of the training step's trace on the taxi sample)."""
    if not checked or head._vocabulary is not None:
        return head._class_ids(labels, dtype)
    return tf.cast(head_lib._dense_labels(labels, 1), dtype)


def gradients_and_hessians(head, labels, logits, features, diagonal=False, checked=False):
    """Per-example gradients [batch, L] and Hessians of the head's training loss: [batch, L]
    for one logit or with `diagonal` (each logit's own second derivative), else [batch, L*L]
    (the full matrix); in closed form for the stock heads' own losses, else by
    differentiating the head's loss twice. `checked`: the head's loss checked the labels
    before (`_class_labels`)."""
    dimension = head.logits_dimension
    own_loss = isinstance(head, head_lib._SingleHead) and head._loss_fn is None
    if own_loss and type(head) is head_lib.BinaryClassHead:
        scale = _loss_scale(head, features, logits)
        p = tf.math.sigmoid(logits)
        y = _class_labels(head, labels, tf.float32, checked)
        return scale * (p - y), scale * p * (1.0 - p)
    if own_loss and type(head) is head_lib.RegressionHead:
        scale = _loss_scale(head, features, logits)
        residual = logits - tf.cast(head._processed_labels(labels), tf.float32)
        hess = 2.0 * scale * tf.ones_like(residual)
        if dimension > 1 and not diagonal:
            hess = tf.reshape(tf.linalg.diag(hess), [-1, dimension * dimension])
        return 2.0 * scale * residual, hess
    if own_loss and type(head) is head_lib.MultiClassHead:
        # The softmax loss's gradient has no gradient in TensorFlow: its Hessian
        # diag(p) - p p^T, scaled as the head scales the loss.
        scale = _loss_scale(head, features, logits)
        p = tf.nn.softmax(logits)
        onehot = tf.one_hot(_class_labels(head, labels, tf.int64, checked)[:, 0], dimension)
        if diagonal:
            return scale * (p - onehot), scale * p * (1.0 - p)
        hess = tf.linalg.diag(p) - p[:, :, None] * p[:, None, :]
        return scale * (p - onehot), tf.reshape(scale[:, :, None] * hess, [-1, dimension**2])
    with tf.GradientTape() as outer:
        outer.watch(logits)
        with tf.GradientTape() as inner:
            inner.watch(logits)
            loss = head.loss(labels, logits, features=features, mode=ModeKeys.TRAIN)
        grads = inner.gradient(loss, logits)
    if dimension == 1:
        return grads, outer.gradient(grads, logits)
    jacobian = outer.batch_jacobian(grads, logits)
    if diagonal:
        return grads, tf.linalg.diag_part(jacobian)
    return grads, tf.reshape(jacobian, [-1, dimension * dimension])


def _eagerly(fn, inputs, name, kinds=tf.float32):
    """`fn(*inputs)` (results of `kinds`: a dtype or a list) run by TensorFlow's own kernels
    one at a time, in one op of the training step: the same numbers as `fn` traced into the
    step, for what runs once a call (the quantile sketch, the bucket ids of the inputs'
    cache), whose ops were half of the step's trace and of its first call's graph
    optimization (and, each step, dead branches the executor walks through)."""
    return tf.py_function(fn, inputs, kinds, name=name)


def _input_keys(column):
    """The feature keys a feature column reads (its parents' that are strings), or [None]
    where a column names no parents (it then reads what it reads in the graph)."""
    parents = getattr(column, "parents", None)
    if not parents:
        return [None]
    keys = []
    for parent in parents:
        keys.extend([parent] if isinstance(parent, str) else _input_keys(parent))
    return keys


class Ensemble:
    """The model's variables (under `boosted_trees/`), and predictions from them."""

    def __init__(self, layout, params, logits_dimension, training):
        self.layout, self.params, self.logits_dimension = layout, params, logits_dimension
        depth = params.max_depth
        self.nodes = (1 << (depth + 1)) - 1
        shape = (params.n_trees, self.nodes)

        def variable(value, name, **kwargs):
            return tf.Variable(value, name=name, trainable=False, **kwargs)

        with tf.name_scope(SCOPE):
            self.bias = variable(np.zeros(logits_dimension, np.float32), "bias")
            self.boundaries = None
            if layout.num_numeric:
                self.boundaries = variable(
                    np.zeros((layout.num_numeric, layout.num_quantiles - 1), np.float32),
                    "quantile_boundaries",
                )
            self.feature = variable(np.full(shape, -1, np.int32), "node_feature")
            self.threshold = variable(np.zeros(shape, np.int32), "node_threshold")
            self.value = variable(np.zeros((*shape, logits_dimension), np.float32), "node_value")
            self.gain = variable(np.zeros(shape, np.float32), "node_gain")
            if training:
                self._training_variables(variable)
        self.is_equality = tf.constant(layout.is_equality)

    def _training_variables(self, variable):
        layout, params = self.layout, self.params
        self.tree = variable(np.int32(0), "tree")
        self.layer = variable(np.int32(0), "layer")
        self.finished = variable(False, "finished")
        self.boundaries_ready = variable(layout.num_numeric == 0, "boundaries_ready")
        self.centering = variable(bool(params.center_bias), "center_bias_needed")
        n = params.n_batches_per_layer
        if n > 1:
            self.batches = variable(np.int32(0), "batches_accumulated")
            stats = stats_width(params, self.logits_dimension)
            layer_nodes = 1 << (params.max_depth - 1)
            self.stats_sum = variable(
                np.zeros((layer_nodes * layout.total_buckets, stats), np.float32), "stats_sum"
            )
            if params.center_bias:
                hess = hessian_width(params, self.logits_dimension)
                self.bias_stats_sum = variable(
                    np.zeros(self.logits_dimension + hess, np.float32), "bias_stats_sum"
                )
            if layout.num_numeric:
                self.sketches = variable(
                    np.zeros((n, layout.num_numeric, self.sketch_size), np.float32),
                    "quantile_sketches",
                )
                self.sketch_weights = variable(np.zeros(n, np.float32), "quantile_sketch_weights")
        if params.train_in_memory:
            self.cache_ready = variable(False, "cache_ready", **_LOCAL)
            self.cached_columns = variable(
                np.zeros((layout.num_features, 0), layout.bucket_dtype.as_numpy_dtype),
                "cached_bucket_ids",
                shape=tf.TensorShape([layout.num_features, None]),
                **_LOCAL,
            )
            self.cached_base = variable(
                np.zeros((0, self.logits_dimension), np.float32),
                "cached_logits",
                shape=tf.TensorShape([None, self.logits_dimension]),
                **_LOCAL,
            )
            self.cached_nodes = variable(
                np.zeros(0, np.int32), "cached_node_ids", shape=tf.TensorShape([None]), **_LOCAL
            )

    @property
    def sketch_size(self):
        # Four points per bucket: the sketch's own rank error stays below epsilon / 8.
        return 4 * self.layout.num_quantiles

    def bucket_ids(self, features):
        return self.layout.bucket_ids(features, self.boundaries)

    def paths(self, x):
        return te.traverse_trees(
            self.feature, self.threshold, x, self.is_equality, self.params.max_depth
        )

    def _values_at(self, leaves):
        """[trees, batch, L]: each tree's node value at `leaves` [trees, batch]."""
        flat = tf.reshape(self.value, [-1, self.logits_dimension])
        base = tf.range(self.params.n_trees)[:, None] * self.nodes
        return tf.gather(flat, base + leaves)

    def logits(self, x):
        leaves, _ = self.paths(x)
        return self.bias + tf.reduce_sum(self._values_at(leaves), axis=0)

    def explanations(self, x, activation):
        """(bias, dfc [batch, features]) of one logit, as tf.estimator computed them:
        the path's cumulative logits through every tree, through `activation`, and
        each step's change credited to the feature split on.  In float64, as 2.8's
        Python floats: bias + sum(dfc) is the float32 prediction to its rounding (the
        tutorial checks 7 decimals), and the bias is the same number for every row."""
        leaves, path = self.paths(x)
        befores = [tf.squeeze(self._values_at(node), -1) for node, _, _ in path]
        afters = [*befores[1:], tf.squeeze(self._values_at(leaves), -1)]
        deltas = tf.stack(
            [
                tf.where(moved, tf.cast(a, tf.float64) - tf.cast(b, tf.float64), 0.0)
                for (_, _, moved), b, a in zip(path, befores, afters, strict=True)
            ],
            axis=1,
        )  # [trees, depth, batch]
        feature_ids = tf.stack([f for _, f, _ in path], axis=1)
        batch = tf.shape(x)[0]
        deltas = tf.reshape(tf.transpose(deltas, [2, 0, 1]), [batch, -1])
        feature_ids = tf.reshape(tf.transpose(feature_ids, [2, 0, 1]), [batch, -1])
        bias = tf.cast(self.bias[0], tf.float64)
        cumulative = bias + tf.cumsum(deltas, axis=1)
        steps = tf.concat([tf.fill([batch, 1], bias), cumulative], axis=1)
        changes = activation(steps[:, 1:]) - activation(steps[:, :-1])
        num_features = self.layout.num_features
        segments = tf.range(batch)[:, None] * num_features + feature_ids
        dfc = tf.math.unsorted_segment_sum(changes, segments, batch * num_features)
        return tf.fill([batch], activation(bias)), tf.reshape(dfc, [batch, -1])


class Grower:
    """The training step: quantiles, then bias centering, then one layer at a time."""

    def __init__(self, ensemble, head, features, labels, weight_column):
        self.e = ensemble
        self.params = params = ensemble.params
        self.layout = ensemble.layout
        self.head, self.features, self.labels = head, features, labels
        self.weight_column = weight_column
        self._histogram = tree_histogram.LayerHistogram(self.layout)
        # On CPUs the examples' nodes come from a compiled walk (one op, the same nodes).
        self._walk = None
        if self._histogram.compiled:
            self._walk = tree_histogram.TreeWalk(self.layout, self.params.max_depth)

        dim = ensemble.logits_dimension

        def best_splits(hist, nodes):
            return te.best_splits(hist, nodes, self.layout, self.params, dim)

        # On many buckets the split search compiled by XLA: its dozen passes over every
        # (node, feature, bucket) fused into a few (a third of the time on 2,000 features).
        # It compiles once per layer size, seconds each: on fewer buckets (the taxi
        # sample's 1,600) that was most of a train() call, for steps of 2 ms either way.
        self._best_splits = best_splits
        if self.layout.total_buckets >= XLA_FROM_BUCKETS:
            self._best_splits = tf.function(best_splits, jit_compile=True, autograph=False)
        elif self._histogram.compiled and hessian_width(params, dim) == dim:
            # One logit, or a Hessian per logit, on CPUs, fewer buckets: a compiled loop (the
            # same splits, one op where TensorFlow's search is some sixty; its scalar loop
            # would not keep up with XLA's fused passes on many buckets).
            self._best_splits = tree_histogram.DiagonalSplitSearch(self.layout, params, dim)
        self._layer_step = None
        if LAYER_IN_ONE_OP and tree_layer.LayerStep.applies(self.layout, params, self._best_splits):
            self._layer_step = tree_layer.LayerStep(
                self.layout, params, self._histogram, self._best_splits
            )

    # -------------------------------------------------------------- inputs
    def inputs(self):
        """(bucket ids as `te.Columns`, logits, node of each example in the current
        tree, logits of the finished trees or None)."""
        e = self.e
        # The tree growing; the last one once all are grown (a call's last steps may idle
        # then, when trees end before max_depth).
        tree = tf.minimum(e.tree, self.params.n_trees - 1)
        if not self.params.train_in_memory:
            x = e.bucket_ids(self.features)
            ids = te.Columns.of(x, self.layout)
            return ids, e.logits(x), self._leaves(tree, ids), None

        def cached():
            return (
                e.cached_columns.read_value(),
                e.cached_base.read_value(),
                e.cached_nodes.read_value(),
            )

        def fresh():
            # Before the quantile boundaries exist the trees are empty, and the bucket
            # ids meaningless: nothing is kept then.
            ids = self._bucket_columns()
            base = self._finished_trees_logits(ids)
            nodes = self._leaves(tree, ids)
            with tf.control_dependencies(
                [
                    e.cached_columns.assign(ids.values),
                    e.cached_base.assign(base),
                    e.cached_nodes.assign(nodes),
                    e.cache_ready.assign(e.boundaries_ready),
                ]
            ):
                return tf.identity(ids.values), tf.identity(base), tf.identity(nodes)

        columns, base, nodes = tf.cond(e.cache_ready, cached, fresh)
        ids = te.Columns(tf.ensure_shape(columns, [self.layout.num_features, None]))
        logits = base + tf.gather(e.value[tree], nodes)
        return ids, logits, nodes, base

    def _bucket_columns(self):
        """The bucket ids (`te.Columns`) of a call's first step in memory: `_eagerly` where
        every column reads dense tensors (a sixth of the step's graph), else traced."""
        e, layout = self.e, self.layout
        keys = {key for column in layout.columns for key in _input_keys(column)}
        tensors = [self.features.get(key) for key in sorted(keys - {None})]
        if None in keys or not all(isinstance(tensor, tf.Tensor) for tensor in tensors):
            return te.Columns.of(e.bucket_ids(self.features), layout)
        boundaries = [] if e.boundaries is None else [e.boundaries]

        def compute(*args):
            features = dict(zip(sorted(keys), args[: len(keys)], strict=True))
            x = layout.bucket_ids(features, args[len(keys)] if boundaries else None)
            return te.Columns.of(x, layout).values

        values = _eagerly(compute, tensors + boundaries, "bucket_ids", layout.bucket_dtype)
        return te.Columns(tf.ensure_shape(values, [layout.num_features, None]))

    def _leaves(self, tree, ids):
        """The node each example of `ids` (`te.Columns`) reaches in tree `tree`."""
        e = self.e
        if self._walk is not None:
            return self._walk.leaves(e.feature[tree], e.threshold[tree], ids.values)
        return te.traverse_tree(
            e.feature[tree], e.threshold[tree], ids, e.is_equality, self.params.max_depth
        )

    def _finished_trees_logits(self, ids):
        """The bias plus the finished trees, added one tree at a time as training adds
        them, so that a resumed run's logits are those of an uninterrupted one."""
        e = self.e
        if self._walk is not None:
            return self._walk.logits(e.feature, e.threshold, e.value, e.tree, e.bias, ids.values)

        def body(t, total):
            leaves = te.traverse_tree(
                e.feature[t], e.threshold[t], ids, e.is_equality, self.params.max_depth
            )
            return t + 1, total + tf.gather(e.value[t], leaves)

        start = tf.zeros([tf.size(ids.examples), e.logits_dimension]) + e.bias
        _, total = tf.while_loop(lambda t, _: t < e.tree, body, (tf.constant(0), start))
        return total

    # ---------------------------------------------------------------- step
    def train_op(self, ids, logits, nodes, base, loss):
        e = self.e
        # Built once, outside the branches that read them (bias centering, a layer): half
        # the gradients' graph to trace, the same values. After the head's `loss`, which
        # checked the labels.
        diagonal = self.params.multi_class_hessian == "diagonal"
        with tf.control_dependencies([loss]):
            gradients = gradients_and_hessians(
                self.head, self.labels, logits, self.features, diagonal, checked=True
            )

        # The step's stage, the first that applies: finished (idle), the quantiles, bias
        # centering, a layer; one branch each in one switch, where conditions nested three
        # deep threaded every branch's inputs through each level (a fifth of the trace).
        branches = [lambda: self._grow(ids, gradients, nodes, base)]
        stage = tf.constant(0)
        if self.params.center_bias:
            branches.append(lambda: self._center(gradients, base))
            stage = tf.where(e.centering, len(branches) - 1, stage)
        if self.layout.num_numeric:
            branches.append(self._quantiles)
            stage = tf.where(e.boundaries_ready, stage, len(branches) - 1)
        branches.append(lambda: tf.constant(0))
        stage = tf.where(e.finished, len(branches) - 1, stage)
        return tf.switch_case(stage, branches)

    def _accumulated(self, value, accumulator, done_fn):
        """`done_fn(mean of value over n_batches_per_layer batches)` once the n-th batch
        is in; before that, only the accumulation."""
        n = self.params.n_batches_per_layer
        if n == 1:
            return done_fn(value)
        e = self.e
        accumulator.assign_add(value)
        count = e.batches.assign_add(1)

        def done():
            mean = accumulator.read_value() / n
            with tf.control_dependencies([mean]):
                resets = [accumulator.assign(tf.zeros_like(accumulator)), e.batches.assign(0)]
            with tf.control_dependencies(resets):
                return done_fn(mean)

        return tf.cond(count >= n, done, lambda: tf.constant(0))

    def _quantiles(self):
        e, layout = self.e, self.layout
        cache = te.fc_lib.FeatureTransformationCache(self.features)
        values = layout.numeric_values(self.features, cache)
        weights = _example_weights(self.features, self.weight_column, tf.shape(values)[0])
        n = self.params.n_batches_per_layer
        sketch, total = _eagerly(
            lambda v, w: (te.batch_quantile_sketch(v, w, e.sketch_size), tf.reduce_sum(w)),
            [values, weights],
            "quantile_sketch",
            [tf.float32, tf.float32],
        )

        def finish(sketches, batch_weights):
            merged = _eagerly(
                lambda s, w: te.merged_boundaries(s, w, layout.num_quantiles),
                [sketches, batch_weights],
                "quantile_boundaries",
            )
            merged.set_shape(e.boundaries.shape)
            e.boundaries.assign(merged)
            e.boundaries_ready.assign(True)
            return tf.constant(0)

        if n == 1:
            return finish(sketch[None], total[None])
        sketch.set_shape(e.sketches.shape[1:])
        total.set_shape([])
        index = e.batches.read_value()
        e.sketches.scatter_nd_update([[index]], sketch[None])
        e.sketch_weights.scatter_nd_update([[index]], total[None])
        count = e.batches.assign_add(1)

        def done():
            with tf.control_dependencies([e.batches.assign(0)]):
                return finish(e.sketches.read_value(), e.sketch_weights.read_value())

        return tf.cond(count >= n, done, lambda: tf.constant(0))

    def _stats(self, gradients, counted=False, as_parts=False):
        """[batch, k]: `gradients` (the gradients and Hessians) and (`counted`, with
        `min_samples_leaf`) a 1 per example, the count a leaf's minimum reads; `as_parts`:
        the list of them, unjoined (the histogram takes them so)."""
        grads, hess = gradients
        parts = [grads, hess]
        if counted and self.params.min_samples_leaf > 0:
            parts.append(tf.ones_like(grads[:, :1]))
        return parts if as_parts else tf.concat(parts, axis=1)

    def _center(self, gradients, base):
        e, dim = self.e, self.e.logits_dimension
        mean = tf.reduce_mean(self._stats(gradients), axis=0)

        def center(stats):
            delta = te.center_bias_step(stats[:dim], stats[dim:], self.params)
            bias = e.bias.assign_add(delta)
            e.centering.assign(
                tf.reduce_any(tf.abs(delta) > te.MIN_CENTER_BIAS_DELTA * tf.abs(bias))
            )
            if base is not None:
                e.cached_base.assign_add(tf.zeros_like(base) + delta)
            return tf.constant(0)

        return self._accumulated(mean, getattr(e, "bias_stats_sum", None), center)

    def _grow(self, ids, gradients, nodes, base):
        e, params = self.e, self.params
        stats = self._stats(gradients, counted=True, as_parts=True)
        if self._layer_step is not None:
            return self._layer_step(e, ids, stats, nodes, base)
        first = tf.bitwise.left_shift(1, e.layer) - 1
        count = first + 1
        relative = nodes - first
        relative = tf.where((relative >= 0) & (relative < count), relative, -1)
        # One batch per layer: only this layer's nodes (1, 2, 4, ...); accumulated
        # over batches: the deepest layer's size, the accumulator's.
        layer_nodes = count if params.n_batches_per_layer == 1 else 1 << (params.max_depth - 1)
        hist = self._histogram(ids, relative, stats, layer_nodes)
        if params.n_batches_per_layer == 1:
            return self._split(hist, layer_nodes, ids, nodes, relative, base)
        return self._accumulated(
            hist,
            e.stats_sum,
            lambda mean: self._split(mean, layer_nodes, ids, nodes, relative, base),
        )

    def _split(self, hist, layer_nodes, ids, nodes, relative, base):
        e, params = self.e, self.params
        first = tf.bitwise.left_shift(1, e.layer) - 1
        count = first + 1
        gain, feature, threshold, left, right, ok = self._best_splits(
            hist, tf.convert_to_tensor(layer_nodes, tf.int32)
        )
        in_layer = tf.range(layer_nodes)
        absolute = first + in_layer
        tree_features = e.feature[e.tree]
        parent_split = tf.gather(tree_features, tf.maximum(absolute - 1, 0) // 2) >= 0
        exists = (in_layer < count) & ((e.layer == 0) | parent_split)
        split = ok & exists
        if params.pruning_mode == "pre":
            split &= gain >= 0  # zero-gain splits are kept, as tf.estimator kept them
        leaves = 1 + tf.reduce_sum(tf.cast(tree_features >= 0, tf.int32))
        split = self._within_leaf_cap(split, gain, leaves)
        chosen = tf.cast(tf.where(split)[:, 0], tf.int32)
        at = tf.gather(absolute, chosen)
        trees = tf.fill(tf.shape(at), e.tree)
        e.feature.scatter_nd_update(tf.stack([trees, at], 1), tf.gather(feature, chosen))
        e.threshold.scatter_nd_update(tf.stack([trees, at], 1), tf.gather(threshold, chosen))
        e.gain.scatter_nd_update(tf.stack([trees, at], 1), tf.gather(gain, chosen))
        parent_value = tf.gather_nd(e.value, tf.stack([trees, at], 1))
        rate = params.learning_rate
        e.value.scatter_nd_update(
            tf.stack([trees, 2 * at + 1], 1), parent_value + rate * tf.gather(left, chosen)
        )
        e.value.scatter_nd_update(
            tf.stack([trees, 2 * at + 2], 1), parent_value + rate * tf.gather(right, chosen)
        )
        next_layer = e.layer + 1

        def advance():
            e.layer.assign(next_layer)
            if base is not None:
                e.cached_nodes.assign(
                    self._nodes_below(ids, nodes, relative, split, feature, threshold)
                )
            return tf.constant(0)

        def finalize():
            return self._finalize(ids, nodes, base)

        def grown():
            complete = next_layer >= params.max_depth
            if params.max_leaf_nodes is not None:
                complete |= leaves + tf.size(chosen) >= params.max_leaf_nodes
            return tf.cond(complete, finalize, advance)

        def none_split():
            if params.max_leaf_nodes is None and params.min_samples_leaf == 0:
                return self._stop()
            # Grown leaf-capped or with a minimum per leaf, a tree ends where its leaves
            # cannot split (as HistGradientBoosting's); training, where its root cannot.
            return tf.cond(e.layer > 0, finalize, self._stop)

        return tf.cond(tf.size(chosen) > 0, grown, none_split)

    def _nodes_below(self, ids, nodes, relative, split, feature, threshold):
        """Each example's node once this layer's splits (`split`, `feature`, `threshold` by
        node in the layer; `relative`: each example's node in it, or -1) are in the tree."""
        e = self.e
        if self._walk is not None:
            # The splits just written: one level down from each example's node.
            return self._walk.descend(e.feature[e.tree], e.threshold[e.tree], ids.values, nodes, 1)
        safe = tf.maximum(relative, 0)
        moves = (relative >= 0) & tf.gather(split, safe)
        f = tf.gather(feature, safe)
        xv = ids.at(f)
        t = tf.gather(threshold, safe)
        go_left = tf.where(tf.gather(e.is_equality, f), tf.equal(xv, t), xv <= t)
        return tf.where(moves, 2 * nodes + tf.where(go_left, 1, 2), nodes)

    def _within_leaf_cap(self, split, gain, leaves):
        """`split` cut to the splits of most gain that keep the tree within `max_leaf_nodes`
        leaves (`leaves` now; a split adds one)."""
        cap = self.params.max_leaf_nodes
        if cap is None:
            return split
        order = tf.argsort(tf.where(split, gain, -np.inf), direction="DESCENDING", stable=True)
        rank = tf.math.invert_permutation(order)
        return split & (rank < cap - leaves)

    def _finalize(self, ids, nodes, base):
        """The current tree complete: post-pruned, added to the cached logits, the next one
        begun (or training finished)."""
        e, params = self.e, self.params
        tree = e.tree.read_value()
        if params.pruning_mode == "post":
            pruned, gains = te.post_prune(e.feature[tree], e.gain[tree], params.max_depth)
            e.feature[tree].assign(pruned)
            e.gain[tree].assign(gains)
        if base is not None:
            e.cached_base.assign_add(tf.gather(e.value[tree], self._leaves(tree, ids)))
            e.cached_nodes.assign(tf.zeros_like(nodes))
        e.tree.assign(tree + 1)
        e.finished.assign(tree + 1 >= params.n_trees)
        e.layer.assign(0)
        return tf.constant(0)

    def _stop(self):
        # No node of the layer split (pruned, or too light): every later attempt would see
        # the same trees and statistics, so training ends with this tree as grown so far,
        # as tf.estimator's did (it spent its remaining layer attempts finding nothing, the
        # tree left as it was).
        self.e.finished.assign(True)
        return tf.constant(0)


class GrowthHook(Hook):
    """Stops training once the ensemble is complete; each call runs no further than
    that (when every remaining tree grows to max_depth).  In memory, it makes each
    train() call rebuild the cached state from the restored ensemble."""

    def __init__(self, ensemble):
        self._e = ensemble
        self._p = ensemble.params

    def begin(self):
        if self._p.train_in_memory:
            self._e.cache_ready.assign(False)

    @property
    def max_steps_per_call(self):
        e, p = self._e, self._p
        n = p.n_batches_per_layer
        done = int(e.batches.numpy()) if n > 1 else 0
        if not bool(e.boundaries_ready.numpy()) or bool(e.centering.numpy()):
            return max(1, n - done)
        layers = (p.n_trees - int(e.tree.numpy())) * p.max_depth - int(e.layer.numpy())
        if p.max_leaf_nodes is not None or p.min_samples_leaf > 0:
            # A tree may end before max_depth: no further than the current tree's end,
            # so that steps past the last tree idle no more than a tree's layers.
            layers = min(layers, p.max_depth - int(e.layer.numpy()))
        return max(1, layers * n - done)

    def _check(self, context):
        if bool(self._e.finished.numpy()):
            context.request_stop()

    def before_step(self, context):
        self._check(context)

    def after_step(self, context, logs):
        self._check(context)
