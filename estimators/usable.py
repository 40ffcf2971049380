"""Cross-fitted predictive ("usable", V-) information about a discrete label, with a bracket.

``I_V(X -> Y) = H(Y) - CE``, with ``CE = -(1/n) sum_i log q(y_i | x_i)`` the held-out
cross-entropy of a probabilistic classifier ``q`` (Xu, Zhao, Song, Stewart & Ermon 2020, ICLR,
"A theory of usable information"; Pimentel et al. 2020 ACL for probing). For any ``q``,
``E[-log q(Y|X)] >= H(Y|X)``, so the population value is a lower bound on ``I(X;Y)`` and
``H(Y) - CE <= H(Y)`` always; cross-fitting (``n_splits`` stratified folds, every example
scored by a model that never saw it) removes the optimism of in-sample fits. ``H(Y)`` is the
plug-in label entropy, so the per-example terms ``log q(y_i|x_i) - log p(y_i)`` average exactly
to the estimate.

Several candidate families (:mod:`estimators._probe_families`) are tried and the best is
chosen WITHOUT optimism: inside each outer training fold an inner stratified cross-validation
(``inner_splits``) scores every family at every hyperparameter, the best (family,
hyperparameter) is refitted on the whole outer training fold, and only that procedure's
predictions on the outer held-out fold enter the estimate. The label-free transforms
(standardisation, normal scores, principal components) are fitted on the outer training fold
and shared by its inner folds; the logistic families' strengths are one warm-started ridge
path per outer fold, all outer folds and both families in one batch
(:func:`estimators._logistic.path_fit`), each fit an exact minimiser. The per-family values
(each family with its own inner-selected hyperparameter, scored on the outer folds) are
returned too; their maximum is optimistic and is not the estimate.

Interval: ``estimate +- z sd_i / sqrt(n)`` over the per-example held-out terms (the
evaluation noise of the cross-fitted procedure; it does not contain the procedure's learning
cost, so it covers ``E[I_V]``, which is at most ``I``). Bracket: ``lower = max(0, interval
low, Fano bound from the held-out error)`` and ``upper`` = the asymptotic 1-NN / Gini bound
of :mod:`estimators.bayes_bounds` up to its :data:`~estimators.bayes_bounds.NN_MAX_DIMS`
coordinates, ``H(Y)`` above (at least ``lower``, at most ``H(Y)``). Coverage of the
truth by both is measured in ``infodiv validate --suite members``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from estimators import _logistic
from estimators import _probe_families as fam
from estimators.bayes_bounds import NN_MAX_DIMS, fano_lower_bound, gini_upper_bound
from estimators.validation import check_array, check_labels, check_random_state, to_base

__all__ = ["UsableInformation", "usable_information", "estimate", "check_folds", "prepare"]


@dataclass(frozen=True)
class UsableInformation:
    """Cross-fitted usable information with its interval and bracket (units of ``base``).

    ``estimate = h_y - cross_entropy``; ``interval`` = ``(low, high)``, ``high <= h_y``;
    ``lower <= estimate`` and ``upper >= lower`` bracket ``I(X;Y)``; ``upper_kind`` says
    which upper side: the asymptotic 1-NN bound (up to
    :data:`estimators.bayes_bounds.NN_MAX_DIMS` coordinates) or ``H(Y)``;
    ``folds`` = the selected ``family(hyperparameter)`` of each outer fold;
    ``family_values`` = each family's own cross-fitted value (their max is optimistic);
    ``pointwise`` = per-example ``log q(y_i|x_i) - log p(y_i)``.
    """

    estimate: float
    interval: tuple
    lower: float
    upper: float
    upper_kind: str
    h_y: float
    cross_entropy: float
    error: float
    fano_lower: float
    folds: tuple
    family_values: dict
    n_samples: int
    n_classes: int
    base: float | str
    pointwise: np.ndarray = field(repr=False)

    def to_dict(self) -> dict:
        """JSON-serialisable copy without the per-example terms."""
        out = {k: v for k, v in self.__dict__.items() if k != "pointwise"}
        out["interval"], out["folds"] = list(self.interval), list(self.folds)
        return out


def prepare(x, labels, name: str = "x", bias=None) -> fam.Data:
    """Validate ``x`` ((n,), (n, d) or a member array (n, M, C)), ``labels`` and ``bias``."""
    labels = check_labels(labels)
    arr = np.asarray(x)
    members = None
    if arr.ndim == 3:
        flat = check_array(arr.reshape(arr.shape[0], -1), name, allow_discrete=False)
        members = flat.reshape(arr.shape)
    else:
        flat = check_array(arr, name, allow_discrete=False)
    if len(flat) != len(labels):
        raise ValueError(f"length mismatch: {name} has {len(flat)} samples but labels has "
                         f"{len(labels)}")
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"labels hold {len(classes)} class; need at least 2")
    own = (members is not None and members.shape[2] == len(classes)
           and np.array_equal(classes, np.arange(len(classes))))
    offset = 0.0
    if bias is not None:
        offset = check_array(np.reshape(bias, (1, -1)), "bias", allow_discrete=False)[0]
        if members is None or len(offset) != members.shape[2]:
            raise ValueError(f"bias needs a member array (n, M, C) with C = {len(offset)}")
    return fam.Data(flat, y.astype(np.int64), len(classes), members, own, offset)


def check_folds(y: np.ndarray, n_splits: int, inner_splits: int) -> None:
    """ValueError naming the smallest class when it cannot fill the folds."""
    for name, k in (("n_splits", n_splits), ("inner_splits", inner_splits)):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"{name} must be an integer >= 2, got {k!r}")
    counts = np.bincount(y)
    need = n_splits * inner_splits
    if counts.min() < need:
        raise ValueError(f"labels: class {int(np.argmin(counts))} has {counts.min()} samples; "
                         f"n_splits={n_splits} x inner_splits={inner_splits} needs at least "
                         f"{need} per class")


def _folds(y, k, rng):
    from sklearn.model_selection import StratifiedKFold

    seed = int(rng.integers(0, 2**31 - 1))
    return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def _nll(logq: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -logq[np.arange(len(y)), y]


def _paths(data: fam.Data, families, folds, inner, order, ranks=None) -> dict:
    """``(inner-CV scores (L,), whole-fold weights at the best strength (q, K - 1), held-out
    features)`` of every fitted family and outer fold: all their ridge paths in one batch per
    feature width and path length (:func:`estimators._logistic.path_fit`)."""
    out, batches = {}, {}
    for f in families:
        if f in ("calibrated", "logistic", "logistic_rank"):
            for i, (tr, te) in enumerate(folds):
                z_tr, z_te = fam.features(f, data, tr, te, order,
                                          None if ranks is None else ranks[:, i])
                batches.setdefault((z_tr.shape[1], len(fam.lams(f))), []).append(
                    (f, i, z_tr, z_te))
    for items in batches.values():
        n_max = max(len(folds[i][0]) for _, i, _, _ in items)
        z = np.zeros((len(items), n_max, items[0][2].shape[1]))
        y = np.zeros((len(items), n_max), dtype=np.int64)
        groups = np.zeros((len(items), n_max), dtype=np.int64)
        rows = np.zeros((len(items), n_max), dtype=bool)
        lams = np.stack([fam.lams(f) for f, _, _, _ in items])
        for k, (_, i, z_tr, _) in enumerate(items):
            m = len(z_tr)
            z[k, :m], y[k, :m], groups[k, :m], rows[k, :m] = z_tr, data.y[folds[i][0]], \
                inner[i], True
        scores, weights, _ = _logistic.path_fit(z, y, groups, lams, data.n_classes,
                                                rows=rows, n_groups=int(inner[0].max()) + 1)
        for k, (f, i, _, z_te) in enumerate(items):
            out[f, i] = scores[k], weights[k], z_te
    return out


def _family_fit(data: fam.Data, f: str, tr, te, inner, path):
    """Inner-CV score, chosen hyperparameter and held-out ``log q`` on ``te`` of family ``f``
    fitted on ``tr`` (``inner``: the inner folds; ``path``: the family's fitted path)."""
    y_tr = data.y[tr]
    if f == "own":
        return float(_nll(fam.own_log_proba(data, tr), y_tr).sum()), None, \
            fam.own_log_proba(data, te)
    if f == "knn":
        total = np.zeros(len(fam.grid(f)))
        for a, b in inner:
            for i, logq in enumerate(fam.knn_path(data, tr[a], tr[b])):
                total[i] += _nll(logq, y_tr[b]).sum()
        best = int(np.argmin(total))
        hp = fam.grid(f)[best]
        return float(total[best]), hp, fam.knn_path(data, tr, te, (hp,))[0]
    scores, weights, z_te = path              # weights: at the lowest inner score
    best = int(np.argmin(scores))
    logq = _logistic.log_proba(weights[None], z_te[None])[0]
    return float(scores[best]), fam.grid(f)[best], logq


def cross_fit(data: fam.Data, families, n_splits: int, inner_splits: int, rng, folds=None,
              order=None, ranks=None):
    """Outer held-out ``log q`` of the selected procedure, of each family, and the choices.

    In each outer training fold every family is scored by the inner stratified CV (its
    hyperparameter too: the logistic families along their warm-started ridge path,
    :func:`estimators._logistic.path_fit`), the best family is the one with the lowest inner
    score, and each family's fit on the whole outer training fold (at its inner-chosen
    hyperparameter) predicts the outer held-out fold. The label-free transforms are fitted on
    the outer training fold and shared by its inner folds. ``folds``: the outer folds (default:
    drawn from ``rng``); ``order``: the argsort of ``data.x`` over the rows, when known;
    ``ranks``: the normal scores of ``data.x`` under each outer fold ``(d, n_splits, n)``
    (:func:`estimators._member_fits.fold_normal_scores`), when known."""
    n = len(data.y)
    chosen = np.zeros((n, data.n_classes))
    per_family = {f: np.zeros((n, data.n_classes)) for f in families}
    choices = []
    if order is None and "logistic_rank" in families:
        order = np.argsort(data.x, axis=0, kind="stable")
    folds = list(_folds(data.y, n_splits, rng) if folds is None else folds)
    inner_folds, groups = [], []
    for tr, _ in folds:
        inner_folds.append(_folds(data.y[tr], inner_splits, rng))
        g = np.empty(len(tr), dtype=np.int64)
        for j, (_, b) in enumerate(inner_folds[-1]):
            g[b] = j
        groups.append(g)
    paths = _paths(data, families, folds, groups, order, ranks)
    for i, (tr, te) in enumerate(folds):
        scores, hps = {}, {}
        for f in families:
            scores[f], hps[f], per_family[f][te] = _family_fit(data, f, tr, te, inner_folds[i],
                                                               paths.get((f, i)))
        best = min(families, key=lambda f: scores[f])
        chosen[te] = per_family[best][te]
        choices.append(best if hps[best] is None else f"{best}({hps[best]:g})")
    return chosen, per_family, tuple(choices)


@_logistic.one_blas_thread
def usable_information(x, labels, *, families=None, n_splits=5, inner_splits=3, base=2,
                       confidence=0.95, random_state=0, bracket=True,
                       bias=None) -> UsableInformation:
    """Cross-fitted usable information ``H(Y) - CE`` with nested family selection.

    Parameters
    ----------
    x : array (n,), (n, d) or (n, M, C)
        Continuous features; a member array adds the ``own`` (when ``C`` equals the number of
        classes and the labels are ``0..C-1``) and ``calibrated`` families.
    labels : 1-D integer array
    families : sequence of str, optional
        Subset of :data:`estimators._probe_families.FAMILIES` (default: all that apply).
    n_splits, inner_splits : int
        Outer cross-fitting folds and inner selection folds (stratified).
    base : float or "e"
        Units (2: bits).
    confidence : float
        Level of the interval; ``z`` of the bracket's one-sided corrections.
    random_state : None, int or Generator
        Seeds the fold splits.
    bracket : bool
        Compute the Fano / 1-NN bracket (``False``: ``lower`` = interval low, ``upper`` =
        ``H(Y)``).
    bias : array (C,), optional
        The model's constant logit offset: the ``own`` family scores
        ``softmax(sum_m u_m + bias)``, the model's own output (member arrays only).

    Returns
    -------
    UsableInformation
    """
    data = prepare(x, labels, bias=bias)
    check_folds(data.y, n_splits, inner_splits)
    return estimate(data, families, n_splits, inner_splits, check_random_state(random_state),
                    base=base, confidence=confidence, bracket=bracket)


def estimate(data: fam.Data, families, n_splits: int, inner_splits: int, rng, *, base=2,
             confidence=0.95, bracket=True, folds=None, order=None,
             ranks=None) -> UsableInformation:
    """:func:`usable_information` of prepared data (``folds``: the outer folds, drawn from
    ``rng`` when not given; the inner folds are drawn from ``rng``; ``order``, ``ranks``: as
    in :func:`cross_fit`)."""
    allowed = fam.available(data)
    families = allowed if families is None else tuple(families)
    bad = [f for f in families if f not in allowed]
    if bad or not families:
        raise ValueError(f"families {bad or '[]'} do not apply to this input; choose from "
                         f"{allowed}")
    chosen, per_family, choices = cross_fit(data, families, n_splits, inner_splits, rng, folds,
                                            order, ranks)
    n = len(data.y)
    log_prior = np.log(np.bincount(data.y) / n)[data.y]
    h_y = float(to_base(-log_prior.mean(), base))
    terms = to_base(-_nll(chosen, data.y) - log_prior, base)
    estimate = float(terms.mean())
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    half = z * float(terms.std(ddof=1)) / np.sqrt(n)
    interval = (estimate - half, min(estimate + half, h_y))
    error = float(np.mean(chosen.argmax(axis=1) != data.y))
    fano = upper = None
    upper_kind = "H(Y)"
    if bracket:
        fano = fano_lower_bound(error, n, data.n_classes, h_y, z=z, base=base)
        if data.x.shape[1] <= NN_MAX_DIMS:
            upper = gini_upper_bound(data.x, data.y, h_y, z=z, base=base)
            upper_kind = "1-NN Gini bound (asymptotic)"
    lower = max(0.0, interval[0], fano or 0.0)
    values = {f: float(h_y - to_base(_nll(v, data.y).mean(), base))
              for f, v in per_family.items()}
    return UsableInformation(
        estimate=estimate, interval=interval, lower=float(lower),
        upper=float(max(h_y if upper is None else upper, lower)), upper_kind=upper_kind,
        h_y=h_y,
        cross_entropy=float(h_y - estimate), error=error,
        fano_lower=float("nan") if fano is None else fano, folds=choices,
        family_values=values, n_samples=n, n_classes=data.n_classes, base=base,
        pointwise=terms)
