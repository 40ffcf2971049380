"""Training a pointer-chasing depth grid under one root folder (resumable; DESIGN.md 2.9).

Layout of ``root`` (e.g. ``runs/depth/k4``, git-ignored)::

    depth.json            the task (:class:`infodiv.experiments.hops.HopsTask`) and training config;
                          a rerun with other settings is refused
    tokenizer/            the task's fixed word-level tokenizer
    heldout.jsonl         the held-out examples as a task file (+ heldout.task.json: template,
                          options, label field), readable by ``infodiv extract --task-file``
    models/<name>/        state.pt while training, model/ when finished (as the AG News zoo)
    analysis/             written by ``infodiv zoo depth-report``
                          (:mod:`infodiv.experiments.depth_report`):
                          contributions and one analysis JSON per finished model

Every model trains on its own seeded stream (:class:`infodiv.experiments.hops.HopsStream`) with the
held-out keys excluded, and is scored on the held-out file at the end.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["SETTINGS", "HELDOUT_FILE", "MIXED_FILE", "prepare_depth_root", "train_depth",
           "read_mixed"]

SETTINGS = "depth.json"
HELDOUT_FILE = "heldout.jsonl"
MIXED_FILE = "heldout_mixed.jsonl"


def _settings(task, cfg, rule=None) -> dict:
    out = {"task": "hops", "hops_task": task.to_dict(), "train": cfg.to_dict()}
    if rule is not None:     # the restart rule is part of the recipe every model shares
        out["restart_rule"] = rule.to_dict()
    return out


def prepare_depth_root(root, task, cfg, rule=None):
    """Create or check ``root``: settings, tokenizer and held-out file. Returns
    ``(tokenizer, stream, heldout_task)``; the held-out task is read back from the file
    through the toolkit's task-file reader.

    Raises
    ------
    ValueError
        ``root`` holds a grid made with different settings (the message names the keys), or
        its held-out file differs from the one the settings generate.
    """
    from .hops import (
        HopsStream,
        heldout_examples,
        hops_tokenizer,
        mixed_heldout_examples,
        read_task_file,
        write_task_file,
    )
    from .runner import load_tokenizer

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    want = _settings(task, cfg, rule)
    path = root / SETTINGS
    if path.is_file():
        have = json.loads(path.read_text())
        diff = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        if diff:
            raise ValueError(f"{root} holds a depth grid with different settings "
                             f"({', '.join(diff)}); use another --root or the same settings")
    else:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(want, indent=1))
        os.replace(tmp, path)
    if not (root / "tokenizer").is_dir():
        tmp = root / f".tokenizer.{os.getpid()}"
        hops_tokenizer(task.symbols).save_pretrained(tmp)
        os.replace(tmp, root / "tokenizer")
    tok = load_tokenizer(root)
    held = heldout_examples(task)
    held_path = root / HELDOUT_FILE
    fresh = root / f".heldout.{os.getpid()}.jsonl"
    write_task_file(held, fresh)
    if held_path.is_file() and held_path.read_bytes() != fresh.read_bytes():
        fresh.unlink()
        fresh.with_name(fresh.stem + ".task.json").unlink()
        raise ValueError(f"{held_path} differs from the held-out set of {SETTINGS}; remove it "
                         "or use another --root")
    os.replace(fresh.with_name(fresh.stem + ".task.json"), root / "heldout.task.json")
    os.replace(fresh, held_path)
    excluded = list(held)
    if task.n_mixed_heldout:
        mixed = mixed_heldout_examples(task, {e.key for e in held})
        _write_checked(root / MIXED_FILE, mixed)
        excluded += mixed
    return tok, HopsStream(task, tok, excluded), read_task_file(held_path,
                                                                name=f"hops{task.hops}")


def _write_checked(path: Path, examples) -> None:
    """Write the task file ``path`` (+ its sidecar), or check that it holds ``examples``."""
    from .hops import write_task_file

    fresh = path.with_name(f".{path.stem}.{os.getpid()}.jsonl")
    write_task_file(examples, fresh)
    side = fresh.with_name(fresh.stem + ".task.json")
    if path.is_file() and path.read_bytes() != fresh.read_bytes():
        fresh.unlink()
        side.unlink()
        raise ValueError(f"{path} differs from the held-out set of {SETTINGS}; remove it or "
                         "use another --root")
    os.replace(side, path.with_name(path.stem + ".task.json"))
    os.replace(fresh, path)


def read_mixed(root):
    """The mixed held-out task of ``root`` (:func:`infodiv.experiments.hops.
    mixed_heldout_examples`), or None when the grid has none."""
    from .hops import read_task_file

    path = Path(root) / MIXED_FILE
    return read_task_file(path, name="hops-mixed") if path.is_file() else None


def train_depth(root, specs, cfg, task, *, shard=(0, 1), progress: bool = True,
                device: str = "cpu", log=print, rule=None) -> list[dict]:
    """Train every spec of ``specs`` (skipping finished ones, resuming an interrupted one)
    under ``root`` on the pointer-chasing ``task``, each under the restart ``rule``
    (:mod:`infodiv.experiments.restarts`; None: one attempt); returns the records of this
    call."""
    from .hops import train_len
    from .runner import check_shard, train_grid

    shard = check_shard(shard)
    need = train_len(task)
    short = [s.name for s in specs if s.max_len < need]
    if short:
        raise ValueError(f"max_len must be >= {need} (the {task.hops}-hop training sequence "
                         f"with {task.queries} question(s)), got "
                         f"{specs[0].max_len} for {short[0]}")
    tok, stream, held = prepare_depth_root(root, task, cfg, rule)
    return train_grid(root, specs, shard, tok, stream, held, cfg, progress=progress,
                      device=device, log=log, label=f"depth grid {root}", rule=rule)
