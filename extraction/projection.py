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

Neuron granularity: an MLP write is ``r = W_d a + b_d = Σ_k W_d[:, k] a_k + b_d`` (the down
projection is linear over the neurons ``a``), so ``u_k = a_k · W_opt (G ⊙ c(W_d[:, k])) / s`` and
the bias member sum exactly to the block member; a post-MLP RMSNorm (Gemma-2/3, OLMo-2/3) is
handled like the attention one. The ``[C, F]`` matrix ``W_opt (G ⊙ c(W_d))`` is formed once per
block, so a neuron member costs one multiply per option and example.
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


def _split(w: Write, granularity: str) -> bool:
    return (granularity == "head" and w.kind == "attn") or (
        granularity == "neuron" and w.kind == "mlp") or (
        granularity == "expert" and w.kind == "mlp" and w.a is not None)


def _experts(arch: BoundArch, block: int):
    return arch.submodule(arch.distinct_blocks[block], arch.spec.experts)


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
        if _split(w, granularity):
            block = arch.distinct_blocks[w.block]
            if granularity == "expert":
                n, has_bias = _experts(arch, w.block).gate_up_proj.shape[0], False
                for j in range(n):
                    members.append(Member(f"{base}.x{j}", "mlp", w.block, w.execution, None,
                                          junction and j == n - 1 and "shared" not in w.a))
                    owner.append(k)
                if "shared" in w.a:
                    members.append(Member(f"{base}.shared", "mlp", w.block, w.execution, None,
                                          junction))
                    owner.append(k)
                continue
            if w.kind == "attn":
                n, has_bias, field = arch.n_heads, arch.o_proj_weight(block)[1] is not None, "h"
            else:
                wd, bd = arch.down_proj_weight(block)
                n, has_bias, field = wd.shape[1], bd is not None, "n"
            for h in range(n):
                last = h == n - 1 and not has_bias
                members.append(Member(f"{base}.{field}{h}", w.kind, w.block, w.execution,
                                      h if field == "h" else None, junction and last,
                                      h if field == "n" else None))
                owner.append(k)
            if has_bias:
                members.append(Member(f"{base}.bias", w.kind, w.block, w.execution, None,
                                      junction))
                owner.append(k)
        else:
            members.append(Member(base, w.kind, w.block, w.execution, None, junction))
            owner.append(k)
    return members, owner


def _post(arch: BoundArch, block, kind: str, device):
    post = arch.post_norm(block, kind)
    if post is not None and post.kind != "rms":
        raise ValueError(f"a LayerNorm after the {kind} output is not supported")
    return None if post is None else (post.eps, post.gain.to(device))


def _output_params(arch: BoundArch, device, weight, kind: str) -> dict:
    """Per distinct block: the float32 output weight ``weight(block)``, its bias and the
    post-``kind`` norm parameters."""
    out = {}
    for i, block in enumerate(arch.distinct_blocks):
        w, b = weight(block)
        out[i] = (w.to(device), None if b is None else b.to(device),
                  _post(arch, block, kind, device))
    return out


def head_params(arch: BoundArch, device) -> dict:
    """Per distinct block: float32 ``W_o [d, H, d_head]``, o_proj bias and the post-norm
    (Gemma-2) parameters. Call it outside the capture hooks (it probes the norm modules)."""
    return _output_params(arch, device, arch.o_proj_weight, "attn")


def neuron_params(arch: BoundArch, device) -> dict:
    """Per distinct block: float32 ``W_d [d, F]``, its bias and the post-MLP norm parameters."""
    return _output_params(arch, device, arch.down_proj_weight, "mlp")


def _post_factor(o: torch.Tensor, post) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``1 / s(o)`` per example [B] and the post-norm gain (or ones and None)."""
    if post is None:
        return torch.ones(o.shape[0], device=o.device), None
    eps, gain = post
    return 1.0 / torch.sqrt(o.pow(2).mean(-1) + eps), gain


def _head_u(w: Write, params: dict, lin) -> torch.Tensor:
    """``[B, H (+1), C]`` per-head parts of an attention write (plus the o_proj bias)."""
    wo, bo, post = params[w.block]
    b, (d, n_heads, dh) = w.z.shape[0], wo.shape
    rows = torch.einsum("bhk,dhk->bhd", w.z.reshape(b, n_heads, dh), wo)
    if bo is not None:
        rows = torch.cat([rows, bo.expand(b, 1, d)], dim=1)
    inv, gain = _post_factor(rows.sum(dim=1), post)
    rows = rows * inv[:, None, None] if gain is None else rows * gain * inv[:, None, None]
    return lin(rows)


def _neuron_u(w: Write, params: dict, lin, cache: dict) -> torch.Tensor:
    """``[B, F (+1), C]`` per-neuron parts of an MLP write (plus the down-projection bias)."""
    wd, bd, post = params[w.block]
    inv, gain = _post_factor(w.a @ wd.t() + (0 if bd is None else bd), post)
    if w.block not in cache:     # W_opt (G ⊙ c(G_post ⊙ W_d[:, k])) for every neuron k: [F, C]
        cols = wd.t() if gain is None else wd.t() * gain
        pb = None if bd is None else (bd if gain is None else bd * gain)[None]
        cache[w.block] = (lin(cols[None])[0], None if pb is None else lin(pb[None])[0])
    p, pb = cache[w.block]
    u = w.a[:, :, None] * p[None] * inv[:, None, None]
    if pb is not None:
        u = torch.cat([u, pb.expand(u.shape[0], 1, -1) * inv[:, None, None]], dim=1)
    return u


def _expert_u(w: Write, arch: BoundArch, lin) -> torch.Tensor:
    """``[B, E (+1), C]``: each routed expert's weighted output at the read position (zero
    where the router did not pick it) and the gated shared expert, recomputed from the fused
    expert weights ``gate_up_proj [E, 2F, d]`` and ``down_proj [E, d, F]``."""
    ex = _experts(arch, w.block)
    gu, dn = ex.gate_up_proj.detach(), ex.down_proj.detach()
    x, idx, wt = w.a["x"], w.a["index"], w.a["weight"]
    b, n = x.shape[0], gu.shape[0]
    weight = torch.zeros(b, n + 1, device=x.device).scatter_add_(1, idx, wt)[:, :n]
    rows = torch.zeros(b, n, x.shape[1], device=x.device)
    xe = x.to(gu.device, gu.dtype)
    for j in torch.nonzero(weight.abs().sum(0) > 0).flatten().tolist():
        gate, up = (xe @ gu[j].t()).chunk(2, dim=-1)
        out = (ex.act_fn(gate) * up) @ dn[j].t()
        rows[:, j] = out.to(x.device, torch.float32) * weight[:, j:j + 1]
    if "shared" in w.a:
        shared = torch.sigmoid(w.a["gate"]) * w.a["shared"]
        rows = torch.cat([rows, shared[:, None, :]], dim=1)
    return lin(rows)


def project(writes: list[Write], arch: BoundArch, granularity: str, w_opt: torch.Tensor,
            heads: dict | None = None, neurons: dict | None = None
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Member contributions ``u`` [B, M, C] and junction scales [B, M] (float32).

    ``writes`` must follow the member table of :func:`members_for` for the same arguments;
    ``heads`` is :func:`head_params` (head granularity), ``neurons`` :func:`neuron_params`
    (neuron granularity). ``w_opt`` is the float32 unembedding of the read vocabulary with the
    family's logit multiplier folded in (:func:`extraction.architectures.unembedding`).
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
    s_final = wscale[:, -1]

    def lin(rows):   # [B, m, d] -> [B, m, C]: W_opt (G ⊙ c(rows)), before the 1/s_final
        return torch.einsum("bmd,cd->bmc", norm.center(rows) * gain, w_opt)

    whole = lin(r)   # every write as one member: one product, not one per write
    parts, owner, cache = [], [], {}
    for k, w in enumerate(writes):
        if _split(w, granularity):
            if granularity == "expert":
                part = _expert_u(w, arch, lin)
            elif w.kind == "attn":
                part = _head_u(w, heads, lin)
            else:
                part = _neuron_u(w, neurons, lin, cache)
            if arch.write_scale != 1.0:   # Granite: the block adds multiplier × its output
                part = part * arch.write_scale
        else:
            part = whole[:, k:k + 1]
        parts.append(part)
        owner.extend([k] * part.shape[1])
    u = torch.cat(parts, dim=1) / s_final[:, None, None]
    return u, wscale[:, torch.as_tensor(owner, device=dev)]
