"""``infodiv curves RUN_DIR``: layer-addition curves, submodularity diagnostics, layer graph.

Writes to ``--out`` (default ``RUN_DIR/curves``): ``report.json`` (every number), ``report.md``
(a readable summary), per objective ``curves_<objective>.png``, ``gains_<objective>.png`` and
``shapley_<objective>.png``, and ``layer_graph.graphml`` / ``layer_graph.png``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

DEFAULT_OBJECTIVES = ("accuracy", "mi_gaussian")


def configure(parser) -> None:
    parser.add_argument("run_dir", help="Contributions run directory (from `infodiv extract`)")
    parser.add_argument("--objective", nargs="+", default=list(DEFAULT_OBJECTIVES),
                        help="set functions (infodiv.setfunctions.OBJECTIVES); "
                             f"default: {' '.join(DEFAULT_OBJECTIVES)}")
    parser.add_argument("--out", default=None, help="output folder (default RUN_DIR/curves)")
    parser.add_argument("--n-permutations", type=int, default=200)
    parser.add_argument("--n-triples", type=int, default=200,
                        help="nested-set diminishing-returns tests")
    parser.add_argument("--n-bootstrap", type=int, default=1000)
    parser.add_argument("--stability", type=int, default=10,
                        help="bootstrap replicates for greedy-order stability (0 skips)")
    parser.add_argument("--info-method", default="gaussian",
                        help="estimator for the Theorem 5-7 terms ('none' skips them)")
    parser.add_argument("--ridge", type=float, default=0.0,
                        help="relative ridge for the Gaussian objectives (singular members)")
    parser.add_argument("--no-graph", action="store_true", help="skip the layer graph")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1)


def _plot_curves(lc, path, plt):
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 4.5))
    k = np.arange(lc.n_members + 1)
    if "random" in lc:
        r = lc["random"]
        ax.fill_between(k, r.extra["band_low"], r.extra["band_high"], color="0.85",
                        label="random orders (2.5-97.5%)")
        ax.plot(k, r.values, color="k", lw=1.5, label="random-order mean")
    styles = {"prefix": "tab:blue", "suffix": "tab:purple", "greedy": "tab:red",
              "backward": "tab:orange"}
    for name, colour in styles.items():
        if name in lc:
            c = lc[name]
            ax.plot(k, c.values, color=colour, lw=1.2,
                    label=name + (" (held-out)" if c.extra.get("cross_fitted") else ""))
            if "values_in_sample" in c.extra and c.extra.get("cross_fitted"):
                ax.plot(k, c.extra["values_in_sample"], color=colour, lw=0.8, ls=":",
                        label=f"{name} (in-sample)")
    ax.set_xlabel("number of members k")
    ax.set_ylabel(f"{lc.objective} [{lc.units}]" if lc.units else lc.objective)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _plot_gains(lc, slope, path, plt):
    import numpy as np

    fig, ax = plt.subplots(figsize=(7, 3.5))
    g = lc["random"].extra["gain"]
    k = np.arange(1, len(g) + 1)
    ax.plot(k, g, "k.-", lw=0.8, label="g(k), random-order mean")
    fit = slope["slope"] * (k - k.mean()) + g.mean()
    ax.plot(k, fit, "r-", label=f"slope {slope['slope']:.3g} "
                                f"[{slope['ci'][0]:.3g}, {slope['ci'][1]:.3g}]")
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set_xlabel("k")
    ax.set_ylabel("utility gain")
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _plot_shapley(lc, names, path, plt):
    import numpy as np

    phi = lc["random"].extra["shapley"]
    fig, ax = plt.subplots(figsize=(max(6, 0.12 * len(phi)), 3.5))
    ax.bar(np.arange(len(phi)), phi, color="tab:blue")
    if len(phi) <= 70 and names:
        ax.set_xticks(np.arange(len(phi)), names, rotation=90, fontsize=5)
    ax.set_ylabel(f"Shapley value [{lc.units}]")
    ax.set_title(f"{lc.objective}: Shapley values (sum = f(V) - f(empty))")
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _summary_md(doc) -> str:
    lines = [f"# Layer-addition curves: {doc['run']['model']} on {doc['run']['task']}", "",
             f"N = {doc['run']['N']}, M = {doc['run']['M']}, C = {doc['run']['C']}; "
             f"seed {doc['settings']['seed']}; {doc['settings']['n_permutations']} random orders, "
             f"{doc['settings']['n_triples']} DR triples x {doc['settings']['n_bootstrap']} "
             "bootstrap replicates (BH at 0.05).", ""]
    for name, res in doc["objectives"].items():
        lines.append(f"## {name}")
        if "error" in res:
            lines += [f"failed: {res['error']}", ""]
            continue
        cur = res["curves"]["curves"]
        dr, sl, fits = res["report"]["dr"], res["report"]["gain_slope"], res["report"]["fits"]
        rng_c = cur["random"]
        lines += [
            f"- f(empty) = {rng_c['values'][0]:.4g}, f(V) = {rng_c['values'][-1]:.4g} "
            f"({res['curves']['units'] or 'units of the metric'}).",
            "- greedy held-out at k = 1, M/4, M/2: "
            + ", ".join(f"{cur['greedy']['values'][k]:.4g}" for k in res["k_marks"])
            + " (in-sample: "
            + ", ".join(f"{cur['greedy']['values_in_sample'][k]:.4g}" for k in res["k_marks"])
            + ")",
            f"- gain profile slope {sl['slope']:.3g}, 95% CI [{sl['ci'][0]:.3g}, "
            f"{sl['ci'][1]:.3g}] (negative = diminishing returns on average); without g(1): "
            f"{sl['from_k2']['slope']:.3g} [{sl['from_k2']['ci'][0]:.3g}, "
            f"{sl['from_k2']['ci'][1]:.3g}].",
            f"- DR tests: violation rate {dr['violation_rate']:.3f}, significant "
            f"(BH) {dr['significant_violation_rate']}, mean rho_x(A) - rho_x(B) = "
            f"{dr['mean_difference']:.3g} CI {dr['mean_difference_ci']}.",
            f"- submodularity ratio along greedy: min {res['report']['ratio']['min']}, "
            f"median {res['report']['ratio']['median']}, fraction < 1 "
            f"{res['report']['ratio']['fraction_below_1']}; total curvature "
            f"{res['report']['curvature']['total']}.",
            f"- growth law: best by AICc {fits['best_aicc']}, best extrapolation "
            f"{fits['best_extrapolation']}.",
            f"- Shapley check: sum phi - (f(V) - f(empty)) = "
            f"{rng_c['shapley_check']['residual']:.2e}.",
        ]
        ctl = res.get("control_modular")
        if ctl:
            lines.append(f"- negative control (matched modular surrogate, same DR code path): "
                         f"violation rate {ctl['violation_rate']:.3f}, significant "
                         f"{ctl['significant_violation_rate']}.")
        div = res["report"].get("diversity") or {}
        if "beta_diversity" in div:
            lines.append(f"- diversity regression: beta {div['beta_diversity']:.3g}, partial r "
                         f"{div['partial_r']:.3g}, permutation p (two-sided) "
                         f"{div['p_two_sided']:.3g} over {div['n_pairs']} pairs.")
        info = res["report"].get("information", {}).get("prefix")
        if info:
            lines.append(f"- Theorem 7 premise along the prefix ({info['method']}): TC(U|Y) = "
                         f"{info['conditional_redundancy'][-1]:.4g} vs TC(U) = "
                         f"{info['redundancy'][-1]:.4g} bits at k = {info['sizes'][-1]}.")
            mono = info["monotonicity"]
            lines.append("- Theorem 5/6 along the prefix (steps against the claimed direction): "
                         + ", ".join(f"{k} {v.get('n_against', '-')}/{v['n_steps']}"
                                     for k, v in mono.items()))
        for note in res["report"].get("notes", []) + res["curves"].get("notes", []):
            lines.append(f"- note: {note}")
        lines.append("")
    if "graph" in doc:
        g = doc["graph"]
        lines += ["## Layer graph", f"Chow-Liu tree edge sum {g['tree_bound']:.4g} bits "
                  f"(lower bound on TC(U)); {len(g['communities'])} redundancy communities.", ""]
    if "selection" in doc:
        s = doc["selection"]
        lines += ["## Subset selection (held-out)",
                  f"objective {s['objective']}; at k = 1, M/4, M/2: greedy "
                  + ", ".join(f"{s['greedy'][k]:.4g}" for k in s["k_marks"]) + "; prefix "
                  + ", ".join(f"{s['prefix'][k]:.4g}" for k in s["k_marks"])
                  + "; best-of-random "
                  + ", ".join(f"{s['best_random'][k]:.4g}" for k in s["k_marks"]), ""]
    if "stability" in doc:
        st = doc["stability"]
        lines += [f"Greedy-order stability over {st['n_bootstrap']} bootstrap replicates: "
                  f"Kendall tau {st['kendall_tau_mean']:.3f}; Jaccard of the first k: "
                  + ", ".join(f"k={k}: {v:.2f}" for k, v in st["jaccard"].items()), ""]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from extraction.contributions import Contributions
    from infodiv.controls import matched_modular_surrogate
    from infodiv.curves import layer_curves
    from infodiv.junctions import run_names
    from infodiv.layergraph import (
        export_graphml,
        layer_graph,
        plot_layer_graph,
        redundancy_communities,
        tree_bound,
    )
    from infodiv.selection import greedy_stability, subset_selection
    from infodiv.setfunctions import make_set_function
    from infodiv.submodularity import _jsonable, dr_tests, submodularity_report

    contrib = Contributions.load(args.run_dir)
    out = Path(args.out) if args.out else Path(args.run_dir) / "curves"
    out.mkdir(parents=True, exist_ok=True)
    m = contrib.n_members
    k_marks = sorted({1, max(1, m // 4), max(1, m // 2)})
    model, task = run_names(contrib.meta)
    doc = {"run": {"dir": str(args.run_dir), "model": model or "?",
                   "task": task or "?", "N": contrib.n_examples, "M": m,
                   "C": contrib.n_options, "members": contrib.names},
           "settings": {k: getattr(args, k) for k in ("n_permutations", "n_triples",
                                                      "n_bootstrap", "seed", "info_method",
                                                      "ridge", "objective")},
           "objectives": {}, "timings_s": {}}
    info_method = None if args.info_method == "none" else args.info_method
    for obj in args.objective:
        t0 = time.perf_counter()
        kw = {"ridge": args.ridge} if obj in ("mi_gaussian", "mi_copula") else {}
        try:
            lc = layer_curves(contrib, objective=obj, n_permutations=args.n_permutations,
                              random_state=args.seed, n_jobs=args.n_jobs, **kw)
            rep = submodularity_report(contrib, objective=obj, curves=lc,
                                       n_triples=args.n_triples, n_bootstrap=args.n_bootstrap,
                                       random_state=args.seed, info_method=info_method,
                                       n_jobs=args.n_jobs, **kw)
        except ValueError as exc:
            doc["objectives"][obj] = {"error": str(exc)}
            print(f"infodiv curves: {obj} failed: {exc}")
            continue
        _plot_curves(lc, out / f"curves_{obj}.png", plt)
        _plot_gains(lc, rep.gain_slope, out / f"gains_{obj}.png", plt)
        _plot_shapley(lc, contrib.names, out / f"shapley_{obj}.png", plt)
        rep_doc = rep.to_dict()
        rep_doc["dr"].pop("triples", None)
        doc["objectives"][obj] = {"curves": _jsonable(lc.to_dict()), "report": rep_doc,
                                  "k_marks": k_marks}
        f = make_set_function(contrib, obj, **kw)
        if f.per_example:  # negative control through the same DR code path
            ctl = dr_tests(matched_modular_surrogate(f, random_state=args.seed),
                           n_triples=args.n_triples, n_bootstrap=args.n_bootstrap,
                           random_state=args.seed, n_jobs=args.n_jobs)
            doc["objectives"][obj]["control_modular"] = _jsonable(
                {k: ctl[k] for k in ("violation_rate", "significant_violation_rate",
                                     "mean_difference", "mean_difference_ci")})
        doc["timings_s"][obj] = time.perf_counter() - t0
    first = args.objective[0]
    if "error" not in doc["objectives"].get(first, {"error": 1}):
        sel = subset_selection(contrib, objective=first, random_state=args.seed)
        doc["selection"] = _jsonable({**sel, "k_marks": k_marks})
        if args.stability:
            st = greedy_stability(contrib, objective=first, n_bootstrap=args.stability,
                                  random_state=args.seed, n_jobs=args.n_jobs)
            st.pop("orders")
            doc["stability"] = _jsonable(st)
    if not args.no_graph:
        try:
            g = layer_graph(contrib, random_state=args.seed)
            export_graphml(g, out / "layer_graph.graphml")
            plot_layer_graph(g, out / "layer_graph.png")
            doc["graph"] = {"tree_bound": tree_bound(g),
                            "communities": [[contrib.names[i] for i in c]
                                            for c in redundancy_communities(g)]}
        except ValueError as exc:
            doc["graph_error"] = str(exc)
    with open(out / "report.json", "w") as fh:
        json.dump(_jsonable(doc), fh, indent=1)
    (out / "report.md").write_text(_summary_md(_jsonable(doc)))
    print(f"infodiv curves: wrote {out}/report.json, report.md and figures")
    return 0
