"""The TF1 Estimator halves of TensorFlow's migration guides (tests/migrate_guide_programs.py)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py migrate_guide_programs`).  Each program runs
once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4,
`loose` ones within 35%, once the differences the kit keeps on purpose (docs/guide/
estimator.md) are taken out.
"""

import re

import pytest

from tests import migrate_guide_programs as programs
from tests.tf215_recordings import assert_close, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)

# Kept on purpose (docs/guide/estimator.md): the TF2 path's checkpoints carry no `.meta`;
# TF 2.21's SavedModels carry a `fingerprint.pb`; numpy_input_fn feeds tf.data, with no queue to summarize; a temporary
# model_dir is removed at exit, which its warning says.
KNOWN = re.compile(r"\.meta$|(^|/)fingerprint\.pb$|^enqueue_input/queue/.*_full$")
TEMPORARY = re.compile(r"^(Using temporary folder as model directory: <tmp>).*")
# The lines only a graph with a session logs (and a TF1 loader restoring one): the
# saved_model guide's model_fn uses no TF1 API but the global step, so it takes the TF2
# path.
GRAPH_ONLY_LINES = re.compile(
    r"^(Create CheckpointSaverHook|Graph was finalized|Running local_init_op|"
    r"Done running local_init_op|Signatures INCLUDED|Restoring parameters)"
)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def _without_known(value):
    if isinstance(value, dict):
        return {k: _without_known(v) for k, v in value.items() if not KNOWN.search(k)}
    if isinstance(value, list):
        return [_without_known(v) for v in value if not KNOWN.search(str(v))]
    if isinstance(value, str):
        return TEMPORARY.sub(r"\1", value)
    return value


def _exact(result, name):
    exact = _without_known(result["exact"])
    if name == "saved_model":
        exact = {k: v for k, v in exact.items() if k not in ("lines", "tf1_names")}
    return exact


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_guide_sees_what_it_saw_under_tf215(ours, name):
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    expected, got = _exact(theirs, name), _exact(ours[name], name)
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        assert got[key] == value, key


TOLERANCES = {"close": (1e-4, 1e-5), "loose": (0.35, 0.05)}
# The one `loose` part is checkpoint_saver's metrics after ten Adam steps from initial
# weights that are not 2.15's draws: its losses hold within 35%, its accuracy (a few of 40
# near-chance examples) moved from 0.0 to 0.25 with the tests run before it in the same
# process, so it is not compared.
NOT_COMPARED = {"loose": {"accuracy"}}


@pytest.mark.parametrize(
    "name, part",
    [
        (name, part)
        for name, recorded in sorted(RECORDED.items())
        for part in TOLERANCES
        if part in recorded
    ],
)
def test_guide_values_as_under_tf215(ours, name, part):
    left_out = NOT_COMPARED.get(part, set())
    theirs = {k: v for k, v in RECORDED[name][part].items() if k not in left_out}
    got = {k: v for k, v in ours[name][part].items() if k not in left_out}
    assert_close(got, theirs, name, *TOLERANCES[part])


def _without_graph_lines(lines):
    return [line for line in lines if not GRAPH_ONLY_LINES.match(line)]


def test_saved_model_guide_takes_the_tf2_path_as_documented(ours):
    """The saved_model guide's model_fn (predictions a tensor, `step.assign_add(1)` as
    the train op, a constant loss) uses no TF1 API but the global step, so the kit
    trains and exports it on the TF2 path: the same serving signature and outputs
    under other tensor names, and without the session's log lines."""
    theirs, got = RECORDED["saved_model"]["exact"], ours["saved_model"]["exact"]
    assert theirs["tf1_names"] == ["Placeholder:0", "add:0", [[-1], [-1]]]
    assert got["tf1_names"][2] == theirs["tf1_names"][2]
    assert got["tf1_names"][:2] != theirs["tf1_names"][:2]
    assert _without_graph_lines(theirs["lines"]) == _without_graph_lines(got["lines"])
    assert any(GRAPH_ONLY_LINES.match(line) for line in theirs["lines"])


def test_known_differences_are_what_2_15_recorded(ours):
    """What `_without_known` takes out is there: a queue tag in 2.15's numpy_input_fn
    runs, a `.meta` only in 2.15's TF1 graph run."""
    recorded = RECORDED["checkpoint_saver"]["exact"]["train_tags"]
    assert any(KNOWN.search(tag) for tag in recorded)
    assert not any(KNOWN.search(tag) for tag in ours["checkpoint_saver"]["exact"]["train_tags"])
    assert any(f.endswith(".meta") for f in RECORDED["saved_model"]["exact"]["model_files"])
