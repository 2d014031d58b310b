"""What a killed run leaves behind is cleared by the next run (pipeline/recovery.py)."""

import os
import signal
import subprocess
import sys
import tempfile

from pipeline.config import REPO_ROOT
from pipeline.recovery import owned_temp_dir

# Holds a run's temporary folder (pipeline/recovery.py) until its stdin closes.
_HOLD_TEMP = """
import sys
from pipeline.recovery import owned_temp_dir
with owned_temp_dir() as folder:
    print(folder, flush=True)
    sys.stdin.read()
"""


def _hold_temp(parent):
    """A process holding a temporary folder under `parent`: (process, folder)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD_TEMP],
        cwd=REPO_ROOT,
        env={**os.environ, "TMPDIR": str(parent)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, process.stdout.readline().strip()


def test_the_next_run_removes_a_killed_runs_temporary_folder_not_a_live_ones(tmp_path, monkeypatch):
    """TFX stages a 50 MB copy of itself there per Beam component: a killed run's must go."""
    (killed, killed_folder), (live, live_folder) = _hold_temp(tmp_path), _hold_temp(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert os.path.isdir(killed_folder)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    with owned_temp_dir() as mine:
        assert not os.path.exists(killed_folder)
        assert os.path.isdir(live_folder) and os.path.isdir(mine)
    live.communicate()  # closes its stdin: it ends, removing its folder
    assert os.listdir(tmp_path) == []
