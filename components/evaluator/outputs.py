"""What an evaluation leaves behind, in the formats stock tooling reads: TFMA 0.52's files
(`metrics-*`, `plots-*`, `attributions-*`, `validations.tfrecord`, `eval_config.json`, read by
`tfma.load_eval_result` and its kin) and TFX's blessing (a BLESSED or NOT_BLESSED file and the
custom properties the Pusher and the latest-blessed-model resolver read).

Shared by the kit's Evaluator (executor.py) and TFX 1.15's eval-model Evaluator
(components/tfx_compat/evaluator.py): each computes its metrics its own way, and both write
them here.
"""

import dataclasses
import json
import os
from importlib import metadata

from google.protobuf import json_format, wrappers_pb2
from tensorflow_model_analysis.proto import metrics_for_slice_pb2, validation_result_pb2
from tfx.components.evaluator import constants

CANDIDATE, BASELINE = "candidate", "baseline"  # TFMA's model names when there is a baseline

_SHARD = "-00000-of-00001.tfrecord"
METRICS_FILE = "metrics" + _SHARD
PLOTS_FILE = "plots" + _SHARD
ATTRIBUTIONS_FILE = "attributions" + _SHARD
EVAL_CONFIG_FILE = "eval_config.json"


@dataclasses.dataclass(frozen=True)
class EvaluatedModel:
    """A model to score: its name in the output ("" when it is alone) and SavedModel path."""

    name: str
    path: str


def slice_key_proto(key):
    proto = metrics_for_slice_pb2.SliceKey()
    for column, value in key:
        single = proto.single_slice_keys.add(column=column)
        if isinstance(value, bytes):
            single.bytes_value = value
        elif isinstance(value, float):
            single.float_value = value
        else:
            single.int64_value = value
    return proto


def metric_key(name, model_name, is_diff=False):
    """TFMA's key; a per-class name `precision/class_3` is `precision` of class id 3."""
    base, _, class_part = name.partition("/class_")
    key = metrics_for_slice_pb2.MetricKey(
        name=base,
        model_name=model_name,
        is_diff=is_diff,
        example_weighted=wrappers_pb2.BoolValue(value=False),
    )
    if class_part:
        # Per class, the prediction is the most probable class (TFMA's top_k 1).
        key.sub_key.class_id.value = int(class_part)
        key.sub_key.top_k.value = 1
    return key


def metrics_for_slice(key, values_by_model):
    """One slice's `MetricsForSlice`: each metric of each model and, with a baseline, the
    candidate's difference from it (`is_diff`), as TFMA reports them."""
    proto = metrics_for_slice_pb2.MetricsForSlice(slice_key=slice_key_proto(key))
    models = sorted(values_by_model, key=lambda name: name != CANDIDATE and name != "")
    for metric in values_by_model[models[0]]:
        for model in models:
            entry = proto.metric_keys_and_values.add(key=metric_key(metric, model))
            entry.value.double_value.value = values_by_model[model][metric]
    if BASELINE in values_by_model:
        for metric, value in values_by_model[CANDIDATE].items():
            entry = proto.metric_keys_and_values.add(key=metric_key(metric, CANDIDATE, True))
            entry.value.double_value.value = value - values_by_model[BASELINE][metric]
    return proto


def plots_for_slice(key, plots_by_model):
    """One slice's `PlotsForSlice`: each plot of each model, under TFMA's plot keys."""
    proto = metrics_for_slice_pb2.PlotsForSlice(slice_key=slice_key_proto(key))
    for model in sorted(plots_by_model, key=lambda name: name != CANDIDATE and name != ""):
        for name, data in plots_by_model[model].items():
            entry = proto.plot_keys_and_values.add(value=data)
            entry.key.name = name
            entry.key.model_name = model
            entry.key.example_weighted.value = False
    return proto


def write_records(path, protos):
    import tensorflow as tf

    # On Vertex (and its local stand-in) no one creates an output artifact's folder.
    tf.io.gfile.makedirs(os.path.dirname(path))
    with tf.io.TFRecordWriter(path) as writer:
        for proto in protos:
            writer.write(proto.SerializeToString())


def write_slices(output_uri, keys, values, plots, validation):
    """The metrics, plots and (empty) attributions of each slice in `keys`, in that order
    (`values[key]` and `plots[key]`: {model name: {name: value or PlotData}}), and the
    `ValidationResult` `validation`."""
    records = {
        METRICS_FILE: [metrics_for_slice(key, values[key]) for key in keys],
        PLOTS_FILE: [plots_for_slice(key, plots[key]) for key in keys],
        ATTRIBUTIONS_FILE: [
            metrics_for_slice_pb2.AttributionsForSlice(slice_key=slice_key_proto(key))
            for key in keys
        ],
        constants.VALIDATIONS_TFRECORDS_FILE_NAME: [validation],
    }
    for name, protos in records.items():
        write_records(os.path.join(output_uri, name), protos)


def write_eval_config(output_uri, eval_config, models):
    """`eval_config.json` as TFMA writes it, with the models' names and locations."""
    import tensorflow as tf

    if len(models) > 1:
        spec = eval_config.model_specs[0]
        spec.name = CANDIDATE
        eval_config.model_specs.add().CopyFrom(spec)
        eval_config.model_specs[1].name = BASELINE
        eval_config.model_specs[1].is_baseline = True
    for metrics_spec in eval_config.metrics_specs:
        metrics_spec.model_names[:] = [model.name for model in models]
    document = {
        "evalConfig": json_format.MessageToDict(eval_config),
        "version": metadata.version("tensorflow-model-analysis"),
        "dataLocation": "<user provided PCollection>",
        "fileFormat": "<unknown>",
        "modelLocations": {model.name: model.path for model in models},
    }
    with tf.io.gfile.GFile(os.path.join(output_uri, EVAL_CONFIG_FILE), "w") as f:
        f.write(json.dumps(document, indent=2))


def bless(blessing, evaluation_uri, model, baseline):
    """BLESSED or NOT_BLESSED, and the properties TFX's resolvers and Pusher read."""
    import tensorflow as tf

    path = os.path.join(evaluation_uri, constants.VALIDATIONS_TFRECORDS_FILE_NAME)
    record = next(iter(tf.data.TFRecordDataset(path))).numpy()
    result = validation_result_pb2.ValidationResult.FromString(record)
    blessing.set_string_custom_property(
        constants.ARTIFACT_PROPERTY_CURRENT_MODEL_URI_KEY, model.uri
    )
    blessing.set_int_custom_property(constants.ARTIFACT_PROPERTY_CURRENT_MODEL_ID_KEY, model.id)
    if baseline is not None:
        blessing.set_string_custom_property(
            constants.ARTIFACT_PROPERTY_BASELINE_MODEL_URI_KEY, baseline.uri
        )
        blessing.set_int_custom_property(
            constants.ARTIFACT_PROPERTY_BASELINE_MODEL_ID_KEY, baseline.id
        )
    blessed = result.validation_ok
    name = constants.BLESSED_FILE_NAME if blessed else constants.NOT_BLESSED_FILE_NAME
    tf.io.gfile.makedirs(blessing.uri)
    with tf.io.gfile.GFile(os.path.join(blessing.uri, name), "w") as f:
        f.write("")
    blessing.set_int_custom_property(
        constants.ARTIFACT_PROPERTY_BLESSED_KEY,
        constants.BLESSED_VALUE if blessed else constants.NOT_BLESSED_VALUE,
    )
