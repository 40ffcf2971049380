"""Warnings of joblib worker processes carried back to the caller (:func:`parallel_map
<estimators.resampling.parallel_map>`): a warning raised in a loky or multiprocessing worker is
printed there, out of reach of the caller's filters and of ``infodiv.collect_warnings``; wrapped
in :class:`CarryWarnings`, each occurrence is returned with the result and raised again in the
calling process by :func:`reraise_warnings`."""

from __future__ import annotations

import warnings

__all__ = ["CarryWarnings", "in_worker_processes", "reraise_warnings"]


def in_worker_processes() -> bool:
    """Whether joblib's active backend runs the tasks in other processes (loky,
    multiprocessing), whose warnings would be printed there."""
    from joblib.parallel import get_active_backend

    backend = type(get_active_backend()[0]).__name__
    return backend in ("LokyBackend", "MultiprocessingBackend")


class CarryWarnings:
    """``func(task, rng)`` in a worker process, returned with every warning it raised there."""

    def __init__(self, func):
        self.func = func

    def __call__(self, task, rng):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = self.func(task, rng)
        return result, [(w.message, w.category, w.filename, w.lineno) for w in caught]


def reraise_warnings(out: list) -> list:
    """The results of :class:`CarryWarnings` calls, their warnings raised in this process
    (where the caller's filters see them)."""
    for _, caught in out:
        for message, category, filename, lineno in caught:
            warnings.warn_explicit(message, category, filename, lineno)
    return [result for result, _ in out]
