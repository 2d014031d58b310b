"""A wide table's raw columns packed for tf.Transform (components/transform/packing.py): the
Transform packs decoded RecordBatches with Arrow, serving packs parsed examples with
TensorFlow, and both must give the same tensors from the same examples."""

import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tensorflow_transform.tf_metadata import schema_utils
from tfx_bsl.coders import example_coder
from tfx_bsl.public import tfxio
from tfx_bsl.tfxio import tensor_adapter

from components.schema_gen.inference import with_fixed_shapes
from components.transform import packing
from components.transform.packing import NUMBERS, TEXTS, Packing

SCHEMA = """
feature { name: "f" type: FLOAT presence { min_fraction: 1.0 } value_count { min: 1 max: 1 } }
feature { name: "g" type: FLOAT presence { min_count: 0 } value_count { min: 1 max: 1 } }
feature { name: "n" type: INT presence { min_count: 0 } value_count { min: 1 max: 1 } }
feature { name: "city" type: BYTES presence { min_count: 0 } value_count { min: 1 max: 1 } }
feature { name: "rooms" type: INT presence { min_count: 0 } value_count { min: 1 max: 1 } }
feature { name: "y" type: INT presence { min_fraction: 1.0 } value_count { min: 1 max: 1 } }
"""
PACKING = Packing(
    numbers=(("g", "FLOAT"), ("f", "FLOAT"), ("n", "INT")),
    texts=(("city", "BYTES"), ("rooms", "INT")),
)


def _example(f, g, n, city, rooms, y):
    def feature(kind, values):
        if kind == "FLOAT":
            return tf.train.Feature(float_list=tf.train.FloatList(value=values))
        if kind == "INT":
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))

    columns = {
        "f": ("FLOAT", [f]),
        "g": ("FLOAT", [] if g is None else [g]),
        "n": ("INT", [] if n is None else [n]),
        "city": ("BYTES", [] if city is None else [city]),
        "rooms": ("INT", [] if rooms is None else [rooms]),
        "y": ("INT", [y]),
    }
    return tf.train.Example(
        features=tf.train.Features(
            feature={
                name: feature(kind, values) for name, (kind, values) in columns.items() if values
            }
        )
    ).SerializeToString()


EXAMPLES = [
    _example(1.5, None, 7, b"north", 3, 0),
    _example(-2.0, 0.25, None, None, None, 1),
    _example(0.0, -1e30, -(2**40), b"", -4, 1),
    _example(3.0, 2.0, 0, "é".encode(), None, 0),
]
SCHEMA_PROTO = with_fixed_shapes(text_format.Parse(SCHEMA, schema_pb2.Schema()))


def _decoded():
    decoder = example_coder.ExamplesToRecordBatchDecoder(SCHEMA_PROTO.SerializeToString())
    return decoder.DecodeBatch(EXAMPLES)


def _arrow_packed():
    batch = packing.pack_record_batch(_decoded(), PACKING)
    numbers = np.array(batch.column(NUMBERS).to_pylist(), np.float32)
    texts = np.array(batch.column(TEXTS).to_pylist(), object)
    return batch, numbers, texts


def test_the_transform_packs_numbers_with_nan_and_texts_with_empty_for_missing():
    batch, numbers, texts = _arrow_packed()
    assert set(batch.schema.names) == {"y", NUMBERS, TEXTS}
    nan = np.nan
    expected = [[nan, 1.5, 7], [0.25, -2.0, nan], [-1e30, 0.0, -(2**40)], [2.0, 3.0, 0]]
    np.testing.assert_array_equal(numbers, np.array(expected, np.float32))
    assert texts.tolist() == [
        [b"north", b"3"],
        [b"", b""],
        [b"", b"-4"],  # an empty text is missing, as the per-column path reads it
        ["é".encode(), b""],
    ]
    assert batch.column("y").to_pylist() == [[0], [1], [1], [0]]


def test_serving_packs_parsed_examples_as_the_transform_does():
    _, numbers, texts = _arrow_packed()
    spec = schema_utils.schema_as_feature_spec(SCHEMA_PROTO).feature_spec
    parsed = packing.parse_packed(tf.constant(EXAMPLES), spec, PACKING)
    assert set(parsed) == {"y", NUMBERS, TEXTS}
    np.testing.assert_array_equal(parsed[NUMBERS].numpy(), numbers)
    assert parsed[TEXTS].numpy().tolist() == texts.tolist()
    np.testing.assert_array_equal(parsed["y"].numpy(), [[0], [1], [1], [0]])


def test_serving_parses_a_wide_tables_packed_columns_in_a_graph_that_does_not_grow_with_them():
    def ops(columns):
        wide = Packing(numbers=tuple((f"n{i}", "FLOAT") for i in range(columns)))
        spec = {name: tf.io.FixedLenFeature([], tf.float32) for name, _ in wide.numbers}
        graph = tf.Graph()
        with graph.as_default():
            serialized = tf.compat.v1.placeholder(tf.string, [None])
            packing.parse_packed(serialized, spec, wide)
        return len(graph.get_operations())

    assert ops(500) == ops(5) < 20


def test_serving_refuses_a_packed_column_with_two_values_naming_it():
    example = tf.train.Example()
    example.features.feature["f"].float_list.value.extend([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: f"):
        packing.parse_packed(
            tf.constant([example.SerializeToString()]), {}, Packing(numbers=(("f", "FLOAT"),))
        )


def test_packing_without_one_kind_leaves_its_tensor_out():
    only_numbers = Packing(numbers=(("f", "FLOAT"),))
    batch = packing.pack_record_batch(_decoded(), only_numbers)
    assert NUMBERS in batch.schema.names and TEXTS not in batch.schema.names
    assert {"g", "city"} <= set(batch.schema.names)


def test_a_packed_column_with_two_values_in_a_row_is_refused_by_name():
    batch = pa.RecordBatch.from_pydict(
        {"f": pa.array([[1.0], [2.0, 3.0]], pa.large_list(pa.float32()))}
    )
    with pytest.raises(
        ValueError, match=r"column 'f' holds 2 values in one example \(batch row 1\)"
    ):
        packing.pack_record_batch(batch, Packing(numbers=(("f", "FLOAT"),)))


def test_the_packing_is_written_beside_the_transform_graph(tmp_path):
    assert Packing.read(str(tmp_path)) is None
    PACKING.write(str(tmp_path))
    assert Packing.read(str(tmp_path)) == PACKING


def test_a_packing_refuses_a_column_of_the_wrong_kind():
    with pytest.raises(ValueError, match="number column 'c' is BYTES"):
        Packing(numbers=(("c", "BYTES"),))
    with pytest.raises(ValueError, match="text column 'x' is FLOAT"):
        Packing(texts=(("x", "FLOAT"),))


def test_the_adapter_config_hands_over_the_packed_tensors_dense():
    raw = tfxio.TFExampleRecord(file_pattern="unused", schema=SCHEMA_PROTO).TensorAdapterConfig()
    config = packing.packed_adapter_config(raw, PACKING)
    assert set(config.tensor_representations) == {"y", NUMBERS, TEXTS}
    assert config.arrow_schema.names == ["y", NUMBERS, TEXTS]
    batch, _, _ = _arrow_packed()
    tensors = tensor_adapter.TensorAdapter(config).ToBatchTensors(
        batch.select(config.arrow_schema.names)
    )
    assert tensors[NUMBERS].shape == (4, 3) and tensors[TEXTS].shape == (4, 2)
