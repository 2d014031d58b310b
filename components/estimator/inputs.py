"""`inputs.numpy_input_fn` and `inputs.pandas_input_fn`, as `tf.compat.v1.estimator.inputs`.

tf.estimator fed arrays and DataFrames through queues; here the returned
`input_fn` returns a `tf.data.Dataset` with the same batches (to an Estimator, and
eagerly; called by a program's own code in a TF1 graph, as 2.15's docstring example
ran it under a session, its next batch: tensors, as the queue gave them): rows in order
(or shuffled through a buffer of `queue_capacity` rows), epochs back to back,
the last batch short unless the data repeats forever (`num_epochs=None`).
As tf.estimator's `num_threads` reader threads each read `num_epochs` epochs, the
dataset repeats `num_epochs * num_threads` times (a warning says so); tf.estimator's
threads interleaved their reads in no set order, here they come back to back: the
dataset's order is always deterministic without `shuffle`.
"""

import contextlib
import logging
import threading

import numpy as np
import tensorflow as tf

log = logging.getLogger(__name__)
_reading = threading.local()


@contextlib.contextmanager
def read_by_an_estimator():
    """Within it (an Estimator calling an input_fn), the input_fns here return their
    Dataset, which the Estimator reads."""
    before = getattr(_reading, "active", False)
    _reading.active = True
    try:
        yield
    finally:
        _reading.active = before


def _returned(dataset):
    """`dataset`, or in a TF1 graph outside an Estimator its next batch (tensors)."""
    if getattr(_reading, "active", False) or tf.executing_eagerly() or tf.inside_function():
        return dataset
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def _epochs(num_epochs, num_threads, shuffle):
    """How many times the data repeats: `num_epochs` for each of `num_threads` readers
    (tf.estimator's queue threads each read `num_epochs` epochs); the warnings
    tf.estimator gave when more than one thread reads."""
    if num_threads > 1 and num_epochs is not None:
        log.warning(
            "num_threads=%d with num_epochs=%d: each thread reads num_epochs epochs, so the "
            "input holds %d epochs; use one thread to read num_epochs epochs.",
            num_threads,
            num_epochs,
            num_epochs * num_threads,
        )
    if num_threads > 1 and not shuffle:
        log.warning(
            "num_threads=%d without shuffle: every thread reads the data in order, so the "
            "rows repeat; use one thread to read them once each, in order.",
            num_threads,
        )
    return None if num_epochs is None else num_epochs * max(num_threads, 1)


def _check_shuffle(shuffle):
    if not isinstance(shuffle, bool):
        raise ValueError(
            "shuffle must be provided and explicitly set as boolean (it is recommended to "
            f"set it as True for training); got {shuffle}"
        )


def _dataset(features, labels, batch_size, num_epochs, shuffle, queue_capacity):
    element = features if labels is None else (features, labels)
    dataset = tf.data.Dataset.from_tensor_slices(element).repeat(num_epochs)
    if shuffle:
        dataset = dataset.shuffle(queue_capacity)
    return dataset.batch(batch_size, drop_remainder=num_epochs is None)


def _as_dict(value, what):
    """`value`, a dict, in its keys' sorted order (2.15's feeder sorted them, so a model_fn
    met a dict's features in that order), or None for an array."""
    if isinstance(value, dict):
        if not value:
            raise ValueError(f"{what} cannot be an empty dict")
        return dict(sorted(value.items()))
    if isinstance(value, np.ndarray):
        if value.size == 0:
            raise ValueError(f"{what} cannot be an empty array")
        return None
    raise TypeError(f"{what} must be a dict or array; got {type(value).__name__}")


def numpy_input_fn(
    x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1
):
    """An input_fn yielding batches of `x` (an array or a dict of arrays) and of `y`.

    Features (and labels) keep `x`'s (and `y`'s) form: a dict stays a dict,
    an array is one tensor."""
    _check_shuffle(shuffle)

    def input_fn():
        x_dict = _as_dict(x, "x")
        x_arrays = x_dict or {"": x}
        if isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            duplicates = set(x_arrays) & set(y)
            if duplicates:
                raise ValueError(
                    f"{len(duplicates)} duplicate keys are found in both x and y: {duplicates}"
                )
        y_sorted = _as_dict(y, "y") if isinstance(y, dict) else y
        y_arrays = y_sorted if isinstance(y, dict) else {} if y is None else {"": y}
        # (By `.shape`, as tf.estimator: a list is an AttributeError there.)
        if len({v.shape[0] for v in [*x_arrays.values(), *y_arrays.values()]}) != 1:
            if isinstance(y, dict):
                y_shapes = {k: v.shape for k, v in y_sorted.items()}
            else:
                y_shapes = None if y is None else y.shape
            raise ValueError(
                "Length of tensors in x and y is mismatched. All elements in x and y must "
                f"have the same length.\nShapes in x: { {k: v.shape for k, v in x_arrays.items()} }"
                f"\nShapes in y: {y_shapes}\n"
            )
        _refuse_objects_not_text({**x_arrays, **y_arrays})
        epochs = _epochs(num_epochs, num_threads, shuffle)
        features = _by_row_number(x if x_dict is None else x_dict)
        labels = _by_row_number(y_sorted)
        return _returned(_dataset(features, labels, batch_size, epochs, shuffle, queue_capacity))

    return input_fn


def _by_row_number(value):
    """`value` (an array, a dict of them, or None) with each pandas Series as tf.estimator's
    feeder read it: `series[row numbers]`, by label when the index is numeric (a shuffled
    or split Series' rows come in index order, and a row number the index lacks is a
    KeyError), by position otherwise."""
    if isinstance(value, dict):
        return {key: _by_row_number(column) for key, column in value.items()}
    if type(value).__module__.split(".")[0] != "pandas" or value.ndim != 1:
        return value
    if value.index.dtype.kind in "iuf":
        return value.loc[np.arange(len(value))].to_numpy()
    return value.to_numpy()


def pandas_input_fn(
    x,
    y=None,
    batch_size=128,
    num_epochs=1,
    shuffle=None,
    queue_capacity=1000,
    num_threads=1,
    target_column="target",
):
    """An input_fn yielding batches of DataFrame `x`'s columns and of `y`.

    `y` (a Series, or a DataFrame giving a dict of labels) must have `x`'s
    index; `target_column` is its name, which must not be one of `x`'s columns."""
    import pandas as pd

    _check_shuffle(shuffle)
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    x = x.copy()  # (as 2.15: what input_fn reads is x as it was here)
    labels = None
    if y is not None:  # (checked first: 2.15 read x's columns when input_fn was called)
        if target_column in x:
            raise ValueError(
                f"Cannot use name {target_column} for target column: DataFrame already has a "
                f"column with that name: {x.columns}"
            )
        if not np.array_equal(x.index, y.index):
            raise ValueError(
                f"Index for x and y are mismatched.\nIndex for x: {x.index}\n"
                f"Index for y: {y.index}\n"
            )
        if isinstance(y, pd.DataFrame):
            labels = {name: _column_values(y[name]) for name in y.columns}
        else:
            labels = _column_values(y)
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)

    def input_fn():
        for column in [*(x[name] for name in x.columns), *_label_columns(y)]:
            _refuse_as_the_queue_did(column)
        features = {name: _column_values(x[name]) for name in x.columns}
        epochs = _epochs(num_epochs, num_threads, shuffle)
        return _returned(_dataset(features, labels, batch_size, epochs, shuffle, queue_capacity))

    return input_fn


def _label_columns(y):
    if y is None:
        return []
    return [y[name] for name in y.columns] if y.ndim == 2 else [y]


def _refuse_as_the_queue_did(column):
    """What tf.estimator's queue refused of a DataFrame's column: a pandas dtype that is
    not numpy's (category, Int64, string: the `TypeError` of `tf.as_dtype`), and in an
    object column a value that is not text (the NaN or None a missing string leaves):
    its queue failed as training read it, `InternalError: Graph execution error:` then
    `Unsupported object type float` (the kit names the column after that)."""
    import pandas as pd

    if not isinstance(column.dtype, np.dtype):
        tf.as_dtype(column.dtype)  # raises 2.15's TypeError
    if column.dtype == object and pd.api.types.infer_dtype(column, skipna=False) not in (
        "string",
        "bytes",
        "empty",
    ):
        bad = next(v for v in column if not isinstance(v, str | bytes))
        _refuse_object(bad, f"Column {column.name!r}", "fill its missing values (fillna)")


def _refuse_objects_not_text(arrays):
    """numpy_input_fn's arrays of objects as 2.15's queue read them: text only (a None or a
    number among it failed as training read it, as `_refuse_as_the_queue_did` says)."""
    for key, values in arrays.items():
        if isinstance(values, np.ndarray) and values.dtype == object:
            bad = next((v for v in values.ravel() if not isinstance(v, str | bytes)), "")
            if not isinstance(bad, str):
                _refuse_object(bad, f"Array {key!r}" if key else "The array", "replace it")


def _refuse_object(bad, holder, cure):
    raise tf.errors.InternalError(  # (2.15's first line: Session.run's)
        None,
        None,
        f"Graph execution error:\n\nUnsupported object type {type(bad).__name__}\n"
        f"{holder} holds a {type(bad).__name__} ({bad!r}) among its text: "
        f"{cure} or drop it from x.",
    )


def _column_values(series):
    """A column as a numpy array; text (object or string dtype) as Python strings."""
    values = series.to_numpy()
    if values.dtype == object or series.dtype.kind in "OSU":
        return values.astype(str)
    return values


# What tf.estimator 2.15 listed in this namespace (the rest serves the kit itself).
_PUBLIC = (
    "numpy_input_fn",
    "pandas_input_fn",
)


def __dir__():
    return sorted(_PUBLIC)
