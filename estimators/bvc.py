"""Bias–variance–covariance decompositions of the ensemble MSE (Theorem 3, Eq. 11; DESIGN.md 2.3).

For members ``v_m`` (scaled as in :mod:`estimators.ensemble`), target ``t`` and errors
``e_m = v_m − t``, the ensemble error ``ē = mean_m e_m`` satisfies, for expectations ``E`` and
(population) variances/covariances taken over ONE index — the option index ``j`` (as in Eq. 11)
or the example index ``n`` (Ueda & Nakano 1996) —::

    E[ē²] = bias̄² + var̄/M + (1 − 1/M)·cov̄,
    bias̄ = mean_m E[e_m],  var̄ = mean_m Var(e_m),  cov̄ = mean_{m≠m'} Cov(e_m, e_m')

which is exact because ``E[ē²] = E[ē]² + Var(ē)`` and ``Var(ē) = (1/M²) Σ_{m,m'} Cov(e_m, e_m')``.

The paper's Eq. 11 (Brown et al. 2005) is printed with variances and covariances of the members
``u`` instead of their errors. Its Diversity identity is exact; its Bias identity
``Bias = bias̄² + Ω`` drops the target term ``Var_j(t) − 2·Cov_j(v̄, t)``, which vanishes only
when the target is constant over the options (never for a one-hot target).
:func:`bias_variance_covariance` returns Eq. 11 as printed together with that dropped term.
The printed ``var̄`` reads ``E_u[E_j[u_j − E_k u_k]]²``, which is identically zero as typeset; we
read it as the variance ``E_u[E_j[(u_j − E_k u_k)²]]`` that Brown et al. define.

References
----------
Ueda, N. & Nakano, R. (1996). Generalization error of ensemble estimators. ICNN.
Brown, G., Wyatt, J., Harris, R. & Yao, X. (2005). Diversity creation methods: a survey and
categorisation. Information Fusion 6(1).
Krogh, A. & Vedelsby, J. (1994). Neural network ensembles, cross validation, and active learning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ensemble import SCALES, _frozen
from .ensemble_checks import (
    _check_choice,
    check_bias,
    check_members,
    check_target,
    member_logits,
)
from .validation import is_discrete

__all__ = ["BVCTerms", "Eq11Terms", "BiasVarianceCovariance", "bias_variance_covariance"]


@dataclass(frozen=True)
class BVCTerms:
    """Exact error-based terms with expectations over ``over`` ("options" or "examples").

    Arrays are per example ``[N]`` when ``over="options"`` and per option ``[C]`` when
    ``over="examples"``; ``mse`` is ``E[ē²]`` along the same index, and ``total`` equals it.
    ``covariance`` is 0 for a single member (its weight ``1 − 1/M`` is 0 too).
    """

    over: str
    n_members: int
    average_bias: np.ndarray
    variance: np.ndarray
    covariance: np.ndarray
    mse: np.ndarray

    @property
    def bias_squared(self) -> np.ndarray:
        return self.average_bias ** 2

    @property
    def total(self) -> np.ndarray:
        """``bias̄² + var̄/M + (1 − 1/M)·cov̄`` (equals ``mse``)."""
        m = self.n_members
        return self.bias_squared + self.variance / m + (1 - 1 / m) * self.covariance

    def means(self) -> dict[str, float]:
        """Means of each term along the array (the overall figures)."""
        return {"bias_squared": float(self.bias_squared.mean()),
                "variance": float(self.variance.mean()),
                "covariance": float(self.covariance.mean()), "mse": float(self.mse.mean())}


@dataclass(frozen=True)
class Eq11Terms:
    """Eq. 11 exactly as printed, per example (expectations over the option index).

    ``bias = average_bias² + omega`` and ``diversity = omega − (variance/M + (1 − 1/M)·covariance)``
    are the printed right-hand sides, with variances/covariances of the members ``v`` (not of
    their errors). ``true_bias`` and ``true_diversity`` are Eq. 8's left-hand sides
    ``mean_m mean_j (t_j − v_mj)²`` and ``mean_m mean_j (v̄_j − v_mj)²``.
    ``true_diversity == diversity`` exactly; ``true_bias − bias == dropped`` where
    ``dropped = Var_j(t) − 2·Cov_j(v̄, t)`` is the target term Eq. 11 leaves out.
    """

    n_members: int
    average_bias: np.ndarray
    variance: np.ndarray
    covariance: np.ndarray
    omega: np.ndarray
    bias: np.ndarray
    diversity: np.ndarray
    true_bias: np.ndarray
    true_diversity: np.ndarray
    dropped: np.ndarray


@dataclass(frozen=True)
class BiasVarianceCovariance:
    """Result of :func:`bias_variance_covariance`.

    ``mse`` is the ensemble MSE ``mean_n mean_j (t − v̄)²``; ``options`` and ``examples`` are the
    two exact error-based forms; ``eq11`` is the paper's form with the term it drops.
    """

    mse: float
    mse_examples: np.ndarray
    options: BVCTerms
    examples: BVCTerms
    eq11: Eq11Terms
    scale: str


def _terms(e: np.ndarray, axis: int, over: str) -> BVCTerms:
    """Error-based bias/variance/covariance of ``e`` [N, M, C] along data ``axis`` (0 or 2)."""
    m = e.shape[1]
    # after reducing ``axis``, the members' axis of e and the data axis of ē are both ``r``
    r = 1 if axis == 2 else 0
    ebar = e.mean(axis=1)                                   # ensemble error [N, C]
    avg_bias = e.mean(axis=axis).mean(axis=r)
    variance = e.var(axis=axis).mean(axis=r)
    var_ens = ebar.var(axis=r)
    cov = (m * var_ens - variance) / (m - 1) if m > 1 else np.zeros_like(var_ens)
    mse = (ebar ** 2).mean(axis=r)
    return BVCTerms(over, m, _frozen(avg_bias), _frozen(variance), _frozen(cov), _frozen(mse))


def _eq11(v: np.ndarray, t: np.ndarray, errors: BVCTerms) -> Eq11Terms:
    """Eq. 11 as printed; ``errors`` are the exact terms over the options (same ``bias̄``)."""
    members = _terms(v, 2, "options")       # variances/covariances of the members, not errors
    m, variance, cov = members.n_members, members.variance, members.covariance
    avg_bias = errors.average_bias          # mean_m E_j v_mj − E_j t_j
    vbar = v.mean(axis=1)                                   # [N, C]
    mu = v.mean(axis=2)                                     # E_j v_mj   [N, M]
    omega = variance + ((mu - vbar.mean(axis=1)[:, None]) ** 2).mean(axis=1)
    bias = avg_bias ** 2 + omega
    diversity = omega - (variance / m + (1 - 1 / m) * cov)
    true_bias = ((t[:, None, :] - v) ** 2).mean(axis=2).mean(axis=1)
    true_div = ((vbar[:, None, :] - v) ** 2).mean(axis=2).mean(axis=1)
    tc = t - t.mean(axis=1, keepdims=True)
    vc = vbar - vbar.mean(axis=1, keepdims=True)
    dropped = (tc ** 2).mean(axis=1) - 2 * (vc * tc).mean(axis=1)
    return Eq11Terms(m, *(_frozen(x) for x in (avg_bias, variance, cov, omega, bias, diversity,
                                               true_bias, true_div, dropped)))


def bias_variance_covariance(u, target=None, *, scale: str = "mean",
                             bias=None) -> BiasVarianceCovariance:
    r"""Exact bias–variance–covariance decompositions of the ensemble MSE in logit space.

    Parameters
    ----------
    u : array [N, M, C]
        Member logits.
    target : int array [N], or float array [C] / [N, C]
        An integer 1-D array is read as labels
        (target ``onehot``); a float array is the target itself (pass floats for a per-option
        target, e.g. ``np.full(C, 0.5)``).
    scale : {"mean", "sum"}
        Members ``u_m + b/M`` (the paper) or ``M·u_m + b``.
    bias : array [C] or [N, C], optional
        Constant member, spread equally over the members.

    Returns
    -------
    BiasVarianceCovariance
        ``options``: per example, expectations over the option index (Eq. 11's index) —
        ``mse_examples == options.total``. ``examples``: per option, expectations over examples
        (Ueda & Nakano 1996) — ``mean(examples.total) == mse``. ``eq11``: the printed Eq. 11 and
        the dropped target term.
    """
    _check_choice(scale, SCALES, "scale")
    arr, labels = check_members(u), None
    n, _, c = arr.shape
    if target is not None and np.ndim(target) == 1 and is_discrete(target):
        labels, target = target, None
    t = check_target(target, labels, n, c, distribution=False)
    v = member_logits(arr, check_bias(bias, n, c), scale)
    e = v - t[:, None, :]
    options = _terms(e, 2, "options")
    examples = _terms(e, 0, "examples")
    return BiasVarianceCovariance(float(options.mse.mean()), options.mse, options, examples,
                                  _eq11(v, t, options), scale)
