"""Markdown helpers shared by the reports (numbers are rounded by the caller, for reading)."""

from __future__ import annotations

__all__ = ["md_table", "fmt", "fmt_pairs", "fmt_list"]


def md_table(columns, rows) -> list[str]:
    """Lines of a markdown table with header ``columns`` and the given ``rows``."""
    lines = ["| " + " | ".join(str(c) for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return lines


def fmt(value, spec: str = ".4g") -> str:
    """One number formatted by ``spec``; None (a non-finite number in JSON) as ``nan``."""
    return "nan" if value is None else f"{value:{spec}}"


def fmt_pairs(d: dict, spec: str = ".4g") -> str:
    """``"key value, key value"`` with the values formatted by ``spec``."""
    return ", ".join(f"{k} {v:{spec}}" for k, v in d.items())


def fmt_list(values, spec: str = ".4g") -> str:
    """Comma-separated formatted numbers; None (a non-finite number in JSON) as ``nan``."""
    return ", ".join(fmt(v, spec) for v in values)
