"""The auto preprocessing_fn: built from the Schema artifact, for the raw label and the task.

Every schema column but the label becomes `transformed_name(column)`:

- FLOAT, and INT not marked categorical: z-scored as float32; a missing value becomes 0
  after scaling (the mean), so missing values stay out of the statistics;
- BYTES, and INT marked `int_domain { is_categorical: true }` (SchemaGen marks small-range
  integer columns so): an int64 id from `tft.compute_and_apply_vocabulary` (the
  `VOCAB_TOP_K` most frequent values of the train split, `OOV_BUCKETS` more ids for the
  others); a missing value is the empty string, which no vocabulary holds (TFT leaves it
  out), so it gets an OOV id. The output carries
  TFT's `int_domain` annotation [0, vocabulary size + OOV buckets - 1], which the auto
  model reads as the column's number of ids.
- The label: regression, float32; binary and multiclass, a string (an integer or a number
  written as text) with its classes in the `LABEL_VOCABULARY` vocabulary of the transform
  graph, so the model's head maps it through `label_vocabulary` and the served `classes`
  are the label's own values. The label must be required in the schema (present in every
  row): a model cannot learn from a row without one.

`build_preprocessing_fn` returns a `functools.partial` of the module function
`preprocessing_fn` over a plain plan (tuples), so it pickles and imports wherever the
Transform runs.
"""

import functools

from tensorflow_metadata.proto.v0 import schema_pb2

from components.auto import (
    LABEL_VOCABULARY,
    OOV_BUCKETS,
    VOCAB_TOP_K,
    feature_vocabulary,
    transformed_name,
)
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


def scaled_number(x):
    """A number column z-scored as float32; a missing value becomes 0 (the mean)."""
    import tensorflow as tf
    import tensorflow_transform as tft

    return dense(tft.scale_to_z_score(tf.cast(x, tf.float32)), 0.0)


def category_ids(x, name, kind):
    """Vocabulary ids of the column `name` (of type `kind`, INT/FLOAT/BYTES): the
    `VOCAB_TOP_K` most frequent values, `OOV_BUCKETS` more ids for the rest and for a
    missing value."""
    import tensorflow_transform as tft

    return tft.compute_and_apply_vocabulary(
        dense(_as_text(x, kind), b""),
        top_k=VOCAB_TOP_K,
        num_oov_buckets=OOV_BUCKETS,
        vocab_filename=feature_vocabulary(name),
    )


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


def preprocessing_fn(inputs, features, label):
    """The auto preprocessing of `plan`'s (features, label); see the module doc."""
    outputs = {}
    for name, treatment, kind in features:
        if treatment == NUMBER:
            outputs[transformed_name(name)] = scaled_number(inputs[name])
        else:
            outputs[transformed_name(name)] = category_ids(inputs[name], name, kind)
    label_name, kind, task = label
    outputs[transformed_name(label_name)] = label_output(inputs[label_name], kind, task)
    return outputs


def build_preprocessing_fn(
    schema: schema_pb2.Schema, label: str, task: str, features=(), exclude=()
):
    """The auto preprocessing_fn for `schema`, with `label` (a raw column) handled per `task`,
    over `features` (or all but `exclude`)."""
    features, label_plan = plan(schema, label, task, features, exclude)
    return functools.partial(preprocessing_fn, features=features, label=label_plan)
