"""AdaNet's Estimator subclasses in its shape (tests/adanet_programs.py): iterations of a
temporary Estimator trained to max_steps, candidate ensembles evaluated and reported in
sessions of their own, the graph grown by overwriting the model_dir's checkpoint, then
evaluate, predict and export of the chosen ensemble; AutoEnsemble's canned candidates
called as building blocks, here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py adanet_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import adanet_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


def _one_serving_graph(exact):
    """The log lines without the second model_fn call and signature lines 2.15 logged
    building its `serve, tpu` MetaGraph (the last export's)."""
    lines = exact["log_lines"]
    evals = [i for i, line in enumerate(lines) if line.startswith(_EVAL_SIGNATURES)]
    if len(evals) > 1:
        lines = lines[: evals[-2] + 2] + lines[evals[-1] + 1 :]
    return {**exact, "log_lines": lines}


_EVAL_SIGNATURES = "Signatures INCLUDED in export for Eval"


class TestAdaNet(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        if name == "adanet_tpu_estimator_on_cpu":
            # The kit writes no `serve, tpu` MetaGraph (docs/guide/estimator.md, "TPUEstimator
            # on CPUs and GPUs"): 2.15 called the model_fn once more for it.
            return ours, _one_serving_graph(theirs)
        return ours, theirs
