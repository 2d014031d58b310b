"""The command line on Click: the same options as before it, settings declared once, names
and paths that cannot leave the output folder."""

import json
import os
import subprocess
import sys

import click
import pytest

from pipeline import docs
from pipeline.cli import cli, config_from_argv, main
from pipeline.config import REPO_ROOT
from tests.conftest import taxi_config

# Every command's options as argparse defined them, taken before the move to Click.
BEFORE = REPO_ROOT / "tests" / "data" / "cli" / "options_before_click.json"
# Accepted and ignored before: `runs` lists runs, `report` reads what the run pushed from
# ML Metadata, neither reads a serving folder; `run` trains in its own process or on
# 127.0.0.1, never on cloud machines.
DROPPED = {
    "runs": {"--serving-model-dir"},
    "report": {"--serving-model-dir"},
    "run": {"--machine-type", "--accelerator-type", "--accelerator-count", "--ps-machine-type"},
}
# Options added since the snapshot (settings that are new, on the commands that take them;
# --data and --verbose on more commands).
ADDED = {
    "--max-unlabeled-row-fraction",
    "--candidate",
    "--data",
    "--verbose",
    "--spans",
    "--vocabulary-min-count",
}
# Commands added since the snapshot.
NEW_COMMANDS = {"predict"}
# Choices added since the snapshot (canned estimators that are new).
ADDED_CHOICES = {"--canned": {"BoostedTreesClassifier", "BoostedTreesRegressor"}}


def _options(command):
    """{option string or argument name: (required, repeatable, choices)}."""
    found = {}
    for param in command.params:
        if param.name == "help":
            continue
        choices = (
            sorted(map(str, param.type.choices)) if isinstance(param.type, click.Choice) else None
        )
        shape = (bool(param.required), bool(getattr(param, "multiple", False)), choices)
        if isinstance(param, click.Argument):
            found[param.name] = None  # positional: only its presence is compared
        for flag in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
            if flag.startswith("-"):
                found[flag] = shape
    return found


def test_every_command_takes_the_options_it_took_before_click():
    before = json.loads(BEFORE.read_text())
    assert sorted(set(cli.commands) - NEW_COMMANDS) == sorted(before)
    for name, options in before.items():
        old = {}
        for key, spec in options.items():
            for flag in key.split():
                shape = (spec["required"], spec["repeatable"], spec["choices"])
                old[flag] = shape if flag.startswith("-") else None
        now = _options(cli.commands[name])
        assert set(old) - set(now) == DROPPED.get(name, set()), name
        assert set(now) - set(old) - ADDED == set(), name
        kept = [f for f in now if f not in ADDED]
        assert {f: _without_added_choices(f, now[f]) for f in kept} == {f: old[f] for f in kept}, (
            name
        )


def _without_added_choices(flag, shape):
    if shape is None or flag not in ADDED_CHOICES:
        return shape
    required, repeatable, choices = shape
    return required, repeatable, [c for c in choices if c not in ADDED_CHOICES[flag]]


@pytest.mark.parametrize("page, name, table", docs.TABLES, ids=lambda v: getattr(v, "__name__", v))
def test_the_published_tables_are_the_generated_ones(page, name, table):
    assert docs.published(page, name) == table(), f"{page} is out of date: python -m pipeline.docs"


def test_a_setting_is_one_field_for_flag_key_and_docs():
    from pipeline.definition import KEYS, reference_table
    from pipeline.settings import declared

    table = reference_table()
    fields = {key.field for key in KEYS}
    for field, declared_setting in declared(type(taxi_config())):
        assert field.name in fields, field.name
        if declared_setting.flag:
            assert f"`{declared_setting.flag}`" in table
    assert (
        "| `[training] eval_batch_size` | `--eval-batch-size` (run, compile) | an integer | `128` |"
        in table
    )


@pytest.mark.parametrize("name", ["../../x", "/tmp/abs", "a/b", "..", ".hidden", "x..y"])
def test_a_pipeline_name_that_is_not_a_name_is_refused_with_nothing_written(tmp_path, capsys, name):
    data = tmp_path / "d.csv"
    data.write_text("a,y\n1,0\n2,1\n")
    out = tmp_path / "out"
    argv = ["run", "--data", str(data), "--label", "y", "--output-dir", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--pipeline-name", name])
    assert exit_info.value.code == 2
    assert "is not a name: letters, digits" in capsys.readouterr().err
    assert not out.exists()
    definition = tmp_path / "p.toml"
    definition.write_text(
        f'name = "{name}"\n[data]\npath = "d.csv"\n[label]\ncolumn = "y"\n[output]\ndir = "{out}"\n'
    )
    with pytest.raises(SystemExit):
        main(["run", "--definition", str(definition)])
    assert f'p.toml: name = "{name}": pipeline_name' in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("file", "name"), [("-x.csv", "x"), ("My Data.csv", "My_Data"), ("..csv", "data")]
)
def test_a_name_taken_from_the_data_file_is_always_a_name(file, name):
    from pipeline.config import PipelineConfig

    assert PipelineConfig(data_path=f"/d/{file}", raw_label_key="y").pipeline_name == name


def test_compile_normalises_a_cloud_storage_mount_path_before_checking_it(tmp_path, capsys):
    argv = ["compile", "--out", str(tmp_path / "p.json"), "--pipeline-root", "gs://b/r"]
    argv += ["--image", "example.com/kit:1", "--serving-model-dir", "/gcs/../etc/cron.d"]
    assert main(argv) == 2
    assert "--serving-model-dir must be a /gcs/<bucket>/... folder" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


def test_usage_errors_exit_2_naming_the_option(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--train-steps", "many"])
    assert exit_info.value.code == 2
    assert "'many' is not a valid integer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compile", "--out", "x.json", "--serving-volume", "pvc:/m"])  # vertex target
    assert "--serving-volume: only with --target kubeflow" in capsys.readouterr().err


def test_tensorflow_starts_without_its_cpp_startup_lines():
    code = "from pipeline.cli.quiet import import_tensorflow; import_tensorflow(); print('ready')"
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ready\n"
    for noise in ("cudart_stub", "absl::InitializeLog", "cuInit", "oneDNN"):
        assert noise not in done.stderr


def test_cli_infer_schema_flag_maps_to_no_schema_path():
    assert config_from_argv(["run", "--infer-schema"]).schema_path is None
    assert config_from_argv(["run"]).schema_path == taxi_config().schema_path
    with pytest.raises(SystemExit):
        config_from_argv(["compile", "--out", "x.json", "--infer-schema", "--schema", "s.pbtxt"])


def _refused_in_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    lines = err.splitlines()
    assert "Traceback" not in err
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], err
    return lines[-1]


@pytest.mark.parametrize("case", ["missing file", "empty file", "header only", "bad flag"])
def test_refused_input_is_one_line_exit_2_and_creates_nothing(tmp_path, capsys, case):
    data = tmp_path / "d.csv"
    if case == "empty file":
        data.write_text("")
    elif case != "missing file":
        data.write_text("a,y\n")
    out = tmp_path / "out"
    argv = ["run", "--data", str(data), "--label", "y", "--output-dir", str(out)]
    if case == "bad flag":
        data.write_text("a,y\n1,0\n2,1\n")
        argv.append("--train-stepz=3")
    line = _refused_in_one_line(capsys, argv)
    expected = {
        "missing file": f"error: --data {data}: no such file or folder",
        "empty file": f"error: --data {data}: empty: give a CSV with a header line",
        "header only": f"error: --data {data}: no data rows: give a CSV with a header line",
        "bad flag": "error: No such option '--train-stepz'. (Did you mean one of: ",
    }[case]
    assert line.startswith(expected), line
    assert sorted(p.name for p in tmp_path.iterdir()) == (["d.csv"] if data.exists() else [])


def test_a_ragged_row_is_one_line_naming_the_flag_or_the_key_and_leaves_nothing(tmp_path, capsys):
    """ExampleGen refuses the row: the run exits 2 with its file and line, the flag (or the
    definition's key) that would tolerate it, no traceback, and no pipelines/<name>/ left."""
    data = tmp_path / "d.csv"
    data.write_text("a,y\n1,0\n2,1,7\n3,0\n4,1\n")
    out = tmp_path / "out"
    argv = ["run", "--data", str(data), "--label", "y", "--output-dir", str(out)]
    line = _refused_in_one_line(capsys, [*argv, "--task", "binary"])
    assert line == (
        f"error: {data} line 3: expected 2 fields, got 3 (1 bad row(s) of 4; set "
        "--max-bad-row-fraction to tolerate some)"
    )
    assert not out.exists()
    definition = tmp_path / "p.toml"
    definition.write_text(
        f'name = "p"\n[data]\npath = "d.csv"\nschema = "infer"\n[label]\ncolumn = "y"\n'
        f'task = "binary"\n[preprocessing]\nfn = "auto"\n[model]\nbuild_estimator = "auto"\n'
        f'[output]\ndir = "{out}"\n'
    )
    line = _refused_in_one_line(capsys, ["run", "--definition", str(definition)])
    assert line.endswith(
        "set --max-bad-row-fraction (or [data] max_bad_row_fraction in "
        f"{os.path.relpath(definition)}) to tolerate some)"
    ), line
    assert not out.exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--definition", str(definition), "--verbose"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith(f"error: {data} line 3: expected 2 fields")
    assert not out.exists()


def test_init_help_says_what_it_runs(capsys):
    assert main(["init", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ExampleGen, StatisticsGen and SchemaGen; then, with several candidates, the " in text
    assert "Transform and the Trainer, which trains every candidate to choose one" in text


def test_tensorflow_s_run_noise_is_dropped_and_the_rest_passed_on():
    code = (
        "import os, sys\n"
        "from pipeline.cli.quiet import filtered_stderr\n"
        "with filtered_stderr():\n"
        "    os.write(2, b'E0000 util.cc:131] oneDNN supports DT_INT32 only on platforms "
        "with AVX-512. Falling back\\n')\n"
        "    print('kept', file=sys.stderr)\n"
        "print('after', file=sys.stderr)\n"
        "with filtered_stderr(verbose=True):\n"
        "    os.write(2, b'oneDNN supports DT_INT32 only on platforms with AVX-512\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ("kept\nafter\noneDNN supports DT_INT32 only on platforms with AVX-512\n")


def test_a_suggested_command_carries_what_finds_the_same_pipeline(tmp_path, monkeypatch):
    from pipeline import hints
    from pipeline.cli.errors import with_finding
    from pipeline.config import PipelineConfig
    from tests.conftest import TAXI_DEFINITION

    monkeypatch.chdir(tmp_path)
    data, out = tmp_path / "my data.csv", tmp_path / "out"
    config = PipelineConfig(data_path=str(data), raw_label_key="y", output_dir=str(out))
    assert with_finding("its runs (`python -m pipeline runs`).", config) == (
        "its runs (`python -m pipeline runs --data 'my data.csv' --output-dir out`)."
    )
    predict = hints.finding_options(config, by_data=False)
    assert hints.command("predict", predict, "--data", "new.csv") == (
        "python -m pipeline predict --pipeline-name my_data --output-dir out --data new.csv"
    )
    renamed = taxi_config(pipeline_name="other")
    assert hints.command("stats", hints.finding_options(renamed)) == (
        f"python -m pipeline stats --definition {TAXI_DEFINITION} --pipeline-name other"
    )
    monkeypatch.chdir(REPO_ROOT)
    assert hints.command("report", hints.finding_options(config_from_argv(["run"]))) == (
        "python -m pipeline report"
    )
