"""Input checks of the estimator backends that warn with the numbers (EstimatorWarning).

Each check names the caller's arguments (``x``, ``y``, ``z``, ``variables[i]``), says what the
estimate then means and what to do instead:

* :func:`check_dependence`: a variable that is an exact (or almost exact) linear function of
  the others. The dependence is then infinite for continuous data, and the Gaussian and kNN
  estimates only reflect the tie-breaking jitter (``mutual_information(x, 2 * x)``: 38.9 bits
  Gaussian, 6.3 bits kNN). Measured on the standardised columns: the Cholesky pivot of column
  ``j`` over its variance is ``1 - R^2`` of its regression on the columns before it; below
  :data:`EXACT_PIVOT` (rounding level, far below the 1e-12 jitter variance scale of the backends)
  it is called exact, below :data:`NEAR_PIVOT` near-singular (``R^2 > 1 - 1e-9``: the estimate
  is then set by the last few digits of the data).
* :func:`check_scale`: magnitudes beyond ``2**±510`` (about 1e±154) overflow or underflow the
  squares of a variance in float64; MI and TC are invariant under a per-column scale, so those
  columns are rescaled by a power of two (exact) after the warning; entropies are not, and only
  warn.
* :func:`check_cells`: plug-in (binned or discrete) estimates where the joint variable takes at
  least ``n / 2`` distinct values: almost every cell is seen once, and the estimate is close to
  its maximum ``log n`` whatever the dependence (MI of 2 samples: 1 bit; TC of 5 samples of 10
  variables: 16.7 bits).
"""

from __future__ import annotations

import numpy as np

from estimators.diagnostics import _warn

__all__ = ["EXACT_PIVOT", "NEAR_PIVOT", "check_dependence", "check_scale", "check_cells",
           "check_entropy_input", "check_bin_counts", "check_square_overflow", "MIN_PER_CELL"]

#: relative Cholesky pivot (1 - R^2) below which a column is an exact linear function
EXACT_PIVOT = 1e-13
#: relative pivot below which the covariance is called near-singular
NEAR_PIVOT = 1e-9
_BIG, _SMALL = 2.0 ** 510, 2.0 ** -510


def _standardised(arrays: list[np.ndarray]) -> np.ndarray:
    z = np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays], axis=1)
    z = z - z.mean(axis=0)
    std = z.std(axis=0)
    keep = std > 0
    return z[:, keep] / std[keep], np.flatnonzero(keep)


def check_dependence(arrays: list[np.ndarray], names: list[str], what: str, *,
                     limit: str = "infinite", exact_note: str = "the estimate only reflects "
                                                                "the jitter") -> str | None:
    """Warn when a column of ``arrays`` is (almost) a linear function of the columns before it.

    Parameters
    ----------
    arrays : list of (n, d_i) float arrays
        The variables of one estimate, in order.
    names : list of str
        The caller's argument name of each array (``"x"``, ``"variables[2]"``).
    what : str
        The estimate, e.g. ``"mutual information"``.
    limit : str
        What the estimate's true value is under exact dependence (``"infinite"``; a
        differential entropy: ``"−∞"``).
    exact_note : str
        What the caller returns under exact dependence (default: the estimate, which then
        only reflects the jitter).

    Returns
    -------
    ``"exact"``, ``"near"`` (after warning) or None (no dependence found).
    """
    n = len(arrays[0])
    z, cols = _standardised(arrays)
    if z.shape[1] < 2 or n <= z.shape[1]:
        return None
    cov = z.T @ z / n
    owner = np.repeat(np.arange(len(arrays)), [a.shape[1] for a in arrays])[cols]
    try:
        chol = np.linalg.cholesky(cov)
        pivots = np.diag(chol) ** 2 / np.diag(cov)
    except np.linalg.LinAlgError:
        pivots = None
    if pivots is None or pivots.min() < EXACT_PIVOT:
        j = int(np.argmin(pivots)) if pivots is not None else z.shape[1] - 1
        kind, value = "exact", f"{limit} for continuous data; {exact_note}"
    elif pivots.min() < NEAR_PIVOT:
        j = int(np.argmin(pivots))
        kind, value = "near", "set by the last digits of the data (near-singular covariance)"
    else:
        return None
    who = names[owner[j]]
    before = [names[i] for i in dict.fromkeys(owner[:j])]
    others = " and ".join(before) if before else "its own other columns"
    if len(arrays) == 1:    # one variable: say which of its columns
        who, others = f"{who}: column {int(cols[j])}", "the columns before it"
    r2 = "1" if pivots is None else f"1 - {pivots[j]:.2g}"
    _warn(f"{who} is {'an exact' if kind == 'exact' else 'almost a'} linear function of "
          f"{others} (R^2 = {r2}, n={n}): the {what} is {value}; drop the redundant variable "
          f"or its redundant columns")
    return kind


def check_entropy_input(x: np.ndarray, name: str = "x") -> bool:
    """Warn where a continuous variable's differential entropy is −∞ and say so.

    A constant column (no spread; the estimators would only measure their tie-breaking
    jitter: −31 bits for 500 zeros with kNN) or a column that is an exact linear function of
    the others (Cholesky pivot ``1 - R^2`` below :data:`EXACT_PIVOT`) puts the distribution on
    a lower-dimensional set, whose differential entropy is exactly −∞: return True, and the
    caller returns ``-inf``. A near linear function (pivot below :data:`NEAR_PIVOT`) only
    warns (:func:`check_dependence`) and returns False.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return False
    spread = np.ptp(x, axis=0)
    if (spread == 0).any():
        j = int(np.flatnonzero(spread == 0)[0])
        _warn(f"{name}: column {j} is constant ({x[0, j]:.6g} in all n={len(x)} samples): a "
              f"continuous variable with no spread has differential entropy −∞, returned as "
              f"-inf; drop the column, or pass integer data for a discrete entropy")
        return True
    return check_dependence([x], [name], "differential entropy", limit="−∞",
                            exact_note="returned as -inf") == "exact"


#: mean samples per occupied cell below which a binned entropy warns
MIN_PER_CELL = 10


def check_bin_counts(codes: np.ndarray, name: str = "x") -> None:
    """Warn when a histogram (binned) entropy has fewer than :data:`MIN_PER_CELL` samples per
    occupied cell on average.

    The plug-in entropy of ``K`` occupied cells from ``n`` samples is biased downwards by about
    ``(K - 1) / (2 n)`` nats (Miller 1955), and the empty neighbours of isolated samples
    shrink the histogram's support further: N(5, 3) at n = 50 reads 3.42 bits with 8 bins,
    −0.68 with 1000 (truth 3.63).
    """
    n = len(codes)
    if n == 0:
        return
    k = len(np.unique(codes, axis=0))
    if n < MIN_PER_CELL * k:
        _warn(f"{name}: {n} samples fill {k} bins ({n / k:.1f} per occupied bin, fewer than "
              f"{MIN_PER_CELL}): the binned entropy is biased downwards by about "
              f"(K - 1)/(2n) = {(k - 1) / (2 * n) / np.log(2):.2g} bits; use fewer bins "
              f"(bins=...), more samples, or method='knn'")


def check_square_overflow(a: np.ndarray, name: str, what: str) -> int:
    """Warn when ``a`` holds magnitudes whose squares overflow float64 (beyond ``2**510``,
    about 1e154) and return the exponent ``k`` (0 when they do not) by which the caller
    rescales: a squared-loss term is homogeneous of degree 2 in (members, target), so it is
    computed exactly on ``a * 2**-k`` (and the target times ``2**-k``) and multiplied by
    ``2**(2k)``; only a term beyond float64's range (1.8e308) is then ``inf``."""
    big = float(np.abs(a).max()) if a.size else 0.0
    if not big > _BIG:
        return 0
    k = int(np.frexp(big)[1])
    _warn(f"{name}: magnitude {big:.3g} is beyond about 1e154, where float64 squares overflow: "
          f"the squared-loss {what} is computed on {name}·2^-{k} (exact) and scaled back by "
          f"2^{2 * k}, so a term beyond float64's 1.8e308 is inf; rescale {name} (the terms "
          f"scale with its square) or use loss='cross_entropy'")
    return k


def check_scale(arrays: list[np.ndarray], names: list[str], *, rescale: bool = True
                ) -> list[np.ndarray]:
    """Warn about magnitudes whose squares overflow or underflow float64; return the arrays,
    the offending columns multiplied by a power of two when ``rescale`` (for scale-invariant
    estimates: MI, TC)."""
    out = []
    for a, name in zip(arrays, names):
        a = np.asarray(a, dtype=np.float64)
        big = np.abs(a).max(axis=0) if a.size else np.zeros(a.shape[1])
        bad = (big > _BIG) | ((big < _SMALL) & (big > 0))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            action = ("it is rescaled by a power of two first (the estimate is scale-invariant)"
                      if rescale else "the estimate is wrong (variances overflow or vanish); "
                                      f"rescale {name} first, e.g. {name} / abs({name}).max()")
            _warn(f"{name}: column {j} has magnitude {big[j]:.3g}, beyond about 1e±154 where "
                  f"float64 squares overflow or underflow; {action}")
            if rescale:
                exp = np.where(bad, np.frexp(np.where(big > 0, big, 1.0))[1], 0)
                a = np.ldexp(a, -exp.astype(np.int64))
        out.append(a)
    return out


def check_cells(codes: np.ndarray, n_variables: int, what: str, names: str) -> None:
    """Warn when the joint of a plug-in estimate takes at least n/2 distinct values.

    ``codes`` is the joint code per sample (one integer per row).
    """
    n = len(codes)
    distinct = len(np.unique(codes))
    if n and distinct * 2 >= n and distinct > 1:
        _warn(f"{names}: the joint of the {n_variables} variables takes {distinct} distinct "
              f"values in n={n} samples; every cell is seen about once, so the plug-in {what} "
              f"is near its maximum log(n) = {np.log2(n):.2g} bits whatever the dependence; "
              f"use fewer bins or variables, or more samples")
