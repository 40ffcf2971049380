"""Markdown of a run's information terms and depth estimand (the decomposition report).

:func:`information_lines` renders the ``information_inference`` document of
:func:`infodiv.inference.information_terms.information_inference` (the valid usable terms with
their intervals, bracket and label null, then the model-based terms in a labelled table with
their flags); :func:`depth_lines` renders its ``depth`` document
(:func:`~infodiv.inference.information_terms.depth_inference`). Numbers are rounded for reading;
the JSON keeps them all. Model-based terms computed without example resamples
(``--inference 0``) print their observed values with "no interval (inference 0)", never a
made-up interval.
"""

from __future__ import annotations

from ..inference.flags import Flag, summary_lines
from ..inference.information_terms import MODEL_BASED, MODEL_METHODS, VALID_METHOD
from .markdown import fmt, interval, md_table

__all__ = ["information_lines", "depth_lines"]


#: the interval cell of a term computed without example resamples
NO_INTERVAL = "no interval (inference 0)"


def _g(x) -> str:
    return fmt(x, ".3g")


def _ci(ci) -> str:
    """``[low, high]``, or :data:`NO_INTERVAL` where there is none."""
    return interval(ci) if ci else NO_INTERVAL


def _valid_lines(v: dict) -> list[str]:
    j, r, d = v["joint"], v["relevancy"], v["diversity"]
    lines = [f"- I(U;Y) = {_g(j['value'])} bits, 95% interval {interval(j['ci'])}, bracket "
             f"on I(U;Y) itself {interval(j['bracket'])} (upper side: {j['upper_kind']}; H(Y) = "
             f"{_g(v['h_y'])}); cross-fitted usable information, families chosen by nested "
             f"cross-validation: {', '.join(dict.fromkeys(j['families']))}."]
    if "p" in j:
        lines.append(f"  Label null ({j['n_permutations']} permutations, whole procedure "
                     f"rerun): mean {_g(j['null_mean'])}, p = {_g(j['p'])}.")
    lines.append(f"- relevancy Σ_m I(U_m;Y) = {_g(r['value'])} bits {interval(r['ci'])} (a sum "
                 f"of M terms, each at most H(Y); largest member {_g(r['max_member'])}; "
                 f"label-null debiased, raw sum {_g(r['raw'])}).")
    line = (f"- diversity D = I(U;Y) − Σ_m I(U_m;Y) = {_g(d['value'])} bits "
            f"{interval(d['ci'])} (paired bootstrap)")
    if "p" in d:
        line += (f"; label null mean {_g(d['null_mean'])} {interval(d['null_interval'])}, "
                 f"null-corrected {_g(d['corrected'])} {interval(d['corrected_ci'])}, "
                 f"p = {_g(d['p'])} (two-sided)")
    lines.append(line + ".")
    lines.append(f"- Eq. 12: {_g(v['bound_lower']['value'])} ≤ P(error of the best classifier "
                 f"of U) ≤ {_g(v['bound_upper']['value'])} — bounds on the Bayes error given "
                 "U, not on the model's own argmax error.")
    p = v.get("prefix")
    if p:
        st = p["steps"]
        lines.append(f"- Theorems 5–6 along the depth order (prefix sizes {p['sizes']}): "
                     f"I = {', '.join(_g(x) for x in p['joint'])} bits ({st['n_falls']} of "
                     f"{st['n_steps']} steps fall, {st['n_falls_beyond_intervals']} beyond "
                     f"their intervals; the true I cannot fall); D = "
                     f"{', '.join(_g(x) for x in p['diversity'])} bits (free to move).")
    return lines


def _marks(flags: list, method: str, term: str) -> str:
    """`` [FLAG code]`` of the flags on ``term`` of ``method`` (its own, the dimension's, the
    bounds' for a bound)."""
    base = f"information ({method}, model-based)"
    codes = [f["code"] for f in flags if f["where"] == f"{base}: {term}"
             or (f["where"] == base and (f["code"] == "dimension_too_large"
                                         or term.startswith("bound")))]
    return "".join(f" [FLAG {c}]" for c in dict.fromkeys(codes))


def _model_rows(method: str, terms: dict, flags: list) -> list:
    rows = []
    for term in ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity",
                 "bound_lower", "bound_upper"):
        s = terms.get(term)
        if not s:
            continue
        rows.append([method, term + _marks(flags, method, term), _g(s["value"]),
                     _ci(s.get("ci")),
                     f"{_g(s.get('corrected'))} {_ci(s.get('corrected_ci'))}"
                     if "corrected" in s else "–",
                     f"{_g(s.get('null_mean'))}, p = {_g(s.get('p'))}" if "p" in s else "–"])
    return rows


def _sizes(settings: dict) -> str:
    """The model-based terms' resamples and permutations, as the model-based methods ran them
    (:func:`~infodiv.inference.information_terms.information_inference`)."""
    b, k = settings.get("n_resamples"), settings.get("n_null")
    boot = (f"B = {b} refitted example resamples" if b else
            "B = 0: no example resamples (--inference 0), the observed values without "
            "intervals")
    null = f"K = {max(19, k)} label permutations" if k else "no label permutations"
    return f"{boot}, {null}"


def information_lines(doc: dict) -> list[str]:
    """Markdown of a document's ``information_inference`` (valid terms first, model-based
    ones in a labelled table with their flags, then the flag summary)."""
    inf = doc.get("information_inference") or {}
    if not inf.get("methods"):
        return []
    lines = [f"H(Y) = {_g(inf['h_y'])} bits; measured error of the model's own logits "
             f"{_g(inf['model_error'])}.", ""]
    v = inf["methods"].get(VALID_METHOD)
    if v is not None:
        lines += (["### Usable information (valid for a discrete label)", ""]
                  + ([f"- failed: {v['error']}"] if "error" in v else _valid_lines(v)) + [""])
    rows = []
    for method in MODEL_METHODS:
        terms = inf["methods"].get(method)
        if terms is None:
            continue
        if "error" in terms:
            rows.append([method, f"failed: {terms['error']}", "", "", "", ""])
            continue
        rows += _model_rows(method, terms, inf.get("flags", []))
    if rows:
        st = inf["settings"]
        lines += ["### Model-based terms (Gaussian / copula: not valid for a discrete label)",
                  "", f"{MODEL_BASED[0].upper()}{MODEL_BASED[1:]}. {_sizes(st)}.", ""]
        lines += md_table(["method", "term", "observed", "95% CI", "null-corrected [95% CI]",
                           "null mean, p"], rows) + [""]
    return lines + [*summary_lines([Flag(**f) for f in inf.get("flags", [])]), ""]


def depth_lines(doc: dict) -> list[str]:
    """Markdown: the two depth estimands named apart, with the increment slopes' inference."""
    d = doc.get("depth")
    if not d:
        return []
    lines = ["## Depth: truncated model vs member subsets", "",
             f"- {d['labels']['truncated_model']}: the model cut after junction k;",
             f"- {d['labels']['member_subsets']}: the same members at the full residual's "
             "scale (what arbitrary member sets are read as).", ""]
    for measure, entry in d["measures"].items():
        for key in ("truncated_model", "member_subsets"):
            s = entry[key]["increment_slope"]
            lines.append(f"- {measure}, {key.replace('_', ' ')}: value at the last junction "
                         f"{_g(entry[key]['values'][-1])} (first {_g(entry[key]['values'][0])});"
                         f" slope of the increments {_g(s['value'])} {interval(s['ci'])}, "
                         f"null-corrected {_g(s.get('corrected'))} "
                         f"{interval(s.get('corrected_ci'))}, p = {_g(s.get('p'))}.")
    return lines + [""]
