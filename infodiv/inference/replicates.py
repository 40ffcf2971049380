"""Running a user pipeline on resampled, label-permuted or unchanged copies of a run.

A *pipeline* is a callable ``pipeline(run, rng) -> dict`` that computes every statistic of
interest from a run (a :class:`~extraction.contributions.Contributions`), refitting whatever
is fitted on the examples (calibration, covariances, probes, cross-fitting splits) and drawing
its inner randomness (random orders) from ``rng`` only. Values are floats or 1-D arrays of a
fixed length. A pipeline may carry ``directions``: a dict from statistic name to the
alternative of its permutation test (``"greater"``, ``"less"`` or ``"two-sided"``).

Replicate r of a job gets its own child of ``SeedSequence(random_state)`` — one seeded stream
per replicate — and replicates are cut into a fixed number of chunks, so results do not depend
on ``n_jobs``. A replicate whose pipeline raises ``ValueError`` (for example a covariance that
a resample made singular) is recorded as NaN and counted, never dropped silently.
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import bootstrap_indices, parallel_map

from .surrogates import with_arrays

__all__ = ["run_replicates", "stack"]

KINDS = ("identity", "bootstrap", "permutation")


def _one(run, pipeline, kind, seed, stratify):
    data_seed, inner_seed = seed.spawn(2)
    data_rng = np.random.default_rng(data_seed)
    if kind == "bootstrap":
        y = np.asarray(run.labels)
        idx = bootstrap_indices(y.size, data_rng, strata=y if stratify else None)
        run = run.take(np.sort(idx))
    elif kind == "permutation":
        run = with_arrays(run, labels=data_rng.permutation(run.labels))
    try:
        return dict(pipeline(run, np.random.default_rng(inner_seed)))
    except ValueError as exc:
        return {"__error__": str(exc)}


def _chunk(task, _rng):
    run, pipeline, kind, seeds, stratify = task
    return [_one(run, pipeline, kind, s, stratify) for s in seeds]


def run_replicates(run, pipeline, kind: str, seeds, *, stratify: bool = True, n_jobs=1,
                   progress=None, n_chunks: int = 16) -> list[dict]:
    """``pipeline`` on one copy of ``run`` per seed (a list of ``SeedSequence``).

    ``kind``: ``"identity"`` (the run itself: inner randomness only), ``"bootstrap"``
    (examples resampled within each class when ``stratify``, in sorted order,
    :func:`estimators.resampling.bootstrap_indices`) or ``"permutation"`` (labels permuted).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    seeds = list(seeds)
    if not seeds:
        return []
    parts = [p for p in np.array_split(np.arange(len(seeds)), min(n_chunks, len(seeds)))
             if p.size]
    tasks = [(run, pipeline, kind, [seeds[i] for i in p], stratify) for p in parts]
    out = parallel_map(_chunk, tasks, random_state=0, n_jobs=n_jobs, progress=progress)
    return [r for part in out for r in part]


def stack(results: list[dict]) -> tuple[dict, list[str]]:
    """Stack replicate dicts into ``{name: array [R, ...]}``; failed replicates become NaN.

    Returns the stacked dict and the error messages of the failed replicates.
    """
    errors = [r["__error__"] for r in results if "__error__" in r]
    good = [r for r in results if "__error__" not in r]
    if not good:
        raise ValueError(f"all {len(results)} replicates failed; first error: {errors[0]}")
    names = list(good[0])
    out = {}
    for name in names:
        shape = np.shape(good[0][name])
        rows = []
        for r in results:
            if "__error__" in r:
                rows.append(np.full(shape, np.nan))
                continue
            v = np.asarray(r[name], dtype=np.float64)
            if v.shape != shape:
                raise ValueError(f"statistic {name!r} changed shape between replicates: "
                                 f"{shape} and {v.shape}")
            rows.append(v)
        out[name] = np.stack(rows)
    return out, errors
