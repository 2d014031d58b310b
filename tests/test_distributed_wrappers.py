"""Estimator code trained under distributed-training wrappers (tests/distributed_wrapper_programs.py):
Horovod's (and BytePS's) MNIST Estimator example with its DistributedOptimizer and
broadcast hook, Horovod's local gradient aggregation, TensorFlowOnSpark's roles and
evaluator, `replica_device_setter` around a model_fn's layers, `SyncReplicasOptimizer`,
and moving averages (an EMA restoring Scaffold, MovingAverageOptimizer's swapping saver),
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py distributed_wrapper_programs`).
Each program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import distributed_wrapper_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)

# docs/guide/estimator.md ("Against tf.estimator 2.15"): the temporary model_dir's line
# says that the folder goes when the process exits.
_TEMPORARY_NOTE = " (removed when this process exits; pass model_dir to keep the model)."


class TestDistributedWrappers(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        ours, theirs = super().kept(name, ours, theirs)
        if "temporary" in ours:
            ours = {
                **ours,
                "temporary": [t.replace(_TEMPORARY_NOTE, "") for t in ours["temporary"]],
            }
        return ours, theirs
