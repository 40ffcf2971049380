"""Custom tasks from a data file: ``.csv`` (header row) or ``.jsonl`` (one JSON object a line).

``load_task_file(path, template=..., options=..., label_field=...)`` builds a
:class:`~extraction.tasks.Task` from the file's records. A label may be the option string
(``"positive"``), an option index (``1`` or ``"1"``), or absent / empty / null: that record is
unlabelled (label ``-1``; extraction runs, analyses that need labels refuse the run). Without
``label_field`` every record is unlabelled. Torch-free.
"""

from __future__ import annotations

import csv
import hashlib
import json
import numbers
from pathlib import Path

import numpy as np

from .tasks import Task

__all__ = ["load_task_file", "parse_options", "TASK_FILE_SUFFIXES"]

TASK_FILE_SUFFIXES = (".csv", ".jsonl")


def parse_options(text: str) -> list[str]:
    """Options from the command line: a JSON list (``'["a, b", "c"]'``) or comma-separated."""
    text = str(text).strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--options is not a valid JSON list ({exc.msg}): {text!r}") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"--options must be a JSON list of strings, got {text!r}")
        return value
    return [o.strip() for o in text.split(",") if o.strip()]


def _read(path: Path) -> list[dict]:
    if path.suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as fh:
            return [dict(row) for row in csv.DictReader(fh)]
    rows = []
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {k} is not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}: line {k} is a {type(row).__name__}, not an object")
            rows.append(row)
    return rows


def _label(value, options: list[str], i: int, field: str) -> int:
    """Option index of a label value, or -1 when the record is unlabelled."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return -1
    if isinstance(value, bool):
        raise ValueError(f"record {i}: label field {field!r} holds a boolean {value!r}; give "
                         f"the option string or index (options {options})")
    if isinstance(value, str):
        v = value.strip()
        if v in options:
            return options.index(v)
        if v.lstrip("-").isdigit():
            value = int(v)
        else:
            raise ValueError(f"record {i}: label {value!r} in field {field!r} is neither one of "
                             f"the options {options} nor an option index")
    if not isinstance(value, numbers.Integral) or not 0 <= int(value) < len(options):
        raise ValueError(f"record {i}: label {value!r} in field {field!r} is outside the "
                         f"{len(options)} options {options}")
    return int(value)


def load_task_file(path, *, template: str, options, label_field: str | None = None,
                   name: str | None = None, truncatable=(), n: int | None = None) -> Task:
    """Build a task from a ``.csv`` / ``.jsonl`` file.

    Parameters
    ----------
    path : path
        The data file.
    template : str
        Format string over the record fields ending in ``{answer}`` (see :class:`Task`).
    options : sequence of str
        The answer options.
    label_field : str, optional
        Field holding the gold option (string or index); None: unlabelled records.
    name : str, optional
        Task name (default: the file stem).
    truncatable : iterable of str
        Fields that may be shortened to fit the context.
    n : int, optional
        Keep the first ``n`` records.

    Returns
    -------
    Task
        ``meta`` holds source_files, sha256, n_rows, n, n_unlabelled and label_field.

    Raises
    ------
    ValueError
        Unknown suffix, empty file, malformed lines, labels outside the options, template
        fields missing from a record (the message names the record).
    FileNotFoundError
        No such file.
    """
    path = Path(path)
    if path.suffix not in TASK_FILE_SUFFIXES:
        raise ValueError(f"task file {path} must end in {' or '.join(TASK_FILE_SUFFIXES)}")
    if not path.is_file():
        raise FileNotFoundError(f"task file {path} does not exist")
    options = [str(o) for o in options]
    rows = _read(path)
    if not rows:
        raise ValueError(f"task file {path} holds no records")
    n_rows = len(rows)
    if n is not None:
        rows = rows[: int(n)]
    labels = np.array([-1 if label_field is None else _label(r.get(label_field), options, i,
                                                             label_field)
                       for i, r in enumerate(rows)], dtype=np.int64)
    meta = {"task": name or path.stem, "source": "file", "source_files": [str(path)],
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "n_rows": n_rows,
            "n": len(rows), "n_unlabelled": int((labels < 0).sum()),
            "label_field": label_field, "shots": 0, "seed": None, "template": template,
            "options": options}
    return Task(name or path.stem, template, options, rows, labels, meta, tuple(truncatable))
