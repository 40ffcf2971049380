"""Option types of the command line: each converts one option's text or says, in one
line, what it expected (argparse prints it and exits 2). The checks that need more than the
text (a model resolved offline, a device, a writable folder) are
:mod:`infodiv.study.checks`."""

from __future__ import annotations

import argparse
import math

__all__ = ["int_at_least", "positive_int", "nonneg_int", "zero_or_at_least", "n_jobs",
           "finite_float_at_least", "batch_size"]


def _number(text: str, convert, expected: str):
    """``convert(text)``; text it cannot convert is the argparse error ``expected <expected>,
    got '<text>'``."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def int_at_least(minimum: int):
    """argparse type: an integer >= ``minimum`` (so ``--n 0`` is refused before anything runs)."""
    def parse(text: str) -> int:
        value = _number(text, int, f"an integer >= {minimum}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


positive_int = int_at_least(1)
nonneg_int = int_at_least(0)


def zero_or_at_least(minimum: int):
    """argparse type: 0 (skip) or an integer >= ``minimum`` (e.g. bootstrap replicates)."""
    at_least = int_at_least(minimum)

    def parse(text: str) -> int:
        value = nonneg_int(text)
        if value == 0:
            return 0
        try:
            return at_least(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"must be 0 (skip) or at least {minimum}, got "
                                             f"{value}") from None

    parse.__name__ = f"zero_or_at_least_{minimum}"
    return parse


def objective_sizes(text: str) -> tuple[str, int, int]:
    """argparse type of ``--objective-sizes``: ``OBJECTIVE=B,POWER`` with B >= 20 and
    POWER >= 0, as ``(objective, B, power)``."""
    from infodiv.setfunctions import OBJECTIVE_NAMES

    name, sep, sizes = text.partition("=")
    parts = sizes.split(",")
    if not sep or len(parts) != 2:
        raise argparse.ArgumentTypeError(f"must be OBJECTIVE=B,POWER (e.g. mi_readout=50,10), "
                                         f"got {text!r}")
    if name not in OBJECTIVE_NAMES:
        raise argparse.ArgumentTypeError(f"unknown objective {name!r}; the objectives are "
                                         f"{', '.join(OBJECTIVE_NAMES)}")
    return name, int_at_least(20)(parts[0]), nonneg_int(parts[1])


def n_jobs(text: str) -> int:
    """argparse type of ``--n-jobs``: a non-zero integer (joblib: -1 = every core)."""
    value = _number(text, int, "a non-zero integer")
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (1 = one worker, -1 = every core)")
    return value


def finite_float_at_least(minimum: float):
    """argparse type: a finite float >= ``minimum`` (``nan`` and ``inf`` refused)."""
    def parse(text: str) -> float:
        value = _number(text, float, f"a number >= {minimum:g}")
        if not math.isfinite(value) or value < minimum:
            raise argparse.ArgumentTypeError(f"must be a finite number >= {minimum:g}, got "
                                             f"{text}")
        return value

    parse.__name__ = f"finite_float_at_least_{minimum:g}"
    return parse


def batch_size(text: str):
    """argparse type of ``--batch-size``: ``'auto'`` (token budget) or a positive integer."""
    return "auto" if text == "auto" else positive_int(text)


