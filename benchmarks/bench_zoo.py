"""Benchmark: training time of every zoo architecture, and the projected time of the whole zoo.

For each architecture of the default grid (unshared depths 1, 2, 4, 8 and the optional 12, 16;
shared twins 1, 2, 4; width 128, batch 32, prompts <= 64 tokens, one torch thread) it times
``--steps`` optimiser steps of :func:`infodiv.zoo.train.fit` on the real training rows and
records wall and process-CPU seconds per step. The projection of the whole zoo is
``Σ_arch s/step × 600 steps × 3 seeds`` on CPU time (the machine is shared: wall time measures
other users' load too; ``cpu/wall`` shows the share of a core the run got). Target: the zoo
without 12/16 within 2 hours of ONE core (the budget was 2 h of 2 cores), ratio
``projected / 7200 s <= 1``. Baseline of the same run: the depth-1 step (ratios of every
architecture to it are listed). When a zoo root exists (``--root``, default ``runs/zoo``), the
wall times recorded by its finished models are added (``recorded``).

``--finetune`` also times SmolLM2-135M-Instruct steps (batch 8, prompts <= 96 tokens): full
fine-tune and top-4 blocks only (loading the GGUF takes 40-100 s).

Writes ``benchmarks/results/zoo.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _time_steps(model, seqs, targets, pad_id, cfg, seed, steps):
    from infodiv.zoo.train import fit

    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        fit(model, seqs, targets, tmp, cfg, seed=seed, fingerprint={}, pad_id=pad_id,
            progress=False, stop_after=steps, log=lambda m: None)
        return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def bench_zoo(steps: int, extra=(12, 16)) -> dict:
    from infodiv.zoo.configs import ModelSpec, build_model, count_params
    from infodiv.zoo.data import zoo_tasks
    from infodiv.zoo.tokenizer import train_tokenizer
    from infodiv.zoo.train import TrainConfig, encode

    train, _ = zoo_tasks()
    tok = train_tokenizer(train)
    seqs, option_ids = encode(tok, train, 64)
    targets = [option_ids[int(y)] for y in train.labels]
    cfg = TrainConfig()            # the zoo's defaults: 600 steps, batch 32
    specs = [ModelSpec(d) for d in (1, 2, 4, 8, *extra)] + [ModelSpec(d, repeats=2)
                                                           for d in (1, 2, 4)]
    rows = []
    for spec in specs:
        model = build_model(spec, tok)
        wall, cpu = _time_steps(model, seqs, targets, tok.pad_token_id, cfg, 0, steps)
        rows.append({"model": spec.name, "depth": spec.depth, "shared": spec.shared,
                     "executions": spec.executions, "params": count_params(model),
                     "s_per_step_wall": wall, "s_per_step_cpu": cpu})
        print(f"{spec.name}: {cpu:.3f} s/step CPU ({wall:.3f} wall)", flush=True)
    base = rows[0]["s_per_step_cpu"]
    for r in rows:
        r["ratio_to_depth1"] = r["s_per_step_cpu"] / base
    core = [r for r in rows if r["depth"] not in extra or r["shared"]]
    per_seed = sum(r["s_per_step_cpu"] for r in core) * cfg.steps
    per_seed_extra = sum(r["s_per_step_cpu"] for r in rows) * cfg.steps
    return {"architectures": rows, "steps_timed": steps, "zoo_steps": cfg.steps,
            "batch_size": cfg.batch_size, "seeds": 3,
            "projected_zoo_cpu_s": 3 * per_seed,
            "projected_zoo_with_extra_cpu_s": 3 * per_seed_extra,
            "target_s": 7200.0, "ratio_projected_to_target": 3 * per_seed / 7200.0}


def recorded(root: Path) -> list[dict]:
    out = []
    for p in sorted(root.glob("*/*/model/zoo.json")):
        r = json.loads(p.read_text())
        out.append({k: r.get(k) for k in ("model", "step", "wall_time_s", "s_per_step",
                                          "load_average")}
                   | {"heldout_accuracy": r.get("heldout", {}).get("accuracy")})
    return out


def bench_finetune(steps: int) -> list[dict]:
    from extraction import load_model
    from infodiv.zoo.data import zoo_tasks
    from infodiv.zoo.finetune import freeze_below
    from infodiv.zoo.train import TrainConfig, encode

    train, _ = zoo_tasks()
    t0 = time.perf_counter()
    model, tok = load_model("smollm2-135m", device="cpu", dtype="float32")
    load_s = time.perf_counter() - t0
    seqs, option_ids = encode(tok, train, 96)
    targets = [option_ids[int(y)] for y in train.labels]
    cfg = TrainConfig(batch_size=8, lr=5e-5)
    rows = []
    for top in (None, 4):
        n = freeze_below(model, top)
        wall, cpu = _time_steps(model, seqs, targets, tok.pad_token_id or 0, cfg, 0, steps)
        rows.append({"train_top": top, "trainable_params": n, "load_s": load_s,
                     "s_per_step_wall": wall, "s_per_step_cpu": cpu, "batch_size": 8,
                     "max_len": 96})
        print(f"smollm2 top={top}: {cpu:.2f} s/step CPU ({wall:.2f} wall)", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="timed steps per architecture")
    ap.add_argument("--root", type=Path, default=ROOT / "runs" / "zoo")
    ap.add_argument("--finetune", action="store_true", help="also time SmolLM2 steps")
    ap.add_argument("--finetune-steps", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "zoo.json")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    doc = {"machine": {"python": platform.python_version(), "torch": torch.__version__,
                       "cpus": os.cpu_count(), "load_average": list(os.getloadavg())}}
    doc.update(bench_zoo(args.steps))
    doc["recorded"] = recorded(args.root) if args.root.is_dir() else []
    if args.finetune:
        doc["finetune"] = bench_finetune(args.finetune_steps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1))
    print(f"projected zoo: {doc['projected_zoo_cpu_s']:.0f} CPU s "
          f"(ratio to 2 h: {doc['ratio_projected_to_target']:.2f}); with 12/16: "
          f"{doc['projected_zoo_with_extra_cpu_s']:.0f} s; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
