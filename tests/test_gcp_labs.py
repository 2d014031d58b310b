"""Google Cloud training-data-analyst's Estimator labs (tests/gcp_lab_programs.py) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py gcp_lab_programs`): pandas_input_fn into canned
regressors (b_estimator), compat.v1 regressors with add_metrics' RMSE through
train_and_evaluate (the California housing labs), MNIST's compat.v1-layers CNN with batch
normalization and its DNN with dropout, the sine labs' GRU and static-LSTM model_fns,
feateng's and e_traineval's taxi trainers, the SME academy's deep-dive blog, and the labs'
likely misuse. Each program runs once here (a module fixture); `exact` parts must
be equal, `close` ones within 1e-4, `loose` ones (where the versions' rounding is scaled
up by the lab's own model) within 5%.
"""

import re

import pytest

from tests import gcp_lab_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)

# Kept on purpose (docs/guide/estimator.md): pandas_input_fn and numpy_input_fn feed a
# tf.data pipeline here, not a queue, so training writes no queue-fill summary.
QUEUE_FILL = re.compile(r"^enqueue_input/queue/")


def _without_kept_differences(exact):
    exact = dict(exact)
    if "train_tags" in exact:
        exact["train_tags"] = [tag for tag in exact["train_tags"] if not QUEUE_FILL.search(tag)]
    return exact


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_lab_sees_what_it_saw_under_tf215(ours, name):
    assert sorted(ours[name]) == sorted(RECORDED[name])
    theirs = _without_kept_differences(RECORDED[name]["exact"])
    assert_exact(ours[name]["exact"], theirs, name)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_lab_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
    if "loose" in RECORDED[name]:
        assert_close(ours[name]["loose"], RECORDED[name]["loose"], name, rtol=0.05, atol=1e-3)
