"""Text and sequence models in TF1 model_fns (tests/text_sequence_programs.py) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py text_sequence_programs`): a CNN over word
embeddings with clipped Adam, LSTM and GRU cells through dynamic_rnn and static_rnn, tf.keras
layers in a TF1 model_fn, word2vec's sampled softmax and NCE; their input_fns tokenize with
string_split after a py_func, pad with padded_batch, and their exports take sentences.
Each program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import text_sequence_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestTextSequenceSamples(ComparedWithTf215):
    programs = programs
