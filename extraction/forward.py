"""One batch through the model: capture the writes, project them, and read the model's own logits.

:class:`BatchRunner` runs the *whole* ``*ForCausalLM`` forward (not only its base model) on a
left-padded batch (attention mask, position ids ``cumsum(mask) − 1`` where the model takes them),
with the capture hooks of :mod:`extraction.capture` attached. A forward pre-hook on the LM head
keeps only the read position of every row, so the head and the family's own post-processing
(Cohere's ``logit_scale``, Granite's ``logits_scaling``, Gemma's soft-cap) run on ``[B, 1, d]``
instead of ``[B, T, d]``: the logits returned are the model's own output at that position,
never recomputed by this package. A forward hook on the LM head also keeps its raw output (the
pre-cap logits, before the family's multiplier) for soft-capped families. With the savings on,
after the first real forward the head computes only the read vocabulary's columns
(:class:`~extraction.savings.HeadColumns`): the logits are still the model's own head and
post-processing, on ``[B, 1, C]``.
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
from .readout import ExactnessError, dtype_rtol, exactness_against_model
from .savings import (
    HeadColumns,
    LastBlockPruner,
    PrefixCache,
    cache_of,
    cache_refusal,
    cut_after,
    shared_prefix,
)

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
        self.columns = (HeadColumns(model.get_output_embeddings(), self.vocab_ids)
                        if self.savings else None)
        self.prefix, self.prefix_ids = None, []
        self.first_batch = None   # the plan's first batch (extract sets it)
        self.report: dict = {"enabled": self.savings, "prefix_cache_tokens": 0,
                             "last_block_pruned": False, "reference_check": None}
        if self.columns is not None:
            self.report["head_columns"] = self.columns.report

    def bias(self) -> np.ndarray:
        """The constant member ``W (β) + b`` (final-norm beta, LM-head bias, multiplier)."""
        norm = self.arch.final_norm
        b = torch.zeros(self.w_opt.shape[0], device=self.collect)
        if norm.beta is not None:
            b = b + self.w_opt @ norm.beta.to(self.collect)
        if self.b_head is not None:
            b = b + self.b_head
        return b.cpu().numpy().astype(np.float32)

    def _hooks(self, index, store: dict, narrow: bool = False):
        """LM-head hooks: the read row only; with ``narrow`` the read columns only (the head
        runs on a zero-width input, its output replaced by :class:`HeadColumns`); else the
        head's own read columns check :class:`HeadColumns` once."""
        head = self.model.get_output_embeddings()
        check = self.columns is not None and self.columns.pending

        def pre(module, args):
            h = args[0]
            if h.shape[1] != 1:
                rows = torch.arange(h.shape[0], device=h.device)
                h = h[rows, index.to(h.device)][:, None, :]
            if narrow:
                store["h"] = h
                h = h[:, :0]
            return (h,) + tuple(args[1:])

        def post(module, args, output):
            if narrow:
                output = self.columns(store.pop("h")).to(output.device, output.dtype)
                store["raw"] = output[:, 0, :]
                return output
            store["raw"] = output[:, 0, :].index_select(-1, self._idx.to(output.device))
            if check:
                self.columns.verify(args[0], store["raw"], dtype_rtol(self.model)[1])
            return None

        return [head.register_forward_pre_hook(pre), head.register_forward_hook(post)]

    def prepare(self, seqs, positions) -> np.ndarray:
        """Plan the savings for the whole task (:mod:`extraction.savings`): the shared prefix
        (its cache is made on the first batch). Returns the tokens each prompt will run."""
        if not self.savings:
            return np.array([len(s) for s in seqs])
        cut, _ = cut_after(seqs, positions)
        p, reason = shared_prefix(cut), cache_refusal(self.arch)
        if reason is None and p == 0:
            reason = "no token prefix shared by every prompt"
        elif reason is None and p * (len(cut) - 1) <= min(len(s) for s in cut):
            reason = (f"the {p}-token shared prefix saves {p * (len(cut) - 1)} tokens, no more "
                      "than its check (one prompt alone) costs")
        self.prefix_ids = list(cut[0][:p]) if reason is None else []
        n, self._cut_tokens = len(self.prefix_ids), int(sum(len(s) for s in cut))
        self.report.update(prefix_cache_tokens=n, prefix_cache=reason or "used",
                           tokens_prompt=int(sum(len(s) for s in seqs)),
                           tokens_run=self._cut_tokens - n * len(cut))
        return np.array([len(s) - n for s in cut])

    def run(self, seqs: list[list[int]], position):
        """``u`` [B, M, C], logits [B, C] (pre-cap), model output [B, C], scale [B, M].

        The first batch with savings on is checked against a real forward (see
        :mod:`extraction.savings`); on a mismatch or an error the savings are switched off."""
        if not self.savings or self.report.get("reference_check") is not None:
            return self._run(seqs, position, self.savings)
        try:
            if not self.prefix_ids:   # only the pruning saves: this batch is the real forward
                out = self._run(seqs, position, True, verify=True)
                if self.first_batch is not None and seqs != self.first_batch:
                    # a resumed run's first batch is not the plan's: give it the pruned
                    # forward's numbers, as in a run that was never interrupted
                    out = self._run(seqs, position, True)
                return out
            cut, _ = cut_after(seqs, position)
            r = int(np.argmin([len(s) for s in cut]))    # the most padded row
            ref, cache = self._reference(seqs[r], int(np.asarray(position)[r]))
            self._make_prefix(cache, len(seqs[r]))
            out = self._run(seqs, position, True)
            self._check(r, len(seqs[r]), ref, out)
            return out
        except Exception as exc:  # noqa: BLE001 - fall back to the plain forward
            self.report["reference_check"] = {"failed": f"{type(exc).__name__}: {exc}"}
            warnings.warn(f"extraction savings switched off for this run ({type(exc).__name__}: "
                          f"{exc}); running the plain forward", stacklevel=2)
            self.savings, self.prefix, self.prefix_ids = False, None, []
            self.report.update(enabled=False, prefix_cache_tokens=0, last_block_pruned=False,
                               tokens_run=self.report.get("tokens_prompt"))
            self.signature = self.members = None
            return self._run(seqs, position, False)

    def _reference(self, seq, position: int):
        """A real forward of one prompt alone (no cut, no prefix cache, no pruning): its option
        logits at the read position and its key/value cache (when a prefix is shared)."""
        ids = torch.as_tensor([seq], dtype=torch.long)
        index = read_index([len(seq)], ids.shape[1], [position])
        store: dict = {}
        handles = self._hooks(index, store)
        try:
            with torch.inference_mode():
                out = self.model(input_ids=ids.to(self.in_device),
                                 use_cache=bool(self.prefix_ids))
        finally:
            for h in handles:
                h.remove()
        ref = out.logits[:, 0].index_select(-1, self._idx.to(out.logits.device))
        cache = cache_of(out)
        return ref.float().cpu().numpy(), cache

    def _make_prefix(self, cache, length: int) -> None:
        """The prefix cache: the reference forward's, cut to the prefix (no extra forward);
        else a forward of the prefix alone; else none (the reason is recorded)."""
        try:
            self.prefix = PrefixCache(self.arch, self.prefix_ids, self.in_device,
                                      self.takes_positions, cache=cache, length=length)
            how = "cut from the reference forward"
        except Exception:  # noqa: BLE001 - e.g. a sliding-window layer cannot be cut back
            try:
                self.prefix = PrefixCache(self.arch, self.prefix_ids, self.in_device,
                                          self.takes_positions)
                how = "computed alone"
            except Exception as exc:  # noqa: BLE001 - any failure: run without the cache
                self.prefix, self.prefix_ids = None, []
                self.report.update(prefix_cache=f"{type(exc).__name__}: {exc}",
                                   prefix_cache_tokens=0, tokens_run=self._cut_tokens)
                return
        self.report["prefix_cache_source"] = how

    def _check(self, r: int, tokens: int, ref, out) -> None:
        """The saved forward's row ``r`` against the real forward ``ref``: its own option
        logits within the dtype's tolerance (else :class:`ExactnessError`: fall back); the
        error of Σu + bias is recorded too (a wrong family row is the runner's error)."""
        dtype, rtol = dtype_rtol(self.model)
        check = {"kind": "one prompt alone", "batch_row": r, "tokens": tokens, "rtol": rtol}
        self.report["reference_check"] = check
        if not np.isfinite(ref).all():   # the model itself fails: the runner reports it
            check["non_finite_reference"] = True
            return
        own = exactness_against_model(out[2][r:r + 1, None], 0.0, ref, None, rtol,
                                      family=self.arch.family, dtype=dtype)
        summed = exactness_against_model(out[0][r:r + 1], self.bias(), ref, self.arch.softcap,
                                         np.inf)
        check.update(max_abs_error_model_logits=float(own[0]),
                     max_abs_error_sum_u=float(summed[0]))

    def _check_verified(self, verify, out, tokens: int) -> None:
        """The first batch's real forward: the pruned modules' read rows alone against their
        outputs there (:meth:`LastBlockPruner.verify`; beyond the dtype's tolerance, or not the
        last block execution: :class:`ExactnessError`, the savings fall back); Σu + bias
        against the model's own logits on every row is recorded too."""
        dtype, rtol = dtype_rtol(self.model)
        e = verify.errors()
        check = {"kind": "first batch, real forward", "rows": int(out[0].shape[0]),
                 "tokens": tokens, "rtol": rtol, "pruned_modules_checked": e["modules"],
                 "max_abs_error_pruned_modules": e["max_abs_error"],
                 "pruned_module_last_execution": e["last_execution"]}
        self.report["reference_check"] = check
        if not (np.isfinite(out[2]).all() and np.isfinite(out[0]).all()):
            check["non_finite_output"] = True   # the model itself fails: the runner reports it
            return
        summed = exactness_against_model(out[0], self.bias(), out[2], self.arch.softcap, np.inf)
        check["max_abs_error_sum_u"] = float(summed.max())
        tol = rtol * (1 + e["max_abs_output"])
        if not e["last_execution"] or not e["max_abs_error"] <= tol:
            raise ExactnessError(
                f"last-block pruning: {e['modules']} pruned module call(s) seen (at the last "
                f"block execution: {e['last_execution']}), their read "
                f"rows alone differ by {e['max_abs_error']:.3g} (tolerance {tol:.3g}, rtol "
                f"{rtol:g}, dtype {dtype}, family {self.arch.family!r})")

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

    def _run(self, seqs, position, savings: bool, verify: bool = False):
        """One batch; ``savings``: cut and cached inputs, the last block pruned — or, with
        ``verify``, unpruned while :meth:`LastBlockPruner.verify` records the pruning's check."""
        kw, index = self._inputs(seqs, position, savings)
        rec = WriteRecorder(self.arch, heads=self.granularity == "head",
                            neurons=self.granularity == "neuron", device=self.collect,
                            index=index, experts=self.granularity == "expert")
        store: dict = {}
        narrow = savings and not verify and self.columns.ready
        handles = self._hooks(index, store, narrow)
        width = kw["input_ids"].shape[1]
        prune = (self.pruner.verify(self.arch.distinct_blocks, index, width) if verify
                 else self.pruner.at(index, width) if savings else contextlib.nullcontext())
        try:
            with torch.inference_mode(), rec, prune:
                out = self.model(**kw).logits[:, 0, :]
                model_logits = out if narrow else out.index_select(-1, self._idx.to(out.device))
        finally:
            for h in handles:
                h.remove()
        if savings and not verify:
            self.report["last_block_pruned"] = self.pruner.pruned > 0
            self.columns.report["narrowed_batches"] += int(narrow)
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
        out = (u.cpu().numpy(), logits.cpu().numpy(), model_logits.cpu().numpy(),
               scale.cpu().numpy())
        if verify:
            self._check_verified(prune, out, int(kw["attention_mask"].sum()))
        return out
