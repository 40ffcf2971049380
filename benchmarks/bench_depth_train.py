"""Benchmark: CPU seconds per training step of every depth-grid architecture, and the projected
cost of the pointer-chasing grid (:mod:`infodiv.experiments.hops`, ``scripts/depth_experiment.sh``).

For each hop count K of the grid and each architecture (unshared depths, shared twins), it times
``--steps`` optimiser steps of :func:`infodiv.experiments.train.fit` on the K-hop training stream
(the same batches the grid trains on: seed 0, steps 0..) with one torch thread, and records wall and
process-CPU seconds per step. The projection of the grid is
``Σ_K Σ_arch CPU s/step × grid steps × seeds`` (CPU time: the machine is shared, so wall time
also measures other users' load; ``cpu/wall`` shows the share of a core the run got). Ratios:
every architecture's step against the depth-1 step of the same K. When the grid's roots exist
(``--root``, default ``runs/depth``), the s/step and held-out accuracy recorded by finished
models are added (``recorded``).

Writes ``benchmarks/results/depth_train.json``.
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


def _time_steps(model, stream, cfg, steps):
    from infodiv.experiments.train import fit

    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        fit(model, None, None, tmp, cfg, seed=0, fingerprint={}, pad_id=0, progress=False,
            stop_after=steps, batches=lambda s: stream.batch(s, cfg.batch_size, 0),
            log=lambda m: None)
        return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def _recorded(root: Path) -> list[dict]:
    out = []
    for rec_path in sorted(root.glob("k*/models/*/model/zoo.json")):
        rec = json.loads(rec_path.read_text())
        out.append({"root": rec_path.parents[3].name, "model": rec["model"],
                    "steps": rec["step"], "s_per_step": rec["s_per_step"],
                    # the device of the last leg (a GPU-started model may finish on the CPU:
                    # s_per_step then averages both)
                    "device": rec.get("device", "cpu"), "wall_time_s": rec.get("wall_time_s"),
                    "heldout_accuracy": rec.get("heldout", {}).get("accuracy")})
    return out


def bench(args) -> dict:
    import torch

    from infodiv.experiments.configs import ModelSpec, build_model, count_params
    from infodiv.experiments.hops import HopsStream, HopsTask, hops_tokenizer, train_len
    from infodiv.experiments.train import TrainConfig

    torch.set_num_threads(1)
    cfg = TrainConfig(steps=args.grid_steps, batch_size=args.batch_size, lr=args.lr,
                      warmup=args.warmup, checkpoint_every=10 ** 9)
    common = dict(width=args.width, heads=args.heads, mlp=args.mlp, init_std=args.init_std)
    tok = hops_tokenizer(args.symbols)
    per_k, total = {}, 0.0
    for k in args.hops:
        task = HopsTask(hops=k, min_hops=args.min_hops, symbols=args.symbols,
                        queries=args.queries, next_frac=args.next_frac)
        stream = HopsStream(task, tok)
        archs = [(d, 1) for d in args.depths] + [(d, 2) for d in args.shared_depths]
        rows = []
        for depth, repeats in archs:
            spec = ModelSpec(depth, repeats=repeats, max_len=train_len(task), **common)
            model = build_model(spec, tok)
            wall, cpu = _time_steps(model, stream, cfg, args.steps)
            rows.append({"model": spec.name, "depth": depth, "repeats": repeats,
                         "executions": spec.executions, "params": count_params(model),
                         "wall_s_per_step": wall, "cpu_s_per_step": cpu,
                         "cpu_share": cpu / wall})
            print(f"K={k} {spec.name}: {cpu:.3f} CPU s/step ({wall:.3f} wall)", flush=True)
        base = rows[0]["cpu_s_per_step"]
        for r in rows:
            r["ratio_to_depth1"] = r["cpu_s_per_step"] / base
        cost = sum(r["cpu_s_per_step"] for r in rows) * args.grid_steps * len(args.seeds)
        per_k[f"k{k}"] = {"architectures": rows, "projected_cpu_s": cost,
                          "projected_cpu_h": cost / 3600}
        total += cost
    return {"benchmark": "depth_train", "date": time.strftime("%Y-%m-%d"),
            "machine": {"cpu": platform.processor() or platform.machine(),
                        "cores": os.cpu_count(), "load_average": list(os.getloadavg())},
            "settings": {"hops": args.hops, "min_hops": args.min_hops,
                         "symbols": args.symbols, "queries": args.queries,
                         "next_frac": args.next_frac,
                         "init_std": args.init_std, "width": args.width, "heads": args.heads,
                         "mlp": args.mlp, "batch_size": args.batch_size, "lr": args.lr,
                         "warmup": args.warmup, "grid_steps": args.grid_steps,
                         "seeds": args.seeds, "depths": args.depths,
                         "shared_depths": args.shared_depths, "timed_steps": args.steps,
                         "torch_threads": 1},
            "per_hops": per_k, "projected_grid_cpu_s": total,
            "projected_grid_cpu_h": total / 3600,
            "formula": "sum over K and architectures of CPU s/step x grid_steps x seeds",
            "recorded": _recorded(Path(args.root))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hops", type=int, nargs="+", default=[2, 1])
    p.add_argument("--min-hops", type=int, default=1)
    p.add_argument("--symbols", type=int, default=64)
    p.add_argument("--queries", type=int, default=16)
    p.add_argument("--next-frac", type=float, default=0.5)
    p.add_argument("--init-std", type=float, default=0.125)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--mlp", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--grid-steps", type=int, default=16000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4, 6, 8])
    p.add_argument("--shared-depths", type=int, nargs="+", default=[2, 4])
    p.add_argument("--steps", type=int, default=20, help="timed steps per architecture")
    p.add_argument("--root", default=str(ROOT / "runs" / "depth"))
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "depth_train.json"))
    args = p.parse_args(argv)
    res = bench(args)
    Path(args.out).write_text(json.dumps(res, indent=1) + "\n")
    print(f"projected grid: {res['projected_grid_cpu_h']:.1f} CPU hours -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
