"""`tf.compat.v1.estimator.tpu.experimental`: `EmbeddingConfigSpec`, refused with why."""


class EmbeddingConfigSpec:
    """2.15's TPU embedding settings: refused when made, since TPU embedding tables
    run only on TPUs here (see TPUEstimator)."""

    def __init__(
        self,
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
        raise NotImplementedError(
            "tpu.experimental.EmbeddingConfigSpec: TPU embedding tables are not run by "
            "this kit, which runs TPUEstimator on CPUs and GPUs only; use "
            "tf.feature_column.embedding_column (or a Keras Embedding layer) in model_fn "
            "and leave TPUEstimator's embedding_config_spec out."
        )
