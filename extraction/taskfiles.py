"""Custom tasks from a data file: ``.csv`` (header row) or ``.jsonl`` (one JSON object a line).

``load_task_file(path, template=..., options=..., label_field=...)`` builds a
:class:`~extraction.tasks.Task` from the file's records. A label may be the option string
(``"positive"``, also for the option ``" positive"`` written with a leading space), an option
index (``1`` or ``"1"``), or absent / empty / null: that record is
unlabelled (label ``-1``; extraction runs, analyses that need labels refuse the run) when
``allow_unlabelled``, else an error. Without ``label_field`` every record is unlabelled. Parsing
is strict: a UTF-8 BOM is dropped; short or long CSV rows, unclosed quotes, a template without
``{answer}`` or with fields that are no column, a record whose template field is missing,
``null`` or a JSON list/object, and a label field that is no column are errors naming the file,
the line and the column. Torch-free.
"""

from __future__ import annotations

import csv
import hashlib
import json
import numbers
import string
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


def _read_csv(path: Path) -> tuple[list[dict], list[int], list[str]]:
    """Rows (dicts), their line numbers and the header of a strict CSV file.

    A row with fewer or more cells than the header, an empty or duplicated column name, and a
    quote that is never closed (which would swallow the rest of the file into one cell) are
    errors naming the file, the line and the column.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:   # utf-8-sig: a BOM is dropped
        reader = csv.reader(fh, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise ValueError(f"{path}: line 1 (header): {exc}") from None
        if header is None:
            return [], [], []
        header = [h.strip() for h in header]
        empty = [j + 1 for j, h in enumerate(header) if not h]
        if empty:
            raise ValueError(f"{path}: line 1 (header): column {empty[0]} has no name")
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise ValueError(f"{path}: line 1 (header): column name {dup[0]!r} appears twice")
        rows, lines = [], []
        start = reader.line_num + 1
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise ValueError(f"{path}: line {start}: {exc} (a quote opened in the row "
                                 "starting on this line is never closed?)") from None
            if not cells or all(not c.strip() for c in cells):
                start = reader.line_num + 1
                continue
            if len(cells) != len(header):
                col = min(len(cells), len(header)) + 1
                name = header[col - 1] if col <= len(header) else "(beyond the header)"
                raise ValueError(f"{path}: line {start}, column {col} ({name}): the row has "
                                 f"{len(cells)} cell(s), the header {len(header)}")
            rows.append(dict(zip(header, cells)))
            lines.append(start)
            start = reader.line_num + 1
    return rows, lines, header


def _read_jsonl(path: Path) -> tuple[list[dict], list[int], list[str]]:
    rows, lines, fields = [], [], {}
    with open(path, encoding="utf-8-sig") as fh:
        for k, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {k}, column {exc.colno} is not JSON "
                                 f"({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}: line {k} is a {type(row).__name__}, not an object")
            rows.append(row)
            lines.append(k)
            fields.update(dict.fromkeys(row))
    return rows, lines, list(fields)


def _read(path: Path) -> list[dict]:
    return (_read_csv(path) if path.suffix == ".csv" else _read_jsonl(path))[0]


def _check_template(path: Path, template: str, columns: list[str]) -> None:
    """``{answer}`` must be in the template and every other field a column of the file."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ValueError(f"--template {template!r} is not a valid format string ({exc})"
                         ) from None
    if "answer" not in fields:
        raise ValueError(f"--template {template!r} has no {{answer}} slot; end it with "
                         "{answer}, e.g. '{text} Sentiment: {answer}'")
    missing = sorted({f for f in fields if f and f != "answer"} - set(columns))
    if missing:
        raise ValueError(f"{path}: --template field(s) {missing} are not columns of the file "
                         f"(columns: {columns})")


def _check_values(path: Path, template: str, rows: list[dict], lines: list[int]) -> None:
    """Every record has a value for every field of ``template``: a field that is absent,
    ``null`` or a JSON list / object in some record is an error naming the file, the line and
    the field (it would become the prompt ``"None Sentiment:"`` or the list's repr)."""
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f and f != "answer"]
    for row, line in zip(rows, lines):
        for field in fields:
            value = row.get(field)
            if value is None:
                what = "null" if field in row else "missing"
                raise ValueError(f"{path}: line {line}, field {field!r} is {what}; every record "
                                 f"needs a value for each field of --template {template!r}")
            if isinstance(value, (list, dict)):
                raise ValueError(f"{path}: line {line}, field {field!r} holds a JSON "
                                 f"{'list' if isinstance(value, list) else 'object'}, not "
                                 "text or a number")


def _label(value, options: list[str], i: int, field: str, allow_unlabelled: bool = True) -> int:
    """Option index of a label value, or -1 when the record is unlabelled (if allowed)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if not allow_unlabelled:
            raise ValueError(f"record {i}: the label is empty; every record needs a label "
                             "(or pass --unlabelled)")
        return -1
    if isinstance(value, bool):
        raise ValueError(f"record {i}: label field {field!r} holds a boolean {value!r}; give "
                         f"the option string or index (options {options})")
    if isinstance(value, str):
        v = value.strip()
        if v in options:
            return options.index(v)
        bare = [o.strip() for o in options]   # label 'sport' of the option ' sport'
        if bare.count(v) == 1:
            return bare.index(v)
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
                   name: str | None = None, truncatable=(), n: int | None = None,
                   allow_unlabelled: bool = False) -> Task:
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
        Field holding the gold option (string or index); None: unlabelled records. It must be
        a column of the file (a field of some record for ``.jsonl``).
    name : str, optional
        Task name (default: the file stem).
    truncatable : iterable of str
        Fields that may be shortened to fit the context.
    n : int, optional
        Keep the first ``n`` records.
    allow_unlabelled : bool, default False
        Accept records whose label cell is empty (label -1); False: such a record is an
        error naming its line.

    Returns
    -------
    Task
        ``meta`` holds source_files, sha256, n_rows, n, n_unlabelled and label_field.

    Raises
    ------
    ValueError
        Unknown suffix, a folder, empty file, malformed lines (unclosed quotes, short or long
        CSV rows), a template without ``{answer}`` or with fields that are no column, a label
        field that is no column, labels outside the options; every message names the file and
        the line (and the column where there is one).
    FileNotFoundError
        No such file.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"task file {path} is a folder; give a .csv or .jsonl file")
    if path.suffix not in TASK_FILE_SUFFIXES:
        raise ValueError(f"task file {path} must end in {' or '.join(TASK_FILE_SUFFIXES)}")
    if not path.is_file():
        raise FileNotFoundError(f"task file {path} does not exist")
    options = [str(o) for o in options]
    try:
        rows, lines, columns = (_read_csv if path.suffix == ".csv" else _read_jsonl)(path)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: byte {exc.start} is not UTF-8 ({exc.reason})") from None
    if not rows:
        raise ValueError(f"task file {path} holds no records")
    _check_template(path, template, columns)
    if label_field is not None and label_field not in columns:
        raise ValueError(f"{path}: --label-field {label_field!r} is not a column of the file "
                         f"(columns: {columns})")
    n_rows = len(rows)
    if n is not None:
        rows, lines = rows[: int(n)], lines[: int(n)]
    _check_values(path, template, rows, lines)
    labels = np.zeros(len(rows), dtype=np.int64) - 1
    for i, r in enumerate(rows):
        if label_field is None:
            continue
        try:
            labels[i] = _label(r.get(label_field), options, i, label_field, allow_unlabelled)
        except ValueError as exc:
            raise ValueError(f"{path}: line {lines[i]}, column {label_field!r}: {exc}") from None
    meta = {"task": name or path.stem, "source": "file", "source_files": [str(path)],
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "n_rows": n_rows,
            "n": len(rows), "n_unlabelled": int((labels < 0).sum()),
            "label_field": label_field, "shots": 0, "seed": None, "template": template,
            "options": options}
    return Task(name or path.stem, template, options, rows, labels, meta, tuple(truncatable))
