"""Canned estimators: thin front doors over `Estimator` and a head."""

from components.estimator.canned.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from components.estimator.canned.boosted_trees import (
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from components.estimator.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from components.estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from components.estimator.canned.linear import (
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
)

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BoostedTreesClassifier",
    "BoostedTreesEstimator",
    "BoostedTreesRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
]
