"""What the depth grid's numbers support, claim by claim: the reading at the top of each
difficulty's section of the page (:mod:`infodiv.experiments.depth_page`), read from
``summary.json``.

Growth with depth and its target, the growth laws across depth, each claim's findings with
their power, Theorem 8's bounds, layer sharing (Table 1 form) and truncated against trained
models; a comparison that needs models that are not finished says so instead of guessing.
"""

from __future__ import annotations

import numpy as np

from infodiv.claims import CLAIMS, claim_names
from infodiv.reports.markdown import fmt

__all__ = ["reading", "CLAIM_ORDER"]

#: the claims the depth page reads, in report order (the registry's curve, control and report
#: claims)
CLAIM_ORDER = claim_names(("curve", "control", "report"))


def _iv(cell, spec=".3f") -> str:
    if not cell or cell[0] is None:
        return "–"
    return f"[{fmt(cell[0], spec)}, {fmt(cell[1], spec)}]"


def _family(summary, hops, shared):
    return [r for r in summary["by_hops"][hops]["by_depth"] if r["shared"] == shared]


def _cell(c, spec=".3f") -> str:
    return f"{fmt(c['mean'], spec)} {_iv(c['ci95'], spec)}"


def _span(lo, hi) -> str:
    return f"{lo:.2f}" if lo == hi else f"{lo:.2f}–{hi:.2f}"


def _holds(cell) -> str:
    """How often a claim is a finding, in words, with its power (counts only)."""
    pw = ("" if cell["power_max"] is None else
          f"; power on its matched case {_span(cell['power_min'], cell['power_max'])}, "
          f"shuffled-label rate at most {cell['false_positive_max']:.2f}")
    n, m = cell["n_finding"], cell["n_models"]
    models = "the one analysed model" if m == 1 else f"all {m} analysed models"
    if n == m:
        head = f"a finding in {models}"
    elif n == 0:
        head = ("not a finding in " + ("the one analysed model" if m == 1
                                       else f"any of the {m} analysed models"))
        if cell["no_test"] and len(cell["no_test"]) == m:
            head += " (power below 1/2 everywhere: no test)"
    else:
        head = f"a finding in {n} of {m} analysed models ({', '.join(cell['findings'])})"
    weak = cell.get("findings_without_power") or []
    if weak:
        head += (f"; in {', '.join(weak)} the rule's power on its matched case is below 1/2, "
                 "so its sensitivity to what the claim names is not shown there")
    chance = cell.get("findings_at_chance") or []
    if chance:
        head += (f"; also detected in {', '.join(chance)}, a model at chance (its accuracy's "
                 "Wilson interval reaches the majority rate), where it says nothing about "
                 "how the task is solved")
    if cell["n_detected"] > n + len(chance):   # detected, not calibrated: a finding needs both
        head += (f"; detected but not calibrated (its rule fires on shuffled labels beyond "
                 f"the level) in {cell['n_detected'] - n - len(chance)} model(s), so no "
                 "finding there")
    return head + pw


def _compare(rows, name) -> str | None:
    """Every unshared depth's seed mean of ``name``, whether the deepest and the shallowest
    intervals are apart, and the steps where it falls with intervals apart."""
    if len(rows) < 2:
        return None
    a, b = rows[0], rows[-1]
    lo_a, hi_a = a[name]["ci95"]
    lo_b, hi_b = b[name]["ci95"]
    if None in (lo_a, hi_a, lo_b, hi_b):
        return None
    where = (f"the interval at depth {b['depth']} lies above the one at depth {a['depth']}"
             if lo_b > hi_a else
             f"the interval at depth {b['depth']} lies below the one at depth {a['depth']}"
             if hi_b < lo_a else "the two intervals overlap")
    falls = [f"{x['depth']} to {y['depth']}" for x, y in zip(rows, rows[1:])
             if None not in (*x[name]["ci95"], *y[name]["ci95"])
             and y[name]["ci95"][1] < x[name]["ci95"][0]]
    return (", ".join(f"depth {r['depth']}: {_cell(r[name])}" for r in rows) + f" ({where}"
            + (f"; it falls, intervals apart, from depth {', '.join(falls)}" if falls else "")
            + ")")


def _below_zero(rows) -> str:
    """The flag of a usable-information mean below 0 (information itself cannot be): the
    cross-fitted estimate H(Y) − held-out cross-entropy scatters around 0 when the members
    carry no usable information."""
    low = [str(r["depth"]) for r in rows if r["usable_information"]["mean"] is not None
           and r["usable_information"]["mean"] < 0]
    if not low:
        return ""
    return (f" Flag: the usable-information mean is below 0 at depth {', '.join(low)}; "
            "I(U;Y) cannot be, so read it as no usable information (the cross-fitted "
            "estimate H(Y) − held-out cross-entropy scatters around 0 there).")


def _shares(share) -> str:
    """The share of seed-and-example replicates each law wins (the summary's replicates were
    fitted without the step when it has no share for it)."""
    among = "" if "step" in share else " among the smooth laws only (no step in these fits)"
    return (f"; share of seed-and-example replicates won by each law{among}: "
            + ", ".join(f"{k} {v:.2f}" for k, v in share.items()))


def reading(summary, hops) -> list[str]:
    """Claim by claim, what the numbers of difficulty ``hops`` support (module docstring)."""
    d = summary["by_hops"][hops]
    un = _family(summary, hops, False)
    out = []
    acc = _compare(un, "accuracy")
    info = _compare(un, "usable_information")
    if acc is None:
        out.append("- Growth with depth: only depth(s) "
                   f"{', '.join(str(r['depth']) for r in un) or 'none'} finished without "
                   "sharing; no comparison across depth yet.")
    else:
        out.append(f"- Growth with depth: accuracy {acc}; usable information {info}."
                   + _below_zero(un) + " These intervals resample the seeds inside every example "
                   "resample; with 3 seeds they cannot leave the range of the seeds' values "
                   "(the answer gives t intervals where seeds are compared).")
    med = {r["depth"]: float(np.median([x["accuracy"] for x in summary["records"]
                                        if str(x["hops"]) == hops and not x["shared"]
                                        and x["depth"] == r["depth"]])) for r in un}
    if un and 1 in med and len(med) > 1:
        top = max(med)
        out.append(f"- Target of the grid (median accuracy at the deepest depth >= 0.90, at "
                   f"depth 1 <= 0.50): depth {top}: {med[top]:.3f}, depth 1: {med[1]:.3f}; "
                   + ("met." if med[top] >= 0.90 and med[1] <= 0.50 else "not met."))
    g = [r for r in d["growth"] if r["figure"] == "accuracy" and r["x"] == "depth"]
    step = (d.get("seeds") or {}).get("growth")
    if step:
        fits = step["seed_mean"]
        out.append("- Growth law across depth (accuracy, seed means): AICc "
                   + ", ".join(f"{law} {fmt(fits[law].get('aicc'), '.1f')}" for law in fits
                               if isinstance(fits[law], dict) and "rss" in fits[law])
                   + f"; the winner is {step['winner']}"
                   + (_shares(g[0]["replicates"]["aicc_winner_share"]) if g else "") + ".")
    else:
        out.append("- Growth law across depth: needs at least 4 unshared depths that every "
                   "seed has; not available yet.")
    counts = d["verdicts"]
    for name in CLAIM_ORDER:
        if name in counts and CLAIMS[name].group != "report":
            sentence = next(r["verdicts"][name].get("sentence") for r in summary["records"]
                            if str(r["hops"]) == hops and name in r["verdicts"])
            out.append(f"- `{name}` ({sentence}): {_holds(counts[name])}.")
    t8 = [r["verdicts"]["theorem8"]["report"] for r in summary["records"]
          if str(r["hops"]) == hops and "theorem8" in r["verdicts"]]
    if t8:
        out.append(f"- `theorem8` (a report): the best readout's held-out error lies above "
                   f"the Eq. 12 lower bound in {sum(t['consistent'] for t in t8)} of {len(t8)} "
                   "model(s).")
    t1 = d["table1"]["rows"]
    if t1:
        for r in t1:
            c = r["accuracy"]
            side = ("above 0" if c["ci95"][0] > 0 else "below 0" if c["ci95"][1] < 0
                    else "containing 0")
            out.append(f"- Layer sharing, shared L = {r['shared_depth']} vs unshared L = "
                       f"{r['unshared_depth']} ({r['compare']}): accuracy difference "
                       f"{_cell(c)} (interval {side}); squared-loss diversity difference "
                       f"{_cell(r['sq_diversity'], '.4g')}.")
        for key, which in (("gap_regression", "shared/unshared pairs"),
                           ("gap_regression_solving", "pairs whose two models are both above "
                                                      "chance")):
            for div, g in (d["table1"].get(key) or {}).items():
                if "r" in g:
                    out.append(f"- Does the diversity gap explain the accuracy gap ({div}, "
                               f"{g['n_pairs']} {which})? Correlation r = "
                               f"{fmt(g['r'], '.2f')} {_iv(g['r_ci95'], '.2f')}, slope "
                               f"{fmt(g['slope'], '.3g')} {_iv(g['slope_ci95'], '.3g')}, "
                               f"permutation p = {fmt(g['p_permutation'], '.3f')}.")
    else:
        out.append("- Layer sharing: no shared twin with its unshared partner finished yet.")
    tv = d["truncated_vs_depth"]
    if tv:
        apart = sum(not (r["difference_ci95"][0] <= 0 <= r["difference_ci95"][1])
                    for r in tv if None not in r["difference_ci95"])
        out.append(f"- Truncated vs trained: in {apart} of {len(tv)} comparisons the "
                   "truncated model's accuracy differs from the trained depth-b model's beyond "
                   "the paired interval.")
    else:
        out.append("- Truncated vs trained: no trained shallower model of the same seed as "
                   "the deepest model finished yet.")
    return out
