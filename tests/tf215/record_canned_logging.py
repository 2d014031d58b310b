"""Runs tests/canned_logging_programs.py under tf.estimator 2.15; writes
tests/data/tf215/canned_logging.json.

    bench/.venv-tf215/bin/python tests/tf215/record_canned_logging.py [NAME_REGEX]
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import canned_logging_programs as programs
import record_tutorial_programs

if __name__ == "__main__":
    record_tutorial_programs.main(*sys.argv[1:], module=programs)
