"""Readout metrics and the batched calibration fit behind the ``*_calibrated`` objectives.

``readout_scores`` scores logits laid out ``[..., C, n]``; ``fit_calibration`` fits the inverse
temperature ``a`` and per-option offsets ``c`` (c_0 = 0) of softmax(a·z + c) by minimising the
mean cross-entropy with a damped Newton method (compiled, :mod:`._newton`), for many candidate
sets at once (warm-started from predicted fits in greedy search), with a float64 gradient-norm
convergence check.
"""

from __future__ import annotations

import numpy as np

from estimators.numerics import log_softmax, logsumexp
from estimators.validation import to_base

from ._newton import newton_fit, prior_steps
from ._prefix import accuracy_scores

__all__ = ["READOUT_METRICS", "readout_scores", "fit_calibration"]

READOUT_METRICS = ("accuracy", "cross_entropy", "brier")


# ---------------------------------------------------------------------------------- readouts
# Internally logits are laid out [..., C, n] (options before examples) so that reductions over
# the few options run as vectorised element-wise operations over the many examples.
def readout_scores(z: np.ndarray, y: np.ndarray, metric: str, overwrite=False) -> np.ndarray:
    """Per-example metric of logits ``z`` ``[..., C, n]`` for labels ``y`` ``[n]`` → ``[..., n]``.

    accuracy: 1/|argmax set| when y is among the maximal logits (ties split evenly), else 0
    (NaN where a logit is NaN);
    cross_entropy: −log2 softmax(z)_y; brier: Σ_j (softmax(z)_j − 1[j = y])².
    ``overwrite``: z is scratch and may be overwritten.
    """
    if metric == "accuracy":   # compiled (infodiv.setfunctions._prefix): the same values
        flat = np.ascontiguousarray(z, dtype=np.float64).reshape((-1,) + z.shape[-2:])
        out = np.empty((flat.shape[0], z.shape[-1]))
        accuracy_scores(flat, np.ascontiguousarray(y, dtype=np.int64), out)
        return out.reshape(z.shape[:-2] + (z.shape[-1],))
    mask = np.arange(z.shape[-2])[:, None] == y[None, :]  # [C, n]
    if metric == "cross_entropy":  # log-sum-exp minus the label's logit
        zy = z[..., y, np.arange(z.shape[-1])]
        return to_base(logsumexp(z, axis=-2, overwrite=overwrite) - zy, 2)
    logq = log_softmax(z, axis=-2)
    ly = np.where(mask, logq, 0.0).sum(axis=-2)
    if metric == "brier":
        return (np.exp(2.0 * logq)).sum(axis=-2) - 2.0 * np.exp(ly) + 1.0
    raise ValueError(f"unknown readout metric {metric!r}; choose from {READOUT_METRICS}")


def fit_calibration(z, y, *, init=None, max_iter: int = 50, gtol: float = 1e-10,
                    return_info: bool = False, chunk_elements: int = 1 << 17):
    """Fit softmax(a·z + c) by damped Newton on the mean cross-entropy, batched over problems.

    The parameters are θ = (a, c_1, ..., c_{C−1}) with c_0 = 0; the gradient and Hessian of
    the mean cross-entropy are the multinomial-logistic ones with per-option features
    φ_j = (z_j, e_j): ∇ = mean_i Σ_j (q_ij − 1[j=y_i]) φ_ij and
    H = mean_i [Σ_j q_ij φ_ij φ_ijᵀ − (Σ_j q_ij φ_ij)(Σ_j q_ij φ_ij)ᵀ]. Each problem stops
    when its gradient — ∂/∂a divided by the RMS spread of z across options, so that both parts
    measure changes of the logits — is at most ``gtol`` in every coordinate (float64, at the
    returned point). A Newton step is capped (saturated softmax) and halved until the loss
    does not increase; a ridge of 1e-10·tr(H) keeps H invertible when z is constant. Without
    ``init`` the start is one Newton step from the label prior (the discriminant-analysis
    estimate). Problems are solved in chunks of about ``chunk_elements`` logits (cache-sized
    arrays) by :func:`infodiv.setfunctions._newton.newton_fit` (each problem's iterates depend
    on its own data only, not on the batch).

    Parameters
    ----------
    z : array ``[K, C, n]``
        K independent problems (e.g. one per greedy candidate) on the same labels.
    y : int array ``[n]`` with values in [0, C)
    init : (a, c) or None
        Starting point (broadcast to K problems); default a = 1, c = 0 followed by the prior
        step. Greedy search starts every candidate from a predicted fit, which saves most
        Newton iterations.
    return_info : bool
        Also return a dict with ``converged`` ``[K]`` (bool), ``grad_norm`` ``[K]`` (scaled;
        inf where the line search stalled) and ``n_iter`` (the largest number of Newton steps
        taken).

    Returns
    -------
    a : ``[K]`` inverse temperatures (signed: a < 0 means the readout is anti-informative);
    c : ``[K, C]`` per-option offsets with c[:, 0] = 0.
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    if z.ndim != 3:
        raise ValueError(f"z must be [K, C, n], got shape {z.shape}")
    k, c, n = z.shape
    y = np.ascontiguousarray(y, dtype=np.int64)
    if y.shape != (n,) or (n and (y.min() < 0 or y.max() >= c)):
        raise ValueError(f"y must hold {n} labels in [0, {c}), got shape {y.shape}"
                         + (f" and range [{y.min()}, {y.max()}]" if y.size else ""))
    counts = np.bincount(y, minlength=c).astype(np.float64)
    cold = init is None
    if cold:
        a, off = np.ones(k), np.zeros((k, c))
    else:
        a = np.broadcast_to(np.asarray(init[0], dtype=np.float64), (k,)).copy()
        off = np.broadcast_to(np.asarray(init[1], dtype=np.float64), (k, c)).copy()
    off -= off[:, :1]
    gnorm = np.empty(k)
    n_iter = newton_fit(z, y, counts, a, off, cold, int(max_iter), float(gtol), gnorm,
                        chunk_elements)
    if not return_info:
        return a, off
    return a, off, {"converged": gnorm <= gtol, "grad_norm": gnorm, "n_iter": int(n_iter)}


def _prior_step(zs, szy, counts, a, off):
    """The cold start (:func:`infodiv.setfunctions._newton.prior_steps`) of problems ``zs``
    ``[K, C, n]`` (z shifted per example by its maximum), ``szy`` ``[K]`` = Σ_i zs_{i,y_i}:
    one Newton step from the label prior; problems where it is undefined keep ``(a, off)``."""
    return prior_steps(np.ascontiguousarray(zs, dtype=np.float64),
                       np.asarray(szy, dtype=np.float64), np.asarray(counts, dtype=np.float64),
                       np.asarray(a, dtype=np.float64), np.asarray(off, dtype=np.float64))
