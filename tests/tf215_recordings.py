"""What the sample-family tests share: a family's recording under tf.estimator 2.15, its
programs run once here, and the comparison of the two.

A family is a module of programs (`tests/*_programs.py`) with `PROGRAMS` ({name:
program}) and `RECORDED` (the JSON its recorder under `tests/tf215/` wrote). A program
returns what a user would look at, split into `exact` parts (names, listings,
signatures, log lines, errors) and `close` values (losses, predictions).
"""

import json
import re

import numpy as np
import pytest

# Kept on purpose (docs/guide/estimator.md): the TF2 path's checkpoints carry no
# MetaGraph (`.meta`: it marks a checkpoint a TF1 graph wrote); TF 2.21's SavedModels
# carry a `fingerprint.pb`.
KNOWN = re.compile(r"\.meta$|(^|/)fingerprint\.pb$")


def recorded(module, part="programs"):
    """The family's recording under 2.15: {program: its result}."""
    with open(module.RECORDED) as f:
        return json.load(f)[part]


class ProgramRuns(dict):
    """{program: its result here}, each program run once, in its own folder, when a test
    first asks for it (so `-k` runs only what it selects)."""

    def __init__(self, module, workdir, run_one):
        super().__init__()
        self.module, self.workdir, self.run_one = module, workdir, run_one
        self.failed = {}  # {program: what it raised}, raised again to each test asking

    def __missing__(self, name):
        import components.estimator.install  # noqa: F401  (the programs say tf.estimator)

        if name in self.failed:
            raise self.failed[name]
        folder = self.workdir / name
        folder.mkdir()
        try:
            self[name] = self.run_one(self.module.PROGRAMS[name], str(folder))
        except Exception as error:
            self.failed[name] = error
            raise
        return self[name]


def program_runs(module, run_one=None):
    """A module-scoped fixture of the family's `ProgramRuns`; `run_one(program, folder)`
    calls one program (by default `program(tf, folder)`, as the recorders do)."""

    def call_with_tf(program, folder):
        import tensorflow as tf

        return program(tf, folder)

    @pytest.fixture(scope="module")
    def ours(tmp_path_factory):
        workdir = tmp_path_factory.mktemp(module.__name__.rsplit(".", 1)[-1])
        return ProgramRuns(module, workdir, run_one or call_with_tf)

    return ours


def without_known(value):
    """`value` without the kit's known additions (KNOWN), in keys and in lists of names."""
    if isinstance(value, dict):
        return {k: without_known(v) for k, v in value.items() if not KNOWN.search(k)}
    if isinstance(value, list):
        return [without_known(v) for v in value if not (isinstance(v, str) and KNOWN.search(v))]
    return value


def normalized(value, key=""):
    """`value` with KNOWN entries dropped, errors cut to their type and a summary tag's
    steps to their count (the tutorial-shaped families' exact parts)."""
    if key == "train_tags":  # {tag: steps}, or the tags alone: how many
        value = value if isinstance(value, dict) else dict.fromkeys(value)
        return {k: len(v or ()) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: normalized(v, k) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if len(value) == 2 and value[0].endswith("Error"):  # [type, message]
            return value[:1]
        return [v for v in value if not KNOWN.search(v)]
    return value


def assert_exact(ours, theirs, what=""):
    """Every `exact` part 2.15 recorded, equal here (after `without_known`)."""
    assert sorted(ours) == sorted(theirs), what
    for key, expected in theirs.items():
        assert without_known(ours[key]) == without_known(expected), f"{what} {key}"


def assert_close(ours, theirs, what="", rtol=1e-4, atol=1e-5):
    """Every value 2.15 recorded (nested dicts flattened), within the tolerance here."""
    ours, theirs = flat(ours), flat(theirs)
    assert sorted(ours) == sorted(theirs), what
    for key, expected in theirs.items():
        np.testing.assert_allclose(
            ours[key], expected, rtol=rtol, atol=atol, err_msg=f"{what} {key}"
        )


def flat(values, prefix=""):
    """{"outer/inner": value} of nested dicts."""
    flattened = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flattened.update(flat(value, f"{prefix}{key}/"))
        else:
            flattened[prefix + key] = value
    return flattened


class ComparedWithTf215:
    """The tests every family shares, for its test module to subclass as `Test<Family>`:
    each program recorded, its `exact` parts equal to 2.15's and its values within
    `tolerances`. The module holds the family's runs (`ours = program_runs(programs)`, a
    fixture its other tests share too); a subclass narrows the programs compared
    (`compared`, marks allowed) and takes a difference the kit keeps on purpose out of
    the exact parts (`kept`)."""

    programs = None  # the family's module
    tolerances = {"close": (1e-4, 1e-5)}  # {part: (rtol, atol)}, for each part 2.15 recorded

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.recorded = recorded(cls.programs)

    def compared(self):
        return list(self.programs.PROGRAMS)

    def kept(self, name, ours, theirs):
        """A program's exact parts here and under 2.15, with kept differences taken out."""
        return ours, theirs

    def pytest_generate_tests(self, metafunc):
        if "name" in metafunc.fixturenames:
            metafunc.parametrize("name", self.compared())

    def test_every_program_is_recorded(self):
        assert sorted(self.recorded) == sorted(self.programs.PROGRAMS)

    def test_sees_what_it_saw_under_tf215(self, ours, name):
        assert sorted(ours[name]) == sorted(self.recorded[name]), name
        assert_exact(*self.kept(name, ours[name]["exact"], self.recorded[name]["exact"]), name)

    def test_values_as_under_tf215(self, ours, name):
        for part, (rtol, atol) in self.tolerances.items():
            if part in self.recorded[name]:
                assert_close(ours[name][part], self.recorded[name][part], name, rtol, atol)
