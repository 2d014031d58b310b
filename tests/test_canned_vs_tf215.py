"""The differential suite: tests/canned_programs.py here against tf.estimator 2.15's record.

Every canned estimator with its defaults and each optimizer name, the arguments whose
handling changes a model quietly, every serving receiver under each head, and
`LoggingTensorHook`'s lines: run once under 2.15
(`tests/tf215/record_canned_programs.py`), run here, compared.  Predictions and
metrics agree to each program's tolerance (1e-4 where both sides are deterministic),
signatures and log lines exactly, and a program 2.15 refused is refused here.
"""

import importlib
import json
import re

import numpy as np
import pytest

from components import estimator
from tests import canned_programs as programs


def _namespace(name):
    """The kit's module for a namespace: `tf.estimator` is the package itself,
    `tf.compat.v1.estimator` its compat_v1 module (if that has landed)."""
    if name == "v2":
        return estimator
    return importlib.import_module("components.estimator.compat_v1")


# Constructor parameters the kit adds after tf.estimator 2.15's.
KIT_ADDITIONS = {"DNNLinearCombinedEstimator": ["warm_start_from"]}

with open(programs.RECORDED) as _f:
    RECORDED = json.load(_f)["programs"]


def _floats_close(ours, theirs, tolerance, what):
    assert sorted(ours) == sorted(theirs), what
    tolerance = dict(tolerance)
    only = tolerance.pop("only", None)
    for key, expected in theirs.items():
        if only is not None and key not in only:
            continue
        got = ours[key]
        if expected and isinstance(np.ravel(expected)[0], str):
            assert got == expected, f"{what}[{key!r}]"
        else:
            np.testing.assert_allclose(got, expected, **tolerance, err_msg=f"{what}[{key!r}]")


def check(name, ours, theirs, tolerance):
    """`ours` against 2.15's record `theirs` for the program `name`."""
    assert sorted(ours) == sorted(theirs), name
    if "error" in theirs:
        assert ours == theirs, name
    if "predictions" in theirs and tolerance is programs.EXACT:
        _floats_close(ours["predictions"], theirs["predictions"], tolerance, f"{name} predictions")
    if "metrics" in theirs:
        _floats_close(ours["metrics"], theirs["metrics"], tolerance, f"{name} metrics")
    if "parameters" in theirs:  # 2.15's parameters in order; the kit's additions after
        for class_name, expected in theirs["parameters"].items():
            got = ours["parameters"][class_name]
            assert got[: len(expected)] == expected, f"{name} {class_name}"
            assert [p for p, _ in got[len(expected) :]] in ([], KIT_ADDITIONS.get(class_name))
    for exact in ("signatures", "logs"):
        if exact in theirs:
            assert ours[exact] == theirs[exact], f"{name} {exact}"


def _run(program, workdir):
    try:
        return program.run(_namespace(program.namespace), str(workdir))
    except Exception as error:
        return {"error": type(error).__name__, "message": str(error)}


def _marked(name):
    marks = []
    if not programs.FAST.match(name):
        marks.append(pytest.mark.slow)
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", [_marked(name) for name in sorted(programs.PROGRAMS)])
def test_program_behaves_as_under_tf215(name, tmp_path):
    program = programs.PROGRAMS[name]
    assert name in RECORDED, f"{name} has no 2.15 record: run tests/tf215/record_canned_programs.py"
    ours = _run(program, tmp_path)
    if "error" in ours and "error" not in RECORDED[name]:
        pytest.fail(f"{name} raised {ours['error']}: {ours['message']}")
    ours.pop("message", None)
    check(name, ours, RECORDED[name], program.tolerance)


def test_every_recorded_program_is_in_the_table():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def test_the_table_covers_every_canned_class_of_each_namespace():
    """At least one program per canned class (and per optimizer name) in each namespace."""
    classes = programs.CANNED_CLASSES
    for namespace in {program.namespace for program in programs.PROGRAMS.values()}:
        names = [n for n in programs.PROGRAMS if n.startswith(namespace + "/")]
        for class_name in classes:
            snake = class_name.replace("DNN", "Dnn")
            snake = "".join("_" + c.lower() if c.isupper() else c for c in snake).lstrip("_")
            assert any(n.split("/")[1] == snake for n in names), (namespace, class_name)
        for optimizer in programs.OPTIMIZER_NAMES:
            assert f"{namespace}/dnn_classifier/{optimizer.lower()}" in names


def test_a_warm_start_regex_that_matches_no_variable_is_named(tmp_path, caplog):
    """2.15 passed over it in silence: a model could be warm-started with nothing."""
    settings = estimator.WarmStartSettings(
        programs.os.path.join(programs.INIT_DIR, "dnn_1"),
        vars_to_warm_start=["dnn/hiddenlayer_.*", "linear/nothing_by_this_name.*"],
    )
    model = programs.build(estimator, "DNNClassifier", str(tmp_path), warm_start_from=settings)
    with caplog.at_level("WARNING", logger="tensorflow"):
        model.train(programs.train_input_fn("binary"), steps=1)
    named = [r.getMessage() for r in caplog.records if "matches none" in r.getMessage()]
    assert len(named) == 1 and "'linear/nothing_by_this_name.*'" in named[0]
    assert "dnn/hiddenlayer_0/kernel" in named[0]  # the names it could have matched


def test_logging_tensor_hook_on_the_tf2_path_writes_2_15s_lines(tmp_path):
    """A canned estimator's own logs (`loss`, `global_step`) under a dict's labels, in
    the lines the graph path (TF1's hook) writes."""
    model = programs.build(estimator, "LinearClassifier", str(tmp_path))
    hook = estimator.LoggingTensorHook({"the_loss": "loss", "at": "global_step"}, every_n_iter=3)
    with programs.LogLines(tags=["at = "]) as logs:
        model.train(programs.train_input_fn("binary"), steps=7, hooks=[hook])
    lines = [line for line in logs.messages() if line.startswith("at = ")]
    assert len(lines) == 3  # steps 1, 4 and 7
    assert re.fullmatch(r"at = 1, the_loss = 0\.693147\d*", lines[0]), lines[0]
    assert all(line.endswith(" (<elapsed> sec)") for line in lines[1:]), lines
