"""Compiled per-member probes of :mod:`estimators.relevancy` (internal).

Every member ``U_m`` has ``C`` coordinates, so its probe is a small multinomial logistic
regression, ``(C + 1)(K - 1)`` parameters, fitted once per member, cross-fitting fold, family
and label permutation: ``M (1 + n_null) n_splits`` problems per family. They are fitted here
one after another by a compiled loop (numba, ``cache=True``), each with its own convergence
test, instead of in lock-step in one array:

* one pass over a problem's training rows gives the objective, its gradient and its Hessian
  (the ``(K - 1)(K - 1 + 1)/2`` class weights times the ``(C + 1)(C + 2)/2`` coordinate
  products of each row, accumulated without forming the Hessian per row);
* the start is the closed-form linear discriminant of the same training rows (class means,
  pooled covariance; Hastie, Tibshirani & Friedman 2009, sec. 4.3), which is the logistic
  model's maximum-likelihood solution when the classes are Gaussian with one covariance, so
  Newton's method needs two or three steps; where it is worse than the prior the start is the
  prior. The minimiser is the same from any start (the objective is strictly convex);
* Newton steps are halved while the objective does not decrease; the loop stops when half the
  Newton decrement is at most :data:`TOL` ``(1 + objective)`` (nats summed over the rows).

The objective is the one of :mod:`estimators._logistic` (ridge ``lam`` on the standardised
coordinates, intercepts free). Normal scores per fold (:func:`fold_normal_scores`) follow
:func:`estimators._probe_families.normal_scores` (training rows: average ranks over
``n_train + 1``; other rows: the training ECDF interpolated as ``numpy.interp`` does), from one
sort of each column shared by all folds.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import ndtri

__all__ = ["fit_problems", "fold_normal_scores", "TOL"]

DIRECT = 30.0  #: logits below this are exponentiated without the shift by their maximum
#: convergence of the per-member Newton loop: the last step is taken when half its Newton
#: decrement is at most ``TOL (1 + objective)`` (see :func:`fit_problems`)
TOL = 1e-7


@njit(cache=True)
def _scores(cols, order, train, table, out):
    """``out[j, f, i]``: the normal score of training row ``i`` of column ``j`` (``cols[j]``,
    sorted by ``order[j]``) under fold ``f`` (its average rank over ties,
    ``r / (n_train + 1)``, through ``table[f]`` = ``ndtri(h / 2 / (n_train + 1))`` at half
    ranks ``h``), and for every other row the training ECDF interpolated as ``numpy.interp``
    does (a uniform value; the caller applies ``ndtri``). Ties fall in one group whatever
    ``order`` says inside them."""
    n_cols, n = cols.shape
    n_folds = train.shape[0]
    sorted_tr = np.empty(n)
    values = np.empty(n)
    for j in range(n_cols):
        for t in range(n):
            values[t] = cols[j, order[j, t]]
        for f in range(n_folds):
            m = 0
            for t in range(n):
                if train[f, order[j, t]]:
                    sorted_tr[m] = values[t]
                    m += 1
            denom = m + 1.0
            below = 0                  # training values strictly below the current group
            t = 0
            while t < n:
                v = values[t]
                end = t
                ties = 0
                while end < n and values[end] == v:
                    if train[f, order[j, end]]:
                        ties += 1
                    end += 1
                if ties > 0:
                    tr_score = table[f, 2 * below + ties + 1]
                    te_score = (below + ties) / denom
                elif below == 0:
                    te_score = 1.0 / denom
                    tr_score = te_score
                elif below == m:
                    te_score = m / denom
                    tr_score = te_score
                else:
                    lo, hi = sorted_tr[below - 1], sorted_tr[below]
                    te_score = (below + (v - lo) / (hi - lo)) / denom
                    tr_score = te_score
                for r in range(t, end):
                    i = order[j, r]
                    out[j, f, i] = tr_score if train[f, i] else te_score
                below += ties
                t = end


def fold_normal_scores(cols: np.ndarray, train: np.ndarray, order=None) -> np.ndarray:
    """Normal scores of every column of ``cols`` ``(n, D)`` under each fold's training rows
    (``train`` ``(F, n)`` boolean): ``(D, F, n)``. ``order``: ``argsort(cols, axis=0)`` when
    already known (any order of tied values)."""
    cols = np.asarray(cols, dtype=np.float64)
    train = np.ascontiguousarray(train, dtype=np.bool_)
    n = cols.shape[0]
    if order is None:
        order = np.argsort(cols, axis=0, kind="stable")
    n_train = train.sum(axis=1)
    table = ndtri(np.arange(2 * n + 3)[None, :] / 2.0 / (n_train[:, None] + 1.0))
    out = np.empty((cols.shape[1], train.shape[0], n))
    _scores(np.ascontiguousarray(cols.T), np.ascontiguousarray(np.asarray(order).T), train,
            table, out)
    for f in range(train.shape[0]):
        rest = ~train[f]
        out[:, f, rest] = ndtri(out[:, f, rest])
    return out


@njit(cache=True, fastmath=True)
def _design(x, col, slot, rows, n_rows, y, center, scale, k1, xt, xx, yk):
    """Standardised rows ``rows`` of coordinates ``x[col + j, slot]`` as ``xt`` ``(q, n)``
    (intercept last), their coordinate products ``xx`` ``(q (q + 1) / 2, n)`` and one-hot
    labels ``yk`` ``(k1, n)``."""
    q = xt.shape[0]
    d = q - 1
    for j in range(d):
        inv = 1.0 / scale[j]
        for r in range(n_rows):
            xt[j, r] = (x[col + j, slot, rows[r]] - center[j]) * inv
    for r in range(n_rows):
        xt[d, r] = 1.0
    t = 0
    for a in range(q):
        for b in range(a, q):
            for r in range(n_rows):
                xx[t, r] = xt[a, r] * xt[b, r]
            t += 1
    for k in range(k1):
        for r in range(n_rows):
            yk[k, r] = 1.0 if y[rows[r]] == k else 0.0


@njit(cache=True, fastmath=True)
def _logits(xt, n_rows, w, eta, log_z, prob):
    """Logits ``eta`` ``(k1, n)`` and probabilities ``prob`` ``(k1, n)`` at ``w``; returns
    ``sum_r log Z_r``, and fills ``log_z`` ``(n,)`` when it has a row (``len(log_z) > 0``).
    Logits below :data:`DIRECT` need no shift (``Z = 1 + sum_k exp(eta_k)``), and the logs
    are taken of products of normalisers, each below ``K exp(DIRECT)``, when the product
    passes ``1e200``."""
    q, k1 = w.shape
    for k in range(k1):
        for r in range(n_rows):
            eta[k, r] = w[q - 1, k]
        for j in range(q - 1):
            wj = w[j, k]
            for r in range(n_rows):
                eta[k, r] += wj * xt[j, r]
    rows = log_z.shape[0] > 0
    total_log = 0.0
    block = 1.0
    for r in range(n_rows):
        top = 0.0
        for k in range(k1):
            top = max(top, eta[k, r])
        if top < DIRECT:
            top = 0.0
            total = 1.0
        else:
            total = np.exp(-top)
        for k in range(k1):
            e = np.exp(eta[k, r] - top)
            prob[k, r] = e
            total += e
        inv = 1.0 / total
        for k in range(k1):
            prob[k, r] *= inv
        if rows:
            log_z[r] = top + np.log(total)
        else:
            total_log += top
            block *= total
            if block > 1e200:
                total_log += np.log(block)
                block = 1.0
    if not rows:
        total_log += np.log(block)
    return total_log


@njit(cache=True, fastmath=True)
def _pass(xt, xx, yk, n_rows, w, lam, grad, hess, eta, log_z, prob, wg):
    """Penalised objective at ``w``; fills its gradient and Hessian."""
    q, k1 = w.shape
    obj = _logits(xt, n_rows, w, eta, log_z[:0], prob)
    for k in range(k1):
        for r in range(n_rows):
            obj -= yk[k, r] * eta[k, r]
    for k in range(k1):
        for j in range(q):
            acc = 0.0
            for r in range(n_rows):
                acc += xt[j, r] * (prob[k, r] - yk[k, r])
            grad[j, k] = acc + (lam * w[j, k] if j < q - 1 else 0.0)
    for k in range(k1):
        for m in range(k, k1):
            if k == m:
                for r in range(n_rows):
                    wg[r] = prob[k, r] * (1.0 - prob[k, r])
            else:
                for r in range(n_rows):
                    wg[r] = -prob[k, r] * prob[m, r]
            t = 0
            for a in range(q):
                for b in range(a, q):
                    acc = 0.0
                    for r in range(n_rows):
                        acc += wg[r] * xx[t, r]
                    hess[a * k1 + k, b * k1 + m] = acc
                    hess[b * k1 + m, a * k1 + k] = acc
                    hess[b * k1 + k, a * k1 + m] = acc
                    hess[a * k1 + m, b * k1 + k] = acc
                    t += 1
    for j in range(q - 1):
        for k in range(k1):
            obj += 0.5 * lam * w[j, k] * w[j, k]
            hess[j * k1 + k, j * k1 + k] += lam
    for a in range(q * k1):
        hess[a, a] += 1e-12
    return obj


@njit(cache=True)
def _solve_spd(a, b):
    """``a^-1 b`` for a symmetric positive definite ``a`` ``(m, m)``, ``b`` ``(m, r)``, by
    Cholesky (a pivot that is not positive is raised to ``1e-300``)."""
    m = a.shape[0]
    low = np.zeros((m, m))
    for i in range(m):
        for j in range(i + 1):
            acc = a[i, j]
            for k in range(j):
                acc -= low[i, k] * low[j, k]
            if i == j:
                low[i, i] = np.sqrt(max(acc, 1e-300))
            else:
                low[i, j] = acc / low[j, j]
    out = b.copy()
    for c in range(out.shape[1]):
        for i in range(m):
            acc = out[i, c]
            for k in range(i):
                acc -= low[i, k] * out[k, c]
            out[i, c] = acc / low[i, i]
        for i in range(m - 1, -1, -1):
            acc = out[i, c]
            for k in range(i + 1, m):
                acc -= low[k, i] * out[k, c]
            out[i, c] = acc / low[i, i]
    return out


@njit(cache=True)
def _lda_start(xt, yk, n_rows, w):
    """Linear-discriminant weights (reference class ``k1``) from the training rows (pooled
    covariance with a ``1e-6`` relative ridge); returns the class counts."""
    q, k1 = w.shape
    d = q - 1
    kk = k1 + 1
    means = np.zeros((kk, d))
    counts = np.zeros(kk)
    for r in range(n_rows):
        c = k1
        for k in range(k1):
            if yk[k, r] > 0:
                c = k
        counts[c] += 1.0
        for j in range(d):
            means[c, j] += xt[j, r]
    for c in range(kk):
        for j in range(d):
            means[c, j] /= max(counts[c], 1.0)
    cov = np.zeros((d, d))
    dev = np.zeros(d)
    for r in range(n_rows):
        c = k1
        for k in range(k1):
            if yk[k, r] > 0:
                c = k
        for j in range(d):
            dev[j] = xt[j, r] - means[c, j]
        for a in range(d):
            for b in range(d):
                cov[a, b] += dev[a] * dev[b]
    trace = 0.0
    for a in range(d):
        trace += cov[a, a] / n_rows
    for a in range(d):
        for b in range(d):
            cov[a, b] /= n_rows
        cov[a, a] += 1e-6 * trace / d + 1e-12
    diff = np.zeros((d, k1))
    for k in range(k1):
        for j in range(d):
            diff[j, k] = means[k, j] - means[k1, j]
    coef = _solve_spd(cov, diff)
    for k in range(k1):
        # mu_k' S^-1 mu_k - mu_K' S^-1 mu_K = (S^-1 (mu_k - mu_K))' (mu_k + mu_K)
        quad = 0.0
        for j in range(d):
            w[j, k] = coef[j, k]
            quad += coef[j, k] * (means[k, j] + means[k1, j])
        w[d, k] = -0.5 * quad + np.log(max(counts[k], 0.5) / max(counts[k1], 0.5))
    return counts


@njit(cache=True)
def fit_problems(x_all, col, slot, fold, center, scale, lam, y, k1, tr_rows, tr_len, te_rows,
                 te_len, max_iter, tol, heldout, train_nll, iters):
    """Fit problem ``p`` on the coordinates ``x_all[col[p] + j, slot[p]]`` (``x_all``
    ``(columns, slots, n)``; ``j < d``, standardised by ``center[p]``, ``scale[p]``) over the
    training rows of fold ``fold[p]``; write ``log q(y_i | x_i)`` of that fold's
    other rows into ``heldout[p]``, the unpenalised training negative log-likelihood into
    ``train_nll[p]`` and the number of passes over the training rows into ``iters[p]``.

    When half the Newton decrement ``g' H^-1 g / 2`` is at most ``tol (1 + objective)``, the
    last Newton step is taken without another pass (it changes the objective by that
    decrement to within its square: Newton's method converges quadratically there), and the
    training NLL is the quadratic model's value."""
    d = center.shape[1]
    q = d + 1
    nq = q * k1
    n_max = max(tr_len.max(), te_len.max())
    xt = np.zeros((q, n_max))
    xx = np.zeros((q * (q + 1) // 2, n_max))
    yk = np.zeros((k1, n_max))
    eta = np.zeros((k1, n_max))
    prob = np.zeros((k1, n_max))
    log_z = np.zeros(n_max)
    wg = np.zeros(n_max)
    grad = np.zeros((q, k1))
    hess = np.zeros((nq, nq))
    w = np.zeros((q, k1))
    w_prev = np.zeros((q, k1))
    step = np.zeros((q, k1))
    for p in range(col.shape[0]):
        f = fold[p]
        n_rows = tr_len[f]
        _design(x_all, col[p], slot[p], tr_rows[f], n_rows, y, center[p], scale[p], k1, xt, xx,
                yk)
        counts = _lda_start(xt, yk, n_rows, w)
        obj = _pass(xt, xx, yk, n_rows, w, lam, grad, hess, eta, log_z, prob, wg)
        prior_obj = 0.0
        for c in range(k1 + 1):
            if counts[c] > 0:
                prior_obj -= counts[c] * np.log(counts[c] / n_rows)
        if not obj <= prior_obj:              # a worse start than the prior: start there
            w[:] = 0.0
            for k in range(k1):
                w[d, k] = np.log(max(counts[k], 0.5) / max(counts[k1], 0.5))
            obj = _pass(xt, xx, yk, n_rows, w, lam, grad, hess, eta, log_z, prob, wg)
        obj_prev = np.inf
        shrink = 1.0
        n_pass = 1
        while True:
            if not obj <= obj_prev + 1e-13 * abs(obj_prev):   # too long a step: halve it
                shrink *= 0.5
                if shrink < 1e-12 or n_pass >= max_iter:
                    w[:] = w_prev
                    obj = obj_prev
                    break
                for a in range(q):
                    for k in range(k1):
                        w[a, k] = w_prev[a, k] - shrink * step[a, k]
            else:
                g = grad.reshape(nq)
                sol = _solve_spd(hess, g.reshape(nq, 1)).reshape(nq)
                dec = 0.0
                for a in range(nq):
                    dec += 0.5 * sol[a] * g[a]
                last = dec <= tol * (1.0 + abs(obj)) or n_pass >= max_iter
                obj_prev = obj
                shrink = 1.0
                for a in range(q):
                    for k in range(k1):
                        w_prev[a, k] = w[a, k]
                        step[a, k] = sol[a * k1 + k]
                        w[a, k] -= step[a, k]
                if last:
                    obj -= dec
                    break
            obj = _pass(xt, xx, yk, n_rows, w, lam, grad, hess, eta, log_z, prob, wg)
            n_pass += 1
        iters[p] = n_pass
        penalty = 0.0
        for j in range(d):
            for k in range(k1):
                penalty += 0.5 * lam * w[j, k] * w[j, k]
        train_nll[p] = obj - penalty
        n_te = te_len[f]
        _design(x_all, col[p], slot[p], te_rows[f], n_te, y, center[p], scale[p], k1, xt, xx,
                yk)
        _logits(xt, n_te, w, eta, log_z, prob)
        for r in range(n_te):
            i = te_rows[f, r]
            heldout[p, i] = (eta[y[i], r] if y[i] < k1 else 0.0) - log_z[r]
