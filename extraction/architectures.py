"""Where each supported decoder family writes into its residual stream (DESIGN.md 2.1).

A pre-norm decoder computes ``x_final = Σ_m r_m``: the embedding output (with learned
positions or the Gemma embedding scale, i.e. whatever enters the first block) plus one write per
attention and per MLP execution. :func:`resolve` binds an :class:`ArchSpec` to a loaded model and
returns the module handles the hooks need (the blocks, the two write modules of each block, the
attention output projection for head granularity) together with the final norm and the
unembedding rows in float32.

Family table (``config.model_type`` → spec):

=============  =====================  ==============================================
family         writes                 final norm
=============  =====================  ==============================================
llama,         self_attn, mlp         RMSNorm ``g ⊙ x / sqrt(mean(x²) + eps)``
mistral,
qwen2, qwen3,
phi3
gemma          self_attn, mlp         RMSNorm with ``(1 + g)``; embedding × sqrt(d)
gemma2         post_attention_ /      RMSNorm with ``(1 + g)``; writes are the post-norm
               post_feedforward_      outputs; final-logit soft-capping (pre-cap logits
               layernorm              are decomposed)
gpt2           attn, mlp (Conv1D)     LayerNorm ``g ⊙ (x − mean x)/sqrt(var x + eps) + β``
gpt_neox       attention, mlp         LayerNorm; with ``use_parallel_residual`` the two
                                      writes share one residual addition
=============  =====================  ==============================================
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["ArchSpec", "BoundArch", "FinalNorm", "SPECS", "resolve", "supported_families",
           "norm_stat"]


@dataclass(frozen=True)
class ArchSpec:
    """Static description of one decoder family (attribute paths are relative)."""

    layers: str            # path from the base model to the ModuleList of blocks
    final_norm: str        # path from the base model to the final norm
    attn_write: str        # path inside a block: module whose output is the attention write
    mlp_write: str         # path inside a block: module whose output is the MLP write
    o_proj: str            # path inside a block: attention output projection (heads -> d)
    norm: str = "rms"      # "rms" or "layer"
    gain_offset: float = 0.0   # Gemma: the norm multiplies by (1 + g)
    attn_post_norm: str | None = None  # Gemma-2: RMSNorm applied to the o_proj output
    parallel_attr: str | None = None   # config flag for parallel attention + MLP
    softcap_attr: str | None = None    # config attribute of final-logit soft-capping


_LLAMA = ArchSpec(layers="layers", final_norm="norm", attn_write="self_attn", mlp_write="mlp",
                  o_proj="self_attn.o_proj")
SPECS: dict[str, ArchSpec] = {
    "llama": _LLAMA,
    "mistral": _LLAMA,
    "qwen2": _LLAMA,
    "qwen3": _LLAMA,
    "phi3": _LLAMA,
    "gemma": ArchSpec(layers="layers", final_norm="norm", attn_write="self_attn",
                      mlp_write="mlp", o_proj="self_attn.o_proj", gain_offset=1.0),
    "gemma2": ArchSpec(layers="layers", final_norm="norm",
                       attn_write="post_attention_layernorm",
                       mlp_write="post_feedforward_layernorm", o_proj="self_attn.o_proj",
                       gain_offset=1.0, attn_post_norm="post_attention_layernorm",
                       softcap_attr="final_logit_softcapping"),
    "gpt2": ArchSpec(layers="h", final_norm="ln_f", attn_write="attn", mlp_write="mlp",
                     o_proj="attn.c_proj", norm="layer"),
    "gpt_neox": ArchSpec(layers="layers", final_norm="final_layer_norm", attn_write="attention",
                         mlp_write="mlp", o_proj="attention.dense", norm="layer",
                         parallel_attr="use_parallel_residual"),
}


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
    """An :class:`ArchSpec` bound to one model instance."""

    family: str
    spec: ArchSpec
    base: nn.Module
    blocks: list[nn.Module]        # execution order, possibly with repeats (layer sharing)
    final_norm: FinalNorm
    parallel: bool
    softcap: float | None
    n_heads: int

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
        mod = _get(block, self.spec.o_proj)
        w = mod.weight.detach().float()
        if type(mod).__name__ == "Conv1D":   # GPT-2 stores [in, out]
            w = w.t()
        d, k = w.shape
        if k % self.n_heads:
            raise ValueError(f"o_proj input width {k} is not a multiple of {self.n_heads} heads")
        b = getattr(mod, "bias", None)
        return w.reshape(d, self.n_heads, k // self.n_heads), (
            None if b is None else b.detach().float())

    def post_norm(self, block: nn.Module) -> FinalNorm | None:
        if self.spec.attn_post_norm is None:
            return None
        return _norm_params(_get(block, self.spec.attn_post_norm), self.spec)


def _get(module: nn.Module, path: str) -> nn.Module:
    for part in path.split("."):
        if not hasattr(module, part):
            raise AttributeError(f"{type(module).__name__} has no submodule {part!r} "
                                 f"(looking for {path!r})")
        module = getattr(module, part)
    return module


def _norm_params(mod: nn.Module, spec: ArchSpec) -> FinalNorm:
    if isinstance(mod, nn.LayerNorm):
        kind, eps = "layer", float(mod.eps)
    else:
        kind = spec.norm
        eps = getattr(mod, "variance_epsilon", getattr(mod, "eps", None))
        if eps is None:
            raise ValueError(f"cannot find eps of norm {type(mod).__name__}")
        eps = float(eps)
    weight = getattr(mod, "weight", None)
    if weight is None:
        raise ValueError(f"norm {type(mod).__name__} has no gain weight; unsupported variant")
    gain = weight.detach().float().cpu() + spec.gain_offset
    bias = getattr(mod, "bias", None)
    beta = None if bias is None else bias.detach().float().cpu()
    fn = FinalNorm(kind, eps, gain, beta)
    _check_norm(mod, fn)
    return fn


def _check_norm(mod: nn.Module, fn: FinalNorm) -> None:
    """Verify our float32 reading of the norm against the module itself on a probe vector."""
    p = next(mod.parameters())
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, fn.gain.shape[0], generator=gen) * 3 + 0.5
    with torch.no_grad():
        ref = mod(x.to(device=p.device, dtype=p.dtype)).float().cpu()
    mine = fn(x.to(p.dtype).float())
    tol = 1e-4 if p.dtype == torch.float32 else 3e-2
    err = (ref - mine).abs().max().item() / (1 + ref.abs().max().item())
    if not err <= tol:
        raise ValueError(f"norm {type(mod).__name__} does not behave as a {fn.kind} norm with "
                         f"the expected gain (relative mismatch {err:.2e}); unsupported variant")


def resolve(model: nn.Module) -> BoundArch:
    """Bind the family spec of ``model`` (a ``*ForCausalLM``) to its modules.

    Raises
    ------
    ValueError
        If the model has no causal LM head, or its ``config.model_type`` is not supported
        (the message lists the supported families).
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
    base = model.base_model
    blocks = list(_get(base, spec.layers))
    n_layers = getattr(config, "num_hidden_layers", len(blocks))
    blocks = blocks[:n_layers]
    n_heads = getattr(config, "num_attention_heads", None) or config.n_head
    parallel = bool(getattr(config, spec.parallel_attr, False)) if spec.parallel_attr else False
    softcap = getattr(config, spec.softcap_attr, None) if spec.softcap_attr else None
    return BoundArch(family, spec, base, blocks, _norm_params(_get(base, spec.final_norm), spec),
                     parallel, None if softcap is None else float(softcap), int(n_heads))


def unembedding(model: nn.Module, option_ids) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Float32 rows ``W_opt [C, d]`` of the LM head and its bias ``[C]`` (or None)."""
    head = model.get_output_embeddings()
    idx = torch.as_tensor(list(option_ids), dtype=torch.long, device=head.weight.device)
    w = head.weight.detach().index_select(0, idx).float()
    b = getattr(head, "bias", None)
    return w, (None if b is None else b.detach().index_select(0, idx).float())
