"""The kit's wheel: the framework alone (pipeline, components, kubeflow), none of the use
cases (transforms, models, schemas) that would collide with a team's own packages, and an
install of it that runs the zero-code pipeline from a folder outside the checkout."""

import os
import random
import re
import shlex
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from pipeline.config import REPO_ROOT

pytestmark = pytest.mark.slow

FRAMEWORK = {"pipeline", "components", "kubeflow"}
USE_CASES = {"transforms", "models", "schemas"}
PURELIB = "import sysconfig; print(sysconfig.get_path('purelib'))"
PIP = (sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet")


def _top_level(names):
    """The top-level packages among a wheel's (or an install's) file names; an install's
    RECORD also names its scripts, as ../../../bin/..."""
    tops = {name.split("/")[0] for name in names if "/" in name and not name.startswith("../")}
    return {top for top in tops if not top.endswith((".dist-info", ".data"))}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the checkout's sources, the use-case folders included
    (a build in the checkout itself could pick up a stale earlier build from its build/)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        (source / name).write_bytes((REPO_ROOT / name).read_bytes())
    for name in sorted(FRAMEWORK | USE_CASES):
        subprocess.run(["cp", "-r", str(REPO_ROOT / name), str(source)], check=True)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)],
        check=True,
    )
    (path,) = out.glob("*.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv with the wheel installed, and this environment's packages (installed
    from requirements.lock) on its path for the stack: a .pth line adds that folder but
    runs none of the .pth files in it, so neither the checkout's editable install nor the
    checkout itself is on the fresh venv's path."""
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    # Installed before the stack joins the path: pip then sees this venv alone.
    subprocess.run([*PIP, "--python", str(python), "install", "--no-deps", str(wheel)], check=True)
    site = subprocess.run([python, "-c", PURELIB], check=True, capture_output=True, text=True)
    site = site.stdout.strip()
    with open(os.path.join(site, "the_lock.pth"), "w") as f:
        f.write(sysconfig.get_path("purelib") + "\n")
    return python, site


def test_the_wheel_holds_the_framework_and_no_use_case(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert _top_level(names) == FRAMEWORK
    assert "pipeline/report/templates/report.html.j2" in names
    assert "components/estimator/__init__.py" in names
    (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as archive:
        assert "tfx-kit = pipeline.cli:main" in archive.read(entry_points).decode()


def test_an_install_has_no_use_case_and_imports_the_kit_from_itself(venv, tmp_path):
    python, site = venv
    (record,) = [
        os.path.join(site, name, "RECORD")
        for name in os.listdir(site)
        if name.startswith("tfx_estimator_kit-") and name.endswith(".dist-info")
    ]
    with open(record) as f:
        assert _top_level(line.split(",")[0] for line in f) == FRAMEWORK
    where = (
        "import importlib.util, pipeline, components.estimator; "
        "print(pipeline.__file__); print(components.estimator.__file__); "
        "print([n for n in ('transforms', 'models', 'schemas') if importlib.util.find_spec(n)])"
    )
    out = _run(python, ["-c", where], tmp_path).stdout.splitlines()
    assert all(path.startswith(site) for path in out[:2]), out
    assert out[2] == "[]"


def _write_csv(path, rows=240):
    """A small binary task the linear model learns: y from two numbers and a colour."""
    generator = random.Random(0)
    lines = ["x1,x2,colour,y"]
    for _ in range(rows):
        x1, x2 = generator.gauss(0, 1), generator.gauss(0, 1)
        colour = generator.choice(["red", "green", "blue"])
        y = int(x1 + 0.5 * x2 + (colour == "red") + generator.gauss(0, 0.5) > 0.3)
        lines.append(f"{x1:.4f},{x2:.4f},{colour},{y}")
    path.write_text("\n".join(lines) + "\n")


def _run(python, args, cwd):
    """`python args` in `cwd`, with no PYTHONPATH: only the venv's own path."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_an_install_runs_the_zero_code_pipeline_outside_the_checkout(venv, tmp_path):
    python, _ = venv
    assert not tmp_path.is_relative_to(REPO_ROOT)
    _write_csv(tmp_path / "my.csv")
    args = ["-m", "pipeline", "run", "--data", "my.csv", "--label", "y"]
    args += ["--candidate", "linear", "--train-steps", "40", "--eval-steps", "2"]
    result = _run(python, args, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # The run prints progress and a summary, not TensorFlow's or TensorBoard's warnings.
    assert not re.search(r"^(WARNING|INFO):(tensorflow|tensorboard):", result.stderr, re.M)
    # Outputs go under the current folder, as from the checkout.
    (version,) = os.listdir(tmp_path / "serving_model" / "my")
    assert (tmp_path / "serving_model" / "my" / version / "saved_model.pb").is_file()
    assert (tmp_path / "pipelines" / "my" / "metadata.sqlite").is_file()
    # The summary's predict line runs as printed, with no default definition installed.
    (predict,) = re.findall(
        r"predictions: `python (-m pipeline predict [^`]*)`", result.stdout + result.stderr
    )
    predicted = _run(python, shlex.split(predict), tmp_path)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    assert len(predicted.stdout.splitlines()) == 1 + 240  # a header, a line per row
