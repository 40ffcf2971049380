"""``infodiv curves RUN_DIR``: layer-addition curves, the verdicts of the paper's claims, layer
graph.

Maps its options to a :class:`~infodiv.study.settings.StudySettings` and calls
:func:`infodiv.study.curves.curves_stage`, which writes ``report.json``, ``report.md`` and the
figures to ``--out`` (default ``RUN_DIR/curves``) through the folder's manifest
(:mod:`infodiv.outputs`): only its own earlier files are replaced, and the command says which;
a file of anyone else's in the way, a folder holding another command's output or a run folder
itself is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.options import (
    add_curves_options,
    add_inference_options,
    add_seed_option,
    add_selection_options,
    study_settings,
)


def configure(parser) -> None:
    parser.add_argument("run_dir", help="run folder (infodiv run) or Contributions directory")
    parser.add_argument("--out", default=None, help="output folder (default RUN_DIR/curves)")
    add_curves_options(parser)
    add_inference_options(parser)
    add_selection_options(parser)
    add_seed_option(parser)


def stage_out(out, root: Path, sub: str) -> tuple[Path, bool]:
    """``(folder, own)``: where a stage of the run ``root`` writes (``--out``, default
    ``root/sub``) and whether that is the run's own stage folder (whose damaged files the
    stage then replaces); UserError for an ``--out`` that is a run folder or an extraction
    itself (its stage outputs go in their own folders)."""
    from infodiv.runfiles import RUN_FILE, UserError

    own = root / sub
    target = Path(out) if out is not None else own
    if (target / RUN_FILE).is_file() or (target / "meta.json").is_file():
        raise UserError(f"--out {target} is a run folder or an extraction; give a folder of "
                        f"its own (default {own})")
    return target, target.resolve() == own.resolve()


def run(args) -> int:
    import time

    from infodiv.reports.curves_md import verdict_summary
    from infodiv.runfiles import StageFailed, load_run
    from infodiv.study.checks import check_out
    from infodiv.study.curves import curves_stage
    from infodiv.study.runfolder import record_stage

    contrib, _, root = load_run(args.run_dir)   # run folder or contributions/
    out, own = stage_out(args.out, root, "curves")
    out = check_out(out)
    settings = study_settings(args)
    t0 = time.perf_counter()
    try:
        doc = curves_stage(contrib, out, settings, run_dir=args.run_dir, replace_changed=own)
    except BaseException:
        record_stage(root, "curves", out, settings, ok=False)
        raise
    failed = {name: res["error"] for name, res in (doc.get("objectives") or {}).items()
              if isinstance(res, dict) and "error" in res}
    record_stage(root, "curves", out, settings, ok=not failed,
                 seconds=time.perf_counter() - t0)
    if failed:
        name, why = next(iter(failed.items()))
        raise StageFailed(f"curves failed: objective {name}: {' '.join(str(why).split())}"
                          + (f" (and {len(failed) - 1} more objective(s))"
                             if len(failed) > 1 else "") + f"; see {out}/report.json")
    for line in verdict_summary(doc):
        print(line)
    print(f"infodiv curves: wrote {out}/report.json, report.md and figures")
    return 0
