"""The modules of `pipeline/` import one another without a cycle, lazy imports included: a
cycle makes what a module holds depend on which of them was imported first."""

import ast

from pipeline.config import REPO_ROOT

PACKAGE = REPO_ROOT / "pipeline"
# Being replaced (the CLI, and the report becoming a package); checked once they settle.
SKIPPED = ("__main__", "report")


def module_name(path):
    """`history` for pipeline/history.py, `cli.options` for pipeline/cli/options.py, `cli`
    for pipeline/cli/__init__.py."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def pipeline_imports(path, modules):
    """Which of `modules` (names under `pipeline`) the file at `path` imports, anywhere in
    it (lazy imports too), with the packages that importing them runs first; not its own
    packages, which are being imported already when it runs."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from pipeline.cli import options` imports a module; `from pipeline.x import y`, x.
            names = [
                f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}".removeprefix("pipeline.") in modules
                else node.module
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            parts = name.split(".")[1:] if name.startswith("pipeline.") else []
            found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    own = module_name(path).split(".")
    return (found & set(modules)) - {".".join(own[:i]) for i in range(1, len(own) + 1)}


def import_graph():
    """{module: the modules of `pipeline` it imports}, for those under pipeline/ but SKIPPED
    and the package's own __init__."""
    paths = [
        path
        for path in PACKAGE.rglob("*.py")
        if path.parent == PACKAGE or (path.parent / "__init__.py").exists()
    ]
    modules = {module_name(path): path for path in paths if path != PACKAGE / "__init__.py"}
    modules = {n: p for n, p in modules.items() if not n.split(".")[0].startswith(SKIPPED)}
    return {name: pipeline_imports(path, modules) for name, path in modules.items()}


def find_cycle(graph):
    """One import cycle of `graph` as [a, b, ..., a], or None."""
    done, path = set(), []

    def visit(module):
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for imported in sorted(graph[module]):
            cycle = visit(imported)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_pipeline_modules_import_without_a_cycle():
    graph = import_graph()
    assert {"history", "metadata", "recovery", "runner"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_metadata_reader_depends_on_no_other_pipeline_module():
    """Every command reads ML Metadata through pipeline/metadata.py, which must not import
    the modules that read through it."""
    graph = import_graph()
    assert graph["metadata"] == set()
    assert all("metadata" in graph[module] for module in ("history", "recovery", "runner"))
