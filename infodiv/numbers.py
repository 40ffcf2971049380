"""Numbers for reading: every page, summary line and generated sentence rounds through here.

:func:`fmt` rounds one number; :func:`fmt_interval` writes an estimate with its interval.
The full values stay in the JSON.
"""

from __future__ import annotations

import math

__all__ = ["fmt", "fmt_interval"]


def fmt(x, digits: int = 3) -> str:
    """A number for reading: ``digits`` significant digits, scientific below 1e-3 / above 1e5.

    Integers print in full; None, NaN print as an en dash.
    """
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "–"
    if x == 0 or math.isinf(x):
        return str(x) if math.isinf(x) else "0"
    if abs(x) < 1e-3 or abs(x) >= 1e5:
        return f"{x:.{max(digits - 1, 1)}e}"
    if abs(x) >= 10 ** digits:   # 4391.5 -> "4392", not "4.39e+03"
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def fmt_interval(value, interval, digits: int = 3) -> str:
    """``"0.429 [0.302, 0.557]"``; the estimate alone without an interval."""
    if not interval or None in interval:
        return fmt(value, digits)
    return f"{fmt(value, digits)} [{fmt(interval[0], digits)}, {fmt(interval[1], digits)}]"
