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
  dimension too large for n. ``n_resamples=0`` (``--inference 0``) draws no example resample:
  the observed values only (the same numbers as with resamples), ``ci`` None and
  ``no_interval`` saying why; a label null, if asked, still gives its mean and p.

Every printed interval contains its estimate (an interval that misses it is extended to it by
:func:`estimators.resampling.contain_estimate` and says by how much); the label nulls are
summarised by :func:`infodiv.inference.nulls.null_summary`. :func:`depth_inference` gives the
depth estimand (truncated model vs member subsets) of the same report. The markdown of both is
:mod:`infodiv.reports.information_md`'s.
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import contain_estimate

from ..information import (
    label_entropy,
    member_variables,
    prefix_information,
    set_terms,
    valid_terms,
)
from .correlations import NO_RESAMPLES
from .flags import check_bounds, check_dimension, check_information
from .nulls import infer, infer_points, null_summary

__all__ = ["VALID_METHOD", "MODEL_METHODS", "METHODS", "MODEL_BASED", "ModelBasedTerms",
           "valid_inference", "model_based_inference", "information_inference",
           "headline_terms", "member_bias", "depth_inference"]

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
    """``ci`` extended to contain ``value`` and the gap it closed
    (:func:`estimators.resampling.contain_estimate`), as a JSON list."""
    lo, hi, gap = contain_estimate(value, ci[0], ci[1])
    return [lo, hi], gap


def _null_block(value, draws, side) -> dict:
    """The document's cells of :func:`~infodiv.inference.nulls.null_summary` of ``value``
    against ``draws`` (``{}`` without draws): null mean, 2.5–97.5% range, p on ``side``."""
    if not np.size(draws):
        return {}
    s = null_summary(value, draws, side).to_dict()
    return {k: s[k] for k in ("null_mean", "null_interval", "p", "alternative",
                              "n_permutations")}


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


def _point_summaries(contrib, pipeline, *, n_null: int, n_mc: int, seed, n_jobs) -> dict:
    """``{term: summary}`` without example resamples: the point values as
    :func:`~infodiv.inference.nulls.infer` computes them (the mean of ``n_mc`` reruns on the
    unchanged examples, the same seeds) with ``ci`` None, and the label null when ``n_null``
    (its mean, range and p; the null-corrected value without interval)."""
    values, null = infer_points(contrib, pipeline, n_permutations=n_null, n_mc=n_mc,
                                random_state=seed, n_jobs=n_jobs)
    values = {k: float(v) for k, v in values.items()}
    out = {}
    for name, value in values.items():
        s = {"value": value, "ci": None, "n_bootstrap": 0, "no_interval": NO_RESAMPLES,
             "n_mc": n_mc}
        if null is not None and name in null:
            nul = null[name]
            s.update(null_mean=nul.null_mean, null_interval=[nul.null_low, nul.null_high],
                     p=nul.p, alternative=nul.alternative, n_permutations=nul.n_permutations,
                     corrected=value - nul.null_mean, corrected_ci=None)
        out[name] = s
    return out


def _resampled_summaries(contrib, pipeline, *, n_resamples: int, n_null: int, n_mc: int, seed,
                         n_jobs) -> dict:
    """``{term: summary}`` under the refitted example bootstrap and the label null, every
    interval containing its estimate."""
    inf = infer(contrib, pipeline, n_bootstrap=n_resamples, n_permutations=n_null, n_mc=n_mc,
                random_state=seed, n_jobs=n_jobs, progress=False)
    out = {}
    for name in inf.bootstrap.estimates:
        s = inf.summary(name)
        s["ci"], gap = _contain(s["value"], s["ci"])
        if gap:
            s["interval_note"] = f"percentile interval extended by {gap:.3g} to its estimate"
        out[name] = s
    return out


def model_based_inference(contrib, method: str, *, n_resamples: int, n_null: int, n_mc: int = 2,
                          seed: int = 0, n_jobs=1) -> tuple[dict, list]:
    """``({term: summary}, flags)`` of one model-based method (module docstring);
    ``n_resamples`` 0: the observed values without intervals."""
    pipeline = ModelBasedTerms(copula=method == "copula")
    kw = {"n_null": n_null, "n_mc": n_mc, "seed": seed, "n_jobs": n_jobs}
    summaries = (_resampled_summaries(contrib, pipeline, n_resamples=n_resamples, **kw)
                 if n_resamples else _point_summaries(contrib, pipeline, **kw))
    terms, flags, where = {}, [], f"information ({method}, model-based)"
    h_y = float(summaries["h_y"]["value"])
    for name, s in summaries.items():
        if name in _LABEL_FREE:
            for key in ("null_mean", "null_interval", "p", "corrected", "corrected_ci"):
                s.pop(key, None)
            s["null_note"] = "does not involve Y: the label null leaves it unchanged"
        if name in _ABOUT_Y:
            printed = [s["value"], *(s["ci"] or ()), s.get("corrected", -np.inf),
                       *(s.get("corrected_ci") or ())]
            flags += check_information(printed, h_y, f"{where}: {name}")
        terms[name] = s
    flags += check_bounds(terms["bound_lower"]["value"], terms["bound_upper"]["value"], where)
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
    n_resamples : refitted example resamples of the model-based methods, 0 or at least 20 (0:
        their observed values only, without intervals; the usable terms' intervals come from
        their per-example terms: 2000 paired resamples, no refit)
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


# ---------------------------------------------------------------------------- depth estimand
def depth_inference(contrib, *, n_resamples: int = 100, n_null: int = 100, seed: int = 0,
                    n_jobs=1) -> dict:
    """Truncated-model and member-subset (direct effect) depth curves of accuracy and
    cross-entropy with example-bootstrap bands, and the slope of their junction increments
    under the bootstrap and the label null (:class:`~infodiv.inference.depth.DepthPipeline`)."""
    from .depth import DEPTH_LABELS, DepthPipeline, depth_curves

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
