"""Pusher executor: copy to a hidden folder, then rename into place.

TensorFlow Serving and any reader of `<push_destination>` see either no new
version or a complete one: the copy happens under `.<version>.incomplete`,
which no serving system treats as a version, and `os.rename` on one file
system is atomic (components/serving_dir.py, which rollback uses too).
"""

import logging
import os

from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

from components.serving_dir import push

log = logging.getLogger(__name__)

NOT_BLESSED = "the Evaluator did not bless the model"


def _is_blessed(blessing):
    return (
        blessing.has_custom_property("blessed")
        and int(blessing.get_int_custom_property("blessed")) == 1
    )


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
