"""Frozen-prefix caching for top-k fine-tuning: run the frozen bottom blocks once, train the top.

With the embedding and blocks ``0 .. s-1`` frozen (``s = n_blocks - train_top``), the hidden
states entering block ``s`` are a fixed function of the prompt: ``h_s(x) = B_{s-1}∘…∘B_0(E x)``.
The loss of a step is ``ℓ(T(h_s(x)), y)`` with ``T`` = top blocks, final norm and (frozen, tied)
head, so its gradient with respect to the trainable parameters of ``T`` depends on the prompt
only through ``h_s(x)``: computing ``h_s`` once per training prompt and feeding it to ``T`` gives
the same losses, gradients and weights as the full forward pass with a frozen bottom (up to
float reduction order: the cache is computed in other batches than training reads it). A step
then costs ``train_top`` blocks forward + backward instead of every block forward plus the top
backward, and the one-off cache costs one frozen forward per training prompt.

Padding: every batch is left-padded, as in :func:`infodiv.experiments.train.fit`; pad positions are
masked as keys, so real positions never see them, and the cache stores real positions only
(pad inputs of the top are zeros). Position ids count from the first real token.

The cache lives in ``<dir>/chunk-<first>.pt`` files (``chunk`` prompts each, written
atomically), keyed by a fingerprint of the model weights, the split point and the prompts; a
rerun reuses finished chunks and computes the rest (resumable after a kill).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

__all__ = ["block_window", "prefix_states", "PrefixCache", "top_forward"]


@contextlib.contextmanager
def block_window(model, lo: int, hi: int | None = None, *, final_norm: bool = True):
    """Temporarily make ``model.base_model`` run only blocks ``lo .. hi-1`` (``hi`` None: to
    the end), with or without its final norm. The blocks are the model's own modules, so
    training inside the window trains the model.

    Raises
    ------
    ValueError
        ``lo``/``hi`` not a window of the model's blocks.
    """
    import torch

    base = model.base_model
    layers = base.layers
    n = len(layers)
    hi = n if hi is None else int(hi)
    if not 0 <= int(lo) <= hi <= n:
        raise ValueError(f"block window [{lo}, {hi}) must lie in [0, {n}]")
    norm = base.norm
    base.layers = torch.nn.ModuleList(list(layers)[int(lo):hi])
    if not final_norm:
        base.norm = torch.nn.Identity()
    try:
        yield model
    finally:
        base.layers = layers
        base.norm = norm


def _collate_states(states, device):
    import torch

    t = max(int(s.shape[0]) for s in states)
    d = int(states[0].shape[1])
    x = torch.zeros((len(states), t, d), dtype=states[0].dtype, device=device)
    mask = torch.zeros((len(states), t), dtype=torch.long, device=device)
    for j, s in enumerate(states):
        x[j, t - s.shape[0]:] = s.to(device)
        mask[j, t - s.shape[0]:] = 1
    return x, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def prefix_states(model, seqs, start: int, pad_id: int, *, batch_size: int = 16):
    """Hidden states entering block ``start`` (output of block ``start-1``, no final norm)
    for every sequence: a list of float ``[len(seq), d]`` CPU tensors."""
    import torch

    from .train import _collate

    dev = model.get_input_embeddings().weight.device
    out = []
    was_training = model.training
    model.eval()
    with torch.inference_mode(), block_window(model, 0, start, final_norm=False):
        for i in range(0, len(seqs), batch_size):
            part = seqs[i: i + batch_size]
            ids, mask, pos = (t.to(dev) for t in _collate(part, pad_id))
            h = model.base_model(input_ids=ids, attention_mask=mask, position_ids=pos,
                                 use_cache=False)[0]
            out.extend(h[j, h.shape[1] - len(s):].detach().cpu().clone()
                       for j, s in enumerate(part))
    model.train(was_training)
    return out


def top_forward(start: int):
    """A ``forward(model, states, pad_id) -> (hidden, None, mask)`` for
    :func:`infodiv.experiments.train.fit`: blocks ``start ..`` and the final norm on cached
    states."""

    def forward(model, states, pad_id):
        x, mask, pos = _collate_states(states, model.get_input_embeddings().weight.device)
        with block_window(model, start):
            out = model.base_model(inputs_embeds=x, attention_mask=mask, position_ids=pos,
                                   use_cache=False)
        return out[0], None, mask

    return forward


def _weights_digest(model, start: int) -> str:
    """sha256 of the frozen part (embedding + blocks below ``start``): the cache's key."""
    h = hashlib.sha256()
    tensors = [("embed", model.get_input_embeddings().weight)]
    for b, blk in enumerate(list(model.base_model.layers)[:start]):
        tensors += [(f"{b}.{n}", p) for n, p in blk.named_parameters()]
    for name, p in tensors:
        h.update(name.encode())
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


class PrefixCache:
    """Resumable on-disk cache of :func:`prefix_states` in chunks.

    Parameters
    ----------
    folder : path
        Where ``chunk-*.pt`` and ``cache.json`` live.
    chunk : int
        Prompts per chunk file (the unit of resumption).
    """

    def __init__(self, folder, *, chunk: int = 256):
        if isinstance(chunk, bool) or int(chunk) < 1:
            raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
        self.folder = Path(folder)
        self.chunk = int(chunk)

    def key(self, model, seqs, start: int) -> dict:
        hs = hashlib.sha256(json.dumps([list(map(int, s)) for s in seqs]).encode())
        return {"start": int(start), "n": len(seqs), "chunk": self.chunk,
                "weights": _weights_digest(model, start), "prompts": hs.hexdigest()}

    def load_or_build(self, model, seqs, start: int, pad_id: int, *, batch_size: int = 16,
                      progress: bool = True, log=print, saved=None):
        """The states of every sequence, computing the missing chunks (and saying how many
        were reused). A cache written for other weights, split point or prompts is refused
        (ValueError), never silently mixed. ``saved(path, tmp)`` is told of every file
        written, before the written file ``tmp`` becomes ``path`` (the caller's output
        manifest lists it first)."""
        import torch
        from tqdm.auto import tqdm

        key = self.key(model, seqs, start)
        meta = self.folder / "cache.json"
        self.folder.mkdir(parents=True, exist_ok=True)
        if meta.is_file():
            if json.loads(meta.read_text()) != key:
                raise ValueError(f"{self.folder} holds a prefix cache of other weights, split "
                                 "or prompts; remove it to rebuild")
        else:
            tmp = meta.with_name(meta.name + ".tmp")
            tmp.write_text(json.dumps(key, indent=1))
            if saved is not None:
                saved(meta, tmp)
            os.replace(tmp, meta)
        starts = list(range(0, len(seqs), self.chunk))
        done = [s for s in starts if (self.folder / f"chunk-{s:06d}.pt").is_file()]
        if done:
            log(f"prefix cache: reusing {len(done)}/{len(starts)} chunk(s) in {self.folder}")
        states = []
        bar = tqdm(total=len(seqs), desc=f"prefix cache (blocks 0-{start - 1})", unit="prompt",
                   disable=not progress, dynamic_ncols=True)
        for s in starts:
            path = self.folder / f"chunk-{s:06d}.pt"
            if path.is_file():
                part = torch.load(path, weights_only=True)
            else:
                part = prefix_states(model, seqs[s: s + self.chunk], start, pad_id,
                                     batch_size=batch_size)
                tmp = path.with_name(path.name + ".tmp")
                torch.save(part, tmp)
                if saved is not None:
                    saved(path, tmp)
                os.replace(tmp, path)
            states.extend(part)
            bar.update(len(part))
        bar.close()
        return states
