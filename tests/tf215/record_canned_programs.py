"""Runs tests/canned_programs.py under tf.estimator 2.15; writes
tests/data/tf215/canned_programs.json (and the DNN programs' starting weights,
tests/data/tf215/canned_init/).

    bench/.venv-tf215/bin/python tests/tf215/record_canned_programs.py [NAME_REGEX]

(`bench/estimator_vs_tf215.py` builds that venv.)  With a regex, only the matching
programs are run again and the others' records kept.  Starting weights missing from
canned_init/ are drawn first (delete one to draw it again, then re-record its users).  A program that raises is
recorded as its error's type, which the test then expects too.
"""

import json
import os
import re
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import canned_programs as programs
import tensorflow as tf

assert tf.__version__.startswith("2.15"), tf.__version__
NAMESPACES = {"v2": tf.estimator, "v1": tf.compat.v1.estimator}


def _run(program, workdir):
    try:
        return program.run(NAMESPACES[program.namespace], workdir)
    except Exception as error:  # recorded: the kit must fail alike
        print(f"  raised {type(error).__name__}: {error}")
        return {"error": type(error).__name__}


def _write(results):
    results = {name: results[name] for name in programs.PROGRAMS if name in results}
    with open(programs.RECORDED, "w") as f:
        json.dump({"tensorflow": tf.__version__, "programs": results}, f, indent=1, sort_keys=True)
        f.write("\n")
    return len(results)


def main(pattern=None):
    programs.make_inits(tf.estimator, programs.INIT_DIR)  # those not yet drawn
    results = {}
    if pattern is not None and os.path.exists(programs.RECORDED):
        with open(programs.RECORDED) as f:
            results = json.load(f)["programs"]
    with tempfile.TemporaryDirectory() as workdir:
        for name, program in programs.PROGRAMS.items():
            if pattern is None or re.search(pattern, name):
                print(name, flush=True)
                results[name] = _run(program, os.path.join(workdir, name))
                _write(results)  # a long run's records kept as they come
    print(f"wrote {_write(results)} programs to {os.path.normpath(programs.RECORDED)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
