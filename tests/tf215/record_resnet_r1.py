"""Records tests/resnet_r1_programs.py under tf.estimator 2.15 (the venv
`bench/estimator_vs_tf215.py` builds) into tests/data/tf215/resnet_r1.json:

    bench/.venv-tf215/bin/python tests/tf215/record_resnet_r1.py [NAME_REGEX]

A regex runs the matching programs again and keeps the other records.
"""

import os
import sys

_TF215 = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_TF215, os.path.dirname(os.path.dirname(_TF215))]

import tensorflow as tf  # noqa: E402
from record_tutorial_programs import main  # noqa: E402  (checks that this is 2.15)

from tests import resnet_r1_programs  # noqa: E402

if __name__ == "__main__":
    main(*sys.argv[1:], module=resnet_r1_programs, run_one=lambda run, path: run(tf, path))
