"""The CSV cells ExampleGen reads as missing values (no TensorFlow: the configuration uses it)."""

import json

# Empty cells, and the tokens common exports write for a missing value. A cell that is one of
# these (exactly, case included) is an absent feature, in every column of every type.
DEFAULT_MISSING_VALUES = ("", "NA", "NaN", "null")
# Rows whose label is missing that ExampleGen sets aside before refusing the input: past half,
# the label column is more likely the wrong one (or the export broke) than a few rows unlabeled.
DEFAULT_MAX_UNLABELED_ROW_FRACTION = 0.5


def parse_missing_values(text: str | None) -> tuple[str, ...]:
    """The JSON list of strings ExampleGen takes; None means the defaults."""
    if text is None:
        return DEFAULT_MISSING_VALUES
    try:
        values = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"missing_values {text!r} is not JSON: {e}") from e
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"missing_values must be a JSON list of strings, got {text!r}")
    return tuple(values)
