"""One run of a pipeline at a time: an exclusive lock next to its ML Metadata store.

Two runs of one pipeline at once would interleave their writes to its ML Metadata store and
serving folder. `python -m pipeline run` and `rollback` hold `run.lock` in the store's folder
while they work; a second one exits at once naming the holder (exit_codes.LOCKED), or with `--wait`
waits for it. The lock is the kernel's (`flock`): it goes with the holder's process however
that ends, SIGKILL included, so a killed run never leaves a stale lock. No TensorFlow import.
"""

import contextlib
import fcntl
import json
import os
import socket
import sys
import time

LOCK_FILE = "run.lock"


class Locked(RuntimeError):
    """Another process holds the pipeline's lock."""


def _holder(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", "replace")
    try:
        holder = json.loads(text)
        return f"pid {holder['pid']} on {holder['host']} ({holder['command']}, since {holder['since']})"
    except (ValueError, KeyError, TypeError):
        return "another process"


@contextlib.contextmanager
def pipeline_lock(metadata_path, command, wait=False, stream=None):
    """Holds the lock of the pipeline whose ML Metadata store is `metadata_path`, for
    `command` (shown to whoever finds it held); raises Locked unless `wait`."""
    folder = os.path.dirname(os.path.abspath(metadata_path))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                raise Locked(
                    f"{path} is held by {holder}: another run of this pipeline is in progress "
                    "(--wait waits for it)"
                ) from None
            print(
                f"Waiting for {path}, held by {holder} ...", file=stream or sys.stderr, flush=True
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = {"pid": os.getpid(), "host": socket.gethostname(), "command": command}
        os.write(fd, json.dumps({**record, "since": since}).encode())
        yield path
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
