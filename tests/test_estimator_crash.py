"""A training process killed with SIGKILL resumes from its last good checkpoint."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pipeline.config import REPO_ROOT

pytestmark = pytest.mark.slow

_TRAIN = textwrap.dedent("""
    import sys, time
    import numpy as np, tensorflow as tf
    from components import estimator

    model_dir, max_steps = sys.argv[1], int(sys.argv[2])
    x = np.random.default_rng(0).normal(size=(512, 3)).astype("float32")
    y = (x.sum(axis=1) > 0).astype("int64")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

    class Slow(estimator.Hook):
        def after_step(self, context, logs):
            time.sleep(0.002)

    classifier = estimator.DNNClassifier(
        [8], [tf.feature_column.numeric_column("x", shape=(3,))],
        config=estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=3,
                                   keep_checkpoint_max=3))
    classifier.train(input_fn, max_steps=max_steps, hooks=[Slow()])
    print("global_step", classifier.get_variable_value("global_step"))
""")


def _env():
    return dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="2")


def _latest_step(model_dir):
    """The step of the latest checkpoint, after reading every variable it holds."""
    import tensorflow as tf

    from components.estimator import checkpoints

    path = tf.train.latest_checkpoint(model_dir)
    step = int(checkpoints.read_variable(path, "global_step"))
    assert path.endswith(f"-{step}"), (path, step)
    reader = tf.train.load_checkpoint(path)
    for name in checkpoints.variable_names(path):
        reader.get_tensor(name)
    return step


def test_sigkill_during_training_never_leaves_a_broken_checkpoint(tmp_path):
    model_dir = str(tmp_path / "model")
    rng = random.Random(3)
    last = 0
    for _ in range(2):
        child = subprocess.Popen(
            [sys.executable, "-c", _TRAIN, model_dir, "1000000"],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # A busy machine can take minutes to start it (importing TensorFlow, tracing):
            # the wait ends with progress, with the child's exit (a failure) or after 600 s.
            deadline = time.time() + 600
            while _progress(model_dir) < last + 6:
                if child.poll() is not None:
                    pytest.fail(f"training ended (exit code {child.returncode}) before the kill")
                if time.time() > deadline:
                    pytest.fail("training made no progress within 600 s")
                time.sleep(0.1)
            time.sleep(rng.uniform(0.0, 0.5))
            child.send_signal(signal.SIGKILL)
        finally:
            child.kill()
            child.wait(timeout=30)
        step = _latest_step(model_dir)
        # A checkpoint at last + 6 or later was on disk before the kill.  Checkpoints come
        # every 3 steps and the state file names one only once it is whole, so at most the
        # newest (the one being written) can be missing from it: the latest good one is at
        # least 3 steps on, never older than the progress seen.
        assert step >= last + 3, (step, last)
        last = step

    finished = subprocess.run(
        [sys.executable, "-c", _TRAIN, model_dir, str(last + 20)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.strip().endswith(f"global_step {last + 20}")
    assert _latest_step(model_dir) == last + 20


def _progress(model_dir):
    steps = (
        [
            int(name.split("-")[1].split(".")[0])
            for name in os.listdir(model_dir)
            if name.startswith("model.ckpt-") and name.endswith(".index")
        ]
        if os.path.isdir(model_dir)
        else []
    )
    return max(steps, default=-1)
