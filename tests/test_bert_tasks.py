"""google-research/bert's run_pretraining.py and run_squad.py with `--use_tpu=False`
(tests/bert_task_programs.py: the masked LM over gathered positions, seven tensors to
eval_metrics, eval_results.txt, SQuAD's RawResult loop over single-example predictions)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py bert_task_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

import re

from tests import bert_task_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)

# Kept on purpose (docs/guide/estimator.md): a temporary model_dir is removed at exit, which
# its warning says.
TEMPORARY = re.compile(r"^(WARNING:tensorflow:Using temporary folder as model directory: <tmp>).*")


class TestBertTasks(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        lines = [TEMPORARY.sub(r"\1", line) for line in ours.get("lines", ())]
        return {**ours, "lines": lines} if "lines" in ours else ours, theirs
