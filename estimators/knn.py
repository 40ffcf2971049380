"""k-nearest-neighbour estimators of entropy, mutual information and total correlation (nats).

Backend of ``method="knn"`` in :mod:`estimators.api`, which validates inputs (float64 ``(n, d)``
arrays, int64 1-D labels, a :class:`numpy.random.Generator`), stratifies on discrete conditioning
variables and converts units. Every function here returns nats and works in the max-norm
(``||v||_inf = max_j |v_j|``), the norm of Kraskov, Stögbauer & Grassberger (2004); a vector
variable's norm is the max over its dimensions, so the joint norm over several variables is the
max of their norms. ``psi`` is the digamma function, ``<.>`` the average over samples, ``eps_i``
the joint distance from sample ``i`` to its ``k``-th nearest other sample, and ``n_V(i)`` the
number of other samples strictly closer than ``eps_i`` in the subspace of variable(s) ``V``.

* entropy (Kozachenko & Leonenko 1987; KSG eq. 20):
  ``H = psi(n) - psi(k) + d <log(2 eps_i)>``
* mutual information, KSG algorithm 1 (KSG eq. 8):
  ``I(X;Y) = psi(k) + psi(n) - <psi(n_X + 1) + psi(n_Y + 1)>``
* total correlation / multi-information of m vector variables (KSG eq. 29, with blocks):
  ``TC = psi(k) + (m - 1) psi(n) - <sum_b psi(n_b + 1)>`` from ONE joint neighbour search, not a
  sum of separately estimated entropies (whose biases do not cancel)
* conditional TC given labels: ``sum_c p(c) TC(U | Y = c)``, each class searched within itself
  with the same ``k``; the per-block distance matrices are shared with the unconditional TC
* conditional MI (Frenzel & Pompe 2007):
  ``I(X;Y|Z) = psi(k) - <psi(n_XZ + 1) + psi(n_YZ + 1) - psi(n_Z + 1)>``
* mixed continuous/discrete MI (Ross 2014):
  ``I(X;Y) = psi(n) - <psi(N_y(i))> + <psi(k_i)> - <psi(m_i)>``, with ``k_i = min(k, N_y - 1)``
  neighbours searched within the class of ``i`` (``N_y`` samples) and ``m_i`` the number of
  other samples of any class within that distance (inclusive, as in Ross 2014)

Preprocessing (``preprocess=``, :func:`prepare`): ``"rank"`` (the default of MI, CMI and TC of
continuous variables and of TC given labels; for MI / CMI with a discrete argument, and for
entropy, the default is ``"standardize"``: ranks close the gaps between classes on a
coordinate) replaces each column
by its normal scores ``Phi^{-1}(rank / (n + 1))``, ties in a seeded random order;
``"standardize"`` centres and scales each column and adds seeded ``1e-10`` noise; ``"none"``
adds that noise only. The max-norm is not invariant to per-column maps, so the three
give different finite-sample estimates of the same (invariant) MI / CMI / TC; entropy is not
invariant under ranks and uses ``"standardize"`` (adding back ``sum(log std)``) or ``"none"``.
Measured (docs/estimators.md): normal scores cut the RMSE on the BMI Student-t 2 x 2 (df 1)
task from 0.170 to 0.035 nats at n = 5000 and change the other BMI tasks by less than 0.02;
the small-n CMI bias at n = 10 is -0.023 bits (rank), -0.103 (standardize), -0.165 (none) on a
Gaussian with scales 1, 2, 3, but -0.268, -0.339, -0.243 when the conditioner is an
independent U(0, 1); on ennemi's analytic cases (written for raw data) 59, 61 and 68 of 68 pass.
The same ``rng`` gives bit-identical results. For conditional TC the columns are prepared once
on all samples, not per class.

Negative estimates are returned as they are (they signal bias or independence, never clamped).

Accuracy, measured (tests/estimators/test_knn.py, benchmarks/bench_knn.py ->
benchmarks/results/knn.json; estimates of more than :data:`estimators.diagnostics.KNN_MAX_DIMS` =
10 joint dimensions warn): close to exact on low-dimensional Gaussians and on the label/XOR models
at n = 4000 (errors
within 4 s.e. plus at most 5%), but KSG is biased DOWNWARD under dependence spread over many
dimensions, because the joint k-th-neighbour ball becomes so large that the marginal counts
approach n. On 61 scalar Gaussian variables with pairwise correlation 0.2 at n = 2000 (exact TC
7.81 bits) the knn TC is 2.68 bits (sd 0.15 over 10 seeds): an error of -5.13 bits (-66%). On
61 variables x 3 dims with a binary label (exact TC 2.83 bits, conditional TC 0) it gives 0.19
bits and -0.01 bits. Use ``method="gaussian"`` or ``"copula"`` for TC over tens of variables;
knn TC is not a usable estimate there.

References: Kozachenko & Leonenko, Probl. Inf. Transm. 23 (1987); Kraskov, Stögbauer &
Grassberger, Phys. Rev. E 69, 066138 (2004); Frenzel & Pompe, Phys. Rev. Lett. 99, 204101
(2007); Ross, PLoS ONE 9, e87357 (2014).
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from ._checks import check_dependence, check_scale
from ._neighbors import count_within, kth_neighbor_distance, neighbor_counts
from .copula import normal_scores
from .validation import check_k, jitter, log_scale

__all__ = [
    "PREPROCESS",
    "prepare",
    "prepare_all",
    "entropy",
    "mutual_information",
    "mixed_mutual_information",
    "conditional_mutual_information",
    "conditional_mixed_mutual_information",
    "total_correlation",
    "conditional_total_correlation",
    "total_correlation_with_conditional",
]


PREPROCESS = ("standardize", "rank", "none")
#: what ``preprocess=None`` means for MI, CMI and TC of continuous variables
DEFAULT_PREPROCESS = "rank"
#: ... and for MI / CMI with a discrete argument (mixed MI, conditional mixed MI) and for
#: entropy: ranks close the gaps between classes that sit apart on a coordinate (ennemi's
#: disjoint-uniform cases: 0.664 vs log 2 = 0.693 nats). Conditional TC given labels keeps
#: DEFAULT_PREPROCESS, so that it shares one preparation with TC (one pass, same blocks).
LABELS_PREPROCESS = "standardize"


def prepare(x: np.ndarray, rng: np.random.Generator, preprocess: str | None = None):
    """The columns the neighbour searches see, with seeded tie breaking.

    ``"standardize"``: centred, divided by the standard deviation, plus ``1e-10`` standard
    normal noise (:func:`estimators.validation.jitter`). ``"rank"``: marginal normal scores
    ``Phi^{-1}(rank / (n + 1))`` per column (:func:`estimators.copula.normal_scores`, ties in a
    seeded random order, so no two values of a column are equal); a monotone map of each
    coordinate, which leaves MI, CMI and TC unchanged and makes heavy tails and skew harmless to
    the max-norm balls. ``"none"``: the data as given plus noise of ``1e-10`` times each column's
    standard deviation (NPEET's and ennemi's convention without their rescaling). ``None``:
    :data:`DEFAULT_PREPROCESS`.
    """
    preprocess = DEFAULT_PREPROCESS if preprocess is None else preprocess
    if preprocess == "standardize":
        return jitter(x, rng)
    if preprocess == "rank":
        return normal_scores(x, rng)
    if preprocess == "none":
        std = x.std(axis=0)
        return x + 1e-10 * np.where(std > 0, std, 1.0) * rng.standard_normal(x.shape)
    raise ValueError(f"preprocess must be one of {PREPROCESS}, got {preprocess!r}")


def prepare_all(arrays, rng: np.random.Generator, preprocess: str | None = None) -> list:
    """:func:`prepare` of each array in turn; an array equal to an earlier one gets that one's
    prepared copy (same noise, same tie order), so ``I(X;Y|Y)`` is exactly 0 and a repeated
    variable stays an exact copy instead of two differently jittered ones."""
    out: list = []
    for i, a in enumerate(arrays):
        same = next((j for j in range(i) if arrays[j].shape == a.shape
                     and np.array_equal(arrays[j], a)), None)
        out.append(prepare(a, rng, preprocess) if same is None else out[same])
    return out


def entropy(x: np.ndarray, *, k: int = 3, rng: np.random.Generator,
            preprocess: str | None = None) -> float:
    """Kozachenko–Leonenko differential entropy ``psi(n) - psi(k) + d <log(2 eps_i)>`` (nats).

    ``x`` is ``(n, d)``. With ``preprocess="standardize"`` (also what ``None`` means here) the
    estimate is computed on standardised, jittered columns and ``sum(log std)`` is added back,
    so it is in the units of ``x`` (a constant column contributes the entropy of the 1e-10
    jitter, a large negative number, not ``-inf``); with ``"none"`` on the columns as given.
    The max-norm ball is not invariant to per-column scaling, so the two differ at finite n.
    ``"rank"`` is refused: differential entropy is not invariant under the rank transform.

    Raises
    ------
    ValueError
        If ``k >= n`` or ``preprocess="rank"``.
    """
    n, d = x.shape
    k = check_k(k, n, context="for the Kozachenko-Leonenko entropy")
    preprocess = LABELS_PREPROCESS if preprocess is None else preprocess
    if preprocess == "rank":
        raise ValueError("preprocess='rank' is not available for entropy (differential entropy "
                         "changes under the rank transform); use 'standardize' or 'none'")
    z = prepare(x, rng, preprocess)
    eps = kth_neighbor_distance(z, k)
    offset = log_scale(x) if preprocess == "standardize" else 0.0
    return float(digamma(n) - digamma(k) + d * np.mean(np.log(2.0 * eps)) + offset)


def _ksg(k: int, n: int, counts: np.ndarray) -> float:
    """``psi(k) + (m - 1) psi(n) - <sum_b psi(n_b + 1)>`` for counts of shape ``(n_i, m)``."""
    m = counts.shape[1]
    return float(digamma(k) + (m - 1) * digamma(n) - digamma(counts + 1).sum(axis=1).mean())


def _multi_information(blocks: list[np.ndarray], k: int) -> float:
    """KSG multi-information of already jittered blocks (one joint search, per-block counts)."""
    _, counts, _, _ = neighbor_counts(blocks, [(b,) for b in range(len(blocks))], k)
    return _ksg(k, len(blocks[0]), counts)


def mutual_information(x: np.ndarray, y: np.ndarray, *, k: int = 3,
                       rng: np.random.Generator, preprocess: str | None = None) -> float:
    """KSG (algorithm 1) mutual information ``psi(k) + psi(n) - <psi(n_x+1) + psi(n_y+1)>``.

    ``x`` is ``(n, d_x)``, ``y`` is ``(n, d_y)``; max-norm, strict counting, nats. Biased towards
    0 when the dependence is strong (the estimate saturates near ``log n``).
    """
    n = x.shape[0]
    k = check_k(k, n, context="for the KSG mutual information")
    x, y = check_scale([x, y], ["x", "y"])
    check_dependence([x, y], ["x", "y"], "mutual information")
    return _multi_information(prepare_all([x, y], rng, preprocess), k)


def total_correlation(blocks: list[np.ndarray], *, k: int = 3,
                      rng: np.random.Generator, preprocess: str | None = None) -> float:
    """KSG multi-information ``TC = psi(k) + (m-1) psi(n) - <sum_b psi(n_b + 1)>`` (nats).

    ``blocks`` is a list of ``m`` arrays ``(n, d_b)``, each one (vector) variable. One neighbour
    search in the joint max-norm space gives ``eps_i``; ``n_b(i)`` counts the other samples
    strictly within ``eps_i`` in block ``b``'s own max-norm. KSG eq. 29 generalised to vector
    variables. Strongly biased downward for many dependent variables (see the module notes).
    """
    n = blocks[0].shape[0]
    k = check_k(k, n, context="for the KSG total correlation")
    names = [f"variables[{i}]" for i in range(len(blocks))]
    blocks = check_scale(blocks, names)
    check_dependence(blocks, names, "total correlation")
    return _multi_information(prepare_all(blocks, rng, preprocess), k)


def _class_layout(labels: np.ndarray, k: int):
    """Stable sort order by class and the contiguous ``(start, stop, k)`` ranges of classes."""
    classes, inverse, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    for c, size in zip(classes, sizes):
        check_k(k, int(size), context=f"within class {c} of labels ({size} samples; a "
                f"label-conditioned kNN estimate needs at least k+1 = {k + 1} per class)")
    order = np.argsort(inverse, kind="stable")
    stops = np.cumsum(sizes)
    groups = [(int(stop - size), int(stop), k) for size, stop in zip(sizes, stops)]
    return order, groups


def total_correlation_with_conditional(blocks: list[np.ndarray], labels: np.ndarray, *,
                                       k: int = 3, rng: np.random.Generator,
                                       include_marginal: bool = True,
                                       preprocess: str | None = None):
    """``(TC(U), TC(U | Y))`` from shared per-block distance matrices (nats).

    ``TC(U | Y) = sum_c p(c) [psi(k) + (m-1) psi(n_c) - <sum_b psi(n_b^c + 1)>_{i in c}]`` where
    the joint search and the counts of class ``c`` run within that class (same ``k``). Both
    quantities come from one pass over the per-block distances, which is what makes TC and
    conditional TC over 61 variables of 3 dimensions at n = 2000 take about a second. The jitter
    matches :func:`total_correlation` with the same ``rng``, so the first value equals it (up to
    the summation order of the average). With ``include_marginal=False`` the first value is
    ``None`` and only the within-class searches are done.

    Raises
    ------
    ValueError
        If ``k >= n`` or a class has ``k`` samples or fewer.
    """
    n, m = blocks[0].shape[0], len(blocks)
    k = check_k(k, n, context="for the KSG total correlation")
    order, groups = _class_layout(labels, k)
    sorted_blocks = [b[order] for b in prepare_all(blocks, rng, preprocess)]
    _, counts, _, counts_g = neighbor_counts(sorted_blocks, [(b,) for b in range(m)], k,
                                             groups, include_all=include_marginal)
    tc = _ksg(k, n, counts) if include_marginal else None
    ctc = sum((stop - start) / n * _ksg(kg, stop - start, counts_g[start:stop])
              for start, stop, kg in groups)
    return tc, float(ctc)


def conditional_total_correlation(blocks: list[np.ndarray], labels: np.ndarray, *, k: int = 3,
                                  rng: np.random.Generator,
                                  preprocess: str | None = None) -> float:
    """KSG conditional total correlation ``sum_c p(c) TC(U | Y = c)`` given integer labels.

    Same value as :func:`total_correlation_with_conditional` (second element) with the same
    ``rng``; skips the search over all samples.
    """
    return total_correlation_with_conditional(blocks, labels, k=k, rng=rng,
                                              include_marginal=False, preprocess=preprocess)[1]


def conditional_mutual_information(x: np.ndarray, y: np.ndarray, z: np.ndarray, *, k: int = 3,
                                   rng: np.random.Generator,
                                   preprocess: str | None = None) -> float:
    """Frenzel–Pompe ``I(X;Y|Z) = psi(k) - <psi(n_xz+1) + psi(n_yz+1) - psi(n_z+1)>`` (nats).

    ``z`` is continuous ``(n, d_z)``; the joint search is in ``(x, y, z)`` and the counts are
    strict, in the max-norm subspaces ``(x, z)``, ``(y, z)`` and ``z``.
    """
    n = x.shape[0]
    k = check_k(k, n, context="for the Frenzel-Pompe conditional mutual information")
    x, y, z = check_scale([x, y, z], ["x", "y", "z"])
    check_dependence([z, x, y], ["z", "x", "y"], "conditional mutual information")
    return frenzel_pompe(prepare_all([x, y, z], rng, preprocess), k)


def frenzel_pompe(blocks: list[np.ndarray], k: int) -> float:
    """Frenzel–Pompe CMI of already prepared blocks ``[x, y, z]`` (nats)."""
    _, counts, _, _ = neighbor_counts(blocks, [(0, 2), (1, 2), (2,)], k)
    psi = digamma(counts + 1)
    return float(digamma(k) - np.mean(psi[:, 0] + psi[:, 1] - psi[:, 2]))


def ksg(blocks: list[np.ndarray], k: int) -> float:
    """KSG multi-information (MI for two blocks) of already prepared blocks (nats)."""
    return _multi_information(blocks, k)


def mixed_mutual_information(x: np.ndarray, labels: np.ndarray, *, k: int = 3,
                             rng: np.random.Generator,
                             preprocess: str | None = None) -> float:
    """Ross (2014) MI between continuous ``x`` ``(n, d)`` and integer ``labels`` (nats).

    ``I = psi(n) - <psi(N_y(i))> + <psi(k_i)> - <psi(m_i)>``: for sample ``i`` of class ``y``
    (``N_y`` samples) the distance ``r_i`` to its ``k_i = min(k, N_y - 1)``-th nearest neighbour
    within the class is found, and ``m_i`` counts the other samples of ANY class within ``r_i``
    (max-norm, inclusive, so ``m_i >= k_i``).

    Raises
    ------
    ValueError
        If ``k >= n`` or a class has fewer than 2 samples (its neighbour distance is undefined;
        such classes are not silently dropped).
    """
    n = x.shape[0]
    k = check_k(k, n, context="for the Ross mixed mutual information")
    classes, inverse, sizes, k_i = _class_members(labels, k,
                                                  "the mixed kNN estimator (Ross 2014)")
    z = prepare(x, rng, LABELS_PREPROCESS if preprocess is None else preprocess)
    radius = np.empty(n)
    for c in range(len(classes)):
        members = np.flatnonzero(inverse == c)
        radius[members] = kth_neighbor_distance(z[members], int(min(k, sizes[c] - 1)))
    m_i = count_within(z, radius, strict=False)
    return float(digamma(n) - np.mean(digamma(sizes[inverse])) + np.mean(digamma(k_i))
                 - np.mean(digamma(m_i)))


def _class_members(labels: np.ndarray, k: int, estimator: str):
    """``(classes, inverse, sizes, k_i)`` with ``k_i = min(k, N_y - 1)``; every class >= 2."""
    classes, inverse, sizes = np.unique(labels, return_inverse=True, return_counts=True)
    if (sizes < 2).any():
        small = sizes < 2
        bad = ", ".join(f"class {c} has {s}" for c, s in zip(classes[small][:5], sizes[small]))
        more = f" and {small.sum() - 5} more" if small.sum() > 5 else ""
        raise ValueError(f"labels: {estimator} needs at least 2 samples per class, but "
                         f"{small.sum()} of {len(classes)} classes have fewer ({bad}{more}; "
                         f"n={len(labels)})")
    return classes, inverse, sizes, np.minimum(k, sizes - 1)[inverse]


def conditional_mixed_mutual_information(x: np.ndarray, labels: np.ndarray, z: np.ndarray, *,
                                         k: int = 3, rng: np.random.Generator,
                                         preprocess: str | None = None) -> float:
    """``I(X;Y|Z)`` for continuous ``x`` ``(n, d_x)``, ``z`` ``(n, d_z)`` and integer ``labels``.

    Frenzel–Pompe with the mixed metric of Ross (2014): samples of different classes are
    infinitely far apart in ``Y``, so the joint ``(x, y, z)`` search of sample ``i`` runs within
    its class (``N_y`` samples) in the ``(x, z)`` max-norm, with ``k_i = min(k, N_y - 1)``, and

    ``I(X;Y|Z) = <psi(k_i)> - <psi(n_xz + 1) + psi(n_yz + 1) - psi(n_z + 1)>``

    with strict counts within the joint distance ``eps_i``: ``n_xz`` in ``(x, z)`` over all
    samples, ``n_yz`` in ``z`` over the samples of the same class and ``n_z`` in ``z`` over all
    samples (the counts of the discrete-aware CMI in ennemi, Laarne et al. 2021, J. Open Source
    Softw. 6, 3035). Direct, instead of the chain rule ``I(X,Z;Y) - I(Z;Y)`` whose two
    separately biased Ross terms do not cancel.

    Raises
    ------
    ValueError
        If ``k >= n`` or a class has fewer than 2 samples.
    """
    n = x.shape[0]
    k = check_k(k, n, context="for the conditional mixed mutual information")
    classes, inverse, _, k_i = _class_members(labels, k, "the conditional mixed kNN estimator")
    xz = np.hstack(prepare_all([x, z], rng,
                               LABELS_PREPROCESS if preprocess is None else preprocess))
    zz = xz[:, x.shape[1]:]
    eps = np.empty(n)
    n_yz = np.empty(n, dtype=np.int64)
    for c in range(len(classes)):
        members = np.flatnonzero(inverse == c)
        eps[members] = kth_neighbor_distance(xz[members], int(k_i[members[0]]))
        n_yz[members] = count_within(zz[members], eps[members])
    n_xz, n_z = count_within(xz, eps), count_within(zz, eps)
    return float(np.mean(digamma(k_i)) - np.mean(digamma(n_xz + 1) + digamma(n_yz + 1)
                                                 - digamma(n_z + 1)))
