"""The regression example (definitions/diabetes.toml) end to end: RMSE gate, a pushed model
served raw."""

import json
import math
import os
import re
import subprocess
import sys
import textwrap

import pytest

from pipeline.config import REPO_ROOT
from pipeline.definition import build_config

pytestmark = pytest.mark.slow
DIABETES = str(REPO_ROOT / "definitions" / "diabetes.toml")

# A serving client: TensorFlow only, raw CSV rows in (label dropped), predictions out.
_SERVE_SCRIPT = textwrap.dedent(r"""
    import csv, json, sys
    import numpy as np
    import tensorflow as tf

    model = tf.saved_model.load(sys.argv[1])
    rows = list(csv.DictReader(open(sys.argv[2])))
    def example(row):
        feature = {k: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)]))
                   if k in ("age", "sex") else
                   tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
                   for k, v in row.items() if k != "target"}
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
    out = model.signatures["regression"](inputs=tf.constant([example(r) for r in rows]))
    predicted = out["outputs"].numpy().reshape(-1)
    target = np.array([float(r["target"]) for r in rows])
    print(json.dumps({"rmse": float(np.sqrt(np.mean((predicted - target) ** 2))),
                      "std": float(target.std()), "rows": len(rows)}))
""")


def _config(output_dir, **overrides):
    """definitions/diabetes.toml, as `run --definition` reads it, with fewer eval steps."""
    settings = {"output_dir": str(output_dir), "eval_steps": 10, "save_checkpoints_steps": 400}
    return build_config(DIABETES, overrides={**settings, **overrides})


def test_regression_is_blessed_on_rmse_served_raw_and_a_worse_model_is_refused(tmp_path):
    from pipeline.runner import run_locally

    first = run_locally(_config(tmp_path))
    assert first.blessed is True and first.pushed_to
    # [training] epochs = 90: the steps come from the train split's row count.
    length = re.fullmatch(
        r"([\d,]+) steps \(90 epochs of (\d+) train rows at a global batch of 64\)",
        first.training_length,
    )
    assert length, first.training_length
    steps, rows = int(length[1].replace(",", "")), int(length[2])
    assert 310 < rows < 400 and steps == math.ceil(90 * rows / 64)
    assert set(first.metrics) >= {"root_mean_squared_error", "mean_absolute_error", "mean_label"}
    assert "auc" not in first.metrics
    served = subprocess.run(
        [sys.executable, "-c", _SERVE_SCRIPT, first.pushed_to, _config(tmp_path).data_path],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    result = json.loads(served.stdout.strip().splitlines()[-1])
    assert result["rows"] == 442
    # Better than predicting the mean (the label's standard deviation, about 77).
    assert result["rmse"] < 0.85 * result["std"]

    # Barely trained: its RMSE is far above the blessed model's, so the gate refuses it.
    pushed_before = sorted(os.listdir(os.path.dirname(first.pushed_to)))
    second = run_locally(_config(tmp_path, train_steps=5))  # replaces the definition's epochs
    assert second.training_length == "5 steps"
    assert second.blessed is False and second.pushed_to is None
    assert (
        second.metrics["root_mean_squared_error"] > 1.02 * first.metrics["root_mean_squared_error"]
    )
    assert second.blessing_gate == (
        "root_mean_squared_error: at most 2% above the latest blessed model"
    )
    assert sorted(os.listdir(os.path.dirname(first.pushed_to))) == pushed_before
