"""Forward hooks that record every residual-stream write at the read position (default last).

For one forward pass of the base model the :class:`WriteRecorder` produces the ordered list of
writes ``r_1..r_K`` (float32, last position only):

- ``embed``: the input of the first executed block (token embedding plus learned positions for
  GPT-2, times sqrt(d) for Gemma) — recorded by a forward pre-hook;
- one ``attn`` and one ``mlp`` write per block *execution*, from forward hooks on the modules
  whose outputs are added to the residual (for GPT-NeoX parallel blocks these are the two
  summands of the single residual addition). A block object that appears several times in the
  layer list (MobileLLM-style layer sharing) gives one write per execution.

With ``heads=True`` a forward pre-hook on the attention output projection also keeps its input
(the concatenated head outputs) so the attention write can be split per head.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .architectures import BoundArch

__all__ = ["Write", "WriteRecorder"]


@dataclass
class Write:
    kind: str                    # "embed" | "attn" | "mlp"
    block: int                   # distinct block index (-1 for embed)
    execution: int               # how many times this block ran before in this forward
    r: torch.Tensor              # [B, d] float32 residual write at the read position
    z: torch.Tensor | None = None  # [B, H*d_head] o_proj input (head granularity)
    a: torch.Tensor | dict | None = None  # [B, F] down-projection input (neuron granularity),
    # or the routed experts' inputs {x, index, weight[, shared, gate]} (expert granularity)


def _first(t) -> torch.Tensor:
    return t[0] if isinstance(t, tuple) else t


class WriteRecorder:
    """Context manager attaching the capture hooks to a bound architecture.

    Parameters
    ----------
    arch : BoundArch
    heads : bool
        Also capture the attention output-projection input.
    device : torch.device
        Where captured vectors are collected (the LM-head device).
    neurons : bool
        Also capture the MLP down-projection input (one coordinate per neuron).
    index : LongTensor [B], optional
        Read position of every row of the batch in the padded sequence (default: the last).

    Family adapters (see :class:`~extraction.architectures.ArchSpec`): a module listed in
    ``residual_in_output`` returns ``residual + write`` (BLOOM, MPT), so its residual argument
    (``args[1]`` or ``residual=``) is subtracted in float32; ``write_scale`` (Granite's residual
    multiplier) multiplies the hooked output; a module that flattens ``[B, T, d]`` to
    ``[B·T, d]`` (OPT's ``fc2``) is reshaped back.
    """

    def __init__(self, arch: BoundArch, *, heads: bool, device, neurons: bool = False,
                 index=None, experts: bool = False):
        self.arch, self.heads, self.neurons, self.device = arch, heads, neurons, device
        self.experts = experts
        self.index = index
        # every row read at one column (a left-padded batch read at its last token): a slice,
        # not a gather (advanced indexing costs about twice as much per hook call)
        same = index is not None and len(index) > 0 and bool((index == index[0]).all())
        self._column = int(index[0]) if same else None
        self.writes: list[Write] = []
        self._handles = []
        self._count: dict[tuple[int, str], int] = {}
        self._pending: dict[tuple[int, str], torch.Tensor] = {}

    def reset(self) -> None:
        self.writes, self._count, self._pending, self._moe = [], {}, {}, {}
        self._gather: dict = {}

    def _at(self, t) -> tuple[torch.Tensor, bool]:
        """The read position of every row, and whether that is a view of ``t``."""
        t = _first(t).detach()
        b = self._batch
        if t.ndim == 2:          # [B·T, d] (OPT flattens the MLP input)
            t = t.view(b, -1, t.shape[-1])
        if self.index is None:
            return t[:, -1, :], True
        if t.shape[1] == 1:      # cut to the read position (extraction.savings.LastBlockPruner)
            return t[:, 0, :], True
        if self._column is not None:
            return t[:, self._column, :], True
        rows_idx = self._gather.get(t.device)
        if rows_idx is None:     # once per batch and device, not once per hook call
            rows_idx = self._gather[t.device] = (torch.arange(b, device=t.device),
                                                 self.index.to(t.device))
        return t[rows_idx[0], rows_idx[1], :], False   # advanced indexing: a fresh tensor

    def _keep(self, t, dtype=torch.float32) -> torch.Tensor:
        x, view = self._at(t)
        # a view would keep the whole [B, T, d] activation alive: copy it
        return x.to(self.device, dtype, copy=view)

    def _embed_hook(self, module, args, kwargs):
        if not self.writes:
            hs = args[0] if args else kwargs["hidden_states"]
            self._batch = hs.shape[0]
            self.writes.append(Write("embed", -1, 0, self._keep(hs)))

    def _write_hook(self, block: int, kind: str):
        subtract = kind in self.arch.spec.residual_in_output
        scale = self.arch.write_scale

        def hook(module, args, kwargs, output):
            key = (block, kind)
            e = self._count.get(key, 0)
            self._count[key] = e + 1
            r = self._keep(output)
            if subtract:
                r = r - self._keep(args[1] if len(args) > 1 else kwargs["residual"])
            if scale != 1.0:
                r = r * scale
            pend = self._pending.pop((block, kind), None)
            if self.experts and kind == "mlp":
                pend = self._moe.pop(block, None)   # None: a dense layer of an MoE model
            elif (self.heads and kind == "attn" or self.neurons and kind == "mlp") and pend is None:
                raise RuntimeError(f"block {block}: the {kind} output projection was not called")
            z, a = (pend, None) if kind == "attn" else (None, pend)
            self.writes.append(Write(kind, block, e, r, z, a))
        return hook

    def _experts_hook(self, block: int):
        def hook(module, args, kwargs):
            names = ("hidden_states", "top_k_index", "top_k_weights")
            x, idx, w = (args[k] if len(args) > k else kwargs[n] for k, n in enumerate(names))
            self._moe.setdefault(block, {}).update(
                x=self._keep(x), index=self._keep(idx, torch.long), weight=self._keep(w))
        return hook

    def _shared_hook(self, block: int, key: str):
        def hook(module, args, output):
            self._moe.setdefault(block, {})[key] = self._keep(output)
        return hook

    def _input_hook(self, block: int, kind: str):
        def hook(module, args):
            self._pending[(block, kind)] = self._keep(args[0])
        return hook

    def __enter__(self) -> WriteRecorder:
        arch = self.arch
        self.reset()
        self._handles.append(arch.blocks[0].register_forward_pre_hook(
            self._embed_hook, with_kwargs=True))
        for i, block in enumerate(arch.distinct_blocks):
            for kind, path in (("attn", arch.spec.attn_write), ("mlp", arch.spec.mlp_write)):
                self._handles.append(arch.submodule(block, path).register_forward_hook(
                    self._write_hook(i, kind), with_kwargs=True))
            if self.heads:
                self._handles.append(arch.submodule(block, arch.spec.o_proj)
                                     .register_forward_pre_hook(self._input_hook(i, "attn")))
            if self.experts:
                self._handles += self._moe_hooks(i, block)
            if self.neurons:
                arch.down_proj_weight(block)   # clear error for families without one
                self._handles.append(arch.submodule(block, arch.spec.down_proj)
                                     .register_forward_pre_hook(self._input_hook(i, "mlp")))
        return self

    def _moe_hooks(self, i: int, block) -> list:
        spec = self.arch.spec
        if spec.experts is None:
            raise ValueError(f"family {self.arch.family!r} has no mixture-of-experts blocks: "
                             "granularity='expert' is not available")
        try:
            experts = self.arch.submodule(block, spec.experts)
        except AttributeError:
            return []      # a dense MLP layer of a mixture-of-experts model: no split
        handles = [experts.register_forward_pre_hook(self._experts_hook(i), with_kwargs=True)]
        if spec.shared_expert is not None:
            handles.append(self.arch.submodule(block, spec.shared_expert)
                           .register_forward_hook(self._shared_hook(i, "shared")))
            handles.append(self.arch.submodule(block, spec.shared_gate)
                           .register_forward_hook(self._shared_hook(i, "gate")))
        return handles

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
