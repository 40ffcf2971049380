"""Which data a study reads and which examples it takes (``--task/--n/--stratify``).

- :func:`resolve_data_dir`: ``--data-dir``; else ``$INFODIV_DATA_DIR``; else
  ``$INFODIV_SHARED/data``
  (default ``../shared/data`` beside the repository); else the bundled copy for ``sst2``
  (all 872 dev rows) and ``ag_news`` (the first 2000 test rows) (:mod:`infodiv.data`); else
  Hugging Face ``datasets``.
- :func:`stratified_indices`: N examples in the class proportions of the whole split.
- :func:`load_task`: the task, N rows from a start row or stratified, with its prompt setting's
  demonstrations and relative source paths in its meta.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..runfiles import display_path

__all__ = ["shared_dir", "resolve_data_dir", "stratified_indices", "load_task"]

ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    """``$INFODIV_SHARED`` or the ``shared`` folder beside the repository."""
    return Path(os.environ.get("INFODIV_SHARED", ROOT.parent / "shared"))


def resolve_data_dir(task: str, data_dir=None) -> tuple[Path | None, str]:
    """``(folder or None, label)``: where ``task`` is read from, and how to name that source."""
    from infodiv.data import BUNDLED_TASKS, bundled_data_dir

    if data_dir is not None:
        if Path(data_dir).resolve() == bundled_data_dir():
            return bundled_data_dir(), "bundled (infodiv/data)"
        return Path(data_dir), display_path(data_dir)
    if os.environ.get("INFODIV_DATA_DIR"):
        return Path(os.environ["INFODIV_DATA_DIR"]), "$INFODIV_DATA_DIR"
    shared = shared_dir() / "data"
    if shared.is_dir():
        return shared, "../shared/data"
    if task in BUNDLED_TASKS:
        return bundled_data_dir(), "bundled (infodiv/data)"
    return None, "Hugging Face datasets"


def stratified_indices(labels, n: int) -> np.ndarray:
    """Indices of ``n`` examples in the class proportions of ``labels`` (sorted, file order).

    Class ``c`` with ``N_c`` of the ``N`` rows gets ``floor(n N_c / N)`` examples, and the
    ``n − Σ floor`` left over go to the classes with the largest remainders (Hamilton's
    largest-remainder rule; ties to the smaller class index). Within a class the first rows in
    file order are taken, so the selection is deterministic and needs no seed.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    n = min(int(n), labels.size)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    classes, counts = np.unique(labels, return_counts=True)
    exact = counts * n / labels.size
    quota = np.floor(exact).astype(int)
    order = np.argsort(-(exact - quota), kind="stable")
    quota[order[: n - quota.sum()]] += 1
    idx = [np.flatnonzero(labels == c)[:q] for c, q in zip(classes, quota)]
    return np.sort(np.concatenate(idx))


def load_task(name: str, *, data_dir=None, n: int = 2000, shots: int = 0, seed: int = 0,
              stratify: bool = False, start: int = 0, fixed_demos: bool = False,
              demo_start: int | None = None):
    """The task a run extracts: ``n`` rows from row ``start`` (default the first), or ``n``
    stratified rows; ``shots`` demonstrations, ``fixed_demos`` drawn once among rows
    ``demo_start ..`` (:func:`extraction.tasks.get_task`).

    ``meta["source_files"]`` is made relative to the data folder and ``meta["data_source"]``
    names the folder, so no absolute path reaches a report.
    """
    from extraction.tasks import Task, get_task

    folder, label = resolve_data_dir(name, data_dir)
    if not stratify:
        task = get_task(name, data_dir=folder, n=n, shots=shots, seed=seed, start=start,
                        fixed_demos=fixed_demos, demo_start=demo_start)
    else:
        if start:
            raise ValueError(f"start={start} with stratify: the stratified rows are taken from "
                             "the whole split")
        full = get_task(name, data_dir=folder, n=None, shots=shots, seed=seed,
                        fixed_demos=fixed_demos, demo_start=demo_start)
        idx = stratified_indices(full.labels, n)
        demos = None if full.demonstrations is None else [full.demonstrations[i] for i in idx]
        meta = dict(full.meta, n=len(idx), stratified=True, indices=idx.tolist())
        task = Task(full.name, full.template, full.options, [full.records[i] for i in idx],
                    full.labels[idx], meta, full.truncatable, demos)
    files = task.meta.get("source_files") or []
    if folder is not None:
        rel = []
        for f in files:
            try:
                rel.append(str(Path(f).resolve().relative_to(Path(folder).resolve())))
            except ValueError:
                rel.append(Path(f).name)
        task.meta["source_files"] = rel
    task.meta["data_source"] = label
    return task
