"""`run` and `init`: the pipeline on this machine, and a project to edit written from data."""

import dataclasses
import json
import logging
import os
import sys
import traceback

import click

from pipeline import exit_codes, hints
from pipeline.cli import errors
from pipeline.cli.options import (
    config_for,
    definition_option,
    given_settings,
    json_option,
    setting_options,
    wait_option,
)
from pipeline.cli.quiet import filtered_stderr, import_tensorflow
from pipeline.config import LOCAL_BACKENDS, PipelineConfig
from pipeline.config_values import name_of


@click.command(
    help="Run ExampleGen, Transform, Trainer, Evaluator and Pusher on this machine "
    "(LocalDagRunner, SQLite ML Metadata, Beam in memory) and print a summary. Outputs go "
    "under --output-dir unless given one by one. A definition's keys replace the defaults "
    "shown; options given here replace the definition's keys. Exit status 0: pushed; 3: "
    "completed, not pushed; 4: locked; 2: refused; 1: a component failed.",
    short_help="Run the whole pipeline locally and print a summary.",
)
@definition_option("the settings")
@setting_options("run")
@click.option("--verbose", is_flag=True, help="Show TFX's, Beam's and TensorFlow's own INFO logs.")
@json_option("the summary")
@wait_option
@click.pass_context
def run(ctx, verbose, as_json, wait, **_):
    config = config_for(ctx)
    errors.check_data(config)
    try:
        # Before any component runs: a wrong label names the columns there are.
        config = config.resolve_from_data()
    except ValueError as e:
        raise errors.Refused(errors.in_user_terms(str(e), config)) from None
    if config.training_backend not in LOCAL_BACKENDS:
        raise click.UsageError(
            f"--training-backend {config.training_backend} needs the artifacts on gs://, "
            "where its machines can read them: use it with `compile`.",
            ctx,
        )
    import_tensorflow(verbose)
    if not verbose:
        # The command prints progress and a summary: TensorFlow's warnings (those of TFMA's
        # reader after the run, too) are not for its user.
        logging.getLogger("tensorflow").setLevel(logging.ERROR)
    from pipeline.lock import Locked, pipeline_lock

    try:
        with (
            errors.removed_when_refused(config),
            filtered_stderr(verbose),
            pipeline_lock(config.resolved_metadata_path, "run", wait=wait),
        ):
            summary = _run_with_report(config, verbose)
    except Locked as e:
        print(f"Not run: {e}", file=sys.stderr)
        return exit_codes.LOCKED
    except Exception as e:
        if not errors.refused_data(e):
            raise
        if verbose:
            traceback.print_exc()
        raise errors.Refused(errors.in_user_terms(str(e), config)) from None
    if as_json:
        print(json.dumps(dataclasses.asdict(summary), indent=2, sort_keys=True))
    else:
        print(summary.format())
    return summary.exit_code


def _run_with_report(config, verbose):
    """`run`'s summary, with the run's report written at the end (also when a component
    failed: its path is printed before the error). Writing the report never changes the
    run's outcome: a failure there is a warning."""
    from pipeline.history import run_ids
    from pipeline.runner import run_locally

    known = run_ids(config)
    try:
        summary = run_locally(config, verbose=verbose)
    except Exception as e:
        if errors.refused_data(e):  # nothing ran: nothing to report
            raise
        path = _new_run_report(config, known)
        if path:
            print(f"Run report: {path}", file=sys.stderr)
        raise
    summary.report_path = _new_run_report(config, known)
    return summary


def _new_run_report(config, known):
    try:
        from pipeline.report import write_new_run_report

        return write_new_run_report(config, known)
    except Exception as e:  # the run's outcome matters more than its report
        print(f"warning: could not write the run report: {e}", file=sys.stderr)
        return None


@click.command(
    help="Runs on --data what `run --data ... --label ...` would run up to the model choice "
    "(ExampleGen, StatisticsGen and SchemaGen; then, with several candidates, the Transform "
    "and the Trainer, which trains every candidate to choose one: as long as a run's "
    "training; no Evaluator, no push), in a temporary folder, and writes DIR/pipeline.toml, "
    "DIR/schema.pbtxt (the inferred schema), DIR/preprocessing.py and DIR/model.py (the "
    "candidate chosen): what that run would run, as files to edit. Then `run --definition "
    "DIR/pipeline.toml`. For `compile`, DIR must be in the pipeline image: under "
    "definitions/, for example.",
    short_help="Write a pipeline project to edit: definition, inferred schema, "
    "preprocessing and model.",
)
@click.argument("dir", metavar="DIR")
@setting_options("init", required=("data_path", "raw_label_key"))
@click.option("--verbose", is_flag=True, help="Show TFX's, Beam's and TensorFlow's own INFO logs.")
@click.pass_context
def init(ctx, dir, verbose, **_):
    folder = os.path.abspath(dir)
    values = given_settings(ctx)
    values["data_path"] = os.path.abspath(values["data_path"])
    values.setdefault("pipeline_name", name_of(folder))
    try:
        config = PipelineConfig(**values)
    except ValueError as e:
        raise errors.Refused(errors.in_user_terms(str(e), None)) from None
    errors.check_data(dataclasses.replace(config, data_path=ctx.params["data_path"]))
    import_tensorflow(verbose)
    from pipeline.init import init_project

    try:
        with filtered_stderr(verbose):
            paths = init_project(folder, config)
    except (ValueError, FileExistsError) as e:
        if verbose:
            traceback.print_exc()
        raise errors.Refused(errors.in_user_terms(str(e), None)) from None
    print("Wrote " + ", ".join(hints.shown_path(p) for p in paths) + ".")
    print(f"Edit them, then: {hints.command('run', [('definition', paths[0])])}")
    return exit_codes.OK
