"""A serving folder of numeric versions, as TensorFlow Serving reads it; no TensorFlow import.

TensorFlow Serving serves the highest version number under `<destination>`. A new version
is copied under `.<version>.incomplete`, which no serving system treats as a version, and
published with one `os.rename` (atomic on one file system): readers see either no new
version or a complete one. The Pusher pushes through `push`, `python -m pipeline rollback`
republishes an earlier version through it. A push killed mid-copy leaves its staging
folder; the next run removes it (`remove_stale_staging`, pipeline/recovery.py).
"""

import logging
import os
import re
import shutil
import time

log = logging.getLogger(__name__)
_STAGING = re.compile(r"\.\d+\.incomplete")  # the folders `push` copies into


def versions(destination):
    """The version numbers under `destination`, ascending; [] when there is none."""
    if not os.path.isdir(destination):
        return []
    return sorted(int(name) for name in os.listdir(destination) if name.isdigit())


def latest_version(destination):
    """The folder of the version served now (the highest), or None."""
    numbers = versions(destination)
    return os.path.join(destination, str(numbers[-1])) if numbers else None


def fingerprint(model_dir):
    """The SavedModel's `fingerprint.pb` bytes, or None."""
    path = os.path.join(model_dir, "fingerprint.pb")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def remove_stale_staging(destination):
    """Removes the staging folders a push killed mid-copy left (a finished or failed push
    removes its own); returns their names. Only while nothing pushes to `destination`."""
    if not os.path.isdir(destination):
        return []
    stale = [name for name in os.listdir(destination) if _STAGING.fullmatch(name)]
    for name in stale:
        shutil.rmtree(os.path.join(destination, name), ignore_errors=True)
    return stale


def next_version(destination):
    """The number a push now would get: the time in seconds, and above every version there,
    so that the new version is the one served."""
    numbers = versions(destination)
    version = max(int(time.time()), numbers[-1] + 1 if numbers else 0)
    while os.path.exists(os.path.join(destination, str(version))):
        version += 1
    return version


def push(model_dir, destination, extra_files=None):
    """Copies `model_dir` to a new, highest numeric version under `destination`, with
    `extra_files` ({path in the version: text}) written in before it is published; returns
    it.

    A model identical to the newest version already there (same SavedModel
    fingerprint) is not copied again: that version is returned.
    """
    os.makedirs(destination, exist_ok=True)
    newest = latest_version(destination)
    model_fingerprint = fingerprint(model_dir)
    if (
        newest is not None
        and model_fingerprint is not None
        and fingerprint(newest) == model_fingerprint
    ):
        log.info("Model already pushed as %s", newest)
        return newest
    version = next_version(destination)
    final = os.path.join(destination, str(version))
    staging = os.path.join(destination, f".{version}.incomplete")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(model_dir, staging)
        for relative, text in (extra_files or {}).items():
            os.makedirs(os.path.dirname(os.path.join(staging, relative)), exist_ok=True)
            with open(os.path.join(staging, relative), "w") as f:
                f.write(text)
        os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
