"""Estimator programs run as a cluster through TF_CONFIG (tests/cluster_sample_programs.py)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py cluster_sample_programs`): RunConfig's fields
and errors under two dozen TF_CONFIGs (chief, workers, ps, evaluator, a legacy master,
a strategy's cluster, misconfigurations) and train_and_evaluate's refusals; and real
clusters of processes on 127.0.0.1: kubeflow's mnist (a TF1 model_fn on a chief, a
worker and a ps), cloudml-samples' census (a canned estimator on a chief, a worker, a ps
and an evaluator) and the distributed guide's MultiWorkerMirroredStrategy Estimator over
two workers, and over a chief and a worker with an evaluator (whose strategy fails to
build, in 2.15 as here), and the TF 1.x guide's ParameterServerStrategy in RunConfig.  Compared: each task's exit, error, RunConfig and return value, what
model_dir holds (names, numbers blanked), the evaluator's last evaluation (the final
checkpoint's, its metric keys, the final export) -- not values: training is async.
"""

import pytest

from tests import cluster_sample_programs as programs
from tests.tf215_recordings import assert_exact, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)

# A cluster starts a process per task, each importing TensorFlow.
CLUSTERS = [name for name in programs.PROGRAMS if name != "run_config_per_tf_config"]


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


def test_run_config_reads_tf_config_as_under_tf215(ours):
    name = "run_config_per_tf_config"
    assert_exact(ours[name]["exact"], RECORDED[name]["exact"], name)


@pytest.mark.slow
@pytest.mark.parametrize("name", CLUSTERS)
def test_cluster_runs_as_under_tf215(ours, name):
    # (The kit's checkpoints carry no .meta and its exports a fingerprint.pb: KNOWN.)
    ran = ours[name]["exact"]
    # A difference names each task's log tail: a cluster's outcome turns on all of them.
    what = f"{name}; the tasks' logs:\n{programs.task_logs(ours.workdir / name)}"
    assert_exact(ran, RECORDED[name]["exact"], what)
