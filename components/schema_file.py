"""Schema files: one reader, so that every component fails the same way on a bad one."""

import pathlib

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

# The file in a Schema artifact's folder, as TFX's SchemaGen and ImportSchemaGen write it.
SCHEMA_FILE_NAME = "schema.pbtxt"


def _read_text(path: str) -> str:
    if "://" in path:
        # Only remote URIs (e.g. gs:// artifact stores) need TFX's filesystem, which loads TF.
        from tfx.dsl.io import fileio

        with fileio.open(path, "r") as f:
            return f.read()
    return pathlib.Path(path).read_text(encoding="utf-8")


def load_schema(path) -> schema_pb2.Schema:
    """Reads a Schema text proto; errors name the file so a bad path is found at once."""
    path = str(path)
    try:
        text = _read_text(path)
    except Exception as e:  # OSError locally; filesystem-specific errors for remote URIs.
        raise ValueError(f"cannot read schema file {path}: {e}") from e
    try:
        schema = text_format.Parse(text, schema_pb2.Schema())
    except text_format.ParseError as e:
        raise ValueError(f"schema file {path} is not a valid Schema text proto: {e}") from e
    if not schema.feature:
        raise ValueError(f"schema file {path} defines no features")
    return schema
