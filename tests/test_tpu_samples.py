"""Public TPUEstimator programs run with `use_tpu=False` (tests/tpu_sample_programs.py:
EfficientNet's EMA and host_call, ResNet's input transpose and piecewise rate, ALBERT's
checkpoint-by-checkpoint evaluation, the Cloud ML template, the detection export, DLRM's
TPU embedding columns and EmbeddingConfigSpec, ResNet's main with use_tpu=True where there
is no TPU, the words of TPUEstimator's refusals) here
against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py tpu_sample_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import tpu_sample_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


def without_tpu_meta_graph(exact):
    """2.15's parts less what its `serve, tpu` MetaGraph added, which the kit leaves out
    on purpose (docs/guide/estimator.md, "TPUEstimator on CPUs and GPUs": export_to_tpu):
    building it logged a second `Running infer on CPU/GPU` after the `serve` one's model_fn."""
    lines, kept = exact.get("lines", []), []
    for line in lines:
        if not (line.endswith("Running infer on CPU/GPU") and kept[-1:] == [_DONE]):
            kept.append(line)
    return {**exact, "lines": kept} if "lines" in exact else exact


_DONE = "INFO:tensorflow:Done calling model_fn."


class TestTpuSamples(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        return ours, without_tpu_meta_graph(theirs)
