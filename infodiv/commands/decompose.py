"""``infodiv decompose RUN_DIR``: every ensemble and information decomposition of one run.

Maps its options to a :class:`~infodiv.study.settings.StudySettings` and calls
:func:`infodiv.study.pipeline.decompose_stage`, which writes ``decompositions.json``,
``decompositions.md``, ``junction_curves.png`` and ``module_shares.png`` to ``--out`` (default
``RUN_DIR/decompositions``) through the folder's manifest (:mod:`infodiv.outputs`): only its own
earlier files are replaced, and the command says which; a file of anyone else's in the way, a
folder holding another command's output or a run folder itself is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

from infodiv.commands.options import add_decompose_options, add_seed_option, study_settings


def configure(parser) -> None:
    parser.add_argument("run_dir", type=Path,
                        help="run folder (infodiv run) or Contributions directory")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default RUN_DIR/decompositions)")
    add_decompose_options(parser, flag="--inference")
    add_seed_option(parser)


def run(args) -> int:
    import time

    from infodiv.commands.curves import stage_out
    from infodiv.runfiles import load_run
    from infodiv.study.checks import check_out
    from infodiv.study.pipeline import decompose_stage
    from infodiv.study.runfolder import record_stage

    contrib, _, root = load_run(args.run_dir)   # run folder or contributions/
    out, own = stage_out(args.out, root, "decompositions")
    out = check_out(out)
    settings = study_settings(args)
    t0 = time.perf_counter()
    try:
        doc = decompose_stage(contrib, out, settings, log=print, replace_changed=own)
    except BaseException:
        record_stage(root, "decompose", out, settings, ok=False)
        raise
    record_stage(root, "decompose", out, settings, ok=True, seconds=time.perf_counter() - t0)
    r = doc["run"]
    print(f"{out}: N={r['N']} M={r['M']} C={r['C']} accuracy={r['accuracy']:.4f}; "
          f"see decompositions.md")
    return 0
