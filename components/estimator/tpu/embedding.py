"""TPU embedding settings as tf.estimator 2.15 took them with `use_tpu=False`.

Recommendation samples (tensorflow/tpu's DLRM, NCF) pass `TPUEstimator` an
`EmbeddingConfigSpec` of TPU embedding columns (`tf.compat.v1.tpu.experimental
.embedding_column`) and an optimizer for their tables (`AdagradParameters`, ...).  On CPUs
and GPUs 2.15 checked the spec when it was made and then left it out: TPU embedding
columns look up their tables as ordinary embedding columns do (variables such as
`input_layer/<feature>_embedding/embedding_weights`), and `model_fn`'s own optimizer
trains them.  This module keeps the spec and its checks, and the four optimizer
settings TensorFlow 2.21 no longer has (`components.estimator.install` puts them into
`tf.compat.v1.tpu.experimental` where TensorFlow lacks them).

2.15 also took tables as `feature_to_config_dict` and `table_to_config_dict` of
`FeatureConfig` and `TableConfig`: TensorFlow 2.21 has neither class, so that form is
refused, saying to pass `feature_columns`.
"""

import collections
import inspect

from tensorflow.python.feature_column import feature_column as fc_v1
from tensorflow.python.feature_column import feature_column_lib as fc_lib
from tensorflow.python.tpu import feature_column as tpu_fc_v1
from tensorflow.python.tpu import feature_column_v2 as tpu_fc


class _OptimizationParameters:
    """What every TPU embedding optimizer setting holds; 2.15's checks on it."""

    def __init__(
        self,
        learning_rate,
        use_gradient_accumulation,
        clip_weight_min,
        clip_weight_max,
        weight_decay_factor,
        multiply_weight_decay_factor_by_learning_rate,
        clip_gradient_min=None,
        clip_gradient_max=None,
    ):
        clipped = clip_gradient_min is not None or clip_gradient_max is not None
        if clipped and not use_gradient_accumulation:
            raise ValueError(
                "Clipping gradients (clip_gradient_min, clip_gradient_max) needs "
                "use_gradient_accumulation=True: when using gradient clipping limits, "
                "gradient accumulation must be enabled."
            )
        self.learning_rate = learning_rate
        self.use_gradient_accumulation = use_gradient_accumulation
        self.clip_weight_min = clip_weight_min
        self.clip_weight_max = clip_weight_max
        self.weight_decay_factor = weight_decay_factor
        self.multiply_weight_decay_factor_by_learning_rate = (
            multiply_weight_decay_factor_by_learning_rate
        )
        self.clip_gradient_min = clip_gradient_min
        self.clip_gradient_max = clip_gradient_max


def _common(arguments):
    """The arguments of a subclass's `__init__` (its `locals()`) that every setting has."""
    names = inspect.signature(_OptimizationParameters.__init__).parameters
    return {name: arguments[name] for name in names if name != "self"}


def _at_least(name, value, low, strictly=False):
    if value < low or (strictly and value == low):
        bound = "greater than" if strictly else "greater than or equal to"
        raise ValueError(f"{name} must be {bound} {low}; got {value}.")


class AdagradParameters(_OptimizationParameters):
    """`tf.compat.v1.tpu.experimental.AdagradParameters`: Adagrad for TPU embedding
    tables (on CPUs and GPUs, `model_fn`'s optimizer trains them instead)."""

    def __init__(
        self,
        learning_rate,
        initial_accumulator=0.1,
        use_gradient_accumulation=True,
        clip_weight_min=None,
        clip_weight_max=None,
        weight_decay_factor=None,
        multiply_weight_decay_factor_by_learning_rate=None,
        clip_gradient_min=None,
        clip_gradient_max=None,
    ):
        super().__init__(**_common(locals()))
        _at_least("Adagrad initial_accumulator", initial_accumulator, 0, strictly=True)
        self.initial_accumulator = initial_accumulator


class AdamParameters(_OptimizationParameters):
    """`tf.compat.v1.tpu.experimental.AdamParameters`: Adam (lazy by default) for TPU
    embedding tables."""

    def __init__(
        self,
        learning_rate,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-08,
        lazy_adam=True,
        sum_inside_sqrt=True,
        use_gradient_accumulation=True,
        clip_weight_min=None,
        clip_weight_max=None,
        weight_decay_factor=None,
        multiply_weight_decay_factor_by_learning_rate=None,
        clip_gradient_min=None,
        clip_gradient_max=None,
    ):
        super().__init__(**_common(locals()))
        for name, beta in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"{name} must be between 0. and 1 (1 excluded); got {beta}.")
        _at_least("epsilon", epsilon, 0.0, strictly=True)
        if not (use_gradient_accumulation or lazy_adam):
            raise ValueError(
                "AdamParameters(lazy_adam=False) needs use_gradient_accumulation=True: "
                "when disabling Lazy Adam, gradient accumulation must be used."
            )
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_adam, self.sum_inside_sqrt = lazy_adam, sum_inside_sqrt


class FtrlParameters(_OptimizationParameters):
    """`tf.compat.v1.tpu.experimental.FtrlParameters`: FTRL for TPU embedding tables."""

    def __init__(
        self,
        learning_rate,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_gradient_accumulation=True,
        clip_weight_min=None,
        clip_weight_max=None,
        weight_decay_factor=None,
        multiply_weight_decay_factor_by_learning_rate=None,
        multiply_linear_by_learning_rate=False,
        beta=0,
        allow_zero_accumulator=False,
        clip_gradient_min=None,
        clip_gradient_max=None,
    ):
        super().__init__(**_common(locals()))
        if learning_rate_power > 0.0:
            raise ValueError(
                f"learning_rate_power must be less than or equal to 0.; got {learning_rate_power}."
            )
        _at_least("initial_accumulator_value", initial_accumulator_value, 0.0)
        _at_least("l1_regularization_strength", l1_regularization_strength, 0.0)
        _at_least("l2_regularization_strength", l2_regularization_strength, 0.0)
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.initial_linear_value = 0.0
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.multiply_linear_by_learning_rate = multiply_linear_by_learning_rate
        self.beta = beta
        self.allow_zero_accumulator = allow_zero_accumulator


class StochasticGradientDescentParameters(_OptimizationParameters):
    """`tf.compat.v1.tpu.experimental.StochasticGradientDescentParameters`: plain SGD
    for TPU embedding tables."""

    def __init__(
        self,
        learning_rate,
        use_gradient_accumulation=True,
        clip_weight_min=None,
        clip_weight_max=None,
        weight_decay_factor=None,
        multiply_weight_decay_factor_by_learning_rate=None,
        clip_gradient_min=None,
        clip_gradient_max=None,
    ):
        super().__init__(**_common(locals()))


# {name: class}: what `tf.compat.v1.tpu.experimental` held in TensorFlow 2.15.
OPTIMIZATION_PARAMETERS = {
    cls.__name__: cls
    for cls in (
        AdagradParameters,
        AdamParameters,
        FtrlParameters,
        StochasticGradientDescentParameters,
    )
}

# The columns 2.15 took (TPU embedding columns look up as embedding columns off TPUs).
_TPU_EMBEDDING_COLUMNS = (
    tpu_fc_v1._TPUEmbeddingColumn,
    tpu_fc_v1._TPUSharedEmbeddingColumn,
    tpu_fc._TPUEmbeddingColumnV2,
    tpu_fc._TPUSharedEmbeddingColumnV2,
)
_SUPPORTED_COLUMNS = (
    fc_v1._NumericColumn,
    fc_lib.NumericColumn,
    *_TPU_EMBEDDING_COLUMNS,
    fc_v1._EmbeddingColumn,
    fc_lib.EmbeddingColumn,
    fc_v1._SharedEmbeddingColumn,
)
_DEVICE_SPECIFIC_COLUMNS = (
    tpu_fc._TPUDeviceSpecificEmbeddingColumnV2,
    tpu_fc._TPUSharedDeviceSpecificEmbeddingColumnV2,
)

_SPEC_FIELDS = [
    "feature_columns",
    "tensor_core_feature_columns",
    "optimization_parameters",
    "clipping_limit",
    "pipeline_execution_with_tensor_core",
    "experimental_gradient_multiplier_fn",
    "feature_to_config_dict",
    "table_to_config_dict",
    "partition_strategy",
    "profile_data_directory",
]


def _split_columns(feature_columns):
    """(embedding core columns, tensor core columns), each column's type checked."""
    embedding_core, tensor_core = [], []
    for column in feature_columns:
        on_tensor_core = isinstance(column, _DEVICE_SPECIFIC_COLUMNS) and (
            column._embedding_lookup_device == tpu_fc.EmbeddingDevice.TPU_TENSOR_CORE
        )
        (tensor_core if on_tensor_core else embedding_core).append(column)
        if not isinstance(column, _SUPPORTED_COLUMNS):
            raise TypeError(
                "EmbeddingConfigSpec: all feature columns must be supported types: numeric "
                "columns, embedding columns (tf.feature_column.embedding_column, "
                "shared_embeddings) or TPU embedding columns "
                "(tf.compat.v1.tpu.experimental.embedding_column, shared_embedding_columns); "
                f"got {type(column).__name__} ({getattr(column, 'name', column)!r})."
            )
    return embedding_core, tensor_core


def _refuse_config_dicts():
    raise TypeError(
        "EmbeddingConfigSpec(feature_to_config_dict=..., table_to_config_dict=...): "
        "tf.estimator 2.15 wanted FeatureConfig and TableConfig values "
        "(tensorflow.python.tpu.tpu_embedding), which TensorFlow 2.21 no longer has (its "
        "tf.tpu.experimental.embedding configs are for TPUStrategy's TPUEmbedding). Pass "
        "feature_columns=[tf.compat.v1.tpu.experimental.embedding_column(...), ...] "
        "instead, the columns model_fn looks up (on CPUs and GPUs TPUEstimator leaves "
        "the spec out, as 2.15 did)."
    )


class EmbeddingConfigSpec(collections.namedtuple("EmbeddingConfigSpec", _SPEC_FIELDS)):
    """`tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec`: the TPU embedding
    columns and their tables' optimizer, checked as 2.15 checked them.  `TPUEstimator`
    with `use_tpu=False` leaves it out (see the module's docstring)."""

    def __new__(
        cls,
        feature_columns=None,
        optimization_parameters=None,
        clipping_limit=None,
        pipeline_execution_with_tensor_core=False,
        experimental_gradient_multiplier_fn=None,
        feature_to_config_dict=None,
        table_to_config_dict=None,
        partition_strategy="div",
        profile_data_directory=None,
    ):
        config_dicts = bool(feature_to_config_dict and table_to_config_dict)
        if bool(feature_columns) == config_dicts:
            raise ValueError(
                "EmbeddingConfigSpec: exactly one of `feature_columns` and the pair "
                "`feature_to_config_dict` and `table_to_config_dict` must be specified."
            )
        if partition_strategy not in ("div", "mod"):
            raise ValueError(
                f"EmbeddingConfigSpec: invalid partition_strategy {partition_strategy!r}; "
                'it must be "div" or "mod".'
            )
        if config_dicts:
            _refuse_config_dicts()
        embedding_core, tensor_core = _split_columns(feature_columns)
        if not isinstance(optimization_parameters, tuple(OPTIMIZATION_PARAMETERS.values())):
            raise ValueError(
                "EmbeddingConfigSpec: optimization_parameters must be an instance of "
                "tf.compat.v1.tpu.experimental.AdagradParameters, AdamParameters, "
                f"FtrlParameters or StochasticGradientDescentParameters; got "
                f"{type(optimization_parameters).__name__}."
            )
        return super().__new__(
            cls,
            feature_columns=embedding_core,
            tensor_core_feature_columns=tensor_core,
            optimization_parameters=optimization_parameters,
            clipping_limit=clipping_limit,
            pipeline_execution_with_tensor_core=pipeline_execution_with_tensor_core,
            experimental_gradient_multiplier_fn=experimental_gradient_multiplier_fn,
            feature_to_config_dict=feature_to_config_dict,
            table_to_config_dict=table_to_config_dict,
            partition_strategy=partition_strategy,
            profile_data_directory=profile_data_directory,
        )
