"""Text and sequence models in TF1 model_fns (tests/text_sequence_programs.py) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py text_sequence_programs`): a CNN over word
embeddings with clipped Adam, LSTM and GRU cells through dynamic_rnn and static_rnn, tf.keras
layers in a TF1 model_fn, word2vec's sampled softmax and NCE; their input_fns tokenize with
string_split after a py_func, pad with padded_batch, and their exports take sentences.
Each program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

import pytest

from tests import text_sequence_programs as programs
from tests.tf215_recordings import assert_close, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    for key, expected in theirs["exact"].items():
        assert ours[name]["exact"][key] == expected, key


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_values_as_under_tf215(ours, name):
    assert_close(ours[name]["close"], RECORDED[name]["close"], name)
