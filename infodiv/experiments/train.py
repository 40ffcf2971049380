"""Seeded, resumable training of one zoo model on the answer token.

Objective: cross-entropy of the next-token distribution at the last prompt position against the
gold option's answer token (the whole vocabulary is the softmax support, as in language-model
training; a generated stream may instead give several ``(position, answer token)`` targets per
sequence, all averaged); with ``lm_weight > 0`` the mean next-token loss over the prompt is added
with that weight (default 0: answer-token loss only). Batches are left-padded with position ids
counted from the first real token, exactly as :func:`extraction.extract` reads the model.

Schedule: AdamW, linear warm-up over ``warmup`` steps to ``lr`` then cosine decay to
``lr·final_lr_frac`` at ``steps``; gradient-norm clipping. Data order: example stream made of
``numpy.random.default_rng([seed, epoch]).permutation(n)`` epochs; step s takes stream items
``s·B .. (s+1)·B-1``, so the order depends only on the seed, never on interruptions.

Resume: every ``checkpoint_every`` steps the model, optimiser, step, loss log and elapsed wall
time are written atomically to ``<run>/state.pt``; a rerun continues from it and reaches the same
weights as an uninterrupted run (no dropout, no other randomness; same threads). The final
model is a Hugging Face folder ``<run>/model`` with ``zoo.json`` (spec, training config, wall
time, loss curve, held-out accuracy) written last, so its presence marks a finished model.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .trained import TRAIN, open_run, own, save_finished

__all__ = ["TrainConfig", "encode", "batch_order", "lr_at", "fit", "train_model", "evaluate",
           "read_record", "write_record", "training_record", "torch_threads"]

RECORD = "zoo.json"


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings shared by every model of a zoo (same steps and schedule)."""

    steps: int = 600
    batch_size: int = 32
    lr: float = 2e-3
    warmup: int = 30
    final_lr_frac: float = 0.1
    weight_decay: float = 0.01
    betas: tuple = (0.9, 0.98)
    clip: float = 1.0
    lm_weight: float = 0.0
    checkpoint_every: int = 50
    threads: int = 1

    def __post_init__(self):
        for name in ("steps", "batch_size", "checkpoint_every", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 <= self.warmup < self.steps:
            raise ValueError(f"warmup must be in [0, steps={self.steps}), got {self.warmup}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")
        if self.lm_weight < 0:
            raise ValueError(f"lm_weight must be >= 0, got {self.lm_weight}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["betas"] = list(self.betas)
        return d


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of step ``step`` (0-based): linear warm-up, then cosine to the floor."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    floor = cfg.lr * cfg.final_lr_frac
    return floor + (cfg.lr - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, frac)))


def batch_order(n: int, step: int, batch_size: int, seed: int) -> np.ndarray:
    """Example indices of step ``step``: items ``step·B ..`` of the seeded epoch stream."""
    start = step * batch_size
    out = []
    while len(out) < batch_size:
        epoch, pos = divmod(start + len(out), n)
        perm = np.random.default_rng([int(seed), int(epoch)]).permutation(n)
        out.extend(perm[pos: pos + batch_size - len(out)].tolist())
    return np.asarray(out, dtype=np.int64)


def encode(tokenizer, task, max_len: int):
    """``(input_ids, option_ids)`` of ``task`` through :func:`extraction.prompts.encode_task`
    (the same truncation inside the article text as extraction)."""
    from extraction.prompts import encode_task

    enc = encode_task(tokenizer, task, max_length=int(max_len))
    return enc.input_ids, [int(i) for i in enc.option_ids]


def _collate(seqs, pad_id: int):
    import torch

    t = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), t), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), t), dtype=torch.long)
    for j, s in enumerate(seqs):
        ids[j, t - len(s):] = torch.as_tensor(s, dtype=torch.long)
        mask[j, t - len(s):] = 1
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def _forward_last(model, seqs, pad_id):
    """Hidden states ``[B, T, d]`` after the final norm, and the attention mask."""
    dev = model.get_input_embeddings().weight.device
    ids, mask, pos = (t.to(dev) for t in _collate(seqs, pad_id))
    out = model.base_model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False)
    return out[0], ids, mask


def _loss(model, seqs, targets, pad_id, lm_weight, forward=None):
    import torch
    import torch.nn.functional as F

    hidden, ids, mask = (forward or _forward_last)(model, seqs, pad_id)
    head = model.get_output_embeddings()
    if isinstance(targets[0], (list, tuple)):     # (position, token) answers per sequence
        width = hidden.shape[1]
        rows = [(j, width - len(s) + p, t) for j, (s, tg) in enumerate(zip(seqs, targets))
                for p, t in tg]
        j, p, t = (torch.as_tensor(c, dtype=torch.long, device=hidden.device)
                   for c in zip(*rows))
        logits, tgt = head(hidden[j, p]), t
    else:
        logits = head(hidden[:, -1])
        tgt = torch.as_tensor(targets, dtype=torch.long, device=logits.device)
    loss = F.cross_entropy(logits, tgt)
    if lm_weight > 0:
        logits = head(hidden[:, :-1])
        tgt = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
        loss = loss + lm_weight * F.cross_entropy(logits.flatten(0, 1), tgt.flatten(),
                                                  ignore_index=-100)
    return loss


def evaluate(model, seqs, labels, option_ids, pad_id, *, batch_size: int = 128) -> dict:
    """Accuracy and cross-entropy (nats) of the option-restricted logits at the last position."""
    import torch

    labels = np.asarray(labels)
    head = model.get_output_embeddings()
    w = head.weight[list(option_ids)]
    rows = []
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(seqs), batch_size):
            hidden, _, _ = _forward_last(model, seqs[i: i + batch_size], pad_id)
            rows.append((hidden[:, -1].float() @ w.float().t()).double().cpu().numpy())
    z = np.concatenate(rows)
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return {"accuracy": float((z.argmax(1) == labels).mean()),
            "cross_entropy": float(-logp[np.arange(len(labels)), labels].mean()),
            "n": int(len(labels))}


def _atomic_save(obj, path: Path, before=None) -> None:
    """``torch.save`` atomically; ``before(tmp)`` runs before ``tmp`` replaces ``path``."""
    import torch

    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    if before is not None:
        before(tmp)
    os.replace(tmp, path)


def read_record(run_dir) -> dict:
    return json.loads((Path(run_dir) / "model" / RECORD).read_text())


def _trainable(model) -> dict:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def fit(model, seqs, targets, run_dir, cfg: TrainConfig, *, seed: int, fingerprint: dict,
        pad_id: int, desc: str = "train", progress: bool = True, stop_after: int | None = None,
        forward=None, batches=None, log=print, writer: str = TRAIN):
    """The training loop shared by the zoo and the fine-tune: trains the parameters of
    ``model`` that require grad on ``(seqs, targets)``, checkpointing to ``run_dir/state.pt``
    and resuming from it.

    ``batches(step) -> (items, targets)`` replaces the epoch stream over ``(seqs, targets)``
    (then both may be None): a generated stream whose batch depends only on the step (and the
    seed it was built with), e.g. :meth:`infodiv.experiments.hops.HopsStream.batch`.

    ``forward(model, items, pad_id) -> (hidden after the final norm, ids, mask)`` replaces
    the full forward pass (default: token ids through the whole model); with
    :func:`infodiv.experiments.prefix.top_forward` the items of ``seqs`` are cached frozen-prefix
    states (``ids`` is then None, so ``lm_weight`` must be 0).

    Returns ``(step, losses, elapsed_s)``. The state holds the trainable parameters, the
    optimiser, the step, the loss log and the elapsed wall time; a state written with another
    ``fingerprint`` is refused (ValueError). Every checkpoint is listed in the manifest of
    ``run_dir`` as ``writer``'s, and a resumed one was checked against it
    (:mod:`infodiv.experiments.trained`).
    """
    import torch
    from tqdm.auto import tqdm

    params = _trainable(model)
    if forward is not None and cfg.lm_weight > 0:
        raise ValueError(f"lm_weight must be 0 with a custom forward (cached prefix), got "
                         f"{cfg.lm_weight}")
    if not params:
        raise ValueError("the model has no trainable parameters (0 require grad)")
    opt = torch.optim.AdamW(list(params.values()), lr=cfg.lr, betas=tuple(cfg.betas),
                            weight_decay=cfg.weight_decay)
    state_path = Path(run_dir) / "state.pt"
    step, losses, elapsed = 0, [], 0.0
    if state_path.is_file():
        # map onto the model's device: a state written on CUDA resumes on the CPU and back
        st = torch.load(state_path, weights_only=False,
                        map_location=next(iter(params.values())).device)
        if st["fingerprint"] != fingerprint:
            raise ValueError(f"{state_path} was written with a different spec or training "
                             "config; rerun with --overwrite to train it again from step 0")
        missing = sorted(set(params) - set(st["model"]))
        if missing:
            raise ValueError(f"{state_path} lacks {len(missing)} trainable tensors, e.g. "
                             f"{missing[0]}")
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(st["model"][name])
        opt.load_state_dict(st["optimizer"])
        step, losses, elapsed = st["step"], st["losses"], st["elapsed_s"]
        log(f"{desc}: resuming at step {step}/{cfg.steps}")
    model.train()

    def checkpoint():
        _atomic_save({"fingerprint": fingerprint,
                      "model": {n: p.detach() for n, p in params.items()},
                      "optimizer": opt.state_dict(), "step": step, "losses": losses,
                      "elapsed_s": elapsed}, state_path,
                     lambda tmp: own(run_dir, writer, {state_path.name: tmp}))

    bar = tqdm(total=cfg.steps, initial=step, desc=desc, unit="step", disable=not progress,
               dynamic_ncols=True)
    done_here = 0
    t0 = time.perf_counter()
    while step < cfg.steps:
        if batches is None:
            idx = batch_order(len(seqs), step, cfg.batch_size, seed)
            items, tgts = [seqs[i] for i in idx], [targets[i] for i in idx]
        else:
            items, tgts = batches(step)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        loss = _loss(model, items, tgts, pad_id, cfg.lm_weight, forward)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), cfg.clip)
        opt.step()
        losses.append(float(loss.detach()))
        step += 1
        done_here += 1
        bar.update(1)
        bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}", refresh=False)
        stop = stop_after is not None and done_here >= stop_after
        if step % cfg.checkpoint_every == 0 or step == cfg.steps or stop:
            now = time.perf_counter()
            elapsed += now - t0
            t0 = now
            checkpoint()
        if stop:
            break
    bar.close()
    return step, losses, elapsed


def training_record(cfg: TrainConfig, n_train: int, option_ids, step: int, losses, elapsed,
                    device) -> dict:
    """The fields every finished-or-not model record shares (zoo and fine-tune)."""
    return {"train": cfg.to_dict(), "n_train": int(n_train), "option_ids": list(option_ids),
            "step": step, "finished": step >= cfg.steps, "wall_time_s": elapsed,
            "s_per_step": elapsed / max(1, step), "losses": losses,
            "torch_threads": cfg.threads, "load_average": list(os.getloadavg()),
            "device": str(device)}


@contextlib.contextmanager
def torch_threads(n: int):
    """Temporarily set torch's intra-op threads to ``n``."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def write_record(folder, record: dict) -> None:
    """Write ``zoo.json`` into a finished model folder (last, atomically: marks it finished)."""
    folder = Path(folder)
    tmp = folder / (RECORD + ".tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, folder / RECORD)


def train_model(spec, tokenizer, train_task, run_dir, cfg: TrainConfig, *, heldout_task=None,
                progress: bool = True, stop_after: int | None = None, device: str = "cpu",
                init_seed: int | None = None, extra: dict | None = None, log=print) -> dict:
    """Train (or resume, or skip when finished) one zoo model; returns its record.

    Parameters
    ----------
    spec : infodiv.experiments.configs.ModelSpec
    tokenizer : transformers tokenizer (the zoo tokenizer)
    train_task : extraction.Task or stream
        Training rows, or a generated stream (an object with ``batch(step, batch_size, seed)
        -> (token id lists, answer token ids)``, ``option_ids`` and ``describe()``, e.g.
        :class:`infodiv.experiments.hops.HopsStream`: step s of seed r always gets the same batch;
        its ``describe()`` joins the resume fingerprint).
    heldout_task : extraction.Task, optional
        Held-out rows scored at the end.
    run_dir : path
        ``state.pt`` (resume) and ``model/`` (final Hugging Face folder) live here.
    cfg : TrainConfig
    stop_after : int, optional
        Stop (with a checkpoint) after this many steps of this call (tests, time slicing).
    device : str
        Where to train (``"cpu"``, ``"cuda"``); resumes are bit-identical on CPU (on CUDA only
        with deterministic kernels).
    init_seed : int, optional
        Seed of the initial weights (default ``spec.seed``; the data order always follows
        ``spec.seed``): a restart from a new initialisation
        (:mod:`infodiv.experiments.restarts`); it joins the resume fingerprint.
    extra : dict, optional
        Fields added to the record of the finished model (the restart history).

    Returns
    -------
    dict
        The ``zoo.json`` record (``finished`` False when stopped early).
    """
    from .configs import build_model, count_params, save_model

    run_dir = Path(run_dir)
    if open_run(run_dir, TRAIN, log=log):
        return read_record(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with torch_threads(cfg.threads):
        stream = hasattr(train_task, "batch")
        if stream:
            seqs = targets = None
            option_ids = list(train_task.option_ids)
            n_train = cfg.steps * cfg.batch_size

            def batches(step):
                return train_task.batch(step, cfg.batch_size, spec.seed)
        else:
            seqs, option_ids = encode(tokenizer, train_task, spec.max_len)
            targets = [option_ids[int(y)] for y in train_task.labels]
            n_train, batches = len(train_task), None
        model = build_model(spec, tokenizer, init_seed).to(device)
        fingerprint = {"spec": spec.to_dict(), "train": cfg.to_dict(),
                       "n_train": n_train, "vocab": len(tokenizer)}
        if init_seed is not None and int(init_seed) != spec.seed:
            fingerprint["init_seed"] = int(init_seed)
        if stream:
            fingerprint["stream"] = train_task.describe()
        pad_id = tokenizer.pad_token_id
        step, losses, elapsed = fit(model, seqs, targets, run_dir, cfg, seed=spec.seed,
                                    fingerprint=fingerprint, pad_id=pad_id, desc=spec.name,
                                    progress=progress, stop_after=stop_after,
                                    batches=batches, log=log)
        record = {"model": spec.name, **spec.to_dict(), "shared": spec.shared,
                  "executions": spec.executions, "n_members": spec.n_members,
                  "params": count_params(model),
                  **training_record(cfg, n_train, option_ids, step, losses, elapsed,
                                    device)}
        if stream:
            record["stream"] = train_task.describe()
        if step < cfg.steps:
            return record
        if heldout_task is not None:
            hseqs, _ = encode(tokenizer, heldout_task, spec.max_len)
            record["heldout"] = evaluate(model, hseqs, heldout_task.labels, option_ids, pad_id)
        record.update(extra or {})
        save_finished(run_dir, TRAIN, lambda folder: (save_model(model.cpu(), tokenizer, folder),
                                                      write_record(folder, record)))
        return record
