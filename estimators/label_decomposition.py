"""``I(U;Y) = relevancy + diversity`` from valid estimates (DESIGN 2.5; the paper's Theorem 4).

- ``joint``: the cross-fitted usable information of the whole member array
  (:func:`estimators.usable.usable_information`, with its interval and bracket);
- ``relevancies``: each member's ``I(U_m;Y)`` on its whole ``C``-dimensional vector
  (:mod:`estimators.relevancy`), label-null debiased; ``relevancy`` their sum;
- ``diversity = joint - relevancy`` through that identity (DESIGN 2.5: never as
  ``TC(U|Y) - TC(U)`` of near-deterministic members). Its interval is a paired bootstrap over
  the examples: the same resampled rows for the joint's and the members' held-out terms
  (``D*_b = mean_b(joint_i - sum_m s_mi) + M null_mean``), percentiles. Its label null
  (``null_permutations`` > 0): the whole procedure with the members' rows permuted against
  the labels (so the label folds stay stratified), where ``D = 0``.

The joint is a lower-side estimate (its learning cost is not removed), so ``diversity`` leans
low by that cost; the relevancies are debiased by their label null (module
:mod:`estimators.relevancy`). Units of ``base`` (bits by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from estimators import _logistic
from estimators.relevancy import member_relevancies, normal_interval
from estimators.usable import _folds, check_folds, prepare, usable_information
from estimators.usable import estimate as _usable
from estimators.validation import (
    check_labels,
    check_random_state,
    check_same_length,
    check_variables,
    is_discrete,
    to_base,
    unit_name,
)

__all__ = ["LabelDecomposition", "label_decomposition", "information_decomposition"]

#: the shared normal scores of every coordinate under every fold are kept up to this many
#: values (8 bytes each); above it the joint and the members compute their own
RANK_CACHE = 25_000_000


@dataclass(frozen=True)
class LabelDecomposition:
    """Valid ``joint = relevancy + diversity`` (units of ``base``); see the module docstring.

    ``joint_interval`` / ``joint_lower`` / ``joint_upper``: the joint's interval and bracket;
    ``relevancy_interval`` from the per-example member terms; ``diversity_interval`` paired
    bootstrap; ``diversity_null`` / ``joint_null``: D and the joint on permuted labels (empty
    unless requested); ``diversity_pointwise``: per-example D terms (their mean is
    ``diversity``; resampling them gives the paired bootstrap).
    """

    joint: float
    relevancy: float
    diversity: float
    relevancies: tuple
    joint_interval: tuple
    joint_lower: float
    joint_upper: float
    joint_upper_kind: str
    relevancy_interval: tuple
    diversity_interval: tuple
    diversity_null: tuple
    relevancy_raw: float
    relevancies_raw: tuple
    member_null_mean: float
    h_y: float
    joint_folds: tuple
    family_values: dict
    member_choices: dict
    method: str
    base: float | str
    n_samples: int
    n_variables: int
    joint_pointwise: np.ndarray = field(repr=False)
    joint_null: tuple = ()
    diversity_pointwise: np.ndarray | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """JSON-serialisable copy (tuples as lists, no per-example terms)."""
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in self.__dict__.items()
                if k not in ("joint_pointwise", "diversity_pointwise")}

    def table(self) -> str:
        """The terms with their intervals as an aligned text table."""
        def iv(pair):
            return f"[{pair[0]: .4f}, {pair[1]: .4f}]"
        rows = [("I(U;Y)  joint", self.joint,
                 f"interval {iv(self.joint_interval)}  bracket "
                 f"{iv((self.joint_lower, self.joint_upper))}"),
                ("relevancy  sum I(U_m;Y)", self.relevancy,
                 f"interval {iv(self.relevancy_interval)}  raw {self.relevancy_raw:.4f}"),
                ("diversity  joint - relevancy", self.diversity,
                 f"paired bootstrap {iv(self.diversity_interval)}"),
                ("H(Y)", self.h_y, "")]
        if self.diversity_null:
            rows.append(("diversity, label null (mean)", float(np.mean(self.diversity_null)),
                         f"{len(self.diversity_null)} permutations"))
        head = (f"LabelDecomposition(method={self.method!r}, n_samples={self.n_samples}, "
                f"n_variables={self.n_variables}, unit={unit_name(self.base)})")
        width = max(len(r[0]) for r in rows)
        return "\n".join([head] + [f"  {a:<{width}}  {b: .6f}  {c}" for a, b, c in rows])

    def __repr__(self) -> str:
        return self.table()


def _paired_bootstrap(d: np.ndarray, shift: float, n_boot: int, confidence: float, rng):
    # resamples drawn 250 at a time: the same draws as one (n_boot, n) array, less memory
    boot = np.concatenate([d[rng.integers(0, len(d), size=(min(250, n_boot - i), len(d)))]
                           .mean(axis=1) for i in range(0, n_boot, 250)]) + shift
    a = (1 - confidence) / 2
    return float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))


@_logistic.one_blas_thread
def label_decomposition(u, labels, *, n_splits=5, inner_splits=3, n_null=1,
                        null_permutations=0, n_boot=2000, confidence=0.95, base=2,
                        random_state=0, families=None, bias=None) -> LabelDecomposition:
    """Valid relevancy / diversity decomposition of ``I(U;Y)`` for members ``u`` (n, M, C).

    Parameters
    ----------
    u : array (n, M, C)
        Member vectors (whole vectors; no centring).
    labels : 1-D integer array
    n_splits, inner_splits, families, bias
        Cross-fitting, families and the own logits' offset of
        :func:`estimators.usable.usable_information`.
    n_null : int
        Draws of the members' label null (each member's rows permuted independently; the
        null mean pools ``n_null M`` terms).
    null_permutations : int
        Permutations (members against labels) of the whole procedure: the label null of
        ``diversity``.
    n_boot, confidence
        Paired bootstrap of ``diversity``; level of every interval.
    base, random_state
        Units; seeds folds, permutations and resamples.
    """
    u = np.asarray(u)
    if u.ndim != 3:
        raise ValueError(f"u must be an (n, M, C) member array, got shape {u.shape}")
    data = prepare(u, labels, name="u", bias=bias)
    check_folds(data.y, n_splits, inner_splits)
    rng = check_random_state(random_state)
    folds = _folds(data.y, n_splits, rng)      # shared by the joint and every member
    from estimators._member_fits import fold_normal_scores

    order = np.argsort(data.x, axis=0, kind="stable")   # and the rank order of every column
    train = np.zeros((n_splits, len(data.y)), dtype=bool)
    for f, (tr, _) in enumerate(folds):
        train[f, tr] = True
    # every coordinate's normal scores under each fold, when they fit in RANK_CACHE values
    ranks = fold_normal_scores(data.x, train, order) if data.x.size * n_splits <= RANK_CACHE \
        else None
    joint = _usable(data, families, n_splits, inner_splits, rng, base=base,
                    confidence=confidence, folds=folds, order=order, ranks=ranks)
    n, m = data.members.shape[:2]
    log_prior = np.log(np.bincount(data.y) / n)[data.y]
    # the members' null: an independent permutation of each member's rows per draw
    null_perms = [rng.permuted(np.broadcast_to(np.arange(n), (m, n)), axis=1)
                  for _ in range(n_null)]
    common = [rng.permutation(n) for _ in range(null_permutations)]
    rel = member_relevancies(data.members, data.y, data.n_classes, folds, log_prior,
                             perms=null_perms, common_perms=common, order=order, known=ranks,
                             to_units=lambda v: to_base(v, base))
    shift = -m * rel.null_mean
    relevancy = float(rel.debiased.sum())
    r_low, r_high = normal_interval(rel.pointwise.sum(axis=1), confidence)
    d_terms = joint.pointwise - rel.pointwise.sum(axis=1)
    d_null, j_null = [], []
    for r, p in enumerate(common):
        j0 = usable_information(u[p], labels, families=families, n_splits=n_splits, bias=bias,
                                inner_splits=inner_splits, base=base, random_state=rng,
                                bracket=False).estimate
        j_null.append(float(j0))
        d_null.append(float(j0 - (rel.permuted_values[r] - rel.null_mean).sum()))
    if m == 1:   # one member: I(U;Y) = I(U_1;Y) exactly, so R is the joint's estimate, D = 0
        return _one_member(joint, rel, base, n, d_null, j_null)
    return LabelDecomposition(
        joint=joint.estimate, relevancy=relevancy, diversity=joint.estimate - relevancy,
        relevancies=tuple(float(v) for v in rel.debiased), joint_interval=joint.interval,
        joint_lower=joint.lower, joint_upper=joint.upper, joint_upper_kind=joint.upper_kind,
        relevancy_interval=(r_low + shift, r_high + shift),
        diversity_interval=_paired_bootstrap(d_terms, -shift, n_boot, confidence, rng),
        diversity_null=tuple(d_null), relevancy_raw=float(rel.values.sum()),
        relevancies_raw=tuple(float(v) for v in rel.values),
        member_null_mean=rel.null_mean, h_y=joint.h_y, joint_folds=joint.folds,
        family_values=joint.family_values, member_choices=rel.choices, method="usable",
        base=base, n_samples=n, n_variables=m, joint_pointwise=joint.pointwise,
        joint_null=tuple(j_null), diversity_pointwise=d_terms - shift)


def _one_member(joint, rel, base, n, d_null, j_null) -> LabelDecomposition:
    """The decomposition of a single member, exact where it can be: U = U_1, so the
    relevancy is I(U;Y) itself (the joint's estimate, interval and fit: one quantity, one
    value) and D = I(U;Y) − I(U_1;Y) = 0 with a zero interval and a zero null."""
    return LabelDecomposition(
        joint=joint.estimate, relevancy=joint.estimate, diversity=0.0,
        relevancies=(float(joint.estimate),), joint_interval=joint.interval,
        joint_lower=joint.lower, joint_upper=joint.upper, joint_upper_kind=joint.upper_kind,
        relevancy_interval=tuple(float(v) for v in joint.interval), diversity_interval=(0.0, 0.0),
        diversity_null=tuple(0.0 for _ in d_null), relevancy_raw=float(rel.values.sum()),
        relevancies_raw=tuple(float(v) for v in rel.values),
        member_null_mean=rel.null_mean, h_y=joint.h_y, joint_folds=joint.folds,
        family_values=joint.family_values, member_choices=rel.choices, method="usable",
        base=base, n_samples=n, n_variables=1, joint_pointwise=joint.pointwise,
        joint_null=tuple(j_null), diversity_pointwise=np.zeros(n))


def information_decomposition(variables, labels, *, method=None, k=3, base=2, random_state=0,
                              max_order=None, **options):
    """``I(U;Y)``, relevancy and diversity of members ``variables`` about ``labels``.

    ``method=None`` (default) or ``"usable"``: :func:`label_decomposition` (valid estimates,
    never above ``H(Y)``; options ``n_splits``, ``inner_splits``, ``n_null``,
    ``null_permutations``, ``n_boot``, ``confidence``, ``families``, ``bias``); ``variables`` an
    ``(n, M, C)`` array or a list of equally shaped ``(n, C)`` members. Integer (discrete)
    members get the exact plug-in terms by default.
    Any other method (``"knn"``, ``"gaussian"``, ``"copula"``, ``"binned"``, ...): the
    entropy-based terms of :func:`estimators.interaction.information_decomposition`
    (``TC(U)``, ``TC(U|Y)``, ``max_order``), with an
    :class:`~estimators.diagnostics.EstimatorWarning` when the joint or a member's term exceeds
    ``H(Y)`` (the model does not fit the data: those numbers are no estimates of ``I``).

    One member (``M = 1``) is exact whatever the method: ``U = U_1``, so
    ``R = I(U_1;Y) = I(U;Y)`` is the joint's own estimate (same value, same interval) and
    ``D = I(U;Y) - R = TC(U|Y) - TC(U) = 0`` exactly, with the interval ``[0, 0]`` and a zero
    null (usable method).
    """
    labels = check_labels(labels)
    discrete = all(is_discrete(v) for v in (
        [variables] if isinstance(variables, np.ndarray) else variables))
    if method is None and discrete:
        method = "knn"  # integer members: the exact plug-in terms (any method gives them)
    if method in (None, "usable"):
        if max_order is not None:
            raise ValueError("max_order (interaction-information orders) needs an entropy-based "
                             "method, e.g. method='gaussian'")
        u = variables if isinstance(variables, np.ndarray) else np.stack(
            [np.asarray(v).reshape(len(labels), -1) for v in variables], axis=1)
        return label_decomposition(u, labels, base=base, random_state=random_state, **options)
    from estimators import interaction
    from estimators._dispatch import resolve
    from estimators.api import warn_above_label_entropy

    blocks = check_variables(variables)
    check_same_length(**{"variables[0]": blocks[0], "labels": labels})
    est = resolve(method, k, check_random_state(random_state), options)
    est.check_strata(labels, sum(b.shape[1] for b in blocks), "labels")
    dec = interaction.information_decomposition(variables, labels, method=method, k=k,
                                                base=base, random_state=random_state,
                                                max_order=max_order, **options)
    warn_above_label_entropy(max(dec.joint, *dec.relevancies), labels, method, base,
                             what="max(I(U;Y), I(U_i;Y))")
    return dec
