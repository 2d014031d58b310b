"""Kubeflow's and Vertex AI's own Estimator samples (tests/kubeflow_sample_programs.py):
kubeflow/examples' mnist under a TFJob's lone chief, a Vertex trainer's exporters and
`AIP_MODEL_DIR` (and the job again as a lone evaluator), kubeflow/pipelines' old DNN
trainer, and the TF_CONFIGs these platforms set (one empty among them), here against
tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py kubeflow_sample_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal.
"""

from tests import kubeflow_sample_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestKubeflowSamples(ComparedWithTf215):
    programs = programs
