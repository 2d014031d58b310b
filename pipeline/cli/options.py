"""The options commands share: each setting's flag, made from its declaration
(pipeline/settings.py), and the few options that are not settings (--definition, --json,
--wait, --target).  "Was this option given" comes from Click's parameter sources: only the
options given replace a definition's keys."""

import dataclasses
import os

import click
from click.core import ParameterSource

from pipeline import definition as definitions
from pipeline.config import PipelineConfig
from pipeline.settings import declared, default_text

_DECLARED = {
    field.name: (field, declared_setting) for field, declared_setting in declared(PipelineConfig)
}


class _ColumnThreshold(click.ParamType):
    name = "COLUMN=VALUE"

    def convert(self, value, param, ctx):
        column, sep, number = value.rpartition("=")
        if not sep or not column:
            self.fail(f"{value!r} is not COLUMN=VALUE", param, ctx)
        try:
            return column, float(number)
        except ValueError:
            self.fail(f"{value!r}: {number!r} is not a number", param, ctx)


class _IntList(click.ParamType):
    name = "N,N,..."

    def convert(self, value, param, ctx):
        try:
            return tuple(int(x) for x in value.split(","))
        except ValueError:
            self.fail(f"{value!r} is not comma-separated integers", param, ctx)


# How a flag parses each kind of setting (pipeline/definition.py _TYPES); others: text.
_FLAG_TYPES = {
    "int": click.INT,
    "float": click.FLOAT,
    "thresholds": _ColumnThreshold(),
    "int_list": _IntList(),
}
_REPEATABLE = ("str_list", "thresholds")


def _setting_option(field, declared_setting, required):
    kind = declared_setting.kind
    help_text = declared_setting.help
    if declared_setting.choices and declared_setting.metavar:  # the metavar hides them
        help_text += " One of: " + ", ".join(declared_setting.choices) + "."
    options = {"help": help_text, "metavar": declared_setting.metavar, "required": required}
    if kind == "bool":  # a switch: given, the opposite of the default
        options.update(is_flag=True, default=False)
    else:
        options.update(
            default=None,
            multiple=kind in _REPEATABLE,
            type=(
                click.Choice(declared_setting.choices)
                if declared_setting.choices
                else _FLAG_TYPES.get(kind, click.STRING)
            ),
        )
        default = default_text(field, declared_setting)
        if default and field.default is not dataclasses.MISSING:
            options["help"] += f"  [default: {default}]"
    return click.option(declared_setting.flag, field.name, **options)


def setting_options(command, required=()):
    """Decorator: the flags of every setting `command` takes, in declaration order;
    `required` names fields this command cannot do without."""

    def decorate(function):
        for field, declared_setting in reversed(_DECLARED.values()):
            if declared_setting.flag and command in declared_setting.commands:
                if declared_setting.kind == "schema":
                    function = click.option(
                        "--infer-schema",
                        is_flag=True,
                        help="No schema file: the CSV columns typed from the data and the "
                        "schema inferred from the train split's statistics (SchemaGen).",
                    )(function)
                function = _setting_option(field, declared_setting, field.name in required)(
                    function
                )
        return function

    return decorate


def given(ctx, name):
    """Whether option `name` was given on the command line (not a default)."""
    return ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE


def given_settings(ctx):
    """The settings given on the command line, as `PipelineConfig` fields take them."""
    values = {}
    for name, value in ctx.params.items():
        if name not in _DECLARED or not given(ctx, name):
            continue
        field, declared_setting = _DECLARED[name]
        values[name] = not field.default if declared_setting.kind == "bool" else value
    if ctx.params.get("infer_schema"):
        if "schema_path" in values:
            raise click.UsageError("--schema and --infer-schema: give one of the two.")
        values["schema_path"] = None
    return values


def config_for(ctx, label_needed=True):
    """The `PipelineConfig` a command runs with: the options given over `--definition`'s
    keys (or the default definition's, without --definition and --data) over the defaults.
    With --data alone it is zero code, which needs --label unless `label_needed` is False
    (commands that only find the pipeline's folders). UsageError for what cannot work."""
    values = given_settings(ctx)
    definition = ctx.params.get("definition")
    try:
        if definition or "data_path" not in values:
            return definitions.build_found_config(definition, ctx.info_name, values, label_needed)
        if "raw_label_key" not in values:
            if not label_needed:  # only the name and folders are read
                return PipelineConfig(**values, raw_label_key="-")
            from components.auto.data import csv_files, read_header

            files = csv_files(values["data_path"])
            columns = f": one of {', '.join(read_header(files[0]))}" if files else ""
            raise ValueError(f"--label: name the column to predict{columns}.")
        return PipelineConfig(**values)
    except ValueError as e:
        raise click.UsageError(str(e), ctx) from None


def definition_option(reads):
    return click.option(
        "--definition",
        default=None,
        metavar="FILE.toml",
        help=f"Pipeline definition (TOML, e.g. definitions/<name>.toml) to take {reads} "
        "from; options given override it. Without --definition and --data, the default "
        f"definition ({os.path.relpath(definitions.DEFAULT_DEFINITION)}).",
    )


def json_option(what):
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


wait_option = click.option(
    "--wait",
    is_flag=True,
    help="When another run or rollback of this pipeline holds its lock, wait for it "
    "(default: exit at once with status 4, naming the holder).",
)


def target_option(what):
    return click.option(
        "--target",
        type=click.Choice(("vertex", "kubeflow")),
        default="vertex",
        show_default=True,
        help=what + " kubeflow: a self-hosted (open-source) Kubeflow Pipelines 2.x.",
    )


def only_for_target(ctx, target, names):
    """UsageError for options of `names` given while --target is not `target`."""
    if ctx.params["target"] == target:
        return
    wrong = [name for name in names if given(ctx, name)]
    if wrong:
        flags = ", ".join(
            next(p.opts[0] for p in ctx.command.params if p.name == name) for name in wrong
        )
        raise click.UsageError(f"{flags}: only with --target {target}", ctx)
