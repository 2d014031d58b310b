"""google-research/bert's run_pretraining.py and run_squad.py with `--use_tpu=False`
(tests/bert_task_programs.py: the masked LM over gathered positions, seven tensors to
eval_metrics, eval_results.txt, SQuAD's RawResult loop over single-example predictions)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py bert_task_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

import re

from tests import bert_task_programs as programs
from tests.tf215_recordings import ComparedWithTf215, assert_close, program_runs

ours = program_runs(programs)

# Kept on purpose (docs/guide/estimator.md): a temporary model_dir is removed at exit, which
# its warning says.
TEMPORARY = re.compile(r"^(WARNING:tensorflow:Using temporary folder as model directory: <tmp>).*")


class TestBertTasks(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        lines = [TEMPORARY.sub(r"\1", line) for line in ours.get("lines", ())]
        return {**ours, "lines": lines} if "lines" in ours else ours, theirs

    def test_values_as_under_tf215(self, ours, name):
        """The `close` values within 1e-4 / 1e-5, but a variable's mean within 1e-4: a
        vector trained by Adam at rate 0.01 whose elements are about 1e-2 can average out
        near 0 (a LayerNorm's beta: 5.5e-06 here, -7.3e-06 under 2.15 on one machine),
        where each element's gradient rounding, turned into a step by Adam, is the
        machine's kernels' (the output bias's, which no softmax sees, is left out)."""
        if "close" not in self.recorded[name]:
            return
        close, recorded = ours[name]["close"], self.recorded[name]["close"]
        means = [key for key in recorded if key.startswith("mean ")]
        others = [key for key in recorded if key not in means]
        pick = lambda values, keys: {k: values[k] for k in keys if k in values}  # noqa: E731
        assert sorted(close) == sorted(recorded), name
        assert_close(pick(close, others), pick(recorded, others), name, 1e-4, 1e-5)
        assert_close(pick(close, means), pick(recorded, means), name, 1e-4, 1e-4)
