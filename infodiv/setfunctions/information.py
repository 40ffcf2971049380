"""Information objectives: I(U_S; Y) of member sets, in units of ``base`` (bits by default).

- :class:`GaussianSetFunction` (``mi_gaussian``, ``mi_copula``): the Gaussian / Gaussian-copula
  estimate of :class:`estimators.blocks.GaussianBlockMI`, with per-example pointwise terms and
  the Schur-complement log-determinant updates of :mod:`estimators.logdet` for greedy search;
- :class:`EstimatorSetFunction` (``mi_knn``): ``estimators.mutual_information`` (one number per
  set, no per-example scores);
- :class:`ProbeSetFunction` (``mi_probe``): H(Y) − held-out cross-entropy of a scikit-learn
  logistic regression on the stacked member logits (a lower bound on I(U_S; Y) up to
  estimation error, DESIGN.md 2.5), cross-fitted on two label-stratified halves;
- :class:`UsableSetFunction` (``mi_usable``): the package's default estimate of I(U_S; Y),
  :func:`estimators.usable_information` on the whole member vectors ``u[:, S, :]``
  (cross-fitted usable information, best of several families chosen by nested
  cross-validation, never above H(Y)), with its per-example held-out terms as scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimators import mutual_information, usable_information
from estimators.blocks import GaussianBlockMI
from estimators.validation import check_base, check_labels, to_base, unit_name

from .base import SetFunction, check_members, duplicate_groups, split_halves

__all__ = ["GaussianSetFunction", "ProbeSetFunction", "EstimatorSetFunction",
           "UsableSetFunction"]


@dataclass
class _GaussState:
    members: list
    states: list | None  # ForwardLogdet / BackwardLogdet per covariance, or None (direct)


class GaussianSetFunction(SetFunction):
    """I_G(U_S; Y) with per-example pointwise terms (:class:`estimators.blocks.GaussianBlockMI`).

    Greedy search uses incremental log-determinants: forward states from the empty set,
    backward states from the full set; any other start evaluates every set directly.
    """

    def __init__(self, x, labels, *, copula=False, bias_correction=True, ridge=0.0, base=2,
                 random_state=0):
        x = np.asarray(x, dtype=np.float64)
        super().__init__(x.shape[1], x.shape[0])
        self.x, self.labels = x, check_labels(labels)
        self.options = dict(copula=copula, bias_correction=bias_correction, ridge=ridge,
                            base=base, random_state=random_state)
        self.gmi = GaussianBlockMI(x, self.labels, **self.options)
        self.name = "mi_copula" if copula else "mi_gaussian"
        self.units = unit_name(base)

    def scores(self, members):
        return self.gmi.pointwise(check_members(members, self.n_members))

    def value(self, members):
        return self.gmi.value(check_members(members, self.n_members))

    def set_values(self, sets) -> np.ndarray:
        """I_G of K member sets ``[K]``, batched: the sets of one size share one stacked
        Cholesky factorisation per covariance (pooled, then each class) instead of one per
        set — the numbers of :meth:`value`. A set whose block is not positive definite is
        evaluated alone by :meth:`value`, which raises the ValueError naming it."""
        idx = [check_members(m, self.n_members) for m in sets]
        sizes = np.array([m.size for m in idx], dtype=np.int64)
        out = np.zeros(len(idx))
        for size in np.unique(sizes[sizes > 0]):
            rows = np.flatnonzero(sizes == size)
            try:
                out[rows] = self.gmi.values_of_sets(np.stack([idx[r] for r in rows]))
            except np.linalg.LinAlgError:
                out[rows] = [self.value(idx[r]) for r in rows]
        return out

    def start(self, members=()):
        idx = [int(j) for j in check_members(members, self.n_members)]
        if not idx:
            return _GaussState([], self.gmi.forward())
        if len(idx) == self.n_members:
            return _GaussState(idx, self.gmi.backward(idx))
        return _GaussState(idx, None)

    def _mode(self, state) -> str:
        if state.states is None:
            return "direct"
        return "forward" if hasattr(state.states[0], "add") else "backward"

    def state_members(self, state):
        return list(state.members)

    def state_value(self, state):
        if state.states is None or not state.members:
            return self.value(state.members)
        lds = [s.logdet for s in state.states]
        return float(self.gmi.values_from_logdets(lds, len(state.members)))

    def added_values(self, state, candidates):
        if self._mode(state) != "forward":
            return super().added_values(state, candidates)
        lds = [s.candidate_logdets(candidates) for s in state.states]
        return self.gmi.values_from_logdets(lds, len(state.members) + 1)

    def removed_values(self, state, candidates):
        if self._mode(state) != "backward":
            return super().removed_values(state, candidates)
        if len(state.members) == 1:
            return np.zeros(len(candidates))
        lds = [s.candidate_logdets(candidates) for s in state.states]
        return self.gmi.values_from_logdets(lds, len(state.members) - 1)

    def add(self, state, j):
        if self._mode(state) != "forward":
            return _GaussState(state.members + [int(j)], None)
        new = [s.copy() for s in state.states]
        for s in new:
            s.add(int(j))
        return _GaussState(state.members + [int(j)], new)

    def remove(self, state, j):
        members = [m for m in state.members if m != j]
        if not members:
            return _GaussState([], self.gmi.forward())
        if self._mode(state) != "backward":
            return _GaussState(members, None)
        new = [s.copy() for s in state.states]
        for s in new:
            s.remove(int(j))
        return _GaussState(members, new)

    def restrict(self, examples):
        ex = np.asarray(examples)
        return GaussianSetFunction(self.x[ex], self.labels[ex], **self.options)


class ProbeSetFunction(SetFunction):
    """Probe lower bound H(Y) − CE_heldout of a logistic regression on stacked U_S.

    Per-example score: log q(y_i | u_i) − log p̂(y_i) (units of ``base``) with the probe q and
    the class frequencies p̂ (add-½ smoothed) fitted on the other half (2-fold cross-fitting);
    the empty set scores the prior against itself. ``C`` is scikit-learn's inverse
    regularisation strength.
    """

    name = "mi_probe"

    def __init__(self, u, labels, *, C=1.0, base=2, random_state=0):
        u = np.asarray(u, dtype=np.float64)
        super().__init__(u.shape[1], u.shape[0])
        self.u, self.y, self.C, self.random_state = u, check_labels(labels), C, random_state
        self.labels = self.y
        self.base = check_base(base)
        self.units = unit_name(base)
        self.groups = duplicate_groups(u)
        self.folds = split_halves(self.y, random_state, self.groups)
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
            out[ev] = to_base(lq - log_prior, self.base)
        return out

    def restrict(self, examples):
        ex = np.asarray(examples)
        return ProbeSetFunction(self.u[ex], self.y[ex], C=self.C, base=self.base,
                                random_state=self.random_state)


class EstimatorSetFunction(SetFunction):
    """I(U_S; Y) from ``estimators.mutual_information`` (one number per set).

    ``n_examples`` is the number of examples the estimate uses (cross-fitting and bootstrap
    resampling draw from them), although :meth:`scores` returns a single number.
    """

    per_example = False

    def __init__(self, x, labels, *, method="knn", k=3, base=2, random_state=0):
        x = np.asarray(x, dtype=np.float64)
        super().__init__(x.shape[1], x.shape[0])
        self.x, self.y = x, check_labels(labels)
        self.labels = self.y
        self.method, self.k, self.base, self.random_state = method, k, base, random_state
        self.units = unit_name(base)
        self.name = f"mi_{method}"

    def scores(self, members):
        idx = check_members(members, self.n_members)
        if idx.size == 0:
            return np.zeros(1)
        xs = self.x[:, idx, :].reshape(self.x.shape[0], -1)
        kw = {"k": self.k} if self.method == "knn" else {}
        return np.array([mutual_information(xs, self.y, method=self.method, base=self.base,
                                            random_state=self.random_state, **kw)])

    def can_restrict(self) -> bool:
        return True

    def restrict(self, examples):
        ex = np.asarray(examples)
        return EstimatorSetFunction(self.x[ex], self.y[ex], method=self.method, k=self.k,
                                    base=self.base, random_state=self.random_state)


class UsableSetFunction(SetFunction):
    """I(U_S; Y) by :func:`estimators.usable_information` on the member vectors ``u[:, S, :]``.

    Per-example score: the held-out ``log q(y_i | u_i,S) - log p(y_i)`` of the procedure the
    nested selection chose (units of ``base``), so :meth:`value` is the estimate; the empty set
    scores 0. ``options`` go to :func:`estimators.usable_information` (``families``,
    ``n_splits``, ``inner_splits``).
    """

    name = "mi_usable"

    def __init__(self, u, labels, *, base=2, random_state=0, **options):
        u = np.asarray(u, dtype=np.float64)
        if u.ndim != 3:
            raise ValueError(f"u must be an (n, M, C) member array, got shape {u.shape}")
        super().__init__(u.shape[1], u.shape[0])
        self.u, self.y = u, check_labels(labels)
        self.labels = self.y
        self.base, self.random_state, self.options = base, random_state, options
        self.units = unit_name(base)

    def scores(self, members):
        idx = check_members(members, self.n_members)
        if idx.size == 0:
            return np.zeros(self.n_examples)
        return usable_information(self.u[:, idx, :], self.y, base=self.base, bracket=False,
                                  random_state=self.random_state, **self.options).pointwise

    def restrict(self, examples):
        ex = np.asarray(examples)
        return UsableSetFunction(self.u[ex], self.y[ex], base=self.base,
                                 random_state=self.random_state, **self.options)
