"""Pipeline definitions: one TOML file per model, read into a `PipelineConfig`.

`KEYS` is the whole format: each key of a definition and the `PipelineConfig` field it sets.
This module checks only what the file itself can get wrong (unknown sections and keys, a
value of the wrong TOML type, a setting not supported yet) and resolves relative paths
against the definition's folder; `PipelineConfig.__post_init__` validates the values, and
its errors come back naming the definition's keys.  No TensorFlow import.
"""

import dataclasses
import difflib
import json
import os
import tomllib

from components.user_code import FILE_SEPARATOR, split_file_reference
from pipeline.config import REPO_ROOT, PipelineConfig

INFER_SCHEMA = "infer"
# What `python -m pipeline run` (and compile, stats, schema) reads without --definition
# and --data: in this repository a link to one of the examples; point it at your own.
DEFAULT_DEFINITION = str(REPO_ROOT / "definitions" / "default.toml")
# Commands that compile a pipeline for Vertex AI read the [vertex] folders.
VERTEX_COMMANDS = ("compile",)
# The Model Registry keys: where a compiled pipeline's Pusher uploads, and what `rollback`
# acts on instead of the local serving folder.
REGISTRY_COMMANDS = ("compile", "rollback")


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


KEYS = (
    Key("", "name", "pipeline_name"),
    Key("", "enable_cache", "enable_cache", "bool"),
    Key("data", "path", "data_path", "path"),
    Key("data", "schema", "schema_path", "schema"),
    Key("data", "split_key", "split_key"),
    Key("data", "split_ratios", "split_ratios", "ratios"),
    Key("data", "max_bad_row_fraction", "max_bad_row_fraction", "float"),
    Key("data", "missing_values", "missing_values", "str_list"),
    Key("data", "features", "features", "str_list"),
    Key("data", "exclude_features", "exclude_features", "str_list"),
    Key("label", "column", "raw_label_key"),
    Key("label", "transformed", "label_key"),
    Key("label", "task", "task"),
    Key("label", "num_classes", "num_classes", "int"),
    Key("preprocessing", "fn", "preprocessing_fn", "code"),
    Key("model", "build_estimator", "estimator_fn", "code"),
    Key("model", "hidden_units", "hidden_units", "int_list"),
    Key("model", "canned", "canned_estimator"),
    Key("model", "args", "canned_args", "table"),
    Key("training", "steps", "train_steps", "int"),
    Key("training", "epochs", "train_epochs", "float"),
    Key("training", "eval_steps", "eval_steps", "int"),
    Key("training", "batch_size", "train_batch_size", "int"),
    Key("training", "eval_batch_size", "eval_batch_size", "int"),
    Key("training", "save_checkpoints_steps", "save_checkpoints_steps", "int"),
    Key("training", "random_seed", "random_seed", "int"),
    Key("training", "warm_start", "warm_start", "bool"),
    Key("training", "strategy", "strategy"),
    Key("training", "backend", "training_backend"),
    Key("training", "workers", "workers", "int"),
    Key("training", "parameter_servers", "parameter_servers", "int"),
    Key("training", "machine_type", "machine_type"),
    Key("training", "accelerator_type", "accelerator_type"),
    Key("training", "accelerator_count", "accelerator_count", "int"),
    Key("training", "ps_machine_type", "ps_machine_type"),
    Key("training", "service_account", "training_service_account"),
    Key("evaluation", "slices", "slice_features", "str_list"),
    Key("blessing", "metric", "blessing_metric"),
    Key("blessing", "threshold", "blessing_threshold", "float"),
    Key("blessing", "max_change", "blessing_max_change", "float"),
    Key("blessing", "max_relative_change", "blessing_max_relative_change", "float"),
    Key("validation", "warn_only", "warn_only_anomalies", "str_list"),
    Key("validation", "drift_thresholds", "drift_thresholds", "thresholds"),
    Key("validation", "skew_thresholds", "skew_thresholds", "thresholds"),
    Key("output", "dir", "output_dir", "path"),
    Key("output", "pipeline_root", "pipeline_root", "path"),
    Key("output", "metadata_path", "metadata_path", "path"),
    Key("serving", "dir", "serving_model_dir", "path"),
    Key("beam", "args", "beam_pipeline_args", "str_list"),
    Key("beam", "runner", "beam_runner"),
    Key("beam", "worker_image", "beam_worker_image"),
    Key("beam", "temp_location", "beam_temp_location"),
    Key("beam", "job_endpoint", "beam_job_endpoint"),
    Key("vertex", "project", "gcp_project"),
    Key("vertex", "region", "gcp_region"),
    Key("vertex", "image", "image"),
    # Where a compiled pipeline writes: these replace [output] pipeline_root and
    # [serving] dir for `compile`; `run` keeps its local folders.
    Key("vertex", "pipeline_root", "pipeline_root", "path", commands=VERTEX_COMMANDS),
    Key("vertex", "serving_dir", "serving_model_dir", "path", commands=VERTEX_COMMANDS),
    Key("vertex", "model_registry", "model_registry", commands=REGISTRY_COMMANDS),
    Key("vertex", "serving_container_image", "serving_container_image", commands=REGISTRY_COMMANDS),
    Key("vertex", "endpoint", "vertex_endpoint", commands=REGISTRY_COMMANDS),
    Key("vertex", "endpoint_machine_type", "endpoint_machine_type", commands=REGISTRY_COMMANDS),
)
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
        "a table of split name = weight, e.g. { train = 2, eval = 1 }",
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


def build_config(path, command="run", overrides=None):
    """`PipelineConfig` from the definition at `path` with `overrides` (fields) over it;
    DefinitionError, naming the keys at fault, for values the config refuses."""
    definition = load(path, command)
    overrides = dict(overrides or {})
    for given, other in (("train_steps", "train_epochs"), ("train_epochs", "train_steps")):
        if overrides.get(given) is not None:  # an override replaces the training length
            overrides.setdefault(other, None)
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
