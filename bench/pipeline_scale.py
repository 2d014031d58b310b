"""The pipeline at scale: many rows, or many columns, through every component.

    .venv/bin/python bench/pipeline_scale.py --rows 1000000 [--train-steps N] [--keep DIR]
    .venv/bin/python bench/pipeline_scale.py --columns 2000 [--rows 10000] [--keep DIR]

Rows (the default):

1. Generates N rows (deterministic, seed 0) from the taxi sample: each row is a sample
   row drawn at random with its numbers jittered (fare, tips, miles and seconds scaled
   together by one factor, coordinates moved by up to ~100 m, the timestamp by up to a
   week), so quantiles and vocabularies behave as on real data and the label keeps its
   relation to the fare, rather than the sample repeated.
2. Runs the whole pipeline cold (no cache) in a fresh process tree, printing per
   component the wall time, rows per second, CPU seconds (and cores: CPU s / wall s), the
   peak resident memory of the process and its children (Beam workers), sampled every
   50 ms, and the disk its outputs take.
3. Runs TFX's stock `CsvExampleGen` executor on the same file, and TFX's stock (TFMA)
   Evaluator executor on the run's eval split and model with the same metrics and slices
   (this kit's `eval_config.json`), each with the same Beam arguments, side by side.

Columns (`--columns N`): generates a table of N feature columns (one in ten text with 3 to
42 values, or `--text-values` each, the rest numbers with 1% missing) and a binary label
that depends on a few of them, `--rows` rows (default 10,000); runs it zero-code (`run
--data --label`) as in step 2;
then, as its baseline, the 1M-row taxi run (a similar number of cells) unless
`--no-baseline`, and prints the ratio of the two wall times.

Figures depend on the machine and its load that day: compare ratios from one run.
"""

import argparse
import csv
import glob
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench._measure import cold_run
from pipeline.config import REPO_ROOT, PipelineConfig
from pipeline.definition import build_config

SAMPLE = REPO_ROOT / "data" / "taxi" / "data.csv"
_SCALED = ("fare", "tips", "trip_miles", "trip_seconds")
_COORDINATES = ("pickup_latitude", "pickup_longitude", "dropoff_latitude", "dropoff_longitude")
_WEEK_S = 7 * 24 * 3600


def generate(rows, path, seed=0):
    """Writes `rows` taxi-like rows to `path` (see the module docstring)."""
    with open(SAMPLE) as f:
        reader = csv.DictReader(f)
        header, sample = reader.fieldnames, list(reader)
    rng = random.Random(seed)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        for _ in range(rows):
            row = dict(rng.choice(sample))
            factor = rng.uniform(0.8, 1.25)
            for key in _SCALED:
                if row[key]:
                    value = float(row[key]) * factor
                    row[key] = str(int(value)) if key == "trip_seconds" else f"{value:.2f}"
            for key in _COORDINATES:
                if row[key]:
                    row[key] = f"{float(row[key]) + rng.uniform(-0.001, 0.001):.9f}"
            row["trip_start_timestamp"] = str(
                int(row["trip_start_timestamp"]) + rng.randint(-_WEEK_S, _WEEK_S)
            )
            writer.writerow(row)


def generate_wide(rows, columns, path, seed=0, text_values=None):
    """Writes `rows` rows of `columns` feature columns and a binary `label` to `path` (see
    the module docstring): the label's log-odds are a sum of effects of the first 20 number
    columns and of the text columns among the first 100; a text column draws from
    `text_values` values (None: 3 to 42 by column)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    table, log_odds = {}, np.zeros(rows)
    for column in range(columns):
        if column % 10 == 9:
            values = rng.integers(0, text_values or 3 + column % 40, rows)
            table[f"c{column}"] = np.char.add("v", values.astype(str))
            if column < 100:
                log_odds += (values % 2) * 0.5
        else:
            x = rng.normal(size=rows)
            if column < 20:
                log_odds += x * (0.5 if column % 2 else -0.3)
            table[f"n{column}"] = np.where(rng.random(rows) < 0.01, np.nan, np.round(x, 4))
    table["label"] = (rng.random(rows) < 1 / (1 + np.exp(-log_odds))).astype(int)
    pd.DataFrame(table).to_csv(path, index=False)


_STOCK_EXAMPLE_GEN = r"""
import os, sys, time
from tfx.components.example_gen.csv_example_gen import executor
from tfx.dsl.components.base import base_beam_executor
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts
from google.protobuf import json_format
import apache_beam as beam

data, out, *beam_args = sys.argv[1:]
examples = standard_artifacts.Examples()
examples.uri = out
output_config = example_gen_pb2.Output(split_config=example_gen_pb2.SplitConfig(splits=[
    example_gen_pb2.SplitConfig.Split(name="train", hash_buckets=2),
    example_gen_pb2.SplitConfig.Split(name="eval", hash_buckets=1)]))
input_config = example_gen_pb2.Input(splits=[
    example_gen_pb2.Input.Split(name="single_split", pattern=os.path.basename(data))])
context = base_beam_executor.BaseBeamExecutor.Context(
    tmp_dir=out + ".tmp", unique_id="stock",
    make_beam_pipeline_fn=lambda: beam.Pipeline(argv=beam_args))
began = time.monotonic()
executor.Executor(context).Do(
    {}, {"examples": [examples]},
    {"input_base": os.path.dirname(data),
     "input_config": json_format.MessageToJson(input_config),
     "output_config": json_format.MessageToJson(output_config),
     "output_data_format": example_gen_pb2.FORMAT_TF_EXAMPLE,
     "output_file_format": example_gen_pb2.FORMAT_TFRECORDS_GZIP})
print("WALL", time.monotonic() - began)
"""


def _timed_script(script, *args):
    """The WALL seconds `script` prints, run in a Python process of its own with `args`
    (the repository importable, for the kit's TFMA metrics)."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return float(proc.stdout.split("WALL")[-1])


def run_stock_example_gen(data, output, beam_args):
    """Wall s of TFX's CsvExampleGen executor (in a process of its own) on `data`."""
    folder = tempfile.mkdtemp(dir=output)
    # CsvExampleGen reads every file under input_base: give it a folder with only `data`.
    os.symlink(data, os.path.join(folder, os.path.basename(data)))
    return _timed_script(
        _STOCK_EXAMPLE_GEN,
        os.path.join(folder, os.path.basename(data)),
        os.path.join(output, "stock_examples"),
        *beam_args,
    )


_STOCK_EVALUATOR = r"""
import json, sys, time
from tfx.components.evaluator import executor
from tfx.dsl.components.base import base_beam_executor
from tfx.types import standard_artifacts
import apache_beam as beam

examples_uri, model_uri, eval_config_path, out, *beam_args = sys.argv[1:]
examples = standard_artifacts.Examples()
examples.uri, examples.split_names = examples_uri, json.dumps(["train", "eval"])
model = standard_artifacts.Model()
model.uri = model_uri
evaluation, blessing = standard_artifacts.ModelEvaluation(), standard_artifacts.ModelBlessing()
evaluation.uri, blessing.uri = out + "/evaluation", out + "/blessing"
with open(eval_config_path) as f:
    eval_config = json.load(f)["evalConfig"]
context = base_beam_executor.BaseBeamExecutor.Context(
    tmp_dir=out + "/tmp", unique_id="stock",
    make_beam_pipeline_fn=lambda: beam.Pipeline(argv=beam_args))
began = time.monotonic()
executor.Executor(context).Do(
    {"examples": [examples], "model": [model]},
    {"evaluation": [evaluation], "blessing": [blessing]},
    {"eval_config": json.dumps(eval_config), "example_splits": json.dumps(["eval"])})
print("WALL", time.monotonic() - began)
"""


def run_stock_evaluator(config, evaluation_uri, output, beam_args):
    """Wall s of TFX's stock Evaluator executor (in a process of its own) on the run's eval
    split and model, configured by the eval_config.json our Evaluator wrote."""
    root = config.resolved_pipeline_root
    (examples,) = glob.glob(os.path.join(root, "ExampleGen", "examples", "*"))
    (model,) = glob.glob(os.path.join(root, "Trainer", "model", "*"))
    return _timed_script(
        _STOCK_EVALUATOR,
        examples,
        model,
        os.path.join(evaluation_uri, "eval_config.json"),
        tempfile.mkdtemp(dir=output, prefix="stock-evaluator-"),
        *beam_args,
    )


def disk_use(root):
    """{component: bytes its outputs take} under the pipeline root `root`."""
    use = {}
    for component in sorted(os.listdir(root)):
        use[component] = sum(
            os.path.getsize(os.path.join(folder, name))
            for folder, _, names in os.walk(os.path.join(root, component))
            for name in names
        )
    return use


def import_pipeline():
    """Imports what `run_locally` imports before its first component."""
    import tfx.orchestration.local.local_dag_runner  # noqa: F401

    import pipeline.pipeline  # noqa: F401


def run_cold(config, rows, title):
    """Runs `config` cold and prints its table; returns (summary, components, total wall s)."""
    components, (total, peak, cpu), summary = cold_run(config, include_children=True)
    disk = disk_use(config.resolved_pipeline_root)
    print(f"\n{title}")
    print(
        f"{'component':32} {'wall s':>8} {'rows/s':>9} {'CPU s':>7} {'cores':>5} "
        f"{'peak RSS MiB':>13} {'disk MiB':>9}"
    )
    for node, (wall, rss, node_cpu) in components.items():
        print(
            f"{node:32} {wall:8.1f} {rows / wall:9.0f} {node_cpu:7.1f} "
            f"{node_cpu / wall:5.2f} {rss / 2**20:13.0f} {disk.get(node, 0) / 2**20:9.1f}"
        )
    print(
        f"{'total (incl. imports in run)':32} {total:8.1f} {'':9} {cpu:7.1f} "
        f"{cpu / total:5.2f} {peak / 2**20:13.0f} {sum(disk.values()) / 2**20:9.1f}"
    )
    return summary, components, total


def taxi_config(rows, work, args):
    """The taxi definition's config on `rows` generated rows in `work`."""
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, f"taxi_{rows}.csv")
    began = time.monotonic()
    generate(rows, data)
    print(f"generated {rows:,} rows in {time.monotonic() - began:.0f} s: {data}")
    return build_config(
        str(REPO_ROOT / "definitions" / "taxi.toml"),
        overrides={
            "output_dir": os.path.join(work, "run"),
            "data_path": data,
            **({"train_steps": args.train_steps} if args.train_steps else {}),
            "enable_cache": False,
            **({"beam_pipeline_args": tuple(args.beam_arg)} if args.beam_arg else {}),
        },
    )


def compare_with_stock(config, rows, work, components, summary):
    """Prints stock CsvExampleGen's and TFMA's times on `config`'s data and run beside ours."""
    stock = run_stock_example_gen(config.data_path, work, config.beam_pipeline_args)
    ours = components["ExampleGen"][0]
    print(
        f"\nstock CsvExampleGen: {stock:.1f} s ({rows / stock:.0f} rows/s); "
        f"ours {ours:.1f} s: {stock / ours:.2f}x"
    )
    stock = run_stock_evaluator(config, summary.evaluation_uri, work, config.beam_pipeline_args)
    ours = components["Evaluator"][0]
    eval_rows = summary.metrics["example_count"]
    print(
        f"stock (TFMA) Evaluator on {eval_rows:,.0f} eval rows: {stock:.1f} s "
        f"({eval_rows / stock:.0f} rows/s); ours {ours:.1f} s ({eval_rows / ours:.0f} rows/s): "
        f"{stock / ours:.2f}x"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, help="Rows to generate (default 1,000,000; 10,000 with --columns)."
    )
    parser.add_argument(
        "--columns", type=int, help="A wide table of this many feature columns, zero code."
    )
    parser.add_argument(
        "--text-values",
        type=int,
        help="With --columns: values each text column draws from (default 3 to 42, by column).",
    )
    parser.add_argument(
        "--train-steps", type=int, help="Replaces the taxi definition's steps (2,000)."
    )
    parser.add_argument(
        "--beam-arg",
        action="append",
        help="Replaces the default Beam arguments (repeat), as `run --beam-arg` does.",
    )
    parser.add_argument("--keep", help="Folder for the data and outputs (default: a temp one).")
    parser.add_argument(
        "--no-stock", action="store_true", help="Skip stock CsvExampleGen and Evaluator."
    )
    parser.add_argument(
        "--no-baseline", action="store_true", help="With --columns: skip the 1M-row taxi run."
    )
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    work = args.keep or tempfile.mkdtemp(prefix="pipeline-scale-")
    os.makedirs(work, exist_ok=True)
    if args.columns:
        # Imported before either run: the wide run comes first, and would otherwise pay
        # for the pipeline's imports that the baseline after it finds done (nine seconds).
        began = time.monotonic()
        import_pipeline()
        print(f"imported the pipeline's modules in {time.monotonic() - began:.1f} s (untimed)")
        rows = args.rows or 10_000
        data = os.path.join(work, f"wide_{args.columns}x{rows}.csv")
        began = time.monotonic()
        generate_wide(rows, args.columns, data, text_values=args.text_values)
        print(
            f"generated {rows:,} rows x {args.columns:,} columns in {time.monotonic() - began:.0f} s"
        )
        config = PipelineConfig(
            data_path=data,
            raw_label_key="label",
            output_dir=os.path.join(work, "wide"),
            enable_cache=False,
            **({"beam_pipeline_args": tuple(args.beam_arg)} if args.beam_arg else {}),
        )
        title = f"Cold zero-code run: {rows:,} rows x {args.columns:,} columns, in {work}"
        summary, _, wide = run_cold(config, rows, title)
        print(summary.format())
        if not args.no_baseline:
            config = taxi_config(1_000_000, os.path.join(work, "taxi"), args)
            _, _, taxi = run_cold(config, 1_000_000, "Baseline: the 1M-row taxi run")
            print(
                f"\n{rows * args.columns:,} cells in {args.columns:,} columns: {wide:.1f} s; "
                f"the 1M-row taxi run ({1_000_000 * 18:,} cells): {taxi:.1f} s; "
                f"ratio {wide / taxi:.2f}"
            )
        return
    rows = args.rows or 1_000_000
    config = taxi_config(rows, work, args)
    title = f"Cold local run: {rows:,} rows, training.steps={config.train_steps}, in {work}"
    summary, components, _ = run_cold(config, rows, title)
    if not args.no_stock:
        compare_with_stock(config, rows, work, components, summary)
    print(summary.format())


if __name__ == "__main__":
    main()
