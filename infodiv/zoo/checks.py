"""The zoo's settings records check their integer fields here: one rule, one wording."""

from __future__ import annotations

__all__ = ["check_int_fields"]


def check_int_fields(record, lows: dict) -> None:
    """Raise ValueError for the first field ``name`` of ``lows`` whose value on ``record`` is
    not an int (a bool is not one) of at least ``lows[name]``.

    The message names the field, the bound ("a positive integer" for 1, "a non-negative
    integer" for 0, else "an integer >= low") and the value given.
    """
    for name, low in lows.items():
        v = getattr(record, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            what = ("a positive integer" if low == 1 else "a non-negative integer" if low == 0
                    else f"an integer >= {low}")
            raise ValueError(f"{name} must be {what}, got {v!r}")
