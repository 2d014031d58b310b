"""Pre-tf.data input pipelines and the Google Cloud courses' Estimator trainers
(tests/input_pipeline_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py input_pipeline_programs`): queue-based input_fns
(string_input_producer, TextLineReader, batch / shuffle_batch, num_epochs ending training),
the courses' tf.data CSV and TFRecord input_fns, and babyweight's wide and deep trainer
through train_and_evaluate and its export.  Each program runs once here (a module
fixture); `exact` parts must be equal, `close` ones within 1e-4 (the seeded DNNs'
losses hang on their initial weights, which 2.15 drew otherwise: not compared).
"""

import pytest

from tests import input_pipeline_programs as programs
from tests.tf215_recordings import assert_close, normalized, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_pipeline_sees_what_it_saw_under_tf215(ours, name):
    """Equal `exact` parts but for the `.meta`, `fingerprint.pb` and `.../iter` entries
    of docs/guide/estimator.md's list; `close` values within 1e-4."""
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    assert normalized(ours[name]["exact"]) == normalized(theirs["exact"])
    assert_close(ours[name]["close"], theirs["close"], name)


def test_a_keras_optimizer_on_queues_is_refused_saying_why(ours):
    """2.15's V2 canned estimators refused a non-legacy Keras optimizer (asking for a
    legacy one); the kit refuses it where the call runs in a graph, here for the
    input_fn's queues, and says so."""
    theirs = RECORDED["queue_v1_estimators"]["differs"]["keras_optimizer"]
    got = ours["queue_v1_estimators"]["differs"]["keras_optimizer"]
    assert "tf.keras.optimizers.legacy" in theirs[1]
    assert "the input_fn reads queues" in got[1]
    assert "tf.keras.optimizers.legacy.Adam" in got[1]
