"""How ExampleGen splits the rows: split names and weights (no TensorFlow: the
configuration reads the default)."""

import json
import re

# Four fifths trained on, one fifth evaluated: TFX's CsvExampleGen splits 2:1, but a third
# of the rows withheld from training cost small tables more quality than the Evaluator's
# gate gains from them (docs/benchmarks/2026-12-05-zero-code-split.md).
DEFAULT_SPLIT_RATIOS = '{"train": 4, "eval": 1}'
_SPLIT_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def parse_split_ratios(text: str) -> dict[str, int]:
    """Parses '{"train": 4, "eval": 1}' into an ordered {split: weight} dict."""
    try:
        ratios = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"split_ratios {text!r} is not valid JSON: {e}") from e
    if not isinstance(ratios, dict) or not ratios:
        raise ValueError(f"split_ratios {text!r} must be a non-empty JSON object")
    for name, weight in ratios.items():
        if not _SPLIT_NAME.fullmatch(name):
            raise ValueError(f"split_ratios {text!r}: bad split name {name!r}")
        if type(weight) is not int or weight <= 0:
            raise ValueError(
                f"split_ratios {text!r}: weight of {name!r} must be a positive integer"
            )
    return ratios
