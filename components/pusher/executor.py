"""Pusher executor: copy to a hidden folder, then rename into place.

TensorFlow Serving and any reader of `<push_destination>` see either no new
version or a complete one: the copy happens under `.<version>.incomplete`,
which no serving system treats as a version, and `os.rename` on one file
system is atomic.
"""

import logging
import os
import shutil
import time

from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

log = logging.getLogger(__name__)

NOT_BLESSED = "the Evaluator did not bless the model"


def _is_blessed(blessing):
    return (
        blessing.has_custom_property("blessed")
        and int(blessing.get_int_custom_property("blessed")) == 1
    )


def _fingerprint(model_dir):
    path = os.path.join(model_dir, "fingerprint.pb")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def latest_version(push_destination):
    versions = (
        [int(name) for name in os.listdir(push_destination) if name.isdigit()]
        if os.path.isdir(push_destination)
        else []
    )
    return os.path.join(push_destination, str(max(versions))) if versions else None


def push(model_dir, push_destination):
    """Copies `model_dir` to a new numeric version under `push_destination`; returns it.

    A model identical to the newest version already there (same SavedModel
    fingerprint) is not copied again: that version is returned.
    """
    os.makedirs(push_destination, exist_ok=True)
    newest = latest_version(push_destination)
    fingerprint = _fingerprint(model_dir)
    if newest is not None and fingerprint is not None and _fingerprint(newest) == fingerprint:
        log.info("Model already pushed as %s", newest)
        return newest
    version = int(time.time())
    while os.path.exists(os.path.join(push_destination, str(version))):
        version += 1
    final = os.path.join(push_destination, str(version))
    staging = os.path.join(push_destination, f".{version}.incomplete")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(model_dir, staging)
        os.rename(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


class Executor(base_executor.BaseExecutor):
    def Do(self, input_dict, output_dict, exec_properties):
        model = artifact_utils.get_single_instance(input_dict["model"])
        blessing = artifact_utils.get_single_instance(input_dict["model_blessing"])
        pushed = artifact_utils.get_single_instance(output_dict["pushed_model"])
        if not _is_blessed(blessing):
            log.info("Model %s not pushed: %s.", model.uri, NOT_BLESSED)
            pushed.set_int_custom_property("pushed", 0)
            pushed.set_string_custom_property("reason", NOT_BLESSED)
            return
        destination = push(
            path_utils.serving_model_path(model.uri), exec_properties["push_destination"]
        )
        log.info("Model pushed to %s", destination)
        pushed.set_int_custom_property("pushed", 1)
        pushed.set_string_custom_property("pushed_destination", destination)
        pushed.set_string_custom_property("pushed_version", os.path.basename(destination))
