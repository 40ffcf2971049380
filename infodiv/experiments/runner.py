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
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

__all__ = ["ZOO_SETTINGS", "prepare_root", "load_tokenizer", "model_dir", "train_zoo",
           "finished_models"]

ZOO_SETTINGS = "zoo.json"


def model_dir(root, spec) -> Path:
    return Path(root) / "models" / spec.name


def _settings(cfg, n_heldout: int, vocab_size: int, data_dir) -> dict:
    return {"data": "ag_news test.csv", "data_dir": None if data_dir is None else str(data_dir),
            "n_heldout": int(n_heldout), "vocab_size": int(vocab_size), "train": cfg.to_dict()}


def prepare_root(root, cfg, *, n_heldout: int = 2000, vocab_size: int = 4096, data_dir=None):
    """Create or check ``root``: its settings file and tokenizer. Returns
    ``(tokenizer, train_task, heldout_task)``.

    Raises
    ------
    ValueError
        ``root`` holds a zoo made with different settings (the message names the keys).
    """
    from .data import zoo_tasks
    from .tokenizer import train_tokenizer

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    train, held = zoo_tasks(data_dir, n_heldout=n_heldout)
    want = _settings(cfg, n_heldout, vocab_size, data_dir)
    want.pop("data_dir")
    path = root / ZOO_SETTINGS
    if path.is_file():
        have = json.loads(path.read_text())
        have.pop("data_dir", None)
        diff = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        if diff:
            raise ValueError(f"{root} holds a zoo with different settings ({', '.join(diff)}); "
                             "use another --root or the same settings")
    else:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(_settings(cfg, n_heldout, vocab_size, data_dir), indent=1))
        os.replace(tmp, path)
    tok_dir = root / "tokenizer"
    if not tok_dir.is_dir():
        tmp = root / f".tokenizer.{os.getpid()}"
        train_tokenizer(train, vocab_size=vocab_size).save_pretrained(tmp)
        try:
            os.replace(tmp, tok_dir)
        except OSError:   # another process won the race: use its (identical) tokenizer
            shutil.rmtree(tmp, ignore_errors=True)
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


def train_grid(root, specs, shard, tok, data, held, cfg, *, progress: bool = True,
               device: str = "cpu", log=print, label: str = "zoo", rule=None) -> list[dict]:
    """Train this shard's specs under ``root`` on ``data`` (rows or a batch stream): finished
    models are skipped, an interrupted one resumes from its checkpoint, and each says so.
    ``rule``: the :class:`infodiv.experiments.restarts.RestartRule` every model trains under
    (None: one attempt each). Returns the records of the models handled by this call
    (finished or not)."""
    from .restarts import train_with_restarts
    from .train import is_finished, read_record

    k, n = shard
    mine = [s for i, s in enumerate(specs) if i % n == k]
    records, t0 = [], time.perf_counter()
    for i, spec in enumerate(mine):
        folder = model_dir(root, spec)
        if is_finished(folder):
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
              log=print) -> list[dict]:
    """Train every spec of ``specs`` (skipping finished ones) under ``root``.

    Returns the records of the models handled by this call (finished or not).
    """
    shard = check_shard(shard)
    tok, train, held = prepare_root(root, cfg, n_heldout=n_heldout, vocab_size=vocab_size,
                                    data_dir=data_dir)
    return train_grid(root, specs, shard, tok, train, held, cfg, progress=progress,
                      device=device, log=log)
