"""The curves report of one run: layer-addition curves, diminishing-returns diagnostics,
selection, greedy stability and the layer graph, written as JSON, markdown and figures.

``curves_report(contrib, out)`` writes ``report.json`` (every number), ``report.md`` (a
readable summary), per objective ``curves_<objective>.png``, ``gains_<objective>.png`` and
``shapley_<objective>.png``, and ``layer_graph.graphml`` / ``layer_graph.png``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..controls import matched_modular_surrogate
from ..curves import layer_curves
from ..inference._text import interval, num
from ..inference.flags import summary_lines
from ..inference.wiring import (
    flag_records,
    inference_lines,
    inferential_objective,
    settings_from,
    verdict_lines,
)
from ..layergraph import export_graphml, layer_graph, redundancy_communities, tree_bound
from ..runs import run_names
from ..selection import greedy_stability, subset_selection
from ..setfunctions import make_set_function
from ..submodularity import dr_tests, submodularity_report
from .figures import plot_gains, plot_layer_curves, plot_layer_graph, plot_shapley, run_label
from .markdown import fmt, fmt_list
from .serialize import jsonable, write_json

__all__ = ["DEFAULT_OBJECTIVES", "CurvesSettings", "curves_report", "curves_markdown",
           "selection_inference"]

DEFAULT_OBJECTIVES = ("accuracy", "mi_gaussian")


@dataclass(frozen=True)
class CurvesSettings:
    """What the curves report computes (the CLI flags of ``infodiv curves``)."""

    objectives: tuple = DEFAULT_OBJECTIVES
    n_permutations: int = 200
    n_triples: int = 200
    #: example resamples B of the inference (K = B label permutations unless
    #: inference_null) and of the fixed-fit DR tests (>= 100); None: B derived from
    #: n_permutations (inference.wiring.settings_from) and 1000 for the DR tests
    n_bootstrap: int | None = None
    stability: int = 10
    info_method: str | None = "gaussian"
    ridge: float = 0.0
    graph: bool = True
    seed: int = 0
    n_jobs: int = 1
    #: two-level bootstrap + label-permutation null of every objective (infodiv.inference);
    #: sizes: B = inference_resamples, else n_bootstrap, else derived from n_permutations;
    #: K = inference_null or B (inference.wiring.settings_from)
    inference: bool = True
    inference_resamples: int | None = None
    inference_null: int | None = None
    #: surrogates of each kind (conditionally independent, planted XOR, shuffled labels)
    #: through the verdicts' rules: detection rates beside every verdict (0 skips)
    power_replicates: int = 20
    #: example resamples B and label permutations K (K = max(20, B)) of the selection
    #: comparison (greedy vs best-of-random vs prefix; each reruns greedy on both halves),
    #: with its verdicts and their power (power_replicates surrogates of each kind; 0 or
    #: inference=False skips)
    inference_selection: int = 50


def dr_bootstrap(s: CurvesSettings) -> int:
    """Bootstrap replicates of the fixed-fit DR tests: ``n_bootstrap``, else 1000."""
    return int(s.n_bootstrap or 1000)


def k_marks(m: int) -> list[int]:
    """The set sizes the summary quotes: 1, M/4 and M/2."""
    return sorted({1, max(1, m // 4), max(1, m // 2)})


def _objective(contrib, obj, s: CurvesSettings, out: Path) -> dict:
    kw = {"ridge": s.ridge}
    lc = layer_curves(contrib, objective=obj, n_permutations=s.n_permutations,
                      random_state=s.seed, n_jobs=s.n_jobs, **kw)
    rep = submodularity_report(contrib, objective=obj, curves=lc, n_triples=s.n_triples,
                               n_bootstrap=dr_bootstrap(s), random_state=s.seed,
                               info_method=s.info_method, n_jobs=s.n_jobs, **kw)
    inference = None
    if s.inference:   # the report's fields become the refitted inferential ones
        inference = inferential_objective(contrib, obj, rep.__dict__, settings_from(s),
                                          curve_notes=lc.notes, **kw)
    rep_doc = rep.to_dict()
    label = run_label(contrib)   # model, task and N in every title
    band = None if inference is None else inference["mean_curve"]
    plot_layer_curves(lc, out / f"curves_{obj}.png", title=label, band=band)
    plot_gains(lc, rep_doc["gain_slope"], out / f"gains_{obj}.png", title=label)
    plot_shapley(lc, contrib.names, out / f"shapley_{obj}.png", title=label)
    rep_doc["dr"].pop("triples", None)
    entry = {"curves": jsonable(lc.to_dict()), "report": rep_doc,
             "k_marks": k_marks(contrib.n_members), "inference": inference}
    f = make_set_function(contrib, obj, **kw)
    if f.per_example:  # negative control through the same DR code path
        ctl = dr_tests(matched_modular_surrogate(f, random_state=s.seed),
                       n_triples=s.n_triples, n_bootstrap=dr_bootstrap(s),
                       random_state=s.seed, n_jobs=s.n_jobs)
        entry["control_modular"] = jsonable(
            {k: ctl[k] for k in ("violation_rate", "significant_violation_rate",
                                 "mean_difference", "mean_difference_ci")})
    return entry


def _graph(contrib, s: CurvesSettings, out: Path) -> dict:
    g = layer_graph(contrib, random_state=s.seed)
    export_graphml(g, out / "layer_graph.graphml")
    plot_layer_graph(g, out / "layer_graph.png", title=run_label(contrib))
    return {"tree_bound": tree_bound(g),
            "communities": [[contrib.names[i] for i in c] for c in redundancy_communities(g)]}


def selection_inference(contrib, objective: str, *, n_resamples: int = 50,
                        power_replicates: int = 20, seed: int = 0, ridge: float = 0.0,
                        n_jobs: int = 1, progress: bool = False) -> dict:
    """The selection claims (:data:`infodiv.claims.SELECTION_CLAIMS`: held-out greedy vs the
    best of 50 random orders and vs the depth prefix, each one budget-averaged difference)
    through the engine: B = ``n_resamples`` example resamples, K = max(20, B) label
    permutations, ``power_replicates`` surrogates of each kind when the set function has
    per-example scores (none otherwise). ``{"verdicts": {claim: VerdictRecord dict}, ...}``."""
    from ..claims import SELECTION_CLAIMS, get_claims
    from ..inference.claim import Design
    from ..inference.engine import evaluate

    kw = {"ridge": ridge}
    per_example = make_set_function(contrib, objective, **kw).per_example
    k = max(20, n_resamples)
    res = evaluate(contrib, get_claims(SELECTION_CLAIMS), Design(objective, kw, n_random=50),
                   n_bootstrap=n_resamples, n_permutations=k, n_mc=2,
                   n_power=power_replicates if per_example else 0, random_state=seed,
                   n_jobs=n_jobs, progress=progress)
    return jsonable({"objective": objective, "n_resamples": n_resamples, "n_null": k,
                     "n_random": 50, "cpu_s": res["cpu_s"],
                     "verdicts": {n: r.to_dict() for n, r in res["records"].items()}})


def _selection_lines(sel: dict) -> list[str]:
    """Each selection verdict's sentence with its statistic, interval, null and rule."""
    lines = []
    for name, r in (((sel or {}).get("inference") or {}).get("verdicts") or {}).items():
        lines.append(f"- **verdict {name.replace('_', ' ')}**: {r['text']}. {r['statistic']}: "
                     f"{num(r['estimate'])} {interval(r['interval'])}, null mean "
                     f"{num(r['null_mean'], '.3g')}, p = {num(r['p'], '.3g')} (B = "
                     f"{r['n_bootstrap']}, K = {r['n_permutations']}; rule: {r['rule']}).")
    return lines


def curves_report(contrib, out, settings: CurvesSettings | None = None, *,
                  run_dir=None, log=print) -> dict:
    """Compute the curves report of one run and write it to ``out`` (module docstring).

    An objective that cannot be computed on the run (a ValueError: too few examples per class
    for a Gaussian objective, ...) is recorded as ``{"error": message}`` and reported through
    ``log``; the others go on. Returns the JSON document that was written.
    """
    s = settings or CurvesSettings()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, task = run_names(contrib.meta)
    m = contrib.n_members
    # the run folder relative to the report, so the JSON holds no machine-specific path
    rel_dir = None if run_dir is None else os.path.relpath(Path(run_dir).resolve(), out.resolve())
    doc = {"run": {"dir": rel_dir, "model": model or "?",
                   "task": task or "?", "N": contrib.n_examples, "M": m,
                   "C": contrib.n_options, "members": contrib.names},
           "settings": {"n_permutations": s.n_permutations, "n_triples": s.n_triples,
                        "n_bootstrap": dr_bootstrap(s), "seed": s.seed,
                        "info_method": s.info_method or "none", "ridge": s.ridge,
                        "objective": list(s.objectives)},
           "objectives": {}, "timings_s": {}}
    for obj in s.objectives:
        t0 = time.perf_counter()
        try:
            doc["objectives"][obj] = _objective(contrib, obj, s, out)
        except ValueError as exc:
            doc["objectives"][obj] = {"error": str(exc)}
            log(f"infodiv curves: {obj} failed: {exc}")
            continue
        doc["timings_s"][obj] = time.perf_counter() - t0
    first = s.objectives[0]
    if "error" not in doc["objectives"].get(first, {"error": 1}):
        sel = subset_selection(contrib, objective=first, random_state=s.seed)
        doc["selection"] = jsonable({**sel, "k_marks": k_marks(m)})
        if s.inference and s.inference_selection:
            try:
                doc["selection"]["inference"] = selection_inference(
                    contrib, first, n_resamples=s.inference_selection,
                    power_replicates=s.power_replicates, seed=s.seed, ridge=s.ridge,
                    n_jobs=s.n_jobs)
            except ValueError as exc:   # e.g. M = 1: no budget to compare
                doc["selection"]["inference_error"] = str(exc)
                log(f"infodiv curves: selection inference failed: {exc}")
        if s.stability:
            st = greedy_stability(contrib, objective=first, n_bootstrap=s.stability,
                                  random_state=s.seed, n_jobs=s.n_jobs)
            st.pop("orders")
            doc["stability"] = jsonable(st)
    if s.graph:
        try:
            doc["graph"] = _graph(contrib, s, out)
        except ValueError as exc:
            doc["graph_error"] = str(exc)
    doc = jsonable(doc)
    write_json(out / "report.json", doc)
    (out / "report.md").write_text(curves_markdown(doc))
    return doc


# ---------------------------------------------------------------------------- markdown
def _objective_lines(res: dict) -> list[str]:
    cur, marks = res["curves"]["curves"], res["k_marks"]
    rep = res["report"]
    dr, sl, fits, ratio = rep["dr"], rep["gain_slope"], rep["fits"], rep["ratio"]
    rnd = cur["random"]
    if "null" in sl:   # refitted intervals with nulls and verdicts with power: they lead
        lead = [*verdict_lines(rep), *inference_lines(rep)]
    else:
        mc = sl.get("ci_mc") or [None, None]
        lead = [
            "- no inference (no null, no verdict): the intervals keep each set function's fit.",
            f"- gain profile slope {fmt(sl['slope'], '.3g')}, 95% CI "
            f"[{fmt_list(sl['ci'], '.3g')}] ({sl.get('ci_label', 'no example resampling')}; "
            f"negative = diminishing returns on average); without g(1): "
            f"{fmt(sl['from_k2']['slope'], '.3g')} [{fmt_list(sl['from_k2']['ci'], '.3g')}]; "
            f"Monte-Carlo error (orders only) [{fmt_list(mc, '.3g')}].",
            f"- DR tests: significant (BH) {fmt(dr['significant_violation_rate'], '.3g')}, "
            f"mean rho_x(A) - rho_x(B) = {fmt(dr['mean_difference'], '.3g')} CI "
            f"[{fmt_list(dr['mean_difference_ci'] or [None, None], '.3g')}]."]
    lines = [
        *lead,
        f"- raw DR violation rate (triples with d < 0, no test) "
        f"{fmt(dr['violation_rate'], '.3f')} of {dr.get('n_triples')}.",
        f"- f(empty) = {fmt(rnd['values'][0])}, f(V) = {fmt(rnd['values'][-1])} "
        f"({res['curves']['units'] or 'units of the metric'}).",
        "- greedy held-out at k = 1, M/4, M/2: "
        + fmt_list([cur["greedy"]["values"][k] for k in marks]) + " (in-sample: "
        + fmt_list([cur["greedy"]["values_in_sample"][k] for k in marks]) + ")",
        f"- submodularity ratio along greedy: min {fmt(ratio['min'], '.3g')}, median "
        f"{fmt(ratio['median'], '.3g')}, fraction < 1 {fmt(ratio['fraction_below_1'], '.3g')}; "
        f"total curvature {fmt(rep['curvature']['total'], '.3g')}.",
        f"- growth law: best by AICc {fits['best_aicc']}, best extrapolation "
        f"{fits['best_extrapolation']}.",
        f"- Shapley check: sum phi - (f(V) - f(empty)) = "
        f"{fmt(rnd['shapley_check']['residual'], '.2e')}.",
    ]
    ctl = res.get("control_modular")
    if ctl:
        lines.append(f"- negative control (matched modular surrogate, same DR code path): "
                     f"violation rate {ctl['violation_rate']:.3f}, significant "
                     f"{ctl['significant_violation_rate']}.")
    div = rep.get("diversity") or {}
    if "beta_diversity" in div:
        lines.append(f"- diversity regression: beta {fmt(div['beta_diversity'], '.3g')}, "
                     f"partial r {fmt(div['partial_r'], '.3g')}, pair-permutation p (two-sided) "
                     f"{fmt(div['p_two_sided'], '.3g')} over {div['n_pairs']} pairs (the pairs "
                     "share chains, so this p treats dependent pairs as exchangeable; the "
                     "example-bootstrap / label-null test of beta, with inference, is valid).")
    info = rep.get("information", {}).get("prefix")
    if info:
        lines.append(f"- Theorem 7 premise along the prefix ({info['method']}): TC(U|Y) = "
                     f"{fmt(info['conditional_redundancy'][-1])} vs TC(U) = "
                     f"{fmt(info['redundancy'][-1])} bits at k = {info['sizes'][-1]} "
                     f"(ratio {fmt(info['premise_tc_given_y_over_tc'][-1])}).")
        lines.append("- Theorem 5/6 along the prefix (steps against the claimed direction): "
                     + ", ".join(f"{k} {v.get('n_against', '-')}/{v['n_steps']}"
                                 for k, v in info["monotonicity"].items()))
    for note in rep.get("notes", []) + res["curves"].get("notes", []):
        lines.append(f"- note: {note}")
    return lines


def curves_markdown(doc: dict) -> str:
    """The readable summary of a curves document (numbers rounded for reading)."""
    run, st = doc["run"], doc["settings"]
    lines = [f"# Layer-addition curves: {run['model']} on {run['task']}", "",
             f"N = {run['N']}, M = {run['M']}, C = {run['C']}; seed {st['seed']}; "
             f"{st['n_permutations']} random orders, {st['n_triples']} DR triples x "
             f"{st['n_bootstrap']} bootstrap replicates (violations verdict: step-down "
             f"label-permutation test over the triples, FWER 0.05).", ""]
    for name, res in doc["objectives"].items():
        lines.append(f"## {name}")
        lines += [f"failed: {res['error']}"] if "error" in res else _objective_lines(res)
        lines.append("")
    if "graph" in doc:
        g = doc["graph"]
        lines += ["## Layer graph", f"Chow-Liu tree edge sum {g['tree_bound']:.4g} bits "
                  f"(lower bound on TC(U)); {len(g['communities'])} redundancy communities.", ""]
    if "selection" in doc:
        s, marks = doc["selection"], doc["selection"]["k_marks"]
        lines += ["## Subset selection (held-out)",
                  f"objective {s['objective']}; at k = 1, M/4, M/2: greedy "
                  + fmt_list([s["greedy"][k] for k in marks]) + "; prefix "
                  + fmt_list([s["prefix"][k] for k in marks]) + "; best-of-random "
                  + fmt_list([s["best_random"][k] for k in marks]),
                  *_selection_lines(s), ""]
    if "stability" in doc:
        st = doc["stability"]
        lines += [f"Greedy-order stability over {st['n_bootstrap']} bootstrap replicates: "
                  f"Kendall tau {st['kendall_tau_mean']:.3f}; Jaccard of the first k: "
                  + ", ".join(f"k={k}: {v:.2f}" for k, v in st["jaccard"].items()), ""]
    lines += ["## Flags", *summary_lines(flag_records(doc)), ""]
    return "\n".join(lines) + "\n"
