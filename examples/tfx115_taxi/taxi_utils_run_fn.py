"""The same taxi model under TFX's generic Trainer contract, `run_fn(fn_args)`: the
function trains and writes the serving SavedModel to `fn_args.serving_model_dir`.

The Transform still takes taxi_utils.py (its `preprocessing_fn`); this module
reuses its model and receivers.
"""

import taxi_utils  # a module_file's folder is on the import path
import tensorflow_transform as tft
from tfx.utils import io_utils

from components import estimator as tf_estimator
from components.exporter.serving import export_with_transform_features


def run_fn(fn_args):
    """Trains with checkpoints in the ModelRun artifact, then exports the serving model
    with the `transform_features` signature TFMA reads the label through."""
    tf_transform_output = tft.TFTransformOutput(fn_args.transform_output)
    schema = io_utils.SchemaReader().read(fn_args.schema_file)
    estimator = taxi_utils._build_estimator(
        tf_estimator.RunConfig(model_dir=fn_args.model_run_dir, save_checkpoints_steps=999),
        hidden_units=[16, 8],
        warm_start_from=fn_args.base_model,
    )
    train_spec = tf_estimator.TrainSpec(
        lambda: taxi_utils._input_fn(fn_args.train_files, tf_transform_output, 40),
        max_steps=fn_args.train_steps,
    )
    eval_spec = tf_estimator.EvalSpec(
        lambda: taxi_utils._input_fn(fn_args.eval_files, tf_transform_output, 40),
        steps=fn_args.eval_steps,
    )
    tf_estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    export_with_transform_features(
        estimator,
        lambda: taxi_utils._example_serving_receiver_fn(tf_transform_output, schema),
        tf_transform_output,
        fn_args.serving_model_dir,
    )
