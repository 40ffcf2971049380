"""Readout objectives: accuracy / cross-entropy / Brier of the fixed-scale summed logits.

``z_S = Σ_{m∈S} u_m + b`` (DESIGN.md 2.4) is scored per example by
:func:`~infodiv.setfunctions.calibration.readout_scores`: ``accuracy`` (ties split evenly),
``cross_entropy`` (bits), ``brier`` (Σ_j (q_j − 1[j=y])²). The calibrated variants score
softmax(a·z_S + c), where the inverse temperature ``a`` and per-option offsets ``c`` (c_0 = 0)
are fitted by Newton's method (:func:`~infodiv.setfunctions.calibration.fit_calibration`) on
one half of the examples and scored on the other half, both ways (2-fold cross-fitting: every
example is scored held-out). The calibration state of a member set (its per-fold fits and the
warm starts of its candidates) lives in :class:`_SumState`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from estimators.validation import check_labels

from ..warncollect import CalibrationWarning
from ._prefix import prefix_accuracy
from .base import SetFunction, check_members, duplicate_groups, member_indicator, split_halves
from .calibration import READOUT_METRICS, fit_calibration, readout_scores

__all__ = ["ReadoutSetFunction", "READOUT_UNITS"]

READOUT_UNITS = {"accuracy": "fraction", "cross_entropy": "bits", "brier": ""}


@dataclass
class _SumState:
    members: list
    total: np.ndarray  # [C, n] running Σ u_m + bias
    calib: list | None = None  # per-fold (a, c) of this set (calibrated objectives)
    # calibrated: per-fold (a [M], c [M, C]) fits of S ± {j} for every member j, predicted
    # (``guess``, warm starts) and refined by added_values / removed_values (``fitted``)
    guess: list | None = None
    fitted: list | None = None
    fresh: tuple | None = None  # (sign, mask [M]): members j whose fit of S ± {j} is in fitted


def _prefix_logits(ut, bias, orders) -> np.ndarray:
    """Logits ``[P·(M'+1), C, n]`` of every prefix of the orders ``[P, M']`` (member logits
    ``ut`` [M, C, n], bias [C, n]): the cumulative sums along each order, then the bias."""
    m1 = orders.shape[1] + 1
    z = np.empty((len(orders), m1) + bias.shape)
    for zi, o in zip(z, orders):
        zi[0] = bias
        np.cumsum(ut[o], axis=0, out=zi[1:])
        zi[1:] += bias
    return z.reshape((-1,) + bias.shape)


class ReadoutSetFunction(SetFunction):
    """Accuracy / cross-entropy / Brier of the fixed-scale summed readout z_S = Σ_{m∈S} u_m + b.

    Parameters
    ----------
    u : array ``[N, M, C]``; bias : ``[C]`` or ``[N, C]``; labels : ``[N]``
    metric : {"accuracy", "cross_entropy", "brier"}
    calibrated : bool
        Score softmax(a·z_S + c) with (a, c) fitted on the other half (:func:`fit_calibration`,
        2-fold cross-fitting over a label-stratified split drawn from ``random_state``).
    """

    def __init__(self, u, bias, labels, metric="accuracy", *, calibrated=False, random_state=0):
        u = np.asarray(u)
        if u.ndim != 3:
            raise ValueError(f"u must be [N, M, C], got shape {u.shape}")
        super().__init__(u.shape[1], u.shape[0])
        if metric not in READOUT_METRICS:
            raise ValueError(f"unknown readout metric {metric!r}; choose from {READOUT_METRICS}")
        self.ut = np.ascontiguousarray(np.transpose(u, (1, 2, 0)), dtype=np.float64)  # [M,C,N]
        self.bias = np.ascontiguousarray(np.broadcast_to(
            np.asarray(bias, dtype=np.float64), (u.shape[0], u.shape[2])).T)  # [C, N]
        self.y = self.labels = check_labels(labels)
        self.metric, self.calibrated = metric, bool(calibrated)
        self.random_state = random_state
        self.name = metric + ("_calibrated" if calibrated else "")
        self.units = READOUT_UNITS[metric]
        self.greater_is_better = metric == "accuracy"
        self.groups = duplicate_groups(u)
        self.folds = split_halves(self.y, random_state, self.groups) if calibrated else None
        self._ut_folds = (None if not calibrated else  # C-ordered member logits of each half
                          [np.ascontiguousarray(self.ut[:, :, idx]) for idx in self.folds])
        self._bias_folds = (None if not calibrated else
                            [np.ascontiguousarray(self.bias[:, idx]) for idx in self.folds])

    def _score_logits(self, z, init=None, return_params=False, parts=None):
        """Per-example scores ``[K, n]`` of logits ``[K, C, n]`` (and the per-fold fits).

        Calibrated: ``parts`` may give the logits already split by fold, C-ordered
        (``z[:, :, fold]`` is not, and strided arrays make every operation slower).
        """
        if not self.calibrated:
            out = readout_scores(z, self.y, self.metric)
            return (out, None) if return_params else out
        if parts is None:
            parts = [np.take(z, idx, axis=2) for idx in self.folds]
        out = np.empty((parts[0].shape[0], self.n_examples))
        params = []
        for fit in (0, 1):
            a, c, info = fit_calibration(parts[fit], self.y[self.folds[fit]], return_info=True,
                                         init=None if init is None else init[fit])
            if not info["converged"].all():
                bad = ~info["converged"]
                warnings.warn(f"calibration fit did not converge ({self.name}): {bad.sum()} "
                              f"of {bad.size} member sets (scaled gradient norm up to "
                              f"{np.nanmax(np.r_[info['grad_norm'][bad], 0.0]):.3g})",
                              CalibrationWarning, stacklevel=3)
            params.append((a, c))
        for (a, c), zc, ev in zip(params, parts[::-1], self.folds[::-1]):
            zc *= a[:, None, None]  # the parts are scratch copies: scaled in place
            zc += c[:, :, None]
            out[:, ev] = readout_scores(zc, self.y[ev], self.metric, overwrite=True)
        return (out, params) if return_params else out

    def _state(self, members, total, parent=None, j=None, sign=0) -> _SumState:
        """State of a member set; calibrated: its fit, reused from the parent's candidates.

        Greedy search predicts the fit of S ± {k} in the child state S' = S ± {j} by the
        parent's fits: θ(S' ± k) ≈ θ(S ± k) + θ(S') − θ(S) (a warm start only: every fit is
        run to convergence).
        """
        if not self.calibrated:
            return _SumState(list(members), total)
        if parent is not None and parent.fresh is not None and parent.fresh[0] == sign \
                and parent.fresh[1][j]:
            calib = [(fa[j], fc[j].copy()) for fa, fc in parent.fitted]  # S' was a candidate
        else:
            init = None
            if parent is not None:
                init = parent.calib if parent.fitted is None else [
                    (fa[j], fc[j]) for fa, fc in parent.fitted]
            _, params = self._score_logits(total[None], init=init, return_params=True)
            calib = [(a[0], c[0]) for a, c in params]
        guess = None  # (fits next to the empty set or a single member predict poorly)
        if parent is not None and parent.fitted is not None and min(len(members),
                                                                    len(parent.members)) >= 2:
            guess = [(fa + (a - pa), fc + (c - pc)) for (fa, fc), (a, c), (pa, pc)
                     in zip(parent.fitted, calib, parent.calib)]
        return _SumState(list(members), total, calib, guess)

    def _candidate_scores(self, state, cand, sign):
        """Scores of the candidate sets S ± {j}; calibrated: warm-started fits."""
        if not self.calibrated:
            return self._score_logits(state.total[None] + sign * self.ut[cand])
        init = state.calib if state.guess is None else [(ga[cand], gc[cand])
                                                        for ga, gc in state.guess]
        parts = []
        for idx, ut in zip(self.folds, self._ut_folds):
            part = ut[cand] if sign > 0 else -ut[cand]
            part += state.total[:, idx]
            parts.append(part)
        out, params = self._score_logits(None, init=init, return_params=True, parts=parts)
        if state.fitted is None:
            state.fitted = [(np.broadcast_to(a, (self.n_members,)).copy(),
                             np.broadcast_to(c, (self.n_members,) + c.shape).copy())
                            for a, c in state.calib]
        for (fa, fc), (a, c) in zip(state.fitted, params):
            fa[cand], fc[cand] = a, c
        if state.fresh is None or state.fresh[0] != sign:
            state.fresh = (sign, np.zeros(self.n_members, dtype=bool))
        state.fresh[1][cand] = True
        return out

    def scores(self, members):
        idx = check_members(members, self.n_members)
        z = self.ut[idx].sum(axis=0) + self.bias
        return self._score_logits(z[None])[0]

    def start(self, members=()):
        idx = check_members(members, self.n_members)
        return self._state([int(j) for j in idx], self.ut[idx].sum(axis=0) + self.bias)

    def state_members(self, state):
        return list(state.members)

    def state_value(self, state):
        return float(self._score_logits(state.total[None], init=state.calib)[0].mean())

    def added_values(self, state, candidates):
        cand = np.asarray(candidates, dtype=np.int64)
        return self._candidate_scores(state, cand, 1.0).mean(axis=1)

    def removed_values(self, state, candidates):
        cand = np.asarray(candidates, dtype=np.int64)
        return self._candidate_scores(state, cand, -1.0).mean(axis=1)

    def set_scores(self, sets) -> np.ndarray:
        """Per-example scores ``[K, N]`` of K member sets in one batched scoring (calibrated:
        one batched calibration fit)."""
        return self._score_logits(self.set_logits(sets))

    def set_logits(self, sets) -> np.ndarray:
        """Summed logits ``[K, C, N]`` of K member sets: the sets' 0/1 indicator matrix
        ``[K, M]`` times the member logits ``[M, C·N]`` (one matrix product), plus the bias."""
        ind = member_indicator(sets, self.n_members)
        z = (ind @ self.ut.reshape(self.n_members, -1)).reshape((len(sets),) + self.bias.shape)
        z += self.bias
        return z

    def order_scores(self, order) -> np.ndarray:
        """Per-example scores ``[M+1, N]`` of every prefix of ``order`` (cumulative sums, one
        batched scoring)."""
        return self.orders_scores(np.asarray(order)[None])[0]

    def orders_scores(self, orders, max_elements: int = 1 << 22) -> np.ndarray:
        """Per-example scores ``[P, M+1, N]`` of every prefix of each of the P orders
        ``[P, M]``: uncalibrated accuracy in one compiled pass over the running sums
        (:func:`~infodiv.setfunctions._prefix.prefix_accuracy`); otherwise all prefixes
        scored in batched calibration fits of about ``max_elements`` logits (fewer, larger
        fits than one per order)."""
        orders = np.asarray(orders, dtype=np.int64)
        if orders.ndim != 2:
            raise ValueError(f"orders must be [P, M'], got shape {orders.shape}")
        for o in orders:
            check_members(o, self.n_members)
        p, m1 = len(orders), orders.shape[1] + 1
        out = np.empty((p, m1, self.n_examples))
        if self.metric == "accuracy" and not self.calibrated:
            prefix_accuracy(self.ut, self.bias, self.y, orders, out)
            return out
        step = max(1, max_elements // (m1 * self.bias.size))
        for lo in range(0, p, step):
            block = orders[lo:lo + step]
            if self.calibrated:   # the prefixes' logits built per fold (no strided copies)
                parts = [_prefix_logits(ut, bias, block)
                         for ut, bias in zip(self._ut_folds, self._bias_folds)]
                scores = self._score_logits(None, parts=parts)
            else:
                scores = self._score_logits(_prefix_logits(self.ut, self.bias, block))
            out[lo:lo + len(block)] = scores.reshape(len(block), m1, -1)
        return out

    def order_values(self, order) -> np.ndarray:
        """f of every prefix of ``order`` at once (the means of :meth:`order_scores`)."""
        return self.order_scores(order).mean(axis=1)

    def add(self, state, j):
        return self._state(state.members + [int(j)], state.total + self.ut[j], state, j, 1.0)

    def remove(self, state, j):
        return self._state([m for m in state.members if m != j], state.total - self.ut[j],
                           state, j, -1.0)

    def restrict(self, examples):
        ex = np.asarray(examples)
        return ReadoutSetFunction(np.transpose(self.ut[:, :, ex], (2, 0, 1)), self.bias[:, ex].T,
                                  self.y[ex], self.metric, calibrated=self.calibrated,
                                  random_state=self.random_state)
