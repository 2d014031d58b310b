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

from tests import gcp_lab_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)

# Kept on purpose (docs/guide/estimator.md): pandas_input_fn and numpy_input_fn feed a
# tf.data pipeline here, not a queue, so training writes no queue-fill summary.
QUEUE_FILL = re.compile(r"^enqueue_input/queue/")


class TestGcpLabs(ComparedWithTf215):
    programs = programs
    tolerances = {"close": (1e-4, 1e-5), "loose": (0.05, 1e-3)}

    def kept(self, name, ours, theirs):
        if "train_tags" in theirs:
            tags = [tag for tag in theirs["train_tags"] if not QUEUE_FILL.search(tag)]
            theirs = {**theirs, "train_tags": tags}
        return ours, theirs
