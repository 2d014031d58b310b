"""tf.compat.v1.estimator.Estimator: 2.15's base class, whose subclass tf.estimator's was.

Its own module, below both namespaces: `tf.compat.v1.estimator` gives it, and
`add_metrics` returns one, as 2.15's did.
"""

from components.estimator import estimator as estimator_lib


class _EveryEstimatorIsV1(type):
    """In 2.15 tf.estimator.Estimator subclassed tf.compat.v1.estimator.Estimator, so
    `isinstance(x, tf.compat.v1.estimator.Estimator)` held for every Estimator: here the
    V1 class subclasses the V2 one, and this check says so for the V1 class itself."""

    def __instancecheck__(cls, instance):
        if cls is Estimator:
            return isinstance(instance, estimator_lib.Estimator)
        return super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass):
        if cls is Estimator:
            return issubclass(subclass, estimator_lib.Estimator)
        return super().__subclasscheck__(subclass)


class Estimator(estimator_lib.Estimator, metaclass=_EveryEstimatorIsV1):
    """tf.compat.v1.estimator.Estimator: the Estimator, with TF1's `export_savedmodel`."""

    export_savedmodel = estimator_lib.tf1_export_savedmodel
