"""Markdown helpers shared by the reports (numbers are rounded by the caller, for reading)."""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["md_table", "fmt", "fmt_pairs", "fmt_list", "interval", "fill_numbers"]


def md_table(columns, rows) -> list[str]:
    """Lines of a markdown table with header ``columns`` and the given ``rows``."""
    lines = ["| " + " | ".join(str(c) for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return lines


def fmt(value, spec: str = ".4g") -> str:
    """One number formatted by ``spec``; None (a non-finite number in JSON) as ``nan``."""
    return "nan" if value is None else f"{value:{spec}}"


def interval(ci, spec: str = ".3g") -> str:
    """``[low, high]`` formatted by ``spec`` (``[nan, nan]`` without an interval)."""
    return "[" + ", ".join(fmt(x, spec) for x in ci) + "]" if ci else "[nan, nan]"


def fmt_pairs(d: dict, spec: str = ".4g") -> str:
    """``"key value, key value"`` with the values formatted by ``spec``."""
    return ", ".join(f"{k} {v:{spec}}" for k, v in d.items())


def fmt_list(values, spec: str = ".4g") -> str:
    """Comma-separated formatted numbers; None (a non-finite number in JSON) as ``nan``."""
    return ", ".join(fmt(v, spec) for v in values)


#: ``{{path/to/file.json:dotted.key|spec}}``: a number (or a list of numbers) read from JSON
PLACEHOLDER = r"\{\{([^:{}|]+):([^{}|]+)(?:\|([^{}]*))?\}\}"


def _lookup(doc, key: str, where: str):
    for part in key.split("."):
        try:
            doc = doc[int(part)] if isinstance(doc, list) else doc[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise ValueError(f"{where}: no {part!r} at that level") from None
    return doc


def _render_value(value, spec: str) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_render_value(v, spec) for v in value) + "]"
    if value is None:
        return "nan"
    if isinstance(value, bool) and "/" in spec:   # "detected/not detected"
        return spec.split("/", 1)[0 if value else 1]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    text = re.sub(r"e([+-])0*(\d)", lambda m: "e" + m.group(1).replace("+", "") + m.group(2),
                  fmt(value, spec or ""))
    return text.replace("-", "\N{MINUS SIGN}")


def fill_numbers(template: str, root, files=None) -> str:
    """Replace every ``{{file.json:key.path|spec}}`` in ``template`` by the value in ``root/file``
    (``files``: name -> path of the files read from elsewhere, e.g. a page not yet moved in).

    So that each number a hand-written reading quotes is copied from the committed JSON, never
    retyped: ``spec`` is a format spec (``.3g``, ``.2f``, ``.0%``); a list (an interval) renders
    as ``[a, b]``; negative numbers get a typographic minus. Raises ValueError naming the
    placeholder when the file or key does not exist.
    """
    root, cache = Path(root), {}

    def repl(match):
        name, key, spec = match.group(1).strip(), match.group(2).strip(), match.group(3)
        if name not in cache:
            path = Path((files or {}).get(name, root / name))
            if not path.is_file():
                raise ValueError(f"{match.group(0)}: no file {path}")
            cache[name] = json.loads(path.read_text())
        return _render_value(_lookup(cache[name], key, match.group(0)), (spec or "").strip())

    return re.sub(PLACEHOLDER, repl, template)
