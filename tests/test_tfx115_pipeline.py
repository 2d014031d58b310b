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


def _tfx115_eval_config(lower_bound, metric="accuracy", by_hour=True):
    """TFX 1.15's taxi_pipeline_beam.py EvalConfig, as it was: the EvalSavedModel's
    `eval` signature, sliced by hour, blessed on the Estimator's own `accuracy`."""
    import tensorflow_model_analysis as tfma

    threshold = tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": lower_bound}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER, absolute={"value": -1e-10}
        ),
    )
    return tfma.EvalConfig(
        model_specs=[tfma.ModelSpec(signature_name="eval")],
        slicing_specs=[tfma.SlicingSpec()]
        + ([tfma.SlicingSpec(feature_keys=["trip_start_hour"])] if by_hour else []),
        metrics_specs=[tfma.MetricsSpec(thresholds={metric: threshold})],
    )


def _artifact(kind, mlmd_artifact=None, uri=None):
    artifact = kind()
    if mlmd_artifact is not None:
        artifact.set_mlmd_artifact(mlmd_artifact)
    else:
        artifact.uri = str(uri)
        os.makedirs(uri)
    return artifact


def _evaluate_as_tfx115(root, out, lower_bound, metric="accuracy", run=1, by_hour=True):
    """The Evaluator inputs of `run` (0: the first, with no baseline; 1: the rerun)
    evaluated with TFX 1.15's unchanged EvalConfig by the executor of
    `tfx.components.Evaluator`, then TFX's Pusher: (evaluation, blessing, pushed_model,
    push destination)."""
    from tfx.components.pusher import executor as pusher_executor
    from tfx.types import standard_artifacts as kinds
    from tfx.utils import proto_utils

    (_, inputs) = _executions(root, "tfx.components.evaluator.component.Evaluator")[run]
    given = {
        key: [_artifact(kind, inputs[key][0])]
        for key, kind in (
            ("examples", kinds.Examples),
            ("model", kinds.Model),
            ("baseline_model", kinds.Model),
        )
        if key in inputs
    }
    evaluator = tfx.components.Evaluator(
        examples=tfx.dsl.Channel(type=kinds.Examples),
        model=tfx.dsl.Channel(type=kinds.Model),
        eval_config=_tfx115_eval_config(lower_bound, metric, by_hour),
    )
    evaluation = _artifact(kinds.ModelEvaluation, uri=out / "evaluation")
    blessing = _artifact(kinds.ModelBlessing, uri=out / "blessing")
    evaluator.executor_spec.executor_class().Do(
        given,
        {"evaluation": [evaluation], "blessing": [blessing]},
        {"eval_config": evaluator.exec_properties["eval_config"]},
    )
    pushed = _artifact(kinds.PushedModel, uri=out / "pushed")
    destination = tfx.proto.PushDestination(
        filesystem=tfx.proto.PushDestination.Filesystem(base_directory=str(out / "serving"))
    )
    pusher_executor.Executor().Do(
        {"model": given["model"], "model_blessing": [blessing]},
        {"pushed_model": [pushed]},
        {"push_destination": proto_utils.proto_to_json(destination)},
    )
    return evaluation, blessing, pushed, out / "serving"


def test_tfx115s_unchanged_eval_config_blesses_on_the_estimators_own_metrics(
    trainer_fn_runs, tmp_path
):
    """TFX 1.15's `ModelSpec(signature_name="eval")` reads the eval model the Trainer wrote
    from eval_input_receiver_fn to Format-TFMA/: the head's metrics per hour slice, the
    thresholds on `accuracy` (0.6 and no worse than the baseline, as 1.15's taxi pipeline
    had them) bless as TFMA's validator rules and the Pusher pushes a blessed model (the
    first run's, on the overall slice, is); at 0.99 none is blessed, and nothing is
    pushed; a threshold on a metric the model does not report fails, naming it."""
    import tensorflow_model_analysis as tfma

    root, _ = trainer_fn_runs
    assert tfx.components.Evaluator.get_class_type() == (
        "tfx.components.evaluator.component.Evaluator"
    )
    for _, trained in _executions(root, "components.tfx_compat.component.Trainer"):
        model_uri = trained["model"][0].uri
        assert os.path.exists(os.path.join(model_uri, "Format-TFMA", "saved_model.pb"))
    evaluation, blessing, pushed, serving = _evaluate_as_tfx115(root, tmp_path / "low", 0.6)
    metrics = {
        tuple((k.column, k.int64_value) for k in m.slice_key.single_slice_keys): {
            (v.key.name, v.key.model_name, v.key.is_diff): v.value.double_value.value
            for v in m.metric_keys_and_values
        }
        for m in tfma.load_metrics(evaluation.uri)
    }
    overall = metrics[()]
    assert {name for name, model, _ in overall if model == "candidate"} >= {
        "accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
        "label/mean", "precision", "prediction/mean", "recall", "example_count",
    }  # fmt: skip
    accuracy = ("accuracy", "candidate", False)
    assert overall[accuracy] >= 0.6
    diff = overall[("accuracy", "candidate", True)]
    assert diff == overall[accuracy] - overall[("accuracy", "baseline", False)]
    hours = [key for key in metrics if key]
    assert hours == sorted(hours) and all(column == "trip_start_hour" for ((column, _),) in hours)
    count = ("example_count", "candidate", False)
    assert sum(metrics[hour][count] for hour in hours) == overall[count]
    # 1.15's thresholds hold on every slice, an hour's too (a few dozen examples here, and
    # the model's initialization is not seeded): blessed when each slice passes both.
    blessed = all(
        values[accuracy] >= 0.6 and values[("accuracy", "candidate", True)] >= -1e-10
        for values in metrics.values()
    )
    assert blessed == tfma.load_validation_result(evaluation.uri).validation_ok
    assert os.listdir(blessing.uri) == ["BLESSED" if blessed else "NOT_BLESSED"]
    assert blessing.get_int_custom_property("blessed") == int(blessed)
    assert pushed.get_int_custom_property("pushed") == int(blessed)
    assert os.path.exists(serving) == blessed

    # The first run, with no baseline (the change threshold is ignored), on the overall
    # slice alone: blessed and pushed, whatever the seed.
    _, blessing, pushed, serving = _evaluate_as_tfx115(
        root, tmp_path / "first", 0.6, run=0, by_hour=False
    )
    assert os.listdir(blessing.uri) == ["BLESSED"]
    assert blessing.get_int_custom_property("blessed") == 1
    assert pushed.get_int_custom_property("pushed") == 1 and os.listdir(serving)

    evaluation, blessing, pushed, serving = _evaluate_as_tfx115(root, tmp_path / "high", 0.99)
    assert os.listdir(blessing.uri) == ["NOT_BLESSED"]
    assert pushed.get_int_custom_property("pushed") == 0 and not os.path.exists(serving)
    failures = tfma.load_validation_result(evaluation.uri).metric_validations_per_slice
    assert failures and failures[0].failures[0].metric_key.name == "accuracy"

    with pytest.raises(ValueError, match="threshold is set on the metric 'binary_accuracy'"):
        _evaluate_as_tfx115(root, tmp_path / "unknown", 0.6, metric="binary_accuracy")


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
