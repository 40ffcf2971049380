"""The resampling engine: one seeded parallel map, bootstrap and permutation replicates.

Every resampling loop of the toolkit runs here (``infodiv``'s random orders, DR tests,
selection and stability bootstraps included):

- :func:`parallel_map` runs ``func(task, rng)`` over a list of tasks with one generator per
  task spawned from ``SeedSequence(random_state)``; the number of tasks fixes the streams, so
  results depend on ``random_state`` only, never on ``n_jobs`` or the joblib backend
  (``joblib.parallel_config``: loky by default, ``"dask"``, ``"threading"``, ...). Warnings
  raised in worker processes are raised again in the calling process, so its filters (and
  ``infodiv.collect_warnings``) see them.
- :func:`bootstrap_indices` draws one resample of n rows (optionally within strata, e.g.
  classes); :func:`bootstrap_means` gives the paired bootstrap of column means (all columns
  resampled with the same rows per replicate).
- :func:`percentile_interval` is the percentile interval of replicates, and
  :func:`bootstrap_interval` that interval (or its bias-centred shift) extended by
  :func:`contain_estimate` to contain the estimate, with the gap it had to close.
- :func:`permutation_test` and :func:`bootstrap_ci` wrap any statistic; one
  :class:`BootstrapResult` holds a statistic's bootstrap.

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
import warnings
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from tqdm.auto import tqdm

from estimators._workerwarnings import CarryWarnings, in_worker_processes, reraise_warnings
from estimators.validation import check_same_length, check_seed_sequence

__all__ = ["PermutationResult", "BootstrapResult", "permutation_test", "bootstrap_ci",
           "parallel_map", "spawn_generators", "chunk_sizes", "bootstrap_indices",
           "bootstrap_means", "percentile_interval", "contain_estimate", "bootstrap_interval",
           "BOOTSTRAP_INTERVALS"]

#: the bootstrap intervals :func:`bootstrap_interval` forms
BOOTSTRAP_INTERVALS = ("percentile", "centred")


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
    carry = in_worker_processes()
    out = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(CarryWarnings(func) if carry else func)(t, r) for t, r in zip(tasks, rngs))
    out = list(tqdm(out, total=len(tasks), desc=progress, leave=False,
                    disable=None if progress else True))
    return reraise_warnings(out) if carry else out


def bootstrap_indices(n: int, rng: np.random.Generator, *, strata=None) -> np.ndarray:
    """Row indices of one bootstrap resample of ``n`` rows, drawn uniformly with replacement.

    Parameters
    ----------
    n : int
        Number of rows.
    rng : numpy.random.Generator
    strata : array-like of length ``n`` or None
        The stratum of every row (e.g. its class). Given, each stratum's rows are drawn from
        that stratum only (``rng.integers(0, n_s, n_s)`` per stratum, in sorted order of the
        stratum values), so every resample keeps the strata's counts and an estimator that
        needs every class stays defined; the indices come back sorted. Without strata the
        ``n`` indices come back in the order drawn.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be the number of rows (an int), got {type(n).__name__}; a "
                        "class-stratified resample of labels y is bootstrap_indices(len(y), rng, "
                        "strata=y)")
    if strata is None:
        return rng.integers(0, n, n)
    strata = np.asarray(strata)
    if strata.shape != (n,):
        raise ValueError(f"strata must hold one value per row ({n}), got shape {strata.shape}")
    parts = [rows[rng.integers(0, rows.size, rows.size)]
             for rows in (np.flatnonzero(strata == s) for s in np.unique(strata))]
    return np.sort(np.concatenate(parts))


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
    """A statistic's bootstrap: the estimate, its interval ``[low, high]`` at ``confidence`` and
    the replicates (``distribution``, one row per replicate; failed replicates NaN).

    The statistic may be a float or an array (one interval per entry, over axis 0 of the
    replicates).
    """

    statistic: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    confidence: float
    distribution: np.ndarray = field(repr=False)

    @property
    def standard_error(self) -> float | np.ndarray:
        """Standard deviation of the finite replicates over axis 0 (``ddof=1``)."""
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN entries stay NaN
            se = np.nanstd(np.asarray(self.distribution, dtype=np.float64), axis=0, ddof=1)
        return float(se) if np.ndim(se) == 0 else se


def percentile_interval(replicates, confidence: float = 0.95):
    """``(low, high)``: the percentile interval ``[q_{(1−c)/2}, q_{(1+c)/2}]`` of ``replicates``
    over axis 0 (Efron & Tibshirani 1993, ch. 13), ignoring failed (NaN) replicates."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(np.asarray(replicates, dtype=np.float64), q, axis=0)
    return lo, hi


def contain_estimate(estimate, low, high, *, ulps: float = 0):
    """``(low, high, gap)``: the interval ``[low, high]`` extended element-wise to contain
    ``estimate``, and ``gap``, the largest distance by which an estimate lay outside it.

    Why: an example bootstrap refits everything on each resample, and a resample repeats about
    37% of its rows, so a refitted estimator (a probe, a calibration, a Gaussian information
    term) sees fewer distinct examples than the full-sample fit; the replicates' bulk can then
    sit beside the point estimate instead of around it. A reported interval must contain its
    estimate, and widening can only make a detection harder (the interval reaches further
    towards 0), never easier. The gap is returned so that a caller flags the widening instead
    of hiding it.

    ``gap = max(0, low − estimate, estimate − high)``; a gap within ``ulps`` units in the last
    place of the estimate (float rounding between two computations of the same mean) counts
    as 0. A NaN estimate or bound widens nothing (``fmin``/``fmax``). Scalars in, floats out.
    """
    est = np.asarray(estimate, dtype=np.float64)
    lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        gap = np.atleast_1d(np.nan_to_num(np.maximum(lo - est, est - hi), nan=0.0))
        gap[gap <= ulps * np.spacing(np.abs(np.broadcast_to(est, gap.shape)))] = 0.0
    lo, hi = np.fmin(lo, est), np.fmax(hi, est)
    if lo.ndim == 0:
        return float(lo), float(hi), float(gap.max(initial=0.0))
    return lo, hi, float(gap.max(initial=0.0))


def bootstrap_interval(estimate, replicates, method: str = "percentile",
                       confidence: float = 0.95, *, ulps: float = 0):
    """``(low, high, gap)``: the bootstrap interval of ``estimate`` from its ``replicates``
    (over axis 0), extended to contain the estimate (:func:`contain_estimate`, whose ``gap`` and
    ``ulps`` it returns and takes).

    ``method="percentile"``: :func:`percentile_interval`; ``"centred"``: that interval shifted
    by the bootstrap bias, ``θ̂ + (q_lo − mean_b, q_hi − mean_b)`` (Efron & Tibshirani 1993,
    ch. 10), for estimators that duplicated rows bias. Non-finite replicates are failed ones
    and ignored; an entry without a finite replicate, or with a non-finite estimate, gets a
    NaN interval (gap 0).
    """
    if method not in BOOTSTRAP_INTERVALS:
        raise ValueError(f"method must be one of {BOOTSTRAP_INTERVALS}, got {method!r}")
    est = np.asarray(estimate, dtype=np.float64)
    reps = np.asarray(replicates, dtype=np.float64)
    cols = reps.reshape(reps.shape[0], -1).T
    lo, hi = np.full(len(cols), np.nan), np.full(len(cols), np.nan)
    flat = np.broadcast_to(est, reps.shape[1:]).ravel()
    for j, col in enumerate(cols):
        col = col[np.isfinite(col)]
        if not col.size or not np.isfinite(flat[j]):
            continue
        lo[j], hi[j] = percentile_interval(col, confidence)
        if method == "centred":
            lo[j], hi[j] = flat[j] + lo[j] - col.mean(), flat[j] + hi[j] - col.mean()
    shape = reps.shape[1:]
    lo, hi, gap = contain_estimate(est, lo.reshape(shape), hi.reshape(shape), ulps=ulps)
    missing = ~np.isfinite(np.broadcast_to(est, shape)) | (np.isfinite(reps).sum(axis=0) == 0)
    if not shape:
        return (float("nan"), float("nan"), gap) if missing else (lo, hi, gap)
    return np.where(missing, np.nan, lo), np.where(missing, np.nan, hi), gap


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
    low, high = percentile_interval(dist, confidence)
    return BootstrapResult(observed, float(low), float(high), float(confidence), dist)
