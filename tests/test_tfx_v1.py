"""`components.tfx_v1` has every name of TFX's `tfx.v1`, TFX's own object wherever it
imports here, and stand-ins with TFX 1.15's signatures that refuse what they cannot do."""

import ast
import json
import os

import pytest
import tfx

from components import tfx_v1
from components.tfx_compat import component

TFX_V1 = os.path.join(os.path.dirname(tfx.__file__), "v1")


def _tfx_v1_all():
    """{dotted namespace: the names of its __all__ that it binds}, read from TFX's own
    tfx/v1 files (two names are listed there but never bound: `proto.Filesystem`,
    `orchestration.experimental.get_default_kubeflow_metadata_config`)."""
    found = {}
    for folder, _, files in os.walk(TFX_V1):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, TFX_V1)[: -len(".py")].replace(os.sep, ".")
            namespace = relative.removesuffix("__init__").rstrip(".")
            with open(path) as f:
                tree = ast.parse(f.read())
            bound = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    bound |= {alias.asname or alias.name for alias in node.names}
                elif isinstance(node, ast.Assign):
                    bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            for node in tree.body:
                if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", None) == "__all__" for t in node.targets
                ):
                    found[namespace] = [n for n in ast.literal_eval(node.value) if n in bound]
    return found


def _resolve(dotted):
    namespace = tfx_v1
    for part in filter(None, dotted.split(".")):
        namespace = getattr(namespace, part)
    return namespace


def test_every_public_name_of_tfx_v1_is_there():
    names = _tfx_v1_all()
    assert len(names) > 15  # components, dsl (and its five), orchestration, proto, types...
    missing = [
        f"{namespace}.{name}".lstrip(".")
        for namespace, listed in names.items()
        if namespace != "dsl.standard_annotations"  # not imported by tfx.v1.dsl itself
        for name in listed
        if not hasattr(_resolve(namespace), name)
    ]
    assert missing == []


def test_tfx_objects_where_they_import_and_stand_ins_where_they_do_not():
    from tfx.components.example_gen.csv_example_gen.component import CsvExampleGen
    from tfx.components.pusher.component import Pusher
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner
    from tfx.proto.trainer_pb2 import TrainArgs

    from components.tfx_compat import evaluator

    # TFX's Evaluator, whose executor also reads 1.15's eval model (TFX's module holds
    # it too once the install line ran in this process, whichever test ran it)
    assert tfx_v1.components.Evaluator is evaluator.Evaluator
    assert issubclass(evaluator.Evaluator, evaluator._TFX_EVALUATOR)
    assert tfx_v1.components.CsvExampleGen is CsvExampleGen
    assert tfx_v1.components.Pusher is Pusher
    assert tfx_v1.orchestration.LocalDagRunner is LocalDagRunner
    assert tfx_v1.proto.TrainArgs is TrainArgs
    for name in ("StatisticsGen", "SchemaGen", "ExampleValidator", "Transform", "Trainer"):
        assert getattr(tfx_v1.components, name) is getattr(component, name)
    # With no stand-in, a name says what failed when used.
    trainer = tfx_v1.extensions.google_cloud_ai_platform.Trainer
    with pytest.raises(ImportError, match="tensorflow_data_validation"):
        trainer(module_file="m.py")


def _examples():
    return tfx_v1.dsl.Channel(type=tfx_v1.types.standard_artifacts.Examples)


def _schema():
    return tfx_v1.dsl.Channel(type=tfx_v1.types.standard_artifacts.Schema)


def test_stand_ins_key_their_outputs_as_tfx_does():
    transform = tfx_v1.components.Transform(
        examples=_examples(), schema=_schema(), module_file="m.py"
    )
    assert set(transform.outputs) == {"transform_graph", "transformed_examples"}
    unmaterialized = tfx_v1.components.Transform(
        examples=_examples(), schema=_schema(), module_file="m.py", materialize=False
    )
    assert set(unmaterialized.outputs) == {"transform_graph"}
    trainer = tfx_v1.components.Trainer(
        examples=_examples(), module_file="m.py", train_args=tfx_v1.proto.TrainArgs(num_steps=5)
    )
    assert set(trainer.outputs) == {"model", "model_run"}
    assert json.loads(trainer.exec_properties["train_args"]) == {"num_steps": 5}
    statistics = tfx_v1.components.StatisticsGen(examples=_examples(), exclude_splits=["eval"])
    assert statistics.exec_properties["exclude_splits"] == '["eval"]'
    assert set(statistics.outputs) == {"statistics"}


def test_what_has_no_meaning_here_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"stats_options.*TFDV"):
        tfx_v1.components.StatisticsGen(examples=_examples(), stats_options=object())
    with pytest.raises(ValueError, match="analyzer_cache"):
        tfx_v1.components.Transform(
            examples=_examples(),
            schema=_schema(),
            module_file="m.py",
            analyzer_cache=tfx_v1.dsl.Channel(type=tfx_v1.types.standard_artifacts.TransformCache),
        )
    with pytest.raises(ValueError, match="exactly one of module_file and preprocessing_fn"):
        tfx_v1.components.Transform(
            examples=_examples(), schema=_schema(), module_file="m.py", preprocessing_fn="a.b"
        )
    with pytest.raises(TypeError, match="SplitsConfig"):
        tfx_v1.components.Transform(
            examples=_examples(), schema=_schema(), module_file="m.py", splits_config={"a": 1}
        )
    with pytest.raises(ValueError, match="exactly one of module_file, run_fn and trainer_fn"):
        tfx_v1.components.Trainer(examples=_examples(), module_file="m.py", run_fn="a.run_fn")
    with pytest.raises(TypeError, match=r"tfx\.proto\.EvalArgs"):
        tfx_v1.components.Trainer(
            examples=_examples(), module_file="m.py", eval_args=tfx_v1.proto.TrainArgs()
        )


def test_tfma_config_messages_are_there_as_tfx_115_pipelines_use_them():
    import tensorflow_model_analysis as tfma

    threshold = tfma.PerSliceMetricThreshold(slicing_specs=[tfma.SlicingSpec()])
    assert threshold.slicing_specs[0] == tfma.SlicingSpec()


TFX_115_IMPORTS = """
import components.tfx_compat.install
import json, logging
import tensorflow as tf
from tensorflow import estimator as tf_estimator
from tfx import v1 as tfx_v1
from tfx.components import StatisticsGen, SchemaGen, ExampleValidator, Transform, Trainer
from tfx.components.trainer.executor import Executor, GenericExecutor, TrainerFnArgs
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.components.transform.component import Transform as TransformFromItsModule
from tfx.dsl.components.base import executor_spec
from tfx.proto import trainer_pb2
from tfx.types import Channel, standard_artifacts

from components.tfx_compat import component, executor

warnings = []
logging.getLogger("components").addHandler(logging.Handler())
logging.getLogger("components").handlers[-1].emit = lambda r: warnings.append(r.getMessage())
trainer = Trainer(
    module_file="m.py",
    custom_executor_spec=executor_spec.ExecutorClassSpec(Executor),
    transformed_examples=Channel(type=standard_artifacts.Examples),
    transform_graph=Channel(type=standard_artifacts.TransformGraph),
    train_args=trainer_pb2.TrainArgs(num_steps=5),
)
refused = []
for kwargs in ({}, {"transformed_examples": Channel(type=standard_artifacts.Examples)}):
    try:
        Trainer(module_file="m.py", **kwargs)
    except ValueError as e:
        refused.append(str(e))
trainer_warnings = list(warnings)

# TFX 1.15's Kubeflow (v1) runner, as taxi_pipeline_kubeflow_gcp.py used it.
import os, sys
from tfx.components import CsvExampleGen
from tfx.orchestration import pipeline as tfx_pipeline
from tfx.orchestration.kubeflow import kubeflow_dag_runner
from tfx.v1.orchestration import experimental as v1_experimental
gen = CsvExampleGen(input_base="gs://bucket/data")
taxi = tfx_pipeline.Pipeline(
    pipeline_name="taxi", pipeline_root="gs://bucket/root",
    components=[gen, StatisticsGen(examples=gen.outputs["examples"])],
)
kubeflow_dag_runner.KubeflowDagRunner(
    output_dir=sys.argv[1],
    config=kubeflow_dag_runner.KubeflowDagRunnerConfig(
        kubeflow_metadata_config=kubeflow_dag_runner.get_default_kubeflow_metadata_config(),
        tfx_image="gcr.io/project/kit:1",
    ),
).run(taxi)
kubeflow_warnings = warnings[len(trainer_warnings):]
try:
    v1_experimental.KubeflowDagRunner(output_dir=sys.argv[1]).run(taxi)
except ValueError as e:
    refused.append(str(e).split(":")[0])
# KFP v1's own settings, which the v2 spec has no place for: named in a warning.
import tempfile
del warnings[:]
kubeflow_dag_runner.KubeflowDagRunner(
    output_dir=tempfile.mkdtemp(),
    config=kubeflow_dag_runner.KubeflowDagRunnerConfig(
        pipeline_operator_funcs=[lambda op: op], metadata_ui_path="/ui.json",
        tfx_image="gcr.io/project/kit:1",
    ),
    pod_labels_to_attach={"team": "ml"},
).run(taxi)
v1_settings_warnings = [w for w in warnings if not w.startswith("KubeflowDagRunner wrote")]
print("RESULT " + json.dumps({
    "v1": [tfx_v1.__name__, tfx_v1.components.Trainer is component.Trainer,
           tfx_v1.components.StatisticsGen is component.StatisticsGen],
    "stand_ins": [c is getattr(component, c.__name__) for c in
                  (StatisticsGen, SchemaGen, ExampleValidator, Transform, Trainer)],
    "transform_module": TransformFromItsModule is component.Transform,
    "executors": [Executor is executor.TrainerExecutor, GenericExecutor is executor.TrainerExecutor],
    "trainer_fn_args": TrainerFnArgs is FnArgs,
    "estimator": tf_estimator.__name__, "tf_estimator": tf.estimator.__name__,
    "examples_channel": trainer.inputs["examples"].type_name,
    "executor_class": trainer.executor_spec.executor_class is executor.TrainerExecutor,
    "warnings": trainer_warnings, "refused": refused,
    "v1_settings_warnings": v1_settings_warnings,
    "kubeflow": [kubeflow_warnings, sorted(os.listdir(sys.argv[1])),
                 v1_experimental.get_default_kubeflow_metadata_config is
                 kubeflow_dag_runner.get_default_kubeflow_metadata_config],
}))
"""


@pytest.mark.slow
def test_a_tfx_115_pipelines_own_imports_and_arguments_after_the_install_line(tmp_path):
    """TFX 1.15's spellings (taxi_pipeline_local.py's imports, its Trainer with
    transformed_examples and the Estimator executor, the template's `from tfx import v1`,
    a module file's `from tensorflow import estimator`) give the kit's objects after
    `import components.tfx_compat.install`."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", TFX_115_IMPORTS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    assert result["v1"] == ["tfx.v1", True, True]  # TFX's own, over the stand-ins
    assert result["transform_module"] and result["trainer_fn_args"]
    assert result["stand_ins"] == [True] * 5 and result["executors"] == [True, True]
    assert result["estimator"] == result["tf_estimator"] == "components.estimator"
    assert result["examples_channel"] == "Examples" and result["executor_class"]
    assert result["warnings"] == ["Trainer: transformed_examples is TFX's old name for examples."]
    assert result["refused"] == [
        "Trainer: exactly one of examples and transformed_examples must be given.",
        "Trainer: transformed_examples needs transform_graph as well.",
        "KubeflowDagRunnerConfig(tfx_image=...) names no image",
    ]
    # KubeflowDagRunner (KFP v1, which TFX 1.21 dropped) compiles with KubeflowV2DagRunner:
    # a KFP v2 spec named after the pipeline, its tasks in the config's tfx_image.
    warnings, files, metadata_config = result["kubeflow"]
    assert files == ["taxi.json"] and metadata_config
    assert [w.split(":")[0] for w in warnings] == [f"KubeflowDagRunner wrote {tmp_path}/taxi.json"]
    assert [w.split(":")[0] for w in result["v1_settings_warnings"]] == [
        "KubeflowDagRunner does not apply pipeline_operator_funcs, metadata_ui_path, "
        "pod_labels_to_attach"
    ]
    with open(tmp_path / "taxi.json") as f:
        spec = json.load(f)["pipelineSpec"]
    assert sorted(spec["root"]["dag"]["tasks"]) == ["CsvExampleGen", "StatisticsGen"]
    executors = spec["deploymentSpec"]["executors"].values()
    assert {e["container"]["image"] for e in executors} == {"gcr.io/project/kit:1"}


def _run_trainer(tmp_path, run_fn):
    from tfx.types import standard_artifacts

    from components.tfx_compat.executor import TrainerExecutor

    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = str(tmp_path / "examples"), '["train", "eval"]'
    model, model_run = standard_artifacts.Model(), standard_artifacts.ModelRun()
    model.uri, model_run.uri = str(tmp_path / "model"), str(tmp_path / "model_run")
    context = TrainerExecutor.Context(tmp_dir=str(tmp_path / "tmp"), unique_id="1")
    TrainerExecutor(context).Do(
        {"examples": [examples]},
        {"model": [model], "model_run": [model_run]},
        {
            "run_fn": f"tests.tfx115.{run_fn}",
            "train_args": '{"num_steps": 1}',
            "eval_args": '{"num_steps": 1}',
        },
    )
    return model.uri


def test_a_run_fn_may_leave_its_model_as_an_estimator_exports_it(tmp_path):
    """TFX 1.15's template modules point an Estimator's model_dir at serving_model_dir:
    the SavedModel is Format-Serving/export/<exporter>/<timestamp>/, where TFX's Evaluator
    and Pusher find it (path_utils.serving_model_path)."""
    from tfx.utils import path_utils

    model_uri = _run_trainer(tmp_path / "exported", "run_fn_exporting_as_an_estimator")
    assert path_utils.serving_model_path(model_uri) == os.path.join(
        model_uri, "Format-Serving", "export", "chicago-taxi", "1700000000"
    )
    with pytest.raises(RuntimeError, match=r"run_fn wrote no SavedModel .*Format-Serving"):
        _run_trainer(tmp_path / "nothing", "run_fn_writing_nothing")


def test_tfma_export_writes_the_estimators_eval_graph_from_the_eval_receiver(tmp_path):
    """TFX 1.15's run_fn modules call tfma.export.export_eval_savedmodel (TFMA 0.52 has
    no tfma.export): here it writes the Estimator's EVAL graph (TFMA 0.4x's EvalSavedModel)
    under a new timestamped folder, reading eval_input_receiver_fn's labelled examples,
    with the head's metrics as update and value ops."""
    import tensorflow as tf
    import tensorflow_model_analysis as tfma

    from components import estimator
    from components.tfx_compat import tfma_export
    from components.tfx_compat.eval_saved_model import EvalModel

    tfma_export.install()
    column = tf.feature_column.numeric_column("x")
    model = estimator.LinearClassifier([column], model_dir=str(tmp_path / "model"))
    model.train(lambda: ({"x": tf.constant([[1.0], [2.0]])}, tf.constant([[0], [1]])), steps=1)

    def eval_input_receiver_fn():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        spec = {
            "x": tf.io.FixedLenFeature([1], tf.float32),
            "y": tf.io.FixedLenFeature([1], tf.int64),
        }
        features = tf.io.parse_example(serialized, spec)
        return tfma.export.EvalInputReceiver(
            features={"x": features["x"]},
            labels=features["y"],
            receiver_tensors={"examples": serialized},
        )

    path = tfma.export.export_eval_savedmodel(
        estimator=model,
        export_dir_base=str(tmp_path / "eval_model_dir"),
        eval_input_receiver_fn=eval_input_receiver_fn,
    )
    (folder,) = os.listdir(tmp_path / "eval_model_dir")
    assert folder.isdigit() and path.decode() == str(tmp_path / "eval_model_dir" / folder)
    example = tf.train.Example()
    example.features.feature["x"].float_list.value.append(3.0)
    example.features.feature["y"].int64_list.value.append(1)  # eval examples: labelled
    metrics = EvalModel(path.decode()).metrics([example.SerializeToString()] * 3)
    assert {"accuracy", "auc", "average_loss", "label/mean", "example_count"} <= set(metrics)
    assert metrics["label/mean"] == 1.0 and metrics["example_count"] == 3.0
