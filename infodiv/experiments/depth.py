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
held-out keys excluded, and is scored on the held-out file at the end. The root and every model
folder carry the output manifest of what training wrote (:mod:`infodiv.experiments.trained`).
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["SETTINGS", "HELDOUT_FILE", "MIXED_FILE", "ROOT_NAMES", "prepare_depth_root",
           "train_depth", "read_mixed"]

SETTINGS = "depth.json"
HELDOUT_FILE = "heldout.jsonl"
MIXED_FILE = "heldout_mixed.jsonl"
#: what training writes into a depth root (``tokenizer``: every file under it)
ROOT_NAMES = (SETTINGS, "tokenizer", HELDOUT_FILE, "heldout.task.json", MIXED_FILE,
              "heldout_mixed.task.json")


def _settings(task, cfg, rule=None) -> dict:
    out = {"task": "hops", "hops_task": task.to_dict(), "train": cfg.to_dict()}
    if rule is not None:     # the restart rule is part of the recipe every model shares
        out["restart_rule"] = rule.to_dict()
    return out


def prepare_depth_root(root, task, cfg, rule=None, *, overwrite: bool = False, log=print):
    """Create or check ``root``: settings, tokenizer and held-out file (written through the
    output policy, one process at a time: :mod:`infodiv.experiments.trained`). Returns
    ``(tokenizer, stream, heldout_task)``; the held-out task is read back from the file
    through the toolkit's task-file reader.

    Raises
    ------
    ValueError
        ``root`` holds a grid made with different settings (the message names the keys), its
        settings or tokenizer changed since training wrote them, or its held-out file differs
        from the one the settings generate; ``overwrite`` writes them again instead (the log
        names the files replaced).
    """
    from infodiv.outputs import staged_output

    from .hops import (
        HopsStream,
        heldout_examples,
        hops_tokenizer,
        mixed_heldout_examples,
        read_task_file,
    )
    from .runner import check_settings, load_tokenizer
    from .trained import TRAIN, root_lock

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    want = _settings(task, cfg, rule)
    held = heldout_examples(task)
    sets = {HELDOUT_FILE: held}
    if task.n_mixed_heldout:
        sets[MIXED_FILE] = mixed_heldout_examples(task, {e.key for e in held})
    with root_lock(root):
        write = check_settings(root / SETTINGS, want, root, overwrite=overwrite,
                               what="a depth grid")
        files = {}
        if write:
            files[SETTINGS] = lambda p: p.write_text(json.dumps(want, indent=1))
        if write or not (root / "tokenizer").is_dir():
            files["tokenizer"] = hops_tokenizer(task.symbols).save_pretrained
        for name, examples in sets.items():
            if _differs(root / name, examples, overwrite):
                files[name] = lambda p, e=examples: _write_task(e, p)
        if files:
            with staged_output(root, TRAIN, flag="--root", log=log, replace_changed=True,
                               keep=True) as tmp:
                for name, what in files.items():
                    what(tmp / name)
    tok = load_tokenizer(root)
    excluded = [e for examples in sets.values() for e in examples]
    return tok, HopsStream(task, tok, excluded), read_task_file(root / HELDOUT_FILE,
                                                                name=f"hops{task.hops}")


def _write_task(examples, path: Path) -> None:
    from .hops import write_task_file

    write_task_file(examples, path)


def _differs(path: Path, examples, overwrite: bool) -> bool:
    """Whether the task file ``path`` (+ its sidecar) must be written: absent, or not the file
    ``examples`` make (a held-out file that differs: ValueError without ``overwrite``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / path.name
        _write_task(examples, fresh)
        side = fresh.with_name(fresh.stem + ".task.json")
        old_side = path.with_name(path.stem + ".task.json")
        if path.is_file() and path.read_bytes() != fresh.read_bytes():
            if not overwrite:
                raise ValueError(f"{path} differs from the held-out set of {SETTINGS}; use "
                                 "another --root, or --overwrite to write it again")
            return True
        return not path.is_file() or not old_side.is_file() or \
            old_side.read_bytes() != side.read_bytes()


def read_mixed(root):
    """The mixed held-out task of ``root`` (:func:`infodiv.experiments.hops.
    mixed_heldout_examples`), or None when the grid has none."""
    from .hops import read_task_file

    path = Path(root) / MIXED_FILE
    return read_task_file(path, name="hops-mixed") if path.is_file() else None


def train_depth(root, specs, cfg, task, *, shard=(0, 1), progress: bool = True,
                device: str = "cpu", log=print, rule=None, overwrite: bool = False,
                adopt: bool = False) -> list[dict]:
    """Train every spec of ``specs`` (skipping finished ones, resuming an interrupted one)
    under ``root`` on the pointer-chasing ``task``, each under the restart ``rule``
    (:mod:`infodiv.experiments.restarts`; None: one attempt); returns the records of this
    call. Before any work a file of someone else's where training writes is refused
    (``adopt``, ``overwrite``: :func:`infodiv.experiments.runner.train_zoo`)."""
    from .hops import train_len
    from .runner import check_shard, model_dir, shard_specs, train_grid
    from .trained import preflight

    shard = check_shard(shard)
    need = train_len(task)
    short = [s.name for s in specs if s.max_len < need]
    if short:
        raise ValueError(f"max_len must be >= {need} (the {task.hops}-hop training sequence "
                         f"with {task.queries} question(s)), got "
                         f"{specs[0].max_len} for {short[0]}")
    preflight(root, ROOT_NAMES, [model_dir(root, s) for s in shard_specs(specs, shard)],
              adopt=adopt, log=log)
    tok, stream, held = prepare_depth_root(root, task, cfg, rule, overwrite=overwrite, log=log)
    return train_grid(root, specs, shard, tok, stream, held, cfg, progress=progress,
                      device=device, log=log, label=f"depth grid {root}", rule=rule,
                      overwrite=overwrite)
