"""`runs`, `models`, `rollback` and `report`: a pipeline's past, found as `run` finds it
(its definition, or --data alone, names it and its folders). `runs`, `models` and
`rollback` read ML Metadata without TensorFlow."""

import json
import logging
import sys

import click

from pipeline import exit_codes
from pipeline.cli.errors import with_finding
from pipeline.cli.options import (
    config_for,
    definition_option,
    json_option,
    setting_options,
    wait_option,
)


def _history_command(name, help, short_help):
    """A command with the options every history command has."""

    def decorate(function):
        function = setting_options(name)(function)
        function = definition_option("the pipeline name and output folders")(function)
        return click.command(name, help=help, short_help=short_help)(click.pass_context(function))

    return decorate


_JSON_KEYS = " JSON keys: docs, Operating retraining."


@json_option("a JSON list of objects")
@_history_command(
    "runs",
    help="Each run: id, start, duration, outcome (pushed, not blessed, nothing new, failed "
    "with the failing component, incomplete), input rows and fingerprint, the spans read (a "
    "span pattern's), the run whose model it warm-started from, overall metrics, blessed, "
    "pushed version, definition and code version." + _JSON_KEYS,
    short_help="List the pipeline's local runs, newest first, from ML Metadata.",
)
def runs(ctx, as_json, **_):
    return _list(ctx, as_json)


@json_option("a JSON list of objects")
@_history_command(
    "models",
    help="Each version in the serving folder or recorded as pushed: metrics, the run, data "
    "fingerprint and spans, definition and code version behind it, whether it is a rollback, and "
    "whether it is served now (the highest version number)." + _JSON_KEYS,
    short_help="List the pushed model versions, highest first, with their lineage and which "
    "one is served.",
)
def models(ctx, as_json, **_):
    return _list(ctx, as_json)


def _list(ctx, as_json):
    """`runs` or `models` (ctx's command): a table, or JSON objects with the public keys."""
    config = config_for(ctx, label_needed=False)
    from pipeline import history

    try:
        past = history.load(config)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return exit_codes.REFUSED
    if ctx.info_name == "runs":
        records, keys, table = past.runs(), history.RUN_KEYS, history.format_runs
    else:
        records = past.models(config.resolved_serving_model_dir)
        keys, table = history.MODEL_KEYS, history.format_models
    if as_json:
        print(json.dumps([history.public(r, keys) for r in records], indent=2))
    else:
        print(table(records))
    return exit_codes.OK


@click.option("--to", "version", type=int, required=True, help="The version to serve again.")
@click.option("--dry-run", is_flag=True, help="Say what would be done; change nothing.")
@click.option("--force", is_flag=True, help="Serve a version that was never blessed.")
@click.option("--reason", help="Why, recorded in ML Metadata (not with a registry).")
@wait_option
@_history_command(
    "rollback",
    help="Copies the chosen version into a hidden staging folder in the serving folder and "
    "publishes it as a new, highest version with one rename (the served model changes "
    "atomically), and records the push in ML Metadata. With a Model Registry "
    "(--model-registry, or the definition's [vertex] model_registry), moves its default "
    "version alias to the chosen version instead (and, with an endpoint, deploys it there "
    "with all of the traffic). Exit status 0 when done (or nothing to do), 2 when refused: a "
    "version never pushed, or never blessed without --force; 1 when a Model Registry call "
    "failed; 4 when a run of the pipeline holds its lock.",
    short_help="Serve an earlier pushed model again, as a new highest version.",
)
def rollback(ctx, version, dry_run, force, reason, wait, **_):
    config = config_for(ctx, label_needed=False)
    from pipeline.lock import Locked, pipeline_lock
    from pipeline.rollback import rollback as roll_back

    try:
        with pipeline_lock(config.resolved_metadata_path, "rollback", wait=wait):
            return roll_back(config, version, dry_run=dry_run, force=force, reason=reason)
    except Locked as e:
        print(f"Not rolled back: {e}", file=sys.stderr)
        return exit_codes.LOCKED


@click.argument("run_id", metavar="RUN", required=False)
@click.option(
    "--out",
    metavar="FILE.html",
    help="Where to write it: a new file, or a report written before (default: <the ML "
    "Metadata store's folder>/reports/<run>.html, e.g. pipelines/<name>/reports/).",
)
@_history_command(
    "report",
    help="One HTML file with everything inline (no server, no network): data statistics per "
    "split as charts and the data anomalies, training curves from the Trainer's event files, "
    "the evaluation overall and per slice beside the baseline model, the blessing decision "
    "against its gate, what was pushed where, and the run's lineage. Prints the file's path. "
    "Exit status 2 when there is no such run, or --out is not a file it may write.",
    short_help="Write one self-contained HTML report of a run: data, training, evaluation, "
    "blessing, push and lineage.",
)
def report(ctx, run_id, out, **_):
    config = config_for(ctx, label_needed=False)
    from pipeline.cli.quiet import import_tensorflow

    import_tensorflow()  # the metrics are read with TFMA, the curves with TensorBoard's reader
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    from pipeline.report import write_report

    try:
        path = write_report(config, run_id, out)
    except (RuntimeError, ValueError) as e:
        print(with_finding(str(e), config), file=sys.stderr)
        return exit_codes.REFUSED
    print(path)
    return exit_codes.OK
