"""Forward hooks that record every residual-stream write at the last position.

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
    r: torch.Tensor              # [B, d] float32 residual write at the last position
    z: torch.Tensor | None = None  # [B, H*d_head] o_proj input (head granularity)


def _last(t) -> torch.Tensor:
    if isinstance(t, tuple):
        t = t[0]
    return t[:, -1, :].detach()


class WriteRecorder:
    """Context manager attaching the capture hooks to a bound architecture.

    Parameters
    ----------
    arch : BoundArch
    heads : bool
        Also capture the attention output-projection input.
    device : torch.device
        Where captured vectors are collected (the LM-head device).
    """

    def __init__(self, arch: BoundArch, *, heads: bool, device):
        self.arch, self.heads, self.device = arch, heads, device
        self.writes: list[Write] = []
        self._handles = []
        self._count: dict[tuple[int, str], int] = {}
        self._pending_z: dict[int, torch.Tensor] = {}

    def reset(self) -> None:
        self.writes, self._count, self._pending_z = [], {}, {}

    def _keep(self, t) -> torch.Tensor:
        # copy=True: a view would keep the whole [B, T, d] activation alive
        return _last(t).to(self.device, torch.float32, copy=True)

    def _embed_hook(self, module, args, kwargs):
        if not self.writes:
            hs = args[0] if args else kwargs["hidden_states"]
            self.writes.append(Write("embed", -1, 0, self._keep(hs)))

    def _write_hook(self, block: int, kind: str):
        def hook(module, args, output):
            key = (block, kind)
            e = self._count.get(key, 0)
            self._count[key] = e + 1
            z = self._pending_z.pop(block, None) if kind == "attn" else None
            if self.heads and kind == "attn" and z is None:
                raise RuntimeError(f"block {block}: attention output projection was not called")
            self.writes.append(Write(kind, block, e, self._keep(output), z))
        return hook

    def _z_hook(self, block: int):
        def hook(module, args):
            self._pending_z[block] = self._keep(args[0])
        return hook

    def __enter__(self) -> WriteRecorder:
        arch = self.arch
        self.reset()
        self._handles.append(arch.blocks[0].register_forward_pre_hook(
            self._embed_hook, with_kwargs=True))
        for i, block in enumerate(arch.distinct_blocks):
            self._handles.append(arch.submodule(block, arch.spec.attn_write)
                                 .register_forward_hook(self._write_hook(i, "attn")))
            self._handles.append(arch.submodule(block, arch.spec.mlp_write)
                                 .register_forward_hook(self._write_hook(i, "mlp")))
            if self.heads:
                self._handles.append(arch.submodule(block, arch.spec.o_proj)
                                     .register_forward_pre_hook(self._z_hook(i)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
