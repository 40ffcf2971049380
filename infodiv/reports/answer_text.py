"""The answer paragraph: what one run says about the paper, in sentences built from its records.

:func:`answer_paragraph` reads the answer block of :func:`infodiv.reports.answer.answer` and
writes one sentence per question, in this order:

1. can the run test anything (the testability record: raw readout against chance, what the
   members carry about the label);
2. Theorem 1, the identity (loss = bias − diversity, with its residual);
3. what all members know about the label, I(U;Y) (usable information, at most H(Y));
4. diminishing returns — the headline — on every objective judged, information objectives
   first (Theorem 7 is about I(U_S;Y)), then on nested sets;
5. whether redundancy is the mechanism: the premise, the cost against the conditionally
   independent control, the gains against it, the gain–redundancy regression;
6. Theorem 8's bounds against the best readout's error;
7. held-out selection.

Other claims judged (violations, the diversity regression) are in the table, not the
paragraph.

Every clause states its conclusion (holds / opposite / absent / inconclusive, from the
record), the claim's own words for that conclusion (``Claim.conclusions``), the estimate with
its interval and units and, where inconclusive, the n that would decide. Nothing in the
paragraph is typed by hand: a page that quotes it quotes its records.
"""

from __future__ import annotations

from ..numbers import fmt, fmt_interval

__all__ = ["answer_paragraph", "verdict_list", "clause", "objective_label", "HEADLINE",
           "MECHANISM", "SELECTION"]

#: the claims of each sentence, in the paragraph's order
HEADLINE = ("diminishing_returns", "dr_mean_difference_positive")
MECHANISM = ("premise", "redundancy_cost", "gains_vs_control", "marginal_gain_redundancy")
SELECTION = ("greedy_beats_random", "greedy_beats_prefix")


def objective_label(objective: str | None) -> str:
    """How the paragraph names an objective: information objectives say so."""
    if not objective:
        return "its objective"
    if objective.startswith("mi_"):
        return f"information ({objective})"
    return objective.replace("_", " ")


def _estimate(v: dict) -> str:
    units = (v.get("units") or "").split(" (")[0]
    units = "" if units == "dimensionless" else f" {units}"
    return f"{fmt_interval(v['estimate'], v['interval'])}{units}"


def clause(v: dict, where: str | None = None) -> str:
    """One verdict line in a few words: the conclusion on its objective (or on ``where``),
    the claim's words for it, and the number that decides it (the estimate; δ when absent;
    the n that would decide when inconclusive)."""
    where = where or objective_label(v["objective"])
    o, words = v["outcome"], v["conclusions"].get(v["outcome"], "")
    words = f" — {words}" if words else ""
    if o == "holds":
        return f"holds on {where}{words} ({_estimate(v)})"
    if o == "opposite":
        return f"the opposite on {where}{words} ({_estimate(v)})"
    if o == "absent":
        return f"absent on {where}{words} (within δ = {fmt(v['margin'])})"
    if o in ("untestable", "report"):
        return f"{o} on {where}"
    if v.get("n_needed") is not None:
        why = f"n ≈ {v['n_needed']} would decide"
    else:
        why = v["reason"]
    return f"inconclusive on {where} ({why})"


def _of(lines: list[dict], names) -> list[list[dict]]:
    """The lines of ``names`` grouped by claim in the order of ``names``, information
    objectives first within a claim."""
    picked = sorted((v for v in lines if v["claim"] in names),
                    key=lambda v: (list(names).index(v["claim"]),
                                   not str(v["objective"]).startswith("mi_")))
    out: dict = {}
    for v in picked:
        out.setdefault(v["claim"], []).append(v)
    return list(out.values())


def _same(group: list[dict]) -> bool:
    """Whether every objective's line of one claim says the same thing as printed (a statistic
    of the members alone, such as the premise's, does not depend on the objective; its
    permutation baseline may differ in the last digits between the objectives' streams)."""
    keys = {(v["outcome"], _estimate(v), v.get("n_needed")) for v in group}
    return len(group) > 1 and len(keys) == 1


def _clauses(group: list[dict]) -> str:
    """One claim's clauses, one per objective, or one for all when they agree or when the
    statistic reads the members alone (one value per quantity on a page: the record with the
    most example resamples speaks for it)."""
    if _same(group):
        return clause(group[0], where="every objective")
    if len(group) > 1 and group[0].get("members_only"):
        best = max(group, key=lambda v: v.get("n_bootstrap") or 0)
        return clause(best, where="the members (one statistic for every objective)")
    return ", ".join(clause(v) for v in group)


def _claims_sentence(lead: str, groups: list[list[dict]]) -> str:
    """``lead`` then each claim's clauses: "Is redundancy the reason? dependence given Y:
    holds on …; redundancy cost: …"."""
    parts = [f"{g[0]['short']}: " + _clauses(g) for g in groups]
    return f"{lead} " + "; ".join(parts) + "."


def _readout_sentence(a: dict) -> str:
    """The raw readout against chance, and whether the run can test anything. The members'
    information is quoted here only where the decompositions give none (one value per
    quantity on a page)."""
    raw, test = a.get("raw"), a.get("testability")
    if not raw:
        return "The model's raw readout is not among this run's records."
    out = (f"The model's own readout is {raw['chance']} chance (accuracy "
           f"{fmt_interval(raw['accuracy'], raw['accuracy_interval'])}, majority class "
           f"{fmt(raw['majority_rate'])})")
    if not test:
        return out + "; whether its members carry the label was not recorded for this run."
    mem = test["members"]
    if mem is None:
        return out + f"; {test['reason']}."
    bits = f"{fmt_interval(mem['value'], mem['interval'])} of H(Y) = {fmt(mem['h_y'])} bits"
    if not test["testable"]:
        return (out + f"; its members carry no detectable information about the label "
                f"({bits}): no claim is tested on this run.")
    carry = "" if a.get("information") else f" ({bits})"
    if raw["chance"] != "above":
        return (out + f", a prompt effect: its members carry the label{carry}, so the claims "
                "are tested on them.")
    return out + (f"; its members carry {bits} about the label." if carry else ".")


def _theorem1_sentence(t1: dict) -> str:
    return (f"Theorem 1 holds exactly, as an identity: cross-entropy "
            f"{fmt(t1['ensemble_loss'])} = bias {fmt(t1['bias'])} − diversity "
            f"{fmt(t1['diversity'])} {t1.get('units', 'nats')}.")


def _information_sentence(info: dict) -> str:
    """I(U;Y) of all members; an estimate whose interval lies below 0 (impossible for I,
    the held-out readout's cost at this n) is flagged as no detectable information."""
    value = fmt_interval(info["joint"], info["joint_ci"])
    if info["joint_ci"] is not None and info["joint_ci"][1] < 0:
        return (f"All members together carry no detectable information about the label: the "
                f"usable-information estimate {value} bits lies below 0, which I(U;Y) cannot "
                f"(the held-out readout's own cost at this n; H(Y) = {fmt(info['h_y'])} bits).")
    return (f"All members together carry I(U;Y) ≥ {value} of H(Y) = {fmt(info['h_y'])} "
            "bits about the label.")


def _theorem8_sentence(info: dict) -> str:
    out = (f"Theorem 8 bounds the best classifier's error to "
           f"[{fmt(info['error_lower_bound'])}, {fmt(info['error_upper_bound'])}]")
    best = info.get("best_readout_error")
    if best is None:
        return out + "."
    word = "consistent" if info.get("consistent") else "contradicting the bounds"
    err = fmt_interval(best, info["best_readout_error_ci"])
    return out + f"; the best readout errs on {err}, {word}."


def answer_paragraph(a: dict) -> list[str]:
    """The sentences of the answer paragraph of one answer block (module docstring)."""
    out = [_readout_sentence(a)]
    if a.get("theorem1"):
        out.append(_theorem1_sentence(a["theorem1"]))
    info = a.get("information")
    test = a.get("testability")
    if test and not test["testable"]:   # what the members carry is the readout sentence's
        return out
    if info:
        out.append(_information_sentence(info))
    lines = [v for v in a.get("verdicts", []) if v["outcome"] != "report"]
    for group in _of(lines, HEADLINE):
        lead = ("Diminishing returns (Theorems 5–7):" if group[0]["claim"] == HEADLINE[0]
                else "On nested sets (submodularity):")
        out.append(f"{lead} " + _clauses(group) + ".")
    mech = _of(lines, MECHANISM)
    if mech:
        out.append(_claims_sentence("Is redundancy the reason (Theorem 7)?", mech))
    if info:
        out.append(_theorem8_sentence(info))
    sel = _of(lines, SELECTION)
    if sel:
        out.append(_claims_sentence("Selection on held-out examples:", sel))
    return out


def _rate(rate, interval) -> str:
    return "–" if rate is None else fmt_interval(rate, interval, 2)


def verdict_list(a: dict) -> str:
    """Every verdict line of an answer block as a markdown list, one item per claim and
    objective: the claim in the paper's words, its conclusion with the claim's words for it,
    the estimate with its interval, δ, the n that would decide, the power on its matched case
    and the shuffled-label rate (a results page quotes this, never its own words)."""
    items = []
    for v in a.get("verdicts", []):
        bits = [f"estimate {_estimate(v)}"]
        if v.get("margin") is not None:
            bits.append(f"δ = {fmt(v['margin'])}")
        if v.get("n_needed") is not None:
            bits.append(f"n₈₀ ≈ {v['n_needed']}")
        fp = _rate(v.get("false_positive"), v.get("false_positive_interval"))
        bits += [f"power {_rate(v.get('power'), v.get('power_interval'))}",
                 f"shuffled labels {fp}"]
        items.append(f"- **{v['short']}** ({v['sentence']}): {clause(v)}; " + ", ".join(bits)
                     + ".")
    return "\n".join(items)
