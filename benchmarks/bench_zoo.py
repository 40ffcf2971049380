"""Benchmark: training time of every zoo architecture, and the projected time of the whole zoo.

For each architecture of the default grid (unshared depths 1, 2, 4, 8 and the optional 12, 16;
shared twins 1, 2, 4; width 128, batch 32, prompts <= 64 tokens, one torch thread) it times
``--steps`` optimiser steps of :func:`infodiv.experiments.train.fit` on the real training rows and
records wall and process-CPU seconds per step. The projection of the whole zoo is
``Σ_arch s/step × 600 steps × 3 seeds`` on CPU time (the machine is shared: wall time measures
other users' load too; ``cpu/wall`` shows the share of a core the run got). Target: the zoo
without 12/16 within 2 hours of ONE core (the budget was 2 h of 2 cores), ratio
``projected / 7200 s <= 1``. Baseline of the same run: the depth-1 step (ratios of every
architecture to it are listed). When a zoo root exists (``--root``, default ``runs/zoo``), the
wall times recorded by its finished models are added (``recorded``, totals in
``recorded_budget``); ``--recorded-only`` refreshes just those in the existing file.

``--finetune`` (or ``--finetune-only``, merged into the existing file) also times
SmolLM2-135M-Instruct top-4 fine-tune steps (batch 8, prompts <= 64 tokens) with the full
forward and with the cached frozen prefix (:mod:`infodiv.experiments.prefix`), the same prompts and
batches, and the one-off cache cost per prompt (loading the GGUF takes 40-100 s).

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


def _time_steps(model, seqs, targets, pad_id, cfg, seed, steps, forward=None):
    from infodiv.experiments.train import fit

    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        fit(model, seqs, targets, tmp, cfg, seed=seed, fingerprint={}, pad_id=pad_id,
            progress=False, stop_after=steps, forward=forward, log=lambda m: None)
        return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def bench_zoo(steps: int, extra=(12, 16)) -> dict:
    from infodiv.experiments.configs import ModelSpec, build_model, count_params
    from infodiv.experiments.data import zoo_tasks
    from infodiv.experiments.tokenizer import train_tokenizer
    from infodiv.experiments.train import TrainConfig, encode

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


def recorded_budget(rows: list[dict], extra=(12, 16)) -> dict:
    """Totals of the recorded training wall times: every finished model, and the grid without
    / with the extra depths (wall time on the shared machine: other users' load included)."""
    done = [r for r in rows if r.get("step") and r.get("wall_time_s") is not None
            and "-L" in r["model"]]
    extra_names = tuple(f"-L{d}-" for d in extra)
    core = [r for r in done if not any(e in r["model"] for e in extra_names)]
    return {"n_models": len(done), "n_extra_depth_models": len(done) - len(core),
            "wall_s_core": sum(r["wall_time_s"] for r in core),
            "wall_s_with_extra": sum(r["wall_time_s"] for r in done)}


def bench_finetune(steps: int, *, train_top: int = 4, max_len: int = 64, batch_size: int = 8,
                   n_prompts: int = 64) -> dict:
    """SmolLM2 top-``train_top`` fine-tune steps: the full forward with a frozen bottom vs the
    cached frozen prefix (:mod:`infodiv.experiments.prefix`), on the same ``n_prompts`` training
    prompts and the same batches; plus the one-off cache cost per prompt. Baseline: the
    uncached step of the same run."""
    from extraction import load_model
    from infodiv.experiments.data import zoo_tasks
    from infodiv.experiments.finetune import freeze_below
    from infodiv.experiments.prefix import PrefixCache, top_forward
    from infodiv.experiments.train import TrainConfig, encode

    train, _ = zoo_tasks()
    t0 = time.perf_counter()
    model, tok = load_model("smollm2-135m", device="cpu", dtype="float32")
    load_s = time.perf_counter() - t0
    seqs, option_ids = encode(tok, train, max_len)
    seqs = seqs[:n_prompts]
    targets = [option_ids[int(y)] for y in train.labels[:n_prompts]]
    cfg = TrainConfig(steps=max(steps, 2), batch_size=batch_size, lr=1e-4, warmup=1)
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    n = freeze_below(model, train_top)
    start = len(model.base_model.layers) - train_top
    wall_full, cpu_full = _time_steps(model, seqs, targets, pad, cfg, 0, steps)
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        states = PrefixCache(tmp).load_or_build(model, seqs, start, pad, progress=False,
                                                log=lambda m: None)
        cache_wall, cache_cpu = time.perf_counter() - t0, time.process_time() - c0
    wall_c, cpu_c = _time_steps(model, states, targets, pad, cfg, 0, steps,
                                forward=top_forward(start))
    doc = {"model": "smollm2-135m", "train_top": train_top, "trainable_params": n,
           "batch_size": batch_size, "max_len": max_len, "steps_timed": steps,
           "n_prompts": n_prompts, "load_s": load_s,
           "uncached_s_per_step_cpu": cpu_full, "uncached_s_per_step_wall": wall_full,
           "cached_s_per_step_cpu": cpu_c, "cached_s_per_step_wall": wall_c,
           "cache_cpu_s_per_prompt": cache_cpu / n_prompts,
           "cache_wall_s_per_prompt": cache_wall / n_prompts,
           "speedup_per_step_cpu": cpu_full / cpu_c,
           "load_average": list(os.getloadavg())}
    print(f"smollm2 top-{train_top}: {cpu_full:.2f} s/step CPU uncached, {cpu_c:.2f} cached "
          f"({cpu_full / cpu_c:.1f}x); cache {cache_cpu / n_prompts:.3f} CPU s/prompt",
          flush=True)
    return doc


def verdict_costs(path: Path) -> dict:
    """Measured cost of the session-11 verdict runs from their ``costs.jsonl`` (one record per
    model and invocation: process CPU and wall seconds, one thread, nice 19): ``acc`` = the
    accuracy entry's added verdicts (``python -m infodiv.inference.added``), ``full`` / none =
    ``run_analyses`` curves (the Gaussian I(U_S;Y) rerun with power + any verdict still to
    add)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    totals = {}
    for r in rows:
        mode = r.get("mode", "full")
        t = totals.setdefault(mode, {"n": 0, "cpu_s": 0.0, "wall_s": 0.0})
        t["n"] += 1
        t["cpu_s"] += r["cpu_s"]
        t["wall_s"] += r["wall_s"]
    return {"what": verdict_costs.__doc__.split("\n\n")[0].replace("\n    ", " "),
            "rows": [{k: r.get(k) for k in ("model", "mode", "cpu_s", "wall_s", "end")}
                     for r in rows],
            "totals": totals, "total_cpu_s": sum(t["cpu_s"] for t in totals.values())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="timed steps per architecture")
    ap.add_argument("--root", type=Path, default=ROOT / "runs" / "zoo")
    ap.add_argument("--finetune", action="store_true", help="also time SmolLM2 steps")
    ap.add_argument("--finetune-only", action="store_true",
                    help="time only the SmolLM2 steps; merge into the existing --out")
    ap.add_argument("--finetune-steps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "zoo.json")
    ap.add_argument("--recorded-only", action="store_true",
                    help="no timing: refresh 'recorded' (and its totals) in the existing --out")
    ap.add_argument("--verdict-costs", type=Path, default=None,
                    help="no timing: record a costs.jsonl of the verdict runs into the "
                         "existing --out (session11_verdicts)")
    args = ap.parse_args(argv)
    if args.verdict_costs is not None:
        doc = json.loads(args.out.read_text()) if args.out.is_file() else {}
        doc["session11_verdicts"] = verdict_costs(args.verdict_costs)
        args.out.write_text(json.dumps(doc, indent=1))
        print(f"wrote {args.out} (verdict costs: {doc['session11_verdicts']['totals']})")
        return 0
    if args.recorded_only:
        doc = json.loads(args.out.read_text()) if args.out.is_file() else {}
        doc["recorded"] = recorded(args.root)
        doc["recorded_budget"] = recorded_budget(doc["recorded"])
        args.out.write_text(json.dumps(doc, indent=1))
        print(f"wrote {args.out} (recorded only: {doc['recorded_budget']})")
        return 0
    import torch

    torch.set_num_threads(1)
    if args.finetune_only:
        doc = json.loads(args.out.read_text()) if args.out.is_file() else {}
        doc["finetune"] = bench_finetune(args.finetune_steps)
        args.out.write_text(json.dumps(doc, indent=1))
        print(f"wrote {args.out} (finetune only)")
        return 0
    doc = {"machine": {"python": platform.python_version(), "torch": torch.__version__,
                       "cpus": os.cpu_count(), "load_average": list(os.getloadavg())}}
    doc.update(bench_zoo(args.steps))
    doc["recorded"] = recorded(args.root) if args.root.is_dir() else []
    doc["recorded_budget"] = recorded_budget(doc["recorded"])
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
