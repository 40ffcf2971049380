"""Exact savings in the forward pass: work whose result is never read is not done.

Three savings, each exact up to float rounding (the arithmetic is the same, only the shapes of
the matrix products change):

- **Nothing after the read position** (:func:`cut_after`): the model is causal, so the residual
  stream at position ``p`` depends on tokens ``0..p`` only; every prompt is cut after its read
  position (``position=`` other than the last token).
- **Shared prefix** (:class:`PrefixCache`): the longest token prefix ``P`` common to every
  prompt (capped so that every read position lies after it; :func:`shared_prefix`) — a chat
  template's system turn, a template head, fixed demonstrations — is run once (its keys and
  values are cut from the reference forward below, or computed alone where a sliding-window
  cache cannot be cut); every batch then runs only the suffixes on a copy of them. The
  suffixes are *right*-padded after the prefix (attention mask ``[1]·P + suffix mask``,
  positions ``P, P+1, …``), so the valid tokens of a row stay contiguous: no padding lies
  between them, and neither rotary positions nor ALiBi distances change. Refused (the run goes
  on without it, the reason in ``meta["savings"]``) where a block object executes more than
  once (layer sharing: every execution would append to the same cache layer) or the model
  returns no cache.
- **Last block at the read position only** (:class:`LastBlockPruner`): after the last block
  execution only the read position goes through the final norm and the head, so at that
  execution the attention output projection and the MLP see only the read position's row
  (``[B, 1, ·]``, forward pre-hooks); the block's residual addition broadcasts it, and only the
  read row — the one the head reads — is the true value. Keys, values and queries of that
  attention are still computed at every position (one module computes them from one input).
  With layer sharing only the last execution of the last block is pruned. Saving: about
  ``(o_proj + MLP) / block`` of one block in ``L`` (SmolLM2-135M: 84 % of one of 30 blocks).
- **The LM head on the read columns only** (:class:`HeadColumns`): the head (an
  ``nn.Linear`` over the vocabulary) is fed a zero-width input and its output replaced by the
  product of the same input with its own weight rows of the ``C`` read ids, so the family's own
  post-processing (logit scale, soft-cap) runs on ``[B, 1, C]`` instead of ``[B, 1, V]``. Only
  after a real forward (below) has checked those rows' product against the head's own columns
  on every row of it; never with ``vocab="full"``. Saving: ``d · V`` multiply-accumulates per
  example (SmolLM2-135M: 28 M, about 0.7 % of a 35-token prompt; 18 ms per batch of 16 on CPU).

Every extraction checks the savings against a real forward of the model, on its first batch:

- **with a shared prefix**, the most padded prompt of the first batch is also run alone,
  unpruned and uncached (its cache gives the prefix's keys and values, so the prefix is still
  run once), and its option logits must match the saved forward's within the dtype's
  tolerance; the error of Σu + bias against it is recorded too. Its cost is that prompt's
  suffix once more;
- **without one** (none shared, or one whose cache would save no more tokens than that
  one-prompt check costs: ``P · (N − 1)`` against the shortest prompt), the first batch itself
  runs unpruned: a real forward, against whose logits every one of its examples is checked.
  On that batch's own activations :meth:`LastBlockPruner.verify` records what the pruning
  relies on: the pruned modules (attention output projection, MLP) of the last block
  execution, fed only the read rows, give the outputs they give at those rows when fed every
  position, and that execution is the last block execution of the forward. It costs no extra
  forward (only the pruning's saving on the first batch, and one single-row call per module).

The same real forward checks the head's read columns: its own output at the read ids against
the product of its input with the rows :class:`HeadColumns` keeps, within the dtype's tolerance
(else the head stays whole for the run, the numbers in ``meta["savings"]["head_columns"]``).

On a mismatch or an error the savings are switched off for the run (a warning, the numbers in
``meta["savings"]``).
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import torch

from .architectures import BoundArch

__all__ = ["cut_after", "shared_prefix", "PrefixCache", "LastBlockPruner", "cache_refusal",
           "cache_of", "HeadColumns"]


def cut_after(seqs, positions) -> tuple[list[list[int]], np.ndarray]:
    """Prompts cut after their read position, and the absolute read positions."""
    lengths = np.array([len(s) for s in seqs])
    pos = np.asarray(positions, dtype=np.int64)
    at = np.where(pos < 0, lengths + pos, pos)
    return [list(s[: int(a) + 1]) for s, a in zip(seqs, at)], at


def shared_prefix(seqs) -> int:
    """Length of the longest token prefix common to every sequence, leaving each at least its
    last token (the read position) after it."""
    first = seqs[0]
    p = min(len(s) for s in seqs) - 1
    for s in seqs[1:]:   # the first index where they differ bounds the common prefix
        p = next((k for k in range(p) if s[k] != first[k]), p)
    return max(p, 0)


def cache_refusal(arch: BoundArch) -> str | None:
    """Why the shared-prefix cache cannot be used with this model (None: it can)."""
    if len(arch.distinct_blocks) != len(arch.blocks):
        return ("layer sharing: a block that executes several times would append to one "
                "cache layer")
    return None


class PrefixCache:
    """Keys and values of the shared prefix, computed once; inputs of the suffix batches.

    Parameters
    ----------
    arch : BoundArch
    prefix : list of int
        The shared prefix tokens (``P`` of them).
    device : torch.device
        Input device of the model.
    takes_positions : bool
        Whether the model's forward takes ``position_ids``.
    cache, length : optional
        The cache of a forward over ``length`` tokens that start with ``prefix`` (the
        reference forward): it is cut back to the prefix instead of running the prefix again.

    Raises
    ------
    ValueError
        The model returned no key/value cache.
    """

    def __init__(self, arch: BoundArch, prefix: list[int], device, takes_positions: bool,
                 cache=None, length: int | None = None):
        self.length, self.device, self.takes_positions = len(prefix), device, takes_positions
        params = inspect.signature(type(arch.base).forward).parameters
        # transformers >= 5.2x names it ``cache`` (``past_key_values`` deprecated)
        self.argument = "cache" if "cache" in params else "past_key_values"
        if cache is not None:   # a forward's cache over ``length`` tokens: keep the prefix
            cache.crop(-(length - self.length))   # negative: tokens removed, in every version
            if cache.get_seq_length() != self.length:
                raise ValueError(f"the cache holds {cache.get_seq_length()} positions after "
                                 f"cutting, not the {self.length} of the prefix")
        else:
            ids = torch.as_tensor([prefix], dtype=torch.long, device=device)
            kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "use_cache": True}
            if takes_positions:
                kw["position_ids"] = torch.arange(self.length, device=device)[None]
            with torch.inference_mode():
                out = arch.base(**kw)
            cache = cache_of(out)
        self.cache = cache
        if self.cache is None or not hasattr(self.cache, "batch_repeat_interleave"):
            raise ValueError(f"{type(arch.base).__name__} returned no key/value cache")

    def inputs(self, suffixes: list[list[int]], pad_id: int) -> dict:
        """Forward keyword arguments for ``suffixes`` right-padded after the prefix."""
        b, s = len(suffixes), max(len(x) for x in suffixes)
        ids = torch.full((b, s), pad_id, dtype=torch.long)
        mask = torch.zeros((b, self.length + s), dtype=torch.long)
        mask[:, : self.length] = 1
        for j, x in enumerate(suffixes):
            ids[j, : len(x)] = torch.as_tensor(x, dtype=torch.long)
            mask[j, self.length: self.length + len(x)] = 1
        cache = copy.deepcopy(self.cache)
        cache.batch_repeat_interleave(b)
        kw = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device),
              self.argument: cache, "use_cache": True}
        if self.takes_positions:
            kw["position_ids"] = (self.length + torch.arange(s)).expand(b, s).to(self.device)
        return kw


def cache_of(out):
    """The key/value cache a forward returned (``cache`` or, before transformers 5.2x,
    ``past_key_values``), or None."""
    if "cache" in getattr(out, "__dataclass_fields__", {}) or hasattr(type(out), "cache"):
        return out.cache
    return getattr(out, "past_key_values", None)


def _mlp_module(arch: BoundArch, block):
    """The module computing the MLP write from the block's normalised residual, or None
    (OPT: the MLP is not one module)."""
    spec = arch.spec
    if spec.down_proj is None:
        return arch.submodule(block, spec.mlp_write) if spec.moe else None
    parent = spec.down_proj.rpartition(".")[0]
    return arch.submodule(block, parent) if parent else None


class LastBlockPruner:
    """Forward pre-hooks computing the last block execution's attention output projection and
    MLP at the read position only (see the module docstring).

    Use as ``with pruner.at(index, width): model(...)`` with ``index`` [B] the read column of
    every row and ``width`` the batch's sequence width.
    """

    def __init__(self, arch: BoundArch):
        self.block = arch.blocks[-1]
        self.total = sum(b is self.block for b in arch.blocks)
        self.targets = [m for m in (arch.submodule(self.block, arch.spec.o_proj),
                                    _mlp_module(arch, self.block)) if m is not None]
        self.pruned = 0   # module calls cut in the last forward

    def at(self, index: torch.Tensor, width: int) -> _Hooks:
        return _Hooks(self, index, width)

    def verify(self, blocks, index: torch.Tensor, width: int) -> _Verify:
        """A context that prunes nothing and records, on the forward run inside it, what the
        pruning relies on (see :class:`_Verify`); ``blocks``: the distinct block modules."""
        return _Verify(self, blocks, index, width)


class _Hooks:
    def __init__(self, pruner: LastBlockPruner, index: torch.Tensor, width: int):
        self.p, self.index, self.width = pruner, index, width
        self.count, self.handles = 0, []

    def _count(self, module, args):
        self.count += 1

    def _read_rows(self, args):
        """``(x, rows, at)`` when ``args[0]`` is a pruned module's full-width input at the last
        block execution (``x[rows, at]``: its read rows), else None."""
        x = args[0] if args else None
        if (self.count != self.p.total or not isinstance(x, torch.Tensor) or x.ndim != 3
                or x.shape[1] != self.width):
            return None
        return x, torch.arange(x.shape[0], device=x.device), self.index.to(x.device)

    def _cut(self, module, args):
        found = self._read_rows(args)
        if found is None:
            return None
        x, rows, at = found
        self.p.pruned += 1
        return (x[rows, at][:, None, :],) + tuple(args[1:])

    def __enter__(self):
        self.p.pruned = 0
        self.handles = [self.p.block.register_forward_pre_hook(self._count)]
        self.handles += [m.register_forward_pre_hook(self._cut) for m in self.p.targets]
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []


class _Verify(_Hooks):
    """Forward hooks on the pruned modules of an unpruned forward: at the last block execution
    they keep each module's read rows (input and output); :meth:`errors` then feeds the module
    those input rows alone (``[B, 1, ·]``, as :class:`_Hooks` does) and compares the outputs.
    Pre-hooks on every block count the executions: the pruned one must be the last."""

    def __init__(self, pruner: LastBlockPruner, blocks, index: torch.Tensor, width: int):
        super().__init__(pruner, index, width)
        self.blocks, self.executions = list(blocks), 0
        self.kept: list = []   # (module, read-row input [B, 1, d], rest of args, kwargs,
        #                         output rows, (rows, at), block executions so far)

    def _execution(self, module, args):
        self.executions += 1

    def _keep(self, module, args, kwargs, output):
        found = self._read_rows(args)
        if found is None:
            return
        x, rows, at = found
        y = output[0] if isinstance(output, tuple) else output
        self.kept.append((module, x[rows, at][:, None, :], tuple(args[1:]), dict(kwargs),
                          y[rows, at].float(), (rows, at), self.executions))

    def __enter__(self):
        self.handles = [self.p.block.register_forward_pre_hook(self._count)]
        self.handles += [b.register_forward_pre_hook(self._execution) for b in self.blocks]
        self.handles += [m.register_forward_hook(self._keep, with_kwargs=True)
                         for m in self.p.targets]
        return self

    def errors(self) -> dict:
        """``{"modules", "max_abs_error", "max_abs_output", "last_execution"}`` (call after the
        forward, outside the context: the module calls run without any hook)."""
        err, big = 0.0, 0.0
        for module, x, rest, kwargs, y, (rows, at), _ in self.kept:
            with torch.inference_mode():
                cut = module(x, *rest, **kwargs)
            cut = cut[0] if isinstance(cut, tuple) else cut
            # [B, 1, ·]; or [B, T, ·] where the module adds a full-width residual argument
            # (BLOOM, MPT): the pruned forward reads it at the read row, so does the check
            cut = (cut[:, 0] if cut.shape[1] == 1 else cut[rows, at]).float()
            err = max(err, float((cut - y).abs().max()))
            big = max(big, float(y.abs().max()))
        return {"modules": len(self.kept), "max_abs_error": err, "max_abs_output": big,
                "last_execution": all(k[-1] == self.executions for k in self.kept)}


class HeadColumns:
    """The LM head's weight rows (and bias) of the read vocabulary ids, once checked.

    Parameters
    ----------
    head : module
        The model's output embedding.
    ids : sequence of int
        The read vocabulary ids (``C`` of them, in column order).

    ``report`` counts the narrowed batches and says why none are where none can be (not an
    ``nn.Linear``, every column read, weights offloaded, the check failed). Narrowing starts
    only after :meth:`verify` has passed on a real forward's head call.
    """

    def __init__(self, head, ids):
        self.rows, self.checked, self.passed = None, False, False
        vocab = getattr(head, "out_features", None)
        self.report: dict = {"columns": len(ids), "vocab": vocab, "narrowed_batches": 0}
        if not isinstance(head, torch.nn.Linear):
            self.report["reason"] = f"the LM head is a {type(head).__name__}, not nn.Linear"
        elif len(ids) >= head.out_features:
            self.report["reason"] = "every vocabulary column is read"
        elif head.weight.device.type == "meta":
            self.report["reason"] = "the LM head's weights are offloaded"
        else:
            idx = torch.as_tensor(list(ids), dtype=torch.long, device=head.weight.device)
            bias = None if head.bias is None else head.bias.detach().index_select(0, idx)
            self.rows = (head.weight.detach().index_select(0, idx), bias)
            self.report["reason"] = "not checked yet"

    @property
    def ready(self) -> bool:
        """Whether the head may be narrowed (the rows exist and their check passed)."""
        return self.rows is not None and self.passed

    @property
    def pending(self) -> bool:
        """Whether the rows exist and still await their check."""
        return self.rows is not None and not self.checked

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        """``h [B, 1, d]`` (the head's input) times the read rows: ``[B, 1, C]``."""
        w, b = self.rows
        return torch.nn.functional.linear(h.to(w.device, w.dtype), w, b)

    def verify(self, h: torch.Tensor, columns: torch.Tensor, rtol: float) -> None:
        """Check :meth:`__call__` on a real forward's head input ``h`` against the head's own
        output ``columns [B, C]`` at the read ids: within ``rtol · (1 + max |columns|)``."""
        if not self.pending:
            return
        ref = columns.float()
        err = float((self(h)[:, 0].float().to(ref.device) - ref).abs().max())
        tol = rtol * (1 + float(ref.abs().max()))
        self.checked, self.passed = True, err <= tol
        self.report.update(max_abs_error=err, tolerance=tol, reason=(
            "checked on the first real forward" if self.passed else
            f"its rows' product differs from the head's own output by {err:.3g} (tolerance "
            f"{tol:.3g})"))
