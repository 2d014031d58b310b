"""TF1-style programs in the shape of public samples, here against tf.estimator 2.15.

`tests/tf1_fidelity_programs.py` was run once under tf.estimator 2.15
(`tests/tf215/record_tf1_fidelity.py`, into `tests/data/tf215/tf1_fidelity.json`);
here the same programs run on this kit: the order of every hook's calls, a user's
CheckpointSaverHook, model_dir's files and events, the Estimator's log lines,
multi-mode SavedModels, input_fn shapes, warm starts, LoggingTensorHook's formatter,
Scaffolds and what 2.15 refused.
"""

import json
import os

import pytest

from components import estimator
from tests import tf1_fidelity_programs as programs

RECORDED = os.path.join(os.path.dirname(__file__), "data", "tf215", "tf1_fidelity.json")


def _recorded():
    with open(RECORDED) as f:
        return json.load(f)["programs"]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """{program: (its result here, 2.15's recorded one)}, each program run once here."""
    import components.estimator.install  # noqa: F401  (the samples say tf.compat.v1.estimator)

    recorded = _recorded()
    workdir = tmp_path_factory.mktemp("fidelity")
    return {
        name: (program(estimator, str(workdir / name)), recorded[name])
        for name, program in programs.PROGRAMS.items()
    }


def test_every_program_is_recorded():
    assert sorted(_recorded()) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize(
    "name",
    [
        # The saver hook, the spec's chief hooks, train()'s hooks, the spec's training
        # hooks, each saving listener's calls between them; evaluate's and predict's.
        "hook_protocol",
        # The Estimator adds no saver beside the user's and hands it the listeners.
        "own_checkpoint_saver",
        # Checkpoints kept, graph.pbtxt, events' tags and steps, eval's checkpoint_path.
        "model_dir_contents",
        # "Calling model_fn.", evaluation's progress and "Saving dict" lines, the export's
        # signature report.
        "log_lines",
        # TRAIN, EVAL and PREDICT MetaGraphs in one SavedModel, and what they compute.
        "export_all_modes",
        # Params deep-copied (an init_fn's note in them stays inside), a Scaffold's saver.
        "scaffold_and_config",
        "stock_hook_options",
    ],
)
def test_program_gives_what_2_15_gave(both, name):
    ours, theirs = both[name]
    assert ours == theirs


@pytest.mark.parametrize("name", ["input_fn_shapes", "warm_start_settings"])
def test_trained_values_match_2_15(both, name):
    ours, theirs = both[name]
    assert sorted(ours) == sorted(theirs)
    for key, expected in theirs.items():
        if isinstance(expected, dict):
            assert ours[key] == pytest.approx(expected, abs=1e-5), key
        elif isinstance(expected, list) and expected and isinstance(expected[0], list):
            for got, want in zip(ours[key], expected, strict=True):
                assert got == pytest.approx(want, abs=1e-5), key
        else:
            assert ours[key] == pytest.approx(expected, abs=1e-5), key


# A word of 2.15's message that the kit's says too, for each refusal.
GISTS = {
    "steps_and_max_steps": "both steps and max_steps",
    "zero_steps": "steps > 0",
    "zero_eval_steps": "steps > 0",
    "dict_from_model_fn": "should return an EstimatorSpec",
    "no_train_op": "train_op",
    "metric_not_a_pair": "(metric_value, update_op) tuples",
    "hook_not_a_hook": "must be SessionRunHook instances",
    "unexpected_model_fn_arg": "not expected args: ['extra']",
    "train_hooks_not_hooks": "Hooks must be a SessionRunHook",
    "listeners_without_saver": "CheckpointSaverHook",
    "listener_not_a_listener": "saving_listeners must be a list of CheckpointSaverListener",
    "train_spec_hook_not_a_hook": "All hooks must be `SessionRunHook` instances",
    "train_spec_listener_not_a_listener": "All saving_listeners must be `CheckpointSaverListener`",
    "eval_spec_hook_not_a_hook": "All hooks must be `SessionRunHook` instances",
    "export_untrained": "find trained model",
    "missing_variable_value": "Key nope not found in checkpoint",
    "unknown_predict_key": "['z']",
}


def test_misuse_is_refused_as_2_15_refused_it(both):
    ours, theirs = both["misuse"]
    assert ours["untrained_predictions"] == theirs["untrained_predictions"]
    assert sorted(ours["cases"]) == sorted(theirs["cases"])
    for case, expected in theirs["cases"].items():
        got = ours["cases"][case]
        if expected is None:  # 2.15 let it through
            assert got is None, (case, got)
            continue
        assert got is not None, case
        assert got[0] == expected[0], (case, got, expected)
        if case in GISTS:
            assert GISTS[case] in got[1], (case, got[1])


def test_prediction_edges_as_under_2_15(both):
    ours, theirs = (result["cases"] for result in both["prediction_edges"])
    assert sorted(ours) == sorted(theirs)
    # (A prediction without a batch dimension: 2.15's IndexError from its own code, as here.)
    assert ours["scalar_prediction"][0] == "IndexError"
    for case, expected in theirs.items():
        got = ours[case]
        if isinstance(expected, list) and expected and isinstance(expected[0], str):
            assert got[0] == expected[0], (case, got, expected)  # an error: its type
        else:
            assert got == expected, case
    assert "none of them are specified as the default" in ours["no_default_predict"][1]
