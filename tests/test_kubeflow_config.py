"""Open-source Kubeflow Pipelines: what a config must say to compile for a self-hosted
cluster, and the task entry point that gives TFX the launcher's local copies."""

import dataclasses
import json

import pytest

from kubeflow import kfp_executor
from pipeline.kubeflow_pipelines import Cluster, SetupError, kubeflow_config
from tests.conftest import small_pipeline_config
from tests.test_kubeflow_pipelines import CLUSTER, IMAGE, ROOT


def test_kubeflow_config_lists_every_problem():
    config = small_pipeline_config(
        "/tmp/out",
        "/elsewhere/taxi.csv",
        pipeline_root="/local/root",
        warm_start=True,
        drift_thresholds=(("*", 0.3),),
        beam_runner="dataflow",
        training_backend="kubeflow",
        serving_model_dir="/gcs/bucket/serving",
    )
    with pytest.raises(SetupError) as error:
        kubeflow_config(config, Cluster(serving_volume="models"))
    message = str(error.value)
    for expected in (
        "--pipeline-root must be a minio://, s3://, gs:// folder",
        "--image",
        "--data /elsewhere/taxi.csv: Beam workers outside the task container read it",
        "--serving-volume PVC:MOUNTPATH",
        "--beam-runner dataflow",
        "--training-backend kubeflow",
        "--warm-start needs the latest blessed model",
        "--drift-threshold needs the latest blessed model",
    ):
        assert expected in message

    config = small_pipeline_config(
        "/tmp/out", "gs://b/taxi.csv", pipeline_root=ROOT, image=IMAGE, serving_model_dir="/x"
    )
    with pytest.raises(SetupError, match="--serving-model-dir /x must be under the"):
        kubeflow_config(config, CLUSTER)
    outside = dataclasses.replace(config, data_path="/gcs/b/taxi.csv", serving_model_dir=None)
    with pytest.raises(SetupError, match="is not in the pipeline image: give a gs:// path"):
        kubeflow_config(outside, CLUSTER)  # no Cloud Storage mount on a self-hosted cluster
    in_image = kubeflow_config(dataclasses.replace(config, serving_model_dir=None), CLUSTER)
    assert in_image.serving_model_dir == "/serving/taxi"
    assert in_image.schema_path == "schemas/taxi/schema.pbtxt"


def test_executor_wrapper_gives_tfx_the_launchers_local_copies():
    uri = "minio://mlpipeline/v2/artifacts/taxi/run/Transform/transform_graph"
    executor_input = {
        "inputs": {"artifacts": {"examples": {"artifacts": [{"name": "1", "uri": "s3://b/ex"}]}}},
        "outputs": {
            "artifacts": {"transform_graph": {"artifacts": [{"name": "2", "uri": uri}]}},
            "outputFile": "/tmp/kfp_outputs/output_metadata.json",
        },
    }
    argv, output_file = kfp_executor.localize(
        [
            "--executor_class_path",
            "m.E",
            "--json_serialized_invocation_args",
            json.dumps(executor_input),
        ]
    )
    local = json.loads(argv[3])
    assert output_file == "/tmp/kfp_outputs/output_metadata.json"
    assert local["inputs"]["artifacts"]["examples"]["artifacts"][0]["uri"] == "/s3/b/ex"
    assert local["outputs"]["artifacts"]["transform_graph"]["artifacts"][0]["uri"] == (
        "/minio/mlpipeline/v2/artifacts/taxi/run/Transform/transform_graph"
    )
    assert kfp_executor.remote_uri("/gcs/b/x") == "gs://b/x"
    assert kfp_executor.local_path("/local/x") == "/local/x"
