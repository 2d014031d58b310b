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

    def kept(self, name, ours, theirs):
        if "train_tags" not in theirs:
            return ours, theirs
        tags = _summary_steps_raced(ours["train_tags"], theirs["train_tags"])
        return dict(ours, train_tags=tags), theirs


def _summary_steps_raced(seen, recorded):
    """A SummarySaverHook reads the global step in the train op's own session run,
    unordered with its increment (under 2.15 as here): where the read came before the
    increment, that run's summaries carry the step one less (a fresh-clone run's last
    summary once came at 10, not 11). That outcome, every tag's steps the recorded ones or
    one less, alike for all tags, counts as the recorded one; any other difference stays."""
    got, wanted = ({tuple(steps) for steps in tags.values()} for tags in (seen, recorded))
    if sorted(seen) != sorted(recorded) or len(got) != 1 or len(wanted) != 1:
        return seen
    (got,), (wanted,) = got, wanted
    raced = len(got) == len(wanted) and all(
        g in (w, w - 1) for g, w in zip(got, wanted, strict=True)
    )
    return recorded if raced else seen
