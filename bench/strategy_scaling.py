"""Throughput of the taxi model under each strategy, side by side in one run.

    .venv/bin/python bench/strategy_scaling.py [--steps N] [--batch-size B]

Runs the Trainer's taxi wide-and-deep model (the project's input_fn and
`taxi_model.build_estimator`, transformed taxi data from
`bench/_taxi_data.py`) with: no strategy; mirrored over 1, 2 and 4 devices
(GPUs when present, else logical CPU devices); multi-worker mirrored with two
worker processes on 127.0.0.1.  Batch size is per replica.  Prints
examples/second, milliseconds per step and each strategy's per-step cost
relative to no strategy.  Run by hand, not in CI.
"""

import argparse
import json
import os
import subprocess
import sys

from components.trainer.launcher import free_ports

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
WORKER = os.path.join(BENCH, "_scaling_worker.py")
DATA = os.path.join(BENCH, "results", "data")


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def _result(output):
    lines = [line for line in output.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise RuntimeError(output[-3000:])
    return json.loads(lines[-1][len("RESULT ") :])


def _run(args, strategy, devices=1):
    cmd = [
        sys.executable,
        WORKER,
        "--data",
        DATA,
        "--strategy",
        strategy,
        "--devices",
        str(devices),
        "--steps",
        str(args.steps),
        "--batch-size",
        str(args.batch_size),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=False)
    return _result(done.stdout + done.stderr)


def _run_two_workers(args):
    cluster = {"worker": [f"127.0.0.1:{p}" for p in free_ports(2)]}
    cmd = [
        sys.executable,
        WORKER,
        "--data",
        DATA,
        "--strategy",
        "multi_worker_mirrored",
        "--steps",
        str(args.steps),
        "--batch-size",
        str(args.batch_size),
    ]
    workers = [
        subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_env(
                TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
            ),
        )
        for i in range(2)
    ]
    try:
        outputs = [w.communicate(timeout=1800)[0] for w in workers]
    finally:
        for w in workers:
            w.kill()
    result = _result(outputs[0])
    result["strategy"] = "multi_worker_mirrored (2 processes)"
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    if not os.path.exists(os.path.join(DATA, "spec.json")):
        subprocess.run(
            [sys.executable, os.path.join(BENCH, "_taxi_data.py"), DATA], check=True, env=_env()
        )
    results = [_run(args, "default")]
    results += [_run(args, "mirrored", devices) for devices in (1, 2, 4)]
    results.append(_run_two_workers(args))
    baseline = results[0]["ms_per_step"]
    print(
        f"\nTaxi wide-and-deep, {args.steps} steps, per-replica batch {args.batch_size}, "
        f"{os.cpu_count()} CPU cores"
    )
    print(
        f"{'strategy':38} {'replicas':>8} {'global batch':>12} {'examples/s':>11} "
        f"{'ms/step':>8} {'step cost vs default':>21}"
    )
    for r in results:
        name = r["strategy"] + (f" ({r['devices']} devices)" if r["strategy"] == "mirrored" else "")
        print(
            f"{name:38} {r['replicas']:8d} {r['global_batch']:12d} "
            f"{r['examples_per_sec']:11.0f} {r['ms_per_step']:8.2f} "
            f"{r['ms_per_step'] / baseline:20.2f}x"
        )


if __name__ == "__main__":
    main()
