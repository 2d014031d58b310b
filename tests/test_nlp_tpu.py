"""ELECTRA's run_finetuning.py and XLNet's run_squad.py with `use_tpu=False`
(tests/nlp_tpu_programs.py: flattened multi-task predictions with padding examples,
ETAHooks and trials; a `scaffold_fn`, a `host_call`, layer-wise gradient scaling and
single-example predictions on a TPUEstimator) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py nlp_tpu_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import nlp_tpu_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestNlpTpu(ComparedWithTf215):
    programs = programs
