"""Set functions f(S) over the members of a :class:`~extraction.contributions.Contributions`.

A set function maps a member set S (indices) to per-example scores; its value is their mean.
Every set function here offers the same small protocol so that greedy search, removal and random
orders share one code path and fast objectives can vectorise over candidates:

``scores(S)``, ``value(S)``, ``start(S) -> state``, ``added_values(state, candidates)``,
``removed_values(state, candidates)``, ``add(state, j)``, ``remove(state, j)``,
``state_value(state)``, ``restrict(examples)``.

Objectives (``make_set_function(contrib, objective)``):

- readouts of the fixed-scale summed logits z_S = Σ_{m∈S} u_m + b (DESIGN.md 2.4):
  ``accuracy`` (ties split evenly), ``cross_entropy`` (bits), ``brier`` (Σ_j (q_j − 1[j=y])²);
  the ``*_calibrated`` variants score softmax(a·z_S + c) where the inverse temperature ``a`` and
  per-option offsets ``c`` (c_0 = 0) are fitted by Newton's method on one half of the examples
  and scored on the other half, both ways (2-fold cross-fitting: every example is scored
  held-out);
- information objectives (bits): ``mi_gaussian`` and ``mi_copula`` (:mod:`infodiv.gaussian`,
  per-example pointwise terms, incremental log-determinants for greedy search), ``mi_knn``
  (``estimators.mutual_information(method="knn")``, one number per set, no per-example
  scores), and ``mi_probe`` = H(Y) − held-out cross-entropy of a scikit-learn logistic
  regression on the stacked member logits (a lower bound on I(U_S; Y) up to estimation error,
  DESIGN.md 2.5), cross-fitted the same way.

``greater_is_better`` tells search which direction improves; curves report native units.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from estimators.validation import check_labels

from .calibration import LN2, READOUT_METRICS, fit_calibration, readout_scores
from .gaussian import GaussianMI, member_variables

__all__ = ["SetFunction", "CallableSetFunction", "ReadoutSetFunction", "GaussianSetFunction",
           "ProbeSetFunction", "EstimatorSetFunction", "make_set_function", "OBJECTIVES",
           "error_bounds", "label_entropy", "fit_calibration", "split_halves"]

OBJECTIVES = (READOUT_METRICS + tuple(f"{m}_calibrated" for m in READOUT_METRICS)
              + ("mi_gaussian", "mi_copula", "mi_knn", "mi_probe"))


def check_members(members, n_members: int, name: str = "members") -> np.ndarray:
    """Validate a member set: distinct integers in [0, n_members)."""
    idx = np.asarray(members if members is not None else np.arange(n_members))
    if idx.dtype == bool:
        if idx.shape != (n_members,):
            raise ValueError(f"{name} mask must have {n_members} entries, got {idx.shape}")
        return np.flatnonzero(idx)
    idx = idx.astype(np.int64).ravel() if idx.size else np.zeros(0, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n_members):
        raise ValueError(f"{name} must lie in [0, {n_members}), got range "
                         f"[{idx.min()}, {idx.max()}]")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{name} contains duplicated members: {idx.tolist()}")
    return idx


def label_entropy(labels, base: float = 2.0) -> float:
    """Plug-in H(Y) of integer labels (bits by default)."""
    p = np.bincount(check_labels(labels)) / len(labels)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum() / np.log(base))


def error_bounds(mi, h_y, n_classes):
    """Eq. 12 (Zhou & Li 2010; paper Theorem 4) in bits.

    ``(H(Y) − I − 1) / log2|Y| ≤ P(error) ≤ (H(Y) − I) / 2``. Returns ``(lower, upper)``.
    """
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    gap = h_y - np.asarray(mi, dtype=np.float64)
    return (gap - 1.0) / np.log2(n_classes), gap / 2.0


def split_halves(labels, random_state) -> tuple[np.ndarray, np.ndarray]:
    """Two label-stratified halves of the examples (sorted index arrays)."""
    y = check_labels(labels)
    rng = np.random.default_rng(random_state)
    first = []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        first.append(idx[: len(idx) // 2])
    a = np.sort(np.concatenate(first))
    b = np.setdiff1d(np.arange(len(y)), a)
    if len(a) == 0 or len(b) == 0:
        raise ValueError(f"cannot split {len(y)} examples into two non-empty halves")
    return a, b


# ---------------------------------------------------------------------------------- base
class SetFunction:
    """Base class: a set function with per-example scores and a generic state protocol.

    Subclasses implement :meth:`scores` (and may override the state methods to vectorise).
    """

    name = "set_function"
    units = ""
    greater_is_better = True
    per_example = True

    def __init__(self, n_members: int, n_examples: int):
        if not isinstance(n_members, numbers.Integral) or n_members < 1:
            raise ValueError(f"n_members must be a positive integer, got {n_members!r}")
        self.n_members = int(n_members)
        self.n_examples = int(n_examples)

    def scores(self, members) -> np.ndarray:
        raise NotImplementedError

    def value(self, members) -> float:
        return float(np.mean(self.scores(members)))

    def sign(self) -> float:
        """+1 when larger values are better, −1 otherwise (gains are reported as utility)."""
        return 1.0 if self.greater_is_better else -1.0

    # generic state: the list of members
    def start(self, members=()):
        return [int(j) for j in check_members(members, self.n_members)]

    def state_members(self, state) -> list[int]:
        return list(state)

    def state_value(self, state) -> float:
        return self.value(self.state_members(state))

    def added_values(self, state, candidates) -> np.ndarray:
        s = self.state_members(state)
        return np.array([self.value(s + [int(j)]) for j in candidates])

    def removed_values(self, state, candidates) -> np.ndarray:
        s = self.state_members(state)
        return np.array([self.value([m for m in s if m != j]) for j in candidates])

    def order_values(self, order) -> np.ndarray:
        """f of every prefix of ``order``: ``[f(∅), f(order[:1]), ..., f(order)]``."""
        state = self.start(())
        out = [self.state_value(state)]
        for j in order:
            state = self.add(state, int(j))
            out.append(self.state_value(state))
        return np.asarray(out, dtype=np.float64)

    def add(self, state, j):
        return list(state) + [int(j)]

    def remove(self, state, j):
        return [m for m in state if m != j]

    def can_restrict(self) -> bool:
        """Whether :meth:`restrict` works (per-example scores, or an own re-estimation)."""
        return self.per_example and self.n_examples >= 4

    def restrict(self, examples) -> SetFunction:
        """The same set function scored on a subset of the examples only."""
        return RestrictedSetFunction(self, examples)


class RestrictedSetFunction(SetFunction):
    """Per-example scores of ``base`` restricted to ``examples``."""

    def __init__(self, base: SetFunction, examples):
        if not base.per_example:
            raise ValueError(f"{base.name} has no per-example scores; cannot restrict examples")
        self.base = base
        self.examples = np.asarray(examples)
        super().__init__(base.n_members, len(self.examples))
        self.name, self.units = base.name, base.units
        self.greater_is_better = base.greater_is_better

    def scores(self, members):
        return np.asarray(self.base.scores(members))[self.examples]


class CallableSetFunction(SetFunction):
    """Wrap a user callable ``f(indices) -> per-example scores`` (or a scalar).

    A scalar result makes ``per_example`` False: values and curves work, paired bootstraps
    over examples do not.
    """

    def __init__(self, func, n_members: int, *, greater_is_better=True, name=None):
        if not callable(func):
            raise TypeError(f"func must be callable, got {type(func).__name__}")
        empty = np.asarray(func(np.zeros(0, dtype=np.int64)), dtype=np.float64)
        super().__init__(n_members, max(1, empty.size))
        self.func = func
        self.per_example = empty.ndim > 0
        self.greater_is_better = bool(greater_is_better)
        self.name = name or getattr(func, "name", getattr(func, "__name__", "callable"))

    def scores(self, members):
        idx = check_members(members, self.n_members)
        out = np.atleast_1d(np.asarray(self.func(idx), dtype=np.float64))
        if out.size != self.n_examples:
            raise ValueError(f"{self.name} returned {out.size} scores, expected "
                             f"{self.n_examples} (as for the empty set)")
        return out


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
        self.y = check_labels(labels)
        self.metric, self.calibrated = metric, bool(calibrated)
        self.random_state = random_state
        self.name = metric + ("_calibrated" if calibrated else "")
        self.units = {"accuracy": "fraction", "cross_entropy": "bits", "brier": ""}[metric]
        self.greater_is_better = metric == "accuracy"
        self.folds = split_halves(self.y, random_state) if calibrated else None
        self._ut_folds = (None if not calibrated else  # C-ordered member logits of each half
                          [np.ascontiguousarray(self.ut[:, :, idx]) for idx in self.folds])

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
                warnings.warn(f"{self.name}: calibration fit did not converge for {bad.sum()} "
                              f"of {bad.size} member sets (scaled gradient norm up to "
                              f"{np.nanmax(np.r_[info['grad_norm'][bad], 0.0]):.3g})",
                              RuntimeWarning, stacklevel=3)
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

    def order_values(self, order) -> np.ndarray:
        """f of every prefix of ``order`` at once (cumulative sums, one batched scoring)."""
        order = check_members(order, self.n_members)
        z = np.empty((len(order) + 1,) + self.bias.shape)
        z[0] = self.bias
        np.cumsum(self.ut[order], axis=0, out=z[1:])
        z[1:] += self.bias
        return self._score_logits(z).mean(axis=1)

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


# ---------------------------------------------------------------------------------- information
@dataclass
class _GaussState:
    members: list
    states: list  # ForwardLogdet / BackwardLogdet per covariance, or None
    mode: str


class GaussianSetFunction(SetFunction):
    """I_G(U_S; Y) (bits) with per-example pointwise terms (see :mod:`infodiv.gaussian`).

    Greedy search uses incremental log-determinants: forward states from the empty set,
    backward states from the full set; any other start falls back to direct evaluation.
    """

    units = "bits"

    def __init__(self, x, labels, *, copula=False, bias_correction=True, ridge=0.0):
        x = np.asarray(x, dtype=np.float64)
        super().__init__(x.shape[1], x.shape[0])
        self.x, self.labels = x, check_labels(labels)
        self.options = dict(copula=copula, bias_correction=bias_correction, ridge=ridge)
        self.gmi = GaussianMI(x, self.labels, **self.options)
        self.name = "mi_copula" if copula else "mi_gaussian"

    def scores(self, members):
        return self.gmi.pointwise(check_members(members, self.n_members))

    def value(self, members):
        return self.gmi.value(check_members(members, self.n_members))

    def start(self, members=()):
        idx = [int(j) for j in check_members(members, self.n_members)]
        if not idx:
            return _GaussState([], self.gmi.forward(), "forward")
        if len(idx) == self.n_members:
            return _GaussState(idx, self.gmi.backward(idx), "backward")
        return _GaussState(idx, None, "direct")

    def state_members(self, state):
        return list(state.members)

    def state_value(self, state):
        if state.mode == "direct" or not state.members:
            return self.value(state.members)
        lds = [s.logdet for s in state.states]
        return float(self.gmi.values_from_logdets(lds, len(state.members)))

    def added_values(self, state, candidates):
        if state.mode != "forward":
            return super().added_values(state, candidates)
        lds = [s.candidate_logdets(candidates) for s in state.states]
        return self.gmi.values_from_logdets(lds, len(state.members) + 1)

    def removed_values(self, state, candidates):
        if state.mode != "backward":
            return super().removed_values(state, candidates)
        if len(state.members) == 1:
            return np.zeros(len(candidates))
        lds = [s.candidate_logdets(candidates) for s in state.states]
        return self.gmi.values_from_logdets(lds, len(state.members) - 1)

    def add(self, state, j):
        if state.mode != "forward":
            return _GaussState(state.members + [int(j)], None, "direct")
        new = [s.copy() for s in state.states]
        for s in new:
            s.add(int(j))
        return _GaussState(state.members + [int(j)], new, "forward")

    def remove(self, state, j):
        members = [m for m in state.members if m != j]
        if state.mode != "backward" or not members:
            return _GaussState(members, None if members else self.gmi.forward(),
                               "direct" if members else "forward")
        new = [s.copy() for s in state.states]
        for s in new:
            s.remove(int(j))
        return _GaussState(members, new, "backward")

    def restrict(self, examples):
        ex = np.asarray(examples)
        return GaussianSetFunction(self.x[ex], self.labels[ex], **self.options)


class ProbeSetFunction(SetFunction):
    """Probe lower bound H(Y) − CE_heldout (bits) of a logistic regression on stacked U_S.

    Per-example score: log2 q(y_i | u_i) − log2 p̂(y_i) with the probe q and the class
    frequencies p̂ fitted on the other half (2-fold cross-fitting); the empty set scores the
    prior against itself. ``C`` is scikit-learn's inverse regularisation strength.
    """

    units = "bits"
    name = "mi_probe"

    def __init__(self, u, labels, *, C=1.0, random_state=0):
        u = np.asarray(u, dtype=np.float64)
        super().__init__(u.shape[1], u.shape[0])
        self.u, self.y, self.C, self.random_state = u, check_labels(labels), C, random_state
        self.folds = split_halves(self.y, random_state)
        self.n_classes = int(self.y.max()) + 1

    def scores(self, members):
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        idx = check_members(members, self.n_members)
        feats = self.u[:, idx, :].reshape(self.n_examples, -1)
        out = np.empty(self.n_examples)
        for fit, ev in (self.folds, self.folds[::-1]):
            prior = (np.bincount(self.y[fit], minlength=self.n_classes) + 0.5)
            prior = prior / prior.sum()
            log_prior = np.log(prior[self.y[ev]])
            if idx.size == 0:
                out[ev] = 0.0
                continue
            scaler = StandardScaler().fit(feats[fit])
            clf = LogisticRegression(C=self.C, max_iter=2000)
            clf.fit(scaler.transform(feats[fit]), self.y[fit])
            logq = clf.predict_log_proba(scaler.transform(feats[ev]))
            col = np.searchsorted(clf.classes_, self.y[ev])
            seen = col < len(clf.classes_)
            lq = np.full(len(ev), -np.inf)
            lq[seen] = logq[np.flatnonzero(seen), col[seen]]
            out[ev] = (lq - log_prior) / LN2
        return out

    def restrict(self, examples):
        ex = np.asarray(examples)
        return ProbeSetFunction(self.u[ex], self.y[ex], C=self.C, random_state=self.random_state)


class EstimatorSetFunction(SetFunction):
    """I(U_S; Y) from ``estimators.mutual_information`` (one number per set, bits).

    ``n_examples`` is the number of examples the estimate uses (cross-fitting and bootstrap
    resampling draw from them), although :meth:`scores` returns a single number.
    """

    units = "bits"
    per_example = False

    def __init__(self, x, labels, *, method="knn", k=3, random_state=0):
        x = np.asarray(x, dtype=np.float64)
        super().__init__(x.shape[1], x.shape[0])
        self.x, self.y = x, check_labels(labels)
        self.method, self.k, self.random_state = method, k, random_state
        self.name = f"mi_{method}"

    def scores(self, members):
        from estimators import mutual_information

        idx = check_members(members, self.n_members)
        if idx.size == 0:
            return np.zeros(1)
        xs = self.x[:, idx, :].reshape(self.x.shape[0], -1)
        kw = {"k": self.k} if self.method == "knn" else {}
        return np.array([mutual_information(xs, self.y, method=self.method, base=2,
                                            random_state=self.random_state, **kw)])

    def can_restrict(self) -> bool:
        return True

    def restrict(self, examples):
        ex = np.asarray(examples)
        return EstimatorSetFunction(self.x[ex], self.y[ex], method=self.method, k=self.k,
                                    random_state=self.random_state)


def make_set_function(contrib, objective: str = "accuracy", *, centre=True, ridge=0.0,
                      bias_correction=True, random_state=0, k=3) -> SetFunction:
    """Build the named set function from a ``Contributions`` (see the module docstring).

    Parameters
    ----------
    contrib : Contributions
    objective : str
        One of :data:`OBJECTIVES`.
    centre : bool
        Information objectives: project member logits on the sum-zero subspace (d = C − 1).
    ridge, bias_correction : Gaussian objectives (:class:`infodiv.gaussian.GaussianMI`).
    random_state : int
        Fixes the cross-fitting split (calibrated, probe) and kNN jitter.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose from {OBJECTIVES}")
    u, labels = contrib.u, contrib.labels
    if objective.split("_calibrated")[0] in READOUT_METRICS:
        metric = objective.replace("_calibrated", "")
        return ReadoutSetFunction(u, contrib.bias, labels, metric,
                                  calibrated=objective.endswith("_calibrated"),
                                  random_state=random_state)
    if objective == "mi_probe":
        return ProbeSetFunction(u, labels, random_state=random_state)
    x = member_variables(u, centre=centre)
    if objective in ("mi_gaussian", "mi_copula"):
        return GaussianSetFunction(x, labels, copula=objective == "mi_copula",
                                   bias_correction=bias_correction, ridge=ridge)
    return EstimatorSetFunction(x, labels, method="knn", k=k, random_state=random_state)


def as_set_function(contrib_or_f, *, objective=None, n_members=None, **kwargs) -> SetFunction:
    """One dispatch for the public entry points: Contributions + objective, or a callable."""
    if isinstance(contrib_or_f, SetFunction):
        return contrib_or_f
    if hasattr(contrib_or_f, "u") and hasattr(contrib_or_f, "labels"):
        if n_members is not None and n_members != contrib_or_f.n_members:
            raise ValueError(f"n_members={n_members} contradicts the Contributions' "
                             f"M={contrib_or_f.n_members}")
        return make_set_function(contrib_or_f, objective or "accuracy", **kwargs)
    if callable(contrib_or_f):
        if n_members is None:
            raise ValueError("a callable set function needs n_members (size of the ground set)")
        if objective is not None:
            raise ValueError("objective names a set function of a Contributions; "
                             "pass either a Contributions with objective or a callable")
        return CallableSetFunction(contrib_or_f, n_members)
    raise TypeError(f"expected a Contributions, a SetFunction or a callable, "
                    f"got {type(contrib_or_f).__name__}")
