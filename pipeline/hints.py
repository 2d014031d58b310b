"""The options that find a pipeline again, for the commands a summary, `init` or an error
suggests: a hint must run as printed, so it carries `--definition` or `--data`, and the
name and folders wherever they differ from what those alone would give. No TensorFlow."""

import os
import shlex

from pipeline import definition as definitions
from pipeline.config import PipelineConfig

PROGRAM = "python -m pipeline"


def _found_by(options):
    """The `PipelineConfig` a command builds from `options` alone, as pipeline/cli/options.py
    `config_for` does without a label: --data alone is zero code, else the definition (the
    default one without --definition) with the options over it."""
    values = dict(options)
    definition = values.pop("definition", None)
    if definition or "data_path" not in values:
        return definitions.build_found_config(definition, "report", values, label_needed=False)
    return PipelineConfig(**values, raw_label_key="-")


def finding_options(config, by_data=True):
    """((field, value), ...): the options that find `config`'s pipeline, its store and
    serving folder again. `by_data` False leaves --data out (`predict`, whose --data is the
    new rows): the pipeline is then named by --pipeline-name."""
    if config.definition_path and config.definition_path != definitions.DEFAULT_DEFINITION:
        options = [("definition", config.definition_path)]
    elif config.definition_path is None and by_data:
        options = [("data_path", os.path.abspath(config.data_path))]
    else:
        options = []
    try:
        found = _found_by(options)
    except ValueError:  # the definition was edited or removed since: name the pipeline
        options, found = [], None
    if found is None or found.pipeline_name != config.pipeline_name:
        options.append(("pipeline_name", config.pipeline_name))
        found = _found_by(options)
    if found.resolved_metadata_path != config.resolved_metadata_path:
        if config.metadata_path:
            options.append(("metadata_path", config.resolved_metadata_path))
        else:
            options.append(("output_dir", os.path.abspath(config.output_dir)))
    if config.serving_model_dir and found.serving_model_dir != config.serving_model_dir:
        options.append(("serving_model_dir", config.resolved_serving_model_dir))
    return tuple(options)


_FLAGS = {
    "definition": "--definition",
    "data_path": "--data",
    "pipeline_name": "--pipeline-name",
    "output_dir": "--output-dir",
    "metadata_path": "--metadata-path",
    "serving_model_dir": "--serving-model-dir",
}
# The commands that take each option (pipeline/settings.py; --definition: all of them).
_SERVING_COMMANDS = ("models", "rollback", "predict")


def shown_path(path):
    """`path` as a command line shows it: relative to the current folder when under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def command(name, options, *rest):
    """`python -m pipeline NAME` with `options` (from `finding_options`) and `rest` (more
    arguments), quoted for a POSIX shell, paths relative to the current folder."""
    words = [*PROGRAM.split(), name]
    for key, value in options:
        if key == "serving_model_dir" and name not in _SERVING_COMMANDS:
            continue
        shown = value if key == "pipeline_name" else shown_path(value)
        words += [_FLAGS[key], shown]
    words += rest
    return shlex.join(words)
