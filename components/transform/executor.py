"""Beam executor for Transform: analyze some splits, transform the chosen ones."""

import json
import os
from typing import Any

import apache_beam as beam
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import types
from tfx.components.util import examples_utils
from tfx.proto import example_gen_pb2
from tfx.types import artifact_utils
from tfx.utils import io_utils

from components import progress, user_code
from components.beam_executor import BeamExecutor
from components.example_encoding import serialize_list_columns
from components.examples_reader import ReadSplit, split_files
from components.schema_gen.inference import with_fixed_shapes
from components.tfrecord_files import WriteTFRecordBatches
from components.transform import packing


def _read_schema(path: str) -> schema_pb2.Schema:
    return io_utils.parse_pbtxt_file(path, schema_pb2.Schema())


def _split_list(value: str, name: str, available: list[str]) -> list[str]:
    try:
        splits = json.loads(value)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name} is not JSON: {value!r}") from e
    if not isinstance(splits, list) or not splits or not all(isinstance(s, str) for s in splits):
        raise ValueError(f"{name} must be a non-empty JSON list of split names, got {value!r}")
    missing = sorted(set(splits) - set(available))
    if missing:
        raise ValueError(
            f"{name}: splits {missing} not in the input examples (which have {available})"
        )
    return splits


class TransformedExamplesEncoder:
    """The transformed batches as serialized tf.Examples with the same bytes in every
    process (the Trainer holds out a part of the train split by a hash of them; tfx_bsl's
    encoder orders the features differently from one process to the next)."""

    def __init__(self, schema: schema_pb2.Schema):
        from tfx_bsl.coders import example_coder

        self._schema = schema
        # Ragged outputs are written as their component features (values, row lengths),
        # which only tfx_bsl's encoder knows how to lay out from the schema.
        self._tfx_bsl = example_coder.RecordBatchToExamplesEncoder(schema)

    def encode(self, batch) -> list[bytes]:
        if not self._schema.tensor_representation_group:
            records = serialize_list_columns(batch)
            if records is not None:
                return records.to_pylist()
        from tensorflow.core.example import example_pb2

        return [
            example_pb2.Example.FromString(record).SerializeToString(deterministic=True)
            for record in self._tfx_bsl.encode(batch)
        ]


# preprocessing_fn "auto": the preprocessing_fn built from the schema, and how its raw
# columns are handed over, by dotted path.
AUTO_PREPROCESSING_FN = "components.auto.preprocessing.build_preprocessing_fn"
AUTO_PACKING = "components.auto.preprocessing.packing_for"


def _auto_preprocessing_fn(exec_properties: dict[str, Any], schema: schema_pb2.Schema):
    """preprocessing_fn "auto": (the function, its `Packing` or None), built from `schema`
    for the label and task (components/auto)."""
    label, task = exec_properties.get("raw_label_key"), exec_properties.get("task")
    if not label or not task:
        raise ValueError('Transform: preprocessing_fn "auto" needs raw_label_key and task.')
    selection = json.loads(exec_properties.get("feature_selection") or "{}")
    args = (schema, label, task, selection.get("features", ()), selection.get("exclude", ()))
    # Unset (None, or 0 as a pipeline IR may give it): the auto preprocessing's default.
    min_count = exec_properties.get("vocabulary_min_count")
    vocabulary = {"vocabulary_min_count": int(min_count)} if min_count else {}
    return (
        user_code.load(AUTO_PREPROCESSING_FN, "preprocessing_fn")(*args, **vocabulary),
        user_code.load(AUTO_PACKING, "preprocessing_fn")(*args),
    )


class Executor(BeamExecutor):
    """Fits `preprocessing_fn` with TFT and writes the TFTransformOutput, and the
    transformed examples when the component asks for them."""

    def raw_schema(self, schema: schema_pb2.Schema) -> schema_pb2.Schema:
        """The schema the raw examples are parsed with: required single-valued features
        dense, whatever shapes the given schema has."""
        return with_fixed_shapes(schema)

    def load_preprocessing_fn(self, exec_properties: dict[str, Any], schema_path: str):
        """(the preprocessing_fn, the `Packing` of its raw columns or None): the user's
        function (loaded before any data is read, so a wrong name fails first), or
        "auto"'s, built from the schema at `schema_path`."""
        name = exec_properties["preprocessing_fn"]
        if name == user_code.AUTO:
            return _auto_preprocessing_fn(exec_properties, _read_schema(schema_path))
        return user_code.load(name, "preprocessing_fn"), None

    def Do(
        self,
        input_dict: dict[str, list[types.Artifact]],
        output_dict: dict[str, list[types.Artifact]],
        exec_properties: dict[str, Any],
    ) -> None:
        # Imported here, before the user's module loads: importing TFT sets
        # TF_USE_LEGACY_KERAS=1 for the whole process, which merely defining a
        # pipeline should not do.
        import tensorflow_transform.beam  # noqa: F401

        examples = artifact_utils.get_single_instance(input_dict["examples"])
        schema_dir = artifact_utils.get_single_uri(input_dict["schema"])
        transform_graph = artifact_utils.get_single_uri(output_dict["transform_graph"])
        # None: only the transform graph is asked for (TFX's materialize=False).
        transformed = (output_dict.get("transformed_examples") or [None])[0]
        analyze_splits, transform_splits = _chosen_splits(examples, transformed, exec_properties)

        schema_path = os.path.join(schema_dir, "schema.pbtxt")
        preprocessing_fn, packed = self.load_preprocessing_fn(exec_properties, schema_path)
        schema = self.raw_schema(_read_schema(schema_path))
        if transformed is not None:
            transformed.split_names = artifact_utils.encode_split_names(transform_splits)
        job = _TransformJob(examples, schema, packed, self._get_tmp_dir())
        self._run_beam(
            job,
            preprocessing_fn,
            analyze_splits,
            transform_splits,
            transform_graph,
            transformed,
            force_tf_compat_v1=bool(exec_properties.get("force_tf_compat_v1")),
        )
        _write_raw_metadata(schema, packed, transform_graph)
        if transformed is None:
            return
        examples_utils.set_file_format(transformed, "tfrecords_gzip")
        examples_utils.set_payload_format(
            transformed, example_gen_pb2.PayloadFormat.FORMAT_TF_EXAMPLE
        )

    def _run_beam(
        self,
        job,
        preprocessing_fn,
        analyze_splits,
        transform_splits,
        transform_graph,
        transformed,
        force_tf_compat_v1,
    ):
        """Analyzes `analyze_splits` into `transform_graph` and writes the transformed
        `transform_splits` into `transformed`, in one Beam pipeline."""
        import tensorflow_transform.beam as tft_beam

        adapter_config = job.adapter_config(analyze_splits[0])
        with (
            self._make_beam_pipeline() as p,
            tft_beam.Context(
                temp_dir=os.path.join(job.tmp_dir, "tft"), force_tf_compat_v1=force_tf_compat_v1
            ),
        ):
            # A split is read once to analyze and again to transform. Had one read fed both,
            # the in-memory runner would hold the whole decoded split until the analysis
            # ended. (An analysis of several phases, an analyzer's result feeding another
            # analyzer, holds it too: that is TFT's and the preprocessing_fn's.)
            progress.report(
                f"building the analysis of {len(job.schema.feature):,} raw columns "
                + (f"({len(job.packed.columns):,} of them packed) " if job.packed else "")
                + "(tracing the preprocessing_fn)"
            )
            transform_fn = (
                [job.read(p, "ReadToAnalyze", s, "analyzing") for s in analyze_splits]
                | "FlattenAnalyze" >> beam.Flatten(),
                adapter_config,
            ) | tft_beam.AnalyzeDataset(preprocessing_fn)
            _ = transform_fn | tft_beam.WriteTransformFn(transform_graph)
            for split in transform_splits:
                job.write_transformed(p, split, transform_fn, adapter_config, transformed)
            progress.report("running the analysis and the transform")


def _chosen_splits(examples, transformed, exec_properties: dict[str, Any]):
    """(the splits to analyze, the splits to transform: none without transformed examples)."""
    available = artifact_utils.decode_split_names(examples.split_names)
    analyze_splits = _split_list(
        exec_properties.get("analyze_splits") or '["train"]', "analyze_splits", available
    )
    if transformed is None:
        return analyze_splits, []
    transform_splits = _split_list(
        exec_properties.get("transform_splits") or json.dumps(available),
        "transform_splits",
        available,
    )
    return analyze_splits, transform_splits


class _TransformJob:
    """What the Beam stages of one Transform run share: the raw examples, their schema,
    the packing of their columns and the scratch folder."""

    def __init__(self, examples, schema, packed, tmp_dir):
        self.examples = examples
        self.schema = schema
        self.packed = packed
        self.tmp_dir = tmp_dir

    def adapter_config(self, split):
        """The TensorAdapterConfig of the RecordBatches ReadSplit decodes with this schema."""
        from tfx_bsl.public import tfxio

        config = tfxio.TFExampleRecord(
            file_pattern=split_files(self.examples, split), schema=self.schema
        ).TensorAdapterConfig()
        if self.packed is not None:
            config = packing.packed_adapter_config(config, self.packed)
        return config

    def read(self, p, stage, split, doing):
        # An empty value list read as missing, as the serving graph reads it.
        batches = p | f"{stage}[{split}]" >> ReadSplit(
            split_files(self.examples, split), self.schema, f"{doing} {split}", empty_lists=False
        )
        if self.packed is None:
            return batches
        return batches | f"Pack{stage}[{split}]" >> beam.Map(packing.pack_record_batch, self.packed)

    def write_transformed(self, p, split, transform_fn, adapter_config, transformed):
        import tensorflow_transform.beam as tft_beam

        out_dir = artifact_utils.get_split_uri([transformed], split)
        data, metadata = (
            (self.read(p, "ReadToTransform", split, "transforming"), adapter_config),
            transform_fn,
        ) | (f"Transform[{split}]" >> tft_beam.TransformDataset(output_record_batches=True))
        encoder = metadata.deferred_metadata | f"Encoder[{split}]" >> beam.Map(
            lambda metadata: TransformedExamplesEncoder(metadata.schema)
        )
        _ = (
            data
            | f"Encode[{split}]"
            >> beam.Map(
                lambda batch, encoder: encoder.encode(batch[0]),  # passthrough dropped
                encoder=beam.pvalue.AsSingleton(encoder),
            )
            | f"Write[{split}]"
            >> WriteTFRecordBatches(
                out_dir, "transformed_examples", os.path.join(self.tmp_dir, "write", split)
            )
        )


def _write_raw_metadata(schema, packed, transform_graph: str) -> None:
    """Readers of the TransformGraph (serving, TFMA) look here for the raw schema;
    WriteTransformFn does not write it."""
    import tensorflow_transform as tft
    from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io

    metadata_io.write_metadata(
        dataset_metadata.DatasetMetadata(schema),
        os.path.join(transform_graph, tft.TFTransformOutput.RAW_METADATA_DIR),
    )
    if packed is not None:
        packed.write(transform_graph)
