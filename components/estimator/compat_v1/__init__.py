"""`tf.compat.v1.estimator` as tf.estimator 2.15 had it, on the kit.

Not the same as `tf.estimator` (`components.estimator`): its canned estimators
are 2.15's V1 classes (`compat_v1.canned`: loss summed over the batch, TF1
optimizers, V1 learning rates), its `Estimator` has TF1's `export_savedmodel`,
and it has `inputs`, `tpu` and a V1 `experimental`.  Everything else is
tf.estimator's, shared.  `components.estimator.install` makes
`tf.compat.v1.estimator` this.
"""

import importlib

from components.estimator import (
    BestExporter,
    BinaryClassHead,
    CheckpointSaverHook,
    CheckpointSaverListener,
    EstimatorSpec,
    EvalSpec,
    Exporter,
    FeedFnHook,
    FinalExporter,
    FinalOpsHook,
    GlobalStepWaiterHook,
    Head,
    LatestExporter,
    LoggingTensorHook,
    LogisticRegressionHead,
    ModeKeys,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    NanLossDuringTrainingError,
    NanTensorHook,
    PoissonRegressionHead,
    ProfilerHook,
    RegressionHead,
    RunConfig,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
    TrainSpec,
    VocabInfo,
    WarmStartSettings,
    add_metrics,
    classifier_parse_example_spec,
    export,
    inputs,
    regressor_parse_example_spec,
    train_and_evaluate,
)
from components.estimator.compat_v1 import experimental
from components.estimator.compat_v1.canned import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
    DNNClassifier,
    DNNEstimator,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    Estimator,
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
)


def __getattr__(name):
    # `tpu` (TPUEstimator on CPUs and GPUs) is imported on first use: most
    # programs never touch it.
    if name == "tpu":
        return importlib.import_module("components.estimator.tpu")
    raise AttributeError(f"module 'tf.compat.v1.estimator' has no attribute {name!r}")


__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BestExporter",
    "BinaryClassHead",
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
    "inputs",
    "regressor_parse_example_spec",
    "tpu",
    "train_and_evaluate",
]


def __dir__():
    # The public API, as tf.estimator 2.15 listed it (not this package's modules).
    return sorted(__all__)
