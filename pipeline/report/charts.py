"""The report's charts, drawn by hand so that the page needs nothing but itself: each function
lays a chart out as plain data (its lines, texts, bars and points in pixels), which the
`chart` macro of templates/charts.html.j2 writes as inline SVG."""

import dataclasses
import math

import markupsafe

from pipeline.report.formats import number, tick_labels

SPLIT_COLORS = ("#3b6fb6", "#e8892b", "#4f9a4a", "#c9483f", "#7a5cb0", "#3d9a9a")
CANDIDATE_COLOR, BASELINE_COLOR = "#3b6fb6", "#a3acb9"
_TOP_VALUES_SHOWN = 6


@dataclasses.dataclass
class Chart:
    """One SVG chart: `kind` is its `data-chart` attribute, `label` its accessible name."""

    kind: str
    width: float
    height: float
    label: str
    lines: list = dataclasses.field(default_factory=list)
    texts: list = dataclasses.field(default_factory=list)
    bars: list = dataclasses.field(default_factory=list)
    polylines: list = dataclasses.field(default_factory=list)
    points: list = dataclasses.field(default_factory=list)

    def line(self, css, x1, y1, x2, y2):
        self.lines.append({"css": css, "x1": x1, "y1": y1, "x2": x2, "y2": y2})

    def text(self, css, x, y, text, anchor="middle", title=None, vertical=False):
        self.texts.append(
            {
                "css": css,
                "x": x,
                "y": y,
                "text": text,
                "anchor": anchor,
                "title": title,
                "vertical": vertical,
            }
        )

    def bar(self, x, y, width, height, color, title, model=None, opacity=None):
        self.bars.append(
            {
                "x": x,
                "y": y,
                "width": width,
                "height": height,
                "color": color,
                "title": title,
                "model": model,
                "opacity": opacity,
            }
        )


def split_colors(splits):
    return {split: SPLIT_COLORS[i % len(SPLIT_COLORS)] for i, split in enumerate(splits)}


def ticks(low, high, count=4, cover=False):
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

    def chart(self, kind, label, x_ticks, y_ticks, x_label="", y_label=""):
        """A chart of this area, with its grid, axes, ticks and axis labels drawn."""
        chart = Chart(kind, self.width, self.height, label)
        base, right = self.height - self.bottom, self.width - self.right
        for value, text in zip(y_ticks, tick_labels(y_ticks), strict=True):
            y = self.y(value)
            chart.line("grid", self.left, y, right, y)
            chart.text("tick", self.left - 5, y + 3.5, text, "end")
        chart.line("axis", self.left, base, right, base)
        for value, text in zip(x_ticks, tick_labels(x_ticks), strict=True):
            x = self.x(value)
            chart.line("axis", x, base, x, base + 4)
            chart.text("tick", x, base + 15, text)
        if x_label:
            chart.text("label", (self.left + right) / 2, self.height - 4, x_label)
        if y_label:
            chart.text("label", 11, (self.top + base) / 2, y_label, vertical=True)
        return chart


def _empty(kind, label, text):
    chart = Chart(kind, 320, 60, label)
    chart.text("empty", 160, 34, text)
    return chart


def histogram(name, series):
    """The splits' equal-width histograms of a numeric feature, overlaid: series is
    [(split, color, [(low, high, % of values)])]."""
    series = [(s, c, b) for s, c, b in series if b]
    if not series:
        return _empty("histogram", name, "no values")
    low = min(b[0] for _, _, buckets in series for b in buckets)
    high = max(b[1] for _, _, buckets in series for b in buckets)
    x_ticks = ticks(low, high, 4)
    if high <= low:  # one value: its bar in the middle, its one tick under it
        low, high = low - 1, high + 1
    top = max(b[2] for _, _, buckets in series for b in buckets)
    y_ticks = ticks(0, top, 3, cover=True)
    plot = _Plot(320, 150, (low, high), (0, y_ticks[-1]))
    chart = plot.chart("histogram", f"histogram of {name}", x_ticks, y_ticks, name, "% of values")
    for split, color, buckets in series:
        for lo, hi, share in buckets:
            if hi <= lo:  # a bucket of one value: a narrow bar at it
                lo, hi = lo - (high - low) / 40, hi + (high - low) / 40
            x0, x1, y = plot.x(lo), plot.x(hi), plot.y(share)
            title = f"{split}: {lo:.6g} to {hi:.6g}: {share:.1f}%"
            chart.bar(
                x0, y, max(x1 - x0 - 0.5, 1), max(plot.y(0) - y, 0), color, title, opacity=0.55
            )
    return chart


def values(name, series):
    """The most frequent values of a categorical feature, a bar per split: series is
    [(split, color, {value: % of values})]; values ranked by the first split."""
    ranked = []
    for _, _, shares in series:
        for value in sorted(shares, key=lambda v: (-shares[v], v)):
            if value not in ranked:
                ranked.append(value)
    ranked = ranked[:_TOP_VALUES_SHOWN]
    if not ranked:
        return _empty("values", name, "no values")
    bar, gap = 8, 7
    group = bar * len(series) + gap
    height = 10 + group * len(ranked) + 34
    top = max(shares.get(v, 0.0) for _, _, shares in series for v in ranked)
    x_ticks = ticks(0, top, 3, cover=True)
    plot = _Plot(320, height, (0, x_ticks[-1]), (0, 1), left=112, right=16, top=10, bottom=34)
    chart = plot.chart("values", f"top values of {name}", x_ticks, [], f"% of values of {name}")
    for i, value in enumerate(ranked):
        y0 = plot.top + i * group
        shown = value if len(value) <= 16 else value[:15] + "…"
        chart.text("tick", plot.left - 6, y0 + group / 2, shown, "end", title=value)
        for j, (split, color, shares) in enumerate(series):
            share = shares.get(value, 0.0)
            width = max(plot.x(share) - plot.left, 0.5)
            title = f"{split}: {value}: {share:.1f}%"
            chart.bar(plot.left, y0 + j * bar, width, bar - 1, color, title)
    return chart


def line(title, series, x_label="step"):
    """Values over steps, a line per series: [(name, color, [(x, y)], dash or None)] (the
    dash, an SVG stroke-dasharray, optional)."""
    points = [p for _, _, pts, *_ in series for p in pts if math.isfinite(p[1])]
    if not points:
        return _empty("line", title, "no finite values")
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
    chart = plot.chart(
        "line",
        f"{title} over training steps",
        ticks(x_low, x_high, 4),
        ticks(y_low, y_high, 4),
        x_label,
    )
    for name, color, pts, *dash in series:
        pts = sorted(p for p in pts if math.isfinite(p[1]))
        if len(pts) > 1:
            _polyline(chart, plot, pts, color, dash[0] if dash else None)
        for x, y in pts:
            chart.points.append(
                {
                    "x": plot.x(x),
                    "y": plot.y(y),
                    "color": color,
                    "title": f"{name} step {x:g}: {number(y)}",
                }
            )
    return chart


def slices(metric, shown):
    """`metric` per slice, the candidate's bar beside the baseline's: shown is
    [(label, candidate value, baseline value or None)]."""
    shown = [(label, c, b) for label, c, b in shown if c is not None and math.isfinite(c)]
    if not shown:
        return _empty("slices", metric, f"no slice has a {metric}")
    models = [("candidate", CANDIDATE_COLOR)]
    if any(b is not None and math.isfinite(b) for _, _, b in shown):
        models.append(("baseline", BASELINE_COLOR))
    step = max(14 * len(models) + 8, 24)
    width = max(420, 52 + 12 + step * len(shown))
    found = [v for _, c, b in shown for v in (c, b) if v is not None and math.isfinite(v)]
    low = min(0.0, min(found))
    y_ticks = ticks(low, max(found), 4, cover=True)
    plot = _Plot(width, 210, (0, len(shown)), (low, y_ticks[-1]), left=52)
    chart = plot.chart("slices", f"{metric} per slice", [], y_ticks, "", metric)
    bar = (step - 8) / len(models)
    for i, (label, *by_model) in enumerate(shown):
        x0 = plot.left + i * step + 4
        for j, ((model, color), value) in enumerate(zip(models, by_model, strict=False)):
            if value is None or not math.isfinite(value):
                continue
            y, zero = plot.y(max(value, 0)), plot.y(min(value, 0))
            title = f"{label}: {model} {number(value)}"
            chart.bar(x0 + j * bar, y, bar - 1, max(zero - y, 0.5), color, title, model=model)
        chart.text("tick", x0 + (step - 8) / 2, plot.y(low) + 14, label)
    return chart


REFERENCE_COLOR = "#9aa5b1"
_REFERENCE_DASH = "4 3"


def _polyline(chart, plot, points, color, dash=None):
    # Numbers only, and as long as the curve needs: markup of the page, never cut as a text
    # from the run is (render.cut).
    path = markupsafe.Markup(" ".join(f"{plot.x(x):.1f},{plot.y(y):.1f}" for x, y in points))
    chart.polylines.append({"points": path, "color": color, "dash": dash})


def _square(kind, label, low, high, x_label, y_label):
    """A square plot of [low, high] on both axes with its diagonal (y = x) dashed."""
    plot = _Plot(300, 280, (low, high), (low, high), left=52, right=16)
    grid = ticks(low, high, 4)
    chart = plot.chart(kind, label, grid, grid, x_label, y_label)
    _polyline(chart, plot, [(low, low), (high, high)], REFERENCE_COLOR, _REFERENCE_DASH)
    return plot, chart


def curve(kind, label, series, x_label, y_label):
    """Curves on the unit square (ROC, precision-recall): [(name, color, [(x, y)])]; the
    diagonal is the ROC of a model that ranks at random."""
    plot, chart = _square(kind, label, 0.0, 1.0, x_label, y_label)
    if kind != "roc":
        chart.polylines.pop()  # a diagonal means nothing on a precision-recall plane
    for _, color, points in series:
        if len(points) > 1:
            _polyline(chart, plot, points, color)
    return chart


def predicted_against_observed(kind, label, series, x_label, y_label, unit=False):
    """Mean observed against mean predicted per bin, a line of points per model:
    [(name, color, [(predicted, observed, weight)])]; on the diagonal a model is calibrated.
    `unit`: both axes [0, 1] (probabilities), else the values' range."""
    found = [v for _, _, bins in series for p, o, _ in bins for v in (p, o) if math.isfinite(v)]
    if not found:
        return _empty(kind, label, "no examples")
    low, high = (0.0, 1.0) if unit else (min(found), max(found))
    if high <= low:
        low, high = low - 1, high + 1
    pad = 0.0 if unit else (high - low) * 0.05
    plot, chart = _square(kind, label, low - pad, high + pad, x_label, y_label)
    for name, color, bins in series:
        points = [(p, o) for p, o, _ in bins if math.isfinite(p) and math.isfinite(o)]
        if len(points) > 1:
            _polyline(chart, plot, points, color)
        for (p, o), (_, _, weight) in zip(points, bins, strict=False):
            title = (
                f"{name}: predicted {number(p)}, observed {number(o)} ({number(weight)} examples)"
            )
            chart.points.append({"x": plot.x(p), "y": plot.y(o), "color": color, "title": title})
    return chart


def confusion(label, classes, cells):
    """A confusion matrix: a row per actual class, a column per predicted one, each cell
    its count, shaded by its share of the row (the row's recall on the diagonal)."""
    k = len(classes)
    size = max(24, min(56, 480 // max(k, 1)))
    left, top = 90, 30
    width, height = left + k * size + 12, top + k * size + 36
    chart = Chart("confusion", width, height, label)
    chart.text("label", left + k * size / 2, 12, "predicted")
    chart.text("label", 12, top + k * size / 2, "actual", vertical=True)
    for i, row in enumerate(cells):
        total = sum(row) or 1.0
        y = top + i * size
        chart.text("tick", left - 6, y + size / 2 + 4, _short(classes[i]), "end", title=classes[i])
        for j, count in enumerate(row):
            x = left + j * size
            share = count / total
            title = f"actual {classes[i]}, predicted {classes[j]}: {number(count)} ({share:.1%} of the row)"
            chart.bar(
                x,
                y,
                size - 1,
                size - 1,
                CANDIDATE_COLOR,
                title,
                opacity=round(0.08 + 0.9 * share, 3),
            )
            css = "cell dark" if share > 0.5 else "cell"
            chart.text(css, x + size / 2, y + size / 2 + 4, compact_count(count))
    for j, name in enumerate(classes):
        chart.text(
            "tick", left + j * size + size / 2, top + k * size + 14, _short(name), title=name
        )
    return chart


def compact_count(value):
    """A count in a cell: whole, or in thousands (k) and millions (M) when long."""
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e4:
        return f"{value / 1e3:.3g}k"
    return number(value)


def _short(text, width=10):
    return text if len(text) <= width else text[: width - 1] + "…"
