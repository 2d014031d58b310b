"""Cost of a cold local pipeline run: wall time and peak memory per component.

    .venv/bin/python bench/pipeline_cost.py [--train-steps N] [--data CSV]

Runs the whole pipeline once in a fresh output folder (no cache) in this
process, sampling the process's resident memory every 50 ms, and prints one
row per component plus the total.  Memory is the process's peak RSS while the
component ran (TensorFlow and the other libraries stay loaded between
components, so later rows include them).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._measure import cold_run
from pipeline.config import REPO_ROOT
from pipeline.definition import build_config

TAXI_DEFINITION = str(REPO_ROOT / "definitions" / "taxi.toml")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=build_config(TAXI_DEFINITION).data_path)
    parser.add_argument(
        "--train-steps", type=int, help="Replaces the taxi definition's steps (2,000)."
    )
    parser.add_argument(
        "--beam-arg",
        action="append",
        help="Replaces the default Beam arguments (repeat), as `run --beam-arg` does.",
    )
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    output = tempfile.mkdtemp(prefix="pipeline-bench-")
    config = build_config(
        TAXI_DEFINITION,
        overrides={
            "output_dir": output,
            "data_path": args.data,
            **({"train_steps": args.train_steps} if args.train_steps else {}),
            "enable_cache": False,
            **({"beam_pipeline_args": tuple(args.beam_arg)} if args.beam_arg else {}),
        },
    )
    components, (total, peak, cpu), summary = cold_run(config)

    print(f"\nCold local run: {args.data}, training.steps={config.train_steps}, output {output}")
    print(f"{'component':32} {'wall s':>8} {'CPU s':>7} {'peak RSS MiB':>13}")
    for node, (wall, rss, node_cpu) in components.items():
        print(f"{node:32} {wall:8.1f} {node_cpu:7.1f} {rss / 2**20:13.0f}")
    print(f"{'total (incl. imports in run)':32} {total:8.1f} {cpu:7.1f} {peak / 2**20:13.0f}")
    print(summary.format())


if __name__ == "__main__":
    main()
