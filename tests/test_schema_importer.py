"""SchemaImporter and the shipped taxi schema, checked against the shipped taxi data."""

import csv
import os
import pathlib
import re

import pytest
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.types import standard_artifacts

from components.schema_file import load_schema
from components.schema_importer import SchemaImporter, executor
from schemas import TAXI_SCHEMA_PATH

TAXI_CSV = pathlib.Path(__file__).resolve().parents[1] / "data" / "taxi" / "data.csv"
TAXI_REQUIRED = {
    "fare",
    "trip_start_month",
    "trip_start_hour",
    "trip_start_day",
    "trip_start_timestamp",
    "trip_miles",
    "payment_type",
    "tips",
}
TAXI_BYTES = {"payment_type", "company"}
TAXI_INT = {
    "pickup_community_area",
    "trip_start_month",
    "trip_start_hour",
    "trip_start_day",
    "trip_start_timestamp",
    "pickup_census_tract",
    "dropoff_census_tract",
    "trip_seconds",
    "dropoff_community_area",
}


def _import(tmp_path, schema_file):
    schema = standard_artifacts.Schema()
    schema.uri = str(tmp_path / "schema")
    executor.Executor().Do({}, {"schema": [schema]}, {"schema_file": str(schema_file)})
    return schema


def test_imports_taxi_schema(tmp_path):
    schema = _import(tmp_path, TAXI_SCHEMA_PATH)
    written = load_schema(os.path.join(schema.uri, "schema.pbtxt"))
    assert written == load_schema(TAXI_SCHEMA_PATH)


def test_taxi_schema_matches_contract_and_data():
    assert os.path.isabs(TAXI_SCHEMA_PATH)
    schema = load_schema(TAXI_SCHEMA_PATH)
    with open(TAXI_CSV, newline="") as f:
        header, *rows = list(csv.reader(f))
    assert [feature.name for feature in schema.feature] == header
    for feature in schema.feature:
        kind = (
            "BYTES"
            if feature.name in TAXI_BYTES
            else "INT"
            if feature.name in TAXI_INT
            else "FLOAT"
        )
        assert schema_pb2.FeatureType.Name(feature.type) == kind, feature.name
        assert (feature.value_count.min, feature.value_count.max) == (1, 1)
        values = sum(row[header.index(feature.name)] != "" for row in rows)
        # A column nearly always empty may have no value in a split (ExampleValidator): only
        # pickup_census_tract, with one value in 15,002 rows; the next emptiest column
        # (company) has a value in two rows of three.
        if feature.name == "pickup_census_tract":
            assert (values, feature.presence.min_count) == (1, 0)
        else:
            assert values > 0.6 * len(rows) and feature.presence.min_count == 1, feature.name
        required = feature.presence.min_fraction == 1.0
        assert required == (feature.name in TAXI_REQUIRED), feature.name
        never_missing = all(row[header.index(feature.name)] != "" for row in rows)
        assert never_missing == required, feature.name


def test_missing_file_fails_naming_it(tmp_path):
    missing = tmp_path / "nope.pbtxt"
    with pytest.raises(ValueError, match=re.escape(f"cannot read schema file {missing}")):
        _import(tmp_path, missing)
    assert not (tmp_path / "schema").exists()


def test_unparseable_file_fails_naming_it(tmp_path):
    broken = tmp_path / "broken.pbtxt"
    broken.write_text('feature { name: "x" type: NOT_A_TYPE }\n')
    with pytest.raises(ValueError, match=re.escape(f"schema file {broken} is not a valid Schema")):
        _import(tmp_path, broken)
    assert not (tmp_path / "schema").exists()


def test_schema_without_features_fails(tmp_path):
    empty = tmp_path / "empty.pbtxt"
    empty.write_text("# nothing here\n")
    with pytest.raises(ValueError, match=re.escape(f"schema file {empty} defines no features")):
        load_schema(empty)


def test_component_declares_schema_output():
    component = SchemaImporter(schema_file=TAXI_SCHEMA_PATH)
    assert component.outputs["schema"].type is standard_artifacts.Schema
    assert component.exec_properties["schema_file"] == TAXI_SCHEMA_PATH
