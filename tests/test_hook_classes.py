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

    def kept(self, name, ours, theirs):
        if name == "step_counter_subclasses_tf1_model_fn":
            ours = dict(ours, calls=_last_step_raced(ours["calls"], theirs["calls"]))
        return ours, theirs


def _last_step_raced(seen, recorded):
    """In a graph, TF1's StepCounterHook reads the global step in the train op's own session
    run, unordered with its increment (under 2.15 as here): `_last_global_step` is the
    last step's value before the increment or after it. Either counts as the recorded one."""
    (last,) = recorded["last_global_step"]
    if seen.get("last_global_step") in ([last], [last + 1]):
        return dict(seen, last_global_step=[last])
    return seen
