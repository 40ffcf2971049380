"""Peers of ``bench_extract.py`` (TransformerLens and nnsight), built in the benchmark process.

``bench_extract.py`` imports this module when TransformerLens and nnsight are importable (it
re-runs itself under the benchmark-only venv's python otherwise), so every peer variant is timed
in the same process as the plain forward and the extraction, interleaved repetition by
repetition: on a shared machine CPU time drifts with other users' load, and timings taken in a
separate process minutes apart are not comparable to within 10 %.

:func:`build` loads the same ``save_pretrained`` folder with transformers and returns, per
variant, a ``decompose(ids, mask)`` computing the same output as ``extraction.extract``: the
per-member option-logit contributions at the last position (embedding, every attention and MLP
write, divided by the final-norm RMS, times its gain, times the option rows of the unembedding):

- ``tl_full_cache``: TransformerLens's ``TransformerBridge`` (raw HF weights, no folding) as
  its tutorials run it: ``run_with_cache`` (every hook, full ``[B, T, V]`` logits, the eager
  attention the bridge switches to) -> ``cache.decompose_resid(layer=-1, pos_slice=-1)`` ->
  ``cache.apply_ln_to_stack`` -> ``(· ⊙ g) @ W_U[:, options]``;
- ``tl_filtered_cache``: the same with ``names_filter`` restricted to the hooks read;
- ``tl_best``: the filtered cache plus ``logits_to_keep=1`` (passed through to the HF forward:
  last-position logits only) and SDPA attention restored (no attention pattern is read) —
  TransformerLens at its cheapest for this output;
- ``nnsight``: ``nnsight.NNsight`` on its own copy of the HF model, one ``trace`` per batch
  saving the last-position slice of the first block's input, every ``self_attn`` and ``mlp``
  output and the final norm's input (SDPA, full logits: the model's default call);
- ``nnsight_best``: the same trace with ``logits_to_keep=1``.
"""

from __future__ import annotations

from importlib import metadata

import torch

NEEDED = ("hook_embed", "hook_pos_embed", "hook_attn_out", "hook_mlp_out", "hook_scale",
          "hook_resid_pre", "hook_resid_post")


def _positions(mask):
    return (mask.cumsum(-1) - 1).clamp(min=0)


def transformer_lens_variant(bridge, hf, gain, w_opt, *, names_filter, keep_last, attn):
    """A ``decompose(ids, mask)`` closure running TransformerLens's option decomposition."""
    kw = {"logits_to_keep": 1} if keep_last else {}

    def decompose(ids, mask):
        hf.set_attn_implementation(attn)
        _, cache = bridge.run_with_cache(ids, attention_mask=mask, position_ids=_positions(mask),
                                         names_filter=names_filter, **kw)
        stack = cache.decompose_resid(layer=-1, pos_slice=-1, apply_ln=False)
        scaled = cache.apply_ln_to_stack(stack, layer=-1, pos_slice=-1)
        return torch.einsum("mbd,cd->bmc", scaled.float() * gain, w_opt)

    return decompose


def nnsight_variant(traced, hf, gain, w_opt, *, keep_last):
    """A ``decompose(ids, mask)`` closure reading the same writes with one nnsight trace."""
    kw = {"logits_to_keep": 1} if keep_last else {}
    n_layers = len(hf.model.layers)
    eps = hf.model.norm.variance_epsilon

    def decompose(ids, mask):
        hf.set_attn_implementation("sdpa")
        writes, final = [], []   # filled inside the trace (its body runs on real tensors)
        with traced.trace(input_ids=ids, attention_mask=mask, position_ids=_positions(mask),
                          **kw):
            writes.append(traced.model.layers[0].input[:, -1].save())
            for i in range(n_layers):
                writes.append(traced.model.layers[i].self_attn.output[0][:, -1].save())
                writes.append(traced.model.layers[i].mlp.output[:, -1].save())
            final.append(traced.model.norm.input[:, -1].save())
        r = torch.stack(writes, 1).float()
        rms = (final[0].float().pow(2).mean(-1, keepdim=True) + eps).sqrt()
        return torch.einsum("bmd,cd->bmc", r / rms[:, None] * gain, w_opt)

    return decompose


def available() -> bool:
    """Whether TransformerLens and nnsight are importable here."""
    from importlib.util import find_spec

    return find_spec("transformer_lens") is not None and find_spec("nnsight") is not None


def versions() -> dict:
    return {"transformer_lens_version": metadata.version("transformer-lens"),
            "nnsight_version": metadata.version("nnsight")}


def build(folder, option_ids: dict, device="cpu") -> dict:
    """``{setting: {variant: decompose(ids, mask) -> [B, M, C] tensor}}`` on the weights in
    ``folder``, for ``option_ids = {setting: the setting's option token ids}`` (a chat
    template scores other option tokens than the bare prompt); the models are loaded once."""
    from nnsight import NNsight
    from transformer_lens.model_bridge import TransformerBridge
    from transformers import AutoModelForCausalLM, AutoTokenizer

    def load():
        return AutoModelForCausalLM.from_pretrained(folder, dtype="auto").eval().to(device)

    tok = AutoTokenizer.from_pretrained(folder)
    hf, hf_nn = load(), load()   # the bridge rewires its model's modules: nnsight gets its own
    bridge = TransformerBridge.boot_transformers(str(folder), hf_model=hf, tokenizer=tok,
                                                 device=device)
    traced = NNsight(hf_nn)
    gain = hf.model.norm.weight.detach().float()

    def needed(name):
        return name.endswith(NEEDED)

    def variants(ids):
        w_opt = hf.lm_head.weight.detach()[torch.as_tensor(list(ids)).to(device)].float()
        return {
            "tl_full_cache": transformer_lens_variant(bridge, hf, gain, w_opt,
                                                      names_filter=None, keep_last=False,
                                                      attn="eager"),
            "tl_filtered_cache": transformer_lens_variant(bridge, hf, gain, w_opt,
                                                          names_filter=needed,
                                                          keep_last=False, attn="eager"),
            "tl_best": transformer_lens_variant(bridge, hf, gain, w_opt, names_filter=needed,
                                                keep_last=True, attn="sdpa"),
            "nnsight": nnsight_variant(traced, hf_nn, gain, w_opt, keep_last=False),
            "nnsight_best": nnsight_variant(traced, hf_nn, gain, w_opt, keep_last=True),
        }

    return {label: variants(ids) for label, ids in option_ids.items()}
