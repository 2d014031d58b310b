"""The checks: one split's statistics against the schema, as tensorflow_metadata `Anomalies`.

Pure proto work, no TensorFlow, so the configuration can name the kinds and tests run fast.
Each anomaly is one `AnomalyInfo.Reason` whose `type` is TFDV's enum value for it and whose
`short_description` is the kind name below, the name `warn_only` takes.
"""

import dataclasses
from collections.abc import Iterable, Sequence

from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2

from components.example_validator import drift as drift_lib

_Type = anomalies_pb2.AnomalyInfo
_Stats = statistics_pb2.FeatureNameStatistics

KINDS = {
    "missing_column": "a schema column with no value in the split",  # unless min_count: 0
    "new_column": "a column the schema does not have",
    "type_change": "values of another type than the schema's",
    "low_presence": "fewer examples hold the column than presence.min_fraction or min_count",
    "out_of_domain": "less than min_domain_mass of the values in the column's string_domain",
    "out_of_range": "numbers outside the column's int_domain or float_domain",
    "label_missing": "the label column absent from some or all examples",
    "label_constant": "the label column holds a single value",
    "drift": "the train split moved away from the latest blessed model's training data",
    "skew": "the eval split differs from the train split",
}
# Lifecycle stages TFDV does not validate: a column is retired by marking it so.
_UNCHECKED_STAGES = (schema_pb2.DEPRECATED, schema_pb2.DISABLED, schema_pb2.PLANNED)
_COMPATIBLE = {
    schema_pb2.INT: (_Stats.INT,),
    schema_pb2.FLOAT: (_Stats.FLOAT,),
    schema_pb2.BYTES: (_Stats.STRING, _Stats.BYTES),
}
_TYPE_NAMES = {
    _Stats.INT: "INT",
    _Stats.FLOAT: "FLOAT",
    _Stats.STRING: "BYTES",
    _Stats.BYTES: "BYTES",
    _Stats.STRUCT: "STRUCT",
}
_SHOWN_VALUES = 5  # out-of-domain values named in a description


def check_kinds(kinds: Iterable[str]) -> list[str]:
    """`kinds` as a list; an unknown name fails here, not as a check that never matches."""
    kinds = list(kinds)
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ValueError(
            f"unknown anomaly kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}."
        )
    return kinds


@dataclasses.dataclass(frozen=True)
class Anomaly:
    column: str
    kind: str
    type: int  # AnomalyInfo.Type
    observed: str
    expected: str

    @property
    def description(self) -> str:
        return f"{KINDS[self.kind]}: observed {self.observed}, expected {self.expected}"


def _name(feature: _Stats) -> str:
    return ".".join(feature.path.step) if feature.path.step else feature.name


def _common(feature: _Stats) -> statistics_pb2.CommonStatistics | None:
    which = feature.WhichOneof("stats")
    return getattr(feature, which).common_stats if which else None


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.4g}%"


def _global_domain(schema: schema_pb2.Schema, field: str, name: str):
    return next((domain for domain in getattr(schema, field) if domain.name == name), None)


def _domain(schema: schema_pb2.Schema, feature: schema_pb2.Feature):
    """(kind, domain) of `feature`, inline or the schema-level one its `domain` names."""
    which = feature.WhichOneof("domain_info")
    if which in ("string_domain", "int_domain", "float_domain"):
        return which, getattr(feature, which)
    if which == "domain":
        for field in ("string_domain", "int_domain", "float_domain"):
            domain = _global_domain(schema, field, feature.domain)
            if domain is not None:
                return field, domain
    return None, None


def _value_counts(stats: statistics_pb2.StringStatistics) -> dict[str, float]:
    """Counts of the values the statistics list: the rank histogram, else the top values."""
    if stats.rank_histogram.buckets:
        return {b.label: b.sample_count for b in stats.rank_histogram.buckets}
    return {v.value: v.frequency for v in stats.top_values}


def _string_domain(column, feature, domain, stats: _Stats) -> list[Anomaly]:
    """Values outside the domain above 1 - min_domain_mass of the column's values.

    The in-domain mass is the listed values' counts that are in the domain over all values.
    It is exact while the split has at most as many distinct values as the statistics list
    (1,000 in our rank histogram) and a lower bound beyond: unlisted values count as outside.
    """
    total = _common(stats).tot_num_values
    if not total or stats.WhichOneof("stats") != "string_stats":
        return []
    allowed = set(domain.value)
    counts = _value_counts(stats.string_stats)
    inside = sum(count for value, count in counts.items() if value in allowed) / total
    min_mass = (
        feature.distribution_constraints.min_domain_mass
        if feature.HasField("distribution_constraints")
        else 1.0
    )
    if inside >= min_mass:
        return []
    outside = sorted(
        ((count, value) for value, count in counts.items() if value not in allowed), reverse=True
    )
    shown = ", ".join(f"{value!r} {count:g}" for count, value in outside[:_SHOWN_VALUES])
    unlisted = " and values not listed" if sum(counts.values()) < total else ""
    return [
        Anomaly(
            column,
            "out_of_domain",
            _Type.ENUM_TYPE_UNEXPECTED_STRING_VALUES,
            f"{_percent(1 - inside)} outside ({shown}{unlisted})",
            f"at most {_percent(1 - min_mass)} outside {{{', '.join(sorted(allowed))}}}",
        )
    ]


def _numeric_domain(column, kind, domain, stats: _Stats) -> list[Anomaly]:
    if stats.WhichOneof("stats") != "num_stats" or not _common(stats).num_non_missing:
        return []
    small, big = (
        (_Type.INT_TYPE_SMALL_INT, _Type.INT_TYPE_BIG_INT)
        if kind == "int_domain"
        else (_Type.FLOAT_TYPE_SMALL_FLOAT, _Type.FLOAT_TYPE_BIG_FLOAT)
    )
    expected = (
        f"[{domain.min if domain.HasField('min') else '-inf'}, "
        f"{domain.max if domain.HasField('max') else 'inf'}]"
    )
    found = []
    if domain.HasField("min") and stats.num_stats.min < domain.min:
        found.append(
            Anomaly(
                column,
                "out_of_range",
                small,
                f"min {stats.num_stats.min:g}",
                f"values in {expected}",
            )
        )
    if domain.HasField("max") and stats.num_stats.max > domain.max:
        found.append(
            Anomaly(
                column, "out_of_range", big, f"max {stats.num_stats.max:g}", f"values in {expected}"
            )
        )
    return found


def _presence(column, feature: schema_pb2.Feature, present: int, examples: int) -> list[Anomaly]:
    presence = feature.presence
    if presence.min_fraction and present < presence.min_fraction * examples:
        return [
            Anomaly(
                column,
                "low_presence",
                _Type.FEATURE_TYPE_LOW_FRACTION_PRESENT,
                f"{_percent(present / examples)} of {examples} examples",
                f"at least {_percent(presence.min_fraction)}",
            )
        ]
    if present < presence.min_count:
        return [
            Anomaly(
                column,
                "low_presence",
                _Type.FEATURE_TYPE_LOW_NUMBER_PRESENT,
                f"{present} examples",
                f"at least {presence.min_count}",
            )
        ]
    return []


def _may_be_empty(feature: schema_pb2.Feature) -> bool:
    """A column the schema lets have no value in a split: `presence { min_count: 0 }`."""
    presence = feature.presence
    return feature.HasField("presence") and not presence.min_count and not presence.min_fraction


def _label(column: str, stats: _Stats | None, examples: int) -> list[Anomaly]:
    present = _common(stats).num_non_missing if stats is not None else 0
    if present < examples:
        return [
            Anomaly(
                column,
                "label_missing",
                _Type.FEATURE_TYPE_NOT_PRESENT
                if not present
                else _Type.FEATURE_TYPE_LOW_FRACTION_PRESENT,
                f"in {present} of {examples} examples",
                "in every example",
            )
        ]
    if stats is None:  # (an empty split: nothing to check)
        return []
    which = stats.WhichOneof("stats")
    if which == "num_stats" and stats.num_stats.min == stats.num_stats.max:
        observed = f"every value {stats.num_stats.min:g}"
    elif which == "string_stats" and stats.string_stats.unique == 1:
        observed = f"every value {stats.string_stats.top_values[0].value!r}"
    else:
        return []
    return [
        Anomaly(
            column,
            "label_constant",
            _Type.FEATURE_TYPE_LOW_UNIQUE,
            observed,
            "at least 2 distinct values",
        )
    ]


def find_anomalies(
    statistics: statistics_pb2.DatasetFeatureStatistics,
    schema: schema_pb2.Schema,
    raw_label_key: str = "",
) -> list[Anomaly]:
    """Every anomaly of one split; the label column, when named, is checked as a label."""
    examples = statistics.num_examples
    by_name = {_name(feature): feature for feature in statistics.features}
    found = []
    for feature in schema.feature:
        if feature.lifecycle_stage in _UNCHECKED_STAGES or feature.deprecated:
            continue
        stats = by_name.get(feature.name)
        if feature.name == raw_label_key:
            found += _label(feature.name, stats, examples)
            if stats is None:
                continue
        present = _common(stats).num_non_missing if stats is not None else 0
        if not present:
            if feature.name != raw_label_key and not _may_be_empty(feature):
                found.append(
                    Anomaly(
                        feature.name,
                        "missing_column",
                        _Type.SCHEMA_MISSING_COLUMN,
                        f"in 0 of {examples} examples",
                        "in the data",
                    )
                )
            continue
        if stats.type not in _COMPATIBLE.get(feature.type, (stats.type,)):
            found.append(
                Anomaly(
                    feature.name,
                    "type_change",
                    _Type.UNEXPECTED_DATA_TYPE,
                    _TYPE_NAMES.get(stats.type, str(stats.type)),
                    schema_pb2.FeatureType.Name(feature.type),
                )
            )
            continue
        if feature.name != raw_label_key:
            found += _presence(feature.name, feature, present, examples)
        kind, domain = _domain(schema, feature)
        if kind == "string_domain":
            found += _string_domain(feature.name, feature, domain, stats)
        elif kind is not None:
            found += _numeric_domain(feature.name, kind, domain, stats)
    known = {feature.name for feature in schema.feature}
    if raw_label_key and raw_label_key not in known:
        found += _label(raw_label_key, by_name.get(raw_label_key), examples)
    for name, stats in by_name.items():
        if name not in known and name != raw_label_key:
            found.append(
                Anomaly(
                    name,
                    "new_column",
                    _Type.SCHEMA_NEW_COLUMN,
                    f"{_TYPE_NAMES.get(stats.type, stats.type)} in "
                    f"{_common(stats).num_non_missing} of {examples} examples",
                    "no such column in the schema",
                )
            )
    return found


@dataclasses.dataclass(frozen=True)
class Measurement:
    """A drift or skew distance measured for a column with a threshold, anomalous or not."""

    kind: str  # "drift" or "skew"
    distance: drift_lib.Distance
    threshold: float

    @property
    def anomalous(self) -> bool:
        return self.distance.value > self.threshold

    def anomaly(self) -> Anomaly:
        return Anomaly(
            self.distance.column,
            self.kind,
            drift_lib.ANOMALY_TYPES[self.distance.metric],
            self.distance.describe(),
            f"at most {self.threshold:g}",
        )


def compared_columns(schema: schema_pb2.Schema, thresholds: dict[str, float]) -> dict:
    """{column: threshold} of the schema's checked columns that `thresholds` covers."""
    found = {}
    for feature in schema.feature:
        if feature.lifecycle_stage in _UNCHECKED_STAGES or feature.deprecated:
            continue
        threshold = drift_lib.threshold_for(thresholds, feature.name)
        if threshold is not None:
            found[feature.name] = threshold
    return found


def measure(
    kind: str,
    baseline: statistics_pb2.DatasetFeatureStatistics,
    current: statistics_pb2.DatasetFeatureStatistics,
    schema: schema_pb2.Schema,
    thresholds: dict[str, float],
) -> list[Measurement]:
    """`kind` ("drift" or "skew") of every schema column with a threshold: `current` against
    `baseline`, L-infinity for string columns, Jensen-Shannon divergence for numeric ones.

    Columns absent, empty or of another type on a side are not measured (the schema checks
    report them)."""
    columns = compared_columns(schema, thresholds)
    return [
        Measurement(kind, found, columns[found.column])
        for found in drift_lib.distances(baseline, current, list(columns))
    ]


def to_proto(
    anomalies: Sequence[Anomaly],
    schema: schema_pb2.Schema,
    warn_only: Iterable[str] = (),
    measurements: Sequence[Measurement] = (),
) -> anomalies_pb2.Anomalies:
    """`Anomalies` as TFDV writes them: one `AnomalyInfo` per column, a reason per anomaly,
    and, as TFDV's comparators do, a `drift_skew_info` per measured column (value, threshold).

    A column's severity is ERROR unless every one of its kinds is in `warn_only`.
    """
    warn_only = set(check_kinds(warn_only))
    result = anomalies_pb2.Anomalies(anomaly_name_format=anomalies_pb2.Anomalies.SERIALIZED_PATH)
    result.baseline.CopyFrom(schema)
    infos = {}
    for measurement in measurements:
        column = measurement.distance.column
        if column not in infos:
            infos[column] = result.drift_skew_info.add()
            infos[column].path.step.append(column)
        field = "drift_measurements" if measurement.kind == "drift" else "skew_measurements"
        getattr(infos[column], field).add(
            type=anomalies_pb2.DriftSkewInfo.Measurement.Type.Value(measurement.distance.metric),
            value=measurement.distance.value,
            threshold=measurement.threshold,
        )
    for anomaly in anomalies:
        info = result.anomaly_info[anomaly.column]
        if not info.path.step:
            info.path.step.append(anomaly.column)
            info.severity = _Type.WARNING
        if anomaly.kind not in warn_only:
            info.severity = _Type.ERROR
        info.reason.add(
            type=anomaly.type, short_description=anomaly.kind, description=anomaly.description
        )
    for info in result.anomaly_info.values():
        info.short_description = (
            info.reason[0].short_description if len(info.reason) == 1 else "Multiple errors"
        )
        info.description = " ".join(f"{reason.description}." for reason in info.reason)
    return result


def anomaly_lines(anomalies: anomalies_pb2.Anomalies, split: str) -> list[str]:
    """One line per anomaly: split, column, kind, severity, observed vs expected."""
    return [
        f"{split}: {column}: {reason.short_description} "
        f"({_Type.Severity.Name(info.severity).lower()}): {reason.description}"
        for column, info in sorted(anomalies.anomaly_info.items())
        for reason in info.reason
    ]


def has_errors(anomalies: anomalies_pb2.Anomalies) -> bool:
    return any(info.severity == _Type.ERROR for info in anomalies.anomaly_info.values())
