"""The depth grid's committed bundle: every file that recomputes each per-model record and the
page without the checkpoints (DESIGN.md 2.9).

A bundle is a folder of depth roots stripped of their weights (``docs/results/depth/bundle``)::

    CHECKSUMS.json                       sha256 of every other file of the bundle
    k<K>/depth.json                      the root's task and training settings
    k<K>/heldout.jsonl, heldout.task.json  the held-out task file (and heldout_mixed.*, the
                                         mixed held-out set, where the grid has one)
    k<K>/models/<name>/model/zoo.json    the training record, its loss log replaced by where
                                         the loss ended (``training``: restarts.plateau)
    k<K>/analysis/contributions/<name>/  the exact extraction on the held-out file
                                         (``arrays.npz`` + ``meta.json``; on the mixed set
                                         under ``contributions_mixed/``)

The contributions are the smaller of the two things that determine the analysis (a depth-8
model's weights are 1.3 MB, its contributions on 2000 prompts 0.5 MB, and they need no
extraction to be read). :func:`export_bundle` writes one from trained roots (after
``infodiv zoo depth-report`` has extracted them); :func:`reproduce` verifies every checksum and
reruns :func:`infodiv.experiments.depth_report.report_depth` on it, which reads the committed
contributions instead of extracting: the same per-model analysis, the same summary and page.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from extraction.contributions import sha256_file as _sha256
from extraction.outdir import MANIFEST

__all__ = ["CHECKSUMS", "export_bundle", "verify_bundle", "bundle_roots", "reproduce"]

CHECKSUMS = "CHECKSUMS.json"
_ROOT_FILES = ("depth.json", "heldout.jsonl", "heldout.task.json")
_MIXED_FILES = ("heldout_mixed.jsonl", "heldout_mixed.task.json")
_RUN_FILES = ("arrays.npz", "meta.json")


def _files(bundle: Path) -> list[str]:
    return sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*")
                  if p.is_file() and p.name != CHECKSUMS)


def _plan(roots) -> list[tuple]:
    """``(bundle path, source file or slim record)`` of every file of the bundle of
    ``roots``."""
    from .depth_report import ANALYSIS_DIR, _finished, training_outcome

    plan = []
    for root in roots:
        name = root.name
        for f in _ROOT_FILES + tuple(f for f in _MIXED_FILES if (root / f).is_file()):
            plan.append((f"{name}/{f}", root / f))
        kinds = ("contributions",) + (("contributions_mixed",)
                                      if (root / _MIXED_FILES[0]).is_file() else ())
        for folder in _finished(root):
            rec = json.loads((folder / "zoo.json").read_text())
            for kind in kinds:
                run = root / ANALYSIS_DIR / kind / rec["model"]
                missing = [f for f in _RUN_FILES if not (run / f).is_file()]
                if missing:
                    raise FileNotFoundError(f"{rec['model']}: {run} lacks "
                                            f"{', '.join(missing)}; run infodiv zoo "
                                            "depth-report on the root first")
                plan += [(f"{name}/{ANALYSIS_DIR}/{kind}/{rec['model']}/{f}", run / f)
                         for f in _RUN_FILES]
            slim = {k: v for k, v in rec.items() if k != "losses"}
            slim["training"] = training_outcome(rec)
            plan.append((f"{name}/models/{rec['model']}/model/zoo.json", slim))
    return plan


def export_bundle(roots, bundle, log=None) -> dict:
    """Write the bundle of every finished, extracted model of ``roots`` into ``bundle``
    (module docstring), with its manifest (:mod:`infodiv.outputs`); returns the checksums. A
    folder that is not empty must be a bundle the toolkit wrote: its own files are replaced
    (``log`` told which), a folder holding anything else is refused before any work."""
    from infodiv.outputs import read_manifest, staged_output

    from .depth_report import check_roots
    from .owned import BUNDLE

    roots, bundle = check_roots(roots), Path(bundle)
    if bundle.exists() and bundle.is_dir():
        listed = set((read_manifest(bundle) or {}).get("files") or {})
        other = [f for f in _files(bundle) if f not in listed and f != MANIFEST]
        if other:
            raise ValueError(f"--bundle {bundle} holds {len(other)} file(s) the bundle did not "
                             f"write (e.g. {other[0]}): not a bundle this toolkit wrote; move "
                             "them away or choose an empty folder")
    plan = _plan(roots)
    with staged_output(bundle, BUNDLE, flag="--bundle", log=log,
                       expect=[n for n, _ in plan] + [CHECKSUMS]) as tmp:
        for name, src in plan:
            if isinstance(src, dict):
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp / name).write_text(json.dumps(src, indent=1))
            else:
                _copy(src, tmp / name)
        sums = {f: _sha256(tmp / f) for f in _files(tmp)}
        (tmp / CHECKSUMS).write_text(json.dumps(sums, indent=1))
    return sums


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def verify_bundle(bundle) -> int:
    """Check every file of ``bundle`` against its manifest (:func:`infodiv.outputs.
    verify_folder`; a bundle written before manifests: against ``CHECKSUMS.json`` alone) and
    ``CHECKSUMS.json``; returns the number of files.

    Raises
    ------
    ValueError
        No checksum file, or files missing, changed or not listed (counted, the first named),
        with the command that rewrites the bundle.
    """
    from infodiv.outputs import read_manifest, verify_folder

    bundle = Path(bundle)
    path = bundle / CHECKSUMS
    redo = "rewrite it with `infodiv zoo depth-bundle ROOT ... --bundle " + f"{bundle}`"
    if not path.is_file():
        raise ValueError(f"--bundle {bundle}: no {CHECKSUMS} (not a depth bundle)")
    sums = json.loads(path.read_text())
    present = set(_files(bundle)) - {MANIFEST}
    missing = sorted(set(sums) - present)
    extra = sorted(present - set(sums))
    changed = sorted(f for f in set(sums) & present if _sha256(bundle / f) != sums[f])
    problems = [(n, what, ex) for n, what, ex in (
        (len(missing), "missing", missing), (len(changed), "changed", changed),
        (len(extra), "not listed", extra)) if n]
    if problems:
        raise ValueError(f"--bundle {bundle}: " + "; ".join(
            f"{n} file(s) {what} (e.g. {ex[0]})" for n, what, ex in problems)
            + f" against {CHECKSUMS}; nothing was recomputed; {redo}")
    if read_manifest(bundle) is not None:
        verify_folder(bundle, f"nothing was recomputed; {redo}")
    return len(sums)


def bundle_roots(bundle) -> list[Path]:
    """The depth roots of ``bundle`` (``k<K>`` folders), hardest first."""
    roots = [p for p in Path(bundle).glob("k*") if (p / "depth.json").is_file()]
    return sorted(roots, key=lambda p: -int(json.loads((p / "depth.json").read_text())
                                            ["hops_task"]["hops"]))


def reproduce(bundle, out, settings=None, *, work, planned=None, contrast=None,
              progress: bool = False, log=print, adopt: bool = False) -> dict:
    """Verify ``bundle`` and recompute every per-model analysis (into ``work``), the summary
    and the page (into ``out``) from it alone; returns the summary."""
    from .depth_report import PLANNED, report_depth

    n = verify_bundle(bundle)
    log(f"{bundle}: {n} files match {CHECKSUMS}")
    return report_depth(bundle_roots(bundle), out, settings, planned=planned or PLANNED,
                        contrast=contrast, progress=progress, log=log, work=work,
                        from_contributions=True, adopt=adopt)
