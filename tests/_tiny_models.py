"""Tiny random-weight causal LMs of every supported family, built from configs (no downloads).

``tiny_model(family, folder)`` builds the model from its config, gives it O(1) random weights
(norm gains around 1, non-zero biases and LayerNorm betas, so every term of the decomposition is
exercised), saves it with ``save_pretrained`` together with a small word-level tokenizer, and
loads both back through :func:`extraction.models.load_model` (``from_pretrained``). Dropout
probabilities are non-zero on purpose: extraction must switch them off.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

WORDS = ("the a movie film was is good bad great awful not very it this plot actors story "
         "fun boring loved hated Question: Was that sentence positive or negative? Answer: "
         "and but with of to I really").split()

# every row of extraction.architectures.SPECS has at least one tiny config here
# (tests/extraction/test_architectures.py checks it); variants of one family carry a suffix
FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "phi3", "gpt2", "gpt_neox", "gemma", "gemma2",
            "llama_shared", "smollm3", "starcoder2", "granite", "olmo", "olmo2", "olmo3",
            "cohere", "cohere2", "stablelm", "stablelm_parallel", "mixtral", "qwen2_moe",
            "qwen3_moe", "olmoe", "gemma3_text", "phi", "gpt_bigcode", "gptj", "gpt_neo",
            "falcon", "falcon_sequential", "falcon_new", "bloom", "mpt", "opt", "opt_project")
# module whose INPUT is the residual after the attention write (None: parallel block)
MID_RESIDUAL = {"gemma2": "pre_feedforward_layernorm", "gemma3_text": "pre_feedforward_layernorm",
                "gpt2": "ln_2", "gpt_bigcode": "ln_2", "gpt_neo": "ln_2", "gpt_neox": None,
                "phi": None, "gptj": None, "cohere": None, "cohere2": None,
                "stablelm_parallel": None, "falcon": None, "falcon_new": None,
                "falcon_sequential": "post_attention_layernorm",
                "bloom": "post_attention_layernorm",
                "mpt": "norm_2", "opt": "final_layer_norm", "opt_project": "final_layer_norm",
                "olmo2": "mlp", "olmo3": "mlp"}
# families whose tiny config has a bias on the attention output projection
O_PROJ_BIAS = {"gpt2", "gpt_neox", "qwen3", "starcoder2", "phi", "gpt_bigcode", "gpt_neo",
               "falcon", "falcon_sequential", "falcon_new", "bloom", "opt", "opt_project"}
# families whose tiny config has a bias on the MLP down projection
DOWN_BIAS = {"gpt2", "gpt_neox", "starcoder2", "phi", "gpt_bigcode", "gptj", "gpt_neo", "falcon",
             "falcon_sequential", "falcon_new", "bloom", "opt", "opt_project"}
MOE = {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe"}
PARALLEL = {"gpt_neox", "phi", "gptj", "cohere", "cohere2", "stablelm_parallel", "falcon",
            "falcon_new"}


def model_type(family: str) -> str:
    """``config.model_type`` of a tiny-config name."""
    return {"llama_shared": "llama", "stablelm_parallel": "stablelm", "falcon_sequential":
            "falcon", "falcon_new": "falcon", "opt_project": "opt"}.get(family, family)


def mid_residual(family: str) -> str | None:
    return MID_RESIDUAL.get(family, "post_attention_layernorm")


D, FF, LAYERS, HEADS = 32, 64, 2, 4


@contextlib.contextmanager
def torch_threads(n: int = 1):
    """Temporarily set torch's intra-op threads. On 2 shared cores, small models run 5-15x
    faster with one thread (measured: stories260K on 872 prompts 2.0 s vs 33.6 s with two)."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def make_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    vocab = {w: i for i, w in enumerate(specials + sorted(set(WORDS)))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[
        ("<s>", vocab["<s>"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>")


def _config(family: str, vocab: int):
    import transformers as tf

    common = dict(vocab_size=vocab, hidden_size=D, intermediate_size=FF,
                  num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  tie_word_embeddings=False)
    gpt = dict(vocab_size=vocab, n_embd=D, n_layer=LAYERS, n_head=HEADS, n_positions=128,
               bos_token_id=1, eos_token_id=2)
    moe = dict(num_local_experts=4, num_experts_per_tok=2)
    if family in ("llama", "llama_shared"):
        return tf.LlamaConfig(num_key_value_heads=2, attention_dropout=0.1, **common)
    if family == "mistral":
        return tf.MistralConfig(num_key_value_heads=2, sliding_window=None, **common)
    if family == "qwen2":
        return tf.Qwen2Config(num_key_value_heads=2, attention_dropout=0.1, **common)
    if family == "qwen3":
        return tf.Qwen3Config(num_key_value_heads=2, head_dim=8, attention_bias=True, **common)
    if family == "phi3":
        return tf.Phi3Config(num_key_value_heads=4, resid_pdrop=0.1, embd_pdrop=0.1,
                             attention_dropout=0.1, original_max_position_embeddings=128,
                             **common)
    if family == "gemma":
        return tf.GemmaConfig(num_key_value_heads=2, head_dim=8, **common)
    if family == "gemma2":
        return tf.Gemma2Config(num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8,
                               sliding_window=16, final_logit_softcapping=5.0,
                               attn_logit_softcapping=50.0, **common)
    if family == "gemma3_text":
        return tf.Gemma3TextConfig(num_key_value_heads=2, head_dim=8, query_pre_attn_scalar=8,
                                   sliding_window=4, final_logit_softcapping=5.0,
                                   layer_types=["sliding_attention", "full_attention"],
                                   **common)
    if family == "gpt2":
        return tf.GPT2Config(resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, **gpt)
    if family == "gpt_bigcode":
        return tf.GPTBigCodeConfig(multi_query=True, resid_pdrop=0.1, embd_pdrop=0.1, **gpt)
    if family == "gptj":
        return tf.GPTJConfig(rotary_dim=4, resid_pdrop=0.1, embd_pdrop=0.1, **gpt)
    if family == "gpt_neo":
        return tf.GPTNeoConfig(vocab_size=vocab, hidden_size=D, num_layers=LAYERS,
                               num_heads=HEADS, max_position_embeddings=128,
                               attention_types=[[["global", "local"], 1]], window_size=4,
                               intermediate_size=FF, bos_token_id=1, eos_token_id=2,
                               resid_dropout=0.1, embed_dropout=0.1)
    if family == "gpt_neox":
        return tf.GPTNeoXConfig(use_parallel_residual=True, hidden_dropout=0.1,
                                attention_dropout=0.1, **common)
    if family == "smollm3":
        return tf.SmolLM3Config(num_key_value_heads=2, no_rope_layer_interval=2, **common)
    if family == "starcoder2":
        return tf.Starcoder2Config(num_key_value_heads=2, residual_dropout=0.1,
                                   embedding_dropout=0.1, use_bias=True, **common)
    if family == "granite":
        return tf.GraniteConfig(num_key_value_heads=2, embedding_multiplier=3.0,
                                residual_multiplier=0.4, attention_multiplier=0.3,
                                logits_scaling=2.5, **common)
    if family == "olmo":
        return tf.OlmoConfig(num_key_value_heads=2, clip_qkv=4.0, **common)
    if family == "olmo2":
        return tf.Olmo2Config(num_key_value_heads=2, **common)
    if family == "olmo3":
        return tf.Olmo3Config(num_key_value_heads=2, sliding_window=4,
                              layer_types=["sliding_attention", "full_attention"], **common)
    if family == "cohere":
        return tf.CohereConfig(num_key_value_heads=2, logit_scale=0.3, **common)
    if family == "cohere2":
        return tf.Cohere2Config(num_key_value_heads=2, logit_scale=0.3, sliding_window=4,
                                layer_types=["sliding_attention", "full_attention"], **common)
    if family in ("stablelm", "stablelm_parallel"):
        return tf.StableLmConfig(num_key_value_heads=2, hidden_dropout=0.1,
                                 use_parallel_residual=family == "stablelm_parallel",
                                 partial_rotary_factor=0.5, **common)
    if family == "mixtral":
        return tf.MixtralConfig(num_key_value_heads=2, **moe, **common)
    if family == "qwen2_moe":
        return tf.Qwen2MoeConfig(num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                 moe_intermediate_size=16, shared_expert_intermediate_size=32,
                                 **common)
    if family == "qwen3_moe":
        return tf.Qwen3MoeConfig(num_key_value_heads=2, head_dim=8, num_experts=4,
                                 num_experts_per_tok=2, moe_intermediate_size=16, **common)
    if family == "olmoe":
        return tf.OlmoeConfig(num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                              **common)
    if family == "phi":
        return tf.PhiConfig(num_key_value_heads=4, partial_rotary_factor=0.5, resid_pdrop=0.1,
                            embd_pdrop=0.1, **common)
    if family.startswith("falcon"):
        return tf.FalconConfig(vocab_size=vocab, hidden_size=D, num_hidden_layers=LAYERS,
                               num_attention_heads=HEADS, bias=True, bos_token_id=1,
                               eos_token_id=2, hidden_dropout=0.1,
                               parallel_attn=family != "falcon_sequential",
                               new_decoder_architecture=family == "falcon_new",
                               num_kv_heads=2 if family == "falcon_new" else None,
                               max_position_embeddings=128)
    if family == "bloom":
        return tf.BloomConfig(vocab_size=vocab, hidden_size=D, n_layer=LAYERS, n_head=HEADS,
                              bos_token_id=1, eos_token_id=2, hidden_dropout=0.1)
    if family == "mpt":
        return tf.MptConfig(vocab_size=vocab, d_model=D, n_layers=LAYERS, n_heads=HEADS,
                            expansion_ratio=2, max_seq_len=128, no_bias=False,
                            resid_pdrop=0.1, emb_pdrop=0.1)
    if family in ("opt", "opt_project"):
        return tf.OPTConfig(vocab_size=vocab, hidden_size=D, ffn_dim=FF, num_hidden_layers=LAYERS,
                            num_attention_heads=HEADS, max_position_embeddings=128,
                            word_embed_proj_dim=16 if family == "opt_project" else D,
                            dropout=0.1, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    raise ValueError(family)


def randomize(model, seed: int = 0) -> None:
    """O(1) random weights: matrices N(0, 1/fan_in), gains 1 + N(0, 0.3²), biases N(0, 0.1²)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim >= 2:
                fan_in = p.shape[0] if "c_" in name.split(".")[-2] else p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=gen) / fan_in ** 0.5)
            elif "norm" in name or "ln_" in name or "layernorm" in name:
                base = 0.0 if "bias" in name else (0.0 if "gemma" in type(model).__name__.lower()
                                                   else 1.0)
                p.copy_(base + 0.3 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))


def share_layers(model, repeats: int = 2):
    """MobileLLM-style immediate block-wise layer sharing: every block runs ``repeats`` times."""
    base = model.model
    base.layers = torch.nn.ModuleList([blk for blk in base.layers for _ in range(repeats)])
    model.config.num_hidden_layers = len(base.layers)
    model.config.use_cache = False
    return model


def tiny_model(family: str, folder, *, dtype="float32", seed: int = 0):
    """Build, save (``save_pretrained``) and reload a tiny model of ``family``."""
    import transformers as tf

    from extraction.models import load_model

    folder = Path(folder)
    tok = make_tokenizer()
    config = _config(family, len(tok))
    model = tf.AutoModelForCausalLM.from_config(config)
    randomize(model, seed)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    model, _ = load_model(folder, device="cpu", dtype=dtype)
    # transformers 5 maps some model types (qwen2) to their own tokenizer class, which would
    # re-split our word-level vocabulary: reload it as the generic fast tokenizer it is.
    tok = tf.PreTrainedTokenizerFast.from_pretrained(folder)
    if family == "llama_shared":
        share_layers(model)
    return model, tok
