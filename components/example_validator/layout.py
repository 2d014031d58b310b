"""Where ExampleValidator's output lies, as TFX lays it out; readable without TensorFlow."""

import os

from tensorflow_metadata.proto.v0 import anomalies_pb2

from components.example_validator.checks import anomaly_lines

ANOMALIES_FILE = "SchemaDiff.pb"  # a binary Anomalies per split, TFX's name


def split_anomalies_path(anomalies_uri: str, split: str) -> str:
    return os.path.join(anomalies_uri, f"Split-{split}", ANOMALIES_FILE)


def load_anomaly_lines(anomalies_uri: str, splits: list[str]) -> list[str]:
    """One line per anomaly of a local anomalies artifact, split by split."""
    lines = []
    for split in splits:
        with open(split_anomalies_path(anomalies_uri, split), "rb") as f:
            lines += anomaly_lines(anomalies_pb2.Anomalies.FromString(f.read()), split)
    return lines
