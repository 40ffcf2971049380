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

import contextlib
import inspect
import warnings

import numpy as np
import torch

from .architectures import BoundArch, unembedding
from .capture import WriteRecorder
from .projection import head_params, members_for, neuron_params, project
from .readout import EXACTNESS_RTOL, exactness_against_model
from .savings import LastBlockPruner, PrefixCache, cache_refusal, cut_after, shared_prefix

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
    savings : bool
        Use the exact savings of :mod:`extraction.savings` (cut after the read position,
        shared-prefix cache, last block at the read position only); call :meth:`prepare` with
        the whole task first.
    """

    def __init__(self, model, arch: BoundArch, granularity: str, vocab_ids, pad_id: int,
                 savings: bool = True):
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
        self.savings = bool(savings)
        self.pruner = LastBlockPruner(arch) if self.savings else None
        self.prefix, self.prefix_ids = None, []
        self.report: dict = {"enabled": self.savings, "prefix_cache_tokens": 0,
                             "last_block_pruned": False, "reference_check": None}

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
            if h.shape[1] == 1:
                return None
            rows = torch.arange(h.shape[0], device=h.device)
            return (h[rows, index.to(h.device)][:, None, :],) + tuple(args[1:])

        def post(module, args, output):
            store["raw"] = output[:, 0, :].index_select(-1, self._idx.to(output.device))

        return [head.register_forward_pre_hook(pre), head.register_forward_hook(post)]

    def prepare(self, seqs, positions) -> np.ndarray:
        """Set up the savings for the whole task (:mod:`extraction.savings`): the shared
        prefix and its cache. Returns the tokens each prompt will run (for batch planning)."""
        if not self.savings:
            return np.array([len(s) for s in seqs])
        cut, _ = cut_after(seqs, positions)
        p, reason = shared_prefix(cut), cache_refusal(self.arch)
        if reason is None and p == 0:
            reason = "no token prefix shared by every prompt"
        if reason is None:
            try:
                self.prefix = PrefixCache(self.arch, cut[0][:p], self.in_device,
                                          self.takes_positions)
                self.prefix_ids = list(cut[0][:p])
            except Exception as exc:  # noqa: BLE001 - any failure: run without the cache
                reason = f"{type(exc).__name__}: {exc}"
        used = self.prefix is not None
        self.report.update(prefix_cache_tokens=p if used else 0,
                           prefix_cache="used" if used else reason,
                           tokens_prompt=int(sum(len(s) for s in seqs)),
                           tokens_run=int(sum(len(s) for s in cut) - (p * len(cut) if used else 0)))
        return np.array([len(s) - (p if used else 0) for s in cut])

    def run(self, seqs: list[list[int]], position):
        """``u`` [B, M, C], logits [B, C] (pre-cap), model output [B, C], scale [B, M].

        The first batch with savings on is checked against a real forward (see
        :mod:`extraction.savings`); on a mismatch or an error the savings are switched off."""
        if not self.savings or self.report.get("reference_check") is not None:
            return self._run(seqs, position, self.savings)
        try:
            out = self._run(seqs, position, True)
            self._check(seqs, position, out)
            return out
        except Exception as exc:  # noqa: BLE001 - fall back to the plain forward
            self.report["reference_check"] = {"failed": f"{type(exc).__name__}: {exc}"}
            warnings.warn(f"extraction savings switched off for this run ({type(exc).__name__}: "
                          f"{exc}); running the plain forward", stacklevel=2)
            self.savings, self.prefix = False, None
            self.report.update(enabled=False, prefix_cache_tokens=0, last_block_pruned=False)
            self.signature = self.members = None
            return self._run(seqs, position, False)

    def _check(self, seqs, position, out) -> None:
        """Compare the most padded row with a real forward of its prompt alone (no cut, no
        prefix cache, no pruning): option logits and Σu + bias within the dtype's tolerance."""
        cut, _ = cut_after(seqs, position)
        r = int(np.argmin([len(s) for s in cut]))
        ids = torch.as_tensor([seqs[r]], dtype=torch.long)
        index = read_index([len(seqs[r])], ids.shape[1], [int(np.asarray(position)[r])])
        store: dict = {}
        handles = self._hooks(index, store)
        try:
            with torch.inference_mode():
                ref = self.model(input_ids=ids.to(self.in_device), use_cache=False).logits[:, 0]
        finally:
            for h in handles:
                h.remove()
        ref = ref.index_select(-1, self._idx.to(ref.device)).float().cpu().numpy()
        dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
        rtol = EXACTNESS_RTOL.get(dtype, 1e-4)
        check = {"batch_row": r, "tokens": len(seqs[r]), "rtol": rtol}
        self.report["reference_check"] = check
        if not np.isfinite(ref).all():   # the model itself fails: the runner reports it
            check["non_finite_reference"] = True
            return
        # the saved forward's own logits must be the real forward's (else: fall back) ...
        own = exactness_against_model(out[2][r:r + 1, None], 0.0, ref, None, rtol,
                                      family=self.arch.family, dtype=dtype)
        # ... and Σu + bias is recorded against the real forward too (a wrong family row is
        # the runner's ExactnessError on every batch, not a reason to drop the savings)
        summed = exactness_against_model(out[0][r:r + 1], self.bias(), ref, self.arch.softcap,
                                         np.inf)
        check.update(max_abs_error_model_logits=float(own[0]),
                     max_abs_error_sum_u=float(summed[0]))

    def _inputs(self, seqs, position, savings: bool):
        """Forward keyword arguments and the read column of every row."""
        if savings:
            seqs, at = cut_after(seqs, position)
            p = self.prefix.length if self.prefix is not None else 0
            if p and all(s[:p] == self.prefix_ids for s in seqs):
                kw = self.prefix.inputs([s[p:] for s in seqs], self.pad_id)
                return kw, torch.as_tensor(at - p, dtype=torch.long)
            position = np.full(len(seqs), -1)
        t = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), t), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), t), dtype=torch.long)
        for j, s in enumerate(seqs):
            ids[j, t - len(s):] = torch.as_tensor(s, dtype=torch.long)
            mask[j, t - len(s):] = 1
        kw = {"input_ids": ids.to(self.in_device), "attention_mask": mask.to(self.in_device),
              "use_cache": False}
        if self.takes_positions:
            kw["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(self.in_device)
        return kw, read_index([len(s) for s in seqs], t, position)

    def _run(self, seqs, position, savings: bool):
        kw, index = self._inputs(seqs, position, savings)
        rec = WriteRecorder(self.arch, heads=self.granularity == "head",
                            neurons=self.granularity == "neuron", device=self.collect,
                            index=index, experts=self.granularity == "expert")
        store: dict = {}
        handles = self._hooks(index, store)
        prune = (self.pruner.at(index, kw["input_ids"].shape[1]) if savings
                 else contextlib.nullcontext())
        try:
            with torch.inference_mode(), rec, prune:
                out = self.model(**kw).logits[:, 0, :]
                model_logits = out.index_select(-1, self._idx.to(out.device))
        finally:
            for h in handles:
                h.remove()
        if savings:
            self.report["last_block_pruned"] = self.pruner.pruned > 0
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
