"""The tf.estimator API on TensorFlow 2.21: change `tf.estimator.X` to `estimator.X`.

    from components.trainer import estimator
    classifier = estimator.DNNLinearCombinedClassifier(...)

Importing it makes `tf.keras` mean Keras 2 (tf_keras), as in tf.estimator's
days, when `tf.keras` has not been used yet (see `legacy_keras`).
"""

from components.trainer.estimator import legacy_keras

legacy_keras.use_legacy_keras()

from components.trainer.estimator import early_stopping as experimental
from components.trainer.estimator import export
from components.trainer.estimator.canned import (
    BaselineClassifier,
    BaselineRegressor,
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from components.trainer.estimator.checkpoints import VocabInfo, WarmStartSettings
from components.trainer.estimator.early_stopping import (
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from components.trainer.estimator.estimator import Estimator
from components.trainer.estimator.exporter import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
)
from components.trainer.estimator.hooks import (
    CheckpointSaverListener,
    Hook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SessionRunHook,
    StepCounterHook,
    StopAtStepHook,
)
from components.trainer.estimator.keras import model_to_estimator
from components.trainer.estimator.model_fn import EstimatorSpec, ModeKeys, Scaffold
from components.trainer.estimator.run_config import RunConfig
from components.trainer.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from components.trainer.estimator.variables import get_global_step

__all__ = [
    "BaselineClassifier",
    "BaselineRegressor",
    "BestExporter",
    "CheckpointSaverListener",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FinalExporter",
    "Hook",
    "LatestExporter",
    "LinearClassifier",
    "LinearRegressor",
    "LoggingTensorHook",
    "ModeKeys",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "RunConfig",
    "Scaffold",
    "SessionRunHook",
    "StepCounterHook",
    "StopAtStepHook",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "experimental",
    "export",
    "get_global_step",
    "model_to_estimator",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
    "train_and_evaluate",
]
