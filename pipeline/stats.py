"""`python -m pipeline stats`: per-feature data statistics of a run, as a table or JSON.

Reads StatisticsGen's `Split-<name>/FeatureStats.pb` files (TFDV's format) with
tensorflow_metadata alone, so it answers without importing TensorFlow.
"""

from tensorflow_metadata.proto.v0 import statistics_pb2

from components.statistics_gen.layout import load_statistics

_SHOWN_TOP_VALUES = 3


def latest_statistics_uri(metadata_path: str) -> str:
    """The `ExampleStatistics` artifact of the newest run recorded at `metadata_path`."""
    from pipeline.runner import latest_output, latest_run_executions, open_store

    store = open_store(metadata_path)
    artifact = latest_output(
        store, latest_run_executions(store, metadata_path), "ExampleStatistics"
    )
    if artifact is None:
        raise RuntimeError(f"The latest run in {metadata_path} has no statistics.")
    return artifact.uri


def feature_rows(dataset: statistics_pb2.DatasetFeatureStatistics) -> list[dict]:
    """One plain dict per feature: what the table and the JSON show."""
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
        rows.append(row)
    return rows


def statistics_report(path: str) -> dict:
    return {
        "artifact": path,
        "splits": {
            split: {
                "num_examples": stats.datasets[0].num_examples,
                "features": feature_rows(stats.datasets[0]),
            }
            for split, stats in load_statistics(path).items()
        },
    }


def _cells(row: dict) -> list[str]:
    cells = [row["name"], row["type"], str(row["count"]), f"{row['missing_pct']:.1f}%"]
    if "mean" in row:
        return (
            cells
            + [
                "" if row[key] is None else f"{row[key]:.6g}"
                for key in ("mean", "std_dev", "min", "max")
            ]
            + ["", ""]
        )
    top = ", ".join(
        f"{entry['value']!r} {entry['count']:g}" for entry in row["top_values"][:_SHOWN_TOP_VALUES]
    )
    return cells + [""] * 4 + [str(row["unique"]), top]


def format_report(report: dict) -> str:
    header = [
        "feature",
        "type",
        "count",
        "missing",
        "mean",
        "std",
        "min",
        "max",
        "unique",
        "top values",
    ]
    lines = [f"Statistics: {report['artifact']}"]
    for split, stats in report["splits"].items():
        table = [header] + [_cells(row) for row in stats["features"]]
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        lines += ["", f"Split {split}: {stats['num_examples']} examples"]
        lines += [
            "  "
            + "  ".join(
                cell.ljust(width) if i in (0, 1, 9) else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in table
        ]
    return "\n".join(lines)
