"""Where StatisticsGen's output lies, as TFX lays it out; readable without TensorFlow."""

import glob
import json
import os
import re

from tensorflow_metadata.proto.v0 import statistics_pb2

STATS_FILE = "FeatureStats.pb"  # a binary DatasetFeatureStatisticsList per split
_SPLIT_DIR = re.compile(r"Split-(.+)")
# In a Model artifact, the statistics of the data it was trained on (the Trainer copies the
# train split's there), laid out as a statistics artifact: a model carries its own baseline.
MODEL_STATISTICS_DIR = "DataStatistics"


def kept_splits(splits: list[str], exec_properties: dict) -> list[str]:
    """`splits` less those that `exec_properties["exclude_splits"]` (TFX's parameter, a
    JSON list) names."""
    excluded = set(json.loads(exec_properties.get("exclude_splits") or "[]"))
    return [split for split in splits if split not in excluded]


def split_statistics_path(statistics_uri: str, split: str) -> str:
    return os.path.join(statistics_uri, f"Split-{split}", STATS_FILE)


def model_statistics_uri(model_uri: str) -> str:
    return os.path.join(model_uri, MODEL_STATISTICS_DIR)


def read_split_statistics(
    statistics_uri: str, split: str
) -> statistics_pb2.DatasetFeatureStatistics:
    """The whole-split statistics of `split` (TFDV's slices, if any, follow it); any URI."""
    from tfx.utils import io_utils  # TFX's filesystem, for gs:// artifact stores

    return statistics_pb2.DatasetFeatureStatisticsList.FromString(
        io_utils.read_bytes_file(split_statistics_path(statistics_uri, split))
    ).datasets[0]


def read_artifact_statistics(artifact) -> dict[str, statistics_pb2.DatasetFeatureStatistics]:
    """{split: whole-split statistics} of an ExampleStatistics artifact, in its split order."""
    from tfx.types import artifact_utils

    return {
        split: read_split_statistics(artifact.uri, split)
        for split in artifact_utils.decode_split_names(artifact.split_names)
    }


def load_statistics(path: str) -> dict[str, statistics_pb2.DatasetFeatureStatisticsList]:
    """{split: statistics} of a local statistics artifact folder or of one FeatureStats.pb."""
    if os.path.isdir(path):
        files = sorted(glob.glob(split_statistics_path(path, "*")))
        if not files:
            raise RuntimeError(f"{path} has no Split-*/{STATS_FILE}: not a statistics artifact.")
    elif os.path.isfile(path):
        files = [path]
    else:
        raise RuntimeError(f"{path} does not exist.")
    result = {}
    for file in files:
        match = _SPLIT_DIR.fullmatch(os.path.basename(os.path.dirname(file)))
        with open(file, "rb") as f:
            result[match.group(1) if match else file] = (
                statistics_pb2.DatasetFeatureStatisticsList.FromString(f.read())
            )
    return result
