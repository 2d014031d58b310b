"""Where a step of the bench's TF1 case goes: the Estimator against a bare session.

    PYTHONPATH=. .venv/bin/python bench/tf1_step_breakdown.py --impl ours
    bench/.venv-tf215/bin/python bench/tf1_step_breakdown.py --impl tf215

Runs the `tf1` case of `estimator_vs_tf215.py` (its worker's `model_fn` and input, on
the data that bench prepared) through `Estimator.train` (ours: the steps no hook needs
gathered and run by the single-threaded executor, which the session_config asks for; in
a TF1 while loop, as by default;
one step per session call), then the same graph in a bare `Session`: the train op one
call a step (single-threaded executor, and the default one), the step in a TF1 while
loop, the input's next batch alone, and one step's full trace summed by op type.  Milliseconds per step, wall and CPU of all the
process's threads, each the quietest of a few rounds; prints one line `PROFILE {json}`.
"""

import argparse
import glob
import json
import os
import sys
import tempfile
import time

import tensorflow as tf

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import _estimator_worker as worker  # noqa: E402

_V1 = tf.compat.v1


def _per_step(run, steps, rounds=3):
    """[wall ms, CPU ms] per step of `run()` (which runs `steps` steps), quietest round."""
    best = None
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        figures = [
            (time.perf_counter() - wall) / steps * 1e3,
            (time.process_time() - cpu) / steps * 1e3,
        ]
        if best is None or figures[0] < best[0]:
            best = figures
    return [round(f, 3) for f in best]


def _estimator_rows(api, spec, input_fn, label, out, executor_type=""):
    """A one-step call's fixed cost, and a step's cost as the difference of a 3,000-step
    and a 1,000-step call (their fixed costs cancel); `executor_type`: the session's."""
    model = worker._build(api, "tf1", spec, tempfile.mkdtemp(), 1, 0, 0)
    if executor_type:
        session_config = _V1.ConfigProto()
        session_config.CopyFrom(model.config.session_config)
        session_config.experimental.executor_type = executor_type
        config = model.config.replace(session_config=session_config)
        model = api.Estimator(model.model_fn, config=config)
    model.train(input_fn, steps=200)
    one = _per_step(lambda: model.train(input_fn, steps=1), 1, rounds=2)
    out[f"{label}: fixed cost of a train() call, s (wall, cpu)"] = [f / 1e3 for f in one]
    short = _per_step(lambda: model.train(input_fn, steps=1000), 1000, rounds=1)
    long = _per_step(lambda: model.train(input_fn, steps=3000), 3000, rounds=1)
    out[f"{label}: ms per step (3000-step call minus 1000-step call)"] = [
        round((3 * b - a) / 2, 3) for a, b in zip(short, long, strict=True)
    ]


def _op_trace(session, train_op, top=12):
    """Microseconds one step spends in each op type (all threads), the largest first."""
    metadata = _V1.RunMetadata()
    session.run(
        train_op,
        options=_V1.RunOptions(trace_level=_V1.RunOptions.FULL_TRACE),
        run_metadata=metadata,
    )
    by_type = {}
    for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
            label = node.timeline_label
            kind = label.split("=")[-1].split("(")[0].strip() if "=" in label else node.node_name
            by_type[kind] = by_type.get(kind, 0) + node.all_end_rel_micros
    return sorted(by_type.items(), key=lambda kv: -kv[1])[:top]


def _bare_session_rows(api, model_fn, input_fn, out):
    with tf.Graph().as_default():
        _V1.train.get_or_create_global_step()
        iterator = _V1.data.make_initializable_iterator(input_fn())
        features, labels = iterator.get_next()
        spec = model_fn(features, labels, api.ModeKeys.TRAIN)
        single_threaded = _V1.ConfigProto()
        single_threaded.experimental.executor_type = "SINGLE_THREADED_EXECUTOR"
        with _V1.Session(config=single_threaded) as session:
            session.run([_V1.global_variables_initializer(), iterator.initializer])
            step = session.make_callable([spec.train_op, spec.loss])
            for _ in range(100):
                step()
            out["bare Session, single-threaded executor: one call a step"] = _per_step(
                lambda: [step() for _ in range(1000)], 1000
            )
        with _V1.Session() as session:
            session.run([_V1.global_variables_initializer(), iterator.initializer])
            step = session.make_callable([spec.train_op, spec.loss])
            batch = session.make_callable(features)
            for _ in range(100):
                step()
            out["bare Session: train op + loss, one call a step"] = _per_step(
                lambda: [step() for _ in range(1000)], 1000
            )
            out["bare Session: the input's next batch alone"] = _per_step(
                lambda: [batch() for _ in range(1000)], 1000
            )
            out["ops in the graph"] = len(session.graph.get_operations())
            out["one step's trace, microseconds by op type"] = _op_trace(session, spec.train_op)


def _while_loop_rows(api, model_fn, input_fn, out):
    from tensorflow.python.ops import control_flow_util

    control_flow_util.ENABLE_CONTROL_FLOW_V2 = False  # a TF1 while loop, on either TF
    with tf.Graph().as_default():
        _V1.train.get_or_create_global_step()
        iterator = _V1.data.make_initializable_iterator(input_fn())

        def body(done):
            features, labels = iterator.get_next()
            with tf.control_dependencies([model_fn(features, labels, api.ModeKeys.TRAIN).train_op]):
                return done + 1

        steps = _V1.placeholder(tf.int32, [])
        loop = _V1.while_loop(
            lambda done: done < steps,
            body,
            [tf.constant(0)],
            parallel_iterations=1,
            back_prop=False,
        )
        with _V1.Session() as session:
            session.run([_V1.global_variables_initializer(), iterator.initializer])
            run = session.make_callable(loop, [steps])
            run(100)
            out["bare Session: TF1 while loop, 100 steps a call"] = _per_step(
                lambda: [run(100) for _ in range(10)], 1000
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=["ours", "tf215"], required=True)
    parser.add_argument("--data", default=os.path.join(BENCH, "results", "data"))
    args = parser.parse_args()
    with open(os.path.join(args.data, "spec.json")) as f:
        spec = json.load(f)
    feature_spec = {
        name: tf.io.FixedLenFeature([], tf.as_dtype(dtype))
        for name, dtype in spec["feature_spec"].items()
    }
    files = sorted(glob.glob(os.path.join(args.data, spec["files"]["train"])))
    api = worker._estimator_api(args.impl)
    input_fn = worker._input_fn(files, feature_spec, spec["label"], 64, 1, train=True)
    out = {"impl": args.impl, "tf_version": tf.__version__}
    if args.impl == "ours":
        from components.estimator import graph_steps

        _estimator_rows(
            api,
            spec,
            input_fn,
            "Estimator, steps gathered, single-threaded executor",
            out,
            "SINGLE_THREADED_EXECUTOR",
        )
        _estimator_rows(api, spec, input_fn, "Estimator, steps in a TF1 while loop", out)
        graph_steps.ENABLED = False
        _estimator_rows(api, spec, input_fn, "Estimator, one step per session call", out)
    else:
        _estimator_rows(api, spec, input_fn, "Estimator", out)
    wide = [
        tf.feature_column.categorical_column_with_identity(name, num_buckets=n)
        for name, n in spec["wide"]
    ]
    deep = [tf.feature_column.numeric_column(name) for name in spec["deep"]]
    model_fn = worker._tf1_model_fn(api, wide, deep)
    _bare_session_rows(api, model_fn, input_fn, out)
    _while_loop_rows(api, model_fn, input_fn, out)
    print("PROFILE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
