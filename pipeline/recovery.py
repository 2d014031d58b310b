"""What a killed run leaves behind, and how the next run of the pipeline clears it.

A run killed mid-component (SIGKILL, a lost machine) publishes nothing of that component:
TFX records an execution's output artifacts in ML Metadata only once it completes, so the
cache and the next run never see them, and the Pusher's copy is a hidden staging folder
until one rename (components/serving_dir.py). What it does leave: the execution marked
RUNNING for good, its half-written output folders under the pipeline root, a push's
staging folder if killed mid-copy, and the run's temporary folder with TFX's staged copy
of itself (about 50 MB per Beam component).

The next run clears them before it starts: `recover_interrupted` marks such executions
CANCELED (`runs` then shows the run as failed in that component) and removes their folders
and the staging folder; `run_temp_dir` in pipeline/runner.py removes temporary folders
whose process is gone. It assumes no other run of the pipeline is in progress: `python -m
pipeline run` holds the pipeline's lock (pipeline/lock.py). tests/test_kill.py kills a run
in each component.
No TensorFlow import.
"""

import contextlib
import fcntl
import os
import shutil
import tempfile

from pipeline import metadata

# Set on an execution `recover_interrupted` found left RUNNING: why it was canceled.
INTERRUPTED_PROPERTY = "interrupted"
_INTERRUPTED_WHY = "its run's process ended while it ran; canceled by the next run"
TEMP_PREFIX = "tfx-kit-run-"
_NEW_TEMP_PREFIX = ".tfx-kit-new-"  # a temporary folder before its owner holds its lock
_OWNER_FILE = ".owner"  # flock'ed by the process whose temporary folder it is
# Where TFX's launcher puts an execution's folders (tfx.orchestration.portable.outputs_utils).
_SYSTEM = ".system"
_EXECUTOR_EXECUTION = "executor_execution"
_STATEFUL_WORKING_DIR = "stateful_working_dir"


def _local(path):
    return "://" not in path


def _execution_folders(store, node_dir, execution):
    """The folders TFX's launcher made for `execution` of the node at `node_dir`: one per
    output key (`<node_dir>/<key>/<id>`, unless an artifact in `store` names it), its
    executor folder with its temporary files, and the node's stateful working folders
    (named by a random id the local runner does not record; TFX removes one when its
    execution succeeds, so with no run going on, any there is an interrupted one's)."""
    folders = [os.path.join(node_dir, _SYSTEM, _EXECUTOR_EXECUTION, str(execution.id))]
    stateful = os.path.join(node_dir, _SYSTEM, _STATEFUL_WORKING_DIR)
    if os.path.isdir(stateful):
        folders += [entry.path for entry in os.scandir(stateful)]
    if os.path.isdir(node_dir):
        for entry in os.scandir(node_dir):
            output = os.path.join(entry.path, str(execution.id))
            if entry.name.startswith(".") or not os.path.isdir(output):
                continue
            if not metadata.has_artifact_at(store, output):
                folders.append(output)
    return [folder for folder in folders if os.path.isdir(folder)]


def recover_interrupted(config):
    """Cancels the executions of `config`'s pipeline that a run left RUNNING (or NEW) when
    its process died, removes the folders they were writing and the staging folders of a
    push killed mid-copy; returns one line per thing cleared, to show. Call it only while
    no run or rollback of the pipeline is going on."""
    from components.serving_dir import remove_stale_staging

    found = []
    serving = config.resolved_serving_model_dir
    if _local(serving):
        found += [
            f"Removed {os.path.join(serving, name)}: a push killed mid-copy left it."
            for name in remove_stale_staging(serving)
        ]
    if not os.path.exists(config.resolved_metadata_path):
        return found
    store = metadata.open_store(config.resolved_metadata_path, writable=True)
    root = config.resolved_pipeline_root
    for execution, node, run in metadata.unfinished_executions(store, config.pipeline_name):
        if _local(root) and node is not None:
            for folder in _execution_folders(store, os.path.join(root, node), execution):
                shutil.rmtree(folder, ignore_errors=True)
        # Marked last: a run killed while recovering finds the execution again.
        metadata.cancel_execution(store, execution, {INTERRUPTED_PROPERTY: _INTERRUPTED_WHY})
        found.append(
            f"Run {run or '?'} was interrupted in {node or '?'} (its process ended mid-run): "
            "canceled that execution in ML Metadata and removed its partial output."
        )
    return found


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
