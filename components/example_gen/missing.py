"""The CSV cells ExampleGen reads as missing values (no TensorFlow: the configuration uses it)."""

import json

# Empty cells, and the tokens common exports write for a missing value. A cell that is one of
# these (exactly, case included) is an absent feature, in every column of every type.
DEFAULT_MISSING_VALUES = ("", "NA", "NaN", "null")


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
