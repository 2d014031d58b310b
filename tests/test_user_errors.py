"""What users see when their Estimator code is wrong or at an edge
(tests/user_error_programs.py), here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py user_error_programs`): each
mistake's exception type and the first line of its message, or what 2.15 gave where it
took it. Each program runs once here (a module fixture); its parts must be equal."""

from tests import user_error_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestUserErrors(ComparedWithTf215):
    programs = programs
