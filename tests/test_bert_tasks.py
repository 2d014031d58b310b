"""google-research/bert's run_pretraining.py and run_squad.py with `--use_tpu=False`
(tests/bert_task_programs.py: the masked LM over gathered positions, seven tensors to
eval_metrics, eval_results.txt, SQuAD's RawResult loop over single-example predictions)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py bert_task_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

import re

import pytest

from tests import bert_task_programs as programs
from tests.tf215_recordings import assert_close, assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


# Kept on purpose (docs/guide/estimator.md): a temporary model_dir is removed at exit, which
# its warning says.
TEMPORARY = re.compile(r"^(WARNING:tensorflow:Using temporary folder as model directory: <tmp>).*")


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    exact = ours[name]["exact"]
    lines = [TEMPORARY.sub(r"\1", line) for line in exact.get("lines", ())]
    assert_exact({**exact, "lines": lines}, RECORDED[name]["exact"], name)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
