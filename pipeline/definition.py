"""Pipeline definitions: one TOML file per model, read into a `PipelineConfig`.

`KEYS` is the whole format: each key of a definition and the `PipelineConfig` field it sets,
made from the fields' `Setting`s (pipeline/settings.py).
This module checks only what the file itself can get wrong (unknown sections and keys, a
value of the wrong TOML type, a setting not supported yet) and resolves relative paths
against the definition's folder; `PipelineConfig.__post_init__` validates the values, and
its errors come back naming the definition's keys.  No TensorFlow import.
"""

import dataclasses
import difflib
import json
import os
import re
import tomllib

from components.trainer import length as training_length
from components.user_code import FILE_SEPARATOR, split_file_reference
from pipeline.config import REPO_ROOT, PipelineConfig
from pipeline.settings import SECTIONS as SETTING_SECTIONS
from pipeline.settings import declared, default_text

INFER_SCHEMA = "infer"
# What `python -m pipeline run` (and compile, stats, schema) reads without --definition
# and --data: in this repository a link to one of the examples; point it at your own.
DEFAULT_DEFINITION = str(REPO_ROOT / "definitions" / "default.toml")


class DefinitionError(ValueError):
    """A definition that cannot become a `PipelineConfig`; the message names file and key."""


@dataclasses.dataclass(frozen=True)
class Key:
    section: str  # "" for a top-level key
    name: str
    field: str  # the PipelineConfig field it sets
    kind: str = "str"  # see _TYPES; "path": relative to the definition's folder
    commands: tuple[str, ...] = ()  # only these commands read it; empty: every command

    @property
    def label(self):
        return f"[{self.section}] {self.name}" if self.section else self.name


def _definition_keys():
    """Every key of the format, from the settings' declarations, section by section."""
    keys = []
    for field, declared_setting in declared(PipelineConfig):
        labels = [(declared_setting.key, declared_setting.key_commands)]
        if declared_setting.command_key:
            labels.append(declared_setting.command_key)
        for label, commands in labels:
            if label:
                section, _, name = label.rpartition(".")
                keys.append(Key(section, name, field.name, declared_setting.kind, commands))
    return tuple(sorted(keys, key=lambda key: SETTING_SECTIONS.index(key.section)))


KEYS = _definition_keys()
# (field, key, what it is) of the settings without a default.
_REQUIRED = (
    ("data_path", "[data] path", "the CSV file, or folder of them"),
    ("raw_label_key", "[label] column", "the CSV column to predict"),
)
SECTIONS = tuple(dict.fromkeys(key.section for key in KEYS if key.section))
_BY_LABEL = {(key.section, key.name): key for key in KEYS}

_NUMBER = (int, float)
# kind: (what it must be, in words; test of the TOML value)
_TYPES = {
    "str": ("a string", lambda v: isinstance(v, str)),
    "path": ("a string (a path)", lambda v: isinstance(v, str)),
    "schema": (f"a string (a path, or {INFER_SCHEMA!r})", lambda v: isinstance(v, str)),
    "code": (
        '"auto", "package.module.function" or "file.py:function"',
        lambda v: isinstance(v, str),
    ),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "int": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, _NUMBER) and not isinstance(v, bool)),
    "str_list": (
        "a list of strings",
        lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    ),
    "int_list": (
        "a list of integers",
        lambda v: (
            isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
        ),
    ),
    "thresholds": (
        'a table of column = number, e.g. { "*" = 0.1, payment_type = 0.05 }',
        lambda v: (
            isinstance(v, dict)
            and all(isinstance(x, _NUMBER) and not isinstance(x, bool) for x in v.values())
        ),
    ),
    "table": ("a table", lambda v: isinstance(v, dict)),
    "ratios": (
        "a table of split name = weight, e.g. { train = 4, eval = 1 }",
        lambda v: (
            isinstance(v, dict)
            and all(isinstance(x, _NUMBER) and not isinstance(x, bool) for x in v.values())
        ),
    ),
}


def _describe(value):
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)
    return f"{kind} ({json.dumps(value, default=str)[:60]})"


def _resolve_path(value, folder):
    """Relative paths are relative to the definition's folder; URLs and absolute paths stay."""
    if "://" in value or os.path.isabs(value):
        return value
    return os.path.normpath(os.path.join(folder, value))


def _convert(key, value, folder):
    if key.kind == "path":
        return _resolve_path(value, folder)
    if key.kind == "schema":
        return None if value == INFER_SCHEMA else _resolve_path(value, folder)
    if key.kind == "code" and FILE_SEPARATOR in value:
        path, function = split_file_reference(value)
        return f"{_resolve_path(path, folder)}:{function}"
    if key.kind == "float":
        return float(value)
    if key.kind in ("str_list", "int_list"):
        return tuple(value)
    if key.kind == "thresholds":
        return tuple((column, float(v)) for column, v in value.items())
    if key.kind == "ratios":
        return json.dumps(value)
    if key.kind == "table":
        return json.dumps(value, sort_keys=True)
    return value


def _closest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclasses.dataclass(frozen=True)
class Definition:
    """A definition's settings as `PipelineConfig` fields, and the key that set each."""

    path: str
    values: dict
    keys: dict  # field -> Key
    raw: dict  # field -> the value as the file gives it

    def error(self, key, message):
        return DefinitionError(f"{self.path}: {key.label}: {message}")


def load(path, command="run"):
    """The definition at `path` for `command` (run, compile, ...); DefinitionError if it
    has an unknown section or key, a value of the wrong type or one not supported yet."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise DefinitionError(f"{path}: cannot read the definition: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise DefinitionError(f"{path}: not valid TOML: {e}") from None
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    definition = Definition(path, {}, {}, {})
    top_level = [key.name for key in KEYS if not key.section]
    for name, value in data.items():
        if name in SECTIONS:
            if not isinstance(value, dict):
                raise DefinitionError(f"{path}: [{name}] must be a table, got {_describe(value)}")
            items = [(name, key, v) for key, v in value.items()]
        elif ("", name) in _BY_LABEL:
            items = [("", name, value)]
        else:
            what = (
                f"[{name}]: unknown section" if isinstance(value, dict) else f"{name}: unknown key"
            )
            raise DefinitionError(
                f"{path}: {what}{_closest(name, [*SECTIONS, *top_level])}; top-level keys: "
                f"{', '.join(top_level)}; sections: {', '.join(f'[{s}]' for s in SECTIONS)}"
            )
        for section, key_name, key_value in items:
            _set(definition, section, key_name, key_value, folder, command)
    return definition


def _set(definition, section, name, value, folder, command):
    key = _BY_LABEL.get((section, name))
    if key is None:
        names = [k.name for k in KEYS if k.section == section]
        raise DefinitionError(
            f"{definition.path}: [{section}] {name}: unknown key{_closest(name, names)}; "
            f"[{section}] takes: {', '.join(names)}"
        )
    what, fits = _TYPES[key.kind]
    if not fits(value):
        raise definition.error(key, f"must be {what}, got {_describe(value)}")
    if key.commands and command not in key.commands:
        return  # e.g. [vertex] pipeline_root when running locally
    definition.values[key.field] = _convert(key, value, folder)
    definition.keys[key.field] = key
    definition.raw[key.field] = value


def _blamed_keys(definition, values, error):
    """The definition's keys at fault: those without which `values` make a config, else
    those whose field `error` names; never one a flag overrode."""
    own = {
        field: key
        for field, key in definition.keys.items()
        if values.get(field) == definition.values[field]
    }
    blamed = []
    for field, key in own.items():
        try:
            PipelineConfig(**{k: v for k, v in values.items() if k != field})
        except (ValueError, TypeError):  # TypeError: `field` is required
            continue
        blamed.append(key)
    return blamed or [key for field, key in own.items() if field in str(error)]


def build_found_config(path, command, overrides, label_needed=True):
    """`build_config` of `path`, or of `DEFAULT_DEFINITION` without one.  The kit installed
    from its wheel has no default definition (definitions/ is the checkout's): a command
    that only finds a pipeline (by --pipeline-name and its folders) then starts from the
    settings' defaults, and one that needs the label is told what to give."""
    if path is None and not os.path.exists(DEFAULT_DEFINITION):
        if label_needed:
            raise DefinitionError(
                "give --definition, or --data and --label: this installation has no default "
                f"definition ({DEFAULT_DEFINITION})"
            )
        values = {"data_path": "", **training_length.overriding(overrides)}
        return PipelineConfig(**values, raw_label_key="-")  # neither is read
    return build_config(path or DEFAULT_DEFINITION, command, overrides)


def build_config(path, command="run", overrides=None):
    """`PipelineConfig` from the definition at `path` with `overrides` (fields) over it;
    DefinitionError, naming the keys at fault, for values the config refuses."""
    definition = load(path, command)
    overrides = training_length.overriding(overrides)
    values = {**definition.values, **overrides, "definition_path": os.path.abspath(path)}
    for field, label, what in _REQUIRED:
        if field not in values:
            raise DefinitionError(f"{path}: {label}: required ({what})")
    try:
        return PipelineConfig(**values)
    except ValueError as e:
        keys = _blamed_keys(definition, values, e)
        where = ", ".join(f"{key.label} = {json.dumps(definition.raw[key.field])}" for key in keys)
        raise DefinitionError(f"{path}: {where or 'with the options given'}: {e}") from None


def _label(dotted):
    section, _, name = dotted.rpartition(".")
    return f"[{section}] {name}" if section else name


def _cell(text):
    """Markdown table cell text: pipes escaped, and angle brackets outside code spans (where
    Markdown would read `<name>` as HTML)."""
    parts = re.split(r"(`[^`]*`)", text.replace("|", "\\|"))
    return "".join(
        part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;")
        for part in parts
    )


def reference_table():
    """The docs' tables of every setting (docs/reference/settings.md), one per section of the
    definition under its heading, made from the declarations: its definition key, flag and
    the commands that take it, type, default."""
    header = ["| key | flag | type | default | what it is |", "|---|---|---|---|---|"]
    rows, section = [], None
    fields = {
        field.name: (field, declared_setting)
        for field, declared_setting in declared(PipelineConfig)
    }
    for key in KEYS:
        if key.section != section:  # a heading and a table per section: the page's contents
            section = key.section
            rows += ["", f"## `[{section}]`" if section else "## Top-level keys", "", *header]
        field, declared_setting = fields[key.field]
        flag = ""
        command_key = declared_setting.command_key
        if declared_setting.flag and not (command_key and key.label == _label(command_key[0])):
            flag = f"`{declared_setting.flag}` ({', '.join(declared_setting.commands)})"
        default = default_text(field, declared_setting)
        if default and declared_setting.default_text is None and default != "required":
            default = f"`{default}`"  # a value, not words
        kind = _TYPES[key.kind][0]
        if declared_setting.choices:
            kind += ": " + ", ".join(f"`{choice}`" for choice in declared_setting.choices)
        what = declared_setting.help
        if key.commands:
            what = f"`{'`, `'.join(key.commands)}` only. " + what
        rows.append(
            f"| `{key.label}` | {flag} | {_cell(kind)} | {_cell(default or 'none')} | "
            f"{_cell(what)} |"
        )
    return "\n".join(rows) + "\n"
