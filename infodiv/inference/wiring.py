"""The decomposition report's inference: the Eq. 13 terms of all members under the example
bootstrap and the label null (:func:`information_inference`), and the two depth estimands
(:func:`depth_inference`), with their markdown lines.
"""

from __future__ import annotations

from ._text import interval, num
from .flags import Flag, check_bounds, check_information, summary_lines

__all__ = ["information_inference", "information_inference_lines", "depth_inference",
           "depth_lines"]


def _g(x) -> str:
    return num(x, ".3g")


def _ci(ci) -> str:
    return interval(ci)


# ---------------------------------------------------------------------------- decomposition
def information_inference(contrib, methods=("gaussian", "copula"), *, n_resamples: int = 200,
                          n_null: int = 200, n_mc: int = 2, seed: int = 0, n_jobs=1) -> dict:
    """Eq. 13 terms of all members by each method under the example bootstrap and the label
    null: ``{"methods": {method: {term: summary}}, "flags": [...], "settings": {...}}``.

    A method that fails on the run is recorded as ``{"error": message}``.
    """
    from .flags import check_dimension
    from .nulls import infer
    from .pipelines import LABEL_FREE, InformationPipeline

    out, flags = {}, []
    for method in methods:
        if method not in ("gaussian", "copula"):
            continue
        try:
            inf = infer(contrib, InformationPipeline(copula=method == "copula"),
                        n_bootstrap=n_resamples, n_permutations=n_null, n_mc=n_mc,
                        random_state=seed, n_jobs=n_jobs, progress=False)
        except ValueError as exc:
            out[method] = {"error": str(exc)}
            continue
        terms = {}
        for name in inf.bootstrap.estimates:
            s = inf.summary(name)
            if name in LABEL_FREE:
                for key in ("null_mean", "null_interval", "p", "corrected", "corrected_ci"):
                    s.pop(key, None)
                s["null_note"] = "does not involve Y: the label null leaves it unchanged"
            terms[name] = s
        out[method] = terms
        b = inf.bootstrap
        where = f"information ({method})"
        flags += check_information(b["joint"].value, b["h_y"].value, where)
        flags += check_bounds(b["bound_lower"].value, b["bound_upper"].value, where)
    if out:
        flags += check_dimension(contrib.n_members * (contrib.n_options - 1), contrib.labels,
                                 "information terms")
    return {"methods": out, "flags": [f.to_dict() for f in flags],
            "settings": {"n_resamples": n_resamples, "n_null": n_null, "seed": seed}}


def information_inference_lines(doc: dict) -> list[str]:
    """Markdown table of the null-corrected information terms (flags in the rows)."""
    from ..reports.markdown import md_table

    inf = doc.get("information_inference") or {}
    if not inf.get("methods"):
        return []
    flags = inf.get("flags", [])
    rows = []
    for method, terms in inf["methods"].items():
        if "error" in terms:
            rows.append([method, f"failed: {terms['error']}", "", "", "", ""])
            continue
        for term in ("joint", "relevancy", "conditional_redundancy", "diversity",
                     "bound_lower", "bound_upper"):
            s = terms[term]
            codes = {"joint": ("information_exceeds_entropy", "dimension_too_large"),
                     "bound_upper": ("bound_outside_unit_interval",),
                     "bound_lower": ("bound_outside_unit_interval",)}.get(
                term, ("dimension_too_large",))
            marks = "".join(f" [FLAG {f['code']}]" for f in flags if f["code"] in codes)
            rows.append([method, term + marks, f"{_g(s.get('corrected'))} "
                         f"{_ci(s.get('corrected_ci'))}", _g(s["value"]),
                         f"{_g(s.get('null_mean'))} {_ci(s.get('null_interval'))}",
                         _g(s.get("p"))])
    st = inf["settings"]
    return (["### Null-corrected (labels shuffled, pipeline rerun; example bootstrap)", "",
             f"B = {st['n_resamples']} example resamples, K = {st['n_null']} label "
             "permutations; corrected = observed − null mean, interval = bootstrap spread "
             "around it (a plain percentile interval would carry the resamples' own bias: "
             "duplicated rows inflate these estimates).", ""]
            + md_table(["method", "term", "null-corrected [95% CI]", "observed",
                        "null mean [2.5–97.5%]", "p"], rows)
            + ["", *summary_lines([Flag(**f) for f in flags]), ""])


# ---------------------------------------------------------------------------- depth estimand
def depth_inference(contrib, *, n_resamples: int = 100, n_null: int = 100, seed: int = 0,
                    n_jobs=1) -> dict:
    """Truncated-model and member-subset (direct effect) depth curves of accuracy and
    cross-entropy with example-bootstrap bands, and the slope of their junction increments
    under the bootstrap and the label null (:class:`~infodiv.inference.depth.DepthPipeline`)."""
    from .depth import DEPTH_LABELS, DepthPipeline, depth_curves
    from .nulls import infer

    base = depth_curves(contrib)
    out = {"k": base["k"].tolist(), "labels": base["labels"], "units": base["units"],
           "measures": {}}
    for measure in ("accuracy", "cross_entropy"):
        inf = infer(contrib, DepthPipeline(measure), n_bootstrap=n_resamples,
                    n_permutations=max(19, n_null), n_mc=2, random_state=seed, n_jobs=n_jobs,
                    progress=False)
        entry = {}
        for key in DEPTH_LABELS:
            curve = inf.bootstrap[f"{key}_curve"]
            entry[key] = {"values": base[key][measure].tolist(),
                          "ci_low": curve.ci[0].tolist(), "ci_high": curve.ci[1].tolist(),
                          "increment_slope": inf.summary(f"{key}_slope")}
        diff = inf.bootstrap["truncated_minus_subsets"]
        entry["truncated_minus_subsets"] = {"values": diff.value.tolist(),
                                            "ci_low": diff.ci[0].tolist(),
                                            "ci_high": diff.ci[1].tolist()}
        out["measures"][measure] = entry
    out["settings"] = {"n_resamples": n_resamples, "n_null": max(19, n_null), "seed": seed}
    return out


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
                         f" slope of the increments {_g(s['value'])} {_ci(s['ci'])}, "
                         f"null-corrected {_g(s.get('corrected'))} "
                         f"{_ci(s.get('corrected_ci'))}, p = {_g(s.get('p'))}.")
    return lines + [""]
