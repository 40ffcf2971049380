"""``infodiv report RUN_DIR...``: rebuild the HTML report from existing run folders.

Accepts the folders ``infodiv run`` made (or their ``contributions/``); nothing is recomputed.
Every stage file is read only when its folder's manifest lists it with this sha256
(:mod:`infodiv.outputs`), with or without ``run.json``: a missing, edited or truncated file is
refused in one line with the command that recomputes it, before any page is written.
One run: ``RUN_DIR/report.html`` by default; several: ``--out``, by default
``report.html`` in a folder named after the runs beside the first of them
(:func:`combined_folder`), covering all of them. ``.json``, ``.csv`` and the cross-run
figures go beside it. A page written into a folder goes through that folder's manifest
(replacing only the toolkit's own earlier page, a user's file of those names refused); a page
named as a file (``--out page.html``) that exists, or whose ``.json`` / ``.csv`` exist, is
replaced only with ``--overwrite``.
"""

from __future__ import annotations

from pathlib import Path


def configure(parser) -> None:
    parser.add_argument("run_dir", nargs="+", type=Path, help="run folders made by infodiv run")
    parser.add_argument("--out", type=Path, default=None,
                        help="HTML file, or a folder to hold report.html and its .json/.csv "
                             "(refused where they would replace files there) (default: "
                             "RUN_DIR/report.html for one run; for several, report.html in a "
                             "folder named after the runs beside the first); a name without "
                             "a suffix gets .html")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing --out page (and its .json/.csv beside it); "
                             "without it an existing file named by --out is refused")


def combined_folder(roots) -> Path:
    """``<parent of the first run>/report-<run1>+<run2>...``; names beyond 120 characters are
    cut and followed by a hash of the full list, so two different lists never share a folder."""
    import hashlib

    name = "report-" + "+".join(r.name for r in roots)
    if len(name) > 120:
        digest = hashlib.sha256(name.encode()).hexdigest()[:10]
        name = f"{name[:108]}-{digest}"
    return roots[0].parent / name


def html_target(out: Path) -> Path:
    """Where ``--out`` writes the page: a folder gets ``report.html`` inside it, a name
    without a suffix gets ``.html``, an ``.html`` path is used as it is."""
    if out.is_dir():
        return out / "report.html"
    return out if out.suffix else out.with_suffix(".html")


def run(args) -> int:
    import shlex

    from infodiv.reports.html import write_report
    from infodiv.reports.summary import print_summary
    from infodiv.runfiles import UserError, load_run, reextract
    from infodiv.study.checks import check_out
    from infodiv.study.pipeline import write_page
    from infodiv.study.runfolder import verify_files

    roots = []
    for path in args.run_dir:
        root = load_run(path)[2]   # refuses a corrupt run with the re-extract advice
        if not (root / "decompositions").is_dir() and not (root / "curves").is_dir():
            raise UserError(f"{path} has no decompositions/ or curves/ yet; run `infodiv "
                            f"decompose {path}` and `infodiv curves {path}` first")
        for stage, problem in verify_files(root):
            repair = (reextract(root / "contributions", root, None) if stage == "extract" else
                      f"recompute it with `infodiv {stage} {shlex.quote(str(root))}`")
            raise UserError(f"{root}: {problem}; {repair}")
        roots.append(root)
    out = args.out or (roots[0] / "report.html" if len(roots) == 1
                       else combined_folder(roots) / "report.html")
    out = html_target(out)
    if args.out is not None and not args.out.is_dir():
        # a page the user named: neither it nor the .json/.csv beside it is replaced silently
        taken = [p.name for p in (out, out.with_suffix(".json"), out.with_suffix(".csv"))
                 if p.exists()]
        if taken and not args.overwrite:
            raise UserError(f"--out {args.out}: {len(taken)} file(s) exist ({', '.join(taken)}); "
                            "add --overwrite to replace them or give another name")
        check_out(out.parent if str(out.parent) else Path("."), "--out")
        page = write_report(roots, out)
        if taken:
            print(f"infodiv report: replaced {', '.join(taken)} (--overwrite)")
    else:
        # a folder: through its manifest (a run's own page, a folder the toolkit named, or a
        # folder of the user's, where only the toolkit's own earlier page is replaced)
        own = args.out is None or args.out.resolve() in {r.resolve() for r in roots}
        check_out(out.parent, "--out")
        page = write_page(roots, out, log=print, own=own)
    for root in roots:
        print_summary(root, page)
    return 0
