"""Records tests/feature_column_programs.py under tf.estimator 2.15, into
tests/data/tf215/feature_columns.json:

    bench/.venv-tf215/bin/python tests/tf215/record_feature_columns.py [NAME_REGEX]

A regex runs the programs it matches again and keeps the others' records; the venv is
the one `bench/estimator_vs_tf215.py` builds.
"""

import os
import sys

_TF215 = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_TF215, os.path.dirname(os.path.dirname(_TF215))]

import record_tutorial_programs  # noqa: E402  (checks that this is 2.15)
import tensorflow as tf  # noqa: E402

from tests import feature_column_programs  # noqa: E402


def run_under_tf215(run, workdir):
    return run(tf, workdir)


if __name__ == "__main__":
    record_tutorial_programs.main(
        *sys.argv[1:], module=feature_column_programs, run_one=run_under_tf215
    )
