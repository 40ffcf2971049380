"""Inferential curve / DR report: the adapter that runs the existing curve statistics under the
two-level bootstrap, the label-permutation null and the surrogate power analysis.

:func:`curve_inference` returns a JSON-ready dict whose fields keep the names of the
submodularity report and are now inferential: ``gain_slope["ci"]`` and
``gain_slope["from_k2"]["ci"]`` (example bootstrap, everything refitted),
``dr["mean_difference_ci"]`` and ``dr["significant_violation_rate"]`` (per-triple one-sided
p = Φ(d / se_boot) from the example bootstrap, Benjamini–Hochberg at ``alpha``; the count p-values
``(1 + #{d_b ≥ 0}) / (1 + B)`` are kept in ``p_values_count``: a test of d < 0 with no null,
not the verdict). The violations verdict uses ``dr["significant_corrected"]`` /
``dr["significant_violation_rate_corrected"]`` with ``p_values_corrected``: the step-down
min-z label-permutation test of :func:`~infodiv.inference.verdicts.violation_test`
(family-wise over triples, calibrated by construction). The orders-only spread sits in
fields ending ``_mc`` labelled "Monte-Carlo error". Each statistic also carries its null
(mean, 2.5–97.5%, p) and the null-corrected value with its interval; ``flags`` lists what must
not be read at face value and ``power`` the detection rates of the same tests on surrogates of
the run. :func:`curve_inference_markdown` prints it, corrected values first, flags in the rows
and again at the end.
"""

from __future__ import annotations

import time

import numpy as np

from ._api import benjamini_hochberg, jsonable
from ._text import flag_marks, interval, num
from .bootstrap import p_negative_normal, p_nonnegative
from .flags import check_bounds, check_dimension, check_failures, check_information, summary_lines
from .nulls import infer
from .pipelines import GROWTH_LAWS, INFORMATION_STATISTICS, LABEL_FREE, CurvePipeline
from .power import FixedFitDetector, surrogate_power
from .surrogates import CURVE_SURROGATES, planted_style
from .verdicts import (
    NullReference,
    decide,
    stats_from_bootstrap,
    verdict_docs,
    violation_test,
)

__all__ = ["curve_inference", "curve_inference_markdown", "POWER_TESTS", "MC_LABEL",
           "power_surrogate_kwargs"]

VIOLATION_TEST = ("null-corrected z_t = (d_t - m0_t) / max(se_boot, sd_null), Westfall-Young "
                  "step-down min-z over triples against the label-permutation draws "
                  "(family-wise error <= alpha), and d_t < 0")
MC_LABEL = "Monte-Carlo error (orders and split resampled, examples fixed)"
CI_LABEL = "example bootstrap, everything refitted, percentile"
#: the verdicts' tests, as (statistic, rule) for :class:`~.power.bootstrap_detector`
POWER_TESTS = {"diminishing_returns": ("gain_slope", "ci_below_zero"),
               "dr_mean_difference_positive": ("dr_mean_difference", "ci_above_zero"),
               "violations": ("dr_differences", "any_bh_violation")}


def power_surrogate_kwargs(run, planted: str) -> dict:
    """The surrogates' settings of the power run: the planted-synergy style the objective can
    read and min(4, M // 2) planted-redundancy copies."""
    return {"planted_synergy": {"style": planted},
            "planted_redundancy": {"n_copies": max(1, min(4, run.n_members // 2))}}


def _scalar(inf, name, key="value") -> dict:
    s = inf.summary(name)
    out = {key: s["value"], "ci": list(s["ci"]), "n_bootstrap": s["n_bootstrap"],
           f"{key}_mc_error": s["mc_error"], "ci_mc": list(s["ci_mc"])}
    if "p" in s and name in LABEL_FREE:
        out["null"] = {"note": "does not involve Y: the label null leaves it unchanged and "
                               "does not identify its bias"}
    elif "p" in s:
        out.update(null={"mean": s["null_mean"], "interval": list(s["null_interval"]),
                         "p": s["p"], "alternative": s["alternative"],
                         "n_permutations": s["n_permutations"]},
                   corrected=s["corrected"], corrected_ci=list(s["corrected_ci"]), p=s["p"])
    return out


def _dr(inf, pipe, alpha):
    est = inf.bootstrap["dr_differences"]
    p = p_negative_normal(est)
    d = np.asarray(est.value)
    sig = benjamini_hochberg(p, alpha) & (d < 0)
    mean = _scalar(inf, "dr_mean_difference", "mean_difference")
    rate = _scalar(inf, "dr_violation_rate", "violation_rate")
    return {"mean_difference": mean["mean_difference"], "mean_difference_ci": mean["ci"],
            "mean_difference_ci_mc": mean["ci_mc"], "mean_difference_null": mean.get("null"),
            "mean_difference_corrected": mean.get("corrected"),
            "mean_difference_corrected_ci": mean.get("corrected_ci"),
            "violation_rate": rate["violation_rate"], "violation_rate_ci": rate["ci"],
            "violation_rate_null": rate.get("null"),
            "significant_violation_rate": float(sig.mean()), "any_significant": bool(sig.any()),
            "p_values": p, "p_values_count": p_nonnegative(est.distribution),
            "significant": sig, "differences": d,
            "ci_low": est.ci[0], "ci_high": est.ci[1], "n_triples": int(d.size),
            "n_bootstrap": est.n_bootstrap, "alpha": alpha,
            "test": ("per-triple example bootstrap (refitted), one-sided p = Φ(d/se_boot), "
                     "BH over triples"),
            "triples": [{"A": a.tolist(), "B": b.tolist(), "x": int(x)}
                        for a, b, x in pipe.triples(len(inf.bootstrap["shapley"].value))]}


def _flags(run, inf) -> list:
    flags = []
    for kind, res in (("bootstrap", inf.bootstrap), ("null", inf.null)):
        if res is not None:
            n = res.n_bootstrap if kind == "bootstrap" else res.n_permutations
            flags += check_failures(len(res.errors), n, f"{kind} replicates")
    if "joint" in inf.bootstrap:
        b = inf.bootstrap
        flags += check_information(b["joint"].value, b["h_y"].value, "I(U;Y) (Gaussian)")
        flags += check_bounds(b["bound_lower"].value, b["bound_upper"].value,
                              "Eq. 12 bounds (Gaussian I)")
        flags += check_dimension(run.n_members * (run.n_options - 1), run.labels,
                                 "Gaussian information terms")
    return flags


def curve_inference(run, objective: str = "accuracy_calibrated", *, n_bootstrap: int = 200,
                    n_permutations: int = 200, n_mc: int = 10, n_orders: int = 20,
                    n_triples: int = 100, alpha: float = 0.05, growth_laws: bool = True,
                    growth_replicates: int = 50,
                    information: bool = True, power_replicates: int = 20,
                    power_bootstrap: int = 30, triples=None, random_state=0, n_jobs=1,
                    progress: bool = True, **objective_kwargs) -> dict:
    """Run the curve statistics of ``objective`` under the two-level bootstrap and the
    label-permutation null, with flags and (``power_replicates`` > 0) surrogate power.

    Parameters
    ----------
    run : Contributions
    objective : set-function name
    n_bootstrap, n_permutations, n_mc : outer resamples B, permutations K, fixed-example reruns
    n_orders : random orders per replicate (inner level); n_triples : fixed DR chains
    growth_replicates : about how many replicates fit the growth laws (each fit ~0.5 s)
    power_replicates : surrogates of each kind (default 20; 0 skips the power); the planted
        synergy is the one the objective can read (``surrogates.planted_style``: XOR pairs for
        the Gaussian / copula / kNN information, noise-cancelling pairs for readouts and
        probes), recorded in ``power["detector"]["planted_style"]``
    power_bootstrap : refitted resamples of the detector on each surrogate when the objective
        has no per-example scores (per-example ones reuse one fit and B resamples:
        :class:`~infodiv.inference.power.FixedFitDetector`)
    triples : DR chains ``(A, B, x)`` to use (default: ``n_triples`` drawn from the seed)
    random_state : int, default 0
    **objective_kwargs : passed to the set function (e.g. ``ridge``)
    """
    c0 = time.process_time()
    n_total = n_bootstrap + n_permutations + n_mc
    pipe = CurvePipeline(objective, n_orders=n_orders, n_triples=n_triples,
                         growth_laws=growth_laws, information=information, triples=triples,
                         growth_fraction=min(1.0, max(1, growth_replicates) / n_total),
                         triple_seed=random_state if isinstance(random_state, int) else 0,
                         **objective_kwargs)
    # duplicated rows bias resampled information estimates: centre their intervals
    interval = "centred" if objective.startswith("mi_") else "percentile"
    inf = infer(run, pipe, n_bootstrap=n_bootstrap, n_permutations=n_permutations, n_mc=n_mc,
                interval=interval, random_state=random_state, n_jobs=n_jobs,
                progress=progress)
    slope = _scalar(inf, "gain_slope", "slope")
    slope["from_k2"] = _scalar(inf, "gain_slope_from_k2", "slope")
    b = inf.bootstrap
    doc = {"objective": objective, "n_examples": run.n_examples, "n_members": run.n_members,
           "settings": {"n_bootstrap": n_bootstrap, "n_permutations": n_permutations,
                        "n_mc": n_mc, "n_orders_per_replicate": n_orders,
                        "n_triples": n_triples, "alpha": alpha, "random_state": random_state},
           "ci_label": CI_LABEL.replace("percentile", interval), "mc_label": MC_LABEL,
           "gain_slope": slope,
           "dr": _dr(inf, pipe, alpha) if pipe.n_triples else None,
           "mean_curve": {"values": b["mean_curve"].value, "ci_low": b["mean_curve"].ci[0],
                          "ci_high": b["mean_curve"].ci[1], "ci_mc_low": b["mean_curve"].ci_mc[0],
                          "ci_mc_high": b["mean_curve"].ci_mc[1]},
           "gain": {"values": b["gain"].value, "ci_low": b["gain"].ci[0],
                    "ci_high": b["gain"].ci[1]},
           "shapley": {"values": b["shapley"].value, "ci_low": b["shapley"].ci[0],
                       "ci_high": b["shapley"].ci[1], "values_mc_error": b["shapley"].mc_error}}
    if "diversity_beta" in b:
        doc["diversity"] = {"beta": _scalar(inf, "diversity_beta"),
                            "partial_r": _scalar(inf, "diversity_partial_r"),
                            "meaning": "diversity regression refitted per resample; its pairs "
                                       "share chains, so only the example bootstrap and the "
                                       "label null are valid (not the pair permutation)"}
    if growth_laws:
        dists = {key: {law: b[f"growth_{key}_{law}"].distribution for law in GROWTH_LAWS}
                 for key in ("aicc", "extrapolation")}
        doc["growth_laws"] = {key: {law: (float(np.nanmean(d)) if np.isfinite(d).any()
                                          else float("nan")) for law, d in laws.items()}
                              for key, laws in dists.items()}
        doc["growth_laws"].update(
            meaning="fraction of example resamples choosing each law",
            n_resamples_fitted=int(np.isfinite(dists["aicc"]["linear"]).sum()))
    if information:
        doc["information"] = {k: _scalar(inf, k) for k in INFORMATION_STATISTICS}
    doc["flags"] = [f.to_dict() for f in _flags(run, inf)]
    ref = NullReference.from_null(inf.null)
    if doc["dr"] is not None and ref.triples is not None:
        vt = violation_test(b["dr_differences"].value, b["dr_differences"].se, ref.triples,
                            alpha)
        doc["dr"].update(significant_corrected=vt["significant"],
                         significant_violation_rate_corrected=float(vt["significant"].mean()),
                         p_values_corrected=vt["p_adjusted"], z_corrected=vt["z"],
                         critical_z_corrected=vt["critical"], test_corrected=VIOLATION_TEST)
    c1 = time.process_time()
    planted = planted_style(objective)   # the synergy this objective can read
    if power_replicates:
        small = CurvePipeline(objective, n_orders=max(4, n_orders // 2),
                              n_triples=pipe.n_triples, information=False, diversity=True,
                              triple_seed=pipe.triple_seed, triples=triples, **objective_kwargs)
        # reweighting examples is cheap: at least 200 resamples for the per-triple se
        detect = FixedFitDetector(small, ref, n_bootstrap=max(200, n_bootstrap),
                                  n_bootstrap_refit=power_bootstrap, alpha=alpha,
                                  by_kind=True)
        doc["power"] = surrogate_power(run, detect, kinds=CURVE_SURROGATES,
                                       n_replicates=power_replicates,
                                       surrogate_kwargs=power_surrogate_kwargs(run, planted),
                                       random_state=random_state, n_jobs=n_jobs,
                                       progress=progress)
        doc["power"]["detector"] = {
            "rules": "the verdicts' own (infodiv.inference.verdicts.decide), judged against "
                     "the real run's label-permutation null",
            "n_orders": small.n_orders, "n_triples": small.n_triples,
            "n_bootstrap": max(200, n_bootstrap), "n_bootstrap_refit": power_bootstrap,
            "planted_style": planted,
            "planted_redundancy": power_surrogate_kwargs(run, planted)["planted_redundancy"],
            "fit": "per-example objectives: fitted once per surrogate, examples reweighted; "
                   "others: refitted on every resample"}
    doc["verdicts"] = verdict_docs(decide(stats_from_bootstrap(b), ref, alpha),
                                   doc.get("power"), alpha, planted=planted)
    # this process's CPU seconds (joblib workers not included when n_jobs > 1)
    doc["cpu_s"] = {"inference": c1 - c0, "power": time.process_time() - c1}
    return jsonable(doc)


def _ci(ci):
    return interval(ci)


def _row_flags(doc, *codes):
    return flag_marks(doc["flags"], *codes)


def curve_inference_markdown(doc) -> str:
    """Markdown of :func:`curve_inference`: corrected inferential values first, flags in the
    rows and in a final summary, power next to each verdict."""
    gs, dr = doc["gain_slope"], doc["dr"]
    lines = [f"## Inference: {doc['objective']} (n = {doc['n_examples']}, M = {doc['n_members']})",
             "", f"Intervals: {doc['ci_label']}, B = {doc['settings']['n_bootstrap']}; nulls: "
             f"labels shuffled and the pipeline rerun, K = {doc['settings']['n_permutations']}; "
             f"`_mc`: {doc['mc_label']}.", "",
             "| statistic | null-corrected [95% CI] | observed [95% CI] | null mean [2.5–97.5%] "
             "| p | Monte-Carlo error |", "|---|---|---|---|---|---|"]

    def row(name, s, value_key, flags=""):
        null = s.get("null") or {}
        lines.append(f"| {name}{flags} | {num(s.get('corrected'))} "
                     f"{_ci(s.get('corrected_ci', [None, None]))} | {num(s[value_key])} "
                     f"{_ci(s['ci'])} | {num(null.get('mean'))} "
                     f"{_ci(null.get('interval', [None, None]))} | "
                     f"{num(null.get('p'), '.3g')} | {num(s[value_key + '_mc_error'], '.2g')} |")

    row("g(k) slope", gs, "slope")
    row("g(k) slope, k ≥ 2", gs["from_k2"], "slope")
    if dr:
        row("DR mean difference ρx(A) − ρx(B)", {
            "mean_difference": dr["mean_difference"], "ci": dr["mean_difference_ci"],
            "corrected": dr["mean_difference_corrected"],
            "corrected_ci": dr["mean_difference_corrected_ci"], "null": dr["mean_difference_null"],
            "mean_difference_mc_error": 0.0}, "mean_difference")
    for term, s in (doc.get("information") or {}).items():
        codes = {"joint": ("information_exceeds_entropy", "dimension_too_large"),
                 "bound_lower": ("bound_outside_unit_interval",),
                 "bound_upper": ("bound_outside_unit_interval",)}.get(term,
                                                                      ("dimension_too_large",))
        row(f"{term} (bits)" if not term.startswith("bound") else f"Eq. 12 {term}", s, "value",
            _row_flags(doc, *codes))
    lines += [""]
    for name, v in doc["verdicts"].items():
        lines.append(f"- **{name}**: {v['text']} (rule: {v['rule']}).")
    if dr:
        lines.append(f"- BH-significant violation rate {dr['significant_violation_rate']:.3f} "
                     f"of {dr['n_triples']} triples ({dr['test']}).")
    if doc.get("growth_laws"):
        g = doc["growth_laws"]["aicc"]
        lines.append("- growth law by AICc, fraction of resamples: "
                     + ", ".join(f"{k} {num(v, '.2f')}" for k, v in g.items()))
    from .flags import Flag

    lines += [""] + summary_lines([Flag(**f) for f in doc["flags"]])
    return "\n".join(lines) + "\n"
