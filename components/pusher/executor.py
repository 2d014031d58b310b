"""Pusher executor: copy to a hidden folder, then rename into place; then, if configured,
upload that version to the Vertex AI Model Registry.

TensorFlow Serving and any reader of `<push_destination>` see either no new
version or a complete one: the copy happens under `.<version>.incomplete`,
which no serving system treats as a version, and `os.rename` on one file
system is atomic (components/serving_dir.py, which rollback uses too).
The registry version points at the published folder, so it never sees a partial copy
(components/model_registry.py). A model that is not blessed goes nowhere.
"""

import json
import logging
import os

from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

from components import model_registry
from components.example_gen import spans
from components.input_fingerprint import FINGERPRINT_KEY
from components.serving_dir import latest_version, push

log = logging.getLogger(__name__)

NOT_BLESSED = "the Evaluator did not bless the model"
# The ModelBlessing's link to the model it judged (on Vertex: that artifact's resource name).
CURRENT_MODEL_ID = "current_model_id"


def _spans_read(input_dict):
    """The spans ExampleGen read ([[span, version], ...]; components/example_gen/spans.py),
    or None (no examples given, or data without spans)."""
    examples = input_dict.get("examples") or []
    if not examples or not examples[0].has_custom_property(spans.SPANS_PROPERTY):
        return None
    return json.loads(examples[0].get_string_custom_property(spans.SPANS_PROPERTY))


def _nothing_new(read, input_dict, destination):
    """Why not to push: a rolling window whose newest span is no newer than the one the
    served version (the highest under `destination`) was trained on; else None. The local
    run says so before it trains (pipeline/runner.py); a compiled pipeline, here."""
    examples = (input_dict.get("examples") or [None])[0]
    if not read or not spans.is_rolling(
        examples.get_string_custom_property(spans.WINDOW_PROPERTY) or spans.DEFAULT_WINDOW
    ):
        return None
    served = latest_version(destination)
    record = served and os.path.join(served, spans.SERVED_SPANS_FILE)
    if not record or not os.path.exists(record):
        return None
    with open(record) as f:
        trained = json.load(f)["spans"]
    if not spans.nothing_newer(read, trained):
        return None
    newest = trained[-1]
    return (
        f"{spans.NOTHING_NEW}: the newest span read, {read[-1][0]}, is no newer than span "
        f"{newest[0]} the served version {os.path.basename(served)} was trained on"
    )


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
        registry = exec_properties.get("model_registry")
        if registry:  # before any copy: ValueError unless the folder is on Cloud Storage
            registry = model_registry.RegistryDestination.from_json(registry)
            model_registry.gcs_uri(exec_properties["push_destination"])
        read = _spans_read(input_dict)
        reason = _nothing_new(read, input_dict, exec_properties["push_destination"])
        if reason:
            log.info("Model %s not pushed: %s.", model.uri, reason)
            pushed.set_int_custom_property("pushed", 0)
            pushed.set_string_custom_property("reason", reason)
            return
        destination = push(
            path_utils.serving_model_path(model.uri),
            exec_properties["push_destination"],
            {spans.SERVED_SPANS_FILE: json.dumps({"spans": read})} if read else None,
        )
        log.info("Model pushed to %s", destination)
        pushed.set_int_custom_property("pushed", 1)
        pushed.set_string_custom_property("pushed_destination", destination)
        pushed.set_string_custom_property("pushed_version", os.path.basename(destination))
        if registry:
            self._publish(registry, destination, input_dict, exec_properties, pushed)

    def _run_id(self, exec_properties):
        """The local runner's run ID, else the one Vertex put in the `run_id` parameter."""
        if self._context is not None and self._context.pipeline_run_id:
            return self._context.pipeline_run_id
        run_id = exec_properties.get("run_id") or ""
        return None if run_id.startswith("{{") else run_id

    def _publish(self, destination, folder, input_dict, exec_properties, pushed):
        model = artifact_utils.get_single_instance(input_dict["model"])
        blessing = artifact_utils.get_single_instance(input_dict["model_blessing"])
        examples = input_dict.get("examples") or []
        judged = (
            blessing.get_custom_property(CURRENT_MODEL_ID)
            if blessing.has_custom_property(CURRENT_MODEL_ID)
            else model.id
        )
        labels = model_registry.version_labels(
            destination.pipeline_name,
            self._run_id(exec_properties),
            str(judged).rsplit("/", 1)[-1] if judged else None,
            examples[0].get_string_custom_property(FINGERPRINT_KEY) if examples else None,
        )
        version = model_registry.publish(destination, model_registry.gcs_uri(folder), labels)
        log.info("Model Registry: %s version %s", destination.model, version)
        pushed.set_string_custom_property(
            "registry_model", model_registry.versioned(destination.model, version)
        )
        pushed.set_string_custom_property("registry_version", str(version))
        if destination.endpoint:
            pushed.set_string_custom_property("endpoint", destination.endpoint)
