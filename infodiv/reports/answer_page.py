"""The first screen of a run's page, and the verdicts in detail below it.

:func:`answer_html` renders an answer block (:func:`infodiv.reports.answer.answer`): the
answer paragraph (generated from the records), then one compact table — one row per claim in
the paper's words, one column per objective, each cell the record's conclusion with its
estimate — beside the answer figure. :func:`details_html` renders every record in full: the
conclusion and its reason, the estimate with its interval, the margin δ, the minimal
detectable effect and the n that would detect δ with power 0.8, the power on the matched case
and the rate on shuffled labels. :data:`DEFINITIONS` says what the words mean.
"""

from __future__ import annotations

import html

from ..inference.outcome import CALIBRATION_RULE
from ..numbers import fmt, fmt_interval
from .answer_information import information_rows_html
from .answer_text import objective_label

__all__ = ["answer_html", "details_html", "definitions_html", "DEFINITIONS", "OUTCOME_CSS"]

#: how each conclusion is coloured
OUTCOME_CSS = {"holds": "ok", "opposite": "opp", "absent": "abs", "inconclusive": "muted",
               "untestable": "muted", "report": "muted"}

DEFINITIONS = (
    ("member", "one write to the residual stream (the embedding, an attention or MLP "
               "execution, or a head): its contribution u_m to the option logits; the members "
               "sum exactly to the model's logits"),
    ("bias", "the mean loss of the members on their own (each member scaled by M, so that the "
             "members' mean is the model's logits)"),
    ("diversity", "how far the members are from their ensemble: mean KL(q̄ ‖ q_m) for the "
                  "cross-entropy; loss = bias − diversity holds exactly, per example"),
    ("usable information", "H(Y) minus the held-out cross-entropy of a probabilistic readout "
                           "of the members, in bits: a lower bound on I(U;Y), which is at "
                           "most H(Y) ≤ log2 C"),
    ("holds", "the claim's rule fires in the paper's direction: the 95% example-bootstrap "
              "interval and the null-corrected interval exclude 0 on the claim's side and the "
              "label-permutation p is below α; and the rule is calibrated"),
    ("opposite", "the same rule fires in the other direction"),
    ("absent", "the effect in the claim's direction is smaller than its margin δ with 95% "
               "confidence (both intervals stay within δ of 0 on the claim's side); δ is fixed "
               "per claim before looking (docs/claims.md)"),
    ("inconclusive", "none of these: the interval reaches beyond δ without the rule firing. "
                     "The row gives the smallest effect detectable at this n (power 0.8) and "
                     "the n that would detect δ with power 0.8"),
    ("untestable", "the members carry no detectable information about the label (usable "
                   "information whose 95% interval reaches 0), so no claim is tested"),
    ("power", "how often the claim's rule fires on a surrogate built from this run on which it "
              "must fire (its matched case), with a Wilson 95% interval"),
    ("calibrated", CALIBRATION_RULE + "; an uncalibrated rule's verdict is inconclusive"),
)


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _objectives(lines: list[dict]) -> list[str]:
    """The objectives of the verdict lines, information objectives first."""
    seen = list(dict.fromkeys(v["objective"] for v in lines))
    return sorted(seen, key=lambda o: not str(o).startswith("mi_"))


def _cell_note(v: dict) -> str:
    est = fmt_interval(v["estimate"], v["interval"])
    if v["outcome"] == "absent":
        return f"{est}; δ = {fmt(v['margin'])}"
    if v["outcome"] == "inconclusive" and v.get("n_needed") is not None:
        return f"{est}; n ≈ {v['n_needed']} decides"
    return est


def _cell(v: dict | None) -> str:
    if v is None:
        return "<td class='muted'>–</td>"
    css = OUTCOME_CSS.get(v["outcome"], "muted")
    return (f"<td class='{css}' title='{_e(v['reason'] or v['sentence'])}'><b>"
            f"{_e(v['outcome'])}</b><br><small class='num'>{_e(_cell_note(v))}</small></td>")


def _claim_rows(lines: list[dict], objectives: list[str]) -> str:
    by_claim: dict = {}
    for v in lines:
        by_claim.setdefault(v["claim"], {})[v["objective"]] = v
    rows = []
    for cells in by_claim.values():
        first = next(iter(cells.values()))
        rows.append(f"<tr><td title='{_e(first['sentence'])}'>{_e(first['short'])}</td>"
                    + "".join(_cell(cells.get(o)) for o in objectives) + "</tr>")
    return "".join(rows)


def _theorem1_row(t1: dict | None, n, span: int) -> str:
    if not t1:
        return ""
    return (f"<tr><td>Theorem 1: loss = bias − diversity<br><small>the model's cross-entropy"
            f"</small></td><td colspan='{span}' class='ok'><b>holds exactly</b> "
            f"<span class='num'>{fmt(t1['ensemble_loss'])} = {fmt(t1['bias'])} − "
            f"{fmt(t1['diversity'])}</span> <small>{_e(t1.get('units', 'nats'))}, n = {n}; "
            f"an identity, max residual {fmt(t1.get('max_abs_residual'), 2)}</small></td></tr>")


def answer_html(a: dict, header: dict, figure_html: str = "") -> str:
    """The first screen of one run: the answer paragraph, then the table beside the figure."""
    lines = a["verdicts"]
    objectives = _objectives(lines)
    span = max(1, len(objectives))
    head = "".join(f"<th>{_e(objective_label(o))}</th>" for o in objectives) or "<th></th>"
    rows = _claim_rows(lines, objectives) or (
        f"<tr><td colspan='{span + 1}'>No verdicts in this run: run <code>infodiv curves"
        "</code> with inference.</td></tr>")
    table = (f"<table class='verdicts'><tr><th>claim</th>{head}</tr>"
             f"{_theorem1_row(a['theorem1'], a['n'], span)}"
             f"{information_rows_html(a.get('information'), span)}{rows}</table>")
    model = header.get("model") or header.get("model_id")
    text = " ".join(_e(s) for s in a["paragraph"])
    return (f"<section id='answer'><p class='lead'><b>{_e(model)}</b> on "
            f"<b>{_e(header.get('task'))}</b>, {a['n']} examples, {header.get('M')} members."
            f"</p><p class='answer-text' id='answer-text'>{text}</p>"
            f"<div class='answer'><div class='verdict-block' id='verdicts'>{table}</div>"
            f"<div class='answer-figure'>{figure_html}</div></div></section>")


def _power(rate, interval, title="") -> str:
    if rate is None:
        return "–"
    return f"<span title='{_e(title)}'>{fmt_interval(rate, interval)}</span>"


def _detail_row(v: dict) -> str:
    css = OUTCOME_CSS.get(v["outcome"], "muted")
    reason = f"<br><small>{_e(v['reason'])}</small>" if v["reason"] else ""
    decide = []
    if v.get("margin") is not None:
        decide.append(f"δ = {fmt(v['margin'])}")
    if v.get("mde") is not None:
        decide.append(f"detectable: {fmt(v['mde'])}")
    if v.get("n_needed") is not None:
        decide.append(f"n₈₀ ≈ {v['n_needed']}")
    theorem = (v["theorem"] or "").split(":")[0].split(" (")[0].strip()
    return (f"<tr><td title='{_e(v['theorem'])}'>{_e(v['short'])}<br><small>"
            f"{_e(theorem)} · {_e(objective_label(v['objective']))}</small></td>"
            f"<td class='{css}'><b>{_e(v['outcome'])}</b>{reason}</td>"
            f"<td class='num' title='{_e(v['statistic'])}'>"
            f"{fmt_interval(v['estimate'], v['interval'])}<br><small>{_e(v['units'])}; B = "
            f"{v['n_bootstrap'] or '–'}, K = {v['n_permutations'] or '–'}</small></td>"
            f"<td class='num'>{'<br>'.join(decide) or '–'}</td>"
            f"<td class='num'>{_power(v['power'], v['power_interval'], v['matched_case'])}</td>"
            f"<td class='num'>{_power(v['false_positive'], v['false_positive_interval'])}"
            "</td></tr>")


def details_html(a: dict, run: str) -> str:
    """Every verdict record of one run in full ('' without records)."""
    if not a["verdicts"]:
        return ""
    rows = "".join(_detail_row(v) for v in a["verdicts"])
    return (f"<section id='verdict-details-{_e(run)}'><h2>Verdicts in detail</h2>"
            "<table class='details'><tr><th>claim</th><th>conclusion</th><th>estimate [95%]</th>"
            "<th title='margin δ, smallest effect detectable at this n (power 0.8), n that "
            "detects δ with power 0.8'>δ · detectable · n₈₀</th><th title='detection rate on "
            "the matched case, Wilson 95% interval'>power [95%]</th><th title='how often the "
            "rule fires with the labels shuffled'>shuffled labels [95%]</th></tr>"
            f"{rows}</table></section>")


def definitions_html() -> str:
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in DEFINITIONS)
    return f"<section id='definitions'><h2>What the words mean</h2><dl>{items}</dl></section>"
