"""The stock TFMA Evaluator's metrics for an evaluation our Evaluator wrote, to compare with.

TFMA runs the `eval_config.json` our Evaluator wrote (the same metrics, slices, models and
model names) over the same eval split, so the two can be compared key by key.
"""

import glob
import json
import math
import os

from pipeline.config import DEFAULT_BEAM_ARGS


def _by_key(metrics):
    """{(slice key, metric key): value} of `tfma.load_metrics`-style protos."""
    values = {}
    for metrics_for_slice in metrics:
        for entry in metrics_for_slice.metric_keys_and_values:
            key = (
                metrics_for_slice.slice_key.SerializeToString(deterministic=True),
                entry.key.SerializeToString(deterministic=True),
            )
            values[key] = entry.value.double_value.value
    return values


def stock_tfma_metrics(evaluation_uri, eval_files, output_dir):
    """Runs TFMA's own Evaluator as our Evaluator was configured; {key: value} of both."""
    import tensorflow_model_analysis as tfma
    from apache_beam.options.pipeline_options import PipelineOptions
    from google.protobuf import json_format
    from tensorflow_model_analysis.proto import config_pb2

    with open(os.path.join(evaluation_uri, "eval_config.json")) as f:
        written = json.load(f)
    eval_config = json_format.ParseDict(written["evalConfig"], config_pb2.EvalConfig())
    # Metrics only: TFMA refuses change thresholds without a baseline (TFX rubber-stamps).
    for metrics_spec in eval_config.metrics_specs:
        for metric in metrics_spec.metrics:
            metric.ClearField("per_slice_thresholds")
            metric.ClearField("threshold")
    models = [
        tfma.default_eval_shared_model(
            eval_saved_model_path=path, model_name=name, eval_config=eval_config
        )
        for name, path in written["modelLocations"].items()
    ]
    tfma.run_model_analysis(
        eval_shared_model=models if len(models) > 1 else models[0],
        eval_config=eval_config,
        data_location=eval_files,
        file_format="tfrecords",
        output_path=output_dir,
        # The kit's in-memory runner: Beam's default one starts a job server that leaves
        # its folders in the temp folder.
        pipeline_options=PipelineOptions(list(DEFAULT_BEAM_ARGS)),
    )
    return _by_key(tfma.load_metrics(output_dir)), _by_key(tfma.load_metrics(evaluation_uri))


def assert_agrees_with_stock_tfma(evaluation_uri, examples_uri, output_dir):
    """Every metric of every slice and model our Evaluator wrote equals TFMA's (to 1e-6), and
    no key is missing on either side."""
    eval_files = os.path.join(examples_uri, "Split-eval", "*")
    assert glob.glob(eval_files), f"no eval split under {examples_uri}"
    stock, ours = stock_tfma_metrics(evaluation_uri, eval_files, str(output_dir))
    from tensorflow_model_analysis.proto import metrics_for_slice_pb2

    assert set(stock) == set(ours), (
        [metrics_for_slice_pb2.MetricKey.FromString(key[1]) for key in set(stock) - set(ours)],
        [metrics_for_slice_pb2.MetricKey.FromString(key[1]) for key in set(ours) - set(stock)],
    )
    for key, value in stock.items():
        both_nan = math.isnan(value) and math.isnan(ours[key])
        assert both_nan or abs(value - ours[key]) <= 1e-6, (key, value, ours[key])
