"""``infodiv validate``: run the estimator ground-truth suite and print truth vs estimate.

For every case of :mod:`estimators.groundtruth`, every quantity and every method, the quantity is
estimated on ``--seeds`` independent samples of size ``--n`` and the table reports the exact value,
the mean +- standard deviation of the estimates over seeds, the error of the mean and the mean time
per estimate. Failures are printed, not hidden: e.g. kNN total correlation over 61 correlated
variables is far off, binned estimates in several dimensions are dominated by histogram bias.
The last column is each row's verdict by the measured rule of :mod:`estimators.verdicts` (its
legend prints the thresholds); the JSON keeps ``consistent``, whether the case lists the method
among those expected to be accurate (:class:`estimators.groundtruth.Case`).

``--suite bmi`` runs the benchmark tasks of Czyż et al. (2023) instead (:mod:`estimators.bmi`:
heavy-tailed Student-t, asinh and spiral transforms, sparse Gaussians in 5 and 25 dimensions)
and prints, in nats as in that paper, truth, mean estimate, RMSE and error per method; the
scalar chain (``chain``) is skipped above ``--max-chain-terms`` terms (``d_x d_y``); ``lnc``
(KSG with the local non-uniformity correction) runs at ``--lnc-k`` neighbours (default
``2 (d_x + d_y)``; it needs at least ``d_x + d_y``) and is offered for this suite only.

``--suite members`` runs the package default (``estimators.information_decomposition``,
usable information) on synthetic ensemble members with exactly known ``I(U;Y)``,
``sum_m I(U_m;Y)`` and ``D`` (:mod:`estimators.members_truth`: 2 and 4 classes, M = 4 to 61,
Gaussian and monotonely warped) and prints truth (Monte Carlo on exact posteriors, with its
error), mean estimate, whether every seed is within max(0.1 bit, 12 %) of the truth, how many
joint estimates exceed H(Y), and the coverage over seeds of the intervals and of the joint's
bracket.

``--like RUN`` answers "which estimator should I trust for data like mine?": it fits synthetic
members to the run (:mod:`estimators.matched`: its n, M, C, class balance, within-class
correlation spectrum, class means with their sampling noise removed, and each coordinate's
marginal), whose ``I(U;Y)``, every ``I(U_m;Y)``, ``R``, ``D``, ``TC(U|Y)`` and ``TC(U)`` are known
(exact or Monte Carlo with its error), scores every estimator (the default usable information
first) on ``--replicates`` draws at the run's n and its ``I(U;Y)`` on one more draw with the
labels permuted (truth 0), and prints bias, spread, RMSE, interval coverage and a verdict per
estimator and quantity, the rule in its legend, and per quantity which estimator to trust.
``--on-run`` adds each estimator's value on the run itself.

Every table's verdict column follows the same measured rule (:mod:`estimators.verdicts`):
an estimate is judged by its error against the truth, never by what the method was expected to
do.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import zlib
from pathlib import Path

from infodiv.commands.preflight import int_at_least, positive_int
from infodiv.commands.validate_like import check_out, method_kwargs, run_like

ALL_METHODS = ("knn", "chain", "lnc", "gaussian", "copula", "binned", "usable")
SUITE_METHODS = {"groundtruth": ("knn", "gaussian", "copula", "binned"),
                 "bmi": ("knn", "chain", "lnc", "gaussian", "copula"),
                 "members": ("usable",)}
DEFAULT_SEEDS = {"groundtruth": 5, "bmi": 5, "members": 2, "like": 3}


def _csv_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", choices=tuple(SUITE_METHODS),
                        help="groundtruth (exact Gaussian / label / XOR cases, bits; the "
                             "default), bmi (Czyz et al. 2023 tasks, nats) or members "
                             "(synthetic ensemble members, usable information, bits)")
    parser.add_argument("--like", type=Path, metavar="RUN",
                        help="instead of a suite: synthetic members matched to the run folder "
                             "RUN, with known truths; every estimator scored on them with a "
                             "verdict (which to trust for data like this run)")
    parser.add_argument("--n", type=int_at_least(10),
                        help="samples per draw (default 2000; --like: the run's n)")
    parser.add_argument("--seeds", "--replicates", dest="seeds", type=positive_int,
                        help="independent draws per case (default 5; members: 2; --like: 3, "
                             "more for a finer verdict at proportionally more time)")
    parser.add_argument("--methods", type=_csv_list,
                        help="comma-separated subset of knn,chain,lnc,gaussian,copula,binned "
                             "(default: knn,gaussian,copula,binned; bmi: knn,chain,lnc,"
                             "gaussian,copula; lnc only with --suite bmi; members: usable; "
                             "--like: usable,gaussian,copula,knn,binned)")
    parser.add_argument("--variance", type=_unit_interval, default=0.999,
                        help="--like: share of the run's within-class variance the design's "
                             "principal components keep (the rest is an isotropic floor)")
    parser.add_argument("--marginals", choices=("run", "gaussian"), default="run",
                        help="--like: each coordinate's marginal: the run's (a monotone map, "
                             "truths unchanged) or Gaussian")
    parser.add_argument("--on-run", action="store_true",
                        help="--like: also run every estimator on the run itself (one more "
                             "replicate's time) and print its value beside the verdict")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing --out file")
    parser.add_argument("--max-chain-terms", type=int, default=25,
                        help="bmi: skip method chain above this many d_x*d_y terms")
    parser.add_argument("--cases", type=_csv_list,
                        help="comma-separated case names (default: all; see --list)")
    parser.add_argument("--k", type=int, default=3, help="kNN neighbours (default 3)")
    parser.add_argument("--lnc-k", type=int,
                        help="bmi: neighbours for method lnc, which needs k >= d_x + d_y "
                             "(default: 2 (d_x + d_y), the measured choice of "
                             "docs/estimators.md)")
    parser.add_argument("--bins", type=int, default=8, help="bins per dimension for binned")
    parser.add_argument("--binning", choices=("uniform", "quantile"), default="uniform",
                        help="bin edges of the binned estimator")
    parser.add_argument("--out", type=Path,
                        help="write the rows to FILE (.json or .csv; --like: .json); an "
                             "existing file is refused without --overwrite")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")


def _run_suite(args, cases, methods) -> list[dict]:
    import numpy as np
    from tqdm.auto import tqdm

    from estimators import verdicts

    rows = []
    total = len(cases) * args.seeds
    with tqdm(total=total, desc="validate", file=sys.stderr, leave=False) as bar:
        for name, case in cases.items():
            ci = zlib.crc32(name.encode())  # the data of a case do not depend on --cases
            results = {(q.name, m): ([], []) for q in case.quantities for m in methods}
            for seed in range(args.seeds):
                data = case.sample(args.n, np.random.default_rng([seed, ci]))
                for m in methods:
                    for q in case.quantities:
                        t0 = time.perf_counter()
                        value = q.estimate(data, method=m, random_state=seed,
                                           **method_kwargs(m, args))
                        results[(q.name, m)][0].append(value)
                        results[(q.name, m)][1].append(time.perf_counter() - t0)
                bar.update()
            for q in case.quantities:
                for m in methods:
                    values, times = (np.asarray(v) for v in results[(q.name, m)])
                    mean = float(values.mean())
                    verdict, reason = verdicts.verdict(values, float(q.true_bits))
                    rows.append({
                        "case": name, "quantity": q.name, "method": m,
                        "consistent": m in case.methods, "n": args.n, "seeds": args.seeds,
                        "true_bits": float(q.true_bits), "mean_bits": mean,
                        "sd_bits": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
                        "error_bits": mean - float(q.true_bits),
                        "relative_error": ((mean - q.true_bits) / abs(q.true_bits)
                                           if q.true_bits != 0 else None),
                        "rmse_bits": float(np.sqrt(np.mean((values - q.true_bits) ** 2))),
                        "verdict": verdict, "reason": reason,
                        "time_s": float(times.mean()), "estimates": values.tolist()})
    return rows


def _run_bmi(args, tasks, methods) -> list[dict]:
    import warnings

    import numpy as np
    from tqdm.auto import tqdm

    from estimators import mutual_information

    rows = []
    with tqdm(total=len(tasks) * len(methods), desc="validate bmi", file=sys.stderr,
              leave=False) as bar, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the kNN dimension warning is the point of 25 x 25
        for name, task in tasks.items():
            samples = [task.sample(args.n, seed) for seed in range(args.seeds)]
            for m in methods:
                row = {"task": name, "method": m, "n": args.n, "seeds": args.seeds,
                       "true_nats": task.true_nats}
                kwargs = method_kwargs(m, args)
                if m == "lnc":
                    kwargs["k"] = args.lnc_k or 2 * (task.dim_x + task.dim_y)
                    row["k"] = kwargs["k"]
                if m == "chain" and task.dim_x * task.dim_y > args.max_chain_terms:
                    row["skipped"] = (f"{task.dim_x * task.dim_y} chain terms > "
                                      f"--max-chain-terms {args.max_chain_terms}")
                else:
                    values, times = [], []
                    for seed, (x, y) in enumerate(samples):
                        t0 = time.perf_counter()
                        values.append(mutual_information(x, y, method=m, base="e",
                                                         random_state=seed, **kwargs))
                        times.append(time.perf_counter() - t0)
                    v = np.asarray(values)
                    row.update(mean_nats=float(v.mean()), error_nats=float(v.mean()
                                                                           - task.true_nats),
                               rmse_nats=float(np.sqrt(np.mean((v - task.true_nats) ** 2))),
                               time_s=float(np.mean(times)), estimates=v.tolist())
                rows.append(row)
                bar.update()
    return rows


def format_bmi_table(rows: list[dict]) -> str:
    """The BMI rows as an aligned text table (nats)."""
    head = (f"{'task':<32} {'method':<9} {'true':>7} {'estimate':>9} {'error':>8} "
            f"{'rmse':>7} {'time/s':>8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "skipped" in r:
            lines.append(f"{r['task']:<32} {r['method']:<9} {r['true_nats']:7.3f}  skipped: "
                         f"{r['skipped']}")
            continue
        method = f"{r['method']} k={r['k']}" if "k" in r else r["method"]
        lines.append(f"{r['task']:<32} {method:<9} {r['true_nats']:7.3f} "
                     f"{r['mean_nats']:9.3f} {r['error_nats']:+8.3f} {r['rmse_nats']:7.3f} "
                     f"{r['time_s']:8.2f}")
    lines.append("(nats; error = mean - true, rmse over seeds; Czyz et al. 2023 tasks, "
                 "closed-form truths)")
    return "\n".join(lines)


def _run_members(args, cases) -> list[dict]:
    from tqdm.auto import tqdm

    from estimators.members_truth import run_case

    rows = []
    for name in tqdm(list(cases), desc="validate members", file=sys.stderr, leave=False):
        rows += run_case(cases[name], args.n, range(args.seeds))
    return rows


def format_members_table(rows: list[dict]) -> str:
    """The members rows as an aligned text table (bits)."""
    head = (f"{'case':<18} {'quantity':<17} {'true (mc se)':>16} {'estimate':>18} "
            f"{'error':>8} {'tol':>6} {'in tol':>6} {'>H(Y)':>5} {'cover':>5} "
            f"{'bracket':>7} {'time/s':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        true = f"{r['true_bits']:.3f} ({r['true_mc_se']:.3f})"
        est = f"{r['mean_bits']:.3f} +- {r['sd_bits']:.3f}"
        above = str(r["above_h_y"]) if "above_h_y" in r else ""
        bracket = f"{r['bracket_coverage']:.2f}" if "bracket_coverage" in r else ""
        lines.append(f"{r['case']:<18} {r['quantity']:<17} {true:>16} {est:>18} "
                     f"{r['error_bits']:+8.3f} {r['tolerance']:6.3f} "
                     f"{'yes' if r['all_within'] else 'NO':>6} {above:>5} "
                     f"{r['interval_coverage']:5.2f} {bracket:>7} {r['time_s']:7.1f}")
    lines.append("(bits; in tol = every seed within max(0.1, 12 % of truth); >H(Y) = joint "
                 "estimates above H(Y); cover = share of seeds whose interval holds the truth; "
                 "bracket = share whose [lower, upper] holds it)")
    return "\n".join(lines)


def format_table(rows: list[dict]) -> str:
    """The rows as an aligned text table (bits) with the measured verdict of each."""
    from estimators import verdicts

    head = (f"{'case':<24} {'quantity':<10} {'method':<9} {'true':>8} "
            f"{'estimate (mean +- sd)':>22} {'error':>9} {'rel.err':>8} {'time/s':>8} verdict")
    lines = [head, "-" * len(head)]
    for r in rows:
        rel = "" if r["relative_error"] is None else f"{100 * r['relative_error']:+.1f}%"
        est = f"{r['mean_bits']:.4f} +- {r['sd_bits']:.4f}"
        lines.append(f"{r['case']:<24} {r['quantity']:<10} {r['method']:<9} "
                     f"{r['true_bits']:8.4f} {est:>22} {r['error_bits']:+9.4f} {rel:>8} "
                     f"{r['time_s']:8.3f} {r['verdict']}")
    lines.append("(bits; error = mean - true over the seeds; " + verdicts.legend() + ")")
    return "\n".join(lines)


def _write(rows: list[dict], path: Path, meta: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        fields = [k for k in rows[0] if k != "estimates"]
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


def run(args) -> int:
    import importlib.util

    if args.seeds is None:
        args.seeds = DEFAULT_SEEDS["like" if args.like is not None else
                                   (args.suite or "groundtruth")]
    if args.like is not None:
        return run_like(args)
    args.suite = args.suite or "groundtruth"
    args.n = args.n or 2000
    if check_out(args, json_only=False):
        return 2
    if args.suite == "bmi":
        from estimators.bmi import tasks as all_cases

        cases = all_cases()
    elif args.suite == "members":
        from estimators.members_truth import member_cases as all_cases

        cases = all_cases()
    else:
        from estimators.groundtruth import cases as all_cases

        cases = all_cases()
    if args.list:
        for c in cases.values():
            if args.suite == "bmi":
                print(f"{c.name:<32} {c.dim_x} x {c.dim_y}, I = {c.true_nats:.4f} nats")
            elif args.suite == "members":
                print(f"{c.name:<24} {c.n_classes} classes, M = {c.n_members} members of "
                      f"{c.n_classes} dims{', warped' if c.warp else ''}")
            else:
                print(f"{c.name:<24} {c.description}  "
                      f"[{', '.join(q.name for q in c.quantities)}]")
        return 0
    methods = list(args.methods or SUITE_METHODS[args.suite])
    unknown = [m for m in methods if m not in ALL_METHODS]
    wrong_suite = [m for m in methods if (m == "usable") != (args.suite == "members")]
    if wrong_suite and not unknown:
        print(f"infodiv validate: method(s) {wrong_suite} do not run in --suite {args.suite} "
              f"(usable: --suite members only, which runs only usable)", file=sys.stderr)
        return 2
    if unknown:
        print(f"infodiv validate: unknown method(s) {unknown}; choose from {ALL_METHODS}",
              file=sys.stderr)
        return 2
    selected = args.cases or list(cases)
    missing = [c for c in selected if c not in cases]
    if missing:
        print(f"infodiv validate: unknown case(s) {missing}; see --list", file=sys.stderr)
        return 2
    if "lnc" in methods and args.suite != "bmi":
        print("infodiv validate: method lnc covers continuous MI/TC only; use it with --suite "
              "bmi (its ground-truth numbers: benchmarks/bench_lnc.py)", file=sys.stderr)
        return 2
    for m in ("knn", "chain"):
        if m in methods and importlib.util.find_spec(f"estimators.{m}") is None:
            print(f"infodiv validate: estimators.{m} is not available; skipping method {m}",
                  file=sys.stderr)
            methods.remove(m)
    t0 = time.perf_counter()
    chosen = {c: cases[c] for c in selected}
    if args.suite == "bmi":
        rows = _run_bmi(args, chosen, methods)
        print(format_bmi_table(rows))
    elif args.suite == "members":
        rows = _run_members(args, chosen)
        print(format_members_table(rows))
    else:
        rows = _run_suite(args, chosen, methods)
        print(format_table(rows))
    print(f"total time {time.perf_counter() - t0:.1f} s (n={args.n}, seeds={args.seeds})")
    if args.out is not None:
        meta = {"suite": args.suite, "n": args.n, "seeds": args.seeds, "k": args.k,
                "bins": args.bins, "binning": args.binning, "methods": methods,
                "cases": selected}
        _write(rows, args.out, meta)
        print(f"wrote {args.out}")
    return 0
