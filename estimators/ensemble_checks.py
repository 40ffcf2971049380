"""Input checks of the ensemble decompositions (:mod:`estimators.ensemble`, :mod:`estimators.bvc`).

Member logits ``[N, M, C]``, labels in ``[0, C)``, the constant member, targets, and the member
scaling ``v_m = s·(u_m + b/M)`` of DESIGN.md 2.2; every ValueError names the argument and the
numbers.
"""

from __future__ import annotations

import numpy as np

from .validation import check_labels, check_same_length

__all__ = ["check_members", "check_labels_in_range", "check_bias", "check_target",
           "member_logits"]


def check_members(u, name: str = "u") -> np.ndarray:
    """Validate an ``[N, M, C]`` array of member logits and return it as float64.

    Raises
    ------
    ValueError
        If ``u`` is not 3-D, has no examples, no members (M = 0) or no options, or holds NaN
        or infinite values (the message counts them).
    """
    arr = np.asarray(u)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(f"{name} must be a numeric [N, M, C] array, got dtype {arr.dtype} "
                        "(estimators take arrays; a run's are u, labels, bias, groups)")
    if arr.ndim != 3:
        raise ValueError(f"{name} must be a 3-D array [N examples, M members, C options], "
                         f"got shape {arr.shape}")
    n, m, c = arr.shape
    if m == 0:
        raise ValueError(f"{name} has M = 0 members (shape {arr.shape}); need at least one")
    if n == 0:
        raise ValueError(f"{name} has N = 0 examples (shape {arr.shape})")
    if c == 0:
        raise ValueError(f"{name} has C = 0 options (shape {arr.shape})")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"{name} contains {int(np.isnan(arr).sum())} NaN and "
                         f"{int(np.isinf(arr).sum())} infinite values; need finite logits")
    return arr


def check_labels_in_range(labels, n_examples: int, n_classes: int,
                          name: str = "labels") -> np.ndarray:
    """Validate ``n_examples`` integer labels in ``[0, n_classes)``; return them as int64."""
    y = check_labels(labels, name)
    check_same_length(u=np.empty(n_examples), **{name: y})
    lo, hi = int(y.min()), int(y.max())
    if lo < 0 or hi >= n_classes:
        raise ValueError(f"{name} must lie in [0, {n_classes}) for C = {n_classes} options, "
                         f"got values in [{lo}, {hi}]")
    return y


def _check_choice(value, allowed, name):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_bias(bias, n, c) -> np.ndarray:
    """The constant member as float64 ``[N, C]`` (zeros when None)."""
    if bias is None:
        return np.zeros((n, c))
    b = np.asarray(bias, dtype=np.float64)
    if b.shape not in ((c,), (n, c)):
        raise ValueError(f"bias must have shape [C]=({c},) or [N, C]=({n}, {c}), got {b.shape}")
    if not np.isfinite(b).all():
        raise ValueError("bias contains non-finite values")
    return np.broadcast_to(b, (n, c))


def check_target(target, labels, n, c, *, distribution: bool) -> np.ndarray:
    """Target ``[N, C]``: onehot(labels) when None, else the given ``[C]`` or ``[N, C]`` array.

    ``distribution=True`` (probability targets for cross-entropy) also requires non-negative
    rows summing to one.
    """
    if target is None:
        if labels is None:
            raise ValueError("labels are required when no explicit target is given")
        t = np.zeros((n, c))
        t[np.arange(n), check_labels_in_range(labels, n, c)] = 1.0
        return t
    t = np.asarray(target, dtype=np.float64)
    if t.shape not in ((c,), (n, c)):
        raise ValueError(f"target must have shape [C]=({c},) or [N, C]=({n}, {c}), "
                         f"got {t.shape}")
    if not np.isfinite(t).all():
        raise ValueError("target contains non-finite values")
    t = np.broadcast_to(t, (n, c))
    if distribution:
        worst = float(np.abs(t.sum(axis=1) - 1.0).max())
        if (t < 0).any() or worst > 1e-9:
            raise ValueError("a cross-entropy target must be a probability vector per example "
                             f"(non-negative, summing to 1); worst |sum - 1| = {worst:.3g}")
    return t


def member_logits(u: np.ndarray, bias: np.ndarray, scale: str) -> np.ndarray:
    """Members ``v_m = s·(u_m + b/M)`` with ``s = 1`` (``"mean"``) or ``s = M`` (``"sum"``)."""
    m = u.shape[1]
    v = u + bias[:, None, :] / m
    return v * m if scale == "sum" else v
