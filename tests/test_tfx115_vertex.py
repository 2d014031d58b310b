"""The TFX 1.15 example pipeline compiles for Vertex AI with TFX's KubeflowV2DagRunner,
and the compiled spec runs, task by task, with kubeflow/local_runner.py."""

import json
import os
import shutil

import pytest

from components import tfx_v1 as tfx
from kubeflow.local_runner import LocalVertexRunner
from tests import tfx115

pytestmark = pytest.mark.slow
IMAGE = "us-docker.pkg.dev/project/repo/kit:1"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("tfx115_vertex")
    pipeline = tfx115.example_pipeline().create_pipeline(
        pipeline_name="chicago-taxi-tfx115",
        pipeline_root="gs://bucket/root",
        data_root="gs://bucket/data",
        module_file=tfx115.MODULE_FILE,
        serving_model_dir="/gcs/bucket/serving",
        metadata_path=None,
        train_steps=50,
        eval_steps=20,
    )
    runner = tfx.orchestration.experimental.KubeflowV2DagRunner(
        config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(
            default_image=IMAGE, use_pipeline_spec_2_1=True
        ),
        output_dir=str(out),
        output_filename="pipeline.json",
    )
    runner.run(pipeline)
    return out / "pipeline.json"


def test_each_task_runs_its_executor_in_the_image(compiled):
    with open(compiled) as f:
        spec = json.load(f)["pipelineSpec"]
    executors = spec["deploymentSpec"]["executors"]
    classes = {}
    for name, executor in executors.items():
        if "container" not in executor:
            continue  # the resolver's queries
        container = executor["container"]
        assert container["image"] == IMAGE, name
        args = container["args"]
        classes[name] = args[args.index("--executor_class_path") + 1]
    assert classes["Trainer_executor"] == "components.tfx_compat.executor.TrainerExecutor"
    assert classes["Transform_executor"] == "components.tfx_compat.executor.TransformExecutor"
    # TFX's Evaluator, whose executor also reads TFX 1.15's eval model (signature "eval")
    assert classes["Evaluator_executor"] == "components.tfx_compat.evaluator.Executor"
    assert classes["Pusher_executor"] == "tfx.components.pusher.executor.Executor"
    trainer = spec["root"]["dag"]["tasks"]["Trainer"]["inputs"]["parameters"]
    assert trainer["module_file"]["runtimeValue"]["constant"] == tfx115.MODULE_FILE
    assert json.loads(trainer["train_args"]["runtimeValue"]["constant"]) == {"num_steps": 50}


def _overall(evaluation_uri, metric):
    import tensorflow_model_analysis as tfma

    (overall,) = [m for m in tfma.load_metrics(evaluation_uri) if not m.slice_key.ListFields()]
    (value,) = [
        kv.value.double_value.value
        for kv in overall.metric_keys_and_values
        if kv.key.name == metric
    ]
    return value


def test_the_compiled_spec_runs_to_a_pushed_model(compiled, tmp_path, small_taxi_csv):
    gcs = tmp_path / "gcs"
    os.makedirs(gcs / "bucket" / "data")
    shutil.copy(small_taxi_csv, gcs / "bucket" / "data" / "data.csv")
    results = LocalVertexRunner(str(gcs)).run(str(compiled))
    evaluator = results["Evaluator"]["outputs"]
    blessed = evaluator["blessing"][0]["metadata"]["blessed"]
    # 1.15's module trains unseeded (50 steps): the blessing is the example's rule on the
    # accuracy this run's model got (overall, at least 0.5; the first run has no baseline).
    accuracy = _overall(evaluator["evaluation"][0]["uri"], "binary_accuracy")
    assert blessed == (1 if accuracy >= 0.5 else 0), accuracy
    pushed = results["Pusher"]["outputs"]["pushed_model"][0]["metadata"]
    assert pushed["pushed"] == blessed
    if not blessed:  # (rare: the model that would have been pushed is below the bar)
        assert not os.path.exists(gcs / "bucket" / "serving")
        return
    (version,) = os.listdir(gcs / "bucket" / "serving")
    # (The local stand-in folder for /gcs/bucket, where Vertex's mount would be.)
    assert pushed["pushed_destination"] == str(gcs / "bucket" / "serving" / version)
    assert os.path.exists(gcs / "bucket" / "serving" / version / "saved_model.pb")
