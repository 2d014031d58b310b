"""TFMA metrics the stock set lacks, computed in Beam like TFMA's own (no Keras in the loop).

- `RootMeanSquaredError`: the square root of TFMA's `MeanSquaredError`, derived from it.
- `SparseLogLoss` and `MultiClassAccuracy`: for a class-id (or class-name) label against
  the head's `probabilities`; TFMA's `CategoricalCrossEntropy` wants one-hot labels, and
  its top-k precision reports under a sub key that a blessing threshold does not match.

The `eval_config.json` the Evaluator writes names them by
`MetricConfig(class_name=..., module="components.evaluator.metrics")`, so that stock TFMA
computes the same metrics from it (the Evaluator itself computes them in totals.py).
"""

import dataclasses
import math

import apache_beam as beam
import numpy as np
from tensorflow_model_analysis.metrics import mean_regression_error, metric_types, metric_util

RMSE_NAME = "root_mean_squared_error"
LOG_LOSS_NAME = "log_loss"
ACCURACY_NAME = "accuracy"
# Probabilities are clipped here so one confident miss costs a large, finite loss.
_EPSILON = 1e-15


class RootMeanSquaredError(metric_types.Metric):
    """sqrt(mean squared error): the regression error in the label's own units."""

    def __init__(self, name=RMSE_NAME):
        super().__init__(metric_util.merge_per_key_computations(_rmse_computations), name=name)


def _rmse_computations(
    name=RMSE_NAME,
    eval_config=None,
    model_name="",
    output_name="",
    sub_key=None,
    aggregation_type=None,
    class_weights=None,
    example_weighted=False,
):
    mse = mean_regression_error.MeanSquaredError(name=f"_{name}_mean_squared_error")
    computations = mse.computations(
        eval_config=eval_config,
        model_names=[model_name],
        output_names=[output_name],
        sub_keys=[sub_key],
        aggregation_type=aggregation_type,
        class_weights=class_weights,
        example_weighted=example_weighted,
    )
    mse_key = computations[-1].keys[-1]
    key = metric_types.MetricKey(
        name=name,
        model_name=model_name,
        output_name=output_name,
        sub_key=sub_key,
        example_weighted=example_weighted,
    )

    def root_of_mean_squared_error(metrics):
        return {key: math.sqrt(metrics[mse_key])}

    computations.append(
        metric_types.DerivedMetricComputation(keys=[key], result=root_of_mean_squared_error)
    )
    return computations


metric_types.register_metric(RootMeanSquaredError)


def _true_class(label):
    """The class id of a label TFMA hands over: an id, or one-hot when the head gave
    class names (`all_classes`)."""
    label = np.asarray(label).reshape(-1)
    return int(np.argmax(label)) if label.size > 1 else int(label[0])


def _log_loss(label, probabilities):
    return -math.log(min(max(probabilities[_true_class(label)], _EPSILON), 1.0))


def _hit(label, probabilities):
    return float(np.argmax(probabilities) == _true_class(label))


class SparseLogLoss(metric_types.Metric):
    """Mean of -log(probability the model gave the true class)."""

    def __init__(self, name=LOG_LOSS_NAME):
        super().__init__(_per_example_mean(_log_loss), name=name)


class MultiClassAccuracy(metric_types.Metric):
    """Share of examples whose most probable class is the true one."""

    def __init__(self, name=ACCURACY_NAME):
        super().__init__(_per_example_mean(_hit), name=name)


def _per_example_mean(per_example):
    """TFMA computations of the weighted mean of `per_example(label, probabilities)`."""

    def computations(
        name=None,
        eval_config=None,
        model_name="",
        output_name="",
        sub_key=None,
        aggregation_type=None,
        class_weights=None,
        example_weighted=False,
    ):
        key = metric_types.MetricKey(
            name=name,
            model_name=model_name,
            output_name=output_name,
            sub_key=sub_key,
            example_weighted=example_weighted,
        )
        return [
            metric_types.MetricComputation(
                keys=[key],
                preprocessors=None,
                combiner=_MeanCombiner(eval_config, key, per_example),
            )
        ]

    return metric_util.merge_per_key_computations(computations)


metric_types.register_metric(SparseLogLoss)
metric_types.register_metric(MultiClassAccuracy)


@dataclasses.dataclass
class _WeightedSum:
    total: float = 0.0
    weight: float = 0.0


class _MeanCombiner(beam.CombineFn):
    def __init__(self, eval_config, key, per_example):
        self._eval_config = eval_config
        self._key = key
        self._per_example = per_example

    def create_accumulator(self):
        return _WeightedSum()

    def add_input(self, accumulator, element):
        for label, probabilities, weight in metric_util.to_label_prediction_example_weight(
            element,
            eval_config=self._eval_config,
            model_name=self._key.model_name,
            output_name=self._key.output_name,
            example_weighted=self._key.example_weighted,
            flatten=False,
        ):
            w = metric_util.safe_to_scalar(weight)
            probabilities = np.asarray(probabilities, dtype=np.float64).reshape(-1)
            accumulator.total += w * self._per_example(label, probabilities)
            accumulator.weight += w
        return accumulator

    def merge_accumulators(self, accumulators):
        merged = _WeightedSum()
        for accumulator in accumulators:
            merged.total += accumulator.total
            merged.weight += accumulator.weight
        return merged

    def extract_output(self, accumulator):
        value = accumulator.total / accumulator.weight if accumulator.weight else float("nan")
        return {self._key: value}
