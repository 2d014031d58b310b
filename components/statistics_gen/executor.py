"""StatisticsGen executor: TFDV-format statistics of every split, one Beam pass each.

Examples are read as Arrow RecordBatches (components/examples_reader.py) and each batch is
summarized column by column with numpy and tfx_bsl's mergeable sketches, so the cost is per
batch and per feature, not per example, and partial results merge across Beam workers.
"""

import collections
import dataclasses
import json
from typing import Any

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2
from tfx import types
from tfx.types import artifact_utils
from tfx_bsl import sketches

from components.beam_executor import BeamExecutor
from components.example_gen import spans
from components.examples_reader import ReadSplit, split_files
from components.schema_importer.executor import load_schema_artifact
from components.statistics_gen.layout import kept_splits, split_statistics_path

HISTOGRAM_BUCKETS = 10  # TFDV's default for the standard, quantiles and num-values histograms
TOP_VALUES = 20  # TFDV's default
RANK_BUCKETS = 1000  # rank histogram length; Misra-Gries counts are exact up to this many values
UNIQUE_BUCKETS = 10000  # KMV sketch size; the unique count is exact below it
QUANTILES_EPSILON = 0.001  # quantile rank error as a fraction of the values counted
# A feature's numbers are kept as decoded (4 or 8 bytes each) until this many, then added to
# its quantile sketch. At this epsilon the sketch holds its first 100,000 or so values whole,
# as 16 bytes each, and Beam pickles and copies an accumulator several times where the
# combine crosses stages: on 2,000 columns the train split's was 183 MB.
PENDING_VALUES = 16384
_FINE_QUANTILES = 1000  # resolution the standard histogram is estimated from
_MAX_ELEMENTS = 1 << 32
_BYTES_PLACEHOLDER = b"__BYTES_VALUE__"  # label of a value that is not valid UTF-8, as in TFDV

_FeatureType = statistics_pb2.FeatureNameStatistics
_SCHEMA_TYPES = {
    schema_pb2.INT: _FeatureType.INT,
    schema_pb2.FLOAT: _FeatureType.FLOAT,
    schema_pb2.BYTES: _FeatureType.STRING,
}


def _arrow_type(value_type: pa.DataType) -> int | None:
    if pa.types.is_integer(value_type):
        return _FeatureType.INT
    if pa.types.is_floating(value_type):
        return _FeatureType.FLOAT
    if (
        pa.types.is_binary(value_type)
        or pa.types.is_large_binary(value_type)
        or pa.types.is_string(value_type)
        or pa.types.is_large_string(value_type)
    ):
        return _FeatureType.STRING
    return None  # a column that never held a value: nothing to type it by


def _quantiles(sketch: sketches.QuantilesSketch, count: int) -> np.ndarray:
    """`count` + 1 boundaries, min to max; empty when nothing was added (finalizes `sketch`)."""
    return sketch.GetQuantiles(count).flatten().to_numpy().astype(np.float64)


def _quantiles_histogram(boundaries: np.ndarray, total: float) -> statistics_pb2.Histogram:
    histogram = statistics_pb2.Histogram(type=statistics_pb2.Histogram.QUANTILES)
    step = (len(boundaries) - 1) // HISTOGRAM_BUCKETS
    for low, high in zip(boundaries[:-1:step], boundaries[step::step], strict=False):
        histogram.buckets.add(
            low_value=low, high_value=high, sample_count=total / HISTOGRAM_BUCKETS
        )
    return histogram


def _standard_histogram(fine: np.ndarray, total: float) -> statistics_pb2.Histogram:
    """Equal-width buckets over [min, max], estimated from fine quantiles.

    One pass cannot know min and max before bucketing, so each fine quantile interval's
    share of the values is spread evenly over the part of [min, max] it covers.
    """
    histogram = statistics_pb2.Histogram(type=statistics_pb2.Histogram.STANDARD)
    low, high = fine[0], fine[-1]
    edges = np.linspace(low, high, HISTOGRAM_BUCKETS + 1)
    share = total / (len(fine) - 1)
    starts, ends = fine[:-1], fine[1:]
    spread = ends > starts
    # [interval, bucket]: the part of each interval that falls in each bucket
    overlap = np.clip(
        np.minimum(edges[1:], ends[spread, None]) - np.maximum(edges[:-1], starts[spread, None]),
        0,
        None,
    )
    counts = share * (overlap / (ends - starts)[spread, None]).sum(axis=0)
    # a point mass: its bucket (the last one is closed on the right)
    buckets = np.searchsorted(edges, starts[~spread], side="right") - 1
    np.add.at(counts, np.minimum(buckets, HISTOGRAM_BUCKETS - 1), share)
    for index, count in enumerate(counts):
        histogram.buckets.add(
            low_value=edges[index], high_value=edges[index + 1], sample_count=count
        )
    return histogram


@dataclasses.dataclass
class _FeatureAccumulator:
    """Mergeable partial statistics of one feature."""

    type: int | None = None
    # {number of values: how many examples have that many}, over the examples that have the
    # feature. Exact and small (a univalent feature's is {1: n}); the num-values histogram
    # is sketched from it once, at the end: a sketch call per batch cost 150 µs.
    num_values_counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    # numbers: count excludes NaNs; mean and m2 (sum of squared deviations) merge by Chan et al.
    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    min: float = np.inf
    max: float = -np.inf
    num_zeros: int = 0
    num_nan: int = 0
    values_sketch: Any = None
    pending: list = dataclasses.field(default_factory=list)  # numbers not in the sketch yet
    # strings
    total_length: int = 0
    top_sketch: Any = None
    unique_sketch: Any = None

    @property
    def num_values(self) -> int:
        return sum(count * times for count, times in self.num_values_counts.items())

    def set_type(self, feature_type: int):
        if self.type is None:
            self.type = feature_type
            if feature_type == _FeatureType.STRING:
                self.top_sketch = sketches.MisraGriesSketch(
                    RANK_BUCKETS, invalid_utf8_placeholder=_BYTES_PLACEHOLDER
                )
                self.unique_sketch = sketches.KmvSketch(UNIQUE_BUCKETS)
            else:
                self.values_sketch = sketches.QuantilesSketch(QUANTILES_EPSILON, _MAX_ELEMENTS, 1)

    def add_column(self, column: pa.Array, feature_type: int | None):
        lengths = np.diff(column.offsets.to_numpy())
        if column.null_count:
            lengths = lengths[column.is_valid().to_numpy(zero_copy_only=False)]
        counts, times = np.unique(lengths, return_counts=True)
        self.num_values_counts.update(dict(zip(counts.tolist(), times.tolist(), strict=True)))
        if feature_type is None:
            return
        self.set_type(feature_type)
        values = column.flatten()
        if not len(values):
            return
        if feature_type == _FeatureType.STRING:
            self.total_length += pc.sum(pc.binary_length(values)).as_py()
            self.top_sketch.AddValues(values)
            self.unique_sketch.AddValues(values)
            return
        decoded = values.to_numpy(zero_copy_only=False)
        numbers = decoded.astype(np.float64)
        nan = np.isnan(numbers)
        if nan.any():
            self.num_nan += int(nan.sum())
            numbers, decoded = numbers[~nan], decoded[~nan]
        if not len(numbers):
            return
        batch_mean = numbers.mean()
        self._merge_moments(len(numbers), batch_mean, ((numbers - batch_mean) ** 2).sum())
        self.min = min(self.min, numbers.min())
        self.max = max(self.max, numbers.max())
        self.num_zeros += int((numbers == 0).sum())
        self._add_pending([decoded])

    def _add_pending(self, arrays: list[np.ndarray]):
        self.pending.extend(arrays)
        if sum(map(len, self.pending)) >= PENDING_VALUES:
            self._flush()

    def _flush(self):
        """Adds the pending numbers to the quantile sketch."""
        if self.pending:
            numbers = np.concatenate(self.pending).astype(np.float64)
            self.values_sketch.AddValues(pa.array(numbers))
            self.pending = []

    def _merge_moments(self, count: int, mean: float, m2: float):
        total = self.count + count
        delta = mean - self.mean
        self.mean += delta * count / total
        self.m2 += m2 + delta * delta * self.count * count / total
        self.count = total

    def merge(self, other: "_FeatureAccumulator"):
        if other.type is not None:
            self.set_type(other.type)
        self.num_values_counts.update(other.num_values_counts)
        if other.type == _FeatureType.STRING:
            self.total_length += other.total_length
            self.top_sketch.Merge(other.top_sketch)
            self.unique_sketch.Merge(other.unique_sketch)
        elif other.type is not None:
            if other.count:
                self._merge_moments(other.count, other.mean, other.m2)
            self.min = min(self.min, other.min)
            self.max = max(self.max, other.max)
            self.num_zeros += other.num_zeros
            self.num_nan += other.num_nan
            self.values_sketch.Merge(other.values_sketch)
            self._add_pending(other.pending)

    def to_proto(self, name: str, num_examples: int) -> statistics_pb2.FeatureNameStatistics:
        feature = statistics_pb2.FeatureNameStatistics(type=self.type)
        feature.path.step.append(name)
        stats = feature.string_stats if self.type == _FeatureType.STRING else feature.num_stats
        common = stats.common_stats
        num_non_missing = sum(self.num_values_counts.values())
        common.num_non_missing = num_non_missing
        common.num_missing = num_examples - num_non_missing
        common.tot_num_values = self.num_values
        if num_non_missing:
            counts = sorted(self.num_values_counts)
            common.min_num_values = counts[0]
            common.max_num_values = counts[-1]
            common.avg_num_values = self.num_values / num_non_missing
            if len(counts) == 1:  # one count in every example: every quantile is it
                boundaries = np.full(HISTOGRAM_BUCKETS + 1, float(counts[0]))
            else:
                sketch = sketches.QuantilesSketch(QUANTILES_EPSILON, _MAX_ELEMENTS, 1)
                sketch.AddValues(
                    pa.array(counts), pa.array([self.num_values_counts[count] for count in counts])
                )
                boundaries = _quantiles(sketch, HISTOGRAM_BUCKETS)
            common.num_values_histogram.CopyFrom(_quantiles_histogram(boundaries, num_non_missing))
        if self.type == _FeatureType.STRING:
            self._fill_strings(feature.string_stats)
        else:
            self._fill_numbers(feature.num_stats)
        return feature

    def _fill_numbers(self, stats: statistics_pb2.NumericStatistics):
        stats.num_zeros = self.num_zeros
        if not self.count:
            return
        stats.mean = self.mean
        stats.std_dev = float(np.sqrt(self.m2 / self.count))  # population, as TFDV
        stats.min = self.min
        stats.max = self.max
        self._flush()
        fine = _quantiles(self.values_sketch, _FINE_QUANTILES)
        stats.median = fine[_FINE_QUANTILES // 2]
        standard = stats.histograms.add()
        standard.CopyFrom(_standard_histogram(fine, self.count))
        standard.num_nan = self.num_nan
        quantiles = stats.histograms.add()
        quantiles.CopyFrom(_quantiles_histogram(fine, self.count))
        quantiles.num_nan = self.num_nan

    def _fill_strings(self, stats: statistics_pb2.StringStatistics):
        if not self.num_values:
            return
        stats.unique = self.unique_sketch.Estimate()
        stats.avg_length = self.total_length / self.num_values
        top = self.top_sketch.Estimate().to_pylist()
        for rank, entry in enumerate(top):
            label = entry["values"].decode("utf-8")
            if rank < TOP_VALUES:
                stats.top_values.add(value=label, frequency=entry["counts"])
            stats.rank_histogram.buckets.add(
                low_rank=rank, high_rank=rank, label=label, sample_count=entry["counts"]
            )


class _StatisticsCombineFn(beam.CombineFn):
    """RecordBatches of one split to its `DatasetFeatureStatisticsList`."""

    def __init__(self, types_by_name: dict[str, int]):
        self._types = types_by_name  # from the schema; other columns are typed by Arrow

    def create_accumulator(self):
        return [0, {}]  # examples, {feature name: _FeatureAccumulator}

    def add_input(self, accumulator, batch: pa.RecordBatch):
        accumulator[0] += batch.num_rows
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            if pa.types.is_null(column.type):
                # No example of this batch holds a value (decoded without a schema): it
                # counts as missing in each, its type left to other batches (or the end).
                feature = accumulator[1].setdefault(name, _FeatureAccumulator())
                if name in self._types:
                    feature.set_type(self._types[name])
                continue
            feature_type = self._types.get(name, _arrow_type(column.type.value_type))
            accumulator[1].setdefault(name, _FeatureAccumulator()).add_column(column, feature_type)
        return accumulator

    def merge_accumulators(self, accumulators):
        # Into the first, as Beam allows: a copy of every sketch was the merge's main cost.
        accumulators = iter(accumulators)
        merged = next(accumulators, None) or self.create_accumulator()
        for num_examples, features in accumulators:
            merged[0] += num_examples
            for name, feature in features.items():
                merged[1].setdefault(name, _FeatureAccumulator()).merge(feature)
        return merged

    def extract_output(self, accumulator):
        num_examples, features = accumulator
        dataset = statistics_pb2.DatasetFeatureStatistics(num_examples=num_examples)
        for name in sorted(features):
            if features[name].type is None and not features[name].num_values_counts:
                # A feature no example held a value of (a CSV column empty in every row):
                # TFDV's STRING, every example missing, which SchemaGen infers as an
                # optional BYTES feature (presence min_count 0), as TFX 1.15's did.
                features[name].set_type(_FeatureType.STRING)
            if features[name].type is not None:
                dataset.features.append(features[name].to_proto(name, num_examples))
        return statistics_pb2.DatasetFeatureStatisticsList(datasets=[dataset])


def _column_types_schema(examples: types.Artifact) -> schema_pb2.Schema | None:
    """A types-only schema from ExampleGen's `column_types` property, None without one.

    It makes every column ExampleGen wrote appear in every split's statistics with its type,
    even one with no value in a split (num_non_missing 0), so SchemaGen can list it.
    """
    from components.example_gen.executor import COLUMN_TYPES_PROPERTY, KIND_TYPES

    if not examples.has_custom_property(COLUMN_TYPES_PROPERTY):
        return None
    column_types = json.loads(examples.get_string_custom_property(COLUMN_TYPES_PROPERTY))
    schema = schema_pb2.Schema()
    for name, kind in sorted(column_types.items()):
        schema.feature.add(name=name, type=KIND_TYPES[kind])
    return schema


class Executor(BeamExecutor):
    """Writes `<uri>/Split-<name>/FeatureStats.pb` for every split of `examples`."""

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        self._log_startup(input_dict, output_dict, exec_properties)
        examples = artifact_utils.get_single_instance(input_dict["examples"])
        statistics = artifact_utils.get_single_instance(output_dict["statistics"])
        splits = kept_splits(
            artifact_utils.decode_split_names(examples.split_names), exec_properties
        )
        schema = None
        if input_dict.get("schema"):
            schema = load_schema_artifact(input_dict["schema"])
        else:
            schema = _column_types_schema(examples)
        types_by_name = {
            feature.name: _SCHEMA_TYPES[feature.type]
            for feature in (schema.feature if schema else [])
            if feature.type in _SCHEMA_TYPES
        }

        with self._make_beam_pipeline() as pipeline:
            for split in splits:
                _ = (
                    pipeline
                    | f"Read[{split}]"
                    >> ReadSplit(split_files(examples, split), schema, f"statistics of {split}")
                    | f"Statistics[{split}]"
                    >> beam.CombineGlobally(_StatisticsCombineFn(types_by_name))
                    | f"Write[{split}]"
                    >> beam.io.WriteToText(
                        split_statistics_path(statistics.uri, split),
                        shard_name_template="",
                        append_trailing_newlines=False,
                        coder=beam.coders.ProtoCoder(statistics_pb2.DatasetFeatureStatisticsList),
                    )
                )
        statistics.split_names = artifact_utils.encode_split_names(splits)
        if examples.has_custom_property(spans.SPAN_PROPERTY):
            statistics.span = examples.get_int_custom_property(spans.SPAN_PROPERTY)
        spans.copy_spans(examples, statistics)  # the validator names the spans it checked
