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
    from tfx.components.evaluator.component import Evaluator
    from tfx.components.example_gen.csv_example_gen.component import CsvExampleGen
    from tfx.components.pusher.component import Pusher
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner
    from tfx.proto.trainer_pb2 import TrainArgs

    assert tfx_v1.components.Evaluator is Evaluator
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
