"""One measurement of `strategy_scaling.py`: the Trainer's taxi model under one strategy.

    python bench/_scaling_worker.py --data DIR --strategy {default,mirrored,multi_worker_mirrored}
        [--devices N] [--batch-size B] [--steps S]

Uses the project's own pieces: the Trainer's input_fn (per-replica batches,
sharded per worker) and `taxi_model.build_estimator`.  Prints `RESULT {json}`.
"""

import argparse
import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--strategy", required=True)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64, help="per replica")
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()

    import tensorflow as tf

    if args.devices > 1:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * args.devices
        )
    from components import estimator
    from components.trainer import strategy as strategy_lib
    from components.trainer.executor import make_input_fn
    from models import taxi as taxi_model

    choice = strategy_lib.StrategyChoice(args.strategy, "benchmark")
    strategy = strategy_lib.build(choice)
    replicas = strategy.num_replicas_in_sync if strategy is not None else 1
    with open(os.path.join(args.data, "spec.json")) as f:
        spec = json.load(f)
    feature_spec = {
        name: tf.io.FixedLenFeature([], dtype) for name, dtype in spec["feature_spec"].items()
    }
    files = os.path.join(args.data, "transformed", "Split-train", "*.gz")
    assert glob.glob(files), files
    input_fn = make_input_fn(files, feature_spec, spec["label"], args.batch_size, True, 42)
    config = estimator.RunConfig(
        model_dir=tempfile.mkdtemp(prefix="scaling-"),
        tf_random_seed=42,
        save_checkpoints_steps=10**9,
        train_distribute=strategy,
    )
    model = taxi_model.build_estimator(config, {})
    model.train(input_fn, steps=args.warmup_steps)
    start = time.perf_counter()
    model.train(input_fn, steps=args.steps)
    seconds = time.perf_counter() - start
    print(
        "RESULT "
        + json.dumps(
            {
                "strategy": args.strategy,
                "devices": args.devices,
                "replicas": replicas,
                "global_batch": args.batch_size * replicas,
                "steps": args.steps,
                "ms_per_step": 1e3 * seconds / args.steps,
                "examples_per_sec": args.steps * args.batch_size * replicas / seconds,
                "is_chief": config.is_chief,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
