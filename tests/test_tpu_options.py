"""TPUEstimator(use_tpu=False) under the options, specs and calls public TPU code passes
(tests/tpu_options_programs.py: a train_distribute strategy, exports with and without
export_to_tpu and of every mode, TPUEstimatorSpec's checks, batch sizes left None or not
divisible by num_shards, partial batches, iterations_per_loop against steps, host calls,
eval_metrics' forms, hooks), here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py tpu_options_programs`). Each program
runs once here (a module fixture); `exact` parts must be equal, `close` ones within 1e-4,
less what 2.15's `serve, tpu` MetaGraph added, which the kit leaves out on purpose
(docs/guide/estimator.md, "TPUEstimator on CPUs and GPUs": export_to_tpu).
"""

from tests import tpu_options_programs as programs
from tests.test_tpu_samples import without_tpu_meta_graph
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


def without_tpu_export(value):
    """2.15's results less its `serve, tpu` MetaGraph: the graph itself, its model_fn call
    (an `infer` call without a batch size right after the `serve` graph's) and the second
    `Running infer on CPU/GPU` its build logged."""
    if isinstance(value, dict):
        value = without_tpu_meta_graph(value) if "lines" in value else value
        return {key: without_tpu_export(item) for key, item in value.items()}
    if isinstance(value, list):
        kept = []
        for item in value:
            if _is_tpu_graph(item) or _is_tpu_model_fn_call(item, kept[-1:]):
                continue
            kept.append(without_tpu_export(item))
        return kept
    return value


def _is_tpu_graph(item):
    return isinstance(item, list) and item[:1] == [["serve", "tpu"]]


def _is_tpu_model_fn_call(item, before):
    export_call = ["model_fn", "infer"]
    return (
        isinstance(item, list)
        and item[:2] == export_call
        and item[3] is None
        and bool(before)
        and isinstance(before[0], list)
        and before[0][:2] == export_call
        and before[0][3] is None
    )


class TestTpuOptions(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        return ours, without_tpu_export(theirs)
