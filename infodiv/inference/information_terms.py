"""Information terms of one run with their inference, for the reports (DESIGN.md 2.5, 2.8).

:func:`information_inference` is what the decomposition report, the zoo and the results scripts
print as I(U;Y), relevancy and diversity of all members:

- ``usable`` (the default; :func:`infodiv.information.valid_terms`, i.e.
  :func:`estimators.information_decomposition` with its default method): ``I(U;Y)`` is the
  cross-fitted usable information ``H(Y) − CE`` with its interval (normal, over the
  per-example held-out terms) and its bracket ``[lower, upper]``, ``upper ≤ H(Y)``; relevancy
  ``Σ_m I(U_m;Y)`` on the whole member vectors, debiased by its label null; diversity by the
  identity ``D = I(U;Y) − Σ_m I(U_m;Y)`` with its paired bootstrap interval; the label null
  (``n_null`` permutations of the members' rows against the labels, each rerunning the whole
  cross-fitted procedure) gives the joint's p (is there label information at all?) and D's null
  mean, p and null-corrected value; Eq. 12 bounds on the Bayes error given U at the ends of
  the bracket.
- ``gaussian`` / ``copula``, only when asked by name: the Eq. 13 terms of the Helmert-centred
  members under the refitted example bootstrap and the label null
  (:func:`infodiv.inference.nulls.infer`). These are model-based numbers, not estimates of the
  Shannon quantities on near-deterministic members: every entry carries that sentence
  (:data:`MODEL_BASED`), and a value, interval end or null-corrected value above H(Y) is
  flagged (``information_exceeds_entropy``), as are Eq. 12 bounds outside [0, 1] and a
  dimension too large for n.

Every printed interval contains its estimate (a percentile interval that misses it is extended
to it and says by how much). :func:`information_lines` renders the markdown;
:func:`depth_inference` / :func:`depth_lines` give the depth estimand (truncated model vs member
subsets) of the same report.
"""

from __future__ import annotations

import numpy as np

from ..information import (
    label_entropy,
    member_variables,
    prefix_information,
    set_terms,
    valid_terms,
)
from ._text import interval, num
from .flags import Flag, check_bounds, check_dimension, check_information, summary_lines
from .verdicts import null_p

__all__ = ["VALID_METHOD", "MODEL_METHODS", "METHODS", "MODEL_BASED", "ModelBasedTerms",
           "valid_inference", "model_based_inference", "information_inference",
           "information_lines", "headline_terms", "member_bias", "depth_inference", "depth_lines"]

#: the valid estimator about a discrete label (the default)
VALID_METHOD = "usable"
#: model-based estimators, computed only when asked by name
MODEL_METHODS = ("gaussian", "copula")
METHODS = (VALID_METHOD, *MODEL_METHODS)
#: what a model-based entry says about itself
MODEL_BASED = ("model-based number, not an estimate of the Shannon quantity: the Gaussian "
               "mixed-MI formula is not a bound in either direction and exceeds H(Y) on "
               "near-deterministic members; TC of such members is ill-posed (DESIGN.md 2.5)")
_MODEL_TERMS = ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity",
                "h_y", "bound_lower", "bound_upper")
#: statistics a label permutation leaves unchanged (their null says nothing)
_LABEL_FREE = ("redundancy", "h_y")
#: terms in bits that estimate an information about Y (checked against H(Y))
_ABOUT_Y = ("joint",)


def _contain(value, ci) -> tuple[list, float]:
    """``ci`` extended to contain ``value``, and how far ``value`` lay outside (0: inside)."""
    lo, hi = float(ci[0]), float(ci[1])
    gap = max(lo - value, value - hi, 0.0)
    return [min(lo, value), max(hi, value)], float(gap)


def _null_block(value, draws, side) -> dict:
    """Null mean, 2.5–97.5% range, p on ``side`` and the null-corrected value of ``value``."""
    draws = np.asarray(draws, dtype=np.float64)
    if not draws.size:
        return {}
    lo, hi = np.quantile(draws, [0.025, 0.975])
    if side == "two-sided":
        p = min(1.0, 2 * min(null_p(value, draws, "greater"), null_p(value, draws, "less")))
    else:
        p = null_p(value, draws, side)
    return {"null_mean": float(draws.mean()), "null_interval": [float(lo), float(hi)],
            "p": float(p), "alternative": side, "n_permutations": int(draws.size)}


def member_bias(contrib):
    """The run's constant logit offset ``[C]`` for the own-logits family (None when it is
    per-example)."""
    bias = np.asarray(contrib.bias, dtype=np.float64)
    return bias if bias.ndim == 1 else None


def valid_inference(contrib, *, n_null: int = 19, n_boot: int = 2000, seed: int = 0) -> dict:
    """The ``usable`` entry of :func:`information_inference` (module docstring): one dict per
    term, ``prefix`` (Theorems 5–6 along the depth order,
    :func:`~infodiv.information.prefix_information`) and ``terms`` (the
    :func:`~infodiv.information.valid_terms` record, JSON-ready)."""
    bias = member_bias(contrib)
    t = valid_terms(contrib.u, contrib.labels, bias=bias,
                    n_classes=contrib.n_options, null_permutations=int(n_null), n_boot=n_boot,
                    random_state=seed)
    prefix = prefix_information(contrib.u, contrib.labels, relevancies=t["relevancies"],
                                bias=bias, random_state=seed)
    h_y = float(t["h_y"])
    joint_ci, _ = _contain(t["joint"], t["joint_interval"])
    joint = {"value": t["joint"], "ci": joint_ci, "bracket": [t["joint_lower"], t["joint_upper"]],
             "upper_kind": t["joint_upper_kind"], "h_y": h_y, "families": t["joint_folds"],
             "interval_method": "normal over the per-example held-out terms (evaluation "
                                "noise of the cross-fitted procedure)",
             **_null_block(t["joint"], t["joint_null"], "greater")}
    rel_ci, _ = _contain(t["relevancy"], t["relevancy_interval"])
    relevancy = {"value": t["relevancy"], "ci": rel_ci, "raw": t["relevancy_raw"],
                 "per_member": t["relevancies"], "max_member": float(max(t["relevancies"])),
                 "member_null_mean": t["member_null_mean"],
                 "interval_method": "normal over the per-example summed member terms, shifted "
                                    "by the label-null learning cost"}
    div_ci, gap = _contain(t["diversity"], t["diversity_interval"])
    diversity = {"value": t["diversity"], "ci": div_ci,
                 "interval_method": "paired bootstrap over the examples (joint and member "
                                    "terms on the same rows)",
                 **_null_block(t["diversity"], t["diversity_null"], "two-sided")}
    if gap:
        diversity["interval_note"] = f"percentile interval extended by {gap:.3g} to its estimate"
    if "null_mean" in diversity:
        m0 = diversity["null_mean"]
        diversity.update(corrected=t["diversity"] - m0,
                         corrected_ci=[c - m0 for c in div_ci])
    return {"joint": joint, "relevancy": relevancy, "diversity": diversity,
            "bound_lower": {"value": t["error_lower_bound"], "units": "probability",
                            "meaning": "lower bound on the Bayes error given U (at the upper "
                                       "end of the bracket)"},
            "bound_upper": {"value": t["error_upper_bound"], "units": "probability",
                            "meaning": "upper bound on the Bayes error given U (at the lower "
                                       "end of the bracket)"},
            "prefix": prefix,
            "h_y": h_y, "units": "bits", "terms": t}


class ModelBasedTerms:
    """Pipeline ``(run, rng) -> dict`` of the Gaussian (or copula) Eq. 13 terms of the
    Helmert-centred members with H(Y) and the Eq. 12 bounds (bits), refitted on every run it
    gets (:func:`infodiv.information.set_terms`)."""

    def __init__(self, copula: bool = False):
        self.copula = bool(copula)
        self.directions = {"diversity": "two-sided", "bound_lower": "less",
                           "bound_upper": "less"}

    def __call__(self, run, rng) -> dict:
        try:
            t = set_terms(member_variables(run.u), run.labels, n_classes=run.n_options,
                          method="copula" if self.copula else "gaussian", random_state=0)
        except ValueError:   # singular covariance in this replicate: NaN, counted downstream
            return {k: float("nan") for k in _MODEL_TERMS}
        out = {k: float(t[k]) for k in _MODEL_TERMS[:5]}
        out.update(h_y=float(t["h_y"]), bound_lower=float(t["error_lower_bound"]),
                   bound_upper=float(t["error_upper_bound"]))
        return out


def model_based_inference(contrib, method: str, *, n_resamples: int, n_null: int, n_mc: int = 2,
                          seed: int = 0, n_jobs=1) -> tuple[dict, list]:
    """``({term: summary}, flags)`` of one model-based method (module docstring)."""
    from .nulls import infer

    inf = infer(contrib, ModelBasedTerms(copula=method == "copula"), n_bootstrap=n_resamples,
                n_permutations=n_null, n_mc=n_mc, random_state=seed, n_jobs=n_jobs,
                progress=False)
    terms, flags, where = {}, [], f"information ({method}, model-based)"
    h_y = float(inf.bootstrap["h_y"].value)
    for name in inf.bootstrap.estimates:
        s = inf.summary(name)
        s["ci"], gap = _contain(s["value"], s["ci"])
        if gap:
            s["interval_note"] = f"percentile interval extended by {gap:.3g} to its estimate"
        if name in _LABEL_FREE:
            for key in ("null_mean", "null_interval", "p", "corrected", "corrected_ci"):
                s.pop(key, None)
            s["null_note"] = "does not involve Y: the label null leaves it unchanged"
        if name in _ABOUT_Y:
            printed = [s["value"], *s["ci"], s.get("corrected", -np.inf),
                       *(s.get("corrected_ci") or ())]
            flags += check_information(printed, h_y, f"{where}: {name}")
        terms[name] = s
    b = inf.bootstrap
    flags += check_bounds(b["bound_lower"].value, b["bound_upper"].value, where)
    flags += check_dimension(contrib.n_members * (contrib.n_options - 1), contrib.labels, where)
    terms["validity"] = MODEL_BASED
    return terms, flags


def information_inference(contrib, methods=(VALID_METHOD,), *, n_resamples: int = 200,
                          n_null: int = 19, n_mc: int = 2, seed: int = 0, n_jobs=1) -> dict:
    """Information terms of all members by each method with their inference (module doc).

    Parameters
    ----------
    contrib : Contributions
    methods : names in :data:`METHODS` (default the valid ``usable`` only)
    n_resamples : refitted example resamples of the model-based methods (the usable terms'
        intervals come from their per-example terms: 2000 paired resamples, no refit)
    n_null : label permutations (each reruns the whole procedure; 0 skips the null)
    seed, n_jobs, n_mc : seeds, joblib workers, Monte-Carlo reruns (model-based methods)

    Returns
    -------
    ``{"methods": {method: {term: summary}}, "flags": [...], "units", "h_y", "model_error",
    "settings"}`` (information in bits, the Eq. 12 bounds as probabilities); a method that
    fails on the run is ``{"error": message}``.
    """
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"methods {bad} unknown; choose from {METHODS}")
    out, flags = {}, []
    for method in methods:
        try:
            if method == VALID_METHOD:
                out[method] = valid_inference(contrib, n_null=n_null, seed=seed)
                continue
            out[method], extra = model_based_inference(
                contrib, method, n_resamples=n_resamples, n_null=max(19, n_null) if n_null
                else 0, n_mc=n_mc, seed=seed, n_jobs=n_jobs)
            flags += extra
        except ValueError as exc:
            out[method] = {"error": str(exc)}
    return {"methods": out, "flags": [f.to_dict() for f in flags], "units": "bits",
            "h_y": label_entropy(contrib.labels),
            "model_error": float(1.0 - contrib.accuracy()),
            "settings": {"n_resamples": n_resamples, "n_null": n_null, "seed": seed,
                         "methods": list(methods)}}


def headline_terms(doc: dict) -> dict:
    """``{"joint", "relevancy", "diversity", ...}`` point values of the valid method of an
    :func:`information_inference` document (``{}`` without it), for one-line summaries."""
    v = (doc or {}).get("methods", {}).get(VALID_METHOD) or {}
    if "joint" not in v:
        return {}
    return {"joint": v["joint"]["value"], "joint_ci": v["joint"]["ci"],
            "joint_bracket": v["joint"]["bracket"], "h_y": v["h_y"],
            "relevancy": v["relevancy"]["value"], "diversity": v["diversity"]["value"],
            "diversity_ci": v["diversity"]["ci"],
            "diversity_corrected": v["diversity"].get("corrected"),
            "diversity_p": v["diversity"].get("p")}


def _g(x) -> str:
    return num(x, ".3g")


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
                     interval(s["ci"]),
                     f"{_g(s.get('corrected'))} {interval(s.get('corrected_ci'))}"
                     if "corrected" in s else "–",
                     f"{_g(s.get('null_mean'))}, p = {_g(s.get('p'))}" if "p" in s else "–"])
    return rows


def information_lines(doc: dict) -> list[str]:
    """Markdown of a document's ``information_inference`` (valid terms first, model-based
    ones in a labelled table with their flags, then the flag summary)."""
    from ..reports.markdown import md_table

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
                  "", f"{MODEL_BASED[0].upper()}{MODEL_BASED[1:]}. B = {st['n_resamples']} "
                  f"refitted example resamples, K = {max(19, st['n_null'])} label "
                  "permutations.", ""]
        lines += md_table(["method", "term", "observed", "95% CI", "null-corrected [95% CI]",
                           "null mean, p"], rows) + [""]
    return lines + [*summary_lines([Flag(**f) for f in inf.get("flags", [])]), ""]


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
                         f" slope of the increments {_g(s['value'])} {interval(s['ci'])}, "
                         f"null-corrected {_g(s.get('corrected'))} "
                         f"{interval(s.get('corrected_ci'))}, p = {_g(s.get('p'))}.")
    return lines + [""]
