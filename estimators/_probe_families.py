"""Candidate probe families for :mod:`estimators.usable` (internal).

A family maps the training rows ``tr`` of one :class:`Data` to held-out log-probabilities
``log q(c | x_i)`` for every hyperparameter of its grid, so that nested cross-validation can
pick the family and its hyperparameter on training data only. Transforms (standardisation,
normal scores, principal components) are fitted on ``tr`` alone (:func:`features`); the
logistic families are fitted along their ridge path by :func:`estimators._logistic.path_fit`.

- ``own``: the members' summed logits, ``softmax(sum_m u_m + bias)``; no fitting (member
  arrays ``(n, M, C)`` with ``C`` = the number of classes only; ``bias`` the model's constant
  logit offset, 0 unless given).
- ``calibrated``: multinomial logistic regression on the summed logits ``sum_m u_m``
  (:mod:`estimators._logistic`, ridge :data:`CALIBRATION_LAM`); member arrays only.
- ``logistic`` / ``logistic_rank``: L2-regularised multinomial logistic regression
  (:mod:`estimators._logistic`, strengths ``lam = 1 / C``, ``C`` in :data:`LOGISTIC_CS`) on
  the stacked, standardised coordinates / on their marginal normal scores; above
  :data:`MAX_COMPONENTS` coordinates on that many whitened principal components of the
  training fold.
- ``knn``: the k-nearest-neighbour class frequencies shrunk towards the training prior,
  ``q = (counts + prior) / (k + 1)``, ``k`` from :data:`KNN_KS`; only up to
  :data:`KNN_MAX_DIMS` coordinates.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import log_softmax

__all__ = ["Data", "FAMILIES", "available", "grid", "features", "lams", "knn_path",
           "own_log_proba", "normal_scores", "standardize"]

FAMILIES = ("own", "calibrated", "logistic", "logistic_rank", "knn")
#: inverse ridge strengths of the stacked logistic families (standardised features)
LOGISTIC_CS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
#: the stacked logistic families fit on at most this many principal components
MAX_COMPONENTS = 40
#: principal components by a dense eigendecomposition up to this many coordinates
DENSE_PCA = 400
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

    @functools.cached_property
    def summed(self) -> np.ndarray:
        """The members' summed logits ``(n, C)`` (member arrays only)."""
        return self.members.sum(axis=1)


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
    """Marginal normal scores by the training ranks (average ranks over ties, divided by
    ``n + 1``); test values through the training ECDF, interpolated as ``numpy.interp`` does
    (:func:`estimators._member_fits.fold_normal_scores`)."""
    from estimators._member_fits import fold_normal_scores

    train, test = np.asarray(train, dtype=np.float64), np.asarray(test, dtype=np.float64)
    mask = np.zeros((1, len(train) + len(test)), dtype=bool)
    mask[0, :len(train)] = True
    scores = fold_normal_scores(np.concatenate([train, test]), mask)[:, 0, :].T
    return scores[:len(train)], scores[len(train):]


def own_log_proba(data: Data, rows: np.ndarray) -> np.ndarray:
    """``log softmax(sum_m u_m + bias)`` of ``rows`` (the ``own`` family; no fitting)."""
    return log_softmax(data.summed[rows] + data.bias, axis=1)


def _reduce(f_tr, f_te):
    """Principal components of the training features, at most :data:`MAX_COMPONENTS`,
    rescaled to unit variance (no change below that many coordinates): the leading
    eigenvectors of the training covariance (the right singular vectors of the centred
    features), by LAPACK up to :data:`DENSE_PCA` coordinates and above by Lanczos (ARPACK,
    to machine precision) on the covariance, or on the rows' Gram matrix when there are more
    coordinates than rows."""
    if f_tr.shape[1] <= MAX_COMPONENTS:
        return f_tr, f_te
    mu = f_tr.mean(axis=0)
    centred = f_tr - mu
    k = MAX_COMPONENTS
    n, d = centred.shape
    if d <= DENSE_PCA:
        vals, vecs = np.linalg.eigh(centred.T @ centred)
    elif d <= n:
        from scipy.sparse.linalg import eigsh

        vals, vecs = eigsh(centred.T @ centred, k=k, which="LA", tol=0,
                           v0=np.full(d, d ** -0.5))
    else:
        from scipy.sparse.linalg import eigsh

        vals, left = eigsh(centred @ centred.T, k=k, which="LA", tol=0,
                           v0=np.full(n, n ** -0.5))
        vecs = centred.T @ left / np.sqrt(np.clip(vals, np.finfo(float).tiny, None))
    top = np.argsort(vals)[::-1][:k]
    s = np.sqrt(np.clip(vals[top], 0.0, None))
    basis = vecs[:, top] * (np.sqrt(n) / np.maximum(s, np.finfo(float).tiny))
    return centred @ basis, (f_te - mu) @ basis


def features(family: str, data: Data, tr: np.ndarray, te: np.ndarray, order=None,
             scores=None):
    """The fitted family's features of the training rows ``tr`` and the rows ``te``,
    transformed by maps fitted on ``tr`` alone: the standardised summed logits
    (``calibrated``), the standardised coordinates or their normal scores reduced to at most
    :data:`MAX_COMPONENTS` whitened principal components (``logistic`` /
    ``logistic_rank``). ``order``: the argsort of ``data.x`` over the rows, when known;
    ``scores``: the normal scores ``(d, n)`` of ``data.x`` under ``tr``, when known."""
    if family == "calibrated":
        return standardize(data.summed[tr], data.summed[te])
    if family == "logistic":
        return _reduce(*standardize(data.x[tr], data.x[te]))
    from estimators._member_fits import fold_normal_scores

    if scores is None:
        train = np.zeros((1, len(data.y)), dtype=bool)
        train[0, tr] = True
        scores = fold_normal_scores(data.x, train, order)[:, 0, :]
    return _reduce(scores[:, tr].T, scores[:, te].T)


def lams(family: str) -> np.ndarray:
    """The ridge strengths of a fitted family, strongest first (its grid's order)."""
    if family == "calibrated":
        return np.array([CALIBRATION_LAM])
    return 1.0 / np.asarray(LOGISTIC_CS, dtype=np.float64)


def knn_path(data: Data, tr, te, grid=KNN_KS) -> list:
    """``log q(c | x_te)`` of the ``knn`` family for every ``k`` of ``grid``, fitted on ``tr``:
    neighbour class counts in the coordinates standardised on ``tr``, shrunk to the prior."""
    from sklearn.neighbors import NearestNeighbors

    f_tr, f_te = standardize(data.x[tr], data.x[te])
    kmax = min(max(grid), len(tr))
    idx = NearestNeighbors(n_neighbors=kmax).fit(f_tr).kneighbors(f_te, return_distance=False)
    onehot = np.eye(data.n_classes)[data.y[tr]][idx]          # (n_te, kmax, K)
    counts = np.cumsum(onehot, axis=1)
    prior = np.bincount(data.y[tr], minlength=data.n_classes) / len(tr)
    return [np.log((counts[:, min(k, kmax) - 1] + prior) / (min(k, kmax) + 1.0)) for k in grid]


_GRIDS = {"own": (None,), "calibrated": (CALIBRATION_LAM,), "logistic": LOGISTIC_CS,
          "logistic_rank": LOGISTIC_CS, "knn": KNN_KS}


def grid(family: str) -> tuple:
    """The hyperparameter grid of ``family`` (inverse ridge strengths ``C`` of the logistic
    families, the ridge of ``calibrated``, neighbour counts of ``knn``)."""
    return _GRIDS[family]
