"""The resampling engine: one seeded parallel map, bootstrap and permutation replicates.

Every resampling loop of the toolkit runs here (``infodiv``'s random orders, DR tests,
selection and stability bootstraps included):

- :func:`parallel_map` runs ``func(task, rng)`` over a list of tasks with one generator per
  task spawned from ``SeedSequence(random_state)``; the number of tasks fixes the streams, so
  results depend on ``random_state`` only, never on ``n_jobs`` or the joblib backend
  (``joblib.parallel_config``: loky by default, ``"dask"``, ``"threading"``, ...).
- :func:`bootstrap_indices` draws one resample of n rows; :func:`bootstrap_means` gives the
  paired bootstrap of column means (all columns resampled with the same rows per replicate).
- :func:`permutation_test` and :func:`bootstrap_ci` wrap any statistic.

``random_state`` defaults to 0 everywhere (the toolkit's convention: every result is
reproducible unless a caller asks for fresh entropy with ``random_state=None``).

:func:`permutation_test` and :func:`bootstrap_ci` take a statistic ``stat(*arrays) -> float``
(for example ``functools.partial(mutual_information, method="gaussian")``) and the arrays it is
computed on (rows are samples). Replicate ``b`` draws its randomness from the ``b``-th child of
``SeedSequence(random_state).spawn(B)`` and replicates are computed in chunks through joblib, so the
result is bit-identical for every ``n_jobs``. If ``stat`` accepts a ``random_state`` keyword it
is given a seed derived from the replicate's child too (and the observed statistic its own), so a
kNN statistic with tie-breaking jitter is reproducible as well.
"""

from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from tqdm.auto import tqdm

from estimators.validation import check_same_length, check_seed_sequence

__all__ = ["PermutationResult", "BootstrapResult", "permutation_test", "bootstrap_ci",
           "parallel_map", "spawn_generators", "chunk_sizes", "bootstrap_indices",
           "bootstrap_means"]


def spawn_generators(random_state, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``random_state`` (one stream each)."""
    return [np.random.default_rng(s) for s in check_seed_sequence(random_state).spawn(n)]


def chunk_sizes(total: int, chunk: int) -> list[int]:
    """Split ``total`` work items into chunks of at most ``chunk`` (fixed, n_jobs-free)."""
    if total < 0 or chunk < 1:
        raise ValueError(f"need total >= 0 and chunk >= 1, got total={total}, chunk={chunk}")
    sizes = [chunk] * (total // chunk)
    if total % chunk:
        sizes.append(total % chunk)
    return sizes


def parallel_map(func, tasks, *, random_state=0, n_jobs=1, progress=None) -> list:
    """Run ``func(task, rng)`` for every task with a spawned generator each; results in order.

    Parameters
    ----------
    func : callable
        ``func(task, rng) -> result``; must be picklable for process backends.
    tasks : sequence
        One entry per task; the number of tasks fixes the random streams.
    random_state : None, int, SeedSequence or Generator, default 0
        Root of the spawned streams.
    n_jobs : int or None
        joblib ``n_jobs``; 1 runs in-process (no pickling).
    progress : str or None
        tqdm description (None: no bar).
    """
    tasks = list(tasks)
    rngs = spawn_generators(random_state, len(tasks))
    if n_jobs == 1:  # in-process; None or other values go through joblib
        it = zip(tasks, rngs)
        if progress:
            it = tqdm(it, total=len(tasks), desc=progress, leave=False, disable=None)
        return [func(t, r) for t, r in it]
    out = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(func)(t, r) for t, r in zip(tasks, rngs))
    return list(tqdm(out, total=len(tasks), desc=progress, leave=False,
                     disable=None if progress else True))


def bootstrap_indices(n: int, rng: np.random.Generator) -> np.ndarray:
    """One bootstrap resample: ``n`` row indices drawn uniformly with replacement."""
    return rng.integers(0, n, n)


def _bootstrap_means_chunk(task, rng):
    d, n_rep = task
    n = d.shape[0]
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_rep).astype(np.float64)
    return counts @ d / n


def bootstrap_means(d, n_bootstrap: int, *, random_state=0, n_jobs=1,
                    chunk: int = 250) -> np.ndarray:
    """Paired bootstrap of the column means of ``d`` ``[n, T]``: ``[n_bootstrap, T]``.

    Every replicate resamples the n rows once (multinomial counts of a bootstrap resample) for
    all columns, so differences and ratios of columns keep their pairing. Replicates are drawn
    in chunks of ``chunk`` with one spawned stream per chunk (:func:`parallel_map`).
    """
    d = np.asarray(d, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    tasks = [(d, s) for s in chunk_sizes(n_bootstrap, chunk)]
    return np.concatenate(parallel_map(_bootstrap_means_chunk, tasks,
                                       random_state=random_state, n_jobs=n_jobs))


@dataclass(frozen=True)
class PermutationResult:
    """Observed statistic, the permutation null distribution and the p-value.

    ``pvalue = (1 + #{null >= observed}) / (1 + B)`` for ``alternative="greater"`` (Phipson &
    Smyth 2010, never 0); ``"less"`` mirrors it; ``"two-sided"`` is twice the smaller one,
    at most 1.
    """

    statistic: float
    null_distribution: np.ndarray
    pvalue: float
    alternative: str

    @property
    def null_mean(self) -> float:
        return float(np.mean(self.null_distribution))

    @property
    def null_std(self) -> float:
        return float(np.std(self.null_distribution, ddof=1))


@dataclass(frozen=True)
class BootstrapResult:
    """Observed statistic, percentile interval ``[low, high]`` and the bootstrap distribution."""

    statistic: float
    low: float
    high: float
    confidence: float
    distribution: np.ndarray

    @property
    def standard_error(self) -> float:
        return float(np.std(self.distribution, ddof=1))


def _takes_random_state(stat) -> bool:
    try:
        params = inspect.signature(stat).parameters
    except (TypeError, ValueError):
        return False
    return "random_state" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _evaluate(stat, arrays, child, takes_rs: bool) -> float:
    if takes_rs:
        return float(stat(*arrays, random_state=np.random.default_rng(child)))
    return float(stat(*arrays))


def _permuted(arrays, child, which):
    perm = np.random.default_rng(child.spawn(1)[0]).permutation(len(arrays[0]))
    return [a[perm] if i in which else a for i, a in enumerate(arrays)]


def _resampled(arrays, child, _which):
    idx = bootstrap_indices(len(arrays[0]), np.random.default_rng(child.spawn(1)[0]))
    return [a[idx] for a in arrays]


def _chunk(task, _rng):
    stat, arrays, children, make, which, takes_rs = task
    return [_evaluate(stat, make(arrays, c, which), c, takes_rs) for c in children]


def _replicates(stat, arrays, children, make, which, n_jobs, progress, desc) -> np.ndarray:
    """Replicate b uses child b (its own stream), whatever the chunking."""
    n_chunks = min(len(children), 4 * effective_n_jobs(n_jobs))
    chunks = np.array_split(np.arange(len(children)), n_chunks)
    takes_rs = _takes_random_state(stat)
    tasks = [(stat, arrays, [children[i] for i in c], make, which, takes_rs) for c in chunks]
    parts = parallel_map(_chunk, tasks, n_jobs=n_jobs, progress=desc if progress else None)
    return np.asarray([v for part in parts for v in part], dtype=np.float64)


def _check(arrays, n_replicates, name):
    if not arrays:
        raise ValueError("need at least one array for the statistic")
    arrays = [np.asarray(a) for a in arrays]
    check_same_length(**{f"arrays[{i}]": a for i, a in enumerate(arrays)})
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, numbers.Integral) \
            or n_replicates < 1:
        raise ValueError(f"{name} must be a positive integer, got {n_replicates!r}")
    return arrays


def permutation_test(stat, *arrays, n_permutations=999, permute=-1, alternative="greater",
                     random_state=0, n_jobs=None, progress=False) -> PermutationResult:
    """Permutation test of ``stat(*arrays)`` against the null of independence.

    Parameters
    ----------
    stat : callable
        ``stat(*arrays) -> float``.
    *arrays : array-like
        Same number of rows each.
    n_permutations : int
        Number of permutations ``B``.
    permute : int or sequence of int
        Index (or indices) of the arrays whose rows are shuffled (jointly, one permutation per
        replicate); default the last array (e.g. the labels).
    alternative : {"greater", "less", "two-sided"}
    random_state : None, int, SeedSequence or Generator, default 0
    n_jobs : int or None
        joblib workers; the result does not depend on it.
    progress : bool
        Show a tqdm progress bar.
    """
    arrays = _check(arrays, n_permutations, "n_permutations")
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError(f"alternative must be 'greater', 'less' or 'two-sided', "
                         f"got {alternative!r}")
    which = {p % len(arrays) for p in np.atleast_1d(permute)}
    root, *children = check_seed_sequence(random_state).spawn(n_permutations + 1)
    observed = _evaluate(stat, arrays, root, _takes_random_state(stat))
    null = _replicates(stat, arrays, children, _permuted, which, n_jobs, progress,
                       "permutations")
    greater = (1 + np.sum(null >= observed)) / (1 + len(null))
    less = (1 + np.sum(null <= observed)) / (1 + len(null))
    p = {"greater": greater, "less": less,
         "two-sided": min(1.0, 2 * min(greater, less))}[alternative]
    return PermutationResult(observed, null, float(p), alternative)


def bootstrap_ci(stat, *arrays, n_resamples=999, confidence=0.95, random_state=0,
                 n_jobs=None, progress=False) -> BootstrapResult:
    """Percentile bootstrap confidence interval of ``stat(*arrays)``.

    Rows of all arrays are resampled jointly with replacement. Note that resampling duplicates
    rows, which biases kNN estimates upwards (ties are only broken by tiny jitter); prefer the
    Gaussian/copula/binned methods or a subsampling scheme for kNN intervals.

    Parameters
    ----------
    n_resamples : int
        Number of bootstrap resamples.
    confidence : float
        Coverage of the interval, in (0, 1).
    Other parameters as in :func:`permutation_test`.
    """
    arrays = _check(arrays, n_resamples, "n_resamples")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    root, *children = check_seed_sequence(random_state).spawn(n_resamples + 1)
    observed = _evaluate(stat, arrays, root, _takes_random_state(stat))
    dist = _replicates(stat, arrays, children, _resampled, None, n_jobs, progress, "bootstrap")
    low, high = np.quantile(dist, [(1 - confidence) / 2, (1 + confidence) / 2])
    return BootstrapResult(observed, float(low), float(high), float(confidence), dist)
