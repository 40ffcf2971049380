"""Classification tasks as prompts with a fixed set of answer options (paper Table 3).

A :class:`Task` holds records (dicts), a Python format-string ``template`` over their fields that
ends in an ``{answer}`` slot, the C answer ``options`` and the gold option index of every record.
The prompt of an example is the filled template up to (not including) the answer slot, with the
whitespace in front of the slot moved into the answer (``answer_prefix``): the model reads the
prompt and its next-token logits at the last prompt position are restricted to the first tokens of
``answer_prefix + option`` (see :mod:`extraction.prompts`).

This module is torch-free. The file/`datasets` loaders of the paper's eight tasks live in
:mod:`extraction.datasets`; :func:`get_task` dispatches to them.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from estimators.validation import check_labels

from .datasets import SUPPORTED_TASKS, load_task_records
from .demos import DEMO_SEPARATOR, demo_prefixes
from .templates import parse_template

__all__ = ["Task", "get_task", "SUPPORTED_TASKS", "DEMO_SEPARATOR"]

@dataclass(eq=False, repr=False)
class Task:
    """A classification task: records, a template, answer options and gold labels.

    Attributes
    ----------
    name : str
        Task name (``"sst2"``, ``"custom"``, ...).
    template : str
        Python format string over record fields, ending in ``{answer}`` (paper Table 3).
    options : list of str
        The C answer strings as they follow the prompt after :meth:`answer_prefix`.
    records : list of dict
        One dict per example holding the template's fields.
    labels : ndarray of int64, shape (N,)
        Gold option index of every record, in ``[0, C)``; ``-1`` for an unlabelled record
        (extraction accepts it; analyses that need labels refuse the run).
    meta : dict
        Provenance: source files, split, n, shots, seed, dropped rows, ...
    truncatable : tuple of str
        Fields that may be shortened when a prompt is too long (the passage, never the question).
    demonstrations : list of str or None
        Per-example few-shot prefix (already joined, ending in the separator), or None.
    demo_items : list of list of str or None
        The same prefixes as lists of single demonstrations (each ending in the separator), so
        that a prompt too long for the context can drop some (see :meth:`segments`).
    """

    name: str
    template: str
    options: list[str]
    records: list[dict]
    labels: np.ndarray
    meta: dict = field(default_factory=dict)
    truncatable: tuple[str, ...] = ()
    demonstrations: list[str] | None = None
    demo_items: list[list[str]] | None = None

    def __post_init__(self):
        if self.demo_items is not None:
            self.demo_items = [list(d) for d in self.demo_items]
            if self.demonstrations is None:
                self.demonstrations = ["".join(d) for d in self.demo_items]
        elif self.demonstrations is not None:
            self.demo_items = [[d] if d else [] for d in self.demonstrations]
        self._pieces, self._prefix = parse_template(self.template)
        self.options = [str(o) for o in self.options]
        if len(self.options) < 2:
            raise ValueError(f"a task needs at least 2 options, got {self.options!r}")
        if any(not o.strip() for o in self.options) or len(set(self.options)) != len(self.options):
            raise ValueError(f"options must be distinct non-empty strings, got {self.options!r}")
        self.records = list(self.records)
        if not self.records:
            raise ValueError(f"task {self.name!r} is empty: no records")
        self.labels = check_labels(self.labels, f"labels of task {self.name!r}")
        if self.labels.shape[0] != len(self.records):
            raise ValueError(
                f"task {self.name!r}: {len(self.records)} records but {self.labels.shape[0]} labels"
            )
        bad = np.flatnonzero((self.labels < -1) | (self.labels >= len(self.options)))
        if bad.size:
            raise ValueError(
                f"task {self.name!r}: label {int(self.labels[bad[0]])} of record {int(bad[0])} "
                f"is outside the {len(self.options)} options {self.options!r} "
                f"({bad.size} such records)"
            )
        fields = {f for _, f in self._pieces if f is not None}
        self.truncatable = tuple(self.truncatable or ())
        unknown = set(self.truncatable) - fields
        if unknown:
            raise ValueError(
                f"truncatable fields {sorted(unknown)} are not in the template fields "
                f"{sorted(fields)}"
            )
        if self.demonstrations is not None and len(self.demonstrations) != len(self.records):
            raise ValueError("demonstrations must hold one prefix per record")
        if self.demo_items is not None and ["".join(d) for d in self.demo_items] != list(
                self.demonstrations):
            raise ValueError("demo_items must join to the demonstrations")
        for i, rec in enumerate(self.records):
            missing = fields - set(rec)
            if missing:
                raise ValueError(
                    f"task {self.name!r}: record {i} lacks template field(s) {sorted(missing)}"
                )

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        shots = self.meta.get("shots", 0)
        return (f"Task(name={self.name!r}, n={len(self)}, options={self.options!r}, "
                f"shots={shots}, template={self.template!r})")

    @property
    def fields(self) -> list[str]:
        """Record fields used by the template, in order of appearance."""
        return list(dict.fromkeys(f for _, f in self._pieces if f is not None))

    def _fill(self, record: dict) -> list[tuple[str, bool]]:
        out = []
        for text, fname in self._pieces:
            if fname is None:
                out.append((text, False))
            else:
                out.append((text.format(**record), fname in self.truncatable))
        # the prompt ends where the answer slot starts: no trailing whitespace
        while out and not out[-1][0].rstrip():
            out.pop()
        if out:
            out[-1] = (out[-1][0].rstrip(), out[-1][1])
        return out

    def n_demonstrations(self, i) -> int:
        """Number of demonstrations in front of example ``i``."""
        i = self._check_index(i)
        return 0 if self.demo_items is None else len(self.demo_items[i])

    def segments(self, i, drop: int = 0) -> list[tuple[str, bool]]:
        """Prompt pieces ``(text, truncatable)`` of example ``i``; their concatenation is
        :meth:`prompt`. Demonstrations form one leading non-truncatable piece, without the
        first ``drop`` of them."""
        i = self._check_index(i)
        segs = self._fill(self.records[i])
        if self.demo_items is not None:
            demos = "".join(self.demo_items[i][int(drop):])
            if demos:
                segs = [(demos, False)] + segs
        return segs

    def prompt(self, i, drop: int = 0) -> str:
        """The prompt of example ``i`` up to (not including) the answer slot, without the
        first ``drop`` demonstrations."""
        return "".join(text for text, _ in self.segments(i, drop))

    def answer_prefix(self) -> str:
        """What precedes an option in context (the whitespace before ``{answer}``, e.g. ``" "``)."""
        return self._prefix

    @property
    def n_unlabelled(self) -> int:
        return int((self.labels < 0).sum())

    def answer(self, i) -> str:
        """The gold answer of example ``i`` as it appears after the prompt."""
        i = self._check_index(i)
        if self.labels[i] < 0:
            raise ValueError(f"task {self.name!r}: record {i} is unlabelled; it has no answer "
                             "and cannot be a demonstration")
        return self._prefix + self.options[int(self.labels[i])]

    def demonstration(self, i) -> str:
        """Example ``i`` as a demonstration: its own prompt (no demonstrations) + gold answer."""
        i = self._check_index(i)
        return "".join(t for t, _ in self._fill(self.records[i])) + self.answer(i)

    def _check_index(self, i) -> int:
        if not isinstance(i, numbers.Integral) or not -len(self) <= int(i) < len(self):
            raise IndexError(f"example index {i!r} out of range for a task of {len(self)}")
        return int(i) % len(self)

    def with_demonstrations(self, shots: int, *, pool: Task | None = None, seed: int = 0,
                            fixed: bool = False) -> Task:
        """Return a copy whose prompts start with ``shots`` seeded demonstrations.

        Each demonstration is a filled template with its gold answer; they are joined and
        followed by ``DEMO_SEPARATOR`` (``"\\n\\n"``). They are drawn without replacement from
        ``pool`` (another split) or, when ``pool`` is None, from this task excluding the
        example itself. Draws for example ``i`` use ``numpy.random.default_rng([seed, i])`` so
        they do not depend on how many examples are taken. ``fixed``: the same demonstrations
        in front of every prompt (one draw with ``default_rng([seed])``; needs ``pool``).
        """
        if isinstance(shots, bool) or not isinstance(shots, numbers.Integral) or shots < 0:
            raise ValueError(f"shots must be a non-negative integer, got {shots!r}")
        shots = int(shots)
        if shots == 0:
            return self
        if pool is not None and (pool.template != self.template or pool.options != self.options):
            raise ValueError("the demonstration pool must share the task's template and options")
        src = self if pool is None else pool
        if fixed and pool is None:
            raise ValueError("fixed demonstrations need a pool (another split): every example "
                             "of this task would otherwise see its own answer in one of them")
        demos = demo_prefixes(src, len(self), shots, seed, exclude_self=pool is None,
                               fixed=fixed)
        meta = dict(self.meta, shots=shots, seed=int(seed), fixed_demos=bool(fixed),
                    demo_source="other split" if pool is not None else "same split, self excluded")
        if pool is not None:
            meta["demo_split"] = pool.meta.get("split")
        return Task(self.name, self.template, self.options, self.records, self.labels, meta,
                    self.truncatable, demo_items=demos)

    @classmethod
    def from_records(
        cls,
        records: Sequence[dict],
        *,
        template: str,
        options: Sequence[str],
        label: str | None,
        name: str = "custom",
        truncatable: Iterable[str] | None = None,
    ) -> Task:
        """Build a task from a list of dicts.

        Parameters
        ----------
        records : sequence of dict
            Examples; each holds the template's fields and the ``label`` field.
        template : str
            Format string over the record fields ending in ``{answer}``, e.g.
            ``"{text}\\nQuestion: Was that sentence positive or negative? Answer: {answer}"``.
            Without ``{answer}`` the answer follows the template after its trailing whitespace
            (one space if it has none).
        options : sequence of str
            Answer strings, e.g. ``["negative", "positive"]``.
        label : str or None
            Field holding the gold option index (an integer in ``[0, C)``); None: the records
            are unlabelled (labels ``-1``; extraction works, analyses that need labels refuse).
        truncatable : iterable of str, optional
            Fields that may be shortened to fit a context window.
        """
        records = list(records)
        if not records:
            raise ValueError(f"task {name!r} is empty: no records")
        labels = []
        for i, rec in enumerate(records):
            if not isinstance(rec, dict):
                raise TypeError(f"record {i} must be a dict, got {type(rec).__name__}")
            if label is None:
                labels.append(-1)
                continue
            if label not in rec:
                raise ValueError(f"record {i} has no label field {label!r}")
            v = rec[label]
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(
                    f"record {i}: label field {label!r} must hold an integer option index, "
                    f"got {v!r}"
                )
            if v < 0:   # -1 marks an unlabelled record inside a Task; here it is an error
                raise ValueError(f"task {name!r}: label {int(v)} of record {i} is outside the "
                                 f"{len(options)} options {list(options)!r}")
            labels.append(int(v))
        meta = {"task": name, "source": "records", "n": len(records), "shots": 0, "seed": None,
                "template": template, "options": [str(o) for o in options]}
        return cls(name, template, list(options), records, np.asarray(labels, dtype=np.int64),
                   meta, tuple(truncatable or ()))


def get_task(name: str, *, data_dir=None, split=None, n: int | None = 2000, shots: int = 0,
             seed: int = 0, fixed_demos: bool = False, start: int = 0,
             demo_start: int | None = None) -> Task:
    """Load one of the paper's tasks with its Table 3 template and options.

    Parameters
    ----------
    name : str
        One of :data:`SUPPORTED_TASKS` (``"arc"`` is ARC-Challenge). File layouts, label
        mappings and the ARC rule (four-choice questions only; the dropped count is in
        ``meta["dropped"]``) are documented in :mod:`extraction.datasets`.
    data_dir : path, optional
        Folder laid out like ``../shared/data``; it (or else ``$INFODIV_DATA_DIR``) is then the
        only source. Default: Hugging Face ``datasets`` when importable, falling back to
        ``../shared/data`` next to the repository when the hub fails (the reason is kept in
        ``meta["fallback_from"]``).
    split : str, optional
        Default ``"test"`` for AG News, ``"validation"`` (MNLI: ``validation_matched``) else.
    n : int or None
        Keep ``n`` examples of the split, rows ``start .. start + n - 1`` (None: all from
        ``start``).
    shots : int
        Number of seeded demonstrations prepended to every prompt, drawn from the train split
        when the data has one, else from the same split excluding the example.
    seed : int
        Seed of the demonstration draws.
    fixed_demos : bool
        The same ``shots`` demonstrations in front of every prompt (one draw; from the same
        split: among the examples not kept by ``n``), so every prompt shares them as a token
        prefix (computed once by :mod:`extraction.savings`). Default: a draw per example.
    start : int
        Index of the first example row of the split (default 0, the paper's rows): rows
        outside a set of analysed rows, e.g. for choosing a prompt setting on held-out rows.
        With ``shots`` and no train split the demonstrations must be fixed
        (``fixed_demos``): a per-example draw from the same split would not know which rows
        are examples.
    demo_start : int, optional
        With ``fixed_demos`` and no train split: draw the demonstrations among rows
        ``demo_start ..`` of the split (default: the rows after the examples). It must not be
        below ``start + n``, so no example is a demonstration; giving the same ``demo_start``
        and ``seed`` to two runs over different rows gives both the same demonstrations.
        ``meta["demo_rows"]`` records the rows drawn from.

    Returns
    -------
    Task
        ``meta`` holds task, split, source_files, n_rows (rows in the files), dropped, n,
        n_available, shots, seed, template, options (and demo_source / demo_split with shots).

    Raises
    ------
    ValueError
        Unknown task (the message lists :data:`SUPPORTED_TASKS`), unknown split, bad ``n`` /
        ``shots``, malformed rows or labels outside the options, an empty task.
    FileNotFoundError
        No data file: the message names the folder and the expected relative paths.
    """
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
        raise ValueError(f"n must be a positive integer or None, got {n!r}")
    if isinstance(shots, bool) or not isinstance(shots, numbers.Integral) or shots < 0:
        raise ValueError(f"shots must be a non-negative integer, got {shots!r}")
    if isinstance(start, bool) or not isinstance(start, numbers.Integral) or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    if demo_start is not None and (isinstance(demo_start, bool)
                                   or not isinstance(demo_start, numbers.Integral)
                                   or demo_start < 0):
        raise ValueError(f"demo_start must be a non-negative integer or None, got {demo_start!r}")
    if demo_start is not None and not (shots and fixed_demos):
        raise ValueError(f"demo_start={demo_start} needs fixed demonstrations (shots >= 1 and "
                         "fixed_demos)")
    spec, records, labels, meta, pool = load_task_records(name, data_dir=data_dir, split=split,
                                                          with_pool=shots > 0)
    full = Task(spec.name, spec.template, list(spec.options), records, labels, meta,
                spec.truncatable)
    if start >= len(full):
        raise ValueError(f"start={start} but the {spec.name} split holds only {len(full)} rows")
    task = full
    stop = len(full) if n is None else min(len(full), start + n)
    if start or stop < len(full):
        task = Task(full.name, full.template, full.options, full.records[start:stop],
                    full.labels[start:stop], dict(meta), full.truncatable)
    task.meta.update(n=len(task), n_available=len(full), shots=int(shots), seed=int(seed))
    if start:
        task.meta["start"] = int(start)
    if shots:
        if pool is not None:
            if demo_start is not None:
                raise ValueError(f"demo_start={demo_start}: {spec.name} has a train split, and "
                                 "the demonstrations are drawn from it")
            p_records, p_labels, p_meta = pool
            pool_task = Task(full.name, full.template, full.options, p_records, p_labels, p_meta,
                             full.truncatable)
            return task.with_demonstrations(shots, pool=pool_task, seed=seed, fixed=fixed_demos)
        if fixed_demos:   # same split: one draw among rows that are no example
            first = stop if demo_start is None else int(demo_start)
            if first < stop:
                raise ValueError(f"demo_start={first} is below the end of the examples (rows "
                                 f"{start}..{stop - 1}): demonstrations would be examples")
            if first >= len(full):
                raise ValueError(f"fixed demonstrations are drawn among rows {first}.. but the "
                                 f"{spec.name} split holds only {len(full)} rows")
            rest = Task(full.name, full.template, full.options, full.records[first:],
                        full.labels[first:], dict(meta), full.truncatable)
            demos = demo_prefixes(rest, len(task), shots, seed, exclude_self=False, fixed=True)
            extra = {"demo_rows": [first, len(full)]} if demo_start is not None else {}
        elif start:
            raise ValueError(f"start={start} with per-example demonstrations from the same split "
                             "is not supported: use fixed_demos (one draw among rows that are "
                             "no example)")
        else:   # same split: draw from all of it (not only the first n), excluding the example
            demos = demo_prefixes(full, len(task), shots, seed, exclude_self=True)
            extra = {}
        meta = dict(task.meta, demo_source="same split, self excluded", fixed_demos=fixed_demos,
                    **extra)
        task = Task(task.name, task.template, task.options, task.records, task.labels, meta,
                    task.truncatable, demo_items=demos)
    return task
