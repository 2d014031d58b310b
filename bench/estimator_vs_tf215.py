"""This project's estimator (TF 2.21) against tf.estimator (TF 2.15) on the taxi data.

    .venv/bin/python bench/estimator_vs_tf215.py [--train-steps N] [--batch-size B] [--repeats R]
        [--intra-op-threads T] [--inter-op-threads T] [--models wide_deep,tf1,tf1_hooks]

Both sides train, evaluate, export and serve the same models on the same
transformed data, each in its own process and environment: the canned
`DNNLinearCombinedClassifier` (`wide_deep`, which runs on this kit's TF2 path),
a custom TF1-style `model_fn` (`tf1`: `tf.compat.v1` feature columns, layers,
optimizer and metric, which runs on its graph-mode path), and that `model_fn` with
three training hooks acting every 100 steps (`tf1_hooks`: a `LoggingTensorHook`, a
`StepCounterHook` and a user's `SessionRunHook` fetching a tensor).

* `bench/.venv-tf215`: TensorFlow 2.15.1 + tensorflow-estimator 2.15.0, built on
  first use and reused afterwards.
* `bench/results/data`: the full taxi sample run once through the project's
  SchemaImporter, ExampleGen and Transform executors (`bench/_taxi_data.py`).

The workers (`bench/_estimator_worker.py`) run one after the other, never side
by side, so neither steals the other's cores; other processes still can, so
each run records how busy they kept the machine, and `--repeats` keeps each
side's best figures.  Prints a table with the ratios ours/tf215 and the
targets; every run's raw figures go to bench/results/latest.json.  Per-step speed
is the median of the steps/s that both estimators log every 100 steps of the timed
train() call, so no call's fixed cost is in it.  The input
pipeline row drains the Trainer's own training input_fn (`make_input_fn`) alone
on our side, and the worker's copy of it under TF 2.15 on the other: it must
keep up with our training step.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
DATA = os.path.join(RESULTS, "data")
TF215_VENV = os.path.join(BENCH, ".venv-tf215")
# numpy < 2 and pandas < 3 are what TF 2.15 was built against (pandas: the recordings
# of `inputs.pandas_input_fn` under tests/tf215/); tensorflow-hub is the kit's lock's
# (tests/hub_programs.py).
TF215_PACKAGES = [
    "tensorflow==2.15.1",
    "tensorflow-estimator==2.15.0",
    "numpy<2",
    "pandas<3",
    "tensorflow-hub==0.15.0",
]
PROJECT_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
UV = os.path.join(REPO, ".venv", "bin", "uv")

# (label, key, format, how repeats combine, target: None or (description, check of the
# combined figures ours vs tf215)).  Over repeats, timings keep their best: contention
# only ever makes them worse.
ROWS = [
    (
        "train examples/s",
        "train_examples_per_sec",
        "{:,.0f}",
        max,
        (
            ">= 2x",
            lambda ours, base: ours["train_examples_per_sec"] >= 2 * base["train_examples_per_sec"],
        ),
    ),
    ("  fixed cost of one train() call, s", "train_call_seconds", "{:.2f}", min, None),
    (
        "  CPU ms per step of the timed call, all threads",
        "train_cpu_ms_per_step",
        "{:.2f}",
        min,
        None,
    ),
    (
        "  train examples/s, median of 100-step windows",
        "train_step_examples_per_sec",
        "{:,.0f}",
        max,
        (
            ">= 2x",
            lambda ours, base: (
                ours["train_step_examples_per_sec"] >= 2 * base["train_step_examples_per_sec"]
            ),
        ),
    ),
    (
        "Trainer input pipeline alone, examples/s",
        "input_examples_per_sec",
        "{:,.0f}",
        max,
        (
            ">= ours' step",
            lambda ours, base: (
                ours["input_examples_per_sec"] >= ours["train_step_examples_per_sec"]
            ),
        ),
    ),
    (
        "eval AUC",
        "eval_auc",
        "{:.4f}",
        statistics.median,
        (">= tf215 - 0.005", lambda ours, base: ours["eval_auc"] >= base["eval_auc"] - 0.005),
    ),
    (
        "export seconds",
        "export_seconds",
        "{:.2f}",
        min,
        ("<= 1x", lambda ours, base: ours["export_seconds"] <= base["export_seconds"]),
    ),
    (
        "serving p50 ms, batch 1",
        "serving_p50_ms_batch1",
        "{:.3f}",
        min,
        (
            "<= 1x",
            lambda ours, base: ours["serving_p50_ms_batch1"] <= base["serving_p50_ms_batch1"],
        ),
    ),
    (
        "serving examples/s, batch 1024",
        "serving_examples_per_sec",
        "{:,.0f}",
        max,
        (
            ">= 1x",
            lambda ours, base: ours["serving_examples_per_sec"] >= base["serving_examples_per_sec"],
        ),
    ),
]


def ensure_tf215_venv():
    """Builds the TF 2.15 venv unless a finished one is there (the marker is written last)."""
    python = os.path.join(TF215_VENV, "bin", "python")
    marker = os.path.join(TF215_VENV, ".bench-ready")
    if os.path.exists(marker):
        return python
    print(f"Building {TF215_VENV} ...", file=sys.stderr, flush=True)
    subprocess.run(["python3.11", "-m", "venv", "--clear", TF215_VENV], check=True)
    # --no-config: the project's [tool.uv] overrides (protobuf>=6) would break TF 2.15.
    subprocess.run(
        [UV, "pip", "install", "--no-config", "--python", python, *TF215_PACKAGES], check=True
    )
    open(marker, "w").close()
    return python


def ensure_data():
    if not os.path.exists(os.path.join(DATA, "spec.json")):
        log_path = os.path.join(RESULTS, "data.log")
        print(
            f"Preparing transformed taxi data in {DATA} ({log_path}) ...",
            file=sys.stderr,
            flush=True,
        )
        with open(log_path, "w") as log:
            proc = subprocess.run(
                [PROJECT_PYTHON, os.path.join(BENCH, "_taxi_data.py"), DATA],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_env(),
            )
        if proc.returncode:
            sys.exit(f"data preparation failed (exit {proc.returncode}); see {log_path}")
    with open(os.path.join(DATA, "spec.json")) as f:
        return json.load(f)


def _env(pythonpath=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_USE_LEGACY_KERAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _cpu_seconds():
    """(CPU seconds the whole machine has used, CPU seconds of our finished children)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    machine = (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return machine, children.ru_utime + children.ru_stime


def run_worker(impl, model, python, args):
    """Runs one worker (output in bench/results/<impl>.log) and returns its RESULT.

    Also records how many cores other processes kept busy meanwhile: on a small
    shared machine that, not the code, can decide the throughput figures.
    """
    command = [
        python,
        os.path.join(BENCH, "_estimator_worker.py"),
        "--impl",
        impl,
        "--model",
        model,
        "--data",
        DATA,
        "--batch-size",
        str(args.batch_size),
        "--warmup-steps",
        str(args.warmup_steps),
        "--train-steps",
        str(args.train_steps),
        "--intra-op-threads",
        str(args.intra_op_threads),
        "--inter-op-threads",
        str(args.inter_op_threads),
    ]
    log_path = os.path.join(RESULTS, f"{model}-{impl}.log")
    print(f"Running {model} on {impl} ({log_path}) ...", file=sys.stderr, flush=True)
    machine0, children0 = _cpu_seconds()
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=REPO,
            env=_env(REPO if impl == "ours" else None),
        )
        log.write(proc.stdout)
    wall = time.monotonic() - start
    machine1, children1 = _cpu_seconds()
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        with open(log_path) as log:
            tail = log.read()[-3000:]
        sys.exit(f"{impl} worker failed (exit {proc.returncode}); end of {log_path}:\n{tail}")
    result = json.loads(lines[-1][len("RESULT ") :])
    result["other_cores_busy"] = max(0.0, (machine1 - machine0) - (children1 - children0)) / wall
    if result["other_cores_busy"] > 0.2:
        print(
            f"  warning: other processes kept {result['other_cores_busy']:.1f} of "
            f"{os.cpu_count()} cores busy meanwhile; throughput figures are low and noisy",
            file=sys.stderr,
            flush=True,
        )
    return result


# The TF1 cases (issue 49): per step and per train() call at least twice tf.estimator 2.15,
# the export serving at least as fast at both batch sizes; export time is for reading.
TF1_TARGETS = {
    key: target
    for _, key, _, _, target in ROWS
    if target and key not in ("export_seconds", "input_examples_per_sec")
}
TARGETS = {
    "wide_deep": {key: target for _, key, _, _, target in ROWS},
    "tf1": TF1_TARGETS,
    "tf1_hooks": TF1_TARGETS,
}
TITLES = {
    "wide_deep": "Taxi wide & deep (canned DNNLinearCombinedClassifier)",
    "tf1": "Taxi DNN as a custom TF1-style model_fn",
    "tf1_hooks": "The same TF1 model_fn with a LoggingTensorHook, a StepCounterHook and a "
    "user's hook, each every 100 steps",
}


def combine(runs):
    """One figure per metric from repeated runs of one side."""
    combined = {key: how([run[key] for run in runs]) for _, key, _, how, _ in ROWS}
    combined["tf_version"] = runs[0]["tf_version"]
    combined["user_hook_fetches"] = [run.get("user_hook_fetches") for run in runs]
    combined["other_cores_busy"] = [round(run["other_cores_busy"], 2) for run in runs]
    return combined


def table(ours, base, targets):
    header = (
        "",
        f"ours (TF {ours['tf_version']})",
        f"tf215 (TF {base['tf_version']})",
        "ours/tf215",
        "target",
    )
    rows = [header]
    for label, key, fmt, _, _ in ROWS:
        target = targets.get(key)
        verdict = ""
        if target:
            verdict = f"{target[0]}: {'MET' if target[1](ours, base) else 'MISSED'}"
        rows.append(
            (
                label,
                fmt.format(ours[key]),
                fmt.format(base[key]),
                f"{ours[key] / base[key]:.2f}x",
                verdict,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i in (0, 4) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--train-steps",
        type=int,
        default=3000,
        help="steps timed, after --warmup-steps in a separate train() call",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument(
        "--intra-op-threads",
        type=int,
        default=0,
        help="both sides' RunConfig session_config intra_op_parallelism_threads (0: TF's default)",
    )
    parser.add_argument(
        "--inter-op-threads",
        type=int,
        default=0,
        help="both sides' RunConfig session_config inter_op_parallelism_threads (0: TF's default)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run each side this many times, alternating, and keep the best",
    )
    parser.add_argument(
        "--models",
        default="wide_deep,tf1,tf1_hooks",
        help=f"comma-separated, of {sorted(TARGETS)}",
    )
    args = parser.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = sorted(set(models) - set(TARGETS))
    if unknown or not models:
        parser.error(f"--models: unknown {unknown}; choose from {sorted(TARGETS)}")

    os.makedirs(RESULTS, exist_ok=True)
    tf215_python = ensure_tf215_venv()
    spec = ensure_data()
    runs = {model: {"ours": [], "tf215": []} for model in models}
    for _ in range(args.repeats):
        for model in models:
            runs[model]["ours"].append(run_worker("ours", model, PROJECT_PYTHON, args))
            runs[model]["tf215"].append(run_worker("tf215", model, tf215_python, args))
    with open(os.path.join(RESULTS, "latest.json"), "w") as f:
        json.dump({"runs": runs, "args": vars(args)}, f, indent=2)

    for model in models:
        ours, base = combine(runs[model]["ours"]), combine(runs[model]["tf215"])
        print(
            f"\n{TITLES[model]}, {spec['rows']['train']:,} train / {spec['rows']['eval']:,} "
            f"eval rows; batch {args.batch_size}; {args.train_steps} steps timed after "
            f"{args.warmup_steps} warm-up steps"
            + (f"; best of {args.repeats} runs each" if args.repeats > 1 else "")
            + (f"; {args.intra_op_threads} intra-op thread(s)" if args.intra_op_threads else "")
            + (f"; {args.inter_op_threads} inter-op thread(s)" if args.inter_op_threads else "")
        )
        print(table(ours, base, TARGETS[model]))
        print(
            f"Cores (of {os.cpu_count()}) other processes kept busy during each run: "
            f"ours {ours['other_cores_busy']}, tf215 {base['other_cores_busy']}."
        )
        if model == "tf1_hooks":
            print(
                f"Tensors the user's hook fetched (warm-up and timed calls): ours "
                f"{ours['user_hook_fetches']}, tf215 {base['user_hook_fetches']}."
            )


if __name__ == "__main__":
    main()
