"""One run of a pipeline at a time (pipeline/lock.py): real processes, the kernel's flock."""

import os
import signal
import subprocess
import sys

import pytest

from pipeline import exit_codes
from pipeline.config import REPO_ROOT
from pipeline.lock import Locked, pipeline_lock

TAXI_CSV = str(REPO_ROOT / "data" / "taxi" / "data.csv")
# Holds the lock of the pipeline whose store is argv[1] until its stdin closes.
_HOLD = """
import sys
from pipeline.lock import pipeline_lock
with pipeline_lock(sys.argv[1], "run"):
    print("held", flush=True)
    sys.stdin.read()
"""


@pytest.fixture
def holder(tmp_path):
    """A process holding the lock of pipeline `p` under tmp_path; yields (process, store)."""
    store = str(tmp_path / "pipelines" / "p" / "metadata.sqlite")
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, store],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "held\n"
    yield process, store
    if process.poll() is None:
        process.kill()
    process.wait()


def _cli(tmp_path, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", *args, "--data", TAXI_CSV, "--pipeline-name", "p",
         "--output-dir", str(tmp_path)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def test_a_second_run_exits_at_once_naming_the_holder(tmp_path, holder):
    process, _ = holder
    run = _cli(tmp_path, "run", "--label", "tips")
    _, err = run.communicate(timeout=120)

    assert run.returncode == exit_codes.LOCKED
    assert f"held by pid {process.pid} on " in err and "(run, since " in err
    assert "another run of this pipeline is in progress (--wait waits for it)" in err
    assert not os.path.exists(tmp_path / "pipelines" / "p" / "root")  # nothing ran


def test_wait_waits_for_the_holder_then_goes_on(tmp_path, holder):
    process, _ = holder
    rollback = _cli(tmp_path, "rollback", "--to", "7", "--wait")
    assert "Waiting for " in rollback.stderr.readline()  # blocked until the holder lets go
    assert rollback.poll() is None
    process.stdin.close()  # the holder finishes
    out, err = rollback.communicate(timeout=120)

    assert rollback.returncode == 2, (out, err)  # then it ran: refused, no such pipeline
    assert "Refused:" in err


def test_a_killed_holder_leaves_no_stale_lock(holder):
    process, store = holder
    with pytest.raises(Locked, match=rf"held by pid {process.pid} "), pipeline_lock(store, "run"):
        pass
    process.send_signal(signal.SIGKILL)
    process.wait()

    with pipeline_lock(store, "run") as path:  # at once: the kernel released it
        assert os.path.basename(path) == "run.lock"
