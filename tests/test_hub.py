"""TensorFlow Hub inside Estimators, as the Estimator-era Hub tutorials and samples have
it after `tf_upgrade_v2` (tests/hub_programs.py: `hub.text_embedding_column` and
`hub.image_embedding_column` into DNNClassifiers, the wide & deep and linear classes
over them, `hub.sparse_text_embedding_column`, a TF1 `hub.Module` in a custom
model_fn with `register_module_for_export` and `LatestModuleExporter`, a Hub column in a
model_fn's compat.v1 `input_layer`, `hub.KerasLayer` in a model_fn), here against
tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py hub_programs`; 2.15's own runs
agree to the last bit). Each program runs once here (a module fixture); `exact` parts
must be equal, `close` ones within 1e-4. What they found, now as in 2.15: `import
tensorflow_hub` failed in the kit's venv (no `pkg_resources`); a compat.v1 DNN over a Hub
column trained forever (the module's Saver restore counted as stepping the global step)
and named and trained the module as the V2 class does; the V2 class could not build
`hub.Module` on the TF2 path; `LatestModuleExporter` found no 2.15 `Estimator.model_fn`,
`EstimatorSpec.scaffold` or `_session_config`; the V2 wide & deep and linear classes
could not build `hub.Module` either, their V1 classes named the modules `module/`,
`module_1/` and never trained them, the V1 DNN imported a sparse text column's module
under its column, the V1 linear models (a LinearClassifier, wide & deep's linear side)
imported it under `module/`, not `linear/module/`, and never trained it.
"""

import pytest

from tests import hub_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)
# The slow lane's (the file within its ~35 s): what another program here also covers
# (the V1 DNN's columns, the V2 wide & deep and linear classes' graph runs).
SLOW = {
    "text_classifier",
    "wide_and_deep_tf2",
    "linear_tf2",
    "linear_text_classifier",
    "sparse_text_dnn",
}


class TestHub(ComparedWithTf215):
    programs = programs

    def compared(self):
        return [
            pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else [])
            for n in programs.PROGRAMS
        ]
