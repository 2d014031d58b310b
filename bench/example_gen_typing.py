"""What typing CSV columns without a schema costs ExampleGen, per engine.

Writes a CSV of --rows taxi rows (the sample repeated) and times
`infer_column_kinds` with pyarrow's reader (what ExampleGen uses) and with the csv
module (its fallback), then, on --parse-rows rows, the ExampleGen executor with the
taxi schema and without one (the schema path runs no typing pass).

    PYTHONPATH=. .venv/bin/python bench/example_gen_typing.py --rows 1000000
"""

import argparse
import itertools
import os
import shutil
import tempfile
import time

from pipeline.config import DEFAULT_BEAM_ARGS, REPO_ROOT

TAXI_CSV = REPO_ROOT / "data" / "taxi" / "data.csv"


def _write_rows(path, rows):
    with open(TAXI_CSV) as source:
        header, *lines = source.read().splitlines()
    with open(path, "w") as target:
        target.write(header + "\n")
        for line in itertools.islice(itertools.cycle(lines), rows):
            target.write(line + "\n")
    return header.split(",")


def _run_example_gen(folder, csv_path, with_schema):
    import apache_beam as beam
    from tfx.dsl.components.base import base_beam_executor
    from tfx.types import standard_artifacts

    from components.example_gen import executor

    inputs = {}
    if with_schema:
        schema = standard_artifacts.Schema()
        schema.uri = os.path.join(folder, "schema")
        os.makedirs(schema.uri)
        shutil.copy(REPO_ROOT / "schemas" / "taxi" / "schema.pbtxt", schema.uri)
        inputs["schema"] = [schema]
    examples = standard_artifacts.Examples()
    examples.uri = os.path.join(folder, "examples")
    context = base_beam_executor.BaseBeamExecutor.Context(
        tmp_dir=os.path.join(folder, "tmp"),
        unique_id="x",
        make_beam_pipeline_fn=lambda: beam.Pipeline(argv=list(DEFAULT_BEAM_ARGS)),
    )
    began = time.perf_counter()
    executor.Executor(context).Do(inputs, {"examples": [examples]}, {"input_base": csv_path})
    return time.perf_counter() - began


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--parse-rows", type=int, default=100_000)
    parser.add_argument("--skip-csv-engine", action="store_true")
    args = parser.parse_args()

    from components.example_gen.executor import infer_column_kinds

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big.csv")
        header = _write_rows(path, args.rows)
        size = os.path.getsize(path) / 2**20
        engines = ["arrow"] + ([] if args.skip_csv_engine else ["csv"])
        kinds = {}
        for engine in engines:
            began = time.perf_counter()
            kinds[engine] = infer_column_kinds([path], header, engine=engine)
            seconds = time.perf_counter() - began
            print(
                f"typing pass, {engine:5}: {args.rows:,} rows ({size:.0f} MiB) in {seconds:.2f} s, "
                f"{args.rows / seconds:,.0f} rows/s"
            )
        assert len({tuple(sorted(k.items())) for k in kinds.values()}) == 1, kinds
        print("kinds:", kinds["arrow"])

        small = os.path.join(folder, "small.csv")
        _write_rows(small, args.parse_rows)
        for with_schema in (True, False):
            run = os.path.join(folder, f"run-{with_schema}")
            seconds = _run_example_gen(run, small, with_schema)
            print(
                f"ExampleGen executor, {'with schema' if with_schema else 'inferred':11}: "
                f"{args.parse_rows:,} rows in {seconds:.2f} s, {args.parse_rows / seconds:,.0f} rows/s"
            )


if __name__ == "__main__":
    main()
