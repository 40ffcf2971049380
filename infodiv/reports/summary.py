"""The numbers of a run folder as rows, and the one-screen summary.

:func:`collect` reads a run folder made by ``infodiv run`` (``run.json``,
``contributions/meta.json``, ``decompositions/decompositions.json``, ``curves/report.json`` and
any ``inference/*.json``; every stage file only when its folder's manifest lists it with this
sha256, :func:`infodiv.outputs.stage_document`, so a number edited after the run is refused in
one line, never shown) and returns its header and one row per number: section, quantity,
value, 95% interval, units, estimator and n. :mod:`infodiv.reports.html` renders them;
:func:`print_summary` prints the one-screen summary; :func:`fmt` rounds for reading.
"""

from __future__ import annotations

from pathlib import Path

from ..numbers import fmt
from ..outputs import contributions_meta, stage_document
from ..runfiles import read_json as _read

__all__ = ["fmt", "collect", "print_summary"]   # fmt: infodiv.numbers

_FIGURE_DIRS = ("decompositions", "curves", "figures")


def _display(path) -> str:
    from infodiv.runfiles import display_path

    return display_path(path)


def _row(section, quantity, value, *, low=None, high=None, units="", estimator="", n=None):
    return {"section": section, "quantity": quantity, "value": value, "low": low, "high": high,
            "units": units, "estimator": estimator, "n": n}


def _header(root: Path) -> dict:
    meta_doc = contributions_meta(root)
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


_INFO = "Information (Theorem 4, Eq. 12-13)"
_MODEL_BASED = "model-based, not valid for a discrete label"


def _within(value, pair) -> dict:
    """``low``/``high`` of ``pair`` extended to contain ``value``: one interval that holds its
    estimate."""
    if value is None or pair is None or None in pair:
        return {"low": None, "high": None}
    return {"low": min(pair[0], value), "high": max(pair[1], value)}


def _over_entropy(value, h_y) -> str:
    return (" [FLAG information_exceeds_entropy]"
            if isinstance(value, (int, float)) and h_y is not None and value > h_y else "")


def _usable_rows(t: dict, n) -> list[dict]:
    est = "usable information (cross-fitted, families by nested CV)"
    rows = [_row(_INFO, "I(U;Y)", t["joint"], **_within(t["joint"], t.get("joint_interval")),
                 units="bits", estimator=f"{est}; 95% interval over the held-out terms", n=n),
            _row(_INFO, "I(U;Y) bracket", None, low=t.get("joint_lower"),
                 high=t.get("joint_upper"), units="bits",
                 estimator=f"lower: interval, Fano; upper: {t.get('joint_upper_kind')}", n=n),
            _row(_INFO, "relevancy R", t["relevancy"],
                 **_within(t["relevancy"], t.get("relevancy_interval")), units="bits",
                 estimator="sum over members of I(U_m;Y) (whole member vectors), label-null "
                           "debiased", n=n),
            _row(_INFO, "diversity D = I(U;Y) − Σ I(U_m;Y)", t["diversity"],
                 **_within(t["diversity"], t.get("diversity_interval")), units="bits",
                 estimator="identity; paired bootstrap interval", n=n)]
    rows.append(_row(_INFO, "P(error) bounds (Eq. 12)", None, low=t.get("error_lower_bound"),
                     high=t.get("error_upper_bound"),
                     estimator="Bayes error given U, at the ends of the bracket", n=n))
    return rows


def _model_based_rows(method: str, terms: dict, h_y, n) -> list[dict]:
    rows = []
    for key, label in (("joint", "I(U;Y)"), ("relevancy", "relevancy R"),
                       ("redundancy", "redundancy TC(U)"),
                       ("conditional_redundancy", "conditional redundancy TC(U|Y)"),
                       ("diversity", "diversity D = TC(U|Y) − TC(U)")):
        value = terms.get(key)
        mark = _over_entropy(value, h_y) if key == "joint" else ""
        rows.append(_row(_INFO, f"{label}, {method}{mark}", value, units="bits",
                         estimator=f"{method} ({_MODEL_BASED})", n=n))
    return rows


def _information_rows(dec: dict, n) -> list[dict]:
    info = dec.get("information") or {}
    h_y = info.get("H(Y)_bits")
    rows = []
    if h_y is not None:
        rows.append(_row(_INFO, "H(Y)", h_y, units="bits", estimator="plug-in", n=n))
        rows.append(_row(_INFO, "measured error", info.get("model_error"),
                         estimator="model's own logits", n=n))
    for method, terms in info.items():
        if not isinstance(terms, dict) or "joint" not in terms:
            continue
        rows += (_usable_rows(terms, n) if method == "usable"
                 else _model_based_rows(method, terms, h_y, n))
    return rows


def _information_inference_rows(dec: dict, n) -> list[dict]:
    """Label-permutation nulls of the usable terms; the model-based terms' example-bootstrap
    intervals, nulls and null-corrected values (labelled model-based, flagged above H(Y))."""
    inf = dec.get("information_inference") or {}
    h_y = inf.get("h_y")
    rows, sec = [], "Information: intervals and label-permutation nulls"
    for method, terms in (inf.get("methods") or {}).items():
        for term, t in (terms or {}).items():
            if not isinstance(t, dict) or "value" not in t:
                continue
            null = {"mean": t.get("null_mean"), "interval": t.get("null_interval"),
                    "p": t.get("p"), "alternative": t.get("alternative"),
                    "n_permutations": t.get("n_permutations")}
            doc = {"null": null if null["mean"] is not None else None,
                   **({"corrected": t["corrected"], "corrected_ci": t.get("corrected_ci")}
                      if "corrected" in t else {})}
            if method == "usable":
                rows += _inferential_rows(sec, f"{term} (usable)", doc, "bits", n)
                continue
            known = [v for v in (t["value"], *(t.get("ci") or ())) if v is not None]
            mark = _over_entropy(max(known), h_y) if term == "joint" and known else ""
            ci = t.get("ci") or [None, None]
            how = (f"example bootstrap B = {t.get('n_bootstrap')}" if t.get("ci") else
                   t.get("no_interval") or "no interval")
            rows.append(_row(sec, f"{term}{mark}", t["value"], low=ci[0], high=ci[1],
                             units="bits", estimator=f"{method} ({_MODEL_BASED}), {how}", n=n))
            rows += _inferential_rows(sec, f"{term} ({method}, {_MODEL_BASED})", doc, "bits", n)
    for flag in inf.get("flags") or []:
        text = flag.get("message") or flag.get("name") if isinstance(flag, dict) else flag
        rows.append(_row(sec, "flag", None, estimator=" ".join(str(text).split()), n=n))
    return rows


def _record_rows(sec: str, rec: dict, n) -> list[dict]:
    """One verdict record: its statistic with the interval, the null and the corrected value
    (one interval each, in the record's units), and the verdict with its power."""
    name = rec["claim"].replace("_", " ")
    units = rec["units"]
    iv = rec.get("interval") or [None, None]
    rows = [_row(sec, f"{name}: {rec['statistic']}", rec["estimate"], low=iv[0], high=iv[1],
                 units=units,
                 estimator=f"{rec['interval_method']}, B = {rec['n_bootstrap']}", n=n)]
    if rec.get("null_mean") is not None:
        niv = rec.get("null_interval") or [None, None]
        rows.append(_row(sec, f"{name}: label-permutation null (mean)", rec["null_mean"],
                         low=niv[0], high=niv[1], units=units,
                         estimator=f"K = {rec['n_permutations']} permutations, p "
                                   f"({rec['direction']}) = {fmt(rec.get('p'))}", n=n))
        civ = rec.get("corrected_interval") or [None, None]
        rows.append(_row(sec, f"{name}: null-corrected (observed − null mean)",
                         rec["corrected"], low=civ[0], high=civ[1], units=units,
                         estimator="example bootstrap minus the null mean", n=n))
    rows.append(_row(sec, f"verdict: {name}", rec.get("outcome") or bool(rec["finding"]),
                     estimator=rec["text"], n=n))
    return rows


def _curve_rows(cur: dict, n) -> list[dict]:
    rows = []
    k = cur.get("settings", {}).get("n_curve_orders")
    for obj, res in (cur.get("objectives") or {}).items():
        sec = f"Curves and diminishing returns: {obj} (Theorems 5-8)"
        if "error" in res:
            rows.append(_row(sec, "failed", None, estimator=" ".join(res["error"].split())))
            continue
        units = res["curves"].get("units") or ""
        pt = res.get("point") or {}
        est = f"{k} random orders"
        rows.append(_row(sec, "f(empty set)", pt.get("f_empty"), units=units, estimator=est,
                         n=n))
        rows.append(_row(sec, "f(all members)", pt.get("f_all"), units=units, estimator=est,
                         n=n))
        for rec in (res.get("verdicts") or {}).values():
            rows += _record_rows(sec, rec, n)
        ratio = pt.get("ratio", {})
        if "median" in ratio:
            rows.append(_row(sec, "submodularity ratio along greedy (median, point)",
                             ratio["median"], estimator="greedy path", n=n))
        fits = pt.get("fits", {})
        if fits.get("best_aicc"):
            rows.append(_row(sec, f"growth law by AICc: {fits['best_aicc']}", None,
                             estimator="linear / log / power fits", n=n))
        records = (res.get("verdicts") or {}).values()
        for flag in [*(res.get("flags") or []), *(f for r in records for f in r["flags"])]:
            rows.append(_row(sec, "flag", None, estimator=" ".join(str(flag["message"]).split()),
                             n=n))
    sel = ((cur.get("selection") or {}).get("inference") or {}).get("verdicts") or {}
    for rec in sel.values():   # greedy vs best-of-random / prefix
        rows += _record_rows("Subset selection (held-out)", rec, n)
    return rows


def _inferential_rows(sec, what, doc: dict, units: str, n) -> list[dict]:
    """The label-permutation null and the null-corrected value of one inferential estimate."""
    rows = []
    null = doc.get("null")
    if isinstance(null, dict) and "mean" in null:
        iv = null.get("interval") or [None, None]
        rows.append(_row(sec, f"{what} under the label-permutation null (mean)", null["mean"],
                         low=iv[0], high=iv[1], units=units,
                         estimator=f"K = {null.get('n_permutations')} permutations, p "
                                   f"({null.get('alternative', 'two-sided')}) = "
                                   f"{fmt(null.get('p'))}", n=n))
    if "corrected" in doc:
        ci = doc.get("corrected_ci") or [None, None]
        rows.append(_row(sec, f"{what}, null-corrected (observed − null mean)",
                         doc["corrected"], low=ci[0], high=ci[1], units=units,
                         estimator="example bootstrap minus the null mean"
                         if doc.get("corrected_ci") else "observed minus the null mean, no "
                         "interval (no example resamples)", n=n))
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
    cur = stage_document(root, "curves")
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
    dec = stage_document(root, "decompose")
    cur = stage_document(root, "curves")
    acc = (dec.get("run") or {}).get("accuracy")
    rows = [_row("Run", "accuracy of the model's own option logits", acc,
                 estimator="argmax over the options", n=n),
            _row("Run", "max |Σ u + bias − logits|", head["max_exactness_error"], units="logit",
                 estimator=f"tolerance {fmt(head['exactness_rtol'])}·(1 + max |logit|)", n=n)]
    rows += _ensemble_rows(dec, n) + _information_rows(dec, n)
    rows += _information_inference_rows(dec, n) + _curve_rows(cur, n)
    rows += _inference_rows(root, n)
    figures = [p for d in _FIGURE_DIRS for p in sorted((root / d).glob("*.png"))]
    return {"header": head, "rows": rows, "figures": figures}


_SUMMARY = ("accuracy of the model's own option logits", "max |Σ u + bias − logits|",
            "cross_entropy, scale=sum: bias", "cross_entropy, scale=sum: diversity",
            "I(U;Y)", "relevancy R", "diversity D = I(U;Y) − Σ I(U_m;Y)")


def print_summary(root, page=None, file=None) -> list[str]:
    """Print (and return) the one-screen summary of a run folder: its header, the answer
    paragraph the page opens with (the same sentences, from the same records) and the
    headline numbers."""
    import textwrap

    from .answer import answer

    run = collect(root)
    h = run["header"]
    lines = [f"{h['model'] or h['model_id']} on {h['task']}: N={h['N']} M={h['M']} C={h['C']} "
             f"seed={h['seed']} shots={h['shots']} ({h['granularity']}, {h['dtype']}, "
             f"{h['device']})"]
    lines += textwrap.wrap(" ".join(answer(root)["paragraph"]), 100, initial_indent="  ",
                           subsequent_indent="  ")
    seen = set()
    for r in run["rows"]:
        if r["quantity"] not in _SUMMARY or (r["section"], r["quantity"]) in seen:
            continue
        if r["quantity"] in ("I(U;Y)", "relevancy R", "diversity D = I(U;Y) − Σ I(U_m;Y)") and \
                any(q == (r["section"], r["quantity"]) for q in seen):
            continue
        seen.add((r["section"], r["quantity"]))
        interval = "" if r["low"] is None else f" [{fmt(r['low'])}, {fmt(r['high'])}]"
        where = r["section"].split(":")[-1].split("(")[0].strip()
        flag = (" NEGATIVE: a sum of mutual informations cannot be < 0; this estimate is "
                "not valid here" if r["quantity"] == "relevancy R"
                and isinstance(r["value"], (int, float)) and r["value"] < 0 else "")
        lines.append(f"  {where}: {r['quantity']} = {fmt(r['value'])}{interval} "
                     f"{r['units']} ({r['estimator']}, n={r['n']}){flag}".replace("  (", " ("))
    if page is not None:
        lines.append(f"  report: {_display(page)}")
    print("\n".join(lines), file=file)
    return lines
