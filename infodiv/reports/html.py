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
import math
from pathlib import Path

__all__ = ["fmt", "collect", "write_report", "print_summary", "FIGURE_CAPTIONS"]

FIGURE_CAPTIONS = {
    "junction_curves": "Junction curves (Figures 5/7): measures along the depth-order prefix",
    "module_shares": "Bias and diversity shares of embedding / attention / MLP (Figure 4)",
    "curves": "Layer-addition curves (prefix, greedy, random orders)",
    "gains": "Gain profile g(k) of random orders with its fitted slope",
    "shapley": "Shapley values of the members",
    "layer_graph": "Layer graph (Chow-Liu tree of pairwise MI)",
}
_FIGURE_DIRS = ("decompositions", "curves", "figures")


def fmt(x, digits: int = 3) -> str:
    """A number for reading: ``digits`` significant digits, scientific below 1e-3 / above 1e5.

    Integers print in full; None, NaN print as an en dash.
    """
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "–"
    if x == 0 or math.isinf(x):
        return str(x) if math.isinf(x) else "0"
    if abs(x) < 1e-3 or abs(x) >= 1e5:
        return f"{x:.{max(digits - 1, 1)}e}"
    return f"{x:.{digits}g}"


def _read(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _display(path) -> str:
    from infodiv.commands.tasksel import display_path

    return display_path(path)


def _row(section, quantity, value, *, low=None, high=None, units="", estimator="", n=None):
    return {"section": section, "quantity": quantity, "value": value, "low": low, "high": high,
            "units": units, "estimator": estimator, "n": n}


def _header(root: Path) -> dict:
    meta_doc = _read(root / "contributions" / "meta.json") or _read(root / "meta.json") or {}
    meta = meta_doc.get("meta", {})
    run_doc = _read(root / "run.json") or {}
    cfg = run_doc.get("config", {})
    model = meta.get("model") or {}
    model_id = model.get("model_id", cfg.get("model", "?")) if isinstance(model, dict) else model
    shape = meta_doc.get("shape", {})
    task_meta = meta.get("task_meta", {})
    return {
        "run": root.name, "model": model.get("name") if isinstance(model, dict) else None,
        "model_id": _display(model_id) if ("/" in str(model_id)) else str(model_id),
        "weights_sha256": (model.get("weights_sha256") or "")[:12] if isinstance(model, dict)
        else "", "family": meta.get("family"), "task": meta.get("task", cfg.get("task")),
        "N": shape.get("N"), "M": shape.get("M"), "C": shape.get("C"),
        "options": meta.get("options"), "seed": cfg.get("seed", meta.get("seed")),
        "shots": task_meta.get("shots", cfg.get("shots")),
        "stratified": bool(task_meta.get("stratified", False)),
        "data": task_meta.get("data_source", cfg.get("data")),
        "granularity": meta.get("granularity"), "dtype": meta.get("dtype"),
        "device": meta.get("device"), "versions": meta.get("versions", {}),
        "max_exactness_error": meta.get("max_exactness_error"),
        "exactness_rtol": meta.get("exactness_rtol"), "exactness_ok": meta.get("exactness_ok"),
        "command": run_doc.get("command"), "timings_s": run_doc.get("timings_s", {}),
    }


def _ensemble_rows(dec: dict, n) -> list[dict]:
    rows = []
    for r in dec.get("ensemble", {}).get("bias_diversity", []):
        variant = f"{r['loss']}, {r['space']} space, scale={r['scale']}".replace(", - space", "")
        est = "exact identity (max residual " + fmt(r.get("max_abs_residual"), 2) + ")"
        for term in ("ensemble_loss", "bias", "diversity"):
            rows.append(_row("Bias–diversity (Theorem 1)", f"{variant}: {term.replace('_', ' ')}",
                             r[term], units=r.get("units", ""), estimator=est, n=n))
    eq14 = dec.get("ensemble", {}).get("paper_eq14") or {}
    if "gap" in eq14:
        rows.append(_row("Bias–diversity (Theorem 1)", "paper Eq. 14: gap from an identity",
                         eq14["gap"], units="probability^2", estimator="paper approximation",
                         n=n))
    return rows


def _information_rows(dec: dict, n) -> list[dict]:
    info = dec.get("information") or {}
    rows = []
    if "H(Y)_bits" in info:
        rows.append(_row("Information (Theorem 4, Eq. 12-13)", "H(Y)", info["H(Y)_bits"],
                         units="bits", estimator="plug-in", n=n))
        rows.append(_row("Information (Theorem 4, Eq. 12-13)", "measured error",
                         info.get("model_error"), estimator="model's own logits", n=n))
    for method, terms in info.items():
        if not isinstance(terms, dict) or "joint" not in terms:
            continue
        for key, label in (("joint", "I(U;Y)"), ("relevancy", "relevancy R"),
                           ("redundancy", "redundancy TC(U)"),
                           ("conditional_redundancy", "conditional redundancy TC(U|Y)"),
                           ("diversity", "diversity D = TC(U|Y) − TC(U)"),
                           ("residual", "I − (R + D), consistency residual")):
            rows.append(_row("Information (Theorem 4, Eq. 12-13)", label, terms.get(key),
                             units="bits", estimator=method, n=n))
        rows.append(_row("Information (Theorem 4, Eq. 12-13)", "P(error) bounds (Eq. 12)",
                         None, low=terms.get("error_lower_bound"),
                         high=terms.get("error_upper_bound"), estimator=method, n=n))
    return rows


def _curve_rows(cur: dict, n) -> list[dict]:
    rows = []
    settings = cur.get("settings", {})
    k = settings.get("n_permutations")
    for obj, res in (cur.get("objectives") or {}).items():
        sec = f"Curves and diminishing returns: {obj} (Theorems 5-8)"
        if "error" in res:
            rows.append(_row(sec, "failed", None, estimator=" ".join(res["error"].split())))
            continue
        units = res["curves"].get("units") or ""
        rand = res["curves"]["curves"].get("random", {})
        vals = rand.get("values") or [None, None]
        est = f"random orders (K = {k})"
        rows.append(_row(sec, "f(empty set)", vals[0], units=units, estimator=est, n=n))
        rows.append(_row(sec, "f(all members)", vals[-1], units=units, estimator=est, n=n))
        rep = res["report"]
        sl = rep.get("gain_slope", {})
        if "slope" in sl:
            ci = sl.get("ci") or [None, None]
            rows.append(_row(sec, "slope of the gain profile g(k) (< 0: diminishing)",
                             sl["slope"], low=ci[0], high=ci[1], units=f"{units}/member",
                             estimator=f"example bootstrap, {est}", n=n))
        dr = rep.get("dr", {})
        if "violation_rate" in dr:
            trip = f"{dr.get('n_triples')} nested triples, BH at {dr.get('alpha', 0.05)}"
            rows.append(_row(sec, "diminishing-returns violation rate", dr["violation_rate"],
                             estimator=trip, n=n))
            rows.append(_row(sec, "significant violations (BH)",
                             dr.get("significant_violation_rate"), estimator=trip, n=n))
            ci = dr.get("mean_difference_ci") or [None, None]
            rows.append(_row(sec, "mean ρ(A) − ρ(B), A ⊆ B", dr.get("mean_difference"),
                             low=ci[0], high=ci[1], units=units,
                             estimator="paired example bootstrap", n=n))
        ctl = res.get("control_modular")
        if ctl:
            rows.append(_row(sec, "control (modular surrogate): significant violations",
                             ctl.get("significant_violation_rate"),
                             estimator="same DR tests on a matched modular function", n=n))
        ratio = rep.get("ratio", {})
        if "median" in ratio:
            rows.append(_row(sec, "submodularity ratio along greedy (median)", ratio["median"],
                             estimator="greedy path", n=n))
        fits = rep.get("fits", {})
        if fits.get("best_aicc"):
            rows.append(_row(sec, f"growth law by AICc: {fits['best_aicc']}", None,
                             estimator="linear / log / power fits", n=n))
    return rows


def _flatten(prefix: str, obj, out: list) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out.append((prefix, obj))
    elif isinstance(obj, (bool, str)) and len(str(obj)) < 80:
        out.append((prefix, obj))


def _inference_rows(root: Path, n) -> list[dict]:
    """Scalars of any inference results in the run (``inference/*.json`` or a report key)."""
    docs = {p.stem: _read(p) for p in sorted((root / "inference").glob("*.json"))}
    cur = _read(root / "curves" / "report.json") or {}
    if isinstance(cur.get("inference"), dict):
        docs["curves"] = cur["inference"]
    rows = []
    for name, doc in docs.items():
        flat: list = []
        _flatten("", doc, flat)
        for key, value in flat[:200]:
            rows.append(_row(f"Inference: {name}", key, value if not isinstance(value, str)
                             else None, estimator=value if isinstance(value, str) else "",
                             n=n))
    return rows


def collect(root) -> dict:
    """Header, rows and figure files of one run folder (made by ``infodiv run``)."""
    root = Path(root)
    head = _header(root)
    n = head["N"]
    dec = _read(root / "decompositions" / "decompositions.json") or {}
    cur = _read(root / "curves" / "report.json") or {}
    acc = (dec.get("run") or {}).get("accuracy")
    rows = [_row("Run", "accuracy of the model's own option logits", acc,
                 estimator="argmax over the options", n=n),
            _row("Run", "max |Σ u + bias − logits|", head["max_exactness_error"], units="logit",
                 estimator=f"tolerance {fmt(head['exactness_rtol'])}·(1 + max |logit|)", n=n)]
    rows += _ensemble_rows(dec, n) + _information_rows(dec, n) + _curve_rows(cur, n)
    rows += _inference_rows(root, n)
    figures = [p for d in _FIGURE_DIRS for p in sorted((root / d).glob("*.png"))]
    return {"header": head, "rows": rows, "figures": figures}


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ddd;
padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1em 0}
img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
.ok{color:#1a7f37}.bad{color:#c62828;font-weight:bold}code{background:#f4f4f4;padding:0 .2em}
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
    kind = path.stem.split("_")[0] if path.stem.split("_")[0] in FIGURE_CAPTIONS else path.stem
    caption = FIGURE_CAPTIONS.get(path.stem, FIGURE_CAPTIONS.get(kind, path.stem))
    rel = f"{path.parent.name}/{path.name}"
    return (f"<figure><img src='data:image/png;base64,{data}' alt='{_e(path.stem)}'>"
            f"<figcaption>{_e(caption)} — <code>{_e(rel)}</code></figcaption></figure>")


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
    if len(runs) > 1:
        parts.append(_comparison_html(runs))
    for run in runs:
        h = run["header"]
        parts.append(f"<h2 id='{_e(h['run'])}'>{_e(h['run'])}</h2>")
        parts.append(_header_html(h))
        parts.append(_rows_html(run["rows"]))
        if run["figures"]:
            parts.append("<h3>Figures</h3>" + "".join(_figure_html(p) for p in run["figures"]))
    parts.append("<p><small>Numbers are rounded to 3 significant digits; full precision in "
                 f"<code>{_e(path.stem)}.json</code> and <code>{_e(path.stem)}.csv</code>."
                 "</small></p></body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    doc = [{"header": r["header"], "rows": r["rows"],
            "figures": [f"{p.parent.name}/{p.name}" for p in r["figures"]]} for r in runs]
    path.with_suffix(".json").write_text(json.dumps(doc, indent=1, default=str))
    with open(path.with_suffix(".csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["run", "section", "quantity", "value", "ci_low", "ci_high", "units",
                    "estimator", "n"])
        for r in runs:
            for row in r["rows"]:
                w.writerow([r["header"]["run"], row["section"], row["quantity"], row["value"],
                            row["low"], row["high"], row["units"], row["estimator"], row["n"]])
    return path


_SUMMARY = ("accuracy of the model's own option logits", "max |Σ u + bias − logits|",
            "cross_entropy, scale=sum: bias", "cross_entropy, scale=sum: diversity",
            "I(U;Y)", "relevancy R", "diversity D = TC(U|Y) − TC(U)",
            "slope of the gain profile g(k) (< 0: diminishing)",
            "significant violations (BH)")


def print_summary(root, page=None, file=None) -> list[str]:
    """Print (and return) the one-screen summary of a run folder."""
    run = collect(root)
    h = run["header"]
    lines = [f"{h['model'] or h['model_id']} on {h['task']}: N={h['N']} M={h['M']} C={h['C']} "
             f"seed={h['seed']} shots={h['shots']} ({h['granularity']}, {h['dtype']}, "
             f"{h['device']})"]
    seen = set()
    for r in run["rows"]:
        if r["quantity"] not in _SUMMARY or (r["section"], r["quantity"]) in seen:
            continue
        if r["quantity"] in ("I(U;Y)", "relevancy R", "diversity D = TC(U|Y) − TC(U)") and \
                any(q == (r["section"], r["quantity"]) for q in seen):
            continue
        seen.add((r["section"], r["quantity"]))
        interval = "" if r["low"] is None else f" [{fmt(r['low'])}, {fmt(r['high'])}]"
        where = r["section"].split(":")[-1].split("(")[0].strip()
        lines.append(f"  {where}: {r['quantity']} = {fmt(r['value'])}{interval} "
                     f"{r['units']} ({r['estimator']}, n={r['n']})".replace("  (", " ("))
    if page is not None:
        lines.append(f"  report: {_display(page)}")
    print("\n".join(lines), file=file)
    return lines
