"""Runs tests/public_sample_programs.py under tf.estimator 2.15; writes
tests/data/tf215/public_samples.json.

    bench/.venv-tf215/bin/python tests/tf215/record_public_samples.py [NAME_REGEX]

(`bench/estimator_vs_tf215.py` builds that venv.)  With a regex, only the matching
programs are run again and the others' records kept.
"""

import json
import os
import re
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow as tf

from tests import public_sample_programs as programs

assert tf.__version__.startswith("2.15"), tf.__version__


def main(pattern=None, out=programs.RECORDED):
    results = {}
    if pattern is not None and os.path.exists(out):
        with open(out) as f:
            results = json.load(f)["programs"]
    for name, run in programs.PROGRAMS.items():
        if pattern is None or re.search(pattern, name):
            print(name, flush=True)
            with tempfile.TemporaryDirectory() as workdir:
                results[name] = run(workdir)
    results = {name: results[name] for name in programs.PROGRAMS if name in results}
    with open(out, "w") as f:
        json.dump({"tensorflow": tf.__version__, "programs": results}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(results)} programs to {os.path.normpath(out)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
