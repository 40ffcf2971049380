"""Local non-uniformity correction (LNC) of the KSG estimator (backend of ``method="lnc"``).

Gao, Ver Steeg & Galstyan (2015), "Efficient estimation of mutual information for strongly
dependent variables", AISTATS, PMLR 38:277-286 (arXiv:1411.2003). KSG assumes the joint density
is uniform inside each sample's k-nearest-neighbour region; under strong dependence the
neighbours lie along a thin, tilted band, the region is mostly empty and the estimate saturates
(about ``log n``). LNC measures the non-uniformity per sample ``i`` from its ``k`` joint
neighbours (max-norm, the same search as KSG), with offsets ``D_i = x_{j} - x_i`` (``k x d``):

* ``V(i) = prod_l 2 max_j |D_i[j, l]|``: the axis-aligned (max-norm) rectangle centred at
  ``x_i`` that bounds the neighbours;
* ``Vbar(i) = prod_l 2 max_j |D_i[j] . v_l|``: the same rectangle in the principal axes
  ``v_1..v_d`` of the neighbourhood (eigenvectors of ``D_i^T D_i / k``, local PCA about
  ``x_i``);

and corrects the KSG estimate (algorithm 1, :func:`estimators.knn.ksg`) where the rectangle
shrinks markedly when aligned with the data:

``I_LNC = I_KSG - (1/n) sum_i log(Vbar(i) / V(i)) * [Vbar(i) / V(i) < alpha_{k,d}]``

(every correction term is negative, so LNC can only raise the estimate). The threshold
``alpha_{k,d}`` is a hyperparameter that the paper tunes per ``k`` and dimension ``d`` so that
the correction does not fire where the density *is* locally uniform. We state that tuning as a
bound on the bias it may add there (:func:`calibrated_alpha`): under a locally uniform density
the ``k`` max-norm neighbours of a point, rescaled by the k-th distance, are distributed as
``k`` independent uniform points in the cube ``[-1, 1]^d`` (the ratio is scale free), so over
:data:`CALIBRATION_DRAWS` such draws ``alpha_{k,d}`` is the largest threshold whose average
correction is at most :data:`UNIFORM_BIAS` = 0.002 nats. Seeded and cached, so every call with
the same ``k, d`` uses the same threshold; pass ``alpha=`` to override it. (A fixed 0.5%
quantile of ``Vbar / V`` instead adds a bias that grows as ``k`` falls, where the ratios have
heavier tails: +0.017 / +0.007 / +0.005 nats at k = 3 / 5 / 8 on independent Gaussian pairs,
n = 1000, against +0.004 / +0.002 / +0.003 with this rule; benchmarks/results/bmi_lnc.json.)

Preprocessing: ``preprocess=None`` means ``"standardize"`` here (:data:`DEFAULT_PREPROCESS`),
not the normal scores of ``method="knn"``: ranks put strongly dependent samples on a lattice of
rank pairs (many exactly on a line, see below) whose neighbourhoods are not thin bands, and the
correction then barely acts (``Y = X + U(0, 0.001)``, n = 1000, k = 8: 5.48 nats with ranks,
6.54 standardised, truth 6.91, KSG 4.69; benchmarks/results/bmi_lnc.json).

The PCA rectangle of ``k`` offsets has zero volume when ``k < d`` (``k`` vectors cannot span
``d`` dimensions; ``log Vbar`` is then about ``-36`` per missing direction, which is what makes
an unchecked implementation diverge by tens of nats), so ``k >= d`` is required
(ValueError). A neighbourhood that spans fewer than ``d`` directions up to rounding (smallest
eigenvalue of ``D_i^T D_i / k`` at most ``d k eps`` times the largest: exact ties or exact
linear relations in the prepared data) or has a zero extent has no measurable ``Vbar`` and is
left uncorrected. This matters for ``preprocess="rank"``: strongly dependent samples get
*identical* normal scores in ``x`` and ``y`` (67% of the points of a rho = 0.999999 pair at
n = 1000), so a fifth of the neighbourhoods are exactly collinear, and without this rule the
estimate is set by rounding (5.35 or 12.5 nats for the same data, truth 6.56, depending on
the order of a floating-point sum).

Covered: MI and TC (multi-information over several variables, the paper's general form) of
continuous variables; conditional TC given labels by stratification and TC given a
continuous ``Z`` through ``TC(U, Z) - sum_i I(U_i; Z)`` (both in :mod:`estimators.api`).
Entropy, MI with a discrete variable and CMI with a continuous conditioner have no LNC form
here and raise ValueError (use ``method="knn"``). Measured accuracy, and why LNC is not the
default: docs/estimators.md.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import knn
from ._neighbors import CHUNK_BYTES, nearest_indices
from .validation import check_k

__all__ = ["UNIFORM_BIAS", "CALIBRATION_DRAWS", "DEFAULT_PREPROCESS", "log_volume_ratio",
           "calibrated_alpha", "check_alpha", "correction_terms", "lnc", "mutual_information",
           "total_correlation", "entropy", "mixed_mutual_information",
           "conditional_mutual_information"]

#: nats that the calibrated threshold may add where the density is locally uniform
UNIFORM_BIAS = 0.002
#: uniform neighbourhoods drawn to calibrate ``alpha_{k,d}``
CALIBRATION_DRAWS = 20_000
#: what ``preprocess=None`` means for LNC (see the module notes)
DEFAULT_PREPROCESS = "standardize"


def log_volume_ratio(offsets: np.ndarray) -> np.ndarray:
    """``log(Vbar / V)`` for a batch of neighbourhoods ``offsets`` of shape ``(m, k, d)``.

    ``offsets[i]`` holds the ``k`` neighbours of centre ``i`` minus the centre.
    ``V = prod_l 2 max_j |offsets[i, j, l]|`` (axis-aligned bounding rectangle centred on the
    point), ``Vbar`` the same in the eigenvectors of ``offsets[i]^T offsets[i] / k`` (one
    batched :func:`numpy.linalg.eigh`); the factors ``2^d`` cancel in the ratio. NaN where the
    neighbourhood spans fewer than ``d`` directions up to rounding (smallest eigenvalue at most
    ``d k eps`` times the largest) or has a zero extent: there ``Vbar`` is rounding noise.
    """
    _, k, d = offsets.shape
    second = np.matmul(offsets.transpose(0, 2, 1), offsets) / k  # batched BLAS, not einsum
    spread, axes = np.linalg.eigh(second)
    rotated = np.matmul(offsets, axes)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_bar = np.log(np.abs(rotated).max(axis=1)).sum(axis=1)
        log_box = np.log(np.abs(offsets).max(axis=1)).sum(axis=1)
        ratio = log_bar - log_box
    # neighbours in fewer than d directions up to rounding (exact ties or linear relations):
    # their smallest principal extent is rounding noise, so the ratio is undefined (NaN)
    flat = spread[:, 0] <= spread[:, -1] * (d * k * np.finfo(np.float64).eps)
    return np.where(flat, np.nan, ratio)


def _chunk_rows(k: int, d: int) -> int:
    return max(1, CHUNK_BYTES // (8 * 3 * k * max(d, 2)))


@lru_cache(maxsize=64)
def _uniform_ratios(k: int, d: int, draws: int) -> np.ndarray:
    """Sorted ``log(Vbar / V)`` of ``draws`` locally uniform neighbourhoods (seeded by k, d)."""
    rng = np.random.default_rng([20150509, k, d])
    rows = _chunk_rows(k, d)
    ratios = np.concatenate([
        log_volume_ratio(rng.uniform(-1.0, 1.0, size=(min(rows, draws - start), k, d)))
        for start in range(0, draws, rows)])
    return np.sort(ratios[np.isfinite(ratios)])


def calibrated_alpha(k: int, d: int, bias: float = UNIFORM_BIAS,
                     draws: int = CALIBRATION_DRAWS) -> float:
    """``alpha_{k,d}``: the largest threshold whose correction adds at most ``bias`` nats on
    locally uniform data.

    ``draws`` neighbourhoods of ``k`` independent points uniform in ``[-1, 1]^d`` (the law of
    the rescaled max-norm neighbours under a locally uniform density, where the correct
    correction is 0), seeded by ``(k, d)``; with ``r`` their sorted ``log(Vbar / V)``,
    ``alpha = exp(r_j)`` for the largest ``j`` with ``-(1/draws) sum_{i<j} r_i <= bias``, so
    that ``E[-log(Vbar/V) [Vbar/V < alpha]] <= bias`` under uniformity.
    """
    r = _uniform_ratios(k, d, draws)
    added = -np.cumsum(r) / draws           # bias added by correcting the j+1 smallest
    negative = int(np.searchsorted(r, 0.0))  # only ratios below 1 are corrections
    j = min(int(np.searchsorted(added, bias, side="right")), negative)
    # every ratio below 1 fits in the budget: the threshold is the largest float below 1
    return float(np.exp(r[j])) if j < negative else float(np.nextafter(1.0, 0.0))


def check_alpha(alpha, k: int, d: int) -> float:
    """Validate ``alpha`` in (0, 1), or ``None`` for :func:`calibrated_alpha`; check ``k >= d``.

    Raises
    ------
    ValueError
        If ``k < d`` (the PCA rectangle of ``k`` neighbours has no volume in ``d`` dimensions)
        or ``alpha`` is not a number strictly between 0 and 1.
    """
    if k < d:
        raise ValueError(f"k={k} is too small for method='lnc' in d={d} joint dimensions: "
                         f"the PCA-aligned rectangle of k neighbours needs k >= d (k offsets "
                         f"span at most k of the {d} directions); pass k >= {d}")
    if alpha is None:
        return calibrated_alpha(k, d)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) \
            or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1) (the threshold on Vbar/V below "
                         f"which the LNC correction applies) or None for the calibrated "
                         f"alpha_(k,d), got {alpha!r}")
    return float(alpha)


def correction_terms(points: np.ndarray, k: int, alpha: float) -> np.ndarray:
    """Per-sample ``log(Vbar(i) / V(i))`` where it is below ``log alpha``, else 0 (nats).

    ``points`` is the prepared joint space ``(n, d)``; neighbourhoods from
    :func:`estimators._neighbors.nearest_indices`, processed in row chunks.
    """
    n, d = points.shape
    neighbours = nearest_indices(points, k)
    terms = np.zeros(n)
    log_alpha = np.log(alpha)
    rows = _chunk_rows(k, d)
    for r0 in range(0, n, rows):
        r1 = min(r0 + rows, n)
        offsets = points[neighbours[r0:r1]] - points[r0:r1, None, :]
        ratio = log_volume_ratio(offsets)
        terms[r0:r1] = np.where(np.isfinite(ratio) & (ratio < log_alpha), ratio, 0.0)
    return terms


def _prepare(arrays, rng: np.random.Generator, preprocess: str | None) -> list:
    return knn.prepare_all(arrays, rng, DEFAULT_PREPROCESS if preprocess is None else preprocess)


def lnc(blocks: list[np.ndarray], k: int, alpha=None) -> float:
    """``I_KSG - <log(Vbar/V) [Vbar/V < alpha]>`` of already prepared blocks (nats)."""
    points = np.hstack(blocks)
    alpha = check_alpha(alpha, k, points.shape[1])
    return float(knn.ksg(blocks, k) - correction_terms(points, k, alpha).mean())


def mutual_information(x: np.ndarray, y: np.ndarray, *, k: int = 3, rng: np.random.Generator,
                       preprocess: str | None = None, alpha=None) -> float:
    """LNC mutual information (Gao, Ver Steeg & Galstyan 2015), in nats.

    ``I_LNC = I_KSG - (1/n) sum_i log(Vbar(i)/V(i)) [Vbar(i)/V(i) < alpha]`` with ``I_KSG``
    the KSG algorithm-1 estimate ``psi(k) + psi(n) - <psi(n_x + 1) + psi(n_y + 1)>`` and
    ``V``, ``Vbar`` the axis-aligned and PCA-aligned rectangles bounding the ``k`` joint
    max-norm neighbours of sample ``i`` (module notes).

    Parameters
    ----------
    x, y : (n, d_x) and (n, d_y) float arrays
        Continuous variables (validated by :mod:`estimators.api`).
    k : int
        Neighbours; at least ``d_x + d_y`` and below ``n``.
    rng : numpy Generator
        Seeds the tie-breaking noise of :func:`estimators.knn.prepare`.
    preprocess : None, "standardize", "rank" or "none"
        Column preparation; ``None`` is :data:`DEFAULT_PREPROCESS` (``"standardize"``).
    alpha : None or float in (0, 1)
        Threshold on ``Vbar / V``; ``None`` is :func:`calibrated_alpha` ``(k, d_x + d_y)``.

    Returns
    -------
    float
        The estimate in nats (never below the KSG estimate on the same prepared data).

    Raises
    ------
    ValueError
        If ``k >= n``, ``k < d_x + d_y`` or ``alpha`` is not in (0, 1).
    """
    k = check_k(k, x.shape[0], context="for the LNC mutual information")
    return lnc(_prepare([x, y], rng, preprocess), k, alpha)


def total_correlation(blocks: list[np.ndarray], *, k: int = 3, rng: np.random.Generator,
                      preprocess: str | None = None, alpha=None) -> float:
    """LNC multi-information ``TC_KSG - <log(Vbar/V) [Vbar/V < alpha]>`` (nats).

    ``TC_KSG = psi(k) + (m - 1) psi(n) - <sum_b psi(n_b + 1)>`` over the ``m`` blocks; the
    correction lives in the joint space of all blocks, so ``k >= sum_b d_b``. Parameters,
    returns and errors as in :func:`mutual_information`.
    """
    k = check_k(k, blocks[0].shape[0], context="for the LNC total correlation")
    return lnc(_prepare(blocks, rng, preprocess), k, alpha)


def _not_covered(what: str):
    raise ValueError(f"method='lnc' corrects KSG mutual information and total correlation of "
                     f"continuous variables only; {what} has no LNC form here: use "
                     f"method='knn'")


def entropy(x, **_):
    """Not covered by LNC here (ValueError)."""
    _not_covered("entropy")


def mixed_mutual_information(x, labels, **_):
    """Not covered by LNC here (ValueError)."""
    _not_covered("mutual information with a discrete variable")


def conditional_mutual_information(x, y, z, **_):
    """Not covered by LNC here (ValueError)."""
    _not_covered("conditional mutual information given a continuous variable")
