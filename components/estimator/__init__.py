"""The tf.estimator API on TensorFlow 2.21: change `tf.estimator.X` to `estimator.X`.

    from components import estimator
    classifier = estimator.DNNLinearCombinedClassifier(...)

Importing it makes `tf.keras` mean Keras 2 (tf_keras), as in tf.estimator's
days, when `tf.keras` has not been used yet (see `legacy_keras`).
"""

from components.estimator import legacy_keras, tf_logging

legacy_keras.use_legacy_keras()
tf_logging.follow_tensorflow_verbosity()

from components.estimator import experimental, export, inputs
from components.estimator.canned import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
    DNNClassifier,
    DNNEstimator,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
)
from components.estimator.checkpoints import VocabInfo, WarmStartSettings
from components.estimator.early_stopping import (
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from components.estimator.estimator import Estimator
from components.estimator.exporter import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
)
from components.estimator.extenders import add_metrics
from components.estimator.head import (
    BinaryClassHead,
    Head,
    LogisticRegressionHead,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
)
from components.estimator.hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    Hook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    ProfilerHook,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from components.estimator.keras import model_to_estimator
from components.estimator.model_fn import EstimatorSpec, ModeKeys, Scaffold
from components.estimator.parsing import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)
from components.estimator.run_config import RunConfig
from components.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from components.estimator.variables import get_global_step

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BestExporter",
    "BinaryClassHead",
    "BoostedTreesClassifier",
    "BoostedTreesEstimator",
    "BoostedTreesRegressor",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FeedFnHook",
    "FinalExporter",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "Head",
    "Hook",
    "LatestExporter",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
    "LoggingTensorHook",
    "LogisticRegressionHead",
    "ModeKeys",
    "MultiClassHead",
    "MultiHead",
    "MultiLabelHead",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "PoissonRegressionHead",
    "ProfilerHook",
    "RegressionHead",
    "RunConfig",
    "Scaffold",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "add_metrics",
    "classifier_parse_example_spec",
    "experimental",
    "export",
    "get_global_step",
    "inputs",
    "model_to_estimator",
    "regressor_parse_example_spec",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
    "train_and_evaluate",
]


def __dir__():
    # The public API, as tf.estimator 2.15 listed it (not this package's modules).
    return sorted(__all__)
