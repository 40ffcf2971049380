"""``infodiv curves RUN_DIR``: layer-addition curves, submodularity diagnostics, layer graph.

Parses the arguments and calls :func:`infodiv.reports.curves.curves_report`, which writes
``report.json``, ``report.md`` and the figures to ``--out`` (default ``RUN_DIR/curves``).
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.choices import info_method_names
from infodiv.commands.preflight import nonneg_int
from infodiv.setfunctions.registry import OBJECTIVE_NAMES

DEFAULT_OBJECTIVES = ("accuracy", "mi_gaussian")


def configure(parser) -> None:
    parser.add_argument("run_dir", help="run folder (infodiv run) or Contributions directory")
    parser.add_argument("--objective", nargs="+", default=list(DEFAULT_OBJECTIVES),
                        choices=OBJECTIVE_NAMES, metavar="OBJECTIVE",
                        help=f"set functions ({', '.join(OBJECTIVE_NAMES)}); "
                             f"default: {' '.join(DEFAULT_OBJECTIVES)}")
    parser.add_argument("--out", default=None, help="output folder (default RUN_DIR/curves)")
    parser.add_argument("--n-permutations", type=int, default=200,
                        help="random member orders (mean curve, Shapley values)")
    parser.add_argument("--n-triples", type=int, default=200,
                        help="nested-set diminishing-returns tests")
    parser.add_argument("--n-bootstrap", type=int, default=None, metavar="B",
                        help="example resamples B of the inference (everything refitted; "
                             "K = B label permutations) and of the DR tests, at least 100 "
                             "(default: B = 200 at --n-permutations >= 200, else "
                             "max(20, n_permutations // 2), and 1000 for the DR tests)")
    parser.add_argument("--stability", type=int, default=10,
                        help="bootstrap replicates for greedy-order stability (0 skips)")
    parser.add_argument("--info-method", default="gaussian",
                        choices=(*info_method_names(), "none"),
                        help="estimator for the Theorem 5-7 terms ('none' skips them)")
    parser.add_argument("--ridge", type=float, default=0.0,
                        help="relative ridge for the Gaussian objectives (singular members)")
    parser.add_argument("--no-graph", action="store_true", help="skip the layer graph")
    parser.add_argument("--no-inference", action="store_true",
                        help="skip the two-level bootstrap and label-permutation null of "
                             "every objective (infodiv.inference): fixed-fit intervals only")
    parser.add_argument("--power-replicates", type=nonneg_int, default=20, metavar="N",
                        help="surrogates of each kind (conditionally independent members, "
                             "planted XOR synergy, shuffled labels) passed through the "
                             "verdicts' rules, so every verdict shows its detection rate "
                             "(0 skips the power analysis)")
    parser.add_argument("--seed", type=int, default=0,
                        help="random_state of orders, splits and resampling")
    parser.add_argument("--n-jobs", type=int, default=1, help="joblib workers")


def run(args) -> int:
    from infodiv.commands.preflight import load_run
    from infodiv.reports.curves import CurvesSettings, curves_report

    contrib, _, root = load_run(args.run_dir)   # run folder or contributions/
    out = Path(args.out) if args.out else root / "curves"
    settings = CurvesSettings(
        objectives=tuple(args.objective), n_permutations=args.n_permutations,
        n_triples=args.n_triples, n_bootstrap=args.n_bootstrap, stability=args.stability,
        info_method=None if args.info_method == "none" else args.info_method,
        ridge=args.ridge, graph=not args.no_graph, seed=args.seed, n_jobs=args.n_jobs,
        inference=not args.no_inference, power_replicates=args.power_replicates)
    doc = curves_report(contrib, out, settings, run_dir=args.run_dir)
    for line in verdict_summary(doc):
        print(line)
    print(f"infodiv curves: wrote {out}/report.json, report.md and figures")
    return 0


def verdict_summary(doc: dict) -> list[str]:
    """The final summary: every objective's verdicts, each with its detection rate."""
    lines = []
    for name, res in (doc.get("objectives") or {}).items():
        for test, v in ((res.get("report") or {}).get("verdicts") or {}).items():
            lines.append(f"infodiv curves: {name}: {test.replace('_', ' ')}: {v['text']}")
    return lines
