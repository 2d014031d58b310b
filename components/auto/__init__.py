"""Zero code: a preprocessing and a model built from the data's schema, for any CSV.

`preprocessing_fn="auto"` (Transform) and `estimator_fn="auto"` (Trainer) select them:

- `components.auto.preprocessing`: the tf.Transform preprocessing_fn built from the Schema
  artifact (numbers z-scored, missing ones filled with the mean; strings and small-integer
  columns to vocabulary ids with OOV buckets; the label passed through per task);
- `components.auto.model`: a canned wide-and-deep Estimator over that output, head by task;
- `components.auto.data`: what the pipeline reads of the CSV before it is built (the label
  column is there; the task and class count when not given).

This module holds the names both sides agree on, and imports no TensorFlow.
"""

import re

# The setting that selects these functions; user_code defines it, the configuration reads it here.
from components.user_code import AUTO as AUTO

# Transformed feature `<name>_xf`, the name made safe for TF variable scopes.
TRANSFORMED_SUFFIX = "_xf"
OOV_BUCKETS = 10  # ids for the values the vocabulary does not hold
# A category column's vocabulary: its values seen at least `VOCAB_MIN_COUNT` times in the
# train split (the `vocabulary_min_count` setting), most frequent first, up to
# `vocabulary_cap` of them: the column's own size, bounded. Every column may keep
# `VOCAB_FLOOR` values (a fixed top 1,000 before 2026-12-05); the columns of a table that
# is not wide share `CATEGORY_IDS` beyond that, so a column of thousands stays whole, while
# a wide table (`WIDE_FROM`) costs what it did, 1,000 a column. The linear model's weights
# and the DNN's first layer grow with the ids: a table's ids are then at most those of 20
# columns of 1,000 values, or as many as it had before when it has more. Boosted trees
# read `TREES_CATEGORY_IDS` of a column (components/auto/model.py `trees_ids`).
VOCAB_MIN_COUNT = 1
VOCAB_FLOOR = 1000
CATEGORY_IDS = 20_000
# The ids a column had before (the top 1,000 and the OOV buckets): the trees' buckets keep
# that size, a larger column's ids past the last one read as the last.
TREES_CATEGORY_IDS = VOCAB_FLOOR + OOV_BUCKETS
# From this many feature columns on, a table is wide: the auto preprocessing reads its columns
# packed into two tensors (components/transform/packing.py) and hands its numbers over side
# by side as one float32 [batch, n] feature, `ALL_NUMBERS` (in the schema's order), which
# the model reads as one column: the cost then follows the table's cells, not its columns.
# A narrower table keeps one `<name>_xf` feature per number, as before, so models trained
# on it then still warm-start.
WIDE_FROM = 100
# Not `<name>_xf`, so no column's transformed name can be either.
ALL_NUMBERS = "all_numbers"
# A wide table's category ids side by side, each column's in a range of its own (besides each
# column's own `<name>_xf`, which boosted trees split on): one column for a linear model or
# a DNN.
ALL_CATEGORIES = "all_categories"
# The label's classes (classification): a vocabulary the Transform writes, sorted by the model.
LABEL_VOCABULARY = "label_classes"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def transformed_name(raw_name: str) -> str:
    """The auto preprocessing's output name for the raw column `raw_name`."""
    return _UNSAFE.sub("_", raw_name) + TRANSFORMED_SUFFIX


def feature_vocabulary(raw_name: str) -> str:
    """The vocabulary file of the categorical column `raw_name` in the transform graph."""
    return "feature_" + _UNSAFE.sub("_", raw_name)


def vocabulary_cap(category_columns: int, packed: bool = False) -> int:
    """The most values a category column's vocabulary keeps in a table of `category_columns`
    of them: `VOCAB_FLOOR`, or its share of `CATEGORY_IDS` when larger and the table is not
    `packed` (wide: its ids side by side, `ALL_CATEGORIES`, are the DNN's input)."""
    if packed:
        return VOCAB_FLOOR
    return max(VOCAB_FLOOR, CATEGORY_IDS // max(category_columns, 1))
