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
import os
import shutil
from pathlib import Path

from extraction.contributions import sha256_file as _sha256

__all__ = ["CHECKSUMS", "export_bundle", "verify_bundle", "bundle_roots", "reproduce"]

CHECKSUMS = "CHECKSUMS.json"
_ROOT_FILES = ("depth.json", "heldout.jsonl", "heldout.task.json")
_MIXED_FILES = ("heldout_mixed.jsonl", "heldout_mixed.task.json")
_RUN_FILES = ("arrays.npz", "meta.json")


def _files(bundle: Path) -> list[str]:
    return sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*")
                  if p.is_file() and p.name != CHECKSUMS)


def export_bundle(roots, bundle) -> dict:
    """Write the bundle of every finished, extracted model of ``roots`` into ``bundle``
    (module docstring); returns the checksums. A folder that is not empty must be a bundle
    (hold ``CHECKSUMS.json``): its listed files are replaced, anything else is refused."""
    from .depth_report import ANALYSIS_DIR, _finished, check_roots, training_outcome

    roots, bundle = check_roots(roots), Path(bundle)
    if bundle.exists() and any(bundle.iterdir()):
        if not (bundle / CHECKSUMS).is_file():
            raise ValueError(f"--bundle {bundle} holds files and no {CHECKSUMS}: not a bundle "
                             "this toolkit wrote; choose an empty folder")
        listed = set(json.loads((bundle / CHECKSUMS).read_text()))
        other = [f for f in _files(bundle) if f not in listed]
        if other:
            raise ValueError(f"--bundle {bundle} holds {len(other)} file(s) the bundle did not "
                             f"write (e.g. {other[0]}); move them away first")
        shutil.rmtree(bundle)
    for root in roots:
        name = root.name
        for f in _ROOT_FILES + tuple(f for f in _MIXED_FILES if (root / f).is_file()):
            _copy(root / f, bundle / name / f)
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
                for f in _RUN_FILES:
                    _copy(run / f, bundle / name / ANALYSIS_DIR / kind / rec["model"] / f)
            slim = {k: v for k, v in rec.items() if k != "losses"}
            slim["training"] = training_outcome(rec)
            dest = bundle / name / "models" / rec["model"] / "model" / "zoo.json"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(json.dumps(slim, indent=1))
    sums = {f: _sha256(bundle / f) for f in _files(bundle)}
    (bundle / CHECKSUMS).write_text(json.dumps(sums, indent=1))
    return sums


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def verify_bundle(bundle) -> int:
    """Check every file of ``bundle`` against ``CHECKSUMS.json``; returns the number of files.

    Raises
    ------
    ValueError
        No checksum file, or files missing, changed or not listed (counted, the first named).
    """
    bundle = Path(bundle)
    path = bundle / CHECKSUMS
    if not path.is_file():
        raise ValueError(f"--bundle {bundle}: no {CHECKSUMS} (not a depth bundle)")
    sums = json.loads(path.read_text())
    present = set(_files(bundle))
    missing = sorted(set(sums) - present)
    extra = sorted(present - set(sums))
    changed = sorted(f for f in set(sums) & present if _sha256(bundle / f) != sums[f])
    problems = [(n, what, ex) for n, what, ex in (
        (len(missing), "missing", missing), (len(changed), "changed", changed),
        (len(extra), "not listed", extra)) if n]
    if problems:
        raise ValueError(f"--bundle {bundle}: " + "; ".join(
            f"{n} file(s) {what} (e.g. {ex[0]})" for n, what, ex in problems)
            + f" against {CHECKSUMS}; nothing was recomputed")
    return len(sums)


def bundle_roots(bundle) -> list[Path]:
    """The depth roots of ``bundle`` (``k<K>`` folders), hardest first."""
    roots = [p for p in Path(bundle).glob("k*") if (p / "depth.json").is_file()]
    return sorted(roots, key=lambda p: -int(json.loads((p / "depth.json").read_text())
                                            ["hops_task"]["hops"]))


def reproduce(bundle, out, settings=None, *, work, planned=None, contrast=None,
              progress: bool = False, log=print) -> dict:
    """Verify ``bundle`` and recompute every per-model analysis (into ``work``), the summary
    and the page (into ``out``) from it alone; returns the summary."""
    from .depth_report import PLANNED, report_depth

    n = verify_bundle(bundle)
    log(f"{bundle}: {n} files match {CHECKSUMS}")
    return report_depth(bundle_roots(bundle), out, settings, planned=planned or PLANNED,
                        contrast=contrast, progress=progress, log=log, work=work,
                        from_contributions=True)
