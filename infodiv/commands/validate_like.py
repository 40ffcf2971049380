"""``infodiv validate --like RUN``: which estimator to trust for data like a run.

Synthetic members matched to the run (:mod:`estimators.matched`), every estimator scored on
them with a verdict (:mod:`estimators.verdicts`), a table on stdout and the rows in a JSON
file (``--out``); plus the ``--out`` check and estimator options every suite shares.
"""

from __future__ import annotations

import json
import sys
import time

#: --like: the package default first, then every entropy-based method that takes a label
LIKE_METHODS = ("usable", "gaussian", "copula", "knn", "binned")


def method_kwargs(method: str, args) -> dict:
    """The estimator options of ``method`` from the command line (k, bins, binning)."""
    if method in ("knn", "chain"):
        return {"k": args.k}
    if method == "binned":
        return {"bins": args.bins, "binning": args.binning}
    return {}


def check_out(args, json_only: bool) -> int:
    """0, or 2 after one line on stderr for an --out that is unusable or already there."""
    out = args.out
    if out is None:
        return 0
    allowed = (".json",) if json_only else (".json", ".csv")
    if out.suffix.lower() not in allowed:
        print(f"infodiv validate: --out {out} must end in {' or '.join(allowed)}",
              file=sys.stderr)
        return 2
    if out.is_dir():
        print(f"infodiv validate: --out {out} is a folder; name a file", file=sys.stderr)
        return 2
    if out.exists() and not args.overwrite:
        print(f"infodiv validate: --out {out} exists; pass --overwrite to replace it",
              file=sys.stderr)
        return 2
    return 0


def like_methods(args, n_coords: int) -> list[str] | str:
    """The --like methods, or the one-line reason they are refused."""
    from estimators._dispatch import LABEL_METHODS

    methods = list(args.methods or LIKE_METHODS)
    allowed = ("usable", *LABEL_METHODS)
    bad = [m for m in methods if m not in allowed]
    if bad:
        return (f"method(s) {bad} do not estimate information about a label; --like takes "
                f"{','.join(allowed)}")
    if "chain" in methods and n_coords > args.max_chain_terms:
        return (f"method chain costs one conditional kNN MI per coordinate ({n_coords} here) "
                f"> --max-chain-terms {args.max_chain_terms}")
    return methods


def run_like(args) -> int:
    """``infodiv validate --like RUN``: fit, score, print, write; 2 on bad input."""
    import numpy as np
    from tqdm.auto import tqdm

    from estimators import matched, verdicts
    from infodiv.runfiles import UserError, load_run

    for flag, given in (("--suite", args.suite), ("--cases", args.cases), ("--list", args.list)):
        if given:
            print(f"infodiv validate: --like and {flag} exclude each other", file=sys.stderr)
            return 2
    if check_out(args, json_only=True):
        return 2
    contrib, _, root = load_run(args.like)
    u = np.asarray(contrib.u, dtype=np.float64)
    labels = np.asarray(contrib.raw_labels)
    keep = labels >= 0
    if keep.sum() < 2:
        raise UserError(f"{args.like} has {int(keep.sum())} labelled examples; --like needs "
                        "labels")
    u, labels = u[keep], labels[keep]
    n = args.n or len(labels)
    methods = like_methods(args, u.shape[1] * u.shape[2])
    if isinstance(methods, str):
        print(f"infodiv validate: {methods}", file=sys.stderr)
        return 2
    counts = np.bincount(labels)
    smallest = int(n * counts[counts > 0].min() / len(labels))
    if smallest < 15:
        raise UserError(f"the smallest class would have about {smallest} of n = {n} examples; "
                        "the default estimator needs 15 per class (5 folds x 3 inner folds): "
                        "raise --n")
    t0 = time.perf_counter()
    design = matched.fit_design(u, labels, variance=args.variance, marginals=args.marginals)
    truth = matched.design_truth(design)
    options = {m: method_kwargs(m, args) for m in methods}
    total = (args.seeds + 1) * len(methods) + (len(methods) if args.on_run else 0)
    with tqdm(total=total, desc="validate --like", file=sys.stderr, leave=False) as bar:
        def progress(method, replicate):
            where = ("the permuted-label draw" if replicate == "null"
                     else f"replicate {replicate + 1}/{args.seeds}")
            bar.set_postfix_str(f"{method} done on {where}")
            bar.update()

        rows = matched.score(design, truth, methods, n=n, replicates=args.seeds,
                             options=options, progress=progress)
        on_run = {}
        if args.on_run:
            bias = np.asarray(contrib.bias, dtype=np.float64)
            for m in methods:
                kw = dict(options[m], **({"bias": bias} if m == "usable" and bias.ndim == 1
                                         else {}))
                on_run[m] = matched.estimate(m, u, labels, **kw)
                bar.set_postfix_str(f"{m} done on the run")
                bar.update()
    for r in rows:
        est = on_run.get(r["method"], {})
        if r["key"] in est:
            r["on_run_bits"] = float(est[r["key"]])
    summary = {"run": str(args.like), "run_root": str(root), "n_run": int(len(labels)),
               "n": n, "n_members": design.n_members, "n_options": design.n_options,
               "class_counts": {int(k): int(v) for k, v in enumerate(counts) if v},
               "replicates": args.seeds, "methods": methods, "variance": args.variance,
               "marginals": args.marginals, "components": len(design.evals),
               "active_coordinates": int(design.active.sum()), "floor": design.floor,
               "spectrum_run": design.spectrum[:10].tolist(),
               "thresholds": {"trust_rel": verdicts.TRUST_REL,
                              "floor_rel_h_y": verdicts.FLOOR_REL,
                              "caution_factor": verdicts.CAUTION_FACTOR,
                              "coverage_nominal": verdicts.NOMINAL,
                              "coverage_alpha": verdicts.COVER_ALPHA},
               "legend": verdicts.legend(truth["h_y"])}
    if "usable" in on_run and "relevancies" in on_run["usable"]:
        run_rel = np.asarray(on_run["usable"]["relevancies"])
        summary["member_match"] = {
            "design_truth": truth["relevancies"], "run_usable": run_rel.tolist(),
            "correlation": float(np.corrcoef(run_rel, truth["relevancies"])[0, 1])
            if run_rel.std() > 0 and np.std(truth["relevancies"]) > 0 else None}
    advice = matched.recommend(rows)
    print(format_like_table(rows, truth, summary, advice))
    print(f"total time {time.perf_counter() - t0:.1f} s (n={n}, replicates={args.seeds})")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"meta": summary, "truth": truth, "rows": rows, "recommendation": advice,
               "on_run": {m: {k: v for k, v in e.items() if k != "intervals"}
                          for m, e in on_run.items()}}
        args.out.write_text(json.dumps(doc, indent=1))
        print(f"wrote {args.out}")
    return 0


def format_like_table(rows: list[dict], truth: dict, summary: dict, advice: dict) -> str:
    """The --like report: the design, one row per (method, quantity), legend, what to trust."""
    from estimators import verdicts

    on_run = any("on_run_bits" in r for r in rows)
    lines = [f"synthetic members like {summary['run']}: n = {summary['n']}, M = "
             f"{summary['n_members']}, C = {summary['n_options']}, classes "
             f"{summary['class_counts']}, H(Y) = {truth['h_y']:.3f} bits",
             f"design: {summary['components']} principal components of "
             f"{summary['active_coordinates']} coordinates ({summary['variance']:.1%} of the "
             f"within-class variance; run's top eigenvalues "
             f"{', '.join(f'{v:.2f}' for v in summary['spectrum_run'][:5])}) + isotropic floor "
             f"{summary['floor']:.3g}; {summary['marginals']} marginals",
             f"truths (bits): I(U;Y) {truth['joint']:.3f}, R {truth['relevancy']:.3f}, "
             f"D {truth['diversity']:.3f} (Monte Carlo, s.e. {truth['joint_se']:.3f} / "
             f"{truth['relevancy_se']:.3f} / {truth['diversity_se']:.3f}); TC(U|Y) "
             f"{truth['tc_given_y']:.3f} (exact), TC(U) {truth['tc']:.3f}", ""]
    head = (f"{'method':<16} {'quantity':<17} {'truth':>9} {'estimate (mean +- sd)':>22} "
            f"{'bias':>9} {'bias %':>7} {'rmse':>8} {'cover':>6} {'null':>7} "
            + (f"{'on run':>9} " if on_run else "") + "verdict")
    lines += [head, "-" * len(head)]
    for r in rows:
        name = "usable (default)" if r["method"] == "usable" else r["method"]
        if "refused" in r:
            lines.append(f"{name:<16} {r['quantity']:<17} {r['true_bits']:9.3f} "
                         f"{'refused':>22} {'':>9} {'':>7} {'':>8} {'':>6} {'':>7} "
                         + (f"{'':>9} " if on_run else "") + r["verdict"])
            continue
        est = f"{r['mean_bits']:.3f} +- {r['sd_bits']:.3f}"
        rel = "" if r["relative_bias"] is None else f"{100 * r['relative_bias']:+.1f}"
        cover = f"{r['covered']}/{r['replicates']}" if r["coverage"] is not None else ""
        run_value = f"{r['on_run_bits']:9.3f} " if "on_run_bits" in r else (
            f"{'':>9} " if on_run else "")
        null = f"{r['null_bits']:.3f}" if r.get("null_bits") is not None else ""
        lines.append(f"{name:<16} {r['quantity']:<17} {r['true_bits']:9.3f} {est:>22} "
                     f"{r['bias_bits']:+9.3f} {rel:>7} {r['rmse_bits']:8.3f} {cover:>6} "
                     f"{null:>7} {run_value}{r['verdict']}")
    refusals = {r["method"]: r["refused"] for r in rows if "refused" in r}
    for m, why in refusals.items():
        lines.append(f"  {m} refused: {why}")
    lines.append(f"(bits; bias = mean - truth, bias % of |truth|, rmse over "
                 f"{summary['replicates']} replicates; cover = replicates whose interval held "
                 "the truth: usable's bracket for I(U;Y), its interval for R, its paired "
                 "bootstrap for D; null = I(U;Y) on a draw with permuted labels, truth 0; "
                 + verdicts.legend(truth["h_y"]) + ")")
    lines.append("the design is Gaussian given the class up to monotone maps: gaussian and "
                 "copula meet their own model here, so their verdicts flatter them on the run")
    lines += ["", "which estimator to trust for data like this run:"]
    for name, a in advice.items():
        if a["methods"]:
            text = f"{a['verdict']}: {', '.join(a['methods'])}"
        elif a["closest"] is not None:
            text = (f"none usable; closest "
                    f"{a['closest']} (rmse {a['closest_rmse_bits']:.3f} bits)")
            cover = next((r for r in rows if r["quantity"] == name
                          and r["method"] == a["closest"] and r.get("coverage") is not None),
                         None)
            if cover is not None:
                text += (f", whose {cover['interval_kind']} held the truth in "
                         f"{cover['covered']}/{cover['replicates']}")
        else:
            text = "none: every method refused"
        lines.append(f"  {name:<17} {text}")
    match = summary.get("member_match")
    if match:
        lines.append(f"per-member I(U_m;Y): design truths sum {sum(match['design_truth']):.3f}"
                     f", the run's usable estimates {sum(match['run_usable']):.3f}"
                     + (f" (correlation {match['correlation']:.2f})"
                        if match["correlation"] is not None else ""))
    return "\n".join(lines)
