"""Batched multinomial logistic regression by damped Newton steps (internal).

Fits ``B`` independent small problems at once: features ``X`` ``(B, n, p)``, one-hot labels
``Y`` ``(B, n, K)``; class ``K - 1`` is the reference (its logit is 0), so each problem has
``(p + 1)(K - 1)`` parameters. The objective of problem ``b`` is the ridge-penalised negative
log-likelihood ``-sum_i log q(y_i | x_i) + lam / 2 ||W||^2`` (the intercepts are not
penalised), minimised by Newton's method with step halving (McCullagh & Nelder 1989, ch. 6).
Used for the low-dimensional probes of :mod:`estimators.usable` (one member's ``C``
coordinates, the summed logits), where a ``((p + 1)(K - 1))^2`` Hessian per problem is cheap
and all members (and their label permutations) are fitted in one vectorised pass.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax

__all__ = ["fit", "log_proba", "one_blas_thread"]

#: probabilities below this are set to 0 in the Newton step (their Hessian terms would be
#: subnormal numbers, whose arithmetic is two orders of magnitude slower)
FLUSH = 1e-150


def one_blas_thread(fn):
    """Run ``fn`` with one BLAS thread: the small batched products here are slower threaded,
    and on an oversubscribed machine two spinning BLAS threads made one fit 50x slower."""
    import functools

    from threadpoolctl import threadpool_limits

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def _logits(w: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """``(B, n, K)`` logits with the reference class at 0; ``w`` is ``(B, p + 1, K - 1)``."""
    z = np.matmul(x1, w)
    return np.concatenate([z, np.zeros(z.shape[:2] + (1,))], axis=2)


def _objective(w, x1, y, lam, mask):
    ll = np.sum(log_softmax(_logits(w, x1), axis=2) * y, axis=(1, 2))
    return -ll + 0.5 * lam * np.sum((w * mask) ** 2, axis=(1, 2))  # lam: (B,)


def _with_intercept(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x, np.ones(x.shape[:2] + (1,))], axis=2)


def fit(x, y_onehot, lam, *, max_iter: int = 50, tol: float = 1e-8) -> np.ndarray:
    """Penalised maximum-likelihood weights ``(B, p + 1, K - 1)`` (last row: intercepts).

    Parameters
    ----------
    x : array (B, n, p)
        Features of ``B`` problems (standardise them first: ``lam`` acts on their scale).
    y_onehot : array (B, n, K)
        One-hot labels (every class column present, possibly all zero).
    lam : float or array (B,)
        Ridge strength per problem (> 0 keeps separable problems finite).
    """
    x1 = _with_intercept(np.asarray(x, dtype=np.float64))
    y = np.asarray(y_onehot, dtype=np.float64)
    b, _, q = x1.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (b,))
    xt = np.ascontiguousarray(x1.transpose(0, 2, 1))
    k1 = y.shape[2] - 1
    w = np.zeros((b, q, k1))
    mask = np.ones((q, k1))
    mask[-1] = 0.0
    penalty = lam[:, None, None] * np.diag(mask.reshape(-1))
    obj = _objective(w, x1, y, lam, mask)
    for _ in range(max_iter):
        prob = np.exp(log_softmax(_logits(w, x1), axis=2))[:, :, :k1]
        prob[prob < FLUSH] = 0.0  # subnormal products are ~100x slower and add nothing
        grad = np.matmul(xt, prob - y[:, :, :k1]) + lam[:, None, None] * w * mask
        # Hessian: sum_i x_i x_i^T (x) (diag(pi_i) - pi_i pi_i^T), (p+1)(K-1) square
        cov = -prob[:, :, :, None] * prob[:, :, None, :]
        cov += prob[:, :, :, None] * np.eye(k1)
        hess = np.empty((b, q, k1, q, k1))
        for k in range(k1):
            for m in range(k, k1):
                block = np.matmul(xt * cov[:, None, :, k, m], x1)
                hess[:, :, k, :, m] = block
                hess[:, :, m, :, k] = block
        hess = hess.reshape(b, q * k1, q * k1)
        hess += penalty
        step = np.linalg.solve(hess + 1e-12 * np.eye(q * k1),
                               grad.reshape(b, q * k1, 1)).reshape(b, q, k1)
        scale = np.ones(b)
        for _ in range(30):  # halve the step where the objective did not decrease
            trial = w - scale[:, None, None] * step
            new = _objective(trial, x1, y, lam, mask)
            worse = new > obj + 1e-12 * np.abs(obj)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        accept = ~worse
        done = ~accept | (np.abs(obj - new) <= tol * (1.0 + np.abs(obj)))
        w = np.where(accept[:, None, None], trial, w)
        obj = np.where(accept, new, obj)
        if done.all():
            break
    return w


def log_proba(w: np.ndarray, x) -> np.ndarray:
    """``log q(c | x)`` ``(B, n, K)`` for weights from :func:`fit`."""
    return log_softmax(_logits(w, _with_intercept(np.asarray(x, dtype=np.float64))), axis=2)
