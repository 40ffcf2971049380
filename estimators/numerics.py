"""The one log-sum-exp (and the option-wise reductions it is built on).

Classification logits have few options C. Reducing a short axis with ``ufunc.reduce`` is slow,
and its rounding depends on the array the vector sits in; :func:`option_reduce` instead applies
the ufunc elementwise over the C slices in order (for C ≤ 16), several times faster, and the
result for one vector never depends on the shape of the array around it (a single member and
its ensemble mean round identically, so a one-member ensemble has exactly zero diversity).

:func:`logsumexp` shifts out the maximum, ``LSE(x) = max x + log Σ_j exp(x_j − max x)``, so it
is finite for logits of any size (±1e4 included); :func:`log_softmax` is ``x − LSE(x)``. Every
softmax, cross-entropy and KL term of ``estimators`` and ``infodiv`` goes through them.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["option_reduce", "option_sum", "logsumexp", "log_softmax"]

_SHORT = 16


def option_reduce(ufunc, x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``ufunc`` reduced over ``axis`` (elementwise over its slices in order when short)."""
    axis = axis % x.ndim
    c = x.shape[axis]
    if c > _SHORT:
        return ufunc.reduce(x, axis=axis)
    lead = (slice(None),) * axis
    return functools.reduce(ufunc, (x[lead + (j,)] for j in range(c)))


def option_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sum over the option ``axis`` (:func:`option_reduce` with ``np.add``)."""
    return option_reduce(np.add, x, axis)


def logsumexp(x: np.ndarray, axis: int = -1, *, overwrite: bool = False,
              return_terms: bool = False):
    """``log Σ_j exp(x_j)`` over ``axis``, the maximum shifted out.

    Parameters
    ----------
    x : ndarray
    axis : int
        The option axis.
    overwrite : bool
        ``x`` is scratch: the shifted exponentials are written into it (saves a copy).
    return_terms : bool
        Also return ``e = exp(x − max)`` and ``s = Σ_j e_j`` (so ``softmax = e / s`` costs no
        second exponential).

    Returns
    -------
    lse, or ``(lse, e, s)`` with ``return_terms``.
    """
    x = np.asarray(x)
    mx = np.array(option_reduce(np.maximum, x, axis))  # a copy, even for one option
    e = np.subtract(x, np.expand_dims(mx, axis), out=x if overwrite else None)
    np.exp(e, out=e)
    s = option_sum(e, axis)
    lse = mx + np.log(s)
    return (lse, e, s) if return_terms else lse


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``x − logsumexp(x)`` over ``axis``."""
    return x - np.expand_dims(logsumexp(x, axis), axis)
