"""Programs shaped like public TF1-era custom-Estimator samples (tests/tf1_sample_programs.py)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py tf1_sample_programs`): the layers tutorial's
cnn_mnist, get_started's custom_estimator (iris), the Estimator object's API and
attributes, and TF1 training idioms.  Each program runs once here (a module fixture);
`exact` parts must be equal, `close` ones within 1e-4, `loose` ones (seeded random
models) within 35%, once the differences the kit keeps on purpose (docs/guide/
estimator.md's list) are taken out.
"""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

from tests import tf1_sample_programs as programs

with open(programs.RECORDED) as _f:
    RECORDED = json.load(_f)["programs"]

# 2.15's numpy_input_fn and pandas_input_fn fed a queue and summarized how full it was;
# the kit's feed a tf.data pipeline, with no queue to summarize.
QUEUE_TAG = re.compile(r"^enqueue_input/queue/.*fraction_over_\d+_of_\d+_full$")
# Public attributes the kit's Estimators and RunConfig have beside 2.15's.
KIT_ATTRIBUTES = {
    "build_serving_module",
    "restart",
    "runs_in_a_graph",
    "traced_train_spec",
    "experimental_distribute",
}


# tf.estimator's hooks that are the kit's own (they run on the TF2 path too), not
# tf.compat.v1.train's: no SessionRunHook subclasses.
KIT_HOOKS = {"LoggingTensorHook", "NanTensorHook", "StepCounterHook", "StopAtStepHook"}


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    """{program: its result here}, each program run once."""
    import components.estimator.install  # noqa: F401  (the samples say tf.estimator)

    workdir = tmp_path_factory.mktemp("tf1_samples")
    return {name: run(tf, str(workdir / name)) for name, run in programs.PROGRAMS.items()}


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def _without_queue_tags(value):
    if isinstance(value, dict):
        return {k: _without_queue_tags(v) for k, v in value.items() if not QUEUE_TAG.match(k)}
    if isinstance(value, list):
        return [_without_queue_tags(v) for v in value if not QUEUE_TAG.match(str(v))]
    return value


def _without_known(key, value):
    """`value` (the `key` of a program's result) without what the kit differs in on
    purpose (docs/guide/estimator.md)."""
    value = _without_queue_tags(value)
    if key == "hooks":
        return {k: v for k, v in value.items() if k not in KIT_HOOKS}
    if key in ("run_config", "run_config_defaults"):
        return {k: v for k, v in value.items() if k not in KIT_ATTRIBUTES}
    if key == "attributes":
        return {name: _without_known("run_config", found) for name, found in value.items()}
    if key == "classes":
        # In 2.15 tf.compat.v1.estimator's classes were no tf.estimator.Estimator;
        # here they subclass it.
        return {
            name: [
                c
                for c in found
                if not (name.startswith("tf.compat") and c == "tf.estimator.Estimator")
            ]
            for name, found in value.items()
        }
    return value


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    for key, expected in theirs["exact"].items():
        got = ours[name]["exact"][key]
        assert _without_known(key, got) == _without_known(key, expected), key


@pytest.mark.parametrize(
    "name, part, rtol, atol",
    [
        ("cnn_mnist", "loose", 0.35, 0.05),
        ("custom_estimator", "loose", 0.35, 0.05),
        ("tf1_idioms", "close", 1e-4, 1e-5),
        ("regularized", "close", 1e-4, 1e-5),
        ("head_in_model_fn", "close", 1e-4, 1e-5),
        ("r1_mnist", "loose", 0.35, 0.05),
        ("train_and_evaluate_custom", "loose", 0.35, 0.05),
        ("feature_columns_model_fn", "close", 1e-4, 1e-5),
        ("eval_summary_hook", "close", 1e-4, 1e-5),
    ],
)
def test_sample_values_as_under_tf215(ours, name, part, rtol, atol):
    theirs = RECORDED[name][part]
    assert sorted(ours[name][part]) == sorted(theirs)
    if _read_the_step_after_its_increment(ours[name][part], theirs):
        return
    for key, expected in theirs.items():
        np.testing.assert_allclose(
            ours[name][part][key], expected, rtol=rtol, atol=atol, err_msg=key
        )


def _read_the_step_after_its_increment(ours, theirs):
    """Whether head_in_model_fn's hook stopped a step sooner than in 2.15's recording.

    Its hook fetches the global step in the train op's own session run, unordered with the
    op's increment, under 2.15 as here: it reads the step before the increment (as
    recorded: 5, 6, 7, then a stop at 8) or, now and then under load, after it (a stop at
    7). Both are 2.15's behaviour; only the recorded outcome has values to compare, so the
    other is checked to be exactly the one step sooner."""
    if "stopped_at" not in theirs or ours["stopped_at"] == theirs["stopped_at"]:
        return False
    assert ours["stopped_at"] == theirs["stopped_at"] - 1, (ours, theirs)
    assert ours["first_result"] in (theirs["first_result"], theirs["first_result"] + 1)
    return True


def test_known_differences_are_what_2_15_recorded(ours):
    """What `_without_known` takes out is there: a queue tag in 2.15's runs of numpy and
    pandas inputs, a V1 class in 2.15's class matrix that is no tf.estimator.Estimator."""
    recorded = RECORDED["cnn_mnist"]["exact"]["train_tags"]
    assert any(QUEUE_TAG.match(tag) for tag in recorded)
    assert not any(QUEUE_TAG.match(tag) for tag in ours["cnn_mnist"]["exact"]["train_tags"])
    classes = RECORDED["estimator_objects"]["exact"]["classes"]
    assert "tf.estimator.Estimator" not in classes["tf.compat.v1.estimator.Estimator"]
    assert "tf.compat.v1.estimator.Estimator" in classes["tf.estimator.Estimator"]


def test_a_head_refuses_what_2_15_refused_or_trains(ours):
    """A head in a TF1 model_fn: a non-legacy Keras optimizer, whose updates no op of a
    TF1 graph runs, is refused (2.15: an AttributeError of its own, no `get_updates`;
    here a ValueError naming the legacy class); a tf.compat.v1.train optimizer, which
    2.15's V2 heads refused, trains."""
    theirs = RECORDED["head_in_model_fn"]["differs"]
    got = ours["head_in_model_fn"]["differs"]
    assert theirs["keras_optimizer"][0] == "AttributeError"
    assert got["keras_optimizer"][0] == "ValueError"
    assert "tf.keras.optimizers.legacy.Adagrad" in got["keras_optimizer"][1]
    assert theirs["v1_optimizer"][0] == "ValueError"
    assert got["v1_optimizer"] is None
