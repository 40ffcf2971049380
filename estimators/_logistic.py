"""Multinomial logistic regression by damped Newton steps, many problems in one batch (internal).

Problem ``(s, j)`` has the features ``z[s]`` of a set (an intercept column is added), its
class codes, and the rows it trains on; class ``K - 1`` is the reference (logit 0), so it has
``(p + 1)(K - 1)`` parameters. Its objective is the ridge-penalised negative log-likelihood

    ``-sum_i log q(y_i | x_i) + lam / 2 ||W||^2``   (intercepts not penalised),

strictly convex for ``lam > 0``, minimised by Newton's method with step halving (McCullagh &
Nelder 1989, ch. 6). :func:`path_fit` runs the ridge path of a cross-fitted probe: for every
strength, strong to weak, each inner training part of a set (all its rows but one inner fold)
warm-started from its solution at the previous strength; the Hessians of all problems of a set
come from one table of the rows' coordinate products (one matrix product per inner fold), and
the whole set is fitted once, at the strength of the lowest inner cross-validation score.
The minimisers do not depend on the starts, the batching or the precision of the Hessian
(single: it only directs the step); gradients and objectives are double precision.

Used by :mod:`estimators.usable` (the logistic families and the calibrated readout of every
outer fold in one batch); the per-member probes have their own compiled loop
(:mod:`estimators._member_fits`).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["fit", "log_proba", "path_fit", "one_blas_thread"]

#: probabilities below this are set to 0 in the Hessian (their terms would be subnormal
#: numbers, whose arithmetic is two orders of magnitude slower, and add nothing)
FLUSH = 1e-150
#: convergence: half the Newton decrement ``g' H^-1 g / 2`` (the predicted decrease of the
#: objective, nats summed over the rows) at most this times ``1 + |objective|``, for the
#: whole set in :func:`path_fit` (its fit predicts the held-out fold: to rounding)
PATH_TOL = 1e-13
#: convergence of the inner parts in :func:`path_fit` (their fits only score a strength)
INNER_TOL = 1e-8


def one_blas_thread(fn):
    """Run ``fn`` with one BLAS thread: the small batched products here are slower threaded,
    and on an oversubscribed machine two spinning BLAS threads made one fit 50x slower."""
    from threadpoolctl import threadpool_limits

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def with_intercept(x: np.ndarray) -> np.ndarray:
    """``x`` with a trailing column of ones."""
    x = np.asarray(x, dtype=np.float64)
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def _products(x: np.ndarray) -> np.ndarray:
    """The products ``x_ia x_ib`` (``a <= b``, row-major upper triangle) of every row."""
    q = x.shape[-1]
    out = np.empty(x.shape[:-1] + (q * (q + 1) // 2,), dtype=x.dtype)
    start = 0
    for a in range(q):
        np.multiply(x[..., a:a + 1], x[..., a:], out=out[..., start:start + q - a])
        start += q - a
    return out


@functools.cache
def _gather(q: int, k1: int) -> np.ndarray:
    """Where Hessian entry ``(a k1 + k, b k1 + m)`` sits in the accumulated ``(pairs, table)``
    terms of :func:`path_fit`: class pair ``(min(k, m), max(k, m))``, then the table column of
    coordinates ``(a, b)`` (the upper triangle with several class pairs, else all ``q^2``)."""
    ka, kb = np.triu_indices(k1)
    pair = np.zeros((k1, k1), dtype=np.int64)
    pair[ka, kb] = pair[kb, ka] = np.arange(len(ka))
    if k1 > 1:
        iu = np.triu_indices(q)
        col = np.zeros((q, q), dtype=np.int64)
        col[iu] = col[iu[1], iu[0]] = np.arange(len(iu[0]))
        width = len(iu[0])
    else:
        col, width = np.arange(q * q).reshape(q, q), q * q
    a, k, b, m = np.meshgrid(np.arange(q), np.arange(k1), np.arange(q), np.arange(k1),
                             indexing="ij")
    return (pair[k, m] * width + col[a, b]).reshape(-1)


def log_softmax_ref(eta: np.ndarray) -> np.ndarray:
    """``log q(c | x)`` ``(..., n, K)`` from logits ``(..., n, K - 1)`` of the first ``K - 1``
    classes against the reference class."""
    full = np.concatenate([eta, np.zeros(eta.shape[:-1] + (1,))], axis=-1)
    top = full.max(axis=-1, keepdims=True)
    return full - top - np.log(np.exp(full - top).sum(axis=-1, keepdims=True))


def fit(x, y_onehot, lam, *, tol: float = PATH_TOL) -> np.ndarray:
    """Penalised maximum-likelihood weights ``(B, p + 1, K - 1)`` (last row: intercepts) of
    ``B`` problems (:func:`path_fit` with one strength and no inner parts).

    Parameters
    ----------
    x : array (B, n, p)
        Features of ``B`` problems (standardise them first: ``lam`` acts on their scale).
    y_onehot : array (B, n, K)
        One-hot labels (every class column present, possibly all zero).
    lam : float or array (B,)
        Ridge strength per problem (> 0 keeps separable problems finite).
    """
    x = np.asarray(x, dtype=np.float64)
    y_onehot = np.asarray(y_onehot)
    b, n, _ = x.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (b,))
    rows = y_onehot.sum(axis=-1) > 0
    _, weights, _ = path_fit(x, y_onehot.argmax(axis=-1), np.zeros((b, n), dtype=np.int64),
                             lam[:, None], y_onehot.shape[-1], rows=rows, n_groups=0, tol=tol)
    return weights


def log_proba(w: np.ndarray, x) -> np.ndarray:
    """``log q(c | x)`` ``(B, n, K)`` for weights from :func:`fit`."""
    return log_softmax_ref(np.matmul(with_intercept(x), w))


def _softmax_ref(eta):
    """Probabilities of classes ``0..K-2`` and ``log Z`` from logits ``(..., K - 1, n)``
    (classes on the second-to-last axis; the reference class has logit 0)."""
    top = eta[..., 0, :].clip(min=0.0)
    for k in range(1, eta.shape[-2]):
        np.maximum(top, eta[..., k, :], out=top)
    e = np.exp(eta - top[..., None, :])
    total = np.exp(-top)
    for k in range(eta.shape[-2]):
        total += e[..., k, :]
    e /= total[..., None, :]
    return e, top + np.log(total)


def path_fit(z, y, groups, lams, n_classes: int, *, rows=None, n_groups=None,
             tol: float = PATH_TOL, inner_tol: float = INNER_TOL, max_iter: int = 100):
    """Warm-started ridge paths with inner cross-validation, many feature sets in one batch.

    Set ``s`` has features ``z[s]`` ``(n, p)``, class codes ``y[s]`` ``(n,)`` (``0..K-1``,
    ``K = n_classes``), the rows ``rows[s]`` in use (default: all) and their inner fold ids
    ``groups[s]`` (``0..J-1``, ``J = n_groups``, default ``groups.max() + 1``); ``lams``
    ``(L,)`` or ``(S, L)`` the ridge strengths of its path, strong to weak. At every strength
    the ``J + 1`` problems of each set — the whole set and each inner training part (its rows
    but one group) — minimise the ridge-penalised negative log-likelihood (intercepts free),
    all problems of all sets in one batch, by Newton's method with step halving:

    * the inner parts along the path, each from its own solution at the previous strength
      (zero at the first); the whole set only at the strength of the lowest inner score
      (the first if tied), from the mean of its parts' solutions there (without inner parts:
      the whole set along the path);

    * the first step at a strength reuses the Hessian formed last at the previous one (the
      data terms at that point are the same; only the ridge differs);
    * the rows of a set are sorted by group, so a part's Hessian skips its held-out group and
      one matrix product per group of the class weights with the table of the rows'
      coordinate products gives the Hessians of all of the set's problems (single precision:
      the Hessian only directs the step; gradients, objectives and so the minimisers are
      double precision);
    * a problem stops when half its Newton decrement ``g' H^-1 g / 2`` is at most
      ``tol (1 + objective)`` (the whole set) or ``inner_tol (1 + objective)`` (the inner
      parts, which only score a strength), measured first with the last Hessian formed and,
      failing that, with a new one.

    Returns ``scores`` ``(S, L)`` = the summed held-out negative log-likelihood of the inner
    parts on their held-out group (the inner cross-validation score), ``weights``
    ``(S, p + 1, K - 1)`` of the whole sets at the chosen strength (without inner parts: at
    the last one; intercept last) and the Newton steps taken at each strength (and for the
    whole sets).
    """
    z = np.asarray(z, dtype=np.float64)
    single = z.ndim == 2
    if single:
        z, y, groups = z[None], np.asarray(y)[None], np.asarray(groups)[None]
        rows = None if rows is None else np.asarray(rows)[None]
    n_sets, n, p = z.shape
    y = np.asarray(y, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    rows = np.ones((n_sets, n), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    n_groups = int(groups[rows].max()) + 1 if n_groups is None else n_groups
    lams = np.broadcast_to(np.asarray(lams, dtype=np.float64).reshape(
        (-1,) if np.ndim(lams) == 1 else (n_sets, -1)), (n_sets, np.shape(lams)[-1]))
    # sort each set's rows: unused rows first, then group by group
    key = np.where(rows, groups if n_groups else 0, -1)
    order = np.argsort(key, axis=1, kind="stable")
    key = np.take_along_axis(key, order, axis=1)
    z1 = with_intercept(np.take_along_axis(z, order[..., None], axis=1))
    y = np.take_along_axis(y, order, axis=1)
    n_blocks = max(n_groups, 1)
    # rows of group g: edges[s, g]..edges[s, g + 1] (no groups: every used row)
    edges = np.stack([np.searchsorted(k, np.arange(n_blocks + 1)) for k in key])
    q, k1, b = p + 1, n_classes - 1, n_groups + 1
    nq = q * k1
    yk = (np.arange(k1)[:, None] == y[:, None, :]).astype(np.float64)    # (S, k1, n)
    held = key[:, None, :] == np.arange(n_groups)[None, :, None]         # (S, J, n)
    s = np.concatenate([(key >= 0)[:, None] & ~held, (key >= 0)[:, None]], axis=1)
    s = s.astype(np.float64)                                             # (S, b, n)
    tols = np.r_[np.full(n_groups, inner_tol), tol]
    z32 = z1.astype(np.float32)
    zt = np.ascontiguousarray(z1.transpose(0, 2, 1))
    ka, kb = np.triu_indices(k1)
    gather = _gather(q, k1)
    pen = np.kron(np.r_[np.ones(q - 1), 0.0], np.ones(k1))
    diag = np.arange(nq)
    w = np.zeros((n_sets, b, q, k1))
    data_hess = np.zeros((n_sets, b, nq, nq), dtype=np.float32)
    has = np.zeros((n_sets, b), dtype=bool)      # a data Hessian was formed
    fresh = np.zeros((n_sets, b), dtype=bool)    # ... at the current point

    def take(a, sets):
        """``a[sets]``, without a copy when ``sets`` is every set."""
        return a if len(sets) == n_sets else a[sets]

    def evaluate(sets, w, lam):
        """Probabilities ``(m, b, k1, n)``, per-row NLL and objectives of every problem of
        ``sets``."""
        m = len(sets)
        wt = w.transpose(0, 1, 3, 2).reshape(m, b * k1, q)
        eta = np.matmul(wt, take(zt, sets)).reshape(m, b, k1, n)
        prob, log_z = _softmax_ref(eta)
        nll = log_z - (take(yk, sets)[:, None] * eta).sum(axis=-2)
        obj = (take(s, sets) * nll).sum(axis=-1) + 0.5 * lam[sets, None] * (
            w.reshape(m, b, nq) ** 2 @ pen)
        return prob, nll, obj

    quads = {}

    def hessians(st, parts):
        """Data Hessians of the problems ``parts`` of set ``st`` at their current points,
        summed group by group over each problem's rows: block ``(k, m)`` is
        ``z' diag(c_km) z``, from the table of the rows' coordinate products when there are
        several class pairs (one product per group for all of them), directly otherwise."""
        pf = prob[st, parts]
        pf = np.where(pf < FLUSH, 0.0, pf).astype(np.float32)             # (a, k1, n)
        coef = -pf[:, ka] * pf[:, kb]
        coef[:, ka == kb] += pf                                           # (a, pairs, n)
        if k1 > 1 and st not in quads:
            quads[st] = _products(z32[st])
        acc = np.zeros((len(parts), len(gather) if k1 == 1 else len(ka) * quads[st].shape[1]),
                       dtype=np.float32)
        for g in range(n_blocks):
            use = (parts == n_groups) | (parts != g)     # the problems that hold group g
            lo, hi = edges[st, g], edges[st, g + 1]
            if not use.any() or hi == lo:
                continue
            c = coef[use][..., lo:hi]
            if k1 > 1:
                acc[use] += (c.reshape(-1, hi - lo) @ quads[st][lo:hi]).reshape(
                    int(use.sum()), -1)
            else:
                zg = z32[st, lo:hi]
                acc[use] += np.matmul(zg.T * c, zg).reshape(int(use.sum()), -1)
        return acc[:, gather].reshape(len(parts), nq, nq)

    def solve(h, lam, g):
        h = h.astype(np.float64)
        h[:, diag, diag] += lam[:, None] * pen + 1e-9 * (1.0 + h[:, diag, diag])
        return np.linalg.solve(h, g[..., None])[..., 0]

    def run(active, lam):
        """Newton's method with step halving on the problems ``active`` ``(S, b)``."""
        nonlocal w, prob, nll, obj
        steps = 0
        for _ in range(max_iter):
            sets = np.flatnonzero(active.any(axis=1))
            r = take(s, sets)[:, :, None] * (take(prob, sets) - take(yk, sets)[:, None])
            g = np.matmul(r.reshape(len(sets), b * k1, n), take(z1, sets))
            g = g.reshape(len(sets), b, k1, q).transpose(0, 1, 3, 2)
            g = g + lam[sets, None, None, None] * take(w, sets) * pen.reshape(q, k1)
            si, pi = np.nonzero(active[sets])
            st_i = sets[si]
            g = g[si, pi].reshape(-1, nq)
            limit = tols[pi] * (1.0 + np.abs(obj[st_i, pi]))
            dec = np.full(len(si), np.inf)
            step = np.zeros((len(si), nq))
            old = has[st_i, pi]
            if old.any():
                step[old] = solve(data_hess[st_i[old], pi[old]], lam[st_i[old]], g[old])
                dec[old] = 0.5 * (step[old] * g[old]).sum(axis=-1)
            need = ~fresh[st_i, pi] & (dec > limit)
            for st in np.unique(st_i[need]):
                mine = need & (st_i == st)
                data_hess[st, pi[mine]] = hessians(st, pi[mine])
            if need.any():
                fresh[st_i[need], pi[need]] = has[st_i[need], pi[need]] = True
                step[need] = solve(data_hess[st_i[need], pi[need]], lam[st_i[need]], g[need])
                dec[need] = 0.5 * (step[need] * g[need]).sum(axis=-1)
            go = dec > limit
            active[st_i[~go], pi[~go]] = False
            if not go.any():
                break
            steps += 1
            sets = np.flatnonzero(active.any(axis=1))
            full = np.zeros((n_sets, b, nq))
            full[st_i[go], pi[go]] = step[go]
            full = full[sets].reshape(len(sets), b, q, k1)
            scale = np.ones((len(sets), b))
            act = active[sets]
            o = take(obj, sets)
            for _ in range(40):  # halve the step where the objective did not decrease
                trial = take(w, sets) - scale[..., None, None] * full
                t_prob, t_nll, t_obj = evaluate(sets, trial, lam)
                worse = act & ~(t_obj <= o + 1e-13 * np.abs(o))
                if not worse.any():
                    break
                scale = np.where(worse, scale / 2, scale)
            moved = act & ~worse
            ms, mp = np.nonzero(moved)
            w[sets[ms], mp] = trial[ms, mp]
            prob[sets[ms], mp] = t_prob[ms, mp]
            nll[sets[ms], mp] = t_nll[ms, mp]
            obj[sets[ms], mp] = t_obj[ms, mp]
            fresh[sets] &= ~moved
            active[sets] = moved
            if not active.any():
                break
        return steps

    everyone = np.arange(n_sets)
    n_lams = lams.shape[1]
    path = np.zeros((n_sets, b), dtype=bool)      # the problems fitted along the path
    path[:, :n_groups] = True
    path[:, -1] = n_groups == 0
    scores = np.zeros((n_sets, n_lams))
    inner_w = np.zeros((n_sets, n_lams, n_groups, q, k1))
    n_steps = []
    prob = nll = obj = None
    for li in range(n_lams):
        lam = lams[:, li]
        prob, nll, obj = evaluate(everyone, w, lam)
        fresh[:] = has                  # the last Hessian: same data terms, another ridge
        n_steps.append(run(path.copy(), lam))
        scores[:, li] = (held * nll[:, :n_groups]).sum(axis=(1, 2))
        inner_w[:, li] = w[:, :n_groups]
    if n_groups:
        # the whole set at the strength of the lowest inner score, from its parts' mean
        best = scores.argmin(axis=1)
        lam = lams[everyone, best]
        w[:, -1] = inner_w[everyone, best].mean(axis=1)
        prob, nll, obj = evaluate(everyone, w, lam)
        fresh[:, -1] = False
        whole = np.zeros((n_sets, b), dtype=bool)
        whole[:, -1] = True
        n_steps.append(run(whole, lam))
    if single:
        return scores[0], w[0, -1], n_steps
    return scores, w[:, -1], n_steps
