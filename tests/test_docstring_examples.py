"""The usage examples of tf.estimator 2.15's API docstrings (tests/docstring_example_programs.py)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py docstring_example_programs`):
KMeans's training loop (cluster_centers, score, predict_cluster_index, transform, its
export's signatures), MultiHead (its doctest, and a model_fn with logits as a dict and as
one tensor), the parse-example-spec helpers feeding a DNNClassifier. Each program runs
once here (a module fixture); `exact` parts must be equal (the kit's known additions
left out, tests/tf215_recordings.py), `close` ones within 1e-4.
"""

import re

import pytest

from tests import docstring_example_programs as programs
from tests.tf215_recordings import assert_close, program_runs, recorded, without_known

RECORDED = recorded(programs)
# An object's repr names its class's module, the kit's here (not a difference in kind).
_OBJECT = re.compile(r"<[\w.]+\.(\w+) object>")


def _same_kind(value):
    """`value` without the kit's known additions, objects named by their class alone."""
    value = without_known(value)
    if isinstance(value, list):
        return [_OBJECT.sub(r"<\1 object>", v) if isinstance(v, str) else v for v in value]
    return value


ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_example_sees_what_it_saw_under_tf215(ours, name):
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    for key, expected in theirs["exact"].items():
        assert _same_kind(ours[name]["exact"][key]) == _same_kind(expected), key


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_example_values_as_under_tf215(ours, name):
    assert_close(_flat(ours[name]["close"]), _flat(RECORDED[name]["close"]), name)


def _flat(values, prefix=""):
    """{"outer/inner": value} of nested dicts (assert_close compares arrays)."""
    flat = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}/"))
        else:
            flat[prefix + key] = value
    return flat
