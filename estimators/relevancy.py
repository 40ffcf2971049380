"""Per-member usable information ``I(U_m; Y)`` on the whole member vector, all members at once.

Each member ``U_m`` (its ``C`` coordinates) gets the estimator of :mod:`estimators.usable`
restricted to low-dimensional families, batched over members: ``linear`` (multinomial logistic
regression on the standardised coordinates) and ``rank`` (on their marginal normal scores),
ridge :data:`MEMBER_LAM`, fitted by :mod:`estimators._logistic` for every member in one pass.
Cross-fitted on the same stratified folds as the joint. The family is chosen per member and
per outer fold by AIC on that fold's training part (training negative log-likelihood plus the
number of parameters, an asymptotically unbiased estimate of the held-out log-loss of a nearly
unpenalised maximum-likelihood fit; Akaike 1974), so the held-out fold never influences the
choice and the estimate is not optimistic (tested on pure noise).

Bias of the sum: every cross-fitted term pays a learning cost of about ``p / (2 n_train)``
nats (``p`` parameters), so the sum over ``M`` members is biased low by ``M`` times that
(``M = 61``, ``C = 4``, ``n = 2000``: about 0.1 bit). ``relevancy`` subtracts the label-null
mean: the same procedure on the members with permuted labels (``n_null`` permutations, pooled
over members, since every member has the same ``p`` and ``n``; the members' rows are
permuted against the labels); ``relevancy_raw`` keeps the
plain sum. The null terms measure the cost at ``I = 0``; for a well-specified model the cost
is the same at every ``I`` (Takeuchi 1976), so the correction is exact to first order there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from estimators import _logistic
from estimators._probe_families import normal_scores, standardize

__all__ = ["MemberRelevancies", "member_relevancies", "member_pointwise", "normal_interval",
           "probe_informations", "lda_log_proba", "MEMBER_FAMILIES", "MEMBER_LAM",
           "LDA_RIDGE"]

MEMBER_FAMILIES = ("linear", "rank")
#: ridge of the per-member probes (standardised coordinates)
MEMBER_LAM = 1e-3


@dataclass(frozen=True)
class MemberRelevancies:
    """Per-member cross-fitted ``I(U_m;Y)`` (units of the caller's base).

    ``values`` raw per member; ``null_mean`` the pooled label-null mean subtracted from
    each; ``debiased = values - null_mean``; ``null_values`` ``(n_null, M)`` per permutation;
    ``choices[f]`` = how many (member, fold) pairs chose family ``f``; ``pointwise``
    ``(n, M)`` raw per-example terms.
    """

    values: np.ndarray
    debiased: np.ndarray
    null_mean: float
    null_values: np.ndarray
    choices: dict
    pointwise: np.ndarray = field(repr=False)


def _batched(transform, v_tr, v_te):
    """Apply a per-column transform fitted on each member's training rows."""
    out = [transform(a, b) for a, b in zip(v_tr, v_te)]
    return np.stack([o[0] for o in out]), np.stack([o[1] for o in out])


def _fit_family(family, v_tr, v_te, y_tr, y_te, n_classes):
    """``(AIC on the training part, held-out log q(y|u))`` per batch entry."""
    transform = standardize if family == "linear" else normal_scores
    f_tr, f_te = _batched(transform, v_tr, v_te)
    eye = np.eye(n_classes)
    w = _logistic.fit(f_tr, eye[y_tr], MEMBER_LAM)
    lq_tr = np.take_along_axis(_logistic.log_proba(w, f_tr), y_tr[:, :, None], 2)[:, :, 0]
    lq_te = np.take_along_axis(_logistic.log_proba(w, f_te), y_te[:, :, None], 2)[:, :, 0]
    n_params = (f_tr.shape[2] + 1) * (n_classes - 1)
    return -lq_tr.sum(axis=1) + n_params, lq_te


def member_pointwise(v, y, n_classes: int, folds):
    """Held-out ``log q(y_i | v_bi)`` ``(B, n)`` for ``B`` variables ``v`` ``(B, n, d)`` with
    labels ``y`` ``(B, n)`` (class codes), the family chosen by AIC per variable and fold;
    also the chosen family index ``(n_folds, B)``."""
    b, n, _ = v.shape
    out = np.zeros((b, n))
    chosen = []
    for tr, te in folds:
        fits = [_fit_family(f, v[:, tr], v[:, te], y[:, tr], y[:, te], n_classes)
                for f in MEMBER_FAMILIES]
        best = np.argmin(np.stack([a for a, _ in fits]), axis=0)
        held = np.stack([lq for _, lq in fits])
        out[:, te] = held[best, np.arange(b)]
        chosen.append(best)
    return out, np.stack(chosen)


def member_relevancies(members, y, n_classes, folds, log_prior, *, perms,
                       to_units) -> MemberRelevancies:
    """:class:`MemberRelevancies` of ``members`` ``(n, M, C)`` on the given folds.

    ``log_prior`` = ``log p(y_i)`` (plug-in), ``to_units`` converts nats; ``perms`` are
    permutations of the examples: the null pairs ``y_i`` with ``u_p(i)`` (the members
    permuted, the labels and their stratified folds kept; permuting the labels instead would
    unbalance the folds and charge the null an extra prior mismatch), and its terms give the
    pooled null mean (``null_values`` ``(len(perms), M)``).
    """
    n, m, _ = members.shape
    v = np.ascontiguousarray(members.transpose(1, 0, 2))
    # the null pairs y_i with u_p(i): labels (and so the stratified folds) stay as they are
    vs = np.concatenate([v] + [v[:, p] for p in perms])
    ys = np.broadcast_to(y, (len(vs), n))
    lq, chosen = member_pointwise(vs, ys, n_classes, folds)
    terms = to_units(lq - log_prior[None, :])
    values = terms[:m].mean(axis=1)
    null_values = terms[m:].mean(axis=1).reshape(len(perms), m)
    null_mean = float(null_values.mean()) if len(perms) else 0.0
    counts = {f: int((chosen[:, :m] == i).sum()) for i, f in enumerate(MEMBER_FAMILIES)}
    return MemberRelevancies(values=values, debiased=values - null_mean, null_mean=null_mean,
                             null_values=null_values, choices=counts, pointwise=terms[:m].T)


def normal_interval(terms: np.ndarray, confidence: float) -> tuple:
    """``mean +- z sd / sqrt(n)`` of per-example terms."""
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    half = z * float(terms.std(ddof=1)) / np.sqrt(len(terms))
    return float(terms.mean() - half), float(terms.mean() + half)


#: relative ridge of the pooled covariance of :func:`lda_log_proba` (times its mean variance)
LDA_RIDGE = 1e-3


def lda_log_proba(v_tr, y_tr, v_te, n_classes: int) -> np.ndarray:
    """Held-out ``log q(c | v)`` ``(B, n_te, K)`` of linear discriminant analysis fitted to each
    of ``B`` training sets ``v_tr`` ``(B, n_tr, d)`` with class codes ``y_tr`` ``(n_tr,)``:
    class means, pooled within-class covariance (maximum likelihood, as scikit-learn's) plus
    :data:`LDA_RIDGE` times its mean variance,
    training class frequencies (Hastie, Tibshirani & Friedman 2009, sec. 4.3). Closed form: a
    probabilistic classifier whose held-out cross-entropy bounds ``H(Y|V)`` from above."""
    from scipy.special import log_softmax

    onehot = np.eye(n_classes)[y_tr]                                  # (n_tr, K)
    counts = onehot.sum(axis=0)
    means = (onehot.T @ v_tr) / counts[None, :, None]                 # (B, K, d)
    resid = v_tr - means[:, y_tr]
    d = v_tr.shape[2]
    cov = resid.transpose(0, 2, 1) @ resid / len(y_tr)
    scale = np.trace(cov, axis1=1, axis2=2) / d
    cov += (LDA_RIDGE * np.where(scale > 0, scale, 1.0))[:, None, None] * np.eye(d)
    w = np.linalg.solve(cov, means.transpose(0, 2, 1))               # (B, d, K) = Σ⁻¹ μ_k
    const = -0.5 * (means * w.transpose(0, 2, 1)).sum(axis=2) + np.log(counts / counts.sum())
    return log_softmax(v_te @ w + const[:, None, :], axis=2)


def probe_informations(v, labels, *, family: str = "lda", n_splits: int = 2, base=2,
                       random_state=0):
    """Cross-fitted usable information of each of ``B`` low-dimensional variables at once.

    ``I_b = H(Y) - CE_b`` with ``CE_b`` the held-out cross-entropy, on ``n_splits`` stratified
    folds (the same for every ``b``), of a probe fitted to ``v[b]``: ``family="lda"``
    (:func:`lda_log_proba`, closed form, cheap) or ``"logistic"`` (the per-member probe of
    :func:`member_pointwise`, linear or rank by AIC). Usable information (Xu et al. 2020):
    each estimate is a lower-side estimate of ``I(V_b;Y)``, at most ``H(Y)``, not label-null
    debiased.
    Parameters
    ----------
    v : array (B, n, d)
        ``B`` variables of ``d`` coordinates (e.g. summed logits of ``B`` member sets).
    labels : 1-D integer array (n,)
    family : "lda" or "logistic"
    n_splits : int
        Stratified cross-fitting folds (>= 2, at most the smallest class count).
    base : float or "e"
        Units (2: bits).
    random_state : None, int or Generator
        Seeds the folds.

    Returns
    -------
    values : array (B,)
        The estimates.
    pointwise : array (B, n)
        Per-example terms ``log q_b(y_i | v_bi) - log p(y_i)`` (their mean is ``values``).
    """
    from estimators.usable import _folds
    from estimators.validation import check_labels, check_random_state, to_base

    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 3:
        raise ValueError(f"v must be a (B, n, d) array, got shape {v.shape}")
    labels = check_labels(labels)
    if v.shape[1] != len(labels):
        raise ValueError(f"length mismatch: v has {v.shape[1]} samples but labels has "
                         f"{len(labels)}")
    if not np.isfinite(v).all():
        raise ValueError("v holds NaN or infinite values")
    _, y = np.unique(labels, return_inverse=True)
    counts = np.bincount(y)
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or \
            not 2 <= n_splits <= counts.min():
        raise ValueError(f"n_splits must be an integer in [2, {counts.min()}] (the smallest "
                         f"class count), got {n_splits!r}")
    if family not in ("lda", "logistic"):
        raise ValueError(f"family must be 'lda' or 'logistic', got {family!r}")
    folds = _folds(y, n_splits, check_random_state(random_state))
    if family == "logistic":
        lq, _ = member_pointwise(v, np.broadcast_to(y, v.shape[:2]), len(counts), folds)
    else:
        lq = np.zeros(v.shape[:2])
        for tr, te in folds:
            logq = lda_log_proba(v[:, tr], y[tr], v[:, te], len(counts))
            lq[:, te] = logq[:, np.arange(len(te)), y[te]]
    terms = to_base(lq - np.log(counts / len(y))[y][None, :], base)
    return terms.mean(axis=1), terms
