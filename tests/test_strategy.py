"""Strategy selection rules (the table in docs/guide/distributed-training.md) and their refusals."""

import json
import re

import pytest

from components.trainer.strategy import NAMES, build, choose, choose_here


def _tf_config(**cluster):
    return {"cluster": cluster, "task": {"type": "worker", "index": 0}}


@pytest.mark.parametrize(
    "tf_config, gpus, expected",
    [
        (_tf_config(chief=["a:1"], worker=["b:1", "c:1"], ps=["d:1"]), 0, "parameter_server"),
        (_tf_config(worker=["a:1", "b:1"]), 4, "multi_worker_mirrored"),
        (_tf_config(chief=["a:1"], worker=["b:1"]), 0, "multi_worker_mirrored"),
        (_tf_config(worker=["a:1"]), 2, "mirrored"),
        ({}, 2, "mirrored"),
        ({}, 1, "one_device"),
        ({}, 0, "default"),
    ],
)
def test_auto_follows_tf_config_then_devices(tf_config, gpus, expected):
    choice = choose("auto", tf_config, gpus)
    assert choice.name == expected
    assert choice.reason


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("auto", "tpu", "parameter_server")])
def test_explicit_names_are_taken_as_requested(name):
    assert choose(name, {}, 0).name == name


def test_names_that_cannot_work_here_fail_saying_why():
    with pytest.raises(ValueError, match="needs a TPU"):
        choose("tpu", {}, 0, 0)
    with pytest.raises(ValueError, match="ps tasks"):
        choose("parameter_server", _tf_config(worker=["a:1", "b:1"]), 0)
    with pytest.raises(ValueError, match="Unknown strategy 'gpu'"):
        choose("gpu", {}, 0)


def test_parameter_server_tasks_other_than_the_chief_only_serve():
    from components.trainer.strategy import serves_only

    cluster = {"chief": ["a:1"], "worker": ["b:1"], "ps": ["c:1"]}
    choice = choose("auto", {"cluster": cluster}, 0)
    assert serves_only(choice, {"cluster": cluster, "task": {"type": "ps", "index": 0}})
    assert serves_only(choice, {"cluster": cluster, "task": {"type": "worker", "index": 0}})
    assert not serves_only(choice, {"cluster": cluster, "task": {"type": "chief", "index": 0}})


def test_choose_here_reads_tf_config_and_builds_the_default_on_cpu(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(_tf_config(worker=["127.0.0.1:1"])))
    choice = choose_here("auto")
    assert choice.name == "default"
    assert build(choice) is None


@pytest.mark.slow  # a TensorFlow subprocess
def test_choosing_leaves_the_eager_context_unstarted_for_multi_worker_mirrored():
    # Multi-worker mirrored configures collective ops at program startup: a
    # choice that started TensorFlow's eager context would make it fail.
    import os
    import subprocess
    import sys

    from pipeline.config import REPO_ROOT

    script = (
        "from tensorflow.python.eager import context\n"
        "from components.trainer import strategy\n"
        "print(strategy.choose_here('auto').name, context.context()._context_handle)\n"
    )
    tf_config = {
        "cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]},
        "task": {"type": "chief", "index": 0},
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
        env=dict(os.environ, TF_CONFIG=json.dumps(tf_config)),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ["multi_worker_mirrored", "None"]


@pytest.mark.slow
def test_boosted_trees_train_on_one_device_when_the_trainer_mirrors(tmp_path):
    """Zero code under a mirrored strategy (what two GPUs get): the linear candidate is
    mirrored, boosted trees (whose variables take no mirrored updates) grow on one device;
    the run trains both, chooses and pushes."""
    import subprocess
    import sys

    import numpy as np

    from pipeline.config import REPO_ROOT

    rng = np.random.default_rng(0)
    rows = ["a,c,y"]
    for _ in range(300):
        a, c = rng.normal(), rng.choice(["x", "y", "z"])
        rows.append(f"{a:.3f},{c},{int(a + (c == 'x') > 0.3)}")
    data = tmp_path / "tiny.csv"
    data.write_text("\n".join(rows) + "\n")
    command = [sys.executable, "-m", "pipeline", "run", "--data", str(data), "--label", "y"]
    command += ["--strategy", "mirrored", "--candidate", "boosted_trees", "--candidate"]
    command += ["linear", "--output-dir", str(tmp_path / "out")]
    result = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "strategy: mirrored (requested)" in result.stdout
    # Each candidate's line names the strategy it trained under.
    assert re.search(
        r"\* boosted_trees: validation loss .* steps, default strategy; ", result.stdout
    )
    assert re.search(r"  linear: validation loss .* steps, mirrored strategy; ", result.stdout)
