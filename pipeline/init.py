"""`python -m pipeline init DIR --data my.csv --label target`: a pipeline project to edit.

What zero code would run, written out: a definition (`pipeline.toml`), the schema SchemaGen
infers from the data (`schema.pbtxt`), the preprocessing (`preprocessing.py`) and the model
(`model.py`). Run unedited they train what `run --data my.csv --label target` trains; every
file is meant to be edited, and `run --definition DIR/pipeline.toml` runs the edited version.
"""

import dataclasses
import datetime
import json
import os
import string
import tempfile

from components.auto import transformed_name
from components.auto.preprocessing import CATEGORY, plan
from components.evaluator.tasks import DEFAULT_GATES
from components.example_gen.missing import DEFAULT_MISSING_VALUES

DEFINITION = "pipeline.toml"
SCHEMA = "schema.pbtxt"
PREPROCESSING = "preprocessing.py"
MODEL = "model.py"
FILES = (DEFINITION, SCHEMA, PREPROCESSING, MODEL)

_DEFINITION = string.Template("""\
# $name: written by `python -m pipeline init` on $date from $data.
# Edit freely. Paths are relative to this file's folder; keys left out take their defaults
# (docs/reference/settings.md); command-line options override any key.
name = "$name"

[data]
path = "$data_path"
schema = "$schema"  # inferred by SchemaGen: edit it, or "infer" to infer it on every run
$missing_values$left_out
[label]
column = "$label"
task = "$task"
$num_classes
[preprocessing]
fn = "$preprocessing:preprocessing_fn"

[model]
build_estimator = "$model:build_estimator"
hidden_units = [64, 32]

[training]
steps = 2000
batch_size = 64

[evaluation]
slices = []  # raw columns to evaluate per value as well, e.g. ["region"]

# [blessing]: the $task task's default gate:
#   $gate
""")

_PREPROCESSING = string.Template('''\
"""Preprocessing for $name: the tf.Transform preprocessing_fn its Transform runs.

Written by `python -m pipeline init` from the inferred schema ($schema), as the auto
preprocessing does it; edit freely. model.py builds its feature columns from whatever this
returns: an int64 output with an id range (TFT annotates vocabulary and bucket ids) is a
category, any other number a numeric column; the label is `$label_output`.
"""

from components.auto import transformed_name
from components.auto.preprocessing import category_ids, label_output, scaled_number

# z-scored; a missing value becomes 0 (the mean).
NUMBERS = $numbers
# Column: its type. Vocabulary ids of the most frequent values, with out-of-vocabulary ids
# for the others and for a missing value.
CATEGORIES = $categories
LABEL = $label
LABEL_TYPE = "$label_type"
TASK = "$task"


def preprocessing_fn(inputs):
    outputs = {}
    for name in NUMBERS:
        outputs[transformed_name(name)] = scaled_number(inputs[name])
    for name, kind in CATEGORIES.items():
        outputs[transformed_name(name)] = category_ids(inputs[name], name, kind)
    outputs[transformed_name(LABEL)] = label_output(inputs[LABEL], LABEL_TYPE, TASK)
    return outputs
''')

_CLASSIFIER = """\
    classes = label_classes(tft_output)  # the label's values, as preprocessing.py wrote them
    return estimator.DNNLinearCombinedClassifier(
        n_classes=len(classes),
        label_vocabulary=classes,
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01),
"""
_REGRESSOR = """\
    # The label keeps its own units: Adam moves the output bias there in a few hundred steps.
    return estimator.DNNLinearCombinedRegressor(
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.05),
        linear_optimizer=lambda: tf.keras.optimizers.Ftrl(0.5),
"""
_MODEL = string.Template('''\
"""The $name model: the Estimator its Trainer trains ($task).

Written by `python -m pipeline init`, as the auto model does it; edit freely. The Trainer
calls build_estimator(run_config, hparams, warm_start_from) and passes tft_output (the
transform graph), label_key and task to the keywords it declares. hparams holds the
definition's [model] hidden_units.
"""

import tensorflow as tf

$imports
from components.trainer import estimator


def build_estimator(run_config, hparams, warm_start_from=None, *, tft_output, label_key):
    """Wide and deep: category ids wide (and as indicators deep), numbers deep."""
    wide, deep = feature_columns(tft_output, label_key)
$estimator        config=run_config,
        linear_feature_columns=wide or None,
        dnn_feature_columns=deep,
        dnn_hidden_units=list(hparams.get("hidden_units", [64, 32])),
        warm_start_from=warm_start_from,
    )
''')


def _python_list(names):
    if not names:
        return "[]"
    return "[\n" + "".join(f"    {json.dumps(name)},\n" for name in names) + "]"


def _python_dict(pairs):
    if not pairs:
        return "{}"
    return "{\n" + "".join(f"    {json.dumps(k)}: {json.dumps(v)},\n" for k, v in pairs) + "}"


def _toml_string(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def left_out_comments(left_out):
    """The definition's lines naming the columns zero code left out, and why (comments: the
    project's own preprocessing.py decides its columns, so exclude_features does not apply)."""
    if not left_out:
        return ""
    return (
        "# Left out, as zero code leaves them out (no signal; preprocessing.py does not read\n"
        "# them: add one to its NUMBERS or CATEGORIES to use it):\n"
        + "".join(f"#   {json.dumps(name)}: {why}\n" for name, why in left_out)
    )


def infer_schema(config, work_dir, stream=None):
    """The schema SchemaGen infers for `config`'s data (ExampleGen, StatisticsGen and
    SchemaGen run in `work_dir`)."""
    from components.schema_file import SCHEMA_FILE_NAME, load_schema
    from pipeline.metadata import latest_output
    from pipeline.pipeline import data_components
    from pipeline.runner import run_pipeline

    config = dataclasses.replace(
        config,
        schema_path=None,
        output_dir=work_dir,
        pipeline_root=None,
        metadata_path=None,
        enable_cache=False,
    )
    _, example_gen, statistics_gen, schema_gen = data_components(config)
    kwargs = {} if stream is None else {"stream": stream}
    run_pipeline(config, [example_gen, statistics_gen, schema_gen], **kwargs)
    artifact = latest_output(config.resolved_metadata_path, config.pipeline_name, "Schema")
    return load_schema(os.path.join(artifact.uri, SCHEMA_FILE_NAME))


def init_project(folder, config, stream=None):
    """Writes FILES into `folder` for `config` (zero code's settings: data, label, task,
    missing values); returns their paths. Refuses to overwrite any of them."""
    from google.protobuf import text_format

    existing = [name for name in FILES if os.path.exists(os.path.join(folder, name))]
    if existing:
        raise FileExistsError(
            f"{folder} already has {', '.join(existing)}: init writes a new project; "
            "choose an empty folder"
        )
    config = config.resolve_from_data()
    with tempfile.TemporaryDirectory(prefix="pipeline-init-") as work_dir:
        schema = infer_schema(config, work_dir, stream)
    features, (label, label_type, task) = plan(
        schema, config.raw_label_key, config.task, config.features, config.exclude_features
    )
    folder = os.path.abspath(folder)
    name = config.pipeline_name
    missing = (
        ""
        if config.missing_values == DEFAULT_MISSING_VALUES
        else "missing_values = ["
        + ", ".join(f'"{_toml_string(v)}"' for v in config.missing_values)
        + "]\n"
    )
    texts = {
        DEFINITION: _DEFINITION.substitute(
            name=_toml_string(name),
            date=datetime.date.today().isoformat(),
            data=os.path.basename(config.data_path.rstrip("/")),
            data_path=_toml_string(os.path.relpath(config.data_path, folder)),
            schema=SCHEMA,
            missing_values=missing,
            left_out=left_out_comments(config.left_out),
            label=_toml_string(label),
            task=task,
            num_classes=f"num_classes = {config.num_classes}\n" if config.num_classes else "",
            preprocessing=PREPROCESSING,
            model=MODEL,
            gate=DEFAULT_GATES[task].describe(),
        ),
        SCHEMA: text_format.MessageToString(schema),
        PREPROCESSING: _PREPROCESSING.substitute(
            name=name,
            schema=SCHEMA,
            label_output=transformed_name(label),
            numbers=_python_list([n for n, treatment, _ in features if treatment != CATEGORY]),
            categories=_python_dict(
                [(n, k) for n, treatment, k in features if treatment == CATEGORY]
            ),
            label=json.dumps(label),
            label_type=label_type,
            task=task,
        ),
        MODEL: _MODEL.substitute(
            name=name,
            task=task,
            imports="from components.auto.model import feature_columns"
            + ("" if task == "regression" else ", label_classes"),
            estimator=_REGRESSOR if task == "regression" else _CLASSIFIER,
        ),
    }
    os.makedirs(folder, exist_ok=True)
    paths = []
    for file_name, text in texts.items():
        path = os.path.join(folder, file_name)
        with open(path, "x") as f:
            f.write(text)
        paths.append(path)
    return paths
