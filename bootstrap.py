#!/usr/bin/env python3
"""Sets up `.venv` from the pinned lock file, then runs the pipeline or the tests.

    python3 bootstrap.py run [pipeline options]   # python -m pipeline run ...
    python3 bootstrap.py test [pytest options]    # python -m pytest -n 2 --dist loadfile ...
                                                  # (and Debian's chromium, if missing)
    python3 bootstrap.py lint                     # ruff format --check, ruff check
    python3 bootstrap.py docs                     # mkdocs build --strict into build/site
    python3 bootstrap.py docs --serve [PORT]      # ... then serve it on 127.0.0.1 (search
                                                  # needs a server: a page from disk has none)

Needs only `python3` (3.11-3.12) and access to the package index.  The
environment is installed once; later calls reuse it unless `requirements.lock`
or `pyproject.toml` changed.  Standard library only: it runs before anything
is installed.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".installed-lock-sha256"
UV_VERSION = "0.13.9"
# Part of the stamp: a change in how the environment is set up refreshes existing ones.
SETUP_VERSION = b"3: bytecode compiled, the checkout on the path"
# In .venv's site-packages: the checkout's folder on the import path (see _checkout_on_path).
CHECKOUT_PTH = "tfx_kit_checkout.pth"
# tests/test_report.py opens the run report in Debian's Chromium.
CHROMIUM = Path("/usr/bin/chromium")
# `python3 bootstrap.py docs` writes the site here (under build/, which git ignores).
DOCS_SITE = ROOT / "build" / "site"


def _lock_digest():
    digest = hashlib.sha256(SETUP_VERSION)
    for name in ("requirements.lock", "pyproject.toml"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def _run(*cmd):
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def ensure_environment():
    """Creates or refreshes `.venv`; does nothing when it is already current."""
    wanted = _lock_digest()
    if PYTHON.exists() and STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    print(f"Setting up {VENV} (first run takes a few minutes) ...", file=sys.stderr, flush=True)
    if not PYTHON.exists():
        _run(sys.executable, "-m", "venv", VENV)
    uv = VENV / "bin" / "uv"
    if not uv.exists():
        _run(PYTHON, "-m", "pip", "install", "--quiet", f"uv=={UV_VERSION}")
    # Bytecode compiled at install: where PYTHONDONTWRITEBYTECODE is set (as on this
    # project's machines) Python never caches it, and every process that imports TensorFlow
    # compiled its sources again: 18 s of the 20 s import.
    _run(
        uv, "pip", "sync", "--quiet", "--compile-bytecode", "--python", PYTHON, "requirements.lock"
    )
    _run(uv, "pip", "install", "--quiet", "--python", PYTHON, "--no-deps", "-e", ".")
    _checkout_on_path()
    STAMP.write_text(wanted + "\n")


def _checkout_on_path():
    """The kit's wheel holds the framework alone (pyproject.toml): the use cases' packages
    (transforms, models, schemas) are imported from the checkout. A .pth file puts it on
    .venv's path, so that they import from any folder and in any process .venv starts, as
    the pipeline image's PYTHONPATH does there."""
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = subprocess.run([PYTHON, "-c", where], check=True, capture_output=True, text=True)
    (Path(site.stdout.strip()) / CHECKOUT_PTH).write_text(f"{ROOT}\n")


def ensure_chromium():
    """Installs Debian's chromium when it is missing and apt-get is there (as root, or
    through sudo); otherwise says what the report tests then need."""
    if CHROMIUM.exists():
        return
    apt = shutil.which("apt-get")
    sudo = [] if os.geteuid() == 0 else [shutil.which("sudo")]
    if apt is None or None in sudo:
        print(
            f"{CHROMIUM} is missing and cannot be installed here (no apt-get, or not root "
            "and no sudo): tests/test_report.py will fail until Debian's chromium is installed.",
            file=sys.stderr,
        )
        return
    print("Installing Debian's chromium for tests/test_report.py ...", file=sys.stderr, flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (["update", "-qq"], ["install", "-y", "-qq", "chromium"]):
        subprocess.run([*sudo, apt, *args], check=True, env=env, stdout=subprocess.DEVNULL)


def lint():
    """Fails fast, naming the command that fixes it, when the tree is off-style."""
    ruff = VENV / "bin" / "ruff"
    checks = [
        ([ruff, "format", "--check", "."], f"{ruff} format ."),
        ([ruff, "check", "."], f"{ruff} check --fix .  (then fix by hand what remains)"),
    ]
    for cmd, fix in checks:
        if subprocess.run([str(c) for c in cmd], cwd=ROOT).returncode != 0:
            print(f"\nStyle check failed. To fix: {fix}", file=sys.stderr)
            return 1
    return 0


DOCS_PORT = 8000


def docs(args=()):
    """Builds the docs site (`mkdocs.yml`, pages under `docs/`) into `build/site`, in strict
    mode: a broken link, a page missing from the nav or any other warning fails the build.
    With `--serve [PORT]`, serves it on 127.0.0.1 until interrupted: every page works opened
    from disk but search, which runs in a web worker that a browser starts only for a page
    with an origin."""
    serve = bool(args) and args[0] == "--serve"
    if (args and not serve) or len(args) > 2 or (len(args) == 2 and not args[1].isdigit()):
        print("usage: python3 bootstrap.py docs [--serve [PORT]]", file=sys.stderr)
        return 2
    mkdocs = VENV / "bin" / "mkdocs"
    cmd = [mkdocs, "build", "--strict", "--clean", "--site-dir", DOCS_SITE]
    if subprocess.run([str(c) for c in cmd], cwd=ROOT).returncode != 0:
        print("\nDocs build failed: fix the warnings above (mkdocs, strict mode).", file=sys.stderr)
        return 1
    print(f"Docs site: {DOCS_SITE}/index.html", file=sys.stderr)
    if not serve:
        print(
            "  (search needs the site served: python3 bootstrap.py docs --serve)", file=sys.stderr
        )
        return 0
    port = int(args[1]) if len(args) == 2 else DOCS_PORT
    print(f"Serving it at http://127.0.0.1:{port}/index.html (Ctrl-C stops)", file=sys.stderr)
    cmd = [PYTHON, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", DOCS_SITE]
    try:
        return subprocess.run([str(c) for c in cmd], cwd=ROOT).returncode
    except KeyboardInterrupt:
        return 0


def _parallel(pytest_args):
    """Two pytest-xdist workers, one test file at a time each, unless the arguments choose
    (`-n ...`, `-p no:xdist`): on this project's 2-core machines the whole suite took 27
    minutes so, against 42 serially (docs/testing.md)."""
    for arg in pytest_args:
        if arg.startswith(("-n", "--numprocesses")) or "no:xdist" in arg:
            return []
    return ["-n", "2", "--dist", "loadfile"]


def main(argv):
    if not argv or argv[0] not in ("run", "test", "lint", "docs"):
        print(__doc__, file=sys.stderr)
        return 2
    ensure_environment()
    command, rest = argv[0], argv[1:]
    if command == "lint":
        return lint()
    if command == "docs":
        return docs(rest)
    if command == "run":
        cmd = [str(PYTHON), "-m", "pipeline", "run", *rest]
    else:
        ensure_chromium()
        cmd = [str(PYTHON), "-m", "pytest", *_parallel(rest), *rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
