"""`python -m pipeline predict`: a CSV of new rows through the served model, as a serving
client sends them.

Each row becomes a `tf.Example` of the raw columns typed by the schema the model was
trained with (the transform graph's raw schema, found through ML Metadata), a missing cell
(one of the run's missing-value texts) an absent feature, the label left out; the
SavedModel's serving signature scores them (`serving_default`: classes and scores; a
regressor's `regression`: the value). Rows ExampleGen would refuse (a wrong field count, a
value that does not parse, a required value missing) are set aside with file, line and
reason. When the label column is there, the rows that have a label are scored as the
Evaluator scores them (the label through the model's own `transform_features`) and the
task's metrics printed (components/evaluator/totals.py: the Evaluator's definitions).
"""

import dataclasses
import json
import os

import numpy as np

from components.auto.data import csv_files
from components.example_gen.csv_text import read_records
from components.example_gen.kinds import parse_value
from pipeline import history
from pipeline.metadata import custom_property

RAW_SCHEMA = os.path.join("metadata", "schema.pbtxt")  # in a TransformGraph artifact
BATCH = 1024  # rows scored at once
_KINDS = {1: "BYTES", 2: "INT", 3: "FLOAT"}  # tensorflow_metadata FeatureType values


class Refused(ValueError):
    """Input `predict` cannot use: the message is one line naming the file or the flag."""


@dataclasses.dataclass
class ServedModel:
    """A pushed version and what its run knew: the columns' kinds ({name: (INT|FLOAT|BYTES,
    required)}), the label, the task and the missing-value texts."""

    version: int
    path: str
    columns: dict
    label: str
    transformed_label: str
    task: str
    missing_values: tuple


def _read_schema(path):
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    with open(path) as f:
        schema = text_format.Parse(f.read(), schema_pb2.Schema())
    return {
        feature.name: (_KINDS[feature.type], feature.presence.min_fraction >= 1.0)
        for feature in schema.feature
        if feature.type in _KINDS
    }


def served_model(config, version=None):
    """The `ServedModel` of `version` (None: the one served now) of `config`'s pipeline;
    Refused when there is none, or ML Metadata does not say how it was trained."""
    past = history.load(config)
    serving_dir = config.resolved_serving_model_dir
    records = [r for r in past.models(serving_dir, with_metrics=False) if r["present"]]
    if not records:
        raise Refused(f"no model in {serving_dir}: run the pipeline first")
    wanted = next((r for r in records if r["serving"]), None) if version is None else None
    wanted = wanted or next((r for r in records if r["version"] == version), None)
    if wanted is None:
        versions = ", ".join(str(r["version"]) for r in records)
        raise Refused(f"--version {version}: no such version in {serving_dir} (there: {versions})")
    model = wanted["model"]
    trainer = past.producer.get(model.id) if model is not None else None
    if trainer is None:
        raise Refused(
            f"version {wanted['version']} in {serving_dir}: ML Metadata does not say which "
            "run trained it, so its columns are not known"
        )
    execution = past.executions[trainer]
    run = past.run_of.get(trainer)
    example_gen = [
        e
        for e in (past.run_executions[run.id] if run else [])
        if past.node_of.get(e.id) == "ExampleGen"
    ]
    missing = custom_property(example_gen[-1], "missing_values") if example_gen else None
    graph = past.inputs[trainer]["transform_graph"][0]
    return ServedModel(
        version=wanted["version"],
        path=wanted["path"],
        columns=_read_schema(os.path.join(graph.uri, RAW_SCHEMA)),
        label=custom_property(execution, "raw_label_key"),
        transformed_label=custom_property(execution, "transformed_label_key"),
        task=custom_property(execution, "task"),
        missing_values=tuple(json.loads(missing)) if missing else ("",),
    )


@dataclasses.dataclass
class Rows:
    """The rows of a CSV that can be served: their line (or id), serialized examples without
    and with the label (None where the label is missing), and the rows set aside."""

    ids: list = dataclasses.field(default_factory=list)
    examples: list = dataclasses.field(default_factory=list)
    labelled: list = dataclasses.field(default_factory=list)
    set_aside: list = dataclasses.field(default_factory=list)  # (file, line, column, reason)
    ignored_columns: list = dataclasses.field(default_factory=list)


def _feature(kind, value):
    import tensorflow as tf

    if kind == "INT":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
    if kind == "FLOAT":
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _header(path, records, model, id_column):
    """The header of `path` (its first record), checked against the model's columns."""
    first = next(records, None)
    if first is None:
        raise Refused(f"{path}: empty file: give a CSV with a header line and rows")
    header = first[1]
    needed = [n for n, (_, required) in model.columns.items() if required and n != model.label]
    lacking = [n for n in needed if n not in header]
    if lacking:
        raise Refused(
            f"{path} line 1: no column {', '.join(map(repr, lacking))}, which the model needs "
            "in every row: add it"
        )
    if id_column and id_column not in header:
        raise Refused(
            f"--id {id_column}: {path} has no such column (its columns: {', '.join(header)})"
        )
    return header


def read_rows(path, model, id_column=None):
    """`Rows` of the CSV file at `path`, or of each *.csv file of the folder `path` (a row
    then named file:line), for `model`, parsed as ExampleGen parses its rows."""
    if not os.path.exists(path):
        raise Refused(f"--data {path}: no such file")
    files = csv_files(path)  # as ExampleGen lists them
    if not files:
        raise Refused(f"--data {path}: a folder with no *.csv file")
    rows = Rows()
    for file in files:
        _read_file(file, model, id_column, rows, with_name=len(files) > 1)
    return rows


def _cells_feature(path, line, cells, model, missing):
    """({column: tf.train.Feature}, None) of a row's cells, or (None, the row set aside)."""
    feature = {}
    for name, (kind, required) in model.columns.items():
        text = cells.get(name)
        if text is None or text in missing:
            if required and name != model.label:
                return None, (path, line, name, "missing value for required feature")
            continue
        try:
            feature[name] = _feature(kind, parse_value(kind, text))
        except ValueError as e:
            return None, (path, line, name, str(e))
    return feature, None


def _read_file(path, model, id_column, rows, with_name):
    """Adds the rows of the CSV file `path` to `rows`."""
    import tensorflow as tf

    records = read_records(path)
    header = _header(path, records, model, id_column)
    rows.ignored_columns += [
        c
        for c in header
        if c not in model.columns and c != id_column and c not in rows.ignored_columns
    ]
    missing = frozenset(model.missing_values)
    for line, fields, _ in records:
        if len(fields) != len(header):
            reason = f"expected {len(header)} fields, got {len(fields)}"
            rows.set_aside.append((path, line, "", reason))
            continue
        cells = dict(zip(header, fields, strict=True))
        feature, bad = _cells_feature(path, line, cells, model, missing)
        if bad:
            rows.set_aside.append(bad)
            continue
        label = feature.pop(model.label, None)
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        rows.examples.append(example.SerializeToString())
        if label is None:
            rows.labelled.append(None)
        else:
            example.features.feature[model.label].CopyFrom(label)
            rows.labelled.append(example.SerializeToString())
        row_id = cells[id_column] if id_column else line
        rows.ids.append(f"{os.path.basename(path)}:{row_id}" if with_name else row_id)


def score(model, loaded, examples):
    """{"classes": [...], "scores": array (rows, classes)} of a classifier, or {"values":
    array} of a regressor: the serving signature's outputs of `loaded` (the SavedModel), in
    batches."""
    import tensorflow as tf

    regression = model.task == "regression"
    name = "regression" if regression and "regression" in loaded.signatures else "serving_default"
    signature = loaded.signatures[name]
    classes, parts = None, []
    for start in range(0, len(examples), BATCH):
        out = signature(inputs=tf.constant(examples[start : start + BATCH]))
        if regression:
            parts.append(out["outputs"].numpy().reshape(-1))
            continue
        parts.append(out["scores"].numpy())
        classes = [c.decode() for c in out["classes"].numpy()[0]]
    if regression:
        return {"values": np.concatenate(parts) if parts else np.zeros(0)}
    return {
        "classes": classes or [],
        "scores": np.concatenate(parts) if parts else np.zeros((0, 0)),
    }


def metrics(model, loaded, rows, outputs):
    """The task's metrics (as the Evaluator computes them) on the rows with a label, and
    their count; ({}, 0) without any."""
    import tensorflow as tf

    from components.evaluator import totals

    chosen = [i for i, serialized in enumerate(rows.labelled) if serialized is not None]
    if not chosen:
        return {}, 0
    labels = np.concatenate(
        [
            loaded.signatures["transform_features"](
                examples=tf.constant([rows.labelled[i] for i in chosen[start : start + BATCH]])
            )[model.transformed_label]
            .numpy()
            .reshape(-1)
            for start in range(0, len(chosen), BATCH)
        ]
    )
    if model.task == "regression":
        predictions = outputs["values"][chosen]
    else:
        if labels.dtype.kind in "SO":  # string labels: the head's class ids
            ids = {name.encode(): i for i, name in enumerate(outputs["classes"])}
            unknown = sorted({label for label in labels if label not in ids})
            if unknown:
                raise Refused(
                    f"label {model.label!r}: {unknown[0].decode()!r} is not a class of the "
                    f"model ({', '.join(outputs['classes'])})"
                )
            labels = np.array([ids[label] for label in labels])
        scores = outputs["scores"][chosen].astype(np.float64)
        predictions = scores if model.task == "multiclass" else scores[:, -1]
    task = totals.task_for(model.task, len(outputs.get("classes", [])) or None)
    n = len(chosen)
    (merged,) = task.totals(
        labels.astype(np.float64),
        predictions.astype(np.float64),
        np.ones(n),
        np.zeros(n, np.int64),
        1,
    )
    return task.values(merged), n


def records(model, rows, outputs, id_name):
    """One dict a row: its id (or line), the predicted class and each class's probability,
    or the predicted value."""
    out = []
    for i, row_id in enumerate(rows.ids):
        if model.task == "regression":
            out.append({id_name: row_id, "predicted": float(outputs["values"][i])})
            continue
        scores = outputs["scores"][i]
        out.append(
            {
                id_name: row_id,
                "predicted": outputs["classes"][int(np.argmax(scores))],
                "probabilities": dict(zip(outputs["classes"], map(float, scores), strict=True)),
            }
        )
    return out


def write(predictions, stream, as_json_lines):
    """`predictions` (`records`) as JSON lines, or as CSV (a column per class's probability:
    `p_<class>`)."""
    import csv

    if as_json_lines:
        for record in predictions:
            stream.write(json.dumps(record) + "\n")
        return
    writer = csv.writer(stream, lineterminator="\n")
    if not predictions:
        return
    first = predictions[0]
    classes = list(first.get("probabilities", {}))
    writer.writerow([*list(first)[:2], *(f"p_{c}" for c in classes)])
    for record in predictions:
        values = list(record.values())[:2]
        writer.writerow([*values, *(repr(record["probabilities"][c]) for c in classes)])
