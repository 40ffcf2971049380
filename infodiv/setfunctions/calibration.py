"""Readout metrics and the batched calibration fit behind the ``*_calibrated`` objectives.

``readout_scores`` scores logits laid out ``[..., C, n]``; ``fit_calibration`` fits the inverse
temperature ``a`` and per-option offsets ``c`` (c_0 = 0) of softmax(a·z + c) by minimising the
mean cross-entropy with a batched damped Newton method, for many candidate sets at once
(warm-started from the previous greedy step), with a float64 gradient-norm convergence check.
"""

from __future__ import annotations

import numpy as np

from estimators.numerics import log_softmax, logsumexp
from estimators.validation import to_base

__all__ = ["READOUT_METRICS", "readout_scores", "fit_calibration"]

READOUT_METRICS = ("accuracy", "cross_entropy", "brier")


# ---------------------------------------------------------------------------------- readouts
# Internally logits are laid out [..., C, n] (options before examples) so that reductions over
# the few options run as vectorised element-wise operations over the many examples.
def readout_scores(z: np.ndarray, y: np.ndarray, metric: str, overwrite=False) -> np.ndarray:
    """Per-example metric of logits ``z`` ``[..., C, n]`` for labels ``y`` ``[n]`` → ``[..., n]``.

    accuracy: 1/|argmax set| when y is among the maximal logits (ties split evenly), else 0;
    cross_entropy: −log2 softmax(z)_y; brier: Σ_j (softmax(z)_j − 1[j = y])².
    ``overwrite``: z is scratch and may be overwritten.
    """
    mask = np.arange(z.shape[-2])[:, None] == y[None, :]  # [C, n]
    if metric == "accuracy":
        top = z >= z.max(axis=-2, keepdims=True)
        return (top & mask).any(axis=-2) / top.sum(axis=-2)
    if metric == "cross_entropy":  # log-sum-exp minus the label's logit
        zy = z[..., y, np.arange(z.shape[-1])]
        return to_base(logsumexp(z, axis=-2, overwrite=overwrite) - zy, 2)
    logq = log_softmax(z, axis=-2)
    ly = np.where(mask, logq, 0.0).sum(axis=-2)
    if metric == "brier":
        return (np.exp(2.0 * logq)).sum(axis=-2) - 2.0 * np.exp(ly) + 1.0
    raise ValueError(f"unknown readout metric {metric!r}; choose from {READOUT_METRICS}")


def _calibration_terms(zs, szy, counts, a, off, hess, work):
    """Mean cross-entropy of softmax(a·z + c), its gradient and (optionally) Hessian in θ.

    ``zs`` ``[K, C, n]`` is z shifted per example by max_j z_ij (the loss is invariant to such
    shifts and a·zs + c − max c ≤ 0 for a ≥ 0, so exp cannot overflow); ``szy`` ``[K]`` is
    Σ_i zs_{i,y_i}; ``counts`` ``[C]`` the label counts. ``hess``: True, False, or a pair
    ``(scale, gtol)``: compute the Hessian only when some scaled gradient exceeds ``gtol``.
    ``work`` ``[3, ≥K, C, n]``: scratch arrays (fresh large arrays cost page faults).
    Returns ``(loss [K], grad [K, C], hess [K, C, C] or None)``; grad[:, 0] is ∂/∂a and
    grad[:, j] is ∂/∂c_j (grad[:, 0] of the offsets is never used: c_0 = 0).
    """
    k, c, n = zs.shape
    cm = off - off.max(axis=1, keepdims=True)
    # q_ij = e_ij·E_j / s_i with e = exp(a·zs) ≤ 1 and E = exp(c − max c) ≤ 1: the offsets
    # enter through [K, C] weights, which saves passes over the [K, C, n] arrays
    for exact in (bool((a < 0).any()), True):
        e = np.multiply(zs, a[:, None, None], out=work[0, :k])
        shift, weights = 0.0, np.exp(cm)
        if exact:  # a < 0 (a·zs unbounded above) or every option underflows: shift by the max
            e += cm[:, :, None]
            m = e.max(axis=1)
            e -= m[:, None, :]
            shift, weights = m.sum(axis=1), np.ones((k, c))
        np.exp(e, out=e)
        s = np.matmul(weights[:, None, :], e)[:, 0]
        if exact or s.min() > 1e-150:  # (keeps 1/s and its square finite)
            break
    loss = (np.log(s).sum(axis=1) + shift - a * szy - cm @ counts) / n
    r = 1.0 / s
    ez = np.multiply(e, zs, out=work[1, :k])
    qsum = weights * np.matmul(e, r[:, :, None])[..., 0]  # Σ_i q_ij
    qzsum = weights * np.matmul(ez, r[:, :, None])[..., 0]  # Σ_i q_ij z_ij
    grad = np.empty((k, c))
    grad[:, 1:] = (qsum[:, 1:] - counts[1:]) / n
    grad[:, 0] = (qzsum.sum(axis=1) - szy) / n
    if hess is False:
        return loss, grad, None
    need = np.ones(k, dtype=bool) if hess is True else _grad_norm(grad, hess[0]) > hess[1]
    if not need.any():
        return loss, grad, None
    if need.all():
        return loss, grad, _hessian(e, ez, zs, weights, r, qsum, qzsum, work[2, :k]) / n
    h = np.full((k, c, c), np.nan)  # converged rows need no Newton step
    m = int(need.sum())
    h[need] = _hessian(e[need], ez[need], zs[need], weights[need], r[need], qsum[need],
                       qzsum[need], work[2, :m]) / n
    return loss, grad, h


def _hessian(e, ez, zs, w, r, qsum, qzsum, scratch):
    """Σ_i of the per-example Hessians, from e, e·z, the option weights w and r = 1/s."""
    k, c, _ = e.shape
    mz = r * np.matmul(w[:, None, :], ez)[:, 0]  # E_q[z_i] per example
    h = np.empty((k, c, c))
    h[:, 0, 0] = ((w * np.einsum("kcn,kcn,kn->kc", ez, zs, r)).sum(axis=1)
                  - np.einsum("kn,kn->k", mz, mz))
    h[:, 0, 1:] = (qzsum - w * np.matmul(e, (r * mz)[:, :, None])[..., 0])[:, 1:]
    h[:, 1:, 0] = h[:, 0, 1:]
    er = np.multiply(e[:, 1:], r[:, None, :], out=scratch[:, 1:])
    h[:, 1:, 1:] = -w[:, 1:, None] * w[:, None, 1:] * np.einsum("kcn,kdn->kcd", er, er)
    idx = np.arange(1, c)
    h[:, idx, idx] += qsum[:, 1:]
    return h


def _grad_norm(grad, scale):
    """Largest |∂loss/∂θ_j| / scale_j (about the first-order change of the logits a·z + c)."""
    return np.abs(grad / scale).max(axis=1)


def fit_calibration(z, y, *, init=None, max_iter: int = 50, gtol: float = 1e-10,
                    return_info: bool = False, chunk_elements: int = 1 << 17):
    """Fit softmax(a·z + c) by damped Newton on the mean cross-entropy, batched over problems.

    The parameters are θ = (a, c_1, ..., c_{C−1}) with c_0 = 0; the gradient and Hessian of
    the mean cross-entropy are the multinomial-logistic ones with per-option features
    φ_j = (z_j, e_j): ∇ = mean_i Σ_j (q_ij − 1[j=y_i]) φ_ij and
    H = mean_i [Σ_j q_ij φ_ij φ_ijᵀ − (Σ_j q_ij φ_ij)(Σ_j q_ij φ_ij)ᵀ]. Each problem stops
    when its gradient — ∂/∂a divided by the RMS spread of z across options, so that both parts
    measure changes of the logits — is at most ``gtol`` in every coordinate (checked in
    float64 at the returned point). A Newton step is capped (saturated softmax) and halved
    until the loss does not increase; a ridge of 1e-10·tr(H) keeps H invertible when z is
    constant. With ``init`` (warm starts) the first step is computed in float32. Problems are
    solved in chunks of about ``chunk_elements`` logits (cache-sized arrays).

    Parameters
    ----------
    z : array ``[K, C, n]``
        K independent problems (e.g. one per greedy candidate) on the same labels.
    y : int array ``[n]``
    init : (a, c) or None
        Starting point (broadcast to K problems); default a = 1, c = 0. Greedy search starts
        every candidate from the current set's fit, which saves most Newton iterations.
    return_info : bool
        Also return a dict with ``converged`` ``[K]`` (bool), ``grad_norm`` ``[K]`` (scaled)
        and ``n_iter`` (the largest number of Newton steps taken).

    Returns
    -------
    a : ``[K]`` inverse temperatures (signed: a < 0 means the readout is anti-informative);
    c : ``[K, C]`` per-option offsets with c[:, 0] = 0.
    """
    z = np.asarray(z, dtype=np.float64)
    k, c, n = z.shape
    y = np.asarray(y)
    counts = np.bincount(y, minlength=c).astype(np.float64)
    cold = init is None
    if cold:
        a, off = np.ones(k), np.zeros((k, c))
    else:
        a = np.broadcast_to(np.asarray(init[0], dtype=np.float64), (k,)).copy()
        off = np.broadcast_to(np.asarray(init[1], dtype=np.float64), (k, c)).copy()
    off -= off[:, :1]
    gnorm, n_iter = np.empty(k), 0
    size = min(k, max(1, chunk_elements // (c * n)))
    work = np.empty((4, size, c, n))  # reused scratch (fresh large arrays cost page faults)
    rough = None if init is None else np.empty((4, size, c, n), dtype=np.float32)
    for lo in range(0, k, size):
        sl = slice(lo, lo + size)
        zs = np.subtract(z[sl], z[sl].max(axis=1, keepdims=True), out=work[3, :len(a[sl])])
        szy = zs[:, y, np.arange(n)].sum(axis=1)
        # gradient scale: ∂/∂a in units of the RMS spread of z across options, ∂/∂c_j as is
        scale = np.ones((zs.shape[0], c))
        spread = np.einsum("kcn,kcn->k", zs, zs) / (c * n) - (zs.mean(axis=1) ** 2).mean(axis=1)
        scale[:, 0] = np.sqrt(np.maximum(spread, 1e-24))
        if cold:
            a[sl], off[sl] = _prior_step(zs, szy, counts, a[sl], off[sl])
        a[sl], off[sl], gnorm[sl], it = _newton(zs, szy, counts, a[sl], off[sl], max_iter, gtol,
                                                work, -zs.min(axis=(1, 2)), scale, rough)
        n_iter = max(n_iter, it)
    if not return_info:
        return a, off
    return a, off, {"converged": gnorm <= gtol, "grad_norm": gnorm, "n_iter": n_iter}


def _prior_step(zs, szy, counts, a, off):
    """Cold start: one Newton step from the label prior θ₀ = (a = 0, c_j = log π_j/π_0).

    At θ₀ every q_ij = π_j (π = counts / n), so the gradient and Hessian need no exponential:
    ∂/∂c_j = nπ_j − n_j = 0, ∂/∂a = Σ_j π_j S_j − Σ_i z_{i,y_i} with S_j = Σ_i z_ij;
    H_aa = Σ_i Var_π(z_i·), H_{a,c_j} = π_j (S_j − Σ_l π_l S_l), H_{c_j,c_k} = n(π_j δ_jk −
    π_j π_k). The step is the discriminant-analysis estimate of (a, c) (the logistic model's
    linearisation at the prior), which leaves the damped Newton iterations about one step
    from convergence. Problems where it is undefined (an empty class, constant logits, a
    non-finite step) keep the given start ``(a, off)``.
    """
    k, c, n = zs.shape
    if (counts <= 0).any():
        return a, off
    pi = counts / n
    s = zs.sum(axis=2)                                   # [K, C]
    mean_z = np.matmul(pi, zs)                           # [K, n]: Σ_j π_j z_ij
    ps = s @ pi                                          # [K]
    second = np.einsum("j,kjn,kjn->k", pi, zs, zs)     # Σ_i Σ_j π_j z_ij²
    h = np.empty((k, c, c))
    h[:, 0, 0] = second - np.einsum("kn,kn->k", mean_z, mean_z)
    h[:, 0, 1:] = pi[1:] * (s[:, 1:] - ps[:, None])
    h[:, 1:, 0] = h[:, 0, 1:]
    h[:, 1:, 1:] = n * (np.diag(pi[1:]) - np.outer(pi[1:], pi[1:]))
    g = np.zeros((k, c))
    g[:, 0] = ps - szy
    with np.errstate(all="ignore"):
        ok = h[:, 0, 0] > 1e-12 * np.maximum(np.abs(second), np.finfo(float).tiny)
        step = np.zeros((k, c))
        if ok.any():
            step[ok] = -np.linalg.solve(h[ok], g[ok, :, None])[..., 0]
    ok &= np.isfinite(step).all(axis=1)
    a, off = a.copy(), off.copy()
    a[ok] = step[ok, 0]
    off[ok, 1:] = np.log(pi[1:] / pi[0]) + step[ok, 1:]
    return a, off


def _newton_step(h, g, a, off, span):
    """Newton direction −H⁻¹∇ (ridge 1e-10·tr H) and its largest safe step length ≤ 1.

    A (near-)singular H (saturated softmax) gives huge steps: one step may change the logits
    by at most max(30, their present size) before the loss test halves it.
    """
    c = h.shape[1]
    hr = h.copy()
    hr[:, np.arange(c), np.arange(c)] += 1e-10 * np.trace(h, axis1=1, axis2=2)[:, None] + 1e-300
    step = -np.linalg.solve(hr, g[..., None])[..., 0]
    size = np.abs(a) * span + np.abs(off).max(axis=1)
    move = np.abs(step[:, 0]) * span + np.abs(step[:, 1:]).max(axis=1)
    return step, np.minimum(1.0, np.maximum(30.0, size) / np.maximum(move, 1e-300))


def _newton(zs, szy, counts, a, off, max_iter, gtol, work, span, scale, rough=None):
    """Damped Newton on chunk ``zs``; ``span`` [K] = max |zs| bounds logit changes; converged
    when the gradient divided by ``scale`` [K, C] is at most ``gtol``.

    ``rough`` (float32 scratch like ``work``): take the first step from a float32 model (warm
    starts need only a ~1e-6 accurate first step; float32 halves its cost). Every later
    evaluation and the convergence check are float64; rows whose float32 step does not reduce
    the gradient restart from the initial point.
    """
    k, c = off.shape
    if rough is None:
        loss, g, h = _calibration_terms(zs, szy, counts, a, off, True, work)
    else:
        f32 = np.float32
        z32 = rough[3, :k]
        z32[...] = zs
        _, g, h = _calibration_terms(z32, szy, counts, a.astype(f32), off.astype(f32), True,
                                     rough)
        g0 = _grad_norm(g, scale)
        rows = np.flatnonzero(np.isfinite(g0) & np.isfinite(h).all(axis=(1, 2)) & (g0 > gtol))
        a0, off0 = a.copy(), off.copy()
        step, t = _newton_step(h[rows], g[rows], a[rows], off[rows], span[rows])
        a[rows] += t * step[:, 0]
        off[rows, 1:] += t[:, None] * step[:, 1:]
        loss, g, h = _calibration_terms(zs, szy, counts, a, off, (scale, gtol), work)
        if h is None:
            h = np.full((k, c, c), np.nan)
        bad = rows[~(np.isfinite(loss[rows]) & (_grad_norm(g[rows], scale[rows]) < g0[rows]))]
        if bad.size:
            a[bad], off[bad] = a0[bad], off0[bad]
            loss[bad], g[bad], h[bad] = _calibration_terms(zs[bad], szy[bad], counts, a[bad],
                                                           off[bad], True, work)
    gnorm = _grad_norm(g, scale)
    stalled = np.zeros(k, dtype=bool)
    for it in range(max_iter):
        rows = np.flatnonzero((gnorm > gtol) & ~stalled)  # NaN (failed evaluation): unconverged
        if rows.size == 0:
            return a, off, gnorm, it
        step, t = _newton_step(h[rows], g[rows], a[rows], off[rows], span[rows])
        pending = np.arange(rows.size)  # positions in rows whose step is not yet accepted
        for _ in range(30):
            r_ = rows[pending]
            na = a[r_] + t[pending] * step[pending, 0]
            no = off[r_].copy()
            no[:, 1:] += t[pending, None] * step[pending, 1:]
            sub = slice(None) if r_.size == k else r_
            nl, ng, nh = _calibration_terms(zs[sub], szy[sub], counts, na, no,
                                            (scale[r_], gtol), work)
            ok = (nl <= loss[r_] + 1e-12 * (1.0 + np.abs(loss[r_]))) & np.isfinite(ng).all(axis=1)
            acc = r_[ok]
            a[acc], off[acc], loss[acc], g[acc] = na[ok], no[ok], nl[ok], ng[ok]
            if nh is not None:
                h[acc] = nh[ok]  # (NaN rows: converged, never used)
            pending = pending[~ok]
            if pending.size == 0:
                break
            t[pending] /= 2
        stalled[rows[pending]] = True  # no decrease along the Newton direction: give up
        gnorm = np.where(stalled, np.inf, _grad_norm(g, scale))
    return a, off, gnorm, max_iter
