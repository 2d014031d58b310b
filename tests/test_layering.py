"""The import graph of the kit's code (pipeline/, components/, kubeflow/) runs one way: every
unit sits in a layer declared once below (LAYERS) and imports only from its own layer or
lower ones, and no units or modules import one another round a cycle. And no module but
pipeline/metadata.py reaches ML Metadata: the store's layout is known in one place.

Every import counts, at module level or inside a function: a lazy import is a dependency
all the same, and a cycle makes what a module holds depend on which one was imported first.
A piece that a lower layer needs belongs in that layer (e.g. `components.user_code.AUTO`).

A unit is a package (a folder with its __init__.py: `components.trainer`, `pipeline.report`,
`kubeflow`), the top folders' own modules aside: each module directly under components/ is
a shared helper and a unit of its own, `pipeline/__main__.py` (the entry point) is one too,
and pipeline/'s other modules form the unit `pipeline`.
"""

import ast
import itertools
import pathlib

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

FOLDERS = ("components", "kubeflow", "pipeline")

# Lowest first: (what the layer is, its units). A unit may import units of its own layer and
# of the layers before it; a new package or shared module must be placed here.
LAYERS = (
    ("the Estimator library, and components' package root", {"components.estimator", "components"}),
    (
        "shared component modules",
        {
            "components.beam_executor",
            "components.example_encoding",
            "components.examples_reader",
            "components.input_fingerprint",
            "components.model_registry",
            "components.progress",
            "components.schema_file",
            "components.serving_dir",
            "components.tfrecord_files",
            "components.user_code",
        },
    ),
    (
        "the data and release components",
        {
            "components.schema_importer",
            "components.example_gen",
            "components.statistics_gen",
            "components.schema_gen",
            "components.example_validator",
            "components.transform",
            "components.evaluator",
            "components.pusher",
        },
    ),
    (
        "the model builders: zero-code models, the serving export",
        {"components.auto", "components.exporter"},
    ),
    ("the Trainer", {"components.trainer"}),
    ("TFX 1.x's API over the kit's stand-ins", {"components.tfx_compat", "components.tfx_v1"}),
    # Imports nothing of the kit: the image's launcher bridge and the local runner of a
    # compiled spec, which `pipeline compile` uses to order the tasks it lists.
    ("Kubeflow and Vertex AI support", {"kubeflow"}),
    ("the pipeline: settings, definition, ML Metadata, runs", {"pipeline"}),
    ("the run report", {"pipeline.report"}),
    ("the command line", {"pipeline.cli", "pipeline.__main__"}),
)


def python_modules(root):
    """{dotted module name: path} of the Python files in packages under `root`'s FOLDERS."""
    found = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if not (path.parent / "__init__.py").exists():
                continue
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def unit_of(module, modules):
    """The unit (see the docstring above) that `module`, a key of `modules`, belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return module
    if f"{parts[0]}.{parts[1]}" not in modules:
        raise ValueError(f"{module}: not a module of the kit")
    is_package = modules[f"{parts[0]}.{parts[1]}"].name == "__init__.py"
    if is_package or parts[0] == "components" or parts[1] == "__main__":
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _package_of(module, path):
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imports(root, modules):
    """(importing module, imported module, "file:line") for each import among `modules`,
    relative ones resolved; `from a import b` imports the module a.b where there is one."""
    for module, path in modules.items():
        package = _package_of(module, path).split(".")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                imported = ".".join([*base, *([node.module] if node.module else [])])
                names = [
                    f"{imported}.{alias.name}"
                    if f"{imported}.{alias.name}" in modules
                    else imported
                    for alias in node.names
                ]
            else:
                continue
            where = f"{path.relative_to(root)}:{node.lineno}"
            for name in names:
                # `import a.b.c` where c is a name, not a module: the longest module it names.
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name.split(".")[0] in FOLDERS:
                    yield module, name, where


def unit_imports(root):
    """{(importing unit, imported unit): ["file:line", ...]} between different units."""
    modules = python_modules(root)
    edges = {}
    for importer, imported, where in imports(root, modules):
        pair = (unit_of(importer, modules), unit_of(imported, modules))
        if pair[0] != pair[1]:
            edges.setdefault(pair, []).append(where)
    return edges


def layer_index(layers):
    """{unit: the position of its layer in `layers`}; ValueError for a unit in two layers."""
    index = {}
    for position, (name, units) in enumerate(layers):
        for unit in units:
            if unit in index:
                raise ValueError(f"{unit} is in two layers: {layers[index[unit]][0]!r}, {name!r}")
            index[unit] = position
    return index


def upward_imports(root, layers=LAYERS):
    """ "file:line: A (layer) imports B (a higher layer)" for each import from a unit to one in
    a later layer of `layers`, or to a unit no layer holds."""
    index = layer_index(layers)
    found = []
    for (importer, imported), places in sorted(unit_imports(root).items()):
        for unit in (importer, imported):
            if unit not in index:
                found.append(f"{places[0]}: {unit} is in no layer (place it in LAYERS)")
        if importer in index and imported in index and index[imported] > index[importer]:
            found += [
                f"{where}: {importer} ({layers[index[importer]][0]}) imports {imported}, of a "
                f"higher layer ({layers[index[imported]][0]})"
                for where in places
            ]
    return found


def find_cycle(graph):
    """One cycle of `graph` ({node: the nodes it points at}) as [a, b, ..., a], or None."""
    done, path = set(), []

    def visit(node):
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


def unit_cycle(root):
    """One cycle of units importing one another under `root`, with the first import of each
    step, or None."""
    edges = unit_imports(root)
    graph = {}
    for importer, imported in edges:
        graph.setdefault(importer, set()).add(imported)
    cycle = find_cycle(graph)
    if cycle is None:
        return None
    return [f"{a} -> {b} ({edges[a, b][0]})" for a, b in itertools.pairwise(cycle)]


def module_graph(root=REPO_ROOT):
    """{module: the modules it imports, with the packages importing them runs first}, but its
    own packages, which are being imported already when it runs."""
    modules = python_modules(root)
    graph = {name: set() for name in modules}
    for importer, imported, _ in imports(root, modules):
        parts = imported.split(".")
        graph[importer] |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    for name, imported in graph.items():
        parts = name.split(".")
        imported -= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return graph


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# A small tree with the kit's folders: the Estimator library under the Trainer, as in LAYERS.
_SMALL_TREE = {
    "components/__init__.py": "",
    "components/estimator/__init__.py": "",
    "components/estimator/head.py": "import os\n",
    "components/trainer/__init__.py": "",
    "components/trainer/executor.py": "from components.estimator import head\n",
    "pipeline/__init__.py": "",
    "pipeline/runner.py": "def run():\n    from components.trainer import executor\n",
    "kubeflow/__init__.py": "",
}
_SMALL_LAYERS = (
    ("low", {"components", "components.estimator"}),
    ("middle", {"components.trainer", "kubeflow"}),
    ("high", {"pipeline"}),
)


def test_the_checker_passes_a_tree_that_imports_downward(tmp_path):
    _write(tmp_path, _SMALL_TREE)
    assert upward_imports(tmp_path, _SMALL_LAYERS) == []
    assert unit_imports(tmp_path) == {
        ("components.trainer", "components.estimator"): ["components/trainer/executor.py:1"],
        ("pipeline", "components.trainer"): ["pipeline/runner.py:2"],
    }
    assert unit_cycle(tmp_path) is None


def test_the_checker_names_the_file_and_line_of_an_upward_import(tmp_path):
    """Planted in a function, relative, and through `from package import module`."""
    _write(tmp_path, _SMALL_TREE)
    (tmp_path / "components/estimator/head.py").write_text(
        "import os\n\n\ndef build():\n    from ..trainer import executor\n"
    )
    (tmp_path / "kubeflow/runner.py").write_text("from pipeline import runner\n")
    assert upward_imports(tmp_path, _SMALL_LAYERS) == [
        "components/estimator/head.py:5: components.estimator (low) imports components.trainer,"
        " of a higher layer (middle)",
        "kubeflow/runner.py:1: kubeflow (middle) imports pipeline, of a higher layer (high)",
    ]


def test_the_checker_finds_a_cycle_within_a_layer_and_a_unit_in_none(tmp_path):
    _write(tmp_path, _SMALL_TREE)
    (tmp_path / "kubeflow/image.py").write_text("import components.trainer.executor\n")
    (tmp_path / "components/trainer/launch.py").write_text("import kubeflow.image\n")
    assert upward_imports(tmp_path, _SMALL_LAYERS) == []
    assert unit_cycle(tmp_path) == [
        "components.trainer -> kubeflow (components/trainer/launch.py:1)",
        "kubeflow -> components.trainer (kubeflow/image.py:1)",
    ]
    _write(tmp_path, {"components/helper.py": "from components.estimator import head\n"})
    assert upward_imports(tmp_path, _SMALL_LAYERS) == [
        "components/helper.py:1: components.helper is in no layer (place it in LAYERS)"
    ]


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_unit_of_the_kit_sits_in_one_layer():
    modules = python_modules(REPO_ROOT)
    units = {unit_of(module, modules) for module in modules}
    declared = set(layer_index(LAYERS))
    assert units - declared == set(), "units in no layer: place them in LAYERS"
    assert declared - units == set(), "LAYERS names units the kit no longer has"


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    upward = upward_imports(REPO_ROOT)
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def test_no_units_import_one_another_round_a_cycle():
    cycle = unit_cycle(REPO_ROOT)
    assert cycle is None, "units that import one another:\n" + "\n".join(cycle)


def test_the_scan_sees_imports_in_functions_of_every_folder():
    edges = unit_imports(REPO_ROOT)
    assert ("components.trainer", "components.auto") in edges  # in a function
    assert ("components.tfx_compat", "components.exporter") in edges  # in a function
    assert ("pipeline.cli", "kubeflow") in edges  # in a function
    assert ("pipeline.report", "pipeline") in edges


def test_no_modules_import_one_another_round_a_cycle():
    graph = module_graph()
    assert {
        "pipeline.report.collect",
        "pipeline.__main__",
        "components.trainer.executor",
        "components.estimator.head",
    } <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_metadata_reader_depends_on_no_other_pipeline_module():
    """Every command reads ML Metadata through pipeline/metadata.py, which must not import
    the modules that read through it."""
    graph = module_graph()
    assert graph["pipeline.metadata"] == set()
    readers = ("history", "recovery", "runner", "report.collect", "stats")
    assert all("pipeline.metadata" in graph[f"pipeline.{module}"] for module in readers)


def ml_metadata_access(root):
    """ "file:line: what" for each place outside pipeline/metadata.py that imports ml_metadata
    or calls a method of its MetadataStore (by name: `get_artifacts_by_uri`, `put_execution`,
    ...) on whatever it holds."""
    from ml_metadata.metadata_store.metadata_store import MetadataStore

    store_methods = {name for name in vars(MetadataStore) if name.startswith(("get_", "put_"))}
    found = []
    for module, path in python_modules(root).items():
        if module == "pipeline.metadata":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = (str(path.relative_to(root)), getattr(node, "lineno", 0))
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                if isinstance(node, ast.Attribute) and node.attr in store_methods:
                    found.append((*where, f".{node.attr}"))
                continue
            found += [(*where, f"imports {n}") for n in names if n.split(".")[0] == "ml_metadata"]
    return [f"{path}:{line}: {what}" for path, line, what in sorted(found)]


def test_the_metadata_check_finds_a_store_call_and_an_import(tmp_path):
    _write(tmp_path, _SMALL_TREE)
    _write(
        tmp_path,
        {
            "pipeline/metadata.py": "from ml_metadata import metadata_store\n",
            "pipeline/recovery.py": (
                "def cancel(store, execution):\n"
                "    from ml_metadata.proto import metadata_store_pb2\n\n"
                "    store.put_executions([execution])\n"
            ),
        },
    )
    assert ml_metadata_access(tmp_path) == [
        "pipeline/recovery.py:2: imports ml_metadata.proto",
        "pipeline/recovery.py:4: .put_executions",
    ]


def test_only_the_metadata_reader_touches_ml_metadata():
    """The store's layout is known in one place: pipeline/metadata.py."""
    found = ml_metadata_access(REPO_ROOT)
    assert not found, "ML Metadata reached outside pipeline/metadata.py:\n" + "\n".join(found)
