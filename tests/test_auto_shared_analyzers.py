"""The auto preprocessing's shared analyzers against tf.Transform's own, one per column.

`scaled_numbers` (one mean and one variance over all number columns) must give what
`tft.scale_to_z_score` gives column by column, and `category_ids` (one Beam analyzer for
every vocabulary) what `tft.compute_and_apply_vocabulary` gives: the same vocabulary files
(order, ties, empty values and line breaks left out, a column with no value, a frequency
threshold) and the same ids. Both run on real tf.Transform over Beam, in the same pipeline.
A column of more values than the 1,000 a column kept before 2026-12-05 keeps them all."""

import numpy as np
import pytest
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from components.auto import (
    OOV_BUCKETS,
    TREES_CATEGORY_IDS,
    VOCAB_FLOOR,
    VOCAB_MIN_COUNT,
    feature_vocabulary,
    vocabulary_cap,
)
from components.auto.vocabularies import EMPTY_VOCABULARY
from pipeline.config import DEFAULT_BEAM_ARGS

SCHEMA = """
feature { name: "req" type: FLOAT presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
feature { name: "const" type: INT presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
feature { name: "opt" type: FLOAT presence { min_count: 1 } value_count { min: 1 max: 1 } }
feature { name: "sparse" type: FLOAT presence { min_count: 0 } value_count { min: 1 max: 1 } }
feature { name: "city" type: BYTES presence { min_count: 1 } value_count { min: 1 max: 1 } }
feature { name: "rooms" type: INT presence { min_count: 1 } value_count { min: 1 max: 1 } }
feature { name: "none" type: BYTES presence { min_count: 0 } value_count { min: 1 max: 1 } }
"""
NUMBERS = ("req", "const", "opt", "sparse")
CATEGORIES = (("city", "BYTES"), ("rooms", "INT"), ("none", "BYTES"))
CITIES = [b"b", b"a", b"c", b"a", b"", b"b", b"line\nbreak", b"d", b"d", b"e"]


def _rows():
    rng = np.random.default_rng(7)
    rows = []
    for i in range(40):
        rows.append(
            {
                "req": [float(rng.normal(100, 30))],
                "const": [4],
                "opt": [] if i % 3 == 0 else [float(rng.normal())],
                "sparse": [2.5] if i in (5, 6) else [],  # absent from whole batches
                "city": [] if i % 7 == 0 else [CITIES[i % len(CITIES)]],
                "rooms": [int(rng.integers(0, 5))],
                "none": [],
            }
        )
    return rows


def _shared(inputs):
    from components.auto.preprocessing import category_ids, scaled_numbers

    outputs = scaled_numbers(inputs, list(NUMBERS))
    outputs.update(category_ids(inputs, list(CATEGORIES)))
    return {f"ours_{name}": value for name, value in outputs.items()}


def _one_each(inputs):
    import tensorflow as tf
    import tensorflow_transform as tft

    from components.auto import transformed_name
    from components.auto.preprocessing import _as_text
    from components.transform.tensors import dense

    outputs = {}
    for name in NUMBERS:
        outputs[transformed_name(name)] = dense(
            tft.scale_to_z_score(tf.cast(inputs[name], tf.float32)), 0.0
        )
    for name, kind in CATEGORIES:
        outputs[transformed_name(name)] = tft.compute_and_apply_vocabulary(
            dense(_as_text(inputs[name], kind), b""),
            top_k=vocabulary_cap(len(CATEGORIES)),
            frequency_threshold=VOCAB_MIN_COUNT,
            num_oov_buckets=OOV_BUCKETS,
            vocab_filename="tft_" + feature_vocabulary(name),
        )
    return {f"tft_{name}": value for name, value in outputs.items()}


pytestmark = pytest.mark.slow  # a tf.Transform Beam job


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata

    from components.auto import preprocessing
    from components.schema_gen.inference import with_fixed_shapes

    tmp = tmp_path_factory.mktemp("shared")
    # the three category columns over two analyzers
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(preprocessing, "COLUMNS_PER_VOCABULARY_ANALYZER", 2)
    schema = with_fixed_shapes(text_format.Parse(SCHEMA, schema_pb2.Schema()))
    with tft_beam.Context(temp_dir=str(tmp / "tmp"), desired_batch_size=8):
        (rows, _), transform_fn = (
            _rows(),
            dataset_metadata.DatasetMetadata(schema),
        ) | tft_beam.AnalyzeAndTransformDataset(lambda x: {**_shared(x), **_one_each(x)})
        _ = transform_fn | tft_beam.WriteTransformFn(str(tmp / "out"))
    monkeypatch.undo()
    return rows, tft.TFTransformOutput(str(tmp / "out"))


def _pairs(rows):
    names = sorted(key[len("ours_") :] for key in rows[0] if key.startswith("ours_"))
    return {
        name: (
            np.array([row[f"ours_{name}"] for row in rows]),
            np.array([row[f"tft_{name}"] for row in rows]),
        )
        for name in names
    }


def test_numbers_scaled_as_tft_scales_each_column(transformed):
    rows, _ = transformed
    pairs = _pairs(rows)
    for name in NUMBERS:
        ours, theirs = pairs[f"{name}_xf"]
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=name)
    ours, _ = pairs["const_xf"]
    assert not ours.any()  # a constant column is only centred
    ours, _ = pairs["req_xf"]
    assert abs(ours.mean()) < 1e-5 and abs(ours.std() - 1) < 1e-4


def test_vocabularies_and_ids_as_tft_computes_each(transformed):
    rows, output = transformed
    pairs = _pairs(rows)
    for name, _ in CATEGORIES:
        ours = output.vocabulary_by_name(feature_vocabulary(name))
        theirs = output.vocabulary_by_name("tft_" + feature_vocabulary(name))
        if name == "none":  # no value at all: each writes a placeholder of its own
            assert ours == [EMPTY_VOCABULARY] and len(theirs) == 1
        else:
            assert ours == theirs, name
        np.testing.assert_array_equal(*pairs[f"{name}_xf"], err_msg=name)
        (feature,) = [
            f for f in output.transformed_metadata.schema.feature if f.name == f"ours_{name}_xf"
        ]
        assert (feature.int_domain.min, feature.int_domain.max) == (
            0,
            len(ours) + OOV_BUCKETS - 1,
        ), name
    # a 7 times; d and b 6 times each, the larger first; no empty value, no line break
    city = output.vocabulary_by_name(feature_vocabulary("city"))
    assert city[:3] == [b"a", b"d", b"b"] and b"" not in city and b"line\nbreak" not in city


def _serialized(row, kinds):
    """A `_rows()` row as a serialized tf.Example (an empty list: the feature left out)."""
    import tensorflow as tf

    lists = {
        "FLOAT": ("float_list", tf.train.FloatList),
        "INT": ("int64_list", tf.train.Int64List),
        "BYTES": ("bytes_list", tf.train.BytesList),
    }
    feature = {}
    for name, values in row.items():
        if values:
            field, values_list = lists[kinds[name]]
            feature[name] = tf.train.Feature(**{field: values_list(value=values)})
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _packed(inputs):
    from components.auto import ALL_NUMBERS
    from components.auto.preprocessing import packed_category_ids, packed_numbers
    from components.transform.packing import NUMBERS as PACKED_NUMBERS
    from components.transform.packing import TEXTS

    outputs = {ALL_NUMBERS: packed_numbers(inputs[PACKED_NUMBERS])}
    outputs.update(packed_category_ids(inputs[TEXTS], [name for name, _ in CATEGORIES]))
    return {f"ours_{name}": value for name, value in outputs.items()}


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """The packed auto preprocessing (a wide table's) and tf.Transform's per-column analyzers
    in one pipeline: its batches hold the raw columns and, beside them, the packed ones."""
    import apache_beam as beam
    import pyarrow as pa
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tfx_bsl.coders import example_coder
    from tfx_bsl.public import tfxio
    from tfx_bsl.tfxio import tensor_adapter

    from components.schema_gen.inference import with_fixed_shapes
    from components.transform import packing

    tmp = tmp_path_factory.mktemp("packed")
    schema = with_fixed_shapes(text_format.Parse(SCHEMA, schema_pb2.Schema()))
    kinds = {f.name: schema_pb2.FeatureType.Name(f.type) for f in schema.feature}
    plan = packing.Packing(
        numbers=tuple((name, kinds[name]) for name in NUMBERS), texts=tuple(CATEGORIES)
    )
    examples = [_serialized(row, kinds) for row in _rows()]
    decoded = example_coder.ExamplesToRecordBatchDecoder(schema.SerializeToString()).DecodeBatch(
        examples
    )
    packed_batch = packing.pack_record_batch(decoded, plan)
    both = pa.RecordBatch.from_arrays(
        [*decoded.columns, *(packed_batch.column(k) for k in (packing.NUMBERS, packing.TEXTS))],
        [*decoded.schema.names, packing.NUMBERS, packing.TEXTS],
    )
    raw_config = tfxio.TFExampleRecord(file_pattern="unused", schema=schema).TensorAdapterConfig()
    packed_config = packing.packed_adapter_config(raw_config, plan)
    config = tensor_adapter.TensorAdapterConfig(
        both.schema,
        {
            **raw_config.tensor_representations,
            **{
                k: packed_config.tensor_representations[k] for k in (packing.NUMBERS, packing.TEXTS)
            },
        },
    )
    batches = [both.slice(start, 8) for start in range(0, both.num_rows, 8)]
    with (
        beam.Pipeline(argv=list(DEFAULT_BEAM_ARGS)) as pipeline,
        tft_beam.Context(temp_dir=str(tmp / "tmp")),
    ):
        (data, _), transform_fn = (
            pipeline | beam.Create(batches, reshuffle=False),
            config,
        ) | tft_beam.AnalyzeAndTransformDataset(lambda x: {**_packed(x), **_one_each(x)})
        _ = transform_fn | tft_beam.WriteTransformFn(str(tmp / "out"))
        _ = (
            data
            | beam.combiners.ToList()
            | beam.Map(
                lambda rows: (tmp / "rows.npy").write_bytes(__import__("pickle").dumps(rows))
            )
        )
    rows = __import__("pickle").loads((tmp / "rows.npy").read_bytes())
    return rows, tft.TFTransformOutput(str(tmp / "out"))


def test_packed_numbers_are_each_column_scaled_as_tft_scales_it(packed):
    from components.auto import ALL_NUMBERS

    rows, output = packed
    together = np.array([row[f"ours_{ALL_NUMBERS}"] for row in rows])
    assert together.shape == (len(_rows()), len(NUMBERS))
    for j, name in enumerate(NUMBERS):
        theirs = np.array([row[f"tft_{name}_xf"] for row in rows])
        np.testing.assert_allclose(together[:, j], theirs, rtol=1e-5, atol=1e-6, err_msg=name)
    (feature,) = [
        f for f in output.transformed_metadata.schema.feature if f.name == f"ours_{ALL_NUMBERS}"
    ]
    assert [d.size for d in feature.shape.dim] == [len(NUMBERS)]


def _combined_vocabularies(output):
    """{column name: its values} of the packed categories' one vocabulary file."""
    from components.auto import ALL_CATEGORIES
    from components.auto.vocabularies import column_key, column_marker

    lines = output.vocabulary_by_name(ALL_CATEGORIES)
    found = {}
    for j, (name, _) in enumerate(CATEGORIES):
        start, end = lines.index(column_marker(j)), lines.index(column_marker(j + 1))
        prefix = column_key(j, b"")
        assert all(line.startswith(prefix) for line in lines[start + 1 : end])
        found[name] = [line[len(prefix) :] for line in lines[start + 1 : end]]
    return found


def test_packed_categories_get_tft_s_vocabularies_and_ids(packed):
    """One vocabulary file and table for all the columns, the same values and ids as
    tf.Transform's per column; a column with no value at all has only its OOV ids."""
    from components.auto import ALL_CATEGORIES

    rows, output = packed
    vocabularies = _combined_vocabularies(output)
    widths = []
    for name, _ in CATEGORIES:
        theirs = output.vocabulary_by_name("tft_" + feature_vocabulary(name))
        ours = np.array([row[f"ours_{name}_xf"] for row in rows])
        tft_ids = np.array([row[f"tft_{name}_xf"] for row in rows])
        if name == "none":  # tf.Transform's placeholder entry shifts its OOV ids by one
            assert vocabularies[name] == [] and len(theirs) == 1
            np.testing.assert_array_equal(ours, tft_ids - 1)
        else:
            assert vocabularies[name] == theirs, name
            np.testing.assert_array_equal(ours, tft_ids, err_msg=name)
        widths.append(len(vocabularies[name]) + OOV_BUCKETS)
        (feature,) = [
            f for f in output.transformed_metadata.schema.feature if f.name == f"ours_{name}_xf"
        ]
        assert (feature.int_domain.min, feature.int_domain.max) == (0, widths[-1] - 1), name
    # side by side, each column's ids past the ranges of those before it
    together = np.array([row[f"ours_{ALL_CATEGORIES}"] for row in rows])
    apart = np.array([[row[f"ours_{name}_xf"] for name, _ in CATEGORIES] for row in rows])
    np.testing.assert_array_equal(together, apart + np.cumsum([0, *widths[:-1]]))
    (feature,) = [
        f for f in output.transformed_metadata.schema.feature if f.name == f"ours_{ALL_CATEGORIES}"
    ]
    assert (feature.int_domain.min, feature.int_domain.max) == (0, sum(widths) - 1)


# A tail-number-like column: more values than VOCAB_FLOOR seen twice each, some once.
TWICE, ONCE = 1_200, 40
TAILS_SCHEMA = """
feature { name: "tail" type: BYTES presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
feature { name: "again" type: BYTES presence { min_fraction: 1.0 min_count: 1 }
          value_count { min: 1 max: 1 } }
"""


def _tail_rows():
    values = [b"T%04d" % i for i in range(TWICE)] * 2 + [b"S%04d" % i for i in range(ONCE)]
    return [{"tail": [v], "again": [v]} for v in values]


def _tails(inputs):
    """Ours with the default and with a count of 2 (the same values, named apart), and
    tf.Transform's with that count as its frequency threshold."""
    import tensorflow_transform as tft

    from components.auto.preprocessing import category_ids

    outputs = category_ids(inputs, [("tail", "BYTES")])
    outputs.update(category_ids(inputs, [("again", "BYTES")], min_count=2))
    outputs["tft_again_xf"] = tft.compute_and_apply_vocabulary(
        inputs["again"],
        top_k=vocabulary_cap(1),
        frequency_threshold=2,
        num_oov_buckets=OOV_BUCKETS,
        vocab_filename="tft_again",
    )
    return outputs


@pytest.fixture(scope="module")
def tails(tmp_path_factory):
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata

    from components.schema_gen.inference import with_fixed_shapes

    tmp = tmp_path_factory.mktemp("tails")
    schema = with_fixed_shapes(text_format.Parse(TAILS_SCHEMA, schema_pb2.Schema()))
    with tft_beam.Context(temp_dir=str(tmp / "tmp"), desired_batch_size=500):
        (rows, _), transform_fn = (
            _tail_rows(),
            dataset_metadata.DatasetMetadata(schema),
        ) | tft_beam.AnalyzeAndTransformDataset(_tails)
        _ = transform_fn | tft_beam.WriteTransformFn(str(tmp / "out"))
    return rows, tft.TFTransformOutput(str(tmp / "out"))


def test_a_column_of_more_than_a_thousand_values_keeps_them_all(tails):
    """Every value of the train split gets an id of its own (1,200 seen twice, 40 once),
    not the 1,000 most frequent; the ids' domain says how many the model reads."""
    rows, output = tails
    vocabulary = output.vocabulary_by_name(feature_vocabulary("tail"))
    assert len(vocabulary) == TWICE + ONCE > VOCAB_FLOOR
    ids = np.array([row["tail_xf"] for row in rows])
    assert (ids < TWICE + ONCE).all()  # no value fell to an out-of-vocabulary id
    assert len(set(ids.tolist())) == TWICE + ONCE
    (feature,) = [f for f in output.transformed_metadata.schema.feature if f.name == "tail_xf"]
    assert feature.int_domain.max == TWICE + ONCE + OOV_BUCKETS - 1


def test_a_minimum_count_leaves_rarer_values_to_the_oov_ids_as_tft_s_threshold_does(tails):
    rows, output = tails
    ours = output.vocabulary_by_name(feature_vocabulary("again"))
    assert ours == output.vocabulary_by_name("tft_again")
    assert len(ours) == TWICE
    ids = np.array([row["again_xf"] for row in rows])
    np.testing.assert_array_equal(ids, np.ravel([row["tft_again_xf"] for row in rows]))
    assert (ids[-ONCE:] >= TWICE).all()  # the values seen once: out of vocabulary


def test_the_vocabulary_cap_shares_the_ids_and_keeps_each_column_s_thousand():
    """A narrow table's few columns share `CATEGORY_IDS`; many columns, or a wide table's,
    keep 1,000 each (what a 2,000-column table cost before), never fewer."""
    from components.auto import CATEGORY_IDS

    assert vocabulary_cap(1) == CATEGORY_IDS
    assert vocabulary_cap(4) == CATEGORY_IDS // 4
    assert vocabulary_cap(200) == vocabulary_cap(2_000) == VOCAB_FLOOR
    assert vocabulary_cap(0) == CATEGORY_IDS
    assert vocabulary_cap(4, packed=True) == VOCAB_FLOOR  # a wide table's all_categories


def test_boosted_trees_read_a_large_column_s_most_frequent_ids_and_one_for_the_rest():
    """The linear model and the DNN read every id; the trees the ids a column had before
    (1,000 values and 10 OOV buckets), the rarer values and the OOV ids as the last one."""
    import tensorflow as tf

    from components.auto.model import trees_ids
    from components.estimator.canned import tree_ensemble

    fc = tf.feature_column
    size = TREES_CATEGORY_IDS + 260
    deep = [
        fc.indicator_column(fc.categorical_column_with_identity("tail_xf", size)),
        fc.indicator_column(fc.categorical_column_with_identity("city_xf", 13)),
        fc.numeric_column("x_xf"),
    ]
    columns = trees_ids(deep)
    assert [c.name for c in columns] == [c.name for c in deep] and columns[1:] == deep[1:]
    layout = tree_ensemble.FeatureLayout(columns[:2], 4)
    assert dict(zip(layout.names, layout.num_buckets.tolist(), strict=True)) == {
        "city_xf": 14,  # 13 ids and a missing one
        "tail_xf": TREES_CATEGORY_IDS + 1,
    }
    last = TREES_CATEGORY_IDS - 1
    ids = [0, last - 1, last, last + 1, size - 1]
    features = {
        "tail_xf": tf.constant(ids, tf.int64),
        "city_xf": tf.constant([1, 2, 3, 12, 0], tf.int64),
    }
    buckets = layout.bucket_ids(features, tf.zeros([0])).numpy()
    assert buckets[:, layout.names.index("tail_xf")].tolist() == [0, last - 1, last, last, last]
