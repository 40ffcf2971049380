"""TransformerLens side of ``bench_extract.py``; runs in the benchmark-only venv (never imported).

Usage: ``<venv python> benchmarks/_tl_side.py MODEL_DIR BATCHES.npz OUT.npz --reps R``.
Loads the same ``save_pretrained`` folder with transformers, wraps it in TransformerLens's
``TransformerBridge`` (raw HF weights, no LayerNorm folding), and for every batch of the same
left-padded token ids runs the standard option-logit decomposition:
``run_with_cache`` -> ``cache.decompose_resid(layer=-1, pos_slice=-1)`` ->
``cache.apply_ln_to_stack`` (divide by the final-norm scale) -> ``(· ⊙ g) @ W_U[:, options]``.
Two variants are timed: the whole cache (what the TransformerLens tutorials do) and a cache
restricted with ``names_filter`` to the hooks the decomposition reads. Writes process CPU and
wall seconds per repetition and the first batch's contributions (for the agreement check).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

NEEDED = ("hook_embed", "hook_pos_embed", "hook_attn_out", "hook_mlp_out", "hook_scale",
          "hook_resid_pre", "hook_resid_post")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("batches")
    p.add_argument("out")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    import transformer_lens
    from transformer_lens.model_bridge import TransformerBridge
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args.model)
    hf = AutoModelForCausalLM.from_pretrained(args.model, dtype="auto").eval().to(args.device)
    bridge = TransformerBridge.boot_transformers(args.model, hf_model=hf, tokenizer=tok,
                                                 device=args.device)
    cuda = args.device.startswith("cuda")
    z = np.load(args.batches)
    option_ids = torch.as_tensor(z["option_ids"])
    batches = [(torch.as_tensor(z[f"ids{k}"]).to(args.device),
                torch.as_tensor(z[f"mask{k}"]).to(args.device))
               for k in range(int(z["n_batches"]))]
    gain = hf.model.norm.weight.detach().float()
    w_opt = hf.lm_head.weight.detach()[option_ids.to(args.device)].float()

    def decompose(ids, mask, names_filter):
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        _, cache = bridge.run_with_cache(ids, attention_mask=mask, position_ids=pos,
                                         names_filter=names_filter)
        stack = cache.decompose_resid(layer=-1, pos_slice=-1, apply_ln=False)
        scaled = cache.apply_ln_to_stack(stack, layer=-1, pos_slice=-1)
        return torch.einsum("mbd,cd->bmc", scaled.float() * gain, w_opt)

    filters = {"tl_full_cache": None,
               "tl_filtered_cache": lambda name: name.endswith(NEEDED)}
    times = {k: {"cpu_s": [], "wall_s": []} for k in filters}
    first = {}
    with torch.inference_mode():
        decompose(*batches[0], None)    # warm-up
        for _ in range(args.reps):
            for name, flt in filters.items():
                t, c = time.perf_counter(), time.process_time()
                for k, (ids, mask) in enumerate(batches):
                    u = decompose(ids, mask, flt)
                    if k == 0:
                        first[name] = u.cpu().numpy()
                if cuda:
                    torch.cuda.synchronize()
                times[name]["wall_s"].append(time.perf_counter() - t)
                times[name]["cpu_s"].append(time.process_time() - c)
    np.savez(args.out, **{f"u_{k}": v for k, v in first.items()})
    with open(args.out + ".json", "w") as fh:
        json.dump({"times": times, "transformer_lens": getattr(transformer_lens, "__version__",
                                                               None) or _dist_version(),
                   "n_batches": len(batches)}, fh)
    return 0


def _dist_version() -> str:
    from importlib import metadata

    return metadata.version("transformer-lens")


if __name__ == "__main__":
    raise SystemExit(main())
