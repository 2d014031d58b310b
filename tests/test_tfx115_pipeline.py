"""A TFX 1.15 Estimator pipeline, brought over by changing imports, runs on LocalDagRunner.

The pipeline and module are examples/tfx115_taxi, written as TFX's taxi example was:
a `preprocessing_fn` and a `trainer_fn`, TFX's CsvExampleGen, Resolver, Evaluator (with
a `tfma.EvalConfig`) and Pusher, the kit's stand-ins for the components TFX cannot
import here.  Run twice: the second run warm-starts from the first's blessed model.
"""

import glob
import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

from components import tfx_v1 as tfx
from tests import tfx115

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, small_taxi_csv):
    folder = tmp_path_factory.mktemp("tfx115_data")
    shutil.copy(small_taxi_csv, folder / "data.csv")
    return folder


def _run(root, data_dir, trainer_module_file=None):
    pipeline = tfx115.example_pipeline().create_pipeline(
        pipeline_name=tfx115.PIPELINE_NAME,
        pipeline_root=str(root / "pipeline"),
        data_root=str(data_dir),
        module_file=tfx115.MODULE_FILE,
        serving_model_dir=str(root / "serving_model"),
        metadata_path=str(root / "metadata.sqlite"),
        trainer_module_file=trainer_module_file,
        train_steps=200,
        eval_steps=50,
    )
    tfx.orchestration.LocalDagRunner().run(pipeline)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def trainer_fn_runs(tmp_path_factory, data_dir):
    """The output folder after two runs, and the log messages of the second."""
    root = tmp_path_factory.mktemp("tfx115")
    _run(root, data_dir)
    records = _Records()
    logger = logging.getLogger("components")
    level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.INFO)
    try:
        _run(root, data_dir)
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    return root, records.messages


def _executions(root, component):
    return tfx115.executions(root / "metadata.sqlite", component)


def _eval_files(root):
    (_, gen), *_ = _executions(
        root, "tfx.components.example_gen.csv_example_gen.component.CsvExampleGen"
    )
    return glob.glob(os.path.join(gen["examples"][0].uri, "Split-eval", "*.gz"))


def test_the_trainer_fn_pipeline_pushes_a_blessed_model_that_serves_raw_examples(
    trainer_fn_runs,
):
    root, _ = trainer_fn_runs
    (_, pushed), *_ = _executions(root, "tfx.components.pusher.component.Pusher")
    assert pushed["pushed_model"][0].custom_properties["pushed"].int_value == 1
    (_, evaluation), *_ = _executions(root, "tfx.components.evaluator.component.Evaluator")
    blessing = evaluation["blessing"][0]
    assert os.path.exists(os.path.join(blessing.uri, "BLESSED"))
    versions = sorted(os.listdir(root / "serving_model"))
    served = tfx115.serve_in_a_fresh_process(
        root / "serving_model" / versions[0], _eval_files(root)
    )
    scores = served["serving_default"]["scores"]
    assert len(scores) == 16 and all(abs(sum(row) - 1) < 1e-5 for row in scores)
    assert all(0 <= p[0] <= 1 for p in served["predict"]["logistic"])


def test_outputs_are_keyed_as_tfx_keys_them(trainer_fn_runs):
    root, _ = trainer_fn_runs
    expected = {
        "components.tfx_compat.component.StatisticsGen": {"examples", "statistics"},
        "components.tfx_compat.component.SchemaGen": {"statistics", "schema"},
        "components.tfx_compat.component.ExampleValidator": {"statistics", "schema", "anomalies"},
        "components.tfx_compat.component.Transform": {
            "examples",
            "schema",
            "transform_graph",
            "transformed_examples",
        },
        "components.tfx_compat.component.Trainer": {
            "examples",
            "schema",
            "transform_graph",
            "model",
            "model_run",
        },
        "tfx.components.evaluator.component.Evaluator": {
            "examples",
            "model",
            "evaluation",
            "blessing",
        },
    }
    for component, keys in expected.items():
        (_, first), *_ = _executions(root, component)
        assert set(first) == keys, component
    # The first run had no blessed model to start from; the second did.
    (_, first), (_, second) = _executions(root, "components.tfx_compat.component.Trainer")
    assert "base_model" not in first and "base_model" in second


def test_the_rerun_warm_starts_from_the_blessed_model_and_is_compared_with_it(trainer_fn_runs):
    root, messages = trainer_fn_runs
    (_, first), (_, second) = _executions(root, "components.tfx_compat.component.Trainer")
    base = second["base_model"][0]
    assert base.id == first["model"][0].id
    warm = [m for m in messages if m.startswith("Warm-starting from")]
    assert warm and os.path.join(base.uri, "Format-Serving") in warm[0], messages[-20:]
    # The data did not change: everything before the Trainer came from the cache.
    transforms = _executions(root, "components.tfx_compat.component.Transform")
    assert len(transforms) == 2 and transforms[1][0].last_known_state == 5  # CACHED
    (_, second_eval) = _executions(root, "tfx.components.evaluator.component.Evaluator")[1]
    assert second_eval["baseline_model"][0].id == base.id
    with open(
        glob.glob(os.path.join(second_eval["evaluation"][0].uri, "eval_config.json"))[0]
    ) as f:
        assert json.load(f)["evalConfig"]["modelSpecs"][0]["labelKey"] == "tips_xf"


def test_the_trainer_warns_once_that_eval_input_receiver_fn_is_unused(trainer_fn_runs):
    _, messages = trainer_fn_runs
    assert sum("eval_input_receiver_fn is not used" in m for m in messages) == 1


def test_exclude_splits_leaves_a_split_out(trainer_fn_runs, tmp_path):
    from tfx.types import artifact_utils, standard_artifacts

    from components.tfx_compat.executor import ExampleValidatorExecutor

    root, _ = trainer_fn_runs
    (_, validated), *_ = _executions(root, "components.tfx_compat.component.ExampleValidator")
    statistics = standard_artifacts.ExampleStatistics()
    statistics.set_mlmd_artifact(validated["statistics"][0])
    schema = standard_artifacts.Schema()
    schema.set_mlmd_artifact(validated["schema"][0])
    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(tmp_path)
    ExampleValidatorExecutor().Do(
        {"statistics": [statistics], "schema": [schema]},
        {"anomalies": [anomalies]},
        {"exclude_splits": json.dumps(["eval"])},
    )
    assert artifact_utils.decode_split_names(anomalies.split_names) == ["train"]
    assert os.listdir(tmp_path) == ["Split-train"]


def _cli(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_kits_cli_lists_the_pipelines_runs_and_models(trainer_fn_runs):
    root, _ = trainer_fn_runs
    where = [
        "--pipeline-name",
        tfx115.PIPELINE_NAME,
        "--metadata-path",
        str(root / "metadata.sqlite"),
    ]
    runs = json.loads(_cli("runs", *where, "--json"))
    assert len(runs) == 2
    models = json.loads(
        _cli("models", *where, "--serving-model-dir", str(root / "serving_model"), "--json")
    )
    pushed = sorted(os.listdir(root / "serving_model"))
    assert [str(m["version"]) for m in models] == sorted(pushed, reverse=True)


def test_a_run_fn_module_trains_pushes_and_serves(tmp_path, data_dir):
    _run(tmp_path, data_dir, trainer_module_file=tfx115.RUN_FN_MODULE_FILE)
    ((_, trained),) = _executions(tmp_path, "components.tfx_compat.component.Trainer")
    assert os.path.exists(os.path.join(trained["model"][0].uri, "Format-Serving", "saved_model.pb"))
    assert glob.glob(os.path.join(trained["model_run"][0].uri, "model.ckpt-200.index"))
    (version,) = os.listdir(tmp_path / "serving_model")
    served = tfx115.serve_in_a_fresh_process(
        tmp_path / "serving_model" / version, _eval_files(tmp_path)
    )
    assert len(served["serving_default"]["scores"]) == 16
