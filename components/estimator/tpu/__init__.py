"""tf.estimator 2.15's `tf.compat.v1.estimator.tpu`, for TPUEstimator programs on CPUs
and GPUs (`use_tpu=False`): see tpu_estimator.py for what runs and what is refused."""

from components.estimator.tpu import experimental
from components.estimator.tpu.config import InputPipelineConfig, RunConfig, TPUConfig
from components.estimator.tpu.tpu_estimator import TPUEstimator, TPUEstimatorSpec

__all__ = [
    "InputPipelineConfig",
    "RunConfig",
    "TPUConfig",
    "TPUEstimator",
    "TPUEstimatorSpec",
    "experimental",
]


def __dir__():
    # The public API, as tf.estimator 2.15 listed it (not this package's modules).
    return sorted(__all__)
