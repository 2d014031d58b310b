"""Runs one family of sample programs under tf.estimator 2.15 and writes its recording.

    bench/.venv-tf215/bin/python tests/tf215/record_family.py MODULE [NAME_REGEX]

MODULE is a family's module under tests/ (`text_sequence_programs`, ...): its `PROGRAMS`
are `program(tf, workdir)`, its `RECORDED` the JSON written. With a regex, only the
matching programs run again and the others' records are kept. (`bench/estimator_vs_tf215.py`
builds that venv.)
"""

import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]  # its neighbours, the repo

import record_tutorial_programs  # noqa: E402  (puts tests/ on the path, checks 2.15)
import tensorflow as tf  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    family = importlib.import_module(f"tests.{sys.argv[1]}")
    record_tutorial_programs.main(
        *sys.argv[2:], module=family, run_one=lambda run, workdir: run(tf, workdir)
    )
