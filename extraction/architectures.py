"""Where each supported decoder family writes into its residual stream (DESIGN.md 2.1).

A pre-norm decoder computes ``x_final = Σ_m r_m``: the embedding output (with learned
positions or the Gemma embedding scale, i.e. whatever enters the first block) plus one write per
attention and per MLP execution. :func:`resolve` binds an :class:`ArchSpec` to a loaded model and
returns the module handles the hooks need (the blocks, the two write modules of each block, the
attention output projection for head granularity) together with the final norm and the
unembedding rows in float32.

The family table (:data:`SPECS`, one :class:`ArchSpec` per ``config.model_type``) and what each
adapter models are in :mod:`extraction.families`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .families import SPECS, ArchSpec

__all__ = ["ArchSpec", "BoundArch", "FinalNorm", "SPECS", "resolve", "supported_families",
           "norm_stat"]


def supported_families() -> list[str]:
    """Sorted ``config.model_type`` values that :func:`resolve` accepts."""
    return sorted(SPECS)


@dataclass
class FinalNorm:
    """A norm ``N(x) = G ⊙ center(x) / stat(x) + beta`` in float32.

    ``kind`` is ``"rms"`` (stat = sqrt(mean(x²) + eps), no centring) or ``"layer"``
    (stat = sqrt(mean((x − mean x)²) + eps), centring, optional beta).
    """

    kind: str
    eps: float
    gain: torch.Tensor          # [d] float32, already including the Gemma (1 + g) offset
    beta: torch.Tensor | None   # [d] float32 or None

    def center(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=-1, keepdim=True) if self.kind == "layer" else x

    def stat(self, x: torch.Tensor) -> torch.Tensor:
        return norm_stat(x, self.kind, self.eps)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gain * self.center(x) / self.stat(x).unsqueeze(-1)
        return y if self.beta is None else y + self.beta


def norm_stat(x: torch.Tensor, kind: str, eps: float) -> torch.Tensor:
    """Final-norm statistic over the last axis: rms (incl. eps) or std (incl. eps)."""
    x = x.float()
    if kind == "layer":
        return torch.sqrt(x.var(dim=-1, unbiased=False) + eps)
    return torch.sqrt(x.pow(2).mean(dim=-1) + eps)


@dataclass
class BoundArch:
    """An :class:`ArchSpec` bound to one model instance.

    ``write_scale`` multiplies every attention / MLP write (Granite's residual multiplier: the
    hooked module returns the unscaled output); ``logit_scale`` multiplies the logits (Cohere's
    ``logit_scale``, Granite's ``1 / logits_scaling``); both are linear, so they are folded into
    the members exactly. ``softcap`` is not linear: the members decompose the pre-cap logits.
    """

    family: str
    spec: ArchSpec
    base: nn.Module
    blocks: list[nn.Module]        # execution order, possibly with repeats (layer sharing)
    final_norm: FinalNorm
    parallel: bool
    softcap: float | None
    n_heads: int
    write_scale: float = 1.0
    logit_scale: float = 1.0
    unembed_in: torch.Tensor | None = None   # [d_out, d] float32 linear after the final norm

    @property
    def distinct_blocks(self) -> list[nn.Module]:
        seen, out = set(), []
        for b in self.blocks:
            if id(b) not in seen:
                seen.add(id(b))
                out.append(b)
        return out

    def submodule(self, block: nn.Module, path: str) -> nn.Module:
        return _get(block, path)

    def o_proj_weight(self, block: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Output projection as float32 ``W [d, H, d_head]`` and bias ``[d]`` or None."""
        w, b = _linear(_get(block, self.spec.o_proj))
        d, k = w.shape
        if k % self.n_heads:
            raise ValueError(f"o_proj input width {k} is not a multiple of {self.n_heads} heads")
        return w.reshape(d, self.n_heads, k // self.n_heads), b

    def down_proj_weight(self, block: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
        """MLP output projection as float32 ``W [d, F]`` (one column per neuron) and bias."""
        if self.spec.down_proj is None:
            raise ValueError(f"family {self.family!r} has no dense MLP output projection "
                             f"({'mixture-of-experts block' if self.spec.moe else 'not set'}):"
                             " granularity='neuron' is not available")
        return _linear(_get(block, self.spec.down_proj))

    def post_norm(self, block: nn.Module, kind: str = "attn") -> FinalNorm | None:
        path = self.spec.attn_post_norm if kind == "attn" else self.spec.mlp_post_norm
        if path is None:
            return None
        return _norm_params(_get(block, path), self.spec)


def _linear(mod: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Float32 ``[out, in]`` weight and bias of a Linear or a GPT-2 ``Conv1D`` ([in, out])."""
    w = mod.weight.detach().float()
    if type(mod).__name__ == "Conv1D":
        w = w.t()
    b = getattr(mod, "bias", None)
    return w, (None if b is None else b.detach().float())


def _get(module: nn.Module, path: str) -> nn.Module:
    for part in path.split("."):
        if not hasattr(module, part):
            raise AttributeError(f"{type(module).__name__} has no submodule {part!r} "
                                 f"(looking for {path!r})")
        module = getattr(module, part)
    return module


def _norm_params(mod: nn.Module, spec: ArchSpec, like: torch.Tensor | None = None) -> FinalNorm:
    """Read a norm module as a :class:`FinalNorm` and verify it on a probe vector.

    A norm without a gain (OLMo's parameter-free LayerNorm) gets ``G = 1``; ``like`` gives the
    dtype and device of such a module's input.
    """
    if isinstance(mod, nn.LayerNorm):
        kind, eps = "layer", float(mod.eps)
    else:
        kind = spec.norm
        eps = getattr(mod, "variance_epsilon", getattr(mod, "eps", spec.norm_eps))
        if eps is None:
            raise ValueError(f"cannot find eps of norm {type(mod).__name__}")
        eps = float(eps)
    weight = getattr(mod, "weight", None)
    ref = weight if weight is not None else like
    if ref is None:
        raise ValueError(f"norm {type(mod).__name__} has no gain weight and no reference "
                         "parameter for its dtype; unsupported variant")
    width = _norm_width(mod, weight)
    gain = (torch.ones(width) if weight is None else weight.detach().float().cpu()) \
        + spec.gain_offset
    bias = getattr(mod, "bias", None)
    beta = None if bias is None else bias.detach().float().cpu()
    fn = FinalNorm(kind, eps, gain, beta)
    _check_norm(mod, fn, ref)
    return fn


def _norm_width(mod: nn.Module, weight) -> int:
    if weight is not None:
        return int(weight.shape[-1])
    shape = getattr(mod, "normalized_shape", None)
    if shape is None:
        raise ValueError(f"norm {type(mod).__name__} has neither a gain nor a normalized_shape")
    return int(shape[-1] if isinstance(shape, (tuple, list)) else shape)


def _check_norm(mod: nn.Module, fn: FinalNorm, ref: torch.Tensor) -> None:
    """Verify our float32 reading of the norm against the module itself on a probe vector."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, fn.gain.shape[0], generator=gen) * 3 + 0.5
    with torch.no_grad():
        out = mod(x.to(device=ref.device, dtype=ref.dtype)).float().cpu()
    mine = fn(x.to(ref.dtype).float())
    tol = 1e-4 if ref.dtype == torch.float32 else 3e-2
    err = (out - mine).abs().max().item() / (1 + out.abs().max().item())
    if not err <= tol:
        raise ValueError(f"norm {type(mod).__name__} does not behave as a {fn.kind} norm with "
                         f"the expected gain (relative mismatch {err:.2e}); unsupported variant")


def _parallel(spec: ArchSpec, config) -> bool:
    if callable(spec.parallel):
        return bool(spec.parallel(config))
    if isinstance(spec.parallel, str):
        return bool(getattr(config, spec.parallel, False))
    return bool(spec.parallel)


def _logit_scale(spec: ArchSpec, config) -> float:
    if spec.logit_multiplier is None:
        return 1.0
    attr, op = spec.logit_multiplier
    value = float(getattr(config, attr))
    return value if op == "mul" else 1.0 / value


def resolve(model: nn.Module) -> BoundArch:
    """Bind the family spec of ``model`` (a ``*ForCausalLM``) to its modules.

    Raises
    ------
    ValueError
        If the model has no causal LM head, its ``config.model_type`` is not supported (the
        message lists the supported families), or its configuration is a variant the family
        row refuses (the message says why).
    """
    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "get_output_embeddings"):
        raise ValueError(f"{type(model).__name__} is not a Hugging Face model with a config")
    head = model.get_output_embeddings()
    if head is None or not hasattr(head, "weight"):
        raise ValueError(f"{type(model).__name__} has no causal LM head (get_output_embeddings() "
                         "is None); load it with AutoModelForCausalLM")
    family = getattr(config, "model_type", None)
    if family not in SPECS:
        raise ValueError(f"unsupported architecture {family!r} ({type(model).__name__}); "
                         f"supported families: {', '.join(supported_families())}")
    spec = SPECS[family]
    reason = spec.refuse(config) if spec.refuse is not None else None
    if reason:
        raise ValueError(f"unsupported {family!r} variant: {reason}")
    base = model.base_model
    blocks = list(_get(base, spec.layers))
    n_layers = getattr(config, "num_hidden_layers", len(blocks))
    blocks = blocks[:n_layers]
    n_heads = getattr(config, "num_attention_heads", None) or config.n_head
    softcap = getattr(config, spec.softcap_attr, None) if spec.softcap_attr else None
    write_scale = float(getattr(config, spec.write_multiplier)) if spec.write_multiplier else 1.0
    unembed_in = None
    if spec.unembed_in is not None:
        proj = _get(base, spec.unembed_in) if _has(base, spec.unembed_in) else None
        if proj is not None:
            w, b = _linear(proj)
            if b is not None:
                raise ValueError(f"{spec.unembed_in} has a bias; unsupported variant")
            unembed_in = w
    norm = _norm_params(_get(base, spec.final_norm), spec, like=head.weight)
    return BoundArch(family, spec, base, blocks, norm, _parallel(spec, config),
                     None if softcap is None else float(softcap), int(n_heads), write_scale,
                     _logit_scale(spec, config), unembed_in)


def _has(module: nn.Module, path: str) -> bool:
    for part in path.split("."):
        module = getattr(module, part, None)
        if module is None:
            return False
    return True


def unembedding(model: nn.Module, ids, arch: BoundArch | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Float32 rows ``W [C, d]`` of the LM head for vocabulary ``ids`` and its bias (or None).

    With ``arch`` the rows are those of the whole linear map from the final-norm output to the
    model's logits: OPT's ``project_out`` is folded in (``W · P``) and the logit multiplier is
    applied to both the rows and the bias.
    """
    head = model.get_output_embeddings()
    idx = torch.as_tensor(list(ids), dtype=torch.long, device=head.weight.device)
    w = head.weight.detach().index_select(0, idx).float()
    b = getattr(head, "bias", None)
    b = None if b is None else b.detach().index_select(0, idx).float()
    if arch is not None:
        if arch.unembed_in is not None:
            w = w @ arch.unembed_in.to(w.device)
        if arch.logit_scale != 1.0:
            w = w * arch.logit_scale
            b = None if b is None else b * arch.logit_scale
    return w, b
