"""Runs tests/r1_sample_programs.py under tf.estimator 2.15; writes
tests/data/tf215/r1_samples.json.

    bench/.venv-tf215/bin/python tests/tf215/record_r1_samples.py [NAME_REGEX]

(`bench/estimator_vs_tf215.py` builds that venv.)  With a regex, only the matching
programs run again and the others' records are kept.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]  # its neighbours, the repo

import record_tutorial_programs  # noqa: E402  (puts tests/ on the path, checks 2.15)
import tensorflow as tf  # noqa: E402

from tests import r1_sample_programs  # noqa: E402

if __name__ == "__main__":
    record_tutorial_programs.main(
        *sys.argv[1:], module=r1_sample_programs, run_one=lambda run, workdir: run(tf, workdir)
    )
