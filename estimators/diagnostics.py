"""Warnings instead of silent mode switches (called by :mod:`estimators.api`).

Each check counts the problem, says what the estimator will do with the input, and what to pass
instead. All are :class:`EstimatorWarning` (a ``UserWarning``), so they can be filtered as one:
``warnings.simplefilter("ignore", EstimatorWarning)``. Thresholds and the measurements behind
them (docs/estimators.md):

* an integer array is a discrete variable; with more than ``sqrt(n)`` distinct values in a
  column it is probably a continuous measurement stored as integers (two Gaussians with
  correlation 0.9 rounded to integers, 875 distinct values in n = 1000: 6.54 nats by the
  plug-in, 0.85 as floats; truth 0.83);
* a float array of one column with at most ``sqrt(n)`` distinct values is probably a label
  stored as floats: it is treated as a continuous variable full of ties (conditioning on it is
  not stratification);
* kNN methods: more than :data:`DUPLICATE_FRACTION` of the rows repeating another row
  (bootstrap resamples, upsampling) make the copies each other's nearest neighbours (every
  row of a Gaussian pair with correlation 0.6 repeated 5 times: 7.0 nats instead of 0.22);
* a variable repeated in a total correlation makes it infinite for continuous data (the
  estimate then only reflects the tie-breaking noise and the saturation of kNN: 4.7 bits for
  ``[u0, u1, u0]`` where ``[u0, u1]`` gives 0.29, n = 1000);
* kNN methods above :data:`KNN_MAX_DIMS` joint dimensions: the KSG estimates are biased towards
  0 (total correlation of equicorrelated Gaussians, rho = 0.2, n = 2000: -20% at 10 scalars,
  -33% at 15, -66% at 61, 3 seeds; MI of the 25 x 25 sparse BMI Gaussian: -86%).
"""

from __future__ import annotations

import warnings

import numpy as np

from estimators.validation import is_discrete

__all__ = ["EstimatorWarning", "DUPLICATE_FRACTION", "KNN_MAX_DIMS", "check_inputs",
           "check_repeated_variables", "check_knn_dimension", "duplicate_fraction"]

#: fraction of repeated rows above which kNN estimates warn
DUPLICATE_FRACTION = 0.01
#: joint dimension above which kNN estimates warn (measured, see the module docstring)
KNN_MAX_DIMS = 10


class EstimatorWarning(UserWarning):
    """An input that an estimator handles in a way the caller probably did not intend."""


def _warn(message: str) -> None:
    warnings.warn(message, EstimatorWarning, stacklevel=4)


def duplicate_fraction(x: np.ndarray) -> float:
    """Fraction of the rows of ``x`` that repeat an earlier row."""
    rows = np.ascontiguousarray(x).view(np.dtype((np.void, x.dtype.itemsize * x.shape[1])))
    return 1.0 - len(np.unique(rows)) / len(x)


def check_inputs(arrays: dict, *, knn: bool) -> None:
    """Warn about integer-coded continuous data, float-coded labels and (kNN) repeated rows."""
    for name, a in arrays.items():
        n = len(a)
        root = np.sqrt(n)
        if is_discrete(a):
            distinct = max(len(np.unique(a[:, j])) for j in range(a.shape[1]))
            if distinct > root:
                _warn(f"{name}: integer array with {distinct} distinct values in n={n} samples "
                      f"(more than sqrt(n) = {root:.1f}) is treated as DISCRETE (plug-in "
                      f"counts of each value: 6.54 nats for integer-rounded Gaussians whose MI is "
                      f"0.83); if it is a measurement, pass "
                      f"{name}.astype(float) for the continuous estimators")
            continue
        if a.shape[1] == 1:
            distinct = len(np.unique(a[:, 0]))
            if distinct <= root:
                _warn(f"{name}: float array with only {distinct} distinct values in n={n} "
                      f"samples (at most sqrt(n) = {root:.1f}) is treated as CONTINUOUS (kNN "
                      f"on tied values; no stratification); if it holds labels, pass "
                      f"{name}.astype(int)")
                continue
        if knn:
            frac = duplicate_fraction(a)
            if frac > DUPLICATE_FRACTION:
                _warn(f"{name}: {round(frac * n)} of {n} rows ({100 * frac:.1f}%) repeat "
                      f"another row; kNN estimates count the copies as nearest neighbours and "
                      f"are biased upwards (rows of a 0.22-nat Gaussian pair repeated 5 times: "
                      f"7.0 nats); "
                      f"drop the repeats (e.g. bootstrap by resampling an estimate, not rows) "
                      f"or use method='gaussian' / 'copula'")


def check_repeated_variables(blocks: list, name: str = "variables") -> None:
    """Warn when two variables of a total correlation are identical arrays."""
    seen: dict = {}
    for i, b in enumerate(blocks):
        key = (b.shape, b.dtype.str, hash(np.ascontiguousarray(b).tobytes()))
        for j in seen.get(key, []):
            if np.array_equal(blocks[j], b):
                kind = ("its entropy counted twice" if is_discrete(b)
                        else "infinite for continuous data; the estimate only reflects the "
                             "1e-10 tie-breaking noise")
                _warn(f"{name}[{j}] and {name}[{i}] are identical ({b.shape[1]} column(s), "
                      f"n={len(b)}): the total correlation is {kind}; drop the repeat")
        seen.setdefault(key, []).append(i)


def check_knn_dimension(dim: int, n: int, what: str, method: str) -> None:
    """Warn when a kNN estimate works in more than :data:`KNN_MAX_DIMS` joint dimensions."""
    if dim > KNN_MAX_DIMS and method == "lnc":
        _warn(f"method='lnc': {what} over {dim} joint continuous dimensions (n={n}) is "
              f"unreliable above {KNN_MAX_DIMS}: the local-PCA correction overcorrects "
              f"(measured on the BMI sparse Gaussian 25 x 25, truth 1.02 nats: 27.8 nats at "
              f"k=50, 7.8 at k=100); use method='gaussian' or 'copula' there")
    elif dim > KNN_MAX_DIMS:
        _warn(f"method={method!r}: {what} over {dim} joint continuous dimensions (n={n}) is "
              f"strongly biased towards 0 above {KNN_MAX_DIMS} (measured TC of equicorrelated "
              f"Gaussians at n=2000: -20% at 10 dims, -33% at 15, -66% at 61); use "
              f"method='gaussian' or 'copula' for dependence spread over many dimensions")
