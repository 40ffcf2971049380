"""The readable summary of a curves document (:func:`infodiv.reports.curves.curves_report`):
per objective one line per verdict record (its sentence, estimate with interval, null,
power) and the point estimates; numbers rounded for reading, all of them in ``report.json``.
"""

from __future__ import annotations

from ..inference.flags import Flag, summary_lines
from .markdown import fmt, fmt_list, interval

__all__ = ["curves_markdown", "record_line", "flag_records", "verdict_summary"]


def record_line(name: str, r: dict) -> str:
    """One verdict record as a markdown bullet: verdict and power, then its numbers."""
    text = (r.get("extra") or {}).get("report_text") or r["text"]   # a report says its numbers
    line = (f"- **{name.replace('_', ' ')}**: {text}. {r['statistic']}: "
            f"{fmt(r['estimate'], '.3g')}")
    if r.get("units"):
        line += f" {r['units']}"
    if r.get("interval"):
        line += f" {interval(r['interval'])} ({r['interval_method']}, B = {r['n_bootstrap']})"
    if r.get("null_mean") is not None:
        line += (f"; shuffled-label null mean {fmt(r['null_mean'], '.3g')} "
                 f"{interval(r.get('null_interval'))} (K = {r['n_permutations']}), "
                 f"null-corrected {fmt(r['corrected'], '.3g')} "
                 f"{interval(r.get('corrected_interval'))}")
    if r.get("p") is not None:
        line += f"; p = {fmt(r['p'], '.3g')}"
    if r.get("mc_error") is not None:
        line += f"; Monte-Carlo error (orders) {fmt(r['mc_error'], '.2g')}"
    return line + f" (rule: {r['rule']})."


def _point_lines(res: dict) -> list[str]:
    cur, marks, pt = res["curves"]["curves"], res["k_marks"], res["point"]
    units = res["curves"].get("units") or "units of the metric"
    ratio, curv, fits = pt["ratio"], pt["curvature"], pt["fits"]
    return [
        f"- f(empty) = {fmt(pt['f_empty'])}, f(all) = {fmt(pt['f_all'])} ({units}).",
        "- greedy held-out at k = 1, M/4, M/2: "
        + fmt_list([cur["greedy"]["values"][k] for k in marks]) + " (in-sample: "
        + fmt_list([cur["greedy"]["values_in_sample"][k] for k in marks]) + ").",
        f"- submodularity ratio along greedy (point): min {fmt(ratio['min'], '.3g')}, median "
        f"{fmt(ratio['median'], '.3g')}, fraction < 1 {fmt(ratio['fraction_below_1'], '.3g')}; "
        f"total curvature {fmt(curv['total'], '.3g')}.",
        f"- growth law of the mean curve (point fits): best by AICc {fits['best_aicc']}, best "
        f"extrapolation {fits['best_extrapolation']}.",
        f"- Shapley check: sum phi - (f(all) - f(empty)) = "
        f"{fmt(cur['random']['shapley_check']['residual'], '.2e')}.",
    ]


def _objective_lines(res: dict) -> list[str]:
    if "verdicts" in res:
        lead = [record_line(n, r) for n, r in res["verdicts"].items()]
        lead += [f"- {n.replace('_', ' ')}: not tested ({why})."
                 for n, why in (res.get("not_tested") or {}).items()]
    else:
        lead = ["- no inference: point estimates only (no interval, null or verdict)."]
    notes = [f"- note: {n}" for n in res["curves"].get("notes", [])]
    return [*lead, *_point_lines(res), *notes]


def flag_records(doc: dict) -> list:
    """Every flag of a curves document (all objectives and the selection), as :class:`Flag`."""
    out = []
    for name, res in (doc.get("objectives") or {}).items():
        records = (res.get("verdicts") or {}).values()
        for f in [*res.get("flags", []), *(f for r in records for f in r["flags"])]:
            out.append(Flag(**{**f, "where": f"{name}: {f['where']}"}))
    sel = ((doc.get("selection") or {}).get("inference") or {}).get("verdicts") or {}
    for r in sel.values():
        out += [Flag(**{**f, "where": f"selection: {f['where']}"}) for f in r["flags"]]
    return out


def _selection_lines(s: dict) -> list[str]:
    marks = s["k_marks"]
    lines = ["## Subset selection (held-out)",
             f"objective {s['objective']}; at k = 1, M/4, M/2: greedy "
             + fmt_list([s["greedy"][k] for k in marks]) + "; prefix "
             + fmt_list([s["prefix"][k] for k in marks]) + "; best-of-random "
             + fmt_list([s["best_random"][k] for k in marks])]
    lines += [record_line(n, r)
              for n, r in ((s.get("inference") or {}).get("verdicts") or {}).items()]
    if s.get("inference_error"):
        lines.append(f"- selection claims not tested: {s['inference_error']}")
    return lines + [""]


def curves_markdown(doc: dict) -> str:
    """The readable summary of a curves document (module docstring)."""
    run, st = doc["run"], doc["settings"]
    verdicts = (f"verdicts: B = {st['n_bootstrap']} example resamples (everything refitted, "
                f"{st['n_orders']} orders each), K = {st['n_permutations']} label "
                f"permutations, {st['power_replicates']} surrogates of each kind for power and "
                f"the shuffled-label rate; {st['n_triples']} nested chains for the DR claims"
                if st.get("inference", True) else
                "no verdicts: inference off (no example resamples, label permutations or "
                "power surrogates were run)")
    lines = [f"# Layer-addition curves: {run['model']} on {run['task']}", "",
             f"N = {run['N']}, M = {run['M']}, C = {run['C']}; seed {st['seed']}; "
             f"{st['n_curve_orders']} random orders for the curves; {verdicts}.", ""]
    for name, res in doc["objectives"].items():
        lines.append(f"## {name}")
        lines += [f"failed: {res['error']}"] if "error" in res else _objective_lines(res)
        lines.append("")
    if "graph" in doc:
        g = doc["graph"]
        lines += ["## Layer graph", f"Chow-Liu tree edge sum {g['tree_bound']:.4g} bits "
                  f"(lower bound on TC(U)); {len(g['communities'])} redundancy communities.", ""]
    if "selection" in doc:
        lines += _selection_lines(doc["selection"])
    if "stability" in doc:
        st = doc["stability"]
        lines += [f"Greedy-order stability over {st['n_bootstrap']} bootstrap replicates: "
                  f"Kendall tau {st['kendall_tau_mean']:.3f}; Jaccard of the first k: "
                  + ", ".join(f"k={k}: {v:.2f}" for k, v in st["jaccard"].items()), ""]
    lines += ["## Flags", *summary_lines(flag_records(doc)), ""]
    return "\n".join(lines) + "\n"


def verdict_summary(doc: dict) -> list[str]:
    """The final summary: every objective's verdicts, each with its detection rate."""
    lines = []
    for name, res in (doc.get("objectives") or {}).items():
        for test, v in (res.get("verdicts") or {}).items():
            lines.append(f"infodiv curves: {name}: {test.replace('_', ' ')}: {v['text']}")
    return lines
