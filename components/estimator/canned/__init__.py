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


def _named_as_2_15_named_them(classes):
    """tf.estimator's canned classes were 2.15's V2 classes, `LinearClassifierV2` and so on:
    `type(est).__name__`, `repr(est)`, `__qualname__` and the TypeErrors of their
    `__init__` said so.  Each is also its module's attribute under that name (pickle finds
    a class by it)."""
    import sys

    for cls in classes:
        name = cls.__name__ + "V2"
        cls.__name__ = cls.__qualname__ = name
        if "__init__" in vars(cls):
            cls.__init__.__qualname__ = f"{name}.__init__"
        setattr(sys.modules[cls.__module__], name, cls)


_named_as_2_15_named_them(
    [
        BaselineClassifier,
        BaselineEstimator,
        BaselineRegressor,
        DNNClassifier,
        DNNEstimator,
        DNNRegressor,
        DNNLinearCombinedClassifier,
        DNNLinearCombinedEstimator,
        DNNLinearCombinedRegressor,
        LinearClassifier,
        LinearEstimator,
        LinearRegressor,
    ]
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
