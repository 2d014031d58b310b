"""`predict`: a CSV of new rows through a pushed model, as a serving client would send them
(pipeline/predict.py)."""

import logging
import sys

import click

from pipeline import exit_codes
from pipeline.cli.options import config_for, definition_option, setting_options


@click.command(
    help="Reads --data (the raw columns the pipeline ingested; the label column is "
    "optional), sends each row as a tf.Example typed by the model's schema (a missing cell "
    "left out) through the served model's serving signature, and writes each row's line "
    "number (or --id) with the predicted class and every class's probability, or the "
    "predicted value. Rows ExampleGen would refuse are set aside, each named with file, "
    "line and reason. When the label column is there, prints the Evaluator's metrics on the "
    "rows that have a label. The pipeline is found as `report` finds it (--definition, or "
    "--pipeline-name; not --data, which is the new rows). Exit status 2: no such model or "
    "version, or --data unreadable.",
    short_help="Predict a CSV of new rows with the served (or another pushed) model.",
)
@click.option(
    "--data",
    "rows_path",
    required=True,
    metavar="FILE.csv",
    help="The rows to predict: a CSV file with a header, the columns the pipeline read (or "
    "a folder of *.csv files: each row then named file:line).",
)
@click.option(
    "--version", type=int, help="A pushed version (`models` lists them); default: served."
)
@click.option(
    "--out",
    metavar="FILE",
    help="Write the predictions here: CSV, or JSON lines for a .jsonl name (default: CSV on "
    "standard output).",
)
@click.option(
    "--id",
    "id_column",
    metavar="COLUMN",
    help="A column to print beside each prediction instead of the line number.",
)
@definition_option("the pipeline name and output folders")
@setting_options("predict")
@click.pass_context
def predict(ctx, rows_path, version, out, id_column, **_):
    config = config_for(ctx, label_needed=False)
    from pipeline.cli.quiet import filtered_stderr, import_tensorflow

    import_tensorflow()
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    import tensorflow as tf

    from pipeline import predict as predicting

    try:
        model = predicting.served_model(config, version)
        rows = predicting.read_rows(rows_path, model, id_column)
        _report_set_aside(rows)
        if not rows.examples:
            raise predicting.Refused(f"--data {rows_path}: no row to predict")
        with filtered_stderr():  # a tree model's ops log oneDNN's line
            loaded = tf.saved_model.load(model.path)
            outputs = predicting.score(model, loaded, rows.examples)
            values, labelled = predicting.metrics(model, loaded, rows, outputs)
    except (predicting.Refused, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return exit_codes.REFUSED
    records = predicting.records(model, rows, outputs, id_column or "line")
    as_json_lines = bool(out) and out.endswith(".jsonl")
    if out:
        with open(out, "w", newline="") as f:
            predicting.write(records, f, as_json_lines)
    else:
        predicting.write(records, sys.stdout, as_json_lines)
    where = f" to {out}" if out else ""
    print(
        f"{len(records):,} row(s) predicted{where} by version {model.version} ({model.path})",
        file=sys.stderr,
    )
    if values:
        from pipeline.history import format_metric

        shown = ", ".join(f"{k} = {format_metric(v)}" for k, v in sorted(values.items()))
        print(f"metrics on the {labelled:,} row(s) with a label: {shown}", file=sys.stderr)
    return exit_codes.OK


def _report_set_aside(rows):
    """Each row set aside, one line each (the first ten), and the columns not sent."""
    for path, line, column, reason in rows.set_aside[:10]:
        where = f", column {column!r}" if column else ""
        print(f"set aside: {path} line {line}{where}: {reason}", file=sys.stderr)
    if len(rows.set_aside) > 10:
        print(f"set aside: {len(rows.set_aside) - 10:,} more row(s)", file=sys.stderr)
    if rows.ignored_columns:
        print(
            "not sent (the model does not read them): " + ", ".join(rows.ignored_columns),
            file=sys.stderr,
        )
