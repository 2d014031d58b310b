"""Canned DNNs under `RunConfig(tf_random_seed=...)` (tests/seeded_dnn_programs.py), here
against tf.estimator 2.15: the same losses step by step, trained weights, evaluate's
values and predictions (within 1e-5 relative), as 2.15 drew them from the graph's op
seeds (components/estimator/graph_seeds.py). Recorded once under 2.15
(`tests/tf215/record_family.py seeded_dnn_programs`)."""

from tests import seeded_dnn_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestSeededDnn(ComparedWithTf215):
    programs = programs
    tolerances = {"seeded": (1e-5, 1e-6)}
