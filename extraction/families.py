"""The family table: one :class:`ArchSpec` row per ``config.model_type`` (DESIGN.md 2.1).

The table is :data:`SPECS` (``config.model_type`` → :class:`ArchSpec`); every row is
exercised by the family suite in ``tests/extraction/test_architectures.py`` on a tiny
random-weight model loaded through ``from_pretrained`` and checked against the model's own
output logits. ``docs/adding_a_family.md`` says how to add a row. What each adapter models:

- residual writes: the outputs of ``attn_write`` / ``mlp_write``; post-norm writes
  (Gemma-2/3, OLMo-2/3: the RMSNorm of the attention / MLP output is what is added);
  ``residual_in_output`` (BLOOM, MPT: the module returns residual + write, the residual
  argument is subtracted); ``write_multiplier`` (Granite's ``residual_multiplier``);
- parallel blocks (``parallel``: always for phi, gptj, cohere/cohere2; by config flag for
  gpt_neox / stablelm ``use_parallel_residual`` and falcon ``parallel_attn`` or
  ``new_decoder_architecture``): attention and MLP share one residual addition, so only the
  second write is a junction;
- embeddings: whatever enters the first block (learned positions, Gemma's sqrt(d) scale,
  Granite's ``embedding_multiplier``, BLOOM's embedding LayerNorm, OPT's ``project_in``);
- final norm: RMSNorm or LayerNorm, ``(1 + g)`` gains (Gemma), weight-less norms (OLMo),
  always verified against the module on a probe vector;
- logits: Cohere's ``logit_scale`` and Granite's ``1 / logits_scaling`` are folded into the
  unembedding rows and the bias (linear, exact); OPT's ``project_out`` is folded into the rows;
  Gemma-2/3's final-logit soft-cap is not linear: the members decompose the pre-cap logits and
  exactness is checked after applying the cap;
- mixture of experts (mixtral, qwen2_moe with its gated shared expert, qwen3_moe, olmoe): the
  routed sum is the block's MLP member; ``granularity="expert"`` splits it into one member per
  expert ``w_j(x) · down_j(act(gate_j x) ⊙ up_j x)`` (zero where the router did not pick it)
  plus the gated shared expert, recomputed from the fused expert weights at the read position
  and checked to sum to the block; no per-neuron split;
- refused variants (``refuse``): OPT with ``do_layer_norm_before=False`` and BLOOM with
  ``apply_residual_connection_post_layernorm=True`` are not sums of residual writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ArchSpec", "SPECS"]


@dataclass(frozen=True)
class ArchSpec:
    """Static description of one decoder family (attribute paths are relative).

    Every field past ``o_proj`` is an adapter for one way a family departs from the Llama
    layout; ``docs/adding_a_family.md`` explains how to choose them.
    """

    layers: str            # path from the base model to the ModuleList of blocks
    final_norm: str        # path from the base model to the final norm
    attn_write: str        # path inside a block: module whose output is the attention write
    mlp_write: str         # path inside a block: module whose output is the MLP write
    o_proj: str            # path inside a block: attention output projection (heads -> d)
    down_proj: str | None = None  # path inside a block: MLP output projection (neurons -> d)
    norm: str = "rms"      # "rms" or "layer"
    gain_offset: float = 0.0   # Gemma: the norm multiplies by (1 + g)
    norm_eps: float | None = None  # eps of a norm module that does not store it (OLMo)
    attn_post_norm: str | None = None  # RMSNorm applied to the o_proj output (Gemma-2, OLMo-2)
    mlp_post_norm: str | None = None   # RMSNorm applied to the down_proj output
    parallel: bool | str | Callable = False  # True, a config flag name, or f(config) -> bool
    residual_in_output: tuple[str, ...] = ()  # kinds whose module returns residual + write
    write_multiplier: str | None = None  # config attribute scaling every block write (Granite)
    logit_multiplier: tuple[str, str] | None = None  # (config attribute, "mul" | "div")
    softcap_attr: str | None = None    # config attribute of final-logit soft-capping
    unembed_in: str | None = None      # path from the base model: linear after the final norm
    moe: bool = False                  # the MLP write is a routed sum of experts
    experts: str | None = None         # path inside a block: fused experts(x, top_k_index, w)
    shared_expert: str | None = None   # path inside a block: always-on expert (Qwen2-MoE)
    shared_gate: str | None = None     # path inside a block: sigmoid gate of the shared expert
    refuse: Callable | None = None     # f(config) -> reason string when a variant is unsupported


def _llama(**kw) -> ArchSpec:
    kw.setdefault("down_proj", None if kw.get("moe") else "mlp.down_proj")
    return ArchSpec(layers="layers", final_norm="norm", attn_write="self_attn",
                    mlp_write="mlp", o_proj="self_attn.o_proj", **kw)


def _post_norm(**kw) -> ArchSpec:
    """Gemma-2/3 and OLMo-2/3: the writes are RMSNorms of the attention / MLP outputs."""
    return ArchSpec(layers="layers", final_norm="norm", attn_write="post_attention_layernorm",
                    mlp_write="post_feedforward_layernorm", o_proj="self_attn.o_proj",
                    down_proj="mlp.down_proj", attn_post_norm="post_attention_layernorm",
                    mlp_post_norm="post_feedforward_layernorm", **kw)


def _gpt(**kw) -> ArchSpec:
    """GPT-2 style ``transformer.h`` blocks with a LayerNorm ``ln_f``."""
    kw = {"attn_write": "attn", "mlp_write": "mlp", "o_proj": "attn.c_proj",
          "down_proj": "mlp.c_proj", **kw}
    return ArchSpec(layers="h", final_norm="ln_f", norm="layer", **kw)


def _falcon_parallel(config) -> bool:
    return bool(config.parallel_attn or config.new_decoder_architecture)


def _opt_refuse(config):
    if not config.do_layer_norm_before:
        return "do_layer_norm_before=False is a post-norm block (the residual is normalised)"
    return None


def _bloom_refuse(config):
    if config.apply_residual_connection_post_layernorm:
        return ("apply_residual_connection_post_layernorm=True replaces the residual by a "
                "normalised copy: not a sum of writes")
    return None


_LLAMA = _llama()
SPECS: dict[str, ArchSpec] = {
    "llama": _LLAMA, "mistral": _LLAMA, "qwen2": _LLAMA, "qwen3": _LLAMA, "phi3": _LLAMA,
    "smollm3": _LLAMA,
    "starcoder2": _llama(norm="layer", down_proj="mlp.c_proj"),
    "granite": _llama(write_multiplier="residual_multiplier",
                      logit_multiplier=("logits_scaling", "div")),
    "olmo": _llama(norm="layer", norm_eps=1e-5),
    "cohere": _llama(norm="layer", parallel=True, logit_multiplier=("logit_scale", "mul")),
    "cohere2": _llama(norm="layer", parallel=True, logit_multiplier=("logit_scale", "mul")),
    "stablelm": _llama(norm="layer", parallel="use_parallel_residual"),
    "mixtral": _llama(moe=True, experts="mlp.experts"),
    "qwen2_moe": _llama(moe=True, experts="mlp.experts", shared_expert="mlp.shared_expert",
                        shared_gate="mlp.shared_expert_gate"),
    "qwen3_moe": _llama(moe=True, experts="mlp.experts"),
    "olmoe": _llama(moe=True, experts="mlp.experts"),
    "gemma": _llama(gain_offset=1.0),
    "gemma2": _post_norm(gain_offset=1.0, softcap_attr="final_logit_softcapping"),
    "gemma3_text": _post_norm(gain_offset=1.0, softcap_attr="final_logit_softcapping"),
    "olmo2": _post_norm(), "olmo3": _post_norm(),
    "phi": ArchSpec(layers="layers", final_norm="final_layernorm", attn_write="self_attn",
                    mlp_write="mlp", o_proj="self_attn.dense", down_proj="mlp.fc2",
                    norm="layer", parallel=True),
    "gpt2": _gpt(),
    "gpt_bigcode": _gpt(),
    "gptj": _gpt(o_proj="attn.out_proj", down_proj="mlp.fc_out", parallel=True),
    "gpt_neo": _gpt(o_proj="attn.attention.out_proj"),
    "gpt_neox": ArchSpec(layers="layers", final_norm="final_layer_norm", attn_write="attention",
                         mlp_write="mlp", o_proj="attention.dense",
                         down_proj="mlp.dense_4h_to_h", norm="layer",
                         parallel="use_parallel_residual"),
    "falcon": _gpt(attn_write="self_attention", o_proj="self_attention.dense",
                   down_proj="mlp.dense_4h_to_h", parallel=_falcon_parallel),
    "bloom": _gpt(attn_write="self_attention", o_proj="self_attention.dense",
                  down_proj="mlp.dense_4h_to_h", residual_in_output=("attn", "mlp"),
                  refuse=_bloom_refuse),
    "mpt": ArchSpec(layers="blocks", final_norm="norm_f", attn_write="attn", mlp_write="ffn",
                    o_proj="attn.out_proj", down_proj="ffn.down_proj", norm="layer",
                    residual_in_output=("mlp",)),
    "opt": ArchSpec(layers="decoder.layers", final_norm="decoder.final_layer_norm",
                    attn_write="self_attn", mlp_write="fc2", o_proj="self_attn.out_proj",
                    down_proj="fc2", norm="layer", unembed_in="decoder.project_out",
                    refuse=_opt_refuse),
}
