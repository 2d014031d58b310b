"""tf.estimator's LoggingTensorHook, NanTensorHook, StepCounterHook and StopAtStepHook as
public code uses them beyond `train(hooks=)` (tests/hook_class_programs.py): in a TF1
MonitoredTrainingSession, as TF1's classes, subclassed (examples-per-second hooks
overriding `_log_and_record`), here against tf.estimator 2.15, whose were TF1's own.

Recorded once under 2.15 (`tests/tf215/record_family.py hook_class_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones within
1e-4.
"""

from tests import hook_class_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestHookClasses(ComparedWithTf215):
    programs = programs
