"""TFMA 0.4x's evaluation of an EvalSavedModel, for TFX 1.15's unchanged `EvalConfig`
(`ModelSpec(signature_name="eval")`), which TFMA 0.52 cannot read.

The eval model is the Estimator's EVAL graph (tfma_export.py): its `eval` signature takes
serialized labelled examples and gives each of the model_fn's `eval_metric_ops` as an
update op and a value. A slice's metrics are the values after its examples have gone
through the update ops (the metrics' local variables reset first), as TFMA 0.4x computed
them, plus `example_count`. Slices are the `slicing_specs` over the raw examples' features.
Thresholds (value and change, the baseline's eval model computed alike) are validated by
TFMA 0.52's own validator; a threshold on a metric the model does not report fails,
naming it.
"""

import itertools

from tensorflow_model_analysis.evaluators import metrics_validator
from tensorflow_model_analysis.metrics import metric_specs
from tensorflow_model_analysis.writers import metrics_plots_and_validations_writer as writer

EVAL_SIGNATURE = "eval"
EXAMPLE_COUNT = "example_count"
_BATCH = 1000
_PREFIX, _VALUE, _UPDATE = "metrics/", "/value", "/update_op"
# The MetricConfig class names computed besides the model's metrics, by the name reported.
_COUNTED = {"ExampleCount": EXAMPLE_COUNT}


def reads_eval_saved_model(eval_config):
    """Whether a model spec of `eval_config` names TFMA 0.4x's EvalSavedModel."""
    return any(
        spec.signature_name == EVAL_SIGNATURE or spec.model_type == "tfma_eval"
        for spec in eval_config.model_specs
    )


class EvalModel:
    """A loaded eval model: its metrics over a list of serialized examples."""

    def __init__(self, path):
        import tensorflow as tf

        self.path = path
        self._graph = tf.Graph()
        self._session = tf.compat.v1.Session(graph=self._graph)
        with self._graph.as_default():
            meta_graph = tf.compat.v1.saved_model.loader.load(self._session, ["eval"], path)
            signature = meta_graph.signature_def.get(EVAL_SIGNATURE)
            if signature is None or len(signature.inputs) != 1:
                raise ValueError(
                    f"Evaluator: the eval model at {path} has no {EVAL_SIGNATURE!r} signature "
                    "over one input of serialized examples (TFMA 0.4x's EvalSavedModel, as "
                    "tfma.export.export_eval_savedmodel writes it)."
                )
            outputs = signature.outputs
            self.names = sorted(
                key[len(_PREFIX) : -len(_VALUE)]
                for key in outputs
                if key.startswith(_PREFIX) and key.endswith(_VALUE)
            )
            self._input = next(iter(signature.inputs.values())).name
            self._updates = [outputs[_PREFIX + name + _UPDATE].name for name in self.names]
            self._values = {name: outputs[_PREFIX + name + _VALUE].name for name in self.names}
            self._reset = tf.compat.v1.variables_initializer(tf.compat.v1.local_variables())

    def metrics(self, serialized):
        """{metric name: value} over `serialized`, and `example_count`."""
        self._session.run(self._reset)
        for start in range(0, len(serialized), _BATCH):
            self._session.run(self._updates, {self._input: serialized[start : start + _BATCH]})
        values = {name: float(value) for name, value in self._session.run(self._values).items()}
        return {**values, EXAMPLE_COUNT: float(len(serialized))}


def _values(example, feature):
    """The values of `feature` in a `tf.train.Example`, as TFMA slices by them."""
    if feature not in example.features.feature:
        return []
    value = example.features.feature[feature]
    kind = value.WhichOneof("kind")
    return list(getattr(value, kind).value) if kind else []


def _matches(values, wanted):
    return any((v.decode() if isinstance(v, bytes) else str(v)) == wanted for v in values)


def slice_keys(example, slicing_spec):
    """The slice keys ((feature, value), ...) of `slicing_spec` a `tf.train.Example` is in:
    one per combination of its values of the spec's `feature_keys`, when it holds each of
    the spec's `feature_values`; () for the overall slice."""
    fixed = []
    for feature, wanted in sorted(slicing_spec.feature_values.items()):
        values = _values(example, feature)
        if not _matches(values, wanted):
            return []
        fixed.append((feature, next(v for v in values if _matches([v], wanted))))
    columns = [[(f, v) for v in _values(example, f)] for f in sorted(slicing_spec.feature_keys)]
    return [tuple(sorted(fixed + list(combination))) for combination in itertools.product(*columns)]


def _order(key):
    return [(feature, type(value).__name__, value) for feature, value in key]


def slices(serialized_examples, slicing_specs):
    """{slice key: [serialized example]} over `slicing_specs` (the overall slice alone when
    there are none), in the order of the specs and, within one, of the keys' values."""
    import tensorflow as tf

    specs = list(slicing_specs) or [None]
    found = [{} for _ in specs]
    for serialized in serialized_examples:
        example = tf.train.Example.FromString(serialized)
        for index, spec in enumerate(specs):
            for key in slice_keys(example, spec) if spec is not None else [()]:
                found[index].setdefault(key, []).append(serialized)
    ordered = {}
    for by_key in found:
        for key in sorted(by_key, key=_order):
            ordered.setdefault(key, by_key[key])
    return ordered


def check_metrics(eval_config, reported, path):
    """Refuses what the eval model cannot give: a `MetricConfig` other than ExampleCount,
    and a threshold on a metric it does not report (`reported`: its names)."""
    for spec in eval_config.metrics_specs:
        for metric in spec.metrics:
            if metric.class_name not in _COUNTED:
                raise ValueError(
                    f"Evaluator: MetricConfig(class_name={metric.class_name!r}) is not "
                    f"computed for the eval model at {path} (ModelSpec(signature_name="
                    f"{EVAL_SIGNATURE!r})): its metrics are the Estimator's own eval_metric_ops "
                    f"{sorted(reported)}; name those in thresholds."
                )
    thresholds = metric_specs.metric_thresholds_from_metrics_specs(
        eval_config.metrics_specs, eval_config=eval_config
    )
    for key in thresholds:
        if key.name not in reported or key.sub_key or key.aggregation_type:
            raise ValueError(
                f"Evaluator: a threshold is set on the metric {key.name!r}, which the eval "
                f"model at {path} does not report; it reports {sorted(reported)}."
            )
    return thresholds


def validation_result(eval_config, thresholds, metrics_by_slice, candidate, baseline):
    """TFMA 0.52's `ValidationResult` of `thresholds` over `metrics_by_slice` ({slice key:
    {model name: {metric: value}}}); `candidate` and `baseline` are the models' names."""
    combine = writer.CombineValidations(eval_config, rubber_stamp=baseline is None)
    result = combine.create_accumulator()
    for key, by_model in metrics_by_slice.items():
        values = {}
        for threshold_key in thresholds:
            model = by_model[threshold_key.model_name or candidate]
            value = model[threshold_key.name]
            if threshold_key.is_diff:
                value -= by_model[baseline][threshold_key.name]
            values[threshold_key] = value
        result = combine.add_input(
            result, metrics_validator.validate_metrics((key, values), eval_config)
        )
    return combine.extract_output(result)
