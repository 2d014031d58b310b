"""Zero code end to end: `PipelineConfig(data_path=csv, raw_label_key=label)` (what `python -m pipeline run
--data my.csv --label target` builds) on generated CSVs with missing values, one run per task
(binary with text labels, multiclass with text labels, regression); each pushed model is
served from raw examples in a fresh process."""

import csv
import glob
import io
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pipeline.config import PipelineConfig
from tests.tfma_parity import assert_agrees_with_stock_tfma

pytestmark = pytest.mark.slow

ROWS = 450
CITIES = ["north", "south", "east", "west"]
CITY_EFFECT = {"north": 2.0, "south": -1.0, "east": 1.0, "west": -2.0}
# What a client sends: the columns' types as ExampleGen infers them from the data.
TYPES = {"x1": "FLOAT", "x2": "FLOAT", "rooms": "INT", "city": "BYTES", "noise": "INT"}
MISSING = ("", "NA", "NaN", "null")


def _write(path, label_name, labels, columns):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*columns, label_name])
        for i, label in enumerate(labels):
            writer.writerow([*(columns[name][i] for name in columns), label])


def _generate(folder):
    """Three CSVs over the same features, each with one label; some feature cells missing
    as empty, NA, NaN or null."""
    rng = np.random.default_rng(11)
    x1 = rng.normal(0, 1, ROWS)
    x2 = rng.uniform(0, 10, ROWS)
    rooms = rng.integers(1, 6, ROWS)
    city = rng.choice(CITIES, ROWS)
    noise = rng.integers(1000, 100000, ROWS)
    effect = np.array([CITY_EFFECT[c] for c in city])
    columns = {
        "x1": [
            "" if i % 13 == 0 else "NA" if i % 17 == 0 else f"{v:.4f}" for i, v in enumerate(x1)
        ],
        "x2": ["NaN" if i % 19 == 0 else f"{v:.3f}" for i, v in enumerate(x2)],
        "rooms": [str(v) for v in rooms],
        "city": ["null" if i % 23 == 0 else c for i, c in enumerate(city)],
        "noise": [str(v) for v in noise],
    }
    score = 1.5 * x1 + 0.4 * (x2 - 5) + effect + 0.3 * (rooms - 3)
    binary = np.where(score + rng.normal(0, 0.5, ROWS) > 0, "yes", "no")
    cuts = np.quantile(score, [1 / 3, 2 / 3])
    multiclass = np.array(["low", "mid", "high"])[np.searchsorted(cuts, score)]
    value = 3 * x1 + 2 * x2 + 4 * rooms + 3 * effect + 50 + rng.normal(0, 1, ROWS)
    paths = {
        "binary": folder / "churn.csv",
        "multiclass": folder / "tier.csv",
        "regression": folder / "price.csv",
    }
    _write(paths["binary"], "churned", binary, columns)
    _write(paths["multiclass"], "tier", multiclass, columns)
    _write(paths["regression"], "price", [f"{v:.3f}" for v in value], columns)
    return paths


LABELS = {"binary": "churned", "multiclass": "tier", "regression": "price"}

# A serving client: TensorFlow only, raw CSV rows in (label dropped, missing cells left out).
_SERVE_SCRIPT = textwrap.dedent(r"""
    import csv, json, sys
    import numpy as np
    import tensorflow as tf

    jobs, types, missing = json.loads(sys.argv[1])
    def example(row, label):
        feature = {}
        for k, v in row.items():
            if k == label or v in missing:
                continue
            if types[k] == "INT":
                feature[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)]))
            elif types[k] == "FLOAT":
                feature[k] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
            else:
                feature[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    results = {}
    for task, model_path, data_path, label in jobs:
        model = tf.saved_model.load(model_path)
        rows = list(csv.DictReader(open(data_path)))
        inputs = tf.constant([example(r, label) for r in rows])
        truth = [r[label] for r in rows]
        if task == "regression":
            predicted = model.signatures["regression"](inputs=inputs)["outputs"].numpy().reshape(-1)
            target = np.array([float(t) for t in truth])
            results[task] = {"rmse": float(np.sqrt(np.mean((predicted - target) ** 2))),
                             "std": float(target.std())}
            continue
        out = model.signatures["serving_default"](inputs=inputs)
        classes = out["classes"].numpy().astype(str)
        predicted = classes[np.arange(len(rows)), out["scores"].numpy().argmax(axis=1)]
        results[task] = {"classes": sorted(set(classes[0])),
                         "accuracy": float(np.mean(predicted == np.array(truth))),
                         "majority": max(truth.count(c) for c in set(truth)) / len(truth)}
    print(json.dumps(results))
""")


printed = {}  # {task: what its run printed}, filled by `runs`


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{task: (config, summary)}: one zero-code run per task."""
    import components.auto
    from components.auto import model as auto_model
    from pipeline.runner import run_locally

    folder = tmp_path_factory.mktemp("zero_code")
    paths = _generate(folder)
    out = {}
    for task, path in paths.items():
        config = PipelineConfig(
            data_path=str(path),
            raw_label_key=LABELS[task],
            output_dir=str(folder / "out"),
            train_steps=300,
            eval_steps=5,
            save_checkpoints_steps=300,
        )
        assert config.task == "auto" and config.schema_path is None
        stream = io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            if task == "binary":  # read as a wide table: packed columns, ALL_NUMBERS
                patch.setattr(components.auto, "WIDE_FROM", 2)
            if task == "multiclass":  # its three numbers as one column in the model
                patch.setattr(auto_model, "NUMBERS_TOGETHER_FROM", 2)
            out[task] = (config, run_locally(config, stream=stream))
        printed[task] = stream.getvalue()
    return out


@pytest.fixture(scope="module")
def served(runs):
    jobs = [
        [task, summary.pushed_to, config.data_path, config.raw_label_key]
        for task, (config, summary) in runs.items()
    ]
    result = subprocess.run(
        [sys.executable, "-c", _SERVE_SCRIPT, json.dumps([jobs, TYPES, list(MISSING)])],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_each_task_is_inferred_trained_blessed_and_pushed(runs, task):
    config, summary = runs[task]
    assert config.pipeline_name == config.data_path.rsplit("/", 1)[1].removesuffix(".csv")
    assert summary.blessed is True and summary.pushed_to, summary.not_pushed_reason
    assert summary.schema_inferred
    assert summary.anomalies == []
    expected = {
        "binary": {"auc", "binary_accuracy"},
        "multiclass": {"accuracy", "log_loss"},
        "regression": {"root_mean_squared_error", "mean_absolute_error"},
    }[task]
    assert expected <= set(summary.metrics), summary.metrics


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_each_task_s_metrics_equal_stock_tfma_s(runs, task, tmp_path):
    """Text labels (binary, multiclass) map to the head's classes as TFMA maps them."""
    config, summary = runs[task]
    (examples,) = glob.glob(
        os.path.join(config.resolved_pipeline_root, "ExampleGen", "examples", "*")
    )
    assert_agrees_with_stock_tfma(summary.evaluation_uri, examples, tmp_path)


def test_binary_serves_the_label_names_and_separates_the_classes(runs, served):
    _, summary = runs["binary"]
    assert summary.metrics["auc"] > 0.8
    assert served["binary"]["classes"] == ["no", "yes"]
    assert served["binary"]["accuracy"] > 0.75


def test_multiclass_serves_the_class_names_and_beats_the_majority(runs, served):
    _, summary = runs["multiclass"]
    assert summary.metrics["accuracy"] > 0.5
    assert served["multiclass"]["classes"] == ["high", "low", "mid"]
    assert served["multiclass"]["accuracy"] > served["multiclass"]["majority"] + 0.2


def test_a_wide_table_is_read_packed_and_its_numbers_are_one_feature(runs):
    """The binary run, read as a wide table (WIDE_FROM patched): the Transform packed its
    columns (serving packs them again: `served`) and its numbers are one float32 [batch, 3]
    feature; the other runs keep one feature per column."""
    import tensorflow_transform as tft

    from components.transform.packing import Packing

    graphs = {}
    for task, (config, _) in runs.items():
        (uri,) = glob.glob(
            os.path.join(config.resolved_pipeline_root, "Transform", "transform_graph", "*")
        )
        graphs[task] = (uri, tft.TFTransformOutput(uri).transformed_feature_spec())
    uri, spec = graphs["binary"]
    assert Packing.read(uri) == Packing(
        numbers=(("noise", "INT"), ("x1", "FLOAT"), ("x2", "FLOAT")),  # the schema's order
        texts=(("city", "BYTES"), ("rooms", "INT")),
    )
    assert spec["all_numbers"].shape == [3] and "x1_xf" not in spec
    assert {"rooms_xf", "city_xf", "churned_xf"} <= set(spec)
    for task in ("multiclass", "regression"):
        uri, spec = graphs[task]
        assert Packing.read(uri) is None and {"x1_xf", "noise_xf"} <= set(spec), task


def test_regression_serves_predictions_in_the_label_units(served):
    assert served["regression"]["rmse"] < 0.5 * served["regression"]["std"]


def test_trees_on_the_labels_log_are_a_candidate_for_a_label_above_0_only(runs):
    """`boosted_trees_log` fits a regression label whose train values are all above 0 (the
    prices here); a classifier's candidates leave it out."""
    names = {
        task: {c["name"] for c in summary.model_choice["candidates"]} - {"ensemble"}
        for task, (_, summary) in runs.items()
    }
    assert names["regression"] == {"linear", "wide_and_deep", "boosted_trees", "boosted_trees_log"}
    for task in ("binary", "multiclass"):
        assert names[task] == {"linear", "wide_and_deep", "boosted_trees"}, names


def test_regression_serves_nothing_beyond_the_train_labels_range(runs):
    """A row far outside the train rows (x2 a hundred times its range) gets the highest train
    label from the served model, not a linear model's extrapolation; the range is the train
    split's (within the CSV's) and the choice scored its candidates so bounded."""
    import tensorflow as tf

    config, summary = runs["regression"]
    with open(config.data_path) as f:
        prices = [float(row["price"]) for row in csv.DictReader(f)]
    low, high = summary.model_choice["label_range"]
    assert min(prices) <= low < high <= max(prices)
    model = tf.saved_model.load(summary.pushed_to)

    def served(x2):
        values = {"x1": [0.5], "x2": [x2], "rooms": [3], "city": [b"north"], "noise": [5000]}
        feature = {
            k: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
            if TYPES[k] == "INT"
            else tf.train.Feature(float_list=tf.train.FloatList(value=v))
            if TYPES[k] == "FLOAT"
            else tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
            for k, v in values.items()
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        inputs = tf.constant([example.SerializeToString()])
        return float(model.signatures["regression"](inputs=inputs)["outputs"].numpy()[0, 0])

    assert served(1000.0) == pytest.approx(high) and served(-1000.0) == pytest.approx(low)
    assert low < served(5.0) < high  # an ordinary row is left as predicted


def test_progress_lines_inside_a_component_are_printed_under_it(runs):
    lines = printed["binary"].splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("] Transform ..."))
    end = next(i for i, line in enumerate(lines) if "] Transform done in " in line)
    inside = [line.split("] ", 1)[1] for line in lines[start + 1 : end]]
    assert inside[0].startswith("  Transform: building the analysis of "), inside
    assert "(5 of them packed)" in inside[0], inside
    assert "  Transform: running the analysis and the transform" in inside


def test_small_integer_column_is_a_category_and_missing_tokens_are_missing(runs):
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    _, summary = runs["regression"]
    with open(summary.schema_path) as f:
        schema = text_format.Parse(f.read(), schema_pb2.Schema())
    features = {f.name: f for f in schema.feature}
    assert features["rooms"].int_domain.is_categorical  # 1..5
    assert not features["noise"].HasField("int_domain")  # a wide range: a number
    # NA, NaN and null cells are missing values, not text: the columns keep their types.
    assert features["x1"].type == schema_pb2.FLOAT and features["x1"].presence.min_fraction < 1
    assert features["x2"].type == schema_pb2.FLOAT
    assert set(features["city"].string_domain.value) == set(CITIES)


def _holdout_csv(config, path):
    """The eval split ExampleGen wrote, back as CSV rows (an absent feature: an empty cell;
    a float32 as the shortest text that reads back to it), and its serialized examples."""
    import tensorflow as tf

    (split,) = glob.glob(
        os.path.join(config.resolved_pipeline_root, "ExampleGen", "examples", "*", "Split-eval")
    )
    records = list(
        tf.data.TFRecordDataset(sorted(glob.glob(f"{split}/*.gz")), compression_type="GZIP")
    )
    columns = [*TYPES, config.raw_label_key]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for record in records:
            feature = tf.train.Example.FromString(record.numpy()).features.feature
            cells = []
            for name in columns:
                kind = feature[name].WhichOneof("kind") if name in feature else None
                value = getattr(feature[name], kind).value[0] if kind else ""
                if kind == "float_list":
                    value = repr(float(np.float32(value)))
                cells.append(value.decode() if isinstance(value, bytes) else value)
            writer.writerow(cells)
    return [record.numpy() for record in records]


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_predict_on_the_holdout_serves_as_the_signature_and_scores_as_the_evaluator(
    runs, task, tmp_path, capsys
):
    """`predict` on the rows the Evaluator evaluated (the eval split, written back as CSV):
    each row's probabilities (or value) are the serving signature's on the split's own
    examples without the label, and its metrics are the Evaluator's."""
    import tensorflow as tf

    from pipeline.cli import main

    config, summary = runs[task]
    holdout = tmp_path / "holdout.csv"
    serialized = _holdout_csv(config, holdout)
    out = tmp_path / "predictions.jsonl"
    argv = ["predict", "--pipeline-name", config.pipeline_name, "--output-dir", config.output_dir]
    assert main([*argv, "--data", str(holdout), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    predicted = [json.loads(line) for line in out.read_text().splitlines()]
    assert [p["line"] for p in predicted] == list(range(2, len(serialized) + 2))

    without_label = []
    for record in serialized:
        example = tf.train.Example.FromString(record)
        del example.features.feature[config.raw_label_key]
        without_label.append(example.SerializeToString())
    model = tf.saved_model.load(summary.pushed_to)
    inputs = tf.constant(without_label)
    if task == "regression":
        direct = model.signatures["regression"](inputs=inputs)["outputs"].numpy().reshape(-1)
        assert [p["predicted"] for p in predicted] == direct.tolist()
    else:
        out = model.signatures["serving_default"](inputs=inputs)
        classes = [c.decode() for c in out["classes"].numpy()[0]]
        got = np.array([[p["probabilities"][c] for c in classes] for p in predicted])
        np.testing.assert_array_equal(got, out["scores"].numpy())

    assert f"metrics on the {len(serialized)} row(s) with a label: " in err
    from pipeline import predict as predicting

    served = predicting.served_model(config)
    rows = predicting.read_rows(str(holdout), served)
    outputs = predicting.score(served, model, rows.examples)
    metrics, labelled = predicting.metrics(served, model, rows, outputs)
    assert labelled == len(serialized)
    assert set(metrics) == set(summary.metrics)
    assert metrics == pytest.approx(summary.metrics, rel=1e-6, nan_ok=True)


def test_the_summary_s_commands_run_as_printed(runs, tmp_path, monkeypatch, capsys):
    """After `run --data` (zero code), each command the summary suggests finds the same
    pipeline from another folder and exits 0."""
    import shlex

    from pipeline.cli import main

    _, summary = runs["binary"]
    monkeypatch.chdir(tmp_path)
    commands = [
        shlex.split(text)
        for text in re_commands(summary.format())
        if text.startswith("python -m pipeline ")
    ]
    assert sorted(c[3] for c in commands) == ["predict", "schema", "stats"]
    for words in commands:
        assert main(words[3:]) == 0, words
    assert (tmp_path / "schema.pbtxt").exists()
    printed = capsys.readouterr()
    assert "metrics on the 450 row(s) with a label" in printed.err
    lines = printed.out.splitlines()  # predict's CSV, on standard output
    header = lines.index("line,predicted,p_no,p_yes")
    assert lines[header + 1].startswith("2,") and len(lines) - header - 1 >= 450


def re_commands(text):
    import re

    return re.findall(r"`([^`]+)`", text)


@pytest.fixture(scope="module")
def browser():
    from tests.browser import chromium

    with chromium() as launched:
        yield launched


# Per task: the evaluation's charts (data-chart) and the rectangles of its confusion matrix.
_PICTURES = {
    "binary": ({"roc", "pr", "confusion", "calibration"}, 4),
    "multiclass": ({"confusion"}, 9),
    "regression": ({"calibration"}, 0),
}


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_report_draws_the_evaluation_and_every_candidates_curves(runs, browser, task):
    from pipeline.report import write_report
    from tests.browser import Page

    config, _ = runs[task]
    page = Page(browser, write_report(config))
    page.check_renders_alone()  # inline SVG only: no request leaves the page
    kinds, cells = _PICTURES[task]
    drawn = page.page.locator("#evaluation .pictures svg").evaluate_all(
        "svgs => svgs.map(s => [s.dataset.chart, s.getBoundingClientRect().width])"
    )
    assert {kind for kind, _ in drawn} == kinds and all(width > 100 for _, width in drawn)
    assert page.count("#evaluation svg[data-chart=confusion] rect.bar") == cells
    if task != "multiclass":  # the calibration's points: observed against predicted per bin
        assert page.count("#evaluation svg[data-chart=calibration] circle.point") >= 3
    if task == "binary":
        assert page.count("#evaluation svg[data-chart=roc] polyline") == 2  # curve, diagonal
    # Training: a color per candidate fitted, each with its training and validation curves
    # (a point per validation, a line once there are two); the table's ensemble and trivial
    # rows are not models fitted on their own.
    rows = page.texts("#training table.candidates tbody td:first-child")
    fitted = [name for name in rows if not name.startswith(("trivial", "ensemble"))]
    assert len(fitted) >= 2 and sorted(page.texts("#training .legend span")) == sorted(fitted)
    loss = page.page.locator("#training .card", has_text="loss").first
    series = {
        title.split(" step ")[0] for title in loss.locator("circle title").all_text_contents()
    }
    for name in fitted:  # per fold too, under cross-validation (`linear fold-0 validation`)
        for kind in ("train", "validation"):
            assert any(s.startswith(f"{name} ") and s.endswith(kind) for s in series), series
    assert loss.locator("polyline").count() >= len(fitted)
    (logdir,) = re.findall(r"tensorboard --logdir (\S+)", page.texts("#training dl.facts")[0])
    event_files = glob.glob(os.path.join(logdir, "**", "events.out.tfevents.*"), recursive=True)
    assert len({os.path.dirname(f) for f in event_files}) >= 2 * len(fitted)
    # The trees' importances, when trees are served (alone or in the ensemble).
    from components.trainer.executor import RUN_RECORD

    with open(os.path.join(logdir, RUN_RECORD)) as f:  # the log dir is the ModelRun's
        record = json.load(f)
    weights = record["model_choice"].get("ensemble", {}).get("weights", {})
    served = weights if record["model"] == "ensemble" else {record["model"]: 1.0}
    drawn = page.count("#training h3:text-is('Feature importances')")
    trees_served = any(name.startswith("boosted_trees") for name in served)
    assert drawn == (1 if trees_served else 0), record["model"]
