"""Seeded, backend-agnostic parallel map used by curves, bootstraps and subset sweeps.

Work is cut into a fixed number of tasks that does not depend on ``n_jobs``; task ``t`` gets
its own generator from ``SeedSequence(random_state).spawn(n_tasks)[t]``. Results therefore
depend on ``random_state`` only, never on ``n_jobs`` or on the joblib backend. The backend is
whatever ``joblib.parallel_config`` selects (loky by default; ``"dask"`` inside a
``dask.distributed.Client`` context; ``"threading"``, ...).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from estimators.validation import check_seed_sequence

__all__ = ["spawn_generators", "chunk_sizes", "parallel_map"]


def spawn_generators(random_state, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``random_state``."""
    return [np.random.default_rng(s) for s in check_seed_sequence(random_state).spawn(n)]


def chunk_sizes(total: int, chunk: int) -> list[int]:
    """Split ``total`` work items into chunks of at most ``chunk`` (fixed, n_jobs-free)."""
    if total < 0 or chunk < 1:
        raise ValueError(f"need total >= 0 and chunk >= 1, got total={total}, chunk={chunk}")
    sizes = [chunk] * (total // chunk)
    if total % chunk:
        sizes.append(total % chunk)
    return sizes


def parallel_map(func, tasks, *, random_state=None, n_jobs=1, progress=None):
    """Run ``func(task, rng)`` for every task with a spawned generator each.

    Parameters
    ----------
    func : callable
        ``func(task, rng) -> result``; must be picklable for process backends.
    tasks : sequence
        One entry per task; the number of tasks fixes the random streams.
    random_state : None, int, SeedSequence or Generator
        Root of the spawned streams.
    n_jobs : int
        joblib ``n_jobs``; 1 runs in-process (no pickling).
    progress : str or None
        tqdm description for the sequential path (process backends report nothing).

    Returns
    -------
    list
        Results in task order.
    """
    tasks = list(tasks)
    rngs = spawn_generators(random_state, len(tasks))
    if n_jobs == 1:  # in-process; None or other values go through joblib
        from tqdm.auto import tqdm

        it = zip(tasks, rngs)
        if progress:
            it = tqdm(it, total=len(tasks), desc=progress, leave=False, disable=None)
        return [func(t, r) for t, r in it]
    return Parallel(n_jobs=n_jobs)(delayed(func)(t, r) for t, r in zip(tasks, rngs))
