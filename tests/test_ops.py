"""Operating retraining: `runs`, `models` and `rollback` over real runs of one pipeline.

One module fixture runs the taxi pipeline four times into one output folder: a blessed push,
a second blessed push (more steps), a run the gate refuses (an impossible AUC threshold) and
one that fails in ExampleGen (a malformed row); then it rolls back to the first version. The
listings run as `python -m pipeline ...` subprocesses, as an operator would run them.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from pipeline.config import REPO_ROOT
from tests.conftest import TAXI_DEFINITION, small_pipeline_config

# Small and quick: the models only need to differ, and the first two to pass AUC >= 0.6.
_BASE = {"train_steps": 100, "save_checkpoints_steps": 100, "eval_steps": 5}
_REASON = "version 2 scores worse on live traffic"


def _tree(root):
    """{relative path: sha256} of every file under `root`."""
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return files


def _cli(*args, output_dir):
    """`python -m pipeline ARGS` for the scenario's pipeline, in a fresh process."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            *args,
            "--definition",
            TAXI_DEFINITION,
            "--output-dir",
            str(output_dir),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )


def _main(capsys, *args, output_dir):
    """`python -m pipeline ARGS` in this process: (exit status, stdout, stderr)."""
    from pipeline.cli import main

    capsys.readouterr()
    code = main([*args, "--definition", TAXI_DEFINITION, "--output-dir", str(output_dir)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def scenario(tmp_path_factory, small_taxi_csv):
    from pipeline.cli import main
    from pipeline.runner import run_locally

    out = tmp_path_factory.mktemp("ops")
    first = run_locally(small_pipeline_config(out, small_taxi_csv, **_BASE))
    # More steps: a new model, blessed whatever it scores against the first.
    second = run_locally(
        small_pipeline_config(
            out, small_taxi_csv, **_BASE | {"train_steps": 150, "blessing_max_change": 1.0}
        )
    )
    # Yet another model, which no gate could bless.
    strict_config = small_pipeline_config(
        out, small_taxi_csv, **_BASE | {"train_steps": 120, "blessing_threshold": 1.01}
    )
    strict = run_locally(strict_config)
    lines = small_taxi_csv.read_text().splitlines()
    lines[3] = lines[3].replace(",", ",,", 1)  # one field too many
    bad_csv = out / "bad.csv"
    bad_csv.write_text("\n".join(lines) + "\n")
    with pytest.raises(Exception, match="line 4"):
        run_locally(small_pipeline_config(out, bad_csv, **_BASE))

    config = small_pipeline_config(out, small_taxi_csv)
    serving_dir = config.resolved_serving_model_dir
    v1, v2 = (int(os.path.basename(s.pushed_to)) for s in (first, second))
    before_rollback = sorted(os.listdir(serving_dir))
    rollback = ["rollback", "--to", str(v1), "--reason", _REASON]
    code = main([*rollback, "--definition", TAXI_DEFINITION, "--output-dir", str(out)])
    runs = _cli("runs", "--json", output_dir=out)
    models = _cli("models", "--json", output_dir=out)
    assert runs.returncode == 0, runs.stderr
    assert models.returncode == 0, models.stderr
    return {
        "out": out,
        "csv": small_taxi_csv,
        "config": config,
        "strict_config": strict_config,
        "summaries": (first, second, strict),
        "v1": v1,
        "v2": v2,
        "before_rollback": before_rollback,
        "rollback_code": code,
        "runs": json.loads(runs.stdout),
        "models": json.loads(models.stdout),
    }


def test_runs_table_says_undefined_for_a_metric_that_is_nan():
    """As the run summary does: a NaN metric is recorded as null and shown as `undefined`."""
    from pipeline.history import RUN_KEYS, format_runs

    record = dict.fromkeys(RUN_KEYS) | {
        "run_id": "r1",
        "outcome": "pushed",
        "metrics": {"auc": None, "binary_accuracy": 0.75},
    }

    assert "auc=undefined binary_accuracy=0.75" in format_runs([record])


@pytest.mark.slow
@pytest.mark.slow
def test_runs_lists_every_run_newest_first_with_its_outcome(scenario):
    from pipeline.history import RUN_KEYS, code_version, file_sha256

    first, second, strict = scenario["summaries"]
    runs = scenario["runs"]
    assert [list(run) for run in runs] == [list(RUN_KEYS)] * 4  # stable keys, in order
    assert [run["outcome"] for run in runs] == ["failed", "not_blessed", "pushed", "pushed"]
    assert [run["failed_component"] for run in runs] == ["ExampleGen", None, None, None]
    assert [run["blessed"] for run in runs] == [None, False, True, True]
    assert [run["pushed_version"] for run in runs] == [None, None, scenario["v2"], scenario["v1"]]
    assert runs[0]["started"] >= runs[1]["started"] >= runs[2]["started"] >= runs[3]["started"]
    assert all(run["duration_s"] > 0 for run in runs)
    assert len({run["run_id"] for run in runs}) == 4
    # ExampleGen's record of the data: the same 1,500 rows for the three that read it.
    assert [run["input_rows"] for run in runs] == [None, 1500, 1500, 1500]
    fingerprints = {run["input_fingerprint"] for run in runs[1:]}
    assert len(fingerprints) == 1 and fingerprints.pop().startswith(f"{scenario['csv']} ")
    # The headline metrics are the run summaries' (NaN, e.g. an undefined precision, as null).
    for run, summary in zip(runs[1:], (strict, second, first), strict=True):
        assert run["metrics"]["auc"] == pytest.approx(summary.metrics["auc"])
        assert run["metrics"].keys() == summary.metrics.keys()
    assert runs[0]["metrics"] == {}
    # What each ran from: the definition and the code.
    definition = os.path.realpath(TAXI_DEFINITION)
    assert {run["definition"] for run in runs} == {definition}
    assert {run["definition_sha256"] for run in runs} == {file_sha256(definition)}
    assert {run["code_version"] for run in runs} == {code_version()}
    assert code_version().split("-")[0] == (
        subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO_ROOT
        ).stdout.strip()
    )


@pytest.mark.slow
def test_models_the_serving_folder_and_the_rollback_agree(scenario):
    from pipeline.history import MODEL_KEYS

    v1, v2 = scenario["v1"], scenario["v2"]
    serving_dir = scenario["config"].resolved_serving_model_dir
    assert scenario["rollback_code"] == 0
    assert scenario["before_rollback"] == [str(v1), str(v2)]
    on_disk = sorted(os.listdir(serving_dir))  # no staging folder left behind
    assert len(on_disk) == 3 and on_disk[:2] == [str(v1), str(v2)]
    v3 = int(on_disk[2])
    assert v3 > v2  # the restored model is the highest version: the one served
    assert _tree(os.path.join(serving_dir, str(v3))) == _tree(os.path.join(serving_dir, str(v1)))

    models = scenario["models"]
    assert [list(model) for model in models] == [list(MODEL_KEYS)] * 3
    assert [m["version"] for m in models] == [v3, v2, v1]
    assert [m["serving"] for m in models] == [True, False, False]
    assert [m["present"] for m in models] == [True, True, True]
    assert [m["source"] for m in models] == ["rollback", "pipeline", "pipeline"]
    assert [m["rollback_of"] for m in models] == [v1, None, None]
    assert [m["reason"] for m in models] == [_REASON, None, None]
    assert [m["blessed"] for m in models] == [True, True, True]
    assert [m["path"] for m in models] == [os.path.join(serving_dir, str(v)) for v in (v3, v2, v1)]
    # The runs behind them: the restored version is the first run's model, with its lineage.
    runs = {run["pushed_version"]: run for run in scenario["runs"] if run["pushed_version"]}
    for model, origin in zip(models, (v1, v2, v1), strict=True):
        run = runs[origin]
        assert model["run_id"] == run["run_id"]
        assert model["metrics"] == run["metrics"]
        for key in ("input_rows", "input_fingerprint", "definition", "definition_sha256"):
            assert model[key] == run[key], key
        assert model["code_version"] == run["code_version"]
    assert models[0]["pushed_at"] >= models[1]["pushed_at"] >= models[2]["pushed_at"]


@pytest.mark.slow
def test_rollback_is_recorded_in_ml_metadata_as_a_push(scenario):
    from ml_metadata.proto import metadata_store_pb2

    from pipeline.history import ROLLBACK_TYPE
    from pipeline.metadata import open_store

    store = open_store(scenario["config"].resolved_metadata_path)
    (execution,) = store.get_executions_by_type(ROLLBACK_TYPE)
    assert execution.custom_properties["reason"].string_value == _REASON
    assert execution.custom_properties["rollback_of"].string_value == str(scenario["v1"])
    events = store.get_events_by_execution_ids([execution.id])
    by_kind = {}
    for event in events:
        (artifact,) = store.get_artifacts_by_id([event.artifact_id])
        kind = store.get_artifact_types_by_id([artifact.type_id])[0].name
        by_kind[(event.type, event.path.steps[0].key, kind)] = artifact
    pushed = by_kind[(metadata_store_pb2.Event.OUTPUT, "pushed_model", "PushedModel")]
    assert pushed.custom_properties["rollback_of"].string_value == str(scenario["v1"])
    assert pushed.custom_properties["pushed"].int_value == 1
    # Its inputs: the first version's push and the model the first run trained.
    original = by_kind[(metadata_store_pb2.Event.INPUT, "pushed_model", "PushedModel")]
    assert original.custom_properties["pushed_version"].string_value == str(scenario["v1"])
    model = by_kind[(metadata_store_pb2.Event.INPUT, "model", "Model")]
    assert model.uri.startswith(scenario["config"].resolved_pipeline_root)
    # It belongs to the pipeline, not to any of its runs.
    contexts = store.get_contexts_by_execution(execution.id)
    assert [(c.type, c.name) for c in contexts] == [("pipeline", "taxi")]


@pytest.mark.slow
def test_dry_run_changes_nothing(scenario, capsys):
    from pipeline.metadata import open_store

    out = scenario["out"]
    serving_dir = scenario["config"].resolved_serving_model_dir
    store = open_store(scenario["config"].resolved_metadata_path)
    before = (_tree(serving_dir), len(store.get_executions()), len(store.get_artifacts()))
    code, stdout, _ = _main(
        capsys, "rollback", "--to", str(scenario["v2"]), "--dry-run", output_dir=out
    )
    assert code == 0
    assert stdout.startswith(f"Would copy {os.path.join(serving_dir, str(scenario['v2']))} ")
    assert "Dry run: nothing changed." in stdout
    assert (_tree(serving_dir), len(store.get_executions()), len(store.get_artifacts())) == before


@pytest.mark.slow
def test_rollback_refuses_an_unknown_version_naming_those_there(scenario, capsys):
    serving_dir = scenario["config"].resolved_serving_model_dir
    before = _tree(serving_dir)
    code, stdout, stderr = _main(capsys, "rollback", "--to", "12345", output_dir=scenario["out"])
    assert code == 2 and stdout == ""
    assert f"version 12345 was never pushed to {serving_dir}" in stderr
    for version in os.listdir(serving_dir):
        assert version in stderr
    assert _tree(serving_dir) == before


@pytest.mark.slow
def test_rollback_to_the_model_served_now_does_nothing(scenario, capsys):
    serving_dir = scenario["config"].resolved_serving_model_dir
    before = _tree(serving_dir)
    code, stdout, _ = _main(
        capsys, "rollback", "--to", str(scenario["v1"]), output_dir=scenario["out"]
    )
    assert code == 0
    assert f"Version {scenario['v1']} is already served as version" in stdout
    assert _tree(serving_dir) == before


@pytest.mark.slow
def test_rollback_refuses_a_model_never_blessed_unless_forced(scenario, capsys, tmp_path):
    """Someone copied the unblessed run's model into the serving folder by hand: its
    fingerprint leads to the run that trained it, whose Evaluator did not bless it."""
    from pipeline.history import SERVING_SUBDIR, load

    config = scenario["config"]
    # A copy of the store and the serving folder, so the shared scenario stays as it was.
    out = tmp_path / "copy"
    metadata = os.path.relpath(config.resolved_metadata_path, scenario["out"])
    serving = os.path.relpath(config.resolved_serving_model_dir, scenario["out"])
    os.makedirs(out / os.path.dirname(metadata))
    shutil.copy2(config.resolved_metadata_path, out / metadata)
    shutil.copytree(config.resolved_serving_model_dir, out / serving)
    history = load(scenario["strict_config"])
    strict_run = history.run_contexts[1]  # the newest but one: the not blessed run
    (model,) = [
        a
        for e in history.run_executions[strict_run.id]
        if history.node_of.get(e.id) == "Trainer"
        for a in history.outputs[e.id]["model"]
    ]
    by_hand = scenario["v1"] - 1
    shutil.copytree(os.path.join(model.uri, SERVING_SUBDIR), out / serving / str(by_hand))

    copy = small_pipeline_config(out, config.data_path)
    records = {m["version"]: m for m in load(copy).models(copy.resolved_serving_model_dir)}
    assert records[by_hand]["source"] == "folder"
    assert records[by_hand]["blessed"] is False
    assert records[by_hand]["run_id"] == strict_run.name

    before = _tree(out / serving)
    code, stdout, stderr = _main(capsys, "rollback", "--to", str(by_hand), output_dir=out)
    assert code == 2 and stdout == ""
    assert f"version {by_hand} was never blessed: its run's Evaluator did not bless it" in stderr
    assert "--force" in stderr
    code, stdout, _ = _main(
        capsys, "rollback", "--to", str(by_hand), "--force", "--dry-run", output_dir=out
    )
    assert code == 0 and "(forced: never blessed)" in stdout
    assert _tree(out / serving) == before


@pytest.mark.slow
def test_tables_are_aligned_and_name_each_run_and_version(scenario, capsys):
    code, stdout, _ = _main(capsys, "runs", output_dir=scenario["out"])
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split()[:3] == ["RUN", "STARTED", "(UTC)"]
    assert [line.split()[0] for line in lines[1:]] == [run["run_id"] for run in scenario["runs"]]
    outcome = lines[0].index("OUTCOME")
    assert [line[outcome:].split("  ")[0] for line in lines[1:]] == [
        "failed (ExampleGen)",
        "not blessed",
        "pushed",
        "pushed",
    ]
    code, stdout, _ = _main(capsys, "models", output_dir=scenario["out"])
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].startswith("VERSION")
    assert lines[1].startswith(f"{scenario['models'][0]['version']} *")
    assert f"rollback of {scenario['v1']}" in lines[1]
    assert lines[-1].startswith("* served now")


def test_runs_models_and_rollback_answer_without_tensorflow(scenario):
    """The three commands read a SQLite store and the serving folder: TensorFlow's import
    (seconds of CPU) is not needed, and not done."""
    code = (
        "import sys\n"
        "from pipeline.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "print(rc, 'tensorflow' in sys.modules, 'tensorflow_model_analysis' in sys.modules)\n"
    )
    common = ["--definition", TAXI_DEFINITION, "--output-dir", str(scenario["out"])]
    for argv in (
        ["runs"],
        ["models", "--json"],
        ["rollback", "--to", str(scenario["v2"]), "--dry-run"],
    ):
        done = subprocess.run(
            [sys.executable, "-c", code, *argv, *common],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
        )
        assert done.stdout.splitlines()[-1] == "0 False False", (argv, done.stdout, done.stderr)
        assert done.stdout.count("\n") > 1, argv  # the table, list or plan came first


def test_history_commands_answer_help_without_tensorflow():
    for command in ("runs", "models", "rollback", "report"):
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pipeline.cli import main\n"
                "try:\n    main([sys.argv[1], '--help'])\nexcept SystemExit:\n    pass\n"
                "print('tensorflow' in sys.modules, 'tfx' in sys.modules)",
                command,
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO_ROOT,
        )
        assert result.stdout.splitlines()[-1] == "False False", command
        assert "--definition" in result.stdout and "--output-dir" in result.stdout


def test_a_new_version_is_always_the_highest(tmp_path):
    from components.serving_dir import next_version, push

    model = tmp_path / "model"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(b"graph")
    serving = tmp_path / "serving"
    far = 10**12  # a version above any time in seconds
    (serving / str(far)).mkdir(parents=True)
    assert next_version(serving) == far + 1
    assert push(str(model), str(serving)) == str(serving / str(far + 1))
    assert sorted(os.listdir(serving)) == [str(far), str(far + 1)]
