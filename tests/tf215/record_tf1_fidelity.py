"""Runs tests/tf1_fidelity_programs.py under tf.estimator 2.15; writes
tests/data/tf215/tf1_fidelity.json (as record_tf1_programs.py does for its programs).

    bench/.venv-tf215/bin/python tests/tf215/record_tf1_fidelity.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import record_tf1_programs
import tf1_fidelity_programs  # (record_tf1_programs put tests/ on the path)

if __name__ == "__main__":
    record_tf1_programs.record(tf1_fidelity_programs.PROGRAMS, "tf1_fidelity.json")
