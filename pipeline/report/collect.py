"""Reading one run back into plain data (dicts, lists, numbers, text) for the report: the
run's record from ML Metadata (`pipeline.history`), then the artifacts it wrote, in their
standard formats: StatisticsGen's and ExampleValidator's (tensorflow_metadata), the Trainer's
TensorBoard event files, the Evaluator's TFMA output (metrics, config, validation result), the
Pusher's record. TensorFlow is imported only to read the last two kinds, once the command runs.
"""

import contextlib
import datetime
import json
import logging
import math
import os

from components.evaluator.tasks import TASK_METRICS, BlessingGate
from components.example_gen.layout import REJECTED_DIR
from components.example_validator import drift
from components.example_validator.layout import split_anomalies_path
from components.serving_dir import versions
from components.statistics_gen.layout import load_statistics, model_statistics_uri
from pipeline import metadata, stats
from pipeline.history import LEFT_OUT_PROPERTY
from pipeline.report.plot_data import read_plots

_EVENTS_PREFIX = "events.out.tfevents"
# TFMA metric class -> the key it reports under (components/evaluator/tasks.py).
_METRIC_KEYS = {name: key for rows in TASK_METRICS.values() for name, _, key in rows}


def find_run(past, run_id=None):
    """The `pipeline_run` context of `run_id` (a run id as `runs` lists it), or the newest run;
    RuntimeError naming the runs there are when there is no such run."""
    if not past.run_contexts:
        raise RuntimeError(f"No run of pipeline {past.pipeline_name!r} is recorded yet.")
    if run_id is None:
        return past.run_contexts[0]
    for run in past.run_contexts:
        if run.name == run_id:
            return run
    known = ", ".join(run.name for run in past.run_contexts)
    raise RuntimeError(
        f"No run {run_id!r} of pipeline {past.pipeline_name!r}; its runs, newest first: {known} "
        "(`python -m pipeline runs`)."
    )


def collect(past, run):
    """Everything the page shows, as plain data."""
    record = past.run_record(run, with_metrics=False)  # metrics: every slice, read below
    executions = past.run_executions[run.id]
    evaluator = next((e for e in executions if past.node_of.get(e.id) == "Evaluator"), None)
    evaluator_inputs = past.inputs.get(evaluator.id, {}) if evaluator is not None else {}
    baseline_model = (evaluator_inputs.get("baseline_model") or [None])[0]
    statistics = past.node_output(run, "StatisticsGen", "statistics")
    evaluation = past.node_output(run, "Evaluator", "evaluation")
    return {
        "pipeline": past.pipeline_name,
        "record": record,
        "generated": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "components": _components(past, executions),
        "artifacts": _artifacts(past, executions),
        "baseline_model": _baseline_model(past, baseline_model),
        "statistics": (
            _statistics(statistics, _drift_baseline(past, executions))
            if statistics is not None and os.path.isdir(statistics.uri)
            else None
        ),
        "input": _input(past.node_output(run, "ExampleGen", "examples"), run),
        "anomalies": _anomalies(past.node_output(run, "ExampleValidator", "anomalies")),
        "training": _training(past.node_output(run, "Trainer", "model_run")),
        "evaluation": (
            _evaluation(
                evaluation.uri,
                metadata.custom_property(evaluator, "blessing_gate"),
                metadata.custom_property(evaluator, "eval_config"),
            )
            if evaluation is not None and os.path.isdir(evaluation.uri)
            else None
        ),
        "blessing": _blessing_record(past.node_output(run, "Evaluator", "blessing")),
        "push": _push(past.node_output(run, "Pusher", "pushed_model")),
    }


def _error(execution):
    """The message TFX recorded with a failed execution, if any."""
    recorded = metadata.custom_property(execution, "__execution_result__")
    try:
        return json.loads(recorded).get("resultMessage") if recorded else None
    except ValueError:
        return None


def _components(past, executions):
    started = min((e.create_time_since_epoch for e in executions), default=0)
    return [
        {
            "node": past.node_of.get(e.id, past.execution_type[e.id]),
            "state": metadata.execution_state(e),
            "start_s": (e.create_time_since_epoch - started) / 1000,
            "duration_s": (e.last_update_time_since_epoch - e.create_time_since_epoch) / 1000,
            "error": _error(e),
        }
        for e in executions
    ]


def _artifacts(past, executions):
    """(node, output key, artifact type, uri) of what each component of the run output or
    reused from the cache."""
    return [
        (past.node_of.get(e.id, ""), key, past.artifact_type[a.id], a.uri)
        for e in executions
        for key, group in sorted(past.outputs.get(e.id, {}).items())
        for a in group
    ]


def _baseline_model(past, model):
    """The model the Evaluator compared with (the latest blessed one), and the run behind it."""
    if model is None:
        return None
    producer = past.producer.get(model.id)
    run = past.run_of.get(producer) if producer is not None else None
    return {"uri": model.uri, "run_id": run.name if run is not None else None}


def _drift_baseline(past, executions):
    """The training statistics of the baseline model a component of the run was given, as
    `python -m pipeline stats` finds them for the latest run; None without one."""
    for execution in executions:
        for model in past.inputs.get(execution.id, {}).get("baseline_model", []):
            uri = model_statistics_uri(model.uri)
            if os.path.isdir(uri):
                return uri
    return None


def _statistics(artifact, baseline_uri):
    """Per feature: its summary row per split (`pipeline.stats`, with drift against the
    baseline when there is one) and what its chart draws per split, in the artifact's split
    order (train first)."""
    uri = artifact.uri
    summary = stats.statistics_report(uri, baseline_uri)
    loaded = load_statistics(uri)
    named = json.loads(artifact.properties["split_names"].string_value or "[]")
    order = [s for s in named if s in loaded] + sorted(set(loaded) - set(named))
    features = {}
    for split in order:
        lists = loaded[split]
        by_name = drift.features_by_name(lists.datasets[0])
        for row in summary["splits"][split]["features"]:
            entry = features.setdefault(row["name"], {"type": row["type"], "splits": {}})
            entry["splits"][split] = {"row": row, "chart": _chart_data(by_name[row["name"]])}
    return {
        "uri": uri,
        "baseline": summary.get("baseline"),
        "splits": {s: summary["splits"][s]["num_examples"] for s in order},
        "features": features,
    }


def _chart_data(feature):
    """Numbers: the equal-width histogram's buckets as (low, high, % of values); strings:
    {value: % of values} of the listed values (drift's shares)."""
    if feature.HasField("string_stats"):
        shares = drift.value_shares(feature.string_stats)
        shares.pop(drift.OTHER_VALUES, None)
        return {"kind": "values", "shares": {k: 100 * v for k, v in shares.items()}}
    from tensorflow_metadata.proto.v0 import statistics_pb2

    standard = statistics_pb2.Histogram.STANDARD
    for histogram in feature.num_stats.histograms:
        total = sum(b.sample_count for b in histogram.buckets)
        if histogram.type == standard and total:
            return {
                "kind": "histogram",
                "buckets": [
                    (b.low_value, b.high_value, 100 * b.sample_count / total)
                    for b in histogram.buckets
                ],
            }
    return {"kind": "histogram", "buckets": []}


def _input(examples, run):
    """The rows ExampleGen set aside (without a label, malformed) and where they are listed;
    the columns the auto preprocessing left out, with why (recorded on the run)."""
    custom = metadata.custom_property
    left_out = custom(run, LEFT_OUT_PROPERTY)
    return {
        "unlabeled": custom(examples, "num_unlabeled") or 0,
        "bad": custom(examples, "num_rejected") or 0,
        "rejected_dir": os.path.join(examples.uri, REJECTED_DIR) if examples else None,
        "left_out": [tuple(pair) for pair in json.loads(left_out)] if left_out else [],
    }


def _anomalies(artifact):
    """One dict per anomaly of the run's ExampleValidator output; None when it has none."""
    if artifact is None or not os.path.isdir(artifact.uri):
        return None
    from tensorflow_metadata.proto.v0 import anomalies_pb2

    found = []
    for split in json.loads(artifact.properties["split_names"].string_value):
        path = split_anomalies_path(artifact.uri, split)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            anomalies = anomalies_pb2.Anomalies.FromString(f.read())
        for column, info in sorted(anomalies.anomaly_info.items()):
            for reason in info.reason:
                found.append(
                    {
                        "split": split,
                        "column": column,
                        "kind": reason.short_description,
                        "severity": anomalies_pb2.AnomalyInfo.Severity.Name(info.severity).lower(),
                        "description": reason.description,
                    }
                )
    return {"uri": artifact.uri, "found": found}


def _scalar(tensor_proto):
    from tensorboard.util import tensor_util

    values = tensor_util.make_ndarray(tensor_proto).reshape(-1)
    # (Not text, such as the `checkpoint_path` an evaluation writes, as tf.estimator did.)
    return float(values[0]) if values.size == 1 and values.dtype.kind in "biuf" else None


@contextlib.contextmanager
def _tensorboard_warnings_held_back():
    """TensorBoard's reader warns of 'more than one graph event per run': a model_dir's
    events hold the graph once per train() call (as tf.estimator 2.15's did), which is
    nothing for the report's reader to act on."""
    reader_log = logging.getLogger("tensorboard")
    level = reader_log.level
    reader_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        reader_log.setLevel(level)


def _training(model_run):
    """The Trainer's scalars from its TensorBoard event files: {tag: {series: [(step, value)]}}
    (series `train` for the model folder itself, `eval` for its eval/, each prefixed by the
    candidate's name when several were fitted: `series` maps it to (candidate, kind)), and
    its settings."""
    if model_run is None or not os.path.isdir(model_run.uri):
        return None
    from tensorboard.backend.event_processing import event_accumulator

    curves, kinds = {}, {}
    for folder, _, names in sorted(os.walk(model_run.uri)):
        if not any(name.startswith(_EVENTS_PREFIX) for name in names):
            continue
        candidate, kind = _series_of(os.path.relpath(folder, model_run.uri))
        series = f"{candidate} {kind}".strip()
        kinds[series] = (candidate, kind)
        events = event_accumulator.EventAccumulator(
            folder, size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}
        )
        with _tensorboard_warnings_held_back():
            events.Reload()
        tags = events.Tags()
        for tag in tags["scalars"]:
            points = [(e.step, e.value) for e in events.Scalars(tag)]
            curves.setdefault(tag, {})[series] = points
        for tag in tags["tensors"]:  # TF2 summaries: scalars as rank-0 tensors
            points = [(e.step, _scalar(e.tensor_proto)) for e in events.Tensors(tag)]
            points = [(step, value) for step, value in points if value is not None]
            if points:
                curves.setdefault(tag, {})[series] = points
    custom = metadata.custom_property
    return {
        "uri": model_run.uri,
        "strategy": custom(model_run, "strategy"),
        "strategy_reason": custom(model_run, "strategy_reason"),
        "training_length": custom(model_run, "training_length"),
        "stop_reason": custom(model_run, "stop_reason"),
        "model_choice": json.loads(custom(model_run, "model_choice") or "null"),
        "curves": curves,
        "series": kinds,
        # A hook: {feature: gain} when the Trainer records a tree model's importances.
        "feature_importances": json.loads(custom(model_run, "feature_importances") or "null"),
    }


# The Trainer's folders of event files: candidates/<name>/ per candidate when several were
# fitted, fold-<k>/ in it per fold of a cross-validation (components/trainer/candidates.py),
# eval_validation/ for the held-out part.
_CANDIDATES_DIR = "candidates"
_KINDS = {"": "train", "eval_validation": "validation"}


def _series_of(relative):
    """(candidate or "", kind) of an event folder: the kind is train, validation, eval or
    the folder, after the fold (`fold-2 validation`) in a cross-validation."""
    parts = [] if relative == "." else relative.split(os.sep)
    candidate, fold = "", ""
    if len(parts) > 1 and parts[0] == _CANDIDATES_DIR:
        candidate, parts = parts[1], parts[2:]
        if parts and parts[0].startswith("fold-"):
            fold, parts = parts[0] + " ", parts[1:]
    rest = "/".join(parts)
    return candidate, fold + _KINDS.get(rest, rest)


def _slice_name(slice_key):
    """'Overall', or `column = value` for each key of the slice."""
    parts = []
    for key in slice_key.single_slice_keys:
        which = key.WhichOneof("kind")
        value = getattr(key, which) if which else ""
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        parts.append((key.column, value))
    return parts


def _eval_config(uri, configured):
    """The `EvalConfig` the Evaluator was given (its `eval_config` execution property, as TFX
    records it), else the one TFMA wrote with its output, which has no change thresholds when
    there was no baseline: the gate as configured, rather than only what a first model met."""
    import tensorflow_model_analysis as tfma
    from google.protobuf import json_format
    from tensorflow_model_analysis.proto import config_pb2

    if configured:
        try:
            return json_format.Parse(configured, config_pb2.EvalConfig())
        except json_format.ParseError:
            pass
    return tfma.load_eval_result(uri).config


def _gates(uri, gate_json, eval_config_json):
    """The `BlessingGate`s the Evaluator applied: its `blessing_gate` property, or for a run
    of TFX's stock Evaluator (before this kit had its own), the thresholds of its config."""
    if gate_json:
        return [BlessingGate(**json.loads(gate_json))]
    thresholds = _thresholds(_eval_config(uri, eval_config_json))
    return [gate_of(metric, threshold) for metric, threshold in thresholds.items()]


def _evaluation(uri, gate_json=None, eval_config_json=None):
    """The Evaluator's metrics per slice for the candidate, the baseline and their change; the
    gate it applied and its validation result."""
    import tensorflow_model_analysis as tfma

    slices = []
    for metrics_for_slice in tfma.load_metrics(uri):
        if metrics_for_slice.HasField("cross_slice_key"):
            continue
        values = {"candidate": {}, "baseline": {}, "change": {}}
        for entry in metrics_for_slice.metric_keys_and_values:
            if not entry.value.HasField("double_value"):
                continue
            if entry.key.is_diff:
                side = "change"
            else:
                side = "baseline" if entry.key.model_name == "baseline" else "candidate"
            values[side][metadata.metric_name(entry.key)] = entry.value.double_value.value
        slices.append({"keys": _slice_name(metrics_for_slice.slice_key), **values})
    slices.sort(key=lambda s: (len(s["keys"]), [(c, _sortable(v)) for c, v in s["keys"]]))
    validation = tfma.load_validation_result(uri)
    return {
        "uri": uri,
        "slices": slices,
        "plots": read_plots(uri),
        "gates": _gates(uri, gate_json, eval_config_json),
        "validation_ok": validation.validation_ok,
        "failures": [
            {
                "metric": failure.metric_key.name,
                "change": failure.metric_key.is_diff,
                "kind": (
                    "value_threshold"
                    if failure.metric_threshold.HasField("value_threshold")
                    else "change_threshold"
                ),
                "message": failure.message.strip(),
            }
            for per_slice in validation.metric_validations_per_slice
            if not per_slice.slice_key.single_slice_keys
            for failure in per_slice.failures
        ],
    }


def _sortable(value):
    return (0, value, "") if isinstance(value, int | float) else (1, 0, str(value))


def _is_overall(slicing_spec):
    return not (
        slicing_spec.feature_keys or slicing_spec.feature_values or slicing_spec.slice_keys_sql
    )


def _thresholds(eval_config):
    """{metric key: MetricThreshold} of the thresholds the Evaluator's config set on the
    overall slice: what blessing needed."""
    found = {}
    for spec in eval_config.metrics_specs:
        for metric in spec.metrics:
            key = _METRIC_KEYS.get(metric.class_name, metric.class_name)
            if metric.HasField("threshold"):
                found[key] = metric.threshold
            for per_slice in metric.per_slice_thresholds:
                if any(_is_overall(s) for s in per_slice.slicing_specs):
                    found[key] = per_slice.threshold
    return found


def _bound(wrapper):
    """The value of a set, finite bound; None otherwise (an infinite bound checks nothing)."""
    return wrapper.value if math.isfinite(wrapper.value) else None


def gate_of(metric, threshold):
    """The `BlessingGate` a TFMA `MetricThreshold` on `metric` stands for, to describe it in
    the run summary's words."""
    value, change = threshold.value_threshold, threshold.change_threshold
    floor = _bound(value.lower_bound) if value.HasField("lower_bound") else None
    ceiling = _bound(value.upper_bound) if value.HasField("upper_bound") else None
    return BlessingGate(
        metric,
        threshold=floor if floor is not None else ceiling,
        max_change=abs(change.absolute.value) if change.HasField("absolute") else None,
        max_relative_change=abs(change.relative.value) if change.HasField("relative") else None,
    )


def _blessing_record(artifact):
    if artifact is None:
        return None
    custom = metadata.custom_property
    return {
        "blessed": custom(artifact, "blessed") == 1,
        "uri": artifact.uri,
        "current_model": custom(artifact, "current_model"),
        "baseline_model": custom(artifact, "baseline_model"),
    }


def _push(artifact):
    """What the Pusher did: the version and folder it published, and whether that version is
    the one served now (the highest in the folder); or why it pushed nothing."""
    if artifact is None:
        return None
    custom = metadata.custom_property
    destination = custom(artifact, "pushed_destination")
    pushed = bool(custom(artifact, "pushed"))
    record = {
        "pushed": pushed,
        "version": custom(artifact, "pushed_version"),
        "destination": destination,
        "reason": custom(artifact, "reason"),
        "served_version": None,
        "present": False,
    }
    if pushed and destination:
        there = versions(os.path.dirname(destination))
        record["served_version"] = str(there[-1]) if there else None
        record["present"] = os.path.isdir(destination)
    return record
