"""Reading a JSON file that must hold one object (a model's ``config.json``, a run's
``meta.json``), with one reason per way it can fail, for callers that name the file in their
own error."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["NotAJSONObject", "read_json_object"]


class NotAJSONObject(ValueError):
    """The file is unreadable, not valid JSON, or valid JSON that is not an object; the message
    is the reason alone ("is not valid JSON (...)", "holds a list, not a JSON object")."""


def read_json_object(path) -> dict:
    """The JSON object in ``path``.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist (left to the caller, which often has more to say).
    NotAJSONObject
        Any other read error, invalid JSON (truncated, not UTF-8) or a top-level value that is
        not an object.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:     # UnicodeDecodeError and JSONDecodeError included
        raise NotAJSONObject(f"is not valid JSON ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise NotAJSONObject(f"holds a {type(doc).__name__}, not a JSON object")
    return doc
