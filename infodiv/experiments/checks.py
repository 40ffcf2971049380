"""The zoo's settings records declare each integer field with its lower bound (:func:`positive`,
:func:`non_negative`, :func:`at_least`) and check them here: one rule, one wording."""

from __future__ import annotations

from dataclasses import MISSING, field, fields

__all__ = ["at_least", "positive", "non_negative", "check_int_fields"]


def at_least(low: int, default=MISSING, *, or_zero: bool = False):
    """A dataclass field holding an integer >= ``low`` (or 0 as well, with ``or_zero``), with
    ``default``; :func:`check_int_fields` checks it."""
    return field(default=default, metadata={"at_least": low, "or_zero": or_zero})


def positive(default=MISSING):
    """A dataclass field holding a positive integer (:func:`at_least` 1)."""
    return at_least(1, default)


def non_negative(default=MISSING):
    """A dataclass field holding a non-negative integer (:func:`at_least` 0)."""
    return at_least(0, default)


def check_int_fields(record) -> None:
    """Raise ValueError for the first field of the dataclass ``record`` declared by
    :func:`at_least` whose value is not an int (a bool is not one) of at least its bound (0 is
    also accepted where the field allows it).

    The message names the field, the bound ("a positive integer" for 1, "a non-negative
    integer" for 0, else "an integer >= low") and the value given.
    """
    for f in fields(record):
        if "at_least" not in f.metadata:
            continue
        low, v = f.metadata["at_least"], getattr(record, f.name)
        if isinstance(v, bool) or not isinstance(v, int) or (
                v < low and not (f.metadata["or_zero"] and v == 0)):
            what = ("a positive integer" if low == 1 else "a non-negative integer" if low == 0
                    else f"an integer >= {low}")
            raise ValueError(f"{f.name} must be {what}, got {v!r}")
