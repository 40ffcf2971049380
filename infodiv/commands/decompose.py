"""``infodiv decompose RUN_DIR``: every ensemble and information decomposition of one run.

Parses the arguments and calls :func:`infodiv.reports.decomposition.decomposition_report`,
which writes ``decompositions.json``, ``decompositions.md``, ``junction_curves.png`` and
``module_shares.png`` to ``--out`` (default ``RUN_DIR/decompositions``).
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.choices import info_method_names
from infodiv.commands.preflight import nonneg_int, zero_or_at_least


def configure(parser) -> None:
    from infodiv.reports.decomposition import DEFAULT_INFERENCE

    parser.add_argument("run_dir", type=Path,
                        help="run folder (infodiv run) or Contributions directory")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default RUN_DIR/decompositions)")
    parser.add_argument("--info-method", nargs="*", default=["usable"],
                        choices=("usable", *info_method_names(), "none"), metavar="METHOD",
                        help="estimators for the information decomposition: 'usable' (valid "
                             "for a discrete label), 'gaussian' / 'copula' (model-based, "
                             "labelled so); 'none' or no value: skip it")
    parser.add_argument("--inference", type=zero_or_at_least(20), default=DEFAULT_INFERENCE,
                        metavar="B",
                        help="example-bootstrap and label-permutation replicates of the "
                             "information terms (0 skips them; else at least 20)")
    parser.add_argument("--info-null", type=nonneg_int, default=None, metavar="K",
                        help="label permutations of the information terms, each rerunning the "
                             "whole cross-fitted procedure (default: max(19, B // 5) with "
                             "--inference B, none without; 0: none)")
    parser.add_argument("--no-every-variant", action="store_true",
                        help="skip Figures 3/5/7 in every variant (logit, probability, paper "
                             "Eq. 14; scale mean and sum), drawn by default")
    parser.add_argument("--seed", type=nonneg_int, default=0,
                        help="random_state of the estimators")


def info_methods(values) -> tuple[str, ...]:
    """The estimators to run: ``none`` (alone or among others) or an empty list skips all."""
    values = tuple(values or ())
    return () if "none" in values else values


def run(args) -> int:
    import time

    from infodiv.commands.preflight import check_out, load_run
    from infodiv.commands.runfolder import record_stage
    from infodiv.reports.decomposition import decomposition_report

    contrib, _, root = load_run(args.run_dir)   # run folder or contributions/
    out = check_out(args.out or root / "decompositions")
    t0 = time.perf_counter()
    try:
        doc = decomposition_report(contrib, out, random_state=args.seed,
                                   info_methods=info_methods(args.info_method),
                                   inference=args.inference, info_null=args.info_null,
                                   every_variant=not args.no_every_variant)
    except BaseException:
        record_stage(root, "decompose", out, args, ok=False)
        raise
    record_stage(root, "decompose", out, args, ok=True, seconds=time.perf_counter() - t0)
    r = doc["run"]
    print(f"{out}: N={r['N']} M={r['M']} C={r['C']} accuracy={r['accuracy']:.4f}; "
          f"see decompositions.md")
    return 0
