"""The auto model: canned Estimators over whatever the Transform produced.

`CANDIDATES` (`build_candidate`) are what zero code chooses from on held-out data
(components/trainer/candidates.py): a linear model, the wide-and-deep one below and boosted
trees; `build_estimator` builds the wide-and-deep one alone, or `hparams["canned"]`.

Read from the transform graph (`TFTransformOutput`), so it fits the auto preprocessing and
any preprocessing_fn whose outputs follow the same rules:

- an int64 feature with an `int_domain` max (TFT annotates vocabulary and bucket ids so):
  category ids, `max + 1` of them; wide as an identity column, deep as its indicator;
- any other number: deep, as a numeric column;
- the label (`transformed_label_key`) is left out; the head follows the task: `binary` and
  `multiclass` a `DNNLinearCombinedClassifier` whose `label_vocabulary` is the Transform's
  `LABEL_VOCABULARY` sorted (numerically when every class is a number), `n_classes` its size
  (so class ids, TFMA's per-class metrics and the served `classes` follow that order); an
  int64 label without that vocabulary is taken as class ids 0/1 (binary only);
  `regression` a `DNNLinearCombinedRegressor`, or, given the label's `label_moments` (the
  Trainer offers them from the train split's statistics), the same wide-and-deep model under
  `StandardizedRegressionHead`: it fits (y - mean) / std and serves predictions in the
  label's units (the linear candidate as well; tf.estimator's canned regressors are
  unchanged for direct callers).

On a wide table the auto preprocessing hands the numbers over as one [batch, n] feature
(`ALL_NUMBERS`), one numeric column of shape (n,) here: one weight matrix for the linear
model and the DNN, n features for boosted trees; and its category ids side by side as well
(`ALL_CATEGORIES`, each column's in a range of its own), one column for the linear model and
the DNN, where boosted trees read each column's ids. Another preprocessing_fn's float numbers,
one feature each, are read side by side as one column by the linear model and the DNN
(`numbers_together`, components/auto/numbers_column.py); boosted trees one by one.

`hparams["hidden_units"]` sizes the deep part. `hparams["canned"]` names another canned
Estimator instead (`CANNED`; its head must fit the task), built over the same columns (DNN:
the deep ones; Linear: the ids and the numbers; BoostedTrees: the deep ones, a category
column's ids up to `TREES_CATEGORY_IDS` (`trees_ids`), the whole train split in memory up
to `IN_MEMORY_ROWS` rows) with `hparams["canned_args"]` as its keyword
arguments and its own defaults for the rest (hidden units from `hidden_units`).
"""

import functools
import math
import re

from components.auto import ALL_CATEGORIES, LABEL_VOCABULARY, TREES_CATEGORY_IDS

CANNED = (
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNClassifier",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "BaselineClassifier",
    "BaselineRegressor",
    "BoostedTreesClassifier",
    "BoostedTreesRegressor",
)
# Arguments the kit sets from the transform output and the run, never from `canned_args`.
SET_BY_THE_KIT = (
    "config",
    "model_dir",
    "feature_columns",
    "linear_feature_columns",
    "dnn_feature_columns",
    "n_classes",
    "label_vocabulary",
    "label_dimension",
    "warm_start_from",
)


def check_canned(name, args, task):
    """ValueError unless `name` is a canned Estimator whose head fits `task` (when known)
    and `args` (a dict) are arguments it takes that the kit does not set itself."""
    import inspect

    if name not in CANNED:
        raise ValueError(f"canned estimator {name!r} is not one of {', '.join(CANNED)}.")
    if task in ("binary", "multiclass", "regression") and (
        name.endswith("Regressor") != (task == "regression")
    ):
        family = "a Regressor" if task == "regression" else "a Classifier"
        raise ValueError(f"canned estimator {name!r}: task {task!r} needs {family}.")
    from components import estimator

    parameters = inspect.signature(getattr(estimator, name)).parameters
    for arg in args:
        if arg in SET_BY_THE_KIT:
            raise ValueError(
                f"canned_args {arg!r}: set by the kit from the transform output and the run."
            )
        if arg not in parameters:
            takes = [p for p in parameters if p not in SET_BY_THE_KIT]
            raise ValueError(f"canned_args {arg!r}: {name} takes {', '.join(takes)}.")


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


# From this many float numbers on, `numbers_together` reads them as one column. Below it the
# columns stay as they were before the kit grouped them, so models trained then still
# warm-start (a DNN's first layer would take grouped numbers in another row order).
NUMBERS_TOGETHER_FROM = 100


def feature_columns(tft_output, transformed_label_key, numbers_together=False):
    """(wide, deep) feature columns of the transformed features but the label.

    `numbers_together`: columns read side by side where they can be, what a linear model or
    a DNN reads fastest on a wide table (boosted trees split on one feature at a time, so
    they leave it off): at least `NUMBERS_TOGETHER_FROM` float32 numbers of one value each
    as one `NumbersColumn`, deep; and a wide table's category ids as the one column
    `ALL_CATEGORIES` instead of one per column. Without it `ALL_CATEGORIES` is left out."""
    import tensorflow as tf

    from components.auto.numbers_column import together

    spec = tft_output.transformed_feature_spec()
    if transformed_label_key not in spec:
        raise ValueError(
            f"auto model: label {transformed_label_key!r} is not a transformed feature: "
            f"{sorted(spec)}."
        )
    domains = {
        feature.name: feature.int_domain
        for feature in tft_output.transformed_metadata.schema.feature
        if feature.WhichOneof("domain_info") == "int_domain" and feature.int_domain.HasField("max")
    }
    if ALL_CATEGORIES in spec:
        # the other category ids are its parts: read either them or it
        skipped = {
            name for name in domains if name != ALL_CATEGORIES and spec[name].dtype == tf.int64
        }
        skipped = skipped if numbers_together else {ALL_CATEGORIES}
    else:
        skipped = set()
    wide, deep = [], []
    for name in sorted(spec):
        if name == transformed_label_key or name in skipped:
            continue
        dtype = spec[name].dtype
        if dtype == tf.int64 and name in domains:
            ids = tf.feature_column.categorical_column_with_identity(
                name, num_buckets=int(domains[name].max) + 1
            )
            wide.append(ids)
            deep.append(tf.feature_column.indicator_column(ids))
        elif dtype in (tf.float32, tf.int64):
            # A fixed-length feature of several numbers (ALL_NUMBERS) is one column.
            shape = tuple(getattr(spec[name], "shape", None) or ()) or (1,)
            deep.append(tf.feature_column.numeric_column(name, shape=shape, dtype=dtype))
        else:
            raise ValueError(
                f"auto model: transformed feature {name!r} is {dtype.name}; it takes numbers "
                "and category ids (int64 with an int_domain)."
            )
    return wide, together(deep, NUMBERS_TOGETHER_FROM) if numbers_together else deep


def trees_ids(deep):
    """`deep` as boosted trees read it: a category column whole up to `TREES_CATEGORY_IDS`
    ids, else its first `TREES_CATEGORY_IDS` - 1 (a vocabulary's most frequent values) and
    one id for the others, the rarer values and the OOV buckets. An equality split isolates
    one value, so a rare one seldom earns a split, while the histograms grow with the ids
    (times a layer's nodes and each class's statistics); the linear model and the DNN read
    every id."""
    import tensorflow as tf
    from tensorflow.python.feature_column import feature_column_v2 as fc_lib

    columns = []
    for column in deep:
        ids = getattr(column, "categorical_column", None)
        if (
            isinstance(ids, fc_lib.IdentityCategoricalColumn)
            and ids.num_buckets > TREES_CATEGORY_IDS
        ):
            ids = tf.feature_column.categorical_column_with_identity(
                ids.key, num_buckets=TREES_CATEGORY_IDS, default_value=TREES_CATEGORY_IDS - 1
            )
            column = tf.feature_column.indicator_column(ids)
        columns.append(column)
    return columns


def _canned(name, args, hparams, wide, deep, classes, run_config, warm_start_from, train_rows):
    """The canned Estimator `name` over the columns its kind reads, `args` over its defaults."""
    from components import estimator

    settings = {"config": run_config, "warm_start_from": warm_start_from}
    if name.startswith("BoostedTrees"):
        if warm_start_from is not None:
            raise ValueError(f"{name} takes no warm start (as tf.estimator's): leave it off.")
        del settings["warm_start_from"]
        batches = batches_per_layer(train_rows)
        settings.update(
            feature_columns=trees_ids(deep),
            n_batches_per_layer=batches,
            train_in_memory=batches == 1,
        )
    numbers = _numbers(deep)
    hidden_units = list(hparams.get("hidden_units", HIDDEN_UNITS))
    if name.startswith("DNNLinearCombined"):
        settings.update(
            linear_feature_columns=wide or None,
            dnn_feature_columns=deep,
            dnn_hidden_units=hidden_units,
        )
    elif name.startswith("DNN"):
        settings.update(feature_columns=deep, hidden_units=hidden_units)
    elif name.startswith("Linear"):
        settings.update(feature_columns=wide + numbers)
    if classes is not None:
        settings.update(n_classes=len(classes), label_vocabulary=classes)
    return getattr(estimator, name)(**{**settings, **args})


def _numbers(deep):
    """The numeric columns of the deep ones (not the category ids' indicators)."""
    return [c for c in deep if not hasattr(c, "categorical_column")]


def _classes(tft_output, transformed_label_key, task):
    """The label's classes for a classification `task` (None: int64 class ids 0/1)."""
    import tensorflow as tf

    classes = label_classes(tft_output)
    if classes is None:
        label_dtype = tft_output.transformed_feature_spec()[transformed_label_key].dtype
        if task != "binary" or label_dtype != tf.int64:
            raise ValueError(
                f"auto model: no {LABEL_VOCABULARY!r} vocabulary in the transform graph; a "
                "label without one must be int64 class ids 0/1 (binary)."
            )
        return None
    if len(classes) < 2 or (task == "binary" and len(classes) != 2):
        raise ValueError(
            f"auto model: task {task} but the train split's label has {len(classes)} "
            f"class(es): {classes[:10]}."
        )
    return classes


# The zero-code model is chosen among these on held-out data (components/trainer/candidates.py).
CANDIDATES = ("linear", "wide_and_deep", "boosted_trees", "boosted_trees_log")
# The DNN's layer widths (the [model] hidden_units setting's default).
HIDDEN_UNITS = (64, 32)
# Boosted trees grow on the whole train split at once up to this many rows, else on batches.
IN_MEMORY_ROWS = 1_000_000
TREES_BATCH = 65_536
# Boosted trees as HistGradientBoosting grows them by default where the estimator can (its
# leaf cap, minimum per leaf, 255 bins, one Hessian per class), deeper than tf.estimator's 6
# so that the cap binds; the Trainer stops early on validation (docs/guide/estimator.md).
BOOSTED_TREES = {
    "n_trees": 200,
    "max_depth": 8,
    "learning_rate": 0.1,
    "l2_regularization": 0.0,
    "max_leaf_nodes": 31,
    "min_samples_leaf": 20,
    "quantile_sketch_epsilon": 1 / 255,
    "multi_class_hessian": "diagonal",
}
# A multiclass leaf's weight per class at most this before the learning rate (LightGBM's
# max_delta_step): with a tree shared by the classes, a class's -G/H is unbounded where its
# p(1 - p) is small in a leaf (a rare class; confident predictions, right or wrong): the
# trees' validation loss grew to 1.2e8 on nycflights' 16 carriers (docs/benchmarks/
# 2026-12-05-zero-code-quality.md).
MULTICLASS_MAX_DELTA_STEP = 10.0


def batches_per_layer(train_rows):
    """Boosted trees' n_batches_per_layer for `train_rows` rows (1: in memory)."""
    return 1 if (train_rows or 0) <= IN_MEMORY_ROWS else -(-train_rows // TREES_BATCH)


def build_candidate(
    name,
    run_config,
    hparams,
    warm_start_from=None,
    *,
    task,
    train_rows,
    label_moments=None,
    category_sums=None,
    label_range=None,
    **transform_output,
):
    """The Estimator of candidate `name` (`CANDIDATES`) for `task` over the transform output
    (`build_estimator`'s tft_output and transformed_label_key); a regression label's
    `label_moments` (mean, std) standardize it for the linear and wide-and-deep ones, its
    `category_sums` ({key: (label sum per id, rows per id)} of the rows the trees fit,
    components/auto/ordered_categories.py) order the regression and binary trees' category
    ids, its `label_range` ((min, max) of the train labels) floors the log of
    `boosted_trees_log` (`fits_the_label`)."""
    tft_output = transform_output["tft_output"]
    transformed_label_key = transform_output["transformed_label_key"]
    wide, deep, classes = _columns_and_classes(
        tft_output, transformed_label_key, task, numbers_together=name != "boosted_trees"
    )
    if orders_categories(name, task) and category_sums:
        from components.auto.ordered_categories import ordered_columns

        deep = ordered_columns(deep, category_sums)
    args = (name, task, wide, deep, classes, run_config, hparams, warm_start_from, train_rows)
    return candidate_estimator(*args, label_moments=label_moments, label_range=label_range)


def fits_the_label(name, task, label_range):
    """Whether candidate `name` can fit `task`'s label: `boosted_trees_log` only a regression
    label whose train values, `label_range` ((min, max), None: unknown), are all above 0."""
    if name != "boosted_trees_log":
        return True
    return task == "regression" and label_range is not None and label_range[0] > 0


def orders_categories(name, task):
    """Whether candidate `name` for `task` reads its category ids in the order of their mean
    label (a binary label's positive rate), given the `category_sums` of `build_candidate`;
    a multiclass label has no one order (components/auto/ordered_categories.py)."""
    return name.startswith("boosted_trees") and task in ("regression", "binary")


def candidate_estimator(
    name,
    task,
    wide,
    deep,
    classes,
    run_config,
    hparams,
    warm_start_from,
    train_rows,
    *,
    label_moments=None,
    label_range=None,
):
    """Candidate `name` over the (wide, deep) columns of `feature_columns`; `classes` the
    label's (None: regression, or int64 class ids 0/1). Linear and boosted trees are the
    canned estimators `--canned` builds over the same columns, with the candidates' args;
    given a regression label's `label_moments`, linear and wide-and-deep fit it standardized
    (`StandardizedRegressionHead`)."""
    import tensorflow as tf

    head = standardized_head(task, label_moments)
    if name == "wide_and_deep":
        common = {"config": run_config, "warm_start_from": warm_start_from}
        return _wide_and_deep(task, wide, deep, classes, common, hparams, head)
    if name == "linear":
        optimizer = lambda: tf.keras.optimizers.Ftrl(0.1, l2_regularization_strength=0.01)  # noqa: E731
        if head is not None:
            from components import estimator

            return estimator.LinearEstimator(
                head,
                wide + _numbers(deep),
                optimizer=optimizer,
                config=run_config,
                warm_start_from=warm_start_from,
            )
        family = "Linear"
        args = {"optimizer": optimizer}
    elif name.startswith("boosted_trees"):
        family = "BoostedTrees"
        # Trees start from the mean label (regression) or the classes' log odds, as HGB.
        args = {**BOOSTED_TREES, "center_bias": True}
        if task == "multiclass":
            args["max_delta_step"] = MULTICLASS_MAX_DELTA_STEP
        if name == "boosted_trees_log":
            if not fits_the_label(name, task, label_range):
                raise ValueError(
                    "auto model: boosted_trees_log fits a regression label whose train "
                    f"values are all above 0; task {task!r}, label range {label_range}."
                )
            args["head"] = log_label_head(label_range[0])
            return _canned(
                "BoostedTreesEstimator",
                args,
                hparams,
                wide,
                deep,
                None,
                run_config,
                warm_start_from,  # (refused there, as for the other trees)
                train_rows,
            )
    else:
        raise ValueError(f"auto model: candidate {name!r} is not one of {', '.join(CANDIDATES)}.")
    kind = family + ("Regressor" if task == "regression" else "Classifier")
    return _canned(
        kind, args, hparams, wide, deep, classes, run_config, warm_start_from, train_rows
    )


def _columns_and_classes(tft_output, transformed_label_key, task, numbers_together):
    """(wide, deep, classes) for `task`: the columns of `feature_columns`, the classes of
    `_classes` (None for regression)."""
    if task not in ("binary", "multiclass", "regression"):
        raise ValueError(f"auto model: task must be binary, multiclass or regression: {task!r}.")
    wide, deep = feature_columns(tft_output, transformed_label_key, numbers_together)
    classes = None if task == "regression" else _classes(tft_output, transformed_label_key, task)
    return wide, deep, classes


def build_estimator(
    run_config,
    hparams,
    warm_start_from=None,
    *,
    tft_output,
    transformed_label_key,
    task,
    train_rows=None,
    label_moments=None,
):
    """The wide-and-deep Estimator for `task` over `tft_output`, or `hparams["canned"]`
    (module doc); `train_rows` sizes boosted trees' batches; a regression label's
    `label_moments` standardize it for the wide-and-deep model (not for a canned one)."""
    canned = hparams.get("canned")
    wide, deep, classes = _columns_and_classes(
        tft_output,
        transformed_label_key,
        task,
        numbers_together=not (canned or "").startswith("BoostedTrees"),
    )
    if canned:
        name, args = canned, hparams.get("canned_args", {})
        check_canned(name, args, task)
        return _canned(
            name, args, hparams, wide, deep, classes, run_config, warm_start_from, train_rows
        )
    common = {"config": run_config, "warm_start_from": warm_start_from}
    head = standardized_head(task, label_moments)
    return _wide_and_deep(task, wide, deep, classes, common, hparams, head)


def _wide_and_deep(task, wide, deep, classes, common, hparams, head=None):
    """The wide-and-deep model for `task`; under `head` (a standardized regression label)
    with the classifier's optimizers, which suit a label of unit scale."""
    import tensorflow as tf

    from components import estimator

    common = {
        **common,
        "linear_feature_columns": wide or None,
        "dnn_feature_columns": deep,
        "dnn_hidden_units": list(hparams.get("hidden_units", HIDDEN_UNITS)),
    }
    if head is not None:
        return estimator.DNNLinearCombinedEstimator(
            head, dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01), **common
        )
    if task == "regression":
        # The label keeps its own scale (served predictions are in its units): Adam moves
        # the output bias there in a few hundred steps, where the defaults would crawl.
        return estimator.DNNLinearCombinedRegressor(
            dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.05),
            linear_optimizer=lambda: tf.keras.optimizers.Ftrl(0.5),
            **common,
        )
    if classes is None:
        return estimator.DNNLinearCombinedClassifier(n_classes=2, **common)
    return estimator.DNNLinearCombinedClassifier(
        n_classes=len(classes),
        label_vocabulary=classes,
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01),
        **common,
    )


def standardized_head(task, label_moments):
    """A `StandardizedRegressionHead` for a regression label of known `label_moments`
    ((mean, std); a std of 0 counts as 1), else None (the canned estimators' own heads)."""
    if task != "regression" or label_moments is None:
        return None
    mean, std = (float(x) for x in label_moments)
    if not (math.isfinite(mean) and math.isfinite(std)):
        raise ValueError(f"auto model: the label's mean and std must be finite: {label_moments}.")
    return _standardized_head_class()(mean, std if std > 0 else 1.0)


def log_label_head(label_min):
    """A `LogLabelRegressionHead` whose labels' logs are floored at log(`label_min`), the
    train labels' least (above 0)."""
    return _log_label_head_class()(float(label_min))


@functools.cache
def _log_label_head_class():
    """The head's class, made on first use (as `_standardized_head_class`)."""
    import tensorflow as tf

    from components import estimator

    class LogLabelRegressionHead(estimator.RegressionHead):
        """Squared error on the label's logarithm, log(y) - logits, predicted back in its
        units as exp(logits) (stock ops in the served graph).

        Why: a price or a count above 0 is often multiplicative in its features (a bigger
        house of a better grade), which trees fit in a few splits on its log and in many on
        the label itself; HistGradientBoosting's RMSE on ames fell 5% so. The `average_loss`
        metric (what early stopping and the model choice read) stays squared error in the
        label's units, so the candidate is compared with the others as they are. A label
        below the train labels' least (out of their range: eval data) is read as that
        least; predictions carry no `logits`, so the served signatures are the canned
        regressor's."""

        def __init__(self, label_min):
            super().__init__()
            self.label_min = label_min

        def _default_loss(self, labels, logits):
            return tf.square(tf.math.log(tf.maximum(labels, self.label_min)) - logits)

        def predictions(self, logits, keys=None):
            return super().predictions(tf.exp(logits), keys)

        def _update(self, metric, labels, logits, unweighted_loss, weights):
            in_label_units = tf.square(tf.exp(logits) - labels)
            super()._update(metric, labels, logits, in_label_units, weights)

    return LogLabelRegressionHead


@functools.cache
def _standardized_head_class():
    """The head's class, made on first use: it subclasses the estimator's RegressionHead,
    and importing this module imports no TensorFlow."""
    import tensorflow as tf

    from components import estimator

    class StandardizedRegressionHead(estimator.RegressionHead):
        """Squared error on the label standardized, (y - mean) / std, predicted back in its
        units (logits * std + mean, stock ops in the served graph).

        Why: a linear model's optimizer moves each weight by about its learning rate a step,
        so on a label of scale 1e5 (a price) the linear candidate never reached the mean in
        its steps (out-of-fold RMSE 200,045 on ames, where the mean scores 83,255). The
        training loss is in units of the label's variance; the `average_loss` metric (what
        early stopping and the model choice read) is in the label's units squared, as the
        unscaled head's. Predictions carry no `logits`, so the served signatures are those of
        the canned regressor."""

        def __init__(self, mean, std):
            super().__init__()
            self.label_mean, self.label_std = mean, std

        def _default_loss(self, labels, logits):
            return tf.square((labels - self.label_mean) / self.label_std - logits)

        def predictions(self, logits, keys=None):
            return super().predictions(logits * self.label_std + self.label_mean, keys)

        def _update(self, metric, labels, logits, unweighted_loss, weights):
            in_label_units = unweighted_loss * (self.label_std**2)
            super()._update(metric, labels, logits, in_label_units, weights)

    return StandardizedRegressionHead
