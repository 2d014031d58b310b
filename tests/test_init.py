"""`python -m pipeline init DIR --data my.csv --label target`: a project that runs unedited,
whose edits are not served from the cache, and that compiles for Vertex from definitions/."""

import contextlib
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import uuid

import pytest

from pipeline.cli import main
from pipeline.config import REPO_ROOT
from pipeline.definition import build_config
from tests.test_zero_code import _SERVE_SCRIPT, MISSING, TYPES, _generate

pytestmark = pytest.mark.slow

IMAGE = "europe-docker.pkg.dev/proj/repo/pipeline:1"


printed = {}  # what `init` printed, filled by `project`


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(project folder, its CSV): `init` on generated multiclass data with missing values."""
    folder = tmp_path_factory.mktemp("init")
    data = _generate(folder)["multiclass"]
    project = folder / "tiers"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["init", str(project), "--data", str(data), "--label", "tier"]) == 0
    printed["init"] = out.getvalue()
    return project, data


def test_init_writes_what_zero_code_infers_and_refuses_to_overwrite(project, capsys):
    folder, data = project
    with open(folder / "pipeline.toml", "rb") as f:
        definition = tomllib.load(f)
    assert definition["name"] == "tiers"
    assert definition["data"] == {"path": f"../{data.name}", "schema": "schema.pbtxt"}
    assert definition["label"] == {"column": "tier", "task": "multiclass", "num_classes": 3}
    assert definition["preprocessing"]["fn"] == "preprocessing.py:preprocessing_fn"
    assert definition["model"]["build_estimator"] == "model.py:build_estimator"
    preprocessing = (folder / "preprocessing.py").read_text()
    assert 'NUMBERS = [\n    "noise",\n    "x1",\n    "x2",\n]' in preprocessing
    assert 'CATEGORIES = {\n    "city": "BYTES",\n    "rooms": "INT",\n}' in preprocessing
    # model.py builds the candidate zero code chose, and says why.
    model = (folder / "model.py").read_text()
    winner = re.search(r"the (\w+) candidate, the one zero code chose", model).group(1)
    built = {
        "linear": "LinearClassifier(",
        "wide_and_deep": "DNNLinearCombinedClassifier(",
        "boosted_trees": "BoostedTreesClassifier(",
    }
    assert f"estimator.{built[winner]}" in model
    # why: the lowest validation loss, or the best single one beside a served ensemble
    assert re.search(
        r"lowest validation loss of [23] candidates"
        r"|the best single one; the run serves an ensemble: the ensemble's validation loss",
        model,
    )
    schema = (folder / "schema.pbtxt").read_text()
    assert 'name: "city"' in schema and 'value: "north"' in schema

    with pytest.raises(SystemExit) as exit_info:
        main(["init", str(folder), "--data", str(data), "--label", "tier"])
    assert exit_info.value.code == 2
    assert "already has pipeline.toml, schema.pbtxt, preprocessing.py, model.py" in (
        capsys.readouterr().err
    )


def test_the_project_runs_unedited_as_init_printed_and_its_model_serves(
    project, tmp_path, monkeypatch, capsys
):
    """The command `init` printed runs (from another folder: the training shortened), and so
    does each command its summary then prints."""
    folder, data = project
    config = build_config(str(folder / "pipeline.toml"))
    assert config.preprocessing_fn == f"{folder}/preprocessing.py:preprocessing_fn"
    assert config.schema_path == str(folder / "schema.pbtxt")
    (command,) = [
        line.removeprefix("Edit them, then: ")
        for line in printed["init"].splitlines()
        if line.startswith("Edit them, then: ")
    ]
    monkeypatch.chdir(tmp_path)
    words = shlex.split(command)
    assert words[:4] == ["python", "-m", "pipeline", "run"], command
    shorter = ["--train-steps", "300", "--eval-steps", "5"]
    assert main([*words[3:], *shorter]) == 0
    summary = capsys.readouterr().out
    suggested = re.findall(r"`(python -m pipeline [^`]+)`", summary)
    # (no `schema` line: the project's schema is imported, not inferred)
    assert sorted(shlex.split(text)[3] for text in suggested) == ["predict", "report", "stats"]
    for text in suggested:
        assert main(shlex.split(text)[3:]) == 0, text
    pushed = re.search(r"pushed model: (\S+)", summary).group(1)
    jobs = [["multiclass", pushed, str(data), "tier"]]
    result = subprocess.run(
        [sys.executable, "-c", _SERVE_SCRIPT, json.dumps([jobs, TYPES, list(MISSING)])],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])["multiclass"]
    assert served["classes"] == ["high", "low", "mid"]
    assert served["accuracy"] > served["majority"] + 0.15


def test_an_edited_module_changes_the_cache_key(project, tmp_path):
    from pipeline.pipeline import create_components

    folder, _ = project
    edited = tmp_path / "tiers"
    shutil.copytree(folder, edited)
    shutil.copy(folder.parent / "tier.csv", tmp_path / "tier.csv")

    def fingerprints():
        components = create_components(build_config(str(edited / "pipeline.toml")))
        return {
            c.id: c.exec_properties["code_fingerprint"]
            for c in components
            if c.id in ("Transform", "Trainer")
        }

    before = fingerprints()
    assert all(len(value) == 64 for value in before.values())
    with open(edited / "preprocessing.py", "a") as f:
        f.write("\n# scale rooms as a number instead\n")
    after = fingerprints()
    assert after["Transform"] != before["Transform"]
    assert after["Trainer"] == before["Trainer"]


def test_the_project_compiles_for_vertex_from_definitions_only(project, tmp_path, capsys):
    folder, _ = project
    common = ["--out", str(tmp_path / "p.json"), "--image", IMAGE, "--task", "multiclass"]
    common += ["--num-classes", "3", "--data", "gs://bucket/tier.csv"]
    common += ["--pipeline-root", "gs://bucket/root", "--serving-model-dir", "/gcs/bucket/s"]
    assert main(["compile", "--definition", str(folder / "pipeline.toml"), *common]) == 2
    assert f"--preprocessing-fn {folder}/preprocessing.py:preprocessing_fn: {folder}/" in (
        capsys.readouterr().err
    )
    inside = REPO_ROOT / "definitions" / f"test-{uuid.uuid4().hex[:8]}"
    shutil.copytree(folder, inside)
    try:
        assert main(["compile", "--definition", str(inside / "pipeline.toml"), *common]) == 0
    finally:
        shutil.rmtree(inside)
    with open(tmp_path / "p.json") as f:
        spec = json.dumps(json.load(f))
    relative = inside.relative_to(REPO_ROOT).as_posix()
    assert f"{relative}/preprocessing.py:preprocessing_fn" in spec
    assert f"{relative}/model.py:build_estimator" in spec
    assert f"{relative}/schema.pbtxt" in spec
