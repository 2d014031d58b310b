"""How the report writes a number: in tables, tiles and chart labels alike."""

import math

NONE = "\N{EN DASH}"  # in a table: no value


def number(value, digits=4):
    """A value for a table: a dash when there is none (NaN: undefined, e.g. precision with no
    positive prediction), integers whole, others to `digits` significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NONE
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) < 1e15
    ):
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def compact(value):
    """A statistic in a narrow table: as `number`, large ones in 4 significant digits."""
    if isinstance(value, int | float) and abs(value) >= 1e6:
        return f"{value:.4g}"
    return number(value)


def tick_labels(values):
    """Tick labels, as short as they can be while telling the ticks apart; whole numbers below
    a million in full (steps: 1,000, not 1e+03)."""
    if all(float(v).is_integer() and abs(v) < 1e6 for v in values):
        return [f"{int(v):,}" for v in values]
    for digits in range(3, 12):
        labels = [f"{v:.{digits}g}" for v in values]
        if len(set(labels)) == len(labels):
            return labels
    return [repr(v) for v in values]
