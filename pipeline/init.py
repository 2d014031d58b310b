"""`python -m pipeline init DIR --data my.csv --label target`: a pipeline project to edit.

What zero code would run, written out: a definition (`pipeline.toml`), the schema SchemaGen
infers from the data (`schema.pbtxt`), the preprocessing (`preprocessing.py`) and the model
(`model.py`): the candidate zero code chooses, so init trains the candidates as `run` does
(`--candidate NAME` alone skips that). Run unedited they train what `run --data my.csv --label target` trains; every
file is meant to be edited, and `run --definition DIR/pipeline.toml` runs the edited version.
"""

import dataclasses
import datetime
import json
import os
import re
import string
import tempfile

from components.auto import transformed_name
from components.auto.preprocessing import CATEGORY, plan
from components.evaluator.tasks import DEFAULT_GATES
from components.example_gen import spans
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
$missing_values$spans$left_out
[label]
column = "$label"
task = "$task"
$num_classes
[preprocessing]
fn = "$preprocessing:preprocessing_fn"

[model]
build_estimator = "$model:build_estimator"
hidden_units = $hidden_units

[training]
# Without steps (or epochs) training stops when the loss on a tenth of the train split
# held out stops improving, and the best checkpoint is exported.
# steps = 2000
batch_size = $batch_size

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
from components.auto.preprocessing import category_ids, label_output, scaled_numbers

# z-scored; a missing value becomes 0 (the mean). One analyzer for them all.
NUMBERS = $numbers
# Column: its type. Vocabulary ids of the most frequent values, with out-of-vocabulary ids
# for the others and for a missing value. One analyzer for them all.
CATEGORIES = $categories
LABEL = $label
LABEL_TYPE = "$label_type"
TASK = "$task"


def preprocessing_fn(inputs):
    outputs = scaled_numbers(inputs, NUMBERS)
    outputs.update(category_ids(inputs, list(CATEGORIES.items())))
    outputs[transformed_name(LABEL)] = label_output(inputs[LABEL], LABEL_TYPE, TASK)
    return outputs
''')

# The classifier's head, as the auto model sets it: the label's values as the classes.
_CLASSES = """\
    classes = label_classes(tft_output)  # the label's values, as preprocessing.py wrote them
"""
_HEAD = "        n_classes=len(classes),\n        label_vocabulary=classes,\n"
# Each auto candidate's build_estimator body, per task kind ("classifier", "regressor").
_BODIES = {
    "wide_and_deep": (
        "Wide and deep: category ids wide (and as indicators deep), numbers deep.",
        """\
    # the numbers as one column: one weight matrix, one concat
    wide, deep = feature_columns(tft_output, transformed_label_key, numbers_together=True)
$classes    return estimator.DNNLinearCombined$Kind(
$head$optimizers        config=run_config,
        linear_feature_columns=wide or None,
        dnn_feature_columns=deep,
        dnn_hidden_units=list(hparams["hidden_units"]),  # [model] hidden_units
        warm_start_from=warm_start_from,
    )
""",
    ),
    "linear": (
        "Linear: one weight per category id and per number.",
        """\
    wide, deep = feature_columns(tft_output, transformed_label_key, numbers_together=True)
    numbers = [c for c in deep if not hasattr(c, "categorical_column")]  # not indicators
$classes    return estimator.Linear$Kind(
$head        feature_columns=wide + numbers,
        optimizer=lambda: tf.keras.optimizers.Ftrl(0.1, l2_regularization_strength=0.01),
        config=run_config,
        warm_start_from=warm_start_from,
    )
""",
    ),
    "boosted_trees": (
        "Boosted trees over the numbers and the category ids, as indicators (zero code's "
        "trees order a regression or binary label's category ids by the label's mean).",
        """\
    _, deep = feature_columns(tft_output, transformed_label_key)
$classes    return estimator.BoostedTrees$Kind(
$head        feature_columns=trees_ids(deep),  # a category's rarest ids as one
$trees    )
""",
    ),
    "boosted_trees_log": (
        "Boosted trees fitted to the label's logarithm, predicting exp of their sum.",
        """\
    _, deep = feature_columns(tft_output, transformed_label_key)
    return estimator.BoostedTreesEstimator(
        # Squared error on log(label), predictions exp(logits): the train labels are all
        # above 0 (label_range: their min and max in the train split's statistics).
        head=log_label_head(label_range[0]),
        feature_columns=trees_ids(deep),  # a category's rarest ids as one
$trees    )
""",
    ),
}
# The boosted trees' settings, as the auto model sets them (components/auto/model.py
# BOOSTED_TREES).
_TREES = """\
        # One layer per batch of n_batches_per_layer; train_in_memory: the Trainer feeds
        # the whole train split in every batch.
        n_batches_per_layer=$batches,
        train_in_memory=$in_memory,
        n_trees=$n_trees,
        max_depth=$max_depth,
        learning_rate=$learning_rate,
        l2_regularization=$l2_regularization,
        max_leaf_nodes=$max_leaf_nodes,
        min_samples_leaf=$min_samples_leaf,
        quantile_sketch_epsilon=$quantile_sketch_epsilon,
        multi_class_hessian="$multi_class_hessian",
$max_delta_step        center_bias=True,  # from the mean label, or the classes' log odds
        config=run_config,  # (boosted trees take no warm start, as in tf.estimator)
"""
# A regressor's linear and wide-and-deep bodies, as the auto model builds them: the label
# standardized by its train-split mean and std (label_moments), predicted in its own units.
_STANDARDIZED = """\
    # The label fitted as (y - mean) / std, its mean and std from the train split's
    # statistics; predictions come back in the label's units.
    head = standardized_head("regression", label_moments)
"""
_REGRESSOR_BODIES = {
    "wide_and_deep": """\
    wide, deep = feature_columns(tft_output, transformed_label_key, numbers_together=True)
$standardized    return estimator.DNNLinearCombinedEstimator(
        head,
        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01),
        config=run_config,
        linear_feature_columns=wide or None,
        dnn_feature_columns=deep,
        dnn_hidden_units=list(hparams["hidden_units"]),  # [model] hidden_units
        warm_start_from=warm_start_from,
    )
""",
    "linear": """\
    wide, deep = feature_columns(tft_output, transformed_label_key, numbers_together=True)
    numbers = [c for c in deep if not hasattr(c, "categorical_column")]  # not indicators
$standardized    return estimator.LinearEstimator(
        head,
        wide + numbers,
        optimizer=lambda: tf.keras.optimizers.Ftrl(0.1, l2_regularization_strength=0.01),
        config=run_config,
        warm_start_from=warm_start_from,
    )
""",
}
_OPTIMIZERS = {
    "classifier": "        dnn_optimizer=lambda: tf.keras.optimizers.Adam(0.01),\n",
    "regressor": "",  # boosted trees only: the others are _REGRESSOR_BODIES
}
_MODEL = string.Template('''\
"""The $name model: the Estimator its Trainer trains ($task).

Written by `python -m pipeline init`: the $winner candidate, the one zero code chose
for this data ($why).

Edit freely. The Trainer calls build_estimator(run_config, hparams, warm_start_from) and
passes tft_output (the transform graph), transformed_label_key (the label's name among
the transformed features), task, label_moments and label_range (a number label's mean and
std, and its min and max, over the train split) to the keywords it declares.
hparams holds the definition's [model] hidden_units.
"""

$imports
from components import estimator


def build_estimator(
    run_config, hparams, warm_start_from=None, *, tft_output, transformed_label_key$offered
):
    """$summary"""
$body''')


def model_text(name, task, winner, why, train_rows):
    """model.py for the auto candidate `winner` (components/auto/model.py)."""
    from components.auto import model as auto_model

    summary, body = _BODIES[winner]
    kind = "regressor" if task == "regression" else "classifier"
    standardized = kind == "regressor" and winner in _REGRESSOR_BODIES
    if standardized:
        body = _REGRESSOR_BODIES[winner]
    batches = auto_model.batches_per_layer(train_rows)
    trees = string.Template(_TREES).substitute(
        batches=batches,
        in_memory=batches == 1,
        max_delta_step=(
            f"        max_delta_step={auto_model.MULTICLASS_MAX_DELTA_STEP},\n"
            if task == "multiclass"
            else ""
        ),
        **auto_model.BOOSTED_TREES,
    )
    body = string.Template(body).substitute(
        Kind=kind.capitalize(),
        classes="" if kind == "regressor" else _CLASSES,
        head="" if kind == "regressor" else _HEAD,
        optimizers=_OPTIMIZERS[kind],
        standardized=_STANDARDIZED,
        trees=trees,
    )
    # the offered keyword the body reads, and the auto model's helper it calls
    keyword, helper = (
        ("label_moments", "standardized_head")
        if standardized
        else ("label_range", "log_label_head")
        if winner == "boosted_trees_log"
        else (None, None if kind == "regressor" else "label_classes")
    )
    imported = ["feature_columns"] + ([helper] if helper else [])
    imported += ["trees_ids"] if winner.startswith("boosted_trees") else []
    imports = f"from components.auto.model import {', '.join(imported)}"
    if re.search(r"\btf\.(?!estimator)", body):
        imports = "import tensorflow as tf\n\n" + imports
    return _MODEL.substitute(
        name=name,
        task=task,
        winner=winner,
        why=why,
        imports=imports,
        summary=summary,
        body=body,
        offered=f", {keyword}" if keyword else "",
    )


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


def run_zero_code(config, work_dir, stream=None):
    """(schema, winner, why, train rows): the schema SchemaGen infers for `config`'s data,
    and the candidate zero code chooses, with its reason. The data components run in
    `work_dir`, and with several candidates the Transform and the Trainer too (no Evaluator,
    no push)."""
    from components.schema_file import SCHEMA_FILE_NAME, load_schema
    from components.statistics_gen.layout import read_split_statistics
    from pipeline.config_values import trainer_candidates
    from pipeline.metadata import custom_property, latest_output
    from pipeline.pipeline import create_components
    from pipeline.runner import run_pipeline

    config = dataclasses.replace(
        config,
        schema_path=None,
        output_dir=work_dir,
        pipeline_root=None,
        metadata_path=None,
        enable_cache=False,
    )
    several = len(trainer_candidates(config)) > 1  # the Trainer's own rule
    last = "Trainer" if several else "SchemaGen"
    nodes = create_components(config, resolver=False)
    nodes = nodes[: [node.id for node in nodes].index(last) + 1]
    kwargs = {} if stream is None else {"stream": stream}
    run_pipeline(config, nodes, **kwargs)

    def latest(type_name):
        return latest_output(config.resolved_metadata_path, config.pipeline_name, type_name)

    schema = load_schema(os.path.join(latest("Schema").uri, SCHEMA_FILE_NAME))
    train_rows = int(read_split_statistics(latest("ExampleStatistics").uri, "train").num_examples)
    if not several:
        return schema, config.candidates[0], "the only candidate given", train_rows
    model_run = latest("ModelRun")
    choice = json.loads(custom_property(model_run, "model_choice"))
    served = custom_property(model_run, "model")
    if served != "ensemble":
        return schema, served, choice["reason"], train_rows
    # An ensemble is no one candidate's model.py: the best single one is written.
    why = f"the best single one; the run serves an ensemble: {choice['reason']}"
    return schema, choice["best_single"], why, train_rows


def definition_text(config, folder, label, task):
    """pipeline.toml for `config` (resolved from its data), written into `folder`: its data
    path relative to it; a span pattern's window (data.spans) written out to be edited."""
    missing = (
        ""
        if config.missing_values == DEFAULT_MISSING_VALUES
        else "missing_values = ["
        + ", ".join(f'"{_toml_string(v)}"' for v in config.missing_values)
        + "]\n"
    )
    window = (
        f'spans = "{_toml_string(config.data_spans)}"  # the newest N spans, or FIRST..LAST\n'
        if spans.is_pattern(config.data_path)
        else ""
    )
    return _DEFINITION.substitute(
        name=_toml_string(config.pipeline_name),
        date=datetime.date.today().isoformat(),
        data=os.path.basename(config.data_path.rstrip("/")),
        data_path=_toml_string(os.path.relpath(config.data_path, folder)),
        schema=SCHEMA,
        missing_values=missing,
        spans=window,
        left_out=left_out_comments(config.left_out),
        label=_toml_string(label),
        task=task,
        num_classes=f"num_classes = {config.num_classes}\n" if config.num_classes else "",
        preprocessing=PREPROCESSING,
        model=MODEL,
        gate=DEFAULT_GATES[task].describe(),
        hidden_units=json.dumps(list(config.hidden_units)),
        batch_size=config.train_batch_size,
    )


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
        schema, winner, why, train_rows = run_zero_code(config, work_dir, stream)
    features, (label, label_type, task) = plan(
        schema, config.raw_label_key, config.task, config.features, config.exclude_features
    )
    folder = os.path.abspath(folder)
    name = config.pipeline_name
    texts = {
        DEFINITION: definition_text(config, folder, label, task),
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
        MODEL: model_text(name, task, winner, why, train_rows),
    }
    os.makedirs(folder, exist_ok=True)
    paths = []
    for file_name, text in texts.items():
        path = os.path.join(folder, file_name)
        with open(path, "x") as f:
            f.write(text)
        paths.append(path)
    return paths
