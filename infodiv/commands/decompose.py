"""``infodiv decompose RUN_DIR``: every ensemble and information decomposition of one run.

Writes ``decompositions.json``, ``decompositions.md``, ``junction_curves.png`` and
``module_shares.png`` to ``--out`` (default ``RUN_DIR/decompositions``); see
:mod:`infodiv.decomposition_report`.
"""

from __future__ import annotations

from pathlib import Path


def configure(parser) -> None:
    parser.add_argument("run_dir", type=Path, help="Contributions run directory")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default RUN_DIR/decompositions)")
    parser.add_argument("--info-method", nargs="*", default=["gaussian", "copula"],
                        help="estimators for the information decomposition (none: skip)")
    parser.add_argument("--seed", type=int, default=0)


def run(args) -> int:
    from extraction.contributions import Contributions
    from infodiv.decomposition_report import decomposition_report

    contrib = Contributions.load(args.run_dir)
    out = args.out or args.run_dir / "decompositions"
    doc = decomposition_report(contrib, out, random_state=args.seed,
                               info_methods=tuple(args.info_method))
    r = doc["run"]
    print(f"{out}: N={r['N']} M={r['M']} C={r['C']} accuracy={r['accuracy']:.4f}; "
          f"see decompositions.md")
    return 0
