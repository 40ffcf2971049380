"""Exact projection of captured residual writes onto the option logits (DESIGN.md 2.1, 2.4).

With final norm ``N(x) = G ⊙ c(x) / s(x) + β`` (``c`` = identity and ``s`` = rms for RMSNorm;
``c`` = centring and ``s`` = std for LayerNorm; both statistics include eps) and unembedding
rows ``W_opt`` (plus LM-head bias ``b``), the option logits of ``x_final = Σ_m r_m`` are

    z = W_opt N(x_final) + b = Σ_m W_opt (G ⊙ c(r_m)) / s(x_final) + (W_opt β + b),

because ``c`` is linear. Hence ``u_m = W_opt (G ⊙ c(r_m)) / s(x_final)`` with the statistic of
the FULL final residual for every member (paper Eq. 2), and ``bias = W_opt β + b``.
``scale[:, m] = s(x_{≤m})`` is the statistic of the residual after member ``m``, so the logit
lens at junction ``k`` is ``(scale[:, -1] / scale[:, k]) · Σ_{m≤k} u_m + bias``.

Head granularity: an attention write is ``r = W_o z + b_o = Σ_h W_o[:, h] z_h + b_o`` (the output
projection is linear over the concatenated heads), so each head ``W_o[:, h] z_h`` and the bias
``b_o`` become members that sum exactly to the block member. Gemma-2 applies an RMSNorm after
``W_o``; it is linear once its statistic ``s(o)`` of the whole projected output is fixed, so
each head is scaled by ``G_post / s(o)``. Heads share the scale of the whole write and have
``junction=False`` except the last member of the write.
"""

from __future__ import annotations

import torch

from .architectures import BoundArch
from .capture import Write
from .contributions import Member

__all__ = ["members_for", "project", "head_params"]


def _write_is_junction(w: Write, arch: BoundArch) -> bool:
    # Parallel blocks add attention and MLP in one residual addition.
    return not (arch.parallel and w.kind == "attn")


def members_for(writes: list[Write], arch: BoundArch, granularity: str) -> tuple[
        list[Member], list[int]]:
    """Member table and, per member, the index of the write it belongs to."""
    members, owner = [], []
    for k, w in enumerate(writes):
        junction = _write_is_junction(w, arch)
        if w.kind == "embed":
            members.append(Member("embed", "embed", -1, 0, None, True))
            owner.append(k)
            continue
        base = f"L{w.block}.{w.kind}#{w.execution}"
        if granularity == "head" and w.kind == "attn":
            has_bias = arch.o_proj_weight(arch.distinct_blocks[w.block])[1] is not None
            n = arch.n_heads
            for h in range(n):
                last = h == n - 1 and not has_bias
                members.append(Member(f"{base}.h{h}", "attn", w.block, w.execution, h,
                                      junction and last))
                owner.append(k)
            if has_bias:
                members.append(Member(f"{base}.bias", "attn", w.block, w.execution, None,
                                      junction))
                owner.append(k)
        else:
            members.append(Member(base, w.kind, w.block, w.execution, None, junction))
            owner.append(k)
    return members, owner


def head_params(arch: BoundArch, device) -> dict:
    """Per distinct block: float32 ``W_o [d, H, d_head]``, o_proj bias and the post-norm
    (Gemma-2) parameters. Call it outside the capture hooks (it probes the norm modules)."""
    out = {}
    for i, block in enumerate(arch.distinct_blocks):
        wo, bo = arch.o_proj_weight(block)
        post = arch.post_norm(block)
        if post is not None and post.kind != "rms":
            raise ValueError("a LayerNorm after the attention output is not supported")
        out[i] = (wo.to(device), None if bo is None else bo.to(device),
                  None if post is None else (post.eps, post.gain.to(device)))
    return out


def _head_rows(w: Write, params: dict) -> torch.Tensor:
    """``[B, H (+1), d]`` per-head parts of an attention write (plus the o_proj bias)."""
    wo, bo, post = params[w.block]
    b, (d, n_heads, dh) = w.z.shape[0], wo.shape
    rows = torch.einsum("bhk,dhk->bhd", w.z.reshape(b, n_heads, dh), wo)
    if bo is not None:
        rows = torch.cat([rows, bo.expand(b, 1, d)], dim=1)
    if post is not None:
        eps, gain = post
        stat = torch.sqrt(rows.sum(dim=1).pow(2).mean(-1) + eps)
        rows = rows * gain / stat[:, None, None]
    return rows


def project(writes: list[Write], arch: BoundArch, granularity: str, w_opt: torch.Tensor,
            heads: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Member contributions ``u`` [B, M, C] and junction scales [B, M] (float32).

    ``writes`` must follow the member table of :func:`members_for` for the same arguments;
    ``heads`` is :func:`head_params` (needed for head granularity).
    """
    norm = arch.final_norm
    dev = w_opt.device
    gain = norm.gain.to(dev)
    r = torch.stack([w.r for w in writes], dim=1)                     # [B, K, d]
    wscale = norm.stat(torch.cumsum(r, dim=1))                        # [B, K]
    # a non-junction write takes the scale of the next junction (parallel attention); the
    # index is built on the host (per-element reads of a device tensor would sync every write)
    nxt = list(range(len(writes)))
    for k in range(len(writes) - 2, -1, -1):
        if not _write_is_junction(writes[k], arch):
            nxt[k] = nxt[k + 1]
    wscale = wscale[:, torch.as_tensor(nxt, device=dev)]
    rows, owner = [], []
    for k, w in enumerate(writes):
        if granularity == "head" and w.kind == "attn":
            part = _head_rows(w, heads)
        else:
            part = w.r[:, None, :]
        rows.append(part)
        owner.extend([k] * part.shape[1])
    rows = torch.cat(rows, dim=1)                                     # [B, M, d]
    s_final = wscale[:, -1]
    u = torch.einsum("bmd,cd->bmc", norm.center(rows) * gain, w_opt) / s_final[:, None, None]
    return u, wscale[:, torch.as_tensor(owner, device=dev)]
