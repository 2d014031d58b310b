"""The auto preprocessing_fn: built from the Schema artifact, for the raw label and the task.

Every schema column but the label becomes `transformed_name(column)` (on a wide table the
numbers become one output instead: below):

- FLOAT, and INT not marked categorical: z-scored as float32; a missing value becomes 0
  after scaling (the mean), so missing values stay out of the statistics;
- BYTES, and INT marked `int_domain { is_categorical: true }` (SchemaGen marks small-range
  integer columns so): an int64 id from `tft.apply_vocabulary` over the values seen at
  least `VOCAB_MIN_COUNT` times in the train split (or the `vocabulary_min_count` given),
  most frequent first, at most `vocabulary_cap` of them (1,000, or more where the table is
  not wide and has few category columns), `OOV_BUCKETS` more ids for the others; a missing
  value is the empty string, which no vocabulary holds, so it gets an OOV id. The output
  carries TFT's `int_domain` annotation [0, vocabulary size + OOV buckets - 1], which the
  auto model reads as the column's number of ids.
- The label: regression, float32; binary and multiclass, a string (an integer or a number
  written as text) with its classes in the `LABEL_VOCABULARY` vocabulary of the transform
  graph, so the model's head maps it through `label_vocabulary` and the served `classes`
  are the label's own values. The label must be required in the schema (present in every
  row): a model cannot learn from a row without one.

Numbers share their analyzers, and categories share theirs a few at a time
(`scaled_numbers`, `category_ids`). On a wide table (`WIDE_FROM` feature columns or more)
the Transform hands the columns over packed, numbers in one tensor and categories in
another (`packing_for`, components/transform/packing.py), and the numbers come out as one
output, `ALL_NUMBERS`, float32 [batch, n] in the schema's order (`packed_numbers`): a few
ops for all of them, where a graph of one input and one output per column made
tf.Transform trace, save, load and check thousands of small graphs. The category ids come
out per column and side by side as `ALL_CATEGORIES`, from one vocabulary file and one
lookup table (`packed_category_ids`).

`build_preprocessing_fn` returns a `functools.partial` of the module function
`preprocessing_fn` over a plain plan (tuples), so it pickles and imports wherever the
Transform runs.
"""

import functools

from tensorflow_metadata.proto.v0 import schema_pb2

from components import auto
from components.auto import (
    ALL_CATEGORIES,
    ALL_NUMBERS,
    LABEL_VOCABULARY,
    OOV_BUCKETS,
    VOCAB_MIN_COUNT,
    feature_vocabulary,
    transformed_name,
    vocabulary_cap,
)
from components.transform import packing
from components.transform.tensors import dense

NUMBER = "number"
CATEGORY = "category"
CLASSIFICATION_TASKS = ("binary", "multiclass")
_TYPE_NAMES = {schema_pb2.INT: "INT", schema_pb2.FLOAT: "FLOAT", schema_pb2.BYTES: "BYTES"}


def plan(schema: schema_pb2.Schema, label: str, task: str, features=(), exclude=()) -> tuple:
    """((column, NUMBER|CATEGORY, INT|FLOAT|BYTES), ...), (label, type, task)) for `schema`:
    its columns but the label, only `features` when given, none of `exclude`."""
    if task not in (*CLASSIFICATION_TASKS, "regression"):
        raise ValueError(
            f"the auto preprocessing needs the task (binary, multiclass or regression), got "
            f"{task!r}."
        )
    features_found, outputs = [], {}
    label_feature = None
    for feature in schema.feature:
        if feature.type not in _TYPE_NAMES:
            raise ValueError(
                f"the auto preprocessing takes INT, FLOAT and BYTES columns; {feature.name!r} "
                f"is {schema_pb2.FeatureType.Name(feature.type)}."
            )
        name = transformed_name(feature.name)
        if name in outputs:
            raise ValueError(
                f"columns {outputs[name]!r} and {feature.name!r} would both be {name!r} after "
                "the auto preprocessing: rename one."
            )
        outputs[name] = feature.name
        if feature.name == label:
            label_feature = feature
            continue
        categorical = feature.type == schema_pb2.BYTES or (
            feature.type == schema_pb2.INT
            and feature.WhichOneof("domain_info") == "int_domain"
            and feature.int_domain.is_categorical
        )
        features_found.append(
            (feature.name, CATEGORY if categorical else NUMBER, _TYPE_NAMES[feature.type])
        )
    columns = [feature.name for feature in schema.feature]
    unknown = [name for name in (*features, *exclude) if name not in columns]
    if unknown:
        raise ValueError(f"features {unknown} are not schema columns: {', '.join(columns)}.")
    features = [
        feature
        for feature in features_found
        if (not features or feature[0] in features) and feature[0] not in exclude
    ]
    if label_feature is None:
        raise ValueError(f"label {label!r} is not a schema column: {', '.join(columns)}.")
    if label_feature.presence.min_fraction < 1.0:
        raise ValueError(
            f"label {label!r} is not required by the schema: the auto preprocessing needs "
            "a label in every example (ExampleGen sets aside the rows without one); mark it "
            "required (presence min_fraction 1)."
        )
    if task == "regression" and label_feature.type == schema_pb2.BYTES:
        raise ValueError(f"task regression needs a numeric label; {label!r} is text.")
    if not features:
        raise ValueError(f"the schema has no column besides the label {label!r}.")
    return tuple(features), (label, _TYPE_NAMES[label_feature.type], task)


def _as_text(x, kind):
    """Values as strings (SparseTensor values too): integers as written, numbers shortest."""
    import tensorflow as tf

    def convert(values):
        if kind == "BYTES":
            return values
        if kind == "FLOAT":
            return tf.strings.as_string(values, shortest=True)
        return tf.strings.as_string(values)

    if isinstance(x, tf.SparseTensor):
        return tf.SparseTensor(x.indices, convert(x.values), x.dense_shape)
    return convert(x)


def _means_and_scales(side_by_side):
    """Each column's mean and 1 / standard deviation (1 where the column's values are all
    equal: it is only centred, as tft.scale_to_z_score does) from one analyzer each over
    `side_by_side`, the columns as one [batch, n] tensor (a SparseTensor of the present
    values where some may be missing)."""
    import tensorflow as tf
    import tensorflow_transform as tft

    means = tft.mean(side_by_side, reduce_instance_dims=False)
    variances = tft.var(side_by_side, reduce_instance_dims=False)
    return means, tf.where(variances > 0, tf.math.rsqrt(variances), tf.ones_like(variances))


def _z_scored(columns, side_by_side):
    """`columns` (functions of a column's mean and scale, giving the dense float32 [batch]
    column z-scored with them) computed with the means and scales of `side_by_side`
    (`_means_and_scales`)."""
    import tensorflow as tf

    means, scales = _means_and_scales(side_by_side)
    return [
        column(mean, scale)
        for column, mean, scale in zip(columns, tf.unstack(means), tf.unstack(scales), strict=True)
    ]


def _row_sums(x):
    """A SparseTensor [batch, 0 or 1]'s values as a dense [batch], 0 where it has none."""
    import tensorflow as tf

    sums = tf.sparse.reduce_sum(x, axis=1)
    sums.set_shape([None])
    return sums


def _side_by_side(columns):
    """SparseTensors [batch, 1] as one [batch, len(columns)], its width known statically."""
    import tensorflow as tf

    joined = tf.sparse.concat(axis=1, sp_inputs=columns)
    return tf.SparseTensor(
        joined.indices, joined.values, tf.stack([joined.dense_shape[0], len(columns)])
    )


def scaled_numbers(inputs, names):
    """{transformed_name(name): the column z-scored as float32} for the number columns
    `names`; a missing value becomes 0 (the mean), and a column whose values are all equal
    is only centred.

    The means and variances come from one analyzer each over the columns side by side (the
    required ones as one [batch, n] tensor, the optional ones as one SparseTensor), not one
    per column: a table's thousands of columns then cost one statistic to compute and a few
    ops each to trace, save and load. Each output is computed from its own column and the
    analyzers' constants, so TFT's walk from each output to the inputs it needs stays
    short."""
    import tensorflow as tf

    outputs = {}
    required = [name for name in names if not isinstance(inputs[name], tf.SparseTensor)]
    if required:
        values = [tf.reshape(tf.cast(inputs[name], tf.float32), [-1]) for name in required]
        scaled = _z_scored(
            [lambda mean, scale, x=x: (x - mean) * scale for x in values],
            tf.stack(values, axis=1),
        )
        outputs.update(zip(map(transformed_name, required), scaled, strict=True))
    optional_names = [name for name in names if name not in required]
    optional = [inputs[name] for name in optional_names]
    if optional:
        # TFT hands an optional column over as [batch, 0 or 1] (0: none in the batch);
        # side by side each is [batch, 1].
        one_wide = tf.stack([optional[0].dense_shape[0], 1])
        values = [tf.cast(x.values, tf.float32) for x in optional]
        scaled = _z_scored(
            [
                # The sum of a row's values is the value, or 0 (the mean) for none.
                lambda mean, scale, x=x, v=v: _row_sums(
                    tf.SparseTensor(x.indices, (v - mean) * scale, x.dense_shape)
                )
                for x, v in zip(optional, values, strict=True)
            ],
            _side_by_side(
                [
                    tf.SparseTensor(x.indices, v, one_wide)
                    for x, v in zip(optional, values, strict=True)
                ]
            ),
        )
        outputs.update(zip(map(transformed_name, optional_names), scaled, strict=True))
    return outputs


def packed_numbers(numbers):
    """`numbers` (float32 [batch, n], NaN where missing: components/transform/packing.py)
    z-scored column by column as `scaled_numbers` does (a missing value 0, a constant column
    only centred), with a few ops for all of them."""
    import tensorflow as tf

    present = tf.logical_not(tf.math.is_nan(numbers))
    where = tf.where(present)
    values = tf.SparseTensor(
        where, tf.gather_nd(numbers, where), tf.shape(numbers, out_type=tf.int64)
    )
    means, scales = _means_and_scales(values)
    return tf.where(present, (numbers - means) * scales, 0.0)


# Category columns per vocabulary analyzer. One analyzer for all would be fewest Beam stages,
# but TFT checks each analyzer output against every input it comes from, for every input
# of the preprocessing_fn (tensorflow_transform/graph_tools.py get_analyzers_fingerprint):
# with n columns per analyzer that is n times the work of one analyzer per column.
COLUMNS_PER_VOCABULARY_ANALYZER = 8


def category_ids(inputs, categories, min_count=VOCAB_MIN_COUNT):
    """{transformed_name(name): vocabulary ids} for the category columns `categories`
    ((name, INT|FLOAT|BYTES) pairs): the values of each seen at least `min_count` times,
    `vocabulary_cap(len(categories))` at most, and `OOV_BUCKETS` more ids for the rest and
    for a missing value. The vocabularies come from
    a few shared analyzers (components/auto/vocabularies.py), written as
    `feature_vocabulary(name)`."""
    import tensorflow as tf
    import tensorflow_transform as tft

    from components.auto.vocabularies import vocabulary_files

    outputs = {}
    top_k = vocabulary_cap(len(categories))
    for start in range(0, len(categories), COLUMNS_PER_VOCABULARY_ANALYZER):
        chunk = categories[start : start + COLUMNS_PER_VOCABULARY_ANALYZER]
        texts = [dense(_as_text(inputs[name], kind), b"") for name, kind in chunk]
        filenames = [feature_vocabulary(name) for name, _ in chunk]
        paths = vocabulary_files(tf.stack(texts, axis=1), filenames, top_k, min_count)
        for (name, _), text, path in zip(chunk, texts, paths, strict=True):
            outputs[transformed_name(name)] = tft.apply_vocabulary(
                text, deferred_vocab_filename_tensor=path, num_oov_buckets=OOV_BUCKETS
            )
    return outputs


def packed_category_ids(texts, names, min_count=VOCAB_MIN_COUNT):
    """`category_ids` of the category columns `names` packed as `texts` (string
    [batch, len(names)], "" where missing: components/transform/packing.py), and
    `ALL_CATEGORIES`, the same ids side by side as int64 [batch, len(names)], column j's
    shifted past the ids of the columns before it, so that each (column, value) has an id
    of its own among `int_domain.max + 1`: what a linear model or a DNN reads as one column.

    The vocabularies (the same values, order and OOV buckets as `category_ids`', except
    that a column with no value at all has none, only its OOV buckets, and that each keeps
    at most `VOCAB_FLOOR` values: `ALL_CATEGORIES` is the DNN's input) are one file,
    `ALL_CATEGORIES`, and one lookup table (components/auto/vocabularies.py): hundreds of
    tables, one per column, took most of a wide table's Transform to save, load and
    initialize."""
    import tensorflow as tf
    import tensorflow_transform as tft
    from tensorflow_transform import schema_inference

    from components.auto.vocabularies import column_key, column_marker, combined_vocabulary_file

    n = len(names)
    path = combined_vocabulary_file(
        texts, ALL_CATEGORIES, vocabulary_cap(n, packed=True), min_count
    )
    prefixes = tf.constant([column_key(j, b"") for j in range(n)])
    keys = tf.strings.join([tf.broadcast_to(prefixes, tf.shape(texts)), texts])
    markers = tf.constant([column_marker(j) for j in range(n + 1)])
    # one lookup: the values' lines (-1: not in the vocabulary), then the markers'
    lines = tft.apply_vocabulary(
        tf.concat([tf.reshape(keys, [-1]), markers], axis=0),
        deferred_vocab_filename_tensor=path,
        default_value=-1,
    )
    found = tf.reshape(lines[: -(n + 1)], [-1, n])
    at = lines[-(n + 1) :]
    starts, sizes = at[:-1] + 1, at[1:] - at[:-1] - 1
    ids = tf.where(
        found >= 0, found - starts, sizes + tf.strings.to_hash_bucket_fast(texts, OOV_BUCKETS)
    )
    widths = sizes + OOV_BUCKETS
    zero = tf.constant(0, tf.int64)
    outputs = {}
    # Unstacked in one op each (a slice per column is traced in every graph tf.Transform builds).
    columns, tops = tf.unstack(ids, num=n, axis=1), tf.unstack(widths - 1, num=n)
    for name, column, top in zip(names, columns, tops, strict=True):
        schema_inference.set_tensor_schema_override(column, zero, top)
        outputs[transformed_name(name)] = column
    together = ids + tf.cumsum(widths, exclusive=True)
    schema_inference.set_tensor_schema_override(together, zero, tf.reduce_sum(widths) - 1)
    outputs[ALL_CATEGORIES] = together
    return outputs


def label_output(y, kind, task):
    """The label (of type `kind`) for `task`: float32 for regression; else its text, with
    the classes written to the `LABEL_VOCABULARY` vocabulary the model reads."""
    import tensorflow as tf
    import tensorflow_transform as tft

    y = dense(y, 0 if kind != "BYTES" else b"")
    if task == "regression":
        return tf.cast(y, tf.float32)
    y = _as_text(y, kind)
    tft.vocabulary(y, vocab_filename=LABEL_VOCABULARY)
    return y


def preprocessing_fn(inputs, features, label, packed=False, min_count=VOCAB_MIN_COUNT):
    """The auto preprocessing of `plan`'s (features, label), its columns `packed` as
    `packing_for` packs them or one by one, a category's values kept from `min_count`
    occurrences on; see the module doc."""
    numbers = [name for name, treatment, _ in features if treatment == NUMBER]
    categories = [(name, kind) for name, treatment, kind in features if treatment == CATEGORY]
    if packed:
        outputs = {ALL_NUMBERS: packed_numbers(inputs[packing.NUMBERS])} if numbers else {}
        if categories:
            texts = inputs[packing.TEXTS]
            names = [name for name, _ in categories]
            outputs.update(packed_category_ids(texts, names, min_count))
    else:
        outputs = scaled_numbers(inputs, numbers)
        outputs.update(category_ids(inputs, categories, min_count))
    label_name, kind, task = label
    outputs[transformed_name(label_name)] = label_output(inputs[label_name], kind, task)
    return outputs


def packing_for(
    schema: schema_pb2.Schema, label: str, task: str, features=(), exclude=()
) -> packing.Packing | None:
    """How the Transform hands the auto preprocessing its raw columns: on a wide table
    (`WIDE_FROM` feature columns or more) the numbers and the categories packed
    (components/transform/packing.py); None: one by one."""
    return _packing(plan(schema, label, task, features, exclude)[0])


def _packing(features):
    """`packing_for` of `plan`'s features."""
    if len(features) < auto.WIDE_FROM:
        return None
    return packing.Packing(
        numbers=tuple((name, kind) for name, treatment, kind in features if treatment == NUMBER),
        texts=tuple((name, kind) for name, treatment, kind in features if treatment == CATEGORY),
    )


def build_preprocessing_fn(
    schema: schema_pb2.Schema,
    label: str,
    task: str,
    features=(),
    exclude=(),
    vocabulary_min_count=VOCAB_MIN_COUNT,
):
    """The auto preprocessing_fn for `schema`, with `label` (a raw column) handled per `task`,
    over `features` (or all but `exclude`), keeping a category's values seen at least
    `vocabulary_min_count` times in the analyzed data."""
    if not isinstance(vocabulary_min_count, int) or vocabulary_min_count < 1:
        raise ValueError(
            f"vocabulary_min_count must be an integer of at least 1, got {vocabulary_min_count!r}."
        )
    features_plan, label_plan = plan(schema, label, task, features, exclude)
    packed = _packing(features_plan) is not None
    return functools.partial(
        preprocessing_fn,
        features=features_plan,
        label=label_plan,
        packed=packed,
        min_count=vocabulary_min_count,
    )
