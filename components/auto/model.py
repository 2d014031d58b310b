"""The auto model: a canned wide-and-deep Estimator over whatever the Transform produced.

Read from the transform graph (`TFTransformOutput`), so it fits the auto preprocessing and
any preprocessing_fn whose outputs follow the same rules:

- an int64 feature with an `int_domain` max (TFT annotates vocabulary and bucket ids so):
  category ids, `max + 1` of them; wide as an identity column, deep as its indicator;
- any other number: deep, as a numeric column;
- the label (`label_key`) is left out; the head follows the task: `binary` and
  `multiclass` a `DNNLinearCombinedClassifier` whose `label_vocabulary` is the Transform's
  `LABEL_VOCABULARY` sorted (numerically when every class is a number), `n_classes` its size
  (so class ids, TFMA's per-class metrics and the served `classes` follow that order); an
  int64 label without that vocabulary is taken as class ids 0/1 (binary only);
  `regression` a `DNNLinearCombinedRegressor`.

`hparams["hidden_units"]` sizes the deep part.
"""

import re

from components.auto import LABEL_VOCABULARY

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def sort_classes(classes):
    """Class names in a stable order: numerically when all are numbers, else as text."""
    if classes and all(_NUMBER.fullmatch(c) for c in classes):
        return sorted(classes, key=float)
    return sorted(classes)


def label_classes(tft_output):
    """The Transform's label vocabulary, sorted; None when it wrote none."""
    try:
        vocabulary = tft_output.vocabulary_by_name(LABEL_VOCABULARY)
    except (ValueError, OSError):  # no such asset
        return None
    return sort_classes([v.decode("utf-8") if isinstance(v, bytes) else v for v in vocabulary])


def feature_columns(tft_output, label_key):
    """(wide, deep) feature columns of the transformed features but the label."""
    import tensorflow as tf

    spec = tft_output.transformed_feature_spec()
    if label_key not in spec:
        raise ValueError(
            f"auto model: label {label_key!r} is not a transformed feature: {sorted(spec)}."
        )
    domains = {
        feature.name: feature.int_domain
        for feature in tft_output.transformed_metadata.schema.feature
        if feature.WhichOneof("domain_info") == "int_domain" and feature.int_domain.HasField("max")
    }
    wide, deep = [], []
    for name in sorted(spec):
        if name == label_key:
            continue
        dtype = spec[name].dtype
        if dtype == tf.int64 and name in domains:
            ids = tf.feature_column.categorical_column_with_identity(
                name, num_buckets=int(domains[name].max) + 1
            )
            wide.append(ids)
            deep.append(tf.feature_column.indicator_column(ids))
        elif dtype in (tf.float32, tf.int64):
            deep.append(tf.feature_column.numeric_column(name, dtype=dtype))
        else:
            raise ValueError(
                f"auto model: transformed feature {name!r} is {dtype.name}; it takes numbers "
                "and category ids (int64 with an int_domain)."
            )
    return wide, deep


def build_estimator(run_config, hparams, warm_start_from=None, *, tft_output, label_key, task):
    """The wide-and-deep Estimator for `task` over `tft_output` (module doc)."""
    import tensorflow as tf

    from components.trainer import estimator

    wide, deep = feature_columns(tft_output, label_key)
    common = {
        "config": run_config,
        "linear_feature_columns": wide or None,
        "dnn_feature_columns": deep,
        "dnn_hidden_units": list(hparams.get("hidden_units", [64, 32])),
        "warm_start_from": warm_start_from,
    }
    if task == "regression":
        # The label keeps its own scale (served predictions are in its units): Adam moves
        # the output bias there in a few hundred steps, where the defaults would crawl.
        return estimator.DNNLinearCombinedRegressor(
            dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.05),
            linear_optimizer=lambda: tf.keras.optimizers.Ftrl(0.5),
            **common,
        )
    if task not in ("binary", "multiclass"):
        raise ValueError(f"auto model: task must be binary, multiclass or regression: {task!r}.")
    classes = label_classes(tft_output)
    if classes is None:
        label_dtype = tft_output.transformed_feature_spec()[label_key].dtype
        if task != "binary" or label_dtype != tf.int64:
            raise ValueError(
                f"auto model: no {LABEL_VOCABULARY!r} vocabulary in the transform graph; a "
                "label without one must be int64 class ids 0/1 (binary)."
            )
        return estimator.DNNLinearCombinedClassifier(n_classes=2, **common)
    if len(classes) < 2 or (task == "binary" and len(classes) != 2):
        raise ValueError(
            f"auto model: task {task} but the train split's label has {len(classes)} "
            f"class(es): {classes[:10]}."
        )
    return estimator.DNNLinearCombinedClassifier(
        n_classes=len(classes),
        label_vocabulary=classes,
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01),
        **common,
    )
