"""More research code's TPUEstimator programs (tests/research_code2_programs.py: simclr
v1's LARS pre-training, its eval mode over checkpoints, its fine-tuning from a
scaffold_fn and export; tapas's train, evaluate and predict-to-files loops) here against
tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py research_code2_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4.
"""

from tests import research_code2_programs as programs
from tests.test_tpu_samples import without_tpu_meta_graph
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestResearchCode2(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        """2.15's `serve, tpu` MetaGraph left out (docs/guide/estimator.md, "TPUEstimator
        on CPUs and GPUs": export_to_tpu)."""
        theirs = without_tpu_meta_graph(theirs)
        if "export" in theirs:
            export = [meta for meta in theirs["export"] if "tpu" not in meta["tags"]]
            theirs = {**theirs, "export": export}
        return ours, theirs
