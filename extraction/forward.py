"""One batch through the model: capture the writes, project them, and read the model's own logits.

:class:`BatchRunner` runs the *whole* ``*ForCausalLM`` forward (not only its base model) on a
left-padded batch (attention mask, position ids ``cumsum(mask) − 1`` where the model takes them),
with the capture hooks of :mod:`extraction.capture` attached. A forward pre-hook on the LM head
keeps only the read position of every row, so the head and the family's own post-processing
(Cohere's ``logit_scale``, Granite's ``logits_scaling``, Gemma's soft-cap) run on ``[B, 1, d]``
instead of ``[B, T, d]``: the logits returned are the model's own output at that position,
never recomputed by this package. A forward hook on the LM head also keeps its raw output (the
pre-cap logits, before the family's multiplier) for soft-capped families.
"""

from __future__ import annotations

import inspect

import numpy as np
import torch

from .architectures import BoundArch, unembedding
from .capture import WriteRecorder
from .projection import head_params, members_for, neuron_params, project

__all__ = ["BatchRunner", "read_index"]


def read_index(lengths, t: int, position) -> torch.Tensor:
    """Index of the read position of every row in a left-padded batch of width ``t``.

    ``position`` [B] ints: negative counts from the end of the prompt (-1: last token),
    non-negative from its first token (BOS included).
    """
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    pos = torch.as_tensor(position, dtype=torch.long)
    return torch.where(pos < 0, t + pos, t - lengths + pos)


class BatchRunner:
    """Runs batches through ``model`` with the capture hooks attached.

    Parameters
    ----------
    model : ``*ForCausalLM``
    arch : BoundArch
    granularity : {"block", "head", "neuron", "expert"}
    vocab_ids : sequence of int
        Vocabulary ids onto which the members are projected (the C columns of ``u``).
    pad_id : int
    """

    def __init__(self, model, arch: BoundArch, granularity: str, vocab_ids, pad_id: int):
        self.model, self.arch, self.granularity = model, arch, granularity
        self.vocab_ids = [int(i) for i in vocab_ids]
        self.w_opt, self.b_head = unembedding(model, self.vocab_ids, arch)
        self.collect = self.w_opt.device
        self.in_device = model.get_input_embeddings().weight.device
        self.pad_id = pad_id
        self.heads = head_params(arch, self.collect) if granularity == "head" else None
        self.neurons = neuron_params(arch, self.collect) if granularity == "neuron" else None
        params = inspect.signature(type(model).forward).parameters
        self.takes_positions = "position_ids" in params
        self.signature = None
        self.members = None
        self._idx = torch.as_tensor(self.vocab_ids, dtype=torch.long)

    def bias(self) -> np.ndarray:
        """The constant member ``W (β) + b`` (final-norm beta, LM-head bias, multiplier)."""
        norm = self.arch.final_norm
        b = torch.zeros(self.w_opt.shape[0], device=self.collect)
        if norm.beta is not None:
            b = b + self.w_opt @ norm.beta.to(self.collect)
        if self.b_head is not None:
            b = b + self.b_head
        return b.cpu().numpy().astype(np.float32)

    def _hooks(self, index, store: dict):
        head = self.model.get_output_embeddings()

        def pre(module, args):
            h = args[0]
            rows = torch.arange(h.shape[0], device=h.device)
            return (h[rows, index.to(h.device)][:, None, :],) + tuple(args[1:])

        def post(module, args, output):
            store["raw"] = output[:, 0, :].index_select(-1, self._idx.to(output.device))

        return [head.register_forward_pre_hook(pre), head.register_forward_hook(post)]

    def run(self, seqs: list[list[int]], position):
        """``u`` [B, M, C], logits [B, C] (pre-cap), model output [B, C], scale [B, M]."""
        t = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), t), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), t), dtype=torch.long)
        for j, s in enumerate(seqs):
            ids[j, t - len(s):] = torch.as_tensor(s, dtype=torch.long)
            mask[j, t - len(s):] = 1
        index = read_index([len(s) for s in seqs], t, position)
        kw = {"input_ids": ids.to(self.in_device), "attention_mask": mask.to(self.in_device),
              "use_cache": False}
        if self.takes_positions:
            kw["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(self.in_device)
        rec = WriteRecorder(self.arch, heads=self.granularity == "head",
                            neurons=self.granularity == "neuron", device=self.collect,
                            index=index, experts=self.granularity == "expert")
        store: dict = {}
        handles = self._hooks(index, store)
        try:
            with torch.inference_mode(), rec:
                out = self.model(**kw).logits[:, 0, :]
                model_logits = out.index_select(-1, self._idx.to(out.device))
        finally:
            for h in handles:
                h.remove()
        model_logits = model_logits.to(self.collect, torch.float32)
        if self.arch.softcap is not None:   # pre-cap logits: the raw head output × multiplier
            logits = store["raw"].to(self.collect, torch.float32) * self.arch.logit_scale
        else:
            logits = model_logits
        sig = [(w.kind, w.block, w.execution) for w in rec.writes]
        if self.signature is None:
            self.signature = sig
            self.members, _ = members_for(rec.writes, self.arch, self.granularity)
        elif sig != self.signature:
            raise RuntimeError("the sequence of residual writes changed between batches")
        with torch.inference_mode():
            u, scale = project(rec.writes, self.arch, self.granularity, self.w_opt,
                               self.heads, self.neurons)
        return (u.cpu().numpy(), logits.cpu().numpy(), model_logits.cpu().numpy(),
                scale.cpu().numpy())
