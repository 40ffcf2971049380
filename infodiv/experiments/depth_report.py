"""``infodiv zoo depth-report``: analyse every finished model of one or more depth roots and
write the grid's summary and page (DESIGN.md 2.9).

A depth root is a folder written by ``infodiv zoo train --task hops``
(:mod:`infodiv.experiments.depth`: ``depth.json``, ``heldout.jsonl`` + ``heldout.task.json``,
``models/<name>/``). For every root:

- the inventory (:func:`inventory`): every model of the planned grid (``planned``: depths,
  shared depths, seeds, width) and any other model folder, each ``finished`` (``model/zoo.json``),
  ``training`` (a ``state.pt`` checkpoint: its step) or ``not started``;
- every finished model analysed on the root's held-out file
  (:func:`infodiv.experiments.depth_analysis.analyse_model`) into ``<root>/analysis/``
  (contributions and one JSON per model; a model already analysed with the same settings is reused,
  and the run says how many were);
- every finished model's training outcome read from its ``zoo.json`` (:func:`training_outcome`):
  did its training loss leave the chance plateau ln(#options)? A model whose loss never left it
  is an optimisation failure of the recipe, not a statement about what its depth can represent;

then, across all roots, :func:`infodiv.experiments.depth_across.summarise` and the page
(:mod:`infodiv.experiments.depth_page`): ``<out>/summary.json``, ``<out>/README.md`` and its
figures. Nothing is written into a root except ``<root>/analysis/``. Both folders carry a
manifest (:mod:`infodiv.experiments.owned`): a file of someone else's with one of their names
is refused before any work, a rerun replaces only the toolkit's own files and says which, and
a stored analysis edited since is recomputed and the log says so.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .configs import planned_names
from .depth import HELDOUT_FILE, SETTINGS, read_mixed
from .depth_analysis import (
    ANALYSIS_VERSION,
    DepthSettings,
    analyse_model,
    analyse_run,
    mixed_hops,
)
from .restarts import PLATEAU_SHARE, plateau

__all__ = ["PLANNED", "PLATEAU_SHARE", "PAGE_FILES", "check_roots", "inventory",
           "training_outcome", "analyse_root", "contrast_rows", "report_depth", "rewrite_page"]

#: the grid of scripts/depth_experiment.sh: unshared depths, shared-twin depths, seeds, width
PLANNED = {"depths": (8, 6, 4, 3, 2, 1), "shared_depths": (4, 2), "seeds": (0, 1, 2),
           "width": 64}
ANALYSIS_DIR = "analysis"
#: the page's files in ``--out``
PAGE_FILES = ("summary.json", "README.md", "depth.png", "truncated.png")


def check_roots(roots) -> list[Path]:
    """The roots as paths; ValueError (one line) for a missing folder, a folder that is no
    depth root (no ``depth.json``) or one without a held-out file; FileNotFoundError when no
    root holds a finished model."""
    if not roots:
        raise ValueError("give at least one depth root (e.g. runs/depth/k2)")
    out = []
    for root in map(Path, roots):
        if not root.is_dir():
            raise ValueError(f"{root}: no such folder (a depth root written by infodiv zoo "
                             "train --task hops)")
        for need in (SETTINGS, HELDOUT_FILE, "heldout.task.json"):
            if not (root / need).is_file():
                raise ValueError(f"{root} is not a depth root: it has no {need}")
        out.append(root)
    if not any(_finished(r) for r in out):
        raise FileNotFoundError(f"no finished model under {', '.join(map(str, out))} "
                                "(models/*/model/zoo.json)")
    return out


def _finished(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.glob("models/*/model/zoo.json"))


def _step(state_path: Path) -> int | None:
    import torch

    try:
        return int(torch.load(state_path, weights_only=False, map_location="cpu")["step"])
    except Exception:   # a checkpoint being replaced right now: its step is unknown
        return None


def inventory(root, planned=PLANNED) -> list[dict]:
    """``{"model", "status", "step", "steps"}`` for every planned model of ``root`` and every
    other model folder in it (module docstring)."""
    root = Path(root)
    steps = json.loads((root / SETTINGS).read_text())["train"]["steps"]
    names = planned_names(**planned)
    names += sorted(p.name for p in root.glob("models/*") if p.name not in names)
    rows = []
    for name in names:
        folder = root / "models" / name
        if (folder / "model" / "zoo.json").is_file():
            rec = json.loads((folder / "model" / "zoo.json").read_text())
            rows.append({"model": name, "status": "finished", "step": rec.get("step"),
                         "steps": steps})
        elif (folder / "state.pt").is_file():
            rows.append({"model": name, "status": "training",
                         "step": _step(folder / "state.pt"), "steps": steps})
        else:
            rows.append({"model": name, "status": "not started", "step": 0, "steps": steps})
    return rows


def training_outcome(record: dict) -> dict | None:
    """Where a finished model's training loss ended, from its ``zoo.json`` ``record``
    (:func:`infodiv.experiments.restarts.plateau` over the last 1% of the steps): ``final_loss``
    (mean answer-token cross-entropy, nats) against ``chance_loss`` = ln(#options) and
    ``on_plateau``; with the restart rule, ``attempts`` (how many initialisations it took) and
    ``init_seed``. A bundle's record keeps this outcome instead of its loss log
    (``training``); ``None`` when the record keeps neither."""
    if not record.get("losses") and record.get("training") is not None:
        return record["training"]
    out = plateau(record.get("losses") or [], len(record.get("option_ids") or []))
    if out is not None and record.get("attempts") is not None:
        out.update(attempts=1 + sum(bool(a["restarted"]) for a in record["attempts"]),
                   init_seed=record.get("init_seed"))
    return out


def _stored_settings_match(path: Path, settings: DepthSettings) -> bool:
    from .owned import own_json

    key = (own_json(path) or {}).get("key") or {}
    return key.get("version") == ANALYSIS_VERSION and key.get("settings") == asdict(settings)


def analyse_root(root: Path, settings: DepthSettings, *, progress=False, log=print,
                 dest: Path | None = None, from_contributions: bool = False) -> list:
    """Every finished model of ``root`` analysed (or reused) into ``dest`` (default
    ``<root>/analysis``); returns the analyses. ``from_contributions``: the root is a committed
    bundle (:mod:`infodiv.experiments.depth_bundle`): each model's contributions are read from
    ``<root>/analysis/contributions/<name>`` instead of being extracted from its checkpoint."""
    from .hops import read_task_file
    from .intervals import shared_indices

    hops_task = json.loads((root / SETTINGS).read_text())["hops_task"]
    held = read_task_file(root / HELDOUT_FILE, name=f"hops{hops_task['hops']}")
    indices = shared_indices(held.labels, settings.resamples,
                             random_state=settings.random_state)
    majority = float(np.bincount(held.labels).max() / len(held.labels))
    mixed = read_mixed(root)
    folders = _finished(root)
    dest = root / ANALYSIS_DIR if dest is None else Path(dest)
    done = sum(_stored_settings_match(dest / f"{f.parent.name}.json", settings)
               for f in folders)
    if done:
        log(f"{root}: resuming ({done} of {len(folders)} finished model(s) already analysed "
            "with these settings)")
    else:
        log(f"{root}: analysing {len(folders)} finished model(s)")
    out = []
    for i, folder in enumerate(folders):
        t0 = time.process_time()
        record = json.loads((folder / "zoo.json").read_text())
        if from_contributions:
            from extraction import Contributions

            base = root / ANALYSIS_DIR
            run = Contributions.load(base / "contributions" / record["model"])
            extra = None if mixed is None else (
                Contributions.load(base / "contributions_mixed" / record["model"]),
                mixed_hops(mixed))
            doc, reused = analyse_run(run, record, dest, settings, hops_task, indices,
                                      progress=progress, log=log, mixed=extra)
        else:
            doc, reused = analyse_model(folder, held, dest, settings, hops_task, indices,
                                        progress=progress, log=log, mixed=mixed)
        doc = {**doc, "majority": majority, "training": training_outcome(record)}
        word = ("already analysed, reused" if reused
                else f"analysed in {time.process_time() - t0:.0f} CPU s")
        log(f"[{i + 1}/{len(folders)}] {doc['model']['model']}: {word}")
        out.append(doc)
    return out


def report_depth(roots, out, settings: DepthSettings | None = None, *, planned=PLANNED,
                 planned_hops=(), contrast=None, progress: bool = False, log=print,
                 work: Path | None = None, from_contributions: bool = False,
                 adopt: bool = False) -> dict:
    """Analyse every finished model of ``roots`` and write ``out/summary.json``, the figures and
    ``out/README.md`` (module docstring); returns the summary. ``contrast``: the AG News zoo's
    ``summary.json`` (its unshared models' seed-mean accuracy per depth goes on the page).
    ``planned_hops``: difficulties of the experiment; those without a root among ``roots`` are
    listed on the page with all their planned models not started. ``work``: where the
    per-model analyses go (``<work>/<root name>``; default each root's ``analysis/``);
    ``from_contributions``: the roots are bundle roots (:func:`analyse_root`). ``adopt``:
    files of the page's and the analyses' names written before manifests are taken as the
    toolkit's (:func:`infodiv.experiments.owned.adopt_files`)."""
    from infodiv.outputs import check_conflicts

    from .depth_across import summarise
    from .owned import DEPTH, adopt_files, check_owned

    settings = settings or DepthSettings()
    roots = check_roots(roots)
    contrast = None if contrast is None else contrast_rows(contrast)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    dests = {root: root / ANALYSIS_DIR if work is None else Path(work) / root.name
             for root in roots}
    checks = [(out, PAGE_FILES)] + [(dests[r], [f"{f.parent.name}.json" for f in _finished(r)])
                                    for r in roots]
    for folder, names in checks if adopt else ():
        adopt_files(folder, names, DEPTH, log=log)
    check_conflicts(out, DEPTH, PAGE_FILES)         # before any work
    for folder, names in checks[1:]:
        check_owned(folder, names, DEPTH, flag="analysis folder")
    analyses, status, setup = [], {}, {}
    for root in roots:
        analyses += analyse_root(root, settings, progress=progress, log=log, dest=dests[root],
                                 from_contributions=from_contributions)
        doc = json.loads((root / SETTINGS).read_text())
        hops = str(doc["hops_task"]["hops"])
        status[hops] = inventory(root, planned)
        setup[hops] = {"root": str(root), **doc}
    summary = summarise(analyses)
    summary.update(settings=asdict(settings), planned={k: list(v) if isinstance(v, tuple)
                                                       else v for k, v in planned.items()},
                   status=status, setup=setup, model_config=_architecture(roots),
                   pending_hops=sorted({int(h) for h in planned_hops} - {int(h) for h in status},
                                       reverse=True),
                   contrast=contrast)
    _write_page(summary, out, log)
    return summary


def _write_page(summary: dict, out: Path, log) -> None:
    """``summary.json``, the figures and ``README.md`` into ``out``, over the toolkit's own
    files only (:func:`infodiv.outputs.staged_output`)."""
    from infodiv.outputs import staged_output
    from infodiv.reports.serialize import write_json

    from .depth_page import write_page
    from .owned import DEPTH

    with staged_output(out, DEPTH, log=log, expect=PAGE_FILES) as tmp:
        write_json(tmp / "summary.json", summary)
        write_page(summary, tmp)


def rewrite_page(out, *, adopt: bool = False, log=print) -> dict:
    """Recompute what the model records of ``out/summary.json`` alone determine
    (:func:`infodiv.experiments.depth_seeds.refresh`: model states, t intervals over seeds, the
    step law, the gap regression's influence), write it back and redraw ``out/README.md`` and
    the figures; no model is needed. Returns the summary. The summary is read only as the
    toolkit wrote it (:func:`infodiv.outputs.read_verified_json`; UserError otherwise, with
    the command that recomputes it); ``adopt``: :func:`report_depth`'s."""
    from infodiv.outputs import check_conflicts, read_verified_json

    from .depth_seeds import refresh
    from .owned import DEPTH, adopt_files

    out = Path(out)
    path = out / "summary.json"
    if not path.is_file():
        raise ValueError(f"--out {out}: no summary.json there (written by zoo depth-report)")
    if adopt:
        adopt_files(out, PAGE_FILES, DEPTH, log=log)
    summary = read_verified_json(path, f"recompute it with `infodiv zoo depth-report ROOT ... "
                                       f"--out {out}`")
    check_conflicts(out, DEPTH, PAGE_FILES)
    try:
        summary = refresh(summary)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a depth-grid summary ({type(exc).__name__}: {exc})") \
            from None
    _write_page(summary, out, log)
    return summary


def contrast_rows(path) -> list[dict]:
    """Seed-mean held-out accuracy per depth of the unshared models of a zoo ``summary.json``
    (a task one block solves: the contrast of the depth grid)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--contrast {path}: no such file (a zoo summary.json)")
    rows = {}
    for r in json.loads(path.read_text()):
        if r.get("width") is not None and not r.get("shared"):
            rows.setdefault(int(r["depth"]), []).append(float(r["accuracy"]))
    return [{"depth": d, "n": len(a), "accuracy": sum(a) / len(a)}
            for d, a in sorted(rows.items())]


def _architecture(roots) -> dict:
    """Width, heads, MLP width, context and initialiser of the first finished model."""
    rec = json.loads((_finished(next(r for r in roots if _finished(r)))[0] / "zoo.json")
                     .read_text())
    from .configs import ModelSpec

    out = {k: rec.get(k) for k in ("width", "heads", "mlp", "max_len", "init_std")}
    if out["init_std"] is None:     # left out of the record at the default
        out["init_std"] = ModelSpec(1).init_std
    return out
