"""Drift and skew: how far one column's distribution moved between two sets of statistics.

Pure numpy and proto work, no TensorFlow, so `python -m pipeline stats` shows the same figures
the ExampleValidator gates on. Two distances, as TFDV's comparators use them, both in [0, 1]:

- string columns: the L-infinity distance between the two vectors of value shares, the largest
  change of any one value's share of the column's values. Shares come from the values the
  statistics list (StatisticsGen's rank histogram: every value with an exact count up to 1,000
  distinct values, else TFDV's top values) over all the column's values; whatever is not listed
  is pooled into one "other values" share. Beyond 1,000 distinct values a change among the
  unlisted ones is therefore seen only through that pooled share. (TFDV divides by the listed
  counts instead, which inflates the shares of a long-tailed column.)
- numeric columns: the Jensen-Shannon divergence (log base 2) of the two distributions on common
  bins. Each side's cumulative distribution is known at its histogram boundaries (the 10-bucket
  quantiles histogram: min, deciles, max) and taken as linear in between; the bins are cut at
  every interior boundary of both sides, with the two outer bins open-ended. Open outer bins keep
  one extreme value from moving the figure (TFDV's equal-width histograms between min and max
  do not), and a point mass (a repeated quantile) stays a point mass.

A column missing on either side, empty, or of another kind on each side is not compared: the
schema checks report those.
"""

import dataclasses

import numpy as np
from tensorflow_metadata.proto.v0 import anomalies_pb2, statistics_pb2

L_INFTY = "L_INFTY"
JENSEN_SHANNON = "JENSEN_SHANNON_DIVERGENCE"
METRIC_NAMES = {L_INFTY: "L-infinity distance", JENSEN_SHANNON: "Jensen-Shannon divergence"}
SHORT_NAMES = {L_INFTY: "L-inf", JENSEN_SHANNON: "JSD"}
ANOMALY_TYPES = {
    L_INFTY: anomalies_pb2.AnomalyInfo.COMPARATOR_L_INFTY_HIGH,
    JENSEN_SHANNON: anomalies_pb2.AnomalyInfo.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH,
}
ALL_FEATURES = "*"  # a thresholds key that applies to every column without its own entry
OTHER_VALUES = "(other values)"  # the pooled share of the values the statistics do not list
_Hist = statistics_pb2.Histogram


@dataclasses.dataclass(frozen=True)
class Distance:
    """One column's distance between a baseline and the statistics under test."""

    column: str
    metric: str  # L_INFTY or JENSEN_SHANNON
    value: float
    detail: str  # what moved most, for people: "'Cash' 41% vs 18%", "mean 1.02 vs 0.01"

    def describe(self) -> str:
        return f"{METRIC_NAMES[self.metric]} {self.value:.3g} ({self.detail})"


def _name(feature: statistics_pb2.FeatureNameStatistics) -> str:
    return ".".join(feature.path.step) if feature.path.step else feature.name


def features_by_name(
    dataset: statistics_pb2.DatasetFeatureStatistics,
) -> dict[str, statistics_pb2.FeatureNameStatistics]:
    return {_name(feature): feature for feature in dataset.features}


def value_shares(stats: statistics_pb2.StringStatistics) -> dict[str, float]:
    """Each listed value's share of all the column's values, the rest under OTHER_VALUES."""
    if stats.rank_histogram.buckets:
        counts = {b.label: b.sample_count for b in stats.rank_histogram.buckets}
    else:
        counts = {v.value: v.frequency for v in stats.top_values}
    total = max(stats.common_stats.tot_num_values, sum(counts.values()))
    if not total:
        return {}
    shares = {value: count / total for value, count in counts.items()}
    rest = 1.0 - sum(shares.values())
    if rest > 1e-12:
        shares[OTHER_VALUES] = shares.get(OTHER_VALUES, 0.0) + rest
    return shares


def l_infinity(baseline: dict[str, float], current: dict[str, float]) -> tuple[float, str]:
    """The largest share change, and which value it was."""
    values = sorted(set(baseline) | set(current))
    value = max(values, key=lambda v: (abs(current.get(v, 0.0) - baseline.get(v, 0.0)), v))
    now, before = current.get(value, 0.0), baseline.get(value, 0.0)
    shown = value if value == OTHER_VALUES else repr(value)
    return abs(now - before), f"{shown} {100 * now:.3g}% vs {100 * before:.3g}%"


def _histogram(stats: statistics_pb2.NumericStatistics) -> statistics_pb2.Histogram | None:
    """The quantiles histogram, else the standard one (statistics from elsewhere)."""
    for kind in (_Hist.QUANTILES, _Hist.STANDARD):
        for histogram in stats.histograms:
            if histogram.type == kind and histogram.buckets:
                return histogram
    return None


def cdf_knots(histogram: statistics_pb2.Histogram) -> tuple[np.ndarray, np.ndarray]:
    """(x, F(x)) at every bucket boundary, increasing in x, F right-continuous (P(X <= x))."""
    total = sum(b.sample_count for b in histogram.buckets)
    xs, fs, seen = [], [], 0.0
    for bucket in histogram.buckets:
        xs += [bucket.low_value, bucket.high_value]
        fs += [seen / total, (seen + bucket.sample_count) / total]
        seen += bucket.sample_count
    xs, fs = np.asarray(xs, dtype=np.float64), np.asarray(fs)
    order = np.lexsort((fs, xs))
    xs, fs = xs[order], np.maximum.accumulate(fs[order])
    last = np.append(xs[1:] != xs[:-1], True)  # per repeated x, its largest F: a point mass
    return xs[last], fs[last]


def bin_masses(knots: tuple[np.ndarray, np.ndarray], edges: np.ndarray) -> np.ndarray:
    """Mass in (-inf, e0], (e0, e1], ..., (e_last, inf) under the piecewise-linear CDF."""
    xs, fs = knots
    cdf = np.interp(edges, xs, fs, left=0.0, right=1.0)
    return np.diff(np.concatenate([[0.0], cdf, [1.0]]))


def jensen_shannon(p: np.ndarray, q: np.ndarray) -> float:
    """JSD in bits (0 for equal distributions, 1 for disjoint ones)."""
    m = (p + q) / 2

    def kl(a):
        inside = a > 0
        return float(np.sum(a[inside] * np.log2(a[inside] / m[inside])))

    return max(0.0, (kl(p) + kl(q)) / 2)


def numeric_divergence(
    baseline: statistics_pb2.NumericStatistics, current: statistics_pb2.NumericStatistics
) -> tuple[float, str] | None:
    before, now = _histogram(baseline), _histogram(current)
    if before is None or now is None:
        return None
    knots = cdf_knots(before), cdf_knots(now)
    edges = np.unique(np.concatenate([xs[1:-1] if len(xs) > 2 else xs for xs, _ in knots]))
    value = jensen_shannon(bin_masses(knots[0], edges), bin_masses(knots[1], edges))
    return value, (
        f"mean {current.mean:.4g} vs {baseline.mean:.4g}, "
        f"std {current.std_dev:.4g} vs {baseline.std_dev:.4g}"
    )


def _has_values(feature: statistics_pb2.FeatureNameStatistics) -> bool:
    which = feature.WhichOneof("stats")
    return bool(which) and getattr(feature, which).common_stats.tot_num_values > 0


def distance(
    baseline: statistics_pb2.FeatureNameStatistics, current: statistics_pb2.FeatureNameStatistics
) -> Distance | None:
    """L-infinity for string columns, Jensen-Shannon divergence for numeric ones; None when
    the two cannot be compared (no values on a side, or a string and a numeric side)."""
    if not (_has_values(baseline) and _has_values(current)):
        return None
    which = current.WhichOneof("stats")
    if baseline.WhichOneof("stats") != which:
        return None
    if which == "string_stats":
        value, detail = l_infinity(
            value_shares(baseline.string_stats), value_shares(current.string_stats)
        )
        return Distance(_name(current), L_INFTY, value, detail)
    if which == "num_stats":
        found = numeric_divergence(baseline.num_stats, current.num_stats)
        if found is not None:
            return Distance(_name(current), JENSEN_SHANNON, *found)
    return None


def distances(
    baseline: statistics_pb2.DatasetFeatureStatistics,
    current: statistics_pb2.DatasetFeatureStatistics,
    columns=None,
) -> list[Distance]:
    """Every comparable column of `current` (or of `columns`) against `baseline`, by name."""
    before, now = features_by_name(baseline), features_by_name(current)
    found = []
    for name in sorted(now) if columns is None else columns:
        if name in before and name in now:
            measured = distance(before[name], now[name])
            if measured is not None:
                found.append(measured)
    return found


def threshold_for(thresholds: dict[str, float], column: str) -> float | None:
    return thresholds.get(column, thresholds.get(ALL_FEATURES))


def check_thresholds(thresholds, known_columns=None, setting: str = "thresholds") -> dict:
    """{column: threshold} from a mapping or pairs; a bad value or unknown column raises
    ValueError naming `setting` and the key."""
    pairs = list(thresholds.items()) if isinstance(thresholds, dict) else list(thresholds)
    result = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"{setting}: {pair!r} is not a (column, threshold) pair.")
        column, value = pair
        if not isinstance(column, str) or not column:
            raise ValueError(f"{setting}: {column!r} is not a column name.")
        if column in result:
            raise ValueError(f"{setting}: {column!r} is given twice.")
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{setting}[{column!r}]: {value!r} is not a number.") from None
        if not 0.0 < value <= 1.0:
            raise ValueError(
                f"{setting}[{column!r}]: {value} is outside (0, 1], where both distances lie."
            )
        result[column] = value
    if known_columns is not None:
        unknown = sorted(set(result) - set(known_columns) - {ALL_FEATURES})
        if unknown:
            raise ValueError(
                f"{setting}: no column {', '.join(map(repr, unknown))} in the schema; its "
                f"columns: {', '.join(sorted(known_columns))}."
            )
    return result
