"""Training a whole zoo under one root folder (resumable; one command regenerates it).

Layout of ``root`` (default ``runs/zoo``, git-ignored)::

    zoo.json              the zoo's settings (data, tokenizer, training config); a rerun with
                          other settings is refused
    tokenizer/            the shared tokenizer (trained once on the training rows)
    models/<name>/        state.pt while training (resume point), model/ when finished
                          (Hugging Face folder + zoo.json record)

Models are trained one after another in grid order (seed-major); finished ones are skipped,
an interrupted one resumes from its last checkpoint. ``shard=(k, n)`` trains only every n-th
model starting at k, so n processes can share a grid.

The root and every model folder carry the output manifest (:mod:`infodiv.experiments.trained`):
a file of someone else's where training writes is refused before any work; a finished model or
a checkpoint is reused only when the manifest confirms it; ``overwrite`` trains the models of
the call again from step 0 (and writes settings that differ), replacing only the toolkit's
files, and says which.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

__all__ = ["ZOO_SETTINGS", "ROOT_NAMES", "prepare_root", "check_settings", "load_tokenizer",
           "model_dir", "shard_specs", "train_zoo", "finished_models"]

ZOO_SETTINGS = "zoo.json"
#: what training writes into a zoo root (``tokenizer``: every file under it)
ROOT_NAMES = (ZOO_SETTINGS, "tokenizer")


def model_dir(root, spec) -> Path:
    return Path(root) / "models" / spec.name


def _settings(cfg, n_heldout: int, vocab_size: int, data_dir) -> dict:
    return {"data": "ag_news test.csv", "data_dir": None if data_dir is None else str(data_dir),
            "n_heldout": int(n_heldout), "vocab_size": int(vocab_size), "train": cfg.to_dict()}


def check_settings(path: Path, want: dict, root: Path, *, overwrite: bool, what: str) -> bool:
    """Whether the settings file ``path`` of ``root`` must be written: absent, or (with
    ``overwrite``) other than ``want`` (``data_dir`` aside) or changed since training wrote it;
    ValueError naming the keys that differ, or the change, without ``overwrite``."""
    from .trained import TRAIN, changed

    if not path.is_file():
        return True
    try:
        have = json.loads(path.read_text())
    except ValueError:
        have = {}
    have = have if isinstance(have, dict) else {}
    diff = sorted(k for k in (set(want) | set(have)) - {"data_dir"} if want.get(k) != have.get(k))
    edited = changed(root, TRAIN, [path.name, "tokenizer"])
    if (diff or edited) and not overwrite:
        why = (f"different settings ({', '.join(diff)})" if diff else
               f"{len(edited)} file(s) changed since {TRAIN} wrote them (e.g. {edited[0]})")
        raise ValueError(f"{root} holds {what} with {why}; use another --root, the same "
                         "settings, or --overwrite to train its models again with these")
    return bool(diff or edited)


def prepare_root(root, cfg, *, n_heldout: int = 2000, vocab_size: int = 4096, data_dir=None,
                 overwrite: bool = False, log=print):
    """Create or check ``root``: its settings file and tokenizer (written through the output
    policy, one process at a time: :mod:`infodiv.experiments.trained`). Returns
    ``(tokenizer, train_task, heldout_task)``.

    Raises
    ------
    ValueError
        ``root`` holds a zoo made with different settings (the message names the keys), or
        its settings or tokenizer changed since training wrote them; ``overwrite`` writes them
        again instead (the log names the files replaced).
    """
    from infodiv.outputs import staged_output

    from .data import zoo_tasks
    from .tokenizer import train_tokenizer
    from .trained import TRAIN, root_lock

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    train, held = zoo_tasks(data_dir, n_heldout=n_heldout)
    want = _settings(cfg, n_heldout, vocab_size, data_dir)
    with root_lock(root):
        write = check_settings(root / ZOO_SETTINGS, want, root, overwrite=overwrite,
                               what="a zoo")
        if write or not (root / "tokenizer").is_dir():
            with staged_output(root, TRAIN, flag="--root", log=log, replace_changed=True,
                               keep=True) as tmp:
                (tmp / ZOO_SETTINGS).write_text(json.dumps(want, indent=1))
                train_tokenizer(train, vocab_size=vocab_size).save_pretrained(tmp / "tokenizer")
        return load_tokenizer(root), train, held


def load_tokenizer(root):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(Path(root) / "tokenizer")


def finished_models(root) -> list[Path]:
    """Model folders (``models/<name>/model``) of ``root`` whose training finished."""
    return sorted(p.parent for p in (Path(root) / "models").glob("*/model/zoo.json"))


def check_shard(shard) -> tuple[int, int]:
    """``(k, n)`` of ``--shard K/N``: this process trains every n-th spec starting at k."""
    k, n = shard
    if not (isinstance(n, int) and n >= 1 and isinstance(k, int) and 0 <= k < n):
        raise ValueError(f"shard must be (k, n) with 0 <= k < n, got {shard!r}")
    return k, n


def shard_specs(specs, shard) -> list:
    """The specs of ``specs`` this process trains: every n-th from k (``shard=(k, n)``)."""
    k, n = check_shard(shard)
    return [s for i, s in enumerate(specs) if i % n == k]


def train_grid(root, specs, shard, tok, data, held, cfg, *, progress: bool = True,
               device: str = "cpu", log=print, label: str = "zoo", rule=None,
               overwrite: bool = False) -> list[dict]:
    """Train this shard's specs under ``root`` on ``data`` (rows or a batch stream): finished
    models are skipped, an interrupted one resumes from its checkpoint, and each says so;
    ``overwrite``: each is trained again from step 0
    (:func:`infodiv.experiments.trained.open_run`). ``rule``: the
    :class:`infodiv.experiments.restarts.RestartRule` every model trains under (None: one
    attempt each). Returns the records of the models handled by this call (finished or not)."""
    from .restarts import train_with_restarts
    from .train import read_record
    from .trained import TRAIN, open_run

    mine = shard_specs(specs, shard)
    records, t0 = [], time.perf_counter()
    for i, spec in enumerate(mine):
        folder = model_dir(root, spec)
        if open_run(folder, TRAIN, overwrite=overwrite, log=log):
            log(f"[{i + 1}/{len(mine)}] {spec.name}: already finished, skipped")
            records.append(read_record(folder))
            continue
        if (folder / "state.pt").is_file():
            log(f"[{i + 1}/{len(mine)}] {spec.name}: resuming from its checkpoint")
        rec = train_with_restarts(spec, tok, data, folder, cfg, rule, heldout_task=held,
                                  progress=progress, device=device, log=log)
        acc = rec.get("heldout", {}).get("accuracy")
        log(f"[{i + 1}/{len(mine)}] {spec.name}: {rec['step']} steps, "
            f"{rec['wall_time_s']:.0f} s ({rec['s_per_step']:.3f} s/step)"
            + ("" if acc is None else f", held-out accuracy {acc:.3f}")
            + (f", {len(rec['attempts'])} attempt(s) checked" if rec.get("attempts") else ""))
        records.append(rec)
    log(f"{label}: {len(records)} model(s) in {time.perf_counter() - t0:.0f} s this call")
    return records


def train_zoo(root, specs, cfg, *, n_heldout: int = 2000, vocab_size: int = 4096,
              data_dir=None, shard=(0, 1), progress: bool = True, device: str = "cpu",
              log=print, overwrite: bool = False, adopt: bool = False) -> list[dict]:
    """Train every spec of ``specs`` (skipping finished ones) under ``root``; first, before
    any work, a file of someone else's where training writes is refused (``adopt``: files
    trained before manifests are taken as the toolkit's; :func:`infodiv.experiments.trained.
    preflight`). ``overwrite``: :func:`prepare_root`, :func:`train_grid`.

    Returns the records of the models handled by this call (finished or not).
    """
    from .trained import preflight

    shard = check_shard(shard)
    preflight(root, ROOT_NAMES, [model_dir(root, s) for s in shard_specs(specs, shard)],
              adopt=adopt, log=log)
    tok, train, held = prepare_root(root, cfg, n_heldout=n_heldout, vocab_size=vocab_size,
                                    data_dir=data_dir, overwrite=overwrite, log=log)
    return train_grid(root, specs, shard, tok, train, held, cfg, progress=progress,
                      device=device, log=log, overwrite=overwrite)
