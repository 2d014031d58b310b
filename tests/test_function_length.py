"""No function of the kit's code is longer than MAX_LINES: a longer one does several
things, and its reader has to hold them all at once. Tests and benchmarks aside."""

import ast
import pathlib
import subprocess

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

MAX_LINES = 80

# Folders (top level) whose code is not the kit's: its tests and its benchmarks.
EXEMPT = ("tests", "bench")


def _kit_sources() -> list[pathlib.Path]:
    """The Python files git tracks or would (new ones), outside EXEMPT; a venv or build
    folder, which git ignores, is not the kit's code."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.py"],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    return [
        REPO_ROOT / name
        for name in listed
        if name and name.split("/")[0] not in EXEMPT and (REPO_ROOT / name).exists()
    ]


def long_functions(path: pathlib.Path, max_lines: int = MAX_LINES) -> list[str]:
    """'file:line name (N lines)' for each function in `path` longer than `max_lines`,
    counted from its `def` to its last line (nested functions count in their parent)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > max_lines:
                where = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_of_the_kit_is_over_80_lines():
    sources = _kit_sources()
    assert any(path.parts[-2:] == ("estimator", "training_loop.py") for path in sources)
    too_long = [entry for path in sources for entry in long_functions(path)]
    assert not too_long, f"functions over {MAX_LINES} lines:\n" + "\n".join(too_long)


def test_the_count_runs_from_def_to_last_line_and_includes_nested_functions(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(78))
    source = tmp_path / "module.py"
    source.write_text(
        f"def eighty():\n{body}\n    return x0\n\n"
        f"def eighty_one():\n{body}\n    def inner():\n        return 1\n"
    )
    assert long_functions(source) == [f"{source}:82 eighty_one (81 lines)"]
