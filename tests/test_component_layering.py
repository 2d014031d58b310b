"""The packages directly under components/ form layers: no two of them import each other.
The Estimator library (components/estimator) counts as a package of its own, under
all the others: it imports none of them.

Two-way imports tie packages into one, and make whichever imports first see the other half
built; a piece both need belongs in the lower package or a shared module (e.g.
`components.user_code.AUTO`). Every import counts, at module level or in a function.
"""

import ast
import pathlib

COMPONENTS = pathlib.Path(__file__).resolve().parents[1] / "components"
PACKAGES = {path.parent.name for path in COMPONENTS.glob("*/__init__.py")}
ESTIMATOR = "estimator"  # the Estimator library: the lowest layer


def _unit(parts):
    """The layer a module (its path parts under components/, or its dotted name's after
    `components`) belongs to: the package directly under components/."""
    return parts[0]


def _imported_modules(path: pathlib.Path, tree: ast.Module):
    """(dotted module name, line) of each import in `tree`, relative imports resolved."""
    package = ["components", *path.relative_to(COMPONENTS).parent.parts]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:  # `from components import auto` imports components.auto
                yield f"{module}.{alias.name}", node.lineno


def _package_imports() -> dict[tuple[str, str], list[str]]:
    """{(importing package, imported package): ["file:line", ...]} across packages."""
    edges = {}
    for path in sorted(COMPONENTS.rglob("*.py")):
        parts = path.relative_to(COMPONENTS).parts
        if len(parts) < 2:
            continue  # a shared module directly under components/
        tree = ast.parse(path.read_text(), str(path))
        importer = _unit(parts)
        for module, line in _imported_modules(path, tree):
            top, *names = module.split(".")
            if top != "components" or not names or names[0] not in PACKAGES:
                continue
            imported = _unit(names)
            if imported != importer:
                where = f"{path.relative_to(COMPONENTS.parent)}:{line}"
                edges.setdefault((importer, imported), []).append(where)
    return edges


def test_the_scan_sees_imports_in_functions_and_of_sub_packages():
    edges = _package_imports()
    assert ("auto", ESTIMATOR) in edges  # components.estimator, in functions
    assert ("tfx_compat", "exporter") in edges  # in a function


def test_no_two_component_packages_import_each_other():
    edges = _package_imports()
    two_way = [
        f"{a} <-> {b}: {', '.join(edges[a, b])} / {', '.join(edges[b, a])}"
        for a, b in sorted(edges)
        if a < b and (b, a) in edges
    ]
    assert not two_way, "packages that import each other:\n" + "\n".join(two_way)


def test_the_estimator_library_imports_no_component():
    edges = _package_imports()
    assert [edge for edge in edges if edge[0] == ESTIMATOR] == []
