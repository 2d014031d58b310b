"""`LinearEstimator` (any head), `LinearClassifier`, `LinearRegressor`: one weight per
feature value, Ftrl by default."""

import contextlib
import math
import threading

import tensorflow as tf
import tf_keras
from tensorflow.python.feature_column import feature_column_v2 as fc_lib
from tf_keras.src.feature_column.dense_features_v2 import _StateManagerImplV2

from components.estimator import head as head_lib
from components.estimator import optimizers, summaries
from components.estimator.canned import indicator
from components.estimator.estimator import Estimator
from components.estimator.model_fn import ModeKeys
from components.estimator.sdca import LinearSDCA

LEARNING_RATE = 0.2

# Whether the model_fn being built is a tf.compat.v1.estimator class's (`reading_v1_columns`).
_READING = threading.local()


@contextlib.contextmanager
def reading_v1_columns(v1):
    """Builds the canned models inside as a tf.compat.v1.estimator class's (`v1`) or a
    tf.estimator one's: a TF1 Hub module is read, named and trained as each did in 2.15."""
    before = reads_v1_columns()
    _READING.v1 = v1
    try:
        yield
    finally:
        _READING.v1 = before  # (a V2 part built inside a V1 class's, or the other way)


def reads_v1_columns():
    return getattr(_READING, "v1", False)


def tf1_hub_columns(feature_columns):
    """The columns whose state is a TF1 Hub module (`tensorflow_hub`'s
    `text_embedding_column`, `image_embedding_column`, `sparse_text_embedding_column`):
    `hub.Module` imports its graph with TF1's `import_meta_graph`, in a tf.Graph only."""
    return [c for c in feature_columns if type(c).__module__ == "tensorflow_hub.feature_column"]


def linear_learning_rate(feature_columns):
    """The learning rate of a linear model's default Ftrl when `optimizer=None`."""
    return min(LEARNING_RATE, 1.0 / math.sqrt(len(feature_columns)))


def _single_dense_ids(column, features):
    """(ids, kept) for an identity column fed one dense id per example, else None.

    With one id per example every sparse combiner reduces to that id's weight,
    so a gather gives the sums the SparseTensor lookup gives, with a fraction
    of its ops: that lookup was most of a wide & deep training step.  `kept`
    follows the feature column: -1 is a missing value, out-of-range ids take
    `default_value` when there is one, and negative ids are dropped.
    """
    if not isinstance(column, fc_lib.IdentityCategoricalColumn):
        return None
    tensor = features.get(column.key)
    if not isinstance(tensor, tf.Tensor) or not tensor.dtype.is_integer:
        return None
    if not (tensor.shape.rank == 1 or (tensor.shape.rank == 2 and tensor.shape[1] == 1)):
        return None
    raw = tf.reshape(tf.cast(tensor, tf.int64), [-1])
    if column.default_value is None:
        return raw, raw >= 0
    out_of_range = tf.logical_or(raw < 0, raw >= column.num_buckets)
    ids = tf.where(out_of_range, tf.constant(column.default_value, tf.int64), raw)
    return ids, tf.not_equal(raw, -1)


def _gathered_weights(weights, ids, kept):
    """Each example's weight row, zeros where no id is kept.

    Only kept ids are gathered, so the gradient touches exactly the rows the
    sparse lookup's gradient touches (which matters for stateful optimizers).
    """
    positions = tf.where(kept)
    rows = tf.gather(weights, tf.gather_nd(ids, positions))
    shape = tf.stack([tf.size(ids, out_type=tf.int64), weights.shape[1]])
    return tf.scatter_nd(positions, rows, shape)


def _single_id_sum(lookups):
    """The summed weights of (weights, ids, kept) lookups.

    A batch in which every id is kept (transformed data usually is: its
    vocabularies map unknown values to OOV buckets) takes plain gathers; the
    masking that a missing id needs was 40% of a wide & deep training step.
    Both branches give the same sums and touch the same rows.
    """
    every_id_kept = tf.reduce_all(tf.stack([kept for _, _, kept in lookups]))
    return tf.cond(
        every_id_kept,
        lambda: tf.add_n([tf.gather(weights, ids) for weights, ids, _ in lookups]),
        lambda: tf.add_n([_gathered_weights(*lookup) for lookup in lookups]),
    )


class LinearModel(tf_keras.layers.Layer):
    """Sum of per-column weights: lookups for categorical columns (a gather for
    single dense ids, sparse lookups otherwise), a matmul for dense ones, plus
    a bias."""

    def __init__(
        self, feature_columns, units, sparse_combiner="sum", name="linear_model", scope="linear"
    ):
        super().__init__(name=name)
        self._scope = scope  # the name scope it is called in (None: the caller's)
        self._columns = sorted(indicator.counted(feature_columns), key=lambda c: c.name)
        if not self._columns:
            raise ValueError("feature_columns must not be empty.")
        self._units = units
        self._sparse_combiner = sparse_combiner
        self._state_manager = _StateManagerImplV2(self, self.trainable)
        self._module_weights = []  # its TF1 Hub modules' trainable variables
        self._trains_modules = False

    @property
    def trained_weights(self):
        """What the optimizer trains: the layer's own weights and, in a V1 class, its
        modules' (which Keras may or may not track as the layer's)."""
        modules = {id(v) for v in self._module_weights}
        own = [w for w in self.trainable_weights if id(w) not in modules]
        return own + (self._module_weights if self._trains_modules else [])

    @contextlib.contextmanager
    def _module_variables_of(self, scope):
        """Notes the TF1 Hub module variables made inside, in variable scope `scope`: a V1
        class trains them with the model (2.15's V1 linear model trained every trainable
        variable under `linear/`), a V2 class never did (its optimizer took the Keras
        layer's variables alone)."""
        trainable = tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES
        before = {id(v) for v in tf.compat.v1.get_collection(trainable)}
        with tf.compat.v1.variable_scope(scope, auxiliary_name_scope=False):
            yield
        made = [v for v in tf.compat.v1.get_collection(trainable) if id(v) not in before]
        for variable in made:
            # imported whole: its slots keyed as an unsplit variable's (compat_v1.canned)
            variable._kit_never_partitioned = True
        self._module_weights += made
        self._trains_modules = reads_v1_columns()

    def _import_module(self, column):
        """Imports a TF1 Hub column's module under the column's scope, as 2.15's linear
        models did (`linear/linear_model/<column>/module/...`: hub.Module takes the graph's
        variable scope, which must match its name scope)."""
        with self._module_variables_of(tf.compat.v1.get_default_graph().get_name_scope()):
            column.create_state(self._state_manager)

    def build(self, _):
        hub_columns = tf1_hub_columns(self._columns)
        for column in self._columns:
            with tf.name_scope(column.name):
                if column in hub_columns:
                    self._import_module(column)
                else:
                    column.create_state(self._state_manager)
                if isinstance(column, fc_lib.CategoricalColumn):
                    rows = column.num_buckets
                else:
                    rows = column.variable_shape.num_elements()
                self._state_manager.create_variable(
                    column,
                    name="weights",
                    shape=(rows, self._units),
                    dtype=tf.float32,
                    initializer=tf_keras.initializers.Zeros(),
                    trainable=True,
                )
        self.bias = self.add_weight(
            name="bias_weights",
            shape=(self._units,),
            initializer=tf_keras.initializers.Zeros(),
            trainable=True,
        )
        super().build(None)

    # tf_keras converts a subclassed layer's `call` with AutoGraph; this one
    # branches only on Python values, and converting it cost 0.7 s per process.
    # (`training` is Keras's flag: nothing here behaves differently in training.)
    @tf.autograph.experimental.do_not_convert
    def call(self, features, training=None):
        # 2.15's op names, which TF1-era serving code fetches from an export: a V2
        # class's columns' ops under `linear/linear_model/` three times over, then
        # `<column>/` (`.../colour/colour_lookup/...`), the sum `.../weighted_sum`; a V1
        # class's (TF1's linear_model in the `linear` scope) and, with no scope,
        # `linear_logit_fn_builder`'s under `linear_model/` three times over
        # (`linear/linear_model/linear_model/linear_model/weighted_sum`).
        scope = [] if reads_v1_columns() or not self._scope else [self._scope]
        with contextlib.ExitStack() as scopes:
            for name in [*scope, "linear_model"] * 2:
                scopes.enter_context(tf.name_scope(name))
            terms = self._terms(features)
            summed = tf.add_n(terms, name="weighted_sum_no_bias")
            return tf.nn.bias_add(summed, self.bias, name="weighted_sum")

    def _terms(self, features):
        cache = fc_lib.FeatureTransformationCache(features)
        terms, single_id_lookups = [], []
        for column in self._columns:
            weights = self._state_manager.get_variable(column, "weights")
            single = _single_dense_ids(column, features)
            if single is not None:
                single_id_lookups.append((weights, *single))
                continue
            with tf.name_scope(column.name):
                terms.append(self._column_term(column, cache, weights))
        if single_id_lookups:
            terms.append(_single_id_sum(single_id_lookups))
        return terms

    def _column_term(self, column, cache, weights):
        if isinstance(column, fc_lib.CategoricalColumn):
            ids = column.get_sparse_tensors(cache, self._state_manager)
            return tf.nn.safe_embedding_lookup_sparse(
                weights, ids.id_tensor, ids.weight_tensor, combiner=self._sparse_combiner
            )
        if reads_v1_columns() and column in tf1_hub_columns([column]):
            # `hub.sparse_text_embedding_column` imports its module when read: 2.15's V1
            # models read V2 columns in their `linear` variable scope (`linear/module/`).
            with self._module_variables_of("linear"):
                dense = column.get_dense_tensor(cache, self._state_manager)
        else:
            dense = column.get_dense_tensor(cache, self._state_manager)
        # 2.15's rows: the batch's, so a batch of the wrong shape (an unbatched Dataset)
        # fails here, as it did, rather than in the head's labels.
        rows = tf.shape(dense)[0]
        dense = tf.reshape(tf.cast(dense, tf.float32), [rows, weights.shape[0]])
        return tf.matmul(dense, weights)


# What 2.15's tf.estimator (V2) classes said of a tf.compat.v1.feature_column column
# (`shared_embedding_columns`' are the V1-only ones), on its first line; the kit's
# plainer advice on the second.
V1_COLUMN_IN_V2_ESTIMATOR = (
    "Received a feature column from TensorFlow v1, but this is a TensorFlow v2 Estimator. "
    "Please either use v2 feature columns (accessible via tf.feature_column.* in TF 2.x) "
    "with this Estimator, or switch to a v1 Estimator for use with v1 feature columns "
    "(accessible via tf.compat.v1.estimator.* and tf.compat.v1.feature_column.*, "
    "respectively.\n"
    "Use tf.feature_column's columns (tf.feature_column.shared_embeddings for shared "
    "embeddings) with it, or the tf.compat.v1.estimator class of the same name, which "
    "takes tf.compat.v1.feature_column's."
)


def check_v2_columns(feature_columns):
    """Refuses V1-only feature columns in a tf.estimator (V2) class, as 2.15 did."""
    if not fc_lib.is_feature_column_v2(feature_columns):
        raise ValueError(V1_COLUMN_IN_V2_ESTIMATOR)


def check_features(features, feature_columns):
    """Fails naming the first raw feature a column needs that input_fn did not give (in
    2.15's first line and words, then the kit's); features that are not a dict (one
    tensor), with 2.15's canned models' ValueError."""
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}"
        )
    for column in feature_columns:
        for key in _raw_keys(column):
            if key not in features:
                # 2.15 failed in its Keras layer's traced call: AutoGraph's first line,
                # then the feature column's error; then the kit's, naming the column.
                raise ValueError(
                    f"in user code:\n\n    ValueError: Feature {key} is not in features "
                    f"dictionary.\n\nFeature {key!r} (needed by column {column.name!r}) is not "
                    f"in the input features {sorted(features)}."
                )


@contextlib.contextmanager
def read_in_user_code():
    """A ValueError reading the features (a column's dtype or shape refused: a vocabulary
    list of strings over an integer feature, an identity column over text), with the
    first line 2.15's canned models gave it: they read their features in a Keras layer's
    traced call, whose AutoGraph put `in user code:` first. The column's own words
    follow, without Keras's frame of the layer's call."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        if message.startswith("in user code:"):
            raise
        parts = message.split("\n\n")
        if getattr(error, "_keras_call_info_injected", False) and len(parts) >= 3:
            message = "\n\n".join(parts[1:-1])  # (the column's words, inside Keras's frame)
        framed = ValueError(f"in user code:\n\n    ValueError: {message}\n")
        framed._keras_call_info_injected = True  # (an outer layer's call leaves it as it is)
        raise framed from error


def _raw_keys(column):
    if isinstance(column, str):
        return [column]
    parents = getattr(column, "parents", None)
    if not parents:
        return [column.key] if hasattr(column, "key") else []
    keys = []
    for parent in parents:
        keys.extend(_raw_keys(parent))
    return keys


def linear_logits(features, feature_columns, units, sparse_combiner, scope="linear"):
    """Logits and the LinearModel layer, its variables under `scope` (the canned
    models': `linear/linear_model/...`; None: the caller's, `linear_model/...`)."""
    with tf.name_scope(scope) if scope else contextlib.nullcontext():
        layer = LinearModel(feature_columns, units, sparse_combiner, scope=scope)
        with read_in_user_code():
            logits = layer(features)
    _summarize(layer)
    return logits, layer


def _summarize(layer):
    """2.15's linear model's own summaries: its bias (a histogram for several logits)
    and the share of its other weights that are zero, both unscoped."""
    if layer.bias.shape[0] > 1:
        summaries.histogram("bias", lambda: layer.bias, v1_scope="linear")
    else:
        summaries.scalar("bias", lambda: layer.bias[0], v1_scope="linear")
    weights = [w for w in layer.weights if w is not layer.bias]
    zeros = lambda: summaries.fraction_of_zero(weights)  # noqa: E731
    summaries.scalar("fraction_of_zero_weights", zeros, v1_scope="linear")


def _model_fn(
    features, labels, mode, head, feature_columns, optimizer, sparse_combiner, slot_naming=None
):
    """`slot_naming`: a V1 class's checkpoint names of LinearSDCA's slots."""
    check_features(features, feature_columns)
    logits, layer = linear_logits(features, feature_columns, head.logits_dimension, sparse_combiner)
    # 2.15 built SDCA's step before the head, in the model_fn's own name scope (its state
    # is `ShardedMutableHashTable-1-of-1-keys`, not under the head's `training/`).
    scope = tf.compat.v1.get_default_graph().get_name_scope()

    sdca, opt = isinstance(optimizer, LinearSDCA), None
    if mode == ModeKeys.TRAIN and not sdca:  # (before the head, see made_for_training)
        # `optimizer=None`: 2.15's Ftrl at min(0.2, 1/sqrt(number of columns)).
        default = optimizer or optimizers.get_optimizer(
            "Ftrl", linear_learning_rate(feature_columns)
        )
        opt = optimizers.made_for_training(True, default, LEARNING_RATE)

    def train_op_fn(loss):
        if sdca:
            with tf.compat.v1.name_scope(scope + "/" if scope else ""):
                return optimizer.train_op(layer, features, labels, head, loss, slot_naming)
        with optimizers.stepping_the_global_step(opt):
            return optimizers.apply(opt, loss, layer.trained_weights)

    return head.create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels, train_op_fn=train_op_fn
    )


class LinearEstimator(Estimator):
    """A linear model under any head (`LinearClassifier` and `LinearRegressor` pick theirs)."""

    # tf.compat.v1.estimator's classes take tf.compat.v1.feature_column's columns too.
    _takes_v1_feature_columns = False
    # (A V1 class's: how LinearSDCA's slots are saved, see compat_v1.)
    _sdca_slot_naming = None
    _exports_a_graph = True  # (2.15's export: a TF1 graph, its tensor names)

    def __init__(
        self,
        head,
        feature_columns,
        model_dir=None,
        optimizer="Ftrl",
        config=None,
        sparse_combiner="sum",
        warm_start_from=None,
    ):
        feature_columns = list(feature_columns or ())  # (None: refused when trained, as in 2.15)
        if isinstance(optimizer, LinearSDCA):
            optimizer.check_head(head, sparse_combiner)
        takes_v1_columns = self._takes_v1_feature_columns

        def model_fn(features, labels, mode):
            if not takes_v1_columns:
                check_v2_columns(feature_columns)
            naming = self._sdca_slot_naming
            with reading_v1_columns(takes_v1_columns):
                return _model_fn(
                    features,
                    labels,
                    mode,
                    head,
                    feature_columns,
                    optimizer,
                    sparse_combiner,
                    naming,
                )

        super().__init__(
            model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from
        )
        if tf1_hub_columns(feature_columns):
            self._runs_in_a_graph = True  # (as 2.15 built every call, in a tf.Graph)


class LinearClassifier(LinearEstimator):
    def __init__(
        self,
        feature_columns,
        model_dir=None,
        n_classes=2,
        weight_column=None,
        label_vocabulary=None,
        optimizer="Ftrl",
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        sparse_combiner="sum",
    ):
        super().__init__(
            head_lib.binary_or_multi_class_head(
                n_classes, weight_column, label_vocabulary, loss_reduction
            ),
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )


class LinearRegressor(LinearEstimator):
    def __init__(
        self,
        feature_columns,
        model_dir=None,
        label_dimension=1,
        weight_column=None,
        optimizer="Ftrl",
        config=None,
        warm_start_from=None,
        loss_reduction=head_lib.SUM_OVER_BATCH_SIZE,
        sparse_combiner="sum",
    ):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            feature_columns,
            model_dir=model_dir,
            optimizer=optimizer,
            config=config,
            sparse_combiner=sparse_combiner,
            warm_start_from=warm_start_from,
        )
