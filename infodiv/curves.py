"""Layer-addition curves: prefix, suffix, greedy forward, greedy backward and random orders.

A concave greedy curve proves nothing — greedy sorts the gains, so its curve is concave for
almost any f. The random-order curves are the informative ones: the mean over uniformly random
orders of f(π_{1..k}) has increments g(k) = E_π[f(π_{1..k}) − f(π_{1..k−1})] that decrease in
k for every submodular f (each increment is an average of ρ_x(A) over |A| = k − 1, and
submodularity orders those averages), while for a modular f they are constant. The same
permutations give Monte-Carlo Shapley values φ_i = E_π[ρ_i(predecessors of i in π)], whose
sum equals f(V) − f(∅) exactly for every single permutation (telescoping), which is checked.

Greedy selection is cross-fitted: the order is chosen on one half of the examples and its curve
is scored on the other half, both ways, and the two held-out curves are averaged; the in-sample
greedy curve is kept next to it to show the optimism of selecting and scoring on the same data.

Gains are reported in *utility* units, sign·Δf with sign = −1 for losses (cross-entropy,
Brier), so "diminishing returns" always means a decreasing gain profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from estimators.resampling import chunk_sizes, parallel_map

from .greedy import greedy_backward, greedy_forward
from .information import error_bounds, label_entropy
from .setfunctions import ReadoutSetFunction, SetFunction, as_set_function, split_halves
from .setfunctions.registry import is_run

__all__ = ["Curve", "LayerCurves", "layer_curves", "order_values", "order_scores",
           "orders_values", "orders_scores",
           "set_values", "greedy_forward",
           "greedy_backward", "random_order_values", "ORDERS"]

ORDERS = ("prefix", "suffix", "greedy", "backward", "random")


@dataclass
class Curve:
    """One curve: ``values[k]`` is f of the size-k set (k = 0..M) of this order.

    For ``random`` the values are the mean over permutations and ``extra`` holds ``ci_low``,
    ``ci_high`` (95% CI of the mean), ``band_low``/``band_high`` (2.5/97.5 percentiles over
    orders), ``gain`` g(k) (utility units), ``shapley`` and ``shapley_check``.
    """

    name: str
    values: np.ndarray
    order: np.ndarray | None = None
    extra: dict = field(default_factory=dict)
    #: random orders only: the permutations ``[P, M]`` and f along each ``[P, M+1]``
    #: (kept in memory for the diagnostics, not serialised by :meth:`to_dict`)
    perms: np.ndarray | None = field(default=None, repr=False)
    samples: np.ndarray | None = field(default=None, repr=False)

    def gains(self, sign: float = 1.0) -> np.ndarray:
        """Utility increments sign·(f(S_k) − f(S_{k−1})) for k = 1..M."""
        return sign * np.diff(self.values)

    def to_dict(self) -> dict:
        out = {"name": self.name, "values": self.values.tolist(),
               "order": None if self.order is None else self.order.tolist()}
        for k, v in self.extra.items():
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
        return out


@dataclass
class LayerCurves:
    """Curves by order name plus what is needed to read them."""

    objective: str
    units: str
    greater_is_better: bool
    n_members: int
    curves: dict
    notes: list = field(default_factory=list)
    member_names: list | None = None

    def __getitem__(self, name) -> Curve:
        return self.curves[name]

    def __contains__(self, name) -> bool:
        return name in self.curves

    @property
    def sign(self) -> float:
        return 1.0 if self.greater_is_better else -1.0

    def to_dict(self) -> dict:
        return {"objective": self.objective, "units": self.units,
                "greater_is_better": self.greater_is_better, "n_members": self.n_members,
                "member_names": self.member_names, "notes": list(self.notes),
                "curves": {k: c.to_dict() for k, c in self.curves.items()}}


# ------------------------------------------------------------------------------ fixed orders
def order_values(f: SetFunction, order) -> np.ndarray:
    """f of every prefix of ``order``: ``[f(∅), f(order[:1]), ..., f(order)]``."""
    return np.asarray(f.order_values(np.asarray(order, dtype=np.int64)), dtype=np.float64)


def set_values(f: SetFunction, sets) -> np.ndarray:
    """Values f(S) ``[K]`` of the member sets ``sets`` (K index arrays): a readout set function
    scores all K in one batched calibration fit, one with its own batched ``set_values``
    (Gaussian information: one stacked Cholesky per set size) uses it, others call ``value``
    once per set."""
    if isinstance(f, ReadoutSetFunction):
        return f.set_scores(sets).mean(axis=1)
    if hasattr(f, "set_values"):
        return np.asarray(f.set_values(sets), dtype=np.float64)
    return np.array([f.value(np.asarray(s, dtype=np.int64)) for s in sets])


def orders_scores(f: SetFunction, orders) -> np.ndarray:
    """Per-example f of every prefix of each order ``[P, M]``: ``[P, M+1, N]``; a readout set
    function scores all P·(M+1) prefixes in batched fits, another is called per order."""
    orders = np.asarray(orders, dtype=np.int64)
    if hasattr(f, "orders_scores"):
        return np.asarray(f.orders_scores(orders), dtype=np.float64)
    return np.stack([order_scores(f, o) for o in orders])


def orders_values(f: SetFunction, orders) -> np.ndarray:
    """f of every prefix of each order ``[P, M]``: ``[P, M+1]`` (row means of
    :func:`orders_scores` where the set function has per-example scores)."""
    orders = np.asarray(orders, dtype=np.int64)
    if hasattr(f, "orders_scores"):
        return orders_scores(f, orders).mean(axis=2)
    return np.stack([order_values(f, o) for o in orders])


def order_scores(f: SetFunction, order) -> np.ndarray:
    """Per-example f of every prefix of ``order``: ``[M+1, N]`` (row means = order_values).

    A readout set function scores all prefixes in one batch (cumulative sums, as its
    ``order_values``); another per-example set function is called once per prefix.
    """
    order = np.asarray(order, dtype=np.int64)
    if hasattr(f, "order_scores"):
        return np.asarray(f.order_scores(order), dtype=np.float64)
    return np.stack([np.asarray(f.scores(order[:k]), dtype=np.float64)
                     for k in range(len(order) + 1)])


# ------------------------------------------------------------------------------ random orders
def _random_chunk(task, rng):
    f, n_perm = task
    m = f.n_members
    perms = np.stack([rng.permutation(m) for _ in range(n_perm)]).astype(np.int64)
    return perms, orders_values(f, perms)


def random_order_values(f: SetFunction, n_permutations: int = 200, *, random_state=0,
                        n_jobs=1, chunk: int = 25):
    """f along ``n_permutations`` uniformly random orders.

    Returns ``perms`` ``[P, M]`` and ``curves`` ``[P, M+1]``. Orders are drawn in chunks of
    ``chunk`` with SeedSequence-spawned generators, so the result does not depend on
    ``n_jobs`` or on the joblib backend.
    """
    if n_permutations < 2:
        raise ValueError(f"n_permutations must be >= 2, got {n_permutations}")
    tasks = [(f, s) for s in chunk_sizes(n_permutations, chunk)]
    out = parallel_map(_random_chunk, tasks, random_state=random_state, n_jobs=n_jobs,
                       progress=f"random orders {f.name}")
    return np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])


def shapley_from_orders(perms: np.ndarray, curves: np.ndarray) -> np.ndarray:
    """Monte-Carlo Shapley values φ_i = mean over orders of i's marginal contribution."""
    p, m = perms.shape
    phi = np.zeros(m)
    np.add.at(phi, perms.ravel(), np.diff(curves, axis=1).ravel())
    return phi / p


def random_curve(f: SetFunction, n_permutations=200, *, random_state=0, n_jobs=1) -> Curve:
    perms, curves = random_order_values(f, n_permutations, random_state=random_state,
                                        n_jobs=n_jobs)
    p = curves.shape[0]
    mean = curves.mean(axis=0)
    se = curves.std(axis=0, ddof=1) / np.sqrt(p)
    phi = shapley_from_orders(perms, curves)
    total = float(mean[-1] - mean[0])
    extra = dict(ci_low=mean - 1.96 * se, ci_high=mean + 1.96 * se,
                 band_low=np.percentile(curves, 2.5, axis=0),
                 band_high=np.percentile(curves, 97.5, axis=0),
                 gain=f.sign() * np.diff(mean), shapley=phi,
                 shapley_check={"sum_phi": float(phi.sum()), "f_V_minus_f_empty": total,
                                "residual": float(phi.sum() - total)},
                 n_permutations=p)
    return Curve("random", mean, None, extra, perms=perms, samples=curves)


# ------------------------------------------------------------------------------ main entry
def _cross_fit_split(f: SetFunction, random_state):
    labels = f.labels
    if labels is not None and len(labels) == f.n_examples:
        return split_halves(labels, random_state, getattr(f, "groups", None))
    rng = np.random.default_rng(random_state)
    perm = rng.permutation(f.n_examples)
    half = f.n_examples // 2
    return np.sort(perm[:half]), np.sort(perm[half:])


def _searched_curve(f, name, search, *, cross_fit, random_state, lazy, notes) -> Curve:
    kwargs = {"lazy": lazy} if name == "greedy" else {}
    order, in_sample, info = search(f, progress=True, **kwargs)
    extra = {"values_in_sample": in_sample, **info}
    if info.get("lazy_rejected"):
        notes.append(f"{name}: lazy greedy observed a diminishing-returns violation (a fresh "
                     "gain above its stale bound), so the naive greedy order is reported")
    values = in_sample
    held = None
    if cross_fit and f.can_restrict():
        a, b = _cross_fit_split(f, random_state)
        held, fold_orders = [], []
        try:
            for sel, ev in ((a, b), (b, a)):
                o, _, _ = search(f.restrict(sel), **kwargs)
                held.append(order_values(f.restrict(ev), o))
                fold_orders.append(o)
        except ValueError as exc:  # e.g. a Gaussian objective with more dims than half a class
            notes.append(f"{name}: cross-fitting impossible ({exc}); the curve is in-sample")
            held = None
    if held is not None:
        values = (held[0] + held[1]) / 2.0
        extra.update(cross_fitted=True, fold_orders=[o.tolist() for o in fold_orders],
                     fold_values=[h.tolist() for h in held])
    else:
        extra["cross_fitted"] = False
        if cross_fit and not f.can_restrict():
            notes.append(f"{name}: the set function has no per-example scores, so the curve "
                         "is in-sample (selected and scored on the same data)")
    return Curve(name, values, order, extra)


def layer_curves(contrib_or_f, *, objective=None, n_members=None,
                 orders=("prefix", "suffix", "greedy", "backward", "random"),
                 n_permutations=200, random_state=0, cross_fit=True, lazy=False, n_jobs=1,
                 **objective_kwargs) -> LayerCurves:
    """Layer-addition curves of a set function over the members.

    Parameters
    ----------
    contrib_or_f : Contributions, SetFunction or callable
        With a Contributions, ``objective`` names the set function
        (:data:`infodiv.setfunctions.OBJECTIVES`); a callable ``f(indices) -> per-example
        scores`` needs ``n_members``.
    orders : iterable of {"prefix", "suffix", "greedy", "backward", "random"}
        prefix = depth order (member 0 first), suffix = reverse depth order (last member first).
    n_permutations : int
        Random orders for the mean curve, g(k) and the Shapley values.
    random_state : int
        Seeds the random orders and the cross-fitting split.
    cross_fit : bool
        Select greedy orders on one half of the examples and score them on the other.
    lazy : bool
        Use lazy greedy, with the fallback described in :func:`greedy_forward`.
    n_jobs : int
        joblib workers for the random orders (backend from ``joblib.parallel_config``).

    Returns
    -------
    LayerCurves
        ``result["greedy"].values`` etc.; for information objectives each order curve also
        carries the Eq. 12 bounds and the measured error of the summed readout.
    """
    f = as_set_function(contrib_or_f, objective=objective, n_members=n_members,
                        **objective_kwargs)
    unknown = set(orders) - set(ORDERS)
    if unknown:
        raise ValueError(f"unknown orders {sorted(unknown)}; choose from {ORDERS}")
    m = f.n_members
    notes: list[str] = []
    curves = {}
    for name in orders:
        if name == "prefix":
            order = np.arange(m)
            curves[name] = Curve(name, order_values(f, order), order)
        elif name == "suffix":
            order = np.arange(m)[::-1].copy()
            curves[name] = Curve(name, order_values(f, order), order)
        elif name == "greedy":
            curves[name] = _searched_curve(f, name, greedy_forward, cross_fit=cross_fit,
                                           random_state=random_state, lazy=lazy, notes=notes)
        elif name == "backward":
            curves[name] = _searched_curve(f, name, greedy_backward, cross_fit=cross_fit,
                                           random_state=random_state, lazy=False, notes=notes)
        else:
            curves[name] = random_curve(f, n_permutations, random_state=random_state,
                                        n_jobs=n_jobs)
    names = None
    if is_run(contrib_or_f):
        names = contrib_or_f.names
        if f.name.startswith("mi_"):
            _attach_error_bounds(contrib_or_f, curves)
    return LayerCurves(f.name, f.units, f.greater_is_better, m, curves, notes, names)


def _attach_error_bounds(contrib, curves) -> None:
    """Eq. 12 bounds along each curve next to the measured error of the summed readout."""
    h_y = label_entropy(contrib.labels)
    c = contrib.n_options
    raw = ReadoutSetFunction(contrib.u, contrib.bias, contrib.labels, "accuracy")
    cal = ReadoutSetFunction(contrib.u, contrib.bias, contrib.labels, "accuracy",
                             calibrated=True)
    for curve in curves.values():
        lo, hi = error_bounds(curve.values, h_y, c)
        curve.extra.update(bound_lower=lo, bound_upper=hi, h_y=h_y)
        if curve.order is not None:
            curve.extra["error_raw"] = 1.0 - order_values(raw, curve.order)
            curve.extra["error_calibrated"] = 1.0 - order_values(cal, curve.order)
