"""Errors as one line: what is at fault (file and line, or the flag or definition key the
user wrote), the cause, the fix; no traceback unless --verbose. A refused run leaves no
folder it created behind."""

import contextlib
import itertools
import os
import re
import shutil
import sys
import traceback

import click

from pipeline import exit_codes
from pipeline.config import PipelineConfig
from pipeline.definition import KEYS
from pipeline.settings import declared


class Refused(click.ClickException):
    """Input or options that cannot work: one line, exit status 2."""

    exit_code = exit_codes.REFUSED

    def show(self, file=None):
        print(f"error: {one_line(self.format_message())}", file=file or sys.stderr)


def one_line(text):
    return " ".join(str(text).split())


def with_finding(message, config):
    """`message` with each command it suggests (`python -m pipeline runs`) given what finds
    `config`'s pipeline, so that it runs as printed."""
    from pipeline import hints

    options = hints.finding_options(config)
    return re.sub(
        r"`python -m pipeline (\w+)`",
        lambda match: f"`{hints.command(match.group(1), options)}`",
        message,
    )


def in_user_terms(message, config):
    """`message` with each setting's field name (max_bad_row_fraction) as the flag that sets
    it, and the definition key beside it when the run has a definition."""
    keys = {key.field: key for key in KEYS}
    flags = {field.name: s.flag for field, s in declared(PipelineConfig) if s.flag}

    def flag(match):
        field = match.group(0)
        text = flags[field]
        if config is not None and config.definition_path and field in keys:
            name = os.path.relpath(config.definition_path)
            text += f" (or {keys[field].label} in {name})"
        return text

    fields = sorted((f for f in flags if "_" in f), key=len, reverse=True)
    return re.sub(r"\b(" + "|".join(map(re.escape, fields)) + r")\b", flag, message)


def _data_source(config):
    """How the user named the data: the flag, or the definition's key."""
    if config.definition_path:
        return f"{os.path.relpath(config.definition_path)}: [data] path = {config.data_path!r}"
    return f"--data {config.data_path}"


def check_data(config):
    """Refused when the data is not there or holds no row (a URL or a span pattern is left
    to ExampleGen): before anything is created."""
    from components.auto.data import csv_files
    from components.example_gen.csv_text import read_records
    from components.example_gen.spans import is_pattern

    path = config.data_path
    if "://" in path or is_pattern(path):
        return
    if not os.path.exists(path):
        raise Refused(f"{_data_source(config)}: no such file or folder")
    files = csv_files(path)  # as ExampleGen lists them
    if not files:
        raise Refused(f"{_data_source(config)}: a folder with no *.csv file")
    for file in files:
        try:
            first_two = list(itertools.islice(read_records(file), 2))
        except ValueError as e:
            raise Refused(str(e)) from None
        if len(first_two) == 2:
            return
    what = "empty" if len(files) == 1 and not first_two else "no data rows"
    raise Refused(
        f"{_data_source(config)}: {what}: give a CSV with a header line and at least one row"
    )


def refused_data(error):
    """Whether `error` is ExampleGen refusing the data (a bad row, a header that does not
    match): a ValueError raised in components/example_gen."""
    if not isinstance(error, ValueError):
        return False
    frames = traceback.extract_tb(error.__traceback__)
    return any(f"{os.sep}components{os.sep}example_gen{os.sep}" in f.filename for f in frames)


def _first_missing(path):
    """The highest folder of `path`'s ancestors (or `path`) that does not exist yet."""
    path = os.path.abspath(path)
    top = None
    while not os.path.exists(path):
        top, path = path, os.path.dirname(path)
    return top


@contextlib.contextmanager
def removed_when_refused(config):
    """Removes the folders a run of `config` created when it ends with refused data."""
    new = {
        _first_missing(p)
        for p in (
            os.path.dirname(config.resolved_metadata_path),
            config.resolved_pipeline_root,
            config.resolved_serving_model_dir,
        )
    } - {None}
    try:
        yield
    except Exception as e:
        if refused_data(e):
            for folder in new:
                shutil.rmtree(folder, ignore_errors=True)
        raise


def failure_line(error, verbose_flag="--verbose"):
    """One line for an error nobody foresaw (exit status 1)."""
    return f"error: {type(error).__name__}: {one_line(error)} ({verbose_flag} shows the traceback)"
