"""Public tf.estimator code the other families leave out (tests/other_samples_programs.py):
tf-estimator-tutorials' SMS CNN and autoencoder (exports written as text), the Estimator
object's calls (predict_keys as a string, yield_single_examples=False and evaluate(name=)
at an older checkpoint_path, what they refuse), experimental_export_all_saved_models(
as_text=True), Keras-layer model_fns with compat.v1 and TF2 summaries and the spec's hook
lists, and params a model_fn changes, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py other_samples_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import other_samples_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestOtherSamples(ComparedWithTf215):
    programs = programs
