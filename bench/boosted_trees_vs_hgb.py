"""The kit's BoostedTreesClassifier against scikit-learn's HistGradientBoostingClassifier.

    .venv/bin/python bench/boosted_trees_vs_hgb.py [--repeats 3] [--no-one-core]
        [--data taxi|wide|friedman|digits|diamonds|ames|mlc_churn|default|caravan] [--rows N]
        [--unordered] [--seeds N] [--kit-args JSON]

On the taxi sample (data/taxi/data.csv, label: tips > 20% of the fare), a fixed
seeded 2/3-1/3 split, the same features for both: numbers as floats (missing as
0), the two text columns (payment_type, company) as integer category ids (an
indicator over an identity column for the kit, `categorical_features` for HGB).
Both at their defaults for 100 trees and learning rate 0.1 (the kit: max_depth 6,
train_in_memory, center_bias; HGB: 31 leaves, no early stopping).  Prints the
holdout AUC and the training wall time (best of --repeats; the kit's train() call
whole, tracing and checkpoints included) of each, on both cores and under
`taskset -c 0` (one core, in a subprocess each), side by side.

`--data wide` is the zero-code model's case instead: --rows synthetic rows (a
third more for the holdout) of 10 z-scored numbers and 3 category ids with
1,010 values each, the kit with the zero-code settings (200 trees, max_depth 6,
learning rate 0.1, l2 1.0, train_in_memory, no center_bias), HGB with 200
iterations, max_depth 6, no leaf limit, l2 1.0, the ids as numbers (its
categorical support stops at 255 categories).

`--data friedman` (regression: scikit-learn's make_friedman1, --rows rows, 10 features,
noise 1, the target exp-skewed as a price is) and `--data digits` (scikit-learn's bundled
8x8 digits, 1,797 rows, 64 features, 10 classes) compare quality: HGB at its defaults
(early stopping on when over 10,000 rows), the kit at tf.estimator's defaults
(`--kit tf`: max_depth 6, 100 buckets, full Hessian) or the zero-code candidate's
HGB-like settings (`--kit hgb`, `components.auto.model.BOOSTED_TREES`: diagonal Hessian,
31 leaves, 20 examples a leaf, 255 buckets, center_bias), 100 trees, learning rate 0.1
for both. Prints RMSE, or accuracy and log loss, on a seeded quarter held out.

`--data diamonds` and `--data ames` (bench/zero_code_quality.py's regression datasets, its
seeded 75/25 split: the same train rows and holdout) compare the zero-code path's trees
alone with HGB as that bench fits it (`fit_hgb`: defaults, text columns categorical): the
kit's BoostedTreesRegressor reads the columns as the zero-code Transform hands them over
(numbers with a missing value at the mean; text, and integers of at most 20 values, as
category ids, most frequent first) in its settings (`components.auto.model.BOOSTED_TREES`,
built by `candidate_estimator`), its category ids in the order of their mean label on the
fit rows, as the Trainer gives them (`--unordered`: also one id against the rest, as
before), stopped early as the Trainer stops it: a seeded tenth of the train rows held out,
validated every `TREES_PER_ROUND` trees' steps, the best round's holdout predictions
scored, at most `PATIENCE` rounds without a better one. Prints RMSE, the trees of the best
round, the wall time and kit/HGB (HGB's RMSE over the kit's).
`--data mlc_churn|default|caravan`, that bench's binary datasets, the same way: the
BoostedTreesClassifier on the label as 0/1 (its second class in the kit's order the
positive one), its category ids in the order of their positive rate on the fit rows (as the
Trainer gives a binary label's trees), stopped on the held-out tenth's log loss; prints the
holdout's AUC and log loss and kit/HGB (the kit's AUC over HGB's).
`--seeds N` draws the held-out tenth N ways (seeds 0..N-1) and prints each score's mean
over them, and each run's: one tenth of a few thousand rows decides the stopping round.
`--kit-args JSON` overrides the candidate's settings for an experiment.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

DATA = os.path.join(REPO, "data", "taxi", "data.csv")
TEXT = ["payment_type", "company"]
DROP = ["tips", "trip_start_timestamp"]
N_TREES = 100
LEARNING_RATE = 0.1


def load():
    """(train, test) dicts of name -> array, plus 'label'; text columns as ids."""
    import numpy as np
    import pandas as pd

    frame = pd.read_csv(DATA)
    label = (frame["tips"] > 0.2 * frame["fare"]).astype(np.int64).to_numpy()
    columns = {}
    for name in frame.columns:
        if name in DROP:
            continue
        if name in TEXT:
            codes, _ = pd.factorize(frame[name].fillna(""), sort=True)
            columns[name] = codes.astype(np.int64)
        else:
            columns[name] = frame[name].fillna(0).astype(np.float32).to_numpy()
    order = np.random.default_rng(0).permutation(len(frame))
    cut = len(frame) * 2 // 3
    split = [order[:cut], order[cut:]]
    return [({k: v[rows] for k, v in columns.items()}, label[rows]) for rows in split]


WIDE_NUMBERS, WIDE_IDS, WIDE_BUCKETS = 10, 3, 1010
WIDE_SETTINGS = {"n_trees": 200, "max_depth": 6, "learning_rate": 0.1, "l2_regularization": 1.0}


def load_wide(rows):
    """(train, test) as load() gives them: `rows` training rows of the wide case."""
    import numpy as np

    rng = np.random.default_rng(0)
    total = rows + rows // 2
    columns = {f"x{i}": rng.standard_normal(total).astype(np.float32) for i in range(WIDE_NUMBERS)}
    logit = columns["x0"] - 0.5 * columns["x1"] * columns["x2"] + 0.3 * np.sin(3 * columns["x3"])
    for i in range(WIDE_IDS):
        ids = np.minimum(rng.zipf(1.3, total) - 1, WIDE_BUCKETS - 1)
        columns[f"id{i}"] = ids.astype(np.int64)
        logit += rng.standard_normal(WIDE_BUCKETS)[ids] * 0.5
    label = (logit + rng.logistic(size=total) > 0).astype(np.int64)
    split = [slice(0, rows), slice(rows, total)]
    return [({k: v[part] for k, v in columns.items()}, label[part]) for part in split]


def load_friedman(rows):
    """(train, test) of the regression case: a quarter held out."""
    import numpy as np
    from sklearn.datasets import make_friedman1

    x, y = make_friedman1(rows + rows // 3, n_features=10, noise=1.0, random_state=0)
    y = np.exp(y / 6.0).astype(np.float32)  # skewed, as a price
    return _split_columns(x, y, rows)


def load_digits_split():
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    order = __import__("numpy").random.default_rng(0).permutation(len(y))
    return _split_columns(x[order], y[order].astype("int64"), len(y) * 3 // 4)


def _split_columns(x, y, rows):
    columns = {f"f{i:02d}": x[:, i].astype("float32") for i in range(x.shape[1])}
    split = [slice(0, rows), slice(rows, len(y))]
    return [({k: v[part] for k, v in columns.items()}, y[part]) for part in split]


ZERO_CODE_DATASETS = ("diamonds", "ames", "mlc_churn", "default", "caravan")


def load_zero_code(name, seed=0):
    """(train, holdout) frames of bench/zero_code_quality.py's dataset `name`: its split,
    read back as it reads them; and the label's name."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import zero_code_quality as zcq

    dataset = zcq.DATASETS[name]
    with tempfile.TemporaryDirectory() as folder:
        _, train, holdout = zcq.split_to_csv(dataset.load(), dataset.label, folder, seed)
    return train, holdout, dataset.label


def zero_code_features(train, holdout, label):
    """(train, holdout) dicts as the zero-code Transform hands the columns to the trees, and
    {category column: ids}: text and integer codes (at most 20 values, each 10 rows on
    average: SchemaGen's categorical integers) as ids by frequency, missing and unseen
    values an out-of-vocabulary id; other numbers as float32, a missing one at the mean."""
    import numpy as np

    from components.auto import OOV_BUCKETS, TREES_CATEGORY_IDS

    out, buckets = ({}, {}), {}
    for name in train.columns:
        if name == label:
            continue
        column = train[name]
        span = column.max() - column.min() + 1 if column.dtype.kind == "i" else None
        if column.dtype == object or (span is not None and span <= 20 and 10 * span <= len(column)):
            vocabulary = column.dropna().astype(str).value_counts(sort=True).index.tolist()
            ids = {v: i for i, v in enumerate(vocabulary)}
            buckets[name] = min(len(vocabulary) + OOV_BUCKETS, TREES_CATEGORY_IDS)
            for part, frame in zip(out, (train, holdout), strict=True):
                values = frame[name].astype(str).where(frame[name].notna(), None)
                part[name] = np.array(
                    [min(ids.get(v, len(vocabulary)), buckets[name] - 1) for v in values],
                    dtype=np.int64,
                )
        else:
            mean = column.astype(float).mean()
            for part, frame in zip(out, (train, holdout), strict=True):
                part[name] = frame[name].astype(float).fillna(mean).to_numpy(np.float32)
    return out[0], out[1], buckets


def _zero_code_labels(task, train, holdout, label):
    """(train labels, holdout labels, classes): a regression label as float32; a binary one
    as 0/1 for its second class in the kit's order (zero_code_quality.sorted_classes, the
    head's class id 1), with the classes as text."""
    import numpy as np
    import zero_code_quality as zcq

    if task == "regression":
        return train[label].to_numpy(np.float32), holdout[label].to_numpy(float), None
    classes = zcq.sorted_classes(train[label].astype(str))
    labels = [
        (frame[label].astype(str) == classes[1]).to_numpy(np.int64) for frame in (train, holdout)
    ]
    return labels[0], labels[1], classes


def _zero_code_scores(task, truth, predicted):
    """RMSE, or (binary) AUC and log loss of the positive class's probabilities."""
    import numpy as np
    from sklearn.metrics import log_loss, roc_auc_score

    if task == "regression":
        return {"rmse": float(np.sqrt(np.mean((predicted - truth) ** 2)))}
    return {
        "auc": float(roc_auc_score(truth, predicted)),
        "log_loss": float(log_loss(truth, np.clip(predicted, 1e-15, 1 - 1e-15))),
    }


def run_zero_code_trees(name, kit_args, ordered=True, seed=0):
    """The zero-code path's trees on dataset `name`, stopped early as the Trainer stops them
    (on the held-out tenth's squared error or log loss), their category ids in the order of
    the fit rows' labels (`ordered`, as the Trainer gives them to a regression or binary
    label; else one id against the rest), the tenth drawn with `seed`; {rmse or auc and
    log_loss, trees, rounds, seconds}."""
    import numpy as np
    import tensorflow as tf

    from components.auto import model as auto_model
    from components.auto import ordered_categories
    from components.trainer import candidates, stopping

    train, holdout, label = load_zero_code(name)
    task = zero_code_task(name)
    x, x_holdout, buckets = zero_code_features(train, holdout, label)
    y, truth, _ = _zero_code_labels(task, train, holdout, label)
    fit = np.random.default_rng(seed).random(len(y)) >= 0.1
    x_fit = {k: v[fit] for k, v in x.items()}
    x_valid = {k: v[~fit] for k, v in x.items()}
    deep = []
    for column in sorted(x):
        if column in buckets:
            ids = tf.feature_column.categorical_column_with_identity(column, buckets[column])
            deep.append(tf.feature_column.indicator_column(ids))
        else:
            deep.append(tf.feature_column.numeric_column(column))
    if ordered and auto_model.orders_categories("boosted_trees", task):
        keys = ordered_categories.identity_keys(deep)
        deep = ordered_categories.ordered_columns(
            deep, ordered_categories.label_sums([(x_fit, y[fit])], keys)
        )
    settings = {**auto_model.BOOSTED_TREES, **kit_args}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as model_dir, _patched(auto_model.BOOSTED_TREES, settings):
        config = __import__("components.estimator", fromlist=["RunConfig"]).RunConfig(
            model_dir=model_dir
        )
        model = auto_model.candidate_estimator(
            "boosted_trees", task, [], deep, None, config, {}, None, int(fit.sum())
        )
        params = model.tree_params
        round_steps = candidates.TREES_PER_ROUND * params.max_depth
        key, column = ("predictions", 0) if task == "regression" else ("probabilities", 1)

        def predict(features):
            batches = lambda: tf.data.Dataset.from_tensor_slices(features).batch(8192)  # noqa: E731
            return np.array([p[key][column] for p in model.predict(batches)])

        def loss(predicted, truth):
            if task == "regression":
                return float(np.mean((predicted - truth) ** 2))
            p = np.clip(predicted, 1e-15, 1 - 1e-15)
            return float(-np.mean(truth * np.log(p) + (1 - truth) * np.log(1 - p)))

        best, best_holdout, rounds, waited = np.inf, None, 0, 0
        while waited < stopping.PATIENCE:
            model.train(
                lambda: tf.data.Dataset.from_tensors((x_fit, y[fit])).repeat(), steps=round_steps
            )
            rounds += 1
            validation = loss(predict(x_valid), y[~fit])
            if validation < best:
                best, best_holdout, waited = validation, predict(x_holdout), 0
                best_trees = int(model.get_variable_value("boosted_trees/tree"))
            else:
                waited += 1
            if model.get_variable_value("boosted_trees/finished"):
                break
    return {
        **_zero_code_scores(task, truth, best_holdout),
        "trees": best_trees,
        "rounds": rounds,
        "seconds": time.perf_counter() - start,
    }


class _patched:
    """`table` updated with `values` inside the block, restored after."""

    def __init__(self, table, values):
        self.table, self.values = table, values

    def __enter__(self):
        self.saved = dict(self.table)
        self.table.clear()
        self.table.update(self.values)

    def __exit__(self, *exc):
        self.table.clear()
        self.table.update(self.saved)


def run_zero_code_hgb(name):
    """HGB as bench/zero_code_quality.py fits it, on the same rows; {rmse or auc and
    log_loss, trees, seconds}."""
    import zero_code_quality as zcq

    train, holdout, label = load_zero_code(name)
    task = zero_code_task(name)
    _, truth, classes = _zero_code_labels(task, train, holdout, label)
    y = train[label].to_numpy("float64") if task == "regression" else train[label].astype(str)
    start = time.perf_counter()
    model = zcq.fit_hgb(task, train.drop(columns=label), y)
    seconds = time.perf_counter() - start
    x = holdout.drop(columns=label)
    if task == "regression":
        predicted = model.predict(x)
    else:
        predicted = zcq.probabilities(model, x, classes)[:, 1]
    scores = _zero_code_scores(task, truth, predicted)
    return {**scores, "trees": int(model[-1].n_iter_), "seconds": seconds}


def zero_code_task(name):
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import zero_code_quality as zcq

    return zcq.DATASETS[name].task


def _mean_over_seeds(name, kit_args, ordered, seeds):
    """run_zero_code_trees over held-out tenths drawn with seeds 0..seeds-1: each score's
    mean, and {score: [per seed]} under "each"; the trees' mean."""
    import numpy as np

    runs = [run_zero_code_trees(name, kit_args, ordered, seed) for seed in range(seeds)]
    out = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
    out["each"] = {key: [r[key] for r in runs] for key in runs[0] if key != "seconds"}
    return out


def zero_code_trees(args):
    """The table of `--data diamonds|ames|mlc_churn|default|caravan`: HGB, then the kit's
    zero-code trees (each figure the mean over `--seeds` held-out tenths)."""
    kit_args = json.loads(args.kit_args or "{}")
    settings = f", {kit_args}" if kit_args else ""
    results = [("HistGradientBoosting (zero_code_quality.py's)", run_zero_code_hgb(args.data))]
    for ordered in (False, True)[0 if args.unordered else 1 :]:
        label = "ids in the order of their mean label" if ordered else "one id against the rest"
        results.append(
            (
                f"kit, zero-code trees ({label}{settings})",
                _mean_over_seeds(args.data, kit_args, ordered, args.seeds),
            )
        )
    keys = ["rmse"] if zero_code_task(args.data) == "regression" else ["auc", "log_loss"]
    print("| model | " + " | ".join(k.upper() for k in keys) + " | trees | train s |")
    print("|---|" + "---|" * (len(keys) + 2))
    for label, r in results:
        scores = " | ".join(f"{r[k]:.1f}" if k == "rmse" else f"{r[k]:.4f}" for k in keys)
        print(f"| {label} | {scores} | {r['trees']:.0f} | {r['seconds']:.1f} |")
    for label, r in results[1:]:
        if keys == ["rmse"]:
            ratio, how = results[0][1]["rmse"] / r["rmse"], "HGB's RMSE over the kit's"
        else:
            ratio, how = r["auc"] / results[0][1]["auc"], "the kit's AUC over HGB's"
        print(f"kit/HGB ({how}), {label}: {ratio:.3f}")
        if args.seeds > 1:
            print(f"  per held-out tenth (seeds 0..{args.seeds - 1}): {json.dumps(r['each'])}")


def dataset(data, rows):
    if data == "friedman":
        return load_friedman(rows)
    if data == "digits":
        return load_digits_split()
    return load() if data == "taxi" else load_wide(rows)


def is_id(data, name):
    return name in TEXT if data == "taxi" else name.startswith("id")


def run_kit(repeats, data, rows):
    import numpy as np
    import tensorflow as tf
    from sklearn.metrics import roc_auc_score

    from components import estimator

    (train, y_train), (test, y_test) = dataset(data, rows)
    columns = []
    for name, values in sorted(train.items()):
        if is_id(data, name):
            buckets = (
                WIDE_BUCKETS if data == "wide" else int(max(values.max(), test[name].max())) + 1
            )
            columns.append(
                tf.feature_column.indicator_column(
                    tf.feature_column.categorical_column_with_identity(name, buckets)
                )
            )
        else:
            columns.append(tf.feature_column.numeric_column(name))
    best, auc = None, None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as model_dir:
            settings = (
                {"n_trees": N_TREES, "learning_rate": LEARNING_RATE, "center_bias": True}
                if data == "taxi"
                else WIDE_SETTINGS
            )
            model = estimator.BoostedTreesClassifier(
                columns,
                n_batches_per_layer=1,
                model_dir=model_dir,
                train_in_memory=True,
                **settings,
            )
            start = time.perf_counter()
            model.train(
                lambda: tf.data.Dataset.from_tensors((train, y_train)).repeat(),
                max_steps=10**9,
            )
            seconds = time.perf_counter() - start
            scores = np.array(
                [
                    p["probabilities"][1]
                    for p in model.predict(
                        lambda: tf.data.Dataset.from_tensor_slices(test).batch(2048)
                    )
                ]
            )
        auc = roc_auc_score(y_test, scores)
        best = seconds if best is None else min(best, seconds)
    return {"auc": auc, "seconds": best}


def run_hgb(repeats, data, rows):
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    (train, y_train), (test, y_test) = dataset(data, rows)
    names = sorted(train)
    x_train = np.stack([train[n] for n in names], axis=1).astype(np.float64)
    x_test = np.stack([test[n] for n in names], axis=1).astype(np.float64)
    best, auc = None, None
    for _ in range(repeats):
        settings = (
            {"max_iter": N_TREES, "categorical_features": [n in TEXT for n in names]}
            if data == "taxi"
            else {"max_iter": 200, "max_depth": 6, "max_leaf_nodes": None, "l2_regularization": 1.0}
        )
        model = HistGradientBoostingClassifier(
            learning_rate=LEARNING_RATE, early_stopping=False, random_state=0, **settings
        )
        start = time.perf_counter()
        model.fit(x_train, y_train)
        seconds = time.perf_counter() - start
        auc = roc_auc_score(y_test, model.predict_proba(x_test)[:, 1])
        best = seconds if best is None else min(best, seconds)
    return {"auc": auc, "seconds": best}


def _kit_settings(kit):
    """The kit's settings beyond the columns: tf.estimator's defaults or the zero-code
    candidate's (`components.auto.model.BOOSTED_TREES`), 100 trees either way."""
    if kit == "tf":
        return {"n_trees": N_TREES, "learning_rate": LEARNING_RATE}
    from components.auto.model import BOOSTED_TREES

    return {**BOOSTED_TREES, "n_trees": N_TREES, "center_bias": True}


def _scores(task, y, predicted):
    """RMSE (regression), or accuracy and log loss."""
    import numpy as np
    from sklearn.metrics import log_loss

    if task == "regression":
        return {"rmse": float(np.sqrt(np.mean((predicted - y) ** 2)))}
    return {
        "accuracy": float(np.mean(predicted.argmax(1) == y)),
        "log_loss": float(log_loss(y, predicted, labels=np.arange(predicted.shape[1]))),
    }


def run_kit_quality(data, rows, kit):
    """The kit on the friedman (regression) or digits (10 classes) case."""
    import numpy as np
    import tensorflow as tf

    from components import estimator

    (train, y_train), (test, y_test) = dataset(data, rows)
    columns = [tf.feature_column.numeric_column(name) for name in sorted(train)]
    task = "regression" if data == "friedman" else "multiclass"
    settings = _kit_settings(kit)
    if task == "regression":
        make = estimator.BoostedTreesRegressor
    else:
        make = estimator.BoostedTreesClassifier
        settings["n_classes"] = 10
    if kit == "tf":
        settings.pop("multi_class_hessian", None)
    with tempfile.TemporaryDirectory() as model_dir:
        model = make(
            columns, n_batches_per_layer=1, model_dir=model_dir, train_in_memory=True, **settings
        )
        start = time.perf_counter()
        model.train(
            lambda: tf.data.Dataset.from_tensors((train, y_train)).repeat(), max_steps=10**9
        )
        seconds = time.perf_counter() - start
        key = "predictions" if task == "regression" else "probabilities"
        predicted = np.array(
            [
                p[key]
                for p in model.predict(lambda: tf.data.Dataset.from_tensor_slices(test).batch(4096))
            ]
        )
    if task == "regression":
        predicted = predicted[:, 0]
    return {**_scores(task, y_test, predicted), "seconds": seconds}


def run_hgb_quality(data, rows, _kit):
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    (train, y_train), (test, y_test) = dataset(data, rows)
    names = sorted(train)
    x_train = np.stack([train[n] for n in names], axis=1).astype(np.float64)
    x_test = np.stack([test[n] for n in names], axis=1).astype(np.float64)
    regression = data == "friedman"
    make = HistGradientBoostingRegressor if regression else HistGradientBoostingClassifier
    model = make(max_iter=N_TREES, learning_rate=LEARNING_RATE, random_state=0)
    start = time.perf_counter()
    model.fit(x_train, y_train)
    seconds = time.perf_counter() - start
    predicted = model.predict(x_test) if regression else model.predict_proba(x_test)
    task = "regression" if regression else "multiclass"
    return {**_scores(task, y_test, predicted), "seconds": seconds, "trees": model.n_iter_}


def quality(args):
    """The quality cases' table: HGB, the kit at tf.estimator's defaults, the kit as the
    zero-code candidate, in that order, each in this process."""
    results = [("HistGradientBoosting (defaults)", run_hgb_quality(args.data, args.rows, None))]
    labels = {"tf": "kit, tf.estimator's defaults", "hgb": "kit, zero-code (HGB-like) settings"}
    for kit in args.kits.split(","):
        results.append((labels[kit], run_kit_quality(args.data, args.rows, kit)))
    keys = [k for k in results[0][1] if k != "trees"]
    print("| model | " + " | ".join(keys) + " |")
    print("|" + "---|" * (len(keys) + 1))
    for label, result in results:
        print(f"| {label} | " + " | ".join(f"{result[k]:.4f}" for k in keys) + " |")


def one_core(which, repeats, data, rows):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(
        [
            "taskset",
            "-c",
            "0",
            sys.executable,
            __file__,
            "--only",
            which,
            "--repeats",
            str(repeats),
            "--data",
            data,
            "--rows",
            str(rows),
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-one-core", action="store_true")
    parser.add_argument(
        "--data",
        choices=["taxi", "wide", "friedman", "digits", *ZERO_CODE_DATASETS],
        default="taxi",
    )
    parser.add_argument("--rows", type=int, default=10_000, help="training rows of --data wide")
    parser.add_argument(
        "--kits", default="tf,hgb", help="friedman/digits: the kit's settings to run (tf, hgb)"
    )
    parser.add_argument("--kit-args", help="the zero-code datasets: JSON settings over the trees'")
    parser.add_argument(
        "--unordered",
        action="store_true",
        help="the zero-code datasets: the trees with their category ids one against the rest too",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="the zero-code datasets: the trees over this many held-out tenths (seeds 0..N-1)",
    )
    parser.add_argument("--only", choices=["kit", "hgb"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.data in ZERO_CODE_DATASETS:
        zero_code_trees(args)
        return
    if args.data in ("friedman", "digits"):
        quality(args)
        return
    runners = {"kit": run_kit, "hgb": run_hgb}
    if args.only:
        print(json.dumps(runners[args.only](args.repeats, args.data, args.rows)))
        return
    rows = []
    for which, label in (("kit", "kit BoostedTreesClassifier"), ("hgb", "HistGradientBoosting")):
        both = runners[which](args.repeats, args.data, args.rows)
        row = [label, f"{both['auc']:.4f}", f"{both['seconds']:.2f}"]
        if not args.no_one_core:
            single = one_core(which, args.repeats, args.data, args.rows)
            row += [f"{single['auc']:.4f}", f"{single['seconds']:.2f}"]
        rows.append(row)
    header = ["model", "AUC (2 cores)", "train s (2 cores)"]
    if not args.no_one_core:
        header += ["AUC (1 core)", "train s (1 core)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
