"""Each pipeline setting is declared once, as a `PipelineConfig` field with a `Setting`.

From that one declaration come the definition's keys (pipeline/definition.py `KEYS`), the
command-line options of every command that takes the setting (pipeline/cli/options.py),
and the reference table of the docs (`reference_table`, docs/reference/settings.md).
Adding a setting is adding a field and the code that uses it.  No TensorFlow import.
"""

import dataclasses
import json

# Commands by what they read of the settings (pipeline/cli).
BUILD = ("run", "compile")  # every setting of the pipeline
STORE = ("stats", "schema", "runs", "models", "rollback", "report")  # where a store is
HISTORY = ("runs", "models", "rollback", "report")  # a pipeline found as `run` finds it
LOCAL = ("run", *STORE)  # commands with local output folders
REGISTRY = ("compile", "rollback")  # the Vertex AI Model Registry's settings
# A flag spelled from the field's name: train_steps is --train-steps.
NAMED_FLAG = "--<field-name>"
# The definition's sections, in the order the docs list them ("" for top-level keys).
SECTIONS = (
    "",
    "data",
    "label",
    "preprocessing",
    "model",
    "training",
    "evaluation",
    "blessing",
    "validation",
    "output",
    "serving",
    "beam",
    "vertex",
)


@dataclasses.dataclass(frozen=True)
class Setting:
    """What a `PipelineConfig` field is, to a definition, a command line and the docs."""

    help: str
    # The definition key, "section.name" (or "name" at the top level); None: no key.
    key: str | None = None
    # The value's type (pipeline/definition.py `TYPES`): how a definition writes it and how
    # a flag parses it; "path" values are relative to the definition's folder.
    kind: str = "str"
    # The command-line flag (`NAMED_FLAG`: the field's name as a flag); None: only a
    # definition sets it.
    flag: str | None = NAMED_FLAG
    # The commands that take the flag.
    commands: tuple[str, ...] = BUILD
    # Only these commands read `key` (empty: every command).
    key_commands: tuple[str, ...] = ()
    # Another key that sets the field for only some commands, in place of `key`: e.g.
    # ("vertex.pipeline_root", ("compile",)).
    command_key: tuple[str, tuple[str, ...]] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    # The default in words, where it is worked out rather than a value.
    default_text: str | None = None


def setting(default=dataclasses.MISSING, **declaration):
    """A `PipelineConfig` field with its `Setting`."""
    return dataclasses.field(default=default, metadata={"setting": Setting(**declaration)})


def declared(config_class):
    """(field, Setting) of each declared setting of `config_class`, in declaration order,
    each `NAMED_FLAG` spelled out."""
    return [
        (field, _flag_named(field, field.metadata["setting"]))
        for field in dataclasses.fields(config_class)
        if "setting" in field.metadata
    ]


def _flag_named(field, declared_setting):
    if declared_setting.flag != NAMED_FLAG:
        return declared_setting
    return dataclasses.replace(declared_setting, flag="--" + field.name.replace("_", "-"))


def default_text(field, declared_setting):
    """A field's default as the docs and `--help` show it; None when it has none."""
    if declared_setting.default_text is not None:
        return declared_setting.default_text
    value = field.default
    if value is dataclasses.MISSING:
        return "required"
    if value is None:
        return None
    if declared_setting.kind == "int_list":
        return ",".join(map(str, value))
    if declared_setting.kind == "str_list":
        return " ".join(json.dumps(v) for v in value) if value else None
    if declared_setting.kind == "thresholds":
        return "none: not checked"
    if declared_setting.kind == "table":
        return value
    if declared_setting.kind == "bool":
        return json.dumps(value)
    return json.dumps(value) if isinstance(value, str) else str(value)
