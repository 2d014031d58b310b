"""Shared by the TFX 1.15 pipeline tests: the example pipeline (examples/tfx115_taxi) and
what its runs left in ML Metadata."""

import importlib.util
import subprocess
import sys

from pipeline.config import REPO_ROOT
from pipeline.metadata import open_store

EXAMPLE = REPO_ROOT / "examples" / "tfx115_taxi"
MODULE_FILE = str(EXAMPLE / "taxi_utils.py")
RUN_FN_MODULE_FILE = str(EXAMPLE / "taxi_utils_run_fn.py")
PIPELINE_NAME = "chicago_taxi_tfx115"


def example_pipeline():
    """examples/tfx115_taxi/pipeline.py, imported as its user would run it."""
    spec = importlib.util.spec_from_file_location("tfx115_pipeline", EXAMPLE / "pipeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def executions(metadata_path, component_type):
    """[(execution, {input or output key: [artifact]})] of `component_type`, oldest first."""
    mlmd = open_store(str(metadata_path))
    found = []
    for execution in mlmd.get_executions_by_type(component_type):
        events = mlmd.get_events_by_execution_ids([execution.id])
        artifacts = {a.id: a for a in mlmd.get_artifacts_by_id([e.artifact_id for e in events])}
        by_key = {}
        for event in events:
            by_key.setdefault(event.path.steps[0].key, []).append(artifacts[event.artifact_id])
        found.append((execution, by_key))
    return sorted(found, key=lambda pair: pair[0].id)


SERVE = """
import json, sys
import tensorflow as tf
model = tf.saved_model.load(sys.argv[1])
records = [r.numpy() for r in tf.data.TFRecordDataset(sys.argv[2:], compression_type="GZIP").take(16)]
def without_label(record):
    example = tf.train.Example.FromString(record)
    del example.features.feature["tips"]
    return example.SerializeToString()
examples = tf.constant([without_label(r) for r in records])
result = {}
for name in ("serving_default", "predict"):
    function = model.signatures[name]
    (input_name,) = function.structured_input_signature[1]
    outputs = function(**{input_name: examples})
    result[name] = {k: v.numpy().tolist() for k, v in outputs.items() if v.dtype.is_floating}
print("RESULT " + json.dumps(result))
"""


def serve_in_a_fresh_process(model_dir, example_files):
    """{signature: {output: values}} of the SavedModel at `model_dir` on 16 raw examples
    (the label removed) from `example_files`, loaded by a new Python process."""
    import json

    proc = subprocess.run(
        [sys.executable, "-c", SERVE, str(model_dir), *map(str, example_files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def run_fn_exporting_as_an_estimator(fn_args):
    """A `run_fn` that leaves what an Estimator whose model_dir is
    `fn_args.serving_model_dir` leaves (TFX 1.15's template modules): its SavedModel under
    export/<exporter>/<timestamp>/, nothing at the folder's top."""
    import os

    import tensorflow as tf

    module = tf.Module()
    module.double = tf.function(lambda x: 2 * x, input_signature=[tf.TensorSpec([None])])
    export = os.path.join(fn_args.serving_model_dir, "export", "chicago-taxi", "1700000000")
    tf.saved_model.save(module, export, signatures={"serving_default": module.double})


def run_fn_writing_nothing(fn_args):
    del fn_args
