"""Per-member usable information ``I(U_m; Y)`` on the whole member vector, all members at once.

Each member ``U_m`` (its ``C`` coordinates) gets the estimator of :mod:`estimators.usable`
restricted to low-dimensional families, batched over members: ``linear`` (multinomial logistic
regression on the standardised coordinates) and ``rank`` (on their marginal normal scores),
ridge :data:`MEMBER_LAM`, every member, fold and null draw fitted by the compiled Newton loop of
:mod:`estimators._member_fits` (started at the closed-form linear discriminant). Cross-fitted on
the same stratified folds as the joint (and with the normal scores shared with it). The family
is chosen per member and per outer fold by AIC on that fold's training part (training negative
log-likelihood plus the number of parameters, an asymptotically unbiased estimate of the
held-out log-loss of a nearly unpenalised maximum-likelihood fit; Akaike 1974), so the
held-out fold never influences the choice and the estimate is not optimistic (tested on pure
noise).

Bias of the sum: every cross-fitted term pays a learning cost of about ``p / (2 n_train)``
nats (``p`` parameters), so the sum over ``M`` members is biased low by ``M`` times that
(``M = 61``, ``C = 4``, ``n = 2000``: about 0.1 bit). ``relevancy`` subtracts the label-null
mean: the same procedure on the members with their rows permuted against the labels, pooled
over members, since every member has the same ``p`` and ``n`` (``n_null`` draws, each
permuting every member's rows independently, so that the pooled mean averages ``n_null M``
independent terms even when the members are strongly correlated; plus the common
permutations of the label null of ``diversity`` when requested); ``relevancy_raw`` keeps the
plain sum. The null terms measure the cost at ``I = 0``; for a well-specified model the cost
is the same at every ``I`` (Takeuchi 1976), so the correction is exact to first order there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

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
    permuted_values: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)


def _fold_rows(folds, n):
    """Padded training / held-out row indices of every fold, their lengths, the masks."""
    n_folds = len(folds)
    tr_len = np.array([len(tr) for tr, _ in folds], dtype=np.int64)
    te_len = np.array([len(te) for _, te in folds], dtype=np.int64)
    tr_rows = np.zeros((n_folds, tr_len.max()), dtype=np.int64)
    te_rows = np.zeros((n_folds, te_len.max()), dtype=np.int64)
    train = np.zeros((n_folds, n), dtype=bool)
    for f, (tr, te) in enumerate(folds):
        tr_rows[f, :len(tr)], te_rows[f, :len(te)] = tr, te
        train[f, tr] = True
    return tr_rows, tr_len, te_rows, te_len, train


def _fit_family(family, v, y, k1, fold_rows, order=None, known=None):
    """``(training NLL (B, F), held-out log q(y_i|v_bi) (B, F, n))`` of one family for
    ``B`` variables ``v`` ``(B, n, d)`` on every fold (:mod:`estimators._member_fits`);
    ``order``: the argsort of the columns ``(n, B d)`` when known; ``known``: their normal
    scores ``(B d, F, n)`` when known."""
    from estimators import _member_fits  # numba: imported on first use

    tr_rows, tr_len, te_rows, te_len, train = fold_rows
    b, n, d = v.shape
    n_folds = len(tr_len)
    fold = np.tile(np.arange(n_folds), b)
    col = np.repeat(np.arange(b) * d, n_folds)
    if family == "linear":
        x = np.ascontiguousarray(v.transpose(0, 2, 1)).reshape(b * d, 1, n)
        slot = np.zeros(b * n_folds, dtype=np.int64)
        center = np.empty((b, n_folds, d))
        scale = np.empty((b, n_folds, d))
        for f in range(n_folds):
            part = v[:, tr_rows[f, :tr_len[f]]]
            center[:, f], sd = part.mean(axis=1), part.std(axis=1)
            scale[:, f] = np.where(sd > 0, sd, 1.0)
        center, scale = center.reshape(-1, d), scale.reshape(-1, d)
    else:
        x = known if known is not None else _member_fits.fold_normal_scores(
            v.transpose(1, 0, 2).reshape(n, b * d), train, order)
        slot = fold
        center, scale = np.zeros((b * n_folds, d)), np.ones((b * n_folds, d))
    heldout = np.zeros((b * n_folds, n))
    train_nll = np.zeros(b * n_folds)
    iters = np.zeros(b * n_folds, dtype=np.int64)
    _member_fits.fit_problems(x, col, slot, fold, center, scale, MEMBER_LAM, y, k1, tr_rows,
                              tr_len, te_rows, te_len, 50, _member_fits.TOL, heldout,
                              train_nll, iters)
    return train_nll.reshape(b, n_folds), heldout.reshape(b, n_folds, n)


#: at most this many feature values per chunk of variables (memory of the per-fold scores)
CHUNK_VALUES = 10_000_000


def member_pointwise(v, y, n_classes: int, folds, order=None, known=None):
    """Held-out ``log q(y_i | v_bi)`` ``(B, n)`` for ``B`` variables ``v`` ``(B, n, d)`` with
    class codes ``y`` ``(n,)`` (or ``(B, n)`` with equal rows), the family chosen by AIC per
    variable and fold; also the chosen family index ``(n_folds, B)``. ``order``: the argsort
    over the rows of every coordinate, ``(n, B d)`` (column ``b d + j`` = coordinate ``j``
    of variable ``b``), when known; ``known``: the fold normal scores of the first columns
    ``(D, n_folds, n)`` (:func:`estimators._member_fits.fold_normal_scores`), when known."""
    v = np.asarray(v, dtype=np.float64)
    y = np.asarray(y)
    if y.ndim == 2:
        if not (y == y[:1]).all():
            raise ValueError("member_pointwise: every variable must have the same labels")
        y = y[0]
    y = np.ascontiguousarray(y, dtype=np.int64)
    b, n, d = v.shape
    fold_rows = _fold_rows(folds, n)
    n_folds = len(folds)
    out = np.zeros((b, n))
    chosen = np.zeros((n_folds, b), dtype=np.int64)
    step = max(1, CHUNK_VALUES // (n_folds * n * d))
    n_known = 0 if known is None else len(known) // d
    # chunks: the variables with known normal scores, then at most ``step`` at a time
    bounds = ([0] if n_known == 0 else [0, n_known]) + list(range(n_known + step, b, step))
    for lo, hi in zip(bounds, bounds[1:] + [b]):
        if hi <= lo:
            continue
        part = v[lo:hi]
        part_order = None if order is None else order[:, lo * d:hi * d]
        part_known = known if hi <= n_known else None
        fits = [_fit_family(f, part, y, n_classes - 1, fold_rows, part_order, part_known)
                for f in MEMBER_FAMILIES]
        # AIC: the families have the same number of parameters, so the lower training NLL
        best = np.argmin(np.stack([nll for nll, _ in fits]), axis=0)      # (chunk, F)
        for f, (_, te) in enumerate(folds):
            for i, (_, held) in enumerate(fits):
                sel = best[:, f] == i
                out[lo:hi][np.ix_(sel, te)] = held[sel, f][:, te]
        chosen[:, lo:hi] = best.T
    return out, chosen


def _inverse(p: np.ndarray) -> np.ndarray:
    """Inverse permutations along the last axis."""
    inv = np.empty_like(p)
    np.put_along_axis(inv, p, np.broadcast_to(np.arange(p.shape[-1]), p.shape), axis=-1)
    return inv


def member_relevancies(members, y, n_classes, folds, log_prior, *, perms, to_units,
                       common_perms=(), order=None, known=None) -> MemberRelevancies:
    """:class:`MemberRelevancies` of ``members`` ``(n, M, C)`` on the given folds.

    ``log_prior`` = ``log p(y_i)`` (plug-in), ``to_units`` converts nats. The label null pairs
    ``y_i`` with a member's permuted rows (the labels and their stratified folds kept;
    permuting the labels instead would unbalance the folds and charge the null an extra prior
    mismatch): ``perms`` ``(n_null, M, n)`` holds one permutation per member and draw, so the
    members' null terms (``null_values`` ``(n_null, M)``) are independent draws;
    ``common_perms`` (each ``(n,)``) permute every member's rows alike (the whole procedure
    under the null, for the label null of ``diversity``: ``permuted_values``
    ``(len(common_perms), M)``). ``null_mean`` pools both kinds. ``order``: the argsort of
    ``members.reshape(n, M C)`` over the rows, when known (a permuted column's order follows
    from it); ``known``: their fold normal scores ``(M C, n_folds, n)``, when known.
    """
    n, m, c = members.shape
    v = np.ascontiguousarray(members.transpose(1, 0, 2), dtype=np.float64)
    perms = np.asarray(perms, dtype=np.int64).reshape(-1, m, n)
    parts = [v] + [v[np.arange(m)[:, None], p] for p in perms] + [v[:, p] for p in common_perms]
    if order is None:
        order = np.argsort(members.reshape(n, -1), axis=0, kind="stable")
    # column u[p] of a permutation p is sorted by inverse(p)[order]
    orders = [order] + [_inverse(p).repeat(c, axis=0).T[order, np.arange(m * c)] for p in perms]
    orders += [_inverse(p)[order] for p in common_perms]
    lq, chosen = member_pointwise(np.concatenate(parts), y, n_classes, folds,
                                  np.concatenate(orders, axis=1), known)
    terms = to_units(lq - log_prior[None, :])
    mean = terms.mean(axis=1)
    values = mean[:m]
    null_values = mean[m:m * (1 + len(perms))].reshape(len(perms), m)
    permuted = mean[m * (1 + len(perms)):].reshape(len(common_perms), m)
    pooled = np.concatenate([null_values.ravel(), permuted.ravel()])
    null_mean = float(pooled.mean()) if pooled.size else 0.0
    counts = {f: int((chosen[:, :m] == i).sum()) for i, f in enumerate(MEMBER_FAMILIES)}
    return MemberRelevancies(values=values, debiased=values - null_mean, null_mean=null_mean,
                             null_values=null_values, choices=counts, pointwise=terms[:m].T,
                             permuted_values=permuted)


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
