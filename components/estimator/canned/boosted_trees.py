"""`BoostedTreesEstimator` (any head), `BoostedTreesClassifier`, `BoostedTreesRegressor`:
tf.estimator 2.8's gradient boosted trees, grown layer by layer.

Each training step reads one batch.  Numeric columns first spend
`n_batches_per_layer` steps on a quantile sketch of their values (the bucket
boundaries); with `center_bias` the next steps fit the bias by Newton steps;
then every `n_batches_per_layer` steps grow one layer of the current tree from
the gradients and Hessians of the head's loss, summed per node, feature and
bucket.  Training stops by itself once `n_trees` trees are grown, or once no node
of a layer finds a split to make (pre-pruned, or lighter than `min_node_weight`): the
tree stays as grown so far, as tf.estimator's did.  With
`train_in_memory=True` the input is the whole data set in one batch, and the
bucket ids, the logits of the finished trees and each example's node are kept
between steps (not in checkpoints: they are rebuilt from the ensemble when a
`train()` call starts).  The step is in tree_growing.py, the tensors behind it
in tree_ensemble.py.

Four keyword-only arguments are the kit's, their defaults tf.estimator's behaviour:
`multi_class_hessian="diagonal"` (a Hessian per class: a layer's statistics linear in
the classes, not quadratic), `max_leaf_nodes` and `min_samples_leaf` (HistGradientBoosting's
leaf cap and minimum per leaf; with either, a layer that splits nothing ends its tree, not
training), and `max_delta_step` (LightGBM's: a bound on a leaf's weight per logit before the
learning rate, 0 for none; a diagonal Hessian's -G/H is unbounded where a class's
p(1 - p) vanishes, as on a leaf of confident predictions that are wrong).
"""

import collections

import numpy as np
import tensorflow as tf

from components.estimator import head as head_lib
from components.estimator.canned import tree_ensemble as te
from components.estimator.canned import tree_growing as tg
from components.estimator.estimator import Estimator
from components.estimator.model_fn import ModeKeys


def _model_fn(features, labels, mode, head, layout, params, weight_column):
    layout.check_features(features)
    training = mode == ModeKeys.TRAIN
    ensemble = tg.Ensemble(layout, params, head.logits_dimension, training)
    if not training:
        logits = ensemble.logits(ensemble.bucket_ids(features))
        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels
        )
    grower = tg.Grower(ensemble, head, features, labels, weight_column)
    ids, logits, nodes, base = grower.inputs()
    spec = head.create_estimator_spec(
        features=features,
        mode=mode,
        logits=logits,
        labels=labels,
        train_op_fn=lambda loss: grower.train_op(ids, logits, nodes, base, loss),
    )
    return spec._replace(
        training_hooks=(*tuple(spec.training_hooks or ()), tg.GrowthHook(ensemble))
    )


def _explanations_model_fn(features, mode, head, layout, params, activation):
    layout.check_features(features)
    ensemble = tg.Ensemble(layout, params, head.logits_dimension, training=False)
    x = ensemble.bucket_ids(features)
    spec = head.create_estimator_spec(features=features, mode=mode, logits=ensemble.logits(x))
    bias, dfc = ensemble.explanations(x, activation)
    return spec._replace(predictions=dict(spec.predictions, bias=bias, dfc=dfc))


def _sorted_by_name(names, values):
    """tf.estimator's order: summed per feature column name, largest magnitude first."""
    sums = collections.OrderedDict()
    for name, value in zip(names, values, strict=True):
        sums[name] = sums.get(name, 0.0) + float(value)
    return collections.OrderedDict(sorted(sums.items(), key=lambda kv: abs(kv[1]), reverse=True))


class BoostedTreesEstimator(Estimator):
    """Gradient boosted trees under any head (the Classifier and Regressor pick theirs)."""

    _needs_eager_execution = "its trees grow between training steps, in eager Python code"

    def __init__(
        self,
        feature_columns,
        n_batches_per_layer,
        head,
        model_dir=None,
        weight_column=None,
        n_trees=100,
        max_depth=6,
        learning_rate=0.1,
        l1_regularization=0.0,
        l2_regularization=0.0,
        tree_complexity=0.0,
        min_node_weight=0.0,
        config=None,
        center_bias=False,
        pruning_mode="none",
        quantile_sketch_epsilon=0.01,
        train_in_memory=False,
        *,
        multi_class_hessian="full",
        min_samples_leaf=0,
        max_leaf_nodes=None,
        max_delta_step=0.0,
    ):
        params = tg.checked_params(
            tg.TreeParams(
                n_trees,
                max_depth,
                learning_rate,
                l1_regularization,
                l2_regularization,
                tree_complexity,
                min_node_weight,
                center_bias,
                pruning_mode,
                quantile_sketch_epsilon,
                n_batches_per_layer,
                train_in_memory,
                multi_class_hessian,
                min_samples_leaf,
                max_leaf_nodes,
                max_delta_step,
            ),
            head.logits_dimension,
            config,
        )
        layout = te.FeatureLayout(list(feature_columns), int(1.0 / quantile_sketch_epsilon))
        if layout.num_numeric and layout.num_quantiles < 2:
            raise ValueError(
                f"quantile_sketch_epsilon={quantile_sketch_epsilon} leaves numeric columns "
                "a single bucket; use a value below 0.5."
            )

        def model_fn(features, labels, mode):
            return _model_fn(features, labels, mode, head, layout, params, weight_column)

        super().__init__(model_fn, model_dir=model_dir, config=config)
        self._head = head
        self._layout = layout
        self._tree_params = params

    @property
    def tree_params(self):
        """The growing settings (`TreeParams`): how a trainer must feed this model."""
        return self._tree_params

    def experimental_feature_importances(self, normalize=False):
        """Gain-based importances by feature column name, largest first (an OrderedDict)."""
        features = np.asarray(self.get_variable_value(f"{tg.SCOPE}/node_feature"))
        gains = np.asarray(self.get_variable_value(f"{tg.SCOPE}/node_gain"))
        split = features >= 0
        per_feature = np.bincount(
            features[split], weights=gains[split], minlength=self._layout.num_features
        )
        if normalize:
            if np.any(per_feature < 0):
                raise ValueError("feature_importances must be non-negative to normalize.")
            total = per_feature.sum()
            if total <= 0:
                raise ValueError("Trees are all empty or contain only a root node.")
            per_feature = per_feature / total
        return _sorted_by_name(self._layout.names, per_feature)

    def _explanation_activation(self):
        if not self._tree_params.center_bias:
            raise ValueError(
                "center_bias must be enabled during estimator instantiation when using "
                "experimental_predict_with_explanations."
            )
        if self._head.logits_dimension > 1:
            raise ValueError(
                "experimental_predict_with_explanations does not yet support multi-class "
                "classification and multi-label regression."
            )
        if isinstance(self._head, head_lib.BinaryClassHead):
            return tf.math.sigmoid
        if type(self._head) is head_lib.RegressionHead and self._head._inverse_link_fn is None:
            return tf.identity
        raise ValueError(
            "experimental_predict_with_explanations supports a binary classification head "
            "or a regression head with the identity inverse link."
        )

    def experimental_predict_with_explanations(
        self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None
    ):
        """Predictions with `bias` and `dfc` (directional feature contributions: an
        OrderedDict by feature column name, largest magnitude first), in probability
        space for classification: bias + sum(dfc) is the prediction."""
        activation = self._explanation_activation()
        head, layout, params = self._head, self._layout, self._tree_params

        def model_fn(features, mode):
            return _explanations_model_fn(features, mode, head, layout, params, activation)

        explainer = Estimator(model_fn, model_dir=self.model_dir, config=self._user_config)
        if predict_keys is not None:
            predict_keys = sorted(set(predict_keys) | {"bias", "dfc"})
        for prediction in explainer.predict(
            input_fn, predict_keys=predict_keys, hooks=hooks, checkpoint_path=checkpoint_path
        ):
            prediction["bias"] = float(prediction["bias"])
            prediction["dfc"] = _sorted_by_name(layout.names, prediction["dfc"])
            yield prediction


class BoostedTreesClassifier(BoostedTreesEstimator):
    def __init__(
        self,
        feature_columns,
        n_batches_per_layer,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        n_trees=100,
        max_depth=6,
        learning_rate=0.1,
        l1_regularization=0.0,
        l2_regularization=0.0,
        tree_complexity=0.0,
        min_node_weight=0.0,
        config=None,
        center_bias=False,
        pruning_mode="none",
        quantile_sketch_epsilon=0.01,
        train_in_memory=False,
        *,
        multi_class_hessian="full",
        min_samples_leaf=0,
        max_leaf_nodes=None,
        max_delta_step=0.0,
    ):
        if n_classes > 2 and center_bias and multi_class_hessian == "full":
            raise ValueError(
                "center_bias not yet support with n_classes > 2 (but with "
                "multi_class_hessian='diagonal')."
            )
        super().__init__(
            feature_columns,
            n_batches_per_layer,
            head_lib.binary_or_multi_class_head(n_classes, weight_column, label_vocabulary),
            model_dir=model_dir,
            weight_column=weight_column,
            n_trees=n_trees,
            max_depth=max_depth,
            learning_rate=learning_rate,
            l1_regularization=l1_regularization,
            l2_regularization=l2_regularization,
            tree_complexity=tree_complexity,
            min_node_weight=min_node_weight,
            config=config,
            center_bias=center_bias,
            pruning_mode=pruning_mode,
            quantile_sketch_epsilon=quantile_sketch_epsilon,
            train_in_memory=train_in_memory,
            multi_class_hessian=multi_class_hessian,
            min_samples_leaf=min_samples_leaf,
            max_leaf_nodes=max_leaf_nodes,
            max_delta_step=max_delta_step,
        )


class BoostedTreesRegressor(BoostedTreesEstimator):
    def __init__(
        self,
        feature_columns,
        n_batches_per_layer,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        n_trees=100,
        max_depth=6,
        learning_rate=0.1,
        l1_regularization=0.0,
        l2_regularization=0.0,
        tree_complexity=0.0,
        min_node_weight=0.0,
        config=None,
        center_bias=False,
        pruning_mode="none",
        quantile_sketch_epsilon=0.01,
        train_in_memory=False,
        *,
        multi_class_hessian="full",
        min_samples_leaf=0,
        max_leaf_nodes=None,
        max_delta_step=0.0,
    ):
        super().__init__(
            feature_columns,
            n_batches_per_layer,
            head_lib.RegressionHead(label_dimension, weight_column),
            model_dir=model_dir,
            weight_column=weight_column,
            n_trees=n_trees,
            max_depth=max_depth,
            learning_rate=learning_rate,
            l1_regularization=l1_regularization,
            l2_regularization=l2_regularization,
            tree_complexity=tree_complexity,
            min_node_weight=min_node_weight,
            config=config,
            center_bias=center_bias,
            pruning_mode=pruning_mode,
            quantile_sketch_epsilon=quantile_sketch_epsilon,
            train_in_memory=train_in_memory,
            multi_class_hessian=multi_class_hessian,
            min_samples_leaf=min_samples_leaf,
            max_leaf_nodes=max_leaf_nodes,
            max_delta_step=max_delta_step,
        )
