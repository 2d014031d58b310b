"""`python -m pipeline report [RUN]`: one run of a pipeline as one self-contained HTML file, to
read where the run happened or wherever the file is sent (no server, no network: the styles,
the SVG charts and the one small script are inline).

What it shows is read back as the other history commands read it: the run's record from ML
Metadata (`pipeline.history`), then the artifacts the run wrote, in their standard formats:
StatisticsGen's and ExampleValidator's (tensorflow_metadata), the Trainer's TensorBoard event
files, the Evaluator's TFMA output (metrics, config, validation result), the Pusher's record.
TensorFlow is imported only to read the last two kinds, once the command runs.
"""

import datetime
import html
import json
import math
import os

from components.evaluator.tasks import LOWER_IS_BETTER, TASK_METRICS, BlessingGate
from components.example_validator import drift
from components.example_validator.layout import split_anomalies_path
from components.serving_dir import versions
from components.statistics_gen.layout import load_statistics, model_statistics_uri
from pipeline import history, runner, stats

REPORTS_DIR = "reports"  # next to the pipeline's ML Metadata store
SPLIT_COLORS = ("#3b6fb6", "#e8892b", "#4f9a4a", "#c9483f", "#7a5cb0", "#3d9a9a")
CANDIDATE_COLOR, BASELINE_COLOR = "#3b6fb6", "#a3acb9"
_TOP_VALUES_SHOWN = 6
_SLICES_CHARTED = 40
_EVENTS_PREFIX = "events.out.tfevents"
_NONE = "\N{EN DASH}"  # in a table: no value
# Metrics that describe rather than score: no change of theirs is better or worse.
_UNRANKED = frozenset({"example_count", "calibration", "mean_label", "mean_prediction"})
# TFMA metric class -> the key it reports under (components/evaluator/tasks.py).
_METRIC_KEYS = {name: key for rows in TASK_METRICS.values() for name, _, key in rows}


# --- Which run, and where its report goes ---------------------------------------------------


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


def default_path(config, run_id):
    """`<pipeline folder>/reports/<run id>.html`, next to the run's ML Metadata store (the
    run id's colons as dashes: a file name that every tool takes)."""
    folder = os.path.join(os.path.dirname(config.resolved_metadata_path), REPORTS_DIR)
    return os.path.join(folder, run_id.replace(":", "-") + ".html")


def write_report(config, run_id=None, out=None):
    """Writes the report of run `run_id` (default: the newest) of `config`'s pipeline to `out`
    (default: `default_path`); returns the path written."""
    past = history.load(config)
    run = find_run(past, run_id)
    page = render(collect(past, run))
    path = os.path.abspath(out or default_path(config, run.name))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    staged = f"{path}.incomplete"
    with open(staged, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(staged, path)  # a reader never opens half a report
    return path


def write_new_run_report(config, known_run_ids):
    """The report of the run `config`'s pipeline recorded since `known_run_ids`
    (`history.run_ids`), or None when it recorded none (it failed before it began)."""
    past = history.load(config)
    new = [run for run in past.run_contexts if run.id not in known_run_ids]
    return write_report(config, new[0].name) if new else None


# --- Reading the run ------------------------------------------------------------------------


def collect(past, run):
    """Everything the page shows, as plain data."""
    record = past.run_record(run, with_metrics=False)  # metrics: every slice, read below
    executions = past.run_executions[run.id]
    evaluator = next((e for e in executions if past.node_of.get(e.id) == "Evaluator"), None)
    evaluator_inputs = past.inputs.get(evaluator.id, {}) if evaluator is not None else {}
    baseline_model = (evaluator_inputs.get("baseline_model") or [None])[0]
    statistics = past._output(run, "StatisticsGen", "statistics")
    evaluation = past._output(run, "Evaluator", "evaluation")
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
        "anomalies": _anomalies(past._output(run, "ExampleValidator", "anomalies")),
        "training": _training(past._output(run, "Trainer", "model_run")),
        "evaluation": (
            _evaluation(
                evaluation.uri,
                history.custom_property(evaluator, "blessing_gate"),
                history.custom_property(evaluator, "eval_config"),
            )
            if evaluation is not None and os.path.isdir(evaluation.uri)
            else None
        ),
        "blessing": _blessing_record(past._output(run, "Evaluator", "blessing")),
        "push": _push(past._output(run, "Pusher", "pushed_model")),
    }


def _state_name(execution):
    from ml_metadata.proto import metadata_store_pb2

    return metadata_store_pb2.Execution.State.Name(execution.last_known_state).lower()


def _error(execution):
    """The message TFX recorded with a failed execution, if any."""
    recorded = history.custom_property(execution, "__execution_result__")
    try:
        return json.loads(recorded).get("resultMessage") if recorded else None
    except ValueError:
        return None


def _components(past, executions):
    started = min((e.create_time_since_epoch for e in executions), default=0)
    return [
        {
            "node": past.node_of.get(e.id, past.execution_type[e.id]),
            "state": _state_name(e),
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
    return float(values[0]) if values.size == 1 else None


def _training(model_run):
    """The Trainer's scalars from its TensorBoard event files: {tag: {folder: [(step, value)]}}
    (folder `train` for the model folder itself, `eval` for its eval/), and its settings."""
    if model_run is None or not os.path.isdir(model_run.uri):
        return None
    from tensorboard.backend.event_processing import event_accumulator

    curves = {}
    for folder, _, names in sorted(os.walk(model_run.uri)):
        if not any(name.startswith(_EVENTS_PREFIX) for name in names):
            continue
        series = os.path.relpath(folder, model_run.uri)
        series = "train" if series == "." else series
        events = event_accumulator.EventAccumulator(
            folder, size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}
        )
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
    custom = history.custom_property
    return {
        "uri": model_run.uri,
        "strategy": custom(model_run, "strategy"),
        "strategy_reason": custom(model_run, "strategy_reason"),
        "training_length": custom(model_run, "training_length"),
        "curves": curves,
    }


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
            values[side][runner.metric_name(entry.key)] = entry.value.double_value.value
        slices.append({"keys": _slice_name(metrics_for_slice.slice_key), **values})
    slices.sort(key=lambda s: (len(s["keys"]), [(c, _sortable(v)) for c, v in s["keys"]]))
    validation = tfma.load_validation_result(uri)
    return {
        "uri": uri,
        "slices": slices,
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
    custom = history.custom_property
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
    custom = history.custom_property
    destination = custom(artifact, "pushed_destination")
    pushed = bool(custom(artifact, "pushed"))
    record = {
        "pushed": pushed,
        "version": custom(artifact, "pushed_version"),
        "destination": destination,
        "reason": custom(artifact, "reason"),
        "served_version": None,
    }
    if pushed and destination:
        there = versions(os.path.dirname(destination))
        record["served_version"] = str(there[-1]) if there else None
        record["present"] = os.path.isdir(destination)
    return record


# --- Formatting -----------------------------------------------------------------------------


def _e(text):
    return html.escape(str(text), quote=True)


def _number(value, digits=4):
    """A value for a table: a dash when there is none (NaN: undefined, e.g. precision with no
    positive prediction), integers whole, others to `digits` significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _NONE
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) < 1e15
    ):
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def _tick_labels(values):
    """Tick labels, as short as they can be while telling the ticks apart; whole numbers below
    a million in full (steps: 1,000, not 1e+03)."""
    if all(float(v).is_integer() and abs(v) < 1e6 for v in values):
        return [f"{int(v):,}" for v in values]
    for digits in range(3, 12):
        labels = [f"{v:.{digits}g}" for v in values]
        if len(set(labels)) == len(labels):
            return labels
    return [repr(v) for v in values]


def _compact(value):
    """A statistic in a narrow table: as `_number`, large ones in 4 significant digits."""
    if isinstance(value, int | float) and abs(value) >= 1e6:
        return f"{value:.4g}"
    return _number(value)


def _ticks(low, high, count=4, cover=False):
    """About `count` round values from `low` to `high` (steps of 1, 2, 2.5 or 5 times a power
    of ten); with `cover`, up to the first one at or above `high` (a value axis's top)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    last = (math.ceil if cover else math.floor)(high / step - (1e-9 if cover else -1e-9))
    return [round(i * step, 12) for i in range(first, last + 1)]


def _ordered_metrics(names):
    """The example count, then the metrics in the order their task lists them (the task whose
    first metric is there: its headline first), then the others by name."""
    names = list(names)
    order = ["example_count"]
    for rows in TASK_METRICS.values():
        if rows[0][2] in names:
            order += [key for _, _, key in rows]
            break
    rank = {name: i for i, name in enumerate(order)}
    return sorted(names, key=lambda n: (rank.get(n.split("/")[0], len(rank)), n))


def _table(header, rows, css="", sortable=False):
    """An HTML table; a cell is text, or (html, sort key) when it is markup already."""

    def cell(value):
        if isinstance(value, tuple):
            markup, key = value
            return f'<td data-sort="{_e(key)}">{markup}</td>'
        return f"<td>{_e(value)}</td>"

    classes = " ".join(c for c in (css, "sortable" if sortable else "") if c)
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
    return f'<table class="{classes}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _facts(pairs):
    """A two-column list of (label, html) pairs."""
    return (
        '<dl class="facts">'
        + "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in pairs if v not in (None, ""))
        + "</dl>"
    )


def _code(text):
    return f"<code>{_e(text)}</code>" if text else _NONE


def _legend(items):
    return (
        '<div class="legend">'
        + "".join(
            f'<span><i style="background:{color}"></i>{_e(name)}</span>' for name, color in items
        )
        + "</div>"
    )


def _split_colors(splits):
    return {split: SPLIT_COLORS[i % len(SPLIT_COLORS)] for i, split in enumerate(splits)}


# --- Charts (inline SVG) --------------------------------------------------------------------


class _Plot:
    """A chart's drawing area: data coordinates to pixels, and its axes."""

    def __init__(self, width, height, x_range, y_range, left=44, right=12, top=10, bottom=34):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, right, top, bottom
        self.x_range, self.y_range = x_range, y_range

    def x(self, value):
        low, high = self.x_range
        span = (high - low) or 1.0
        return self.left + (value - low) / span * (self.width - self.left - self.right)

    def y(self, value):
        low, high = self.y_range
        span = (high - low) or 1.0
        return (
            self.height
            - self.bottom
            - (value - low) / span * (self.height - self.top - self.bottom)
        )

    def axes(self, x_ticks, y_ticks, x_label="", y_label=""):
        base, right = self.height - self.bottom, self.width - self.right
        parts = []
        for value, text in zip(y_ticks, _tick_labels(y_ticks), strict=True):
            y = self.y(value)
            parts += [
                _line("grid", self.left, y, right, y),
                _text("tick", self.left - 5, y + 3.5, text, "end"),
            ]
        parts.append(_line("axis", self.left, base, right, base))
        for value, text in zip(x_ticks, _tick_labels(x_ticks), strict=True):
            x = self.x(value)
            parts += [_line("axis", x, base, x, base + 4), _text("tick", x, base + 15, text)]
        if x_label:
            parts.append(_text("label", (self.left + right) / 2, self.height - 4, x_label))
        if y_label:
            parts.append(
                f'<text class="label" transform="translate(11,{(self.top + base) / 2:.1f}) '
                f'rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
            )
        return parts


def _line(css, x1, y1, x2, y2):
    return f'<line class="{css}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def _text(css, x, y, text, anchor="middle"):
    return f'<text class="{css}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{_e(text)}</text>'


def _svg(kind, width, height, parts, label):
    return (
        f'<svg class="chart" data-chart="{_e(kind)}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{_e(label)}">'
        + "".join(parts)
        + "</svg>"
    )


def _empty_chart(kind, label, text):
    return _svg(
        kind,
        320,
        60,
        [_text("empty", 160, 34, text)],
        label,
    )


def histogram_svg(name, series):
    """The splits' equal-width histograms of a numeric feature, overlaid: series is
    [(split, color, [(low, high, % of values)])]."""
    series = [(s, c, b) for s, c, b in series if b]
    if not series:
        return _empty_chart("histogram", name, "no values")
    low = min(b[0] for _, _, buckets in series for b in buckets)
    high = max(b[1] for _, _, buckets in series for b in buckets)
    x_ticks = _ticks(low, high, 4)
    if high <= low:  # one value: its bar in the middle, its one tick under it
        low, high = low - 1, high + 1
    top = max(b[2] for _, _, buckets in series for b in buckets)
    y_ticks = _ticks(0, top, 3, cover=True)
    plot = _Plot(320, 150, (low, high), (0, y_ticks[-1]))
    parts = plot.axes(x_ticks, y_ticks, name, "% of values")
    for split, color, buckets in series:
        for lo, hi, share in buckets:
            if hi <= lo:  # a bucket of one value: a narrow bar at it
                lo, hi = lo - (high - low) / 40, hi + (high - low) / 40
            x0, x1 = plot.x(lo), plot.x(hi)
            y = plot.y(share)
            parts.append(
                f'<rect class="bar" x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 0.5, 1):.1f}" '
                f'height="{max(plot.y(0) - y, 0):.1f}" fill="{color}" fill-opacity="0.55">'
                f"<title>{_e(split)}: {lo:.6g} to {hi:.6g}: {share:.1f}%</title>"
                "</rect>"
            )
    return _svg("histogram", plot.width, plot.height, parts, f"histogram of {name}")


def values_svg(name, series):
    """The most frequent values of a categorical feature, a bar per split: series is
    [(split, color, {value: % of values})]; values ranked by the first split."""
    ranked = []
    for _, _, shares in series:
        for value in sorted(shares, key=lambda v: (-shares[v], v)):
            if value not in ranked:
                ranked.append(value)
    ranked = ranked[:_TOP_VALUES_SHOWN]
    if not ranked:
        return _empty_chart("values", name, "no values")
    bar, gap = 8, 7
    group = bar * len(series) + gap
    height = 10 + group * len(ranked) + 34
    top = max(shares.get(v, 0.0) for _, _, shares in series for v in ranked)
    x_ticks = _ticks(0, top, 3, cover=True)
    plot = _Plot(320, height, (0, x_ticks[-1]), (0, 1), left=112, right=16, top=10, bottom=34)
    parts = plot.axes(x_ticks, [], f"% of values of {name}", "")
    for i, value in enumerate(ranked):
        y0 = plot.top + i * group
        shown = value if len(value) <= 16 else value[:15] + "…"
        parts.append(
            f'<text class="tick" x="{plot.left - 6}" y="{y0 + group / 2:.1f}" '
            f'text-anchor="end"><title>{_e(value)}</title>{_e(shown)}</text>'
        )
        for j, (split, color, shares) in enumerate(series):
            share = shares.get(value, 0.0)
            parts.append(
                f'<rect class="bar" x="{plot.left}" y="{y0 + j * bar:.1f}" '
                f'width="{max(plot.x(share) - plot.left, 0.5):.1f}" height="{bar - 1}" '
                f'fill="{color}"><title>{_e(split)}: {_e(value)}: {share:.1f}%</title></rect>'
            )
    return _svg("values", plot.width, height, parts, f"top values of {name}")


def line_svg(title, series, x_label="step"):
    """Values over steps, a line per series: [(name, color, [(x, y)])]."""
    points = [p for _, _, pts in series for p in pts if math.isfinite(p[1])]
    if not points:
        return _empty_chart("line", title, "no finite values")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_low, x_high = min(xs), max(xs)
    if x_high <= x_low:
        x_low, x_high = x_low - 1, x_high + 1
    y_low, y_high = min(ys), max(ys)
    pad = (y_high - y_low) * 0.08 or abs(y_high) * 0.1 or 1.0
    y_low, y_high = y_low - pad, y_high + pad
    if min(ys) >= 0 > y_low:
        y_low = 0.0
    plot = _Plot(360, 190, (x_low, x_high), (y_low, y_high), left=56, right=20)
    parts = plot.axes(_ticks(x_low, x_high, 4), _ticks(y_low, y_high, 4), x_label)
    for name, color, pts in series:
        pts = sorted(p for p in pts if math.isfinite(p[1]))
        if len(pts) > 1:
            path = " ".join(f"{plot.x(x):.1f},{plot.y(y):.1f}" for x, y in pts)
            parts.append(
                f'<polyline class="line" points="{path}" fill="none" stroke="{color}" '
                'stroke-width="2"/>'
            )
        for x, y in pts:
            parts.append(
                f'<circle class="point" cx="{plot.x(x):.1f}" cy="{plot.y(y):.1f}" r="3" '
                f'fill="{color}"><title>{_e(name)} step {x:g}: {_number(y)}</title></circle>'
            )
    return _svg("line", plot.width, plot.height, parts, f"{title} over training steps")


def slices_svg(metric, slices):
    """`metric` per slice, the candidate's bar beside the baseline's: slices is
    [(label, candidate value, baseline value or None)]."""
    shown = [(label, c, b) for label, c, b in slices if c is not None and math.isfinite(c)]
    if not shown:
        return _empty_chart("slices", metric, f"no slice has a {metric}")
    with_baseline = any(b is not None and math.isfinite(b) for _, _, b in shown)
    per = 2 if with_baseline else 1
    step = max(14 * per + 8, 24)
    width = max(420, 52 + 12 + step * len(shown))
    values = [v for _, c, b in shown for v in (c, b) if v is not None and math.isfinite(v)]
    low = min(0.0, min(values))
    y_ticks = _ticks(low, max(values), 4, cover=True)
    plot = _Plot(width, 210, (0, len(shown)), (low, y_ticks[-1]), left=52)
    parts = plot.axes([], y_ticks, "", metric)
    bar = (step - 8) / per
    for i, (label, candidate, baseline) in enumerate(shown):
        x0 = plot.left + i * step + 4
        for j, (model, value, color) in enumerate(
            (("candidate", candidate, CANDIDATE_COLOR), ("baseline", baseline, BASELINE_COLOR))[
                :per
            ]
        ):
            if value is None or not math.isfinite(value):
                continue
            y, zero = plot.y(max(value, 0)), plot.y(min(value, 0))
            parts.append(
                f'<rect class="bar" data-model="{model}" x="{x0 + j * bar:.1f}" y="{y:.1f}" '
                f'width="{bar - 1:.1f}" '
                f'height="{max(zero - y, 0.5):.1f}" fill="{color}">'
                f"<title>{_e(label)}: {model} {_number(value)}</title></rect>"
            )
        parts.append(
            f'<text class="tick" x="{x0 + (step - 8) / 2:.1f}" y="{plot.y(low) + 14:.1f}" '
            f'text-anchor="middle">{_e(label)}</text>'
        )
    return _svg("slices", width, plot.height, parts, f"{metric} per slice")


# --- Sections -------------------------------------------------------------------------------


def _outcome_badge(record):
    outcome = record["outcome"]
    text = outcome.replace("_", " ")
    if outcome == "failed" and record["failed_component"]:
        text = f"failed in {record['failed_component']}"
    return f'<span class="badge {outcome}">{_e(text)}</span>'


def _summary_section(data):
    record, push, blessing = data["record"], data["push"], data["blessing"]
    evaluation = data["evaluation"]
    tiles = []
    overall = evaluation["slices"][0] if evaluation and evaluation["slices"] else None
    if overall and not overall["keys"]:
        for name in _ordered_metrics(overall["candidate"])[:4]:
            baseline = overall["baseline"].get(name)
            under = (
                f"<small>baseline {_e(_number(baseline))}</small>" if baseline is not None else ""
            )
            tiles.append(
                f'<div class="tile"><span>{_e(name)}</span>'
                f"<b>{_e(_number(overall['candidate'][name]))}</b>{under}</div>"
            )
    if blessing is not None:
        tiles.append(
            f'<div class="tile"><span>blessed</span><b>{"yes" if blessing["blessed"] else "no"}'
            "</b></div>"
        )
    if push is not None:
        value = push["version"] if push["pushed"] else "nothing"
        tiles.append(f'<div class="tile"><span>pushed</span><b>{_e(value)}</b></div>')
    if record["input_rows"] is not None:
        tiles.append(
            f'<div class="tile"><span>input rows</span><b>{_number(record["input_rows"])}</b></div>'
        )
    return f'<div class="tiles">{"".join(tiles)}</div>' if tiles else ""


def _feature_card(name, feature, colors):
    splits = feature["splits"]
    charts = [(split, colors[split], entry["chart"]) for split, entry in splits.items()]
    if charts and charts[0][2]["kind"] == "values":
        chart = values_svg(name, [(s, c, d["shares"]) for s, c, d in charts])
    else:
        chart = histogram_svg(name, [(s, c, d["buckets"]) for s, c, d in charts])
    numeric = any("mean" in entry["row"] for entry in splits.values())
    compared = any("drift" in entry["row"] for entry in splits.values())
    # The chart shows the range and the top values.
    header = ["split", "count", "missing"] + (["mean", "std"] if numeric else ["unique"])
    if compared:
        header.append("drift")
    rows = []
    for split, entry in splits.items():
        row = entry["row"]
        cells = [
            (f'<i class="dot" style="background:{colors[split]}"></i>{_e(split)}', split),
            _compact(row["count"]),
            f"{row['missing_pct']:.1f}%",
        ]
        if numeric:
            cells += [_compact(row.get(k)) for k in ("mean", "std_dev")]
        else:
            cells.append(_compact(row.get("unique")))
        if compared:
            found = row.get("drift")
            cells.append(
                # Rounding noise (1e-17) reads as no drift.
                f"{round(found['value'], 6):.3g} {drift.SHORT_NAMES[found['metric']]}"
                if found
                else _NONE
            )
        rows.append(cells)
    return (
        f'<div class="card feature" data-feature="{_e(name)}"><h4>{_e(name)} '
        f"<small>{_e(feature['type'])}</small></h4>{chart}"
        + _table(header, rows, "mini")
        + "</div>"
    )


def _data_section(data):
    statistics, anomalies = data["statistics"], data["anomalies"]
    parts = []
    if anomalies is None:
        parts.append('<p class="muted">The ExampleValidator did not run in this run.</p>')
    elif anomalies["found"]:
        parts.append(
            f'<h3>Anomalies <span class="count">{len(anomalies["found"])}</span></h3>'
            + _table(
                ["split", "column", "kind", "severity", "description"],
                [
                    [
                        a["split"],
                        a["column"],
                        a["kind"],
                        (
                            f'<span class="sev {_e(a["severity"])}">{_e(a["severity"])}</span>',
                            a["severity"],
                        ),
                        a["description"],
                    ]
                    for a in anomalies["found"]
                ],
                "anomalies",
                sortable=True,
            )
        )
    else:
        parts.append(
            '<p class="ok-line"><span class="badge pushed">no anomalies</span> every split '
            "matches the schema (ExampleValidator).</p>"
        )
    if statistics is None:
        parts.append('<p class="muted">No statistics: StatisticsGen did not run in this run.</p>')
        return "".join(parts)
    colors = _split_colors(statistics["splits"])
    counts = ", ".join(f"{s} {_number(n)} examples" for s, n in statistics["splits"].items())
    against = (
        f"; drift measured against the baseline model's training data ({_code(statistics['baseline'])})"
        if statistics["baseline"]
        else ""
    )
    parts.append(
        f"<h3>Features</h3><p>{_e(counts)}{against}. Numbers: the equal-width histogram of "
        "each split (share of its values per bucket); categories: the most frequent values.</p>"
        + _legend([(s, colors[s]) for s in statistics["splits"]])
        + '<div class="grid">'
        + "".join(
            _feature_card(name, feature, colors) for name, feature in statistics["features"].items()
        )
        + "</div>"
        + f'<p class="muted">From {_code(statistics["uri"])} (`python -m pipeline stats`).</p>'
    )
    return "".join(parts)


def _training_section(data):
    training = data["training"]
    if training is None:
        return '<p class="muted">The Trainer did not run in this run.</p>'
    facts = _facts(
        [
            ("trained", _e(training["training_length"] or "")),
            (
                "strategy",
                _e(
                    f"{training['strategy']} ({training['strategy_reason']})"
                    if training["strategy_reason"]
                    else training["strategy"] or ""
                ),
            ),
            ("event files", _code(training["uri"])),
        ]
    )
    curves = training["curves"]
    folders = sorted(
        {f for by_folder in curves.values() for f in by_folder}, key=lambda f: (f != "train", f)
    )
    colors = _split_colors(folders)
    charted = {t: f for t, f in curves.items() if any(len(p) > 1 for p in f.values())}
    single = {t: f for t, f in curves.items() if t not in charted}
    order = sorted(charted, key=lambda t: (t != "loss", "learning_rate" in t, t))
    charts = "".join(
        f'<div class="card"><h4>{_e(tag)}</h4>'
        + line_svg(tag, [(f, colors[f], charted[tag][f]) for f in sorted(charted[tag])])
        + "</div>"
        for tag in order
    )
    parts = [facts]
    if charts:
        parts.append(
            _legend([(f, colors[f]) for f in folders]) + f'<div class="grid">{charts}</div>'
        )
    else:
        parts.append('<p class="muted">No training curve: the event files hold no scalars.</p>')
    if single:
        logged = [f for f in folders if any(f in by_folder for by_folder in single.values())]
        header = ["metric", *logged, "step"]
        rows = [
            [tag]
            + [_number(single[tag][f][-1][1]) if f in single[tag] else _NONE for f in logged]
            + [_number(max(p[-1][0] for p in single[tag].values()))]
            for tag in sorted(single)
        ]
        parts.append(
            "<h3>Logged once</h3><p>The Trainer's own evaluation at the end of training "
            "(its eval steps), and anything else logged a single time.</p>"
            + _table(header, rows, "numbers")
        )
    return "".join(parts)


def _change_cell(name, change):
    """The candidate's change from the baseline, green when better, red when worse; counts,
    means and calibration (best at 1) have no better side."""
    if change is None or math.isnan(change):
        return _NONE
    metric = name.split("/")[0]
    better = change > 0 if metric not in LOWER_IS_BETTER else change < 0
    css = "same" if change == 0 or metric in _UNRANKED else ("better" if better else "worse")
    return (f'<span class="{css}">{"+" if change > 0 else ""}{_e(_number(change))}</span>', change)


def _evaluation_section(data):
    evaluation = data["evaluation"]
    if evaluation is None:
        return '<p class="muted">The Evaluator did not run in this run.</p>'
    slices = evaluation["slices"]
    overall = next((s for s in slices if not s["keys"]), None)
    with_baseline = any(s["baseline"] for s in slices)
    parts = []
    baseline = data["baseline_model"]
    if baseline is not None:
        origin = f" (trained in run {_e(baseline['run_id'])})" if baseline["run_id"] else ""
        parts.append(
            f"<p>Candidate against the baseline, the latest blessed model: "
            f"{_code(baseline['uri'])}{origin}.</p>"
        )
    else:
        parts.append("<p>No baseline: no model of this pipeline was blessed before this run.</p>")
    if overall is not None:
        header = ["metric", "candidate"] + (["baseline", "change"] if with_baseline else [])
        rows = []
        for name in _ordered_metrics(overall["candidate"]):
            row = [name, _number(overall["candidate"][name])]
            if with_baseline:
                row += [
                    _number(overall["baseline"].get(name)),
                    _change_cell(name, overall["change"].get(name)),
                ]
            rows.append(row)
        parts.append("<h3>Overall</h3>" + _table(header, rows, "numbers metrics overall"))
    sliced = [s for s in slices if s["keys"]]
    if sliced:
        names = [n for n in _ordered_metrics(sliced[0]["candidate"]) if "/" not in n]
        charted = data["gate_metric"] if data["gate_metric"] in names else None
        charted = charted or next((n for n in names if n != "example_count"), None)
        label = lambda s: ", ".join(f"{v}" for _, v in s["keys"])  # noqa: E731
        columns = ", ".join(sorted({c for s in sliced for c, _ in s["keys"]}))
        if charted:
            by_count = sorted(sliced, key=lambda s: -(s["candidate"].get("example_count") or 0))[
                :_SLICES_CHARTED
            ]
            shown = [s for s in sliced if s in by_count]
            note = (
                f" (the {_SLICES_CHARTED} largest of {len(sliced)})"
                if len(sliced) > _SLICES_CHARTED
                else ""
            )
            parts.append(
                f"<h3>Per slice: {_e(columns)}</h3><p>{_e(charted)} per value of "
                f"{_e(columns)}{_e(note)}.</p>"
                + (
                    _legend([("candidate", CANDIDATE_COLOR), ("baseline", BASELINE_COLOR)])
                    if with_baseline
                    else ""
                )
                + '<div class="card wide">'
                + slices_svg(
                    charted,
                    [
                        (label(s), s["candidate"].get(charted), s["baseline"].get(charted))
                        for s in shown
                    ],
                )
                + "</div>"
            )
        header = [columns, *names]
        rows = []
        for s in sliced:
            row = [(_e(label(s)), _sortable_key(s["keys"]))]
            for name in names:
                value = s["candidate"].get(name)
                base = s["baseline"].get(name)
                markup = _e(_number(value))
                if with_baseline and name != "example_count":
                    markup += f"<small>{_e(_number(base))}</small>"
                row.append((markup, "" if value is None or math.isnan(value) else value))
            rows.append(row)
        caption = (
            '<p class="muted">Each cell: the candidate, the baseline under it. Click a column '
            "to sort.</p>"
            if with_baseline
            else '<p class="muted">Click a column to sort.</p>'
        )
        parts.append(
            f"<details><summary>Every metric per slice ({len(sliced)} slices)</summary>"
            + caption
            + _table(header, rows, "numbers metrics slices", sortable=True)
            + "</details>"
        )
    parts.append(f'<p class="muted">TFMA output: {_code(evaluation["uri"])}.</p>')
    return "".join(parts)


def _sortable_key(keys):
    value = keys[0][1] if keys else ""
    return value if isinstance(value, int | float) else str(value)


def _check_rows(evaluation, overall):
    """One row per check the gate made: (check, candidate, baseline, change, result)."""
    rows = []
    has_baseline = bool(overall and overall["baseline"])
    failed = {(f["metric"], f["kind"]) for f in evaluation["failures"]}
    for gate in evaluation["gates"]:
        metric = gate.metric
        candidate = overall["candidate"].get(metric) if overall else None
        baseline = overall["baseline"].get(metric) if overall else None
        change = overall["change"].get(metric) if overall else None
        sign = ">=" if gate.higher_is_better else "<="
        side = "below" if gate.higher_is_better else "above"
        checks = []
        if gate.threshold is not None:
            checks.append(
                (f"{metric} {sign} {gate.threshold:g}", (metric, "value_threshold"), True)
            )
        if gate.max_change is not None:
            checks.append(
                (
                    f"at most {gate.max_change:g} {side} the baseline",
                    (metric, "change_threshold"),
                    False,
                )
            )
        if gate.max_relative_change is not None:
            checks.append(
                (
                    f"at most {gate.max_relative_change:.0%} {side} the baseline",
                    (metric, "change_threshold"),
                    False,
                )
            )
        for text, key, on_value in checks:
            if not on_value and not has_baseline:
                result = ('<span class="muted">not checked: no baseline</span>', "-")
            elif key in failed:
                result = ('<span class="badge failed">failed</span>', "failed")
            else:
                result = ('<span class="badge pushed">passed</span>', "passed")
            rows.append(
                [
                    text,
                    _number(candidate),
                    _number(baseline) if has_baseline else _NONE,
                    _change_cell(metric, change) if has_baseline else _NONE,
                    result,
                ]
            )
    return rows


def _blessing_section(data):
    blessing, evaluation = data["blessing"], data["evaluation"]
    if blessing is None:
        return (
            '<p class="muted">No blessing decision: the Evaluator did not decide in this run.</p>'
        )
    verdict = (
        '<span class="badge pushed">blessed</span>'
        if blessing["blessed"]
        else '<span class="badge not_blessed">not blessed</span>'
    )
    parts = [f'<p class="verdict">{verdict} gate: <b>{_e(data["gate"] or "none recorded")}</b></p>']
    if evaluation is not None:
        overall = next((s for s in evaluation["slices"] if not s["keys"]), None)
        rows = _check_rows(evaluation, overall)
        if rows:
            parts.append(
                _table(
                    ["check (overall slice)", "candidate", "baseline", "change", "result"],
                    rows,
                    "numbers checks",
                )
            )
        messages = [f["message"] for f in evaluation["failures"] if f["message"]]
        parts.append(
            _facts(
                [
                    ("TFMA validation", "ok" if evaluation["validation_ok"] else "failed"),
                    *(("message", _e(m)) for m in messages),
                ]
            )
        )
    parts.append(
        _facts(
            [
                ("candidate model", _code(blessing["current_model"])),
                ("baseline model", _code(blessing["baseline_model"])),
                ("blessing", _code(blessing["uri"])),
            ]
        )
    )
    return "".join(parts)


def _push_section(data):
    push = data["push"]
    if push is None:
        return '<p class="muted">The Pusher did not run in this run.</p>'
    if not push["pushed"]:
        return (
            '<p class="verdict"><span class="badge not_blessed">not pushed</span> '
            f"{_e(push['reason'] or 'no reason recorded')}</p>"
        )
    served = push["served_version"]
    if served == push["version"]:
        serving = "yes: it is the highest version in the folder"
    elif served:
        serving = f"no: version {served} is served now (the highest in the folder)"
    else:
        serving = "no: the serving folder holds no version"
    return _facts(
        [
            ("version", f"<b>{_e(push['version'])}</b>"),
            ("folder", _code(push["destination"]) + ("" if push.get("present") else " (gone)")),
            ("served now", _e(serving)),
        ]
    )


def _lineage_section(data):
    record = data["record"]
    fingerprint = record["input_fingerprint"]
    parts = [
        _facts(
            [
                ("run", _code(record["run_id"])),
                ("started (UTC)", _e(record["started"].replace("T", " ").rstrip("Z"))),
                ("duration", _e(f"{record['duration_s']:.1f} s") if record["duration_s"] else ""),
                ("outcome", _outcome_badge(record)),
                ("input rows", _e(_number(record["input_rows"])) if record["input_rows"] else ""),
                (
                    "input fingerprint",
                    f"<pre>{_e(fingerprint)}</pre>" if fingerprint else _NONE,
                ),
                ("definition", _code(record["definition"])),
                ("definition sha256", _code(record["definition_sha256"])),
                ("code version", _code(record["code_version"])),
            ]
        )
    ]
    components = data["components"]
    if components:
        errors = any(c["error"] for c in components)
        rows = [
            [
                c["node"],
                (f'<span class="state {_e(c["state"])}">{_e(c["state"])}</span>', c["state"]),
                (f"{c['start_s']:.1f} s", c["start_s"]),
                (f"{c['duration_s']:.1f} s", c["duration_s"]),
                *([c["error"] or ""] if errors else []),
            ]
            for c in components
        ]
        header = ["node", "state", "began at", "took", *(["error"] if errors else [])]
        parts.append("<h3>Components</h3>" + _table(header, rows, "components"))
        if record["outcome"] == "failed" and not errors:
            parts.append(
                '<p class="muted">ML Metadata holds no message for the failure: the error is '
                "the last thing <code>python -m pipeline run</code> printed.</p>"
            )
    if data["artifacts"]:
        parts.append(
            "<h3>Artifacts</h3>"
            + _table(
                ["node", "output", "type", "uri"],
                [[n, k, t, (_code(u), u)] for n, k, t, u in data["artifacts"]],
                "artifacts",
            )
        )
    return "".join(parts)


_STYLE = """
:root { --ink:#1f2933; --muted:#697586; --line:#e3e8ef; --bg:#f6f8fb; --card:#fff;
  --ok:#1f7a4d; --okbg:#e3f4ea; --bad:#b42318; --badbg:#fde8e6; --warn:#9a6700; --warnbg:#fff4d6; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; color:var(--ink); background:var(--bg); }
header { background:#17212f; color:#fff; padding:22px 32px 18px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header p { margin:0; color:#c2cad6; }
header code { color:#fff; background:rgba(255,255,255,.1); }
nav { background:#fff; border-bottom:1px solid var(--line); padding:8px 32px;
  position:sticky; top:0; z-index:1; }
nav a { color:var(--ink); text-decoration:none; margin-right:18px; font-weight:500; }
nav a:hover { color:#3b6fb6; }
main { max-width:1200px; margin:0 auto; padding:8px 32px 32px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:6px 22px 18px; margin:18px 0; }
h2 { font-size:18px; margin:14px 0 10px; }
h3 { font-size:15px; margin:18px 0 8px; }
h4 { font-size:13px; margin:0 0 4px; font-weight:600; word-break:break-all; }
h4 small { color:var(--muted); font-weight:400; margin-left:4px; }
code, pre { font:12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  background:#f1f4f8; border-radius:4px; padding:1px 4px; word-break:break-all; }
pre { margin:0; padding:4px 6px; white-space:pre-wrap; }
.muted { color:var(--muted); }
.tiles { display:flex; flex-wrap:wrap; gap:12px; margin:14px 0 4px; }
.tile { border:1px solid var(--line); border-radius:8px; padding:8px 14px; min-width:120px;
  background:#fbfcfe; }
.tile span { display:block; color:var(--muted); font-size:12px; }
.tile b { font-size:20px; font-weight:600; }
.tile small { display:block; color:var(--muted); }
.badge { display:inline-block; border-radius:10px; padding:1px 9px; font-size:12px;
  font-weight:600; background:#eef1f5; }
.badge.pushed { background:var(--okbg); color:var(--ok); }
.badge.failed { background:var(--badbg); color:var(--bad); }
.badge.not_blessed, .badge.incomplete { background:var(--warnbg); color:var(--warn); }
header .badge { font-size:13px; vertical-align:3px; margin-left:8px; }
.verdict { font-size:15px; }
.verdict .badge { font-size:14px; margin-right:8px; }
table { border-collapse:collapse; margin:6px 0 10px; }
th, td { padding:4px 10px; border-bottom:1px solid var(--line); text-align:left;
  vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; background:#fafbfd; }
table.numbers td:not(:first-child), table.numbers th:not(:first-child),
table.mini td:not(:first-child), table.mini th:not(:first-child) { text-align:right;
  font-variant-numeric:tabular-nums; }
table.slices td small { display:block; color:var(--muted); font-size:11px; }
table.sortable th { cursor:pointer; user-select:none; }
table.sortable th[aria-sort=ascending]::after { content:" ▲"; }
table.sortable th[aria-sort=descending]::after { content:" ▼"; }
table.mini { width:100%; font-size:12px; margin:4px 0 0; }
table.mini th, table.mini td { padding:2px 4px; white-space:nowrap; }
table.artifacts td, table.components td { font-size:12px; }
.better { color:var(--ok); } .worse { color:var(--bad); } .same { color:var(--muted); }
.sev.error { color:var(--bad); font-weight:600; } .sev.warning { color:var(--warn); }
.state.failed { color:var(--bad); font-weight:600; } .state.cached { color:var(--muted); }
.grid { display:grid; grid-template-columns:repeat(auto-fill, minmax(350px, 1fr)); gap:14px; }
.card { border:1px solid var(--line); border-radius:8px; padding:10px 12px; background:#fff;
  overflow-x:auto; }
.card.wide { margin:6px 0; }
details { margin:8px 0; }
summary { cursor:pointer; color:#3b6fb6; font-weight:500; }
.legend { margin:6px 0 10px; color:var(--muted); font-size:12px; }
.legend span { margin-right:16px; }
.legend i, i.dot { display:inline-block; width:10px; height:10px; border-radius:2px;
  margin-right:5px; vertical-align:-1px; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:4px 18px; margin:10px 0; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; }
.count { background:var(--badbg); color:var(--bad); border-radius:10px; padding:0 8px;
  font-size:12px; }
svg.chart { display:block; max-width:100%; height:auto; }
svg .grid { stroke:#eef1f5; } svg .axis { stroke:#9aa5b1; }
svg .tick { font-size:10px; fill:#52606d; } svg .label { font-size:11px; fill:#52606d; }
svg .empty { font-size:12px; fill:#9aa5b1; }
footer { text-align:center; color:var(--muted); font-size:12px; padding:0 0 24px; }
"""

# Sortable tables: a click on a header sorts by that column (numbers by value), again reverses.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var column = th.cellIndex, body = table.tBodies[0];
      function key(row) {
        var cell = row.cells[column];
        return cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
      }
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var order = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def render(data):
    """The whole page: HTML with its styles, charts and script inline."""
    record = data["record"]
    gate = None
    if data["evaluation"] is not None and data["evaluation"]["gates"]:
        gates = data["evaluation"]["gates"]
        gate = "; ".join(g.describe() for g in gates)
        data = {**data, "gate": gate, "gate_metric": gates[0].metric}
    else:
        data = {**data, "gate": None, "gate_metric": None}
    sections = [
        ("data", "Data", _data_section(data)),
        ("training", "Training", _training_section(data)),
        ("evaluation", "Evaluation", _evaluation_section(data)),
        ("blessing", "Blessing", _blessing_section(data)),
        ("push", "Push", _push_section(data)),
        ("lineage", "Lineage", _lineage_section(data)),
    ]
    title = f"{data['pipeline']}: run {record['run_id']}"
    started = record["started"].replace("T", " ").rstrip("Z")
    duration = f", {record['duration_s']:.1f} s" if record["duration_s"] else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{_e(data['pipeline'])} {_outcome_badge(record)}</h1>"
        f"<p>Run <code>{_e(record['run_id'])}</code>, started {_e(started)} UTC{_e(duration)}"
        f"{' · gate: ' + _e(gate) if gate else ''}</p></header>"
        "<nav>" + "".join(f'<a href="#{i}">{_e(t)}</a>' for i, t, _ in sections) + "</nav>"
        "<main>"
        + _summary_section(data)
        + "".join(f'<section id="{i}"><h2>{_e(t)}</h2>{body}</section>' for i, t, body in sections)
        + "</main>"
        f"<footer>Written by <code>python -m pipeline report</code> at {_e(data['generated'])}."
        "</footer>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
