"""Canned estimators: thin front doors over `Estimator` and a head."""

from components.trainer.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from components.trainer.estimator.canned.dnn import DNNClassifier, DNNRegressor
from components.trainer.estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
)
from components.trainer.estimator.canned.linear import LinearClassifier, LinearRegressor

__all__ = [
    "BaselineClassifier",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
]
