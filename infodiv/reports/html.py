"""The self-contained HTML report of one or more run folders, and the one-screen summary.

``write_report(run_folders, path)`` writes ONE page that needs nothing beside it: figures are
embedded as base64 PNG, there is no script and no external style sheet. Beside the page it
writes ``<stem>.json`` (every number at full precision) and ``<stem>.csv`` (one row per number:
run, section, quantity, value, CI, units, estimator, n); the PNGs stay in the run folders.

The page has, per run: a header (model, task, N, M, C, seed, shots, granularity, dtype, device,
library versions, exactness of Σ u + bias = logits), the bias–diversity variants (Theorem 1),
the information decomposition with the Eq. 12 bounds (Theorem 4), the curve and
diminishing-returns statistics (Theorems 5–8) with their intervals and controls, any
inference results (nulls, intervals, power, flags) found in the run, and every figure. Every
number is rounded for reading (:func:`fmt`) and states its estimator and n. No absolute path is
printed: paths are shown relative to the working directory (or by their last two parts).
"""

from __future__ import annotations

import base64
import csv
import html
import json
from pathlib import Path

from .answer import answer
from .answer_page import answer_html, definitions_html, details_html
from .summary import collect, fmt

__all__ = ["write_report", "FIGURE_CAPTIONS"]

FIGURE_CAPTIONS = {
    "junction_curves": "Junction curves (Figures 5/7): measures along the depth-order prefix",
    "module_shares": "Bias and diversity shares of embedding / attention / MLP (Figure 4)",
    "answer": "Mean curve over random member orders: the real members against the same members "
              "made conditionally independent given the label (each permuted within its "
              "class), with 95% example-bootstrap bands",
    "curves": "Layer-addition curves (prefix, greedy, random orders)",
    "gains": "Gain profile g(k) of random orders with its fitted slope",
    "shapley": "Shapley values of the members",
    "layer_graph": "Layer graph (Chow-Liu tree of pairwise MI)",
    "figure3": "Figure 3: correlation of accuracy with MSE, bias and diversity across tasks",
    "figure3_variants": "Figure 3 on this run: correlation over the junction points of accuracy "
                        "with MSE, bias and diversity, in every variant of the decomposition",
    "figure6": "Figure 6: performance against the number of layers, across models",
}


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ddd;
padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1em 0}
img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
.ok{color:#1a7f37}.bad{color:#c62828;font-weight:bold}.opp{color:#b35c00}.abs{color:#1f4e9c}
.answer-text{font-size:.95em;line-height:1.35;max-width:1300px;margin:.4em 0}
code{background:#f4f4f4;padding:0 .2em}
.muted{color:#666}.lead{font-size:1.05em}.answer{display:flex;gap:1em;align-items:flex-start}
.verdict-block{flex:7}.answer-figure{flex:3}.answer-figure img{max-height:520px}
table.verdicts{margin:.3em 0}table.verdicts td{font-size:.8em;padding:.12em .4em}
table.verdicts td small{font-size:.9em}details{margin:.8em 0}
summary{cursor:pointer;font-weight:bold}
dt{font-weight:bold;margin-top:.4em}dd{margin-left:1.2em}body{max-width:1360px}
table.verdicts th:nth-child(1){width:40%}
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _header_html(h: dict) -> str:
    ok = h["exactness_ok"]
    exact = (f"<span class='{'ok' if ok else 'bad'}'>{'exact' if ok else 'NOT exact'}</span>: "
             f"max |Σ u + bias − logits| = {fmt(h['max_exactness_error'])} (tolerance "
             f"{fmt(h['exactness_rtol'])} relative)")
    versions = ", ".join(f"{k} {v}" for k, v in (h["versions"] or {}).items())
    items = [("model", f"{h['model'] or h['model_id']} (<code>{_e(h['model_id'])}</code>, "
                       f"{_e(h['family'])}, weights sha256 {_e(h['weights_sha256'])}…)"),
             ("task", f"{_e(h['task'])}, options {_e(h['options'])}, data {_e(h['data'])}"
                      + (", stratified" if h["stratified"] else "")),
             ("N, M, C", f"{h['N']} examples, {h['M']} members, {h['C']} options"),
             ("seed, shots", f"{_e(h['seed'])}, {_e(h['shots'])}"),
             ("granularity, dtype, device",
              f"{_e(h['granularity'])}, {_e(h['dtype'])}, {_e(h['device'])}"),
             ("exactness", exact), ("versions", _e(versions))]
    if h.get("command"):
        items.append(("command", f"<code>{_e(h['command'])}</code>"))
    if h.get("timings_s"):
        items.append(("wall time", _e(", ".join(f"{k} {fmt(v)} s"
                                                for k, v in h["timings_s"].items()))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in items)
    return f"<table class='header'>{body}</table>"


def _rows_html(rows: list[dict]) -> str:
    out, section = [], None
    for r in rows:
        if r["section"] != section:
            if section is not None:
                out.append("</table>")
            section = r["section"]
            out.append(f"<h3>{_e(section)}</h3><table><tr><th>quantity</th><th>value</th>"
                       "<th>95% interval</th><th>units</th><th>estimator</th><th>n</th></tr>")
        interval = "" if r["low"] is None and r["high"] is None else \
            f"[{fmt(r['low'])}, {fmt(r['high'])}]"
        out.append(f"<tr><td>{_e(r['quantity'])}</td><td class='num'>{fmt(r['value'])}</td>"
                   f"<td class='num'>{interval}</td><td>{_e(r['units'])}</td>"
                   f"<td>{_e(r['estimator'])}</td><td class='num'>{fmt(r['n'])}</td></tr>")
    if section is not None:
        out.append("</table>")
    return "".join(out)


def _figure_html(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    parts = path.stem.split("_")
    kind = parts[0] if parts[0] in FIGURE_CAPTIONS else parts[-1]
    caption = FIGURE_CAPTIONS.get(path.stem, FIGURE_CAPTIONS.get(kind, path.stem))
    rel = f"{path.parent.name}/{path.name}"
    return (f"<figure><img src='data:image/png;base64,{data}' alt='{_e(path.stem)}'>"
            f"<figcaption>{_e(caption)} — <code>{_e(rel)}</code></figcaption></figure>")


def _answer_figure(figures: list[Path]) -> Path | None:
    """The figure beside the verdicts: the first objective's mean curve of the real members
    against their conditionally independent control (else its layer-addition curves)."""
    for prefix in ("answer", "curves"):
        found = [p for p in figures if p.parent.name == "curves" and p.stem.startswith(prefix)]
        if found:
            return found[0]
    return None


def _comparison_html(runs: list[dict]) -> str:
    keys = ("accuracy of the model's own option logits", "I(U;Y)",
            "diversity D = TC(U|Y) − TC(U)")
    head = "".join(f"<th>{_e(k)}</th>" for k in keys)
    lines = [f"<h2>All runs</h2><table><tr><th>run</th><th>N</th>{head}</tr>"]
    for run in runs:
        vals = {}
        for r in run["rows"]:
            if r["quantity"] in keys and r["quantity"] not in vals:
                vals[r["quantity"]] = f"{fmt(r['value'])} ({_e(r['estimator'])})" \
                    if r["quantity"] != keys[0] else fmt(r["value"])
        cells = "".join(f"<td class='num'>{vals.get(k, '–')}</td>" for k in keys)
        lines.append(f"<tr><td>{_e(run['header']['run'])}</td>"
                     f"<td class='num'>{fmt(run['header']['N'])}</td>{cells}</tr>")
    return "".join(lines) + "</table>"


def write_report(run_folders, path) -> Path:
    """Write the HTML page for ``run_folders`` to ``path`` plus ``.json`` / ``.csv`` beside it."""
    path = Path(path)
    runs = [collect(r) for r in run_folders]
    if not runs:
        raise ValueError("write_report needs at least one run folder, got 0")
    h0 = runs[0]["header"]
    title = (f"infodiv: {h0['model'] or h0['model_id']} on {h0['task']} (N = {h0['N']})"
             if len(runs) == 1 else f"infodiv: {len(runs)} runs")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
             f"<h1>{_e(title)}</h1>"]
    cross_rows: list[dict] = []
    if len(runs) > 1:
        from .crossrun import cross_run

        path.parent.mkdir(parents=True, exist_ok=True)
        cross_figs, cross_rows = cross_run(run_folders, path.parent, path.stem)
        parts.append(_comparison_html(runs))
        parts.append(_rows_html(cross_rows))
        parts += [_figure_html(p) for p in cross_figs]
    answers = [answer(r) for r in run_folders]
    shown = [_answer_figure(run["figures"]) for run in runs]
    for run, a, fig in zip(runs, answers, shown):
        parts.append(answer_html(a, run["header"], _figure_html(fig) if fig else ""))
    for run, a in zip(runs, answers):
        parts.append(details_html(a, run["header"]["run"]))
    parts.append(definitions_html())
    for run, fig in zip(runs, shown):
        h = run["header"]
        rest = [p for p in run["figures"] if p != fig]
        parts.append(f"<details id='details-{_e(h['run'])}'><summary>Details of {_e(h['run'])}: "
                     "every number with its estimator, units and n, and every figure</summary>")
        parts.append(_header_html(h))
        parts.append(_rows_html(run["rows"]))
        if rest:
            parts.append("<h3>Figures</h3>" + "".join(_figure_html(p) for p in rest))
        parts.append("</details>")
    parts.append("<p><small>Numbers are rounded to 3 significant digits; full precision in "
                 f"<code>{_e(path.stem)}.json</code> and <code>{_e(path.stem)}.csv</code>."
                 "</small></p></body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    doc = [{"header": r["header"], "answer": a, "rows": r["rows"],
            "figures": [f"{p.parent.name}/{p.name}" for p in r["figures"]]}
           for r, a in zip(runs, answers)]
    if cross_rows:
        doc.append({"header": {"run": "all runs"}, "rows": cross_rows})
    path.with_suffix(".json").write_text(json.dumps(doc, indent=1, default=str))
    with open(path.with_suffix(".csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["run", "section", "quantity", "value", "ci_low", "ci_high", "units",
                    "estimator", "n"])
        tagged = [(r["header"]["run"], row) for r in runs for row in r["rows"]]
        for run, row in tagged + [("all runs", row) for row in cross_rows]:
            w.writerow([run, row["section"], row["quantity"], row["value"], row["low"],
                        row["high"], row["units"], row["estimator"], row["n"]])
    return path


