"""The tf.estimator API on TensorFlow 2.21: change `tf.estimator.X` to `estimator.X`.

    from components.trainer import estimator
    classifier = estimator.DNNLinearCombinedClassifier(...)
"""

from components.trainer.estimator import export
from components.trainer.estimator.canned import (
    DNNClassifier, DNNLinearCombinedClassifier, DNNLinearCombinedRegressor, DNNRegressor,
    LinearClassifier, LinearRegressor)
from components.trainer.estimator.checkpoints import VocabInfo, WarmStartSettings
from components.trainer.estimator.estimator import Estimator
from components.trainer.estimator.hooks import (
    CheckpointSaverListener, Hook, LoggingTensorHook, NanLossDuringTrainingError,
    NanTensorHook, SessionRunHook, StepCounterHook, StopAtStepHook)
from components.trainer.estimator.model_fn import EstimatorSpec, ModeKeys
from components.trainer.estimator.run_config import RunConfig
from components.trainer.estimator.variables import get_global_step

__all__ = [
    "CheckpointSaverListener", "DNNClassifier", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "EstimatorSpec", "Hook",
    "LinearClassifier", "LinearRegressor", "LoggingTensorHook", "ModeKeys",
    "NanLossDuringTrainingError", "NanTensorHook", "RunConfig", "SessionRunHook",
    "StepCounterHook", "StopAtStepHook", "VocabInfo", "WarmStartSettings", "export",
    "get_global_step",
]
