"""Temporary folders of runs, and how the next run clears those a killed run left.

TFX's Beam executors stage a copy of TFX in a fresh temporary folder (about 50 MB per Beam
component) that a run removes when it ends (`run_temp_dir` in pipeline/runner.py); a run
killed (SIGKILL, a lost machine) cannot. Each run's folder is held by an flock the kernel
releases however the process ends, and the next run removes the folders nobody holds.
No TensorFlow import.
"""

import contextlib
import fcntl
import os
import shutil
import tempfile

TEMP_PREFIX = "tfx-kit-run-"
_NEW_TEMP_PREFIX = ".tfx-kit-new-"  # a temporary folder before its owner holds its lock
_OWNER_FILE = ".owner"  # flock'ed by the process whose temporary folder it is


def _remove_orphaned_temp_dirs(parent):
    """Removes the temporary folders under `parent` whose owner's lock is free: their
    process ended without removing them (killed). A folder with no owner file is left."""
    for entry in os.scandir(parent):
        if not (entry.name.startswith(TEMP_PREFIX) and entry.is_dir(follow_symlinks=False)):
            continue
        try:
            fd = os.open(os.path.join(entry.path, _OWNER_FILE), os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its owner runs
        else:
            shutil.rmtree(entry.path, ignore_errors=True)
        finally:
            os.close(fd)


@contextlib.contextmanager
def owned_temp_dir():
    """A fresh `tfx-kit-run-*` folder in the system temp folder, held by this process (an
    flock the kernel releases however the process ends) and removed on exit; first removes
    such folders of processes that ended without removing theirs."""
    parent = tempfile.gettempdir()
    _remove_orphaned_temp_dirs(parent)
    # Locked before it gets the name other processes look at, so none takes it for orphaned.
    new = tempfile.mkdtemp(prefix=_NEW_TEMP_PREFIX, dir=parent)
    fd = os.open(os.path.join(new, _OWNER_FILE), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        folder = os.path.join(parent, TEMP_PREFIX + os.path.basename(new)[len(_NEW_TEMP_PREFIX) :])
        os.rename(new, folder)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)
        shutil.rmtree(new, ignore_errors=True)  # only there if the rename failed
