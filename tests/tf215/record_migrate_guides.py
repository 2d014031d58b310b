"""Records tests/migrate_guide_programs.py under tf.estimator 2.15 into
tests/data/tf215/migrate_guides.json, as record_tf1_samples.py records its programs:

    bench/.venv-tf215/bin/python tests/tf215/record_migrate_guides.py [NAME_REGEX]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import record_tf1_samples

from tests import migrate_guide_programs

if __name__ == "__main__":
    record_tf1_samples.record_tutorial_programs.main(
        *sys.argv[1:],
        module=migrate_guide_programs,
        run_one=lambda run, workdir: run(record_tf1_samples.tf, workdir),
    )
