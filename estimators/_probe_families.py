"""Candidate probe families for :mod:`estimators.usable` (internal).

Each family maps a training index set ``tr`` and an evaluation set ``te`` of one
:class:`Data` to held-out log-probabilities ``log q(c | x_i)`` ``(len(te), K)`` for every
hyperparameter of its grid (``path``), so that nested cross-validation can pick the family and
its hyperparameter on training data only. Transforms (standardisation, normal scores) are
fitted on ``tr`` alone.

- ``own``: the members' summed logits, ``softmax(sum_m u_m + bias)``; no fitting (member
  arrays ``(n, M, C)`` with ``C`` = the number of classes only; ``bias`` the model's constant
  logit offset, 0 unless given).
- ``calibrated``: multinomial logistic regression on the summed logits ``sum_m u_m``
  (:mod:`estimators._logistic`, ridge :data:`CALIBRATION_LAM`); member arrays only.
- ``logistic`` / ``logistic_rank``: L2-regularised multinomial logistic regression
  (:mod:`estimators._logistic`, all strengths ``lam = 1 / C``, ``C`` in :data:`LOGISTIC_CS`,
  in one batched Newton fit) on the stacked, standardised coordinates / on their marginal
  normal scores; above :data:`MAX_COMPONENTS` coordinates on that many whitened principal
  components of the training fold.
- ``knn``: the k-nearest-neighbour class frequencies shrunk towards the training prior,
  ``q = (counts + prior) / (k + 1)``, ``k`` from :data:`KNN_KS`; only up to
  :data:`KNN_MAX_DIMS` coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import log_softmax

from estimators import _logistic

__all__ = ["Data", "FAMILIES", "available", "grid", "path", "normal_scores", "standardize"]

FAMILIES = ("own", "calibrated", "logistic", "logistic_rank", "knn")
#: inverse ridge strengths of the stacked logistic families (standardised features)
LOGISTIC_CS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
#: the stacked logistic families fit on at most this many principal components
MAX_COMPONENTS = 40
#: neighbour counts of the kNN family
KNN_KS = (5, 15, 40)
#: the kNN family is offered up to this many coordinates
KNN_MAX_DIMS = 10
#: ridge of the calibrated readout (standardised summed logits)
CALIBRATION_LAM = 1e-3


@dataclass(frozen=True)
class Data:
    """Flattened features ``x`` ``(n, d)``, class codes ``y`` (0..K-1), optional member array."""

    x: np.ndarray
    y: np.ndarray
    n_classes: int
    members: np.ndarray | None = None
    own: bool = False  # the member columns are the classes 0..K-1 (the own logits apply)
    bias: np.ndarray | float = 0.0  # added to the summed logits of the own family


def available(data: Data) -> tuple:
    """The families that apply to ``data``."""
    out = []
    if data.members is not None:
        if data.own:
            out.append("own")
        out.append("calibrated")
    out += ["logistic", "logistic_rank"]
    if data.x.shape[1] <= KNN_MAX_DIMS:
        out.append("knn")
    return tuple(out)


def standardize(train: np.ndarray, test: np.ndarray):
    """Centre and scale by the training mean and sd (constant columns only centred)."""
    mu, sd = train.mean(axis=0), train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (train - mu) / sd, (test - mu) / sd


def normal_scores(train: np.ndarray, test: np.ndarray):
    """Marginal normal scores by the training ranks; test values through the training ECDF."""
    n = len(train)
    tr = stats.norm.ppf(stats.rankdata(train, axis=0) / (n + 1))
    te = np.empty_like(test, dtype=np.float64)
    grid = np.arange(1, n + 1) / (n + 1)
    for j in range(train.shape[1]):
        te[:, j] = np.interp(test[:, j], np.sort(train[:, j]), grid)
    return tr, stats.norm.ppf(te)


def _own(data, tr, te, grid):
    return [log_softmax(data.members[te].sum(axis=1) + data.bias, axis=1)]


def _calibrated(data, tr, te, grid):
    s_tr, s_te = standardize(data.members[tr].sum(axis=1), data.members[te].sum(axis=1))
    w = _logistic.fit(s_tr[None], np.eye(data.n_classes)[data.y[tr]][None], CALIBRATION_LAM)
    return [_logistic.log_proba(w, s_te[None])[0]]


def _reduce(f_tr, f_te):
    """Principal components of the training features, at most :data:`MAX_COMPONENTS`,
    rescaled to unit variance (no change below that many coordinates)."""
    if f_tr.shape[1] <= MAX_COMPONENTS:
        return f_tr, f_te
    _, s, vt = np.linalg.svd(f_tr - f_tr.mean(axis=0), full_matrices=False)
    basis = vt[:MAX_COMPONENTS].T * (np.sqrt(len(f_tr)) / np.maximum(s[:MAX_COMPONENTS],
                                                                    np.finfo(float).tiny))
    mu = f_tr.mean(axis=0)
    return (f_tr - mu) @ basis, (f_te - mu) @ basis


def _logistic_path(transform):
    def run(data, tr, te, grid):
        f_tr, f_te = _reduce(*transform(data.x[tr], data.x[te]))
        lam = 1.0 / np.asarray(grid, dtype=np.float64)
        reps = (len(grid), 1, 1)
        w = _logistic.fit(np.tile(f_tr, reps), np.tile(np.eye(data.n_classes)[data.y[tr]],
                                                        reps), lam)
        return list(_logistic.log_proba(w, np.tile(f_te, reps)))
    return run


def _knn(data, tr, te, grid):
    from sklearn.neighbors import NearestNeighbors

    f_tr, f_te = standardize(data.x[tr], data.x[te])
    kmax = min(max(grid), len(tr))
    idx = NearestNeighbors(n_neighbors=kmax).fit(f_tr).kneighbors(f_te, return_distance=False)
    onehot = np.eye(data.n_classes)[data.y[tr]][idx]          # (n_te, kmax, K)
    counts = np.cumsum(onehot, axis=1)
    prior = np.bincount(data.y[tr], minlength=data.n_classes) / len(tr)
    return [np.log((counts[:, min(k, kmax) - 1] + prior) / (min(k, kmax) + 1.0)) for k in grid]


_PATHS = {"own": (_own, (None,)), "calibrated": (_calibrated, (CALIBRATION_LAM,)),
          "logistic": (_logistic_path(standardize), LOGISTIC_CS),
          "logistic_rank": (_logistic_path(normal_scores), LOGISTIC_CS),
          "knn": (_knn, KNN_KS)}


def grid(family: str) -> tuple:
    """The hyperparameter grid of ``family``."""
    return _PATHS[family][1]


def path(family: str, data: Data, tr: np.ndarray, te: np.ndarray, hps=None) -> list:
    """``log q(c | x_te)`` arrays ``(len(te), K)``, one per hyperparameter in ``hps``
    (default: the family's whole grid), fitted on ``tr``."""
    fn, full = _PATHS[family]
    return fn(data, tr, te, full if hps is None else tuple(hps))
