"""tf.estimator 2.15's experimental canned estimators as users call them
(tests/experimental_estimator_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py experimental_estimator_programs`):
`LinearSDCA` training a LinearClassifier and a LinearRegressor (twice by steps, a new
Estimator object resuming, what it refuses), and `RNNClassifier` / `RNNEstimator` (stacked
LSTM cells by `units`, an `rnn_cell_fn` of GRU cells with a context column, a fused GRU
returning sequences, an RNNEstimator with a MultiClassHead). Each program runs once
here (a module fixture); `exact` parts must be equal (the kit's known additions left out,
tests/tf215_recordings.py), `close` ones within the tolerance below.
"""

from tests import experimental_estimator_programs as programs
from tests.tf215_recordings import ComparedWithTf215, assert_close, program_runs

# SDCA starts from zeros and trains on batches of one example (the kernel is the same):
# its values agree to float rounding.  The RNNs start from the same rewritten
# checkpoint; their kernels (tf_keras's LSTM/GRU on TF 2.21, Keras 2.15's on TF 2.15)
# agree to float rounding too (seen: 2e-7 relative).  So assert_close's 1e-4, but for
# SDCA's losses: 2.15 ran its weight update (a hook's op) and read the loss in one
# session.run, unordered, so a step's loss now and then read weights the step had
# already updated (seen: 6.2692 in the recording, 6.2734 in three runs since, as here).
SDCA_LOSS_RTOL = 1e-3

ours = program_runs(programs)


class TestExperimentalEstimators(ComparedWithTf215):
    programs = programs

    def test_values_as_under_tf215(self, ours, name):
        ours, theirs = dict(ours[name]["close"]), dict(self.recorded[name]["close"])
        if name.startswith("sdca_") and "losses" in theirs:
            losses = {"losses": ours.pop("losses")}, {"losses": theirs.pop("losses")}
            assert_close(*losses, name, SDCA_LOSS_RTOL)
        assert_close(ours, theirs, name)
