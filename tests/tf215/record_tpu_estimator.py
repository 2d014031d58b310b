"""Runs tests/tpu_programs.py under tf.estimator 2.15; writes tests/data/tf215/tpu_estimator.json.

    bench/.venv-tf215/bin/python tests/tf215/record_tpu_estimator.py

(`bench/estimator_vs_tf215.py` builds that venv.)  Recorded once, with the public
names of 2.15's `tf.compat.v1.estimator.tpu`; tests/test_estimator_tpu.py runs the
same programs on this kit's `TPUEstimator(use_tpu=False)` and compares.
"""

import json
import os
import sys
import tempfile

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)

import tensorflow as tf  # noqa: E402
import tpu_programs  # noqa: E402

OUT = os.path.join(TESTS, "data", "tf215", "tpu_estimator.json")


def public_names(module):
    return sorted(name for name in dir(module) if not name.startswith("_"))


def main():
    assert tf.__version__.startswith("2.15"), f"needs TF 2.15's venv, not {tf.__version__}"
    namespace = tf.compat.v1.estimator
    record = {
        "tensorflow": tf.__version__,
        "names": {
            "tpu": public_names(namespace.tpu),
            "tpu.experimental": public_names(namespace.tpu.experimental),
        },
        "programs": {},
    }
    for name, program in tpu_programs.PROGRAMS.items():
        with tempfile.TemporaryDirectory(prefix=f"{name}-") as folder:
            record["programs"][name] = program(namespace, folder)
    with open(OUT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
