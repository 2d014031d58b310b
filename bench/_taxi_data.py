"""Transformed taxi data for `estimator_vs_tf215.py`, made once by the project's own executors.

    .venv/bin/python bench/_taxi_data.py OUT_DIR [--data CSV]

Runs SchemaImporter, ExampleGen and Transform executors directly (no
orchestrator, no metadata) on the full taxi sample, then writes
`OUT_DIR/spec.json`: the transformed feature spec and the taxi model's
columns as plain names and sizes, so that a worker that can import neither
TFX nor this project (the TF 2.15 side) builds exactly the same model.
Everything is built in a sibling temp folder and renamed into place last, so
a half-made OUT_DIR is never mistaken for a finished one.
"""

import argparse
import json
import os
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

# FnApiRunner: Beam's DirectRunner tries to download Prism first (see tests/test_example_gen.py).
BEAM_ARGS = ["--runner=FnApiRunner"]
PREPROCESSING_FN = "transforms.taxi.preprocessing_fn"


def _artifact(kind, uri):
    artifact = kind()
    artifact.uri = uri
    os.makedirs(uri, exist_ok=True)
    return artifact


def _beam_context(tmp_dir):
    import apache_beam as beam
    from tfx.dsl.components.base import base_beam_executor

    # make_beam_pipeline_fn, not beam_pipeline_args: the latter makes TFX build an sdist of itself.
    return base_beam_executor.BaseBeamExecutor.Context(
        tmp_dir=tmp_dir,
        unique_id="bench",
        make_beam_pipeline_fn=lambda: beam.Pipeline(argv=BEAM_ARGS),
    )


def _model_columns():
    """(wide [[name, num_buckets]], deep [name]) read off `taxi_model.wide_and_deep_columns`."""
    from models.taxi import wide_and_deep_columns

    wide, deep = wide_and_deep_columns()
    return [[c.key, c.num_buckets] for c in wide], [c.key for c in deep]


def _count(pattern):
    import tensorflow as tf

    files = tf.io.gfile.glob(pattern)
    return sum(1 for _ in tf.data.TFRecordDataset(files, compression_type="GZIP"))


def build(out_dir, csv_path):
    import tensorflow_transform as tft
    from tfx.types import standard_artifacts

    from components.example_gen import executor as example_gen
    from components.schema_importer import executor as schema_importer
    from components.transform import executor as transform
    from models.taxi import LABEL_KEY
    from schemas import TAXI_SCHEMA_PATH

    work = out_dir.rstrip("/") + ".partial"
    shutil.rmtree(work, ignore_errors=True)
    schema = _artifact(standard_artifacts.Schema, os.path.join(work, "schema"))
    examples = _artifact(standard_artifacts.Examples, os.path.join(work, "examples"))
    graph = _artifact(standard_artifacts.TransformGraph, os.path.join(work, "transform_graph"))
    transformed = _artifact(standard_artifacts.Examples, os.path.join(work, "transformed"))

    schema_importer.Executor().Do({}, {"schema": [schema]}, {"schema_file": TAXI_SCHEMA_PATH})
    example_gen.Executor(_beam_context(os.path.join(work, "tmp", "example_gen"))).Do(
        {"schema": [schema]}, {"examples": [examples]}, {"input_base": csv_path}
    )
    transform.Executor(_beam_context(os.path.join(work, "tmp", "transform"))).Do(
        {"examples": [examples], "schema": [schema]},
        {"transform_graph": [graph], "transformed_examples": [transformed]},
        {"preprocessing_fn": PREPROCESSING_FN},
    )
    shutil.rmtree(os.path.join(work, "tmp"))

    feature_spec = tft.TFTransformOutput(graph.uri).transformed_feature_spec()
    for name, feature in feature_spec.items():
        # The worker rebuilds every feature as FixedLenFeature([], dtype).
        if getattr(feature, "shape", None) != []:
            raise ValueError(f"{name}: expected a scalar FixedLenFeature, got {feature!r}")
    wide, deep = _model_columns()
    patterns = {
        split: os.path.join("transformed", f"Split-{split}", "*.gz") for split in ("train", "eval")
    }
    spec = {
        "csv": os.path.abspath(csv_path),
        "label": LABEL_KEY,
        "feature_spec": {name: f.dtype.name for name, f in sorted(feature_spec.items())},
        "wide": wide,
        "deep": deep,
        "files": patterns,
        "rows": {split: _count(os.path.join(work, p)) for split, p in patterns.items()},
    }
    with open(os.path.join(work, "spec.json"), "w") as f:
        json.dump(spec, f, indent=2)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(work, out_dir)
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--data", default=os.path.join(REPO, "data", "taxi", "data.csv"))
    args = parser.parse_args()
    spec = build(os.path.abspath(args.out_dir), os.path.abspath(args.data))
    print(json.dumps(spec["rows"]))


if __name__ == "__main__":
    main()
