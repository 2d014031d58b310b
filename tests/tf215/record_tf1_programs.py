"""Runs tests/tf1_programs.py under tf.estimator 2.15; writes tests/data/tf215/tf1_programs.json.

    bench/.venv-tf215/bin/python tests/tf215/record_tf1_programs.py

(`bench/estimator_vs_tf215.py` builds that venv.)  Recorded once; the test compares
this kit's results on the same programs with these.  `record` serves the other
recorders of program modules too (record_tf1_fidelity.py).
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import tensorflow as tf  # noqa: E402

assert tf.__version__.startswith("2.15"), tf.__version__


def record(programs, filename):
    """Runs every program of `programs` (a {name: program} dict) with tf.estimator in a
    fresh folder; writes their results to tests/data/tf215/`filename`."""
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, program in programs.items():
            result = program(tf.estimator, os.path.join(workdir, name))
            result.pop("export_dir", None)
            results[name] = result
    out = os.path.join(HERE, "..", "data", "tf215", filename)
    with open(out, "w") as f:
        json.dump({"tensorflow": tf.__version__, "programs": results}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.normpath(out)}")


if __name__ == "__main__":
    import tf1_programs

    record(tf1_programs.PROGRAMS, "tf1_programs.json")
