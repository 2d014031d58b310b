"""The command line, `python -m pipeline COMMAND [options]`, on Click: one module per
group of commands (local: run, init; remote: compile, submit, schedule; history: runs,
models, rollback, report; inspect: stats, schema; serve: predict), their shared options in `options`.

Heavy imports (TensorFlow, TFX) happen only once a command runs, so `--help` answers at
once. Exit statuses: pipeline/exit_codes.py.
"""

import sys

import click

from pipeline import exit_codes
from pipeline.cli import errors, history, inspect, local, options, remote, serve


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit status: "
    + "; ".join(f"{status}: {meaning}" for status, meaning in exit_codes.MEANINGS)
    + ".",
)
def cli():
    """TFX pipeline kit: CSV to a pushed, serving-ready SavedModel with an Estimator-based
    Trainer."""


for command in (
    local.run,
    local.init,
    remote.compile_command,
    remote.submit,
    remote.schedule,
    inspect.stats,
    inspect.schema,
    history.runs,
    history.models,
    history.rollback,
    history.report,
    serve.predict,
):
    cli.add_command(command)


def main(argv=None):
    """Runs one command; returns its exit status. A usage error or refused input exits with
    status 2 (as SystemExit) after one line on standard error; an unforeseen error is one
    line too (exit status 1), its traceback only with --verbose."""
    try:
        return cli.main(args=argv, prog_name="python -m pipeline", standalone_mode=False)
    except click.ClickException as e:
        _show(e)
        raise SystemExit(e.exit_code) from None
    except click.Abort:
        raise SystemExit(exit_codes.FAILED) from None
    except Exception as e:
        if "--verbose" in (sys.argv[1:] if argv is None else argv):
            raise
        print(errors.failure_line(e), file=sys.stderr)
        return exit_codes.FAILED


def _show(error):
    """A Click error as one line: the command's name, the error and where help is."""
    if isinstance(error, errors.Refused):
        error.show()
        return
    context = getattr(error, "ctx", None)
    where = f" ({context.command_path} --help)" if context is not None else ""
    print(f"error: {errors.one_line(error.format_message())}{where}", file=sys.stderr)


def config_from_argv(argv):
    """The `PipelineConfig` the command line `argv` (a command and its options) runs with,
    for scripts and tests; a usage error exits as `main` does."""
    command = cli.commands[argv[0]]
    parent = click.Context(cli, info_name="python -m pipeline")
    try:
        with command.make_context(argv[0], list(argv[1:]), parent=parent) as ctx:
            return options.config_for(ctx)
    except click.ClickException as e:
        _show(e)
        raise SystemExit(e.exit_code) from None
