"""Runs tests/eager_disabled_programs.py's groups under tf.estimator 2.15, each in a
process of its own (eager execution, once off, stays off); writes
tests/data/tf215/eager_disabled.json.

    bench/.venv-tf215/bin/python tests/tf215/record_eager_disabled.py

(`bench/estimator_vs_tf215.py` builds that venv.)
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [REPO]

from tests import eager_disabled_programs as programs  # noqa: E402


def main():
    import tensorflow as tf

    assert tf.__version__.startswith("2.15"), tf.__version__
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for group in programs.GROUPS:
            print(group, flush=True)
            out = os.path.join(workdir, f"{group}.json")
            command = [sys.executable, "-m", "tests.eager_disabled_programs", group, out]
            subprocess.run(command, cwd=REPO, check=True)
            with open(out) as f:
                results[group] = json.load(f)["programs"]
    with open(programs.RECORDED, "w") as f:
        json.dump({"tensorflow": tf.__version__, "groups": results}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(results)} groups to {os.path.normpath(programs.RECORDED)}")


if __name__ == "__main__":
    main()
