"""tf.compat.v1.estimator's canned estimators: 2.15's V1 classes on the kit's canned core.

In 2.15 `tf.compat.v1.estimator.DNNClassifier` is not `tf.estimator.DNNClassifier`:
the V1 classes sum the loss over the batch (`loss_reduction='weighted_sum'`),
take TF1 optimizers (`tf.compat.v1.train.*`; a name gets the V1 learning rate,
e.g. Adagrad at 0.05 for the DNN) and ran in a graph with a session.  These
subclasses keep exactly that: their own signatures and defaults, the shared
model code, a graph (`_runs_in_a_graph`), and TF1 optimizers built in it.
"""

import logging

import tensorflow as tf
import tf_keras

from components.estimator import graph_mode, graph_strategy
from components.estimator import head as head_lib
from components.estimator.canned import baseline, dnn, dnn_linear_combined, linear
from components.estimator.estimator_v1 import Estimator
from components.estimator.model_fn import ModeKeys
from components.estimator.sdca import LinearSDCA

log = logging.getLogger(__name__)

# 2.15's learning rates for an optimizer given by name, per V1 class.
DNN_LEARNING_RATE = 0.05
LINEAR_LEARNING_RATE = 0.2
BASELINE_LEARNING_RATE = 0.3
COMBINED_DNN_LEARNING_RATE = 0.001
COMBINED_LINEAR_LEARNING_RATE = 0.005

_V1_TRAIN = tf.compat.v1.train
# 2.15's `optimizers.get_optimizer_instance`: these names, exactly (case matters).
TF1_OPTIMIZERS = {
    "Adagrad": _V1_TRAIN.AdagradOptimizer,
    "Adam": _V1_TRAIN.AdamOptimizer,
    "Ftrl": _V1_TRAIN.FtrlOptimizer,
    "RMSProp": _V1_TRAIN.RMSPropOptimizer,
    "SGD": _V1_TRAIN.GradientDescentOptimizer,
}

_REDUCTION = tf.compat.v1.losses.Reduction
# The V1 reductions, as the kit's heads compute them (as 2.15's V1 heads did).
_SAME_REDUCTION = {
    _REDUCTION.SUM: head_lib.SUM,
    _REDUCTION.SUM_OVER_BATCH_SIZE: head_lib.SUM_OVER_BATCH_SIZE,
    _REDUCTION.MEAN: head_lib.V1_MEAN,
    _REDUCTION.SUM_BY_NONZERO_WEIGHTS: head_lib.V1_SUM_BY_NONZERO_WEIGHTS,
}


def get_optimizer_instance(optimizer, learning_rate):
    """2.15's V1 resolution as a factory the shared core calls in each graph: a name
    makes that TF1 optimizer at `learning_rate`; an instance (or a callable returning
    one) must be a `tf.compat.v1.train.Optimizer`.  `LinearSDCA` passes through."""
    if isinstance(optimizer, LinearSDCA):
        return optimizer
    if isinstance(optimizer, str):
        name = optimizer

        def named():  # (an unknown name is refused when the model trains, as in 2.15)
            if name not in TF1_OPTIMIZERS:
                raise ValueError(
                    f"Unsupported optimizer name: {name}. Supported names are: "
                    f"{tuple(sorted(TF1_OPTIMIZERS))}"
                )
            return TF1_OPTIMIZERS[name](learning_rate=learning_rate)

        return _tf1_factory(named)

    def instance():
        made = optimizer
        if callable(made) and not isinstance(made, _V1_TRAIN.Optimizer):
            made = made()
        if not isinstance(made, _V1_TRAIN.Optimizer):
            raise ValueError(  # (2.15's first line; then where a Keras one goes)
                f"The given object is not an Optimizer instance. Given: {made}\n"
                "tf.compat.v1.estimator's canned estimators take a tf.compat.v1.train "
                "optimizer (or its name); a Keras optimizer goes to the tf.estimator (V2) "
                "class of the same name."
            )
        return made

    return _tf1_factory(instance)


def _tf1_factory(factory):
    """Marks `factory` as a V1 class's: the canned core takes the TF1 optimizer it makes
    (given to a V2 class, one is refused, as 2.15 refused it)."""
    factory.takes_tf1_optimizer = True
    return factory


def slots_saved_as_2_15(optimizer, scope, partitioner=None, partitioned=""):
    """`optimizer` (a factory from `get_optimizer_instance`) whose TF1 slots are saved
    under 2.15's checkpoint keys, so model_dirs resume both ways.

    2.15's V1 DNN and linear models split each variable with a partitioner (one part
    by default), and TF1 named a partitioned variable's slot by cutting the primary's
    name off the slot's, which the model's scope (`scope`) had lengthened:
    `dnn/hiddenlayer_0/kernel/t_0/Adagrad`, `linear/linear_model/a/weights/part_0/Ftrl`.
    The kit's variables stay whole; a slot's save-slice info gives it that key. The
    variables named `partitioned...` that the `partitioner` given split in parts (the
    linear model's, the DNN's input layer's) have their slots saved in those parts, each
    a slice under its part's key (`.../part_1/Ftrl`, `.../t_1/Adagrad`), as 2.15 saved
    them."""
    if not callable(optimizer) or isinstance(optimizer, LinearSDCA):
        return optimizer

    def parts_of(primary):
        if partitioner is None or not primary.op.name.startswith(partitioned):
            return 0, 1
        return _partitions(partitioner, primary)

    def instance():
        made = optimizer()
        if not getattr(made, "_kit_slots_saved_as_2_15", False):
            _name_slots_after_applying(made, scope, parts_of)
        return made

    return _tf1_factory(instance)


def state_under_head_scope(optimizer, scope):
    """`optimizer` (a factory from `get_optimizer_instance`) that makes its non-slot
    state (Adam's `beta1_power`, ...) under `scope`, as 2.15's V1 heads made it when
    they applied the gradients (`dnn/head/beta1_power`, `linear/head/...`, `head/...`
    for wide & deep and the baseline), so such model_dirs resume both ways."""
    if not callable(optimizer) or isinstance(optimizer, LinearSDCA):
        return optimizer

    def instance():
        made = optimizer()
        if not getattr(made, "_kit_state_under_head_scope", False):
            apply_gradients = made.apply_gradients

            def apply_in_scope(*args, **kwargs):
                with tf.compat.v1.name_scope(scope):
                    return apply_gradients(*args, **kwargs)

            made.apply_gradients = apply_in_scope
            made._kit_state_under_head_scope = True
        return made

    return _tf1_factory(instance)


def _slot_key(primary_name, slot_name, scope, part=0):
    suffix = slot_name[len(primary_name) + 1 :]
    cut = f"{primary_name}/part_{part}/{suffix}"
    return f"{primary_name}/{cut[-(len(scope) + len(suffix)) :]}"


def _partitions(partitioner, variable):
    """(axis, parts): how 2.15 split `variable` under `partitioner` ((0, 1): whole)."""
    shape = variable.shape.as_list()
    counts = partitioner(shape=tf.TensorShape(shape), dtype=variable.dtype.base_dtype)
    for axis, count in enumerate(counts):
        count = min(int(count), shape[axis])
        if count > 1:
            return axis, count
    return 0, 1


def _save_under_2_15_keys(slot, primary, scope, parts_of):
    """Gives `slot` 2.15's checkpoint key, or, for a primary 2.15 split (`parts_of`), its
    parts' keys, each holding its slice (TF1's sizes: the first ones one longer)."""
    shape = slot.shape.as_list()
    axis, count = parts_of(primary)
    if count == 1:
        key = _slot_key(primary.op.name, slot.op.name, scope)
        if getattr(primary, "_kit_never_partitioned", False):
            # TF1 named an unsplit variable's slot under the scope it was applied in:
            # a TF1 Hub module's, `dnn/dnn/input_from_feature_columns/.../Adagrad`.
            key = scope + slot.op.name
        slot._set_save_slice_info(tf.Variable.SaveSliceInfo(key, shape, [0] * len(shape), shape))
        return
    _save_in_parts(
        slot, axis, count, lambda part: _slot_key(primary.op.name, slot.op.name, scope, part)
    )


def _save_in_parts(variable, axis, count, key_of_part, as_variables=False):
    """Saves `variable` in `count` slices along `axis`, each under `key_of_part(i)`
    (TF1's sizes: the first ones one longer; `as_variables`: see graph_mode)."""
    shape = variable.shape.as_list()
    size, longer = divmod(shape[axis], count)
    parts, offset = [], 0
    for part in range(count):
        start, part_shape = [0] * len(shape), list(shape)
        start[axis], part_shape[axis] = offset, size + (part < longer)
        parts.append((key_of_part(part), start, part_shape))
        offset += part_shape[axis]
    graph_mode.save_in_parts(variable, parts, as_variables)


def sdca_slots_saved_as_2_15(partitioner):
    """How a V1 linear class's `LinearSDCA` names its unshrunk weights in checkpoints, as
    2.15's did: one variable per part of each weight (whole without a `partitioner`),
    `linear/linear/linear_model/<column>/weights/part_<i>_unshrunk` and
    `.../bias_weights/part_0_unshrunk`, so those model_dirs resume both ways."""

    def name_slot(slot, weights, name):
        axis, count = (0, 1) if partitioner is None else _partitions(partitioner, weights)
        base = f"linear/linear/linear_model/{name}"
        if count == 1:
            shape = slot.shape.as_list()
            key = f"{base}/part_0_unshrunk"
            slot._set_save_slice_info(
                tf.Variable.SaveSliceInfo(key, shape, [0] * len(shape), shape)
            )
            return
        _save_in_parts(slot, axis, count, lambda part: f"{base}/part_{part}_unshrunk", True)

    return name_slot


def _name_slots_after_applying(optimizer, scope, parts_of):
    apply_gradients = optimizer.apply_gradients

    def apply_and_name_slots(grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        before = {id(v) for v in tf.compat.v1.global_variables()}
        train_op = apply_gradients(grads_and_vars, global_step=global_step, name=name)
        made = [v for v in tf.compat.v1.global_variables() if id(v) not in before]
        for _, primary in grads_and_vars:
            # A TF1 slot is named under its primary; found by its name, it is found
            # for an optimizer wrapping another too (whose own get_slot sees none).
            for slot in _slots_of(primary, made):
                if slot._save_slice_info or not slot.shape.rank:
                    continue
                _save_under_2_15_keys(slot, primary, scope, parts_of)
        return train_op

    optimizer.apply_gradients = apply_and_name_slots
    optimizer._kit_slots_saved_as_2_15 = True


def _slots_of(primary, made):
    prefix = primary.op.name + "/"
    return [v for v in made if v.op.name.startswith(prefix)]


def loss_reduction_for_head(loss_reduction, weight_column=None):
    """The kit head's reduction for a `tf.compat.v1.losses.Reduction` value."""
    del weight_column  # (every V1 reduction takes weights)
    if loss_reduction in _SAME_REDUCTION:
        return _SAME_REDUCTION[loss_reduction]
    raise ValueError(
        f"Invalid loss_reduction: {loss_reduction}. tf.compat.v1.estimator's classes take "
        f"tf.compat.v1.losses.Reduction values, e.g. {_REDUCTION.SUM!r} (the default); "
        "tf.keras.losses.Reduction values go to the tf.estimator (V2) classes."
    )


class _TrapezoidalPRAUC(tf_keras.metrics.AUC):
    """2.15's V1 `auc_precision_recall`: `tf.compat.v1.metrics.auc(curve='PR')`, the
    trapezoidal rule over precision and recall (each smoothed by 1e-6) at the same
    200 thresholds Keras's AUC counts at; Keras's PR curve interpolates instead."""

    def __init__(self, name):
        super().__init__(curve="PR", name=name)

    def update_state(self, y_true, y_pred, sample_weight=None):
        # Keras runs a subclass's update in a tf.function in a graph, which must not
        # return AUC's update op.
        super().update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        epsilon = 1.0e-6
        true_positives = self.true_positives + epsilon
        recall = true_positives / (self.true_positives + self.false_negatives + epsilon)
        precision = true_positives / (self.true_positives + self.false_positives + epsilon)
        return tf.reduce_sum((recall[:-1] - recall[1:]) * (precision[:-1] + precision[1:]) / 2.0)


class _V1BinaryClassHead(head_lib.BinaryClassHead):
    """The V1 classifiers' two-class head: 2.15's V1 head's PR-AUC."""

    def _metric_objects(self):
        metrics = super()._metric_objects()
        metrics["auc_precision_recall"] = _TrapezoidalPRAUC("auc_precision_recall")
        return metrics


def _classification_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    """The V1 classifiers' head for `n_classes`, with a V1 `loss_reduction`."""
    reduction = loss_reduction_for_head(loss_reduction, weight_column)
    if n_classes == 2:
        return _v1_worded(
            _V1BinaryClassHead(
                weight_column=weight_column,
                label_vocabulary=label_vocabulary,
                loss_reduction=reduction,
            )
        )
    head = head_lib.binary_or_multi_class_head(
        n_classes, weight_column, label_vocabulary, reduction
    )
    head._every_class_first = True  # (2.15's V1 multi-class head's order of ops)
    return _v1_worded(head)


def _v1_regression_head(label_dimension, weight_column, reduction):
    return _v1_worded(head_lib.RegressionHead(label_dimension, weight_column, reduction))


def _v1_worded(head):
    """`head`, refusing labels it cannot take in 2.15's V1 heads' words."""
    head._v1_words = True
    return head


def _note_partitioner(name, partitioner):
    if partitioner is not None:
        log.debug(
            "%s=%r: the kit keeps each variable whole, its checkpoint keys those of the "
            "parts 2.15 made (the optimizer's slots saved in parts).",
            name,
            partitioner,
        )


class _V1Canned(Estimator):
    """A V1 canned estimator: trains in a graph with a session, as 2.15's did."""

    _runs_in_a_graph = True
    # 2.15's V1 classes read tf.compat.v1.feature_column's columns (shared_embedding_columns).
    _takes_v1_feature_columns = True
    _v1_summaries = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # (A strategy of one replica on one machine drives the graph, as 2.15's did.)
        config = self._user_config
        if config.train_distribute is not None and not graph_strategy.of_mode(
            config, ModeKeys.TRAIN, exporting=False
        ):
            name = type(self).__name__
            raise ValueError(
                f"tf.compat.v1.estimator.{name} trains as 2.15's V1 class did, in a graph "
                "with a session, which a tf.distribute strategy drives only with one replica "
                f"on one machine: use tf.estimator.{name} (the V2 class) with "
                "RunConfig(train_distribute=...), or leave the strategy out."
            )


class _HeadGivenCannotTrain(_V1Canned):
    """2.15's V1 `DNNEstimator` and `LinearEstimator` hand their TF1 optimizer to the head
    they are given, and a head (`tf.estimator.*Head`, the only public ones) trains with Keras
    optimizers alone: those two classes could not train under 2.15 (ValueError), only the
    Classifier/Regressor built on them, whose own heads took TF1 optimizers.  Refused here
    too, before anything is written, saying what trains.  `LinearSDCA` trained (it builds
    its own train op), and still does."""

    # The V1 Classifier/Regressor subclasses build a head that takes TF1 optimizers.
    _head_takes_tf1_optimizers = False
    # A LinearSDCA optimizer builds its own train op, which any head takes.
    _builds_own_train_op = False

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        if not (self._head_takes_tf1_optimizers or self._builds_own_train_op):
            name = type(self).__name__
            raise ValueError(
                f"tf.compat.v1.estimator.{name} cannot train (nor could it under tf.estimator "
                "2.15): it gives its TF1 optimizer to the head, which takes a tf.keras "
                f"optimizer only. Use tf.estimator.{name} with the same head."
            )
        return super().train(input_fn, hooks, steps, max_steps, saving_listeners)


class BaselineEstimator(_V1Canned, baseline.BaselineEstimator):
    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        optimizer = get_optimizer_instance(optimizer, BASELINE_LEARNING_RATE)
        super().__init__(head, model_dir, state_under_head_scope(optimizer, "head/"), config)


class BaselineClassifier(BaselineEstimator):
    def __init__(
        self,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Ftrl",
        config=None,
        loss_reduction=_REDUCTION.SUM,
    ):
        head = _classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, optimizer, config)


class BaselineRegressor(BaselineEstimator):
    def __init__(
        self,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Ftrl",
        config=None,
        loss_reduction=_REDUCTION.SUM,
    ):
        reduction = loss_reduction_for_head(loss_reduction, weight_column)
        head = _v1_regression_head(label_dimension, weight_column, reduction)
        super().__init__(head, model_dir, optimizer, config)


class DNNEstimator(_HeadGivenCannotTrain, dnn.DNNEstimator):
    def __init__(
        self,
        head,
        hidden_units,
        feature_columns,
        model_dir=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        batch_norm=False,
    ):
        _note_partitioner("input_layer_partitioner", input_layer_partitioner)
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir=model_dir,
            optimizer=state_under_head_scope(
                slots_saved_as_2_15(
                    get_optimizer_instance(optimizer, DNN_LEARNING_RATE),
                    "dnn/",
                    input_layer_partitioner,
                    "dnn/input_from_feature_columns/",
                ),
                "dnn/head/",
            ),
            activation_fn=activation_fn,
            dropout=dropout,
            config=config,
            warm_start_from=warm_start_from,
            batch_norm=batch_norm,
        )


class DNNClassifier(DNNEstimator):
    _head_takes_tf1_optimizers = True

    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        batch_norm=False,
    ):
        head = _classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        head._scope = "dnn/head/"  # 2.15's V1 head's ops, under the model's scope
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir,
            optimizer,
            activation_fn,
            dropout,
            input_layer_partitioner,
            config,
            warm_start_from,
            batch_norm,
        )


class DNNRegressor(DNNEstimator):
    _head_takes_tf1_optimizers = True

    def __init__(
        self,
        hidden_units,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Adagrad",
        activation_fn=tf.nn.relu,
        dropout=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        batch_norm=False,
    ):
        head = _v1_regression_head(
            label_dimension, weight_column, loss_reduction_for_head(loss_reduction, weight_column)
        )
        head._scope = "dnn/head/"  # 2.15's V1 head's ops, under the model's scope
        super().__init__(
            head,
            hidden_units,
            feature_columns,
            model_dir,
            optimizer,
            activation_fn,
            dropout,
            input_layer_partitioner,
            config,
            warm_start_from,
            batch_norm,
        )


class LinearEstimator(_HeadGivenCannotTrain, linear.LinearEstimator):
    def __init__(
        self,
        head,
        feature_columns,
        model_dir=None,
        optimizer="Ftrl",
        config=None,
        partitioner=None,
        sparse_combiner="sum",
        warm_start_from=None,
    ):
        _note_partitioner("partitioner", partitioner)
        self._builds_own_train_op = isinstance(optimizer, LinearSDCA)
        self._sdca_slot_naming = sdca_slots_saved_as_2_15(partitioner)
        feature_columns = list(feature_columns)
        learning_rate = LINEAR_LEARNING_RATE
        if optimizer is None:
            # 2.15's V1 default when none is given: Ftrl at min(0.2, 1/sqrt(n columns)).
            optimizer = "Ftrl"
            learning_rate = min(learning_rate, 1.0 / max(len(feature_columns), 1) ** 0.5)
        super().__init__(
            head,
            feature_columns,
            model_dir=model_dir,
            optimizer=state_under_head_scope(
                slots_saved_as_2_15(
                    get_optimizer_instance(optimizer, learning_rate), "linear/", partitioner
                ),
                "linear/head/",
            ),
            config=config,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )


class LinearClassifier(LinearEstimator):
    _head_takes_tf1_optimizers = True

    def __init__(
        self,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Ftrl",
        config=None,
        partitioner=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        sparse_combiner="sum",
    ):
        head = _classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        head._scope = "linear/head/"  # 2.15's V1 head's ops, under the model's scope
        super().__init__(
            head,
            feature_columns,
            model_dir,
            optimizer,
            config,
            partitioner,
            sparse_combiner,
            warm_start_from,
        )


class LinearRegressor(LinearEstimator):
    _head_takes_tf1_optimizers = True

    def __init__(
        self,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Ftrl",
        config=None,
        partitioner=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        sparse_combiner="sum",
    ):
        head = _v1_regression_head(
            label_dimension, weight_column, loss_reduction_for_head(loss_reduction, weight_column)
        )
        head._scope = "linear/head/"  # 2.15's V1 head's ops, under the model's scope
        super().__init__(
            head,
            feature_columns,
            model_dir,
            optimizer,
            config,
            partitioner,
            sparse_combiner,
            warm_start_from,
        )


def _combined_optimizers(linear_feature_columns, linear_optimizer, dnn_optimizer):
    """2.15's V1 wide & deep rates: the DNN's 0.001, the linear part's
    min(0.005, 1/sqrt(number of linear columns))."""
    linear_columns = list(linear_feature_columns or [])
    linear_rate = min(COMBINED_LINEAR_LEARNING_RATE, 1.0 / max(len(linear_columns), 1) ** 0.5)
    return (
        linear_columns,
        state_under_head_scope(get_optimizer_instance(linear_optimizer, linear_rate), "head/"),
        state_under_head_scope(
            get_optimizer_instance(dnn_optimizer, COMBINED_DNN_LEARNING_RATE), "head/"
        ),
    )


class DNNLinearCombinedEstimator(_V1Canned, dnn_linear_combined.DNNLinearCombinedEstimator):
    def __init__(
        self,
        head,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        input_layer_partitioner=None,
        config=None,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        self._combined_init(
            head,
            model_dir,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            input_layer_partitioner,
            config,
            batch_norm,
            linear_sparse_combiner,
            None,
        )

    def _combined_init(
        self,
        head,
        model_dir,
        linear_feature_columns,
        linear_optimizer,
        dnn_feature_columns,
        dnn_optimizer,
        dnn_hidden_units,
        dnn_activation_fn,
        dnn_dropout,
        input_layer_partitioner,
        config,
        batch_norm,
        linear_sparse_combiner,
        warm_start_from,
    ):
        """The constructor with `warm_start_from`, which 2.15 gave only to the classifier
        and the regressor (the V1 Estimator's signature has none)."""
        _note_partitioner("input_layer_partitioner", input_layer_partitioner)
        linear_columns, linear_opt, dnn_opt = _combined_optimizers(
            linear_feature_columns, linear_optimizer, dnn_optimizer
        )
        super().__init__(
            head,
            model_dir=model_dir,
            linear_feature_columns=linear_columns,
            linear_optimizer=linear_opt,
            dnn_feature_columns=dnn_feature_columns,
            dnn_optimizer=dnn_opt,
            dnn_hidden_units=dnn_hidden_units,
            dnn_activation_fn=dnn_activation_fn,
            dnn_dropout=dnn_dropout,
            config=config,
            batch_norm=batch_norm,
            linear_sparse_combiner=linear_sparse_combiner,
            warm_start_from=warm_start_from,
        )


class DNNLinearCombinedClassifier(DNNLinearCombinedEstimator):
    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        head = _classification_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        self._combined_init(
            head,
            model_dir,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            input_layer_partitioner,
            config,
            batch_norm,
            linear_sparse_combiner,
            warm_start_from,
        )


class DNNLinearCombinedRegressor(DNNLinearCombinedEstimator):
    def __init__(
        self,
        model_dir=None,
        linear_feature_columns=None,
        linear_optimizer="Ftrl",
        dnn_feature_columns=None,
        dnn_optimizer="Adagrad",
        dnn_hidden_units=None,
        dnn_activation_fn=tf.nn.relu,
        dnn_dropout=None,
        label_dimension=1,
        weight_column=None,
        input_layer_partitioner=None,
        config=None,
        warm_start_from=None,
        loss_reduction=_REDUCTION.SUM,
        batch_norm=False,
        linear_sparse_combiner="sum",
    ):
        head = _v1_regression_head(
            label_dimension, weight_column, loss_reduction_for_head(loss_reduction, weight_column)
        )
        self._combined_init(
            head,
            model_dir,
            linear_feature_columns,
            linear_optimizer,
            dnn_feature_columns,
            dnn_optimizer,
            dnn_hidden_units,
            dnn_activation_fn,
            dnn_dropout,
            input_layer_partitioner,
            config,
            batch_norm,
            linear_sparse_combiner,
            warm_start_from,
        )
