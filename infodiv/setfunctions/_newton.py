"""Compiled damped Newton fit of softmax(a·z + c), one problem at a time (numba).

The home of the calibration formulas behind
:func:`~infodiv.setfunctions.calibration.fit_calibration`: the mean cross-entropy of
softmax(a·z + c) (c_0 = 0), its gradient and Hessian in θ = (a, c_1, ..., c_{C−1}) — the
multinomial-logistic ones with per-option features φ_j = (z_j, e_j):
∇ = mean_i Σ_j (q_ij − 1[j=y_i]) φ_ij,
H = mean_i [Σ_j q_ij φ_ij φ_ijᵀ − (Σ_j q_ij φ_ij)(Σ_j q_ij φ_ij)ᵀ] — the cold start (one
Newton step from the label prior) and the damped Newton iterations.

The problems of a batch advance in rounds (one evaluation each): the exponentials and
logarithms of a round are one vectorised numpy call over all its problems, everything else —
logits, loss, gradient, Hessian, the step and its line search — compiled passes per problem,
so that the few dozen candidate sets of a greedy step cost little beyond their arithmetic
(numpy array passes cost more in call overhead than in arithmetic at that size). A problem's
iterates depend on its own data only: its fit is the same in any batch and chunking.

Every softmax is evaluated with its largest logit subtracted per example (log-sum-exp), so
exp never overflows, whatever the sign of a.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["newton_fit", "prior_steps"]


#: sums over examples may be reordered (vectorised reductions; the order depends on n only):
#: rounding-level changes of the iterates, every quantity stays float64
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, fastmath=_FAST)
def _shift(z, y, zs, w):
    """zs = z − max_j z_j per example (the loss is invariant to such shifts); returns
    Σ_i zs_{y_i, i}, the RMS spread of zs across options (the gradient scale of ∂/∂a) and
    max |zs| (bounds logit changes). ``w`` [n]: scratch."""
    c, n = z.shape
    w[:] = z[0]
    for j in range(1, c):
        for i in range(n):
            w[i] = max(w[i], z[j, i])
    sq = low = 0.0
    for j in range(c):
        for i in range(n):
            v = z[j, i] - w[i]
            zs[j, i] = v
            sq += v * v
            low = min(low, v)
    w[:] = zs[0]
    for j in range(1, c):
        w += zs[j]
    msq = szy = 0.0
    for i in range(n):
        msq += w[i] * w[i]
        szy += zs[y[i], i]
    spread = sq / (c * n) - msq / (c * c * n)
    return szy, np.sqrt(max(spread, 1e-24)), -low


@njit(cache=True)
def _grad_norm(g, scale0):
    """Largest |∂loss/∂θ_j| / scale_j (scale_0: the spread of zs; 1 for the offsets)."""
    out = abs(g[0]) / scale0
    for j in range(1, g.shape[0]):
        out = max(out, abs(g[j]))
    return out


@njit(cache=True)
def _solve(h, rhs, ridge, m, out):
    """out = (h + ridge·I)⁻¹ rhs by Gaussian elimination with partial pivoting (C×C)."""
    c = rhs.shape[0]
    for i in range(c):
        out[i] = rhs[i]
        for j in range(c):
            m[i, j] = h[i, j]
        m[i, i] += ridge
    for col in range(c):
        piv = col
        for r in range(col + 1, c):
            if abs(m[r, col]) > abs(m[piv, col]):
                piv = r
        if piv != col:
            for j in range(c):
                m[col, j], m[piv, j] = m[piv, j], m[col, j]
            out[col], out[piv] = out[piv], out[col]
        for r in range(col + 1, c):
            f = m[r, col] / m[col, col]
            for j in range(col, c):
                m[r, j] -= f * m[col, j]
            out[r] -= f * out[col]
    for i in range(c - 1, -1, -1):
        acc = out[i]
        for j in range(i + 1, c):
            acc -= m[i, j] * out[j]
        out[i] = acc / m[i, i]


@njit(cache=True, fastmath=_FAST)
def _prior(zs, szy, counts, a, off, p, h, g, m, step, w):
    """Cold start of problem ``p``: one Newton step from the label prior θ₀ = (a = 0,
    c_j = log π_j/π_0), written into ``a[p], off[p]``.

    At θ₀ every q_ij = π_j (π = counts / n), so the gradient and Hessian need no exponential:
    ∂/∂c_j = nπ_j − n_j = 0, ∂/∂a = Σ_j π_j S_j − Σ_i z_{i,y_i} with S_j = Σ_i z_ij;
    H_aa = Σ_i Var_π(z_i·), H_{a,c_j} = π_j (S_j − Σ_l π_l S_l), H_{c_j,c_k} = n(π_j δ_jk −
    π_j π_k). The step is the discriminant-analysis estimate of (a, c) (the logistic model's
    linearisation at the prior). Where it is undefined (an empty class, constant logits, a
    non-finite step) the problem keeps the given start. ``w`` [n]: scratch.
    """
    c, n = zs.shape
    for j in range(c):
        if counts[j] <= 0:
            return
    second = ps = ssq = 0.0
    for j in range(c):
        sj = 0.0
        for i in range(n):
            sj += zs[j, i]
            second += counts[j] / n * zs[j, i] * zs[j, i]
        g[j] = sj  # S_j (held in g until the gradient is formed)
        ps += sj * counts[j] / n
    w[:] = 0.0
    for j in range(c):
        pj = counts[j] / n
        for i in range(n):
            w[i] += pj * zs[j, i]
    for i in range(n):
        ssq += w[i] * w[i]
    h[0, 0] = second - ssq
    for j in range(1, c):
        pj = counts[j] / n
        h[0, j] = h[j, 0] = pj * (g[j] - ps)
        for k in range(1, c):
            h[j, k] = n * ((pj if j == k else 0.0) - pj * counts[k] / n)
    if not h[0, 0] > 1e-12 * max(abs(second), 2.2250738585072014e-308):
        return
    g[:] = 0.0
    g[0] = szy - ps  # −∇ at θ₀
    _solve(h, g, 0.0, m, step)
    for j in range(c):
        if not np.isfinite(step[j]):
            return
    a[p] = step[0]
    for j in range(1, c):
        off[p, j] = np.log(counts[j] / counts[0]) + step[j]


@njit(cache=True)
def prior_steps(zs, szy, counts, a, off):
    """Batched cold start (:func:`_prior`) of problems ``zs`` [K, C, n] from ``(a, off)``;
    returns new arrays."""
    k, c, n = zs.shape
    a, off = a.copy(), off.copy()
    h, m = np.empty((c, c)), np.empty((c, c))
    g, step, w = np.empty(c), np.empty(c), np.empty(n)
    for p in range(k):
        _prior(zs[p], szy[p], counts, a, off, p, h, g, m, step, w)
    return a, off


_START, _TRIAL, _DONE = 0, 1, 2


@njit(cache=True, fastmath=_FAST)
def _setup(z, y, counts, a, off, cold, zs, szy, scale0, span):
    """Per problem: z shifted per example by its maximum into ``zs`` (the loss is invariant
    to such shifts), Σ_i zs_{y_i,i}, the gradient scale of ∂/∂a (the RMS spread of zs across
    options) and max |zs| (bounds logit changes); ``cold``: the prior step into (a, off)."""
    k, c, n = z.shape
    h, m = np.empty((c, c)), np.empty((c, c))
    g, step, w = np.empty(c), np.empty(c), np.empty(n)
    for p in range(k):
        szy[p], scale0[p], span[p] = _shift(z[p], y, zs[p], w)
        if cold:
            _prior(zs[p], szy[p], counts, a, off, p, h, g, m, step, w)


@njit(cache=True, fastmath=_FAST)
def _logits(zs, rows, ta, to, e, mx):
    """For the problems ``rows``: t_ij = ta·zs_ij + to_j − max_j to_j, its per-example maximum
    into ``mx`` and t − mx (≤ 0, exponentiated next) into ``e``."""
    _, c, n = zs.shape
    for r in range(rows.shape[0]):
        p = rows[r]
        om = to[p, 0]
        for j in range(1, c):
            om = max(om, to[p, j])
        slope = ta[p]
        for j in range(c):
            cm = to[p, j] - om
            for i in range(n):
                e[r, j, i] = slope * zs[p, j, i] + cm
        mx[r, :] = e[r, 0, :]
        for j in range(1, c):
            for i in range(n):
                mx[r, i] = max(mx[r, i], e[r, j, i])
        for j in range(c):
            for i in range(n):
                e[r, j, i] -= mx[r, i]


@njit(cache=True, fastmath=_FAST)
def _sums(e, s, nrows):
    _, c, _ = e.shape
    for r in range(nrows):
        s[r, :] = e[r, 0, :]
        for j in range(1, c):
            s[r, :] += e[r, j, :]


@njit(cache=True, fastmath=_FAST)
def _terms(zs, szy, counts, p, a, off, e, s, logs, mx, r, g, h, inv, mz):
    """Mean cross-entropy of softmax(a·zs_p + off) → returned, its gradient into ``g`` [C]
    (g[0] = ∂/∂a, g[j] = ∂/∂c_j) and Hessian into ``h`` [C, C], from row ``r`` of
    e = exp(t − max t), s = Σ_j e, logs = log s and mx = max t (per example); ``inv``,
    ``mz`` [n]: scratch (1/s and E_q[z] per example)."""
    _, c, n = zs.shape
    om = off[0]
    for j in range(1, c):
        om = max(om, off[j])
    h[:, :] = 0.0
    lsum = 0.0
    for i in range(n):
        inv[i] = 1.0 / s[r, i]
        lsum += logs[r, i] + mx[r, i]
    mz[:] = 0.0
    for j in range(c):
        for i in range(n):
            mz[i] += e[r, j, i] * inv[i] * zs[p, j, i]
    g0 = h00 = 0.0
    for j in range(c):
        for i in range(n):
            h00 += e[r, j, i] * inv[i] * zs[p, j, i] * zs[p, j, i]
    for i in range(n):
        g0 += mz[i]
        h00 -= mz[i] * mz[i]
    g[0], h[0, 0] = g0, h00
    for l in range(1, c):
        gl = h0l = 0.0
        for i in range(n):
            q = e[r, l, i] * inv[i]
            gl += q
            h0l += q * (zs[p, l, i] - mz[i])
        g[l], h[0, l] = gl, h0l
        h[l, l] += gl
        for m in range(1, c):
            hlm = 0.0
            for i in range(n):
                hlm += e[r, l, i] * e[r, m, i] * inv[i] * inv[i]
            h[l, m] -= hlm
    cmc = 0.0
    for j in range(c):
        cmc += (off[j] - om) * counts[j]
    g[0] -= szy[p]
    for j in range(1, c):
        g[j] -= counts[j]
    for j in range(c):
        g[j] /= n
        for m in range(c):
            h[j, m] /= n
    for l in range(1, c):
        h[l, 0] = h[0, l]
    return (lsum - a * szy[p] - cmc) / n


@njit(cache=True)
def _advance(zs, szy, counts, scale0, span, rows, e, s, logs, mx, state, a, off, loss, gnorm,
             ta, to, d, step, it, halvings, max_iter, gtol):
    """One round of every problem in ``rows`` (their trial points just evaluated): accept or
    halve the step, test convergence and set the next trial point; returns the problems that
    still need an evaluation."""
    c = zs.shape[1]
    gn, hn, m, rhs = np.empty(c), np.empty((c, c)), np.empty((c, c)), np.empty(c)
    inv, mz = np.empty(zs.shape[2]), np.empty(zs.shape[2])
    nxt = np.empty(rows.shape[0], dtype=np.int64)
    count = 0
    for r in range(rows.shape[0]):
        p = rows[r]
        nl = _terms(zs, szy, counts, p, ta[p], to[p], e, s, logs, mx, r, gn, hn, inv, mz)
        if state[p] == _START:
            accept = True
        else:
            accept = nl <= loss[p] + 1e-12 * (1.0 + abs(loss[p]))
            for j in range(c):
                accept = accept and np.isfinite(gn[j])
        if accept:
            a[p], loss[p] = ta[p], nl
            off[p, :] = to[p]
            gnorm[p] = _grad_norm(gn, scale0[p])
            if not (it[p] < max_iter and gnorm[p] > gtol):  # (NaN: a failed evaluation stops)
                state[p] = _DONE
                continue
            tr = 0.0
            for j in range(c):
                tr += hn[j, j]
                rhs[j] = -gn[j]
            _solve(hn, rhs, 1e-10 * tr + 1e-300, m, d[p])
            size = abs(a[p]) * span[p]
            move = abs(d[p, 0]) * span[p]
            big = step_big = 0.0
            for j in range(c):
                big = max(big, abs(off[p, j]))
                if j > 0:
                    step_big = max(step_big, abs(d[p, j]))
            step[p] = min(1.0, max(30.0, size + big) / max(move + step_big, 1e-300))
            it[p] += 1
            halvings[p] = 0
            if not np.isfinite(move + step_big):
                gnorm[p], state[p] = np.inf, _DONE
                continue
        else:
            halvings[p] += 1
            if halvings[p] == 30:  # no decrease along the Newton direction: give up
                gnorm[p], state[p] = np.inf, _DONE
                continue
            step[p] /= 2
        state[p] = _TRIAL
        ta[p] = a[p] + step[p] * d[p, 0]
        to[p, 0] = off[p, 0]
        for j in range(1, c):
            to[p, j] = off[p, j] + step[p] * d[p, j]
        nxt[count] = p
        count += 1
    return nxt[:count]


def newton_fit(z, y, counts, a, off, cold, max_iter, gtol, gnorm, chunk_elements=1 << 17):
    """Fit every problem ``z[p]`` [C, n] in place of ``a[p], off[p]`` (off[:, 0] = 0); the
    scaled gradient norm at the returned point goes to ``gnorm[p]`` (inf: stalled). Returns
    the largest number of Newton steps taken.

    From the start (``cold``: :func:`_prior`), each step is the Newton direction −H⁻¹∇ with
    a ridge of 1e-10·tr(H) (H stays invertible when z is constant), capped so that the
    logits change by at most max(30, their present size) (a saturated softmax gives huge
    steps) and halved until the loss does not increase (at most 30 halvings, else the problem
    stalls); a problem stops when its scaled gradient is at most ``gtol`` or after
    ``max_iter`` steps. Problems advance in rounds over chunks of about ``chunk_elements``
    logits: the exponentials and logarithms of a round are one vectorised numpy call each,
    every other part of an evaluation one compiled pass per problem.
    """
    k, c, n = z.shape
    size = min(k, max(1, chunk_elements // (c * n)))
    zs, e = np.empty((size, c, n)), np.empty((size, c, n))
    s, logs, mx = np.empty((size, n)), np.empty((size, n)), np.empty((size, n))
    most = 0
    for lo in range(0, k, size):
        sl = slice(lo, min(k, lo + size))
        kk = sl.stop - lo
        szy, scale0, span = np.empty(kk), np.empty(kk), np.empty(kk)
        ca, co = a[sl], off[sl]   # views: fitted in place
        _setup(z[sl], y, counts, ca, co, cold, zs, szy, scale0, span)
        state = np.full(kk, _START, dtype=np.int64)
        it, halvings = np.zeros(kk, dtype=np.int64), np.zeros(kk, dtype=np.int64)
        loss, step, d = np.empty(kk), np.empty(kk), np.empty((kk, c))
        ta, to = ca.copy(), co.copy()   # the trial point of each problem
        gn = gnorm[sl]
        rows = np.arange(kk)
        while rows.size:
            m = rows.size
            _logits(zs, rows, ta, to, e, mx)
            np.exp(e[:m], out=e[:m])
            _sums(e, s, m)
            np.log(s[:m], out=logs[:m])
            rows = _advance(zs, szy, counts, scale0, span, rows, e, s, logs, mx, state, ca, co,
                            loss, gn, ta, to, d, step, it, halvings, max_iter, gtol)
        most = max(most, int(it.max(initial=0)))
    return most
