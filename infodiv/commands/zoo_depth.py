"""``infodiv zoo depth-report|depth-page|depth-bundle|depth-reproduce``: the pointer-chasing depth
grid's analysis, page, committed bundle and its reproduction (DESIGN.md 2.9).

``depth-report ROOT [ROOT ...]`` analyses every finished model of depth roots
(:mod:`infodiv.experiments.depth_report`) and writes ``--out`` (``summary.json``, ``README.md``,
figures); ``depth-page`` recomputes what the summary's records alone determine and redraws the
page; ``depth-bundle`` writes the committed bundle (contributions, records, held-out files,
checksums: :mod:`infodiv.experiments.depth_bundle`) and ``depth-reproduce`` recomputes every
per-model record and the page from it, without the checkpoints.
"""

from __future__ import annotations

from pathlib import Path

from .fields import add_fields, fields_of

__all__ = ["DEPTH_OPTIONS", "configure_depth", "add_adopt", "HANDLERS"]

#: ``zoo depth-report`` options: the :class:`~infodiv.experiments.depth_analysis.DepthSettings`
#: field each one sets, with its help
DEPTH_OPTIONS = {
    "n_bootstrap": "B example resamples of the claims (everything refitted)",
    "n_permutations": "K label permutations of the claims' null (>= 39)",
    "n_power": "surrogates of each kind for power and shuffled-label rates (0 skips)",
    "n_orders": "random member orders per replicate",
    "n_triples": "nested chains of the DR claims",
    "report_resamples": "B = K of the Theorem 8 report",
    "resamples": "example resamples shared by the models of a root (intervals across models)",
    "objective": "set function of the claims",
    "random_state": "random_state of every resampling",
}


def add_adopt(p) -> None:
    """``--adopt``: results written before manifests are taken as the toolkit's
    (:func:`infodiv.experiments.owned.adopt_files`)."""
    p.add_argument("--adopt", action="store_true",
                   help="take the files this command writes that --out (and the per-model "
                        "folders) already hold without a manifest entry as the toolkit's: "
                        "results written before manifests; a file git tracks must be "
                        "unchanged against HEAD")


def _configure_depth_report(p, roots: bool = True) -> None:
    from infodiv.experiments.depth_analysis import DepthSettings

    if roots:
        p.add_argument("roots", type=Path, nargs="+",
                       help="depth roots written by 'infodiv zoo train --task hops' "
                            "(e.g. runs/depth/k2 runs/depth/k1)")
    p.add_argument("--out", type=Path, default=Path("docs/results/depth"),
                   help="folder of summary.json, README.md and the figures")
    add_fields(p, DepthSettings, DEPTH_OPTIONS, flags={"random_state": "--seed"})
    p.add_argument("--depths", type=int, nargs="*", default=[8, 6, 4, 3, 2, 1],
                   help="planned unshared depths (listed as not started until they exist)")
    p.add_argument("--shared-depths", type=int, nargs="*", default=[4, 2],
                   help="planned shared-twin depths")
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2], help="planned seeds")
    p.add_argument("--width", type=int, default=64, help="planned width")
    p.add_argument("--planned-hops", type=int, nargs="*", default=[],
                   help="difficulties K of the experiment; those without a root here are "
                        "listed as not started")
    p.add_argument("--contrast", type=Path, default=None,
                   help="the AG News zoo's summary.json, summarised on the page")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_adopt(p)



def configure_depth(sub) -> None:
    """The depth subcommands on the ``infodiv zoo`` subparsers ``sub``."""
    _configure_depth_report(sub.add_parser(
        "depth-report", help="analyse the finished models of depth roots, write the page"))
    bundle = sub.add_parser("depth-bundle", help="write the committed bundle of depth roots "
                                                 "(contributions, records, held-out files, "
                                                 "checksums)")
    bundle.add_argument("roots", type=Path, nargs="+", help="analysed depth roots")
    bundle.add_argument("--bundle", type=Path, default=Path("docs/results/depth/bundle"),
                        help="the bundle folder")
    repro = sub.add_parser("depth-reproduce", help="recompute every per-model record and the "
                                                   "page from the committed bundle")
    repro.add_argument("--bundle", type=Path, default=Path("docs/results/depth/bundle"),
                       help="the bundle folder (checked against its CHECKSUMS.json first)")
    repro.add_argument("--work", type=Path, default=Path("runs/depth-reproduce"),
                       help="where the per-model analyses go")
    _configure_depth_report(repro, roots=False)
    page = sub.add_parser("depth-page", help="recompute what a depth summary.json's records "
                                             "determine and redraw its page (no models needed)")
    page.add_argument("--out", type=Path, default=Path("docs/results/depth"),
                      help="folder of summary.json, README.md and the figures")
    add_adopt(page)


def _depth_report(args) -> int:
    from infodiv.experiments.depth_analysis import DepthSettings
    from infodiv.experiments.depth_report import report_depth

    settings = fields_of(args, DepthSettings, DEPTH_OPTIONS)
    planned = {"depths": tuple(args.depths), "shared_depths": tuple(args.shared_depths),
               "seeds": tuple(args.seeds), "width": args.width}
    summary = report_depth(args.roots, args.out, settings, planned=planned,
                           planned_hops=args.planned_hops, contrast=args.contrast,
                           progress=not args.quiet, log=lambda m: print(m, flush=True),
                           adopt=args.adopt)
    for r in summary["records"]:
        found = [k for k, v in r["verdicts"].items() if v["finding"]]
        print(f"{r['model']} (K = {r['hops']}): accuracy {r['accuracy']:.4f}, I(U;Y) "
              f"{r['usable_information']['estimate']:.3f} bits, findings: "
              f"{', '.join(found) or 'none'}")
    print(f"{args.out}: {len(summary['records'])} model(s) in summary.json and README.md")
    return 0


def _depth_bundle(args) -> int:
    from infodiv.experiments.depth_bundle import export_bundle

    sums = export_bundle(args.roots, args.bundle, log=lambda m: print(m, flush=True))
    size = sum((args.bundle / f).stat().st_size for f in sums)
    print(f"{args.bundle}: {len(sums)} files, {size / 1e6:.1f} MB, checksums in CHECKSUMS.json")
    return 0


def _depth_reproduce(args) -> int:
    from infodiv.experiments.depth_analysis import DepthSettings
    from infodiv.experiments.depth_bundle import reproduce

    settings = fields_of(args, DepthSettings, DEPTH_OPTIONS)
    planned = {"depths": tuple(args.depths), "shared_depths": tuple(args.shared_depths),
               "seeds": tuple(args.seeds), "width": args.width}
    summary = reproduce(args.bundle, args.out, settings, work=args.work, planned=planned,
                        contrast=args.contrast, progress=not args.quiet,
                        log=lambda m: print(m, flush=True), adopt=args.adopt)
    print(f"{args.out}: {len(summary['records'])} model record(s) recomputed from {args.bundle}")
    return 0


def _depth_page(args) -> int:
    from infodiv.experiments.depth_report import rewrite_page

    summary = rewrite_page(args.out, adopt=args.adopt, log=lambda m: print(m, flush=True))
    print(f"{args.out}: README.md redrawn from the {len(summary['records'])} model records of "
          "summary.json")
    return 0



HANDLERS = {"depth-report": _depth_report, "depth-page": _depth_page,
            "depth-bundle": _depth_bundle, "depth-reproduce": _depth_reproduce}
