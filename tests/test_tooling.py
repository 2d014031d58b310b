"""Downstream tools on what Estimators write (tests/tooling_programs.py), here against
tf.estimator 2.15: the checkpoint tools, `import_meta_graph` on a TF1 model_fn's and a
TPUEstimator's `.meta`, summary_iterator and TensorBoard's EventAccumulator, freezing an
export (`convert_variables_to_constants`, `extract_sub_graph`,
`optimize_for_inference`), TFLite's converters and interpreter, and `saved_model_cli
run` on an export holding TF Serving's warmup requests.

Recorded once under 2.15 (`tests/tf215/record_family.py tooling_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal (the canned and TF2-path
checkpoints' `.meta` files aside: docs/guide/estimator.md, "Migrating from tf.estimator
2.15"), `close` ones within 1e-4. What it found, now as in 2.15: training put the spec's
loss in the graph's `losses` collection (a hook's `begin`, and the `.meta`, saw it).
"""

from tests import tooling_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestTooling(ComparedWithTf215):
    programs = programs
