"""Runs tests/keras_model_fn_programs.py under tf.estimator 2.15 (its side of
tests/test_estimator_keras_model_fn.py).

    bench/.venv-tf215/bin/python tests/tf215/record_keras_model_fn.py

writes tests/data/tf215/keras_model_fn.json (every model and optimizer's variable
names; the logits of the CHECKPOINTED model_fn after TRAIN_STEPS, and after MORE_STEPS
more) and that model_dir, its last checkpoint only, to
tests/data/tf215/keras_model_fn_model/.
"""

import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import keras_model_fn_programs as programs  # noqa: E402
import tensorflow as tf  # noqa: E402
from record_checkpoints import _keep_last_checkpoint_only  # noqa: E402

DATA = os.path.join(HERE, "..", "data", "tf215")


def main():
    with tempfile.TemporaryDirectory() as workdir:
        names = programs.variable_names(tf.estimator, workdir)
        model_dir = os.path.join(workdir, "checkpointed")
        model = programs.estimator_for(tf.estimator, *programs.CHECKPOINTED, model_dir)
        model.train(programs.train_input_fn, steps=programs.TRAIN_STEPS)
        _keep_last_checkpoint_only(model_dir)
        out_dir = os.path.join(DATA, "keras_model_fn_model")
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.copytree(model_dir, out_dir)
        resumed = programs.resume(tf.estimator, model_dir)
    recorded = {"tensorflow": tf.__version__, "variable_names": names, "resumed": resumed}
    with open(os.path.join(DATA, "keras_model_fn.json"), "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
