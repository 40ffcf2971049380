"""Compiled accuracy of summed readouts (numba): of given logits, and of every prefix of
member orders without the prefix logits.

The accuracy of logits z (one example's C options) is 1/|argmax set| where the label is among
the maximal logits (ties split evenly), else 0 (NaN where a logit is NaN): the values of the
array formula ``any(top & label) / sum(top)`` with ``top = z >= max z``, bit for bit, in one
pass over the logits (:func:`~infodiv.setfunctions.calibration.readout_scores`). For
prefixes, ``z_k = (u_{o_1} + ... + u_{o_k}) + b``: the running sum over the order, added one
member at a time per coordinate (the additions of ``numpy.cumsum`` along the members, in its
order), then the bias, with no ``[M+1, C, n]`` array per order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["accuracy_scores", "prefix_accuracy"]


@njit(cache=True)
def _accuracy(z, y, out):
    """Accuracy of the logits ``z`` [C, n] per example into ``out`` [n]."""
    c, n = z.shape
    for i in range(n):
        top, bad = -np.inf, False
        for j in range(c):
            if z[j, i] != z[j, i]:
                bad = True
            elif z[j, i] > top:
                top = z[j, i]
        if bad:
            out[i] = np.nan
            continue
        ties, hit = 0, False
        for j in range(c):
            if z[j, i] >= top:
                ties += 1
                hit = hit or j == y[i]
        out[i] = (1.0 if hit else 0.0) / ties


@njit(cache=True)
def accuracy_scores(z, y, out):
    """``out[k]`` [K, n]: the accuracy of the logits ``z[k]`` [K, C, n] for labels ``y``."""
    for k in range(z.shape[0]):
        _accuracy(z[k], y, out[k])


@njit(cache=True)
def prefix_accuracy(ut, bias, y, orders, out):
    """``out[p, k]`` [P, M'+1, n]: the accuracy of the first k members of ``orders[p]``
    (member logits ``ut`` [M, C, n], bias [C, n], labels ``y`` [n])."""
    c, n = bias.shape
    acc, z = np.empty((c, n)), np.empty((c, n))
    for p in range(orders.shape[0]):
        _accuracy(bias, y, out[p, 0])
        for k in range(orders.shape[1]):
            m = orders[p, k]
            for j in range(c):
                for i in range(n):
                    acc[j, i] = ut[m, j, i] if k == 0 else acc[j, i] + ut[m, j, i]
                    z[j, i] = acc[j, i] + bias[j, i]
            _accuracy(z, y, out[p, k + 1])
