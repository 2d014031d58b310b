"""The zero-code run's cost on the taxi sample, this tree against an earlier commit's.

    .venv/bin/python bench/zero_code_cost.py [--baseline REF] [--data CSV --label COLUMN]

Runs `python -m pipeline run --data CSV --label COLUMN` cold (no cache, fresh output folder),
once from a `git archive` of REF (default: the commit before the model choice) and once from
this working tree, one after the other, with this repository's .venv; prints each
component's seconds (from the run's progress lines), the wall time and the ratio. The
Trainer's share is where the model choice shows: three candidates, each stopped early.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
DONE = re.compile(r"\]\s+(\w+) done in ([0-9.]+)s")
BEFORE_MODEL_CHOICE = "aa74a6d"


def run(tree, data, label, work):
    """({component: seconds}, wall seconds, exit status) of one cold zero-code run."""
    command = [PYTHON, "-m", "pipeline", "run", "--data", data, "--label", label]
    command += ["--output-dir", os.path.join(work, "out"), "--no-cache"]
    began = time.monotonic()
    proc = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    wall = time.monotonic() - began
    if proc.returncode not in (0, 3):
        sys.exit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return {m[0]: float(m[1]) for m in DONE.findall(proc.stderr)}, wall, proc.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BEFORE_MODEL_CHOICE, help="a git ref")
    parser.add_argument("--data", default=os.path.join(ROOT, "data", "taxi", "data.csv"))
    parser.add_argument("--label", default="tips")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zero-code-cost-") as work:
        baseline_tree = os.path.join(work, "baseline")
        os.makedirs(baseline_tree)
        archive = subprocess.run(
            ["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", baseline_tree], input=archive, check=True)
        runs = {}
        for name, tree in ((args.baseline, baseline_tree), ("this tree", ROOT)):
            print(f"running {name} ...", file=sys.stderr, flush=True)
            os.makedirs(os.path.join(work, name))
            runs[name] = run(tree, os.path.abspath(args.data), args.label, os.path.join(work, name))
    (base, base_wall, _), (new, new_wall, _) = runs.values()
    print(f"\nZero-code run on {args.data} (label {args.label}), seconds\n")
    print(f"| component | {args.baseline} | this tree |")
    print("|---|---:|---:|")
    for component in dict.fromkeys([*base, *new]):
        cells = [f"{r[component]:.1f}" if component in r else "-" for r in (base, new)]
        print(f"| {component} | {cells[0]} | {cells[1]} |")
    print(f"| **wall** | {base_wall:.1f} | {new_wall:.1f} |")
    print(f"\nthis tree / {args.baseline}: {new_wall / base_wall:.2f}x")


if __name__ == "__main__":
    main()
