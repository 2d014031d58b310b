"""Command line: `python -m pipeline run [options]`.

Heavy imports (TensorFlow, TFX) happen only once a command runs, so
`--help` answers at once.
"""

import argparse
import dataclasses
import json
import os
import sys

from components.trainer.strategy import NAMES as STRATEGY_NAMES
from pipeline.config import DEFAULT_BEAM_ARGS, PipelineConfig

_DEFAULTS = PipelineConfig()


def _add_run_parser(subparsers):
    p = subparsers.add_parser(
        "run", help="Run the whole pipeline locally (LocalDagRunner, SQLite metadata, "
                    "Beam in memory) and print a summary.",
        description="Run ExampleGen, Transform, Trainer, Evaluator and Pusher on this "
                    "machine. Outputs go under --output-dir unless given one by one.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--pipeline-name", default=_DEFAULTS.pipeline_name,
                   help="Name of the pipeline; also names its output folders.")
    p.add_argument("--data", dest="data_path", default=_DEFAULTS.data_path,
                   help="CSV file, or folder of *.csv files, to ingest.")
    p.add_argument("--schema", dest="schema_path", default=_DEFAULTS.schema_path,
                   help="tensorflow_metadata Schema text proto that types the CSV columns.")
    p.add_argument("--output-dir", default=_DEFAULTS.output_dir,
                   help="Base folder for pipelines/<name>/ (root and metadata) and "
                        "serving_model/<name>/.")
    p.add_argument("--pipeline-root", default=None,
                   help="Where artifacts go (default: <output-dir>/pipelines/<name>/root).")
    p.add_argument("--metadata-path", default=None,
                   help="SQLite ML Metadata file (default: "
                        "<output-dir>/pipelines/<name>/metadata.sqlite).")
    p.add_argument("--serving-model-dir", default=None,
                   help="Where blessed models are pushed, one numeric version folder each "
                        "(default: <output-dir>/serving_model/<name>).")
    p.add_argument("--split-key", default=_DEFAULTS.split_key,
                   help="CSV column whose value decides train/eval; empty hashes the whole row.")
    p.add_argument("--split-ratios", default=_DEFAULTS.split_ratios,
                   help="JSON object of split name to weight.")
    p.add_argument("--max-bad-row-fraction", type=float,
                   default=_DEFAULTS.max_bad_row_fraction,
                   help="Fraction of malformed rows tolerated (written to a rejected file); "
                        "0 fails on the first one.")
    p.add_argument("--preprocessing-fn", default=_DEFAULTS.preprocessing_fn,
                   help="Dotted path of the tf.Transform preprocessing_fn.")
    p.add_argument("--estimator-fn", default=_DEFAULTS.estimator_fn,
                   help="Dotted path of build_estimator(run_config, hparams, warm_start_from).")
    p.add_argument("--train-steps", type=int, default=_DEFAULTS.train_steps,
                   help="Training steps.")
    p.add_argument("--eval-steps", type=int, default=_DEFAULTS.eval_steps,
                   help="Evaluation batches the Trainer runs after training.")
    p.add_argument("--train-batch-size", type=int, default=_DEFAULTS.train_batch_size,
                   help="Examples per training batch.")
    p.add_argument("--eval-batch-size", type=int, default=_DEFAULTS.eval_batch_size,
                   help="Examples per evaluation batch.")
    p.add_argument("--hidden-units", type=lambda s: tuple(int(x) for x in s.split(",")),
                   default=_DEFAULTS.hidden_units,
                   help="Widths of the DNN layers, comma-separated.")
    p.add_argument("--strategy", default=_DEFAULTS.strategy, choices=STRATEGY_NAMES,
                   help="tf.distribute strategy for the Trainer. 'auto': parameter_server if "
                        "TF_CONFIG lists ps tasks, multi_worker_mirrored if it lists several "
                        "workers, else mirrored with several GPUs, one_device with one, "
                        "default on the CPU.")
    p.add_argument("--warm-start", action="store_true",
                   help="Initialize the model from the latest blessed model, if any.")
    p.add_argument("--min-auc", type=float, default=_DEFAULTS.min_auc,
                   help="Blessing needs at least this AUC on the eval split.")
    p.add_argument("--max-auc-decrease", type=float, default=_DEFAULTS.max_auc_decrease,
                   help="Blessing allows at most this AUC drop against the latest blessed model.")
    p.add_argument("--beam-arg", dest="beam_pipeline_args", action="append", default=None,
                   help="A Beam pipeline argument, repeatable; passed unchanged to every "
                        f"Beam component (default: {' '.join(DEFAULT_BEAM_ARGS)}). Example: "
                        "--beam-arg=--direct_running_mode=multi_processing "
                        "--beam-arg=--direct_num_workers=2.")
    p.add_argument("--no-cache", dest="enable_cache", action="store_false",
                   help="Run every component even if its inputs are unchanged.")
    p.add_argument("--verbose", action="store_true",
                   help="Show TFX's, Beam's and TensorFlow's own INFO logs.")
    p.add_argument("--json", action="store_true",
                   help="Print the summary as JSON on stdout.")


def config_from_args(args):
    fields = {f.name for f in dataclasses.fields(PipelineConfig)}
    values = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    if "beam_pipeline_args" in values:
        values["beam_pipeline_args"] = tuple(values["beam_pipeline_args"])
    return PipelineConfig(**values)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        description="TFX pipeline kit: CSV to a pushed, serving-ready SavedModel with an "
                    "Estimator-based Trainer.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_run_parser(subparsers)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "run":
        config = config_from_args(args)
        if not args.verbose:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        from pipeline.runner import run_locally
        summary = run_locally(config, verbose=args.verbose)
        if args.json:
            print(json.dumps(dataclasses.asdict(summary), indent=2, sort_keys=True))
        else:
            print(summary.format())
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
