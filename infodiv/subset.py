"""The best k members or whole layers of a run: greedy subset selection with its held-out score,
its comparisons and its stability (``infodiv select``).

**Units.** A unit is a set of members, and the set function of a set of units is the objective
of the union of their members, f(T) = f(⋃_{t∈T} members(t)): ``member`` (every member alone),
``layer`` (the embedding; one unit per block execution ``L{i}`` (``L{i}#{e}`` when blocks run
twice) holding its attention and MLP writes, heads, neurons and biases) or ``head`` (a run of
head granularity: every head alone, every other write whole). Objectives of the summed readout
(accuracy, cross-entropy, Brier, raw or calibrated, and ``mi_readout``) depend on S only
through z_S = Σ_{m∈S} u_m + b, so a unit is its members' summed logits (exact); any other
objective is evaluated on the union.

**Chosen set.** Greedy forward selection on all N examples (the rule of
:func:`infodiv.greedy.greedy_forward`, stopped after k picks): S = (t_1, ..., t_k) with
t_j = argmax_t sign·f({t_1..t_{j−1}} ∪ {t}).

**Held-out score.** The examples are split into two label-stratified halves A, B
(:func:`infodiv.curves._cross_fit_split`); greedy chooses S_A on A and is scored on B, S_B on B
and scored on A, so every example i has a score s_i(S_{h(i)}) from the set chosen without it,
and the held-out score is ŝ = (1/N) Σ_i s_i. The comparisons are scored the same way, on the
same examples: the depth prefix (the first k units in depth order), the best of R random
k-sets (best on the selection half, scored on the other), the full model (all units) and the
empty set (the objective's chance level: calibrated accuracy of the label prior alone, 0 bits
of ``mi_readout``). Intervals: the paired example bootstrap of the per-example held-out scores
(:func:`estimators.resampling.bootstrap_means`; every set scored on the same resampled rows,
so the differences chosen − prefix, chosen − best random and chosen − full keep their pairing),
95 % percentile intervals extended to contain the estimate. They are conditional on the chosen
sets (the held-out half is fresh data for them); the selection's own variability is what the
stability measures.

**Budget form** (``target`` τ): the fraction of the full model's held-out score reached by the
cross-fitted greedy set of size k, measured from the empty set,
φ(k) = (ŝ_greedy(k) − ŝ(∅)) / (ŝ(all) − ŝ(∅)), and k* = min{k : φ(k) ≥ τ}; its interval is
the percentile interval of k* recomputed on each bootstrap replicate of the per-example curve.

**Stability.** Greedy is rerun on ``n_bootstrap`` label-stratified bootstrap resamples of the
examples (one spawned stream per replicate). The frequency of a unit is the share of the
2 + B selections (the two halves' sets and the resamples' sets) that contain it, and
J̄ = mean_r J(S, S_r) over the same selections, J(A, B) = |A ∩ B| / |A ∪ B|. The choice is
flagged unstable when J̄ < 0.5 (:data:`STABILITY_THRESHOLD`): for two k-sets J ≥ 0.5 iff they
share at least 2k/3 units, so below it a typical replicate replaces more than a third of the
chosen units, and the names are one of several near-equivalent sets rather than *the*
important units. The chance level (two uniformly random k-sets of U) is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
from scipy.stats import hypergeom

from estimators.resampling import (
    bootstrap_indices,
    bootstrap_interval,
    bootstrap_means,
    parallel_map,
)
from estimators.validation import check_seed_sequence

from .curves import _cross_fit_split, set_values
from .selection import jaccard
from .setfunctions import OBJECTIVES, SetFunction, make_set_function
from .setfunctions.registry import is_run

__all__ = ["UNIT_KINDS", "STABILITY_THRESHOLD", "Units", "member_units", "unit_set_function",
           "select_subset", "SubsetSelection"]

UNIT_KINDS = ("member", "layer", "head")
#: mean Jaccard below which the choice is flagged unstable (module docstring)
STABILITY_THRESHOLD = 0.5
#: objectives that depend on a member set only through its summed logits
SUMMED = tuple(n for n, o in OBJECTIVES.items() if o.family == "readout") + ("mi_readout",)
SETS = ("chosen", "prefix", "best_random", "full", "empty")


@dataclass(frozen=True)
class Units:
    """Units of selection: ``names[t]`` holds the members ``members[t]`` (indices)."""

    kind: str
    names: list
    members: list
    member_names: list

    def to_dict(self) -> dict:
        return {"kind": self.kind, "units": {n: [self.member_names[i] for i in idx]
                                             for n, idx in zip(self.names, self.members)}}


def member_units(contrib, unit: str = "member") -> Units:
    """Group the members of a run into units (module docstring), in depth order."""
    if unit not in UNIT_KINDS:
        raise ValueError(f"unit must be one of {', '.join(UNIT_KINDS)}, got {unit!r}")
    members = list(contrib.members)
    names = [m.name for m in members]
    if unit == "head" and not any(m.head is not None for m in members):
        raise ValueError("--unit head needs a run extracted with --granularity head (members "
                         "such as L3.attn#0.h5); this run's members are whole writes: use "
                         "--unit member or --unit layer")
    shared = any(m.execution for m in members)
    keys: dict = {}
    for i, m in enumerate(members):
        if unit == "member" or m.kind == "embed" or (unit == "head" and m.head is not None):
            key = ("member", i)
        elif unit == "layer":
            key = ("layer", m.block, m.execution)
        else:
            key = ("write", m.kind, m.block, m.execution)
        keys.setdefault(key, []).append(i)

    def label(key, idx):
        if len(idx) == 1 and key[0] != "layer":
            return names[idx[0]]
        if key[0] == "layer":
            return f"L{key[1]}" + (f"#{key[2]}" if shared else "")
        return f"L{key[2]}.{key[1]}#{key[3]}"

    return Units(unit, [label(k, v) for k, v in keys.items()],
                 [np.asarray(v, dtype=np.int64) for v in keys.values()], names)


class GroupedSetFunction(SetFunction):
    """f over units: the base set function of the union of the units' members."""

    def __init__(self, base: SetFunction, groups):
        super().__init__(len(groups), base.n_examples)
        self.base, self.groups_of = base, [np.asarray(g, dtype=np.int64) for g in groups]
        self.name, self.units, self.per_example = base.name, base.units, base.per_example
        self.greater_is_better, self.labels = base.greater_is_better, base.labels
        self.groups = getattr(base, "groups", None)   # duplicate rows, for the split

    def _union(self, members):
        idx = np.asarray(members, dtype=np.int64).ravel()
        return (np.concatenate([self.groups_of[t] for t in idx]) if idx.size
                else np.zeros(0, dtype=np.int64))

    def scores(self, members):
        return self.base.scores(self._union(members))

    def can_restrict(self) -> bool:
        return self.base.can_restrict()

    def restrict(self, examples):
        return GroupedSetFunction(self.base.restrict(examples), self.groups_of)


def unit_set_function(contrib, units: Units, objective: str = "accuracy_calibrated",
                      **objective_kwargs) -> SetFunction:
    """The objective over ``units`` (module docstring): summed unit logits for the readout
    objectives, the union of members for the others."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
    if all(len(g) == 1 for g in units.members) and len(units.members) == contrib.n_members:
        return make_set_function(contrib, objective, **objective_kwargs)
    if objective in SUMMED:
        u = np.stack([contrib.u[:, g, :].astype(np.float64).sum(axis=1)
                      for g in units.members], axis=1)
        run = SimpleNamespace(u=u, bias=contrib.bias, labels=contrib.labels,
                              members=units.names)
        return make_set_function(run, objective, **objective_kwargs)
    return GroupedSetFunction(make_set_function(contrib, objective, **objective_kwargs),
                              units.members)


def _greedy(f: SetFunction, k: int) -> np.ndarray:
    """The first k picks of greedy forward selection (ties: the first candidate)."""
    sign, state, remaining, order = f.sign(), f.start(()), list(range(f.n_members)), []
    for _ in range(k):
        vals = np.asarray(f.added_values(state, remaining))
        j = remaining.pop(int(np.argmax(sign * vals)))
        order.append(j)
        state = f.add(state, j)
    return np.asarray(order, dtype=np.int64)


def _stability_task(task, rng):
    f, k = task
    return _greedy(f.restrict(bootstrap_indices(f.n_examples, rng, strata=f.labels)), k)


def _first_reaching(curves, target, sign):
    """k* = min{k : φ(k) >= target} per row of curves ``[..., U+1]`` (U when none does)."""
    span = curves[..., -1:] - curves[..., :1]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = (curves - curves[..., :1]) / span
    ok = (frac >= target - 1e-12) & (sign * span > 0)
    return np.where(ok.any(axis=-1), ok.argmax(axis=-1), curves.shape[-1] - 1), frac


def _interval(estimate, reps, confidence):
    lo, hi, _ = bootstrap_interval(estimate, reps, confidence=confidence)
    return {"estimate": float(estimate), "interval": [float(lo), float(hi)]}


def chance_jaccard(k: int, u: int) -> float:
    """E[J] of two independent uniformly random k-subsets of u units (hypergeometric
    overlap X: E[X / (2k − X)])."""
    x = np.arange(k + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.where(x == 2 * k, 1.0, x / (2 * k - x))
    return float(np.sum(hypergeom(u, k, k).pmf(x) * j))


@dataclass
class SubsetSelection:
    """What :func:`select_subset` found; :meth:`to_dict` is the JSON document."""

    objective: str
    units_of: str
    greater_is_better: bool
    k: int
    chosen: list            # unit names, in the order greedy picked them
    chosen_members: list    # their member names
    scores: dict            # set -> {"estimate", "interval", "size"}
    differences: dict       # "chosen_minus_<set>" -> {"estimate", "interval"}
    stability: dict
    units: dict
    sizes: dict
    budget: dict | None = None
    member_names: list = field(default_factory=list)
    in_sample: float = float("nan")

    @property
    def unstable(self) -> bool:
        return bool(self.stability["unstable"])

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "objective", "units_of", "greater_is_better", "k", "chosen", "chosen_members",
            "in_sample", "scores", "differences", "budget", "stability", "units", "sizes",
            "member_names")}


def select_subset(contrib, k: int | None = None, *, target: float | None = None,
                  unit: str = "member", objective: str = "accuracy_calibrated",
                  n_random: int = 50, n_bootstrap: int = 50, n_resamples: int = 2000,
                  confidence: float = 0.95, random_state=0, n_jobs=1,
                  **objective_kwargs) -> SubsetSelection:
    """Greedy choice of k units of a run, scored held out, compared and checked for stability.

    Parameters
    ----------
    contrib : Contributions
    k : int, optional
        Units to choose (1 <= k <= U); exactly one of ``k`` and ``target`` (default: k = 8).
    target : float in (0, 1], optional
        Budget form: the smallest k whose cross-fitted greedy set reaches ``target`` of the
        full model's held-out score, measured from the empty set (module docstring).
    unit : {"member", "layer", "head"}
    objective : str
        A registered objective with per-example scores (:data:`infodiv.setfunctions.OBJECTIVES`).
    n_random : int
        R random k-sets of the best-of-random comparison.
    n_bootstrap : int
        B greedy reruns on bootstrap resamples for the stability (0: the two halves only).
    n_resamples : int
        Paired example resamples of the intervals.
    random_state : int or SeedSequence
        Root of the streams of the split, the random sets, the intervals and the B replicates
        (one spawned child each; the objective's own split is drawn from the first).

    Returns
    -------
    SubsetSelection
        ``chosen`` (unit names in greedy order) and ``chosen_members``; ``scores[set]`` and
        ``differences["chosen_minus_<set>"]`` with intervals; ``budget`` (with ``target``);
        ``stability`` (frequencies, Jaccards, ``unstable``); :meth:`~SubsetSelection.to_dict`.
    """
    if (k is None) == (target is None) and k is not None:
        raise ValueError("give either k or target, not both")
    k = 8 if k is None and target is None else k
    if target is not None and not 0 < target <= 1:
        raise ValueError(f"target must be a fraction in (0, 1], got {target}")
    if not is_run(contrib):
        raise TypeError(f"expected a Contributions run, got {type(contrib).__name__}")
    units = member_units(contrib, unit)
    split_ss, random_ss, curve_ss, held_ss, stability_ss = check_seed_sequence(
        random_state).spawn(5)
    objective_kwargs.setdefault("random_state", int(split_ss.generate_state(1)[0] % 2**31))
    f = unit_set_function(contrib, units, objective, **objective_kwargs)
    n_units, sign = f.n_members, f.sign()
    if not f.per_example or not f.can_restrict():
        raise ValueError(f"objective {objective} has no per-example scores: held-out scores "
                         "and their intervals need one (e.g. accuracy_calibrated, mi_readout)")
    if k is not None and not 1 <= k <= n_units:
        raise ValueError(f"k must lie in [1, {n_units}] (the {n_units} {unit} units of this "
                         f"run), got {k}")
    halves = _cross_fit_split(f, split_ss)
    restricted = [(f.restrict(sel), f.restrict(ev), ev) for sel, ev in (halves, halves[::-1])]
    orders = [_greedy(f_sel, n_units if target is not None else k) for f_sel, _, _ in restricted]
    budget = None
    if target is not None:
        curve = np.empty((n_units + 1, f.n_examples))
        for (_, f_ev, ev), order in zip(restricted, orders):
            curve[:, ev] = f_ev.set_scores([order[:j] for j in range(n_units + 1)])
        reps = bootstrap_means(curve.T, n_resamples, random_state=curve_ss,
                               n_jobs=n_jobs)
        (k_star, frac), (k_reps, frac_reps) = (_first_reaching(c, target, sign)
                                               for c in (curve.mean(axis=1), reps))
        if np.isnan(frac[-1]) or sign * (curve[-1].mean() - curve[0].mean()) <= 0:
            raise ValueError(f"the full model's held-out {objective} ({curve[-1].mean():.4g}) "
                             f"is not better than the empty set's ({curve[0].mean():.4g}): "
                             "there is no fraction of it to reach")
        k = int(k_star)
        lo, hi = np.percentile(k_reps, [50 * (1 - confidence), 50 * (1 + confidence)],
                               method="inverted_cdf")
        budget = {"target": target, "k": k, "k_interval": [int(min(lo, k)), int(max(hi, k))],
                  "fraction": _interval(frac[k], frac_reps[:, k], confidence),
                  "fraction_curve": frac.tolist(),
                  "definition": "fraction(k) = (held-out f(greedy k-set) - f(empty)) / "
                                "(held-out f(all) - f(empty)); k = smallest k with "
                                "fraction >= target"}
        orders = [o[:k] for o in orders]
    rng = np.random.default_rng(random_ss)
    random_sets = [rng.choice(n_units, k, replace=False) for _ in range(n_random)]
    held = np.empty((len(SETS), f.n_examples))
    for (f_sel, f_ev, ev), order in zip(restricted, orders):
        best = random_sets[int(np.argmax(sign * set_values(f_sel, random_sets)))]
        held[:, ev] = f_ev.set_scores([order, np.arange(k), best, np.arange(n_units), []])
    est = held.mean(axis=1)
    reps = bootstrap_means(held.T, n_resamples, random_state=held_ss, n_jobs=n_jobs)
    sizes_of = {"chosen": k, "prefix": k, "best_random": k, "full": n_units, "empty": 0}
    scores = {s: {**_interval(est[i], reps[:, i], confidence), "size": sizes_of[s]}
              for i, s in enumerate(SETS)}
    differences = {f"chosen_minus_{s}": _interval(est[0] - est[i], reps[:, 0] - reps[:, i],
                                                  confidence)
                   for i, s in enumerate(SETS[1:4], start=1)}
    chosen = _greedy(f, k)
    boot = parallel_map(_stability_task, [(f, k)] * n_bootstrap, random_state=stability_ss,
                        n_jobs=n_jobs, progress=None)
    replicates = [*orders, *boot]
    counts = np.zeros(n_units, dtype=np.int64)
    for r in replicates:
        counts[r] += 1
    freq = counts / len(replicates)
    jac = [jaccard(chosen, r) for r in replicates]
    mean_j = float(np.mean(jac))
    stability = {
        "n_bootstrap": n_bootstrap, "n_replicates": len(replicates),
        "frequency": {units.names[t]: float(freq[t]) for t in np.argsort(-freq, kind="stable")
                      if freq[t] > 0},
        "halves": [[units.names[t] for t in o] for o in orders],
        "halves_jaccard": jaccard(*orders), "mean_jaccard": mean_j,
        "jaccard_range": [float(np.min(jac)), float(np.max(jac))],
        "chance_jaccard": chance_jaccard(k, n_units), "threshold": STABILITY_THRESHOLD,
        "unstable": mean_j < STABILITY_THRESHOLD,
        "threshold_reason": "for two k-sets Jaccard >= 0.5 iff they share >= 2k/3 units: below "
                            "it a typical replicate replaces more than a third of the chosen "
                            "set"}
    return SubsetSelection(
        objective=f.name, units_of=unit, greater_is_better=f.greater_is_better, k=k,
        chosen=[units.names[t] for t in chosen],
        chosen_members=[units.member_names[i] for t in chosen for i in units.members[t]],
        scores=scores, differences=differences, stability=stability, units=units.to_dict(),
        sizes={"N": f.n_examples, "M": contrib.n_members, "U": n_units, "n_random": n_random,
               "n_bootstrap": n_bootstrap, "n_resamples": n_resamples,
               "confidence": confidence, "halves": [len(h) for h in halves]},
        budget=budget, member_names=list(units.member_names),
        in_sample=float(f.value(chosen)))
