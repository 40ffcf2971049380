"""Selection comparisons as verdicts: greedy vs best-of-random and vs the depth prefix.

The curves report compares, at every budget k, the held-out value (selected on one half,
scored on the other: :func:`infodiv.selection.subset_selection`) of greedy forward
selection, the best of R random orders and the depth prefix. Testing each budget would need
a multiplicity correction over M budgets whose differences are strongly dependent (nested
sets); each comparison is instead summarised by **one** statistic, the difference averaged
over the budgets k = 1..M−1 (k = 0 and k = M are the same set for every rule),

    Δ = (1/(M−1)) Σ_{k=1}^{M−1} sign·(f_held-out(greedy_k) − f_held-out(other_k)),

the mean gap between the held-out curves in utility units — the two verdicts
``greedy_beats_random`` (other = best-of-random) and ``greedy_beats_prefix`` (other = depth
prefix) are two separate claims, each at level α. For a per-example set function Δ is an
example mean, Δ = (1/n) Σ_i Δ_i, with Δ_i the budget average of example i's held-out scores
(:func:`infodiv.selection.budget_differences`).

Inference (:func:`selection_verdicts`): the example bootstrap of Δ with everything refitted
(the split, greedy on each half and the random orders redrawn per resample:
:class:`~infodiv.inference.pipelines.SelectionPipeline`), its label-permutation null (labels
shuffled, the whole selection rerun) and the three-part rule of the other verdicts
(:func:`~infodiv.inference.verdicts.three_part_rule`). Power: the matched case
:func:`~infodiv.inference.surrogates.concentrated_late` (greedy must win: derivation there)
and shuffled labels, each surrogate selected once (its split and selections fixed) with the
interval the bootstrap of the Δ_i (:class:`SelectionDetector`), judged against the real run's
null, as the curve verdicts' power shortcut does.
"""

from __future__ import annotations

import time

import numpy as np

from ..selection import BUDGET_STATISTICS, budget_differences
from ._api import bootstrap_means
from ._text import interval, num
from .bootstrap import percentile_interval
from .nulls import infer
from .power import surrogate_power
from .verdicts import SELECTION_TESTS, scalar_verdict, verdict_docs

__all__ = ["SelectionDetector", "selection_verdicts", "STATISTICS",
           "POWER_KINDS", "selection_verdict_lines"]

#: verdict -> the pipeline's budget-averaged statistic
STATISTICS = dict(BUDGET_STATISTICS)
POWER_KINDS = ("concentrated_late", "shuffled_labels")


class SelectionDetector:
    """The selection verdicts' rule on one surrogate, selected once (module docstring).

    ``reference``: ``{statistic: null draws [K]}`` of the real run. Per-example set functions
    only (the held-out Δ_i are bootstrapped with the split and selections fixed)."""

    def __init__(self, objective, reference: dict, *, n_random: int = 50,
                 n_bootstrap: int = 200, alpha: float = 0.05, **objective_kwargs):
        self.objective, self.reference, self.n_random = objective, reference, int(n_random)
        self.n_bootstrap, self.alpha, self.objective_kwargs = n_bootstrap, alpha, objective_kwargs

    def statistics(self, run, rng) -> dict:
        from ..selection import held_out_scores

        sc = held_out_scores(run, objective=self.objective, n_random=self.n_random,
                             random_state=int(rng.integers(0, 2**31 - 1)),
                             **self.objective_kwargs)
        sign = 1.0 if sc["greater_is_better"] else -1.0
        d = budget_differences(sc["greedy"], sc["prefix"], sc["best_random"], sign)
        names = list(d)
        boot = bootstrap_means(np.column_stack([d[k] for k in names]), self.n_bootstrap,
                               random_state=rng)
        lo, hi = percentile_interval(boot)
        return {k: {"value": float(d[k].mean()), "ci": (float(lo[j]), float(hi[j]))}
                for j, k in enumerate(names)}

    def __call__(self, run, rng) -> dict:
        stats = self.statistics(run, rng)
        return {test: scalar_verdict(stats.get(stat), self.reference.get(stat), "greater",
                                     self.alpha) for test, stat in STATISTICS.items()}


def selection_verdicts(contrib, objective: str, *, n_resamples: int = 50, n_null: int = 50,
                       n_random: int = 50, power_replicates: int = 20, alpha: float = 0.05,
                       seed: int = 0, n_jobs=1, progress: bool = False,
                       **objective_kwargs) -> dict:
    """Selection comparison with example-bootstrap intervals (every budget and the two
    budget-averaged Δ), label null, verdicts and their power (module docstring).

    Returns ``{greedy|prefix|best_random|greedy_minus_best_random|greedy_minus_prefix:
    {values, ci_low, ci_high}, statistics: {Δ name: {value, ci, null: {mean, interval, p},
    corrected, corrected_ci}}, verdicts: {greedy_beats_random, greedy_beats_prefix}, power,
    n_resamples, n_null, cpu_s, ...}``; ``power_replicates=0`` skips the power, and a set
    function without per-example scores gets none (its shortcut needs them).
    """
    from ..setfunctions import make_set_function
    from .pipelines import SelectionPipeline

    if n_null < np.ceil(1 / alpha):
        raise ValueError(f"n_null must be >= 1/alpha = {int(np.ceil(1 / alpha))} for a label-"
                         f"null p below alpha, got {n_null}")
    c0 = time.process_time()
    pipe = SelectionPipeline(objective, n_random=n_random, **objective_kwargs)
    inf = infer(contrib, pipe, n_bootstrap=n_resamples, n_permutations=n_null, n_mc=2,
                random_state=seed, n_jobs=n_jobs, progress=progress)
    out = {}
    for name, e in inf.bootstrap.estimates.items():
        if name in STATISTICS.values():
            s = inf.summary(name)
            out.setdefault("statistics", {})[name] = {
                "value": s["value"], "ci": list(s["ci"]), "corrected": s["corrected"],
                "corrected_ci": list(s["corrected_ci"]),
                "null": {"mean": s["null_mean"], "interval": list(s["null_interval"]),
                         "p": s["p"], "n_permutations": s["n_permutations"]}}
        else:
            out[name] = {"values": np.asarray(e.value).tolist(),
                         "ci_low": np.asarray(e.ci[0]).tolist(),
                         "ci_high": np.asarray(e.ci[1]).tolist()}
    ref = {k: inf.null[k].distribution for k in STATISTICS.values()}
    detected = {test: scalar_verdict({"value": inf.bootstrap[stat].value,
                                      "ci": inf.bootstrap[stat].ci}, ref[stat], "greater", alpha)
                for test, stat in STATISTICS.items()}
    c1 = time.process_time()
    power = None
    per_example = make_set_function(contrib, objective, **objective_kwargs).per_example
    if power_replicates and per_example:
        detect = SelectionDetector(objective, ref, n_random=n_random, alpha=alpha,
                                   **objective_kwargs)
        informative = max(1, min(4, (contrib.n_members - 1) // 2))
        power = surrogate_power(contrib, detect, kinds=POWER_KINDS,
                                n_replicates=power_replicates, random_state=seed,
                                surrogate_kwargs={"concentrated_late":
                                                  {"n_informative": informative}},
                                n_jobs=n_jobs, progress=progress)
        power["detector"] = {"n_bootstrap": detect.n_bootstrap, "n_random": n_random,
                             "n_informative": informative,
                             "fit": "each surrogate selected once (split, greedy, random "
                                    "orders fixed), held-out per-example differences "
                                    "bootstrapped; judged against the real run's null"}
    out.update(objective=objective, n_resamples=n_resamples, n_null=n_null,
               n_random=n_random, alpha=alpha, power=power,
               verdicts=verdict_docs(detected, power, alpha, tests=SELECTION_TESTS),
               summary=("one statistic per comparison: the held-out difference averaged over "
                        "budgets k = 1..M-1 (no per-budget multiplicity); the two verdicts "
                        "are separate claims, each at level alpha"),
               meaning="held-out values (selected on one half, scored on the other, a fresh "
                       "split per resample); differences in utility units",
               cpu_s={"inference": c1 - c0, "power": time.process_time() - c1})
    return out


def selection_verdict_lines(sel: dict) -> list[str]:
    """Markdown lines: each selection verdict's sentence, its statistic and rule."""
    inf = (sel or {}).get("inference") or {}
    lines = []
    for test, v in (inf.get("verdicts") or {}).items():
        s = (inf.get("statistics") or {}).get(STATISTICS[test], {})
        null = s.get("null") or {}
        lines.append(f"- **verdict {test.replace('_', ' ')}**: {v['text']}. Mean held-out "
                     f"difference over budgets {num(s.get('value'))} {interval(s.get('ci'))}, "
                     f"null mean {num(null.get('mean'), '.3g')}, p = "
                     f"{num(null.get('p'), '.3g')} (B = {inf.get('n_resamples')}, K = "
                     f"{inf.get('n_null')}; rule: {v['rule']}).")
    return lines
