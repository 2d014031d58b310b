"""The vocabularies of several category columns from one Beam analyzer.

`tft.vocabulary` is one analyzer per column, each a dozen Beam transforms; a table with
hundreds of category columns then spends its Transform building and running thousands of
stages. `vocabulary_files` counts several columns' values in one pass instead (a combine
keyed by column) and writes one vocabulary file per column, as `tft.vocabulary` would: the
`top_k` most frequent values, most frequent first, ties broken by the larger value; no
empty value and none holding a line break (a text vocabulary cannot); a placeholder when a
column has no value at all, since a lookup table cannot be built from an empty file.
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


class TopValuesPerColumn(tft_beam_experimental.PTransformAnalyzer):
    """Takes batches of one [batch, len(filenames)] bytes tensor; writes column j's
    vocabulary to `filenames[j]` in the analysis' temp folder and returns its path, one
    output per column."""

    def __init__(self, filenames, top_k):
        super().__init__()
        self._filenames = list(filenames)
        self._top_k = top_k

    def expand(self, batches):
        def counts_per_column(batch):
            (values,) = batch
            for column in range(values.shape[1]):
                counts = collections.Counter(values[:, column].tolist())
                yield column, {v: n for v, n in counts.items() if _countable(v)}

        def write(column_and_counts):
            column, counts = column_and_counts
            top = heapq.nlargest(self._top_k, ((n, v) for v, n in counts.items()))
            path = os.path.join(self.base_temp_dir, self._filenames[column])
            with FileSystems.create(path) as f:
                f.write(b"".join(v + b"\n" for _, v in top) or EMPTY_VOCABULARY + b"\n")
            yield beam.pvalue.TaggedOutput(str(column), np.array(path.encode()))

        tags = [str(column) for column in range(len(self._filenames))]
        paths = (
            batches
            | "CountPerBatch" >> beam.FlatMap(counts_per_column)
            | "Sum" >> beam.CombinePerKey(_CountsSum())
            | "Write" >> beam.FlatMap(write).with_outputs(*tags)
        )
        return tuple(paths[tag] for tag in tags)


def vocabulary_files(side_by_side, filenames, top_k):
    """Deferred paths of the vocabularies of the columns of `side_by_side` (a string
    [batch, len(filenames)] tensor), one per column, written as `filenames` (see the
    module doc)."""
    import tensorflow as tf
    import tensorflow_transform as tft

    return tft.experimental.ptransform_analyzer(
        inputs=[side_by_side],
        ptransform=TopValuesPerColumn(filenames, top_k),
        output_dtypes=[tf.string] * len(filenames),
        output_shapes=[[]] * len(filenames),
        output_asset_default_values=[EMPTY_VOCABULARY + b"\n"] * len(filenames),
        name="vocabularies",
    )
