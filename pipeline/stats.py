"""`python -m pipeline stats`: per-feature data statistics of a run, as a table or JSON.

Reads StatisticsGen's `Split-<name>/FeatureStats.pb` files (TFDV's format) with
tensorflow_metadata alone, so it answers without importing TensorFlow. With a baseline (the
training statistics of the model the run was compared with, or any statistics artifact), a
drift column shows each feature's distance to it, measured as the ExampleValidator measures.
"""

import os

from tensorflow_metadata.proto.v0 import statistics_pb2

from components.example_validator import drift
from components.statistics_gen.layout import (
    load_statistics,
    model_statistics_uri,
    split_statistics_path,
)
from pipeline import metadata

_SHOWN_TOP_VALUES = 3


def latest_statistics_uri(metadata_path: str, pipeline_name: str) -> str:
    """The `ExampleStatistics` artifact of the newest run of `pipeline_name` recorded at
    `metadata_path`."""
    artifact = metadata.latest_output(metadata_path, pipeline_name, "ExampleStatistics")
    if artifact is None:
        raise RuntimeError(
            f"The latest run of {pipeline_name!r} in {metadata_path} has no statistics."
        )
    return artifact.uri


def latest_baseline_uri(metadata_path: str, pipeline_name: str) -> str | None:
    """The training statistics of the baseline model the newest run of `pipeline_name` was
    given (the latest blessed model, input of its ExampleValidator or Evaluator as
    `baseline_model`), or None."""
    store = metadata.open_store(metadata_path)
    for artifact in metadata.inputs(
        store, metadata.latest_run(store, pipeline_name), "baseline_model"
    ):
        uri = model_statistics_uri(artifact.uri)
        if os.path.isfile(split_statistics_path(uri, "train")):
            return uri
    return None


def baseline_path(path: str) -> str:
    """A model artifact folder stands for the training statistics it carries."""
    carried = model_statistics_uri(path)
    return carried if os.path.isdir(carried) else path


def _baseline_split(baseline: dict, split: str) -> str:
    """The same split of the baseline if it has one, else its train split (what a model
    carries), else its first."""
    for name in (split, "train"):
        if name in baseline:
            return name
    return next(iter(baseline))


def feature_rows(
    dataset: statistics_pb2.DatasetFeatureStatistics,
    baseline: statistics_pb2.DatasetFeatureStatistics | None = None,
) -> list[dict]:
    """One plain dict per feature: what the table and the JSON show. With `baseline`, each
    row has a `drift` entry: {metric, value, detail}, or None where nothing is comparable."""
    measured = (
        {d.column: d for d in drift.distances(baseline, dataset)} if baseline is not None else {}
    )
    rows = []
    for feature in dataset.features:
        kind = statistics_pb2.FeatureNameStatistics.Type.Name(feature.type)
        stats = feature.string_stats if feature.HasField("string_stats") else feature.num_stats
        common = stats.common_stats
        total = common.num_non_missing + common.num_missing
        row = {
            "name": ".".join(feature.path.step) or feature.name,
            "type": kind,
            "count": common.num_non_missing,
            "missing_pct": 100.0 * common.num_missing / total if total else 0.0,
        }
        if feature.HasField("string_stats"):
            row["unique"] = stats.unique
            row["top_values"] = [
                {"value": top.value, "count": top.frequency} for top in stats.top_values
            ]
        elif common.tot_num_values:
            row.update(mean=stats.mean, std_dev=stats.std_dev, min=stats.min, max=stats.max)
        else:  # no value to describe: the proto's zeros would read as figures
            row.update(mean=None, std_dev=None, min=None, max=None)
        if baseline is not None:
            found = measured.get(row["name"])
            row["drift"] = (
                {"metric": found.metric, "value": found.value, "detail": found.detail}
                if found
                else None
            )
        rows.append(row)
    return rows


def statistics_report(path: str, baseline: str | None = None) -> dict:
    """The statistics at `path`, each split compared with `baseline` when one is given."""
    before = load_statistics(baseline) if baseline else None
    report = {"artifact": path, "splits": {}}
    if before:
        report["baseline"] = baseline
    for split, stats in load_statistics(path).items():
        entry = {"num_examples": stats.datasets[0].num_examples}
        if before:
            entry["baseline_split"] = _baseline_split(before, split)
            entry["features"] = feature_rows(
                stats.datasets[0], before[entry["baseline_split"]].datasets[0]
            )
        else:
            entry["features"] = feature_rows(stats.datasets[0])
        report["splits"][split] = entry
    return report


def _drift_cell(row: dict) -> list[str]:
    if "drift" not in row:
        return []
    found = row["drift"]
    return [f"{found['value']:.3g} {drift.SHORT_NAMES[found['metric']]}" if found else ""]


def _cells(row: dict) -> list[str]:
    cells = [row["name"], row["type"], str(row["count"]), f"{row['missing_pct']:.1f}%"]
    if "mean" in row:
        return (
            cells
            + [
                "" if row[key] is None else f"{row[key]:.6g}"
                for key in ("mean", "std_dev", "min", "max")
            ]
            + _drift_cell(row)
            + ["", ""]
        )
    top = ", ".join(
        f"{entry['value']!r} {entry['count']:g}" for entry in row["top_values"][:_SHOWN_TOP_VALUES]
    )
    return cells + [""] * 4 + _drift_cell(row) + [str(row["unique"]), top]


def format_report(report: dict) -> str:
    compared = "baseline" in report
    header = [
        "feature",
        "type",
        "count",
        "missing",
        "mean",
        "std",
        "min",
        "max",
        *(["drift"] if compared else []),
        "unique",
        "top values",
    ]
    lines = [f"Statistics: {report['artifact']}"]
    if compared:
        lines.append(
            f"Drift vs baseline: {report['baseline']} (L-inf: L-infinity distance of value "
            "shares, JSD: Jensen-Shannon divergence)"
        )
    left = (0, 1, len(header) - 1)
    for split, stats in report["splits"].items():
        table = [header] + [_cells(row) for row in stats["features"]]
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        against = f", drift against its {stats['baseline_split']} split" if compared else ""
        lines += ["", f"Split {split}: {stats['num_examples']} examples{against}"]
        lines += [
            "  "
            + "  ".join(
                cell.ljust(width) if i in left else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in table
        ]
    return "\n".join(lines)
