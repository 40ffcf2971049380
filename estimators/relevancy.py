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
           "MEMBER_FAMILIES", "MEMBER_LAM"]

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
