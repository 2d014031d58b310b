"""Where a BoostedTreesClassifier.train() call's time goes, on the taxi sample.

    OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python bench/boosted_trees_parts.py \
        [--repeats 7] [--compare | --compare-eager | --before DIR] [--cpu]

Trains bench/boosted_trees_vs_hgb.py's taxi model (100 trees of max_depth 6, in memory,
center_bias) --repeats times in one process and prints, for each call: tracing the training
step, writing graph.pbtxt, the function's first call (graph optimization and instantiation,
the quantile sketch), the later calls (up to 100 steps each; `chunk100`: the fastest call
of 100), and the whole call. The first call of a process also imports and loads numba.

`--compare` alternates the kit as it is ("new") with the layer grown by TensorFlow's ops
around the compiled loops and the numeric columns read one by one ("old":
`tree_growing.LAYER_IN_ONE_OP` and `tree_ensemble._plain_numbers` off; the same trees)
and prints each part's median ratio new/old over the repeats after the first: on a loaded
machine, ratios of runs side by side in one process are what can be compared.
`--compare-eager` alternates instead with the once-a-call parts (the quantile sketch, the
in-memory cache's bucket ids) traced into the step ("old": `tree_growing._eagerly` calling
its function in the graph) rather than run in one op by TensorFlow's eager kernels.
`--before DIR` alternates instead with DIR's (a checkout of an earlier commit, e.g. from
`git archive`) compiled histogram loop and `LayerStep`'s bookkeeping after the search
(`tree_histogram._compiled`, `tree_layer.LayerStep._after`), the rest this tree's. `cpu`:
the process's CPU time in the call (all threads), which a loaded machine moves less than
the wall time. `--cpu` times every part in the process's CPU time instead of the wall's,
and adds the layer op's Python body (`op`: `tree_layer.LayerStep._step`) and, inside it,
the histogram's and the split search's calls (`op_histogram`, `op_search`), in the CPU
time of the thread that runs them.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

PARTS = ("trace", "write_graph", "first_call", "later_calls", "chunk100", "train", "cpu")
OP_PARTS = ("op", "op_histogram", "op_search")
_clock = time.perf_counter  # (`--cpu`: time.process_time)


class _TimedSteps:
    """The Estimator's training function, each use timed into `times`."""

    def __init__(self, function, times):
        self._function, self._times, self._calls = function, times, 0

    def get_concrete_function(self, *args):
        start = _clock()
        try:
            return self._function.get_concrete_function(*args)
        finally:
            self._times["trace"] = _clock() - start

    def __call__(self, *args):
        start = _clock()
        result = self._function(*args)
        seconds = _clock() - start
        part = "first_call" if self._calls == 0 else "later_calls"
        self._times[part] = self._times.get(part, 0.0) + seconds
        if self._calls and int(result[0]) == 100:
            self._times["chunk100"] = min(self._times.get("chunk100", seconds), seconds)
        self._calls += 1
        return result


def _instrument(times):
    import tensorflow as tf

    from components.estimator import estimator as estimator_lib

    write_graph = tf.io.write_graph

    def timed_write(*args, **kwargs):
        start = _clock()
        try:
            return write_graph(*args, **kwargs)
        finally:
            times["write_graph"] = times.get("write_graph", 0.0) + _clock() - start

    tf.io.write_graph = timed_write
    train_function = estimator_lib.Estimator._train_function
    estimator_lib.Estimator._train_function = lambda self: _TimedSteps(train_function(self), times)


def _time_op(times):
    """`OP_PARTS` summed into `times`, each in its thread's CPU time."""
    from components.estimator.canned import tree_histogram, tree_layer

    def timed(owner, name, part):
        function = getattr(owner, name)

        def wrapper(*args):
            start = time.thread_time()
            try:
                return function(*args)
            finally:
                times[part] = times.get(part, 0.0) + time.thread_time() - start

        setattr(owner, name, wrapper)

    timed(tree_layer.LayerStep, "_step", "op")
    timed(tree_histogram.LayerHistogram, "_sums", "op_histogram")
    timed(tree_histogram.DiagonalSplitSearch, "_search", "op_search")


def _arms(compare, compare_eager=False):
    from components.estimator.canned import tree_ensemble, tree_growing

    plain_numbers, eagerly = tree_ensemble._plain_numbers, tree_growing._eagerly

    def arm(new):
        def setup():
            if compare_eager:  # "old": the once-a-call parts traced into the step
                tree_growing._eagerly = eagerly if new else (lambda fn, inputs, *_: fn(*inputs))
                return
            tree_growing.LAYER_IN_ONE_OP = new
            tree_ensemble._plain_numbers = plain_numbers if new else (lambda *_: None)

        return setup

    both = compare or compare_eager
    return {"new": arm(True), "old": arm(False)} if both else {"new": arm(True)}


def _before_arms(directory):
    """ "new" as this tree is, "old" with `directory`'s histogram loop and layer bookkeeping."""
    import importlib.util

    from components.estimator.canned import tree_histogram, tree_layer

    def load(name):
        path = os.path.join(directory, "components", "estimator", "canned", f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"before_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    old_histogram, old_layer = load("tree_histogram"), load("tree_layer")

    def arm(compiled, after):
        def setup():
            tree_histogram._compiled, tree_layer.LayerStep._after = compiled, after

        return setup

    return {
        "new": arm(tree_histogram._compiled, tree_layer.LayerStep._after),
        "old": arm(old_histogram._compiled, old_layer.LayerStep._after),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--compare-eager", action="store_true")
    parser.add_argument("--before", metavar="DIR")
    parser.add_argument("--cpu", action="store_true", help="every part in CPU time")
    args = parser.parse_args()
    global _clock
    parts = PARTS
    if args.cpu:
        _clock, parts = time.process_time, PARTS + OP_PARTS
    import tensorflow as tf

    from bench import boosted_trees_vs_hgb as bench
    from components import estimator

    times = {}
    _instrument(times)
    if args.cpu:
        _time_op(times)
    (train, y_train), (test, _) = bench.load()
    columns = []
    for name, values in sorted(train.items()):
        if bench.is_id("taxi", name):
            ids = tf.feature_column.categorical_column_with_identity(
                name, int(max(values.max(), test[name].max())) + 1
            )
            columns.append(tf.feature_column.indicator_column(ids))
        else:
            columns.append(tf.feature_column.numeric_column(name))
    results = {}
    arms = _before_arms(args.before) if args.before else _arms(args.compare, args.compare_eager)
    compared = args.compare or args.compare_eager or args.before
    for repeat in range(args.repeats):
        for arm, setup in arms.items():
            setup()
            times.clear()
            with tempfile.TemporaryDirectory() as model_dir:
                model = estimator.BoostedTreesClassifier(
                    columns,
                    n_batches_per_layer=1,
                    model_dir=model_dir,
                    train_in_memory=True,
                    n_trees=bench.N_TREES,
                    learning_rate=bench.LEARNING_RATE,
                    center_bias=True,
                )
                start, cpu = _clock(), time.process_time()
                model.train(
                    lambda: tf.data.Dataset.from_tensors((train, y_train)).repeat(),
                    max_steps=10**9,
                )
                times["train"] = _clock() - start
                times["cpu"] = time.process_time() - cpu
            print(repeat, arm, " ".join(f"{p}={times.get(p, 0.0):.3f}" for p in parts))
            if repeat:
                for part in parts:
                    results.setdefault((arm, part), []).append(times.get(part, 0.0))
    if compared and args.repeats > 1:
        print("| part | new (median s) | old (median s) | new/old (median of pairs) |")
        print("|---|---:|---:|---:|")
        for part in parts:
            new, old = results[("new", part)], results[("old", part)]
            ratio = statistics.median(a / b for a, b in zip(new, old, strict=True) if b)
            print(
                f"| {part} | {statistics.median(new):.3f} | {statistics.median(old):.3f} "
                f"| {ratio:.2f} |"
            )


if __name__ == "__main__":
    main()
