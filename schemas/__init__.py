"""The examples' schemas (use cases, not framework): one folder per dataset."""

import pathlib

TAXI_SCHEMA_PATH = str(pathlib.Path(__file__).resolve().parent / "taxi" / "schema.pbtxt")
