"""Records what tests/input_pipeline_programs.py saw under tf.estimator 2.15 (the venv
`bench/estimator_vs_tf215.py` builds) into tests/data/tf215/input_pipelines.json:

    bench/.venv-tf215/bin/python tests/tf215/record_input_pipelines.py [NAME_REGEX]

A regex runs only the programs it matches again, keeping the others' records.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(os.path.dirname(HERE))]  # its neighbours, the repo

import record_tutorial_programs  # noqa: E402  (puts tests/ on the path, checks 2.15)
import tensorflow as tf  # noqa: E402

from tests import input_pipeline_programs  # noqa: E402

if __name__ == "__main__":
    record_tutorial_programs.main(
        *sys.argv[1:],
        module=input_pipeline_programs,
        run_one=lambda run, workdir: run(tf, workdir),
    )
