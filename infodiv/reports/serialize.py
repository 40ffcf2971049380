"""The one JSON converter of the reports: numpy scalars and arrays to plain Python.

Non-finite floats become ``null`` (JSON has no NaN); dict keys become strings; anything else
unknown is written as its ``str``. Numbers are kept in full (reports round for reading only in
their markdown).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["jsonable", "write_json"]


def jsonable(obj):
    """A JSON-ready copy of ``obj`` (nested dicts, lists, tuples, numpy values)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return str(obj)


def write_json(path, doc, *, indent: int = 1) -> Path:
    """Write ``jsonable(doc)`` to ``path`` (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(doc), indent=indent))
    return path
