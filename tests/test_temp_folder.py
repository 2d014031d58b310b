"""What the kit puts in the system temp folder goes away again: an Estimator's own model
folder, a Beam executor's scratch; and this suite's leftovers go with its session."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from pipeline.config import DEFAULT_BEAM_ARGS, REPO_ROOT
from pipeline.recovery import TEMP_PREFIX

_NO_MODEL_DIR = textwrap.dedent("""
    import json, os, tempfile
    from unittest import mock
    import numpy as np, tensorflow as tf
    from components import estimator

    # tf.estimator's own tests patch mkdtemp to answer '/tmp': not the kit's to remove.
    with mock.patch.object(tempfile, "mkdtemp", return_value=os.environ["PATCHED_MKDTEMP"]):
        estimator.LinearRegressor([tf.feature_column.numeric_column("x")])

    x = np.linspace(-1, 1, 32, dtype="float32")
    model = estimator.LinearRegressor([tf.feature_column.numeric_column("x")])
    model.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(8), steps=2)
    print(json.dumps({"model_dir": model.model_dir,
                      "checkpoint": model.latest_checkpoint() is not None}))
""")


@pytest.mark.slow  # a TensorFlow subprocess
def test_an_estimator_without_model_dir_removes_its_folder_when_its_process_exits(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    not_made_by_the_kit = tmp_path / "shared"
    not_made_by_the_kit.mkdir()
    (not_made_by_the_kit / "a user's file").write_text("kept")
    result = subprocess.run(
        [sys.executable, "-c", _NO_MODEL_DIR],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=dict(
            os.environ,
            TMPDIR=str(temp),
            PYTHONPATH=str(REPO_ROOT),
            PATCHED_MKDTEMP=str(not_made_by_the_kit),
        ),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    # The model lived in the temp folder while the process ran, and went with it.
    assert os.path.dirname(seen["model_dir"]) == str(temp)
    assert seen["checkpoint"]
    assert "removed when this process exits" in result.stderr
    assert os.listdir(temp) == []
    assert os.listdir(not_made_by_the_kit) == ["a user's file"]


@pytest.mark.slow  # a component executor's Beam job
def test_a_beam_executor_given_beam_args_leaves_nothing_in_the_temp_folder(tmp_path, monkeypatch):
    """TFX's own Beam executors stage a copy of TFX in the temp folder and leave it
    (components/beam_executor.py); the kit's do not."""
    from tfx.dsl.components.base import base_beam_executor
    from tfx.types import standard_artifacts

    from components.example_gen import executor

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "data.csv").write_text(
        "x,y\n" + "".join(f"{i},{i % 2}\n" for i in range(30))
    )
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    context = base_beam_executor.BaseBeamExecutor.Context(
        beam_pipeline_args=list(DEFAULT_BEAM_ARGS), tmp_dir=str(tmp_path / "scratch"), unique_id="x"
    )
    executor.Executor(context).Do(
        {}, {"examples": [examples]}, {"input_base": str(tmp_path / "csv")}
    )
    assert examples.get_int_custom_property("num_rows") == 30  # the job ran
    assert os.listdir(temp) == []


def test_this_session_keeps_its_temporary_files_in_a_folder_of_its_own(session_temp_dir):
    # tests/conftest.py: removed at the end of the session, inherited by subprocesses.
    assert os.path.basename(session_temp_dir).startswith(TEMP_PREFIX)
    assert tempfile.gettempdir() == os.environ["TMPDIR"] == session_temp_dir
