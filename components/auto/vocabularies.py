"""The vocabularies of several category columns from one Beam analyzer.

`tft.vocabulary` is one analyzer per column, each a dozen Beam transforms; a table with
hundreds of category columns then spends its Transform building and running thousands of
stages. `vocabulary_files` counts several columns' values in one pass instead (a combine
keyed by column) and writes one vocabulary file per column, as `tft.vocabulary` would: the
`top_k` most frequent of the values seen at least `min_count` times (tft's
`frequency_threshold`), most frequent first, ties broken by the larger value; no
empty value and none holding a line break (a text vocabulary cannot); a placeholder when a
column has no value at all, since a lookup table cannot be built from an empty file.

`combined_vocabulary_file` writes the same vocabularies into one file instead, for a wide
table, whose hundreds of lookup tables would each be saved, loaded and initialized with
the transform graph: column j's values are keyed `column_key(j, value)`, after a line
`column_marker(j)`, and a last `column_marker(n)` ends the file, so one lookup of the
markers gives where each column's values start and how many there are.
"""

import collections
import heapq
import os

import apache_beam as beam
import numpy as np
from apache_beam.io.filesystems import FileSystems
from tensorflow_transform.beam import experimental as tft_beam_experimental

# Stands in for an empty vocabulary (not a value a CSV cell decodes to: it holds a NUL).
EMPTY_VOCABULARY = b"\x00(no values)"


def _countable(value: bytes) -> bool:
    return bool(value) and b"\n" not in value and b"\r" not in value


class _CountsSum(beam.CombineFn):
    """{value: count} dicts summed."""

    def create_accumulator(self):
        return collections.Counter()

    def add_input(self, accumulator, counts):
        accumulator.update(counts)
        return accumulator

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        total = next(accumulators)
        for accumulator in accumulators:
            total.update(accumulator)
        return total

    def extract_output(self, accumulator):
        return accumulator


def _column_counts(batches):
    """(column, {value: count}) of each column of batches of one [batch, n] bytes tensor,
    its countable values only."""

    def counts_per_column(batch):
        (values,) = batch
        for column in range(values.shape[1]):
            counts = collections.Counter(values[:, column].tolist())
            yield column, {v: n for v, n in counts.items() if _countable(v)}

    return (
        batches
        | "CountPerBatch" >> beam.FlatMap(counts_per_column)
        | "Sum" >> beam.CombinePerKey(_CountsSum())
    )


def _top_values(counts, top_k, min_count):
    """The `top_k` most frequent of `counts`' values counted at least `min_count` times,
    most frequent first, ties broken by the larger value."""
    frequent = ((n, v) for v, n in counts.items() if n >= min_count)
    return [v for _, v in heapq.nlargest(top_k, frequent)]


class TopValuesPerColumn(tft_beam_experimental.PTransformAnalyzer):
    """Takes batches of one [batch, len(filenames)] bytes tensor; writes column j's
    vocabulary to `filenames[j]` in the analysis' temp folder and returns its path, one
    output per column."""

    def __init__(self, filenames, top_k, min_count):
        super().__init__()
        self._filenames = list(filenames)
        self._top_k = top_k
        self._min_count = min_count

    def expand(self, batches):
        def write(column_and_counts):
            column, counts = column_and_counts
            top = _top_values(counts, self._top_k, self._min_count)
            path = os.path.join(self.base_temp_dir, self._filenames[column])
            with FileSystems.create(path) as f:
                f.write(b"".join(v + b"\n" for v in top) or EMPTY_VOCABULARY + b"\n")
            yield beam.pvalue.TaggedOutput(str(column), np.array(path.encode()))

        tags = [str(column) for column in range(len(self._filenames))]
        paths = _column_counts(batches) | "Write" >> beam.FlatMap(write).with_outputs(*tags)
        return tuple(paths[tag] for tag in tags)


def column_key(column: int, value: bytes) -> bytes:
    """`value` of column number `column` as the combined vocabulary holds it."""
    return b"%d\x1f" % column + value


def column_marker(column: int) -> bytes:
    """The line before column `column`'s values (no key: `column_key` uses \x1f)."""
    return b"%d\x1e" % column


class TopValuesInOneFile(tft_beam_experimental.PTransformAnalyzer):
    """Takes batches of one [batch, columns] bytes tensor; writes the columns' vocabularies
    to `filename` in the analysis' temp folder, one after the other (module doc), and
    returns its path."""

    def __init__(self, filename, columns, top_k, min_count):
        super().__init__()
        self._filename = filename
        self._columns = columns
        self._top_k = top_k
        self._min_count = min_count

    def expand(self, batches):
        def write(counts_per_column):
            found = dict(counts_per_column)
            lines = []
            for column in range(self._columns):
                lines.append(column_marker(column))
                top = _top_values(found.get(column, {}), self._top_k, self._min_count)
                lines.extend(column_key(column, v) for v in top)
            lines.append(column_marker(self._columns))
            path = os.path.join(self.base_temp_dir, self._filename)
            with FileSystems.create(path) as f:
                f.write(b"".join(line + b"\n" for line in lines))
            return np.array(path.encode())

        return (
            _column_counts(batches)
            | "AllColumns" >> beam.combiners.ToList()
            | "WriteOne" >> beam.Map(write),
        )


def combined_vocabulary_file(side_by_side, filename, top_k, min_count):
    """The deferred path of the vocabularies of the columns of `side_by_side` (a string
    [batch, n] tensor) in one file, written as `filename` (module doc)."""
    import tensorflow as tf
    import tensorflow_transform as tft

    columns = side_by_side.shape[1]
    markers_only = b"".join(column_marker(j) + b"\n" for j in range(columns + 1))
    (path,) = tft.experimental.ptransform_analyzer(
        inputs=[side_by_side],
        ptransform=TopValuesInOneFile(filename, columns, top_k, min_count),
        output_dtypes=[tf.string],
        output_shapes=[[]],
        output_asset_default_values=[markers_only],
        name="combined_vocabulary",
    )
    return path


def vocabulary_files(side_by_side, filenames, top_k, min_count):
    """Deferred paths of the vocabularies of the columns of `side_by_side` (a string
    [batch, len(filenames)] tensor), one per column, written as `filenames` (see the
    module doc)."""
    import tensorflow as tf
    import tensorflow_transform as tft

    return tft.experimental.ptransform_analyzer(
        inputs=[side_by_side],
        ptransform=TopValuesPerColumn(filenames, top_k, min_count),
        output_dtypes=[tf.string] * len(filenames),
        output_shapes=[[]] * len(filenames),
        output_asset_default_values=[EMPTY_VOCABULARY + b"\n"] * len(filenames),
        name="vocabularies",
    )
