"""The report's page: what `collect` read, arranged as the templates show it (rows, tiles,
charts), written by Jinja2 with autoescape on, so every text from the run (a feature name, a
slice value, an error message) reaches the page as text, never as markup."""

import math

import jinja2
import markupsafe

from components.evaluator.tasks import CHANGE_CHECK, LOWER_IS_BETTER, TASK_METRICS, gate_checks
from components.example_validator import drift
from pipeline.report import charts, plot_data
from pipeline.report.formats import NONE, compact, number

_SLICES_CHARTED = 40
# Metrics that describe rather than score: no change of theirs is better or worse.
_UNRANKED = frozenset({"example_count", "calibration", "mean_label", "mean_prediction"})

# The longest text the page shows of any one value (a cell, a name, a message): a CSV cell of
# 20 MB must not make a page of 63 MB. What is cut says so and how long it was.
MAX_TEXT = 500


def cut(value):
    """`value` as the page writes it: a text longer than MAX_TEXT characters cut to it (the
    templates' own markup, a macro's output, is the page itself and stays whole)."""
    if (
        isinstance(value, str)
        and not isinstance(value, markupsafe.Markup)
        and len(value) > MAX_TEXT
    ):
        return f"{value[:MAX_TEXT]}\N{HORIZONTAL ELLIPSIS} (cut: {len(value):,} characters)"
    return value


_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("pipeline.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=cut,  # every {{ value }} of every template
)
_ENVIRONMENT.filters["number"] = number
_ENVIRONMENT.globals.update(
    none=NONE,
    candidate_color=charts.CANDIDATE_COLOR,
    baseline_color=charts.BASELINE_COLOR,
    max_text=MAX_TEXT,
)
# In the page's first bytes: how `report --out` knows a file it may write over.
GENERATOR = "tfx-estimator-kit report"


def render(data):
    """The whole page: HTML with its styles, charts and script inline."""
    return _ENVIRONMENT.get_template("report.html.j2").render(_context(data))


def _context(data):
    """The templates' context: `data` (from `collect`) with its tables and charts laid out."""
    record, evaluation = data["record"], data["evaluation"]
    gates = evaluation["gates"] if evaluation is not None else []
    outcome = record["outcome"].replace("_", " ")
    if record["outcome"] == "failed" and record["failed_component"]:
        outcome = f"failed in {record['failed_component']}"
    overall = _overall(evaluation)
    return {
        **data,
        "generator": GENERATOR,
        "title": f"{data['pipeline']}: run {record['run_id']}",
        "started": record["started"].replace("T", " ").rstrip("Z"),
        "outcome": outcome,
        "gate": "; ".join(g.describe() for g in gates) or None,
        "tiles": _tiles(data, overall),
        "statistics": _statistics(data["statistics"]),
        "training": _training(data["training"]),
        "evaluation": _evaluation(evaluation, overall, gates[0].metric if gates else None),
        "checks": _checks(evaluation, overall),
    }


def _overall(evaluation):
    """The overall slice's metrics, or None when there is none."""
    slices = evaluation["slices"] if evaluation is not None else []
    return next((s for s in slices if not s["keys"]), None)


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


def _tiles(data, overall):
    """The headline figures at the top: (name, value, what is under it or None)."""
    tiles = []
    if overall is not None:
        for name in _ordered_metrics(overall["candidate"])[:4]:
            baseline = overall["baseline"].get(name)
            under = f"baseline {number(baseline)}" if baseline is not None else None
            tiles.append((name, number(overall["candidate"][name]), under))
    if data["blessing"] is not None:
        tiles.append(("blessed", "yes" if data["blessing"]["blessed"] else "no", None))
    push = data["push"]
    if push is not None:
        tiles.append(("pushed", push["version"] if push["pushed"] else "nothing", None))
    if data["record"]["input_rows"] is not None:
        tiles.append(("input rows", number(data["record"]["input_rows"]), None))
    return tiles


def _statistics(statistics):
    """Per feature card: its chart and its summary row per split."""
    if statistics is None:
        return None
    colors = charts.split_colors(statistics["splits"])
    return {
        **statistics,
        "counts": ", ".join(f"{s} {number(n)} examples" for s, n in statistics["splits"].items()),
        "legend": list(colors.items()),
        "cards": [_feature_card(name, f, colors) for name, f in statistics["features"].items()],
    }


def _feature_card(name, feature, colors):
    splits = feature["splits"]
    drawn = [(split, colors[split], entry["chart"]) for split, entry in splits.items()]
    if drawn and drawn[0][2]["kind"] == "values":
        chart = charts.values(name, [(s, c, d["shares"]) for s, c, d in drawn])
    else:
        chart = charts.histogram(name, [(s, c, d["buckets"]) for s, c, d in drawn])
    numeric = any("mean" in entry["row"] for entry in splits.values())
    compared = any("drift" in entry["row"] for entry in splits.values())
    # The chart shows the range and the top values.
    header = ["count", "missing"] + (["mean", "std"] if numeric else ["unique"])
    rows = []
    for split, entry in splits.items():
        row = entry["row"]
        cells = [compact(row["count"]), f"{row['missing_pct']:.1f}%"]
        if numeric:
            cells += [compact(row.get(k)) for k in ("mean", "std_dev")]
        else:
            cells.append(compact(row.get("unique")))
        if compared:
            found = row.get("drift")
            cells.append(
                # Rounding noise (1e-17) reads as no drift.
                f"{round(found['value'], 6):.3g} {drift.SHORT_NAMES[found['metric']]}"
                if found
                else NONE
            )
        rows.append((split, colors[split], cells))
    return {
        "name": name,
        "type": feature["type"],
        "chart": chart,
        "header": header + (["drift"] if compared else []),
        "rows": rows,
    }


def _training(training):
    """The curves charted (a tag logged more than once), and a table of those logged once."""
    if training is None:
        return None
    curves = training["curves"]
    kinds = training.get("series") or {}  # (not in what collect returned before 2026-12-04)
    folders = sorted(
        {f for by_folder in curves.values() for f in by_folder}, key=lambda f: (f != "train", f)
    )
    charted = {t: f for t, f in curves.items() if any(len(p) > 1 for p in f.values())}
    single = {t: f for t, f in curves.items() if t not in charted}
    # A series that never moves (a baseline's accuracy, a constant learning rate) says nothing
    # a chart would show: left out, and named under the charts.
    moving = {t: {f: p for f, p in by.items() if not _flat(p)} for t, by in charted.items()}
    flat = sorted(t for t, by in moving.items() if not by)
    charted = {t: by for t, by in moving.items() if by}
    order = _chart_order(charted, kinds)
    logged = [f for f in folders if any(f in by_folder for by_folder in single.values())]
    style = _series_style(folders, kinds)
    strategy = training["strategy"] or ""
    if training["strategy_reason"]:
        strategy = f"{strategy} ({training['strategy_reason']})"
    choice = training.get("model_choice") or {}
    lines = list(choice.get("candidates", []))
    if choice.get("trivial"):  # beside the candidates, on the same rows (since 2026-12-04)
        lines.append(
            {
                "name": f"trivial ({choice['trivial']['model']})",
                **dict.fromkeys(("seconds", "steps", "strategy", "stop_reason"), ""),
                "chosen": False,
                **choice["trivial"],
            }
        )
    return {
        **training,
        "strategy": strategy,
        "choice_reason": choice.get("reason"),
        "choice_rows": choice.get("rows"),
        "choice_folds": choice.get("folds"),
        "temperature": number(choice.get("temperature")) if choice.get("temperature") else None,
        "candidates": [
            {
                **line,
                "strategy": line.get("strategy") or "",  # (not in records before 2026-12-03)
                "validation_loss": number(line["validation_loss"])
                + (f" ± {number(line['loss_spread'])}" if line.get("loss_spread") else ""),
                "weight": number(line.get("weight")) if "weight" in line else "",
                "best_step": number(line.get("best_step")) if "best_step" in line else "",
                "scores": ", ".join(
                    f"{k} {number(v)}" for k, v in line["validation_metrics"].items()
                ),
            }
            for line in lines
        ],
        "legend": style["legend"],
        "dashes": style["dashes"],
        "flat": flat,
        "tensorboard": f"tensorboard --logdir {training['uri']}",
        "importances": _importances(training.get("feature_importances")),
        "charts": [
            (
                tag,
                charts.line(
                    tag,
                    [
                        (f, style["lines"][f][0], charted[tag][f], style["lines"][f][1])
                        for f in sorted(charted[tag])
                    ],
                ),
            )
            for tag in order
        ],
        "logged_header": ["metric", *logged, "step"],
        "logged": [
            [tag]
            + [number(single[tag][f][-1][1]) if f in single[tag] else NONE for f in logged]
            + [number(max(p[-1][0] for p in single[tag].values()))]
            for tag in sorted(single)
        ],
    }


def _flat(points):
    values = [v for _, v in points if math.isfinite(v)]
    return len(values) > 1 and max(values) - min(values) <= 1e-12 * max(1.0, abs(values[0]))


_DASHES = {"train": None, "validation": "6 3", "eval": "2 3"}


def _chart_order(charted, kinds):
    """The tags charted: the loss, then what was also measured on held-out rows (metrics),
    then what training alone logged (the step rate, a canned model's layer summaries)."""

    def training_only(tag):
        return all(kinds.get(f, ("", f))[1] == "train" for f in charted[tag])

    return sorted(charted, key=lambda t: (t != "loss", training_only(t), t))


def _series_style(folders, kinds):
    """Each series' (color, dash): a color per candidate (per folder for a single model), a
    dash per kind (training solid, validation dashed, eval dotted); the legends of both."""
    candidates = sorted({kinds.get(f, ("", f))[0] for f in folders})
    if candidates == [""]:  # one model: a color per folder, as before candidates
        colors = charts.split_colors(folders)
        return {
            "lines": {f: (colors[f], None) for f in folders},
            "legend": list(colors.items()),
            "dashes": [],
        }
    colors = charts.split_colors(candidates)
    lines = {}
    for f in folders:
        candidate, kind = kinds.get(f, ("", f))
        # A fold's curves (`fold-2 validation`) are dashed as their kind.
        lines[f] = (colors[candidate], _DASHES.get(kind.split(" ")[-1], "1 2"))
    used = {kinds.get(f, ("", f))[1].split(" ")[-1] for f in folders}
    return {
        "lines": lines,
        "legend": list(colors.items()),
        "dashes": [(kind, dash) for kind, dash in _DASHES.items() if kind in used],
    }


def _importances(importances):
    """A bar chart of the largest feature importances, when the Trainer recorded them."""
    if not importances:
        return None
    total = sum(v for v in importances.values() if v > 0) or 1.0
    shares = {name: 100 * v / total for name, v in importances.items()}
    return charts.values("feature importance", [("gain", charts.CANDIDATE_COLOR, shares)])


def _change(name, change):
    """The candidate's change from the baseline as (text, css class, sort key): green when
    better, red when worse; counts, means and calibration (best at 1) have no better side."""
    if change is None or math.isnan(change):
        return (NONE, "same", "")
    metric = name.split("/")[0]
    better = change > 0 if metric not in LOWER_IS_BETTER else change < 0
    css = "same" if change == 0 or metric in _UNRANKED else ("better" if better else "worse")
    return (f"{'+' if change > 0 else ''}{number(change)}", css, change)


def _evaluation(evaluation, overall, gate_metric):
    """The overall table (candidate, baseline, change), the gate metric charted per slice and
    every metric per slice."""
    if evaluation is None:
        return None
    slices = evaluation["slices"]
    with_baseline = any(s["baseline"] for s in slices)
    overall_rows = [
        (
            name,
            number(overall["candidate"][name]),
            number(overall["baseline"].get(name)),
            _change(name, overall["change"].get(name)),
        )
        for name in (_ordered_metrics(overall["candidate"]) if overall else [])
    ]
    return {
        **evaluation,
        "with_baseline": with_baseline,
        "overall": overall_rows,
        "messages": [f["message"] for f in evaluation["failures"] if f["message"]],
        "sliced": _sliced(slices, with_baseline, gate_metric),
        "pictures": _pictures(evaluation.get("plots") or {}),
    }


def _pictures(plots):
    """The evaluation's charts from TFMA's plots of the overall slice: [(title, chart, what
    it shows)], the candidate's with the baseline's beside it where both are there."""
    models = [
        (m, c)
        for m, c in (("candidate", charts.CANDIDATE_COLOR), ("baseline", charts.BASELINE_COLOR))
        if m in plots
    ]
    pictures = []
    if any("roc" in plots[m] for m, _ in models):
        for kind, title, x, y, note in (
            (
                "roc",
                "ROC curve",
                "false positive rate",
                "true positive rate (recall)",
                "the share of positives found against the share of negatives taken for positives, at every threshold; the diagonal is a model that ranks at random",
            ),
            (
                "pr",
                "Precision-recall curve",
                "recall",
                "precision",
                "of the examples predicted positive, the share that are, against the share of positives found, at every threshold",
            ),
        ):
            series = [(m, c, plots[m].get(kind) or []) for m, c in models]
            pictures.append((title, charts.curve(kind, title, series, x, y), note))
    confusion = plots.get("candidate", {}).get("confusion")
    if confusion:
        threshold = f"{confusion['threshold']:.4g}"
        pictures.append(
            (
                "Confusion matrix",
                charts.confusion(
                    f"confusion matrix at threshold {threshold}",
                    ["negative", "positive"],
                    confusion["cells"],
                ),
                f"the candidate's predictions at the threshold {threshold} (a probability above it is positive)",
            )
        )
    cells = plots.get("candidate", {}).get("multiclass_confusion")
    if cells:
        classes = [f"class {i}" for i in range(len(cells))]
        pictures.append(
            (
                "Confusion matrix",
                charts.confusion("confusion matrix", classes, cells),
                "the candidate's most probable class against the label, by class id (the order of the label's vocabulary)",
            )
        )
    binary = any("roc" in plots[m] for m, _ in models)
    series = [
        (m, c, plot_data.calibration_bins(plots[m].get("calibration") or [], binary))
        for m, c in models
    ]
    if any(bins for _, _, bins in series):
        if binary:
            title, note = (
                "Calibration",
                "per tenth of the predicted probability, the share of positives against the mean prediction; on the diagonal the probabilities can be taken at their word",
            )
            x, y = "mean predicted probability", "observed share of positives"
        else:
            title, note = (
                "Predicted against actual",
                f"the examples in about {plot_data.PREDICTED_ACTUAL_BINS} groups of equal size by prediction: each group's mean label against its mean prediction; the distance from the diagonal is the residual",
            )
            x, y = "mean prediction", "mean label"
        pictures.append(
            (
                title,
                charts.predicted_against_observed("calibration", title, series, x, y, unit=binary),
                note,
            )
        )
    return pictures


def _sliced(slices, with_baseline, gate_metric):
    """Every metric per slice (a row each, sortable), and one charted for the largest slices:
    the gate's metric, else the first there is."""
    sliced = [s for s in slices if s["keys"]]
    if not sliced:
        return None
    names = [n for n in _ordered_metrics(sliced[0]["candidate"]) if "/" not in n]
    charted = gate_metric if gate_metric in names else None
    charted = charted or next((n for n in names if n != "example_count"), None)
    largest = sorted(sliced, key=lambda s: -(s["candidate"].get("example_count") or 0))
    largest = largest[:_SLICES_CHARTED]
    rows = []
    for s in sliced:
        first = s["keys"][0][1]
        cells = []
        for name in names:
            value, base = s["candidate"].get(name), s["baseline"].get(name)
            under = number(base) if with_baseline and name != "example_count" else None
            key = "" if value is None or math.isnan(value) else value
            cells.append((number(value), under, key))
        rows.append(
            (_slice_label(s), first if isinstance(first, int | float) else str(first), cells)
        )
    return {
        "columns": ", ".join(sorted({c for s in sliced for c, _ in s["keys"]})),
        "count": len(sliced),
        "charted": charted,
        "note": (
            f" (the {_SLICES_CHARTED} largest of {len(sliced)})"
            if len(sliced) > _SLICES_CHARTED
            else ""
        ),
        "chart": (
            charts.slices(
                charted,
                [
                    (_slice_label(s), s["candidate"].get(charted), s["baseline"].get(charted))
                    for s in sliced
                    if s in largest
                ],
            )
            if charted
            else None
        ),
        "names": names,
        "rows": rows,
    }


def _slice_label(slice_):
    return ", ".join(f"{v}" for _, v in slice_["keys"])


def _checks(evaluation, overall):
    """One row per check the gate made on the overall slice (`gate_checks`): (check,
    candidate, baseline, change, result), result 'passed', 'failed' or 'not checked'."""
    if evaluation is None:
        return []
    has_baseline = bool(overall and overall["baseline"])
    failed = {(f["metric"], f["kind"]) for f in evaluation["failures"]}
    rows = []
    for gate in evaluation["gates"]:
        metric = gate.metric
        side = overall or {"candidate": {}, "baseline": {}, "change": {}}
        for check in gate_checks(gate, baseline="the baseline"):
            if check.kind == CHANGE_CHECK and not has_baseline:
                result = "not checked"
            else:
                result = "failed" if (metric, check.kind) in failed else "passed"
            rows.append(
                (
                    check.text,
                    number(side["candidate"].get(metric)),
                    number(side["baseline"].get(metric)) if has_baseline else NONE,
                    _change(metric, side["change"].get(metric) if has_baseline else None),
                    result,
                )
            )
    return rows
