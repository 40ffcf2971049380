"""``infodiv curves RUN_DIR``: layer-addition curves, the verdicts of the paper's claims, layer
graph.

Parses the arguments and calls :func:`infodiv.reports.curves.curves_report`, which writes
``report.json``, ``report.md`` and the figures to ``--out`` (default ``RUN_DIR/curves``).
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.choices import claim_names
from infodiv.commands.preflight import (
    finite_float_at_least,
    int_at_least,
    n_jobs,
    nonneg_int,
)
from infodiv.setfunctions.registry import OBJECTIVE_NAMES


def configure(parser) -> None:
    parser.add_argument("run_dir", help="run folder (infodiv run) or Contributions directory")
    from infodiv.reports.curves import DEFAULT_CLAIMS, DEFAULT_OBJECTIVES

    parser.add_argument("--objective", nargs="+", default=list(DEFAULT_OBJECTIVES),
                        choices=OBJECTIVE_NAMES, metavar="OBJECTIVE",
                        help=f"set functions ({', '.join(OBJECTIVE_NAMES)}); "
                             f"default: {' '.join(DEFAULT_OBJECTIVES)}")
    parser.add_argument("--out", default=None, help="output folder (default RUN_DIR/curves)")
    parser.add_argument("--n-permutations", type=int_at_least(2), default=200,
                        help="random member orders (mean curve, Shapley values)")
    parser.add_argument("--n-triples", type=int_at_least(1), default=200,
                        help="nested-set diminishing-returns tests")
    parser.add_argument("--claims", nargs="+", default=list(DEFAULT_CLAIMS),
                        choices=claim_names(), metavar="CLAIM",
                        help=f"claims judged on every objective ({', '.join(claim_names())}); "
                             f"default: {' '.join(DEFAULT_CLAIMS)}")
    parser.add_argument("--n-bootstrap", type=int_at_least(20), default=200, metavar="B",
                        help="example resamples B of every verdict (everything refitted; "
                             "default 200)")
    parser.add_argument("--n-null", type=int_at_least(20), default=None, metavar="K",
                        help="label permutations K of every verdict's null (default: B; at "
                             "least 20, so that p = 1/(1 + K) can fall below 0.05)")
    parser.add_argument("--stability", type=nonneg_int, default=10,
                        help="bootstrap replicates for greedy-order stability (0 skips)")
    parser.add_argument("--ridge", type=finite_float_at_least(0.0), default=0.0,
                        help="relative ridge for the Gaussian objectives (singular members)")
    parser.add_argument("--no-graph", action="store_true", help="skip the layer graph")
    parser.add_argument("--no-inference", action="store_true",
                        help="point estimates only: no verdict, interval, null or power")
    parser.add_argument("--power-replicates", type=nonneg_int, default=20, metavar="N",
                        help="surrogates of each kind (conditionally independent members, "
                             "planted synergy or redundancy, shuffled labels) passed through "
                             "the verdicts' rules, so every verdict shows its power and its "
                             "shuffled-label rate "
                             "(0 skips the power analysis)")
    parser.add_argument("--seed", type=nonneg_int, default=0,
                        help="random_state of orders, splits and resampling")
    parser.add_argument("--n-jobs", type=n_jobs, default=1,
                        help="joblib workers (-1: every core)")


def run(args) -> int:
    import time

    from infodiv.commands.preflight import StageFailed, check_out, load_run
    from infodiv.commands.runfolder import record_stage
    from infodiv.reports.curves import CurvesSettings, curves_report

    contrib, _, root = load_run(args.run_dir)   # run folder or contributions/
    out = check_out(Path(args.out) if args.out else root / "curves")
    t0 = time.perf_counter()
    settings = CurvesSettings(
        objectives=tuple(args.objective), n_permutations=args.n_permutations,
        claims=tuple(args.claims), n_triples=args.n_triples, n_bootstrap=args.n_bootstrap,
        n_null=args.n_null, stability=args.stability, ridge=args.ridge,
        graph=not args.no_graph, seed=args.seed, n_jobs=args.n_jobs,
        inference=not args.no_inference, power_replicates=args.power_replicates)
    try:
        doc = curves_report(contrib, out, settings, run_dir=args.run_dir)
    except BaseException:
        record_stage(root, "curves", out, args, ok=False)
        raise
    failed = {name: res["error"] for name, res in (doc.get("objectives") or {}).items()
              if isinstance(res, dict) and "error" in res}
    record_stage(root, "curves", out, args, ok=not failed, seconds=time.perf_counter() - t0)
    if failed:
        name, why = next(iter(failed.items()))
        raise StageFailed(f"curves failed: objective {name}: {' '.join(str(why).split())}"
                          + (f" (and {len(failed) - 1} more objective(s))"
                             if len(failed) > 1 else "") + f"; see {out}/report.json")
    for line in verdict_summary(doc):
        print(line)
    print(f"infodiv curves: wrote {out}/report.json, report.md and figures")
    return 0


def verdict_summary(doc: dict) -> list[str]:
    """The final summary: every objective's verdicts, each with its detection rate."""
    lines = []
    for name, res in (doc.get("objectives") or {}).items():
        for test, v in (res.get("verdicts") or {}).items():
            lines.append(f"infodiv curves: {name}: {test.replace('_', ' ')}: {v['text']}")
    return lines
