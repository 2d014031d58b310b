"""`stats` and `schema`: what the latest local run of a pipeline saw and used."""

import json
import os
import sys

import click

from pipeline import exit_codes
from pipeline.cli.options import config_for, definition_option, json_option, setting_options


@click.command(
    help="Per split, a table of every feature: type, count, missing %, mean, std, min and "
    "max for numbers, unique count and top values for strings; with a baseline, a drift "
    "column (L-infinity distance for strings, Jensen-Shannon divergence for numbers).",
    short_help="Print the data statistics of the latest local run, or of an artifact.",
)
@click.option(
    "--artifact",
    help="A statistics artifact folder (Split-*/FeatureStats.pb) or one FeatureStats.pb "
    "file; default: the latest run's, from ML Metadata.",
)
@click.option(
    "--baseline",
    help="Statistics to show drift against: a statistics artifact folder, one "
    "FeatureStats.pb, or a Model artifact folder (its training statistics); default: for "
    "the latest run, the training statistics of the blessed model it was compared with, if "
    "any; none with --artifact.",
)
@definition_option("the pipeline name and output folders")
@setting_options("stats")
@json_option("the statistics")
@click.pass_context
def stats(ctx, artifact, baseline, as_json, **_):
    from pipeline import stats as statistics

    try:
        baseline_path = statistics.baseline_path(baseline) if baseline else None
        if artifact:
            path = artifact
        else:
            config = config_for(ctx, label_needed=False)
            store, name = config.resolved_metadata_path, config.pipeline_name
            path = statistics.latest_statistics_uri(store, name)
            baseline_path = baseline_path or statistics.latest_baseline_uri(store, name)
        report = statistics.statistics_report(path, baseline_path)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return exit_codes.REFUSED
    print(json.dumps(report, indent=2) if as_json else statistics.format_report(report))
    return exit_codes.OK


@click.command(
    help="Prints the Schema text proto of the latest run (with --infer-schema, the one "
    "SchemaGen inferred), or writes it to --out: a file to edit and pass as --schema, so "
    "later runs validate against it.",
    short_help="Print or save the schema the latest local run used (inferred or imported).",
)
@definition_option("the pipeline name and output folders")
@setting_options("schema")
@click.option("--out", help="Write the schema to this file instead.")
@click.pass_context
def schema(ctx, out, **_):
    from components.schema_file import SCHEMA_FILE_NAME
    from pipeline import metadata

    config = config_for(ctx, label_needed=False)
    try:
        artifact = metadata.latest_output(
            config.resolved_metadata_path, config.pipeline_name, "Schema"
        )
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return exit_codes.REFUSED
    if artifact is None:
        print(f"The latest run in {config.resolved_metadata_path} has no schema.", file=sys.stderr)
        return exit_codes.REFUSED
    with open(os.path.join(artifact.uri, SCHEMA_FILE_NAME)) as f:
        text = f.read()
    if out is None:
        print(text, end="")
        return exit_codes.OK
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"{out}: the schema of {artifact.uri}", file=sys.stderr)
    return exit_codes.OK
