"""Schema inference from statistics: pure proto work, no TensorFlow (TFDV's semantics, own code).

What a column gets, from the statistics of the inference split (`train` in the pipeline):

- `type`: INT, FLOAT or BYTES, from the statistics' feature type (STRING is BYTES).
- `presence`: `{min_fraction: 1.0 min_count: 1}` (required) when every example of every split
  holds the column; `{min_count: 1}` when some lack it; `{min_count: 0}` (may be empty in a
  split, as ExampleValidator reads it) when some split holds no value of it at all. Requiring
  a column eval lacks would fail the very data the schema was inferred from, and the Transform
  parses a required single-valued column as a dense tensor, so the other splits loosen this.
- `value_count {min: 1 max: 1}` when every example holding the column holds one value (in
  every split): a CSV column always does. Nothing otherwise.
- `string_domain` (inline, the values seen, sorted) for a BYTES column with at most
  `DOMAIN_MAX_VALUES` distinct values, each seen `DOMAIN_MIN_COUNT_PER_VALUE` times on
  average, all listed in the statistics; with `distribution_constraints {min_domain_mass:
  DOMAIN_MIN_MASS}`, so up to 5% of another split's values may be values the inference split
  never showed (the out_of_domain check's threshold) before ExampleValidator fails the run.
- `int_domain { is_categorical: true }` (no range) for an INT column whose values span at
  most `CATEGORICAL_INT_MAX_VALUES` integers (max - min + 1), each possible value seen
  `DOMAIN_MIN_COUNT_PER_VALUE` times on average: a code, a rating, a flag, not a quantity.
  The auto preprocessing (components/auto) makes such a column a category; a schema file
  can mark any INT column so.
- No numeric range (`int_domain` or `float_domain` min and max): a range seen in one sample
  is not a contract (the next batch of data will have a larger fare), so ranges are left to
  the user.
"""

from collections.abc import Mapping

from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

_Stats = statistics_pb2.FeatureNameStatistics
_TYPES = {
    _Stats.INT: schema_pb2.INT,
    _Stats.FLOAT: schema_pb2.FLOAT,
    _Stats.STRING: schema_pb2.BYTES,
    _Stats.BYTES: schema_pb2.BYTES,
}
DOMAIN_MAX_VALUES = 100  # TFDV's default max_string_domain_size
DOMAIN_MIN_COUNT_PER_VALUE = 10  # values / distinct values: categories repeat, ids do not
DOMAIN_MIN_MASS = 0.95
CATEGORICAL_INT_MAX_VALUES = 20
_NOT_UTF8 = "__BYTES_VALUE__"  # StatisticsGen's (and TFDV's) label for a value that is not UTF-8


def _name(feature: _Stats) -> str:
    return ".".join(feature.path.step) if feature.path.step else feature.name


def _common(feature: _Stats) -> statistics_pb2.CommonStatistics:
    which = feature.WhichOneof("stats")
    return getattr(feature, which).common_stats if which else statistics_pb2.CommonStatistics()


def _listed_values(stats: statistics_pb2.StringStatistics) -> list[str]:
    if stats.rank_histogram.buckets:
        return [bucket.label for bucket in stats.rank_histogram.buckets]
    return [value.value for value in stats.top_values]


def _string_domain(feature: _Stats) -> list[str] | None:
    """The values of a low-cardinality string column, or None when it is not one."""
    if feature.WhichOneof("stats") != "string_stats":
        return None
    stats = feature.string_stats
    values = _listed_values(stats)
    if (
        not stats.unique
        or stats.unique > DOMAIN_MAX_VALUES
        or stats.unique * DOMAIN_MIN_COUNT_PER_VALUE > stats.common_stats.tot_num_values
        or len(values) != stats.unique
        or _NOT_UTF8 in values
    ):
        return None
    return sorted(values)


def _small_int_range(feature: _Stats) -> bool:
    """An INT column with few possible values, each seen often enough (module doc)."""
    if feature.type != _Stats.INT or feature.WhichOneof("stats") != "num_stats":
        return False
    stats = feature.num_stats
    if not stats.common_stats.num_non_missing:
        return False
    span = int(stats.max) - int(stats.min) + 1
    return (
        span <= CATEGORICAL_INT_MAX_VALUES
        and span * DOMAIN_MIN_COUNT_PER_VALUE <= stats.common_stats.tot_num_values
    )


def with_fixed_shapes(schema: schema_pb2.Schema) -> schema_pb2.Schema:
    """A copy of `schema` where required single-valued features have the fixed shape [1]
    (TFDV's `infer_feature_shape`).

    TFT parses a feature without a shape as a VarLenFeature (a SparseTensor); with the
    shape, required features parse as dense FixedLenFeature([1]) while optional ones
    (presence.min_fraction < 1) stay sparse.
    """
    schema = schema_pb2.Schema.FromString(schema.SerializeToString())
    for feature in schema.feature:
        if (
            feature.presence.min_fraction == 1.0
            and feature.WhichOneof("shape_type") == "value_count"
            and feature.value_count.min == feature.value_count.max == 1
        ):
            feature.shape.dim.add(size=1)
    return schema


def infer_schema(
    statistics: Mapping[str, statistics_pb2.DatasetFeatureStatistics], infer_split: str
) -> schema_pb2.Schema:
    """The schema of `statistics[infer_split]`, loosened by the other splits (module doc)."""
    if infer_split not in statistics:
        raise ValueError(
            f"no statistics for split {infer_split!r} to infer the schema from; "
            f"the statistics have {', '.join(sorted(statistics)) or 'no splits'}"
        )
    splits = [infer_split, *sorted(name for name in statistics if name != infer_split)]
    by_split = {
        split: {_name(f): f for f in statistics[split].features if f.type in _TYPES}
        for split in splits
    }
    names = list(by_split[infer_split])
    names += sorted({name for split in splits[1:] for name in by_split[split]} - set(names))

    schema = schema_pb2.Schema()
    for name in names:
        seen = {split: by_split[split][name] for split in splits if name in by_split[split]}
        first = next(iter(seen.values()))  # the inference split's, if it has the column
        feature = schema.feature.add(name=name, type=_TYPES[first.type])
        present = {
            split: _common(seen[split]).num_non_missing if split in seen else 0 for split in splits
        }
        if not all(present.values()):
            feature.presence.min_count = 0  # sets the field: "may be empty in a split"
        elif all(present[s] == statistics[s].num_examples for s in splits):
            feature.presence.min_fraction = 1.0
            feature.presence.min_count = 1
        else:
            feature.presence.min_count = 1
        holding = [_common(f) for f in seen.values() if _common(f).num_non_missing]
        if holding and all(c.min_num_values == c.max_num_values == 1 for c in holding):
            feature.value_count.min = 1
            feature.value_count.max = 1
        if name in by_split[infer_split] and feature.type == schema_pb2.BYTES:
            values = _string_domain(by_split[infer_split][name])
            if values is not None:
                feature.string_domain.name = name
                feature.string_domain.value.extend(values)
                feature.distribution_constraints.min_domain_mass = DOMAIN_MIN_MASS
        if name in by_split[infer_split] and _small_int_range(by_split[infer_split][name]):
            feature.int_domain.is_categorical = True
    return schema
