"""google-research/bleurt's fine-tuning and scoring (tests/google_research_programs.py: a
plain Estimator in train_and_evaluate with a BestExporter on Kendall tau, restarted; a
lazy-mode export of dynamic sequence length fine-tuned from and scored in a session) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py google_research_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import google_research_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestGoogleResearch(ComparedWithTf215):
    programs = programs
