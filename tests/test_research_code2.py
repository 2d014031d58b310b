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
        if name == "export_flags_both_false":  # export_to_cpu=False alone: refused here
            # (docs/guide/estimator.md, "TPUEstimator on CPUs and GPUs"), where 2.15
            # failed restoring its TPU MetaGraph's graph on a CPU, or wrote an export of
            # no MetaGraph when given no PREDICT receiver
            refusals = ("tpu_only_all_saved_models", "tpu_only_train_graph")
            for key in refusals:
                assert ours[key][0] == "ValueError" and "export_to_cpu=False" in ours[key][1]
            assert theirs["tpu_only_all_saved_models"][0] == "InvalidArgumentError"
            assert theirs["tpu_only_train_graph"] is None
            ours = {k: v for k, v in ours.items() if k not in refusals}
            theirs = {k: v for k, v in theirs.items() if k not in refusals}
        if "export" in theirs:
            export = [meta for meta in theirs["export"] if "tpu" not in meta["tags"]]
            theirs = {**theirs, "export": export}
        return ours, theirs
