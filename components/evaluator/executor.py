"""Evaluator executor: the task's metrics per slice for the candidate and the baseline model,
a batch of examples at a time, written in TFMA's format; blessing by the gate.

The eval split is read a TFRecord file at a time (components/examples_reader.py). Each batch
of serialized examples goes through each model's `transform_features` signature (the label,
as training saw it) and `predict` signature (the head's output), and becomes per-slice
totals (totals.py) that Beam merges. The stock TFMA Evaluator computes the same metrics one
example at a time in Python; on a million-row run it was three quarters of the run.

Output (outputs.py), readable by `tfma.load_eval_result`, `tfma.load_metrics`, `tfma.load_plots` and
`tfma.load_validation_result`: `metrics-*`, `plots-*` and `attributions-*` (TFRecords of
`MetricsForSlice` and `PlotsForSlice`, one per slice: the plots of plots.py; no attributions
are computed), `validations.tfrecord`
(a `ValidationResult`) and `eval_config.json`; the blessing gets a BLESSED or NOT_BLESSED file
and the custom properties TFX's own Evaluator sets, which the latest-blessed-model resolver
reads.
"""

import json
import math
from typing import Any

import apache_beam as beam
import numpy as np
import pyarrow.compute as pc
from tensorflow_model_analysis.proto import (
    config_pb2,
    validation_result_pb2,
)
from tfx import types
from tfx.components.evaluator import executor as stock_evaluator
from tfx.types import artifact_utils
from tfx.utils import path_utils

from components.beam_executor import BeamExecutor
from components.evaluator import plots as plots_lib
from components.evaluator import totals as totals_lib
from components.evaluator.eval_config import build_eval_config, gate_threshold
from components.evaluator.outputs import (
    BASELINE,
    CANDIDATE,
    EvaluatedModel,
    bless,
    metric_key,
    slice_key_proto,
    write_eval_config,
    write_slices,
)
from components.evaluator.tasks import CHANGE_CHECK, VALUE_CHECK, BlessingGate, gate_checks
from components.examples_reader import serialized_batches, split_files
from components.progress import CountRows

EVAL_SPLIT = "eval"
# The head output each task is scored on, in order of preference.
_PREDICTION_KEYS = {
    "binary": ("logistic", "probabilities"),
    "multiclass": ("probabilities",),
    "regression": ("predictions",),
}


def slice_groups(n, record_batch, slice_features):
    """(rows, groups, keys): row i of the batch of `n` examples is in slice keys[groups[j]]
    for each j with rows[j] == i. Key () is the overall slice; ((feature, value),) a
    feature's value slice, one per value an example holds (none when it holds none), as
    TFMA slices. `record_batch`: the examples decoded (None without `slice_features`)."""
    rows, groups, keys = [np.arange(n)], [np.zeros(n, dtype=np.int64)], [()]
    for feature in slice_features:
        index = record_batch.schema.get_field_index(feature)
        if index < 0:
            continue  # no example of the batch holds it
        column = record_batch.column(index)
        values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
        if not len(values):
            continue
        unique, inverse = np.unique(values, return_inverse=True)
        rows.append(pc.list_parent_indices(column).to_numpy())
        groups.append(inverse + len(keys))
        # numpy numbers as Python ones; bytes come out of Arrow as Python bytes already.
        keys.extend(
            ((feature, value.item() if isinstance(value, np.generic) else value),)
            for value in unique
        )
    return np.concatenate(rows), np.concatenate(groups), keys


def _one_column(array, n, what):
    values = np.asarray(array)
    if values.size != n:
        raise ValueError(f"{what} has {values.size} values for {n} examples; expected one each.")
    return values.reshape(n)


class _Scorer:
    """A loaded model's labels and predictions for a batch of serialized examples."""

    def __init__(self, path, task, transformed_label_key, num_classes):
        import tensorflow as tf

        self._model = tf.saved_model.load(path)
        self._path = path
        self._task = task
        self._label = transformed_label_key
        self._num_classes = num_classes
        for signature in ("transform_features", "predict"):
            if signature not in self._model.signatures:
                raise ValueError(
                    f"The model at {path} has no {signature!r} signature; it has "
                    f"{sorted(self._model.signatures)}. Export it with the Trainer."
                )

    def __call__(self, serialized):
        import tensorflow as tf

        examples = tf.constant(serialized)
        transformed = self._model.signatures["transform_features"](examples=examples)
        predict = self._model.signatures["predict"]
        # By keyword: a loaded signature called with its input positionally took 100x longer
        # on a 2,000-column model (18 s against 0.16 s a batch of 800, TF 2.21).
        outputs = {k: v.numpy() for k, v in predict(examples=examples).items()}
        if self._label not in transformed:
            raise ValueError(
                f"The label {self._label!r} is not among the transformed features of "
                f"the model at {self._path}: {sorted(transformed)}."
            )
        n = len(serialized)
        labels = _one_column(
            transformed[self._label].numpy(),
            n,
            f"label {self._label!r}",
        )
        if labels.dtype.kind in "SOU":
            labels = self._class_ids(labels, outputs)
        return labels.astype(np.float64), self._predictions(outputs, n)

    def _class_ids(self, labels, outputs):
        """String labels as the ids of the classes the head names (`all_classes`)."""
        if "all_classes" not in outputs:
            raise ValueError(
                f"The label {self._label!r} holds strings but the model at {self._path} "
                "names no classes (no 'all_classes' output) to map them to."
            )
        ids = {name: i for i, name in enumerate(outputs["all_classes"][0])}
        unknown = sorted({label for label in labels if label not in ids})
        if unknown:
            raise ValueError(
                f"Label values {unknown[:5]} of {self._label!r} are not classes of the "
                f"model at {self._path} ({sorted(ids)})."
            )
        return np.array([ids[label] for label in labels])

    def _predictions(self, outputs, n):
        keys = _PREDICTION_KEYS[self._task]
        key = next((k for k in keys if k in outputs), None)
        if key is None:
            raise ValueError(
                f"The model at {self._path} has none of the {self._task} outputs "
                f"{list(keys)} in its 'predict' signature; it has "
                f"{sorted(outputs)}."
            )
        predictions = np.asarray(outputs[key], dtype=np.float64).reshape(n, -1)
        if self._task == "multiclass":
            if predictions.shape[1] != self._num_classes:
                raise ValueError(
                    f"The model at {self._path} gives {predictions.shape[1]} class "
                    f"probabilities; the pipeline has num_classes = {self._num_classes}."
                )
            return predictions
        # A binary head's `probabilities` are (P(0), P(1)); every other output is one column.
        return predictions[:, -1]


class _ScoreBatch(beam.DoFn):
    """Serialized examples -> ((model name, slice key), totals) for each model and slice."""

    def __init__(self, models, task, num_classes, transformed_label_key, slice_features):
        self._models = models
        self._task = task
        self._num_classes = num_classes
        self._label = transformed_label_key
        self._slice_features = slice_features

    def setup(self):
        from tfx_bsl.coders import example_coder

        self._metrics = totals_lib.task_for(self._task, self._num_classes)
        self._scorers = [
            (
                model.name,
                _Scorer(model.path, self._task, self._label, self._num_classes),
            )
            for model in self._models
        ]
        self._decoder = example_coder.ExamplesToRecordBatchDecoder()

    def process(self, serialized):
        # Decoded only to find the slices: on a wide table, decoding every feature cost
        # more than scoring.
        decoded = self._decoder.DecodeBatch(list(serialized)) if self._slice_features else None
        rows, groups, keys = slice_groups(len(serialized), decoded, self._slice_features)
        for name, scorer in self._scorers:
            labels, predictions = scorer(serialized)
            if self._task == "multiclass":
                bad = (labels < 0) | (labels >= self._num_classes) | (labels != np.round(labels))
                if bad.any():
                    raise ValueError(
                        f"Label {self._label!r} holds {labels[bad][0]:g}, which is not a "
                        f"class id in 0..{self._num_classes - 1}."
                    )
            totals = self._metrics.totals(
                labels[rows], predictions[rows], np.ones(len(rows)), groups, len(keys)
            )
            for key, slice_totals in zip(keys, totals, strict=True):
                yield (name, key), slice_totals


def gate_failures(gate: BlessingGate, candidate: float, baseline: float | None):
    """[(check, why)]: how `candidate` (the gate metric on the overall slice) fails the gate's
    checks (`gate_checks`), check being VALUE_CHECK or CHANGE_CHECK; [] if it passes.

    The change checks need a baseline: a first model is judged by the threshold alone.
    """
    failures = []
    name = gate.metric
    for check in gate_checks(gate):
        if check.kind == VALUE_CHECK:
            beyond = candidate < check.limit if gate.higher_is_better else candidate > check.limit
            if beyond or math.isnan(candidate):
                why = f"{name} = {candidate:.6g} is {check.worse} the threshold {check.limit:g}"
                failures.append((VALUE_CHECK, why))
            continue
        if baseline is None:
            break
        # Positive when the candidate is worse than the baseline.
        loss = baseline - candidate if gate.higher_is_better else candidate - baseline
        if math.isnan(loss):
            return [*failures, (CHANGE_CHECK, f"{name} = {candidate:.6g}: no change to judge")]
        against = f"{check.worse} the baseline's {baseline:.6g}"
        if check.relative:
            relative = loss / abs(baseline) if baseline else math.inf
            if loss > 0 and relative > check.limit:
                why = f"is {relative:.2%} {against} (at most {check.limit:.2%} allowed)"
                failures.append((CHANGE_CHECK, f"{name} = {candidate:.6g} {why}"))
        elif loss > check.limit:
            why = f"is {loss:.6g} {against} (at most {check.limit:g} allowed)"
            failures.append((CHANGE_CHECK, f"{name} = {candidate:.6g} {why}"))
    return failures


def validation_result(gate, overall_by_model):
    """The `ValidationResult` of the gate on the overall slice, as TFMA reports it: a value
    check fails on the candidate's value, a change check on its difference (`is_diff`)."""
    candidate_name = CANDIDATE if BASELINE in overall_by_model else ""
    candidate = overall_by_model[candidate_name][gate.metric]
    baseline = overall_by_model.get(BASELINE, {}).get(gate.metric)
    result = validation_result_pb2.ValidationResult()
    result.validation_details.slicing_details.add(
        slicing_spec=config_pb2.SlicingSpec(), num_matching_slices=1
    )
    failures = gate_failures(gate, candidate, baseline)
    result.validation_ok = not failures
    if failures:
        per_slice = result.metric_validations_per_slice.add(slice_key=slice_key_proto(()))
        for check, message in failures:
            threshold = config_pb2.MetricThreshold()
            getattr(threshold, check).CopyFrom(getattr(gate_threshold(gate), check))
            is_change = check == CHANGE_CHECK
            failure = per_slice.failures.add(
                metric_key=metric_key(gate.metric, candidate_name, is_diff=is_change),
                metric_threshold=threshold,
                message=message,
            )
            value = candidate - baseline if is_change else candidate
            failure.metric_value.double_value.value = value
    return result


def _slice_order(key, slice_features):
    """Overall first, then each slicing feature's slices in the configured order, by value."""
    if not key:
        return (-1, "")
    (feature, value), *_ = key
    return (slice_features.index(feature), repr(value))


def write_evaluation(results, output_uri, slice_features, gate):
    """Writes the metrics, plots, empty attributions and the validation result of `results`
    ([((model name, slice key), ({metric: value}, {plot name: PlotData}))]) into
    `output_uri`."""
    by_slice, plots_by_slice = {}, {}
    for (model, key), (values, plots) in results:
        by_slice.setdefault(key, {})[model] = values
        plots_by_slice.setdefault(key, {})[model] = plots
    if () not in by_slice:
        raise ValueError("The eval split holds no examples: there is nothing to evaluate.")
    keys = sorted(by_slice, key=lambda key: _slice_order(key, slice_features))
    write_slices(output_uri, keys, by_slice, plots_by_slice, validation_result(gate, by_slice[()]))


class Executor(BeamExecutor, stock_evaluator.Executor):
    """Scores the eval split of `examples` with `model` (and `baseline_model`), writes the
    evaluation, and blesses `model` when the gate passes.

    A subclass of TFX's Evaluator executor only so that TFX's Vertex entry point treats it
    as one: that entry point turns the blessing's model ids into Vertex resource names only
    for Evaluator executors, and the latest-blessed-model resolver needs those names there.
    Nothing of the stock executor's is used."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(input_dict["examples"])
        model = artifact_utils.get_single_instance(input_dict["model"])
        baseline = (input_dict.get("baseline_model") or [None])[0]
        evaluation = artifact_utils.get_single_instance(output_dict["evaluation"])
        blessing = artifact_utils.get_single_instance(output_dict["blessing"])
        task = exec_properties["task"]
        num_classes = exec_properties.get("num_classes") or None
        transformed_label_key = exec_properties["transformed_label_key"]
        slice_features = json.loads(exec_properties["slice_features"])
        gate = BlessingGate(**json.loads(exec_properties["blessing_gate"]))

        models = [EvaluatedModel("", path_utils.serving_model_path(model.uri))]
        if baseline is not None:
            models = [
                EvaluatedModel(CANDIDATE, models[0].path),
                EvaluatedModel(BASELINE, path_utils.serving_model_path(baseline.uri)),
            ]
        files = split_files(examples, EVAL_SPLIT)
        if not files:
            raise ValueError(f"{examples.uri} has no {EVAL_SPLIT!r} split to evaluate on.")
        metrics = totals_lib.task_for(task, num_classes)
        with self._make_beam_pipeline() as pipeline:
            _ = (
                pipeline
                | "Files" >> beam.Create(files)
                | "Spread" >> beam.Reshuffle()
                # Typed, so that Beam sizes a batch by its records' lengths (its counters'
                # estimate) rather than by pickling it
                | "Read" >> beam.FlatMap(serialized_batches).with_output_types(list[bytes])
                | "Progress" >> beam.ParDo(CountRows("scoring eval")).with_output_types(list[bytes])
                | "Score"
                >> beam.ParDo(
                    _ScoreBatch(models, task, num_classes, transformed_label_key, slice_features)
                )
                | "Merge" >> beam.CombinePerKey(lambda parts: totals_lib.merge(list(parts)))
                | "Metrics"
                >> beam.MapTuple(
                    lambda key, totals: (
                        key,
                        (metrics.values(totals), plots_lib.plot_data(task, totals)),
                    )
                )
                | "Gather" >> beam.combiners.ToList()
                | "Write" >> beam.Map(write_evaluation, evaluation.uri, list(slice_features), gate)
            )
        write_eval_config(
            evaluation.uri,
            build_eval_config(task, transformed_label_key, slice_features, gate, num_classes),
            models,
        )
        bless(blessing, evaluation.uri, model, baseline)
