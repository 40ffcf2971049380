"""The zoo page's answer, generated from its records: what the controlled zoo says about the
paper, one markdown bullet per question, every conclusion read from ``summary.json`` (the
per-model records, each verdict with the conclusion its engine recorded) and ``across.json``
(the seed-and-example intervals across depth and sharing). The page template
(``docs/results/zoo/README.template.md``) holds the setup and the definitions only and quotes
these lines from ``answer.json``; ``tests/repository/test_results_prose.py`` checks that the
quoted file is what this module writes from the records now.

The questions, in order:

1. accuracy and the probe bound on I(U;Y) across depth and sharing: the best and worst seed
   mean, and whether the deepest model's seed-and-example interval lies apart from one block's;
   the fine-tuned models' accuracy;
2. each claim of the paper on each objective: in how many models it *holds*, is *opposite*,
   *absent* (within its margin δ) or *inconclusive* (with the n that would decide), the models
   whose record predates conclusions listed apart, the matched-case power and the
   shuffled-label rate beside the counts;
3. layer sharing (Table 1): which paired differences exclude 0, and whether the diversity gap
   tracks the accuracy gap;
4. the truncated models against the trained ones, Eq. 14 and Theorem 8's bounds.
"""

from __future__ import annotations

from ..claims import CLAIMS
from ..numbers import fmt, fmt_interval
from ..reports.answer_text import HEADLINE, MECHANISM, SELECTION, objective_label

__all__ = ["answer_lines", "answer_document", "OUTCOMES"]

#: the conclusions a verdict record can carry, in the order a count lists them
OUTCOMES = ("holds", "opposite", "absent", "inconclusive", "untestable", "report")

#: the claims the answer counts, in its order (Theorem 8 is a report, quoted apart)
ORDER = (*HEADLINE, "violations", "diversity_effect", *MECHANISM, *SELECTION)


def _label(row: dict) -> str:
    return f"{'shared ' if row['shared'] else ''}L{row['depth']}"


def _across_depth(rows: list[dict], key: str, name: str, units: str) -> str | None:
    """One quantity's seed means across the zoo: best, worst, and the deepest unshared model
    against one block (intervals apart or overlapping)."""
    rows = [r for r in rows if (r.get(key) or {}).get("mean") is not None]
    if not rows:
        return None
    best = max(rows, key=lambda r: r[key]["mean"])
    worst = min(rows, key=lambda r: r[key]["mean"])
    cell = {_label(r): fmt_interval(r[key]["mean"], r[key]["ci95"]) for r in rows}
    line = (f"- **{name}** ({units}; seed means, 95% over seeds and examples): highest "
            f"{_label(best)} {cell[_label(best)]}, lowest {_label(worst)} {cell[_label(worst)]}")
    unshared = sorted((r for r in rows if not r["shared"]), key=lambda r: r["depth"])
    if len(unshared) > 1:
        one, deep = unshared[0], unshared[-1]
        rel = ("lies below" if deep[key]["ci95"][1] < one[key]["ci95"][0] else
               "lies above" if deep[key]["ci95"][0] > one[key]["ci95"][1] else "overlaps")
        line += (f"; the deepest, {_label(deep)} {cell[_label(deep)]}, {rel} "
                 f"{_label(one)}'s {cell[_label(one)]}")
    return line + "."


def _tally(records, objective: str, claim: str) -> dict:
    """Models by conclusion of one claim on one objective (``unrecorded``: a record written
    before conclusions were recorded), with the power and shuffled-label ranges and the n
    that would decide the inconclusive ones."""
    out = {o: [] for o in (*OUTCOMES, "unrecorded")}
    powers, fps, needed, margins = [], [], [], set()
    for r in records:
        d = (((r.get("curves") or {}).get(objective) or {}).get("verdict_details")
             or {}).get(claim)
        if d is None:
            continue
        o = d.get("outcome") or "unrecorded"
        out.setdefault(o, []).append(r["model"])
        if (d.get("power") or {}).get("rate") is not None:
            powers.append(d["power"]["rate"])
        if (d.get("false_positive") or {}).get("rate") is not None:
            fps.append(d["false_positive"]["rate"])
        if o == "inconclusive" and d.get("n_needed") is not None:
            needed.append(d["n_needed"])
        if o == "absent" and d.get("margin") is not None:
            margins.add(d["margin"])
    return {"models": out, "n": sum(map(len, out.values())), "power": powers,
            "false_positive": fps, "n_needed": needed, "margins": sorted(margins)}


def _range(xs, spec: str = ".2f") -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:{spec}}" if lo == hi else f"{lo:{spec}}–{hi:{spec}}"


def _counts(t: dict) -> str:
    """"holds in 20, opposite in 1 (model), inconclusive in 7 (n ≈ … would decide) of 28
    models; matched-case power …, shuffled labels fire at most …"."""
    m = t["models"]
    notes = {"opposite": f" ({', '.join(m['opposite'])})",
             "absent": f" (δ = {', '.join(fmt(x) for x in t['margins'])})" if t["margins"]
             else "",
             "inconclusive": f" (n ≈ {_range(t['n_needed'], 'd')} would decide)"
             if t["n_needed"] else ""}
    parts = [f"{o} in {len(m[o])}{notes.get(o, '')}" for o in OUTCOMES if m[o]]
    recorded = t["n"] - len(m["unrecorded"])
    text = f"{', '.join(parts)} of {recorded} models" if parts else "no conclusion recorded"
    if m["unrecorded"]:
        text += (f"; {len(m['unrecorded'])} model(s) whose record predates conclusions not "
                 "counted")
    if t["power"]:
        text += f"; matched-case power {_range(t['power'])}"
    if t["false_positive"]:
        text += f", shuffled labels fire at most {max(t['false_positive']):.2f}"
    return text


def _claim_lines(records, objectives) -> tuple[list[str], dict]:
    lines, tallies = [], {}
    for claim in ORDER:
        per = [(o, _tally(records, o, claim)) for o in objectives]
        per = [(o, t) for o, t in per if t["n"]]
        if not per:
            continue
        name = CLAIMS[claim].short if claim in CLAIMS else claim
        body = "; ".join(f"on {objective_label(o)}: {_counts(t)}" for o, t in per)
        lines.append(f"- **{name[:1].upper() + name[1:]}** (`{claim}`): {body}.")
        for o, t in per:
            tallies[f"{claim}|{o}"] = {k: v for k, v in t["models"].items() if v}
    return lines, tallies


def _sharing(across) -> str | None:
    rows = across.get("table1") or []
    if not rows:
        return None
    cells, apart = [], 0
    for r in rows:
        acc = r["accuracy"]
        excl = not acc["ci95"][0] <= 0 <= acc["ci95"][1]
        apart += excl
        cells.append(f"shared L{r['shared_depth']} − L{r['unshared_depth']} ({r['compare']}) "
                     f"{fmt_interval(acc['mean'], acc['ci95'])}")
    line = (f"- **Layer sharing (Table 1 form), accuracy, shared minus unshared**: "
            f"{'; '.join(cells)}; {apart} of {len(rows)} intervals exclude 0.")
    g = (across.get("gap_regression") or {}).get("ce_diversity") or {}
    if g.get("r") is not None:
        line += (f" The CE-diversity gap against the accuracy gap over {g['n_pairs']} pairs: "
                 f"r = {fmt_interval(g['r'], g.get('r_ci95'), 2)}, permutation p = "
                 f"{fmt(g.get('p_permutation'), 2)}.")
    return line


def _truncated(across) -> str | None:
    tv = [r for r in across.get("truncated_vs_depth") or []
          if None not in (r.get("difference_ci95") or [None])]
    if not tv:
        return None
    apart = sum(not r["difference_ci95"][0] <= 0 <= r["difference_ci95"][1] for r in tv)
    return (f"- **Truncated vs trained**: a deep model cut after b blocks differs from the "
            f"trained b-block model beyond the paired interval in {apart} of {len(tv)} "
            "comparisons (`across.json` `truncated_vs_depth`).")


def _finetuned(records) -> str | None:
    """The models outside the depth grid (a pretrained model with its top blocks trained)."""
    rows = [r for r in records if r.get("train_top")]
    if not rows:
        return None
    cells = [f"{r['model']} (top {r['train_top']} blocks trained, M = {r['n_members']}) "
             f"{fmt_interval(r['accuracy'], r.get('accuracy_wilson95'))} "
             f"(Wilson 95%), cross-entropy {fmt(r['cross_entropy'])} nats" for r in rows]
    return f"- **Fine-tuned**: {'; '.join(cells)}."


def _eq14(records) -> str | None:
    gaps = [(abs(r["paper_eq14"]["gap"]), r) for r in records
            if (r.get("paper_eq14") or {}).get("gap") is not None]
    if not gaps:
        return None
    g, r = max(gaps, key=lambda x: x[0])
    return (f"- **Eq. 14** (MSE = bias − diversity + ambiguity gap): the largest |gap| is "
            f"{fmt(g)} probability² ({r['model']}), against an MSE of "
            f"{fmt(r['paper_eq14']['mse'])}.")


def _theorem8(records, objective: str) -> str | None:
    rows = []
    for r in records:
        d = (((r.get("curves") or {}).get(objective) or {}).get("verdict_details")
             or {}).get("theorem8") or {}
        rep = d.get("report") or {}
        if rep.get("error_lower_bound") is not None and rep.get("best_readout_error") is not None:
            rows.append(rep)
    if not rows:
        return None
    inside = sum(x["error_lower_bound"] <= x["best_readout_error"] for x in rows)
    return (f"- **Theorem 8 (Eq. 12), a report**: in {inside} of {len(rows)} models the best "
            "readout's held-out error is at or above the lower bound on the Bayes error that "
            "the members' usable information implies (the bounds per model: `summary.md`).")


def answer_lines(records: list[dict], across: dict) -> tuple[list[str], dict]:
    """The answer bullets (module docstring) and the conclusions behind them, keyed
    ``claim|objective`` -> ``{conclusion: [models]}``."""
    rows = across.get("by_depth") or []
    objectives = sorted({o for r in records for o in (r.get("curves") or {})},
                        key=lambda o: (not o.startswith("mi_"), o))
    lines = [x for x in (_across_depth(rows, "accuracy", "Accuracy", "held out"),
                         _finetuned(records),
                         _across_depth(rows, "probe_bound", "Probe bound on I(U;Y)", "bits"))
             if x]
    claim_lines, tallies = _claim_lines(records, objectives)
    lines += claim_lines
    first = next((o for o in objectives if not o.startswith("mi_")), None)
    lines += [x for x in (_sharing(across), _truncated(across), _eq14(records),
                          first and _theorem8(records, first)) if x]
    return lines, tallies


def answer_document(records: list[dict], across: dict) -> dict:
    """What the zoo page quotes: ``markdown`` (the bullets, one per line), ``lines`` and the
    conclusions (``outcomes``), all from :func:`answer_lines`."""
    lines, tallies = answer_lines(records, across)
    return {"markdown": "\n".join(lines), "lines": lines, "outcomes": tallies}
