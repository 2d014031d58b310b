"""The tf.estimator API on TensorFlow 2.21: change `tf.estimator.X` to `estimator.X`.

    from components.trainer import estimator
    classifier = estimator.DNNLinearCombinedClassifier(...)

Importing it makes `tf.keras` mean Keras 2 (tf_keras), as in tf.estimator's
days, when `tf.keras` has not been used yet (see `legacy_keras`).
"""

from components.trainer.estimator import legacy_keras

legacy_keras.use_legacy_keras()

from components.trainer.estimator import experimental, export, inputs
from components.trainer.estimator.canned import (
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
from components.trainer.estimator.extenders import add_metrics
from components.trainer.estimator.head import (
    BinaryClassHead,
    Head,
    LogisticRegressionHead,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
)
from components.trainer.estimator.hooks import (
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
from components.trainer.estimator.keras import model_to_estimator
from components.trainer.estimator.model_fn import EstimatorSpec, ModeKeys, Scaffold
from components.trainer.estimator.parsing import (
    classifier_parse_example_spec,
    regressor_parse_example_spec,
)
from components.trainer.estimator.run_config import RunConfig
from components.trainer.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from components.trainer.estimator.variables import get_global_step

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
