"""Wiring the inference into the curves report: the existing fields become inferential.

:func:`inferential_objective` runs :func:`~infodiv.inference.report.curve_inference` on the
report's own objective and DR chains and rewrites the submodularity-report document in place:

- ``gain_slope["ci"]`` and ``gain_slope["from_k2"]["ci"]`` become the two-level example
  bootstrap intervals (everything refitted); the orders-only intervals move to ``ci_mc``
  (labelled "Monte-Carlo error"), the point slope stays the one over all the report's orders;
  each slope gains ``null``, ``p``, ``corrected`` and ``corrected_ci``;
- ``dr["mean_difference_ci"]``, ``dr["significant_violation_rate"]``, ``dr["p_values"]``,
  ``dr["significant"]``, ``dr["ci_low"]``/``dr["ci_high"]`` become the refitted per-triple
  bootstrap ones (same chains, ``n_resamples`` replicates); the earlier fixed-fit example
  bootstrap keeps its numbers in fields ending ``_fixed_fit`` (and ``n_bootstrap``);
- ``fits["fraction_of_resamples"]``: how often each growth law wins (AICc, extrapolation);
- ``information_inference``: Eq. 13 terms of all members with nulls and corrected values;
- ``flags``, ``verdicts`` and ``power`` (when asked).

:func:`inference_lines` gives the markdown lines a report prints for one objective (corrected,
inferential values first, flags in the row, power next to each verdict) and
:func:`settings_from` the sizes derived from the report's own settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._text import flag_marks, interval, num
from .flags import Flag, check_bounds, check_information, flags_from_curve_notes, summary_lines
from .report import MC_LABEL, curve_inference

__all__ = ["InferenceSettings", "settings_from", "inferential_objective", "inference_lines",
           "verdict_lines",
           "information_inference", "information_inference_lines", "flag_records",
           "depth_inference", "depth_lines"]


@dataclass(frozen=True)
class InferenceSettings:
    """Sizes of the inference run inside a report."""

    n_resamples: int = 200      # outer example resamples B
    n_null: int = 200           # label permutations K
    inner_orders: int = 20      # random orders per replicate
    n_mc: int = 10              # fixed-example reruns (Monte-Carlo error)
    power_replicates: int = 20  # surrogates per kind (0 skips the power)
    power_bootstrap: int = 30   # refitted resamples per surrogate (objectives not per example)
    growth_replicates: int = 50  # bootstrap replicates that refit the growth laws (0 skips)
    alpha: float = 0.05
    seed: int = 0
    n_jobs: int = 1


def settings_from(curves_settings) -> InferenceSettings:
    """Sizes from a ``CurvesSettings``: B = ``inference_resamples``, else its ``n_bootstrap``
    (what ``infodiv curves --n-bootstrap`` sets), else 200 at n_permutations ≥ 200 and
    max(20, n_permutations // 2) below; K = ``inference_null`` or else B;
    min(20, max(2, n_permutations // 10)) random orders per replicate,
    min(10, max(3, n_permutations // 20)) Monte-Carlo reruns (the default 200 orders give
    200 × 20, 10 reruns) and growth-law refits in about 50 replicates when
    n_permutations ≥ 100 (none below: each fit costs ~0.5 s)."""
    s = curves_settings
    p = int(s.n_permutations)
    b = (getattr(s, "inference_resamples", None) or getattr(s, "n_bootstrap", None)
         or (200 if p >= 200 else max(20, p // 2)))
    k = getattr(s, "inference_null", None) or b
    return InferenceSettings(n_resamples=int(b), n_null=max(19, int(k)),
                             inner_orders=min(20, max(2, p // 10)),
                             n_mc=min(10, max(3, p // 20)),
                             growth_replicates=50 if p >= 100 else 0,
                             power_replicates=getattr(s, "power_replicates", 0) or 0,
                             seed=s.seed, n_jobs=s.n_jobs)


def _triples(dr):
    return [(t["A"], t["B"], t["x"]) for t in dr.get("triples") or []]


def _move_slope(old: dict, new: dict, label: str) -> None:
    for key in ("ci", "p_nonnegative", "ci_label", "ci_note"):  # the fixed-fit example ones
        if key in old:
            old[f"{key}_fixed_fit"] = old.pop(key)
    old.setdefault("ci_mc_label", MC_LABEL)
    old.update(ci=new["ci"], ci_label=label,
               n_bootstrap=new["n_bootstrap"], corrected=old["slope"] - new["null"]["mean"],
               corrected_ci=[c + old["slope"] - new["slope"] for c in new["corrected_ci"]],
               null=new["null"], p=new["p"])


def _move_dr(old: dict, new: dict) -> None:
    for key in ("mean_difference_ci", "significant_violation_rate", "p_values", "significant",
                "ci_low", "ci_high", "any_significant", "mean_difference_ci_label",
                "mean_difference_ci_mc", "mean_difference_ci_mc_label"):
        if key in old:
            old[f"{key}_fixed_fit"] = old.pop(key)
    for key in ("mean_difference_ci", "mean_difference_ci_mc", "significant_violation_rate",
                "any_significant", "p_values", "significant", "ci_low", "ci_high", "test",
                "alpha", "significant_corrected", "significant_violation_rate_corrected",
                "p_values_corrected", "z_corrected", "critical_z_corrected", "test_corrected"):
        if key in new:
            old[key] = new[key]
    old["mean_difference_ci_label"] = "example bootstrap, everything refitted (chains fixed)"
    old["mean_difference_ci_mc_label"] = MC_LABEL
    # n_bootstrap stays the fixed-fit DR bootstrap's; the refitted one is n_resamples
    old["n_resamples"] = new["n_bootstrap"]
    old.update(mean_difference_null=new["mean_difference_null"],
               mean_difference_corrected=old["mean_difference"]
               - new["mean_difference_null"]["mean"],
               violation_rate_null=new["violation_rate_null"])


def _curve_flags(rep_doc: dict, curve_notes) -> list:
    flags = flags_from_curve_notes(list(rep_doc.get("notes", [])) + list(curve_notes or []),
                                   "curves")
    for name, info in (rep_doc.get("information") or {}).items():
        if "joint" in info:
            flags += check_information(info["joint"], info.get("h_y", float("inf")),
                                       f"I(U_S;Y) along {name}")
            flags += check_bounds(info["bound_lower"], info["bound_upper"],
                                  f"Eq. 12 bounds along {name}")
    return [f.to_dict() for f in flags]


def inferential_objective(contrib, objective: str, rep_doc: dict, settings: InferenceSettings,
                          *, curve_notes=(), progress: bool = False, **objective_kwargs) -> dict:
    """Run the inference of ``objective`` and make ``rep_doc``'s fields inferential (module
    docstring). Returns the full inference document (stored by the report beside it)."""
    s = settings
    triples = _triples(rep_doc.get("dr") or {})
    inf = curve_inference(contrib, objective, n_bootstrap=s.n_resamples,
                          growth_laws=s.growth_replicates > 0,
                          growth_replicates=s.growth_replicates,
                          n_permutations=s.n_null, n_mc=s.n_mc, n_orders=s.inner_orders,
                          n_triples=len(triples), triples=triples or None, alpha=s.alpha,
                          power_replicates=s.power_replicates, power_bootstrap=s.power_bootstrap,
                          random_state=s.seed, n_jobs=s.n_jobs, progress=progress,
                          **objective_kwargs)
    gs = rep_doc["gain_slope"]
    _move_slope(gs, inf["gain_slope"], inf["ci_label"])
    if "from_k2" in gs and gs["from_k2"].get("ci") is not None:
        _move_slope(gs["from_k2"], inf["gain_slope"]["from_k2"], inf["ci_label"])
    if rep_doc.get("dr") and inf.get("dr") and "mean_difference" in rep_doc["dr"]:
        _move_dr(rep_doc["dr"], inf["dr"])
    div = rep_doc.get("diversity")
    if inf.get("diversity") and isinstance(div, dict) and "beta_diversity" in div:
        beta, r = inf["diversity"]["beta"], inf["diversity"]["partial_r"]
        div.update(beta_ci=beta["ci"], partial_r_ci=r["ci"], n_resamples=beta["n_bootstrap"],
                   beta_null=beta.get("null"), beta_p=beta.get("p"),
                   beta_corrected=div["beta_diversity"] - (beta.get("null") or {}).get(
                       "mean", float("nan")),
                   inference_note=inf["diversity"]["meaning"])
    if "growth_laws" in inf and isinstance(rep_doc.get("fits"), dict):
        rep_doc["fits"]["fraction_of_resamples"] = inf["growth_laws"]
    rep_doc["information_inference"] = inf.get("information")
    rep_doc["flags"] = inf["flags"] + _curve_flags(rep_doc, curve_notes)
    rep_doc["verdicts"] = inf["verdicts"]
    rep_doc["power"] = inf.get("power")
    rep_doc["inference_settings"] = inf["settings"]
    return inf


def _g(x) -> str:
    return num(x, ".3g")


def _ci(ci) -> str:
    return interval(ci)


def _flag_marks(rep, *codes) -> str:
    return flag_marks(rep.get("flags", []), *codes)


def inference_lines(rep: dict) -> list[str]:
    """Markdown lines of one objective's inferential results (module docstring)."""
    gs, dr = rep["gain_slope"], rep.get("dr") or {}
    lines = []
    for label, s in (("gain profile slope g(k)", gs),
                     ("gain profile slope without g(1)", gs.get("from_k2") or {})):
        if "null" not in s:
            continue
        lines.append(f"- {label}: null-corrected {_g(s['corrected'])} {_ci(s['corrected_ci'])}"
                     f"; observed {_g(s['slope'])}, 95% CI {_ci(s['ci'])} (example bootstrap, "
                     f"refitted, B = {s['n_bootstrap']}); shuffled-label null mean "
                     f"{_g(s['null']['mean'])} {_ci(s['null']['interval'])}, p = "
                     f"{_g(s['p'])} ({s['null']['alternative']}); Monte-Carlo error "
                     f"{_ci(s['ci_mc'])}.")
    if "mean_difference_null" in dr:
        nul = dr["mean_difference_null"]
        lines.append(f"- DR mean rho_x(A) - rho_x(B): null-corrected "
                     f"{_g(dr['mean_difference_corrected'])}; observed "
                     f"{_g(dr['mean_difference'])}, 95% CI {_ci(dr['mean_difference_ci'])}; "
                     f"null mean {_g(nul['mean'])} {_ci(nul['interval'])}, p = {_g(nul['p'])}"
                     f"; BH-significant violation rate {_g(dr['significant_violation_rate'])} "
                     f"of {len(dr.get('p_values') or [])} triples (null-corrected, step-down "
                     f"min-z permutation test: "
                     f"{_g(dr.get('significant_violation_rate_corrected'))}).")
    div = rep.get("diversity") or {}
    if "beta_ci" in div:
        nul = div.get("beta_null") or {}
        lines.append(f"- diversity regression beta {_g(div['beta_diversity'])}: 95% CI "
                     f"{_ci(div['beta_ci'])} (example bootstrap, refitted), shuffled-label null "
                     f"mean {_g(nul.get('mean'))} {_ci(nul.get('interval'))}, p = "
                     f"{_g(div.get('beta_p'))}; partial r CI {_ci(div['partial_r_ci'])}.")
    for term, s in (rep.get("information_inference") or {}).items():
        if term not in ("joint", "diversity", "conditional_redundancy", "bound_upper"):
            continue
        if "corrected" not in s:
            continue
        marks = _flag_marks(rep, *{"joint": ("information_exceeds_entropy",
                                             "dimension_too_large"),
                                   "bound_upper": ("bound_outside_unit_interval",)}
                            .get(term, ("dimension_too_large",)))
        lines.append(f"- {term} (all members, Gaussian){marks}: null-corrected "
                     f"{_g(s['corrected'])} {_ci(s['corrected_ci'])} bits; observed "
                     f"{_g(s['value'])}; null mean {_g(s['null']['mean'])}, p = "
                     f"{_g(s['p'])}.")
    return lines


def verdict_lines(rep: dict) -> list[str]:
    """One line per verdict: its sentence (power beside it) and its rule."""
    return [f"- **verdict {name.replace('_', ' ')}**: {v['text']} (rule: {v['rule']})."
            for name, v in (rep.get("verdicts") or {}).items()]


def flag_records(doc: dict) -> list:
    """Every flag of a curves document (all objectives), as :class:`Flag` records."""
    out = []
    for name, res in (doc.get("objectives") or {}).items():
        for f in (res.get("report") or {}).get("flags", []):
            out.append(Flag(**{**f, "where": f"{name}: {f['where']}"}))
    return out


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
